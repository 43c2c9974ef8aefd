/* Algorithm: recursive doubling allgather [MPICH §4.1, Fig. 1]: at distance
 * 1, 2, 4, ... a rank exchanges with its partner every block its group has
 * gathered so far, in place in recvbuf; p a power of two.  The relative form
 * (blocks counted from a root) also serves van de Geijn's bcast
 * (bcast_scatter_allgather.c).
 * Cost = lg p alpha + (p-1)/p m beta
 */
#include "phases.h"

void trd_plan_gather_doubling(trd_sb *b, int round, size_t n, int root)
{
    int p = b->sh->nranks, rel = (b->rank - root + p) % p, k = 0;
    for (int mask = 1; mask < p; mask <<= 1, k++) {
        int krel = rel ^ mask, g = rel & ~(mask - 1), kg = krel & ~(mask - 1);
        size_t so = trd_even_at(n, p, g), ro = trd_even_at(n, p, kg);
        int peer = (krel + root) % p;
        trd_s_sendrecv(b, round + k, peer, TRD_B_RECV, so, trd_even_at(n, p, g + mask) - so, peer,
                       TRD_B_RECV, ro, trd_even_at(n, p, kg + mask) - ro);
    }
}

static int plan(trd_sb *b, const void *params)
{
    size_t count = b->call->count;
    (void)params;
    if (!b->call->in_place)
        trd_s_copy(b, 0, TRD_B_RECV, -1, (size_t)b->rank * count, TRD_B_SEND, -1, 0, count);
    trd_plan_gather_doubling(b, 1, (size_t)b->sh->nranks * count, 0);
    return 0;
}

static const char *refuse(const trd_shape *sh, const trd_call *call, const void *params)
{
    (void)call;
    (void)params;
    return (sh->nranks & (sh->nranks - 1)) == 0 ? NULL : "needs a power of two of ranks";
}

const trd_algo trd_allgather_rd = {
    .name = "rd",
    .coll = TRD_COLL_ALLGATHER,
    .flags = TRD_ALGO_RANK_ORDER,
    .source = "[MPICH §4.1]",
    .levels = "recursive doubling (a power of two of ranks)",
    .refuse = refuse,
    .plan = plan,
};
