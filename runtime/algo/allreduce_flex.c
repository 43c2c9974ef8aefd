/* Algorithm: the FLEX composite allreduce [FLEX §2.1.2] with L = ppn_min
 * lanes: (1) node reduce_scatter, lane l (local rank l) gets block l of the
 * L-way cache-line split reduced over its node in local order (through the
 * segment, or point to point); (2) lane l of every node allreduces block l
 * among the n nodes in DFS order, all L lanes at once on disjoint ranks, so a
 * node injects on L ranks (the per-socket parallel inter-node phase of FLEX);
 * (3) node allgather of the blocks from the lanes.  Ranks beyond the L lanes
 * take part in (1) and (3) only.  The lane algorithm: params ("rd",
 * "rabenseifner", "ring"), or by block size [FLEX §2.1.3] (lane_default).
 * Empty blocks (few elements) skip (2).  Commutative ops; every block is
 * reduced by one rank, so every rank gets the same bits.
 * Cost = 2 alpha_shm + (1 + 1/L) m beta_mem + (ppn-1)/L m gamma     (1)
 *        + T_lane(m/L, n)                                          (2)
 *        + 2 alpha_shm + 2 m beta_mem                              (3)
 * T_lane(rd) = ceil(lg n) (alpha + (m/L) beta + (m/L) gamma), with L lanes of a
 * node sharing its injection bandwidth [NAP Eq. 3].
 */
#include <stdlib.h>

#include "phases.h"

/* Bytes one network latency is worth (alpha / beta): the scale of the lane
 * algorithm's choice. */
#define TRD_ALPHA_BETA_BYTES 8192

/* The lane algorithm for a block of bytes bytes among n nodes when the
 * parameters leave it open.  Recursive doubling below TRD_ALPHA_BETA_BYTES:
 * latency bound, lg n steps beat Rabenseifner's 2 lg n.  Above it
 * Rabenseifner and the ring move the same 2 (n-1)/n m beta; Rabenseifner has
 * 2 lg n latencies against the ring's 2(n-1), but for n not a power of two its
 * fold adds about 2 alpha + 2 m beta.  So Rabenseifner for n a power of two,
 * and otherwise while the ring's extra latencies cost more than the fold's
 * extra bytes, (n - 2 - floor(lg n)) alpha > m beta; from there the ring,
 * contention-free over the DFS node order [TREE Lemma 4]. */
static const trd_algo *lane_default(size_t bytes, int n)
{
    int lg = 0;
    while ((2 << lg) <= n)
        lg++;
    if (bytes < TRD_ALPHA_BETA_BYTES)
        return &trd_allreduce_rd;
    if ((n & (n - 1)) == 0 || bytes < (size_t)(n - 2 - lg) * TRD_ALPHA_BETA_BYTES)
        return &trd_allreduce_rabenseifner;
    return &trd_allreduce_ring;
}

/* Elements of lane l's block that round k moves when every round moves at
 * most q elements of each block: [*lo, *hi) (empty once the block is done). */
static void lane_piece(size_t count, size_t ext, int nlanes, int l, size_t k, size_t q, size_t *lo,
                       size_t *hi)
{
    size_t blo, bhi;
    trd_block_split(count, ext, nlanes, l, &blo, &bhi);
    *lo = blo + k * q < bhi ? blo + k * q : bhi;
    *hi = *lo + q < bhi ? *lo + q : bhi;
}

/* (1) through the segment: round k, part l of every input area holds piece k
 * of lane l's block; lane l folds part l of the ppn areas in local order. */
static void shm_reduce_scatter(trd_sb *b, int round, size_t count, int nlanes)
{
    size_t ext = b->call->extent, q = b->s->seg_slot / (size_t)nlanes, lo, hi;
    size_t rounds = (trd_block_max(count, ext, nlanes) + q - 1) / q;
    int n = b->ppn, me = b->local;
    for (size_t k = 0; k < rounds; k++) {
        int e = trd_seg_next(b, round);
        size_t cin = trd_sb_seg_in(b, e);
        for (int l = 0; l < nlanes; l++) {
            lane_piece(count, ext, nlanes, l, k, q, &lo, &hi);
            if (hi > lo)
                trd_s_copy(b, round, TRD_B_SEG, -1, cin + (size_t)l * q, TRD_B_RECV, -1, lo,
                           hi - lo);
        }
        trd_s_signal(b, round, TRD_CTR_IN, e);
        if (me < nlanes) {
            size_t part = cin + (size_t)me * q;
            lane_piece(count, ext, nlanes, me, k, q, &lo, &hi);
            trd_s_wait(b, round, TRD_PEER_LOCALS, n, TRD_CTR_IN, e);
            if (hi > lo) {
                trd_s_copy(b, round, TRD_B_RECV, -1, lo, TRD_B_SEG, trd_sb_owner(b, n - 1), part,
                           hi - lo);
                for (int j = n - 2; j >= 0; j--)
                    trd_s_reduce(b, round, TRD_B_RECV, lo, TRD_B_SEG, trd_sb_owner(b, j), part,
                                 hi - lo);
            }
        }
        trd_s_signal(b, round, TRD_CTR_DONE, e);
    }
}

/* (3) through the segment: round k, lane l's input area holds piece k of its
 * block, every other rank copies it out. */
static void shm_allgather(trd_sb *b, int round, size_t count, int nlanes)
{
    size_t ext = b->call->extent, q = b->s->seg_slot, lo, hi;
    size_t rounds = (trd_block_max(count, ext, nlanes) + q - 1) / q;
    int me = b->local;
    for (size_t k = 0; k < rounds; k++) {
        int e = trd_seg_next(b, round);
        size_t cin = trd_sb_seg_in(b, e);
        if (me < nlanes) {
            lane_piece(count, ext, nlanes, me, k, q, &lo, &hi);
            if (hi > lo)
                trd_s_copy(b, round, TRD_B_SEG, -1, cin, TRD_B_RECV, -1, lo, hi - lo);
        }
        trd_s_signal(b, round, TRD_CTR_IN, e);
        for (int l = 0; l < nlanes; l++) {
            if (l == me)
                continue;
            lane_piece(count, ext, nlanes, l, k, q, &lo, &hi);
            if (hi == lo)
                continue;
            trd_s_wait(b, round, trd_sb_local_rank(b, l), 0, TRD_CTR_IN, e);
            trd_s_copy(b, round, TRD_B_RECV, -1, lo, TRD_B_SEG, trd_sb_local_rank(b, l), cin,
                       hi - lo);
        }
        trd_s_signal(b, round, TRD_CTR_DONE, e);
    }
}

/* (1) point to point: every rank sends block l to lane l, which receives the
 * node's blocks into the temporary (all posted at once, so no order of
 * arrivals can deadlock) and folds them right to left in local order,
 * x_0 op (x_1 op (... op x_{ppn-1})). */
static void p2p_reduce_scatter(trd_sb *b, int round, size_t count, int nlanes)
{
    size_t ext = b->call->extent, blk = trd_block_max(count, ext, nlanes), lo, hi;
    int n = b->ppn, me = b->local, posted = 0;
    size_t mark = b->tmp_top, acc = trd_sb_tmp(b, blk), in = trd_sb_tmp(b, blk * (size_t)n);
    for (int l = 0; l < nlanes; l++) {
        trd_block_split(count, ext, nlanes, l, &lo, &hi);
        if (l != me && hi > lo) {
            trd_s_send(b, round, trd_sb_local_rank(b, l), TRD_B_RECV, lo, hi - lo);
            trd_sb_nb(b, 1);
            posted = 1;
        }
    }
    lo = hi = 0;
    if (me < nlanes) {
        trd_block_split(count, ext, nlanes, me, &lo, &hi);
        for (int j = n - 1; hi > lo && j >= 0; j--)
            if (j != me) {
                trd_s_recv(b, round, trd_sb_local_rank(b, j), TRD_B_TMP, in + blk * (size_t)j,
                           hi - lo);
                trd_sb_nb(b, 1);
                posted = 1;
            }
    }
    if (posted)
        trd_sb_nb(b, 0);
    if (hi > lo) {
        for (int j = n - 1; j >= 0; j--) {
            int own = j == me;
            size_t at = own ? lo : in + blk * (size_t)j;
            int from = own ? TRD_B_RECV : TRD_B_TMP;
            if (j == n - 1)
                trd_s_copy(b, round, TRD_B_TMP, -1, acc, from, -1, at, hi - lo);
            else
                trd_s_reduce(b, round, TRD_B_TMP, acc, from, -1, at, hi - lo);
        }
        trd_s_copy(b, round, TRD_B_RECV, -1, lo, TRD_B_TMP, -1, acc, hi - lo);
    }
    trd_sb_tmp_release(b, mark);
}

/* (3) point to point: lane l sends block l to every other rank of the node. */
static void p2p_allgather(trd_sb *b, int round, size_t count, int nlanes)
{
    size_t ext = b->call->extent, lo, hi;
    int n = b->ppn, me = b->local, posted = 0;
    for (int l = 0; l < nlanes; l++) {
        trd_block_split(count, ext, nlanes, l, &lo, &hi);
        if (l != me && hi > lo) {
            trd_s_recv(b, round, trd_sb_local_rank(b, l), TRD_B_RECV, lo, hi - lo);
            trd_sb_nb(b, 1);
            posted = 1;
        }
    }
    if (me < nlanes) {
        trd_block_split(count, ext, nlanes, me, &lo, &hi);
        for (int j = 0; j < n && hi > lo; j++)
            if (j != me) {
                trd_s_send(b, round, trd_sb_local_rank(b, j), TRD_B_RECV, lo, hi - lo);
                trd_sb_nb(b, 1);
                posted = 1;
            }
    }
    if (posted)
        trd_sb_nb(b, 0);
}

int trd_plan_flex(trd_sb *b, const trd_algo *lane)
{
    const trd_shape *sh = b->sh;
    size_t cnt = b->call->count, ext = b->call->extent, lo, hi;
    int ppn_min, ppn_max, rc = 0;
    trd_shape_ppn(sh, &ppn_min, &ppn_max);
    int nlanes = ppn_min;
    if (sh->shm && b->s->seg_slot / (size_t)nlanes == 0) {
        b->fail = "an element larger than a lane's part of a segment slot";
        return TRD_ERR_INPUT;
    }
    trd_sb_input_to_recv(b);
    if (b->ppn > 1 && sh->shm)
        shm_reduce_scatter(b, 0, cnt, nlanes);
    else if (b->ppn > 1)
        p2p_reduce_scatter(b, 0, cnt, nlanes);
    if (b->local < nlanes && sh->nnodes > 1) {
        int *ranks = malloc((size_t)sh->nnodes * sizeof *ranks);
        if (!ranks)
            return TRD_ERR_NOMEM;
        for (int v = 0; v < sh->nnodes; v++)
            ranks[v] = sh->ring[sh->node_first[v] + b->local];
        trd_block_split(cnt, ext, nlanes, b->local, &lo, &hi);
        const trd_algo *a = lane ? lane : lane_default((hi - lo) * ext, sh->nnodes);
        rc = a->list(b, TRD_PHASE, ranks, sh->nnodes, b->node, lo, hi - lo);
        free(ranks);
    }
    if (!rc && b->ppn > 1 && sh->shm)
        shm_allgather(b, 2 * TRD_PHASE, cnt, nlanes);
    else if (!rc && b->ppn > 1)
        p2p_allgather(b, 2 * TRD_PHASE, cnt, nlanes);
    return rc;
}

static int parse(const char *text, const trd_shape *sh, void *out, char *why, size_t whylen)
{
    (void)sh;
    return trd_parse_list_params(text, "flex: the lane algorithm", out, why, whylen);
}

static int plan(trd_sb *b, const void *params)
{
    return trd_plan_flex(b, ((const trd_list_params *)params)->list);
}

/* the lane algorithm lane_default picks, all ppn lanes of a node at once:
 * recursive doubling on small blocks, recursive halving + doubling on
 * larger ones, the ring where neither (FLEX with ring lanes is hring)
 * [TREE §2, NAP Eq. 3] */
static double model(const trd_levels *l, int nodes, int ppn, double m)
{
    double lane = m / ppn, t = trd_node_phases_s(l, ppn, m);
    const trd_algo *a = lane_default((size_t)lane, nodes);
    if (a == &trd_allreduce_rd)
        return t + trd_rd_nodes_s(l, nodes, ppn, lane);
    if (a == &trd_allreduce_ring)
        return trd_allreduce_hring.model(l, nodes, ppn, m);
    return t + trd_halving_nodes_s(l, (int)trd_lg(nodes), ppn, lane);
}

const trd_algo trd_allreduce_flex = {
    .name = "flex",
    .coll = TRD_COLL_ALLREDUCE,
    .flags = TRD_ALGO_CANDIDATE | TRD_ALGO_NODE_PHASES,
    .source = "[FLEX §2.1.2]",
    .levels = "node reduce_scatter/allgather in shared memory; recursive doubling per lane",
    .params_size = sizeof(trd_list_params),
    .parse = parse,
    .refuse = trd_refuse_noncommutative,
    .plan = plan,
    .model = model,
    .candidates = trd_list_candidates,
    .mpich = "reduce_scatter_allgather",
    .ompi = TRD_OMPI_RABENSEIFNER,
};
