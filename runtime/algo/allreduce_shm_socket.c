/* Algorithm: socket-aware allreduce on one node's segment [FLEX §2.1,
 * hardware mapping §3], TREEDUCE_ALGORITHM=shm:socket: the multi-radix
 * recursive exchange (allreduce_shm_rx.c) with factors {q, packages} when
 * every package holds q ranks: the package-local step first, then one
 * cross-package step on pieces of m/q bytes.  Local ranks are spread over the
 * node's packages in order, socket-major, as the DFS ring numbers cores
 * [TREE Lemma 5].  Otherwise the one-step fold (allreduce_shm.c).
 * Cost = rx's with k = 2: 7 alpha_shm + (2m + m/q) beta_mem + (p-1)/p m gamma
 */
#include "phases.h"

static int plan(trd_sb *b, const void *params)
{
    int packages = b->sh->node_packages ? b->sh->node_packages[b->node] : 1;
    int np = packages < b->ppn ? packages : b->ppn, q = np > 0 ? b->ppn / np : 0;
    (void)params;
    /* package i holds local ranks i ppn / np .. (i+1) ppn / np - 1 */
    for (int i = 0; i < np; i++)
        if ((int)((long)(i + 1) * b->ppn / np) - (int)((long)i * b->ppn / np) != q)
            q = 0;
    if (q == 0)
        return trd_plan_shm_fold(b, 0, b->ppn, -1, b->call->in_place ? TRD_B_RECV : TRD_B_SEND,
                                 b->call->count);
    int factors[2] = {q, np};
    return trd_plan_rx(b, factors, 2);
}

const trd_algo trd_allreduce_shm_socket = {
    .name = "shm:socket",
    .coll = TRD_COLL_ALLREDUCE,
    .source = "[FLEX §2.1, §3]",
    .levels = "one node: package-local steps first, then across packages on larger pieces",
    .refuse = trd_refuse_one_node,
    .plan = plan,
};
