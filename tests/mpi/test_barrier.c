/* test_barrier.c - MPI_Barrier takes the same form on every rank, whatever
 * each rank has outstanding.
 *
 * Two ranks, each round on a communicator a (the barrier on a, then on w):
 *   rank 0: MPI_Iallreduce of N doubles on a, MPI_Barrier, MPI_Wait;
 *   rank 1: a pause, the same MPI_Iallreduce, MPI_Wait, MPI_Barrier.
 * Rank 0 enters the barrier with its run outstanding (rank 1 has not
 * started), so its barrier must advance that run while it waits; rank 1
 * enters it with nothing outstanding.  A barrier that went to the library's
 * blocking MPI_Barrier when nothing was outstanding, and to MPI_Ibarrier
 * otherwise, met a nonblocking barrier with a blocking one, which MPI does
 * not match: the job hung.  Every result is compared with PMPI_Allreduce.
 * Rank 0 prints "N passed, M failed".
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define N (1 << 16) /* doubles: a run that cannot end inside MPI_Iallreduce */
#define ROUNDS 4

static void pause_ms(long ms)
{
    struct timespec t = {0, ms * 1000000L};
    nanosleep(&t, NULL);
}

int main(int argc, char **argv)
{
    int rank, size, passed = 0, failed = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2) {
        if (rank == 0)
            fprintf(stderr, "test_barrier: run on 2 ranks\n");
        MPI_Finalize();
        return 1;
    }
    MPI_Comm a, w;
    MPI_Comm_dup(MPI_COMM_WORLD, &a);
    MPI_Comm_dup(MPI_COMM_WORLD, &w);
    double *x = malloc(N * sizeof *x), *y = malloc(N * sizeof *y), *ref = malloc(N * sizeof *ref);
    srand(7 + rank);
    /* a's setup first: a communicator's first call sets it up, collectively */
    double one = 1, two = 0;
    MPI_Allreduce(&one, &two, 1, MPI_DOUBLE, MPI_SUM, a);
    for (int round = 0; round < ROUNDS; round++) {
        MPI_Comm at = round % 2 ? w : a;
        MPI_Request q;
        for (int i = 0; i < N; i++)
            x[i] = (double)(rand() % 1000);
        PMPI_Allreduce(x, ref, N, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        if (rank == 0) {
            MPI_Iallreduce(x, y, N, MPI_DOUBLE, MPI_SUM, a, &q);
            MPI_Barrier(at);
            MPI_Wait(&q, MPI_STATUS_IGNORE);
        } else {
            pause_ms(20);
            MPI_Iallreduce(x, y, N, MPI_DOUBLE, MPI_SUM, a, &q);
            MPI_Wait(&q, MPI_STATUS_IGNORE);
            MPI_Barrier(at);
        }
        int bad = 0;
        for (int i = 0; i < N; i++)
            bad += y[i] != ref[i];
        bad ? failed++ : passed++;
        if (bad)
            fprintf(stderr, "FAIL rank %d round %d: %d elements wrong\n", rank, round, bad);
    }
    int counts[2] = {passed, failed};
    PMPI_Allreduce(MPI_IN_PLACE, counts, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("%d passed, %d failed\n", counts[0], counts[1]);
    free(x), free(y), free(ref);
    MPI_Comm_free(&a);
    MPI_Comm_free(&w);
    MPI_Finalize();
    return counts[1] != 0;
}
