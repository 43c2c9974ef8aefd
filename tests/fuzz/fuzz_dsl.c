/* libFuzzer harness: the topology language (*.topo) through
 * trd_read_dsl_string_map, as the calibration's in-place editor reads it,
 * then finalize and plan (fuzz_common.h).  The source map of an accepted text
 * must describe that text: every block and statement inside it, in written
 * order, each statement ending at its ';' and each block at its '}'.
 * Relative hwloc XML paths in the input start from tests/data
 * (TRD_FUZZ_DIR), absolute ones are read. */
#include "fuzz_common.h"

#include <string.h>

static trd_dsl_map *map;

/* trd_read_dsl_string with the map kept in map. */
static int read_mapped(trd_topo_t t, trd_diag *d, const char *filename, const char *text,
                       size_t len)
{
    return trd_read_dsl_string_map(t, d, filename, text, len, &map);
}

/* abort() unless map describes text[0..len). */
static void check_map(const char *text, size_t len)
{
    int nstmts = 0;
    size_t last = 0;
    for (int b = 0; b < map->nblocks; b++) {
        const trd_dsl_block *k = &map->blocks[b];
        if (k->kw_off < last || k->close >= len || text[k->close] != '}' || k->kw_off >= k->close ||
            (k->nstmts > 0 && k->stmts != map->stmts + nstmts) || k->nstmts < 0 ||
            strncmp(text + k->kw_off, k->kind, strlen(k->kind)) != 0)
            abort();
        for (int i = 0; i < k->nstmts; i++) {
            const trd_dsl_stmt *s = &k->stmts[i];
            if (s->kw_off <= k->kw_off || s->kw_off > s->arg_off || s->arg_off > s->arg_end ||
                s->arg_end >= s->end || s->end > k->close || text[s->end - 1] != ';' ||
                strncmp(text + s->kw_off, s->kw, strlen(s->kw)) != 0 ||
                (i > 0 && s->kw_off < k->stmts[i - 1].end))
                abort();
        }
        nstmts += k->nstmts;
        last = k->close + 1;
    }
    if (nstmts != map->nstmts)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    map = NULL;
    trd_fuzz_reader(read_mapped, TRD_FUZZ_DIR "/fuzz.topo", data, size);
    if (map != NULL)
        check_map((const char *)data, size);
    trd_dsl_map_free(map);
    return 0;
}
