/* Algorithm: ring allgather [MPICH §4.1]: each block travels p-1 hops to the
 * next rank, in place in recvbuf.  The relative form (blocks counted from a
 * root) also serves van de Geijn's bcast (bcast_scatter_allgather.c).
 * Cost = (p-1) alpha + (p-1)/p m beta
 */
#include "phases.h"

void trd_plan_gather_ring(trd_sb *b, int round, size_t n, int root)
{
    int p = b->sh->nranks, rel = (b->rank - root + p) % p;
    int next = (b->rank + 1) % p, prev = (b->rank - 1 + p) % p;
#define AT(i) trd_even_at(n, p, (i))
    for (int s = 0; s < p - 1; s++) {
        int sb = (rel - s + p) % p, rb = (rel - s - 1 + p) % p;
        trd_s_sendrecv(b, round + s, next, TRD_B_RECV, AT(sb), AT(sb + 1) - AT(sb), prev,
                       TRD_B_RECV, AT(rb), AT(rb + 1) - AT(rb));
    }
#undef AT
}

static int plan(trd_sb *b, const void *params)
{
    size_t count = b->call->count;
    (void)params;
    if (!b->call->in_place)
        trd_s_copy(b, 0, TRD_B_RECV, -1, (size_t)b->rank * count, TRD_B_SEND, -1, 0, count);
    trd_plan_gather_ring(b, 1, (size_t)b->sh->nranks * count, 0);
    return 0;
}

const trd_algo trd_allgather_ring = {
    .name = "ring",
    .coll = TRD_COLL_ALLGATHER,
    .flags = TRD_ALGO_QUADRATIC | TRD_ALGO_RANK_ORDER,
    .source = "[MPICH §4.1]",
    .levels = "ring in rank order",
    .plan = plan,
};
