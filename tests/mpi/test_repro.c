/* test_repro.c - checks the reproducible mode of MPI_Allreduce
 * (TREEDUCE_REPRODUCIBLE=1): a result that depends only on the number of
 * ranks and their inputs, not on the placement, the node count or the
 * algorithm that was asked for.
 *
 * Inputs are drawn per comm rank and element from --seed, so every placement
 * of the same rank count reduces the same data: doubles spread over 2^-40 ..
 * 2^40 (MPI_SUM; any change of summation order changes some bits), and affine
 * maps x -> a x + b as MPI_C_DOUBLE_COMPLEX pairs (a, b) composed by a
 * non-commutative user op (associative in exact arithmetic, not in floating
 * point, so the shape of the reduction shows in the bits).
 *
 * A check of (op, count) passes when, on every rank:
 *   - the calls return MPI_SUCCESS and the send buffer is unchanged;
 *   - the result is bitwise the same on every rank and when the call is
 *     repeated (with --expect-tree, in place too);
 *   - it is within rounding of PMPI_Allreduce's (SUM: |a - e| <= 2 p eps
 *     sum_r |x_r|; affine maps: the same bound on the composed terms);
 *   - with --expect-tree, it is bitwise the fixed-order reduction computed
 *     here from the gathered inputs: a binary tree over the comm ranks in
 *     rank order, ((x0 op x1) op (x2 op x3)) op ..., pairs at distance 1,
 *     then 2, 4, ..., a group without a partner carried up as is.
 * Rank 0 prints per op and count "digest op=OP count=N HASH tree=same|differs"
 * (HASH: FNV-1a of the result's bytes; tree: whether the result is that
 * reduction), for a script to compare across runs, then "N passed, M failed".
 *
 * Only the calls under test are MPI_Allreduce; the test's own bookkeeping
 * calls the MPI library (PMPI_).
 *
 * Usage: test_repro [--counts a,b,c] [--seed N] [--expect-tree]
 * Exits non-zero on every rank when a check failed.
 */
#include <float.h>
#include <math.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* An affine map x -> a x + b; MPI_C_DOUBLE_COMPLEX has its layout. */
typedef struct aff {
    double a, b;
} aff;

static int rank, nprocs, npassed, nfailed;

static void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) {
        fprintf(stderr, "test_repro: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    return p;
}

static uint64_t rng_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* Uniform in [-1, 1). */
static double unit(uint64_t *s)
{
    return (double)(rng_next(s) >> 11) * 0x1.0p-53 * 2 - 1;
}

/* in's map first, then inout's: inout = (a1 a2, a2 b1 + b2); in is the left
 * operand, as MPI orders a user op's arguments. */
static void affine_fn(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    const aff *x = in;
    aff *y = inout;
    (void)dt;
    for (int i = 0; i < *len; i++) {
        double a = x[i].a * y[i].a, b = y[i].a * x[i].b + y[i].b;
        y[i].a = a;
        y[i].b = b;
    }
}

/* The ops under test. */
enum { OP_SUM, OP_AFFINE, NOPS };
static const char *const op_names[NOPS] = {"sum", "affine"};
static MPI_Op ops[NOPS];
static MPI_Datatype types[NOPS];
static const size_t sizes[NOPS] = {sizeof(double), sizeof(aff)};

/* Rank r's input for op k at count elements. */
static void fill(int k, int r, uint64_t seed, size_t count, void *buf)
{
    uint64_t s = seed * 0x100000001b3ULL + (uint64_t)r * 0x9e3779b97f4a7c15ULL + (uint64_t)k;
    for (size_t i = 0; i < count; i++) {
        if (k == OP_SUM) {
            double u = unit(&s);
            ((double *)buf)[i] = ldexp(u, (int)(rng_next(&s) % 81) - 40);
        } else {
            double u = unit(&s), v = unit(&s);
            ((aff *)buf)[i] = (aff){1 + ldexp(u, -8), ldexp(v, (int)(rng_next(&s) % 81) - 40)};
        }
    }
}

/* The fixed-order reduction of element i over the p gathered inputs (all:
 * rank j's vector at j * count) into out; acc holds p elements. */
static void tree_of(int k, const char *all, size_t count, size_t i, char *acc, void *out)
{
    size_t sz = sizes[k];
    int one = 1;
    for (int j = 0; j < nprocs; j++)
        memcpy(acc + (size_t)j * sz, all + ((size_t)j * count + i) * sz, sz);
    for (int s = 1; s < nprocs; s *= 2)
        for (int j = 0; j + s < nprocs; j += 2 * s) {
            int l = j + s - 1, r = (j + 2 * s < nprocs ? j + 2 * s : nprocs) - 1;
            if (k == OP_SUM)
                ((double *)acc)[r] = ((double *)acc)[l] + ((double *)acc)[r];
            else
                affine_fn(acc + (size_t)l * sz, acc + (size_t)r * sz, &one, &types[k]);
        }
    memcpy(out, acc + (size_t)(nprocs - 1) * sz, sz);
}

static uint64_t fnv1a(const void *p, size_t n)
{
    const unsigned char *c = p;
    uint64_t h = 0xcbf29ce484222325ULL;
    for (size_t i = 0; i < n; i++)
        h = (h ^ c[i]) * 0x100000001b3ULL;
    return h;
}

/* Every rank's ok, and'ed; a failure is counted once, described by rank 0
 * (or by the failing rank when rank 0 is fine). */
static int agree(int ok, const char *what, int k, size_t count)
{
    int all;
    PMPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    if (all) {
        npassed++;
    } else {
        nfailed++;
        if (!ok)
            fprintf(stderr, "test_repro: rank %d: op=%s count=%zu: %s\n", rank, op_names[k], count,
                    what);
    }
    return all;
}

/* Within rounding of the reference e: SUM components against 2 p eps
 * sum |x|; affine maps' a relative, b against the sum of |b| (the a's are
 * near 1). */
static int close_to(int k, const void *act, const void *exp, const void *absum, size_t count)
{
    double tol = 2.0 * nprocs * DBL_EPSILON;
    for (size_t i = 0; i < count; i++) {
        if (k == OP_SUM) {
            double a = ((const double *)act)[i], e = ((const double *)exp)[i];
            if (!(fabs(a - e) <= tol * ((const double *)absum)[i]))
                return 0;
        } else {
            aff a = ((const aff *)act)[i], e = ((const aff *)exp)[i];
            if (!(fabs(a.a - e.a) <= 2 * tol * fabs(e.a)) ||
                !(fabs(a.b - e.b) <= 4 * tol * ((const double *)absum)[i]))
                return 0;
        }
    }
    return 1;
}

static void run(int k, size_t count, uint64_t seed, int expect_tree)
{
    size_t sz = sizes[k], bytes = count * sz;
    char *x = xmalloc(bytes), *orig = xmalloc(bytes), *act = xmalloc(bytes),
         *again = xmalloc(bytes), *inpl = xmalloc(bytes), *exp = xmalloc(bytes),
         *all = xmalloc(bytes * (size_t)nprocs), *ref = xmalloc(bytes),
         *acc = xmalloc(sz * (size_t)nprocs);
    double *absx = xmalloc(count * sizeof *absx), *absum = xmalloc(count * sizeof *absum);
    int n = (int)count, ok, same_tree = 1;

    fill(k, rank, seed, count, x);
    memcpy(orig, x, bytes);
    memcpy(inpl, x, bytes);
    ok = MPI_Allreduce(x, act, n, types[k], ops[k], MPI_COMM_WORLD) == MPI_SUCCESS;
    ok &= MPI_Allreduce(MPI_IN_PLACE, inpl, n, types[k], ops[k], MPI_COMM_WORLD) == MPI_SUCCESS;
    ok &= MPI_Allreduce(x, again, n, types[k], ops[k], MPI_COMM_WORLD) == MPI_SUCCESS;
    agree(ok, "MPI_Allreduce returned an error", k, count);
    agree(memcmp(x, orig, bytes) == 0, "the send buffer was modified", k, count);
    agree(memcmp(act, again, bytes) == 0, "repeated, the result differs", k, count);
    /* other algorithms may reduce in place in another order */
    if (expect_tree)
        agree(memcmp(act, inpl, bytes) == 0, "in place, the result differs", k, count);

    /* bitwise the same on every rank: the digests' min and max agree */
    uint64_t h = fnv1a(act, bytes), hmin, hmax;
    PMPI_Allreduce(&h, &hmin, 1, MPI_UINT64_T, MPI_MIN, MPI_COMM_WORLD);
    PMPI_Allreduce(&h, &hmax, 1, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
    agree(hmin == hmax, "the result differs between ranks", k, count);

    /* within rounding of the MPI library's */
    for (size_t i = 0; i < count; i++)
        absx[i] = k == OP_SUM ? fabs(((double *)x)[i]) : fabs(((aff *)x)[i].b);
    ok = PMPI_Allreduce(x, exp, n, types[k], ops[k], MPI_COMM_WORLD) == MPI_SUCCESS;
    ok &= PMPI_Allreduce(absx, absum, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD) == MPI_SUCCESS;
    agree(ok && close_to(k, act, exp, absum, count), "not within rounding of PMPI_Allreduce", k,
          count);

    /* the fixed-order reduction, from every rank's input */
    PMPI_Allgather(x, (int)bytes, MPI_BYTE, all, (int)bytes, MPI_BYTE, MPI_COMM_WORLD);
    for (size_t i = 0; i < count; i++)
        tree_of(k, all, count, i, acc, ref + i * sz);
    same_tree = memcmp(act, ref, bytes) == 0;
    PMPI_Allreduce(MPI_IN_PLACE, &same_tree, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    if (expect_tree)
        agree(same_tree, "not bitwise the rank-order tree's reduction", k, count);
    if (rank == 0)
        printf("digest op=%s count=%zu %016llx tree=%s\n", op_names[k], count,
               (unsigned long long)h, same_tree ? "same" : "differs");
    fflush(stdout);
    free(x);
    free(orig);
    free(act);
    free(again);
    free(inpl);
    free(exp);
    free(all);
    free(ref);
    free(acc);
    free(absx);
    free(absum);
}

int main(int argc, char **argv)
{
    size_t counts[16] = {1, 7, 1000, 65539};
    int ncounts = 4, expect_tree = 0;
    uint64_t seed = 20240611;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--expect-tree")) {
            expect_tree = 1;
        } else if (!strcmp(argv[i], "--seed") && i + 1 < argc) {
            seed = strtoull(argv[++i], NULL, 10);
        } else if (!strcmp(argv[i], "--counts") && i + 1 < argc) {
            char *s = argv[++i], *end;
            for (ncounts = 0; *s && ncounts < 16; s = *end ? end + 1 : end) {
                counts[ncounts++] = strtoull(s, &end, 10);
                if (end == s)
                    break;
            }
        } else {
            if (rank == 0)
                fprintf(stderr, "usage: test_repro [--counts a,b,c] [--seed N] [--expect-tree]\n");
            MPI_Finalize();
            return 2;
        }
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    ops[OP_SUM] = MPI_SUM;
    types[OP_SUM] = MPI_DOUBLE;
    MPI_Op_create(affine_fn, 0, &ops[OP_AFFINE]);
    types[OP_AFFINE] = MPI_C_DOUBLE_COMPLEX;
    for (int k = 0; k < NOPS; k++)
        for (int c = 0; c < ncounts; c++)
            run(k, counts[c], seed, expect_tree);
    MPI_Op_free(&ops[OP_AFFINE]);
    if (rank == 0)
        printf("%d passed, %d failed\n", npassed, nfailed);
    MPI_Finalize();
    return nfailed ? 1 : 0;
}
