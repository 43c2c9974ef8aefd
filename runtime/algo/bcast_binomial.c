/* Algorithm: binomial tree broadcast [MPICH §4.2]: relative rank j gets the
 * data from j minus its lowest set bit and passes it on to j + 2^i for the
 * lower bits 2^i.  Over a rank list it also serves SMP's node bcast without
 * shared memory; with scatter, only each subtree's blocks travel (the first
 * half of van de Geijn's bcast, bcast_scatter_allgather.c).
 * Cost = ceil(lg p) (alpha + m beta)
 */
#include "phases.h"

int trd_plan_bcast_binomial(trd_sb *b, int round, const int *ranks, int n, int me, int root,
                            size_t count, int scatter)
{
    int rel = (me - root + n) % n, mask = 1, k = 0;
#define RANK(i) (ranks ? ranks[i] : (i))
#define AT(i) (scatter ? trd_even_at(count, n, (i)) : 0)
#define END(i) (scatter ? trd_even_at(count, n, (i) < n ? (i) : n) : count)
    while (mask < n && !(rel & mask))
        mask <<= 1, k++;
    if (rel)
        trd_s_recv(b, round + k, RANK((rel - mask + root) % n), TRD_B_RECV, AT(rel),
                   END(rel + mask) - AT(rel));
    for (mask >>= 1, k--; mask > 0; mask >>= 1, k--) {
        int child = rel + mask;
        if (child < n)
            trd_s_send(b, round + k, RANK((child + root) % n), TRD_B_RECV, AT(child),
                       END(child + mask) - AT(child));
    }
#undef END
#undef AT
#undef RANK
    return 0;
}

static int plan(trd_sb *b, const void *params)
{
    (void)params;
    return trd_plan_bcast_binomial(b, 0, NULL, b->sh->nranks, b->rank, b->call->root,
                                   b->call->count, 0);
}

const trd_algo trd_bcast_binomial = {
    .name = "binomial",
    .coll = TRD_COLL_BCAST,
    .flags = TRD_ALGO_RANK_ORDER,
    .source = "[MPICH §4.2]",
    .levels = "binomial tree",
    .plan = plan,
};
