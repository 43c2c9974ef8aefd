/* Algorithm: allreduce on one node through its shared segment, one step of
 * radix ppn [FLEX §2.1, §3.1].  Messages stream through the segment in chunks
 * of one slot; for every chunk each contributing rank copies its part into its
 * input area (payloads up to TRD_INLINE_BYTES into the line of its counter)
 * and signals it; then either every receiver folds the whole chunk from the
 * inputs (up to TRD_SHM_WHOLE_BYTES: one round of flags), or rank i folds
 * block i of the chunk into its output area, signals it, and every receiver
 * copies all blocks out (reduce_scatter + allgather); a user-defined op is
 * called on whole vectors, so every receiver folds the whole vector, which
 * must fit one slot (trd_refuse_whole_chunk).  Two slots alternate, so
 * a rank fills chunk e+1 while others still read chunk e; before it reuses a
 * slot it waits until every rank has finished the chunk that last used it
 * (the counter-integrated barrier of [FLEX §3.1]).  Each chunk is folded in
 * local rank order, x_0 op (x_1 op ...), so non-commutative ops are right
 * where local order is rank order, and every rank gets the same bits.
 * Cost per chunk of b bytes = 3 alpha_shm + (2 + 1/ppn) b beta_mem
 *                             + (ncontrib-1)/ppn b gamma
 *
 * Single copy: from cma_min (32 KiB, measured on a 2-rank node), where the
 * kernel lets the ranks read each other's memory (Linux cross-memory attach),
 * rank i reads block i of every other rank's input straight from that rank's
 * user buffer, folds it into block i of its output, then reads the other
 * blocks from their owners' outputs: one copy per byte instead of two, no
 * chunks.  In place is safe: during the reduce_scatter a rank writes only its
 * own block, and it overwrites block r only after rank r has read its inputs.
 * Cost = 3 alpha_shm + 2 (p-1) alpha_cma + 2 (p-1)/p m beta_cma + (p-1)/p m gamma
 * One step instead (every rank reads every other's whole input): shm:direct,
 * allreduce_shm_direct.c.
 *
 * The same fold serves the reduce on one node (to a root) and the node
 * phases of NAP and SMP (phases.h).  On one node local order is rank order,
 * so any op.
 */
#include "phases.h"

/* Chunks of at most this many bytes are folded whole by every receiver (one
 * synchronisation); larger ones block-wise (two). */
#define TRD_SHM_WHOLE_BYTES 4096
/* trd_plan_cma_fold; ordered: in rank order for a commutative op too, so
 * that every rank that folds the same elements gets the same bits. */
static void cma_fold(trd_sb *b, int round, int in_buf, size_t out_off, size_t a, size_t len,
                     size_t tmp, int ordered)
{
    int n = b->ppn, me = b->local;
    size_t stage = tmp, acc = tmp + TRD_CMA_PIECE_BYTES / b->call->extent;
    int own_is_out = in_buf == TRD_B_RECV && a == out_off;
    if (b->call->commutative && !ordered) {
        /* Out of place, the first other rank's part is read straight into
         * out and this rank's input is folded in last: no copy of it.  The
         * order is staggered so the ranks read different memory at once. */
        int k0 = 1;
        if (!own_is_out)
            trd_s_copy(b, round, TRD_B_RECV, -1, out_off, in_buf, trd_sb_owner(b, (me + k0++) % n),
                       a, len);
        for (int k = k0; k < n; k++) {
            trd_s_copy(b, round, TRD_B_TMP, -1, stage, in_buf, trd_sb_owner(b, (me + k) % n), a,
                       len);
            trd_s_reduce(b, round, TRD_B_RECV, out_off, TRD_B_TMP, -1, stage, len);
        }
        if (!own_is_out)
            trd_s_reduce(b, round, TRD_B_RECV, out_off, in_buf, -1, a, len);
        return;
    }
    /* the last rank's part first, folded right to left so the left operand
     * is always the lower rank; this rank's input stays intact until the end
     * even when it is out (in place) */
    int acc_buf = TRD_B_RECV;
    size_t at = out_off;
    if (me == n - 1) {
        if (!own_is_out)
            trd_s_copy(b, round, TRD_B_RECV, -1, out_off, in_buf, -1, a, len);
    } else {
        if (own_is_out) {
            acc_buf = TRD_B_TMP;
            at = acc;
        }
        trd_s_copy(b, round, acc_buf, -1, at, in_buf, trd_sb_owner(b, n - 1), a, len);
    }
    for (int j = n - 2; j >= 0; j--) {
        if (j == me) {
            trd_s_reduce(b, round, acc_buf, at, in_buf, -1, a, len);
        } else {
            trd_s_copy(b, round, TRD_B_TMP, -1, stage, in_buf, trd_sb_owner(b, j), a, len);
            trd_s_reduce(b, round, acc_buf, at, TRD_B_TMP, -1, stage, len);
        }
    }
    if (acc_buf != TRD_B_RECV)
        trd_s_copy(b, round, TRD_B_RECV, -1, out_off, acc_buf, -1, at, len);
}

void trd_plan_cma_fold(trd_sb *b, int round, int in_buf, size_t out_off, size_t a, size_t len,
                       size_t tmp)
{
    cma_fold(b, round, in_buf, out_off, a, len, tmp, 0);
}

void trd_plan_cma_fold_ordered(trd_sb *b, int round, int in_buf, size_t out_off, size_t a,
                               size_t len, size_t tmp)
{
    cma_fold(b, round, in_buf, out_off, a, len, tmp, 1);
}

/* The single-copy allreduce over all ranks of the node. */
static void cma_allreduce(trd_sb *b, int round, int in_buf, size_t count)
{
    size_t ext = b->call->extent, per = TRD_CMA_PIECE_BYTES / ext, lo, hi;
    int n = b->ppn, me = b->local, e = trd_seg_direct_begin(b, round);
    size_t mark = b->tmp_top, tmp = trd_sb_tmp(b, 2 * per);
    trd_s_wait(b, round, TRD_PEER_LOCALS, n, TRD_CTR_IN, e);
    trd_block_split(count, ext, n, me, &lo, &hi);
    for (size_t a = lo; a < hi; a += per)
        trd_plan_cma_fold(b, round, in_buf, a, a, hi - a < per ? hi - a : per, tmp);
    trd_s_signal(b, round, TRD_CTR_RED, e);
    for (int k = 1; k < n; k++) {
        int r = (me + k) % n;
        trd_block_split(count, ext, n, r, &lo, &hi);
        trd_s_wait(b, round, trd_sb_local_rank(b, r), 0, TRD_CTR_RED, e);
        if (hi > lo)
            trd_s_copy(b, round, TRD_B_RECV, -1, lo, TRD_B_RECV, trd_sb_local_rank(b, r), lo,
                       hi - lo);
    }
    trd_seg_direct_end(b, round, e);
    trd_sb_tmp_release(b, mark);
}

int trd_plan_shm_fold(trd_sb *b, int round, int k, int root, int in_buf, size_t count)
{
    const trd_shape *sh = b->sh;
    size_t ext = b->call->extent, per = b->s->seg_slot, lo, hi;
    int n = b->ppn, me = b->local, gets = root < 0 || root == me;
    if (n == 1) { /* a node of one rank: its vector is the result, no epoch */
        if (in_buf != TRD_B_RECV)
            trd_s_copy(b, round, TRD_B_RECV, -1, 0, in_buf, -1, 0, count);
        return 0;
    }
    if (per == 0) {
        b->fail = "an element larger than a segment slot";
        return TRD_ERR_INPUT;
    }
    if (root < 0 && k == n && n > 1 && (sh->cma & TRD_CMA_READ) && !b->call->whole &&
        count * ext >= sh->cma_min[TRD_CMA_ALLREDUCE]) {
        cma_allreduce(b, round, in_buf, count);
        return 0;
    }
    for (size_t first = 0; first < count; first += per) {
        size_t cnt = count - first < per ? count - first : per, bytes = cnt * ext;
        size_t cin;
        int e = trd_seg_next(b, round), cbuf = trd_seg_contrib(b, e, cnt, &cin);
        size_t cout = trd_sb_seg_out(b, e);
        if (me < k)
            trd_s_copy(b, round, cbuf, -1, cin, in_buf, -1, first, cnt);
        trd_s_signal(b, round, TRD_CTR_IN, e);
        if (bytes <= TRD_SHM_WHOLE_BYTES || n == 1 || b->call->whole) {
            /* every receiver folds the whole chunk from the k inputs (a
             * user-defined op: always, on the whole vector) */
            if (gets) {
                trd_s_wait(b, round, TRD_PEER_LOCALS, k, TRD_CTR_IN, e);
                trd_s_copy(b, round, TRD_B_RECV, -1, first, cbuf, trd_sb_owner(b, k - 1), cin, cnt);
                for (int j = k - 2; j >= 0; j--)
                    trd_s_reduce(b, round, TRD_B_RECV, first, cbuf, trd_sb_owner(b, j), cin, cnt);
            }
        } else {
            /* rank i folds block i into its output area, then the receivers
             * copy every block */
            trd_s_wait(b, round, TRD_PEER_LOCALS, k, TRD_CTR_IN, e);
            trd_block_split(cnt, ext, n, me, &lo, &hi);
            if (hi > lo) {
                trd_s_copy(b, round, TRD_B_SEG, -1, cout + lo, TRD_B_SEG, trd_sb_owner(b, k - 1),
                           cin + lo, hi - lo);
                for (int j = k - 2; j >= 0; j--)
                    trd_s_reduce(b, round, TRD_B_SEG, cout + lo, TRD_B_SEG, trd_sb_owner(b, j),
                                 cin + lo, hi - lo);
            }
            trd_s_signal(b, round, TRD_CTR_RED, e);
            if (gets) {
                trd_s_wait(b, round, TRD_PEER_LOCALS, n, TRD_CTR_RED, e);
                for (int r = 0; r < n; r++) {
                    trd_block_split(cnt, ext, n, r, &lo, &hi);
                    if (hi > lo)
                        trd_s_copy(b, round, TRD_B_RECV, -1, first + lo, TRD_B_SEG,
                                   trd_sb_owner(b, r), cout + lo, hi - lo);
                }
            }
        }
        trd_s_signal(b, round, TRD_CTR_DONE, e);
    }
    return 0;
}

static int plan(trd_sb *b, const void *params)
{
    (void)params;
    return trd_plan_shm_fold(b, 0, b->ppn, -1, b->call->in_place ? TRD_B_RECV : TRD_B_SEND,
                             b->call->count);
}

const char *trd_refuse_whole_chunk(const trd_shape *sh, const trd_call *call)
{
    int ppn_min, ppn_max;
    trd_shape_ppn(sh, &ppn_min, &ppn_max);
    if (call->whole && sh->shm && ppn_max > 1 && call->count > sh->slot_bytes / call->extent)
        return "gets a user-defined operation's vector larger than a segment slot, and the "
               "operation is called on whole vectors";
    return NULL;
}

const char *trd_refuse_one_node(const trd_shape *sh, const trd_call *call, const void *params)
{
    (void)params;
    if (sh->nnodes != 1 || !sh->shm)
        return "needs a communicator on one node with shared memory";
    for (int i = 0; i < sh->nranks; i++)
        if (sh->ring[i] != i)
            return "needs the node's ranks in rank order";
    return trd_refuse_whole_chunk(sh, call);
}

const trd_algo trd_allreduce_shm = {
    .name = "shm",
    .coll = TRD_COLL_ALLREDUCE,
    .flags = TRD_ALGO_WHOLE,
    .source = "[FLEX §2.1, §3.1]",
    .levels = "one node: one-step reduce_scatter + allgather through the segment, or single copy",
    .refuse = trd_refuse_one_node,
    .plan = plan,
};
