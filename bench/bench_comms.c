/* bench_comms.c - what a short-lived communicator costs: rounds of
 * MPI_Comm_dup, K allreduces of one double, MPI_Comm_free, with treeduce's
 * MPI_Allreduce (a library preloaded) against the MPI library's
 * PMPI_Allreduce, in one job, the two taking turns round by round.
 *
 * Applications make communicators often (PETSc's field splits, mpi4py's
 * Split in a loop, libraries that duplicate the communicator they are
 * given); treeduce must not make them dear.  For each K the table gives, per
 * communicator (dup, K calls, free), the median over rounds of the slowest
 * rank's mean time, for:
 *   dup      MPI_Comm_dup and MPI_Comm_free alone: the floor, what any
 *            communicator costs in this MPI library;
 *   mpi      with K PMPI_Allreduce: the MPI library alone;
 *   tr       with K MPI_Allreduce: treeduce (its first calls on a
 *            communicator go to the library's routine, the
 *            TREEDUCE_SEGMENT_CALLS-th sets it up, and it makes its
 *            node segment once its calls have moved
 *            TREEDUCE_SEGMENT_BYTES: docs/runtime.md);
 * and tr/mpi.  Every call's result is checked against the exact sum
 * (integer-valued doubles); a mismatch aborts.
 *
 * Usage: bench_comms [--comms N] [--calls K1,K2,...] [--rounds R] [--csv FILE]
 *                    [--check-only]
 * (defaults 1000 communicators a round, K = 1,4,5,20,100,1000, 5 rounds;
 * --check-only: one round of 20 communicators per K, checked, then the tally.)
 */
#include <dlfcn.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_common.h"

enum { C_DUP, C_MPI, C_TR, C_N };
static const char *const c_col[C_N] = {"dup", "mpi", "tr"};

#define MAX_CALLS 16

static struct {
    int comms, rounds, ncalls;
    int calls[MAX_CALLS];
} bc = {1000, 5, 6, {1, 4, 5, 20, 100, 1000}};

/* --comms, --rounds and --calls (bench_parse_args' extra). */
static int extra(const char *a, const char *v)
{
    char *end;
    if (!strcmp(a, "--comms") || !strcmp(a, "--rounds")) {
        long n = strtol(v, &end, 10);
        if (*end || n < 1 || n > 1000000)
            return -1;
        *(!strcmp(a, "--comms") ? &bc.comms : &bc.rounds) = (int)n;
        return 1;
    }
    if (!strcmp(a, "--calls")) {
        bc.ncalls = 0;
        for (const char *p = v; *p;) {
            long n = strtol(p, &end, 10);
            if (end == p || n < 0 || n > 100000 || bc.ncalls == MAX_CALLS || (*end && *end != ','))
                return -1;
            bc.calls[bc.ncalls++] = (int)n;
            p = *end ? end + 1 : end;
        }
        return bc.ncalls ? 1 : -1;
    }
    return 0;
}

/* One round of n communicators of who with k calls each: the slowest rank's
 * mean time per communicator (s).  Each call's result is checked. */
static double round_of(int who, int n, int k)
{
    double t;
    long bad = 0;
    PMPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int i = 0; i < n; i++) {
        MPI_Comm c;
        if (MPI_Comm_dup(MPI_COMM_WORLD, &c) != MPI_SUCCESS)
            die("MPI_Comm_dup failed");
        for (int j = 0; j < k && who != C_DUP; j++) {
            double x = (double)(rank + i + j), y = -1;
            int rc = who == C_TR ? MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, c)
                                 : PMPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, c);
            /* sum over r of (r + i + j) */
            double want = (double)nprocs * (double)(i + j) + (double)nprocs * (nprocs - 1) / 2;
            bad += rc != MPI_SUCCESS || y != want;
        }
        if (MPI_Comm_free(&c) != MPI_SUCCESS)
            die("MPI_Comm_free failed");
    }
    t = (MPI_Wtime() - t0) / n;
    PMPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (bad)
        die("%s: %ld results differ from the exact sum (%d calls per communicator)", c_col[who],
            bad, k);
    PMPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return t;
}

int main(int argc, char **argv)
{
    bench_init(&argc, &argv, "bench_comms");
    if (bench_parse_args(argc, argv, extra) != 0 || opt.nlib)
        return bench_usage("usage: bench_comms [--comms N] [--calls K1,K2,...] [--rounds R] "
                           "[--csv FILE] [--check-only]\n");
    if (!dlsym(RTLD_DEFAULT, "trd_fell_back"))
        die("no treeduce library loaded: preload one (bench/README.md)");
    if (opt.check_only) {
        for (int i = 0; i < bc.ncalls; i++)
            for (int who = C_MPI; who < C_N; who++)
                round_of(who, 20, bc.calls[i]);
        return bench_check_only(bc.ncalls * 2);
    }
    FILE *csv = NULL;
    if (rank == 0 && opt.csv && !(csv = fopen(opt.csv, "w")))
        die("%s: cannot write", opt.csv);
    const char *sc = getenv("TREEDUCE_SEGMENT_CALLS"), *sb = getenv("TREEDUCE_SEGMENT_BYTES");
    if (rank == 0) {
        printf("# bench_comms: %d ranks, %d communicators a round, %d rounds; "
               "TREEDUCE_SEGMENT_CALLS=%s TREEDUCE_SEGMENT_BYTES=%s\n",
               nprocs, bc.comms, bc.rounds, sc ? sc : "", sb ? sb : "");
        printf("# per communicator (dup, K allreduces of one double, free): median over rounds "
               "of the slowest rank's mean, us\n");
        printf("%6s %9s %9s %9s %7s\n", "calls", "dup_us", "mpi_us", "tr_us", "tr/mpi");
        if (csv)
            fprintf(csv, "calls,dup_us,mpi_us,tr_us,tr_over_mpi\n");
    }
    double *t = xmalloc(sizeof(double) * (size_t)bc.rounds * C_N);
    for (int i = 0; i < bc.ncalls; i++) {
        int k = bc.calls[i];
        for (int who = 0; who < C_N; who++) /* warm-up */
            round_of(who, bc.comms / 10 + 1, k);
        for (int r = 0; r < bc.rounds; r++)
            for (int j = 0; j < C_N; j++) { /* the three take turns at going first */
                int who = (r + j) % C_N;
                t[who * bc.rounds + r] = round_of(who, bc.comms, k);
            }
        double m[C_N];
        for (int who = 0; who < C_N; who++)
            m[who] = median(&t[who * bc.rounds], bc.rounds) * 1e6;
        if (rank == 0) {
            printf("%6d %9.2f %9.2f %9.2f %7.2f\n", k, m[C_DUP], m[C_MPI], m[C_TR],
                   m[C_TR] / m[C_MPI]);
            fflush(stdout);
            if (csv)
                fprintf(csv, "%d,%.3f,%.3f,%.3f,%.3f\n", k, m[C_DUP], m[C_MPI], m[C_TR],
                        m[C_TR] / m[C_MPI]);
        }
    }
    free(t);
    if (csv)
        fclose(csv);
    MPI_Finalize();
    return 0;
}
