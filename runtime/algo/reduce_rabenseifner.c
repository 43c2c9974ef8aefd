/* Algorithm: Rabenseifner's reduce [MPICH §4.4]: recursive halving
 * reduce_scatter of q = 2^floor(lg p) even blocks (rsb_halving.c's fold and
 * halving), then a binomial gather that retraces the halving to the root.
 * The fold keeps the root among the survivors, so no final move is needed.
 * Commutative ops; at least q elements.
 * Cost = 2 lg q alpha + 2 (q-1)/q m beta + (q-1)/q m gamma
 *        + [p != 2^k] (alpha + m beta + m gamma)
 */
#include "phases.h"

static int plan(trd_sb *b, const void *params)
{
    int p = b->sh->nranks, r = b->rank, root = b->call->root, q = trd_pof2_floor(p), rem = p - q;
    size_t count = b->call->count, in_off = 0;
    int in_buf = TRD_B_SEND;
    (void)params;
    if (b->call->in_place && r == root) { /* recvbuf is the work vector at the root */
        in_off = trd_sb_tmp(b, count);
        in_buf = TRD_B_TMP;
        trd_s_copy(b, 0, TRD_B_TMP, -1, in_off, TRD_B_RECV, -1, 0, count);
    }
    int work_buf = r == root ? TRD_B_RECV : TRD_B_TMP;
    size_t work = r == root ? 0 : trd_sb_tmp(b, count), tmp = trd_sb_tmp(b, count);
    int me = trd_plan_fold(b, 0, rem, root, in_buf, in_off, work_buf, work, tmp, count);
    if (me < 0)
        return 0;
    trd_plan_halving(b, 0, q, me, rem, root, q, work_buf, work, tmp, count);
    int newroot = root < 2 * rem ? root / 2 : root - rem, k0 = 64;
    for (int mask = 1; mask < q; mask <<= 1, k0++) {
        int k = me ^ mask, peer = trd_fold_rank(k, rem, root);
        int g = ((me ^ newroot) & mask) ? me & ~(mask - 1) : k & ~(mask - 1);
        size_t lo = trd_fold_off(count, q, q, g), len = trd_fold_off(count, q, q, g + mask) - lo;
        if ((me ^ newroot) & mask) {
            trd_s_send(b, k0, peer, work_buf, work + lo, len);
            return 0;
        }
        trd_s_recv(b, k0, peer, work_buf, work + lo, len);
    }
    return 0;
}

static const char *refuse(const trd_shape *sh, const trd_call *call, const void *params)
{
    if (!call->commutative)
        return trd_refuse_noncommutative(sh, call, params);
    return call->count >= (size_t)trd_pof2_floor(sh->nranks) ? NULL
                                                             : "needs an element per survivor";
}

const trd_algo trd_reduce_rabenseifner = {
    .name = "rabenseifner",
    .coll = TRD_COLL_REDUCE,
    .source = "[MPICH §4.4]",
    .levels = "recursive halving reduce_scatter, then a binomial gather to the root",
    .refuse = refuse,
    .plan = plan,
};
