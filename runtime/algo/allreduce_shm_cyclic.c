/* Algorithm: cyclic shift reduce_scatter + allgather on one node's segment
 * [FLEX §2.2], TREEDUCE_ALGORITHM=shm:cyclic.  Rank i owns block i of the
 * chunk (cut at cache lines).  Every rank copies the blocks it does not own
 * into its input area (`in`).  Reduce_scatter: in round j = 1..p-1 rank i
 * folds block i of rank (i+j) mod p into its own block, in its output area
 * (`red`).  Allgather: in round j rank i copies block (i+j) mod p from that
 * rank's output area to recvbuf.  In every round each slot is read by one
 * rank only, instead of by all of them at once.  The fold order is rotated
 * per block, so the op must be commutative; every block is reduced once, so
 * every rank gets the same bits.  One epoch per chunk:
 * Cost = 3 alpha_shm + 2 m beta_mem + (p-1)/p m gamma
 */
#include "phases.h"

static int plan(trd_sb *b, const void *params)
{
    size_t ext = b->call->extent, per = b->s->seg_slot, count = b->call->count, lo, hi;
    int p = b->ppn, me = b->local;
    int in_buf = b->call->in_place ? TRD_B_RECV : TRD_B_SEND;
    (void)params;
    if (per == 0) {
        b->fail = "an element larger than a segment slot";
        return TRD_ERR_INPUT;
    }
    for (size_t first = 0; first < count; first += per) {
        size_t cnt = count - first < per ? count - first : per;
        int e = trd_seg_next(b, 0);
        size_t cin = trd_sb_seg_in(b, e), acc = trd_sb_seg_out(b, e);
        trd_block_split(cnt, ext, p, me, &lo, &hi);
        if (lo > 0)
            trd_s_copy(b, 0, TRD_B_SEG, -1, cin, in_buf, -1, first, lo);
        if (cnt > hi)
            trd_s_copy(b, 0, TRD_B_SEG, -1, cin + hi, in_buf, -1, first + hi, cnt - hi);
        trd_s_signal(b, 0, TRD_CTR_IN, e);
        if (hi > lo) {
            trd_s_copy(b, 0, TRD_B_SEG, -1, acc + lo, in_buf, -1, first + lo, hi - lo);
            for (int j = 1; j < p; j++) {
                int r = trd_sb_local_rank(b, (me + j) % p);
                trd_s_wait(b, 0, r, 0, TRD_CTR_IN, e);
                trd_s_reduce(b, 0, TRD_B_SEG, acc + lo, TRD_B_SEG, r, cin + lo, hi - lo);
            }
        }
        trd_s_signal(b, 0, TRD_CTR_RED, e);
        if (hi > lo)
            trd_s_copy(b, 0, TRD_B_RECV, -1, first + lo, TRD_B_SEG, -1, acc + lo, hi - lo);
        for (int j = 1; j < p; j++) {
            int r = (me + j) % p;
            size_t rlo, rhi;
            trd_block_split(cnt, ext, p, r, &rlo, &rhi);
            if (rhi == rlo)
                continue;
            trd_s_wait(b, 0, trd_sb_local_rank(b, r), 0, TRD_CTR_RED, e);
            trd_s_copy(b, 0, TRD_B_RECV, -1, first + rlo, TRD_B_SEG, trd_sb_local_rank(b, r),
                       acc + rlo, rhi - rlo);
        }
        trd_s_signal(b, 0, TRD_CTR_DONE, e);
    }
    return 0;
}

static const char *refuse(const trd_shape *sh, const trd_call *call, const void *params)
{
    const char *no = trd_refuse_one_node(sh, call, params);
    return no ? no : trd_refuse_noncommutative(sh, call, params);
}

const trd_algo trd_allreduce_shm_cyclic = {
    .name = "shm:cyclic",
    .coll = TRD_COLL_ALLREDUCE,
    .source = "[FLEX §2.2]",
    .levels = "one node: cyclic-shift reduce_scatter + allgather through the segment",
    .refuse = refuse,
    .plan = plan,
};
