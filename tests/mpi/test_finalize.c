/* test_finalize.c - an application that leaves treeduce's state to
 * MPI_Finalize exits cleanly, under any MPI library.
 *
 * An unmodified MPI program (run with the treeduce library preloaded):
 * MPI_Allreduce on MPI_COMM_WORLD, on MPI_COMM_SELF and on a duplicate of
 * the world that it never frees, an MPI_Iallreduce, and (MPI 4) a persistent
 * MPI_Allreduce_init request that it never frees; then MPI_Finalize, or
 * PMPI_Finalize with --pmpi.  Every communicator then still holds treeduce's
 * description, node segment and window: they must be released before the
 * MPI library shuts down (Open MPI crashed in MPI_Finalize, freeing a window
 * after its one-sided component was gone).  An attribute the program set on
 * MPI_COMM_SELF before its first collective calls MPI_Allreduce on
 * MPI_COMM_WORLD from its delete callback, within MPI_Finalize, before or
 * after treeduce's own: its result must be right too.
 *
 * Rank 0 prints "N passed, M failed, finalized" once MPI_Finalize has
 * returned; the test in ctest also requires the exit status 0 of every rank.  Fails
 * unless MPI_Allreduce is treeduce's (preloaded or linked).
 */
#define _GNU_SOURCE /* RTLD_DEFAULT */
#include <dlfcn.h>
#include <mpi.h>
#include <stdio.h>
#include <string.h>

static int passed, failed;
static int late = -1; /* the sum computed within MPI_Finalize */

static void check(int ok, const char *what)
{
    if (ok) {
        passed++;
    } else {
        failed++;
        fprintf(stderr, "FAIL %s\n", what);
    }
}

/* The sum of rank + 1 over comm, through MPI_Allreduce, must be right. */
static void sum_ranks(MPI_Comm comm, const char *what)
{
    int rank, size, in, out = -1;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    in = rank + 1;
    check(MPI_Allreduce(&in, &out, 1, MPI_INT, MPI_SUM, comm) == MPI_SUCCESS &&
              out == size * (size + 1) / 2,
          what);
}

/* Within MPI_Finalize (MPI_COMM_SELF's attributes are deleted first). */
static int late_sum(MPI_Comm comm, int keyval, void *attr, void *extra)
{
    int one = 1;
    (void)comm;
    (void)keyval;
    (void)attr;
    (void)extra;
    return MPI_Allreduce(&one, &late, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
    int pmpi = argc > 1 && strcmp(argv[1], "--pmpi") == 0, wrank, wsize;
    MPI_Comm dup;
    int kv;
    MPI_Init(&argc, &argv);
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, late_sum, &kv, NULL);
    MPI_Comm_set_attr(MPI_COMM_SELF, kv, NULL);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    void *mpi = dlsym(RTLD_DEFAULT, "MPI_Allreduce"), *pm = dlsym(RTLD_DEFAULT, "PMPI_Allreduce");
    check(mpi && mpi != pm, "MPI_Allreduce is the MPI library's own: treeduce is not loaded");

    sum_ranks(MPI_COMM_WORLD, "MPI_Allreduce on MPI_COMM_WORLD");
    sum_ranks(MPI_COMM_SELF, "MPI_Allreduce on MPI_COMM_SELF");
    MPI_Comm_dup(MPI_COMM_WORLD, &dup); /* never freed */
    sum_ranks(dup, "MPI_Allreduce on a duplicate of MPI_COMM_WORLD");

    double x = wrank, y = -1;
    MPI_Request q;
    check(MPI_Iallreduce(&x, &y, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD, &q) == MPI_SUCCESS &&
              MPI_Wait(&q, MPI_STATUS_IGNORE) == MPI_SUCCESS && y == wsize - 1,
          "MPI_Iallreduce");
#if MPI_VERSION >= 4
    long a = wrank, b = -1;
    MPI_Request pq; /* never freed */
    check(MPI_Allreduce_init(&a, &b, 1, MPI_LONG, MPI_MIN, dup, MPI_INFO_NULL, &pq) ==
                  MPI_SUCCESS &&
              MPI_Start(&pq) == MPI_SUCCESS && MPI_Wait(&pq, MPI_STATUS_IGNORE) == MPI_SUCCESS &&
              b == 0,
          "MPI_Allreduce_init");
#endif

    int tally[2] = {passed, failed};
    PMPI_Allreduce(MPI_IN_PLACE, tally, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (pmpi)
        PMPI_Finalize();
    else
        MPI_Finalize();
    if (late != wsize) {
        fprintf(stderr, "FAIL MPI_Allreduce within MPI_Finalize: %d, not %d\n", late, wsize);
        return 1;
    }
    if (wrank == 0)
        printf("%d passed, %d failed, finalized\n", tally[0], tally[1]);
    return tally[1] > 0;
}
