/* MPI_Scan through a library whose only change is MPI_Scan's line in the
 * table of collectives (check_one_line.sh): every form MPI has of it
 * (blocking, nonblocking; from MPI 4.0 persistent and large-count) must
 * give what the MPI library's own PMPI_Scan gives, on random data, an
 * in-place call included.  Prints "scan: N forms ok" on rank 0; exits 1 on
 * any difference. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { COUNT = 1000 };

static int failures;

static void expect_same(const char *form, const int *got, const int *want, int rank)
{
    if (memcmp(got, want, COUNT * sizeof *got) != 0) {
        for (int i = 0; i < COUNT; i++)
            if (got[i] != want[i]) {
                fprintf(stderr, "rank %d: %s: element %d is %d, PMPI_Scan gives %d\n", rank, form,
                        i, got[i], want[i]);
                break;
            }
        failures++;
    }
}

int main(int argc, char **argv)
{
    int rank, forms = 0, all;
    static int in[COUNT], want[COUNT], got[COUNT];
    MPI_Request req;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    srand(12345u + 7u * (unsigned)rank);
    for (int i = 0; i < COUNT; i++)
        in[i] = rand() % 2001 - 1000;
    PMPI_Scan(in, want, COUNT, MPI_INT, MPI_SUM, MPI_COMM_WORLD);

    memset(got, 0, sizeof got);
    MPI_Scan(in, got, COUNT, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    expect_same("MPI_Scan", got, want, rank), forms++;
    memcpy(got, in, sizeof got);
    MPI_Scan(MPI_IN_PLACE, got, COUNT, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    expect_same("MPI_Scan in place", got, want, rank), forms++;
    memset(got, 0, sizeof got);
    MPI_Iscan(in, got, COUNT, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    expect_same("MPI_Iscan", got, want, rank), forms++;
#if MPI_VERSION >= 4
    memset(got, 0, sizeof got);
    MPI_Scan_init(in, got, COUNT, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &req);
    for (int round = 0; round < 2; round++) {
        MPI_Start(&req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        expect_same("MPI_Scan_init", got, want, rank);
    }
    MPI_Request_free(&req), forms++;
    memset(got, 0, sizeof got);
    MPI_Scan_c(in, got, (MPI_Count)COUNT, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    expect_same("MPI_Scan_c", got, want, rank), forms++;
    memset(got, 0, sizeof got);
    MPI_Iscan_c(in, got, (MPI_Count)COUNT, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    expect_same("MPI_Iscan_c", got, want, rank), forms++;
#endif
    PMPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf(all ? "scan: %d differences\n" : "scan: %d forms ok\n", all ? all : forms);
    MPI_Finalize();
    return all != 0;
}
