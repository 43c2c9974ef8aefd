/* Startup and shutdown on an emulated cluster (bench/cluster.sh): every rank
 * names its host, a few MPI_Allreduce calls of 1 to 2^16 doubles are checked
 * against PMPI_Allreduce, and rank 0 reports once MPI_Finalize returned.
 * Linked with a generated machine, the calls run treeduce's routines (the
 * ranks mapped onto the machine's nodes by their host names); linked with
 * MPI alone, the library's.
 *   finalize [--quiet]   (--quiet: no per-rank host line) */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    int rank, size, len, bad = 0, all_bad = 0;
    char host[MPI_MAX_PROCESSOR_NAME];
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Get_processor_name(host, &len);
    if (!(argc > 1 && strcmp(argv[1], "--quiet") == 0))
        printf("rank %d of %d on %s\n", rank, size, host);
    for (int count = 1; count <= 1 << 16; count *= 16) {
        double *in = malloc(count * sizeof *in), *out = malloc(count * sizeof *out),
               *ref = malloc(count * sizeof *ref);
        if (!in || !out || !ref)
            MPI_Abort(MPI_COMM_WORLD, 2);
        for (int i = 0; i < count; i++)
            in[i] = (double)((rank + 1) * (i % 97 + 1)); /* sums exact in double */
        MPI_Allreduce(in, out, count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        PMPI_Allreduce(in, ref, count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        if (memcmp(out, ref, count * sizeof *out) != 0) {
            fprintf(stderr, "rank %d: MPI_Allreduce of %d doubles differs from PMPI_Allreduce\n",
                    rank, count);
            bad = 1;
        }
        free(in);
        free(out);
        free(ref);
    }
    PMPI_Allreduce(&bad, &all_bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    MPI_Finalize();
    if (rank == 0)
        printf("finalized: %d ranks, allreduce %s\n", size, all_bad ? "WRONG" : "ok");
    return all_bad;
}
