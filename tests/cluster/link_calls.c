/* The bytes on an emulated cluster's links (bench/link_loads.sh): CALLS
 * calls of MPI_Allreduce of BYTES of doubles (MPI_SUM), after one barrier,
 * each result checked exactly against the sum of the inputs.  Run with
 * CALLS and with 0, the difference of the links' byte counters over CALLS
 * is what one call puts on each link, beside what treeduce-gen --link-loads
 * predicts.  Rank 0 prints "link_calls: CALLS x BYTES B, ok" (or "WRONG")
 * after MPI_Finalize; the exit status is 0 only when every result was right.
 *   link_calls BYTES CALLS */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    int rank, size, bad = 0, all_bad = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc != 3 || atol(argv[1]) < 8 || atoi(argv[2]) < 0) {
        if (rank == 0)
            fprintf(stderr, "usage: link_calls BYTES CALLS (BYTES >= 8)\n");
        MPI_Finalize();
        return 2;
    }
    long count = atol(argv[1]) / (long)sizeof(double);
    int calls = atoi(argv[2]);
    double *in = malloc((size_t)count * sizeof *in), *out = malloc((size_t)count * sizeof *out);
    if (!in || !out)
        MPI_Abort(MPI_COMM_WORLD, 2);
    /* small integers: every order of summation gives the same bits */
    for (long i = 0; i < count; i++)
        in[i] = (double)((rank + 1) * (i % 89 + 1));
    MPI_Barrier(MPI_COMM_WORLD);
    for (int c = 0; c < calls; c++) {
        MPI_Allreduce(in, out, (int)count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        for (long i = 0; i < count && !bad; i++)
            bad = out[i] != (double)(size * (size + 1) / 2 * (i % 89 + 1));
    }
    PMPI_Allreduce(&bad, &all_bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    free(in);
    free(out);
    MPI_Finalize();
    if (rank == 0)
        printf("link_calls: %d x %ld B, %s\n", calls, count * (long)sizeof(double),
               all_bad ? "WRONG" : "ok");
    return all_bad;
}
