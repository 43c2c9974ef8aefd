/* bench_pieces.c - times MPI_Reduce_scatter_block, MPI_Allgather, MPI_Reduce
 * and MPI_Bcast against the MPI library's own.
 *
 * Linked with treeduce, MPI_X is treeduce's and PMPI_X the MPI library's.
 * Both run in the same job, interleaved call by call (treeduce, MPI,
 * treeduce, MPI, ...), on MPI_DOUBLE (MPI_SUM for the reductions), out of
 * place, root 0 for reduce and bcast, for message sizes from --min-bytes to
 * --max-bytes in powers of two.  Before each call the calling rank writes its
 * send buffer (bcast: the root its buffer) with values new to that call
 * (bench_value), then a PMPI_Barrier, then the call, timed with MPI_Wtime:
 * the call finds the buffer as an application leaves it, written just
 * before.  An iteration's time is the slowest rank's, and the table reports
 * medians over iterations.  Then, per routine, the tight loop OSU times
 * (iterations calls back to back on the same buffers, not written, after one
 * barrier; the slowest rank's time over the calls): NAME_loop_us,
 * mpi_loop_us, loop_spd; see bench_allreduce.c.  --verify compares every
 * timed call's result, and each loop's last, with that of the values written
 * (exact; reduce at the root).
 *
 * Memory bandwidth and bound.  Before the sweep every rank at once copies a
 * --copy-bytes buffer (256 MiB) with memcpy, as bench_allreduce does (read +
 * write bytes, summed over the ranks: B_sum).  For sizes m >= BOUND_MIN_BYTES
 * bound_us is the time the bytes the piece must read and write at least once
 * take at that bandwidth: (p + 1) m / B_sum for rsb (the p inputs of m read,
 * the p results of m/p written), allgather (the p blocks of m/p read, the p
 * outputs of m written) and reduce (the p inputs read, the root's output
 * written), p m / B_sum for bcast (the root's buffer read, p - 1 written).
 * Memory traffic only, for data not already in cache; tr/bound and mpi/bound
 * are the measured times over it.
 *
 * Copy floor.  When all ranks share one node, xfer_us is the time the copies
 * between the ranks' caches that the piece must make take here, timed like
 * the calls (the input written, a barrier, then the copies; slowest rank,
 * median), with no arithmetic and no library: through an MPI shared window,
 * after one flag exchange, for rsb each rank copies its block of every other
 * rank's input ((p-1)/p of the size), for allgather every other rank's block
 * ((p-1)/p of the size), for reduce the root every other rank's buffer ((p-1)
 * times the size) and for bcast every other rank the root's buffer (the
 * size).  tr/xfer and mpi/xfer are the measured times over it.  (For reduce
 * on more than 2 ranks a reduce_scatter then a gather at the root moves fewer
 * bytes into the root's cache: the floor is then the one-step algorithm's.)
 *
 * Built without treeduce, --lib NEW.so [--lib OLD.so] loads one or two
 * builds' libtreeduce_MACHINE.so instead and times their trd_MACHINE_X (with
 * two: new, old, MPI, then old, new, MPI, ...); the table adds old_us and
 * new/old, NEW's time over OLD's.
 * --lib mpi as OLD times the MPI library's own routines a second time, as a
 * routine of their own in turn with the others: old_us against mpi_us is
 * what the run's noise alone makes of one routine timed twice, the yardstick
 * for a new/old or speed-up near 1.
 * A fourth --lib, after NEW, OLD and mpi, is a copy of OLD in a file of its
 * own: old_b_us against old_us is what the run's noise makes of one library
 * loaded twice, each instance with its own shared-memory segment (at some
 * sizes wider than the MPI routine's A/B noise).
 *
 * The size is the whole message of one rank: for rsb the input vector (p
 * blocks, the result is one), for allgather the output vector (p blocks, the
 * input is one), for reduce and bcast the buffer.  For rsb and allgather it is
 * rounded down to whole blocks of doubles (at least one double a block);
 * sizes that round to the one before are skipped, and the table and CSV show
 * the size used.  algbw = size / time; busbw = algbw * (p-1)/p for rsb and
 * allgather, algbw for reduce and bcast (the conventions of nccl-tests).
 *
 * --also all times, beside them, every algorithm that can be forced for the
 * piece on MPI_COMM_WORLD (trd_candidates, with each parameter candidate; the
 * MPI library's routine is timed anyway) through the (first) library's
 * runtime, trd_X_with, each after the same checks, in turn with the others;
 * per size the table shows the fastest of them (best, best_us) and the
 * library's time over it, the CSV a column per algorithm of any piece
 * (empty where the piece has none of that name, "-" where it fell back to
 * the MPI library's routine: not timed as its own).
 *
 * Before timing, each treeduce piece's results are compared with the MPI
 * library's at a few sizes, out of place and in place (MPI_IN_PLACE at root 0
 * only for reduce: MPICH 4.0 crashes on it at other roots, pmodels/mpich#6540),
 * reduce and bcast at the first and last rank as root: rsb and reduce within
 * rounding (|a - e| <= 2 p eps * sum_r |x_r|), allgather and bcast exactly
 * and bitwise equal on every rank; a mismatch aborts the run.
 *
 * Usage: bench_pieces [--piece rsb|allgather|reduce|bcast|all] [--min-bytes N]
 *                     [--max-bytes N] [--iters N] [--warmup N] [--csv FILE]
 *                     [--copy-bytes N] [--lib LIB [--lib LIB [--lib mpi [--lib COPY]]]] [--also
 * all]
 *                     [--check-only] [--verify]
 * Sizes take a K, M or G suffix (powers of 1024); --copy-bytes 0 skips the
 * bandwidth measurement and the bound.  --iters is the most
 * iterations per size; a size runs fewer when the warm-up shows they would
 * take over SECONDS_PER_SIZE, but at least MIN_ITERS.
 */
#include "bench_common.h"

#include <float.h>
#include <math.h>
#include <string.h>

enum piece { P_RSB, P_ALLGATHER, P_REDUCE, P_BCAST, P_MAX };

static const char *const piece_name[P_MAX] = {"rsb", "allgather", "reduce", "bcast"};
static const char *const piece_mpi[P_MAX] = {"MPI_Reduce_scatter_block", "MPI_Allgather",
                                             "MPI_Reduce", "MPI_Bcast"};
static const int piece_coll[P_MAX] = {TRD_REDUCE_SCATTER_BLOCK, TRD_ALLGATHER, TRD_REDUCE,
                                      TRD_BCAST};

static int pieces_on = (1 << P_MAX) - 1; /* --piece: bit per piece */
static int also_all;                     /* --also all */

/* ---- Options -------------------------------------------------------------- */

static int parse_piece(const char *s)
{
    int p;

    if (!strcmp(s, "all")) {
        pieces_on = (1 << P_MAX) - 1;
        return 0;
    }
    for (p = 0; p < P_MAX; p++)
        if (!strcmp(s, piece_name[p])) {
            pieces_on = 1 << p;
            return 0;
        }
    return -1;
}

/* The options of bench_parse_args that only this benchmark takes. */
static int parse_arg(const char *a, const char *v)
{
    if (!strcmp(a, "--piece"))
        return parse_piece(v) ? -1 : 1;
    if (!strcmp(a, "--copy-bytes"))
        return parse_size(v, &copy_bytes) ? -1 : 1;
    if (!strcmp(a, "--also")) {
        also_all = 1;
        return strcmp(v, "all") ? -1 : 1;
    }
    return 0;
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
    size_t per =
        pc == P_RSB || pc == P_ALLGATHER ? (size_t)nprocs * sizeof(double) : sizeof(double);
    return bytes / per > 0 ? bytes / per : 1;
}

/* The message size of count, as the table shows it. */
static size_t bytes_of(enum piece pc, size_t count)
{
    return (pc == P_RSB ? n_in(pc, count) : n_out(pc, count)) * sizeof(double);
}

/* One call of the piece, treeduce's of libs[who] or, for who == nlibs, the
 * MPI library's; x is the send buffer, y the receive buffer (bcast: the
 * buffer; in: MPI_IN_PLACE). */
static int call(enum piece pc, int who, const void *x, double *y, int count, int root)
{
    const struct bench_lib *l = who < nlibs ? &libs[who] : NULL;
    const trd_machine *m = brt.machine;
    MPI_Comm w = MPI_COMM_WORLD;

    if (l && l->forced) {
        const char *alg = l->algorithm;
        switch (pc) {
        case P_RSB:
            return brt.reduce_scatter_block_with(m, x, y, count, MPI_DOUBLE, MPI_SUM, w, alg);
        case P_ALLGATHER:
            return brt.allgather_with(m, x, count, MPI_DOUBLE, y, count, MPI_DOUBLE, w, alg);
        case P_REDUCE:
            return brt.reduce_with(m, x, y, count, MPI_DOUBLE, MPI_SUM, root, w, alg);
        default:
            return brt.bcast_with(m, y, count, MPI_DOUBLE, root, w, alg);
        }
    }
    switch (pc) {
    case P_RSB:
        return l ? l->reduce_scatter_block(x, y, count, MPI_DOUBLE, MPI_SUM, w)
                 : PMPI_Reduce_scatter_block(x, y, count, MPI_DOUBLE, MPI_SUM, w);
    case P_ALLGATHER:
        return l ? l->allgather(x, count, MPI_DOUBLE, y, count, MPI_DOUBLE, w)
                 : PMPI_Allgather(x, count, MPI_DOUBLE, y, count, MPI_DOUBLE, w);
    case P_REDUCE:
        return l ? l->reduce(x, y, count, MPI_DOUBLE, MPI_SUM, root, w)
                 : PMPI_Reduce(x, y, count, MPI_DOUBLE, MPI_SUM, root, w);
    default:
        return l ? l->bcast(y, count, MPI_DOUBLE, root, w)
                 : PMPI_Bcast(y, count, MPI_DOUBLE, root, w);
    }
}

/* ---- Correctness check ------------------------------------------------------ */

/* The buffer of a call on the check's input x (nin doubles), nbuf doubles:
 * zeroed, or holding x where the call reads it (bcast, in place). */
static void check_buffer(enum piece pc, double *buf, size_t nbuf, const double *x, size_t nin,
                         size_t count, int inplace)
{
    memset(buf, 0, nbuf * sizeof *buf);
    if (pc == P_BCAST || (inplace && pc != P_ALLGATHER))
        memcpy(buf, x, nin * sizeof *x);
    else if (inplace)
        memcpy(buf + (size_t)rank * count, x, nin * sizeof *x);
}

/* Compares each library's piece with the MPI library's on count (see n_in),
 * in place or not, at root (reduce, bcast); aborts on a mismatch. */
static void check(enum piece pc, size_t count, int inplace, int root)
{
    size_t nin = n_in(pc, count), nout = n_out(pc, count), nbuf = nin > nout ? nin : nout, i;
    size_t ncmp = pc == P_REDUCE && rank != root ? 0 : nout;
    double *x = xmalloc(nin * sizeof *x), *e = xmalloc(nbuf * sizeof *e);
    double *a = xmalloc(nbuf * sizeof *a), *s = NULL;
    /* reduce: MPI_IN_PLACE at the root only */
    const void *send = inplace && (pc != P_REDUCE || rank == root) ? MPI_IN_PLACE : x;
    int n = (int)count, rc, l, exact = pc == P_ALLGATHER || pc == P_BCAST;

    fill_check(x, nin, count);
    check_buffer(pc, e, nbuf, x, nin, count, inplace);
    rc = call(pc, nlibs, send, e, n, root);
    if (rc == MPI_SUCCESS && !exact) {
        double *ab = xmalloc(nin * sizeof *ab);
        s = xmalloc(nout * sizeof *s);
        for (i = 0; i < nin; i++)
            ab[i] = fabs(x[i]);
        rc = call(pc, nlibs, ab, s, n, root);
        free(ab);
    }
    if (rc != MPI_SUCCESS)
        die("P%s returned an error during the correctness check", piece_mpi[pc]);
    for (l = 0; l < nlibs; l++) {
        const char *who = libs[l].name;
        check_buffer(pc, a, nbuf, x, nin, count, inplace);
        if (call(pc, l, send, a, n, root) != MPI_SUCCESS)
            die("%s (%s) returned an error during the correctness check", piece_mpi[pc], who);
        for (i = 0; i < ncmp; i++) {
            double tol = exact ? 0 : 2.0 * nprocs * DBL_EPSILON * s[i];
            if (!(fabs(a[i] - e[i]) <= tol))
                die("%s (%s): wrong result: count=%zu in_place=%s root=%d index=%zu "
                    "expected=%.17g actual=%.17g tol=%.3g",
                    piece_mpi[pc], who, count, inplace ? "yes" : "no",
                    pc == P_REDUCE || pc == P_BCAST ? root : -1, i, e[i], a[i], tol);
        }
        if (exact && !same_on_all_ranks(a, nout))
            die("%s (%s): result differs between ranks: count=%zu in_place=%s", piece_mpi[pc], who,
                count, inplace ? "yes" : "no");
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

struct args {
    enum piece pc;
    double *x;
    double *y;
    int count;
};

static int call_args(int who, void *ctx)
{
    const struct args *c = ctx;
    return call(c->pc, who, c->x, c->y, c->count, 0);
}

/* The send buffer written before each timed call: for bcast the root's
 * buffer, by the root. */
static void write_args(void *ctx, unsigned stamp)
{
    const struct args *c = ctx;
    size_t n = n_in(c->pc, (size_t)c->count);

    if (c->pc == P_BCAST) {
        if (rank == 0)
            bench_write_values(c->y, n, stamp);
    } else {
        bench_write_values(c->x, n, stamp);
    }
}

/* The results of the values of stamp (bench_value): element i of this rank's
 * output for a block of count doubles. */
static double rsb_result(size_t i, unsigned stamp, size_t count)
{
    return bench_sum_values((size_t)rank * count + i, stamp);
}

static double allgather_result(size_t i, unsigned stamp, size_t count)
{
    return bench_value(i % count, (int)(i / count), stamp);
}

static double reduce_result(size_t i, unsigned stamp, size_t count)
{
    (void)count;
    return bench_sum_values(i, stamp);
}

static double bcast_result(size_t i, unsigned stamp, size_t count)
{
    (void)count;
    return bench_value(i, 0, stamp);
}

/* --verify: the call's result is that of the values written (reduce: at the
 * root). */
static void verify_args(void *ctx, int who, unsigned stamp)
{
    static double (*const result[P_MAX])(size_t, unsigned, size_t) = {rsb_result, allgather_result,
                                                                      reduce_result, bcast_result};
    const struct args *c = ctx;
    size_t count = (size_t)c->count;
    char routine[96];

    if (c->pc == P_REDUCE && rank != 0)
        return;
    snprintf(routine, sizeof routine, "%s (%s)", piece_mpi[c->pc],
             who < nlibs ? libs[who].name : "MPI library");
    bench_verify_values(c->y, n_out(c->pc, count), result[c->pc], count, stamp, routine);
}

/* Medians (seconds) of the slowest rank's time, t[0 .. nlibs] (the libraries,
 * MPI), and the tight loops' times t_loop (bench_measure); returns the number
 * of iterations. */
static int measure(enum piece pc, double *x, double *y, size_t count, double *t, double *t_loop)
{
    struct args c = {pc, x, y, (int)count};
    struct bench_timing b = {call_args, piece_mpi[pc], &c, write_args, verify_args};
    return bench_measure(&b, t, t_loop);
}

/* ---- The bound and the data-movement floor ----------------------------------------- */

/* Seconds the bytes piece pc of size m must read and write take at the
 * summed copy bandwidth (see the header); 0 when there is no bound. */
static double bound_s(enum piece pc, size_t m)
{
    if (bw.sum_Bps <= 0 || m < BOUND_MIN_BYTES)
        return 0;
    return (pc == P_BCAST ? nprocs : nprocs + 1) * (double)m / bw.sum_Bps;
}

/* One floor "call" of piece variant (bench_call_fn; who is ignored) for a
 * block of a->in / p (rsb) or a->in (allgather) bytes, or a buffer of a->m
 * (reduce, bcast): after a flag exchange, the copies between the ranks'
 * caches that the piece must make, into this rank's copy area. */
static int xfer_call(int who, void *ctx)
{
    const struct xfer_args *a = ctx;
    size_t blk = a->variant == P_RSB ? a->in / (size_t)nprocs : a->in;
    (void)who;

    xfer_sync();
    if (a->variant == P_BCAST) { /* every other rank: the root's buffer */
        if (rank != 0)
            memcpy(xf.copy, xfer_in(0), a->m);
        return MPI_SUCCESS;
    }
    if (a->variant == P_REDUCE && rank != 0)
        return MPI_SUCCESS;
    for (int k = 1; k < nprocs; k++) {
        int r = (rank + k) % nprocs;
        if (a->variant == P_RSB) /* this rank's block of every other rank's input */
            memcpy(xf.copy + (size_t)r * blk, xfer_in(r) + (size_t)rank * blk, blk);
        else if (a->variant == P_ALLGATHER) /* every other rank's block */
            memcpy(xf.copy + (size_t)r * blk, xfer_in(r), blk);
        else /* the root: every other rank's buffer */
            memcpy(xf.copy, xfer_in(r), a->m);
    }
    return MPI_SUCCESS;
}

/* The floor of piece pc for count (see the header), or 0 when not measured:
 * each rank's input (bcast: the root's buffer) written before each call, as
 * the calls' send buffers. */
static double xfer_s(enum piece pc, size_t count, int iters)
{
    struct xfer_args a = {.m = bytes_of(pc, count),
                          .in = n_in(pc, count) * sizeof(double),
                          .writer = pc == P_BCAST ? 0 : -1,
                          .variant = (int)pc};

    if (!xfer_on(a.m))
        return 0;
    return xfer_time(xfer_call, &a, iters);
}

/* ---- Main -------------------------------------------------------------------- */

static void print_header(void)
{
    char bound_head[32], xfer_head[32];

    printf("# MPI_Reduce_scatter_block (rsb), MPI_Allgather, MPI_Reduce, MPI_Bcast benchmark:\n");
    printf("# treeduce (%s) vs MPI library (PMPI_X), interleaved\n", bench_under_test("MPI_X"));
    bench_print_env();
    printf("# MPI_DOUBLE, MPI_SUM, out of place, root 0; times: median over iterations of the "
           "slowest rank, in us\n");
    printf("# size: per rank, rsb's input (p blocks), allgather's output (p blocks), reduce's and "
           "bcast's buffer\n");
    bench_print_ratios();
    printf("# algbw = size / %s time; busbw = algbw * (p-1)/p (rsb, allgather) or algbw "
           "(reduce, bcast); GB/s = 1e9 B/s\n",
           libs[0].name);
    if (bw.sum_Bps > 0) {
        char size[32];
        bench_print_copy_bw();
        bench_human(size, sizeof size, BOUND_MIN_BYTES);
        printf("# bound_us (size >= %s) = (p+1) m / (sum GB/s), bcast p m / (sum GB/s): the inputs "
               "read once and\n#   the outputs written once; %s/bound, mpi/bound = time / "
               "bound_us\n",
               size, libs[0].abbr);
    }
    if (xf.node != MPI_COMM_NULL)
        printf("# xfer_us: the copies between the ranks' caches the piece must make, through a "
               "shared segment after\n#   one flag exchange, timed like the calls, no "
               "arithmetic: rsb each rank its block of every\n#   other's input, allgather "
               "every other's block, reduce the root every other's buffer, bcast\n#   every "
               "other rank the root's; %s/xfer, mpi/xfer = time / xfer_us\n",
               libs[0].abbr);
    snprintf(bound_head, sizeof bound_head, "%s/bound", libs[0].abbr);
    snprintf(xfer_head, sizeof xfer_head, "%s/xfer", libs[0].abbr);
    printf("%-9s %10s %6s", "piece", "size", "iters");
    bench_print_time_heads();
    printf(" %10s %10s %10s %9s %9s %9s %8s %8s\n", "algbw_GB/s", "busbw_GB/s", "bound_us",
           bound_head, "mpi/bound", "xfer_us", xfer_head, "mpi/xfer");
    fflush(stdout);
}

int main(int argc, char **argv)
{
    double *x, *y, t0;
    size_t bytes, cap;
    FILE *csv = NULL;
    int pc, nchecks = 0;

    bench_init(&argc, &argv, "bench_pieces");
    if (bench_parse_args(argc, argv, parse_arg) != 0)
        return bench_usage(
            "usage: bench_pieces [--piece rsb|allgather|reduce|bcast|all] [--min-bytes N]\n"
            "                    [--max-bytes N] [--iters N] [--warmup N] [--csv FILE]\n"
            "                    [--copy-bytes N] [--lib LIB [--lib LIB [--lib mpi [--lib COPY]]]] "
            "[--also "
            "all]\n"
            "                    [--check-only] [--verify]\n"
            "  sizes in bytes, with an optional K, M or G suffix (1024-based);\n"
            "  --copy-bytes 0 skips the memory bandwidth measurement and the bound;\n"
            "  --lib: a libtreeduce_MACHINE.so to time instead of MPI_X; twice: NEW's and OLD's\n"
            "  side by side; --lib mpi as the second or third: the MPI library's routine timed\n"
            "  twice; a fourth --lib: a copy of OLD (one library loaded twice)\n"
            "  --also all: every algorithm that can be forced, and the fastest of them;\n"
            "  --verify: every timed call's result checked against the values written\n");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    bench_load_libs();
    if (also_all) {
        bench_find_runtime();
        for (pc = 0; pc < P_MAX; pc++)
            if (pieces_on & 1 << pc)
                bench_csv_candidates(piece_coll[pc]);
    }

    for (pc = 0; pc < P_MAX; pc++)
        if (pieces_on & 1 << pc) {
            if (also_all)
                bench_set_candidates(piece_coll[pc]);
            nchecks += check_piece(pc);
        }
    if (opt.check_only)
        return bench_check_only(nchecks);
    /* a block of one double per rank may exceed --max-bytes */
    cap = opt.max_bytes > (size_t)nprocs * sizeof(double) ? opt.max_bytes
                                                          : (size_t)nprocs * sizeof(double);
    if (copy_bytes > 0)
        measure_copy_bw(copy_bytes);
    xfer_init(cap);
    sweep_buffers(cap, &x, &y);

    if (rank == 0) {
        print_header();
        csv = bench_csv_open("ranks,algorithm,piece,bytes,count,iters,%s,%s_algbw_GBps,"
                             "mpi_algbw_GBps,%s_busbw_GBps,copy_sum_GBps,bound_us,%s_over_bound,"
                             "mpi_over_bound,xfer_us,%s_over_xfer,mpi_over_xfer",
                             bench_csv_time_heads(), libs[0].name, libs[0].name, libs[0].name,
                             libs[0].name);
    }

    t0 = MPI_Wtime();
    for (pc = 0; pc < P_MAX; pc++) {
        size_t last = 0;
        if (!(pieces_on & 1 << pc))
            continue;
        if (also_all)
            bench_set_candidates(piece_coll[pc]);
        bytes = opt.min_bytes;
        do {
            size_t count = count_for(pc, bytes), used = bytes_of(pc, count);
            double t[BENCH_MAX_ROUTINES + 1], t_loop[BENCH_MAX_ROUTINES + 1], xt;
            int iters;
            if (used != last) {
                last = used;
                iters = measure(pc, x, y, count, t, t_loop);
                xt = xfer_s(pc, count, iters);
                if (rank == 0) {
                    char size[32], xfer[3][32] = {"-", "-", "-"}, bound[3][32] = {"-", "-", "-"},
                                   copy[32] = "";
                    double bt = bound_s(pc, used);
                    double algbw = (double)used / t[0] / 1e9;
                    double busbw =
                        pc == P_RSB || pc == P_ALLGATHER ? algbw * (nprocs - 1) / nprocs : algbw;
                    bench_human(size, sizeof size, used);
                    if (bt > 0) {
                        snprintf(bound[0], sizeof bound[0], "%.2f", bt * 1e6);
                        snprintf(bound[1], sizeof bound[1], "%.3f", t[0] / bt);
                        snprintf(bound[2], sizeof bound[2], "%.3f", t[nlibs] / bt);
                    }
                    if (xt > 0) {
                        snprintf(xfer[0], sizeof xfer[0], "%.2f", xt * 1e6);
                        snprintf(xfer[1], sizeof xfer[1], "%.3f", t[0] / xt);
                        snprintf(xfer[2], sizeof xfer[2], "%.3f", t[nlibs] / xt);
                    }
                    printf("%-9s %10s %6d", piece_name[pc], size, iters);
                    bench_print_times(t, t_loop);
                    printf(" %10.3f %10.3f %10s %9s %9s %9s %8s %8s\n", algbw, busbw, bound[0],
                           bound[1], bound[2], xfer[0], xfer[1], xfer[2]);
                    fflush(stdout);
                    if (bt <= 0) /* empty fields in the CSV */
                        bound[0][0] = bound[1][0] = bound[2][0] = '\0';
                    if (xt <= 0)
                        xfer[0][0] = xfer[1][0] = xfer[2][0] = '\0';
                    if (bw.sum_Bps > 0)
                        snprintf(copy, sizeof copy, "%.4f", bw.sum_Bps / 1e9);
                    if (csv) {
                        fprintf(csv, "%d,%s,%s,%zu,%zu,%d,", nprocs, bench_algorithm(),
                                piece_name[pc], used, used / sizeof(double), iters);
                        bench_csv_times(csv, t, t_loop);
                        fprintf(csv, ",%.4f,%.4f,%.4f,%s,%s,%s,%s,%s,%s,%s\n", algbw,
                                (double)used / t[nlibs] / 1e9, busbw, copy, bound[0], bound[1],
                                bound[2], xfer[0], xfer[1], xfer[2]);
                    }
                }
            }
        } while (bench_next_size(&bytes));
    }
    bench_sweep_end(t0, csv);
    free(x);
    free(y);
    free(bw.rank_Bps);
    xfer_free();
    MPI_Finalize();
    return 0;
}
