/* Algorithm: hierarchical ring [TREE §3.2, Lemmas 4-5; FLEX §2.1.2]: the ring
 * allreduce with its intra-node part done as a node reduce_scatter and
 * allgather, and the ring itself among the nodes in DFS order, one ring per
 * lane: the FLEX composite (allreduce_flex.c) with the ring as lane
 * algorithm.  Each lane's ring is contention-free on the switch tree
 * [TREE Lemma 4].  Against the flat ring over all p = n L ranks [TREE Lemma 5]
 * a node's uplink carries about as much (2 (n-1)/n m against 2 (p-1)/p m),
 * but in 2(n-1) steps instead of 2(p-1).  Commutative ops.
 * Cost = flex's with T_lane = 2(n-1) alpha + 2 (n-1)/n (m/L) beta
 *        + (n-1)/n (m/L) gamma
 */
#include "phases.h"

static int plan(trd_sb *b, const void *params)
{
    (void)params;
    return trd_plan_flex(b, &trd_allreduce_ring);
}

/* node reduce_scatter to ppn lanes, a ring over the nodes per lane, node
 * allgather [FLEX §2.1.2, TREE §3.2] */
static double model(const trd_levels *l, int nodes, int ppn, double m)
{
    double lane = m / ppn, block = lane / nodes;
    return trd_node_phases_s(l, ppn, m) +
           2.0 * (nodes - 1) *
               (l->ring_inter.latency_s + block * trd_beta_eff(l->ring_inter, ppn)) +
           (nodes - 1) * block * l->gamma_s_per_byte;
}

const trd_algo trd_allreduce_hring = {
    .name = "hring",
    .coll = TRD_COLL_ALLREDUCE,
    .flags = TRD_ALGO_CANDIDATE | TRD_ALGO_NODE_PHASES,
    .source = "[TREE §3.2, FLEX §2.1.2]",
    .levels = "node reduce_scatter/allgather in shared memory; DFS ring per lane",
    .refuse = trd_refuse_noncommutative,
    .plan = plan,
    .model = model,
    .mpich = "reduce_scatter_allgather",
    .ompi = TRD_OMPI_RING,
};
