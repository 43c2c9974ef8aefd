/* bench_allreduce.c - times MPI_Allreduce against the MPI library's own.
 *
 * Linked with treeduce, MPI_Allreduce is treeduce's and PMPI_Allreduce the MPI
 * library's.  Both run in the same job, interleaved call by call (treeduce,
 * MPI, treeduce, MPI, ...), on MPI_DOUBLE with MPI_SUM, out of place, for
 * message sizes from --min-bytes to --max-bytes in powers of two.  Each call
 * follows a PMPI_Barrier and is timed with MPI_Wtime; an iteration's time is
 * the slowest rank's, and the table reports medians over iterations.
 *
 * Before timing, both routines' results are compared at a few sizes (within
 * rounding: |a - e| <= 2 p eps * sum_r |x_r|, and bitwise equal on every rank);
 * a mismatch aborts the run.
 *
 * Memory bandwidth.  Then every rank at once copies a --copy-bytes buffer
 * (256 MiB) with memcpy, COPY_REPS times after a barrier each, buffers touched
 * beforehand.  A copy of b bytes moves 2b bytes (b read, b written; as STREAM
 * counts, write-allocate traffic not counted); a rank's bandwidth is 2b over
 * its time, best of the repetitions, and the sum is the largest over the
 * repetitions of the ranks' bandwidths summed (the ranks ran together).
 *
 * Bound.  For messages of m >= BOUND_MIN_BYTES bytes per rank, bound_us is
 * the time the bytes that any allreduce must move take at the summed
 * bandwidth:  bound = 2 p m / B_sum.  Every byte of the p inputs must be read
 * at least once and every byte of the p outputs written at least once, which
 * one algorithm achieves: rank i reads block i of every input (m bytes in
 * all), reduces it and writes it to block i of every output (m bytes).
 * Algorithms in which a rank writes only its own buffers also read the
 * others' reduced blocks, (3 - 1/p) m per rank, and copies through a shared
 * segment add more: those are costs of an algorithm, not of the operation.
 * The bound counts memory traffic only (no network, no arithmetic) and holds
 * for data not already in cache: smaller messages may beat it.  tr/bound and
 * mpi/bound are the measured times over the bound.
 *
 * Usage: bench_allreduce [--min-bytes N] [--max-bytes N] [--iters N]
 *                        [--warmup N] [--csv FILE] [--copy-bytes N]
 *                        [--check-only]
 * Sizes take a K, M or G suffix (powers of 1024); --copy-bytes 0 skips the
 * bandwidth measurement and the bound.  --iters is the most iterations per
 * size; a size runs fewer when the warm-up shows they would take over
 * SECONDS_PER_SIZE, but at least MIN_ITERS.
 */
#include <ctype.h>
#include <float.h>
#include <math.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MIN_ITERS 20
#define SECONDS_PER_SIZE 0.5 /* iterations shrink to fit; at least MIN_ITERS */
#define COPY_REPS 5
#define BOUND_MIN_BYTES (1u << 20) /* below, the caches hold the data */

static struct {
    size_t min_bytes, max_bytes;
    int iters, warmup;
    const char *csv;
    int check_only;
    size_t copy_bytes;
} opt = {8, 64u << 20, 1000, 5, NULL, 0, 256u << 20};

/* Copy bandwidth, read + write bytes per second: each rank's and the sum. */
static struct {
    double *rank_Bps; /* [nprocs], rank 0 only */
    double sum_Bps;   /* 0: not measured */
} bw;

static int rank, nprocs;

static void die(const char *msg)
{
    fprintf(stderr, "bench_allreduce: rank %d: %s\n", rank, msg);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

static void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        die("out of memory");
    return p;
}

/* ---- Options -------------------------------------------------------------- */

static int parse_size(const char *s, size_t *out)
{
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    int shift = 0;

    if (end == s)
        return -1;
    switch (toupper((unsigned char)*end)) {
    case 'K': shift = 10; end++; break;
    case 'M': shift = 20; end++; break;
    case 'G': shift = 30; end++; break;
    default: break;
    }
    if (*end == 'i' || *end == 'I')
        end++;
    if (*end == 'B' || *end == 'b')
        end++;
    if (*end || v > (1ULL << 40) >> shift)
        return -1;
    *out = (size_t)(v << shift);
    return 0;
}

static int parse_args(int argc, char **argv)
{
    int i;

    for (i = 1; i < argc; i += 2) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--check-only")) {
            opt.check_only = 1;
            i--;
            continue;
        }
        if (!v)
            return -1;
        if (!strcmp(a, "--min-bytes")) {
            if (parse_size(v, &opt.min_bytes))
                return -1;
        } else if (!strcmp(a, "--max-bytes")) {
            if (parse_size(v, &opt.max_bytes))
                return -1;
        } else if (!strcmp(a, "--iters")) {
            opt.iters = atoi(v);
        } else if (!strcmp(a, "--warmup")) {
            opt.warmup = atoi(v);
        } else if (!strcmp(a, "--csv")) {
            opt.csv = v;
        } else if (!strcmp(a, "--copy-bytes")) {
            if (parse_size(v, &opt.copy_bytes))
                return -1;
        } else {
            return -1;
        }
    }
    /* Whole doubles only. */
    opt.min_bytes = (opt.min_bytes + 7) / 8 * 8;
    if (opt.min_bytes == 0)
        opt.min_bytes = 8;
    if (opt.iters < 1 || opt.warmup < 0 || opt.max_bytes < opt.min_bytes || opt.max_bytes > ((size_t)INT32_MAX) * 8)
        return -1;
    return 0;
}

/* ---- Data ------------------------------------------------------------------ */

static uint64_t rng_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* Values in [-1, 1] scaled by 2^-8 .. 2^8, so that sums round. */
static void fill(double *x, size_t n, uint64_t seed)
{
    uint64_t s = seed;
    size_t i;

    for (i = 0; i < n; i++) {
        uint64_t r = rng_next(&s);
        double u = (double)(r >> 11) * 0x1.0p-53 * 2 - 1;
        x[i] = ldexp(u, (int)(r & 15) - 8);
    }
}

static uint64_t hash(const double *x, size_t n)
{
    const unsigned char *p = (const unsigned char *)x;
    uint64_t h = 0xcbf29ce484222325ULL;
    size_t k;

    for (k = 0; k < n * sizeof *x; k++)
        h = (h ^ p[k]) * 0x100000001b3ULL;
    return h;
}

/* ---- Correctness check ------------------------------------------------------ */

/* Compares MPI_Allreduce with PMPI_Allreduce on count doubles, in place or
 * not; aborts on a mismatch. */
static void check(size_t count, int inplace)
{
    int n = (int)count, rc;
    double *x = xmalloc(count * sizeof *x), *e = xmalloc(count * sizeof *e), *a = xmalloc(count * sizeof *a);
    double *ab = xmalloc(count * sizeof *ab), *s = xmalloc(count * sizeof *s);
    uint64_t h[2];
    size_t i;
    char msg[256];

    fill(x, count, 0x5eed0000u + (uint64_t)rank * 7919 + count);
    for (i = 0; i < count; i++)
        ab[i] = fabs(x[i]);
    if (inplace) {
        memcpy(e, x, count * sizeof *x);
        memcpy(a, x, count * sizeof *x);
    }
    rc = PMPI_Allreduce(inplace ? MPI_IN_PLACE : x, e, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    if (rc == MPI_SUCCESS)
        rc = MPI_Allreduce(inplace ? MPI_IN_PLACE : x, a, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Allreduce(ab, s, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    if (rc != MPI_SUCCESS)
        die("MPI_Allreduce returned an error during the correctness check");
    for (i = 0; i < count; i++) {
        double tol = 2.0 * nprocs * DBL_EPSILON * s[i];
        if (!(fabs(a[i] - e[i]) <= tol)) {
            snprintf(msg, sizeof msg,
                     "wrong result: count=%zu in_place=%s index=%zu expected=%.17g actual=%.17g tol=%.3g", count,
                     inplace ? "yes" : "no", i, e[i], a[i], tol);
            die(msg);
        }
    }
    h[0] = hash(a, count);
    h[1] = ~h[0];
    PMPI_Allreduce(MPI_IN_PLACE, h, 2, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
    if (h[0] != ~h[1]) {
        snprintf(msg, sizeof msg, "result differs between ranks: count=%zu in_place=%s", count,
                 inplace ? "yes" : "no");
        die(msg);
    }
    free(x);
    free(e);
    free(a);
    free(ab);
    free(s);
}

/* ---- Memory bandwidth ---------------------------------------------------------- */

/* Called through a volatile pointer: the copies are never read, and must not
 * be optimized away. */
static void *(*volatile copy_fn)(void *, const void *, size_t) = memcpy;

/* Measures bw (see the header) with buffers of bytes on every rank. */
static void measure_copy_bw(size_t bytes)
{
    char *src = xmalloc(bytes), *dst = xmalloc(bytes);
    double best = 0, sum;
    int i;

    memset(src, 1, bytes); /* first touch outside the timing */
    memset(dst, 0, bytes);
    for (i = 0; i < COPY_REPS; i++) {
        double t;
        PMPI_Barrier(MPI_COMM_WORLD);
        t = MPI_Wtime();
        copy_fn(dst, src, bytes);
        t = MPI_Wtime() - t;
        t = t > 0 ? 2.0 * (double)bytes / t : 0;
        if (t > best)
            best = t;
        PMPI_Allreduce(&t, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        if (sum > bw.sum_Bps)
            bw.sum_Bps = sum;
    }
    free(src);
    free(dst);
    if (rank == 0)
        bw.rank_Bps = xmalloc((size_t)nprocs * sizeof *bw.rank_Bps);
    PMPI_Gather(&best, 1, MPI_DOUBLE, bw.rank_Bps, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
}

/* Seconds the bytes any allreduce of m bytes per rank must move take at the
 * summed bandwidth (see the header); 0 when there is no bound. */
static double bound_s(size_t m)
{
    if (bw.sum_Bps <= 0 || m < BOUND_MIN_BYTES)
        return 0;
    return 2.0 * nprocs * (double)m / bw.sum_Bps;
}

/* ---- Timing ------------------------------------------------------------------ */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *t, int n)
{
    qsort(t, (size_t)n, sizeof *t, cmp_double);
    return n % 2 ? t[n / 2] : (t[n / 2 - 1] + t[n / 2]) / 2;
}

/* Iterations that fit SECONDS_PER_SIZE, given the seconds one (library, MPI)
 * pair took in the warm-up on the slowest rank. */
static int iters_for(double pair_s)
{
    double fit = pair_s > 0 ? SECONDS_PER_SIZE / pair_s : opt.iters;
    int n = fit < opt.iters ? (int)fit : opt.iters;
    if (n < MIN_ITERS)
        n = MIN_ITERS < opt.iters ? MIN_ITERS : opt.iters;
    return n;
}

static double timed(int mine, const double *x, double *y, int count)
{
    double t0;
    int rc;

    PMPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    if (mine)
        rc = MPI_Allreduce(x, y, count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    else
        rc = PMPI_Allreduce(x, y, count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    t0 = MPI_Wtime() - t0;
    if (rc != MPI_SUCCESS)
        die("MPI_Allreduce returned an error");
    return t0;
}

/* Medians (seconds) of the slowest rank's time, library and MPI; returns the
 * number of iterations. */
static int measure(const double *x, double *y, size_t bytes, double *t_lib, double *t_mpi)
{
    int count = (int)(bytes / sizeof(double)), i, iters, warm = opt.warmup > 0 ? opt.warmup : 1;
    double pair_s, *t = xmalloc((size_t)warm * sizeof *t);

    for (i = 0; i < warm; i++) {
        t[i] = timed(1, x, y, count);
        t[i] += timed(0, x, y, count);
    }
    /* The median pair, as the first may pay for first touch; every rank must
     * run the same number of iterations. */
    pair_s = median(t, warm);
    free(t);
    PMPI_Allreduce(MPI_IN_PLACE, &pair_s, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    iters = iters_for(pair_s);
    t = xmalloc(2 * (size_t)iters * sizeof *t);
    for (i = 0; i < iters; i++) {
        t[i] = timed(1, x, y, count);
        t[iters + i] = timed(0, x, y, count);
    }
    PMPI_Allreduce(MPI_IN_PLACE, t, 2 * iters, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    *t_lib = median(t, iters);
    *t_mpi = median(t + iters, iters);
    free(t);
    return iters;
}

static void human(char *buf, size_t n, size_t bytes)
{
    static const char *unit[] = {"B", "KiB", "MiB", "GiB"};
    int u = 0;
    size_t v = bytes;

    while (u < 3 && v >= 1024 && v % 1024 == 0) {
        v /= 1024;
        u++;
    }
    if (v >= 1024 && u < 3)
        snprintf(buf, n, "%.1f %s", (double)bytes / (double)((size_t)1 << (10 * (u + 1))), unit[u + 1]);
    else
        snprintf(buf, n, "%zu %s", v, unit[u]);
}

/* ---- Main -------------------------------------------------------------------- */

static void print_header(void)
{
    char lib[MPI_MAX_LIBRARY_VERSION_STRING], *p;
    const char *alg = getenv("TREEDUCE_ALGORITHM"), *hosts = getenv("TREEDUCE_HOSTS");
    int len, k = 0;

    MPI_Get_library_version(lib, &len);
    lib[strcspn(lib, "\n")] = '\0';
    for (p = lib; *p; p++) /* tabs and runs of blanks to one space */
        if (!((*p == ' ' || *p == '\t') && k > 0 && lib[k - 1] == ' '))
            lib[k++] = *p == '\t' ? ' ' : *p;
    lib[k] = '\0';

    printf("# MPI_Allreduce benchmark: treeduce (MPI_Allreduce) vs MPI library (PMPI_Allreduce), interleaved\n");
    printf("# MPI library: %s\n", lib);
    printf("# ranks: %d\n", nprocs);
    printf("# TREEDUCE_ALGORITHM: %s\n", alg && *alg ? alg : "(unset)");
    if (hosts && *hosts)
        printf("# TREEDUCE_HOSTS: %s\n", hosts);
    printf("# MPI_DOUBLE, MPI_SUM, out of place; times: median over iterations of the slowest rank, in us\n");
    printf("# speed-up = MPI time / treeduce time (> 1: treeduce faster)\n");
    printf("# algbw = bytes / treeduce time; busbw = algbw * 2(p-1)/p; GB/s = 1e9 B/s\n");
    if (bw.sum_Bps > 0) {
        char size[32];
        int r;
        human(size, sizeof size, opt.copy_bytes);
        printf("# copy bandwidth (memcpy of %s, best of %d, all ranks at once; read + write bytes):\n", size,
               COPY_REPS);
        printf("#   per rank GB/s:");
        for (r = 0; r < nprocs; r++)
            printf(" %.2f", bw.rank_Bps[r] / 1e9);
        printf("\n#   sum GB/s: %.2f\n", bw.sum_Bps / 1e9);
        human(size, sizeof size, BOUND_MIN_BYTES);
        printf("# bound_us (size >= %s) = 2 p m / (sum GB/s): each of the p ranks' m-byte input read once and\n"
               "#   output written once; tr/bound, mpi/bound = treeduce, MPI time / bound_us\n",
               size);
    }
    printf("%10s %6s %13s %13s %9s %10s %10s %10s %9s %9s\n", "size", "iters", "treeduce_us", "mpi_us", "speed-up",
           "algbw_GB/s", "busbw_GB/s", "bound_us", "tr/bound", "mpi/bound");
    fflush(stdout);
}

int main(int argc, char **argv)
{
    static const size_t check_counts[] = {1, 3, 1000, 65539, 1u << 20};
    const char *alg = getenv("TREEDUCE_ALGORITHM");
    double *x, *y, wall = 0;
    size_t bytes, k;
    FILE *csv = NULL;
    int ip;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    if (parse_args(argc, argv) != 0) {
        if (rank == 0)
            fprintf(stderr, "usage: bench_allreduce [--min-bytes N] [--max-bytes N] [--iters N] [--warmup N] "
                            "[--csv FILE] [--copy-bytes N] [--check-only]\n"
                            "  sizes in bytes, with an optional K, M or G suffix (1024-based);\n"
                            "  --copy-bytes 0 skips the memory bandwidth measurement and the bound\n");
        MPI_Finalize();
        return 2;
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    int nchecks = 0;
    for (k = 0; k < sizeof check_counts / sizeof check_counts[0]; k++)
        for (ip = 0; ip < 2; ip++)
            if (k == 0 || check_counts[k] * sizeof(double) <= opt.max_bytes) {
                check(check_counts[k], ip); /* aborts the job on a mismatch */
                nchecks++;
            }
    if (opt.check_only) {
        if (rank == 0)
            printf("correctness check: %d passed, 0 failed\n", nchecks);
        MPI_Finalize();
        return 0;
    }
    if (opt.copy_bytes > 0)
        measure_copy_bw(opt.copy_bytes);

    if (rank == 0) {
        print_header();
        if (opt.csv && !(csv = fopen(opt.csv, "w")))
            perror(opt.csv);
        if (csv)
            fprintf(csv, "ranks,algorithm,bytes,count,iters,treeduce_us,mpi_us,speedup,treeduce_algbw_GBps,"
                         "mpi_algbw_GBps,treeduce_busbw_GBps,copy_sum_GBps,bound_us,treeduce_over_bound,"
                         "mpi_over_bound\n");
    }

    x = xmalloc(opt.max_bytes);
    y = xmalloc(opt.max_bytes);
    fill(x, opt.max_bytes / sizeof *x, 0xbe4c0000u + (uint64_t)rank);
    memset(y, 0, opt.max_bytes);

    wall = MPI_Wtime();
    for (bytes = opt.min_bytes; bytes <= opt.max_bytes; bytes *= 2) {
        double t_lib, t_mpi;
        int iters = measure(x, y, bytes, &t_lib, &t_mpi);
        if (rank == 0) {
            char size[32], bound[3][32] = {"-", "-", "-"}, copy[32] = "";
            double algbw = (double)bytes / t_lib / 1e9, busbw = algbw * 2.0 * (nprocs - 1) / nprocs;
            double b = bound_s(bytes);
            human(size, sizeof size, bytes);
            if (b > 0) {
                snprintf(bound[0], sizeof bound[0], "%.2f", b * 1e6);
                snprintf(bound[1], sizeof bound[1], "%.3f", t_lib / b);
                snprintf(bound[2], sizeof bound[2], "%.3f", t_mpi / b);
            }
            printf("%10s %6d %13.2f %13.2f %9.3f %10.3f %10.3f %10s %9s %9s\n", size, iters, t_lib * 1e6,
                   t_mpi * 1e6, t_mpi / t_lib, algbw, busbw, bound[0], bound[1], bound[2]);
            fflush(stdout);
            if (b <= 0) /* empty fields in the CSV */
                bound[0][0] = bound[1][0] = bound[2][0] = '\0';
            if (bw.sum_Bps > 0)
                snprintf(copy, sizeof copy, "%.4f", bw.sum_Bps / 1e9);
            if (csv)
                fprintf(csv, "%d,%s,%zu,%zu,%d,%.3f,%.3f,%.4f,%.4f,%.4f,%.4f,%s,%s,%s,%s\n", nprocs,
                        alg && *alg ? alg : "", bytes, bytes / sizeof(double), iters, t_lib * 1e6, t_mpi * 1e6,
                        t_mpi / t_lib, algbw, (double)bytes / t_mpi / 1e9, busbw, copy, bound[0], bound[1],
                        bound[2]);
        }
        if (bytes > opt.max_bytes / 2)
            break;
    }
    wall = MPI_Wtime() - wall;
    if (rank == 0) {
        printf("# sweep took %.1f s\n", wall);
        if (csv && fclose(csv) != 0)
            perror(opt.csv);
    }
    free(x);
    free(y);
    free(bw.rank_Bps);
    MPI_Finalize();
    return 0;
}
