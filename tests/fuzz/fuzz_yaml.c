/* libFuzzer harness: Slurm topology.yaml (trd_read_yaml_string, libyaml)
 * with the link and node type treeduce-gen gives by default, then finalize
 * and plan (fuzz_common.h). */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return trd_fuzz_reader(trd_read_yaml_string, TRD_FUZZ_DIR "/topology.yaml", data, size);
}
