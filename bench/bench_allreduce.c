/* bench_allreduce.c - times MPI_Allreduce against the MPI library's own.
 *
 * Linked with treeduce, MPI_Allreduce is treeduce's and PMPI_Allreduce the MPI
 * library's.  Both run in the same job, interleaved call by call (treeduce,
 * MPI, treeduce, MPI, ...), on MPI_DOUBLE with MPI_SUM, out of place, for
 * message sizes from --min-bytes to --max-bytes in powers of two.  Before
 * each call every rank writes its send buffer with values new to that call
 * (small integers, a pattern plus the call's number: bench_value), then a
 * PMPI_Barrier, then the call, timed with MPI_Wtime: the write is not timed,
 * but the call finds the buffer as an application leaves it, written just
 * before, its lines dirty in the writer's cache.  An iteration's time is the
 * slowest rank's, and the table reports medians over iterations.
 *
 * Tight loop.  Then, per routine, the loop OSU times: --warmup calls, one
 * barrier, then as many calls as the iterations back to back on the same
 * buffers, not written (hot in the caches as the routine itself leaves
 * them); the slowest rank's time over the calls: NAME_loop_us, mpi_loop_us
 * and loop_spd (mpi_loop_us over the first library's).  Where the two
 * regimes disagree, it is the write (or its absence) that the routines meet
 * differently.
 *
 * --verify compares every timed call's result, and each tight loop's last,
 * with the sum of the values written (exact): a buffer not written before a
 * call, or a result from stale data, aborts the run.
 *
 * Built without treeduce, --lib NEW.so [--lib OLD.so] loads one or two
 * builds' libtreeduce_MACHINE.so instead and times their trd_MACHINE_allreduce
 * (with two: new, old, MPI, then old, new, MPI, ...); the table adds old_us
 * and new/old, NEW's time over OLD's.
 * --lib mpi as OLD times the MPI library's own routines a second time, as a
 * routine of their own in turn with the others: old_us against mpi_us is
 * what the run's noise alone makes of one routine timed twice, the yardstick
 * for a new/old or speed-up near 1.
 * A fourth --lib, after NEW, OLD and mpi, is a copy of OLD in a file of its
 * own: old_b_us against old_us is what the run's noise makes of one library
 * loaded twice, each instance with its own shared-memory segment (at some
 * sizes wider than the MPI routine's A/B noise).
 *
 * --also NAME times a third routine in turn with the others: the (first)
 * library's allreduce with algorithm NAME (trd_MACHINE_allreduce_with, as
 * TREEDUCE_ALGORITHM spells it; "repro" is the reproducible mode), and adds
 * NAME_us and NAME/tr, its time over the library's own choice: what forcing
 * that algorithm costs.  --also all times every algorithm that can be forced
 * on MPI_COMM_WORLD (trd_candidates, with each parameter candidate; the MPI
 * library's routine is timed anyway) through the runtime's
 * trd_allreduce_with, each after the same check, in turn with the others;
 * per size the table shows the fastest of them (best, best_us) and the
 * library's time over it (tr/best), the CSV a column per algorithm ("-"
 * where it fell back to the MPI library's routine: not timed as its own).
 * Without --lib, the program must have libtreeduce_local linked in
 * (bench_allreduce_local).
 *
 * Before timing, each treeduce routine's results are compared with the MPI
 * library's at a few sizes (within rounding: |a - e| <= 2 p eps * sum_r |x_r|,
 * and bitwise equal on every rank); a mismatch aborts the run.
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
 * Link bound (--link-rate B, bytes per second, ranks on N > 1 nodes: the
 * groups of MPI_COMM_TYPE_SHARED).  In place of the memory bound, bound_us
 * is then the time each node's link takes to carry what any allreduce must
 * send over it in each direction, 2 (N-1)/N m bytes at B [TREE Lemmas 1-3]: every
 * node's m-byte contribution but the share it keeps leaves the node once
 * reduced, and every reduced byte it lacks comes in.  It counts the links
 * only (no latency, no copies) and is the floor of an emulated cluster whose
 * node links are shaped to B (bench/cluster.sh).
 *
 * Data-movement floor.  When all ranks share one node, xfer_us is the time
 * the copies between the ranks' caches of an allreduce through a shared
 * segment take here, timed like the calls (after a barrier, slowest rank,
 * median, its input area written before each call as the calls' send
 * buffers), with no arithmetic and no library: through an MPI shared window,
 * every rank announces its input on a flag, waits for the others' flags,
 * copies its block of every other rank's input, writes its block of the
 * output, announces it, waits, and copies the other blocks of the output
 * from their owners -- the one-step reduce_scatter + allgather of
 * [FLEX §2.1].  Up to XFER_ONE_STEP_MAX bytes it also times the one-step
 * variant (every rank copies the others' whole inputs after one flag
 * exchange) and keeps the lower of the two.  At 8 B this is one cache-line
 * exchange between the cores; at cache-resident sizes, the cross-core copy
 * bandwidth.  An algorithm that reads the others' user buffers directly
 * (process_vm_readv) skips the copy of the reduced block into the segment
 * and can come in under it from about 128 KiB.  tr/xfer and mpi/xfer are
 * the measured times over it.
 *
 * Usage: bench_allreduce [--min-bytes N] [--max-bytes N] [--iters N]
 *                        [--warmup N] [--csv FILE] [--copy-bytes N] [--link-rate B]
 *                        [--lib LIB [--lib LIB [--lib mpi [--lib COPY]]]] [--also NAME|all]
 * [--check-only]
 *                        [--verify]
 * Sizes take a K, M or G suffix (powers of 1024); --copy-bytes 0 skips the
 * bandwidth measurement and the bound.  --iters is the most iterations per
 * size; a size runs fewer when the warm-up shows they would take over
 * SECONDS_PER_SIZE, but at least MIN_ITERS.
 */
#include "bench_common.h"

#include <dlfcn.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#define XFER_ONE_STEP_MAX (64u << 10)

static const char *also; /* --also */
static double link_rate; /* --link-rate, bytes per second; 0: none */
static int nnodes;       /* the nodes the ranks are on (MPI_COMM_TYPE_SHARED) */

/* The options of bench_parse_args that only this benchmark takes. */
static int parse_arg(const char *a, const char *v)
{
    if (!strcmp(a, "--copy-bytes"))
        return parse_size(v, &copy_bytes) ? -1 : 1;
    if (!strcmp(a, "--link-rate")) {
        char *end;
        link_rate = strtod(v, &end);
        if (*end && end[1] == '\0' && strchr("kMG", *end))
            link_rate *= *end == 'k' ? 1e3 : *end == 'M' ? 1e6 : 1e9;
        else if (*end)
            return -1;
        return link_rate > 0 ? 1 : -1;
    }
    if (!strcmp(a, "--also")) {
        also = v;
        return *v ? 1 : -1;
    }
    return 0;
}

/* ---- A forced algorithm beside the libraries (--also) ------------------------ */

static int also_at; /* its index in libs[] */

static int also_allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                          MPI_Op op, MPI_Comm comm)
{
    return libs[0].allreduce_with(sendbuf, recvbuf, count, datatype, op, comm,
                                  libs[also_at].algorithm);
}

/* The allreduce of routine l: a library's, or a forced algorithm's (--also all). */
static int allreduce_of(int l, const void *sendbuf, void *recvbuf, int count)
{
    if (libs[l].forced)
        return brt.allreduce_with(brt.machine, sendbuf, recvbuf, count, MPI_DOUBLE, MPI_SUM,
                                  MPI_COMM_WORLD, libs[l].algorithm);
    return libs[l].allreduce(sendbuf, recvbuf, count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
}

/* Adds --also's routine after the libraries: the first one's allreduce_with
 * (linked in: libtreeduce_local's); with "all", every forced algorithm. */
static void add_also(void)
{
    if (!also)
        return;
    if (!strcmp(also, "all")) {
        bench_find_runtime();
        bench_csv_candidates(TRD_ALLREDUCE);
        bench_set_candidates(TRD_ALLREDUCE);
        return;
    }
    if (!libs[0].path)
        libs[0].allreduce_with =
            (bench_allreduce_with_fn)dlsym(RTLD_DEFAULT, "trd_local_allreduce_with");
    if (!libs[0].allreduce_with)
        die("--also needs a treeduce library: bench_allreduce_local, or --lib "
            "libtreeduce_MACHINE.so");
    also_at = nlibs++;
    libs[also_at] = (struct bench_lib){
        .name = also, .abbr = also, .allreduce = also_allreduce, .algorithm = also};
    nbase = nlibs;
}

/* ---- Correctness check ------------------------------------------------------ */

/* Compares each library's allreduce with PMPI_Allreduce on count doubles, in
 * place or not; aborts on a mismatch. */
static void check(size_t count, int inplace)
{
    int n = (int)count, rc, l;
    double *x = xmalloc(count * sizeof *x), *e = xmalloc(count * sizeof *e),
           *a = xmalloc(count * sizeof *a);
    double *ab = xmalloc(count * sizeof *ab), *s = xmalloc(count * sizeof *s);
    size_t i;

    fill_check(x, count, count);
    for (i = 0; i < count; i++)
        ab[i] = fabs(x[i]);
    if (inplace)
        memcpy(e, x, count * sizeof *x);
    rc = PMPI_Allreduce(inplace ? MPI_IN_PLACE : x, e, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Allreduce(ab, s, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    if (rc != MPI_SUCCESS)
        die("PMPI_Allreduce returned an error during the correctness check");
    for (l = 0; l < nlibs; l++) {
        const char *who = libs[l].name;
        const void *send = inplace ? MPI_IN_PLACE : x;
        if (inplace)
            memcpy(a, x, count * sizeof *x);
        rc = allreduce_of(l, send, a, n);
        if (rc != MPI_SUCCESS)
            die("MPI_Allreduce (%s) returned an error during the correctness check", who);
        for (i = 0; i < count; i++) {
            double tol = 2.0 * nprocs * DBL_EPSILON * s[i];
            if (!(fabs(a[i] - e[i]) <= tol))
                die("wrong result (%s): count=%zu in_place=%s index=%zu expected=%.17g "
                    "actual=%.17g tol=%.3g",
                    who, count, inplace ? "yes" : "no", i, e[i], a[i], tol);
        }
        if (!same_on_all_ranks(a, count))
            die("result differs between ranks (%s): count=%zu in_place=%s", who, count,
                inplace ? "yes" : "no");
    }
    free(x);
    free(e);
    free(a);
    free(ab);
    free(s);
}

/* Seconds the bytes any allreduce of m bytes per rank must move take at the
 * summed bandwidth, or over each node's link with --link-rate (see the
 * header); 0 when there is no bound. */
static double bound_s(size_t m)
{
    if (link_rate > 0)
        return nnodes > 1 && m >= BOUND_MIN_BYTES
                   ? 2.0 * (nnodes - 1) / nnodes * (double)m / link_rate
                   : 0;
    if (bw.sum_Bps <= 0 || m < BOUND_MIN_BYTES)
        return 0;
    return 2.0 * nprocs * (double)m / bw.sum_Bps;
}

/* ---- The data-movement floor (see the header) --------------------------------- */

/* One floor "call" of m bytes (bench_call_fn; who is ignored): variant 1 the
 * one-step, 0 the two-step. */
static int xfer_call(int who, void *ctx)
{
    const struct xfer_args *a = ctx;
    size_t lo, len;
    (void)who;
    xfer_sync();
    if (a->variant) {
        for (int k = 1; k < nprocs; k++)
            memcpy(xf.copy, xfer_in((rank + k) % nprocs), a->m);
        return MPI_SUCCESS;
    }
    xfer_block(a->m, rank, &lo, &len);
    for (int k = 1; k < nprocs; k++)
        memcpy(xf.copy + lo, xfer_in((rank + k) % nprocs) + lo, len);
    memcpy(xfer_out(rank) + lo, xf.copy + lo, len);
    xfer_sync();
    for (int k = 1; k < nprocs; k++) {
        int r = (rank + k) % nprocs;
        xfer_block(a->m, r, &lo, &len);
        memcpy(xf.copy + lo, xfer_out(r) + lo, len);
    }
    return MPI_SUCCESS;
}

/* The floor for m bytes (see the header), or 0 when not measured: every
 * rank's input (m bytes) written before each call, as the calls'. */
static double xfer_s(size_t m, int iters)
{
    struct xfer_args a = {.m = m, .in = m, .writer = -1, .variant = 0};
    double t;
    if (!xfer_on(m))
        return 0;
    t = xfer_time(xfer_call, &a, iters);
    if (m <= XFER_ONE_STEP_MAX) {
        double t1;
        a.variant = 1;
        t1 = xfer_time(xfer_call, &a, iters);
        if (t1 < t)
            t = t1;
    }
    return t;
}

/* ---- Timing ------------------------------------------------------------------ */

struct args {
    double *x;
    double *y;
    int count;
};

static int call(int who, void *ctx)
{
    const struct args *c = ctx;

    if (who < nlibs)
        return allreduce_of(who, c->x, c->y, c->count);
    return PMPI_Allreduce(c->x, c->y, c->count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
}

/* The send buffer written before each timed call. */
static void write_args(void *ctx, unsigned stamp)
{
    const struct args *c = ctx;
    bench_write_values(c->x, (size_t)c->count, stamp);
}

/* --verify: the call's result is the sum of the values written. */
static void verify_args(void *ctx, int who, unsigned stamp)
{
    const struct args *c = ctx;
    bench_verify_values(c->y, (size_t)c->count, bench_sum_of, 0, stamp,
                        who < nlibs ? libs[who].name : "PMPI_Allreduce");
}

/* Medians (seconds) of the slowest rank's time, t[0 .. nlibs] (the libraries,
 * MPI), and the tight loops' times t_loop (bench_measure); returns the number
 * of iterations. */
static int measure(double *x, double *y, size_t bytes, double *t, double *t_loop)
{
    struct args c = {x, y, (int)(bytes / sizeof(double))};
    struct bench_timing b = {call, "MPI_Allreduce", &c, write_args, verify_args};
    return bench_measure(&b, t, t_loop);
}

/* "64 MiB", or one decimal of the next unit up ("1.5 KiB") for a size that is
 * not a whole number of it. */
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
        snprintf(buf, n, "%.1f %s", (double)bytes / (double)((size_t)1 << (10 * (u + 1))),
                 unit[u + 1]);
    else
        snprintf(buf, n, "%zu %s", v, unit[u]);
}

/* ---- Main -------------------------------------------------------------------- */

static void print_header(void)
{
    const char *tr = libs[0].name, *ab = libs[0].abbr;
    char bound_head[32], xfer_head[32];

    printf("# MPI_Allreduce benchmark: treeduce (%s) vs MPI library (PMPI_Allreduce), "
           "interleaved\n",
           bench_under_test("MPI_Allreduce"));
    bench_print_env();
    printf("# MPI_DOUBLE, MPI_SUM, out of place; times: median over iterations of the slowest "
           "rank, in us\n");
    bench_print_ratios();
    printf("# algbw = bytes / %s time; busbw = algbw * 2(p-1)/p; GB/s = 1e9 B/s\n", tr);
    if (link_rate > 0 && nnodes > 1) {
        char size[32];
        human(size, sizeof size, BOUND_MIN_BYTES);
        printf("# bound_us (size >= %s) = 2 (N-1)/N m / B: the link bound of N = %d nodes whose "
               "links carry\n"
               "#   B = %.4g B/s each way (--link-rate); %s/bound, mpi/bound = %s, MPI time / "
               "bound_us\n",
               size, nnodes, link_rate, ab, tr);
    } else if (bw.sum_Bps > 0) {
        char size[32];
        bench_print_copy_bw();
        human(size, sizeof size, BOUND_MIN_BYTES);
        printf("# bound_us (size >= %s) = 2 p m / (sum GB/s): each of the p ranks' m-byte input "
               "read once and\n"
               "#   output written once; %s/bound, mpi/bound = %s, MPI time / bound_us\n",
               size, ab, tr);
    }
    if (xf.node != MPI_COMM_NULL)
        printf("# xfer_us: the copies between the ranks' caches of an allreduce through a shared "
               "segment, timed\n"
               "#   like the calls, no arithmetic (one flag exchange at 8 B); %s/xfer, mpi/xfer = "
               "time / xfer_us\n",
               ab);
    snprintf(bound_head, sizeof bound_head, "%s/bound", ab);
    snprintf(xfer_head, sizeof xfer_head, "%s/xfer", ab);
    printf("%10s %6s", "size", "iters");
    bench_print_time_heads();
    printf(" %10s %10s %10s %9s %9s %9s %8s %8s\n", "algbw_GB/s", "busbw_GB/s", "bound_us",
           bound_head, "mpi/bound", "xfer_us", xfer_head, "mpi/xfer");
    fflush(stdout);
}

int main(int argc, char **argv)
{
    static const size_t check_counts[] = {1, 3, 1000, 65539, 1u << 20};
    double *x, *y, t0;
    size_t bytes, k;
    FILE *csv = NULL;
    int ip, nchecks = 0;

    bench_init(&argc, &argv, "bench_allreduce");
    if (bench_parse_args(argc, argv, parse_arg) != 0)
        return bench_usage(
            "usage: bench_allreduce [--min-bytes N] [--max-bytes N] [--iters N] [--warmup N] "
            "[--csv FILE] [--copy-bytes N] [--link-rate B]\n"
            "                       [--lib LIB [--lib LIB [--lib mpi [--lib COPY]]]] [--also "
            "NAME|all] "
            "[--check-only] "
            "[--verify]\n"
            "  sizes in bytes, with an optional K, M or G suffix (1024-based);\n"
            "  --copy-bytes 0 skips the memory bandwidth measurement and the "
            "bound;\n"
            "  --link-rate B: the bound is the link bound of the ranks' nodes, each node's link\n"
            "  carrying B bytes/s (k, M, G: 1e3, 1e6, 1e9) each way;\n"
            "  --lib: a libtreeduce_MACHINE.so to time instead of MPI_Allreduce; "
            "twice:\n  NEW's and OLD's side by side; --lib mpi as the second or third: the MPI "
            "library's\n  routine timed twice; a fourth --lib: a copy of OLD (one library loaded "
            "twice);\n"
            "  --also NAME: also the (first) library's allreduce with algorithm NAME, e.g. "
            "repro;\n"
            "  --also all: every algorithm that can be forced, and the fastest of them;\n"
            "  --verify: every timed call's result checked against the values written\n");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    if (link_rate > 0) { /* the nodes, for the link bound */
        MPI_Comm node;
        int node_rank, leader;
        MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
        MPI_Comm_rank(node, &node_rank);
        leader = node_rank == 0;
        MPI_Allreduce(&leader, &nnodes, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        MPI_Comm_free(&node);
    }
    bench_load_libs();
    add_also();

    for (k = 0; k < sizeof check_counts / sizeof check_counts[0]; k++)
        for (ip = 0; ip < 2; ip++)
            if (k == 0 || check_counts[k] * sizeof(double) <= opt.max_bytes) {
                check(check_counts[k], ip); /* aborts the job on a mismatch */
                nchecks++;
            }
    if (opt.check_only)
        return bench_check_only(nchecks);
    if (copy_bytes > 0)
        measure_copy_bw(copy_bytes);
    xfer_init(opt.max_bytes);

    if (rank == 0) {
        const char *tr = libs[0].name;
        print_header();
        csv = bench_csv_open("ranks,algorithm,bytes,count,iters,%s,%s_algbw_GBps,mpi_algbw_GBps,"
                             "%s_busbw_GBps,copy_sum_GBps,bound_us,%s_over_bound,mpi_over_bound,"
                             "xfer_us,%s_over_xfer,mpi_over_xfer",
                             bench_csv_time_heads(), tr, tr, tr, tr);
    }

    sweep_buffers(opt.max_bytes, &x, &y);

    t0 = MPI_Wtime();
    bytes = opt.min_bytes;
    do {
        double t[BENCH_MAX_ROUTINES + 1], t_loop[BENCH_MAX_ROUTINES + 1], t_lib, t_mpi;
        int iters = measure(x, y, bytes, t, t_loop);
        double xt = xfer_s(bytes, iters);
        t_lib = t[0]; /* the first library's (new) in the ratios to the bound and floor */
        t_mpi = t[nlibs];
        if (rank == 0) {
            char size[32], bound[3][32] = {"-", "-", "-"}, xfer[3][32] = {"-", "-", "-"},
                           copy[32] = "";
            double algbw = (double)bytes / t_lib / 1e9, busbw = algbw * 2.0 * (nprocs - 1) / nprocs;
            double b = bound_s(bytes);
            human(size, sizeof size, bytes);
            if (b > 0) {
                snprintf(bound[0], sizeof bound[0], "%.2f", b * 1e6);
                snprintf(bound[1], sizeof bound[1], "%.3f", t_lib / b);
                snprintf(bound[2], sizeof bound[2], "%.3f", t_mpi / b);
            }
            if (xt > 0) {
                snprintf(xfer[0], sizeof xfer[0], "%.2f", xt * 1e6);
                snprintf(xfer[1], sizeof xfer[1], "%.3f", t_lib / xt);
                snprintf(xfer[2], sizeof xfer[2], "%.3f", t_mpi / xt);
            }
            printf("%10s %6d", size, iters);
            bench_print_times(t, t_loop);
            printf(" %10.3f %10.3f %10s %9s %9s %9s %8s %8s\n", algbw, busbw, bound[0], bound[1],
                   bound[2], xfer[0], xfer[1], xfer[2]);
            fflush(stdout);
            if (b <= 0) /* empty fields in the CSV */
                bound[0][0] = bound[1][0] = bound[2][0] = '\0';
            if (xt <= 0)
                xfer[0][0] = xfer[1][0] = xfer[2][0] = '\0';
            if (bw.sum_Bps > 0)
                snprintf(copy, sizeof copy, "%.4f", bw.sum_Bps / 1e9);
            if (csv) {
                fprintf(csv, "%d,%s,%zu,%zu,%d,", nprocs, bench_algorithm(), bytes,
                        bytes / sizeof(double), iters);
                bench_csv_times(csv, t, t_loop);
                fprintf(csv, ",%.4f,%.4f,%.4f,%s,%s,%s,%s,%s,%s,%s\n", algbw,
                        (double)bytes / t_mpi / 1e9, busbw, copy, bound[0], bound[1], bound[2],
                        xfer[0], xfer[1], xfer[2]);
            }
        }
    } while (bench_next_size(&bytes));
    bench_sweep_end(t0, csv);
    free(x);
    free(y);
    free(bw.rank_Bps);
    xfer_free();
    MPI_Finalize();
    return 0;
}
