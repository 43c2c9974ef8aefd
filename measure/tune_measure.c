/* treeduce-tune: measuring one table, a collective on one communicator.
 *
 * Per size of the grid: each candidate runs once and its result is
 * compared with the MPI library's (bcast and allgather exactly, reductions
 * within rounding); a wrong one is reported and never chosen, one that
 * falls back to the MPI library's routine (trd_fell_back) is left out at
 * that size.  Those checked calls are the warm-up round: their time sets
 * the iterations for the size's time target; then the candidates run
 * interleaved (A, B, C, A, B, C, ...) in groups the runtime's plan cache
 * holds (TUNE_GROUP; where there are several, one untimed call of each
 * before a group's timed ones), so that every candidate runs its cached plan
 * as an application repeating a call does; each call follows a barrier, and
 * every call's time is the slowest rank's (one MAX reduction at the end of
 * the size); a candidate's time is its median.  The MPI library's routine
 * runs twice in each round: the two medians' difference is the size's
 * noise, and the table's noise is their median over its sizes and passes.
 * The library's routine, and every candidate whose messages follow the
 * ranks' numbers (TRD_ALGO_RANK_ORDER: the pieces' MPICH algorithms,
 * repro), is timed in a second rank order as well, where the shape has one
 * (the communicator alt, tune_shuffled_order): the other schedules follow
 * the nodes' ring order whatever the ranks' numbers, these do not, and a
 * table that chooses one must hold in any order an application runs in, so
 * its time is the slower order's median.
 * Which candidates a size times in the first pass (the pruning) is the rule
 * of tune_rules.h: skipped only where measured behind and predicted out of
 * reach, and timed again at least once per factor 8 in size; a candidate
 * that comes back within reach is timed at the sizes it skipped.
 * Before each timed call (and each warm-up call) every rank writes the
 * call's input, as an application does (write_input).  Each timed call
 * follows an untimed call of the same candidate: an application repeating a
 * call finds the node as that call left it, never as another candidate
 * leaves it, and a call after another's pays for that one's aftermath
 * (MPICH's allreduce from 64 MiB maps and unmaps a temporary buffer of the
 * message's size in every call, and in a virtual machine that shadows the
 * page tables the next call then faults on all of its memory again, 2-4x
 * its time).
 * After the passes (treeduce_tune.c runs each over every table in turn),
 * each change of winner between two grid sizes is bisected between the
 * two winners and the MPI library's routine, at the geometric middle in whole
 * doubles, until the sizes are within 2^(1/4); the ranges reach half a
 * bisection step beyond the smallest and the largest size measured.  Then
 * the check pass times each range's winner, the model's choice there (what
 * the untuned library runs) and the MPI library's routine, interleaved, at
 * the range's ends and every grid size inside it, the winner twice for the
 * pass's noise: the winner keeps a size only where it is faster than the
 * model's choice beyond that noise and not slower than the library's
 * routine beyond it, else one of those takes it (tune_check_verdict); the
 * choice of the checked size before stays at a tie (tune_check_choices),
 * and the range is cut where the choices change.
 */
#include "tune_run.h"

#include "rt.h"
#include "trd_select.h"
#include "tune.h"
#include "tune_rules.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BISECT_RATIO 1.1892071150027210667 /* 2^(1/4) */
#define EDGE_RATIO 1.0905077326652576592   /* 2^(1/8): half a bisection step */
/* Under SimGrid's SMPI a call's simulated time is the same at every
 * iteration once its plan is made (no noise is simulated): one is timed,
 * and the simulation is not run a thousand times for the same number. */
#if defined(SMPI_H)
#define MIN_ITERS 1
#define MAX_ITERS 1
#else
#define MIN_ITERS 3
#define MAX_ITERS 999
#endif
/* Under SMPI the sizes above this run on buffers of SMPI_SHARED_MALLOC,
 * which the simulator moves no bytes of (it times them all the same), and
 * their results are not checked: the algorithms are those checked at the
 * sizes up to here.  A 32-rank table at 16 MiB otherwise spends minutes of
 * the host's time on copies and sums nobody reads. */
#if defined(SMPI_H)
#define CHECKED_BYTES ((size_t)1 << 20)
#else
#define CHECKED_BYTES SIZE_MAX
#endif
/* Ranges of one table: the runtime reads TRD_MAX_RANGES, of which the model's
 * parts below the first and above the last take two. */
#define TUNE_TABLE_RANGES (TRD_MAX_RANGES - 2)
/* The model's predictions come from the schedules (trd_timer) up to this
 * many ranks, from the closed forms above (allreduce; the pieces have none
 * there, so none of theirs is skipped). */
#define TUNE_MODEL_MAX_RANKS 64
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
    MPI_Comm alt; /* comm's ranks in the second order (tune_shuffled_order); MPI_COMM_NULL: none */
    int rank, size;
    tune_table *t;
    tune_clock *clk;
    double *send, *recv, *ref; /* send: the input; recv: the output; ref: the library's */
    double *bsend, *brecv;     /* under SMPI, above CHECKED_BYTES: shared, unchecked */
    double *times;             /* [2 * (TUNE_MAX_CANDS + 1) * MAX_ITERS]: comm's, then alt's */
    int *dead;                 /* [TUNE_MAX_CANDS] wrong: never chosen */
    double noise;              /* relative: the table's so far (ties, pick) */
} ctx;

/* The descriptor flags (algo.h) of spec, a candidate of collective coll; 0
 * where it names no algorithm. */
static unsigned spec_flags(int coll, const char *spec)
{
    const char *params;
    const trd_algo *a = trd_algo_parse(coll, spec, &params);
    return a ? a->flags : 0;
}

/* Whether spec is the MPI library's routine. */
static int is_mpi(int coll, const char *spec)
{
    return (spec_flags(coll, spec) & TRD_ALGO_LIBRARY) != 0;
}

/* Whether spec's time depends on the ranks' numbering (the MPI library's
 * routine, and the candidates whose messages follow rank order,
 * TRD_ALGO_RANK_ORDER): such a candidate is timed in the second rank order
 * too, and its time is the slower order's. */
static int order_bound(int coll, const char *spec)
{
    return (spec_flags(coll, spec) & (TRD_ALGO_LIBRARY | TRD_ALGO_RANK_ORDER)) != 0;
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

/* One call of candidate spec (NULL: the MPI library's routine, the
 * reference) on c (x->comm, or x->alt for a candidate timed in the second
 * rank order, order_bound). */
static int run_on(const ctx *x, MPI_Comm c, const char *spec, int count, double *out)
{
    const trd_machine *m = x->m;
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

static int run(const ctx *x, const char *spec, int count, double *out)
{
    return run_on(x, x->comm, spec, count, out);
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

/* Measure candidates idx[0..n) at bytes (a candidate may be listed twice:
 * each listing is timed on its own, interleaved with the others); us[i]
 * their medians (INFINITY: not run at this size).  *stop 1 where the budget
 * left no time for it (nothing measured).  Returns MPI_SUCCESS or an error
 * code. */
static int measure_size(ctx *x, const int *idx, int n, size_t bytes, double *us, int *stop,
                        const char *what)
{
    tune_table *t = x->t;
    int count = (int)(bytes / 8), rc, checked = bytes <= CHECKED_BYTES;
    int flags[TUNE_MAX_CANDS + 1];
    ctx big;
    if (!checked) { /* the shared buffers (SMPI) */
        big = *x;
        big.send = x->bsend;
        big.recv = big.ref = x->brecv;
        x = &big;
    }
    *stop = 0;
    fill(x, count, x->ref);
    if ((rc = run(x, NULL, count, x->ref)) != MPI_SUCCESS)
        return rc;
    /* the checked calls are the warm-up round too: the first call of each
     * candidate plans it, and their time sets the iterations that fit the
     * size's time */
    MPI_Barrier(x->comm);
    double est[2] = {MPI_Wtime(), 0};
    for (int i = 0; i < n; i++) {
        const char *spec = t->cands[idx[i]];
        fill(x, count, x->recv);
        int e = run(x, spec, count, x->recv);
        flags[i] = (!is_mpi(t->coll, spec) && trd_fell_back()) |
                   (e != MPI_SUCCESS || (checked && !same(x, (size_t)count))) << 1;
    }
    est[0] = MPI_Wtime() - est[0];
    if ((rc = MPI_Allreduce(MPI_IN_PLACE, flags, n, MPI_INT, MPI_MAX, x->comm)) != MPI_SUCCESS)
        return rc;
    int live[TUNE_MAX_CANDS + 1], nlive = 0;
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
        double f = x->clk->steps ? fmin(1, (double)x->clk->done / (double)x->clk->steps) : 0;
        double el = MPI_Wtime() - x->clk->start;
        if (f > 0.02)
            fmt_secs(left, sizeof left, el * (1 - f) / f);
        fprintf(stderr, "treeduce-tune: [%3.0f%%%s%s%s] %s %dx%d %s%s: %d candidate%s x %d\n",
                100 * f, *left ? ", ~" : "", left, *left ? " left" : "", trd_coll_name(t->coll),
                t->nnodes, t->ppn, b, what, nlive, nlive == 1 ? "" : "s", iters);
    }
    /* more candidates interleaved than the runtime keeps plans would time a
     * new plan per call: groups of at most TUNE_GROUP, each warmed once (one
     * group was by the checked calls) by the untimed call before each timed
     * one, which settles it where a group interleaves several (see the top
     * of the file) */
    int twice[TUNE_MAX_CANDS + 1];
    for (int j = 0; j < nlive; j++) {
        twice[j] = x->alt != MPI_COMM_NULL && order_bound(t->coll, t->cands[idx[live[j]]]);
        for (int it = 0; it < iters; it++)
            x->times[(size_t)(nlive + j) * (size_t)iters + (size_t)it] = 0;
    }
    for (int g = 0; g < nlive; g += TUNE_GROUP) {
        int end = g + TUNE_GROUP < nlive ? g + TUNE_GROUP : nlive;
        for (int it = 0; it < iters; it++)
            for (int j = g; j < end; j++) {
                const char *spec = t->cands[idx[live[j]]];
                if (end - g > 1 || (it == 0 && nlive > TUNE_GROUP)) {
                    write_input(x, count);
                    run(x, spec, count, x->recv);
                }
                write_input(x, count);
                MPI_Barrier(x->comm);
                double t0 = MPI_Wtime();
                run(x, spec, count, x->recv);
                x->times[(size_t)j * (size_t)iters + (size_t)it] = MPI_Wtime() - t0;
                if (!twice[j])
                    continue;
                /* the second order, settled the same way */
                write_input(x, count);
                run_on(x, x->alt, spec, count, x->recv);
                write_input(x, count);
                MPI_Barrier(x->comm);
                t0 = MPI_Wtime();
                run_on(x, x->alt, spec, count, x->recv);
                x->times[(size_t)(nlive + j) * (size_t)iters + (size_t)it] = MPI_Wtime() - t0;
            }
    }
    /* every call's time is the slowest rank's: one reduction for the size */
    if ((rc = MPI_Allreduce(MPI_IN_PLACE, x->times, 2 * nlive * iters, MPI_DOUBLE, MPI_MAX,
                            x->comm)) != MPI_SUCCESS)
        return rc;
    double first[TUNE_MAX_CANDS + 1], second[TUNE_MAX_CANDS + 1];
    for (int j = 0; j < nlive; j++) {
        first[j] = tune_median(x->times + (size_t)j * (size_t)iters, iters) * 1e6;
        second[j] = twice[j]
                        ? tune_median(x->times + (size_t)(nlive + j) * (size_t)iters, iters) * 1e6
                        : NAN;
        /* its time: the slower order's */
        us[live[j]] = twice[j] && second[j] > first[j] ? second[j] : first[j];
    }
    if (x->rank == 0 && x->o->verbose) {
        fprintf(stderr, "treeduce-tune:   %zu B, median us:", bytes);
        for (int j = 0; j < nlive; j++) {
            fprintf(stderr, " %s %.3g", t->cands[idx[live[j]]], first[j]);
            if (twice[j])
                fprintf(stderr, " (second order %.3g)", second[j]);
        }
        fputc('\n', stderr);
    }
    return MPI_SUCCESS;
}

/* The fastest and second fastest of us[0..n) that are not dead into p, an
 * exact tie to the candidate listed first; then the MPI library's routine
 * wins where it is within the table's noise (x->noise) of the fastest: a
 * tie, and where the library's routine is picked the tuned library costs no
 * more than its call; never where another candidate is faster beyond the
 * noise.  Else prev (the winner at the next smaller size, -1 none) stays
 * the winner where it is within the noise: differences that small are the
 * noise of the node, and following them would cut the sizes into ranges
 * that only the noise tells apart. */
static void pick(const ctx *x, const int *idx, int n, const double *us, size_t bytes, int prev,
                 tune_point *p)
{
    double prev_us = INFINITY, tie = 1 + x->noise;
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
    for (int i = 0; i < n; i++)
        if (is_mpi(x->t->coll, x->t->cands[idx[i]]) && idx[i] != p->win && isfinite(us[i]) &&
            !x->dead[idx[i]] && us[i] <= p->us * tie) {
            *p = (tune_point){bytes, idx[i], p->win, us[i], p->us};
            return;
        }
    if (prev >= 0 && prev != p->win && prev_us <= p->us * tie)
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
    double mid = tune_median(best, np); /* sorts best */
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
    int *dead, *gn;                                 /* gn: candidates timed at each size */
    int (*gidx)[TUNE_MAX_CANDS];                    /* and which */
    double (*pus)[TUNE_MAX_PASSES][TUNE_MAX_CANDS]; /* each pass's times, by candidate */
    double (*noise)[TUNE_MAX_PASSES];               /* each size's twin difference, NAN none */
    double *model;                                  /* [ngrid][TUNE_MAX_CANDS] predicted us */
    tune_prune prune;
    int twin; /* the candidate timed twice (the MPI library's routine), -1 none */
};

static void state_free(tune_table *t)
{
    tune_state *st = t->st;
    if (!st)
        return;
    free(st->dead);
    free(st->gn);
    free(st->gidx);
    free(st->pus);
    free(st->noise);
    free(st->model);
    tune_prune_free(&st->prune);
    free(st);
    t->st = NULL;
}

/* The model's predictions for every candidate of t at every size of the
 * grid into st->model (microseconds; NAN where the model has none), made on
 * rank 0 and sent to every rank, so that every rank times the same
 * candidates: the schedules timed as the generator times them (trd_timer)
 * on the communicator's own shape, or above TUNE_MODEL_MAX_RANKS the
 * allreduce's closed forms. */
static int model_matrix(const trd_machine *m, const tune_model *md, MPI_Comm comm, tune_table *t,
                        tune_state *st)
{
    size_t cells = (size_t)st->ngrid * TUNE_MAX_CANDS;
    trd_comm *c = NULL;
    int rank, rc = trd_comm_get(comm, m, TRD_SEGMENT_NOW, 0, MPI_DATATYPE_NULL,
                                &c); /* collective on its first use */
    if (rc != MPI_SUCCESS)
        return rc;
    for (size_t k = 0; k < cells; k++)
        st->model[k] = NAN;
    MPI_Comm_rank(comm, &rank);
    if (rank == 0 && md && md->t && !c->fallback) {
        trd_timer *tm = NULL;
        int big = c->size > TUNE_MODEL_MAX_RANKS;
        if (!big && trd_timer_create(&tm, md->t, md->p, &c->shape) != TRD_OK)
            tm = NULL;
        for (int i = 0; i < t->ncands && (tm || big); i++) {
            const char *params;
            const trd_algo *a = trd_algo_parse(t->coll, t->cands[i], &params);
            if (!a || (a->flags & TRD_ALGO_LIBRARY))
                continue;
            for (int g = 0; g < st->ngrid; g++) {
                double us = NAN;
                if (big) {
                    if (t->coll == TRD_ALLREDUCE && a->model && !*params)
                        us = trd_model_time(md->p, a, t->nnodes, t->ppn, (double)st->grid[g]) * 1e6;
                } else if (trd_timer_us(tm, a, params, st->grid[g] / 8, &us) != TRD_OK) {
                    us = NAN;
                }
                st->model[(size_t)g * TUNE_MAX_CANDS + (size_t)i] = us;
            }
        }
        trd_timer_destroy(tm);
    }
    /* NAN and INFINITY travel as they are */
    return MPI_Bcast(st->model, (int)cells, MPI_DOUBLE, 0, comm);
}

/* The table's candidates and grid, and its state, for the first pass;
 * t->st stays NULL where there is nothing to measure (t->complete). */
static int state_open(const trd_machine *m, const tune_model *md, const tune_opts *o, MPI_Comm comm,
                      int size, tune_table *t)
{
    t->npoints = t->complete = t->wrong = t->passes_done = t->nranges = t->checked = 0;
    t->seconds = t->noise = 0;
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
    st->dead = calloc(TUNE_MAX_CANDS, sizeof(int));
    st->gn = calloc((size_t)ngrid, sizeof *st->gn);
    st->gidx = malloc((size_t)ngrid * sizeof *st->gidx);
    st->pus = malloc((size_t)ngrid * sizeof *st->pus);
    st->noise = malloc((size_t)ngrid * sizeof *st->noise);
    st->model = malloc((size_t)ngrid * TUNE_MAX_CANDS * sizeof *st->model);
    if (!st->dead || !st->gn || !st->gidx || !st->pus || !st->noise || !st->model ||
        tune_prune_init(&st->prune, t->ncands) != 0) {
        state_free(t);
        return MPI_ERR_NO_MEM;
    }
    for (int g = 0; g < ngrid; g++)
        for (int k = 0; k < TUNE_MAX_PASSES; k++)
            st->noise[g][k] = NAN;
    st->twin = -1;
    for (int i = 0; i < t->ncands && st->twin < 0; i++)
        if (is_mpi(t->coll, t->cands[i]))
            st->twin = i;
    int rc = model_matrix(m, md, comm, t, st);
    if (rc != MPI_SUCCESS)
        state_free(t);
    return rc;
}

/* The table's noise: the median of its sizes' twin differences so far. */
static double table_noise(const tune_state *st)
{
    double v[TUNE_MAX_POINTS * TUNE_MAX_PASSES];
    int n = 0;
    for (int g = 0; g < st->ngrid; g++)
        for (int k = 0; k < TUNE_MAX_PASSES; k++)
            if (!isnan(st->noise[g][k]))
                v[n++] = st->noise[g][k];
    return tune_median(v, n);
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
static int ctx_open(ctx *x, const trd_machine *m, const tune_opts *o, MPI_Comm comm, MPI_Comm alt,
                    tune_table *t, tune_clock *clk)
{
    tune_state *st = t->st;
    *x = (ctx){m,    o,    comm, alt,  0,    0,    t,        clk,
               NULL, NULL, NULL, NULL, NULL, NULL, st->dead, table_noise(st)};
    MPI_Comm_rank(comm, &x->rank);
    MPI_Comm_size(comm, &x->size);
    size_t top = st->grid[st->ngrid - 1],
           maxcount = (top < CHECKED_BYTES ? top : CHECKED_BYTES) / 8;
    size_t ns = send_elems(t->coll, maxcount, x->size), nr = recv_elems(t->coll, maxcount, x->size);
    x->send = malloc(ns * sizeof(double));
    x->recv = malloc(nr * sizeof(double));
    x->ref = malloc(nr * sizeof(double));
    x->times = malloc((size_t)2 * (TUNE_MAX_CANDS + 1) * MAX_ITERS * sizeof(double));
    if (!x->send || !x->recv || !x->ref || !x->times)
        return MPI_ERR_NO_MEM;
#if defined(SMPI_H)
    if (top > CHECKED_BYTES) {
        size_t bs = send_elems(t->coll, top / 8, x->size),
               br = recv_elems(t->coll, top / 8, x->size);
        x->bsend = SMPI_SHARED_MALLOC(bs * sizeof(double));
        x->brecv = SMPI_SHARED_MALLOC(br * sizeof(double));
        if (!x->bsend || !x->brecv)
            return MPI_ERR_NO_MEM;
    }
#endif
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
#if defined(SMPI_H)
    if (x->bsend)
        SMPI_SHARED_FREE(x->bsend);
    if (x->brecv)
        SMPI_SHARED_FREE(x->brecv);
#endif
    free(x->send);
    free(x->recv);
    free(x->ref);
    free(x->times);
}

/* Measure grid size g in pass `pass` with candidates idx[0..n), the twin
 * (the MPI library's routine) a second time beside them: its times into
 * st->pus[g][pass], its noise into st->noise[g][pass]; us[0..n) the times. */
static int measure_grid(ctx *x, tune_state *st, int g, int pass, const int *idx, int n, double *us,
                        int *stop)
{
    int all[TUNE_MAX_CANDS + 1], twin_at = -1, rc;
    double u[TUNE_MAX_CANDS + 1];
    memcpy(all, idx, (size_t)n * sizeof *idx);
    for (int i = 0; i < n; i++)
        if (idx[i] == st->twin)
            twin_at = i;
    int nall = n + (twin_at >= 0);
    if (twin_at >= 0)
        all[n] = st->twin;
    if ((rc = measure_size(x, all, nall, st->grid[g], u, stop, "")) != MPI_SUCCESS || *stop)
        return rc;
    for (int i = 0; i < TUNE_MAX_CANDS; i++)
        st->pus[g][pass][i] = INFINITY;
    for (int i = 0; i < n; i++)
        st->pus[g][pass][idx[i]] = us[i] = u[i];
    st->noise[g][pass] = twin_at >= 0 ? tune_twin_noise(u[twin_at], u[n]) : NAN;
    return MPI_SUCCESS;
}

/* The first pass's timer (tune_time_fn): measure_grid, which may stop
 * for the budget (1) or fail (f->rc). */
struct first {
    ctx *x;
    tune_state *st;
    int rc;
};

static int first_time(void *arg, int g, const int *idx, int n, double *us)
{
    struct first *f = arg;
    int stop = 0;
    if ((f->rc = measure_grid(f->x, f->st, g, 0, idx, n, us, &stop)) != MPI_SUCCESS)
        return 2;
    if (stop)
        return 1;
    f->x->clk->done++;
    return 0;
}

int tune_measure(const trd_machine *m, const tune_model *md, const tune_opts *o, MPI_Comm comm,
                 MPI_Comm alt, tune_table *t, tune_clock *clk, int pass)
{
    double t_start = MPI_Wtime();
    int rc, stop = 0;
    if (pass == 0) {
        int size;
        MPI_Comm_size(comm, &size);
        if ((rc = state_open(m, md, o, comm, size, t)) != MPI_SUCCESS)
            return rc;
    }
    tune_state *st = t->st;
    if (!st)
        return MPI_SUCCESS;
    ctx x;
    if ((rc = ctx_open(&x, m, o, comm, alt, t, clk)) != MPI_SUCCESS)
        goto out;
    if (pass == 0) {
        /* the first pass chooses which candidates each size times (tune_rules.h) */
        struct first f = {&x, st, MPI_SUCCESS};
        int ndone;
        int r = tune_first_pass(&st->prune, st->grid, st->ngrid, st->model, st->dead,
                                &st->gidx[0][0], st->gn, TUNE_MAX_CANDS, first_time, &f, &ndone);
        rc = r == -1 ? MPI_ERR_NO_MEM : f.rc;
        stop = r == 1;
    } else {
        int idx[TUNE_MAX_CANDS];
        double us[TUNE_MAX_CANDS];
        for (int g = 0; g < st->ngrid; g++) {
            int n = live_at(st, g, idx);
            if ((rc = measure_grid(&x, st, g, pass, idx, n, us, &stop)) != MPI_SUCCESS || stop)
                break;
            clk->done++;
        }
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

/* ---- Ranges and the check pass ----------------------------------------------- */

/* The geometric middle of sizes a < b in whole doubles, above a. */
static size_t middle(size_t a, size_t b)
{
    size_t u = a / 8, v = b / 8;
    size_t mid = (size_t)llround(sqrt((double)u * (double)v));
    return (mid > u ? mid : u + 1) * 8;
}

/* Merge the narrowest (in octaves) of r[0..*n) into the range before it
 * (the first into the one after) until at most cap are left. */
static void merge_narrowest(trd_wisdom_range *r, int *n, int cap)
{
    while (*n > cap) {
        int k = 0;
        double kw = INFINITY;
        for (int i = 0; i < *n; i++) {
            double width = log2((double)r[i].below / (double)(r[i].from ? r[i].from : 8));
            if (width < kw) {
                kw = width;
                k = i;
            }
        }
        if (k > 0)
            r[k - 1].below = r[k].below;
        else
            r[k + 1].from = r[k].from;
        memmove(&r[k], &r[k + 1], (size_t)(*n - k - 1) * sizeof r[0]);
        (*n)--;
    }
}

/* t->point's winners as ranges into t->range: a change between two
 * measured sizes at their geometric middle; the first range from half a
 * bisection step below the smallest size (0 where that is one double), the
 * last to half a step above the largest; at most TUNE_TABLE_RANGES
 * (merge_narrowest).  Returns MPI_SUCCESS or MPI_ERR_NO_MEM. */
static int make_ranges(tune_table *t)
{
    trd_wisdom_range *r = calloc((size_t)(t->npoints ? t->npoints : 1), sizeof *r);
    int n = 0;
    if (!r)
        return MPI_ERR_NO_MEM;
    for (int i = 0; i < t->npoints;) {
        int j = i;
        while (j + 1 < t->npoints && t->point[j + 1].win == t->point[i].win)
            j++;
        const tune_point *p = &t->point[(i + j) / 2];
        trd_wisdom_range *q = &r[n++];
        q->coll = t->coll;
        q->nnodes = t->nnodes;
        q->ppn = t->ppn;
        if (i == 0) {
            size_t lo = t->point[0].bytes;
            q->from = lo <= 8 ? 0 : (size_t)((double)lo / EDGE_RATIO) / 8 * 8;
        } else {
            q->from = r[n - 2].below;
        }
        if (j + 1 < t->npoints)
            q->below = middle(t->point[j].bytes, t->point[j + 1].bytes);
        else
            q->below = ((size_t)ceil((double)t->point[j].bytes * EDGE_RATIO / 8) + 1) * 8;
        snprintf(q->alg, sizeof q->alg, "%s", t->cands[p->win]);
        q->us = p->us;
        if (p->runner >= 0) {
            snprintf(q->runner, sizeof q->runner, "%s", t->cands[p->runner]);
            q->runner_us = p->runner_us;
        }
        i = j + 1;
    }
    merge_narrowest(r, &n, TUNE_TABLE_RANGES);
    memcpy(t->range, r, (size_t)n * sizeof *r);
    t->nranges = n;
    free(r);
    return MPI_SUCCESS;
}

/* The index of candidate spec in t->cands, added (not timed on the grid)
 * where it is not one; -1 where there is no room. */
static int cand_index(tune_table *t, const char *spec)
{
    for (int i = 0; i < t->ncands; i++)
        if (strcmp(t->cands[i], spec) == 0)
            return i;
    if (t->ncands == TUNE_MAX_CANDS)
        return -1;
    snprintf(t->cands[t->ncands], TRD_CANDIDATE_MAX, "%s", spec);
    return t->ncands++;
}

/* What the machine's tables choose for the table's call at bytes on comm
 * without the wisdom (the untuned library's choice) into spec. */
static void model_choice(const ctx *x, size_t bytes, char *spec, size_t len)
{
    trd_comm *c = NULL;
    snprintf(spec, len, "mpi");
    if (trd_comm_get(x->comm, x->m, TRD_SEGMENT_NOW, 0, MPI_DATATYPE_NULL, &c) != MPI_SUCCESS ||
        c->fallback)
        return;
    trd_call call = {x->t->coll, bytes / 8, 8, 0, 0, 1, 0};
    const char *params = "";
    const trd_algo *a = trd_select(&c->sel, &c->shape, &call, &params);
    if (a)
        snprintf(spec, len, "%s%s%s", a->name, *params ? ":" : "", params);
}

/* One check point: the winner w, the model's choice and the MPI library's
 * routine at bytes, interleaved, the winner twice, o->passes times in a
 * row; each one's median over the passes into q (alg_us, model_us, mpi_us)
 * and the twin's into *twin_us. */
static int check_point(ctx *x, int w, size_t bytes, trd_wisdom_point *q, double *twin_us, int *stop)
{
    tune_table *t = x->t;
    char spec[TRD_CANDIDATE_MAX];
    model_choice(x, bytes, spec, sizeof spec);
    int model = cand_index(t, spec), mpi = -1;
    for (int i = 0; i < t->ncands && mpi < 0; i++)
        if (is_mpi(t->coll, t->cands[i]))
            mpi = i;
    if (mpi < 0)
        mpi = cand_index(t, "mpi");
    if (model < 0 || mpi < 0)
        return MPI_ERR_NO_MEM;
    int idx[4] = {w, model, mpi, w}, n = 0, at[4];
    int list[4];
    for (int i = 0; i < 4; i++) { /* the model's choice or the library's may be the winner */
        int k = 0;
        while (k < n && !(list[k] == idx[i] && i < 3))
            k++;
        if (k == n || i == 3)
            list[k = n++] = idx[i];
        at[i] = k;
    }
    double v[4][TUNE_MAX_PASSES], one[4];
    int np = x->o->passes, rc;
    for (int k = 0; k < np; k++) {
        if ((rc = measure_size(x, list, n, bytes, one, stop, " (checking)")) != MPI_SUCCESS ||
            *stop)
            return rc;
        for (int i = 0; i < 4; i++)
            v[i][k] = one[at[i]];
    }
    *q = (trd_wisdom_point){.bytes = bytes};
    snprintf(q->alg, sizeof q->alg, "%s", t->cands[w]);
    snprintf(q->model, sizeof q->model, "%s", spec);
    q->alg_us = tune_median(v[0], np);
    q->model_us = tune_median(v[1], np);
    q->mpi_us = tune_median(v[2], np);
    *twin_us = tune_median(v[3], np);
    return MPI_SUCCESS;
}

/* The sizes the check pass times: per range of t its first and last size
 * within the grid measured and every size of the grid between them (the
 * middle where there is none), each with its range's index. */
typedef struct checks {
    int n;
    trd_wisdom_point *p; /* [n] */
    int *range;          /* [n] */
} checks;

/* The check pass over t->range (docs/tuning.md): every size of c timed
 * (check_point), the table's noise the median of the twins' differences.
 * Returns MPI_SUCCESS (*stop where the budget ran out) or an MPI error
 * code. */
static int check_ranges(ctx *x, checks *c, int *stop)
{
    tune_table *t = x->t;
    const tune_state *st = t->st;
    int cap = t->nranges * (st->ngrid + 3), rc;
    double *diff = malloc((size_t)cap * sizeof *diff);
    c->n = 0;
    c->p = calloc((size_t)cap, sizeof *c->p);
    c->range = malloc((size_t)cap * sizeof *c->range);
    if (!diff || !c->p || !c->range) {
        free(diff);
        return MPI_ERR_NO_MEM;
    }
    for (int r = 0; r < t->nranges; r++) {
        const trd_wisdom_range *q = &t->range[r];
        int w = cand_index(t, q->alg);
        /* the ends of the range within the sizes measured (the buffers' sizes) */
        size_t lo = q->from < st->grid[0] ? st->grid[0] : (q->from + 7) / 8 * 8;
        size_t hi = (q->below - 1) / 8 * 8, at[TUNE_MAX_POINTS + 3];
        int nat = 0;
        if (hi > st->grid[st->ngrid - 1])
            hi = st->grid[st->ngrid - 1];
        if (w < 0) {
            free(diff);
            return MPI_ERR_NO_MEM;
        }
        if (lo > hi)
            continue;
        at[nat++] = lo;
        for (int g = 0; g < st->ngrid; g++)
            if (st->grid[g] > lo && st->grid[g] < hi)
                at[nat++] = st->grid[g];
        if (nat == 1 && middle(lo, hi) < hi)
            at[nat++] = middle(lo, hi);
        if (hi > lo)
            at[nat++] = hi;
        for (int k = 0; k < nat; k++) {
            double twin;
            if ((rc = check_point(x, w, at[k], &c->p[c->n], &twin, stop)) != MPI_SUCCESS || *stop) {
                free(diff);
                return rc;
            }
            diff[c->n] = tune_twin_noise(c->p[c->n].alg_us, twin);
            c->range[c->n++] = r;
        }
    }
    t->noise = tune_median(diff, c->n);
    free(diff);
    return MPI_SUCCESS;
}

/* Keep at most TRD_WISDOM_MAX_CHECKS of the n checked sizes p[0..n) in
 * o->check: the first, the last and those evenly between. */
static void keep_checks(trd_wisdom_range *o, const trd_wisdom_point *p, int n)
{
    int m = n < TRD_WISDOM_MAX_CHECKS ? n : TRD_WISDOM_MAX_CHECKS;
    o->ncheck = m;
    for (int i = 0; i < m; i++)
        o->check[i] = p[m > 1 ? (int)((long)i * (n - 1) / (m - 1)) : 0];
}

/* Each checked size's verdict with the table's noise, its choice
 * (tune_check_choices: a tie keeps the choice of the size before), and each
 * range of t cut at the geometric middle between checked sizes whose
 * choices differ: a part the model's choice or the library's routine takes
 * names it ("model", "mpi") with its time, the measured winner as its
 * runner-up; neighbouring parts of one choice are one range, across the
 * measured ranges too.  Returns MPI_SUCCESS or MPI_ERR_NO_MEM. */
static int cut_ranges(tune_table *t, checks *c)
{
    trd_wisdom_range *out = malloc((size_t)(t->nranges + c->n) * sizeof *out);
    const char **who = malloc((size_t)(c->n ? c->n : 1) * sizeof *who);
    int n = 0, start = -1; /* out[n - 1]'s first check, -1: not a checked part */
    if (!out || !who) {
        free(out);
        free(who);
        return MPI_ERR_NO_MEM;
    }
    for (int k = 0; k < c->n; k++) {
        c->p[k].noise = t->noise;
        c->p[k].verdict = tune_check_verdict(c->p[k].alg_us, c->p[k].model_us, c->p[k].mpi_us,
                                             t->noise, strcmp(c->p[k].alg, c->p[k].model) == 0);
    }
    tune_check_choices(c->p, c->n, who);
    for (int r = 0, k = 0; r < t->nranges; r++) {
        const trd_wisdom_range *q = &t->range[r];
        if (k == c->n || c->range[k] != r) { /* nothing checked in it */
            out[n++] = *q;
            start = -1;
            continue;
        }
        for (int first = k; k < c->n && c->range[k] == r; first = k) {
            const char *name = who[first];
            /* the checked sizes after it with the same choice stay in this part */
            while (k < c->n && c->range[k] == r && strcmp(who[k], name) == 0)
                k++;
            size_t from = first == 0 || c->range[first - 1] != r
                              ? q->from
                              : middle(c->p[first - 1].bytes, c->p[first].bytes);
            size_t below =
                k == c->n || c->range[k] != r ? q->below : middle(c->p[k - 1].bytes, c->p[k].bytes);
            if (start >= 0 && strcmp(out[n - 1].alg, name) == 0) { /* the part before, grown */
                out[n - 1].below = below;
                keep_checks(&out[n - 1], &c->p[start], k - start);
                continue;
            }
            trd_wisdom_range *o = &out[n++];
            *o = *q;
            o->from = from;
            o->below = below;
            if (strcmp(name, q->alg)) {
                snprintf(o->alg, sizeof o->alg, "%s", name);
                o->us = tune_check_time(&c->p[first], name);
                snprintf(o->runner, sizeof o->runner, "%s", q->alg);
                o->runner_us = c->p[first].alg_us;
            }
            keep_checks(o, &c->p[first], k - first);
            start = first;
        }
    }
    free(who);
    /* cut parts beyond what the runtime reads go to their neighbours */
    merge_narrowest(out, &n, TUNE_TABLE_RANGES);
    memcpy(t->range, out, (size_t)n * sizeof out[0]);
    t->nranges = n;
    free(out);
    return MPI_SUCCESS;
}

int tune_finish(const trd_machine *m, const tune_model *md, const tune_opts *o, MPI_Comm comm,
                MPI_Comm alt, tune_table *t, tune_clock *clk, int bisect)
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
    if ((rc = ctx_open(&x, m, o, comm, alt, t, clk)) != MPI_SUCCESS)
        goto out;
    t->noise = x.noise;
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
        if ((rc = make_ranges(t)) != MPI_SUCCESS)
            goto out;
        t->complete = 1;
        /* the check pass: only where the grid was measured whole and a
         * model is at hand; a budget that runs out keeps the ranges */
        if (bisect && !stop && md && md->t && t->nranges > 0) {
            trd_wisdom_range keep[TRD_MAX_RANGES];
            int nkeep = t->nranges;
            memcpy(keep, t->range, (size_t)nkeep * sizeof keep[0]);
            checks c = {0, NULL, NULL};
            rc = check_ranges(&x, &c, &stop);
            if (rc == MPI_SUCCESS && !stop && (rc = cut_ranges(t, &c)) == MPI_SUCCESS)
                t->checked = 1;
            free(c.p);
            free(c.range);
            if (rc != MPI_SUCCESS || stop) {
                memcpy(t->range, keep, (size_t)nkeep * sizeof keep[0]);
                t->nranges = nkeep;
            }
        }
    }
out:
    if (stop)
        clk->stopped = 1;
    ctx_close(&x);
    state_free(t);
    t->seconds += MPI_Wtime() - t_start;
    return rc;
}
