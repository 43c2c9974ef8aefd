/* test_inject.c - a plan's failures reach the application by status:
 * out of memory as MPI_ERR_NO_MEM, a refusal as the MPI library's routine.
 *
 * Run with TREEDUCE_ALGORITHM=ALG and TREEDUCE_INJECT=ALG:KIND (testing
 * only) on every rank: every plan of ALG fails as KIND says, through the
 * paths a real failure takes (the planner's status, the registry, the
 * executor's lowering).  With MPI_ERRORS_RETURN on a duplicate of
 * MPI_COMM_WORLD, MPI_Allreduce and MPI_Iallreduce (with its MPI_Wait) of
 * 64 doubles must each:
 *   - "nomem" and "lower_nomem": return an error of class MPI_ERR_NO_MEM,
 *     having run nothing of the MPI library's (trd_fell_back() 0);
 *   - "refuse": succeed through the MPI library's routine (trd_fell_back()
 *     1) with PMPI_Allreduce's result.
 *
 * Usage: test_inject nomem|lower_nomem|refuse.  Rank 0 prints "N passed, M
 * failed"; exits 1 when a check failed.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "treeduce.h"

static int passed, failed, rank;

static void check(int ok, const char *what, int a, int b)
{
    if (ok) {
        passed++;
        return;
    }
    failed++;
    fprintf(stderr, "FAIL rank %d: %s (%d, %d)\n", rank, what, a, b);
}

/* The outcome of one call: rc its return code, fell trd_fell_back(), ok its
 * data right where it succeeded. */
static void outcome(int refuse, const char *what, int rc, int fell, int ok)
{
    int cls = MPI_SUCCESS;
    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &cls);
    char line[160];
    if (refuse) {
        snprintf(line, sizeof line, "%s falls back and succeeds", what);
        check(rc == MPI_SUCCESS && fell == 1, line, cls, fell);
        snprintf(line, sizeof line, "%s result", what);
        check(rc != MPI_SUCCESS || ok, line, 0, 0);
    } else {
        snprintf(line, sizeof line, "%s returns MPI_ERR_NO_MEM", what);
        check(cls == MPI_ERR_NO_MEM && fell == 0, line, cls, fell);
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int refuse = argc > 1 && !strcmp(argv[1], "refuse");
    MPI_Comm c;
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);

    double x[64], y[64], e[64];
    for (int i = 0; i < 64; i++)
        x[i] = rank * 0.5 + i, y[i] = -1;
    PMPI_Allreduce(x, e, 64, MPI_DOUBLE, MPI_SUM, c);
    int rc = MPI_Allreduce(x, y, 64, MPI_DOUBLE, MPI_SUM, c);
    int fell = trd_fell_back();
    outcome(refuse, "MPI_Allreduce", rc, fell, !memcmp(y, e, sizeof e));

    MPI_Request q = MPI_REQUEST_NULL;
    for (int i = 0; i < 64; i++)
        y[i] = -1;
    rc = MPI_Iallreduce(x, y, 64, MPI_DOUBLE, MPI_SUM, c, &q);
    fell = trd_fell_back();
    if (rc == MPI_SUCCESS)
        rc = MPI_Wait(&q, MPI_STATUS_IGNORE);
    outcome(refuse, "MPI_Iallreduce", rc, fell, !memcmp(y, e, sizeof e));
    MPI_Comm_free(&c);

    int counts[2] = {passed, failed};
    PMPI_Allreduce(MPI_IN_PLACE, counts, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("%d passed, %d failed\n", counts[0], counts[1]);
    MPI_Finalize();
    return counts[1] != 0;
}
