/* test_comms.c - a communicator pays for treeduce's setup and its node
 * segment only once it is used: short-lived communicators cost neither, and
 * the segment comes where every rank makes it.
 *
 * An application that duplicates a communicator, makes one call on it and
 * frees it (a library given a communicator, a split in a loop) must not pay
 * for a private duplicate, an exchange or a shared window each time.  A
 * communicator's first TREEDUCE_SEGMENT_CALLS - 1 calls (default 5) go to
 * the MPI library's routine; the next sets it up, and a blocking call from
 * then on makes the segment once the calls have moved
 * TREEDUCE_SEGMENT_BYTES (default 1 MiB; each call also counts for a few
 * KiB).  On one node of several ranks, every
 * result compared with PMPI_Allreduce's, every call before the count
 * required to go to the library (trd_fell_back() 1: nothing set up) and
 * every call from it to run treeduce's schedule (trd_fell_back() 0):
 *   - N times MPI_Comm_dup, MPI_Allreduce, MPI_Comm_free: no segment
 *     (trd_segments());
 *   - a communicator's blocking calls before the count make none; from the
 *     count on, nonblocking calls make none either; the next blocking call
 *     makes one, its bytes reached by a nonblocking allreduce (64 Ki
 *     doubles, or the bytes' worth) that rank 0 has not waited for and
 *     that is outstanding while rank 1 waits for its own first: rank 0
 *     must advance it while it waits for rank 1 to arrive;
 *   - the calls after it make no other;
 *   - a communicator of small blocking calls makes none in its first 50
 *     from the count (where the bytes are at least 50 x 4 KiB), and one
 *     within 4096;
 *   - a forced algorithm (trd_allreduce_with "shm") and, MPI 4,
 *     MPI_Allreduce_init on a new communicator make it at once.
 * With TREEDUCE_SEGMENT_CALLS=0 every communicator makes its segment on its
 * first call: told to expect the default (test_comms N 5 --must-fail), the
 * first check fails, as it did before the segment waited for the count.
 *
 * Usage: test_comms [N [CALLS [--must-fail]]] (default 1000, and CALLS
 * the value of TREEDUCE_SEGMENT_CALLS, else 5); --must-fail inverts the
 * exit status.  Rank 0 prints "N passed, M failed"; the exit status is 1
 * when a check failed.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "treeduce.h"
#include "trd_testbed.h"

#define BIG (64 * 1024) /* doubles of the outstanding allreduce */

static int passed, failed, rank, size;

static void check(int ok, const char *what, long a, long b)
{
    if (ok) {
        passed++;
        return;
    }
    failed++;
    fprintf(stderr, "FAIL rank %d: %s (%ld, %ld)\n", rank, what, a, b);
}

static void fill(double *x, int n, int round)
{
    for (int i = 0; i < n; i++)
        x[i] = rank + 0.25 * round + 1e-3 * (i % 97);
}

/* x reduced by PMPI_Allreduce compared with y, element by element. */
static void compare(const double *x, const double *y, int n, MPI_Comm c, const char *what,
                    int round)
{
    double *e = malloc((size_t)n * sizeof *e);
    PMPI_Allreduce(x, e, n, MPI_DOUBLE, MPI_SUM, c);
    int bad = 0;
    for (int i = 0; i < n; i++)
        bad += y[i] != e[i];
    check(bad == 0, what, round, bad);
    free(e);
}

/* Whether the call just made went where it should: to the MPI library's
 * routine (library) or through treeduce's schedule. */
static void check_where(int library, const char *routine, int round)
{
    char what[80];
    snprintf(what, sizeof what, "the %s %s", routine,
             library ? "went to the MPI library (a first call)" : "ran treeduce's schedule");
    check(trd_fell_back() == library, what, round, trd_fell_back());
}

/* One blocking allreduce of n doubles on c, checked; it must go to the
 * library (library 1) or run treeduce's schedule. */
static void allreduce_checked(MPI_Comm c, int n, int round, int library)
{
    double x[8], y[8];
    fill(x, n, round);
    MPI_Allreduce(x, y, n, MPI_DOUBLE, MPI_SUM, c);
    check_where(library, "allreduce", round);
    compare(x, y, n, c, "allreduce result", round);
}

static void nonblocking_checked(MPI_Comm c, int round)
{
    double x[3], y[3];
    MPI_Request q;
    fill(x, 3, round);
    MPI_Iallreduce(x, y, 3, MPI_DOUBLE, MPI_SUM, c, &q);
    check_where(0, "iallreduce", round);
    MPI_Wait(&q, MPI_STATUS_IGNORE);
    compare(x, y, 3, c, "iallreduce result", round);
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 1000;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *v = argc > 2 ? argv[2] : getenv("TREEDUCE_SEGMENT_CALLS");
    int calls = v && *v ? atoi(v) : 5;
    const char *vb = getenv("TREEDUCE_SEGMENT_BYTES");
    long long need = vb && *vb ? atoll(vb) : 1 << 20;
    int big = need / 8 > BIG ? (int)(need / 8) : BIG; /* doubles of the outstanding allreduce */

    long seg0 = trd_segments();
    double t = MPI_Wtime();
    for (int i = 0; i < n; i++) {
        MPI_Comm c;
        MPI_Comm_dup(MPI_COMM_WORLD, &c);
        allreduce_checked(c, 1, i, calls >= 2);
        MPI_Comm_free(&c);
    }
    t = MPI_Wtime() - t;
    long made = trd_segments() - seg0;
    check(made == (calls >= 2 ? 0 : n), "segments after the dup, allreduce, free loop", made,
          calls >= 2 ? 0 : n);

    /* blocking calls before the count, nonblocking ones from it: no segment */
    MPI_Comm c;
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    seg0 = trd_segments();
    int k = 1;
    for (; k < calls; k++) {
        allreduce_checked(c, 3, k, 1);
        check(trd_segments() == seg0, "segments after a blocking call before the count", k,
              trd_segments() - seg0);
    }
    for (int j = 0; j < 2; j++, k++) {
        nonblocking_checked(c, k);
        check(trd_segments() == seg0, "segments after a nonblocking call", k,
              trd_segments() - seg0);
    }
    /* the blocking call that makes the segment, a run of rank 0's outstanding */
    double *bx = malloc((size_t)big * sizeof *bx), *by = malloc((size_t)big * sizeof *by);
    double x[3], y[3];
    MPI_Request q;
    fill(bx, big, k);
    MPI_Iallreduce(bx, by, big, MPI_DOUBLE, MPI_SUM, c, &q);
    check(!trd_fell_back(), "the large iallreduce ran treeduce's schedule", k, 1);
    if (rank != 0)
        MPI_Wait(&q, MPI_STATUS_IGNORE);
    fill(x, 3, k + 1);
    MPI_Allreduce(x, y, 3, MPI_DOUBLE, MPI_SUM, c);
    check(!trd_fell_back(), "the segment's allreduce ran treeduce's schedule", k + 1, 1);
    if (rank == 0)
        MPI_Wait(&q, MPI_STATUS_IGNORE);
    check(trd_segments() - seg0 == (size > 1),
          "segments after the blocking call that reaches the bytes", k + 1, trd_segments() - seg0);
    compare(bx, by, big, c, "large iallreduce result", k);
    compare(x, y, 3, c, "the segment's allreduce result", k + 1);
    for (k += 2; k < calls + 8; k++)
        allreduce_checked(c, 8, k, 0);
    nonblocking_checked(c, k);
    check(trd_segments() - seg0 == (size > 1), "segments after the later calls", k,
          trd_segments() - seg0);
    MPI_Comm_free(&c);
    free(bx);
    free(by);

    /* small blocking calls: the segment once their bytes pay for it */
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    seg0 = trd_segments();
    for (k = 1; k < calls; k++)
        allreduce_checked(c, 8, k, 1);
    int small = 0;
    for (; small < 4096 && trd_segments() == seg0; small++) {
        allreduce_checked(c, 8, k + small, 0);
        if (small == 49 && need >= 50 * 4096)
            check(trd_segments() == seg0, "segments after 50 small calls", small + 1,
                  trd_segments() - seg0);
    }
    check(trd_segments() - seg0 == (size > 1), "segments within 4096 small calls", small,
          trd_segments() - seg0);
    if (rank == 0)
        printf("small calls: the segment came at the %d-th from the count\n", small);
    MPI_Comm_free(&c);

    /* a forced algorithm makes it at once */
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    seg0 = trd_segments();
    fill(x, 3, 0);
    int rc = trd_allreduce_with(trd_testbed_machine(), x, y, 3, MPI_DOUBLE, MPI_SUM, c, "shm");
    check(rc == MPI_SUCCESS && !trd_fell_back(), "forced shm ran", rc, trd_fell_back());
    check(trd_segments() - seg0 == 1, "segments after a forced algorithm's first call", 1,
          trd_segments() - seg0);
    compare(x, y, 3, c, "forced shm result", 0);
    MPI_Comm_free(&c);

#if MPI_VERSION >= 4
    /* so does a persistent request (made to be started many times) */
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    seg0 = trd_segments();
    MPI_Allreduce_init(x, y, 3, MPI_DOUBLE, MPI_SUM, c, MPI_INFO_NULL, &q);
    check(trd_segments() - seg0 == 1, "segments after MPI_Allreduce_init", 1,
          trd_segments() - seg0);
    for (k = 0; k < 3; k++) {
        fill(x, 3, k);
        MPI_Start(&q);
        MPI_Wait(&q, MPI_STATUS_IGNORE);
        compare(x, y, 3, c, "persistent allreduce result", k);
    }
    MPI_Request_free(&q);
    MPI_Comm_free(&c);
#endif

    int counts[2] = {passed, failed};
    MPI_Allreduce(MPI_IN_PLACE, counts, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) {
        printf("%d x (MPI_Comm_dup, MPI_Allreduce, MPI_Comm_free) on %d ranks: %.4f s\n", n, size,
               t);
        printf("%d passed, %d failed\n", counts[0], counts[1]);
    }
    MPI_Finalize();
    int must_fail = argc > 3 && !strcmp(argv[3], "--must-fail");
    return (counts[1] != 0) != must_fail;
}
