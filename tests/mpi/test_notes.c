/* The notes of calls that go to the MPI library name the routine the
 * application called, and every such call has one.
 *
 * Run at TREEDUCE_VERBOSE=1 with TREEDUCE_CMA_BYTES=garbage on 2 ranks (1
 * rank skips the intercommunicator).  Each process captures its own stderr
 * and requires these lines, each exactly once:
 *  - nonblocking and persistent calls on a communicator of one rank and with
 *    count 0 ("MPI_Iallreduce uses the MPI library's routine: count 0, nothing
 *    to move", ...); their blocking forms are done in place, with no note;
 *  - MPI_Reduce_scatter and then MPI_Ireduce_scatter on a derived datatype,
 *    each under its own name (the same reason once per routine, not once);
 *  - MPI_Allreduce and then MPI_Bcast and MPI_Ibcast on an intercommunicator;
 *  - the report of TREEDUCE_CMA_BYTES=garbage, at TREEDUCE_VERBOSE=1 as at 0,
 *    once however many communicators read it.
 * Results are checked too.  The last line reads "N passed, M failed"; the
 * exit status is non-zero if any check failed.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capture.h"

static int rank, size;
static long passed, failed;

static void check(int ok, const char *what)
{
    if (ok) {
        passed++;
    } else {
        failed++;
        printf("rank %d: FAIL %s\n", rank, what);
    }
}

#define NOTE(routine, why) "treeduce[testbed]: " routine " uses the MPI library's routine: " why

static const char count0[] = "count 0, nothing to move";
static const char one_rank[] = "a communicator of one rank, nothing to move";

/* Calls with nothing to move: nonblocking and persistent ones go to the MPI
 * library and say so; blocking ones are done here, silently. */
static void nothing_to_move(void)
{
    int in[3] = {1, 2, 3}, out[3] = {0, 0, 0}, none = 0;
    MPI_Request req;
    MPI_Iallreduce(in, out, 0, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    MPI_Ibcast(&none, 0, MPI_INT, 0, MPI_COMM_WORLD, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    MPI_Ireduce_scatter_block(in, out, 0, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    MPI_Iallreduce(in, out, 3, MPI_INT, MPI_SUM, MPI_COMM_SELF, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    check(out[0] == 1 && out[1] == 2 && out[2] == 3, "MPI_Iallreduce on MPI_COMM_SELF");
    memset(out, 0, sizeof out);
    MPI_Ireduce(in, out, 3, MPI_INT, MPI_SUM, 0, MPI_COMM_SELF, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    check(out[0] == 1 && out[2] == 3, "MPI_Ireduce on MPI_COMM_SELF");
    MPI_Iallgather(in, 1, MPI_INT, out, 1, MPI_INT, MPI_COMM_SELF, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    check(out[0] == 1, "MPI_Iallgather on MPI_COMM_SELF");
#if MPI_VERSION >= 4
    memset(out, 0, sizeof out);
    MPI_Allreduce_init(in, out, 3, MPI_INT, MPI_SUM, MPI_COMM_SELF, MPI_INFO_NULL, &req);
    MPI_Start(&req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    MPI_Request_free(&req);
    check(out[0] == 1 && out[1] == 2 && out[2] == 3, "MPI_Allreduce_init on MPI_COMM_SELF");
#endif
    memset(out, 0, sizeof out);
    MPI_Allreduce(in, out, 3, MPI_INT, MPI_SUM, MPI_COMM_SELF);
    check(out[0] == 1 && out[1] == 2 && out[2] == 3, "MPI_Allreduce on MPI_COMM_SELF");
    MPI_Allreduce(in, out, 0, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
}

/* inout += in on pairs of ints. */
static void pair_sum(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    const int *a = in;
    int *b = inout;
    (void)dt;
    for (int i = 0; i < 2 * *len; i++)
        b[i] += a[i];
}

/* MPI_Reduce_scatter, then MPI_Ireduce_scatter, on pairs of ints. */
static void reduce_scatter_derived(void)
{
    MPI_Datatype pair;
    MPI_Op sum;
    MPI_Request req;
    int *counts = malloc((size_t)size * sizeof *counts),
        *in = malloc((size_t)size * 2 * sizeof *in);
    int out[2];
    MPI_Type_contiguous(2, MPI_INT, &pair);
    MPI_Type_commit(&pair);
    MPI_Op_create(pair_sum, 1, &sum);
    for (int r = 0; r < size; r++) {
        counts[r] = 1;
        in[2 * r] = r + 1;
        in[2 * r + 1] = rank;
    }
    MPI_Reduce_scatter(in, out, counts, pair, sum, MPI_COMM_WORLD);
    check(out[0] == size * (rank + 1) && out[1] == size * (size - 1) / 2,
          "MPI_Reduce_scatter on pairs");
    out[0] = out[1] = 0;
    MPI_Ireduce_scatter(in, out, counts, pair, sum, MPI_COMM_WORLD, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    check(out[0] == size * (rank + 1) && out[1] == size * (size - 1) / 2,
          "MPI_Ireduce_scatter on pairs");
    MPI_Op_free(&sum);
    MPI_Type_free(&pair);
    free(counts);
    free(in);
}

/* Even and odd world ranks, the groups of an intercommunicator. */
static void intercommunicator(void)
{
    MPI_Comm half, inter;
    MPI_Request req;
    int color = rank % 2, hrank, in = rank + 1, out = 0, remote_sum = 0, v;
    MPI_Comm_split(MPI_COMM_WORLD, color, rank, &half);
    MPI_Comm_rank(half, &hrank);
    MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, 1 - color, 7, &inter);
    MPI_Allreduce(&in, &out, 1, MPI_INT, MPI_SUM, inter);
    for (int r = 1 - color; r < size; r += 2)
        remote_sum += r + 1;
    check(out == remote_sum, "MPI_Allreduce on an intercommunicator");
    int root = color ? 0 : hrank == 0 ? MPI_ROOT : MPI_PROC_NULL;
    v = color ? -1 : 42;
    MPI_Bcast(&v, 1, MPI_INT, root, inter);
    check(v == 42, "MPI_Bcast on an intercommunicator");
    v = color ? -1 : 43;
    MPI_Ibcast(&v, 1, MPI_INT, root, inter, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    check(v == 43, "MPI_Ibcast on an intercommunicator");
    MPI_Comm_free(&inter);
    MPI_Comm_free(&half);
}

static void expect(const char *text, const char *line, int times)
{
    char what[300];
    snprintf(what, sizeof what, "%s line '%s'", times ? "one" : "no", line);
    check(capture_count(text, line) == times, what);
}

int main(int argc, char **argv)
{
    char line[200];
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    capture_start();
    int in = rank + 1, out = 0;
    MPI_Allreduce(&in, &out, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    check(out == size * (size + 1) / 2, "MPI_Allreduce on MPI_COMM_WORLD");
    nothing_to_move();
    reduce_scatter_derived();
    if (size >= 2)
        intercommunicator();
    char *text = capture_end();

    expect(text,
           "treeduce: TREEDUCE_CMA_BYTES='garbage' is not a whole number from 0 to "
           "9223372036854775807; using the default",
           1);
    const char *const silent[] = {"MPI_Allreduce", "MPI_Bcast", "MPI_Reduce_scatter_block"};
    for (int i = 0; i < 3; i++) {
        snprintf(line, sizeof line, NOTE("%s", "%s"), silent[i], count0);
        expect(text, line, 0);
    }
    const char *const zero[] = {"MPI_Iallreduce", "MPI_Ibcast", "MPI_Ireduce_scatter_block"};
    for (int i = 0; i < 3; i++) {
        snprintf(line, sizeof line, NOTE("%s", "%s"), zero[i], count0);
        expect(text, line, 1);
    }
    const char *const one[] = {
        "MPI_Iallreduce",
        "MPI_Ireduce",
        "MPI_Iallgather",
#if MPI_VERSION >= 4
        "MPI_Allreduce_init",
#endif
        NULL
    };
    for (int i = 0; one[i]; i++) {
        snprintf(line, sizeof line, NOTE("%s", "%s"), one[i], one_rank);
        expect(text, line, 1);
    }
    snprintf(line, sizeof line, NOTE("MPI_Allreduce", "%s"), one_rank);
    expect(text, line, 0);
    expect(text, NOTE("MPI_Reduce_scatter", "derived datatype with a count per rank"), 1);
    expect(text, NOTE("MPI_Ireduce_scatter", "derived datatype with a count per rank"), 1);
    if (size >= 2) {
        expect(text, NOTE("MPI_Allreduce", "intercommunicator"), 1);
        expect(text, NOTE("MPI_Bcast", "intercommunicator"), 1);
        expect(text, NOTE("MPI_Ibcast", "intercommunicator"), 1);
    }
    free(text);

    long tally[2] = {passed, failed};
    MPI_Allreduce(MPI_IN_PLACE, tally, 2, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("%ld passed, %ld failed\n", tally[0], tally[1]);
    MPI_Finalize();
    return tally[1] > 0;
}
