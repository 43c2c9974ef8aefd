/* Algorithm: reduce_scatter_block on one node through its shared segment:
 * chunk k of every rank's input area holds elements [first, first+cnt) of
 * each of the p blocks of its input; rank i folds block i over the p areas in
 * rank order into its output, x_0 op (x_1 op ...), so any op is right.
 * Cost = 2 alpha_shm + 2 m beta_mem + (p-1)/p m gamma, m = p recvcount extent
 *
 * Single copy: from cma_min (16 KiB, measured on a 2-rank node), not in place,
 * rank i folds block i of every rank's input, read from its memory, straight
 * into its recvbuf (in place, rank i's result would overwrite block 0 while
 * rank 0 reads it).
 * Cost = 2 alpha_shm + (p-1) alpha_cma + (p-1)/p m beta_cma + (p-1)/p m gamma
 */
#include "phases.h"

static int plan(trd_sb *b, const void *params)
{
    const trd_shape *sh = b->sh;
    size_t ext = b->call->extent, count = b->call->count, np = (size_t)b->ppn;
    size_t per = b->s->seg_slot / np;
    int n = b->ppn, me = b->local;
    int in_buf = b->call->in_place ? TRD_B_RECV : TRD_B_SEND;
    (void)params;
    if (per == 0) {
        b->fail = "an element larger than a segment slot";
        return TRD_ERR_INPUT;
    }
    if (n > 1 && (sh->cma & TRD_CMA_READ) && !b->call->in_place &&
        count * ext * np >= sh->cma_min[TRD_CMA_RSB]) {
        size_t first = (size_t)me * count, step = TRD_CMA_PIECE_BYTES / ext;
        size_t mark = b->tmp_top, tmp = trd_sb_tmp(b, 2 * step);
        int e = trd_seg_direct_begin(b, 0);
        trd_s_wait(b, 0, TRD_PEER_LOCALS, n, TRD_CTR_IN, e);
        for (size_t a = 0; a < count; a += step)
            trd_plan_cma_fold(b, 0, TRD_B_SEND, a, first + a, count - a < step ? count - a : step,
                              tmp);
        trd_seg_direct_end(b, 0, e);
        trd_sb_tmp_release(b, mark);
        return 0;
    }
    for (size_t first = 0; first < count; first += per) {
        size_t cnt = count - first < per ? count - first : per;
        int e = trd_seg_next(b, 0);
        size_t cin = trd_sb_seg_in(b, e), mine = cin + (size_t)me * cnt;
        for (size_t j = 0; j < np; j++)
            trd_s_copy(b, 0, TRD_B_SEG, -1, cin + j * cnt, in_buf, -1, j * count + first, cnt);
        trd_s_signal(b, 0, TRD_CTR_IN, e);
        trd_s_wait(b, 0, TRD_PEER_LOCALS, n, TRD_CTR_IN, e);
        trd_s_copy(b, 0, TRD_B_RECV, -1, first, TRD_B_SEG, trd_sb_owner(b, n - 1), mine, cnt);
        for (int j = n - 2; j >= 0; j--)
            trd_s_reduce(b, 0, TRD_B_RECV, first, TRD_B_SEG, trd_sb_owner(b, j), mine, cnt);
        trd_s_signal(b, 0, TRD_CTR_DONE, e);
    }
    return 0;
}

const trd_algo trd_rsb_shm = {
    .name = "shm",
    .coll = TRD_COLL_REDUCE_SCATTER_BLOCK,
    .source = "[FLEX §2.1]",
    .levels = "one node: through the segment, or single copy from the others' inputs",
    .refuse = trd_refuse_one_node,
    .plan = plan,
};
