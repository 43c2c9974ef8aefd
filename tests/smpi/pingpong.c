/* Ping-pong under SMPI on an exported platform: prints each rank's host
 * name, then the simulated one-way time of messages between ranks 0 and 1
 * ("pingpong BYTES SECONDS"), half the round trip over a few repetitions. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size, len;
    char name[MPI_MAX_PROCESSOR_NAME];
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Get_processor_name(name, &len);
    /* one line per rank, printed by rank 0 in rank order */
    char *all = rank == 0 ? malloc((size_t)size * MPI_MAX_PROCESSOR_NAME) : NULL;
    MPI_Gather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, all, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, 0,
               MPI_COMM_WORLD);
    for (int r = 0; rank == 0 && r < size; r++)
        printf("host %d %s\n", r, all + (size_t)r * MPI_MAX_PROCESSOR_NAME);
    free(all);
    /* the peer of rank 0 is the last rank (another node when the hostfile
     * lists two nodes with their cores) */
    int peer = size - 1;
    static const int sizes[] = {8, 65536, 1 << 22};
    const int reps = 4;
    char *buf = calloc(1, 1 << 22);
    for (int k = 0; k < 3; k++) {
        /* round trip -1 is not timed: it absorbs the skew the barrier
         * leaves between the two ranks */
        double t0 = 0;
        for (int i = -1; i < reps; i++) {
            if (i == 0)
                t0 = MPI_Wtime();
            if (rank == 0) {
                MPI_Send(buf, sizes[k], MPI_CHAR, peer, 0, MPI_COMM_WORLD);
                MPI_Recv(buf, sizes[k], MPI_CHAR, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            } else if (rank == peer) {
                MPI_Recv(buf, sizes[k], MPI_CHAR, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Send(buf, sizes[k], MPI_CHAR, 0, 0, MPI_COMM_WORLD);
            }
        }
        double t = (MPI_Wtime() - t0) / (2.0 * reps);
        if (rank == 0)
            printf("pingpong %d %.9e\n", sizes[k], t);
    }
    free(buf);
    MPI_Finalize();
    return 0;
}
