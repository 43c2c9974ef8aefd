/* test_derived.c - reductions on derived datatypes against a reference.
 *
 * Linked with treeduce, MPI_Allreduce, MPI_Reduce_scatter_block and
 * MPI_Reduce are treeduce's.  Every check runs one on random data, on a
 * datatype built with MPI's constructors (contiguous, vector, hvector,
 * indexed, hindexed, indexed_block, struct, subarray in C and Fortran order,
 * darray, resized with lb and extent moved, nested, MINLOC/MAXLOC pairs, two types
 * of more pieces than treeduce keeps blocks for), with predefined ops and
 * with user ops (non-commutative ones among them: 2x2 matrix products and
 * compositions of affine maps, which find the element's layout from the
 * datatype they are given, so a user op given another datatype is a failed
 * check), out of place and with MPI_IN_PLACE (at the root for reduce), for
 * counts 0, 1, 7, 1000 (--few: 1, 7; 1, 2 for the big types).
 *
 * The reference is computed from every rank's input (gathered with
 * PMPI_Allgather) by PMPI_Reduce_local in rank order, rather than by the
 * PMPI_ collectives: MPICH 4.0.2 rejects predefined ops on derived types in
 * reductions (MPI defines them for MPI_Accumulate only: applied to the base
 * elements one by one, which the reference does on the base type), and its
 * reduce_scatter_block gets non-commutative user ops on types with holes
 * wrong, or crashes.  All values are exact, so results compare bitwise, but
 * for the sign of a floating zero (association orders differ).
 *
 * A check passes when the call returns MPI_SUCCESS, the type map's bytes of
 * the result (MPI_Pack'ed) equal the reference's, and every other byte of
 * the receive buffer (holes between and inside elements, bytes around them:
 * a sentinel, or in place what was there) is unchanged.  The type map's
 * bytes are found by MPI itself (MPI_Unpack of ones).
 *
 * --mixed runs only a struct of an int and a double with a user op, which
 * treeduce hands to the MPI library (several base types); the CTest entry
 * checks the TREEDUCE_VERBOSE note.  Prints "N passed, M failed".
 */
#include <mpi.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SENTINEL 0xA5
#define GUARD 64
#define BIG 70000 /* blocks of the big vectors: more than treeduce keeps */

struct double_int {
    double v;
    int i;
};

enum base { B_DOUBLE, B_INT, B_UINT8, B_DOUBLE_INT, B_MIXED };
enum coll { C_ALLREDUCE, C_RSB, C_REDUCE, C_MAX };
static const char *coll_name[] = {"allreduce", "reduce_scatter_block", "reduce"};

/* A datatype under test: its base elements' offsets from the origin in
 * type-map order (for the user ops), the ops to run on it. */
struct dcase {
    const char *name;
    MPI_Datatype dt;
    enum base base;
    int k;
    MPI_Aint *off;
    MPI_Aint lb, extent, tlb, textent;
    MPI_Op ops[3];
    const char *op_names[3];
    int nops;
    int big; /* counts 1, 2 only */
};

#define MAXCASES 24
static struct dcase cases[MAXCASES];
static int ncases;
static int wrank, wsize, few, mixed_only, verbose;
static const char *only_type, *only_coll; /* --type, --coll: substrings of names to run */
static long long npass, nfail;
static int bad_datatype; /* a user op got a datatype it does not know */
static uint64_t rng_state;

static uint64_t rnd(void)
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        MPI_Abort(MPI_COMM_WORLD, 2);
    return p;
}

static struct dcase *find_case(MPI_Datatype dt)
{
    for (int i = 0; i < ncases; i++)
        if (cases[i].dt == dt)
            return &cases[i];
    bad_datatype = 1;
    return NULL;
}

/* ---- User ops ------------------------------------------------------------- */

/* 2x2 matrices of doubles, row-major: inout = in * inout (not commutative). */
static void matmul_op(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    struct dcase *c = find_case(*dt);
    if (!c)
        return;
    for (int i = 0; i < *len; i++) {
        const double *a = (const double *)((char *)in + i * c->extent);
        double *b = (double *)((char *)inout + i * c->extent);
        double c0 = a[0] * b[0] + a[1] * b[2], c1 = a[0] * b[1] + a[1] * b[3];
        double c2 = a[2] * b[0] + a[3] * b[2], c3 = a[2] * b[1] + a[3] * b[3];
        b[0] = c0;
        b[1] = c1;
        b[2] = c2;
        b[3] = c3;
    }
}

/* Base elements taken in pairs (m, c) as affine maps x -> m x + c, inout = in
 * o inout (not commutative); a last odd element is summed.  Doubles hold
 * small integers (exact), ints wrap mod 2^32. */
#define AFFINE(name, T)                                                                            \
    static void name(void *in, void *inout, int *len, MPI_Datatype *dt)                            \
    {                                                                                              \
        struct dcase *c = find_case(*dt);                                                          \
        if (!c)                                                                                    \
            return;                                                                                \
        for (int i = 0; i < *len; i++) {                                                           \
            char *a = (char *)in + i * c->extent, *b = (char *)inout + i * c->extent;              \
            int j = 0;                                                                             \
            for (; j + 1 < c->k; j += 2) {                                                         \
                T fm, fc, gm, gc;                                                                  \
                memcpy(&fm, a + c->off[j], sizeof fm);                                             \
                memcpy(&fc, a + c->off[j + 1], sizeof fc);                                         \
                memcpy(&gm, b + c->off[j], sizeof gm);                                             \
                memcpy(&gc, b + c->off[j + 1], sizeof gc);                                         \
                gc = fm * gc + fc;                                                                 \
                gm = fm * gm;                                                                      \
                memcpy(b + c->off[j], &gm, sizeof gm);                                             \
                memcpy(b + c->off[j + 1], &gc, sizeof gc);                                         \
            }                                                                                      \
            if (j < c->k) {                                                                        \
                T f, g;                                                                            \
                memcpy(&f, a + c->off[j], sizeof f);                                               \
                memcpy(&g, b + c->off[j], sizeof g);                                               \
                g += f;                                                                            \
                memcpy(b + c->off[j], &g, sizeof g);                                               \
            }                                                                                      \
        }                                                                                          \
    }
AFFINE(affine_d_op, double)
AFFINE(affine_i_op, uint32_t)
AFFINE(affine_b_op, uint8_t)

/* {int, double}: both summed. */
static void mixed_op(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    struct dcase *c = find_case(*dt);
    if (!c)
        return;
    for (int i = 0; i < *len; i++) {
        char *a = (char *)in + i * c->extent, *b = (char *)inout + i * c->extent;
        int x, y;
        double u, v;
        memcpy(&x, a + c->off[0], sizeof x);
        memcpy(&y, b + c->off[0], sizeof y);
        memcpy(&u, a + c->off[1], sizeof u);
        memcpy(&v, b + c->off[1], sizeof v);
        y += x;
        v += u;
        memcpy(b + c->off[0], &y, sizeof y);
        memcpy(b + c->off[1], &v, sizeof v);
    }
}

static MPI_Op matmul, affine_d, affine_i, affine_b, mixed;

static MPI_Datatype base_of(const struct dcase *c)
{
    switch (c->base) {
    case B_DOUBLE:
        return MPI_DOUBLE;
    case B_INT:
        return MPI_INT;
    case B_UINT8:
        return MPI_UINT8_T;
    case B_DOUBLE_INT:
        return MPI_DOUBLE_INT;
    default:
        return MPI_DATATYPE_NULL;
    }
}

static int is_user(MPI_Op o)
{
    return o == matmul || o == affine_d || o == affine_i || o == affine_b || o == mixed;
}

/* ---- Datatypes ------------------------------------------------------------- */

/* Register dt (committed here) with its base-element offsets and ops. */
static struct dcase *add(const char *name, MPI_Datatype dt, enum base base, int k,
                         const MPI_Aint *off, int big)
{
    struct dcase *c = &cases[ncases++];
    MPI_Type_commit(&dt);
    c->name = name;
    c->dt = dt;
    c->base = base;
    c->k = k;
    c->off = xmalloc((size_t)k * sizeof *c->off);
    memcpy(c->off, off, (size_t)k * sizeof *off);
    c->big = big;
    MPI_Type_get_extent(dt, &c->lb, &c->extent);
    MPI_Type_get_true_extent(dt, &c->tlb, &c->textent);
    return c;
}

static void op(struct dcase *c, MPI_Op o, const char *name)
{
    c->ops[c->nops] = o;
    c->op_names[c->nops++] = name;
}

static void make_types(void)
{
    MPI_Datatype t, u, v;
    struct dcase *c;

    if (mixed_only) {
        int bl[2] = {1, 1};
        MPI_Aint d[2] = {0, 8};
        MPI_Datatype ty[2] = {MPI_INT, MPI_DOUBLE};
        MPI_Type_create_struct(2, bl, d, ty, &t);
        c = add("struct{int@0,double@8}", t, B_MIXED, 2, d, 0);
        op(c, mixed, "user(sum)");
        return;
    }
    {
        MPI_Aint off[4] = {0, 8, 16, 24};
        MPI_Type_contiguous(4, MPI_DOUBLE, &t);
        c = add("contiguous(4,double)", t, B_DOUBLE, 4, off, 0);
        op(c, matmul, "user(matmul)");
        op(c, MPI_SUM, "MPI_SUM");
        op(c, MPI_MAX, "MPI_MAX");
    }
    {
        int bl[3] = {1, 1, 1};
        MPI_Aint off[3] = {0, 16, 24};
        MPI_Datatype ty[3] = {MPI_DOUBLE, MPI_DOUBLE, MPI_DOUBLE};
        MPI_Type_create_struct(3, bl, off, ty, &u);
        MPI_Type_create_resized(u, 0, 40, &t);
        MPI_Type_free(&u);
        c = add("struct{double@0,16,24}:extent40", t, B_DOUBLE, 3, off, 0);
        op(c, affine_d, "user(affine)");
        op(c, MPI_SUM, "MPI_SUM");
        op(c, MPI_MAX, "MPI_MAX");
    }
    {
        MPI_Aint off[6] = {0, 4, 16, 20, 32, 36};
        MPI_Type_vector(3, 2, 4, MPI_INT, &t);
        c = add("vector(3,2,4,int)", t, B_INT, 6, off, 0);
        op(c, MPI_SUM, "MPI_SUM");
        op(c, MPI_BXOR, "MPI_BXOR");
        op(c, affine_i, "user(affine)");
    }
    {
        int bl[3] = {2, 1, 3}, d[3] = {1, 4, 8};
        MPI_Aint off[6] = {4, 8, 16, 32, 36, 40};
        MPI_Type_indexed(3, bl, d, MPI_INT, &t);
        c = add("indexed({2,1,3},{1,4,8},int)", t, B_INT, 6, off, 0);
        op(c, MPI_SUM, "MPI_SUM");
        op(c, MPI_MIN, "MPI_MIN");
        op(c, affine_i, "user(affine)");
    }
    {
        /* data at [8, 40), element [8, 56): trailing hole */
        int bl[3] = {1, 1, 1};
        MPI_Aint off[3] = {8, 16, 32};
        MPI_Datatype ty[3] = {MPI_DOUBLE, MPI_DOUBLE, MPI_DOUBLE};
        MPI_Type_create_struct(3, bl, off, ty, &u);
        MPI_Type_create_resized(u, 8, 48, &t);
        MPI_Type_free(&u);
        c = add("resized(struct{double@8,16,32},lb8,extent48)", t, B_DOUBLE, 3, off, 0);
        op(c, MPI_SUM, "MPI_SUM");
        op(c, MPI_MAX, "MPI_MAX");
        op(c, affine_d, "user(affine)");
    }
    {
        /* data at [16, 64): past lb + extent, so not at the element's start */
        int bl[3] = {2, 1, 1};
        MPI_Aint d[3] = {16, 40, 56}, off[4] = {16, 24, 40, 56};
        MPI_Type_create_hindexed(3, bl, d, MPI_DOUBLE, &u);
        MPI_Type_create_resized(u, 8, 48, &t);
        MPI_Type_free(&u);
        c = add("resized(hindexed({2,1,1},{16,40,56},double),lb8,extent48)", t, B_DOUBLE, 4, off,
                0);
        op(c, MPI_SUM, "MPI_SUM");
        op(c, affine_d, "user(affine)");
    }
    {
        /* no holes, origin before the data */
        int bl[1] = {4};
        MPI_Aint d[1] = {8}, off[4] = {8, 16, 24, 32};
        MPI_Type_create_hindexed(1, bl, d, MPI_DOUBLE, &t);
        c = add("hindexed({4},{8},double)", t, B_DOUBLE, 4, off, 0);
        op(c, MPI_SUM, "MPI_SUM");
        op(c, affine_d, "user(affine)");
    }
    {
        MPI_Aint off[12];
        MPI_Type_create_hvector(2, 2, 100, MPI_INT, &u);
        MPI_Type_contiguous(3, u, &t);
        MPI_Type_free(&u);
        MPI_Aint ext = 108; /* the hvector's: 100 + 2 ints */
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 2; j++)
                for (int e = 0; e < 2; e++)
                    off[4 * i + 2 * j + e] = i * ext + j * 100 + e * 4;
        c = add("contiguous(3,hvector(2,2,100B,int))", t, B_INT, 12, off, 0);
        op(c, MPI_SUM, "MPI_SUM");
        op(c, affine_i, "user(affine)");
    }
    {
        int sizes[2] = {4, 5}, subs[2] = {2, 3}, starts[2] = {1, 1};
        MPI_Aint off[6];
        for (int i = 0; i < 2; i++)
            for (int j = 0; j < 3; j++)
                off[3 * i + j] = ((1 + i) * 5 + (1 + j)) * 8;
        MPI_Type_create_subarray(2, sizes, subs, starts, MPI_ORDER_C, MPI_DOUBLE, &t);
        c = add("subarray(C,{4,5},{2,3},{1,1},double)", t, B_DOUBLE, 6, off, 0);
        op(c, MPI_SUM, "MPI_SUM");
        op(c, affine_d, "user(affine)");
    }
    {
        int sizes[2] = {3, 4}, subs[2] = {2, 2}, starts[2] = {0, 1};
        MPI_Aint off[4];
        for (int j = 0; j < 2; j++)
            for (int i = 0; i < 2; i++)
                off[2 * j + i] = ((1 + j) * 3 + i) * 4;
        MPI_Type_create_subarray(2, sizes, subs, starts, MPI_ORDER_FORTRAN, MPI_INT, &t);
        c = add("subarray(Fortran,{3,4},{2,2},{0,1},int)", t, B_INT, 4, off, 0);
        op(c, MPI_SUM, "MPI_SUM");
        op(c, affine_i, "user(affine)");
    }
    {
        /* block column 0 of 2 of a 4x6 array (the same piece on every rank) */
        int gsizes[2] = {4, 6}, distribs[2] = {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_BLOCK};
        int dargs[2] = {MPI_DISTRIBUTE_DFLT_DARG, MPI_DISTRIBUTE_DFLT_DARG}, psizes[2] = {1, 2};
        MPI_Aint off[12];
        for (int i = 0; i < 4; i++)
            for (int j = 0; j < 3; j++)
                off[3 * i + j] = (i * 6 + j) * 8;
        MPI_Type_create_darray(2, 0, 2, gsizes, distribs, dargs, psizes, MPI_ORDER_C, MPI_DOUBLE,
                               &t);
        c = add("darray(2 of {4,6},block,block,{1,2},double)", t, B_DOUBLE, 12, off, 0);
        op(c, MPI_SUM, "MPI_SUM");
        op(c, affine_d, "user(affine)");
    }
    {
        MPI_Aint off[2] = {0, 16};
        MPI_Type_contiguous(2, MPI_DOUBLE_INT, &t);
        c = add("contiguous(2,MPI_DOUBLE_INT)", t, B_DOUBLE_INT, 2, off, 0);
        op(c, MPI_MINLOC, "MPI_MINLOC");
        op(c, MPI_MAXLOC, "MPI_MAXLOC");
    }
    {
        /* more blocks than treeduce keeps: copies through MPI_Pack */
        MPI_Aint *off = xmalloc(BIG * sizeof *off);
        int *rev = xmalloc(BIG * sizeof *rev);
        for (int i = 0; i < BIG; i++)
            off[i] = rev[i] = BIG - 1 - i;
        MPI_Type_create_indexed_block(BIG, 1, rev, MPI_UINT8_T, &t);
        free(rev);
        c = add("indexed_block(70000,1,reversed,uint8)", t, B_UINT8, BIG, off, 1);
        op(c, MPI_SUM, "MPI_SUM");
        op(c, affine_b, "user(affine)");
        for (int i = 0; i < BIG; i++)
            off[i] = (MPI_Aint)i * 32;
        MPI_Type_vector(BIG, 1, 2, MPI_DOUBLE_INT, &v);
        c = add("vector(70000,1,2,MPI_DOUBLE_INT)", v, B_DOUBLE_INT, BIG, off, 1);
        op(c, MPI_MINLOC, "MPI_MINLOC");
        free(off);
    }
}

/* ---- Data ------------------------------------------------------------------- */

/* Bytes from the origin that n elements of c may touch: [*lo, *hi). */
static void span(const struct dcase *c, size_t n, MPI_Aint *lo, MPI_Aint *hi)
{
    MPI_Aint first = c->tlb, last = c->tlb + c->textent;
    if (n > 1 && c->extent < 0)
        first += (MPI_Aint)(n - 1) * c->extent;
    if (n > 1 && c->extent > 0)
        last += (MPI_Aint)(n - 1) * c->extent;
    *lo = (first < 0 ? first : 0) - GUARD;
    *hi = (last > 0 ? last : 0) + GUARD;
}

/* A buffer for n elements of c: its memory, filled with byte b, and the
 * origin to pass to MPI. */
struct buf {
    unsigned char *mem, *origin;
    size_t bytes;
};

static struct buf buf_new(const struct dcase *c, size_t n, int b)
{
    MPI_Aint lo, hi;
    struct buf r;
    span(c, n, &lo, &hi);
    r.bytes = (size_t)(hi - lo);
    r.mem = xmalloc(r.bytes);
    memset(r.mem, b, r.bytes);
    r.origin = r.mem - lo;
    return r;
}

/* The base type's one element value for op (kind): exact under every op. */
static void draw(const struct dcase *c, MPI_Op o, size_t j, unsigned char *p)
{
    if (c->base == B_DOUBLE) {
        double v;
        if (o == matmul)
            v = (double)((int)(rnd() % 7) - 3);
        else if (o == affine_d && j % 2 == 0 && j + 1 < (size_t)c->k)
            v = (rnd() & 1 ? 1.0 : -1.0) * (double)(1 + rnd() % 2);
        else
            v = (double)((int)(rnd() % 2001) - 1000);
        memcpy(p, &v, sizeof v);
    } else if (c->base == B_INT) {
        uint32_t v = (uint32_t)rnd();
        memcpy(p, &v, sizeof v);
    } else if (c->base == B_UINT8) {
        *p = (uint8_t)rnd();
    } else if (c->base == B_DOUBLE_INT) {
        struct double_int e = {(double)(rnd() % 4), (int)(rnd() % 100)};
        memcpy(p, &e, sizeof e);
    } else {
        struct {
            int i;
            double v;
        } e = {(int)(rnd() % 1000), (double)(rnd() % 1000)};
        memcpy(p, &e.i, sizeof e.i);
        memcpy(p + sizeof(int), &e.v, sizeof e.v);
    }
}

/* n random elements of c for op, written through MPI_Unpack into b (the
 * type map's bytes only). */
static void fill(const struct dcase *c, MPI_Op o, size_t n, struct buf *b)
{
    int psize, pos = 0;
    MPI_Pack_size((int)n, c->dt, MPI_COMM_SELF, &psize);
    unsigned char *packed = xmalloc((size_t)psize), *at = packed;
    size_t per = c->base == B_DOUBLE ? 8 : c->base == B_INT ? 4 : c->base == B_UINT8 ? 1 : 12;
    size_t k = c->base == B_MIXED ? 1 : (size_t)c->k; /* mixed: one int and one double */
    unsigned char tmp[16];
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < k; j++) {
            draw(c, o, j, tmp);
            if (c->base == B_DOUBLE_INT) { /* packed: the double, then the int */
                memcpy(at, tmp, 8);
                memcpy(at + 8, tmp + offsetof(struct double_int, i), 4);
            } else {
                memcpy(at, tmp, per);
            }
            at += per;
        }
    MPI_Unpack(packed, psize, &pos, b->origin, (int)n, c->dt, MPI_COMM_SELF);
    free(packed);
}

/* 1 where n elements of c have a byte of the type map (MPI_Unpack of ones). */
static unsigned char *typemap_mask(const struct dcase *c, size_t n)
{
    int psize, pos = 0;
    struct buf m = buf_new(c, n, 0);
    MPI_Pack_size((int)n, c->dt, MPI_COMM_SELF, &psize);
    unsigned char *ones = xmalloc((size_t)psize);
    memset(ones, 1, (size_t)psize);
    MPI_Unpack(ones, psize, &pos, m.origin, (int)n, c->dt, MPI_COMM_SELF);
    free(ones);
    return m.mem;
}

static void check(int ok, const char *desc, const char *why)
{
    if (ok) {
        npass++;
        if (verbose)
            printf("ok   %s\n", desc);
        return;
    }
    nfail++;
    printf("FAIL %s rank=%d %s\n", desc, wrank, why);
    fflush(stdout);
}

/* ---- The reference --------------------------------------------------------------- */

/* A buffer for n elements of c: its memory, filled with byte b, and the
 * origin to pass to MPI. */
static struct buf buf_new(const struct dcase *c, size_t n, int b);

/* MPI_Reduce_local for the reference, except where the MPI library's answer
 * is not the standard's: Open MPI 4.1's AVX op component adds 8- and 16-bit
 * unsigned integers with saturation, where C wraps them. */
static int reduce_local_ref(const void *in, void *inout, size_t m, MPI_Datatype t, MPI_Op o)
{
#if defined(OPEN_MPI)
    if (o == MPI_SUM && (t == MPI_UINT8_T || t == MPI_UNSIGNED_CHAR)) {
        for (size_t i = 0; i < m; i++)
            ((uint8_t *)inout)[i] = (uint8_t)(((const uint8_t *)in)[i] + ((uint8_t *)inout)[i]);
        return MPI_SUCCESS;
    }
    if (o == MPI_SUM && (t == MPI_UINT16_T || t == MPI_UNSIGNED_SHORT)) {
        uint16_t a, b;
        for (size_t i = 0; i < m; i++) {
            memcpy(&a, (const char *)in + 2 * i, 2);
            memcpy(&b, (char *)inout + 2 * i, 2);
            b = (uint16_t)(a + b);
            memcpy((char *)inout + 2 * i, &b, 2);
        }
        return MPI_SUCCESS;
    }
#endif
    return PMPI_Reduce_local(in, inout, (int)m, t, o);
}

/* The result computed here, from every rank's input (gathered packed) and
 * MPI_Reduce_local in rank order: x0 op (x1 op (... op x(p-1))).  A user op
 * gets the datatype; a predefined op applies to the base elements one by
 * one (MPI_Accumulate's rule: MPI's reductions do not define predefined ops
 * on derived types, and MPICH rejects them), so those are reduced as base
 * elements.  out: n elements of c (rank's block for rsb), NULL: none. */
static int reference(enum coll coll, const struct dcase *c, MPI_Op o, size_t n, size_t nin,
                     const void *in, void *out, int root)
{
    int user = is_user(o), psize, pos, rc = MPI_SUCCESS;
    MPI_Datatype t = user ? c->dt : base_of(c);
    size_t m = user ? nin : nin * (size_t)c->k; /* elements of t */
    MPI_Aint lb, ext;
    MPI_Pack_size((int)nin, c->dt, MPI_COMM_SELF, &psize);
    unsigned char *all = xmalloc((size_t)psize * (size_t)wsize), *mine = xmalloc((size_t)psize);
    pos = 0;
    MPI_Pack(in, (int)nin, c->dt, mine, psize, &pos, MPI_COMM_SELF);
    PMPI_Allgather(mine, psize, MPI_BYTE, all, psize, MPI_BYTE, MPI_COMM_WORLD);
    MPI_Type_get_extent(t, &lb, &ext);
    struct buf acc = buf_new(c, nin, 0), x = buf_new(c, nin, 0);
    unsigned char *acc_at = acc.origin, *x_at = x.origin;
    if (!user) { /* flat arrays of the base type */
        free(acc.mem);
        free(x.mem);
        acc.mem = acc_at = xmalloc(m * (size_t)ext);
        x.mem = x_at = xmalloc(m * (size_t)ext);
    }
    for (int r = wsize - 1; r >= 0 && rc == MPI_SUCCESS; r--) {
        pos = 0;
        MPI_Unpack(all + (size_t)r * (size_t)psize, psize, &pos, r == wsize - 1 ? acc_at : x_at,
                   (int)m, t, MPI_COMM_SELF);
        if (r < wsize - 1)
            rc = reduce_local_ref(x_at, acc_at, m, t, o);
    }
    if (rc == MPI_SUCCESS && out && (coll != C_REDUCE || wrank == root)) {
        size_t first = coll == C_RSB ? (size_t)wrank * n : 0, per = user ? 1 : (size_t)c->k;
        pos = 0;
        MPI_Pack(acc_at + (MPI_Aint)(first * per) * ext, (int)(n * per), t, mine, psize, &pos,
                 MPI_COMM_SELF);
        int len = pos;
        pos = 0;
        MPI_Unpack(mine, len, &pos, out, (int)n, c->dt, MPI_COMM_SELF);
    }
    free(all);
    free(mine);
    free(acc.mem);
    free(x.mem);
    return rc;
}

/* -0.0 as 0.0 in packed values of c: association orders differ (rank order
 * is kept, grouping is not), and only the sign of a zero can tell. */
static void zero_signs(const struct dcase *c, unsigned char *p, int psize)
{
    size_t rec = c->base == B_DOUBLE ? 8 : 12, at = c->base == B_MIXED ? 4 : 0;
    if (c->base != B_DOUBLE && c->base != B_DOUBLE_INT && c->base != B_MIXED)
        return;
    for (size_t i = 0; i + rec <= (size_t)psize; i += rec) {
        double v;
        memcpy(&v, p + i + at, sizeof v);
        if (v == 0)
            memset(p + i + at, 0, sizeof v);
    }
}

/* Whether n elements of c at a and b hold the same values (type map bytes). */
static int same_values(const struct dcase *c, size_t n, const void *a, const void *b,
                       const char *whose, char *why, size_t whylen)
{
    int psize, pa = 0, pb = 0, ok = 1;
    MPI_Pack_size((int)n, c->dt, MPI_COMM_SELF, &psize);
    unsigned char *x = xmalloc((size_t)psize), *y = xmalloc((size_t)psize);
    MPI_Pack(a, (int)n, c->dt, x, psize, &pa, MPI_COMM_SELF);
    MPI_Pack(b, (int)n, c->dt, y, psize, &pb, MPI_COMM_SELF);
    zero_signs(c, x, psize);
    zero_signs(c, y, psize);
    for (int i = 0; ok && i < psize; i++)
        if (x[i] != y[i]) {
            ok = 0;
            snprintf(why, whylen, "packed byte %d of the result differs from %s", i, whose);
        }
    free(x);
    free(y);
    return ok;
}

/* ---- One check ----------------------------------------------------------------- */

static void run_case(enum coll coll, struct dcase *c, int oi, size_t n, int in_place, int root)
{
    MPI_Op o = c->ops[oi];
    size_t nin = coll == C_RSB ? n * (size_t)wsize : n, nout = n;
    int at_root = coll != C_REDUCE || wrank == root, rc, rc_ref;
    char desc[256], why[256];
    snprintf(desc, sizeof desc, "%s type=%s op=%s count=%zu%s root=%d", coll_name[coll], c->name,
             c->op_names[oi], n, in_place ? " in_place" : "", root);

    /* input; the result buffers start as the sentinel (and, in place, the input) */
    struct buf in = buf_new(c, nin, 0), ref = buf_new(c, nout, SENTINEL);
    struct buf res = buf_new(c, in_place ? nin : nout, SENTINEL);
    for (size_t i = 0; i < in.bytes; i++)
        in.mem[i] = (unsigned char)rnd();
    fill(c, o, nin, &in);
    if (in_place) {
        int psize, pos = 0;
        MPI_Pack_size((int)nin, c->dt, MPI_COMM_SELF, &psize);
        unsigned char *packed = xmalloc((size_t)psize);
        MPI_Pack(in.origin, (int)nin, c->dt, packed, psize, &pos, MPI_COMM_SELF);
        pos = 0;
        MPI_Unpack(packed, psize, &pos, res.origin, (int)nin, c->dt, MPI_COMM_SELF);
        free(packed);
    }
    unsigned char *before = xmalloc(res.bytes);
    memcpy(before, res.mem, res.bytes);
    const void *sb = in_place ? MPI_IN_PLACE : in.origin;
    void *rb = at_root ? res.origin : NULL, *rref = at_root ? ref.origin : NULL;
    switch (coll) {
    case C_ALLREDUCE:
        rc = MPI_Allreduce(sb, rb, (int)n, c->dt, o, MPI_COMM_WORLD);
        break;
    case C_RSB:
        rc = MPI_Reduce_scatter_block(sb, rb, (int)n, c->dt, o, MPI_COMM_WORLD);
        break;
    default:
        if (!at_root)
            sb = in.origin;
        rc = MPI_Reduce(sb, rb, (int)n, c->dt, o, root, MPI_COMM_WORLD);
        break;
    }
    rc_ref = reference(coll, c, o, n, nin, in.origin, rref, root);
    int ok = rc == MPI_SUCCESS && rc_ref == MPI_SUCCESS, len;
    char e1[MPI_MAX_ERROR_STRING] = "", e2[MPI_MAX_ERROR_STRING] = "";
    if (rc != MPI_SUCCESS)
        MPI_Error_string(rc, e1, &len);
    if (rc_ref != MPI_SUCCESS)
        MPI_Error_string(rc_ref, e2, &len);
    snprintf(why, sizeof why, "call: %.100s reference: %.100s", e1, e2);
    if (ok && at_root && n > 0)
        ok = same_values(c, n, res.origin, ref.origin, "the reference", why, sizeof why);
    /* the MPI library's own collective too, where MPICH gets it right: user
     * ops (it rejects predefined ops on derived types) but not rsb */
    if (is_user(o) && coll != C_RSB) { /* every rank calls it, whatever ok is */
        struct buf lib = buf_new(c, nout, SENTINEL);
        void *rlib = at_root ? lib.origin : NULL;
        rc = coll == C_ALLREDUCE
                 ? PMPI_Allreduce(in.origin, rlib, (int)n, c->dt, o, MPI_COMM_WORLD)
                 : PMPI_Reduce(in.origin, rlib, (int)n, c->dt, o, root, MPI_COMM_WORLD);
        if (ok && rc != MPI_SUCCESS) {
            ok = 0;
            snprintf(why, sizeof why, "the MPI library's call failed (%d)", rc);
        }
        if (ok && at_root && n > 0)
            ok = same_values(c, n, res.origin, lib.origin, "the MPI library's", why, sizeof why);
        free(lib.mem);
    }
    if (ok && at_root && n > 0) {
        unsigned char *mask = typemap_mask(c, n);
        MPI_Aint lo, hi;
        span(c, n, &lo, &hi);
        for (size_t i = 0; ok && i < (size_t)(hi - lo); i++)
            if (!mask[i] && res.mem[i] != before[i]) {
                ok = 0;
                snprintf(why, sizeof why, "byte %td from the origin, outside the type map, written",
                         (ptrdiff_t)((MPI_Aint)i + lo));
            }
        free(mask);
    }
    check(ok, desc, why);
    free(before);
    free(in.mem);
    free(ref.mem);
    free(res.mem);
}

int main(int argc, char **argv)
{
    static const size_t counts[] = {0, 1, 7, 1000}, few_counts[] = {1, 7}, big_counts[] = {1, 2};
    long long tally[2];
    int k = 0;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--few"))
            few = 1;
        else if (!strcmp(argv[i], "--mixed"))
            mixed_only = 1;
        else if (!strcmp(argv[i], "--verbose"))
            verbose = 1;
        else if (!strcmp(argv[i], "--type") && i + 1 < argc)
            only_type = argv[++i];
        else if (!strcmp(argv[i], "--coll") && i + 1 < argc)
            only_coll = argv[++i];
        else {
            if (wrank == 0)
                fprintf(stderr,
                        "usage: test_derived [--few] [--mixed] [--verbose] [--type SUBSTRING] "
                        "[--coll SUBSTRING]\n");
            MPI_Finalize();
            return 2;
        }
    }
    rng_state = 0x5eed0000ULL + (uint64_t)wrank;
    MPI_Op_create(matmul_op, 0, &matmul);
    MPI_Op_create(affine_d_op, 0, &affine_d);
    MPI_Op_create(affine_i_op, 0, &affine_i);
    MPI_Op_create(affine_b_op, 0, &affine_b);
    MPI_Op_create(mixed_op, 1, &mixed);
    make_types();

    /* the offsets the user ops use are the type map's (a check of this test) */
    for (int i = 0; i < ncases; i++) {
        unsigned char *mask = typemap_mask(&cases[i], 1);
        MPI_Aint lo, hi;
        int ok = 1;
        span(&cases[i], 1, &lo, &hi);
        for (int j = 0; j < cases[i].k; j++)
            ok &= mask[cases[i].off[j] - lo] == 1;
        check(ok, cases[i].name, "offsets of the test's table are not in the type map");
        free(mask);
    }

    for (int coll = 0; coll < C_MAX; coll++)
        for (int i = 0; i < ncases; i++) {
            struct dcase *c = &cases[i];
            if ((only_type && !strstr(c->name, only_type)) ||
                (only_coll && !strstr(coll_name[coll], only_coll)))
                continue;
            const size_t *cs = c->big ? big_counts : few ? few_counts : counts;
            size_t ncs = c->big ? 2 : few ? 2 : 4;
            for (int oi = 0; oi < c->nops; oi++)
                for (size_t j = 0; j < ncs; j++)
                    for (int ip = 0; ip < 2; ip++, k++)
                        run_case((enum coll)coll, c, oi, cs[j], ip, k % wsize);
        }

    PMPI_Allreduce(MPI_IN_PLACE, &bad_datatype, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    check(!bad_datatype, "user ops", "a user op was given a datatype other than the call's");
    tally[0] = npass;
    tally[1] = nfail;
    PMPI_Allreduce(MPI_IN_PLACE, tally, 2, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (wrank == 0) {
        printf("%lld passed, %lld failed\n", tally[0], tally[1]);
        fflush(stdout);
    }
    for (int i = 0; i < ncases; i++) {
        MPI_Type_free(&cases[i].dt);
        free(cases[i].off);
    }
    MPI_Op_free(&matmul);
    MPI_Op_free(&affine_d);
    MPI_Op_free(&affine_i);
    MPI_Op_free(&affine_b);
    MPI_Op_free(&mixed);
    MPI_Finalize();
    return tally[1] > 0;
}
