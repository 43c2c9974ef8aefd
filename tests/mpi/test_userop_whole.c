/* test_userop_whole.c - user-defined operations are called on whole vectors.
 *
 * MPI defines a user op elementwise, but MPICH's and Open MPI's default
 * algorithms call it on the whole vector, and codes rely on it: hypre's
 * hypre_GenerateSubComm allreduces a list [active, n, r_1 < ... < r_n] of
 * nprocs + 2 ints with hypre_merge_lists, which reads the lengths from the
 * buffer and merges the two sorted lists into inout.  Checked here, under
 * whatever TREEDUCE_ALGORITHM and TREEDUCE_REPRODUCIBLE ask:
 *   - such a merge (registered commutative and not), MPI_Allreduce out of
 *     place and in place and MPI_Iallreduce, over subsets of the ranks
 *     (all, none, one, the evens, the odds, every third, random ones): every
 *     rank gets exactly the sorted list of the ranks that took part;
 *   - a sum of MPI_INT that fails unless it is given the whole vector
 *     (*len == count), counts 1 .. 2^18 + 3, commutative and not, through
 *     MPI_Allreduce and MPI_Reduce (roots 0 and p-1);
 *   - the same on a derived datatype with holes (every second int of 2
 *     blocks): *len == count elements of that very datatype.
 * The ops never write outside [0, *len) of inout, whatever the buffer holds.
 * Rank 0 prints "N passed, M failed"; exits non-zero on every rank when a
 * check failed.
 *
 * Usage: test_userop_whole [--seed N]
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, nprocs, npassed, nfailed;
/* what the op under test must be given (set before each call) */
static int want_len;
static MPI_Datatype want_type;
static int bad_calls; /* op calls given less than the whole vector, or another type */

static void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) {
        fprintf(stderr, "test_userop_whole: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    return p;
}

static void check(int ok, const char *what, int count)
{
    int all;
    PMPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    if (all) {
        npassed++;
        return;
    }
    nfailed++;
    if (!ok)
        fprintf(stderr, "FAIL rank %d: %s, count %d\n", rank, what, count);
}

/* ---- hypre's list merge ------------------------------------------------------- */

/* list = [active, n, r_1 < ... < r_n]: inout = the sorted union of in's and
 * inout's ranks, as hypre_merge_lists computes it (the length trusted from
 * the buffer; here only up to *len, so that a part of the vector gives a
 * wrong answer, not a damaged heap). */
static void merge_lists(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    int *l1 = in, *l2 = inout;
    bad_calls += *len != want_len || *dt != want_type;
    if (*len < 2 || l1[0] == 0)
        return;
    if (l2[0] == 0) {
        for (int i = 0; i < *len && i < l1[1] + 2; i++)
            l2[i] = l1[i];
        return;
    }
    int n1 = l1[1], n2 = l2[1];
    if (n1 < 0 || n2 < 0 || n1 + n2 + 2 > *len) {
        bad_calls++;
        return;
    }
    int i1 = n1 + 1, i2 = n2 + 1;
    for (int i = n1 + n2 + 1; i > 1; i--) {
        if (i2 > 1 && (i1 <= 1 || l2[i2] > l1[i1]))
            l2[i] = l2[i2--];
        else
            l2[i] = l1[i1--];
    }
    l2[0] = 1;
    l2[1] = n1 + n2;
}

/* Whether rank r takes part in subset s (seed: the random subsets). */
static int member(int s, int r, unsigned seed)
{
    switch (s) {
    case 0:
        return 1;
    case 1:
        return 0;
    case 2:
        return r == 0;
    case 3:
        return r == nprocs - 1;
    case 4:
        return r % 2 == 0;
    case 5:
        return r % 2 == 1;
    case 6:
        return r % 3 == 1;
    default: {
        uint64_t z = (uint64_t)(s * 7919 + r) * 0x9e3779b97f4a7c15ULL + seed;
        z ^= z >> 29;
        z *= 0xbf58476d1ce4e5b9ULL;
        return (int)((z >> 40) & 1);
    }
    }
}
#define NSUBSETS 10

/* The list of subset s for every calling mode: 0 out of place, 1 in place,
 * 2 MPI_Iallreduce. */
static void test_merge(MPI_Op op, const char *name, unsigned seed)
{
    int n = nprocs + 2;
    int *send = xmalloc((size_t)n * sizeof *send), *recv = xmalloc((size_t)n * sizeof *recv);
    char what[200];
    for (int s = 0; s < NSUBSETS; s++)
        for (int mode = 0; mode < 3; mode++) {
            int k = 0, ok = 1;
            memset(send, 0, (size_t)n * sizeof *send);
            if (member(s, rank, seed)) {
                send[0] = send[1] = 1;
                send[2] = rank;
            }
            memcpy(recv, send, (size_t)n * sizeof *recv);
            want_len = n;
            want_type = MPI_INT;
            bad_calls = 0;
            if (mode == 0) {
                ok = MPI_Allreduce(send, recv, n, MPI_INT, op, MPI_COMM_WORLD) == MPI_SUCCESS;
            } else if (mode == 1) {
                ok = MPI_Allreduce(MPI_IN_PLACE, recv, n, MPI_INT, op, MPI_COMM_WORLD) ==
                     MPI_SUCCESS;
            } else {
                MPI_Request req;
                ok = MPI_Iallreduce(send, recv, n, MPI_INT, op, MPI_COMM_WORLD, &req) ==
                         MPI_SUCCESS &&
                     MPI_Wait(&req, MPI_STATUS_IGNORE) == MPI_SUCCESS;
            }
            for (int r = 0; r < nprocs; r++)
                if (member(s, r, seed))
                    ok &= recv[2 + k++] == r;
            ok &= recv[0] == (k > 0) && recv[1] == k && bad_calls == 0;
            snprintf(what, sizeof what, "%s, subset %d, %s", name, s,
                     mode == 0   ? "MPI_Allreduce"
                     : mode == 1 ? "MPI_Allreduce in place"
                                 : "MPI_Iallreduce");
            check(ok, what, n);
        }
    free(send);
    free(recv);
}

/* ---- A sum that needs the whole vector ---------------------------------------- */

/* inout += in over ints; elements hold two ints at stride 2 when given the
 * derived type (the holes between never read or written). */
static void whole_sum(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    const int *a = in;
    int *b = inout, derived = *dt != MPI_INT;
    bad_calls += *len != want_len || *dt != want_type;
    for (int i = 0; i < *len; i++) {
        if (derived) {
            b[4 * i] += a[4 * i];
            b[4 * i + 2] += a[4 * i + 2];
        } else {
            b[i] += a[i];
        }
    }
}

/* value of element i of rank r's input */
static int input(int r, int i)
{
    return (r + 1) * 1000 + i % 977;
}

static int sum_of(int i)
{
    int v = 0;
    for (int r = 0; r < nprocs; r++)
        v += input(r, i);
    return v;
}

/* Allreduce and reduce of count elements of type (MPI_INT, or the vector
 * of 2 ints at stride 2 extended to 4 ints) with op. */
static void test_whole(MPI_Op op, MPI_Datatype type, const char *name, int count)
{
    int derived = type != MPI_INT, ints = derived ? 4 * count : count;
    int *send = xmalloc((size_t)ints * sizeof *send), *recv = xmalloc((size_t)ints * sizeof *recv);
    char what[200];
    for (int j = 0; j < 3; j++) {
        int ok = 1, root = j == 1 ? 0 : nprocs - 1;
        for (int i = 0; i < ints; i++) {
            send[i] = (!derived || i % 2 == 0) ? input(rank, i) : -1;
            recv[i] = -7;
        }
        want_len = count;
        want_type = type;
        bad_calls = 0;
        if (j == 0)
            ok = MPI_Allreduce(send, recv, count, type, op, MPI_COMM_WORLD) == MPI_SUCCESS;
        else
            ok = MPI_Reduce(send, recv, count, type, op, root, MPI_COMM_WORLD) == MPI_SUCCESS;
        for (int i = 0; i < ints && (j == 0 || rank == root); i++)
            ok &= recv[i] == ((!derived || i % 2 == 0) ? sum_of(i) : -7);
        ok &= bad_calls == 0;
        snprintf(what, sizeof what, "%s, %s", name,
                 j == 0   ? "MPI_Allreduce"
                 : j == 1 ? "MPI_Reduce to 0"
                          : "MPI_Reduce to p-1");
        check(ok, what, count);
    }
    free(send);
    free(recv);
}

int main(int argc, char **argv)
{
    unsigned seed = 1;
    MPI_Op merge[2], sum[2];
    MPI_Datatype vec, holes;
    static const int counts[] = {1, 3, 100, 5000, 70000, (1 << 18) + 3};
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--seed") && i + 1 < argc)
            seed = (unsigned)strtoul(argv[++i], NULL, 10);
    for (int c = 0; c < 2; c++) {
        MPI_Op_create(merge_lists, c, &merge[c]);
        MPI_Op_create(whole_sum, c, &sum[c]);
    }
    MPI_Type_vector(2, 1, 2, MPI_INT, &vec);
    MPI_Type_create_resized(vec, 0, 4 * (MPI_Aint)sizeof(int), &holes);
    MPI_Type_commit(&holes);
    for (int c = 0; c < 2; c++) {
        const char *cm = c ? "commutative" : "non-commutative";
        char name[96];
        snprintf(name, sizeof name, "list merge (%s)", cm);
        test_merge(merge[c], name, seed);
        for (size_t k = 0; k < sizeof counts / sizeof *counts; k++) {
            snprintf(name, sizeof name, "whole-vector sum of MPI_INT (%s)", cm);
            test_whole(sum[c], MPI_INT, name, counts[k]);
            if (counts[k] <= 20000) {
                snprintf(name, sizeof name, "whole-vector sum of a type with holes (%s)", cm);
                test_whole(sum[c], holes, name, counts[k]);
            }
        }
    }
    MPI_Type_free(&holes);
    MPI_Type_free(&vec);
    for (int c = 0; c < 2; c++) {
        MPI_Op_free(&merge[c]);
        MPI_Op_free(&sum[c]);
    }
    if (rank == 0)
        printf("%d passed, %d failed\n", npassed, nfailed);
    MPI_Finalize();
    return nfailed ? 1 : 0;
}
