/* test_early.c - a treeduce wait lets the MPI library progress even while
 * a message of treeduce's own, come early, waits on its communicator.
 *
 * Three ranks of one node, MPI_Allreduce's algorithm forced to one that
 * moves messages (TREEDUCE_ALGORITHM=ring), MPI_Reduce through the segment:
 *   rank 0: MPI_Ireduce to itself on a (it waits for rank 1's part), a
 *           large MPI_Isend to rank 1 on w (the MPI library sends it in
 *           pieces as it progresses), MPI_Iallreduce on a (queued behind
 *           the reduce), then MPI_Wait on the reduce;
 *   rank 2: MPI_Ireduce (its part given, it is done) and MPI_Iallreduce on
 *           a: its ring sends rank 0 its first block at once, a message
 *           rank 0 has no receive for yet;
 *   rank 1: MPI_Recv of rank 0's large message first, then its MPI_Ireduce
 *           and MPI_Iallreduce.
 * Rank 1's receive completes only as rank 0's library progresses, inside
 * rank 0's wait for the reduce.  A wait that probed for any message found
 * rank 2's early one every time, and MPICH progresses only where a probe
 * finds nothing: the job hung (as MPICH's nonblocking3 did at 4 ranks).
 * Every result is checked.  Rank 0 prints "N passed, M failed".
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define BIG (4 << 20) /* bytes rank 0 sends rank 1 */
#define N 3000        /* ints of the allreduce: a block per rank for the ring */
#define ROUNDS 5

int main(int argc, char **argv)
{
    int rank, size, passed = 0, failed = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 3) {
        if (rank == 0)
            fprintf(stderr, "test_early: run on 3 ranks\n");
        MPI_Finalize();
        return 1;
    }
    MPI_Comm a, w;
    MPI_Comm_dup(MPI_COMM_WORLD, &a);
    MPI_Comm_dup(MPI_COMM_WORLD, &w);
    char *big = malloc(BIG);
    int *x = malloc(N * sizeof(int)), *y = malloc(N * sizeof(int)), r = 0, one = rank + 1;
    /* a's setup first: a communicator's first call sets it up, collectively */
    MPI_Allreduce(&one, &r, 1, MPI_INT, MPI_SUM, a);
    for (int round = 0; round < ROUNDS; round++) {
        MPI_Request q[3];
        MPI_Status st[3];
        for (int i = 0; i < N; i++)
            x[i] = rank * N + i + round;
        if (rank == 0) {
            for (int i = 0; i < BIG; i++)
                big[i] = (char)(i + round);
            MPI_Ireduce(&one, &r, 1, MPI_INT, MPI_SUM, 0, a, &q[0]);
            MPI_Isend(big, BIG, MPI_CHAR, 1, round, w, &q[1]);
            MPI_Iallreduce(x, y, N, MPI_INT, MPI_SUM, a, &q[2]);
            MPI_Wait(&q[0], MPI_STATUS_IGNORE);
            MPI_Waitall(2, q + 1, st);
        } else if (rank == 2) {
            MPI_Ireduce(&one, &r, 1, MPI_INT, MPI_SUM, 0, a, &q[0]);
            MPI_Iallreduce(x, y, N, MPI_INT, MPI_SUM, a, &q[1]);
            MPI_Waitall(2, q, st);
        } else {
            MPI_Recv(big, BIG, MPI_CHAR, 0, round, w, MPI_STATUS_IGNORE);
            int bad = 0;
            for (int i = 0; i < BIG; i++)
                bad += big[i] != (char)(i + round);
            bad ? failed++ : passed++;
            MPI_Ireduce(&one, &r, 1, MPI_INT, MPI_SUM, 0, a, &q[0]);
            MPI_Iallreduce(x, y, N, MPI_INT, MPI_SUM, a, &q[1]);
            MPI_Waitall(2, q, st);
        }
        if (rank == 0)
            r == 6 ? passed++ : failed++;
        int bad = 0;
        for (int i = 0; i < N; i++)
            bad += y[i] != 3 * N + 3 * i + 3 * round;
        bad ? failed++ : passed++;
        if (bad || (rank == 0 && r != 6))
            fprintf(stderr, "FAIL rank %d round %d: reduce %d, %d allreduce elements wrong\n", rank,
                    round, r, bad);
    }
    int counts[2] = {passed, failed};
    PMPI_Allreduce(MPI_IN_PLACE, counts, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("%d passed, %d failed\n", counts[0], counts[1]);
    free(big), free(x), free(y);
    MPI_Comm_free(&a);
    MPI_Comm_free(&w);
    MPI_Finalize();
    return counts[1] != 0;
}
