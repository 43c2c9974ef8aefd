/* Selection (trd_select.h): the generated ranges and MPICH's rules for the
 * pieces [MPICH §4]. */
#include "trd_select.h"

#include "phases.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "algos.h"

/* One node without a segment: the algorithm below the crossover and the one
 * from it (trd_select_noseg_crossover). */
static const trd_algo *const noseg_below = &trd_allreduce_nap;
static const trd_algo *const noseg_from = &trd_allreduce_ring;

size_t trd_select_noseg_crossover(const trd_levels *l, int ppn)
{
    /* scan powers of two, then bisect between the last size where the
     * algorithm below is faster and the first where the other one is */
    double lo = 0, hi = -1;
    for (double b = 1; b <= 1099511627776.0; b *= 2) {
        if (noseg_from->model(l, 1, ppn, b) < noseg_below->model(l, 1, ppn, b)) {
            hi = b;
            break;
        }
        lo = b;
    }
    if (hi < 0)
        return SIZE_MAX;
    while (hi - lo > 1) {
        double mid = floor((lo + hi) / 2);
        if (noseg_from->model(l, 1, ppn, mid) < noseg_below->model(l, 1, ppn, mid))
            hi = mid;
        else
            lo = mid;
    }
    return (size_t)hi;
}

/* MPICH's switch points for the pieces across nodes [MPICH §4]. */
#define TRD_REDSCAT_LONG_BYTES (512 * 1024)   /* commutative: halving below */
#define TRD_REDSCAT_NONCOMM_BYTES 512         /* non-commutative: doubling below */
#define TRD_ALLGATHER_LONG_BYTES (512 * 1024) /* p = 2^k: doubling below */
#define TRD_ALLGATHER_SHORT_BYTES (80 * 1024) /* Bruck below */
#define TRD_BCAST_SHORT_BYTES (12 * 1024)     /* binomial below */
#define TRD_BCAST_MIN_PROCS 8                 /* binomial below (gain needs lg p > 2) */
#define TRD_BCAST_LONG_BYTES (512 * 1024)     /* p = 2^k: doubling allgather below */
#define TRD_REDUCE_SHORT_BYTES 2048           /* binomial up to */

int trd_shape_pick(const trd_shape_choice *shapes, int nshapes, int nnodes, int ppn)
{
    int best = -1;
    for (int i = 0; i < nshapes; i++) {
        const trd_shape_choice *s = &shapes[i], *b = best >= 0 ? &shapes[best] : NULL;
        int fits = s->nnodes <= nnodes, bfits = b && b->nnodes <= nnodes;
        if (!b || (fits && !bfits) ||
            (fits == bfits && (fits ? s->nnodes > b->nnodes : s->nnodes < b->nnodes))) {
            best = i;
            continue;
        }
        if (s->nnodes != b->nnodes)
            continue;
        fits = s->ppn <= ppn, bfits = b->ppn <= ppn;
        if ((fits && !bfits) || (fits == bfits && (fits ? s->ppn > b->ppn : s->ppn < b->ppn)))
            best = i;
    }
    return best;
}

int trd_selection_init(trd_selection *sel, const trd_shape_choice *shapes, int nshapes,
                       size_t nap_max_bytes_1node, int nnodes, int ppn_max, int nranks, char *why,
                       size_t whylen)
{
    int i = trd_shape_pick(shapes, nshapes, nnodes, ppn_max);
    memset(sel, 0, sizeof *sel);
    sel->nap_max_bytes_1node = nap_max_bytes_1node;
    if (i < 0)
        return 0;
    const trd_shape_choice *sc = &shapes[i];
    if (sc->nchoices > TRD_MAX_RANGES) {
        snprintf(why, whylen, "the machine's tables have %d size ranges, at most %d are read",
                 sc->nchoices, TRD_MAX_RANGES);
        return TRD_ERR_INPUT;
    }
    /* parameters were planned for the shape's rank count only */
    int own = sc->nnodes * sc->ppn == nranks;
    for (int k = 0; k < sc->nchoices; k++) {
        const trd_size_choice *c = &sc->choices[k];
        const trd_algo *a = trd_algo_find(TRD_COLL_ALLREDUCE, c->alg, strlen(c->alg));
        if (!a) {
            snprintf(why, whylen,
                     "the machine's tables name an algorithm '%.40s' this runtime "
                     "does not have",
                     c->alg);
            return TRD_ERR_INPUT;
        }
        sel->choice[k].below = c->below;
        sel->choice[k].alg = a;
        sel->choice[k].params = own ? c->params : "";
    }
    sel->nchoices = sc->nchoices;
    return 0;
}

int trd_selection_tune(trd_selection *sel, const trd_tuned_shape *tuned, int ntuned, int nnodes,
                       int ppn, char *why, size_t whylen)
{
    memset(sel->ntuned, 0, sizeof sel->ntuned);
    for (int t = 0; t < ntuned; t++) {
        const trd_tuned_shape *ts = &tuned[t];
        if (ts->nnodes != nnodes || ts->ppn != ppn || ppn <= 0 || ts->coll < 0 ||
            ts->coll >= TRD_COLL_MAX)
            continue;
        if (ts->nchoices < 1 || ts->nchoices > TRD_MAX_RANGES) {
            snprintf(why, whylen,
                     "the machine's measured tables have %d size ranges for %s, 1 to %d are read",
                     ts->nchoices, trd_coll_name(ts->coll), TRD_MAX_RANGES);
            goto bad;
        }
        for (int k = 0; k < ts->nchoices; k++) {
            const trd_size_choice *c = &ts->choices[k];
            const trd_algo *a = c->alg ? trd_algo_find(ts->coll, c->alg, strlen(c->alg)) : NULL;
            if (!a && c->alg) {
                snprintf(why, whylen,
                         "the machine's measured tables name an algorithm '%.40s' of %s that "
                         "this runtime does not have",
                         c->alg, trd_coll_name(ts->coll));
                goto bad;
            }
            sel->tuned[ts->coll][k].below = c->below;
            sel->tuned[ts->coll][k].alg = a;
            sel->tuned[ts->coll][k].params = a && c->params ? c->params : "";
        }
        sel->ntuned[ts->coll] = ts->nchoices;
    }
    return 0;
bad:
    memset(sel->ntuned, 0, sizeof sel->ntuned);
    return TRD_ERR_INPUT;
}

static int pof2(int p)
{
    return (p & (p - 1)) == 0;
}

static int pof2_floor(int p)
{
    int q = 1;
    while (q * 2 <= p)
        q *= 2;
    return q;
}

const trd_algo *trd_select(const trd_selection *sel, const trd_shape *sh, const trd_call *call,
                           const char **params)
{
    int p = sh->nranks, one_node = sh->nnodes == 1 && sh->shm;
    size_t bytes = call->count * call->extent, all = (size_t)p * bytes;
    int n = sel->ntuned[call->coll];
    if (n && (call->coll == TRD_COLL_ALLGATHER || call->coll == TRD_COLL_BCAST ||
              (call->commutative && !call->whole))) {
        int i = 0;
        while (i + 1 < n && bytes >= sel->tuned[call->coll][i].below)
            i++;
        if (sel->tuned[call->coll][i].alg) { /* NULL: the rules below decide */
            *params = sel->tuned[call->coll][i].params;
            return sel->tuned[call->coll][i].alg;
        }
    }
    *params = "";
    switch (call->coll) {
    case TRD_COLL_REDUCE_SCATTER_BLOCK:
        if (one_node)
            return &trd_rsb_shm;
        if (call->commutative && all < TRD_REDSCAT_LONG_BYTES)
            return &trd_rsb_halving;
        if (!call->commutative && all < TRD_REDSCAT_NONCOMM_BYTES)
            return &trd_rsb_doubling;
        return &trd_rsb_pairwise;
    case TRD_COLL_ALLGATHER:
        if (one_node)
            return &trd_allgather_shm;
        if (!pof2(p) && all < TRD_ALLGATHER_SHORT_BYTES)
            return &trd_allgather_bruck;
        if (pof2(p) && all < TRD_ALLGATHER_LONG_BYTES)
            return &trd_allgather_rd;
        return &trd_allgather_ring;
    case TRD_COLL_BCAST:
        if (one_node)
            return &trd_bcast_shm;
        if (bytes < TRD_BCAST_SHORT_BYTES || p < TRD_BCAST_MIN_PROCS)
            return &trd_bcast_binomial;
        *params = pof2(p) && bytes < TRD_BCAST_LONG_BYTES ? "rd" : "ring";
        return &trd_bcast_scatter_allgather;
    case TRD_COLL_REDUCE:
        if (one_node && !trd_refuse_whole_chunk(sh, call))
            return &trd_reduce_shm;
        if (call->commutative && !call->whole && bytes > TRD_REDUCE_SHORT_BYTES &&
            call->count >= (size_t)pof2_floor(p))
            return &trd_reduce_rabenseifner;
        return &trd_reduce_binomial;
    default:
        break;
    }
    /* a user-defined op: whole vectors, as MPICH's recursive doubling
     * calls it at every size */
    if (call->whole)
        return one_node && !trd_refuse_whole_chunk(sh, call) ? &trd_allreduce_shm
                                                             : &trd_allreduce_rd;
    if (one_node)
        return &trd_allreduce_shm;
    if (!call->commutative)
        return &trd_allreduce_rd;
    if (sh->nnodes == 1)
        return bytes < sel->nap_max_bytes_1node ? noseg_below : noseg_from;
    int i = 0;
    while (i + 1 < sel->nchoices && bytes >= sel->choice[i].below)
        i++;
    if (sel->nchoices == 0)
        return &trd_allreduce_ring;
    *params = sel->choice[i].params;
    return sel->choice[i].alg;
}
