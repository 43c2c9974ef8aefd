/* Algorithm: SMP allreduce [NAP §II-A, Fig. 4]: reduce to each node's leader
 * (local rank 0; through the segment where the node has one, else a binomial
 * tree), allreduce among the n leaders in DFS node order (params: "" or "rd"
 * recursive doubling, "rabenseifner", "ring"), bcast on each node.  One rank
 * per node talks to the network, so it gets the full link bandwidth, while
 * the other ranks wait.  Composed of the pieces: reduce_shm's fold or
 * reduce_binomial, the leaders' list allreduce, bcast_shm or bcast_binomial.
 * Commutative ops; a user-defined one gets whole vectors with rd among the
 * leaders (the default) and vectors that fit a segment slot.
 * Cost = 3 alpha_shm + 2 m beta_mem + (ppn-1)/ppn m gamma      (node reduce)
 *        + ceil(lg n) (alpha + m beta + m gamma)                (rd; [NAP Eq. 5])
 *        + 2 alpha_shm + 2 m beta_mem                           (node bcast)
 * (without shared memory the node phases cost 2 ceil(lg ppn) (alpha_l + m beta_l)
 * + ceil(lg ppn) m gamma; the leader phase is Rabenseifner's or the ring's
 * cost with n ranks when params name them).
 */
#include <stdlib.h>

#include "phases.h"

static int parse(const char *text, const trd_shape *sh, void *out, char *why, size_t whylen)
{
    (void)sh;
    return trd_parse_list_params(text, "smp: the leader algorithm", out, why, whylen);
}

/* Commutative ops; a user-defined one (whole vectors) with a leader
 * algorithm that keeps them whole. */
static const char *refuse(const trd_shape *sh, const trd_call *call, const void *params)
{
    const trd_list_params *lp = params;
    const char *no;
    if (call->whole && lp->list && !(lp->list->flags & TRD_ALGO_WHOLE))
        return "with a leader algorithm that splits the vector: a user-defined operation is "
               "called on whole vectors";
    if ((no = trd_refuse_whole_chunk(sh, call)))
        return no;
    return trd_refuse_noncommutative(sh, call, params);
}

static int plan(trd_sb *b, const void *params)
{
    const trd_list_params *lp = params;
    const trd_algo *leaders_alg = lp->list ? lp->list : &trd_allreduce_rd;
    const trd_shape *sh = b->sh;
    size_t cnt = b->call->count;
    int rc = 0;
    trd_sb_input_to_recv(b);
    if (b->ppn > 1 && sh->shm)
        rc = trd_plan_shm_fold(b, 0, b->ppn, 0, TRD_B_RECV, cnt);
    else if (b->ppn > 1)
        rc =
            trd_plan_reduce_binomial(b, 0, b->local_ranks, b->ppn, b->local, 0, TRD_B_RECV, 0, cnt);
    if (!rc && b->local == 0) {
        int *leaders = malloc((size_t)sh->nnodes * sizeof *leaders);
        if (!leaders)
            return TRD_ERR_NOMEM;
        for (int v = 0; v < sh->nnodes; v++)
            leaders[v] = sh->ring[sh->node_first[v]];
        rc = leaders_alg->list(b, TRD_PHASE, leaders, sh->nnodes, b->node, 0, cnt);
        free(leaders);
    }
    if (!rc && b->ppn > 1 && sh->shm)
        rc = trd_plan_shm_bcast(b, 2 * TRD_PHASE, 0, cnt);
    else if (!rc && b->ppn > 1)
        rc = trd_plan_bcast_binomial(b, 2 * TRD_PHASE, b->local_ranks, b->ppn, b->local, 0, cnt, 0);
    return rc;
}

/* node reduce + bcast, recursive doubling among the leaders */
static double model(const trd_levels *l, int nodes, int ppn, double m)
{
    return trd_node_phases_s(l, ppn, m) + trd_rd_nodes_s(l, nodes, 1, m);
}

const trd_algo trd_allreduce_smp = {
    .name = "smp",
    .coll = TRD_COLL_ALLREDUCE,
    .flags = TRD_ALGO_CANDIDATE | TRD_ALGO_NODE_PHASES | TRD_ALGO_WHOLE,
    .source = "[NAP §II-A]",
    .levels = "node reduce/bcast in shared memory; recursive doubling among leaders",
    .params_size = sizeof(trd_list_params),
    .parse = parse,
    .refuse = refuse,
    .plan = plan,
    .model = model,
    .candidates = trd_list_candidates,
    .mpich = "smp",
    .ompi = TRD_OMPI_RECURSIVE_DOUBLING,
};
