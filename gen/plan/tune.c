/* Selection on the schedules (tune.h): the size ranges and parameters
 * chosen on the schedules' timed execution. */
#include "tune.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "shape.h"
#include "trd_select.h"

/* ---- The timer --------------------------------------------------------------- */

struct tmemo {
    const trd_algo *a;
    char params[TRD_PARAMS_MAX];
    size_t count;
    double us;   /* INFINITY: does not plan for the shape */
    size_t nops; /* of the schedule, where timed exactly */
    int exact;
};

struct trd_timer {
    trd_topo_t t;
    const trd_machine_plan *p;
    const trd_shape *sh;
    struct tmemo *m;
    size_t n, cap;
    size_t *slot; /* hash table of m: index + 1, 0 empty */
    size_t slotcap;
    int timed, extrapolated;
    trd_shape one; /* a one-node shape with single copy, as the runtime runs it */
};

int trd_timer_create(trd_timer **tm, trd_topo_t t, const trd_machine_plan *p, const trd_shape *sh)
{
    if (!(*tm = calloc(1, sizeof **tm)))
        return TRD_ERR_NOMEM;
    (*tm)->t = t;
    (*tm)->p = p;
    (*tm)->sh = sh;
    if (sh->nnodes == 1 && sh->shm && !sh->cma) {
        /* on one node the runtime reads the other ranks' buffers directly
         * from these sizes where the kernel lets it (Linux cross-memory
         * attach): the single-copy path is what runs there */
        static const size_t cma_min[TRD_CMA_MAX] = TRD_CMA_MIN_DEFAULTS;
        (*tm)->one = *sh;
        (*tm)->one.cma = TRD_CMA_READ | TRD_CMA_WRITE;
        memcpy((*tm)->one.cma_min, cma_min, sizeof cma_min);
        (*tm)->sh = &(*tm)->one;
    }
    return TRD_OK;
}

void trd_timer_destroy(trd_timer *tm)
{
    if (!tm)
        return;
    free(tm->m);
    free(tm->slot);
    free(tm);
}

void trd_timer_counts(const trd_timer *tm, int *timed, int *extrapolated)
{
    *timed = tm->timed;
    *extrapolated = tm->extrapolated;
}

static size_t tkey(const trd_algo *a, const char *params, size_t count)
{
    size_t h = (size_t)(uintptr_t)a * 0x9e3779b97f4a7c15ull ^ count * 0xc2b2ae3d27d4eb4full;
    for (const char *c = params; *c; c++)
        h = (h ^ (unsigned char)*c) * 0x100000001b3ull;
    return h ^ (h >> 29);
}

static struct tmemo *tfind(const trd_timer *tm, const trd_algo *a, const char *params, size_t count)
{
    if (!tm->slotcap)
        return NULL;
    for (size_t i = tkey(a, params, count) & (tm->slotcap - 1); tm->slot[i];
         i = (i + 1) & (tm->slotcap - 1)) {
        struct tmemo *e = &tm->m[tm->slot[i] - 1];
        if (e->a == a && e->count == count && !strcmp(e->params, params))
            return e;
    }
    return NULL;
}

static int tput(trd_timer *tm, struct tmemo e)
{
    if ((tm->n + 1) * 2 > tm->slotcap) {
        size_t cap = tm->slotcap ? 2 * tm->slotcap : 1024;
        size_t *s = calloc(cap, sizeof *s);
        if (!s)
            return TRD_ERR_NOMEM;
        for (size_t k = 0; k < tm->n; k++) {
            size_t i = tkey(tm->m[k].a, tm->m[k].params, tm->m[k].count) & (cap - 1);
            while (s[i])
                i = (i + 1) & (cap - 1);
            s[i] = k + 1;
        }
        free(tm->slot);
        tm->slot = s;
        tm->slotcap = cap;
    }
    if (tm->n == tm->cap) {
        size_t cap = tm->cap ? 2 * tm->cap : 256;
        struct tmemo *m = realloc(tm->m, cap * sizeof *m);
        if (!m)
            return TRD_ERR_NOMEM;
        tm->m = m;
        tm->cap = cap;
    }
    size_t i = tkey(e.a, e.params, e.count) & (tm->slotcap - 1);
    while (tm->slot[i])
        i = (i + 1) & (tm->slotcap - 1);
    tm->m[tm->n] = e;
    tm->slot[i] = ++tm->n;
    return TRD_OK;
}

/* Plan and time a exactly. */
static int time_exact(trd_timer *tm, const trd_algo *a, const char *params, size_t count,
                      struct tmemo *e)
{
    char why[256];
    trd_sched s;
    trd_call call = {a->coll, count, 8, 0, 0, 1, 0}; /* root 0, commutative */
    double sec;
    *e = (struct tmemo){a, "", count, INFINITY, 0, 1};
    snprintf(e->params, sizeof e->params, "%s", params);
    if (trd_plan(&s, a, params, tm->sh, &call, -1, why, sizeof why))
        return TRD_OK; /* not for this shape */
    trd_cost_model cm = {tm->t, tm->p->levels.gamma_s_per_byte, trd_topo_alpha_r_ratio(tm->t)};
    int rc = trd_sched_cost(&s, tm->sh, &cm, &sec, why, sizeof why);
    e->nops = s.nops;
    trd_sched_free(&s);
    tm->timed++;
    if (rc == TRD_ERR_NOMEM)
        return rc;
    if (rc)
        return TRD_ERR_STATE;
    e->us = sec * 1e6;
    return TRD_OK;
}

int trd_timer_us(trd_timer *tm, const trd_algo *a, const char *params, size_t count, double *us)
{
    struct tmemo *hit = tfind(tm, a, params, count), e;
    const struct tmemo *e1 = NULL, *e2 = NULL;
    int rc;
    if (hit) {
        *us = hit->us;
        return TRD_OK;
    }
    if (count > TRD_TIME_SAFE_COUNT) {
        double u;
        /* the counts the extrapolation starts from, exactly */
        if ((rc = trd_timer_us(tm, a, params, TRD_TIME_SAFE_COUNT / 2, &u)) ||
            (rc = trd_timer_us(tm, a, params, TRD_TIME_SAFE_COUNT, &u)))
            return rc;
        if (u == INFINITY) {
            *us = INFINITY;
            return TRD_OK;
        }
        /* the two largest counts below timed exactly */
        for (size_t i = 0; i < tm->n; i++) {
            const struct tmemo *c = &tm->m[i];
            if (c->a != a || !c->exact || c->count >= count || strcmp(c->params, params))
                continue;
            if (!e1 || c->count > e1->count)
                e2 = e1, e1 = c;
            else if (!e2 || c->count > e2->count)
                e2 = c;
        }
        double grow = (double)e1->nops - (double)e2->nops;
        double ops =
            (double)e1->nops + grow * (double)(count - e1->count) / (double)(e1->count - e2->count);
        if (grow > 0 && ops > (double)TRD_TIME_MAX_OPS) {
            e = (struct tmemo){a, "", count, 0, 0, 0};
            snprintf(e.params, sizeof e.params, "%s", params);
            e.us = e1->us + (e1->us - e2->us) * (double)(count - e1->count) /
                                (double)(e1->count - e2->count);
            tm->extrapolated++;
            *us = e.us;
            return tput(tm, e);
        }
    }
    if ((rc = time_exact(tm, a, params, count, &e)))
        return rc;
    *us = e.us;
    return tput(tm, e);
}

/* ---- The ranges on their schedules (--explain, --predict) -------------------------- */

int trd_explain_schedules(FILE *f, trd_topo_t t, const trd_machine_plan *p)
{
    trd_shape_store st;
    const trd_algo *cand[TRD_MAX_CANDIDATES];
    trd_timer *tm = NULL;
    int *aux, rc = TRD_OK, n = trd_model_candidates(cand, TRD_MAX_CANDIDATES);
    if (p->nnodes < 2)
        return TRD_OK;
    if (trd_machine_shape(t, 0, 0, &st, &aux) != TRD_OK)
        return TRD_ERR_NOMEM;
    if ((rc = trd_timer_create(&tm, t, p, &st.s)) != TRD_OK)
        goto out;
    if (st.s.nranks > TRD_SELECT_MAX_RANKS) {
        fprintf(f, "\nthe schedules over the whole machine: not timed above %d ranks\n",
                TRD_SELECT_MAX_RANKS);
    } else {
        fprintf(f,
                "\nthe schedules over the whole machine (%d ranks, each node's cores), timed,\n"
                "  microseconds:\n  %10s",
                st.s.nranks, "bytes");
        for (int a = 0; a < n; a++)
            fprintf(f, " %12s", cand[a]->name);
        fprintf(f, "\n");
        for (size_t sz = 8; sz <= 64 * 1024 * 1024 && !rc; sz *= 16) {
            fprintf(f, "  %10zu", sz);
            for (int a = 0; a < n && !rc; a++) {
                double us;
                rc = trd_timer_us(tm, cand[a], "", sz / 8, &us);
                if (rc == TRD_ERR_STATE || us == INFINITY)
                    fprintf(f, " %12s", "-");
                else
                    fprintf(f, " %12.2f", us);
                rc = rc == TRD_ERR_STATE ? TRD_OK : rc;
            }
            fprintf(f, "\n");
        }
        int timed, extra;
        trd_timer_counts(tm, &timed, &extra);
        if (extra)
            fprintf(f, "  (%d of these extrapolated from the sizes up to %d ops timed exactly)\n",
                    extra, (int)TRD_TIME_MAX_OPS);
    }
out:
    trd_timer_destroy(tm);
    trd_shape_free(&st);
    free(aux);
    return rc;
}

int trd_predict_csv(FILE *f, trd_topo_t t, const trd_machine_plan *p, double max_bytes)
{
    trd_shape_store st;
    trd_timer *tm = NULL;
    int *aux, rc;
    if (trd_machine_shape(t, 0, 0, &st, &aux) != TRD_OK)
        return TRD_ERR_NOMEM;
    rc = trd_timer_create(&tm, t, p, &st.s);
    if (!rc)
        fprintf(f, "algorithm,bytes,predicted_us\n");
    for (int a = 0; trd_algos[a] && !rc; a++) {
        const trd_algo *al = trd_algos[a];
        char cand[64][TRD_PARAMS_MAX];
        if (al->coll != TRD_COLL_ALLREDUCE || (al->flags & TRD_ALGO_LIBRARY))
            continue;
        /* the default parameters, then every candidate the algorithm offers
         * for the shape ("shm:rx:2,2", "shm:tree:4") */
        int nc = al->candidates ? al->candidates(&st.s, cand, 64) : 0;
        for (int c = -1; c < nc && !rc; c++) {
            const char *params = c < 0 ? "" : cand[c];
            for (double b = 8; b <= max_bytes && !rc; b *= 2) {
                double us;
                rc = trd_timer_us(tm, al, params, (size_t)(b / 8), &us);
                if (!rc && us == INFINITY)
                    break; /* not for this machine (e.g. an algorithm for one node) */
                if (!rc) {
                    /* the parameters' commas as ';', as the benchmarks' CSVs
                     * write them: three fields a line */
                    fprintf(f, "%s%s", al->name, *params ? ":" : "");
                    for (const char *q = params; *q; q++)
                        fputc(*q == ',' ? ';' : *q, f);
                    fprintf(f, ",%.0f,%.4f\n", b, us);
                }
            }
        }
    }
    trd_timer_destroy(tm);
    trd_shape_free(&st);
    free(aux);
    return rc;
}

/* ---- Size ranges drawn on the schedules ------------------------------------- */

/* The ranges are drawn up to this message size; the last one goes on from
 * there.  Crossovers are bisected to 1/TRD_SELECT_PRECISION of the size. */
#define TRD_SELECT_TOP_BYTES 1073741824.0
#define TRD_SELECT_PRECISION 64

/* One shape's timed candidates. */
typedef struct ir_sel {
    trd_topo_t t;
    const trd_machine_plan *p;
    const trd_shape *sh;
    trd_timer *tm;
    int n;
    const trd_algo *cand[TRD_MAX_CANDIDATES];
    int failed; /* a schedule could not be timed, or memory ran out */
    trd_select_stats *stats;
} ir_sel;

/* The cheapest link between ranks a and b of the shape: the switch-tree
 * path between their nodes, or the cheaper of the package and node links. */
static trd_link_cost cheapest_pair(const trd_topo_t t, const trd_shape *sh, int a, int b)
{
    int va = sh->node_of[a], vb = sh->node_of[b];
    if (va != vb)
        return trd_topo_path_cost(t, sh->machine_node[va], sh->machine_node[vb]);
    int ty = trd_topo_node_type(t, sh->machine_node[va]);
    trd_link_cost l = trd_topo_nodetype_package_link(t, ty), n = trd_topo_nodetype_node_link(t, ty);
    l.latency_s = fmin(l.latency_s, n.latency_s);
    l.bandwidth_Bps = fmax(l.bandwidth_Bps, n.bandwidth_Bps);
    return l;
}

double trd_ring_bound(trd_topo_t t, const trd_shape *sh, size_t count, size_t extent,
                      double gamma_s_per_byte)
{
    int p = sh->nranks;
    if (p < 2)
        return 0;
    size_t big = trd_block_max(count, extent, p);
    double bytes = (double)(count - big) * (double)extent, worst = 0;
    for (int i = 0; i < p; i++) {
        trd_link_cost l = cheapest_pair(t, sh, sh->ring[i], sh->ring[(i + 1) % p]);
        trd_link_cost own = trd_topo_nodetype_package_link(
            t, trd_topo_node_type(t, sh->machine_node[sh->node_of[sh->ring[i]]]));
        double s = 2.0 * (p - 1) * l.latency_s;
        if (l.bandwidth_Bps > 0)
            s += 2 * bytes / l.bandwidth_Bps;
        s += bytes * gamma_s_per_byte; /* the blocks it reduces */
        if (own.bandwidth_Bps > 0)
            s += bytes / own.bandwidth_Bps;
        worst = s > worst ? s : worst;
    }
    return worst;
}

/* Predicted microseconds of candidate a over the shape for count doubles;
 * INFINITY where it does not plan for the shape (or cannot be timed). */
static double cand_us(ir_sel *x, const trd_algo *a, size_t count)
{
    double us;
    int rc = trd_timer_us(x->tm, a, "", count, &us);
    if (rc) {
        x->failed = rc;
        us = INFINITY;
    }
    return us;
}

/* Whether a's timing at count is known (no planning needed). */
static int cand_known(const ir_sel *x, const trd_algo *a, size_t count)
{
    return tfind(x->tm, a, "", count) != NULL;
}

/* The best and second best candidates at count doubles.  Quadratic
 * schedules (the ring's p^2 messages) are timed only where their bound is
 * below the best of the others (with need_second, the second best: then the
 * runner-up is exact too; otherwise it is the runner-up among those
 * timed). */
static const trd_algo *ir_pick(ir_sel *x, size_t count, int need_second, const trd_algo **second,
                               double *tbest, double *tsecond)
{
    double t[TRD_MAX_CANDIDATES] = {0}, ts_other = INFINITY, tb_other = INFINITY;
    for (int a = 0; a < x->n; a++) {
        if (x->cand[a]->flags & TRD_ALGO_QUADRATIC)
            continue;
        t[a] = cand_us(x, x->cand[a], count);
        if (t[a] < tb_other)
            ts_other = tb_other, tb_other = t[a];
        else if (t[a] < ts_other)
            ts_other = t[a];
    }
    for (int a = 0; a < x->n; a++) {
        if (!(x->cand[a]->flags & TRD_ALGO_QUADRATIC))
            continue;
        double above = need_second ? ts_other : tb_other;
        if (!cand_known(x, x->cand[a], count) &&
            trd_ring_bound(x->t, x->sh, count, 8, x->p->levels.gamma_s_per_byte) * 1e6 >
                above * (1 + TRD_MODEL_TIE)) {
            t[a] = INFINITY;
            x->stats->pruned++;
        } else {
            t[a] = cand_us(x, x->cand[a], count);
        }
    }
    int s, b = trd_model_pick(t, x->n, &s);
    *second = s >= 0 ? x->cand[s] : NULL;
    *tbest = t[b];
    *tsecond = s >= 0 ? t[s] : INFINITY;
    return t[b] == INFINITY ? NULL : x->cand[b];
}

static const trd_algo *ir_best(void *ctx, size_t count)
{
    const trd_algo *second;
    double tb, ts;
    return ir_pick(ctx, count, 0, &second, &tb, &ts);
}

/* The probes, in doubles: 1, 2, 4, ... up to 4 MiB, where the schedules
 * change shape (a node phase folding whole or block-wise at 4 KiB, a FLEX
 * lane's algorithm at 8 KiB per lane), then every factor of 4; the first
 * probe of a range is the first of them above its start. */
static size_t probe_after(size_t b)
{
    return b < (size_t)4 * 1024 * 1024 / 8 ? 2 * b : 4 * b;
}

static size_t ir_next(size_t lo, size_t b)
{
    if (b)
        return probe_after(b);
    for (b = 1; b <= lo;)
        b = probe_after(b);
    return b;
}

/* The ranges of one shape on the schedules, with their typical sizes'
 * predictions. */
static int draw_ranges(ir_sel *x, trd_choice *choice, int *nchoices)
{
    trd_range_probe pr = {
        ir_best, x, ir_next, (size_t)(TRD_SELECT_TOP_BYTES / 8), TRD_SELECT_PRECISION, 8};
    if (trd_draw_ranges(&pr, choice, nchoices) != TRD_OK)
        return TRD_ERR_STATE;
    size_t from = 0;
    for (int i = 0; i < *nchoices; i++) {
        trd_choice *ch = &choice[i];
        double tb, ts;
        ch->typical = trd_range_typical(from, ch->below);
        size_t count = ch->typical / 8 ? ch->typical / 8 : 1;
        const trd_algo *b = ir_pick(x, count, 1, &ch->runner_up, &tb, &ts);
        ch->us = cand_us(x, ch->alg, count);
        if (b != ch->alg) { /* the bisection's neighbourhood: the range's own is runner-up */
            ch->runner_up = b;
            ch->runner_us = tb;
        } else {
            ch->runner_us = ch->runner_up ? ts : 0;
        }
        from = ch->below;
    }
    for (int i = 0; i < *nchoices; i++)
        if (!choice[i].alg)
            x->failed = 1; /* no candidate timed there */
    return x->failed ? TRD_ERR_STATE : TRD_OK;
}

int trd_select_on_schedules(trd_topo_t t, trd_machine_plan *p, trd_select_stats *stats)
{
    clock_t t0 = clock();
    memset(stats, 0, sizeof *stats);
    for (int s = 0; s < p->nshapes; s++) {
        trd_shape_plan *sp = &p->shape[s];
        trd_shape_store st;
        int *aux;
        if (sp->nnodes * sp->ppn > TRD_SELECT_MAX_RANKS) {
            stats->closed++;
            continue;
        }
        if (trd_machine_shape(t, sp->nnodes, sp->ppn, &st, &aux) != TRD_OK)
            return TRD_ERR_NOMEM;
        ir_sel x = {t, p, &st.s, NULL, 0, {0}, 0, stats};
        x.n = trd_model_candidates(x.cand, TRD_MAX_CANDIDATES);
        trd_choice choice[TRD_MAX_CHOICES];
        int n, rc = trd_timer_create(&x.tm, t, p, &st.s);
        if (rc) {
            trd_shape_free(&st);
            free(aux);
            return rc;
        }
        rc = draw_ranges(&x, choice, &n);
        int timed, extra;
        trd_timer_counts(x.tm, &timed, &extra);
        stats->timed += timed;
        stats->extrapolated += extra;
        if (x.failed == TRD_ERR_NOMEM) {
            trd_timer_destroy(x.tm);
            trd_shape_free(&st);
            free(aux);
            return TRD_ERR_NOMEM;
        }
        if (rc == TRD_OK) {
            memcpy(sp->choice, choice, sizeof choice);
            sp->nchoices = n;
            sp->on_schedules = 1;
            stats->drawn++;
            if (sp->nnodes == p->nnodes && sp->ppn == p->ppn) {
                memcpy(p->choice, choice, sizeof choice);
                p->nchoices = n;
                p->on_schedules = 1;
            }
        } else {
            stats->closed++;
        }
        trd_timer_destroy(x.tm);
        trd_shape_free(&st);
        free(aux);
    }
    stats->seconds = (double)(clock() - t0) / CLOCKS_PER_SEC;
    return TRD_OK;
}

/* ---- Parameters searched on the schedules ------------------------------------ */

/* For each range of choice[0..n) over shape sh whose algorithm offers
 * parameter candidates: the schedule with the lowest predicted time at the
 * range's typical size among the default and the candidates; its string
 * goes to params when it beats the default. */
static int search_ranges(trd_timer *tm, const trd_shape *sh, trd_choice *choice, int n,
                         int on_schedules, trd_search_stats *stats)
{
    char cand[64][TRD_PARAMS_MAX];
    for (int i = 0; i < n; i++) {
        trd_choice *ch = &choice[i];
        int nc = ch->alg->candidates ? ch->alg->candidates(sh, cand, 64) : 0;
        if (!nc)
            continue;
        double best = -1;
        size_t count = ch->typical / 8 ? ch->typical / 8 : 1;
        ch->params[0] = '\0';
        for (int c = -1; c < nc; c++) {
            const char *params = c < 0 ? "" : cand[c];
            double us;
            int rc = trd_timer_us(tm, ch->alg, params, count, &us);
            if (rc == TRD_ERR_NOMEM)
                return rc;
            if (us == INFINITY)
                continue;
            stats->evaluated++;
            if (rc == TRD_OK && (best < 0 || us < best * (1 - 1e-9))) {
                best = us;
                snprintf(ch->params, sizeof ch->params, "%s", params);
            }
        }
        if (on_schedules && best >= 0)
            ch->us = best; /* the range's prediction is the chosen parameters' */
        stats->searched++;
    }
    return TRD_OK;
}

int trd_search_params(trd_topo_t t, trd_machine_plan *p, trd_search_stats *stats)
{
    clock_t t0 = clock();
    memset(stats, 0, sizeof *stats);
    for (int s = 0; s < p->nshapes; s++) {
        trd_shape_store st;
        int *aux;
        trd_shape_plan *sp = &p->shape[s];
        if (sp->nnodes * sp->ppn > TRD_SEARCH_MAX_RANKS)
            continue;
        trd_timer *tm = NULL;
        if (trd_machine_shape(t, sp->nnodes, sp->ppn, &st, &aux) != TRD_OK)
            return TRD_ERR_NOMEM;
        int rc = trd_timer_create(&tm, t, p, &st.s);
        if (!rc)
            rc = search_ranges(tm, &st.s, sp->choice, sp->nchoices, sp->on_schedules, stats);
        trd_timer_destroy(tm);
        if (rc) {
            trd_shape_free(&st);
            free(aux);
            return rc;
        }
        /* the whole machine's ranges are the shape nnodes x ppn's */
        if (sp->nnodes == p->nnodes && sp->ppn == p->ppn)
            for (int i = 0; i < p->nchoices && i < sp->nchoices; i++) {
                memcpy(p->choice[i].params, sp->choice[i].params, sizeof p->choice[i].params);
                p->choice[i].us = sp->choice[i].us;
            }
        trd_shape_free(&st);
        free(aux);
    }
    stats->seconds = (double)(clock() - t0) / CLOCKS_PER_SEC;
    return TRD_OK;
}

int trd_plan_machine(trd_topo_t t, trd_machine_plan *p, trd_select_stats *sel,
                     trd_search_stats *search)
{
    trd_select_stats s0;
    trd_search_stats s1;
    int rc = trd_plan_build(t, p);
    if (rc == TRD_OK)
        rc = trd_select_on_schedules(t, p, sel ? sel : &s0);
    if (rc == TRD_OK)
        rc = trd_search_params(t, p, search ? search : &s1);
    return rc;
}

const trd_algo *trd_plan_select(const trd_machine_plan *p, const trd_shape *sh,
                                const trd_call *call, const char **params, char *why, size_t whylen)
{
    int nsh = p->nshapes ? p->nshapes : 1, ppn_min, ppn_max;
    trd_size_choice *ch = malloc((size_t)nsh * TRD_MAX_CHOICES * sizeof *ch);
    trd_shape_choice *shapes = malloc((size_t)nsh * sizeof *shapes);
    const trd_algo *a = NULL;
    trd_selection sel;
    if (!ch || !shapes) {
        snprintf(why, whylen, "out of memory");
        goto out;
    }
    /* the tables as emit.c writes them; one node has none, and a
     * placeholder that the selection never consults */
    if (p->nshapes == 0) {
        ch[0] = (trd_size_choice){SIZE_MAX, "ring", ""};
        shapes[0] = (trd_shape_choice){p->nnodes > 1 ? p->nnodes : 2, p->ppn, ch, 1};
    }
    for (int s = 0; s < p->nshapes; s++) {
        const trd_shape_plan *sp = &p->shape[s];
        trd_size_choice *c = ch + (size_t)s * TRD_MAX_CHOICES;
        for (int i = 0; i < sp->nchoices; i++)
            c[i] = (trd_size_choice){sp->choice[i].below, sp->choice[i].alg->name,
                                     sp->choice[i].params};
        shapes[s] = (trd_shape_choice){sp->nnodes, sp->ppn, c, sp->nchoices};
    }
    trd_shape_ppn(sh, &ppn_min, &ppn_max);
    if (sh->nranks < 2)
        snprintf(why, whylen, "%d rank: a collective needs 2 to select an algorithm", sh->nranks);
    else if (trd_selection_init(&sel, shapes, nsh, p->nap_max_bytes_1node, sh->nnodes, ppn_max,
                                sh->nranks, why, whylen) == TRD_OK &&
             !(a = trd_select(&sel, sh, call, params)))
        snprintf(why, whylen, "the selection has no algorithm for the call");
out:
    free(ch);
    free(shapes);
    return a;
}
