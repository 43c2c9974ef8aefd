/* Numbers with units in topology files: times and bandwidths. */
#include "topo.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

struct unit {
    const char *name;
    double scale;
};

/* Parse "<number>[ ]<unit>" where unit is one of units (exact, case-sensitive,
 * since "Mb/s" and "MB/s" differ) or empty (scale 1). */
static int parse_with_units(const char *s, const struct unit *units, double *out)
{
    char *end;
    while (isspace((unsigned char)*s))
        s++;
    if (!*s)
        return TRD_ERR_INPUT;
    double v = strtod(s, &end);
    if (end == s || !isfinite(v) || v < 0)
        return TRD_ERR_INPUT;
    while (isspace((unsigned char)*end))
        end++;
    size_t ulen = strlen(end);
    while (ulen > 0 && isspace((unsigned char)end[ulen - 1]))
        ulen--;
    if (ulen == 0) {
        *out = v;
        return TRD_OK;
    }
    for (const struct unit *u = units; u->name; u++) {
        if (strlen(u->name) == ulen && strncmp(u->name, end, ulen) == 0) {
            *out = v * u->scale;
            return isfinite(*out) ? TRD_OK : TRD_ERR_INPUT;
        }
    }
    return TRD_ERR_INPUT;
}

int trd_parse_time(const char *s, double *seconds)
{
    static const struct unit units[] = {
        {"s", 1.0}, {"ms", 1e-3}, {"us", 1e-6}, {"ns", 1e-9}, {NULL, 0}};
    double v;
    if (parse_with_units(s, units, &v) != TRD_OK || v > TRD_MAX_TIME_S)
        return TRD_ERR_INPUT;
    *seconds = v;
    return TRD_OK;
}

int trd_parse_bandwidth(const char *s, double *bytes_per_s)
{
    static const struct unit units[] = {{"B/s", 1.0},
                                        {"KB/s", 1e3},
                                        {"MB/s", 1e6},
                                        {"GB/s", 1e9},
                                        {"TB/s", 1e12},
                                        {"PB/s", 1e15},
                                        {"KiB/s", 1024.0},
                                        {"MiB/s", 1048576.0},
                                        {"GiB/s", 1073741824.0},
                                        {"TiB/s", 1099511627776.0},
                                        {"b/s", 0.125},
                                        {"Kb/s", 1e3 / 8},
                                        {"Mb/s", 1e6 / 8},
                                        {"Gb/s", 1e9 / 8},
                                        {"Tb/s", 1e12 / 8},
                                        {NULL, 0}};
    double v;
    if (parse_with_units(s, units, &v) != TRD_OK || !(v >= TRD_MIN_BANDWIDTH_BPS) ||
        v > TRD_MAX_BANDWIDTH_BPS)
        return TRD_ERR_INPUT;
    *bytes_per_s = v;
    return TRD_OK;
}
