/* check_wisdom WISDOM: linked with the library treeduce-gen --wisdom made
 * from WISDOM, run with TREEDUCE_VERBOSE=2 on the placement WISDOM was
 * measured on.  For every range of WISDOM whose shape has as many ranks as
 * this job (but those the model's tables take), at a size inside the
 * range: the collective (MPI_X, the generated library's) names the range's
 * winner in its note, "mpi" included, and its result equals the MPI
 * library's (PMPI_X) on random data (bcast, allgather: exactly; sums:
 * within rounding).  Rank 0 prints "check_wisdom: N passed, M failed";
 * exit 1 on any failure. */
#include <math.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../mpi/capture.h"

static int rank, size, failed, passed;

static void fill(double *v, size_t n, unsigned seed)
{
    uint64_t s = 0x2545f4914f6cdd1dull * (seed + 1);
    for (size_t i = 0; i < n; i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        v[i] = (double)(s >> 11) / 9007199254740992.0 - 0.5;
    }
}

/* Run coll at count elements through MPI_X (got) and PMPI_X (want). */
static void call(const char *coll, int count, double *send, double *got, double *want)
{
    if (strcmp(coll, "allreduce") == 0) {
        MPI_Allreduce(send, got, count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        PMPI_Allreduce(send, want, count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    } else if (strcmp(coll, "reduce_scatter_block") == 0) {
        MPI_Reduce_scatter_block(send, got, count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        PMPI_Reduce_scatter_block(send, want, count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    } else if (strcmp(coll, "allgather") == 0) {
        MPI_Allgather(send, count, MPI_DOUBLE, got, count, MPI_DOUBLE, MPI_COMM_WORLD);
        PMPI_Allgather(send, count, MPI_DOUBLE, want, count, MPI_DOUBLE, MPI_COMM_WORLD);
    } else if (strcmp(coll, "reduce") == 0) {
        MPI_Reduce(send, got, count, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
        PMPI_Reduce(send, want, count, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    } else {
        if (rank == 0) {
            memcpy(got, send, (size_t)count * sizeof(double));
            memcpy(want, send, (size_t)count * sizeof(double));
        }
        MPI_Bcast(got, count, MPI_DOUBLE, 0, MPI_COMM_WORLD);
        PMPI_Bcast(want, count, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    }
}

static const char *routine(const char *coll)
{
    static const char *const names[][2] = {{"allreduce", "MPI_Allreduce"},
                                           {"reduce_scatter_block", "MPI_Reduce_scatter_block"},
                                           {"allgather", "MPI_Allgather"},
                                           {"reduce", "MPI_Reduce"},
                                           {"bcast", "MPI_Bcast"}};
    for (int i = 0; i < 5; i++)
        if (strcmp(coll, names[i][0]) == 0)
            return names[i][1];
    return "?";
}

static void check(int ok, const char *what)
{
    int all = ok;
    PMPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!ok)
        printf("FAIL rank %d: %s\n", rank, what);
    if (all)
        passed++;
    else
        failed++;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    FILE *f = argc == 2 ? fopen(argv[1], "r") : NULL;
    if (!f) {
        fprintf(stderr, "usage: check_wisdom WISDOM (readable)\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    char line[1024], machine[256] = "";
    char seen[64][160];
    int nseen = 0, ranges = 0;
    while (fgets(line, sizeof line, f)) {
        if (sscanf(line, "machine \"%255[^\"]\"", machine) == 1)
            continue;
        char coll[64], below[32], alg[128];
        int nodes, ppn;
        size_t from;
        if (sscanf(line, "range %63s %d %d %zu %31s %127s", coll, &nodes, &ppn, &from, below,
                   alg) != 6 ||
            nodes * ppn != size || strcmp(alg, "model") == 0) /* the model's: not the wisdom's */
            continue;
        ranges++;
        /* a size inside [from, below): the geometric middle, whole doubles */
        size_t lo = from < 8 ? 8 : from,
               hi = strcmp(below, "-") == 0 ? 16 * lo : strtoull(below, NULL, 10);
        size_t bytes = (size_t)sqrt((double)lo * (double)hi) / 8 * 8;
        if (bytes < lo)
            bytes = lo;
        if (bytes >= hi)
            bytes = (hi - 1) / 8 * 8;
        int count = (int)(bytes / 8);
        size_t n = (size_t)count * (size_t)size;
        double *send = malloc(n * sizeof(double)), *got = calloc(n, sizeof(double)),
               *want = calloc(n, sizeof(double));
        if (!send || !got || !want)
            MPI_Abort(MPI_COMM_WORLD, 2);
        fill(send, n, (unsigned)rank);
        char note[256], what[512];
        snprintf(note, sizeof note, "treeduce[%s]: %s runs %s", machine, routine(coll), alg);
        capture_start();
        call(coll, count, send, got, want);
        char *text = capture_end();
        int again = 0; /* a note is printed once per process */
        for (int i = 0; i < nseen; i++)
            again |= strcmp(seen[i], note) == 0;
        if (!again && nseen < 64)
            snprintf(seen[nseen++], sizeof seen[0], "%s", note);
        snprintf(what, sizeof what, "%s %dx%d at %zu B: expected the note '%s'", coll, nodes, ppn,
                 bytes, note);
        check(again || capture_count(text, note) == 1, what);
        free(text);
        size_t nout = strcmp(coll, "allgather") == 0 ? n : (size_t)count;
        int same = 1;
        if (strcmp(coll, "reduce") != 0 || rank == 0)
            for (size_t i = 0; i < nout; i++)
                same &= strcmp(coll, "allgather") == 0 || strcmp(coll, "bcast") == 0
                            ? got[i] == want[i]
                            : fabs(got[i] - want[i]) <= 1e-12 * (fabs(want[i]) + 1);
        snprintf(what, sizeof what, "%s %dx%d at %zu B (%s): result differs from PMPI's", coll,
                 nodes, ppn, bytes, alg);
        check(same, what);
        free(send);
        free(got);
        free(want);
    }
    fclose(f);
    check(ranges > 0, "the wisdom has ranges for this job's shape");
    if (rank == 0)
        printf("check_wisdom: %d ranges, %d passed, %d failed\n", ranges, passed, failed);
    MPI_Finalize();
    return failed ? 1 : 0;
}
