/* Algorithm: Bruck's allgather [MPICH §4.1]: at distance 1, 2, 4, ... rank r
 * sends the blocks it has, r .. r+d-1, to r-d, and gets r+d .. r+2d-1 from
 * r+d; one rotation at the end puts them in rank order.  Any p.
 * Cost = ceil(lg p) alpha + (p-1)/p m beta
 */
#include "phases.h"

static int plan(trd_sb *b, const void *params)
{
    int p = b->sh->nranks, r = b->rank, k = 1;
    size_t count = b->call->count, tmp = trd_sb_tmp(b, (size_t)p * count);
    (void)params;
    if (b->call->in_place)
        trd_s_copy(b, 0, TRD_B_TMP, -1, tmp, TRD_B_RECV, -1, (size_t)r * count, count);
    else
        trd_s_copy(b, 0, TRD_B_TMP, -1, tmp, TRD_B_SEND, -1, 0, count);
    for (int d = 1; d < p; d *= 2, k++) {
        size_t nblk = (size_t)(d < p - d ? d : p - d) * count;
        trd_s_sendrecv(b, k, (r - d + p) % p, TRD_B_TMP, tmp, nblk, (r + d) % p, TRD_B_TMP,
                       tmp + (size_t)d * count, nblk);
    }
    /* the temporary holds the blocks of ranks r, r+1, ..., r-1 */
    trd_s_copy(b, k, TRD_B_RECV, -1, (size_t)r * count, TRD_B_TMP, -1, tmp,
               (size_t)(p - r) * count);
    trd_s_copy(b, k, TRD_B_RECV, -1, 0, TRD_B_TMP, -1, tmp + (size_t)(p - r) * count,
               (size_t)r * count);
    return 0;
}

const trd_algo trd_allgather_bruck = {
    .name = "bruck",
    .coll = TRD_COLL_ALLGATHER,
    .flags = TRD_ALGO_RANK_ORDER,
    .source = "[MPICH §4.1]",
    .levels = "Bruck: ceil(lg p) exchanges, then one rotation",
    .plan = plan,
};
