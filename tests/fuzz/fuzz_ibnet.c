/* libFuzzer harness: ibnetdiscover output (trd_read_ibnet_string) with the
 * latency and node type treeduce-gen gives by default, then finalize and
 * plan (fuzz_common.h). */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return trd_fuzz_reader(trd_read_ibnet_string, TRD_FUZZ_DIR "/fabric.ibnet", data, size);
}
