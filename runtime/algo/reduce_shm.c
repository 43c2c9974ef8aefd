/* Algorithm: reduce on one node through its shared segment: the one-step
 * fold of allreduce_shm.c [FLEX §2.1] with one receiver, the root; chunks up
 * to TRD_INLINE_BYTES travel in the counters' lines, up to 4 KiB the root
 * folds them whole, larger ones are folded block-wise by every rank and
 * gathered by the root.  Rank order, so any op.
 * Cost = 3 alpha_shm + 2 m beta_mem + (p-1)/p m gamma
 */
#include "phases.h"

static int plan(trd_sb *b, const void *params)
{
    int root = trd_sb_local_of(b, b->call->root);
    int in_buf = b->call->in_place && b->local == root ? TRD_B_RECV : TRD_B_SEND;
    (void)params;
    return trd_plan_shm_fold(b, 0, b->ppn, root, in_buf, b->call->count);
}

const trd_algo trd_reduce_shm = {
    .name = "shm",
    .coll = TRD_COLL_REDUCE,
    .flags = TRD_ALGO_WHOLE,
    .source = "[FLEX §2.1]",
    .levels = "one node: one-step fold through the segment to the root",
    .refuse = trd_refuse_one_node,
    .plan = plan,
};
