/* Algorithm: reduce_scatter_block by pairwise exchange [MPICH §4.3]: at step
 * i = 1 .. p-1 rank r sends block r+i to rank r+i and gets its own block from
 * rank r-i (mod p).  Contributions arrive from r-1 down to 0, then from p-1
 * down to r+1; each is put on the left of one of two partial results,
 * L = x_0..x_r and R = x_{r+1}..x_{p-1}, so the result L op R is in rank
 * order for any op.  In place the input is first moved out of recvbuf, where
 * R accumulates.
 * Cost = (p-1) alpha + (p-1)/p m beta + (p-1)/p m gamma
 */
#include "phases.h"

static int plan(trd_sb *b, const void *params)
{
    int p = b->sh->nranks, r = b->rank;
    size_t count = b->call->count, n = (size_t)p * count;
    size_t tmp = trd_sb_tmp(b, count), left = trd_sb_tmp(b, count), in = 0;
    int in_buf = TRD_B_SEND;
    (void)params;
    if (b->call->in_place) {
        in = trd_sb_tmp(b, n);
        in_buf = TRD_B_TMP;
        trd_s_copy(b, 0, TRD_B_TMP, -1, in, TRD_B_RECV, -1, 0, n);
    }
    /* R lives in recvbuf, so L op R lands there; the last rank has no R */
    int lbuf = r < p - 1 ? TRD_B_TMP : TRD_B_RECV;
    size_t lat = r < p - 1 ? left : 0;
    trd_s_copy(b, 0, lbuf, -1, lat, in_buf, -1, in + (size_t)r * count, count);
    for (int i = 1; i < p; i++) {
        int dst = (r + i) % p, src = (r - i + p) % p;
        int ibuf = src == p - 1 ? TRD_B_RECV : TRD_B_TMP;
        size_t iat = src == p - 1 ? 0 : tmp;
        trd_s_sendrecv(b, i, dst, in_buf, in + (size_t)dst * count, count, src, ibuf, iat, count);
        if (src < r)
            trd_s_reduce(b, i, lbuf, lat, TRD_B_TMP, -1, tmp, count);
        else if (src < p - 1)
            trd_s_reduce(b, i, TRD_B_RECV, 0, TRD_B_TMP, -1, tmp, count);
    }
    if (r < p - 1)
        trd_s_reduce(b, p, TRD_B_RECV, 0, TRD_B_TMP, -1, left, count);
    return 0;
}

const trd_algo trd_rsb_pairwise = {
    .name = "pairwise",
    .coll = TRD_COLL_REDUCE_SCATTER_BLOCK,
    .flags = TRD_ALGO_RANK_ORDER,
    .source = "[MPICH §4.3]",
    .levels = "pairwise exchange in rank order (any operation)",
    .plan = plan,
};
