/* libFuzzer harness: wisdom files (trd_wisdom_read_string, gen/read/wisdom.c).
 * A file the reader takes is checked against a small machine, written,
 * and read back: the written text must read, to the same bytes when
 * written again; merged with itself it must give its own ranges and no
 * conflict.  Every message is formatted into the sink. */
#include "fuzz_common.h" /* first: it defines _GNU_SOURCE */

#include <string.h>

#include "wisdom.h"

static const char machine[] = "machine duo;\n"
                              "link eth { latency 50us; bandwidth 125MB/s; }\n"
                              "nodetype duo { synthetic \"package:1 core:2\"; }\n"
                              "switch top { link eth; nodes n[0-1] : duo; }\n";

static char *written(const trd_wisdom *w, size_t *len)
{
    char *text = NULL;
    FILE *f = open_memstream(&text, len);
    if (f == NULL || trd_wisdom_write(f, w) != TRD_OK)
        abort();
    fclose(f);
    return text;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static trd_topo_t t;
    trd_diag *d = NULL;
    if (trd_diag_create(&d) != TRD_OK)
        abort();
    if (t == NULL) { /* the machine, once */
        if (trd_topo_create(&t) != TRD_OK ||
            trd_read_dsl_string(t, d, "duo.topo", machine, sizeof machine - 1) != TRD_OK ||
            trd_topo_finalize(t, d) != TRD_OK)
            abort();
    }
    trd_wisdom w, again;
    int rc = trd_wisdom_read_string("fuzz.wisdom", (const char *)data, size, &w, d);
    if ((rc == TRD_OK) != (trd_diag_count(d) == 0))
        abort(); /* refused exactly when reported */
    if (rc == TRD_OK) {
        trd_wisdom_check(&w, t, d);
        size_t len, len2;
        char *text = written(&w, &len);
        if (trd_wisdom_read_string("written.wisdom", text, len, &again, d) != TRD_OK)
            abort();
        char *text2 = written(&again, &len2);
        if (len != len2 || memcmp(text, text2, len) != 0)
            abort();
        free(text);
        free(text2);
        trd_wisdom_free(&again);
        trd_wisdom twice[2] = {w, w}, m;
        trd_wisdom_conflict *conf;
        int nconf;
        if (trd_wisdom_merge(twice, 2, &m, &conf, &nconf, d) != TRD_OK || nconf != 0 ||
            m.nranges != w.nranges)
            abort();
        for (int i = 0; i < w.nranges; i++)
            if (m.range[i].from != w.range[i].from || m.range[i].below != w.range[i].below ||
                m.range[i].line != w.range[i].line || m.range[i].src != 1)
                abort(); /* the later file, the same ranges */
        free(conf);
        trd_wisdom_free(&m);
    }
    trd_wisdom_free(&w);
    trd_diag_print(d, trd_fuzz_sink());
    trd_diag_destroy(d);
    return 0;
}
