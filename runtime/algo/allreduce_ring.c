/* Algorithm: ring reduce_scatter + ring allgather over a list of ranks
 * [TREE §3.2]: in step s rank i sends block i-s to i+1 and reduces block
 * i-s-1 from i-1; after n-1 steps it holds block i+1 complete and passes
 * complete blocks on for n-1 more.  Over the whole communicator the list is
 * the DFS ring order: nodes in DFS order of the switch tree, a node's ranks
 * consecutive, so no two messages of a step share a directed link
 * [TREE Lemmas 4-5]; over one rank per node (the composites' lanes) the same.
 * Blocks are cut on cache lines (trd_block_split).  Commutative ops.
 * Cost = 2(p-1) alpha + 2 (p-1)/p m beta + (p-1)/p m gamma, beta of the
 * slowest link a ring neighbour pair crosses.
 */
#include "algo.h"

/* Allreduce of recvbuf[base, base+count) over ranks[0..n), me this rank's
 * index. */
static int ring_list(trd_sb *b, int round, const int *ranks, int n, int me, size_t base,
                     size_t count)
{
    size_t ext = b->call->extent;
    if (n <= 1 || count == 0)
        return 0;
    int next = ranks[(me + 1) % n], prev = ranks[(me + n - 1) % n];
    size_t mark = b->tmp_top, tmp = trd_sb_tmp(b, trd_block_max(count, ext, n));
#define AT(i) (base + trd_block_at(count, ext, n, (i)))
#define LEN(i) (trd_block_at(count, ext, n, (i) + 1) - trd_block_at(count, ext, n, (i)))
    for (int k = 0; k < n - 1; k++) {
        int sb = (me - k + n) % n, rb = (me - k - 1 + n) % n;
        trd_s_sendrecv(b, round + k, next, TRD_B_RECV, AT(sb), LEN(sb), prev, TRD_B_TMP, tmp,
                       LEN(rb));
        trd_s_reduce(b, round + k, TRD_B_RECV, AT(rb), TRD_B_TMP, -1, tmp, LEN(rb));
    }
    for (int k = 0; k < n - 1; k++) {
        int sb = (me + 1 - k + n) % n, rb = (me - k + n) % n;
        trd_s_sendrecv(b, round + n - 1 + k, next, TRD_B_RECV, AT(sb), LEN(sb), prev, TRD_B_RECV,
                       AT(rb), LEN(rb));
    }
#undef AT
#undef LEN
    trd_sb_tmp_release(b, mark);
    return 0;
}

static int plan(trd_sb *b, const void *params)
{
    (void)params;
    trd_sb_input_to_recv(b);
    return ring_list(b, 1, b->sh->ring, b->sh->nranks, b->pos, 0, b->call->count);
}

static double model(const trd_levels *l, int nodes, int ppn, double bytes)
{
    int np = nodes * ppn;
    if (np <= 1)
        return 0;
    trd_link_cost link = nodes > 1 ? l->ring_inter : l->intra;
    double block = bytes / np;
    return 2.0 * (np - 1) * trd_msg_s(link, block) + (np - 1) * block * l->gamma_s_per_byte;
}

const trd_algo trd_allreduce_ring = {
    .name = "ring",
    .coll = TRD_COLL_ALLREDUCE,
    .flags = TRD_ALGO_CANDIDATE | TRD_ALGO_CONTENTION_FREE | TRD_ALGO_SPLITS | TRD_ALGO_QUADRATIC,
    .source = "[TREE §3.2, Lemmas 4-5]",
    .levels = "one ring through every rank in DFS order",
    .refuse = trd_refuse_noncommutative,
    .plan = plan,
    .list = ring_list,
    .model = model,
    .mpich = "reduce_scatter_allgather",
    .ompi = TRD_OMPI_RING,
};
