/* Algorithm: reduce_scatter_block by recursive halving with the
 * non-power-of-two fold [MPICH §4.3, Fig. 5].  The first 2 rem ranks (rem =
 * p - q, q = 2^floor(lg p)) pair up as (2i, 2i+1) and one rank of each pair
 * hands its vector to the other, which leaves q survivors; new rank i stands
 * for ranks fold_first(i) .. fold_first(i+1)-1, so new rank order is rank
 * order.  At distance q/2, q/4, ..., 1 a survivor sends the half of its range
 * the partner keeps and reduces the half it keeps; it ends with its new
 * block reduced over all ranks and hands the folded partner its block.
 * Commutative ops.
 * Cost = lg p alpha + (p-1)/p m (beta + gamma)                  (p = 2^k)
 * Cost = (floor(lg p) + 2) alpha + 2 m beta + (1 + (p-1)/p) m gamma  (otherwise)
 *
 * The fold and the halving also serve Rabenseifner's reduce
 * (reduce_rabenseifner.c) and the doubling reduce_scatter (rsb_doubling.c).
 */
#include "phases.h"

int trd_pof2_floor(int p)
{
    int q = 1;
    while (q * 2 <= p)
        q *= 2;
    return q;
}

/* First rank new rank i stands for. */
static int fold_first(int i, int rem)
{
    return i < rem ? 2 * i : i + rem;
}

int trd_fold_rank(int i, int rem, int keep)
{
    if (i >= rem)
        return i + rem;
    return keep >= 0 && keep / 2 == i ? keep : 2 * i + 1;
}

size_t trd_fold_off(size_t n, int nb, int q, int i)
{
    return trd_even_at(n, nb, fold_first(i, nb - q));
}

int trd_plan_fold(trd_sb *b, int round, int rem, int keep, int in_buf, size_t in_off, int work_buf,
                  size_t work, size_t tmp, size_t n)
{
    int r = b->rank, peer = r ^ 1;
    if (r >= 2 * rem) {
        trd_s_copy(b, round, work_buf, -1, work, in_buf, -1, in_off, n);
        return r - rem;
    }
    if (trd_fold_rank(r / 2, rem, keep) != r) {
        trd_s_send(b, round, peer, in_buf, in_off, n);
        return -1;
    }
    if (peer < r) { /* the pair's lower rank is the left operand */
        trd_s_copy(b, round, work_buf, -1, work, in_buf, -1, in_off, n);
        trd_s_recv(b, round, peer, TRD_B_TMP, tmp, n);
        trd_s_reduce(b, round, work_buf, work, TRD_B_TMP, -1, tmp, n);
    } else {
        trd_s_recv(b, round, peer, work_buf, work, n);
        trd_s_reduce(b, round, work_buf, work, in_buf, -1, in_off, n);
    }
    return r / 2;
}

void trd_plan_halving(trd_sb *b, int round, int q, int me, int rem, int keep, int nb, int work_buf,
                      size_t work, size_t tmp, size_t n)
{
    int lo = 0, hi = q, k0 = 1;
    for (int mask = q / 2; mask > 0; mask >>= 1, k0++) {
        int k = me ^ mask, mid = lo + mask;
        int klo = me < k ? lo : mid, khi = me < k ? mid : hi;
        int slo = me < k ? mid : lo, shi = me < k ? hi : mid;
        size_t ko = trd_fold_off(n, nb, q, klo), so = trd_fold_off(n, nb, q, slo);
        size_t kn = trd_fold_off(n, nb, q, khi) - ko, sn = trd_fold_off(n, nb, q, shi) - so;
        int peer = trd_fold_rank(k, rem, keep);
        trd_s_sendrecv(b, round + k0, peer, work_buf, work + so, sn, peer, TRD_B_TMP, tmp, kn);
        trd_s_reduce(b, round + k0, work_buf, work + ko, TRD_B_TMP, -1, tmp, kn);
        lo = klo;
        hi = khi;
    }
}

/* After the fold: the survivor of pair i returns block 2i to rank 2i, and
 * every rank puts its block of work into recvbuf. */
void trd_plan_rsb_unfold(trd_sb *b, int round, int rem, size_t work, size_t count)
{
    int r = b->rank;
    if (r < 2 * rem && r % 2 == 0) {
        trd_s_recv(b, round, r + 1, TRD_B_RECV, 0, count);
        return;
    }
    if (r < 2 * rem)
        trd_s_send(b, round, r - 1, TRD_B_TMP, work + (size_t)(r - 1) * count, count);
    trd_s_copy(b, round, TRD_B_RECV, -1, 0, TRD_B_TMP, -1, work + (size_t)r * count, count);
}

static int plan(trd_sb *b, const void *params)
{
    int p = b->sh->nranks, q = trd_pof2_floor(p), rem = p - q;
    size_t count = b->call->count, n = (size_t)p * count;
    size_t work = trd_sb_tmp(b, n), tmp = trd_sb_tmp(b, n);
    int in_buf = b->call->in_place ? TRD_B_RECV : TRD_B_SEND;
    (void)params;
    int me = trd_plan_fold(b, 0, rem, -1, in_buf, 0, TRD_B_TMP, work, tmp, n);
    if (me >= 0)
        trd_plan_halving(b, 0, q, me, rem, -1, p, TRD_B_TMP, work, tmp, n);
    trd_plan_rsb_unfold(b, 64, rem, work, count);
    return 0;
}

const trd_algo trd_rsb_halving = {
    .name = "halving",
    .coll = TRD_COLL_REDUCE_SCATTER_BLOCK,
    .flags = TRD_ALGO_RANK_ORDER,
    .source = "[MPICH §4.3]",
    .levels = "recursive halving with the non-power-of-two fold",
    .refuse = trd_refuse_noncommutative,
    .plan = plan,
};
