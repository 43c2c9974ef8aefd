/* NAP allreduce plan: who exchanges with whom at each inter-node step.
 *
 * Algorithm: node-aware parallel allreduce [NAP Alg. 1, §III-A].  After an
 * intra-node allreduce every rank of a node holds the node's partial result;
 * at step i, lane r of a node in subgroup j exchanges with lane j of the node
 * at the same position in subgroup r, so k = radix subgroups are combined per
 * inter-node step and log_k(n) steps suffice.  Node counts that are not a
 * power of k leave the last subgroup of a group short; nodes facing it take
 * that subgroup's data from position p mod size (all its nodes hold the same
 * data), the generalisation of the paper's "extra node sends to the idle
 * process" (Fig. 9).
 * Cost = ceil(log_k n) (alpha_inter + m beta_inter) + (ceil(log_k n) + 1) T_intra(m)
 * (+ one gamma m per received message) [NAP Eq. 6].
 *
 * Pure C: used by the runtime for each communicator and by the generator for
 * --explain and for the symbolic check of every (nodes, lanes) shape.
 */
#include "trd_nap.h"

int trd_nap_radix(int lanes)
{
    return lanes < 2 ? 2 : lanes;
}

int trd_nap_nsteps(int n, int radix)
{
    int steps = 0;
    if (radix < 2)
        return 0;
    for (long long span = 1; span < n; span *= radix)
        steps++;
    return steps;
}

static int imin(int a, int b)
{
    return a < b ? a : b;
}

int trd_nap_step(int n, int lanes, int radix, int step, int node, int lane,
                 trd_nap_stepinfo *info, trd_nap_xfer *recv, int *nrecv, trd_nap_xfer *send,
                 int *nsend)
{
    if (n < 1 || lanes < 1 || radix < 2 || step < 0 || node < 0 || node >= n || lane < 0 ||
        lane >= lanes)
        return -1;
    long long S = 1;
    for (int s = 0; s < step; s++) {
        S *= radix;
        if (S >= n) /* a step past the last one: a single subgroup */
            break;
    }
    long long span = S * radix;
    int base = (int)((node / span) * span);
    int end = (int)(base + span < n ? base + span : n);
    int j = (int)((node - base) / S);
    int p = (int)((node - base) % S);
    int g = (int)((end - base + S - 1) / S);
    if (S >= n)
        g = 1, j = 0, p = node;
    if (info)
        *info = (trd_nap_stepinfo){(int)S, g, j, p};
    *nrecv = 0;
    *nsend = 0;
    if (g <= 1)
        return 0;
    /* size of subgroup r of this group */
#define SUBSIZE(r) imin((int)S, end - (base + (r) * (int)S))
    for (int r = lane; r < g; r += lanes) {
        if (r == j)
            continue;
        int sz = SUBSIZE(r);
        recv[(*nrecv)++] = (trd_nap_xfer){base + r * (int)S + p % sz, (j + p / sz) % lanes, r};
    }
    /* Sends: node (j, p) serves every (j2, p2), j2 != j, with p2 mod size_j == p,
     * from lane (j2 + p2 / size_j) mod lanes, to that node's lane j mod lanes. */
    int szj = SUBSIZE(j);
    for (int j2 = 0; j2 < g; j2++) {
        if (j2 == j)
            continue;
        int sz2 = SUBSIZE(j2);
        for (int p2 = p; p2 < sz2; p2 += szj) {
            if ((j2 + p2 / szj) % lanes != lane)
                continue;
            send[(*nsend)++] = (trd_nap_xfer){base + j2 * (int)S + p2, j % lanes, j};
        }
    }
#undef SUBSIZE
    return 0;
}
