/* libFuzzer harness: the topology language (*.topo, trd_read_dsl_string),
 * then finalize and plan (fuzz_common.h).  Relative hwloc XML paths in the
 * input start from tests/data (TRD_FUZZ_DIR), absolute ones are read. */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return trd_fuzz_reader(trd_read_dsl_string, TRD_FUZZ_DIR "/fuzz.topo", data, size);
}
