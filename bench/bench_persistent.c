/* bench_persistent.c - times treeduce's blocking, persistent and nonblocking
 * allreduce against the MPI library's own three.
 *
 * Linked with treeduce (bench_persistent_local), MPI_Allreduce,
 * MPI_Allreduce_init, MPI_Iallreduce and the MPI_Start and MPI_Wait that
 * complete their requests are treeduce's; the PMPI_ routines are the MPI
 * library's.  Six ways of making one allreduce of MPI_DOUBLE with MPI_SUM,
 * out of place, run in the same job, interleaved call by call:
 *   tr       MPI_Allreduce
 *   tr_pers  MPI_Start + MPI_Wait on a request of MPI_Allreduce_init
 *   tr_nb    MPI_Iallreduce + MPI_Wait
 *   mpi, mpi_pers, mpi_nb  the same with PMPI_Allreduce, PMPI_Allreduce_init
 *            + PMPI_Start + PMPI_Wait, PMPI_Iallreduce + PMPI_Wait.
 * The persistent requests are made once per size, outside the timing (the
 * setup a persistent call pays once, [FLEX §4]).  Before each call every
 * rank writes its send buffer with values new to that call (bench_value),
 * then a PMPI_Barrier, then the call, timed with MPI_Wtime: it finds the
 * buffer as an application leaves it.  An iteration's time is the slowest
 * rank's, and the table reports medians over iterations.  The six take turns
 * at going first, one further on each round.  Then each in the tight loop
 * OSU times (iterations calls back to back on the same buffers, not written,
 * after one barrier; the slowest rank's time over the calls): NAME_loop_us.
 * --verify compares every timed call's result, and each loop's last, with
 * the sum of the values written (exact).
 *
 * Before timing a size, each of the five is compared with PMPI_Allreduce
 * twice, on integer-valued inputs (sums exact, so results must be equal
 * bitwise), new inputs the second time (a persistent request must read its
 * buffer at each start); a mismatch aborts the run.
 *
 * Usage: bench_persistent [--min-bytes N] [--max-bytes N] [--iters N]
 *                         [--warmup N] [--csv FILE] [--check-only] [--verify]
 * Sizes take a K, M or G suffix (powers of 1024) and go up in powers of
 * two.  --iters is the most iterations per size; a size runs fewer when the
 * warm-up shows they would take over SECONDS_PER_SIZE, but at least
 * MIN_ITERS.
 */
#include "bench_common.h"

#include <string.h>

/* The six routines timed, in the table's order. */
enum way { W_TR, W_TR_PERS, W_TR_NB, W_MPI, W_MPI_PERS, W_MPI_NB, W_N_WAYS };

/* The ways' names in the columns: NAME_us, NAME_loop_us. */
static const char *const way_col[W_N_WAYS] = {"tr",  "tr_pers",  "tr_nb",
                                              "mpi", "mpi_pers", "mpi_nb"};

static const char *const way_name[W_N_WAYS] = {
    "MPI_Allreduce",  "MPI_Start/MPI_Wait (treeduce persistent)", "MPI_Iallreduce",
    "PMPI_Allreduce", "PMPI_Start/PMPI_Wait (MPI persistent)",    "PMPI_Iallreduce"};

/* The arguments of one size: buffers, count in elements, and the persistent
 * requests of both libraries bound to them. */
struct args {
    double *x;
    double *y;
    int count;
    MPI_Request tr_req, mpi_req;
};

/* One call of way who (bench_call_fn); returns its error code. */
static int call(int who, void *ctx)
{
    struct args *c = ctx;
    MPI_Request r;
    int rc;

    switch ((enum way)who) {
    case W_TR:
        return MPI_Allreduce(c->x, c->y, c->count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    case W_TR_PERS:
        rc = MPI_Start(&c->tr_req);
        return rc == MPI_SUCCESS ? MPI_Wait(&c->tr_req, MPI_STATUS_IGNORE) : rc;
    case W_TR_NB:
        rc = MPI_Iallreduce(c->x, c->y, c->count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &r);
        return rc == MPI_SUCCESS ? MPI_Wait(&r, MPI_STATUS_IGNORE) : rc;
    case W_MPI:
        return PMPI_Allreduce(c->x, c->y, c->count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    case W_MPI_PERS:
        rc = PMPI_Start(&c->mpi_req);
        return rc == MPI_SUCCESS ? PMPI_Wait(&c->mpi_req, MPI_STATUS_IGNORE) : rc;
    case W_MPI_NB:
        rc = PMPI_Iallreduce(c->x, c->y, c->count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &r);
        return rc == MPI_SUCCESS ? PMPI_Wait(&r, MPI_STATUS_IGNORE) : rc;
    default:
        return MPI_ERR_ARG;
    }
}

/* The send buffer written before each timed call (the persistent requests
 * read it at each start). */
static void write_args(void *ctx, unsigned stamp)
{
    const struct args *c = ctx;
    bench_write_values(c->x, (size_t)c->count, stamp);
}

/* --verify: the call's result is the sum of the values written. */
static void verify_args(void *ctx, int who, unsigned stamp)
{
    const struct args *c = ctx;
    bench_verify_values(c->y, (size_t)c->count, bench_sum_of, 0, stamp, way_name[who]);
}

/* Call k of round i: each way once per round, starting one further each
 * round, so that none always follows the same other (whose caches it finds). */
static int turn(int i, int k)
{
    return (i + k) % W_N_WAYS;
}

/* Integer values in [-1000, 1000] for this rank (seed varies the draw):
 * their sums are exact in any order. */
static void fill_int(double *x, size_t n, uint64_t seed)
{
    uint64_t s = seed + (uint64_t)rank * 7919;

    for (size_t i = 0; i < n; i++)
        x[i] = (double)(int64_t)(rng_next(&s) % 2001) - 1000;
}

/* Compares every way but PMPI_Allreduce with PMPI_Allreduce on c's buffers
 * (x refilled, y overwritten; e a buffer of count doubles), twice with
 * different inputs; aborts on a mismatch.  Returns the number of checks. */
static int check(struct args *c, double *e)
{
    size_t n = (size_t)c->count;
    int nchecks = 0;

    for (int round = 0; round < 2; round++) {
        fill_int(c->x, n, 0x5eed0000u + n * 2 + (uint64_t)round);
        if (PMPI_Allreduce(c->x, e, c->count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD) != MPI_SUCCESS)
            die("PMPI_Allreduce returned an error during the correctness check");
        for (int w = 0; w < W_N_WAYS; w++) {
            if (w == W_MPI)
                continue;
            memset(c->y, 0xff, n * sizeof *c->y); /* NaNs: a result not written shows */
            if (call(w, c) != MPI_SUCCESS)
                die("%s returned an error during the correctness check", way_name[w]);
            for (size_t i = 0; i < n; i++)
                if (c->y[i] != e[i])
                    die("wrong result (%s): count=%zu round=%d index=%zu expected=%.17g "
                        "actual=%.17g",
                        way_name[w], n, round, i, e[i], c->y[i]);
            nchecks++;
        }
    }
    return nchecks;
}

static void print_header(void)
{
    printf("# allreduce benchmark: blocking, persistent (MPI_Allreduce_init once per size, then "
           "MPI_Start +\n# MPI_Wait per call) and nonblocking (MPI_Iallreduce + MPI_Wait), "
           "treeduce (linked) vs MPI library\n# (PMPI_), the six interleaved\n");
    bench_print_env();
    printf("# MPI_DOUBLE, MPI_SUM, out of place; times: median over iterations of the slowest "
           "rank, in us\n");
    printf("# pers/blk = treeduce persistent time / treeduce blocking time (< 1: persistent "
           "faster)\n");
    printf("# speed-ups = MPI time / treeduce time, same kind of call (> 1: treeduce faster): "
           "blk, pers, nb\n");
    printf("# each timed call: every rank writes its send buffer, new values each call, then a "
           "barrier, then the\n#   call: it finds the buffer as an application leaves it\n");
    printf("# tight loop (OSU's way): NAME_loop_us, iters calls back to back on the same buffers, "
           "not written\n#   (a barrier, then the loop; slowest rank's time / iters)\n");
    printf("%10s %6s %11s %11s %11s %11s %11s %11s %8s %8s %8s %8s", "size", "iters", "tr_us",
           "tr_pers_us", "tr_nb_us", "mpi_us", "mpi_pers_us", "mpi_nb_us", "pers/blk", "blk_spd",
           "pers_spd", "nb_spd");
    for (int w = 0; w < W_N_WAYS; w++) {
        char head[32];
        snprintf(head, sizeof head, "%s_loop_us", way_col[w]);
        printf(" %16s", head);
    }
    printf("\n");
    fflush(stdout);
}

int main(int argc, char **argv)
{
    double *x, *y, *e, t0;
    size_t bytes;
    FILE *csv = NULL;
    int nchecks = 0;

    bench_init(&argc, &argv, "bench_persistent");
    if (bench_parse_args(argc, argv, NULL) != 0 || opt.nlib > 0)
        return bench_usage(
            "usage: bench_persistent [--min-bytes N] [--max-bytes N] [--iters N] [--warmup N]\n"
            "                        [--csv FILE] [--check-only] [--verify]\n"
            "  sizes in bytes, with an optional K, M or G suffix (1024-based); no --lib: the\n"
            "  program times the MPI_ routines it is linked with (bench_persistent_local)\n");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    if (rank == 0 && !opt.check_only) {
        print_header();
        csv = bench_csv_open("ranks,algorithm,bytes,count,iters,tr_us,tr_pers_us,tr_nb_us,mpi_us,"
                             "mpi_pers_us,mpi_nb_us,tr_pers_over_blocking,speedup,pers_speedup,"
                             "nb_speedup,tr_loop_us,tr_pers_loop_us,tr_nb_loop_us,mpi_loop_us,"
                             "mpi_pers_loop_us,mpi_nb_loop_us");
    }
    x = xmalloc(opt.max_bytes);
    y = xmalloc(opt.max_bytes);
    e = xmalloc(opt.max_bytes);

    t0 = MPI_Wtime();
    bytes = opt.min_bytes;
    do {
        struct args c = {x, y, (int)(bytes / sizeof(double)), MPI_REQUEST_NULL, MPI_REQUEST_NULL};
        struct bench_timing b = {call, "an allreduce", &c, write_args, verify_args};
        double t[W_N_WAYS], t_loop[W_N_WAYS];
        int iters;

        if (MPI_Allreduce_init(x, y, c.count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL,
                               &c.tr_req) != MPI_SUCCESS ||
            PMPI_Allreduce_init(x, y, c.count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL,
                                &c.mpi_req) != MPI_SUCCESS)
            die("MPI_Allreduce_init or PMPI_Allreduce_init returned an error (%zu bytes)", bytes);
        nchecks += check(&c, e); /* aborts the job on a mismatch */
        if (!opt.check_only) {
            iters = bench_measure_turns(&b, W_N_WAYS, turn, t);
            for (int w = 0; w < W_N_WAYS; w++)
                t_loop[w] = bench_loop(&b, w, iters);
            if (rank == 0) {
                char size[32];
                bench_human(size, sizeof size, bytes);
                printf("%10s %6d", size, iters);
                for (int w = 0; w < W_N_WAYS; w++)
                    printf(" %11.2f", t[w] * 1e6);
                printf(" %8.3f %8.3f %8.3f %8.3f", t[W_TR_PERS] / t[W_TR], t[W_MPI] / t[W_TR],
                       t[W_MPI_PERS] / t[W_TR_PERS], t[W_MPI_NB] / t[W_TR_NB]);
                for (int w = 0; w < W_N_WAYS; w++)
                    printf(" %16.2f", t_loop[w] * 1e6);
                printf("\n");
                fflush(stdout);
                if (csv) {
                    fprintf(csv, "%d,%s,%zu,%d,%d", nprocs, bench_algorithm(), bytes, c.count,
                            iters);
                    for (int w = 0; w < W_N_WAYS; w++)
                        fprintf(csv, ",%.3f", t[w] * 1e6);
                    fprintf(csv, ",%.4f,%.4f,%.4f,%.4f", t[W_TR_PERS] / t[W_TR], t[W_MPI] / t[W_TR],
                            t[W_MPI_PERS] / t[W_TR_PERS], t[W_MPI_NB] / t[W_TR_NB]);
                    for (int w = 0; w < W_N_WAYS; w++)
                        fprintf(csv, ",%.3f", t_loop[w] * 1e6);
                    fprintf(csv, "\n");
                }
            }
        }
        if (MPI_Request_free(&c.tr_req) != MPI_SUCCESS ||
            PMPI_Request_free(&c.mpi_req) != MPI_SUCCESS)
            die("MPI_Request_free or PMPI_Request_free returned an error (%zu bytes)", bytes);
    } while (bench_next_size(&bytes));
    free(x);
    free(y);
    free(e);
    if (opt.check_only)
        return bench_check_only(nchecks);
    bench_sweep_end(t0, csv);
    MPI_Finalize();
    return 0;
}
