/* test_unsigned.c - unsigned MIN/MAX give the standard's answer on treeduce's
 * paths, where MPICH 4.0.x's own routines do not.
 *
 * MPICH 4.0.x compares unsigned types as signed in MIN and MAX
 * (pmodels/mpich#6083): its MPI_Allreduce gives MAX(0, UINT_MAX) = 0.  For
 * every unsigned C and fixed-width integer type, element i holds all ones
 * (UINT_MAX, ...) on rank i % p and 0 on the others; MPI_Allreduce (out of
 * place and in place), MPI_Reduce_scatter_block and MPI_Reduce (at every
 * root) must give all ones for MAX and 0 for MIN, for counts 1 and 1000.
 *
 * Then a predefined pair without a kernel that the MPI library accepts
 * (MPI_REAL16 with MPI_MAX, where MPICH has it): the plan runs through
 * MPI_Reduce_local rather than falling back; every rank supplies the same
 * values, which must come back unchanged.
 *
 * Run at TREEDUCE_VERBOSE=2: the test in ctest requires the "runs" notes of
 * MPI_Allreduce, MPI_Reduce_scatter_block and MPI_Reduce and no "uses the MPI
 * library's routine" note.  Prints, for information, what the MPI library's
 * own MPI_Allreduce gives, and on rank 0 "N passed, M failed" (on stderr,
 * after the notes); exits non-zero if a check failed.
 */
#define _GNU_SOURCE /* RTLD_DEFAULT */
#include <dlfcn.h>
#include <mpi.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_COUNT 1000
#define MAX_SIZE 16

static const struct {
    MPI_Datatype type;
    const char *name;
} types[] = {
    {MPI_UNSIGNED_CHAR, "MPI_UNSIGNED_CHAR"},
    {MPI_UNSIGNED_SHORT, "MPI_UNSIGNED_SHORT"},
    {MPI_UNSIGNED, "MPI_UNSIGNED"},
    {MPI_UNSIGNED_LONG, "MPI_UNSIGNED_LONG"},
    {MPI_UNSIGNED_LONG_LONG, "MPI_UNSIGNED_LONG_LONG"},
    {MPI_UINT8_T, "MPI_UINT8_T"},
    {MPI_UINT16_T, "MPI_UINT16_T"},
    {MPI_UINT32_T, "MPI_UINT32_T"},
    {MPI_UINT64_T, "MPI_UINT64_T"},
};
#define NTYPES (sizeof types / sizeof types[0])

static int rank, nprocs;
static long passed, failed; /* on this rank */

static void check(int ok, const char *routine, const char *type, const char *op, int count,
                  const char *what)
{
    if (ok) {
        passed++;
        return;
    }
    failed++;
    printf("FAIL rank=%d %s type=%s op=%s count=%d: %s\n", rank, routine, type, op, count, what);
    fflush(stdout);
}

/* count elements of size bytes: element i all ones on rank i % nprocs, else 0. */
static void fill(unsigned char *buf, int count, int size)
{
    for (int i = 0; i < count; i++)
        memset(buf + (size_t)i * size, i % nprocs == rank ? 0xff : 0, (size_t)size);
}

/* Whether count elements all have every byte equal to want. */
static int all_bytes(const unsigned char *buf, int count, int size, unsigned char want)
{
    for (size_t k = 0; k < (size_t)count * (size_t)size; k++)
        if (buf[k] != want)
            return 0;
    return 1;
}

static unsigned char in[MAX_COUNT * MAX_SIZE * 4], out[MAX_COUNT * MAX_SIZE * 4];

static void check_type(MPI_Datatype type, const char *name, MPI_Op op, const char *opname,
                       int count)
{
    int size;
    unsigned char want = op == MPI_MAX ? 0xff : 0;
    int bytes;

    MPI_Type_size(type, &size);
    bytes = count * size;

    fill(in, count, size);
    memset(out, 0x5a, (size_t)bytes);
    int rc = MPI_Allreduce(in, out, count, type, op, MPI_COMM_WORLD);
    check(rc == MPI_SUCCESS && all_bytes(out, count, size, want), "MPI_Allreduce", name, opname,
          count, "result is not the standard's unsigned MIN/MAX");

    fill(out, count, size);
    rc = MPI_Allreduce(MPI_IN_PLACE, out, count, type, op, MPI_COMM_WORLD);
    check(rc == MPI_SUCCESS && all_bytes(out, count, size, want), "MPI_Allreduce(in place)", name,
          opname, count, "result is not the standard's unsigned MIN/MAX");

    /* each rank's block of count elements: rank i % nprocs holds all ones */
    fill(in, count * nprocs, size);
    memset(out, 0x5a, (size_t)bytes);
    rc = MPI_Reduce_scatter_block(in, out, count, type, op, MPI_COMM_WORLD);
    check(rc == MPI_SUCCESS && all_bytes(out, count, size, want), "MPI_Reduce_scatter_block", name,
          opname, count, "result is not the standard's unsigned MIN/MAX");

    for (int root = 0; root < nprocs; root++) {
        fill(in, count, size);
        memset(out, 0x5a, (size_t)bytes);
        rc = MPI_Reduce(in, out, count, type, op, root, MPI_COMM_WORLD);
        check(rc == MPI_SUCCESS && (rank != root || all_bytes(out, count, size, want)),
              "MPI_Reduce", name, opname, count, "result is not the standard's unsigned MIN/MAX");
    }
}

/* A pair without a kernel that MPI_Reduce_local accepts runs the plan: MAX of
 * equal values is that value, whatever the type's arithmetic. */
static void check_without_kernel(void)
{
    unsigned char a[MAX_SIZE] = {0}, b[MAX_SIZE] = {0};
    int size;

    if (MPI_REAL16 == MPI_DATATYPE_NULL ||
        PMPI_Reduce_local(a, b, 0, MPI_REAL16, MPI_MAX) != MPI_SUCCESS) {
        if (rank == 0)
            printf("MPI_REAL16 with MPI_MAX not accepted by this MPI: not tested\n");
        return;
    }
    MPI_Type_size(MPI_REAL16, &size);
    for (int count = 1; count <= MAX_COUNT; count *= 10) {
        size_t bytes = (size_t)count * (size_t)size;
        for (size_t k = 0; k < bytes; k++)
            in[k] = (unsigned char)(k * 37 + 11);
        memcpy(out, in, bytes);
        int rc = MPI_Allreduce(MPI_IN_PLACE, out, count, MPI_REAL16, MPI_MAX, MPI_COMM_WORLD);
        check(rc == MPI_SUCCESS && memcmp(out, in, bytes) == 0, "MPI_Allreduce", "MPI_REAL16",
              "MPI_MAX", count, "MAX of equal values changed them");
    }
}

int main(int argc, char **argv)
{
    long tally[2];

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    if (nprocs < 2 || nprocs > 4) {
        if (rank == 0)
            fprintf(stderr, "test_unsigned: run with 2 to 4 ranks\n0 passed, 1 failed\n");
        MPI_Finalize();
        return 1;
    }

    /* treeduce's routines, not the MPI library's, must be the ones called */
    void *mpi = dlsym(RTLD_DEFAULT, "MPI_Allreduce"), *pmpi = dlsym(RTLD_DEFAULT, "PMPI_Allreduce");
    check(mpi && mpi != pmpi, "MPI_Allreduce", "-", "-", 0, "is the MPI library's own");

    /* for information: what the MPI library's own routine gives */
    unsigned mine = rank == 0 ? 0 : UINT_MAX, lib = 1;
    PMPI_Allreduce(&mine, &lib, 1, MPI_UNSIGNED, MPI_MAX, MPI_COMM_WORLD);
    if (rank == 0)
        printf("PMPI_Allreduce gives MAX(0, UINT_MAX) = %u on MPI_UNSIGNED (%s)\n", lib,
               lib == UINT_MAX ? "unsigned, as the standard says" : "compared as signed");

    for (size_t t = 0; t < NTYPES; t++)
        for (int count = 1; count <= MAX_COUNT; count *= 1000) {
            check_type(types[t].type, types[t].name, MPI_MAX, "MPI_MAX", count);
            check_type(types[t].type, types[t].name, MPI_MIN, "MPI_MIN", count);
        }
    check_without_kernel();

    tally[0] = passed;
    tally[1] = failed;
    PMPI_Allreduce(MPI_IN_PLACE, tally, 2, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    /* on stderr, after treeduce's notes in the same stream: ctest reads them in order */
    fflush(stdout);
    if (rank == 0)
        fprintf(stderr, "%ld passed, %ld failed\n", tally[0], tally[1]);
    MPI_Finalize();
    return tally[1] > 0 ? 1 : 0;
}
