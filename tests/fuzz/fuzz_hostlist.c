/* libFuzzer harness: Slurm host lists (trd_hostlist_expand, gen/model/hostlist.c)
 * and the time and bandwidth parsers of --latency/--bandwidth and the
 * topology language (trd_parse_time, trd_parse_bandwidth, gen/model/units.c).  The
 * input, cut at its first NUL, is given to each. */
#include "fuzz_common.h"

#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    if (s == NULL)
        return 0;
    memcpy(s, data, size);
    s[size] = '\0';

    char **names = NULL, err[256];
    int n = 0, errpos = -1;
    int rc = trd_hostlist_expand(s, &names, &n, err, sizeof err, &errpos);
    if (rc == TRD_OK) {
        for (int i = 0; i < n; i++)
            if (names[i] == NULL)
                abort();
        trd_hostlist_free(names, n);
    } else if (rc == TRD_ERR_INPUT && (errpos < 0 || (size_t)errpos > strlen(s))) {
        abort(); /* the error offset must lie in the text */
    }

    double v;
    if (trd_parse_time(s, &v) == TRD_OK && !(v >= 0 && v <= TRD_MAX_TIME_S))
        abort();
    if (trd_parse_bandwidth(s, &v) == TRD_OK &&
        !(v >= TRD_MIN_BANDWIDTH_BPS && v <= TRD_MAX_BANDWIDTH_BPS))
        abort();
    free(s);
    return 0;
}
