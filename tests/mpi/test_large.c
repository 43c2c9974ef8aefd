/* A count above INT_MAX: MPI_Allreduce_c of 2^31 + 17 bytes (MPI_BXOR on
 * MPI_UNSIGNED_CHAR) through treeduce, against PMPI_Allreduce_c.  With
 * TREEDUCE_VERBOSE=2 the note says whether treeduce's plan ran it or the MPI
 * library's _c routine did (a plan whose messages would exceed INT_MAX
 * elements falls back).  Needs about 6 GiB per rank.  Prints "N passed, M
 * failed".  An MPI 3.1 library (Open MPI 4) has no large-count routines: the
 * test is skipped there (exit status 77). */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if MPI_VERSION < 4
int main(void)
{
    printf("skipped: MPI_Allreduce_c is an MPI 4.0 routine\n");
    return 77;
}
#else
int main(int argc, char **argv)
{
    int rank, bad = 0;
    MPI_Count n = (MPI_Count)INT32_MAX + 18;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    unsigned char *x = malloc((size_t)n), *r = malloc((size_t)n), *e = malloc((size_t)n);
    if (!x || !r || !e) {
        fprintf(stderr, "rank %d: out of memory\n", rank);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    uint64_t s = 0x9e3779b97f4a7c15ull * (uint64_t)(rank + 1);
    for (size_t i = 0; i < (size_t)n; i += 8) {
        s ^= s << 13, s ^= s >> 7, s ^= s << 17;
        memcpy(x + i, &s, (size_t)n - i < 8 ? (size_t)n - i : 8);
    }
    MPI_Allreduce_c(x, r, n, MPI_UNSIGNED_CHAR, MPI_BXOR, MPI_COMM_WORLD);
    PMPI_Allreduce_c(x, e, n, MPI_UNSIGNED_CHAR, MPI_BXOR, MPI_COMM_WORLD);
    bad = memcmp(r, e, (size_t)n) != 0;
    int tot = bad;
    PMPI_Allreduce(MPI_IN_PLACE, &tot, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("%d passed, %d failed\n", tot ? 0 : 1, tot ? 1 : 0);
    free(x), free(r), free(e);
    MPI_Finalize();
    return tot != 0;
}
#endif
