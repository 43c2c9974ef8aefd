/* treeduce-tune: measuring one table, a collective on one communicator.
 *
 * Per size of the grid: each candidate runs once and its result is
 * compared with the MPI library's (bcast and allgather exactly, reductions
 * within rounding); a wrong one is reported and never chosen, one that
 * falls back to the MPI library's routine (trd_fell_back) is left out at
 * that size.  One warm-up round sets the iterations for the size's time
 * target; then the candidates run interleaved (A, B, C, A, B, C, ...) in
 * groups the runtime's plan cache holds (TUNE_GROUP; one untimed call of each
 * before a group's timed ones), so that every candidate runs its cached plan
 * as an application repeating a call does; each call follows a barrier, and
 * every call's time is the slowest rank's (one MAX reduction at the end of
 * the size); a candidate's time is its median.  A candidate more than twice
 * as slow as the fastest at two consecutive sizes in the first pass is
 * dropped for the larger ones.
 * Before each timed call (and each warm-up call) every rank writes the
 * call's input, as an application does (write_input).
 * After the passes (treeduce_tune.c runs each over every table in turn),
 * each change of winner between two grid sizes is bisected between the
 * two winners and the MPI library's routine, at the geometric middle in whole
 * doubles, until the sizes are within 2^(1/4).
 */
#include "tune_run.h"

#include "rt.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SLOW_FACTOR 2.0
#define SLOW_SIZES 2
#define BISECT_RATIO 1.1892071150027210667 /* 2^(1/4) */
#define MIN_ITERS 3
#define MAX_ITERS 999
#define TUNE_TIE 0.03    /* relative: a winner this close to the smaller size's keeps it (pick) */
#define TUNE_TIE_US 0.02 /* and absolute, microseconds: the clock's and the barrier's jitter */
/* The MPI library's routine wins where it is this close to the fastest:
 * relative, and absolute in microseconds.  Differences this small between
 * two candidates changed sign between two tuner runs on the same node
 * (docs/tuning.md), and where the library's routine is picked the tuned
 * library costs no more than its call. */
#define TUNE_MPI_TIE 0.05
#define TUNE_MPI_TIE_US 0.05
/* candidates interleaved at once: fewer than the plans the runtime keeps per
 * communicator (TRD_PLAN_CACHE), the MPI library's routine needing none */
#define TUNE_GROUP (TRD_PLAN_CACHE - 1)

int tune_grid(const tune_opts *o, int coll, int nranks, size_t *bytes, int cap)
{
    int n = 0;
    int blocks = coll == TRD_REDUCE_SCATTER_BLOCK || coll == TRD_ALLGATHER;
    for (double b = (double)o->min_bytes; b <= (double)o->max_bytes * (1 + 1e-9) && n < cap;
         b *= o->factor) {
        size_t count = (size_t)llround(b / 8);
        if (count == 0)
            count = 1;
        size_t v = count * 8;
        if (blocks && v * (size_t)nranks > TUNE_MAX_VECTOR_BYTES)
            break;
        if (n == 0 || v > bytes[n - 1])
            bytes[n++] = v;
    }
    return n;
}

int tune_spec_kept(const tune_opts *o, int coll, const char *spec)
{
    int any = 0;
    const char *params;
    /* the algorithm's name, which may hold a ':' itself ("shm:rx:2,1") */
    const trd_algo *a = trd_algo_parse(coll, spec, &params);
    for (int i = 0; i < o->nspecs; i++) {
        if (o->spec[i].coll >= 0 && o->spec[i].coll != coll)
            continue;
        any = 1;
        const char *s = o->spec[i].spec;
        if (strcmp(s, spec) == 0 || (a && strcmp(s, a->name) == 0))
            return 1; /* "NAME" keeps every parameter candidate of NAME */
    }
    return !any;
}

/* What one table's sizes share. */
typedef struct ctx {
    const trd_machine *m;
    const tune_opts *o;
    MPI_Comm comm;
    int rank, size;
    tune_table *t;
    tune_clock *clk;
    double *send, *recv, *ref; /* send: the input; recv: the output; ref: the library's */
    double *times;             /* [ncands * MAX_ITERS] */
    int *dead;                 /* [ncands] wrong: never chosen */
    int *slow;                 /* [ncands] consecutive sizes much slower than the best */
} ctx;

/* Whether spec, a candidate of collective coll, is the MPI library's routine. */
static int is_mpi(int coll, const char *spec)
{
    const char *params;
    const trd_algo *a = trd_algo_parse(coll, spec, &params);
    return a && (a->flags & TRD_ALGO_LIBRARY);
}

/* The elements of one rank's input and output for count elements per call. */
static size_t send_elems(int coll, size_t count, int p)
{
    return coll == TRD_REDUCE_SCATTER_BLOCK ? count * (size_t)p : count;
}
static size_t recv_elems(int coll, size_t count, int p)
{
    return coll == TRD_ALLGATHER ? count * (size_t)p : count;
}

/* One call of candidate spec (NULL: the MPI library's routine, the reference). */
static int run(const ctx *x, const char *spec, int count, double *out)
{
    const trd_machine *m = x->m;
    MPI_Comm c = x->comm;
    switch (x->t->coll) {
    case TRD_ALLREDUCE:
        if (!spec)
            return PMPI_Allreduce(x->send, out, count, MPI_DOUBLE, MPI_SUM, c);
        return trd_allreduce_with(m, x->send, out, count, MPI_DOUBLE, MPI_SUM, c, spec);
    case TRD_REDUCE_SCATTER_BLOCK:
        if (!spec)
            return PMPI_Reduce_scatter_block(x->send, out, count, MPI_DOUBLE, MPI_SUM, c);
        return trd_reduce_scatter_block_with(m, x->send, out, count, MPI_DOUBLE, MPI_SUM, c, spec);
    case TRD_ALLGATHER:
        if (!spec)
            return PMPI_Allgather(x->send, count, MPI_DOUBLE, out, count, MPI_DOUBLE, c);
        return trd_allgather_with(m, x->send, count, MPI_DOUBLE, out, count, MPI_DOUBLE, c, spec);
    case TRD_REDUCE:
        if (!spec)
            return PMPI_Reduce(x->send, out, count, MPI_DOUBLE, MPI_SUM, 0, c);
        return trd_reduce_with(m, x->send, out, count, MPI_DOUBLE, MPI_SUM, 0, c, spec);
    default: /* bcast from rank 0, whose buffer holds its input (fill) */
        if (!spec)
            return PMPI_Bcast(out, count, MPI_DOUBLE, 0, c);
        return trd_bcast_with(m, out, count, MPI_DOUBLE, 0, c, spec);
    }
}

/* Whether this rank's output of count elements is the library's: exact for
 * the collectives that move data, within rounding for the sums. */
static int same(const ctx *x, size_t count)
{
    int coll = x->t->coll;
    if (coll == TRD_REDUCE && x->rank != 0)
        return 1;
    size_t n = recv_elems(coll, count, x->size);
    if (coll == TRD_ALLGATHER || coll == TRD_BCAST)
        return memcmp(x->recv, x->ref, n * sizeof(double)) == 0;
    double tol = 1e-13 * x->size;
    for (size_t i = 0; i < n; i++)
        if (!(fabs(x->recv[i] - x->ref[i]) <= tol * (fabs(x->ref[i]) + 1)))
            return 0;
    return 1;
}

/* An output buffer before a checked call: bcast's root holds the input,
 * every other buffer a value no rank sends. */
static void fill(const ctx *x, int count, double *out)
{
    if (x->t->coll == TRD_BCAST && x->rank == 0) {
        memcpy(out, x->send, (size_t)count * sizeof(double));
        return;
    }
    for (size_t k = 0; k < recv_elems(x->t->coll, (size_t)count, x->size); k++)
        out[k] = -1.0;
}

static double median(double *v, int n)
{
    for (int i = 1; i < n; i++) /* n is small: insertion sort */
        for (int j = i; j > 0 && v[j - 1] > v[j]; j--) {
            double tmp = v[j];
            v[j] = v[j - 1];
            v[j - 1] = tmp;
        }
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void fmt_bytes(char *buf, size_t len, size_t b)
{
    if (b >= ((size_t)1 << 20) && b % ((size_t)1 << 20) == 0)
        snprintf(buf, len, "%zu MiB", b >> 20);
    else if (b >= 1024 && b % 1024 == 0)
        snprintf(buf, len, "%zu KiB", b >> 10);
    else
        snprintf(buf, len, "%zu B", b);
}

static void fmt_secs(char *buf, size_t len, double s)
{
    if (s >= 3600)
        snprintf(buf, len, "%dh%02dm", (int)(s / 3600), (int)fmod(s / 60, 60));
    else if (s >= 60)
        snprintf(buf, len, "%dm%02ds", (int)(s / 60), (int)fmod(s, 60));
    else
        snprintf(buf, len, "%.0fs", s);
}

/* What an application does between two calls: this rank writes the call's
 * input (bcast's at the root only) - here it negates it, which keeps its
 * values, so the next size's check still sees different data on every rank.
 * Its cache lines are then dirty in this rank's cache, as the call finds
 * them in an application; a loop over the same untouched buffers would time
 * the caches' best case. */
static void write_input(const ctx *x, int count)
{
    int coll = x->t->coll;
    double *in = coll == TRD_BCAST ? x->recv : x->send;
    size_t n = send_elems(coll, (size_t)count, x->size);
    if (coll == TRD_BCAST && x->rank != 0)
        return;
    for (size_t k = 0; k < n; k++)
        in[k] = -in[k];
}

/* Measure candidates idx[0..n) at bytes; us[i] their medians (INFINITY: not
 * run at this size).  *stop 1 where the budget left no time for it (nothing
 * measured).  Returns MPI_SUCCESS or an error code. */
static int measure_size(ctx *x, const int *idx, int n, size_t bytes, double *us, int *stop,
                        const char *what)
{
    tune_table *t = x->t;
    int count = (int)(bytes / 8), rc;
    int flags[TUNE_MAX_CANDS];
    *stop = 0;
    fill(x, count, x->ref);
    if ((rc = run(x, NULL, count, x->ref)) != MPI_SUCCESS)
        return rc;
    for (int i = 0; i < n; i++) {
        const char *spec = t->cands[idx[i]];
        fill(x, count, x->recv);
        int e = run(x, spec, count, x->recv);
        flags[i] = (!is_mpi(t->coll, spec) && trd_fell_back()) |
                   (e != MPI_SUCCESS || !same(x, (size_t)count)) << 1;
    }
    if ((rc = MPI_Allreduce(MPI_IN_PLACE, flags, n, MPI_INT, MPI_MAX, x->comm)) != MPI_SUCCESS)
        return rc;
    int live[TUNE_MAX_CANDS], nlive = 0;
    for (int i = 0; i < n; i++) {
        us[i] = INFINITY;
        if (flags[i] & 2) {
            if (x->rank == 0 && !x->dead[idx[i]]) {
                char b[32];
                fmt_bytes(b, sizeof b, bytes);
                fprintf(stderr,
                        "treeduce-tune: %s %dx%d at %s: '%s' differs from the MPI library's "
                        "result; never chosen\n",
                        trd_coll_name(t->coll), t->nnodes, t->ppn, b, t->cands[idx[i]]);
            }
            if (!x->dead[idx[i]])
                t->wrong++;
            x->dead[idx[i]] = 1;
        } else if (!(flags[i] & 1)) {
            live[nlive++] = i;
        }
    }
    /* warm-up round: the iterations that fit the size's time (barriers included) */
    double est[2] = {MPI_Wtime(), 0};
    for (int j = 0; j < nlive; j++) {
        write_input(x, count);
        MPI_Barrier(x->comm);
        run(x, t->cands[idx[live[j]]], count, x->recv);
    }
    est[0] = MPI_Wtime() - est[0];
    if (x->rank == 0) {
        double now = MPI_Wtime() - x->clk->start;
        est[1] = x->clk->budget_s > 0 && now + MIN_ITERS * est[0] > x->clk->budget_s;
    }
    if ((rc = MPI_Allreduce(MPI_IN_PLACE, est, 2, MPI_DOUBLE, MPI_MAX, x->comm)) != MPI_SUCCESS)
        return rc;
    if (est[1] != 0) {
        *stop = 1;
        return MPI_SUCCESS;
    }
    double target = x->o->size_s;
    if (x->clk->budget_s > 0 && x->clk->steps > 0) /* scaled to the budget, on every rank alike */
        target = fmin(target, 0.8 * x->clk->budget_s / (double)x->clk->steps);
    int iters = est[0] > 0 ? (int)fmin(MAX_ITERS, target / est[0]) : MAX_ITERS;
    if (iters < MIN_ITERS)
        iters = MIN_ITERS;
    iters |= 1; /* odd: the median is one sample */
    if (iters > MAX_ITERS)
        iters = MAX_ITERS;
    if (x->rank == 0 && what) {
        char b[32], left[32] = "";
        fmt_bytes(b, sizeof b, bytes);
        double f = x->clk->steps ? (double)x->clk->done / (double)x->clk->steps : 0;
        double el = MPI_Wtime() - x->clk->start;
        if (f > 0.02)
            fmt_secs(left, sizeof left, el * (1 - f) / f);
        fprintf(stderr, "treeduce-tune: [%3.0f%%%s%s%s] %s %dx%d %s%s: %d candidate%s x %d\n",
                100 * f, *left ? ", ~" : "", left, *left ? " left" : "", trd_coll_name(t->coll),
                t->nnodes, t->ppn, b, what, nlive, nlive == 1 ? "" : "s", iters);
    }
    /* more candidates interleaved than the runtime keeps plans would time a
     * new plan per call: groups of at most TUNE_GROUP, each warmed once */
    for (int g = 0; g < nlive; g += TUNE_GROUP) {
        int end = g + TUNE_GROUP < nlive ? g + TUNE_GROUP : nlive;
        for (int j = g; j < end; j++)
            run(x, t->cands[idx[live[j]]], count, x->recv);
        for (int it = 0; it < iters; it++)
            for (int j = g; j < end; j++) {
                write_input(x, count);
                MPI_Barrier(x->comm);
                double t0 = MPI_Wtime();
                run(x, t->cands[idx[live[j]]], count, x->recv);
                x->times[(size_t)j * (size_t)iters + (size_t)it] = MPI_Wtime() - t0;
            }
    }
    /* every call's time is the slowest rank's: one reduction for the size */
    if ((rc = MPI_Allreduce(MPI_IN_PLACE, x->times, nlive * iters, MPI_DOUBLE, MPI_MAX, x->comm)) !=
        MPI_SUCCESS)
        return rc;
    for (int j = 0; j < nlive; j++)
        us[live[j]] = median(x->times + (size_t)j * (size_t)iters, iters) * 1e6;
    if (x->rank == 0 && x->o->verbose) {
        fprintf(stderr, "treeduce-tune:   %zu B, median us:", bytes);
        for (int j = 0; j < nlive; j++)
            fprintf(stderr, " %s %.3g", t->cands[idx[live[j]]], us[live[j]]);
        fputc('\n', stderr);
    }
    return MPI_SUCCESS;
}

/* The fastest and second fastest of us[0..n) that are not dead into p, an
 * exact tie to the candidate listed first; then the MPI library's routine
 * wins where it is within TUNE_MPI_TIE (and TUNE_MPI_TIE_US) of the fastest, as a
 * tuned library must never be slower than the library it replaces; else
 * prev (the winner at the next smaller size, -1 none) stays the winner
 * where it is within TUNE_TIE (and TUNE_TIE_US): differences that small are the noise of a busy
 * node, and following them would cut the sizes into ranges that only the
 * noise tells apart. */
static void pick(const ctx *x, const int *idx, int n, const double *us, size_t bytes, int prev,
                 tune_point *p)
{
    double prev_us = INFINITY;
    *p = (tune_point){bytes, -1, -1, 0, 0};
    for (int i = 0; i < n; i++) {
        if (!isfinite(us[i]) || x->dead[idx[i]])
            continue;
        if (idx[i] == prev)
            prev_us = us[i];
        if (p->win < 0 || us[i] < p->us ||
            (us[i] == p->us && is_mpi(x->t->coll, x->t->cands[idx[i]]))) {
            p->runner = p->win;
            p->runner_us = p->us;
            p->win = idx[i];
            p->us = us[i];
        } else if (p->runner < 0 || us[i] < p->runner_us) {
            p->runner = idx[i];
            p->runner_us = us[i];
        }
    }
    if (p->win < 0)
        return;
    /* the MPI library's routine within the tie of the fastest: it, as a
     * tuned library must never be slower than the library it replaces */
    for (int i = 0; i < n; i++)
        if (is_mpi(x->t->coll, x->t->cands[idx[i]]) && idx[i] != p->win && isfinite(us[i]) &&
            !x->dead[idx[i]] && us[i] <= p->us * (1 + TUNE_MPI_TIE) + TUNE_MPI_TIE_US) {
            *p = (tune_point){bytes, idx[i], p->win, us[i], p->us};
            return;
        }
    if (prev >= 0 && prev != p->win && prev_us <= p->us * (1 + TUNE_TIE) + TUNE_TIE_US)
        *p = (tune_point){bytes, prev, p->win, prev_us, p->us};
}

/* A candidate found wrong at any size is chosen at none: the runner-up
 * takes the sizes it won, or they go. */
static void drop_dead(ctx *x)
{
    tune_table *t = x->t;
    int kept = 0;
    for (int g = 0; g < t->npoints; g++) {
        tune_point p = t->point[g];
        if (p.runner >= 0 && x->dead[p.runner]) {
            p.runner = -1;
            p.runner_us = 0;
        }
        if (x->dead[p.win]) {
            if (p.runner < 0)
                continue;
            p = (tune_point){p.bytes, p.runner, -1, p.runner_us, 0};
        }
        t->point[kept++] = p;
    }
    t->npoints = kept;
}

/* The passes' times of candidates idx[0..n), pus[k][idx[i]] in pass k of
 * np, into one time each, us[i]: its worst ratio to the fastest candidate of
 * a pass, times the passes' median fastest time.  The node's speed changes
 * within seconds (docs/tuning.md), and not alike for every algorithm: the
 * candidate chosen is the one least behind in any pass, not the one that was
 * fastest once. */
static void combine(double (*pus)[TUNE_MAX_CANDS], int np, const int *idx, int n, double *us)
{
    double best[TUNE_MAX_PASSES];
    for (int k = 0; k < np; k++) {
        best[k] = INFINITY;
        for (int i = 0; i < n; i++)
            best[k] = fmin(best[k], pus[k][idx[i]]);
    }
    for (int i = 0; i < n; i++) {
        double worst = 0;
        for (int k = 0; k < np; k++)
            worst = isfinite(best[k]) ? fmax(worst, pus[k][idx[i]] / best[k]) : INFINITY;
        us[i] = worst;
    }
    double mid = median(best, np); /* sorts best */
    for (int i = 0; i < n; i++)
        us[i] *= mid;
}

/* Measures idx[0..n) at bytes o->passes times in a row and combines them
 * (combine): the bisection's sizes. */
static int measure_passes(ctx *x, const int *idx, int n, size_t bytes, double *us, int *stop)
{
    double pus[TUNE_MAX_PASSES][TUNE_MAX_CANDS], one[TUNE_MAX_CANDS];
    int np = x->o->passes, rc;
    for (int k = 0; k < np; k++) {
        if ((rc = measure_size(x, idx, n, bytes, one, stop, " (bisecting)")) != MPI_SUCCESS ||
            *stop)
            return rc;
        for (int i = 0; i < n; i++)
            pus[k][idx[i]] = one[i];
    }
    combine(pus, np, idx, n, us);
    return MPI_SUCCESS;
}

static int cmp_point(const void *a, const void *b)
{
    size_t x = ((const tune_point *)a)->bytes, y = ((const tune_point *)b)->bytes;
    return (x > y) - (x < y);
}

/* What one table keeps between its passes. */
struct tune_state {
    int ngrid;
    size_t grid[TUNE_MAX_POINTS];
    int *dead, *slow, *gn;                          /* gn: candidates timed at each size */
    int (*gidx)[TUNE_MAX_CANDS];                    /* and which */
    double (*pus)[TUNE_MAX_PASSES][TUNE_MAX_CANDS]; /* each pass's times, by candidate */
};

static void state_free(tune_table *t)
{
    tune_state *st = t->st;
    if (!st)
        return;
    free(st->dead);
    free(st->slow);
    free(st->gn);
    free(st->gidx);
    free(st->pus);
    free(st);
    t->st = NULL;
}

/* The table's candidates and grid, and its state, for the first pass;
 * t->st stays NULL where there is nothing to measure (t->complete). */
static int state_open(const trd_machine *m, const tune_opts *o, MPI_Comm comm, int size,
                      tune_table *t)
{
    t->npoints = t->complete = t->wrong = t->passes_done = 0;
    t->seconds = 0;
    size_t grid[TUNE_MAX_POINTS];
    int ngrid = tune_grid(o, t->coll, size, grid, TUNE_MAX_POINTS);
    char all[TUNE_MAX_CANDS][TRD_CANDIDATE_MAX];
    int nall = trd_candidates(m, comm, t->coll, all, TUNE_MAX_CANDS);
    if (nall < 0)
        return MPI_ERR_COMM;
    t->ncands = 0;
    for (int i = 0; i < nall && i < TUNE_MAX_CANDS; i++)
        if (tune_spec_kept(o, t->coll, all[i]))
            memcpy(t->cands[t->ncands++], all[i], TRD_CANDIDATE_MAX);
    if (t->ncands == 0 || ngrid == 0) {
        t->complete = 1;
        return MPI_SUCCESS;
    }
    tune_state *st = calloc(1, sizeof *st);
    if (!st)
        return MPI_ERR_NO_MEM;
    t->st = st;
    st->ngrid = ngrid;
    memcpy(st->grid, grid, (size_t)ngrid * sizeof grid[0]);
    st->dead = calloc((size_t)t->ncands, sizeof(int));
    st->slow = calloc((size_t)t->ncands, sizeof(int));
    st->gn = calloc((size_t)ngrid, sizeof *st->gn);
    st->gidx = malloc((size_t)ngrid * sizeof *st->gidx);
    st->pus = malloc((size_t)ngrid * sizeof *st->pus);
    if (!st->dead || !st->slow || !st->gn || !st->gidx || !st->pus) {
        state_free(t);
        return MPI_ERR_NO_MEM;
    }
    return MPI_SUCCESS;
}

/* The candidates timed at grid size g in the first pass, less those found
 * wrong since, into idx; returns how many. */
static int live_at(const tune_state *st, int g, int *idx)
{
    int n = 0;
    for (int i = 0; i < st->gn[g]; i++)
        if (!st->dead[st->gidx[g][i]])
            idx[n++] = st->gidx[g][i];
    return n;
}

/* The buffers of one sitting of a table, for the largest size of its grid. */
static int ctx_open(ctx *x, const trd_machine *m, const tune_opts *o, MPI_Comm comm, tune_table *t,
                    tune_clock *clk)
{
    tune_state *st = t->st;
    *x = (ctx){m, o, comm, 0, 0, t, clk, NULL, NULL, NULL, NULL, st->dead, st->slow};
    MPI_Comm_rank(comm, &x->rank);
    MPI_Comm_size(comm, &x->size);
    size_t maxcount = st->grid[st->ngrid - 1] / 8;
    size_t ns = send_elems(t->coll, maxcount, x->size), nr = recv_elems(t->coll, maxcount, x->size);
    x->send = malloc(ns * sizeof(double));
    x->recv = malloc(nr * sizeof(double));
    x->ref = malloc(nr * sizeof(double));
    x->times = malloc((size_t)t->ncands * MAX_ITERS * sizeof(double));
    if (!x->send || !x->recv || !x->ref || !x->times)
        return MPI_ERR_NO_MEM;
    /* values in [0, 1), different on every rank, the same in every run */
    uint64_t s = 0x9e3779b97f4a7c15ull * (uint64_t)(x->rank + 1);
    for (size_t i = 0; i < ns; i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        x->send[i] = (double)(s >> 11) / 9007199254740992.0;
    }
    return MPI_SUCCESS;
}

static void ctx_close(ctx *x)
{
    free(x->send);
    free(x->recv);
    free(x->ref);
    free(x->times);
}

int tune_measure(const trd_machine *m, const tune_opts *o, MPI_Comm comm, tune_table *t,
                 tune_clock *clk, int pass)
{
    double t_start = MPI_Wtime();
    int rc, stop = 0;
    if (pass == 0) {
        int size;
        MPI_Comm_size(comm, &size);
        if ((rc = state_open(m, o, comm, size, t)) != MPI_SUCCESS)
            return rc;
    }
    tune_state *st = t->st;
    if (!st)
        return MPI_SUCCESS;
    ctx x;
    if ((rc = ctx_open(&x, m, o, comm, t, clk)) != MPI_SUCCESS)
        goto out;
    int idx[TUNE_MAX_CANDS];
    double us[TUNE_MAX_CANDS];
    /* a candidate dropped as slow in the first pass is not timed again at
     * that size */
    for (int g = 0; g < st->ngrid; g++) {
        if (pass == 0)
            for (int i = 0; i < t->ncands; i++)
                if (!x.dead[i] && x.slow[i] < SLOW_SIZES)
                    st->gidx[g][st->gn[g]++] = i;
        int n = live_at(st, g, idx);
        if ((rc = measure_size(&x, idx, n, st->grid[g], us, &stop, "")) != MPI_SUCCESS || stop)
            break;
        clk->done++;
        for (int i = 0; i < TUNE_MAX_CANDS; i++)
            st->pus[g][pass][i] = INFINITY;
        for (int i = 0; i < n; i++)
            st->pus[g][pass][idx[i]] = us[i];
        if (pass > 0)
            continue;
        tune_point p;
        pick(&x, idx, n, us, st->grid[g], -1, &p);
        for (int i = 0; i < n; i++)
            x.slow[idx[i]] = p.win >= 0 && isfinite(us[i]) && us[i] > SLOW_FACTOR * p.us
                                 ? x.slow[idx[i]] + 1
                                 : 0;
    }
    if (rc == MPI_SUCCESS && !stop)
        t->passes_done++;
out:
    if (stop) /* every rank of comm saw it */
        clk->stopped = 1;
    ctx_close(&x);
    t->seconds += MPI_Wtime() - t_start;
    return rc;
}

int tune_finish(const trd_machine *m, const tune_opts *o, MPI_Comm comm, tune_table *t,
                tune_clock *clk, int bisect)
{
    double t_start = MPI_Wtime();
    tune_state *st = t->st;
    int rc, stop = 0;
    if (!st)
        return MPI_SUCCESS;
    if (t->passes_done == 0) { /* no pass covered the grid: left out */
        state_free(t);
        return MPI_SUCCESS;
    }
    ctx x;
    if ((rc = ctx_open(&x, m, o, comm, t, clk)) != MPI_SUCCESS)
        goto out;
    int idx[TUNE_MAX_CANDS];
    double us[TUNE_MAX_CANDS];
    /* each size's winner from the passes measured */
    for (int g = 0; g < st->ngrid; g++) {
        int n = live_at(st, g, idx);
        combine(st->pus[g], t->passes_done, idx, n, us);
        tune_point *p = &t->point[t->npoints];
        pick(&x, idx, n, us, st->grid[g], t->npoints ? t->point[t->npoints - 1].win : -1, p);
        if (p->win >= 0) /* else nothing ran this size: its neighbours' ranges cover it */
            t->npoints++;
    }
    drop_dead(&x);
    /* bisect each change of winner between neighbouring sizes, in passes
     * over the sorted points until none is left: a middle that the MPI
     * library's routine wins makes two changes of winner of one; a budget
     * that runs out keeps the points measured */
    for (int more = bisect; more && !stop && rc == MPI_SUCCESS;) {
        more = 0;
        qsort(t->point, (size_t)t->npoints, sizeof t->point[0], cmp_point);
        for (int g = 0, n0 = t->npoints; g + 1 < n0 && t->npoints < TUNE_MAX_POINTS; g++) {
            tune_point lo = t->point[g], hi = t->point[g + 1];
            if (lo.win == hi.win || (double)hi.bytes <= BISECT_RATIO * (double)lo.bytes)
                continue;
            size_t mid = (size_t)llround(sqrt((double)(lo.bytes / 8) * (double)(hi.bytes / 8))) * 8;
            if (mid <= lo.bytes || mid >= hi.bytes)
                continue;
            /* the two winners, and the MPI library's routine, which must
             * win wherever it is as fast (pick) */
            int three[3] = {lo.win, hi.win, -1}, n = 2;
            for (int i = 0; i < t->ncands; i++)
                if (i != lo.win && i != hi.win && !x.dead[i] && is_mpi(t->coll, t->cands[i]))
                    three[n++] = i;
            if ((rc = measure_passes(&x, three, n, mid, us, &stop)) != MPI_SUCCESS || stop)
                break;
            tune_point p;
            pick(&x, three, n, us, mid, lo.win, &p);
            if (p.win < 0)
                continue;
            t->point[t->npoints++] = p;
            more = 1;
        }
    }
    if (rc == MPI_SUCCESS) {
        drop_dead(&x);
        qsort(t->point, (size_t)t->npoints, sizeof t->point[0], cmp_point);
        t->complete = 1;
    }
out:
    if (stop)
        clk->stopped = 1;
    ctx_close(&x);
    state_free(t);
    t->seconds += MPI_Wtime() - t_start;
    return rc;
}
