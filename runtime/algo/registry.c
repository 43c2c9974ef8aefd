/* The algorithm registry (algo.h): the one table of every algorithm, and
 * planning through it. */
#include "phases.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "algos.h"

/* The candidates across nodes come first, in the order the size selection
 * lists them (ties go to the earlier one); the MPI library's routines last. */
const trd_algo *const trd_algos[] = {
    &trd_allreduce_nap,
    &trd_allreduce_ring,
    &trd_allreduce_rd,
    &trd_allreduce_rabenseifner,
    &trd_allreduce_smp,
    &trd_allreduce_hring,
    &trd_allreduce_flex,
    &trd_allreduce_rm,
    &trd_allreduce_shm,
    &trd_allreduce_shm_rx,
    &trd_allreduce_shm_tree,
    &trd_allreduce_shm_cyclic,
    &trd_allreduce_shm_socket,
    &trd_allreduce_shm_direct,
    &trd_allreduce_repro,
    &trd_rsb_shm,
    &trd_rsb_halving,
    &trd_rsb_doubling,
    &trd_rsb_pairwise,
    &trd_allgather_shm,
    &trd_allgather_rd,
    &trd_allgather_bruck,
    &trd_allgather_ring,
    &trd_bcast_shm,
    &trd_bcast_binomial,
    &trd_bcast_scatter_allgather,
    &trd_reduce_shm,
    &trd_reduce_binomial,
    &trd_reduce_rabenseifner,
    &trd_allreduce_mpi,
    &trd_rsb_mpi,
    &trd_allgather_mpi,
    &trd_reduce_mpi,
    &trd_bcast_mpi,
    NULL,
};

void trd_errf(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    if (!err || !errlen)
        return;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

const char *trd_ompi_allreduce_name(int id)
{
    static const char *const name[TRD_OMPI_ALLREDUCE_COUNT] = {
        [TRD_OMPI_IGNORE] = "ignore",
        [TRD_OMPI_BASIC_LINEAR] = "basic_linear",
        [TRD_OMPI_NONOVERLAPPING] = "nonoverlapping",
        [TRD_OMPI_RECURSIVE_DOUBLING] = "recursive_doubling",
        [TRD_OMPI_RING] = "ring",
        [TRD_OMPI_SEGMENTED_RING] = "segmented_ring",
        [TRD_OMPI_RABENSEIFNER] = "rabenseifner",
        [TRD_OMPI_ALLGATHER_REDUCE] = "allgather_reduce",
    };
    return id >= 0 && id < TRD_OMPI_ALLREDUCE_COUNT ? name[id] : NULL;
}

const trd_algo *trd_algo_find(int coll, const char *name, size_t len)
{
    for (int i = 0; trd_algos[i]; i++)
        if (trd_algos[i]->coll == coll && strlen(trd_algos[i]->name) == len &&
            strncmp(trd_algos[i]->name, name, len) == 0)
            return trd_algos[i];
    return NULL;
}

const trd_algo *trd_algo_parse(int coll, const char *spec, const char **params)
{
    const trd_algo *best = NULL;
    size_t blen = 0;
    for (int i = 0; trd_algos[i]; i++) {
        const trd_algo *a = trd_algos[i];
        size_t n = strlen(a->name);
        if (a->coll == coll && n > blen && strncmp(spec, a->name, n) == 0 &&
            (spec[n] == '\0' || spec[n] == ':')) {
            best = a;
            blen = n;
        }
    }
    if (best)
        *params = spec[blen] == ':' ? spec + blen + 1 : "";
    return best;
}

void trd_algo_names(int coll, char *buf, size_t len)
{
    size_t at = 0;
    if (len)
        buf[0] = '\0';
    for (int i = 0; trd_algos[i]; i++)
        if (trd_algos[i]->coll == coll && at < len)
            at += (size_t)snprintf(buf + at, len - at, "%s%s", at ? ", " : "", trd_algos[i]->name);
}

int trd_parse_list_params(const char *text, const char *what, trd_list_params *out, char *why,
                          size_t whylen)
{
    char names[128] = "";
    out->list = NULL;
    if (!*text)
        return 0;
    out->list = trd_algo_find(TRD_COLL_ALLREDUCE, text, strlen(text));
    if (out->list && out->list->list)
        return 0;
    for (int i = 0; trd_algos[i]; i++)
        if (trd_algos[i]->coll == TRD_COLL_ALLREDUCE && trd_algos[i]->list)
            snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s",
                     names[0] ? ", " : "", trd_algos[i]->name);
    snprintf(why, whylen, "%s must be one of %s, not '%s'", what, names, text);
    return TRD_ERR_INPUT;
}

int trd_list_candidates(const trd_shape *sh, char (*cand)[TRD_PARAMS_MAX], int cap)
{
    int k = 0;
    for (int i = 0; trd_algos[i] && k < cap; i++) {
        const trd_algo *a = trd_algos[i];
        if (a->coll == TRD_COLL_ALLREDUCE && a->list &&
            (!(a->flags & TRD_ALGO_QUADRATIC) || sh->nnodes <= TRD_LIST_QUADRATIC_MAX_NODES))
            snprintf(cand[k++], TRD_PARAMS_MAX, "%s", a->name);
    }
    return k;
}

/* The lists of trd_factor_lists from depth on, stack[0..depth) chosen, the
 * factors at least minf; k lists written so far. */
static int factor_lists(int n, int minf, const char *prefix, int *stack, int depth,
                        char (*out)[TRD_PARAMS_MAX], int cap, int k)
{
    if (n == 1 && depth > 0) {
        for (int dir = 0; dir < 2 && k < cap; dir++) {
            size_t o = 0;
            out[k][0] = '\0';
            for (int i = 0; i < depth && o < TRD_PARAMS_MAX - 8; i++) {
                int f = dir ? stack[depth - 1 - i] : stack[i];
                o += (size_t)snprintf(out[k] + o, TRD_PARAMS_MAX - o, "%s%s%d", i ? "," : "",
                                      prefix, f);
            }
            if (dir == 1 && k > 0 && !strcmp(out[k], out[k - 1])) /* one factor, or all equal */
                continue;
            if (o < TRD_PARAMS_MAX - 8)
                k++;
        }
        return k;
    }
    for (int f = minf; f <= 8 && f <= n && k < cap; f++)
        if (n % f == 0) {
            stack[depth] = f;
            k = factor_lists(n / f, f, prefix, stack, depth + 1, out, cap, k);
        }
    return k;
}

int trd_factor_lists(int n, const char *prefix, char (*out)[TRD_PARAMS_MAX], int cap)
{
    int stack[32];
    return factor_lists(n, 2, prefix, stack, 0, out, cap, 0);
}

const char *trd_refuse_noncommutative(const trd_shape *sh, const trd_call *call, const void *params)
{
    (void)sh;
    (void)params;
    return call->commutative ? NULL : "needs a commutative operation";
}

void trd_sb_input_to_recv(trd_sb *b)
{
    if (!b->call->in_place)
        trd_s_copy(b, 0, TRD_B_RECV, -1, 0, TRD_B_SEND, -1, 0, b->call->count);
}

int trd_plan(trd_sched *s, const trd_algo *a, const char *params, const trd_shape *sh,
             const trd_call *call, int rank, char *why, size_t whylen)
{
    void *pp = NULL;
    int *pos_of = NULL;
    const char *no = NULL;
    int rc = TRD_ERR_INPUT;
    memset(s, 0, sizeof *s);
    if (!params)
        params = "";
    if (a->flags & TRD_ALGO_LIBRARY) {
        snprintf(why, whylen, "%s %s", a->name, a->refuse(sh, call, NULL));
        return TRD_ERR_INPUT;
    }
    if (strlen(params) >= TRD_PARAMS_MAX) {
        snprintf(why, whylen, "%s: parameters longer than %d characters", a->name,
                 TRD_PARAMS_MAX - 1);
        return TRD_ERR_INPUT;
    }
    if (a->params_size && !(pp = calloc(1, a->params_size)))
        goto oom;
    if (a->parse) {
        if ((rc = a->parse(params, sh, pp, why, whylen)) != TRD_OK)
            goto out;
    } else if (*params) {
        snprintf(why, whylen, "%s takes no parameters", a->name);
        goto out;
    }
    if (call->whole && !(a->flags & TRD_ALGO_WHOLE))
        no = "splits the vector, and a user-defined operation is called on whole vectors";
    if (call->extent == 0 || no || (a->refuse && (no = a->refuse(sh, call, pp)))) {
        snprintf(why, whylen, "%s %s", a->name, call->extent ? no : "needs elements of some bytes");
        rc = TRD_ERR_INPUT;
        goto out;
    }
    s->alg = a->name;
    snprintf(s->params, sizeof s->params, "%s", params);
    s->call = *call;
    s->nranks = sh->nranks;
    s->rank0 = rank < 0 ? 0 : rank;
    s->nplanned = rank < 0 ? sh->nranks : 1;
    s->seg_slot = sh->slot_bytes / call->extent;
    s->inl_slot = TRD_INLINE_BYTES / call->extent;
    s->contention_free = (a->flags & TRD_ALGO_CONTENTION_FREE) != 0;
    s->first = calloc((size_t)s->nplanned + 1, sizeof *s->first);
    s->nepochs = calloc((size_t)s->nplanned + 1, sizeof *s->nepochs);
    pos_of = malloc((size_t)(sh->nranks > 0 ? sh->nranks : 1) * sizeof *pos_of);
    if (!s->first || !s->nepochs || !pos_of)
        goto oom;
    for (int i = 0; i < sh->nranks; i++)
        pos_of[sh->ring[i]] = i;
    for (int i = 0; i < s->nplanned; i++) {
        int r = s->rank0 + i, v = sh->node_of[r];
        trd_sb b = {.s = s, .sh = sh, .call = call, .rank = r, .pos = pos_of[r], .node = v};
        b.local = b.pos - sh->node_first[v];
        b.ppn = sh->node_first[v + 1] - sh->node_first[v];
        b.local_ranks = sh->ring + sh->node_first[v];
        s->first[i] = s->nops;
        if ((rc = a->plan(&b, pp)) != TRD_OK) {
            if (rc == TRD_ERR_NOMEM)
                goto oom;
            /* any other status refuses the call, said or not: a fallback */
            rc = TRD_ERR_INPUT;
            snprintf(why, whylen, "%s: %s", a->name, b.fail ? b.fail : "cannot plan this call");
            goto out;
        }
        s->nepochs[i] = b.epoch;
    }
    s->first[s->nplanned] = s->nops;
    if (s->oom)
        goto oom;
    rc = TRD_OK;
    goto out;
oom:
    rc = TRD_ERR_NOMEM;
    snprintf(why, whylen, "out of memory");
out:
    if (rc)
        trd_sched_free(s);
    free(pp);
    free(pos_of);
    return rc;
}
