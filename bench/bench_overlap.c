/* bench_overlap.c - how much of a nonblocking allreduce hides behind
 * computation: OSU's overlap for MPI_Iallreduce (treeduce's) and
 * PMPI_Iallreduce (the MPI library's), in one job, interleaved call by call.
 *
 * For each size and each of the two, as osu_iallreduce measures it:
 *   pure     MPI_Iallreduce + MPI_Wait, nothing between (t_pure);
 *   total    MPI_Iallreduce, then computation meant to take t_pure with no
 *            MPI call (a loop of fixed work, calibrated alone before the
 *            sizes), then MPI_Wait (t_total; the computation measured
 *            inside it, t_comp);
 *   overlap  100 * max(0, 1 - (t_total - t_comp) / t_pure): the share of
 *            the call's time that the computation hid.
 * Each time is the slowest rank's in that iteration; the table gives
 * medians over iterations.  Beside them comp_x, t_comp over t_pure: above
 * 1, the computation itself took longer than alone, because something (a
 * progress thread, the call's own copies) took its core from it: OSU's
 * formula does not charge that, this column does.
 *
 * What advances a call while the rank computes is set for the whole
 * process: TREEDUCE_ASYNC_PROGRESS=1 for treeduce's progress thread,
 * MPIR_CVAR_ASYNC_PROGRESS=1 for MPICH's own.  bench/overlap.sh runs the
 * program once without and once with each, and joins the tables.  MPI is
 * initialized with MPI_THREAD_MULTIPLE in every run, as both threads need,
 * so that the runs differ in the threads alone.
 *
 * Before timing a size each routine's result is compared with
 * PMPI_Allreduce on integer-valued doubles (exact); a mismatch aborts.
 *
 * The computation is arithmetic on the rank's core (--compute work, as OSU),
 * or a sleep of the same length (--compute sleep): the rank's thread then
 * leaves its core while it "computes", as if a core of its own were spare
 * for a progress thread.  On a node with as many ranks as cores, the sleep
 * measures what a progress thread itself hides (its wakes, its passes)
 * apart from its rivalry with the computation for the one core.
 *
 * Usage: bench_overlap [--min-bytes N] [--max-bytes N] [--iters N] [--csv FILE]
 *                      [--compute work|sleep] [--check-only]
 * (--check-only: the comparisons alone, every size, then the tally.)
 * Sizes take a K, M or G suffix and go up in powers of two (8 B .. 16 MiB by
 * default); --iters is the most iterations per size (fewer where they would
 * take over SECONDS_PER_SIZE, MIN_ITERS at least).
 */
#include <dlfcn.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#if defined(__linux__)
#include <sys/prctl.h>
#endif

#include "bench_common.h"

enum { O_TR, O_MPI, O_N };
static const char *const o_col[O_N] = {"tr", "mpi"};

static int iallreduce(int who, const double *x, double *y, int count, MPI_Request *q)
{
    return who == O_TR ? MPI_Iallreduce(x, y, count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, q)
                       : PMPI_Iallreduce(x, y, count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, q);
}

static int wait(int who, MPI_Request *q)
{
    return who == O_TR ? MPI_Wait(q, MPI_STATUS_IGNORE) : PMPI_Wait(q, MPI_STATUS_IGNORE);
}

/* ---- Computation of fixed work -------------------------------------------- */

static volatile double sink;
static double work_rate;   /* rounds of work per second, on this rank alone */
static int compute_sleeps; /* --compute sleep */

/* --compute (bench_parse_args' extra): 1 taken, 0 not this benchmark's, -1 bad. */
static int extra(const char *a, const char *v)
{
    if (strcmp(a, "--compute"))
        return 0;
    if (!strcmp(v, "work") || !strcmp(v, "sleep")) {
        compute_sleeps = !strcmp(v, "sleep");
        return 1;
    }
    return -1;
}

/* Leave the core for s seconds (--compute sleep). */
static void sleep_for(double s)
{
    struct timespec t = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    while (nanosleep(&t, &t) != 0)
        ;
}

/* n rounds of arithmetic that touch no memory the call uses. */
static void work(long n)
{
    double acc = 0;
    for (long i = 0; i < n; i++)
        for (int k = 0; k < 64; k++)
            acc += (double)k * 1e-9;
    sink = acc;
}

/* work_rate: the best of 200 runs of about 100 us of work, the slowest
 * rank's each (all ranks compute at once, as in the timed iterations).  Short
 * runs, as the computations timed are short: a run of many milliseconds
 * shares its core with whatever else is runnable there, one of microseconds
 * mostly ends within its time slice. */
static void calibrate_work(void)
{
    long n = 10;
    double t, best = 0;
    for (int k = 0; k < 200;) {
        PMPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        work(n);
        t = MPI_Wtime() - t0;
        PMPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        if (t < 100e-6) {
            n *= 2;
            continue;
        }
        best = k++ == 0 || (double)n / t > best ? (double)n / t : best;
    }
    work_rate = best;
}

/* ---- One size --------------------------------------------------------------- */

static void check(int who, double *x, double *y, double *ref, int count)
{
    for (int i = 0; i < count; i++)
        x[i] = (double)((i * 7 + rank * 13) % 1000);
    PMPI_Allreduce(x, ref, count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    MPI_Request q;
    if (iallreduce(who, x, y, count, &q) != MPI_SUCCESS || wait(who, &q) != MPI_SUCCESS)
        die("%s: the call failed at %d doubles", o_col[who], count);
    int bad = memcmp(y, ref, (size_t)count * sizeof *y) != 0;
    PMPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (bad)
        die("%s: the result differs from PMPI_Allreduce's at %d doubles", o_col[who], count);
}

/* One iteration of who: the slowest rank's t_total and t_comp (s), the call
 * with comp_s of computation between the start and the wait (0: none). */
static void iteration(int who, double *x, double *y, int count, double comp_s, double *total,
                      double *comp)
{
    MPI_Request q;
    double t[2];
    long n = (long)(comp_s * work_rate + 0.5);
    PMPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    iallreduce(who, x, y, count, &q);
    double c0 = MPI_Wtime();
    if (compute_sleeps) {
        if (comp_s > 0)
            sleep_for(comp_s);
    } else if (n) {
        work(n);
    }
    t[1] = MPI_Wtime() - c0;
    wait(who, &q);
    t[0] = MPI_Wtime() - t0;
    PMPI_Allreduce(MPI_IN_PLACE, t, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    *total = t[0];
    *comp = t[1];
}

struct row {
    double pure[O_N], total[O_N], comp[O_N], overlap[O_N];
};

static void measure(size_t bytes, double *x, double *y, struct row *r)
{
    int count = bytes / sizeof(double) ? (int)(bytes / sizeof(double)) : 1;
    double *t = xmalloc(sizeof(double) * (size_t)opt.iters * 2 * O_N), dummy, round = 0;
    for (int w = 0; w < opt.warmup; w++)
        for (int who = 0; who < O_N; who++) {
            double s;
            iteration(who, x, y, count, 0, &s, &dummy);
            round += w == opt.warmup - 1 ? s : 0;
        }
    int n = iters_for(2 * round);
    /* pure, interleaved; the two take turns at going first */
    for (int i = 0; i < n; i++)
        for (int k = 0; k < O_N; k++) {
            int who = (i + k) % O_N;
            iteration(who, x, y, count, 0, &t[who * n + i], &dummy);
        }
    for (int who = 0; who < O_N; who++)
        r->pure[who] = median(&t[who * n], n);
    /* with computation as long as the call alone */
    double *tc = t + (size_t)n * O_N;
    for (int i = 0; i < n; i++)
        for (int k = 0; k < O_N; k++) {
            int who = (i + k) % O_N;
            iteration(who, x, y, count, r->pure[who], &t[who * n + i], &tc[who * n + i]);
        }
    for (int who = 0; who < O_N; who++) {
        r->total[who] = median(&t[who * n], n);
        r->comp[who] = median(&tc[who * n], n);
        double hidden = 1 - (r->total[who] - r->comp[who]) / r->pure[who];
        r->overlap[who] = 100 * (hidden > 0 ? hidden : 0);
    }
    free(t);
}

int main(int argc, char **argv)
{
    opt.max_bytes = 16u << 20;
    opt.iters = 200;
    bench_init_thread(&argc, &argv, "bench_overlap", 1);
    if (bench_parse_args(argc, argv, extra) != 0 || opt.nlib)
        return bench_usage("usage: bench_overlap [--min-bytes N] [--max-bytes N] [--iters N] "
                           "[--csv FILE] [--compute work|sleep]\n");
    if (!dlsym(RTLD_DEFAULT, "trd_fell_back"))
        die("no treeduce library loaded: preload one (bench/overlap.sh does)");
    if (opt.check_only) {
        double *x = xmalloc(opt.max_bytes), *y = xmalloc(opt.max_bytes),
               *ref = xmalloc(opt.max_bytes);
        int n = 0;
        for (size_t b = opt.min_bytes; b <= opt.max_bytes; b *= 2, n += O_N)
            for (int who = 0; who < O_N; who++)
                check(who, x, y, ref, b / sizeof(double) ? (int)(b / sizeof(double)) : 1);
        free(x), free(y), free(ref);
        return bench_check_only(n);
    }
    FILE *csv = NULL;
    if (rank == 0 && opt.csv && !(csv = fopen(opt.csv, "w")))
        die("%s: cannot write", opt.csv);
    const char *tp = getenv("TREEDUCE_ASYNC_PROGRESS"), *mp = getenv("MPIR_CVAR_ASYNC_PROGRESS");
    if (compute_sleeps) {
#if defined(__linux__) && defined(PR_SET_TIMERSLACK)
        prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0); /* sleeps of microseconds, not 50 us more */
#endif
    } else {
        calibrate_work();
    }
    if (rank == 0) {
        printf("# bench_overlap: %d ranks, MPI_Iallreduce of doubles, MPI_SUM, computation: %s; "
               "TREEDUCE_ASYNC_PROGRESS=%s MPIR_CVAR_ASYNC_PROGRESS=%s\n",
               nprocs, compute_sleeps ? "sleep" : "work", tp ? tp : "", mp ? mp : "");
        printf("# medians of the slowest rank's times, us; overlap %% as OSU; comp_x = "
               "t_comp / t_pure\n");
        printf("%10s", "bytes");
        for (int who = 0; who < O_N; who++)
            printf(" %9s_pure %8s_total %7s_comp_x %6s_overlap", o_col[who], o_col[who], o_col[who],
                   o_col[who]);
        printf("\n");
        if (csv) {
            fprintf(csv, "bytes");
            for (int who = 0; who < O_N; who++)
                fprintf(csv, ",%s_pure_us,%s_total_us,%s_comp_us,%s_overlap_pct", o_col[who],
                        o_col[who], o_col[who], o_col[who]);
            fprintf(csv, "\n");
        }
    }
    size_t maxb = opt.max_bytes;
    double *x = xmalloc(maxb), *y = xmalloc(maxb), *ref = xmalloc(maxb);
    for (size_t b = opt.min_bytes; b <= maxb; b *= 2) {
        int count = b / sizeof(double) ? (int)(b / sizeof(double)) : 1;
        for (int who = 0; who < O_N; who++)
            check(who, x, y, ref, count);
        struct row r;
        measure(b, x, y, &r);
        if (rank == 0) {
            printf("%10zu", b);
            for (int who = 0; who < O_N; who++)
                printf(" %14.1f %14.1f %14.2f %14.1f", 1e6 * r.pure[who], 1e6 * r.total[who],
                       r.comp[who] / r.pure[who], r.overlap[who]);
            printf("\n");
            fflush(stdout);
            if (csv) {
                fprintf(csv, "%zu", b);
                for (int who = 0; who < O_N; who++)
                    fprintf(csv, ",%.3f,%.3f,%.3f,%.1f", 1e6 * r.pure[who], 1e6 * r.total[who],
                            1e6 * r.comp[who], r.overlap[who]);
                fprintf(csv, "\n");
            }
        }
    }
    if (csv)
        fclose(csv);
    free(x), free(y), free(ref);
    MPI_Finalize();
    return 0;
}
