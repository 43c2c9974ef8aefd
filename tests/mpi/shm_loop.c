/* Runs large allreduces until killed; rank 1 writes its pid to argv[1] once
 * the first call is done, so a test can kill it mid-collective. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, n = 1 << 21; /* 16 MiB of doubles: many chunks through the segment */
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    double *x = malloc((size_t)n * sizeof *x), *y = malloc((size_t)n * sizeof *y);
    for (int i = 0; i < n; i++)
        x[i] = rank + i;
    for (long it = 0;; it++) {
        MPI_Allreduce(x, y, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        if (it == 0 && rank == 1 && argc > 1) {
            FILE *f = fopen(argv[1], "w");
            fprintf(f, "%ld\n", (long)getpid());
            fclose(f);
        }
    }
}
