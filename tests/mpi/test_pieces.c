/* test_pieces.c - checks MPI_Reduce_scatter_block, MPI_Allgather, MPI_Reduce
 * and MPI_Bcast against the MPI library's own.
 *
 * Linked with treeduce, MPI_X is treeduce's and PMPI_X is the reference;
 * linked with plain MPI both are the same routine and every check passes.
 * Each check calls both on the same random data and compares the results:
 *   - rsb (MPI_Reduce_scatter_block) and reduce (MPI_Reduce): every
 *     (predefined datatype, predefined op) pair that test_allreduce runs
 *     (defined by the standard and accepted by PMPI_Reduce_local), out of
 *     place and with MPI_IN_PLACE (at the root for reduce); user ops on
 *     predefined types (a non-commutative composition of affine maps packed
 *     in MPI_LONG_LONG, a commutative double sum) and on derived types;
 *     reduce at every root: with --all-roots for every case, else the root
 *     moves from count to count (each pair meets every root when there are
 *     at least as many counts as ranks) and the derived-type, user-op and
 *     communicator checks run at every root.  The reference reduce runs out
 *     of place, and MPI_IN_PLACE at a non-zero root is tested only where
 *     MPI_Reduce is not the MPI library's own: MPICH 4.0 crashes there for
 *     messages over 2 KiB (pmodels/mpich#6540);
 *   - allgather (MPI_Allgather, sendcount = recvcount, sendtype = recvtype):
 *     every predefined datatype, out of place and with MPI_IN_PLACE;
 *     contiguous and strided derived types; one case whose send side is
 *     contig(4,MPI_INT) and receive side MPI_INT (same type signature);
 *   - bcast (MPI_Bcast): every predefined datatype at every root; derived
 *     types; one case whose root describes the data as contig(4,MPI_INT) and
 *     the other ranks as MPI_INT;
 * for a list of counts, then repeated calls and calls on split, duplicated,
 * reversed and freed communicators.  The count is recvcount for rsb (the
 * input holds p blocks of it), sendcount = recvcount for allgather (the
 * output holds p blocks), and the buffer's count for reduce and bcast.
 *
 * Data is drawn as in test_allreduce: floating values spread over
 * 2^-8..2^8, PROD factors near 1, few distinct MINLOC/MAXLOC values and
 * indices, signed integer SUM and PROD in range, unsigned ones wrapping.
 *
 * A check passes when, on every rank of its communicator:
 *   - both calls return MPI_SUCCESS and a send buffer is unchanged;
 *   - reductions: integer, bool, byte, pair and MAX/MIN/logical results
 *     equal the reference exactly; floating SUM components satisfy
 *     |a - e| <= 2 p eps * sum_r |x_r| and PROD components
 *     |a - e| <= 4 p eps * |e| (|e| the complex modulus for complex types),
 *     p the number of ranks, eps the type's epsilon;
 *   - reduce: the receive buffer of a non-root rank is not written;
 *   - allgather and bcast: the result equals the reference exactly and is
 *     identical on every rank;
 *   - gaps of a strided datatype are left as they were.
 *
 * Usage: test_pieces [--quick] [--counts a,b,c] [--types t1,t2] [--ops o1,o2]
 *                    [--pieces rsb,allgather,reduce,bcast] [--all-roots]
 *                    [--seed N] [--verbose] [--expect-treeduce]
 * Prints one line per failed check and, on rank 0, "N passed, M failed".
 * Exits non-zero on every rank when a check failed.
 */
#define _GNU_SOURCE /* RTLD_DEFAULT */
#include <dlfcn.h>
#include <float.h>
#include <math.h>
#include <mpi.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <wchar.h>

/* ---- Datatypes ---------------------------------------------------------- */

enum kind { K_INT, K_FLOAT, K_COMPLEX, K_BOOL, K_BYTE, K_PAIR };
enum scal { S_SINT, S_UINT, S_FLT, S_DBL, S_LDBL };

/* Type groups of the MPI standard's table of predefined reductions; G_TEXT
 * (MPI_CHAR, MPI_WCHAR) is in no group but libraries may accept it. */
enum grp { G_CINT = 1, G_MULTI = 2, G_FLOAT = 4, G_COMPLEX = 8, G_BOOL = 16, G_BYTE = 32, G_PAIR = 64, G_TEXT = 128 };

/* Category of an op: how data is drawn and how results are compared
 * (C_AFFINE: exact, with odd multipliers so that compositions keep their order). */
enum cat { C_EXACT, C_SUM, C_PROD, C_LOGICAL, C_LOC, C_AFFINE };

/* An element is nslots slots of vsize bytes; slot s holds data when
 * s % stride < blocklen (a strided vector), else it is a gap.  Pair types
 * hold a value (scal, vsize) at offset 0 and an int index at ioff. */
struct ttype {
    const char *name; /* for --types and messages */
    MPI_Datatype dt;
    enum kind kind;
    enum scal scal;
    int grp;
    size_t vsize;
    size_t extent;
    size_t ioff;
    int nslots, blocklen, stride;
};

#define SIGNED_T(T) ((T)-1 < 1)
#define TINT(T, dt, g) {#dt, dt, K_INT, SIGNED_T(T) ? S_SINT : S_UINT, g, sizeof(T), sizeof(T), 0, 1, 1, 1}
#define TFLT(T, dt, s) {#dt, dt, K_FLOAT, s, G_FLOAT, sizeof(T), sizeof(T), 0, 1, 1, 1}
#define TCPX(T, dt, s) {#dt, dt, K_COMPLEX, s, G_COMPLEX, sizeof(T), 2 * sizeof(T), 0, 2, 2, 2}
#define TPAIR(S, dt, s) {#dt, dt, K_PAIR, s, G_PAIR, sizeof(((S *)0)->v), sizeof(S), offsetof(S, i), 1, 1, 1}

struct p_float { float v; int i; };
struct p_double { double v; int i; };
struct p_long { long v; int i; };
struct p_int { int v; int i; };
struct p_short { short v; int i; };
struct p_ldouble { long double v; int i; };

static const struct ttype types[] = {
    TINT(char, MPI_CHAR, G_TEXT),
    TINT(signed char, MPI_SIGNED_CHAR, G_CINT),
    TINT(unsigned char, MPI_UNSIGNED_CHAR, G_CINT),
    TINT(wchar_t, MPI_WCHAR, G_TEXT),
    TINT(short, MPI_SHORT, G_CINT),
    TINT(unsigned short, MPI_UNSIGNED_SHORT, G_CINT),
    TINT(int, MPI_INT, G_CINT),
    TINT(unsigned, MPI_UNSIGNED, G_CINT),
    TINT(long, MPI_LONG, G_CINT),
    TINT(unsigned long, MPI_UNSIGNED_LONG, G_CINT),
    TINT(long long, MPI_LONG_LONG, G_CINT),
    TINT(unsigned long long, MPI_UNSIGNED_LONG_LONG, G_CINT),
    TINT(int8_t, MPI_INT8_T, G_CINT),
    TINT(int16_t, MPI_INT16_T, G_CINT),
    TINT(int32_t, MPI_INT32_T, G_CINT),
    TINT(int64_t, MPI_INT64_T, G_CINT),
    TINT(uint8_t, MPI_UINT8_T, G_CINT),
    TINT(uint16_t, MPI_UINT16_T, G_CINT),
    TINT(uint32_t, MPI_UINT32_T, G_CINT),
    TINT(uint64_t, MPI_UINT64_T, G_CINT),
    TINT(MPI_Aint, MPI_AINT, G_MULTI),
    TINT(MPI_Offset, MPI_OFFSET, G_MULTI),
    TINT(MPI_Count, MPI_COUNT, G_MULTI),
    TFLT(float, MPI_FLOAT, S_FLT),
    TFLT(double, MPI_DOUBLE, S_DBL),
    TFLT(long double, MPI_LONG_DOUBLE, S_LDBL),
    TCPX(float, MPI_C_FLOAT_COMPLEX, S_FLT),
    TCPX(double, MPI_C_DOUBLE_COMPLEX, S_DBL),
    TCPX(long double, MPI_C_LONG_DOUBLE_COMPLEX, S_LDBL),
    {"MPI_C_BOOL", MPI_C_BOOL, K_BOOL, S_UINT, G_BOOL, sizeof(bool), sizeof(bool), 0, 1, 1, 1},
    {"MPI_BYTE", MPI_BYTE, K_BYTE, S_UINT, G_BYTE, 1, 1, 0, 1, 1, 1},
    TPAIR(struct p_float, MPI_FLOAT_INT, S_FLT),
    TPAIR(struct p_double, MPI_DOUBLE_INT, S_DBL),
    TPAIR(struct p_long, MPI_LONG_INT, SIGNED_T(long) ? S_SINT : S_UINT),
    TPAIR(struct p_int, MPI_2INT, S_SINT),
    TPAIR(struct p_short, MPI_SHORT_INT, S_SINT),
    TPAIR(struct p_ldouble, MPI_LONG_DOUBLE_INT, S_LDBL),
};
#define NTYPES ((int)(sizeof types / sizeof types[0]))

struct top {
    const char *name;
    MPI_Op op;
    enum cat cat;
    int grps; /* type groups the standard defines the op for */
};

#define G_ARITH (G_CINT | G_MULTI | G_FLOAT)
static const struct top ops[] = {
    {"MPI_MAX", MPI_MAX, C_EXACT, G_ARITH},
    {"MPI_MIN", MPI_MIN, C_EXACT, G_ARITH},
    {"MPI_SUM", MPI_SUM, C_SUM, G_ARITH | G_COMPLEX},
    {"MPI_PROD", MPI_PROD, C_PROD, G_ARITH | G_COMPLEX},
    {"MPI_LAND", MPI_LAND, C_LOGICAL, G_CINT | G_BOOL},
    {"MPI_LOR", MPI_LOR, C_LOGICAL, G_CINT | G_BOOL},
    {"MPI_LXOR", MPI_LXOR, C_LOGICAL, G_CINT | G_BOOL},
    {"MPI_BAND", MPI_BAND, C_EXACT, G_CINT | G_MULTI | G_BYTE},
    {"MPI_BOR", MPI_BOR, C_EXACT, G_CINT | G_MULTI | G_BYTE},
    {"MPI_BXOR", MPI_BXOR, C_EXACT, G_CINT | G_MULTI | G_BYTE},
    {"MPI_MINLOC", MPI_MINLOC, C_LOC, G_PAIR},
    {"MPI_MAXLOC", MPI_MAXLOC, C_LOC, G_PAIR},
};
#define NOPS ((int)(sizeof ops / sizeof ops[0]))

/* ---- Pieces, options and tallies ---------------------------------------- */

enum piece { P_RSB, P_ALLGATHER, P_REDUCE, P_BCAST, P_MAX };

static const struct {
    const char *name;      /* for --pieces and messages */
    const char *mpi, *ref; /* the routine under test and the reference */
} pieces[P_MAX] = {
    {"rsb", "MPI_Reduce_scatter_block", "PMPI_Reduce_scatter_block"},
    {"allgather", "MPI_Allgather", "PMPI_Allgather"},
    {"reduce", "MPI_Reduce", "PMPI_Reduce"},
    {"bcast", "MPI_Bcast", "PMPI_Bcast"},
};

static const size_t default_counts[] = {0, 1, 2, 7, 64, 1000, 65539};
static const size_t quick_counts[] = {0, 1, 7, 1000};

static struct {
    uint64_t seed;
    int verbose;
    int expect_treeduce;
    int all_roots;
    size_t *counts;
    int ncounts;
    const char *types; /* comma-separated filters or NULL */
    const char *ops;
    const char *pieces;
} opt;

static int wrank, wsize;
static int reduce_interposed;            /* MPI_Reduce is not PMPI_Reduce */
static uint64_t case_no;                 /* same sequence on every rank */
static long long owned_pass, owned_fail; /* checks this rank reports (rank 0 of their comm) */

/* ---- Random numbers (splitmix64) ---------------------------------------- */

static uint64_t rng_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static uint64_t rng_below(uint64_t *s, uint64_t n) { return rng_next(s) % n; }

static long double rng_unit(uint64_t *s) { return (long double)(rng_next(s) >> 11) * 0x1.0p-53L; }

/* ---- Scalar access ------------------------------------------------------ */

static void put_int(void *p, size_t size, uint64_t v)
{
    uint8_t a = (uint8_t)v;
    uint16_t b = (uint16_t)v;
    uint32_t c = (uint32_t)v;
    switch (size) {
    case 1: memcpy(p, &a, 1); break;
    case 2: memcpy(p, &b, 2); break;
    case 4: memcpy(p, &c, 4); break;
    default: memcpy(p, &v, 8); break;
    }
}

static uint64_t get_uint(const void *p, size_t size)
{
    uint8_t a;
    uint16_t b;
    uint32_t c;
    uint64_t d;
    switch (size) {
    case 1: memcpy(&a, p, 1); return a;
    case 2: memcpy(&b, p, 2); return b;
    case 4: memcpy(&c, p, 4); return c;
    default: memcpy(&d, p, 8); return d;
    }
}

static int64_t get_sint(const void *p, size_t size)
{
    int8_t a;
    int16_t b;
    int32_t c;
    int64_t d;
    switch (size) {
    case 1: memcpy(&a, p, 1); return a;
    case 2: memcpy(&b, p, 2); return b;
    case 4: memcpy(&c, p, 4); return c;
    default: memcpy(&d, p, 8); return d;
    }
}

static int is_float(enum scal s) { return s == S_FLT || s == S_DBL || s == S_LDBL; }

static void put_flt(void *p, enum scal s, long double v)
{
    float f = (float)v;
    double d = (double)v;
    switch (s) {
    case S_FLT: memcpy(p, &f, sizeof f); break;
    case S_DBL: memcpy(p, &d, sizeof d); break;
    default: memcpy(p, &v, sizeof v); break;
    }
}

static long double get_flt(const void *p, enum scal s)
{
    float f;
    double d;
    long double l;
    switch (s) {
    case S_FLT: memcpy(&f, p, sizeof f); return f;
    case S_DBL: memcpy(&d, p, sizeof d); return d;
    default: memcpy(&l, p, sizeof l); return l;
    }
}

static long double eps_of(enum scal s)
{
    return s == S_FLT ? FLT_EPSILON : s == S_DBL ? DBL_EPSILON : LDBL_EPSILON;
}

/* Bytes that carry the value: x87 long double has 6 bytes of padding. */
static size_t sig_bytes(enum scal s, size_t vsize)
{
    if (s == S_LDBL && LDBL_MANT_DIG == 64)
        return 10;
    return vsize;
}

static void fmt_scalar(char *buf, size_t n, enum scal s, size_t vsize, const void *p)
{
    if (is_float(s))
        snprintf(buf, n, "%.*Lg", s == S_FLT ? 9 : s == S_DBL ? 17 : 21, get_flt(p, s));
    else if (s == S_SINT)
        snprintf(buf, n, "%lld", (long long)get_sint(p, vsize));
    else
        snprintf(buf, n, "%llu", (unsigned long long)get_uint(p, vsize));
}

static int slot_covered(const struct ttype *t, int s) { return s % t->stride < t->blocklen; }

/* ---- Data ---------------------------------------------------------------- */

static uint64_t mask_of(size_t vsize) { return vsize >= 8 ? ~0ULL : (1ULL << (8 * vsize)) - 1; }

/* A uniform value in [-m, m], as the low bytes of a two's complement word. */
static uint64_t rng_signed(uint64_t *rng, uint64_t m) { return rng_next(rng) % (2 * m + 1) - m; }

static long double rng_real(uint64_t *rng)
{
    /* Exponents spread over 2^-8 .. 2^8 so that sums round. */
    long double u = 2 * rng_unit(rng) - 1;
    return ldexpl(u, (int)rng_below(rng, 17) - 8);
}

static void fill_int(const struct ttype *t, enum cat cat, unsigned char *p, uint64_t *rng, size_t elem,
                     int rank, int nprocs)
{
    uint64_t mask = mask_of(t->vsize), maxv = mask >> 1, r = rng_next(rng);

    if (cat == C_LOGICAL) {
        if (rng_below(rng, 3) == 0)
            r = 0;
        else if ((r & mask) == 0)
            r = 1;
    } else if (t->scal == S_UINT) {
        /* Unsigned SUM and PROD wrap; keep most factors odd so products stay nonzero. */
        if (cat == C_PROD && rng_below(rng, 4) != 0)
            r |= 1;
    } else if (cat == C_SUM) {
        r = rng_signed(rng, maxv / (uint64_t)nprocs);
    } else if (cat == C_PROD) {
        /* One rank per element supplies any value, the others +-1 or 0: no signed overflow. */
        if (elem % (size_t)nprocs == (size_t)rank) {
            r = rng_signed(rng, maxv);
        } else {
            uint64_t k = rng_below(rng, 16);
            r = k == 0 ? 0 : (k & 1) ? 1 : (uint64_t)-1;
        }
    }
    if (cat == C_AFFINE)
        r |= 1ULL << 32;
    put_int(p, t->vsize, r);
}

static void fill_real(const struct ttype *t, enum cat cat, unsigned char *p, uint64_t *rng, int slot)
{
    long double v;

    if (cat == C_PROD) {
        /* Factors near 1: no overflow for any number of ranks. */
        long double d = (2 * rng_unit(rng) - 1) / 16;
        if (t->kind == K_COMPLEX)
            v = (slot & 1) ? d : 1 + d;
        else
            v = (rng_next(rng) & 1) ? 1 + d : -(1 + d);
    } else if (cat == C_LOGICAL && rng_below(rng, 3) == 0) {
        v = 0;
    } else {
        v = rng_real(rng);
    }
    put_flt(p, t->scal, v);
}

static void fill(const struct ttype *t, enum cat cat, unsigned char *buf, size_t count, uint64_t *rng, int rank,
                 int nprocs)
{
    size_t i, k;

    /* Padding gets random bytes too: results must not depend on it. */
    for (k = 0; k < count * t->extent; k++)
        buf[k] = (unsigned char)rng_next(rng);

    for (i = 0; i < count; i++) {
        unsigned char *e = buf + i * t->extent;
        int s;
        if (t->kind == K_PAIR) {
            /* Few distinct values and indices: ties on both. */
            int idx = (int)rng_below(rng, 4);
            int64_t v = (int64_t)rng_below(rng, 5) - 2;
            if (is_float(t->scal))
                put_flt(e, t->scal, (long double)v);
            else
                put_int(e, t->vsize, (uint64_t)v);
            memcpy(e + t->ioff, &idx, sizeof idx);
            continue;
        }
        for (s = 0; s < t->nslots; s++) {
            unsigned char *p = e + (size_t)s * t->vsize;
            if (t->kind == K_BOOL) {
                bool b = rng_next(rng) & 1;
                memcpy(p, &b, sizeof b);
            } else if (t->kind == K_BYTE) {
                *p = (unsigned char)rng_next(rng);
            } else if (is_float(t->scal)) {
                fill_real(t, cat, p, rng, s);
            } else {
                fill_int(t, cat, p, rng, i, rank, nprocs);
            }
        }
    }
}

/* |x| of every floating slot, for the SUM tolerance. */
static void abs_of(const struct ttype *t, const unsigned char *in, unsigned char *out, size_t count)
{
    size_t i;
    int s;

    memcpy(out, in, count * t->extent);
    for (i = 0; i < count; i++)
        for (s = 0; s < t->nslots; s++) {
            size_t off = i * t->extent + (size_t)s * t->vsize;
            put_flt(out + off, t->scal, fabsl(get_flt(in + off, t->scal)));
        }
}

static uint64_t hash_bytes(uint64_t h, const unsigned char *p, size_t n)
{
    size_t k;
    for (k = 0; k < n; k++)
        h = (h ^ p[k]) * 0x100000001b3ULL;
    return h;
}

/* FNV-1a over the bytes that carry values (no padding, no gaps). */
static uint64_t hash_result(const struct ttype *t, const unsigned char *buf, size_t count)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    size_t i, sb = sig_bytes(t->scal, t->vsize);
    int s;

    for (i = 0; i < count; i++) {
        const unsigned char *e = buf + i * t->extent;
        if (t->kind == K_PAIR) {
            h = hash_bytes(h, e, sb);
            h = hash_bytes(h, e + t->ioff, sizeof(int));
            continue;
        }
        for (s = 0; s < t->nslots; s++)
            if (slot_covered(t, s))
                h = hash_bytes(h, e + (size_t)s * t->vsize, sb);
    }
    return h;
}

/* ---- Comparison ---------------------------------------------------------- */

static int slot_exact(const struct ttype *t, const unsigned char *a, const unsigned char *e)
{
    if (is_float(t->scal))
        return get_flt(a, t->scal) == get_flt(e, t->scal);
    return get_uint(a, t->vsize) == get_uint(e, t->vsize);
}

/* Index of the first element of act that does not match exp, or count; why
 * describes the mismatch. */
static size_t compare(const struct ttype *t, enum cat cat, const unsigned char *act, const unsigned char *exp,
                      const unsigned char *sabs, size_t count, int nprocs, char *why, size_t whylen)
{
    size_t i;
    char sa[64], se[64];

    for (i = 0; i < count; i++) {
        const unsigned char *a = act + i * t->extent, *e = exp + i * t->extent;
        long double scale_prod = 0;
        int s;

        if (t->kind == K_PAIR) {
            int ia, ie;
            memcpy(&ia, a + t->ioff, sizeof ia);
            memcpy(&ie, e + t->ioff, sizeof ie);
            if (!slot_exact(t, a, e) || ia != ie) {
                fmt_scalar(sa, sizeof sa, t->scal, t->vsize, a);
                fmt_scalar(se, sizeof se, t->scal, t->vsize, e);
                snprintf(why, whylen, "expected=(%s,%d) actual=(%s,%d)", se, ie, sa, ia);
                return i;
            }
            continue;
        }
        if (is_float(t->scal) && cat == C_PROD) {
            if (t->kind == K_COMPLEX)
                scale_prod = hypotl(get_flt(e, t->scal), get_flt(e + t->vsize, t->scal));
            else
                scale_prod = fabsl(get_flt(e, t->scal));
        }
        for (s = 0; s < t->nslots; s++) {
            size_t off = (size_t)s * t->vsize;
            const char *part = t->kind == K_COMPLEX ? (s & 1 ? " (imag)" : " (real)") : "";
            if (!slot_covered(t, s)) {
                if (memcmp(a + off, e + off, t->vsize) != 0) {
                    snprintf(why, whylen, "gap slot %d of the datatype was written", s);
                    return i;
                }
                continue;
            }
            if (is_float(t->scal) && (cat == C_SUM || cat == C_PROD)) {
                long double va = get_flt(a + off, t->scal), ve = get_flt(e + off, t->scal), tol;
                if (cat == C_SUM)
                    tol = 2 * nprocs * eps_of(t->scal) * get_flt(sabs + i * t->extent + off, t->scal);
                else
                    tol = 4 * nprocs * eps_of(t->scal) * scale_prod;
                if (!(fabsl(va - ve) <= tol)) {
                    fmt_scalar(sa, sizeof sa, t->scal, t->vsize, a + off);
                    fmt_scalar(se, sizeof se, t->scal, t->vsize, e + off);
                    snprintf(why, whylen, "expected=%s actual=%s%s |diff|=%.3Lg tol=%.3Lg", se, sa, part,
                             fabsl(va - ve), tol);
                    return i;
                }
            } else if (!slot_exact(t, a + off, e + off)) {
                fmt_scalar(sa, sizeof sa, t->scal, t->vsize, a + off);
                fmt_scalar(se, sizeof se, t->scal, t->vsize, e + off);
                snprintf(why, whylen, "expected=%s actual=%s%s", se, sa, part);
                return i;
            }
        }
    }
    return count;
}


/* ---- Checks ---------------------------------------------------------------- */

/* One check: a piece called on comm with these arguments. */
struct chk {
    enum piece piece;
    MPI_Comm comm;
    const char *where;
    const struct ttype *t; /* describes the data in the buffers compared */
    MPI_Op op;             /* rsb and reduce */
    const char *opname;
    enum cat cat;
    size_t count;
    int inplace;
    int root;  /* reduce and bcast, else -1 */
    int mixed; /* the send side (allgather) or the root (bcast) describes the
                * count MPI_INTs of t as count/4 elements of contig(4,MPI_INT) */
};

static MPI_Datatype contig4; /* contig(4,MPI_INT), for the mixed cases */

static void describe(const struct chk *c, char *buf, size_t n)
{
    int k = snprintf(buf, n, "piece=%s comm=%s type=%s%s", pieces[c->piece].name, c->where,
                     c->mixed ? "contig(4,MPI_INT)/" : "", c->t->name);
    if (c->piece == P_RSB || c->piece == P_REDUCE)
        k += snprintf(buf + k, n - (size_t)k, " op=%s", c->opname);
    k += snprintf(buf + k, n - (size_t)k, " count=%zu", c->count);
    if (c->piece != P_BCAST)
        k += snprintf(buf + k, n - (size_t)k, " in_place=%s", c->inplace ? "yes" : "no");
    if (c->root >= 0)
        snprintf(buf + k, n - (size_t)k, " root=%d", c->root);
}

static void fail_line(const struct chk *c, const char *what)
{
    char d[256];
    describe(c, d, sizeof d);
    printf("FAIL %s rank=%d %s\n", d, wrank, what);
    fflush(stdout);
}

/* Whether a call succeeded; a failure is reported with fn's name. */
static int call_ok(const struct chk *c, int rc, const char *fn)
{
    char errstr[MPI_MAX_ERROR_STRING], why[MPI_MAX_ERROR_STRING + 64];
    int len;

    if (rc == MPI_SUCCESS)
        return 1;
    MPI_Error_string(rc, errstr, &len);
    snprintf(why, sizeof why, "%s failed: %s", fn, errstr);
    fail_line(c, why);
    return 0;
}

/* Whether count elements of act match exp (see compare); reports the first
 * mismatch. */
static int result_ok(const struct chk *c, const unsigned char *act, const unsigned char *exp,
                     const unsigned char *sabs, size_t count, int nprocs)
{
    char why[256], msg[320];
    size_t bad = compare(c->t, c->cat, act, exp, sabs, count, nprocs, why, sizeof why);

    if (bad == count)
        return 1;
    snprintf(msg, sizeof msg, "index=%zu %s", bad, why);
    fail_line(c, msg);
    return 0;
}

static void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) {
        fprintf(stderr, "test_pieces: out of memory (%zu bytes)\n", n);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    return p;
}

static void *xdup(const void *p, size_t n)
{
    return memcpy(xmalloc(n), p, n);
}

#define PATTERN 0x5a /* what a buffer holds before a call writes it */

static unsigned char *pattern(size_t n)
{
    unsigned char *p = xmalloc(n);
    memset(p, PATTERN, n);
    return p;
}

static int is_pattern(const unsigned char *p, size_t n)
{
    size_t k;
    for (k = 0; k < n; k++)
        if (p[k] != PATTERN)
            return 0;
    return 1;
}

/* Checks waiting for the ranks to agree: one reduction for many checks, as
 * every collective is slow on oversubscribed cores. */
struct pending {
    struct chk c;
    int ok;
    uint64_t hash; /* of a result every rank must share, else 0 */
};
static struct pending *pend;
static size_t npend, cap_pend;
static MPI_Comm pend_comm = MPI_COMM_NULL;

/* Agrees on the pending checks of pend_comm and tallies them on its rank 0:
 * a check passed if it passed on every rank and the result hashes match
 * (max(h) == min(h), with min(h) = ~max(~h): one MAX reduction). */
static void pend_flush(void)
{
    uint64_t *v;
    size_t k;
    int rank;
    char d[256];

    if (npend == 0)
        return;
    v = xmalloc(3 * npend * sizeof *v);
    for (k = 0; k < npend; k++) {
        v[3 * k] = pend[k].hash;
        v[3 * k + 1] = ~pend[k].hash;
        v[3 * k + 2] = !pend[k].ok;
    }
    PMPI_Allreduce(MPI_IN_PLACE, v, (int)(3 * npend), MPI_UINT64_T, MPI_MAX, pend_comm);
    MPI_Comm_rank(pend_comm, &rank);
    for (k = 0; rank == 0 && k < npend; k++) {
        int failed_somewhere = v[3 * k + 2] != 0, same = v[3 * k] == ~v[3 * k + 1];
        describe(&pend[k].c, d, sizeof d);
        if (!failed_somewhere && !same)
            printf("FAIL %s result differs between ranks\n", d);
        if (!failed_somewhere && same) {
            owned_pass++;
            if (opt.verbose)
                printf("ok   %s\n", d);
        } else {
            owned_fail++;
        }
    }
    fflush(stdout);
    free(v);
    npend = 0;
}

static void pend_add(const struct chk *c, uint64_t hash, int ok)
{
    if (c->comm != pend_comm)
        pend_flush();
    pend_comm = c->comm;
    if (npend == cap_pend) {
        cap_pend = cap_pend ? 2 * cap_pend : 256;
        pend = realloc(pend, cap_pend * sizeof *pend);
        if (!pend)
            MPI_Abort(MPI_COMM_WORLD, 2);
    }
    pend[npend++] = (struct pending){*c, ok, hash};
}

/* Magnitudes reduced like the data, for the floating SUM tolerance; NULL
 * for other checks.  A collective: every rank calls it, failed or not. */
static unsigned char *sum_of_abs(const struct chk *c, const unsigned char *in, size_t nin,
                                 size_t nout)
{
    const struct ttype *t = c->t;
    unsigned char *absb, *sabs;

    if (c->cat != C_SUM || !is_float(t->scal))
        return NULL;
    absb = xmalloc(nin * t->extent);
    sabs = xmalloc(nout * t->extent);
    abs_of(t, in, absb, nin);
    /* op is a sum (predefined or user): it also adds up the magnitudes. */
    if (c->piece == P_RSB)
        PMPI_Reduce_scatter_block(absb, sabs, (int)nout, t->dt, c->op, c->comm);
    else
        PMPI_Reduce(absb, sabs, (int)nout, t->dt, c->op, c->root, c->comm);
    free(absb);
    return sabs;
}

/* rsb: the input is p blocks of count elements, the result one block (the
 * first block of the receive buffer in place, whose other blocks are scratch). */
static int check_rsb(const struct chk *c, int rank, int nprocs, uint64_t *rng)
{
    const struct ttype *t = c->t;
    size_t n = c->count, total = n * (size_t)nprocs, ibytes = total * t->extent;
    size_t obytes = (c->inplace ? total : n) * t->extent;
    unsigned char *data = xmalloc(ibytes), *orig, *exp, *act, *sabs;
    const void *send = c->inplace ? MPI_IN_PLACE : data;
    int ok = 1;

    fill(t, c->cat, data, total, rng, rank, nprocs);
    orig = xdup(data, ibytes);
    exp = c->inplace ? xdup(data, ibytes) : pattern(obytes);
    act = c->inplace ? xdup(data, ibytes) : pattern(obytes);
    ok &= call_ok(c, PMPI_Reduce_scatter_block(send, exp, (int)n, t->dt, c->op, c->comm),
                  "reference PMPI_Reduce_scatter_block");
    ok &= call_ok(c, MPI_Reduce_scatter_block(send, act, (int)n, t->dt, c->op, c->comm),
                  "MPI_Reduce_scatter_block");
    if (ok && !c->inplace && memcmp(data, orig, ibytes) != 0) {
        fail_line(c, "send buffer was modified");
        ok = 0;
    }
    sabs = sum_of_abs(c, orig, total, n);
    ok = ok && result_ok(c, act, exp, sabs, n, nprocs);
    free(data);
    free(orig);
    free(exp);
    free(act);
    free(sabs);
    return ok;
}

/* reduce: the result at the root; the receive buffers of other ranks hold
 * PATTERN and must keep it. */
static int check_reduce(const struct chk *c, int rank, int nprocs, uint64_t *rng)
{
    const struct ttype *t = c->t;
    size_t n = c->count, bytes = n * t->extent;
    int at_root = rank == c->root, inplace = c->inplace && at_root, ok = 1;
    unsigned char *data = xmalloc(bytes), *orig, *exp, *act, *sabs;
    const void *send = inplace ? MPI_IN_PLACE : data;

    fill(t, c->cat, data, n, rng, rank, nprocs);
    orig = xdup(data, bytes);
    exp = inplace ? xdup(data, bytes) : pattern(bytes);
    act = inplace ? xdup(data, bytes) : pattern(bytes);
    /* the reference out of place: MPICH 4.0 crashes on MPI_IN_PLACE at a
     * non-zero root (pmodels/mpich#6540) */
    ok &= call_ok(c, PMPI_Reduce(data, exp, (int)n, t->dt, c->op, c->root, c->comm),
                  "reference PMPI_Reduce");
    ok &= call_ok(c, MPI_Reduce(send, act, (int)n, t->dt, c->op, c->root, c->comm), "MPI_Reduce");
    if (ok && !inplace && memcmp(data, orig, bytes) != 0) {
        fail_line(c, "send buffer was modified");
        ok = 0;
    }
    sabs = sum_of_abs(c, orig, n, n);
    if (ok && !at_root && !is_pattern(act, bytes)) {
        fail_line(c, "receive buffer written at a non-root rank");
        ok = 0;
    }
    ok = ok && (!at_root || result_ok(c, act, exp, sabs, n, nprocs));
    free(data);
    free(orig);
    free(exp);
    free(act);
    free(sabs);
    return ok;
}

/* allgather: p blocks of count elements; in place, this rank's block of the
 * receive buffer holds its input and the others hold PATTERN. */
static int check_allgather(const struct chk *c, int rank, int nprocs, uint64_t *rng,
                           uint64_t *hash)
{
    const struct ttype *t = c->t;
    size_t n = c->count, sbytes = n * t->extent, total = n * (size_t)nprocs;
    size_t rbytes = total * t->extent;
    unsigned char *data = xmalloc(sbytes), *orig, *exp = pattern(rbytes), *act = pattern(rbytes);
    const void *send = c->inplace ? MPI_IN_PLACE : data;
    /* with MPI_IN_PLACE the send count and type are ignored */
    int scount = c->inplace ? 0 : c->mixed ? (int)n / 4 : (int)n, ok = 1;
    MPI_Datatype stype = c->inplace ? MPI_DATATYPE_NULL : c->mixed ? contig4 : t->dt;

    fill(t, C_EXACT, data, n, rng, rank, nprocs);
    orig = xdup(data, sbytes);
    if (c->inplace) {
        memcpy(exp + (size_t)rank * sbytes, data, sbytes);
        memcpy(act + (size_t)rank * sbytes, data, sbytes);
    }
    ok &= call_ok(c, PMPI_Allgather(send, scount, stype, exp, (int)n, t->dt, c->comm),
                  "reference PMPI_Allgather");
    ok &= call_ok(c, MPI_Allgather(send, scount, stype, act, (int)n, t->dt, c->comm),
                  "MPI_Allgather");
    if (ok && !c->inplace && memcmp(data, orig, sbytes) != 0) {
        fail_line(c, "send buffer was modified");
        ok = 0;
    }
    ok = ok && result_ok(c, act, exp, NULL, total, nprocs);
    *hash = hash_result(t, act, total);
    free(data);
    free(orig);
    free(exp);
    free(act);
    return ok;
}

/* bcast: every rank starts from its own random data (gaps included). */
static int check_bcast(const struct chk *c, int rank, int nprocs, uint64_t *rng, uint64_t *hash)
{
    const struct ttype *t = c->t;
    size_t n = c->count, bytes = n * t->extent;
    unsigned char *data = xmalloc(bytes), *exp, *act;
    int mixed = c->mixed && rank == c->root, ok = 1;
    int count = mixed ? (int)n / 4 : (int)n;
    MPI_Datatype dt = mixed ? contig4 : t->dt;

    fill(t, C_EXACT, data, n, rng, rank, nprocs);
    exp = xdup(data, bytes);
    act = xdup(data, bytes);
    ok &= call_ok(c, PMPI_Bcast(exp, count, dt, c->root, c->comm), "reference PMPI_Bcast");
    ok &= call_ok(c, MPI_Bcast(act, count, dt, c->root, c->comm), "MPI_Bcast");
    ok = ok && result_ok(c, act, exp, NULL, n, nprocs);
    *hash = hash_result(t, act, n);
    free(data);
    free(exp);
    free(act);
    return ok;
}

/* Runs one check; the verdict comes with the next pend_flush(). */
static void run_check(const struct chk *c)
{
    uint64_t rng = opt.seed * 0x9e3779b97f4a7c15ULL ^ ((uint64_t)wrank << 40) ^ ++case_no;
    uint64_t hash = 0;
    int rank, nprocs, ok = 0;

    MPI_Comm_rank(c->comm, &rank);
    MPI_Comm_size(c->comm, &nprocs);
    switch (c->piece) {
    case P_RSB: ok = check_rsb(c, rank, nprocs, &rng); break;
    case P_REDUCE: ok = check_reduce(c, rank, nprocs, &rng); break;
    case P_ALLGATHER: ok = check_allgather(c, rank, nprocs, &rng, &hash); break;
    default: ok = check_bcast(c, rank, nprocs, &rng, &hash); break;
    }
    pend_add(c, hash, ok);
}

/* ---- Filters and probing -------------------------------------------------- */

static int name_matches(const char *list, const char *name)
{
    const char *p = list;

    if (!list)
        return 1;
    while (*p) {
        size_t n = strcspn(p, ",");
        const char *bare = strncasecmp(name, "MPI_", 4) == 0 ? name + 4 : name;
        if ((strlen(name) == n && strncasecmp(p, name, n) == 0) ||
            (strlen(bare) == n && strncasecmp(p, bare, n) == 0))
            return 1;
        p += n;
        if (*p == ',')
            p++;
    }
    return 0;
}

static int predefined(const char *name)
{
    return strncmp(name, "MPI_", 4) == 0;
}

static int piece_on(enum piece p)
{
    return name_matches(opt.pieces, pieces[p].name);
}

/* Whether (type, op) is tested: a pair the MPI standard defines, or MPI_CHAR
 * and MPI_WCHAR with an integer op, and in both cases accepted by the MPI
 * library.  Pairs outside the standard are not probed: some libraries accept
 * them in MPI_Reduce_local and then abort (MPICH 4.0, MPI_LAND on MPI_FLOAT). */
static int pair_tested(const struct ttype *t, const struct top *o)
{
    unsigned char a[64] = {0}, b[64] = {0};
    int grp = t->grp == G_TEXT ? G_CINT : t->grp;

    if (!(o->grps & grp))
        return 0;
    return PMPI_Reduce_local(a, b, 1, t->dt, o->op) == MPI_SUCCESS;
}

static int extent_ok(const struct ttype *t)
{
    MPI_Aint lb, extent;
    MPI_Type_get_extent(t->dt, &lb, &extent);
    return lb == 0 && (size_t)extent == t->extent;
}

/* A reduction check (rsb or reduce) if it passes the filters; --types selects
 * among the predefined datatypes with predefined ops only, so derived types
 * and user ops always run.  root < 0: every root (reduce). */
static void reduction_case(enum piece piece, MPI_Comm comm, const char *where,
                           const struct ttype *t, MPI_Op op, const char *opname, enum cat cat,
                           size_t count, int inplace, int root)
{
    struct chk c = {piece, comm, where, t, op, opname, cat, count, inplace, -1, 0};
    int nprocs;

    if (!piece_on(piece) || !name_matches(opt.ops, opname) ||
        (predefined(t->name) && predefined(opname) && !name_matches(opt.types, t->name)))
        return;
    if (piece == P_RSB) {
        run_check(&c);
        return;
    }
    /* MPI_IN_PLACE at a non-zero root only where MPI_Reduce is not the MPI
     * library's own (see check_reduce) */
    MPI_Comm_size(comm, &nprocs);
    if (inplace && !reduce_interposed)
        nprocs = 1;
    for (c.root = root < 0 ? 0 : root % nprocs; c.root < nprocs; c.root++) {
        run_check(&c);
        if (root >= 0)
            break;
    }
}

/* An allgather or bcast check if it passes the filters (--types: predefined
 * datatypes only).  root < 0: every root (bcast). */
static void data_case(enum piece piece, MPI_Comm comm, const char *where, const struct ttype *t,
                      size_t count, int inplace, int root, int mixed)
{
    struct chk c = {piece, comm, where, t, MPI_OP_NULL, "-", C_EXACT, count, inplace, -1, mixed};
    int nprocs;

    if (!piece_on(piece) || (predefined(t->name) && !mixed && !name_matches(opt.types, t->name)))
        return;
    if (piece == P_ALLGATHER) {
        run_check(&c);
        return;
    }
    MPI_Comm_size(comm, &nprocs);
    for (c.root = root < 0 ? 0 : root; c.root < nprocs; c.root++) {
        run_check(&c);
        if (root >= 0)
            break;
    }
}

/* ---- User ops ----------------------------------------------------------- */

/* An affine map x -> a x + b mod 2^32 packed in a long long, a in the high
 * and b in the low 32 bits; inout = in then inout (composition: associative,
 * not commutative, so the result shows the order of the ranks). */
static void affine64_op(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    const uint64_t *f = in;
    uint64_t *g = inout;
    int i;

    (void)dt;
    for (i = 0; i < *len; i++) {
        uint32_t fa = (uint32_t)(f[i] >> 32), fb = (uint32_t)f[i];
        uint32_t ga = (uint32_t)(g[i] >> 32), gb = (uint32_t)g[i];
        g[i] = (uint64_t)(ga * fa) << 32 | (uint32_t)(ga * fb + gb);
    }
}

/* 2x2 matrices of 32-bit integers, row-major, product mod 2^32: inout = in * inout. */
static void matmul_op(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    const unsigned *a = in;
    unsigned *b = inout;
    int i;

    (void)dt;
    for (i = 0; i < *len; i++, a += 4, b += 4) {
        unsigned c0 = a[0] * b[0] + a[1] * b[2], c1 = a[0] * b[1] + a[1] * b[3];
        unsigned c2 = a[2] * b[0] + a[3] * b[2], c3 = a[2] * b[1] + a[3] * b[3];
        b[0] = c0;
        b[1] = c1;
        b[2] = c2;
        b[3] = c3;
    }
}

static void dsum_op(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    const double *a = in;
    double *b = inout;
    int i;

    (void)dt;
    for (i = 0; i < *len; i++)
        b[i] += a[i];
}

/* The strided types under test: VEC_N blocks of 2 elements, VEC_STRIDE apart. */
#define VEC_N 50
#define VEC_STRIDE 3
#define VEC_SLOTS ((VEC_N - 1) * VEC_STRIDE + 2)

/* Sum of the doubles a vector element covers; gaps untouched. */
static void vsum_op(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    const double *a = in;
    double *b = inout;
    MPI_Aint lb, extent;
    int i, k;

    MPI_Type_get_extent(*dt, &lb, &extent);
    for (i = 0; i < *len; i++) {
        const double *ae = (const double *)((const char *)a + i * extent);
        double *be = (double *)((char *)b + i * extent);
        for (k = 0; k < VEC_N; k++) {
            be[k * VEC_STRIDE] += ae[k * VEC_STRIDE];
            be[k * VEC_STRIDE + 1] += ae[k * VEC_STRIDE + 1];
        }
    }
}

/* Each block of 2 ints is an affine map x -> m x + c mod 2^32; inout = in o inout
 * (composition: associative, not commutative).  Gaps untouched. */
static void vaffine_op(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    MPI_Aint lb, extent;
    int i, k;

    MPI_Type_get_extent(*dt, &lb, &extent);
    for (i = 0; i < *len; i++) {
        const unsigned *a = (const unsigned *)((const char *)in + i * extent);
        unsigned *b = (unsigned *)((char *)inout + i * extent);
        for (k = 0; k < VEC_N; k++) {
            const unsigned *f = a + k * VEC_STRIDE;
            unsigned *g = b + k * VEC_STRIDE;
            g[1] = f[0] * g[1] + f[1];
            g[0] = f[0] * g[0];
        }
    }
}

static struct {
    MPI_Op affine64, matmul, dsum, vsum, vaffine;
    struct ttype ll, mat, dbl, vec_dbl, vec_int;
    const struct ttype *t_int, *t_double, *t_double_int, *t_cdouble;
} extra;

static const struct ttype *find_type(MPI_Datatype dt)
{
    int i;
    for (i = 0; i < NTYPES; i++)
        if (types[i].dt == dt)
            return &types[i];
    return NULL;
}

static void extra_init(void)
{
    MPI_Datatype vd, vi;

    MPI_Op_create(affine64_op, 0, &extra.affine64);
    MPI_Op_create(matmul_op, 0, &extra.matmul);
    MPI_Op_create(dsum_op, 1, &extra.dsum);
    MPI_Op_create(vsum_op, 1, &extra.vsum);
    MPI_Op_create(vaffine_op, 0, &extra.vaffine);
    MPI_Type_contiguous(4, MPI_INT, &contig4);
    MPI_Type_commit(&contig4);
    /* Gaps between the blocks: the call must not touch them. */
    MPI_Type_vector(VEC_N, 2, VEC_STRIDE, MPI_DOUBLE, &vd);
    MPI_Type_commit(&vd);
    MPI_Type_vector(VEC_N, 2, VEC_STRIDE, MPI_INT, &vi);
    MPI_Type_commit(&vi);
    /* user ops on predefined types: named apart so that --types leaves them on */
    extra.ll = *find_type(MPI_LONG_LONG);
    extra.dbl = *find_type(MPI_DOUBLE);
    extra.mat = (struct ttype){"contig(4,MPI_INT)", contig4, K_INT, S_UINT, G_CINT, sizeof(int),
                               4 * sizeof(int), 0, 4, 4, 4};
    extra.vec_dbl = (struct ttype){"vector(50,2,3,MPI_DOUBLE)", vd, K_FLOAT, S_DBL, G_FLOAT,
                                   sizeof(double), VEC_SLOTS * sizeof(double), 0, VEC_SLOTS, 2,
                                   VEC_STRIDE};
    extra.vec_int = (struct ttype){"vector(50,2,3,MPI_INT)", vi, K_INT, S_SINT, G_CINT, sizeof(int),
                                   VEC_SLOTS * sizeof(int), 0, VEC_SLOTS, 2, VEC_STRIDE};
    extra.t_int = find_type(MPI_INT);
    extra.t_double = find_type(MPI_DOUBLE);
    extra.t_double_int = find_type(MPI_DOUBLE_INT);
    extra.t_cdouble = find_type(MPI_C_DOUBLE_COMPLEX);
}

static void extra_free(void)
{
    MPI_Op_free(&extra.affine64);
    MPI_Op_free(&extra.matmul);
    MPI_Op_free(&extra.dsum);
    MPI_Op_free(&extra.vsum);
    MPI_Op_free(&extra.vaffine);
    MPI_Type_free(&contig4);
    MPI_Type_free(&extra.vec_dbl.dt);
    MPI_Type_free(&extra.vec_int.dt);
}

/* ---- Suites -------------------------------------------------------------- */

/* Every predefined (type, op) pair for rsb and reduce, every predefined type
 * for allgather and bcast, on the world communicator.  Reduce runs at every
 * root with --all-roots; otherwise the root moves with the count, so that each
 * pair meets every root when there are at least as many counts as ranks. */
static int run_predefined(void)
{
    int ti, oi, k, ip, nskipped = 0;

    for (ti = 0; ti < NTYPES; ti++) {
        const struct ttype *t = &types[ti];
        if (!name_matches(opt.types, t->name))
            continue;
        if (!extent_ok(t)) {
            if (wrank == 0) {
                printf("FAIL type=%s extent differs from the C layout the test assumes\n", t->name);
                owned_fail++;
            }
            continue;
        }
        for (oi = 0; oi < NOPS; oi++) {
            const struct top *o = &ops[oi];
            if (!name_matches(opt.ops, o->name))
                continue;
            if (!pair_tested(t, o)) {
                nskipped++;
                continue;
            }
            for (k = 0; k < opt.ncounts; k++)
                for (ip = 0; ip < 2; ip++) {
                    size_t n = opt.counts[k];
                    reduction_case(P_RSB, MPI_COMM_WORLD, "world", t, o->op, o->name, o->cat, n,
                                   ip, -1);
                    reduction_case(P_REDUCE, MPI_COMM_WORLD, "world", t, o->op, o->name, o->cat,
                                   n, ip, opt.all_roots ? -1 : (k + ip) % wsize);
                }
        }
        for (k = 0; k < opt.ncounts; k++) {
            for (ip = 0; ip < 2; ip++)
                data_case(P_ALLGATHER, MPI_COMM_WORLD, "world", t, opt.counts[k], ip, -1, 0);
            data_case(P_BCAST, MPI_COMM_WORLD, "world", t, opt.counts[k], 0, -1, 0);
        }
        pend_flush();
    }
    return nskipped;
}

/* A mixed set of checks, run on each communicator under test; reduce and
 * bcast at every root. */
static void comm_suite(MPI_Comm comm, const char *where)
{
    static const size_t counts[] = {1, 7, 1000};
    int c, ip;

    for (c = 0; c < 3; c++)
        for (ip = 0; ip < 2; ip++) {
            size_t n = counts[c];
            reduction_case(P_RSB, comm, where, extra.t_int, MPI_SUM, "MPI_SUM", C_SUM, n, ip, -1);
            reduction_case(P_RSB, comm, where, extra.t_double, MPI_SUM, "MPI_SUM", C_SUM, n, ip,
                           -1);
            reduction_case(P_RSB, comm, where, extra.t_cdouble, MPI_PROD, "MPI_PROD", C_PROD, n,
                           ip, -1);
            reduction_case(P_RSB, comm, where, extra.t_double_int, MPI_MINLOC, "MPI_MINLOC", C_LOC,
                           n, ip, -1);
            reduction_case(P_RSB, comm, where, &extra.ll, extra.affine64,
                           "affine64(non-commutative)", C_AFFINE, n, ip, -1);
            reduction_case(P_RSB, comm, where, &extra.mat, extra.matmul, "matmul(non-commutative)",
                           C_EXACT, n, ip, -1);
            reduction_case(P_REDUCE, comm, where, extra.t_int, MPI_SUM, "MPI_SUM", C_SUM, n, ip,
                           -1);
            reduction_case(P_REDUCE, comm, where, extra.t_double, MPI_SUM, "MPI_SUM", C_SUM, n, ip,
                           -1);
            reduction_case(P_REDUCE, comm, where, extra.t_double_int, MPI_MAXLOC, "MPI_MAXLOC",
                           C_LOC, n, ip, -1);
            reduction_case(P_REDUCE, comm, where, &extra.ll, extra.affine64,
                           "affine64(non-commutative)", C_AFFINE, n, ip, -1);
            data_case(P_ALLGATHER, comm, where, extra.t_int, n, ip, -1, 0);
            data_case(P_ALLGATHER, comm, where, extra.t_double_int, n, ip, -1, 0);
            data_case(P_ALLGATHER, comm, where, &extra.vec_dbl, n, ip, -1, 0);
        }
    for (c = 0; c < 3; c++) {
        data_case(P_BCAST, comm, where, extra.t_int, counts[c], 0, -1, 0);
        data_case(P_BCAST, comm, where, extra.t_double, counts[c], 0, -1, 0);
        data_case(P_BCAST, comm, where, &extra.vec_int, counts[c], 0, -1, 0);
    }
    pend_flush(); /* before the caller frees comm */
}

static void run_extras(void)
{
    static const size_t vcounts[] = {0, 1, 3, 40};
    MPI_Comm a, b, c, d, e;
    int k, ip;

    /* User ops on predefined types, at every count. */
    for (k = 0; k < opt.ncounts; k++)
        for (ip = 0; ip < 2; ip++) {
            size_t n = opt.counts[k];
            int root = opt.all_roots ? -1 : (k + ip) % wsize;
            reduction_case(P_RSB, MPI_COMM_WORLD, "world", &extra.ll, extra.affine64,
                           "affine64(non-commutative)", C_AFFINE, n, ip, -1);
            reduction_case(P_REDUCE, MPI_COMM_WORLD, "world", &extra.ll, extra.affine64,
                           "affine64(non-commutative)", C_AFFINE, n, ip, root);
            reduction_case(P_RSB, MPI_COMM_WORLD, "world", &extra.dbl, extra.dsum,
                           "dsum(commutative)", C_SUM, n, ip, -1);
            reduction_case(P_REDUCE, MPI_COMM_WORLD, "world", &extra.dbl, extra.dsum,
                           "dsum(commutative)", C_SUM, n, ip, root);
        }
    pend_flush();

    /* Derived types: contiguous and strided (gaps must stay as they were). */
    for (k = 0; k < 4; k++) {
        size_t n = vcounts[k];
        for (ip = 0; ip < 2; ip++) {
            reduction_case(P_RSB, MPI_COMM_WORLD, "world", &extra.mat, extra.matmul,
                           "matmul(non-commutative)", C_EXACT, n, ip, -1);
            reduction_case(P_RSB, MPI_COMM_WORLD, "world", &extra.vec_dbl, extra.vsum,
                           "vsum(commutative)", C_SUM, n, ip, -1);
            reduction_case(P_RSB, MPI_COMM_WORLD, "world", &extra.vec_int, extra.vaffine,
                           "affine(non-commutative)", C_EXACT, n, ip, -1);
            reduction_case(P_REDUCE, MPI_COMM_WORLD, "world", &extra.mat, extra.matmul,
                           "matmul(non-commutative)", C_EXACT, n, ip, -1);
            reduction_case(P_REDUCE, MPI_COMM_WORLD, "world", &extra.vec_dbl, extra.vsum,
                           "vsum(commutative)", C_SUM, n, ip, -1);
            reduction_case(P_REDUCE, MPI_COMM_WORLD, "world", &extra.vec_int, extra.vaffine,
                           "affine(non-commutative)", C_EXACT, n, ip, -1);
            data_case(P_ALLGATHER, MPI_COMM_WORLD, "world", &extra.mat, n, ip, -1, 0);
            data_case(P_ALLGATHER, MPI_COMM_WORLD, "world", &extra.vec_dbl, n, ip, -1, 0);
            data_case(P_ALLGATHER, MPI_COMM_WORLD, "world", &extra.vec_int, n, ip, -1, 0);
        }
        data_case(P_BCAST, MPI_COMM_WORLD, "world", &extra.mat, n, 0, -1, 0);
        data_case(P_BCAST, MPI_COMM_WORLD, "world", &extra.vec_dbl, n, 0, -1, 0);
        data_case(P_BCAST, MPI_COMM_WORLD, "world", &extra.vec_int, n, 0, -1, 0);
        /* same type signature, different datatypes on the two sides */
        data_case(P_ALLGATHER, MPI_COMM_WORLD, "world", extra.t_int, 4 * n, 0, -1, 1);
        data_case(P_BCAST, MPI_COMM_WORLD, "world", extra.t_int, 4 * n, 0, -1, 1);
    }
    pend_flush();

    /* Repeated calls on one communicator, sizes alternating: cached state reused. */
    for (k = 0; k < 12; k++) {
        size_t n = k % 2 ? 65539 : 1000;
        reduction_case(P_RSB, MPI_COMM_WORLD, "world(repeat)", extra.t_double, MPI_SUM, "MPI_SUM",
                       C_SUM, n, k % 3 == 0, -1);
        reduction_case(P_REDUCE, MPI_COMM_WORLD, "world(repeat)", extra.t_double, MPI_SUM,
                       "MPI_SUM", C_SUM, n, k % 3 == 1, k % wsize);
        data_case(P_ALLGATHER, MPI_COMM_WORLD, "world(repeat)", extra.t_double, n, k % 3 == 2, -1,
                  0);
        data_case(P_BCAST, MPI_COMM_WORLD, "world(repeat)", extra.t_int, k % 2 ? 7 : 1, 0,
                  k % wsize, 0);
    }

    /* Communicators created and freed in turn; a later one may reuse a freed
     * one's handle or context id with a different rank order or size. */
    MPI_Comm_dup(MPI_COMM_WORLD, &a);
    comm_suite(a, "dup");
    MPI_Comm_free(&a);

    MPI_Comm_split(MPI_COMM_WORLD, 0, wsize - 1 - wrank, &b);
    comm_suite(b, "reversed");
    MPI_Comm_free(&b);

    MPI_Comm_split(MPI_COMM_WORLD, wrank % 2, wrank, &c);
    comm_suite(c, wrank % 2 ? "split(odd)" : "split(even)");
    MPI_Comm_free(&c);

    MPI_Comm_dup(MPI_COMM_WORLD, &d);
    comm_suite(d, "dup(after free)");
    MPI_Comm_dup(d, &e);
    comm_suite(e, "dup(of dup)");
    comm_suite(d, "dup(after free)");
    MPI_Comm_free(&e);
    MPI_Comm_free(&d);

    comm_suite(MPI_COMM_WORLD, "world");
}

/* ---- Main --------------------------------------------------------------- */

static void usage(void)
{
    if (wrank == 0)
        fprintf(stderr,
                "usage: test_pieces [--quick] [--counts a,b,c] [--types t1,t2] [--ops o1,o2]\n"
                "                   [--pieces rsb,allgather,reduce,bcast] [--all-roots]\n"
                "                   [--seed N] [--verbose] [--expect-treeduce]\n"
                "  --quick            counts 0,1,7,1000 (default 0,1,2,7,64,1000,65539)\n"
                "  --pieces           the routines to check (default all four)\n"
                "  --all-roots        reduce every predefined type/op pair at every root\n"
                "                     (default: the root moves from count to count)\n"
                "  --expect-treeduce  fail unless the routines of --pieces are not the MPI\n"
                "                     library's own (treeduce is linked in or preloaded)\n"
                "  types and ops by MPI name, with or without the MPI_ prefix (int, double_int, "
                "sum);\n"
                "  --types filters the predefined datatypes (derived types and user ops always "
                "run)\n");
}

static int parse_counts(const char *s)
{
    const char *p = s;
    int n = 1;
    char *end;

    for (; *p; p++)
        n += *p == ',';
    opt.counts = malloc((size_t)n * sizeof *opt.counts);
    opt.ncounts = 0;
    p = s;
    while (*p) {
        unsigned long long v = strtoull(p, &end, 10);
        if (end == p || (*end && *end != ',') || v > 1u << 24)
            return -1;
        opt.counts[opt.ncounts++] = (size_t)v;
        p = *end ? end + 1 : end;
    }
    return opt.ncounts > 0 ? 0 : -1;
}

static int parse_pieces(const char *s)
{
    const char *p = s;

    while (*p) {
        size_t n = strcspn(p, ",");
        int k, known = 0;
        for (k = 0; k < P_MAX; k++)
            known |= strlen(pieces[k].name) == n && strncasecmp(p, pieces[k].name, n) == 0;
        if (!known)
            return -1;
        p += n;
        if (*p == ',')
            p++;
    }
    opt.pieces = s;
    return 0;
}

static int parse_args(int argc, char **argv)
{
    int i, quick = 0;
    const char *counts = NULL;

    opt.seed = 1;
    for (i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--quick"))
            quick = 1;
        else if (!strcmp(a, "--verbose"))
            opt.verbose = 1;
        else if (!strcmp(a, "--expect-treeduce"))
            opt.expect_treeduce = 1;
        else if (!strcmp(a, "--all-roots"))
            opt.all_roots = 1;
        else if (!strcmp(a, "--counts") && i + 1 < argc)
            counts = argv[++i];
        else if (!strcmp(a, "--types") && i + 1 < argc)
            opt.types = argv[++i];
        else if (!strcmp(a, "--ops") && i + 1 < argc)
            opt.ops = argv[++i];
        else if (!strcmp(a, "--pieces") && i + 1 < argc) {
            if (parse_pieces(argv[++i]) != 0)
                return -1;
        } else if (!strcmp(a, "--seed") && i + 1 < argc)
            opt.seed = strtoull(argv[++i], NULL, 0);
        else
            return -1;
    }
    if (counts)
        return parse_counts(counts);
    if (quick) {
        opt.ncounts = (int)(sizeof quick_counts / sizeof quick_counts[0]);
        opt.counts = xdup(quick_counts, sizeof quick_counts);
    } else {
        opt.ncounts = (int)(sizeof default_counts / sizeof default_counts[0]);
        opt.counts = xdup(default_counts, sizeof default_counts);
    }
    return 0;
}

/* Routines of --pieces that are the MPI library's own: an interposed MPI_X is
 * a different function from PMPI_X. */
static int not_interposed(void)
{
    int p, n = 0;

    for (p = 0; p < P_MAX; p++) {
        void *mine, *ref;
        if (!piece_on(p))
            continue;
        mine = dlsym(RTLD_DEFAULT, pieces[p].mpi);
        ref = dlsym(RTLD_DEFAULT, pieces[p].ref);
        if (!mine || mine == ref) {
            if (wrank == 0)
                fprintf(stderr, "%s is the MPI library's own: treeduce is not linked in\n",
                        pieces[p].mpi);
            n++;
        }
    }
    return n;
}

int main(int argc, char **argv)
{
    int nskipped, nbad;
    long long tally[2];

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    if (parse_args(argc, argv) != 0) {
        usage();
        MPI_Finalize();
        return 2;
    }
    if (opt.expect_treeduce && (nbad = not_interposed()) > 0) {
        if (wrank == 0)
            printf("0 passed, %d failed\n", nbad);
        free(opt.counts);
        MPI_Finalize();
        return 1;
    }
    reduce_interposed = dlsym(RTLD_DEFAULT, "MPI_Reduce") != dlsym(RTLD_DEFAULT, "PMPI_Reduce");
    /* Errors come back as codes: a failing call is a failed check, not an abort. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    extra_init();

    nskipped = run_predefined();
    run_extras();
    extra_free();

    tally[0] = owned_pass;
    tally[1] = owned_fail;
    PMPI_Allreduce(MPI_IN_PLACE, tally, 2, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (wrank == 0) {
        if (opt.verbose)
            printf("%d type/op pairs not tested (undefined, or not accepted by the MPI library)\n",
                   nskipped);
        printf("%lld passed, %lld failed\n", tally[0], tally[1]);
        fflush(stdout);
    }
    free(opt.counts);
    free(pend);
    MPI_Finalize();
    return tally[1] > 0 ? 1 : 0;
}
