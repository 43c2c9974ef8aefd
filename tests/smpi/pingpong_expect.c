/* The one-way time the cost model gives a message between two nodes of a
 * topology, printed as pingpong.c prints SMPI's simulated times, so that a
 * test compares the exported platform against the model:
 *     pingpong_expect TOPOLOGY NODE_A NODE_B BYTES...
 * prints "pingpong BYTES SECONDS" per size: the path's latency summed over
 * its links plus BYTES over its bandwidth (trd_topo_path_cost), or over the
 * node's max-rate injection bandwidth R_N where that is lower [NAP Eq. 3]
 * (one message in flight). */
#include <stdio.h>
#include <stdlib.h>

#include "readers.h"
#include "topo.h"

int main(int argc, char **argv)
{
    if (argc < 5) {
        fprintf(stderr, "usage: %s TOPOLOGY NODE_A NODE_B BYTES...\n", argv[0]);
        return 2;
    }
    trd_topo_t t = NULL;
    trd_diag *d = NULL;
    if (trd_diag_create(&d) != TRD_OK)
        return 1;
    if (trd_topo_create(&t) != TRD_OK || trd_read_dsl(t, d, argv[1]) != TRD_OK ||
        trd_topo_finalize(t, d) != TRD_OK) {
        trd_diag_print(d, stderr);
        return 1;
    }
    int a = trd_topo_find_node(t, argv[2]), b = trd_topo_find_node(t, argv[3]);
    if (a < 0 || b < 0 || a == b) {
        fprintf(stderr, "%s: expected two different nodes\n", argv[1]);
        return 1;
    }
    trd_link_cost c = trd_topo_path_cost(t, a, b);
    double bw = c.bandwidth_Bps;
    if (c.injection_Bps > 0 && c.injection_Bps < bw)
        bw = c.injection_Bps;
    for (int i = 4; i < argc; i++) {
        double bytes = strtod(argv[i], NULL);
        printf("pingpong %s %.9e\n", argv[i], c.latency_s + bytes / bw);
    }
    trd_topo_destroy(t);
    trd_diag_destroy(d);
    return 0;
}
