/* test_async.c - TREEDUCE_ASYNC_PROGRESS=1: a rank's nonblocking allreduce
 * advances while the rank computes or sits in the MPI library's own
 * blocking call.
 *
 * Two ranks, MPI_THREAD_MULTIPLE, N doubles, ROUNDS rounds of each case;
 * rank 1 starts each call a pause after rank 0, so that nothing of the
 * call can be done inside rank 0's MPI_Iallreduce:
 *   computing: rank 0 computes for COMPUTE_S seconds without an MPI call,
 *     then waits; rank 1 waits at once.  Rank 1 must complete before rank 0
 *     stops computing (the clocks of one machine compared after the round):
 *     without a thread rank 0's part waits for its MPI_Wait;
 *   started: from the second round on (the communicator set up), neither
 *     rank's MPI_Iallreduce makes a pass of progress (trd_progress_passes):
 *     it leaves the run to the thread, so that its work is done beside the
 *     computation, not before it;
 *   blocked: rank 0 enters PMPI_Allgather, the library's own, before its
 *     wait; rank 1 waits, then joins the allgather.  Without a thread this
 *     hangs: rank 0 does its part of the allreduce only in its MPI_Wait,
 *     after the allgather that rank 1 joins only after its MPI_Wait.
 * Every result is compared with PMPI_Allreduce.
 *
 * Usage: test_async [--single]  (--single: MPI_Init, no thread level asked;
 * one checked MPI_Iallreduce; TREEDUCE_VERBOSE=1 then says why there is no
 * progress thread.)  Rank 0 prints "N passed, M failed".
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "treeduce.h"

#define N (1 << 17) /* doubles: 1 MiB */
#define ROUNDS 3
#define COMPUTE_S 0.3

static int rank, passed, failed;
static double *x, *y, *ref;

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void pause_ms(long ms)
{
    struct timespec t = {0, ms * 1000000L};
    nanosleep(&t, NULL);
}

/* Work on x's copy for s seconds, without an MPI call. */
static volatile double sink;
static void compute(double s)
{
    double t0 = now(), acc = 0;
    while (now() - t0 < s)
        for (int i = 0; i < 4096; i++)
            acc += (double)i * 1e-9;
    sink = acc;
}

static void fill(int round)
{
    srand(11 + 7 * rank + 101 * round);
    for (int i = 0; i < N; i++)
        x[i] = (double)(rand() % 1000);
    PMPI_Allreduce(x, ref, N, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
}

/* Whether the start of round's call made no pass of progress, where it
 * must not (with the thread, the communicator set up); says why not. */
static int started_alone(int single, int round, long passes)
{
    if (single || round == 0 || passes == 0)
        return 1;
    fprintf(stderr,
            "FAIL rank %d started round %d: MPI_Iallreduce made %ld passes of progress, "
            "not leaving the run to the thread\n",
            rank, round, passes);
    return 0;
}

static void check(const char *what, int round, int ok)
{
    int bad = 0;
    for (int i = 0; i < N; i++)
        bad += y[i] != ref[i];
    if (bad || !ok) {
        failed++;
        fprintf(stderr, "FAIL rank %d %s round %d: %d elements wrong%s\n", rank, what, round, bad,
                ok ? "" : ", not completed while its peer computed");
    } else {
        passed++;
    }
}

int main(int argc, char **argv)
{
    int size, single = argc > 1 && !strcmp(argv[1], "--single"), provided = MPI_THREAD_SINGLE;
    if (single)
        MPI_Init(&argc, &argv);
    else
        MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2 || (!single && provided != MPI_THREAD_MULTIPLE)) {
        if (rank == 0)
            fprintf(stderr, "test_async: run on 2 ranks, with MPI_THREAD_MULTIPLE (given %d)\n",
                    provided);
        MPI_Finalize();
        return 1;
    }
    MPI_Comm a;
    MPI_Comm_dup(MPI_COMM_WORLD, &a);
    x = malloc(N * sizeof *x), y = malloc(N * sizeof *y), ref = malloc(N * sizeof *ref);
    int gin[2] = {rank, -rank}, gout[4];
    for (int round = 0; round < (single ? 1 : ROUNDS); round++) {
        MPI_Request q;
        /* computing */
        fill(round);
        double end[2] = {0, 0}; /* rank 0's compute end, rank 1's completion */
        long p0 = trd_progress_passes(), started;
        if (rank == 0) {
            MPI_Iallreduce(x, y, N, MPI_DOUBLE, MPI_SUM, a, &q);
            started = trd_progress_passes() - p0;
            if (!single)
                compute(COMPUTE_S);
            end[0] = now();
            MPI_Wait(&q, MPI_STATUS_IGNORE);
        } else {
            pause_ms(20);
            MPI_Iallreduce(x, y, N, MPI_DOUBLE, MPI_SUM, a, &q);
            started = trd_progress_passes() - p0;
            MPI_Wait(&q, MPI_STATUS_IGNORE);
            end[1] = now();
        }
        PMPI_Allreduce(MPI_IN_PLACE, end, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        check("computing", round, single || end[1] < end[0]);
        if (started_alone(single, round, started))
            passed++;
        else
            failed++;
        if (single)
            break;
        /* blocked in the library's own MPI_Allgather */
        fill(round + ROUNDS);
        memset(gout, 0, sizeof gout);
        if (rank == 0) {
            MPI_Iallreduce(x, y, N, MPI_DOUBLE, MPI_SUM, a, &q);
            PMPI_Allgather(gin, 2, MPI_INT, gout, 2, MPI_INT, MPI_COMM_WORLD);
            MPI_Wait(&q, MPI_STATUS_IGNORE);
        } else {
            pause_ms(20);
            MPI_Iallreduce(x, y, N, MPI_DOUBLE, MPI_SUM, a, &q);
            MPI_Wait(&q, MPI_STATUS_IGNORE);
            PMPI_Allgather(gin, 2, MPI_INT, gout, 2, MPI_INT, MPI_COMM_WORLD);
        }
        check("blocked", round, gout[0] == 0 && gout[1] == 0 && gout[2] == 1 && gout[3] == -1);
    }
    int counts[2] = {passed, failed};
    PMPI_Allreduce(MPI_IN_PLACE, counts, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("%d passed, %d failed\n", counts[0], counts[1]);
    free(x), free(y), free(ref);
    MPI_Comm_free(&a);
    MPI_Finalize();
    return counts[1] != 0;
}
