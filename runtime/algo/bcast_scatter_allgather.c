/* Algorithm: van de Geijn broadcast [MPICH §4.2]: binomial scatter of p even
 * blocks (bcast_binomial.c), then an allgather of the blocks relative to the
 * root: recursive doubling (params "rd": p a power of two) or ring ("ring");
 * "" picks recursive doubling where p is a power of two.
 * Cost = (lg p + p - 1) alpha + 2 (p-1)/p m beta  (ring allgather)
 *        2 lg p alpha + 2 (p-1)/p m beta          (recursive doubling)
 */
#include <string.h>

#include "phases.h"

typedef struct sa_params {
    int doubling; /* -1: by p */
} sa_params;

static int parse(const char *text, const trd_shape *sh, void *out, char *why, size_t whylen)
{
    sa_params *sp = out;
    (void)sh;
    if (!*text || !strcmp(text, "rd") || !strcmp(text, "ring")) {
        sp->doubling = !*text ? -1 : !strcmp(text, "rd");
        return 0;
    }
    snprintf(why, whylen, "the allgather of scatter_allgather is rd or ring, not '%s'", text);
    return TRD_ERR_INPUT;
}

static int pof2(int p)
{
    return (p & (p - 1)) == 0;
}

static const char *refuse(const trd_shape *sh, const trd_call *call, const void *params)
{
    (void)call;
    if (((const sa_params *)params)->doubling == 1 && !pof2(sh->nranks))
        return "rd needs a power of two of ranks";
    return NULL;
}

static int plan(trd_sb *b, const void *params)
{
    int d = ((const sa_params *)params)->doubling, p = b->sh->nranks, root = b->call->root;
    trd_plan_bcast_binomial(b, 0, NULL, p, b->rank, root, b->call->count, 1);
    if (d == 1 || (d < 0 && pof2(p)))
        trd_plan_gather_doubling(b, 64, b->call->count, root);
    else
        trd_plan_gather_ring(b, 64, b->call->count, root);
    return 0;
}

const trd_algo trd_bcast_scatter_allgather = {
    .name = "scatter_allgather",
    .coll = TRD_COLL_BCAST,
    .flags = TRD_ALGO_RANK_ORDER,
    .source = "[MPICH §4.2]",
    .levels = "van de Geijn: binomial scatter, then allgather",
    .params_size = sizeof(sa_params),
    .parse = parse,
    .refuse = refuse,
    .plan = plan,
};
