/* bench_smpi: MPI_Allreduce (MPI_SUM of doubles) at a few sizes, every
 * rank's result checked, timed in the simulated time of SimGrid's SMPI.
 *
 * Built with smpicc, linked with a machine's libtreeduce (MPI_Allreduce is
 * treeduce's, which follows TREEDUCE_ALGORITHM; with TREEDUCE_DISABLE=1 it is
 * SMPI's, chosen with --cfg=smpi/allreduce:NAME).  Run by bench/scale.sh.
 *
 *   bench_smpi [--sizes 8,1K,64K,1M,16M] [--iters N] [--shared-from BYTES]
 *
 * Each rank r sends (r+1) * g(i) at element i, g a hash of i in 1..1024, so
 * every element of the sum is g(i) * p(p+1)/2 exactly (below 2^53 up to
 * 2^21 ranks, whatever the order of the additions): a contribution lost,
 * doubled or misplaced changes it.  Every rank compares its whole result
 * after a first (warm-up) call.  At sizes from --shared-from on, buffers come
 * from SMPI_SHARED_MALLOC (every rank the same memory: thousands of ranks of
 * 16 MiB do not fit) and the result is not checked.
 *
 * Then --iters calls, each after a barrier, timed on SMPI's clock (one for
 * all ranks) from the last rank's entry to the last rank's exit, so that the
 * ranks' skew in leaving the barrier does not count; the table gives the
 * median and the minimum over the calls (simulated time does not depend on
 * this machine's load: one call is enough).  Output, on rank
 * 0, one CSV line per size:
 *     bytes,ranks,median_s,min_s,wrong_ranks,checked
 * wrong_ranks: ranks whose result differs (0 when correct; -1 unchecked).
 *
 * Compiled with -DBENCH_SMPI_MACHINE=trd_NAME_machine (the generated
 * machine's accessor; bench/tune_smpi.sh), two more options:
 *   --candidates  print, on rank 0, the allreduce algorithms that can be
 *                 forced on MPI_COMM_WORLD (trd_candidates, as
 *                 TREEDUCE_ALGORITHM values, "mpi" left out), one a line,
 *                 and time nothing;
 *   --fell-back   add a column fell_back_ranks: the ranks whose timed calls
 *                 went to the MPI library's routine (trd_fell_back; a forced
 *                 algorithm that cannot run a size is not timed as itself). */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef BENCH_SMPI_MACHINE
#include "treeduce.h"
const trd_machine *BENCH_SMPI_MACHINE(void);
#endif

#ifndef SMPI_SHARED_MALLOC
#define SMPI_SHARED_MALLOC(n) malloc(n)
#define SMPI_SHARED_FREE(p) free(p)
#endif

static double g(size_t i)
{
    return (double)(((uint32_t)((uint32_t)i * 2654435761u) >> 22) + 1);
}

static size_t parse_size(const char *s)
{
    char *end;
    double v = strtod(s, &end);
    if (*end == 'K' || *end == 'k')
        v *= 1024;
    else if (*end == 'M' || *end == 'm')
        v *= 1024 * 1024;
    else if (*end == 'G' || *end == 'g')
        v *= 1024.0 * 1024 * 1024;
    return (size_t)v;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    const char *sizes = "8,1K,64K,1M,16M";
    int iters = 3;
    size_t shared_from = SIZE_MAX;
    int report = 0; /* --fell-back */
#ifdef BENCH_SMPI_MACHINE
    int list = 0; /* --candidates */
#endif
    MPI_Init(&argc, &argv);
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--sizes") && i + 1 < argc)
            sizes = argv[++i];
        else if (!strcmp(argv[i], "--iters") && i + 1 < argc)
            iters = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--shared-from") && i + 1 < argc)
            shared_from = parse_size(argv[++i]);
#ifdef BENCH_SMPI_MACHINE
        else if (!strcmp(argv[i], "--candidates"))
            list = 1;
        else if (!strcmp(argv[i], "--fell-back"))
            report = 1;
#endif
        else {
            fprintf(stderr, "usage: bench_smpi [--sizes LIST] [--iters N] [--shared-from BYTES]"
#ifdef BENCH_SMPI_MACHINE
                            " [--candidates] [--fell-back]"
#endif
                            "\n");
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    }
    if (iters < 1)
        iters = 1;
    int rank, p;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
#ifdef BENCH_SMPI_MACHINE
    if (list) {
        char(*cand)[TRD_CANDIDATE_MAX] = malloc(256 * sizeof *cand);
        int n = cand
                    ? trd_candidates(BENCH_SMPI_MACHINE(), MPI_COMM_WORLD, TRD_ALLREDUCE, cand, 256)
                    : -1;
        if (n < 0 || n > 256) {
            fprintf(stderr, "bench_smpi: trd_candidates failed (%d)\n", n);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        for (int i = 0; i < n && rank == 0; i++)
            if (strcmp(cand[i], "mpi") != 0)
                printf("%s\n", cand[i]);
        free(cand);
        MPI_Finalize();
        return 0;
    }
#endif
    double *times = malloc((size_t)iters * sizeof *times);
    char *sizelist = strdup(sizes);
    if (rank == 0)
        printf("bytes,ranks,median_s,min_s,wrong_ranks,checked%s\n",
               report ? ",fell_back_ranks" : "");
    for (char *save = NULL, *tok = strtok_r(sizelist, ",", &save); tok;
         tok = strtok_r(NULL, ",", &save)) {
        size_t bytes = parse_size(tok), n = bytes / sizeof(double);
        if (n == 0)
            n = 1;
        int shared = bytes >= shared_from;
        double *in = shared ? SMPI_SHARED_MALLOC(n * sizeof *in) : malloc(n * sizeof *in);
        double *out = shared ? SMPI_SHARED_MALLOC(n * sizeof *out) : malloc(n * sizeof *out);
        if (!in || !out) {
            fprintf(stderr, "bench_smpi: out of memory at %zu bytes\n", bytes);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        for (size_t i = 0; i < n; i++)
            in[i] = (double)(rank + 1) * g(i);
        memset(out, 0, n * sizeof *out);
        MPI_Allreduce(in, out, (int)n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        int wrong = 0;
        if (!shared) {
            double tri = (double)p * (p + 1) / 2;
            for (size_t i = 0; i < n && !wrong; i++)
                wrong = out[i] != g(i) * tri;
        }
        int nwrong = 0;
        PMPI_Reduce(&wrong, &nwrong, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
        /* SMPI's clock is one for all ranks: a call takes from the last
         * rank's entry to the last rank's exit (the ranks leave a barrier up
         * to a latency apart; the first to enter would count that too) */
        int fell = 0, nfell = 0;
        for (int it = 0; it < iters; it++) {
            PMPI_Barrier(MPI_COMM_WORLD);
            double t[2], tmax[2] = {0, 0};
            t[0] = MPI_Wtime();
            MPI_Allreduce(in, out, (int)n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
            t[1] = MPI_Wtime();
#ifdef BENCH_SMPI_MACHINE
            fell |= trd_fell_back();
#endif
            PMPI_Reduce(t, tmax, 2, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
            double tmax_call = tmax[1] - tmax[0];
            times[it] = tmax_call;
        }
        if (report)
            PMPI_Reduce(&fell, &nfell, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
        if (rank == 0) {
            qsort(times, (size_t)iters, sizeof *times, cmp_double);
            printf("%zu,%d,%.9e,%.9e,%d,%d", n * sizeof(double), p, times[iters / 2], times[0],
                   shared ? -1 : nwrong, !shared);
            if (report)
                printf(",%d", nfell);
            printf("\n");
            fflush(stdout);
        }
        if (shared) {
            SMPI_SHARED_FREE(in);
            SMPI_SHARED_FREE(out);
        } else {
            free(in);
            free(out);
        }
    }
    free(sizelist);
    free(times);
    MPI_Finalize();
    return 0;
}
