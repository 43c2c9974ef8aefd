/* bench_pieces.c - times MPI_Reduce_scatter_block, MPI_Allgather, MPI_Reduce
 * and MPI_Bcast against the MPI library's own.
 *
 * Linked with treeduce, MPI_X is treeduce's and PMPI_X the MPI library's.
 * Both run in the same job, interleaved call by call (treeduce, MPI,
 * treeduce, MPI, ...), on MPI_DOUBLE (MPI_SUM for the reductions), out of
 * place, root 0 for reduce and bcast, for message sizes from --min-bytes to
 * --max-bytes in powers of two.  Each call follows a PMPI_Barrier and is timed
 * with MPI_Wtime; an iteration's time is the slowest rank's, and the table
 * reports medians over iterations.
 *
 * The size is the whole message of one rank: for rsb the input vector (p
 * blocks, the result is one), for allgather the output vector (p blocks, the
 * input is one), for reduce and bcast the buffer.  For rsb and allgather it is
 * rounded down to whole blocks of doubles (at least one double a block);
 * sizes that round to the one before are skipped, and the table and CSV show
 * the size used.  algbw = size / time; busbw = algbw * (p-1)/p for rsb and
 * allgather, algbw for reduce and bcast (the conventions of nccl-tests).
 *
 * Before timing, each piece's results are compared with the MPI library's at
 * a few sizes, out of place and in place (MPI_IN_PLACE at root 0 only for
 * reduce: MPICH 4.0 crashes on it at other roots, pmodels/mpich#6540), reduce
 * and bcast at the first and last rank as root: rsb and reduce within
 * rounding (|a - e| <= 2 p eps * sum_r |x_r|), allgather and bcast exactly
 * and bitwise equal on every rank; a mismatch aborts the run.
 *
 * Usage: bench_pieces [--piece rsb|allgather|reduce|bcast|all] [--min-bytes N]
 *                     [--max-bytes N] [--iters N] [--warmup N] [--csv FILE]
 *                     [--check-only]
 * Sizes take a K, M or G suffix (powers of 1024).  --iters is the most
 * iterations per size; a size runs fewer when the warm-up shows they would
 * take over SECONDS_PER_SIZE, but at least MIN_ITERS.
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

enum piece { P_RSB, P_ALLGATHER, P_REDUCE, P_BCAST, P_MAX };

static const char *const piece_name[P_MAX] = {"rsb", "allgather", "reduce", "bcast"};
static const char *const piece_mpi[P_MAX] = {"MPI_Reduce_scatter_block", "MPI_Allgather",
                                             "MPI_Reduce", "MPI_Bcast"};

static struct {
    int pieces; /* bit per piece */
    size_t min_bytes, max_bytes;
    int iters, warmup;
    const char *csv;
    int check_only;
} opt = {(1 << P_MAX) - 1, 8, 64u << 20, 1000, 5, NULL, 0};

static int rank, nprocs;

static void die(const char *msg)
{
    fprintf(stderr, "bench_pieces: rank %d: %s\n", rank, msg);
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

static int parse_piece(const char *s)
{
    int p;

    if (!strcmp(s, "all")) {
        opt.pieces = (1 << P_MAX) - 1;
        return 0;
    }
    for (p = 0; p < P_MAX; p++)
        if (!strcmp(s, piece_name[p])) {
            opt.pieces = 1 << p;
            return 0;
        }
    return -1;
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
        if (!strcmp(a, "--piece")) {
            if (parse_piece(v))
                return -1;
        } else if (!strcmp(a, "--min-bytes")) {
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
        } else {
            return -1;
        }
    }
    /* Whole doubles only. */
    opt.min_bytes = (opt.min_bytes + 7) / 8 * 8;
    if (opt.min_bytes == 0)
        opt.min_bytes = 8;
    if (opt.iters < 1 || opt.warmup < 0 || opt.max_bytes < opt.min_bytes ||
        opt.max_bytes > ((size_t)INT32_MAX) * 8)
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

/* ---- The pieces ---------------------------------------------------------------- */

/* Doubles a rank sends (in) and receives (out) for count: the block for rsb
 * and allgather, the buffer for reduce and bcast. */
static size_t n_in(enum piece pc, size_t count)
{
    return pc == P_RSB ? count * (size_t)nprocs : count;
}

static size_t n_out(enum piece pc, size_t count)
{
    return pc == P_ALLGATHER ? count * (size_t)nprocs : count;
}

/* The count a call takes for a message of bytes (see the header), at least 1. */
static size_t count_for(enum piece pc, size_t bytes)
{
    size_t per = pc == P_RSB || pc == P_ALLGATHER ? (size_t)nprocs * sizeof(double) : sizeof(double);
    return bytes / per > 0 ? bytes / per : 1;
}

/* The message size of count, as the table shows it. */
static size_t bytes_of(enum piece pc, size_t count)
{
    return (pc == P_RSB ? n_in(pc, count) : n_out(pc, count)) * sizeof(double);
}

/* One call of the piece, treeduce's (mine) or the MPI library's; x is the
 * send buffer, y the receive buffer (bcast: the buffer; in: MPI_IN_PLACE). */
static int call(enum piece pc, int mine, const void *x, double *y, int count, int root)
{
    MPI_Comm w = MPI_COMM_WORLD;

    switch (pc) {
    case P_RSB:
        return mine ? MPI_Reduce_scatter_block(x, y, count, MPI_DOUBLE, MPI_SUM, w)
                    : PMPI_Reduce_scatter_block(x, y, count, MPI_DOUBLE, MPI_SUM, w);
    case P_ALLGATHER:
        return mine ? MPI_Allgather(x, count, MPI_DOUBLE, y, count, MPI_DOUBLE, w)
                    : PMPI_Allgather(x, count, MPI_DOUBLE, y, count, MPI_DOUBLE, w);
    case P_REDUCE:
        return mine ? MPI_Reduce(x, y, count, MPI_DOUBLE, MPI_SUM, root, w)
                    : PMPI_Reduce(x, y, count, MPI_DOUBLE, MPI_SUM, root, w);
    default:
        return mine ? MPI_Bcast(y, count, MPI_DOUBLE, root, w)
                    : PMPI_Bcast(y, count, MPI_DOUBLE, root, w);
    }
}

/* ---- Correctness check ------------------------------------------------------ */

/* Compares treeduce's piece with the MPI library's on count (see n_in), in
 * place or not, at root (reduce, bcast); aborts on a mismatch. */
static void check(enum piece pc, size_t count, int inplace, int root)
{
    size_t nin = n_in(pc, count), nout = n_out(pc, count), nbuf = nin > nout ? nin : nout, i;
    size_t ncmp = nout;
    double *x = xmalloc(nin * sizeof *x), *e = xmalloc(nbuf * sizeof *e);
    double *a = xmalloc(nbuf * sizeof *a), *s = NULL;
    /* reduce: MPI_IN_PLACE at the root only */
    const void *send = inplace && (pc != P_REDUCE || rank == root) ? MPI_IN_PLACE : x;
    int n = (int)count, rc, exact = pc == P_ALLGATHER || pc == P_BCAST;
    uint64_t h[2];
    char msg[256];

    fill(x, nin, 0x5eed0000u + (uint64_t)rank * 7919 + count);
    memset(e, 0, nbuf * sizeof *e);
    memset(a, 0, nbuf * sizeof *a);
    if (pc == P_BCAST || (inplace && pc != P_ALLGATHER)) {
        memcpy(e, x, nin * sizeof *x);
        memcpy(a, x, nin * sizeof *x);
    } else if (inplace) {
        memcpy(e + (size_t)rank * count, x, nin * sizeof *x);
        memcpy(a + (size_t)rank * count, x, nin * sizeof *x);
    }
    rc = call(pc, 0, send, e, n, root);
    if (rc == MPI_SUCCESS)
        rc = call(pc, 1, send, a, n, root);
    if (rc == MPI_SUCCESS && !exact) {
        double *ab = xmalloc(nin * sizeof *ab);
        s = xmalloc(nout * sizeof *s);
        for (i = 0; i < nin; i++)
            ab[i] = fabs(x[i]);
        rc = call(pc, 0, ab, s, n, root);
        free(ab);
    }
    if (rc != MPI_SUCCESS) {
        snprintf(msg, sizeof msg, "%s returned an error during the correctness check",
                 piece_mpi[pc]);
        die(msg);
    }
    if (pc == P_REDUCE && rank != root)
        ncmp = 0;
    for (i = 0; i < ncmp; i++) {
        double tol = exact ? 0 : 2.0 * nprocs * DBL_EPSILON * s[i];
        if (!(fabs(a[i] - e[i]) <= tol)) {
            snprintf(msg, sizeof msg,
                     "%s: wrong result: count=%zu in_place=%s root=%d index=%zu expected=%.17g "
                     "actual=%.17g tol=%.3g",
                     piece_mpi[pc], count, inplace ? "yes" : "no",
                     pc == P_REDUCE || pc == P_BCAST ? root : -1, i, e[i], a[i], tol);
            die(msg);
        }
    }
    if (exact) {
        h[0] = hash(a, nout);
        h[1] = ~h[0];
        PMPI_Allreduce(MPI_IN_PLACE, h, 2, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
        if (h[0] != ~h[1]) {
            snprintf(msg, sizeof msg, "%s: result differs between ranks: count=%zu in_place=%s",
                     piece_mpi[pc], count, inplace ? "yes" : "no");
            die(msg);
        }
    }
    free(x);
    free(e);
    free(a);
    free(s);
}

/* The checks of one piece; returns how many ran. */
static int check_piece(enum piece pc)
{
    static const size_t counts[] = {1, 3, 1000, 65539, 1u << 20};
    int nchecks = 0, ip, r;
    size_t k;

    for (k = 0; k < sizeof counts / sizeof counts[0]; k++) {
        if (k > 0 && bytes_of(pc, counts[k]) > opt.max_bytes)
            continue;
        for (r = 0; r < 2; r++) {
            int root = r ? nprocs - 1 : 0;
            if (r && (pc == P_RSB || pc == P_ALLGATHER || nprocs == 1))
                continue;
            for (ip = 0; ip < 2; ip++) {
                if (ip && (pc == P_BCAST || (pc == P_REDUCE && root != 0)))
                    continue;
                check(pc, counts[k], ip, root); /* aborts the job on a mismatch */
                nchecks++;
            }
        }
    }
    return nchecks;
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

static double timed(enum piece pc, int mine, const double *x, double *y, int count)
{
    double t0;
    int rc;

    PMPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    rc = call(pc, mine, x, y, count, 0);
    t0 = MPI_Wtime() - t0;
    if (rc != MPI_SUCCESS) {
        char msg[128];
        snprintf(msg, sizeof msg, "%s returned an error", piece_mpi[pc]);
        die(msg);
    }
    return t0;
}

/* Medians (seconds) of the slowest rank's time, library and MPI; returns the
 * number of iterations. */
static int measure(enum piece pc, const double *x, double *y, size_t count, double *t_lib,
                   double *t_mpi)
{
    int n = (int)count, i, iters, warm = opt.warmup > 0 ? opt.warmup : 1;
    double pair_s, *t = xmalloc((size_t)warm * sizeof *t);

    for (i = 0; i < warm; i++) {
        t[i] = timed(pc, 1, x, y, n);
        t[i] += timed(pc, 0, x, y, n);
    }
    /* The median pair, as the first may pay for first touch; every rank must
     * run the same number of iterations. */
    pair_s = median(t, warm);
    free(t);
    PMPI_Allreduce(MPI_IN_PLACE, &pair_s, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    iters = iters_for(pair_s);
    t = xmalloc(2 * (size_t)iters * sizeof *t);
    for (i = 0; i < iters; i++) {
        t[i] = timed(pc, 1, x, y, n);
        t[iters + i] = timed(pc, 0, x, y, n);
    }
    PMPI_Allreduce(MPI_IN_PLACE, t, 2 * iters, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    *t_lib = median(t, iters);
    *t_mpi = median(t + iters, iters);
    free(t);
    return iters;
}

/* "64 MiB", or "64.0 MiB" for a size just short of it. */
static void human(char *buf, size_t n, size_t bytes)
{
    static const char *unit[] = {"B", "KiB", "MiB", "GiB"};
    double v = (double)bytes;
    int u = 0;

    while (u < 3 && v >= 1023.95) { /* what "%.1f" would print as 1024.0 */
        v /= 1024;
        u++;
    }
    snprintf(buf, n, v == floor(v) ? "%.0f %s" : "%.1f %s", v, unit[u]);
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

    printf("# MPI_Reduce_scatter_block (rsb), MPI_Allgather, MPI_Reduce, MPI_Bcast benchmark:\n");
    printf("# treeduce (MPI_X) vs MPI library (PMPI_X), interleaved\n");
    printf("# MPI library: %s\n", lib);
    printf("# ranks: %d\n", nprocs);
    printf("# TREEDUCE_ALGORITHM: %s\n", alg && *alg ? alg : "(unset)");
    if (hosts && *hosts)
        printf("# TREEDUCE_HOSTS: %s\n", hosts);
    printf("# MPI_DOUBLE, MPI_SUM, out of place, root 0; times: median over iterations of the "
           "slowest rank, in us\n");
    printf("# size: per rank, rsb's input (p blocks), allgather's output (p blocks), reduce's and "
           "bcast's buffer\n");
    printf("# speed-up = MPI time / treeduce time (> 1: treeduce faster)\n");
    printf("# algbw = size / treeduce time; busbw = algbw * (p-1)/p (rsb, allgather) or algbw "
           "(reduce, bcast); GB/s = 1e9 B/s\n");
    printf("%-9s %10s %6s %13s %13s %9s %10s %10s\n", "piece", "size", "iters", "treeduce_us",
           "mpi_us", "speed-up", "algbw_GB/s", "busbw_GB/s");
    fflush(stdout);
}

int main(int argc, char **argv)
{
    const char *alg = getenv("TREEDUCE_ALGORITHM");
    double *x, *y, wall = 0;
    size_t bytes, cap;
    FILE *csv = NULL;
    int pc, nchecks = 0;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    if (parse_args(argc, argv) != 0) {
        if (rank == 0)
            fprintf(stderr,
                    "usage: bench_pieces [--piece rsb|allgather|reduce|bcast|all] [--min-bytes N]\n"
                    "                    [--max-bytes N] [--iters N] [--warmup N] [--csv FILE] "
                    "[--check-only]\n"
                    "  sizes in bytes, with an optional K, M or G suffix (1024-based)\n");
        MPI_Finalize();
        return 2;
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    for (pc = 0; pc < P_MAX; pc++)
        if (opt.pieces & 1 << pc)
            nchecks += check_piece(pc);
    if (opt.check_only) {
        if (rank == 0)
            printf("correctness check: %d passed, 0 failed\n", nchecks);
        MPI_Finalize();
        return 0;
    }

    if (rank == 0) {
        print_header();
        if (opt.csv && !(csv = fopen(opt.csv, "w")))
            perror(opt.csv);
        if (csv)
            fprintf(csv, "ranks,algorithm,piece,bytes,count,iters,treeduce_us,mpi_us,speedup,"
                         "treeduce_algbw_GBps,mpi_algbw_GBps,treeduce_busbw_GBps\n");
    }

    /* a block of one double per rank may exceed --max-bytes */
    cap = opt.max_bytes > (size_t)nprocs * sizeof(double) ? opt.max_bytes
                                                          : (size_t)nprocs * sizeof(double);
    x = xmalloc(cap);
    y = xmalloc(cap);
    fill(x, cap / sizeof *x, 0xbe4c0000u + (uint64_t)rank);
    memset(y, 0, cap);

    wall = MPI_Wtime();
    for (pc = 0; pc < P_MAX; pc++) {
        size_t last = 0;
        if (!(opt.pieces & 1 << pc))
            continue;
        for (bytes = opt.min_bytes; bytes <= opt.max_bytes; bytes *= 2) {
            size_t count = count_for(pc, bytes), used = bytes_of(pc, count);
            double t_lib, t_mpi;
            int iters;
            if (used != last) {
                last = used;
                iters = measure(pc, x, y, count, &t_lib, &t_mpi);
                if (rank == 0) {
                    char size[32];
                    double algbw = (double)used / t_lib / 1e9;
                    double busbw = pc == P_RSB || pc == P_ALLGATHER
                                       ? algbw * (nprocs - 1) / nprocs
                                       : algbw;
                    human(size, sizeof size, used);
                    printf("%-9s %10s %6d %13.2f %13.2f %9.3f %10.3f %10.3f\n", piece_name[pc],
                           size, iters, t_lib * 1e6, t_mpi * 1e6, t_mpi / t_lib, algbw, busbw);
                    fflush(stdout);
                    if (csv)
                        fprintf(csv, "%d,%s,%s,%zu,%zu,%d,%.3f,%.3f,%.4f,%.4f,%.4f,%.4f\n", nprocs,
                                alg && *alg ? alg : "", piece_name[pc], used, used / sizeof(double),
                                iters, t_lib * 1e6, t_mpi * 1e6, t_mpi / t_lib, algbw,
                                (double)used / t_mpi / 1e9, busbw);
                }
            }
            if (bytes > opt.max_bytes / 2)
                break;
        }
    }
    wall = MPI_Wtime() - wall;
    if (rank == 0) {
        printf("# sweep took %.1f s\n", wall);
        if (csv && fclose(csv) != 0)
            perror(opt.csv);
    }
    free(x);
    free(y);
    MPI_Finalize();
    return 0;
}
