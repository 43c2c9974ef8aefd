/* matrix.c - the correctness matrix across the nodes of an emulated cluster
 * (bench/cluster.sh), against the MPI library's PMPI_ routines on random
 * data:
 *  - every candidate of every collective (trd_candidates: each algorithm
 *    that plans for the communicator's shape, with each of its parameter
 *    candidates, and "mpi"), forced through the *_with routines;
 *  - the machine's own choice through the MPI_ routines the library
 *    defines, blocking, nonblocking (MPI_I*) and persistent (MPI_*_init,
 *    started twice on new data);
 * at several counts, on MPI_COMM_WORLD and on the communicator of every
 * other rank (rank % 2), whose shape differs.
 *
 * Linked with a library generated for the emulated topology; the machine's
 * accessor is TRD_MACHINE (e.g. -DTRD_MACHINE=trd_testbed_machine).  Ranks
 * map to nodes by their real host names: no TREEDUCE_HOSTS.  The values are
 * small integers held in doubles, so that every order of summation gives the
 * same bits and every result is compared exactly.
 *
 * Prints, on rank 0, each communicator's size and its nodes as the library
 * sees them, one line per failed check (any rank), and "matrix: N passed,
 * M failed"; exits non-zero if a check failed.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "treeduce.h"

#ifndef TRD_MACHINE
#error "compile with -DTRD_MACHINE=trd_<machine>_machine"
#endif
const trd_machine *TRD_MACHINE(void);

static int wrank, wsize, passed, failed;
static uint64_t rng;

/* Every rank of comm agrees that ok holds; what is printed by those where
 * it does not. */
static void check(MPI_Comm comm, int ok, const char *what)
{
    int all;
    PMPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, comm);
    if (all)
        passed++;
    else {
        failed++;
        if (!ok)
            printf("FAIL rank %d: %s\n", wrank, what);
    }
}

/* Small integers in [-8, 8], as doubles. */
static void fill(double *x, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
        x[i] = (double)(int)(rng % 17) - 8;
    }
}

static const char *const coll_names[TRD_NCOLLS] = {"allreduce", "reduce_scatter_block", "allgather",
                                                   "reduce", "bcast"};

enum { BLOCKING, NONBLOCKING, PERSISTENT };

/* The persistent collectives are MPI 4.0's: an MPI 3.1 library (Open MPI 4)
 * runs the other forms. */
#if MPI_VERSION >= 4
#define LAST_MODE PERSISTENT
#define INIT_CALL(call) (call)
#else
#define LAST_MODE NONBLOCKING
#define INIT_CALL(call) MPI_ERR_OTHER /* never reached */
#endif
static const char *const mode_names[] = {"blocking", "nonblocking", "persistent"};

/* One call of collective coll with count elements (a rank's block for
 * reduce_scatter_block and allgather): forced alg (blocking only; NULL: the
 * machine's choice through the MPI_ routine of mode), against the PMPI_
 * routine.  Returns trd_fell_back() after a forced call, else 0. */
static int run(MPI_Comm comm, int coll, size_t count, const char *alg, int mode)
{
    const trd_machine *m = TRD_MACHINE();
    int p, me, rc = MPI_SUCCESS, rc2 = MPI_SUCCESS, fell = 0, n = (int)count;
    MPI_Comm_size(comm, &p);
    MPI_Comm_rank(comm, &me);
    int root = (int)(count % (size_t)p);
    size_t nin = coll == TRD_REDUCE_SCATTER_BLOCK ? count * (size_t)p : count;
    size_t nout = coll == TRD_ALLGATHER ? count * (size_t)p : count;
    double *in = malloc(nin * sizeof *in), *out = malloc(nout * sizeof *out),
           *ref = malloc(nout * sizeof *ref);
    MPI_Request req = MPI_REQUEST_NULL;
    for (int start = 0; start < (mode == PERSISTENT ? 2 : 1); start++) {
        fill(in, nin);
        fill(out, nout); /* the result must overwrite what was there */
        if (coll == TRD_BCAST)
            memcpy(out, in, count * sizeof *in);
        if (alg) {
            switch (coll) {
            case TRD_ALLREDUCE:
                rc = trd_allreduce_with(m, in, out, n, MPI_DOUBLE, MPI_SUM, comm, alg);
                break;
            case TRD_REDUCE_SCATTER_BLOCK:
                rc = trd_reduce_scatter_block_with(m, in, out, n, MPI_DOUBLE, MPI_SUM, comm, alg);
                break;
            case TRD_ALLGATHER:
                rc = trd_allgather_with(m, in, n, MPI_DOUBLE, out, n, MPI_DOUBLE, comm, alg);
                break;
            case TRD_REDUCE:
                rc = trd_reduce_with(m, in, out, n, MPI_DOUBLE, MPI_SUM, root, comm, alg);
                break;
            default:
                rc = trd_bcast_with(m, out, n, MPI_DOUBLE, root, comm, alg);
                break;
            }
            fell = trd_fell_back();
        } else if (mode == PERSISTENT && start > 0) {
            rc = MPI_Start(&req);
        } else {
            MPI_Request *r = mode == BLOCKING ? NULL : &req;
            int init = mode == PERSISTENT;
            switch (coll) {
            case TRD_ALLREDUCE:
                rc = !r     ? MPI_Allreduce(in, out, n, MPI_DOUBLE, MPI_SUM, comm)
                     : init ? INIT_CALL(MPI_Allreduce_init(in, out, n, MPI_DOUBLE, MPI_SUM, comm,
                                                           MPI_INFO_NULL, r))
                            : MPI_Iallreduce(in, out, n, MPI_DOUBLE, MPI_SUM, comm, r);
                break;
            case TRD_REDUCE_SCATTER_BLOCK:
                rc = !r     ? MPI_Reduce_scatter_block(in, out, n, MPI_DOUBLE, MPI_SUM, comm)
                     : init ? INIT_CALL(MPI_Reduce_scatter_block_init(
                                  in, out, n, MPI_DOUBLE, MPI_SUM, comm, MPI_INFO_NULL, r))
                            : MPI_Ireduce_scatter_block(in, out, n, MPI_DOUBLE, MPI_SUM, comm, r);
                break;
            case TRD_ALLGATHER:
                rc = !r     ? MPI_Allgather(in, n, MPI_DOUBLE, out, n, MPI_DOUBLE, comm)
                     : init ? INIT_CALL(MPI_Allgather_init(in, n, MPI_DOUBLE, out, n, MPI_DOUBLE,
                                                           comm, MPI_INFO_NULL, r))
                            : MPI_Iallgather(in, n, MPI_DOUBLE, out, n, MPI_DOUBLE, comm, r);
                break;
            case TRD_REDUCE:
                rc = !r     ? MPI_Reduce(in, out, n, MPI_DOUBLE, MPI_SUM, root, comm)
                     : init ? INIT_CALL(MPI_Reduce_init(in, out, n, MPI_DOUBLE, MPI_SUM, root, comm,
                                                        MPI_INFO_NULL, r))
                            : MPI_Ireduce(in, out, n, MPI_DOUBLE, MPI_SUM, root, comm, r);
                break;
            default:
                rc = !r     ? MPI_Bcast(out, n, MPI_DOUBLE, root, comm)
                     : init ? INIT_CALL(
                                  MPI_Bcast_init(out, n, MPI_DOUBLE, root, comm, MPI_INFO_NULL, r))
                            : MPI_Ibcast(out, n, MPI_DOUBLE, root, comm, r);
                break;
            }
            if (rc == MPI_SUCCESS && init)
                rc = MPI_Start(r);
        }
        if (rc == MPI_SUCCESS && req != MPI_REQUEST_NULL)
            rc = MPI_Wait(&req, MPI_STATUS_IGNORE);
        switch (coll) {
        case TRD_ALLREDUCE:
            rc2 = PMPI_Allreduce(in, ref, n, MPI_DOUBLE, MPI_SUM, comm);
            break;
        case TRD_REDUCE_SCATTER_BLOCK:
            rc2 = PMPI_Reduce_scatter_block(in, ref, n, MPI_DOUBLE, MPI_SUM, comm);
            break;
        case TRD_ALLGATHER:
            rc2 = PMPI_Allgather(in, n, MPI_DOUBLE, ref, n, MPI_DOUBLE, comm);
            break;
        case TRD_REDUCE:
            rc2 = PMPI_Reduce(in, ref, n, MPI_DOUBLE, MPI_SUM, root, comm);
            break;
        default:
            memcpy(ref, in, count * sizeof *in);
            rc2 = PMPI_Bcast(ref, n, MPI_DOUBLE, root, comm);
            break;
        }
        int cmp = coll != TRD_REDUCE || me == root;
        char msg[300];
        snprintf(msg, sizeof msg, "%d ranks: %s of %zu doubles (%s, %s, start %d): rc %d/%d%s", p,
                 coll_names[coll], count, alg ? alg : "auto", mode_names[mode], start, rc, rc2,
                 cmp && memcmp(out, ref, nout * sizeof *out) ? ", result differs" : "");
        check(comm,
              rc == MPI_SUCCESS && rc2 == MPI_SUCCESS &&
                  (!cmp || !memcmp(out, ref, nout * sizeof *out)),
              msg);
    }
    if (req != MPI_REQUEST_NULL)
        MPI_Request_free(&req);
    free(in);
    free(out);
    free(ref);
    return fell;
}

static const size_t counts[] = {1, 7, 300, 4099, 65539};
#define NCOUNTS (sizeof counts / sizeof *counts)

/* Everything on comm; name says which communicator it is. */
static void matrix(MPI_Comm comm, const char *name)
{
    static char cand[128][TRD_CANDIDATE_MAX];
    char msg[300];
    int p;
    MPI_Comm_size(comm, &p);
    for (int coll = 0; coll < TRD_NCOLLS; coll++) {
        int n = trd_candidates(TRD_MACHINE(), comm, coll, cand, 128);
        snprintf(msg, sizeof msg, "%s: %s: %d candidates", name, coll_names[coll], n);
        check(comm, n >= 2 && n <= 128, msg);
        if (n < 2 || n > 128)
            continue;
        for (int i = 0; i < n; i++) {
            int ran = 0, is_mpi = !strcmp(cand[i], "mpi");
            for (size_t k = 0; k < NCOUNTS; k++)
                ran |= !run(comm, coll, counts[k], cand[i], BLOCKING);
            /* it ran its own schedule at one count at least */
            snprintf(msg, sizeof msg, "%s: %s forced %.63s: %s", name, coll_names[coll], cand[i],
                     is_mpi ? "ran a schedule" : "fell back at every count");
            check(comm, ran == !is_mpi, msg);
            if (wrank == 0)
                printf("%s: %s %s: %zu counts\n", name, coll_names[coll], cand[i], NCOUNTS);
        }
        for (int mode = BLOCKING; mode <= LAST_MODE; mode++)
            for (size_t k = 0; k < NCOUNTS; k++)
                run(comm, coll, counts[k], NULL, mode);
    }
    if (wrank == 0)
        printf("%s: %d ranks done\n", name, p);
}

int main(int argc, char **argv)
{
    char host[MPI_MAX_PROCESSOR_NAME];
    int len;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    MPI_Get_processor_name(host, &len);
    rng = 0x9e3779b97f4a7c15ull * (uint64_t)(wrank + 1);
    printf("rank %d of %d on %s\n", wrank, wsize, host);
    fflush(stdout);
    PMPI_Barrier(MPI_COMM_WORLD);
    matrix(MPI_COMM_WORLD, "world");
    MPI_Comm half;
    MPI_Comm_split(MPI_COMM_WORLD, wrank % 2, wrank, &half);
    matrix(half, wrank % 2 ? "odd" : "even");
    MPI_Comm_free(&half);
    if (wrank == 0)
        printf("matrix: %d passed, %d failed\n", passed, failed);
    MPI_Finalize();
    return failed ? 1 : 0;
}
