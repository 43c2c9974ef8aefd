/* smpi_allreduce - treeduce's MPI_Allreduce on a simulated machine (SimGrid
 * SMPI), checked on every rank against PMPI_Allreduce on random data.
 *
 * Linked with a generated machine's library, run by smpirun on a platform
 * whose hosts are named as the machine's nodes (MPI_Get_processor_name gives
 * the simulated host), so no TREEDUCE_HOSTS is needed.  For each size
 * (bytes of the vector): int64 SUM out of place and in place, double MAX,
 * and a user operation (int64 sum through MPI_Op_create, which runs the plan
 * through MPI_Reduce_local whatever kernels the build has), each compared
 * element by element with PMPI_Allreduce (exact: integer sums and MAX do not
 * depend on the order of reduction).  Rank 0 prints the wall-clock time of
 * the first call (the communicator's setup and one allreduce: what decides
 * whether thousands of simulated ranks are practical) and the simulated
 * time, then "N passed, M failed".
 *
 * usage: smpi_allreduce [--sizes B,B,...] [--iters N] [--setup-only]
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Wall-clock seconds: the host's clock, not SMPI's simulated one (the
 * parentheses keep smpicc's clock_gettime macro out). */
static double wall_s(void)
{
    struct timespec ts;
    (clock_gettime)(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static uint64_t rng_next(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static void user_sum(void *in, void *inout, int *len, MPI_Datatype *type)
{
    (void)type;
    const int64_t *a = in;
    int64_t *b = inout;
    for (int i = 0; i < *len; i++)
        b[i] += a[i];
}

/* Elements where got differs from want, as bytes of elem each. */
static long mismatches(const void *got, const void *want, size_t n, size_t elem)
{
    long bad = 0;
    for (size_t i = 0; i < n; i++)
        bad += memcmp((const char *)got + i * elem, (const char *)want + i * elem, elem) != 0;
    return bad;
}

int main(int argc, char **argv)
{
    double t0 = wall_s();
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *sizes = "8,65536,1048576";
    int iters = 1, setup_only = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--sizes") == 0 && i + 1 < argc)
            sizes = argv[++i];
        else if (strcmp(argv[i], "--iters") == 0 && i + 1 < argc)
            iters = atoi(argv[++i]);
        else if (strcmp(argv[i], "--setup-only") == 0)
            setup_only = 1;
        else {
            if (rank == 0)
                fprintf(stderr, "usage: %s [--sizes B,B,...] [--iters N] [--setup-only]\n",
                        argv[0]);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    }
    double t_init = wall_s();

    /* the first call: setup of MPI_COMM_WORLD and one 8-byte allreduce */
    int64_t one = rank + 1, total = 0;
    double sim0 = MPI_Wtime(), w0 = wall_s();
    MPI_Allreduce(&one, &total, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
    double w1 = wall_s(), sim1 = MPI_Wtime();
    long passed = 0, failed = 0;
    if (total == (int64_t)size * (size + 1) / 2)
        passed++;
    else
        failed++;
    if (rank == 0)
        printf("%d ranks: MPI_Init %.2f s wall; setup + first allreduce %.2f s wall, %.6f s "
               "simulated\n",
               size, t_init - t0, w1 - w0, sim1 - sim0);

    MPI_Op usum;
    MPI_Op_create(user_sum, 1, &usum);
    for (const char *p = sizes; !setup_only && *p;) {
        size_t bytes = strtoull(p, (char **)&p, 10);
        if (*p == ',')
            p++;
        size_t n = bytes < 8 ? 1 : bytes / 8;
        int64_t *a = malloc(n * 8), *got = malloc(n * 8), *want = malloc(n * 8);
        double *d = malloc(n * 8), *dgot = malloc(n * 8), *dwant = malloc(n * 8);
        if (!a || !got || !want || !d || !dgot || !dwant) {
            fprintf(stderr, "rank %d: out of memory at %zu bytes\n", rank, bytes);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        uint64_t s = 0x9e3779b97f4a7c15ull ^ ((uint64_t)rank << 20) ^ bytes;
        for (size_t i = 0; i < n; i++) {
            a[i] = (int64_t)(rng_next(&s) >> 24) - ((int64_t)1 << 39);
            d[i] = (double)(int64_t)(rng_next(&s) >> 11) * 0x1p-40 - 4096.0;
        }
        double ws = wall_s(), ss = MPI_Wtime();
        for (int it = 0; it < iters; it++) {
            long bad = 0;
            PMPI_Allreduce(a, want, (int)n, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
            MPI_Allreduce(a, got, (int)n, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
            bad += mismatches(got, want, n, 8) != 0;
            memcpy(got, a, n * 8);
            MPI_Allreduce(MPI_IN_PLACE, got, (int)n, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
            bad += mismatches(got, want, n, 8) != 0;
            MPI_Allreduce(a, got, (int)n, MPI_INT64_T, usum, MPI_COMM_WORLD);
            bad += mismatches(got, want, n, 8) != 0;
            PMPI_Allreduce(d, dwant, (int)n, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
            MPI_Allreduce(d, dgot, (int)n, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
            bad += mismatches(dgot, dwant, n, 8) != 0;
            if (bad)
                fprintf(stderr, "FAIL rank %d: %zu bytes, iteration %d: %ld of 4 checks wrong\n",
                        rank, bytes, it, bad);
            passed += 4 - bad;
            failed += bad;
        }
        if (rank == 0)
            printf("%zu bytes: %d x 5 allreduce %.2f s wall, %.6f s simulated\n", bytes, iters,
                   wall_s() - ws, MPI_Wtime() - ss);
        free(a);
        free(got);
        free(want);
        free(d);
        free(dgot);
        free(dwant);
    }
    MPI_Op_free(&usum);
    long mine[2] = {passed, failed}, all[2];
    PMPI_Reduce(mine, all, 2, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("smpi_allreduce: %ld passed, %ld failed\n", all[0], all[1]);
    MPI_Finalize();
    return 0;
}
