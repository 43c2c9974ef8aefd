/* A program of a project that uses an installed treeduce: linked with the
 * library generated for tests/install/pair.topo, it checks MPI_Allreduce
 * (treeduce's, through PMPI), trd_pair_allreduce and trd_allreduce on the
 * machine of trd_pair.h against PMPI_Allreduce, and rank 0 prints
 * "consumer: ok" or "consumer: failed" (exit 1). */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#include "trd_pair.h"

enum { N = 4096 };

static int check(const char *what, const void *got, const void *want, size_t bytes, int rank)
{
    if (memcmp(got, want, bytes) == 0)
        return 1;
    fprintf(stderr, "consumer: rank %d: %s differs from PMPI_Allreduce\n", rank, what);
    return 0;
}

int main(int argc, char **argv)
{
    static double in[N], got[N], want[N];
    static int iin[N], igot[N], iwant[N];
    int rank, ok = 1, all = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (strcmp(trd_machine_name(trd_pair_machine()), "pair") != 0) {
        fprintf(stderr, "consumer: machine '%s', expected 'pair'\n",
                trd_machine_name(trd_pair_machine()));
        ok = 0;
    }
    static const int counts[] = {1, 7, 1000, N};
    for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++) {
        int n = counts[c];
        for (int i = 0; i < n; i++) {
            in[i] = 0.25 * (rank + 1) * (i % 97) - rank; /* exact in binary: any order */
            iin[i] = (rank * 7919 + i * 31) % 1009;
        }
        PMPI_Allreduce(in, want, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        PMPI_Allreduce(iin, iwant, n, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        memset(got, 0, sizeof got);
        MPI_Allreduce(in, got, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        ok &= check("MPI_Allreduce(MPI_DOUBLE, MPI_SUM)", got, want, n * sizeof(double), rank);
        memset(igot, 0, sizeof igot);
        MPI_Allreduce(iin, igot, n, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        ok &= check("MPI_Allreduce(MPI_INT, MPI_MAX)", igot, iwant, n * sizeof(int), rank);
        memset(got, 0, sizeof got);
        trd_pair_allreduce(in, got, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        ok &= check("trd_pair_allreduce", got, want, n * sizeof(double), rank);
        memset(got, 0, sizeof got);
        trd_allreduce(trd_pair_machine(), in, got, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        ok &= check("trd_allreduce", got, want, n * sizeof(double), rank);
    }
    PMPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    if (rank == 0)
        printf("consumer: %s\n", all ? "ok" : "failed");
    MPI_Finalize();
    return all ? 0 : 1;
}
