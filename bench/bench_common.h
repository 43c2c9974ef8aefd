/* bench_common.h - what bench_allreduce.c, bench_pieces.c and bench_persistent.c
 * have in common (bench_common.c).
 *
 * Each times routines of treeduce against the MPI library's own (PMPI_X) in
 * one job, interleaved call by call, after comparing their results.
 * treeduce's routine is the program's MPI_X (treeduce linked in or
 * preloaded), or that of one or two libraries given with --lib: with two
 * (NEW, then OLD) both builds run in the same process and the tables add
 * new/old.  Shared here:
 *   - the options all take (--min-bytes, --max-bytes, --iters, --warmup,
 *     --csv, --lib, --check-only, --verify) and their parsing, sizes with K,
 *     M or G suffixes;
 *   - the treeduce libraries under test (libs[], bench_load_libs), and
 *     routines timed beside them: the first library's allreduce with an
 *     algorithm named (bench_allreduce --also NAME), or every algorithm
 *     that can be forced for the collective (--also all: trd_candidates and
 *     the runtime's trd_X_with routines, found by name in that library;
 *     bench_set_candidates), shown as the fastest of them per size;
 *   - die() and xmalloc();
 *   - the data: random doubles (fill_check, sweep_buffers), hashes of
 *     results compared across ranks (same_on_all_ranks), and the values a
 *     rank writes to its send buffer before each timed call (bench_value,
 *     bench_write_values);
 *   - the timing: the send buffer written, a barrier, then the call, timed
 *     (bench_timed); warm-up, iterations fitted to SECONDS_PER_SIZE
 *     (iters_for) and medians of the slowest rank's times for interleaved
 *     calls, one per library and the MPI library's (bench_measure); then
 *     each routine in a tight loop on the same buffers, not written
 *     (bench_loop);
 *   - the copy bandwidth of the ranks at once (measure_copy_bw), for the
 *     memory bounds of bench_allreduce and bench_pieces;
 *   - the floors: a window shared by the ranks of one node, in which a
 *     benchmark times the copies between the ranks' caches that a
 *     collective must make, with no library and no arithmetic (xfer_init,
 *     xfer_time);
 *   - the table's common header lines and time columns, sizes in B .. GiB,
 *     the CSV file and the sweep over sizes.
 *
 * The timing (bench_timed .. bench_measure, xfer_time) and the floors' copy
 * helpers are static inline here: compiled beside the bench_timing a program
 * builds, its routine is a direct call in the timed code, not one through a
 * pointer.
 *
 * A benchmark calls bench_init first.  Sizes are in bytes, counts in
 * elements (doubles), times in seconds unless a name says _us.
 */
#ifndef BENCH_COMMON_H
#define BENCH_COMMON_H

#include <mpi.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "treeduce.h" /* types of the runtime's routines that --also all finds by name */

#define BENCH_MAX_LIBS 4        /* --lib NEW --lib OLD --lib mpi --lib OLD_COPY */
#define BENCH_MAX_CANDIDATES 64 /* --also all: forced algorithms of one collective */
/* the libraries, and the algorithms beside them (--also) */
#define BENCH_MAX_ROUTINES (BENCH_MAX_LIBS + BENCH_MAX_CANDIDATES)

/* The options every benchmark takes (see bench_parse_args). */
struct bench_opts {
    size_t min_bytes, max_bytes; /* --min-bytes, --max-bytes: the sweep's sizes */
    int iters, warmup;           /* --iters: most iterations per size; --warmup: rounds, calls */
    const char *csv;             /* --csv FILE, or NULL */
    int check_only;
    const char *lib[BENCH_MAX_LIBS]; /* --lib, in order */
    int nlib;
    int verify; /* --verify: each timed call's result checked (bench_timed, bench_loop) */
};
extern struct bench_opts opt;

/* This rank and the number of ranks in MPI_COMM_WORLD (bench_init). */
extern int rank, nprocs;

/* Reports msg (printf-style) on stderr as "PROG: rank R: msg", in one line,
 * and aborts the job (MPI_Abort, error code 1). */
void die(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* malloc of n bytes (at least 1), or die(): never NULL.  The caller frees. */
void *xmalloc(size_t n);

/* ---- Options -------------------------------------------------------------- */

/* Reads s, a size in bytes with an optional K, M or G suffix (1024-based;
 * "KiB" and "KB" read as "K"), at most 1 TiB, into *out.  Returns 0, or -1
 * (*out untouched) when s is not such a size. */
int parse_size(const char *s, size_t *out);

/* Parses the command line into opt: --check-only, --verify and the options with a
 * value shared by every benchmark here, any other option with a value
 * through extra (NULL: none), which gets the option and its value and
 * returns 1 if it took them, 0 if it does not know the option, -1 if the
 * value is invalid.  --min-bytes is rounded up to whole doubles.  Returns 0,
 * or -1 for a bad command line. */
int bench_parse_args(int argc, char **argv, int (*extra)(const char *a, const char *v));

/* ---- The treeduce libraries under test --------------------------------------- */

/* A treeduce library's routines, with the MPI routines' signatures. */
typedef int (*bench_allreduce_fn)(const void *, void *, int, MPI_Datatype, MPI_Op, MPI_Comm);
typedef int (*bench_rsb_fn)(const void *, void *, int, MPI_Datatype, MPI_Op, MPI_Comm);
typedef int (*bench_allgather_fn)(const void *, int, MPI_Datatype, void *, int, MPI_Datatype,
                                  MPI_Comm);
typedef int (*bench_reduce_fn)(const void *, void *, int, MPI_Datatype, MPI_Op, int, MPI_Comm);
typedef int (*bench_bcast_fn)(void *, int, MPI_Datatype, int, MPI_Comm);
typedef int (*bench_allreduce_with_fn)(const void *, void *, int, MPI_Datatype, MPI_Op, MPI_Comm,
                                       const char *);

struct bench_lib {
    const char *name; /* "treeduce"; with two libraries "new" and "old" */
    const char *abbr; /* the same in the table's ratio columns: "tr", "new", "old" */
    const char *path; /* --lib, or NULL: the program's own MPI_ routines */
    bench_allreduce_fn allreduce;
    bench_rsb_fn reduce_scatter_block;
    bench_allgather_fn allgather;
    bench_reduce_fn reduce;
    bench_bcast_fn bcast;
    bench_allreduce_with_fn allreduce_with; /* trd_MACHINE_allreduce_with, or NULL */
    const char *algorithm; /* a routine timed beside the libraries: the first library's
                            * allreduce with this algorithm (--also); NULL: a library */
    void *handle;          /* dlopen's (--lib), or NULL: the program's own symbols */
    char machine[64];      /* MACHINE of libtreeduce_MACHINE.so; "local" when linked */
    int forced;            /* --also all: a forced candidate, run through brt (algorithm) */
    int fell;              /* forced: fell back to the MPI library's routine at this size */
    int col;               /* forced: its column among the CSV's candidates */
};

/* The routines under test, libs[0 .. nlibs): without --lib, libs[0] is the
 * program's MPI_ routines (treeduce's when it is linked in or preloaded).
 * Routine nlibs is the MPI library's (PMPI_).  libs[0 .. nbase): the
 * libraries and --also NAME; then the forced algorithms of --also all. */
extern struct bench_lib libs[BENCH_MAX_ROUTINES];
extern int nlibs, nbase;

/* Replaces libs[] by the --lib libraries, if any: "treeduce" for one, "new"
 * and "old" for two, "mpi_b" for a third, which must be "mpi", and "old_b"
 * for a fourth, a copy of OLD in a file of its own (the same library loaded
 * twice: what the run's noise makes of one library's two instances, each
 * with its own shared-memory segment); "mpi" names the MPI library's
 * routines, called through PMPI_ as a routine of their own.  A --lib that
 * cannot be used ends the job with a message. */
void bench_load_libs(void);

/* ---- Every forced algorithm (--also all) ------------------------------------------ */

/* The first library's runtime, for --also all (bench_find_runtime); all NULL
 * before. */
struct bench_runtime {
    const trd_machine *machine;
    __typeof__(trd_candidates) *candidates;
    __typeof__(trd_fell_back) *fell_back;
    __typeof__(trd_allreduce_with) *allreduce_with;
    __typeof__(trd_reduce_scatter_block_with) *reduce_scatter_block_with;
    __typeof__(trd_allgather_with) *allgather_with;
    __typeof__(trd_reduce_with) *reduce_with;
    __typeof__(trd_bcast_with) *bcast_with;
};
extern struct bench_runtime brt;

/* Finds brt in the first library (--lib) or the program (linked in): its
 * machine (trd_MACHINE_machine()), trd_candidates, trd_fell_back and the
 * trd_X_with routines; aborts the job when one is missing. */
void bench_find_runtime(void);

/* Adds the forced algorithms of collective coll (TRD_ALLREDUCE ...) on
 * MPI_COMM_WORLD, "mpi" left out, to the CSV's candidate columns: the union,
 * by name, of the candidates of every collective benchmarked, in the order
 * first listed.  Needs bench_find_runtime. */
void bench_csv_candidates(int coll);

/* The routines after the libraries become coll's forced algorithms: libs[nbase
 * ..] run brt's trd_X_with with each (bench_csv_candidates(coll) first). */
void bench_set_candidates(int coll);

/* Whether --also all runs: forced candidates follow the libraries. */
int bench_all(void);

/* ---- Data ------------------------------------------------------------------ */

/* The next 64 random bits of the SplitMix64 generator whose state is *s. */
uint64_t rng_next(uint64_t *s);

/* The input x[0..n) of this rank for a correctness check of count: random
 * doubles in [-1, 1] scaled by 2^-8 .. 2^8 (so that sums round), seeded by
 * the rank and count. */
void fill_check(double *x, size_t n, size_t count);

/* Whether the n doubles of a are bitwise the same on every rank.  A
 * collective on MPI_COMM_WORLD. */
int same_on_all_ranks(const double *a, size_t n);

/* The buffers of the sweep, bytes each (whole doubles): *x random (different
 * on each rank), *y zeroed; never NULL, the caller frees both. */
void sweep_buffers(size_t bytes, double **x, double **y);

/* Element i of rank r's send buffer as written before the timed call
 * numbered stamp: a small integer (sums of a few thousand ranks' are exact in
 * any order), a pattern over i and r plus the stamp's, so that a buffer not
 * written shows in the results (--verify). */
double bench_value(size_t i, int r, unsigned stamp);

/* Writes this rank's values of stamp to x[0..n) (bench_value), as an
 * application writes its send buffer before a call: the lines end dirty in
 * this core's cache. */
void bench_write_values(double *x, size_t n, unsigned stamp);

/* The sum over the ranks of element i of stamp: what a reduction returns. */
double bench_sum_values(size_t i, unsigned stamp);

/* bench_sum_values as an expected value of bench_verify_values (arg unused):
 * an allreduce's result. */
double bench_sum_of(size_t i, unsigned stamp, size_t unused);

/* Compares y[0..n) with expected(i, stamp, arg) for --verify; aborts the
 * job, naming routine, at the first element that differs. */
void bench_verify_values(const double *y, size_t n,
                         double (*expected)(size_t i, unsigned stamp, size_t arg), size_t arg,
                         unsigned stamp, const char *routine);

/* ---- Timing ------------------------------------------------------------------ */

/* One call of a routine under test with the arguments in ctx: treeduce's of
 * libs[who], or the MPI library's for who == nlibs; returns its error code. */
typedef int (*bench_call_fn)(int who, void *ctx);

/* What bench_timed, bench_measure and bench_loop time: a routine's call, and
 * the write of the send buffers before it. */
struct bench_timing {
    bench_call_fn call;
    const char *name; /* for the messages: "MPI_Allreduce" */
    void *ctx;        /* call's, write's and verify's argument */
    /* Writes this rank's send buffer in ctx with the values of stamp
     * (bench_write_values), before each call of bench_timed; NULL: none. */
    void (*write)(void *ctx, unsigned stamp);
    /* With --verify, after each call of bench_timed and each tight loop:
     * aborts the job if the call's results are not those of the values of
     * stamp; NULL: none. */
    void (*verify)(void *ctx, int who, unsigned stamp);
};

/* The stamp of the last write (bench_timed): every rank makes the same calls. */
extern unsigned bench_stamp;

/* The median of t[0..n), n >= 1, which it sorts in place. */
double median(double *t, int n);

/* Iterations that fit SECONDS_PER_SIZE (half a second), given the seconds
 * one round (a call of each routine) took in the warm-up on the slowest
 * rank: at most --iters, at least MIN_ITERS (20) where --iters allows. */
int iters_for(double round_s);

/* The routine that makes call k of round i: the libraries first, starting one
 * further on each round, so that with two neither always runs just after the
 * MPI library's call (which leaves the caches its way); the MPI library's last. */
int bench_turn(int i, int k);

/* With --also all: the routine of call k of round i, in an order shuffled by
 * i, the same on every rank.  In a fixed order each routine would always
 * follow the same one, and find the caches and the segment as that one
 * leaves them. */
int bench_turn_shuffled(int i, int k);

/* Seconds one call of routine who takes on this rank: its send buffer written
 * first (b->write, values that change from call to call), then a barrier,
 * then the call, timed: the write is not timed, but the call finds the
 * buffer as an application leaves it, its lines dirty in the writer's cache.
 * An error aborts the job. */
static inline double bench_timed(const struct bench_timing *b, int who)
{
    double t0;
    int rc;

    if (b->write)
        b->write(b->ctx, ++bench_stamp);
    PMPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    rc = b->call(who, b->ctx);
    t0 = MPI_Wtime() - t0;
    if (rc != MPI_SUCCESS)
        die("%s returned an error", b->name);
    if (who < nlibs && libs[who].forced && brt.fell_back())
        libs[who].fell = 1;
    if (opt.verify && b->verify)
        b->verify(b->ctx, who, bench_stamp);
    return t0;
}

/* An untimed call of routine who, its send buffer written first, as
 * bench_timed makes it.  The interleaved rounds make one before each timed
 * call of a routine that another routine's call preceded: an application
 * repeating a call finds the node as that call left it (its segment's lines
 * in the caches where it left them, its memory mapped), never as another
 * routine leaves it.  A call after another routine's pays for that
 * routine's aftermath: MPICH's allreduce from 64 MiB maps and unmaps a
 * temporary buffer of the message's size in every call, so that in a
 * virtual machine that shadows the page tables the next call faults on all
 * of its own memory again (2-4x its time). */
static inline void bench_settle(const struct bench_timing *b, int who)
{
    if (b->write)
        b->write(b->ctx, ++bench_stamp);
    PMPI_Barrier(MPI_COMM_WORLD);
    if (b->call(who, b->ctx) != MPI_SUCCESS)
        die("%s returned an error", b->name);
}

/* bench_timed of routine who after routine prev (-1: none): settled first
 * (bench_settle) where prev is another routine. */
static inline double bench_timed_after(const struct bench_timing *b, int who, int prev)
{
    if (prev != who)
        bench_settle(b, who);
    return bench_timed(b, who);
}

/* The tight loop, as OSU times: --warmup calls of routine who, a barrier, then
 * n calls back to back on the buffers as they are (hot, not written); the
 * slowest rank's time over n (seconds).  Every rank must call it. */
static inline double bench_loop(const struct bench_timing *b, int who, int n)
{
    double t;
    int rc = MPI_SUCCESS, i;

    for (i = 0; i < opt.warmup && rc == MPI_SUCCESS; i++)
        rc = b->call(who, b->ctx);
    PMPI_Barrier(MPI_COMM_WORLD);
    t = MPI_Wtime();
    for (i = 0; i < n && rc == MPI_SUCCESS; i++)
        rc = b->call(who, b->ctx);
    t = MPI_Wtime() - t;
    if (rc != MPI_SUCCESS)
        die("%s returned an error in the tight loop", b->name);
    if (opt.verify && b->verify)
        b->verify(b->ctx, who, bench_stamp);
    PMPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return t / n;
}

/* Times n routines (who = 0 .. n-1) interleaved, call k of round i being
 * routine turn(i, k) (each routine once per round; bench_timed: each after
 * the write of its send buffer; each after an untimed call of its own,
 * bench_settle), after --warmup rounds; t_out[who]: median
 * (seconds) of the slowest rank's time; returns the number of iterations. */
static inline int bench_measure_turns(const struct bench_timing *b, int n,
                                      int (*turn)(int i, int k), double *t_out)
{
    int i, k, iters, warm = opt.warmup > 0 ? opt.warmup : 1, fell[BENCH_MAX_ROUTINES];
    double round_s, *t = xmalloc((size_t)warm * sizeof *t);

    for (k = 0; k < nlibs; k++)
        libs[k].fell = 0;
    int prev = -1; /* the routine called last */

    for (i = 0; i < warm; i++)
        for (t[i] = 0, k = 0; k < n; k++) {
            int who = turn(i, k);
            t[i] += bench_timed_after(b, who, prev);
            prev = who;
        }
    /* The median round, as the first may pay for first touch; every rank must
     * run the same number of iterations. */
    round_s = median(t, warm);
    free(t);
    PMPI_Allreduce(MPI_IN_PLACE, &round_s, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    iters = iters_for(round_s);
    t = xmalloc((size_t)n * (size_t)iters * sizeof *t);
    for (i = 0; i < iters; i++)
        for (k = 0; k < n; k++) {
            int who = turn(i, k);
            t[(size_t)who * (size_t)iters + (size_t)i] = bench_timed_after(b, who, prev);
            prev = who;
        }
    PMPI_Allreduce(MPI_IN_PLACE, t, n * iters, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    for (k = 0; k < n; k++)
        t_out[k] = median(t + (size_t)k * (size_t)iters, iters);
    free(t);
    /* a forced algorithm that fell back on any rank, in any call */
    for (k = 0; k < nlibs; k++)
        fell[k] = libs[k].fell;
    PMPI_Allreduce(MPI_IN_PLACE, fell, nlibs, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
    for (k = 0; k < nlibs; k++)
        libs[k].fell = fell[k];
    return iters;
}

/* Times b interleaved, a call of each library's routine then the MPI
 * library's per round (bench_turn; with --also all in a shuffled order),
 * after --warmup rounds; t[who] (0 .. nlibs): median (seconds) of the
 * slowest rank's time.  Then, as many calls each, the tight loop of each
 * library's routine, --also NAME's and the MPI library's (bench_loop):
 * t_loop[who] for who < nbase and who == nlibs.  Returns the number of
 * iterations. */
static inline int bench_measure(const struct bench_timing *b, double *t_out, double *t_loop)
{
    int iters =
        bench_measure_turns(b, nlibs + 1, bench_all() ? bench_turn_shuffled : bench_turn, t_out);

    for (int l = 0; l < nbase; l++)
        t_loop[l] = bench_loop(b, l, iters);
    t_loop[nlibs] = bench_loop(b, nlibs, iters);
    return iters;
}

/* ---- Memory bandwidth ---------------------------------------------------------- */

/* Before the sweep, bench_allreduce and bench_pieces measure the copy
 * bandwidth (measure_copy_bw).  From BOUND_MIN_BYTES up, the benchmarks'
 * bound_us is the time the bytes that the collective must read and write
 * take at the summed bandwidth. */
#define BOUND_MIN_BYTES (1u << 20) /* below, the caches hold the data */

/* --copy-bytes: bytes each rank copies in measure_copy_bw (256 MiB); 0: no
 * measurement, no bound. */
extern size_t copy_bytes;

/* Copy bandwidth, read + write bytes per second: each rank's and the sum. */
struct bench_bw {
    double *rank_Bps; /* [nprocs], rank 0 only; the program frees it */
    double sum_Bps;   /* 0: not measured */
};
extern struct bench_bw bw;

/* Measures bw with buffers of bytes on every rank: every rank at once copies
 * bytes with memcpy, COPY_REPS (5) times after a barrier each, buffers
 * touched beforehand.  A copy of b bytes moves 2b bytes (b read, b written; as
 * STREAM counts); a rank's bandwidth is 2b over its time, best of the
 * repetitions, and the sum the largest over the repetitions of the ranks'
 * bandwidths summed.  A collective on MPI_COMM_WORLD. */
void measure_copy_bw(size_t bytes);

/* The header lines on the copy bandwidth measured (rank 0). */
void bench_print_copy_bw(void);

/* ---- The floors: copies between the ranks' caches ------------------------------ */

/* When every rank shares one node, a window shared by them: per rank a flag
 * line, then an input and an output area of max bytes each.  A benchmark's
 * floor "call" (a bench_call_fn) makes, in it, the copies between the
 * ranks' caches that its collective must make, with flag exchanges
 * (xfer_sync) where it has to wait for the others, and no library and no
 * arithmetic; xfer_time times it like the calls. */
#define XFER_FLAG_BYTES 4096 /* a rank's flag, then its input and output areas */

struct bench_xfer {
    MPI_Comm node; /* MPI_COMM_NULL: the ranks do not share one node */
    MPI_Win win;
    char **area; /* [nprocs] each rank's flag line, input, output */
    char *copy;  /* [max bytes] where this rank's copies land */
    size_t max;  /* bytes of each input and output area */
    uint64_t epoch;
};
extern struct bench_xfer xf;

/* Rank r's flag, at the start of its area. */
static inline _Atomic uint64_t *xfer_flag(int r)
{
    return (_Atomic uint64_t *)xf.area[r];
}

/* Rank r's input area. */
static inline char *xfer_in(int r)
{
    return xf.area[r] + XFER_FLAG_BYTES;
}

/* Rank r's output area. */
static inline char *xfer_out(int r)
{
    return xf.area[r] + XFER_FLAG_BYTES + xf.max;
}

/* Announce the next epoch and wait for every rank's. */
static inline void xfer_sync(void)
{
    uint64_t e = ++xf.epoch;
    atomic_store_explicit(xfer_flag(rank), e, memory_order_release);
    for (int r = 0; r < nprocs; r++)
        while (atomic_load_explicit(xfer_flag(r), memory_order_acquire) < e)
            ;
}

/* The shared window with max-byte input and output areas per rank, inputs
 * random, outputs zeroed; leaves xf.node null when the ranks span several
 * nodes or the window fails.  A collective on MPI_COMM_WORLD. */
void xfer_init(size_t max);

/* Free what xfer_init() made (nothing where it made nothing). */
void xfer_free(void);

/* Whether a floor of m bytes per area can be timed. */
int xfer_on(size_t m);

/* Block r of m bytes split p ways on double boundaries: [*lo, *lo + *len). */
static inline void xfer_block(size_t m, int r, size_t *lo, size_t *len)
{
    size_t n = m / sizeof(double), q = n / (size_t)nprocs, x = n % (size_t)nprocs;
    size_t a = (size_t)r * q + ((size_t)r < x ? (size_t)r : x);
    *lo = a * sizeof(double);
    *len = (q + ((size_t)r < x)) * sizeof(double);
}

/* A floor call's arguments. */
struct xfer_args {
    size_t m;    /* the message's bytes, as the benchmark counts them */
    size_t in;   /* bytes of its input area a rank writes before each call */
    int writer;  /* the one rank that writes (bcast's root), or -1: every rank */
    int variant; /* which copies: the benchmark's */
};

/* The write before a floor call (struct bench_timing's write): the input
 * area, as the calls' send buffers. */
static inline void xfer_write(void *ctx, unsigned stamp)
{
    const struct xfer_args *a = ctx;

    if (a->writer < 0 || a->writer == rank)
        bench_write_values((double *)xfer_in(rank), a->in / sizeof(double), stamp);
}

/* Median (seconds) of the slowest rank's time of iters floor calls a, each
 * timed like the calls (bench_timed: the write, a barrier, the call); every
 * rank must call it. */
static inline double xfer_time(bench_call_fn call, struct xfer_args *a, int iters)
{
    struct bench_timing b = {call, "the data-movement floor", a, xfer_write, NULL};
    double *t = xmalloc((size_t)iters * sizeof *t), med;

    for (int i = 0; i < iters; i++)
        t[i] = bench_timed(&b, 0);
    PMPI_Allreduce(MPI_IN_PLACE, t, iters, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    med = median(t, iters);
    free(t);
    return med;
}

/* ---- Start, output and end ----------------------------------------------------- */

/* MPI_Init, and rank and nprocs of MPI_COMM_WORLD set; prog, the program's
 * name (a string that lives as long as the program), begins die()'s
 * messages.  With BENCH_THREAD_MULTIPLE=1 in the environment, as
 * bench_init_thread(argc, argv, prog, 1). */
void bench_init(int *argc, char ***argv, const char *prog);

/* bench_init, with MPI_Init_thread(MPI_THREAD_MULTIPLE) where multiple is
 * non-zero (dies where MPI gives less): what TREEDUCE_ASYNC_PROGRESS=1's
 * thread and MPICH's MPIR_CVAR_ASYNC_PROGRESS=1 need. */
void bench_init_thread(int *argc, char ***argv, const char *prog, int multiple);

/* For a bad command line: usage on rank 0's stderr, MPI finalized; returns
 * the exit status, 2. */
int bench_usage(const char *usage);

/* For --check-only: the tally of nchecks correctness checks, all passed, on
 * rank 0, MPI finalized; returns the exit status, 0. */
int bench_check_only(int nchecks);

/* TREEDUCE_ALGORITHM, or "" when unset. */
const char *bench_algorithm(void);

/* The header lines on the run's environment: the --lib libraries, the MPI
 * library (one line, blanks squeezed), the ranks, TREEDUCE_ALGORITHM and
 * TREEDUCE_HOSTS. */
void bench_print_env(void);

/* What the header's first lines call treeduce's routine: linked, the
 * program's own MPI_ routine, else the --lib libraries. */
const char *bench_under_test(const char *linked);

/* The header lines on the time columns and their ratios. */
void bench_print_ratios(void);

/* The table's time columns, each after a blank: one per library and routine
 * beside them, the MPI library's, new/old (two libraries), each routine's
 * time over the first library's, speed-up (MPI time / the first's); then the
 * tight loops' times, the same routines', and their speed-up. */
void bench_print_time_heads(void);

/* The time columns of a row with the medians t[0 .. nlibs] and the tight
 * loops' times t_loop (bench_measure; seconds, printed in microseconds). */
void bench_print_times(const double *t, const double *t_loop);

/* The CSV's names of the time columns, as bench_csv_times writes them, in a
 * static buffer. */
const char *bench_csv_time_heads(void);

/* The time columns of a CSV line (no comma before or after): t and t_loop as
 * for bench_print_times. */
void bench_csv_times(FILE *csv, const double *t, const double *t_loop);

/* The --csv file with its line of column names (printf-style), or NULL (no
 * --csv, or it cannot be opened: reported).  Rank 0 only. */
FILE *bench_csv_open(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* bytes for the tables, in B, KiB, MiB or GiB ("64 KiB", "1.5 MiB"), into
 * buf of n bytes. */
void bench_human(char *buf, size_t n, size_t bytes);

/* The next size of the sweep, twice *bytes: 1, or 0 (*bytes untouched) when
 * it would pass --max-bytes. */
int bench_next_size(size_t *bytes);

/* After a sweep that started at MPI_Wtime() t0: its time and the CSV file
 * closed, on rank 0. */
void bench_sweep_end(double t0, FILE *csv);

#endif /* BENCH_COMMON_H */
