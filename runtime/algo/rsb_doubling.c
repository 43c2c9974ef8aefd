/* Algorithm: recursive doubling reduce_scatter with the non-power-of-two
 * fold [MPICH §4.3].  At distance 1, 2, 4, ... a rank holds its group's
 * partial result and sends the partner only what the partner still needs:
 * the blocks outside their combined group and the partner's own block.
 * Groups are rank intervals and the lower one is always the left operand, so
 * any op works.
 * Cost = lg p alpha + ((1 + 1/p) lg p - 2(p-1)/p) m (beta + gamma)  (p = 2^k;
 * otherwise the same for q = 2^floor(lg p), plus 2 alpha + (1 + 1/p) m beta
 * + m gamma for the fold)
 */
#include "phases.h"

/* Element ranges [off, off+len) of the work vector, in message order, that
 * one step sends (to new rank k: blk = k) or receives (blk = me): the blocks
 * outside the combined group [lo, lo + 2 mask) and the one block the other
 * side keeps. */
struct span {
    size_t off, len;
};

static size_t spans(size_t n, int nb, int q, int me, int mask, int blk, struct span sp[3])
{
    int lo = me & ~(2 * mask - 1), hi = lo + 2 * mask;
    sp[0].off = 0;
    sp[0].len = trd_fold_off(n, nb, q, lo);
    sp[1].off = trd_fold_off(n, nb, q, hi);
    sp[1].len = n - sp[1].off;
    sp[2].off = trd_fold_off(n, nb, q, blk);
    sp[2].len = trd_fold_off(n, nb, q, blk + 1) - sp[2].off;
    return sp[0].len + sp[1].len + sp[2].len;
}

static int plan(trd_sb *b, const void *params)
{
    int p = b->sh->nranks, q = trd_pof2_floor(p), rem = p - q;
    size_t count = b->call->count, n = (size_t)p * count;
    size_t work = trd_sb_tmp(b, n), spack = trd_sb_tmp(b, n), rpack = trd_sb_tmp(b, n);
    int in_buf = b->call->in_place ? TRD_B_RECV : TRD_B_SEND, k0 = 1;
    struct span ss[3], rs[3];
    (void)params;
    int me = trd_plan_fold(b, 0, rem, -1, in_buf, 0, TRD_B_TMP, work, spack, n);
    for (int mask = 1; me >= 0 && mask < q; mask <<= 1, k0++) {
        int k = me ^ mask, peer = trd_fold_rank(k, rem, -1);
        size_t ns = spans(n, p, q, me, mask, k, ss), nr = spans(n, p, q, me, mask, me, rs);
        size_t at = 0;
        for (int i = 0; i < 3; i++) {
            trd_s_copy(b, k0, TRD_B_TMP, -1, spack + at, TRD_B_TMP, -1, work + ss[i].off,
                       ss[i].len);
            at += ss[i].len;
        }
        trd_s_sendrecv(b, k0, peer, TRD_B_TMP, spack, ns, peer, TRD_B_TMP, rpack, nr);
        at = 0;
        for (int i = 0; i < 3; i++) {
            if (k < me) { /* the partner's group op mine */
                trd_s_reduce(b, k0, TRD_B_TMP, work + rs[i].off, TRD_B_TMP, -1, rpack + at,
                             rs[i].len);
            } else { /* mine op the partner's, then back */
                trd_s_reduce(b, k0, TRD_B_TMP, rpack + at, TRD_B_TMP, -1, work + rs[i].off,
                             rs[i].len);
                trd_s_copy(b, k0, TRD_B_TMP, -1, work + rs[i].off, TRD_B_TMP, -1, rpack + at,
                           rs[i].len);
            }
            at += rs[i].len;
        }
    }
    trd_plan_rsb_unfold(b, 64, rem, work, count);
    return 0;
}

const trd_algo trd_rsb_doubling = {
    .name = "doubling",
    .coll = TRD_COLL_REDUCE_SCATTER_BLOCK,
    .flags = TRD_ALGO_RANK_ORDER,
    .source = "[MPICH §4.3]",
    .levels = "recursive doubling in rank order (any operation)",
    .plan = plan,
};
