/* Algorithm: allreduce on one node by single copy in one step,
 * TREEDUCE_ALGORITHM=shm:direct [FLEX §2.1, §3.1].  Every rank reads every
 * other rank's input straight from its user buffer (Linux cross-memory
 * attach, process_vm_readv) and folds the whole vector in rank order,
 * x_0 op (x_1 op ...), so every rank gets the same bits: one
 * synchronisation, and no line of the output crosses back between the
 * cores.  shm's single copy instead reads each rank's block of every input,
 * then the other blocks from their owners' outputs: two steps, half the
 * reads.  Which wins depends on the node: on a 2-rank node, inputs written
 * before each call, one step was 1.2-2.4x faster at 32-128 KiB in one day's
 * runs and 1.05-1.38x slower in the next day's, as the node's cores handed
 * cache lines to each other faster or slower; the tuner
 * (treeduce-tune) decides per machine and size.  Out of place only: in
 * place a rank's input is its output, which its owner overwrites while
 * others read it; then, and without single copy or for a user-defined
 * operation on whole vectors, shm's fold through the segment.
 * Cost = 2 alpha_shm + (p-1) (alpha_cma + m beta_cma + m gamma)
 */
#include "phases.h"

static int plan(trd_sb *b, const void *params)
{
    const trd_call *call = b->call;
    size_t ext = call->extent, per = TRD_CMA_PIECE_BYTES / ext, count = call->count;
    (void)params;
    if (call->in_place || call->whole || !(b->sh->cma & TRD_CMA_READ) || b->ppn < 2)
        return trd_plan_shm_fold(b, 0, b->ppn, -1, call->in_place ? TRD_B_RECV : TRD_B_SEND, count);
    int e = trd_seg_direct_begin(b, 0);
    size_t mark = b->tmp_top, tmp = trd_sb_tmp(b, 2 * per);
    trd_s_wait(b, 0, TRD_PEER_LOCALS, b->ppn, TRD_CTR_IN, e);
    for (size_t a = 0; a < count; a += per)
        trd_plan_cma_fold_ordered(b, 0, TRD_B_SEND, a, a, count - a < per ? count - a : per, tmp);
    trd_seg_direct_end(b, 0, e);
    trd_sb_tmp_release(b, mark);
    return 0;
}

const trd_algo trd_allreduce_shm_direct = {
    .name = "shm:direct",
    .coll = TRD_COLL_ALLREDUCE,
    .flags = TRD_ALGO_WHOLE,
    .source = "[FLEX §2.1, §3.1]",
    .levels = "one node: every rank reads every other's input by single copy and folds it all",
    .refuse = trd_refuse_one_node,
    .plan = plan,
};
