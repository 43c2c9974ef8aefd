/* A machine as the description of an emulated cluster (emulate.h). */
#include "emulate.h"

#include <ctype.h>
#include <string.h>

#ifndef TRD_VERSION
#define TRD_VERSION "0.0.0"
#endif

/* 1 if s is a host-name label: [A-Za-z0-9-]{1,63}, no '-' at either end. */
static int is_label(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n > TRD_EMULATE_NAME_MAX || s[0] == '-' || s[n - 1] == '-')
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!(isascii((unsigned char)s[i]) && (isalnum((unsigned char)s[i]) || s[i] == '-')))
            return 0;
    return 1;
}

int trd_emulate_check_names(trd_topo_t t, char *err, size_t errlen)
{
    for (int i = 0, n = trd_topo_nnodes(t); i < n; i++)
        if (!is_label(trd_topo_node_name(t, i))) {
            /* the name is printable UTF-8 (trd_topo_check_name): safe to show */
            snprintf(err, errlen,
                     "node '%s': an emulated node's name becomes its host name and must be "
                     "1 to %d letters, digits or '-', not starting or ending with '-' "
                     "(nothing written)",
                     trd_topo_node_name(t, i), TRD_EMULATE_NAME_MAX);
            return TRD_ERR_INPUT;
        }
    return TRD_OK;
}

int trd_emulate_cluster(FILE *f, trd_topo_t t)
{
    int S = trd_topo_nswitches(t), N = trd_topo_nnodes(t);
    fprintf(f,
            "# treeduce emulated cluster, written by treeduce-gen %s\n"
            "# %d nodes (ring order) under %d switches; rates in bytes/s, latencies in s\n"
            "# switch INDEX PARENT UP_Bps UP_LATENCY_s   (the root: PARENT -1, uplink 0 0)\n"
            "# node INDEX HOSTNAME SWITCH CORES LINK_Bps LINK_LATENCY_s\n",
            TRD_VERSION, N, S);
    for (int i = 0; i < S; i++) {
        int p = trd_topo_switch_parent(t, i);
        trd_link_cost up = {0, 0, 0, 0};
        if (p >= 0)
            up = trd_topo_switch_link(t, p);
        fprintf(f, "switch %d %d %.9g %.9g\n", i, p, up.bandwidth_Bps, up.latency_s);
    }
    for (int i = 0; i < N; i++) {
        int sw = trd_topo_node_switch(t, i);
        trd_link_cost l = trd_topo_switch_link(t, sw);
        double rate = l.bandwidth_Bps;
        if (l.injection_Bps > 0 && l.injection_Bps < rate)
            rate = l.injection_Bps;
        fprintf(f, "node %d %s %d %d %.9g %.9g\n", i, trd_topo_node_name(t, i), sw,
                trd_topo_nodetype_ncores(t, trd_topo_node_type(t, i)), rate, l.latency_s);
    }
    return fflush(f) == 0 && !ferror(f) ? TRD_OK : TRD_ERR_IO;
}
