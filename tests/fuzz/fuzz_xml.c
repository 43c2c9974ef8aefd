/* libFuzzer harness: XML machines (trd_read_xml_string, schema-validated),
 * then finalize and plan (fuzz_common.h).  Relative hwloc="..." paths are
 * read from tests/data (TRD_FUZZ_DIR), absolute ones as given. */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return trd_fuzz_reader(trd_read_xml_string, TRD_FUZZ_DIR "/fuzz.xml", data, size);
}
