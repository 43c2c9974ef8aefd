/* Reduction kernels against MPI_Reduce_local, for every predefined type x op.
 *
 * For each pair: if MPI_Reduce_local accepts it, trd_kernel_lookup must give a
 * kernel (C, C++ and Fortran types alike, Fortran ones through MPI's own
 * handles; the pairs left_on_reduce_local lists are the documented
 * exceptions), and on random data with special values (NaN with payloads,
 * signed zeros, infinities, denormals, ties for MINLOC/MAXLOC, random padding
 * bytes) the kernel, and trd_reduce through trd_reducer_init, must leave
 * exactly the bytes MPI_Reduce_local leaves, for counts 0, 1, 7 and 1000.
 * Unsigned MIN/MAX are the exception: there the reference is computed here,
 * comparing as unsigned (MPICH 4.0.x compares as signed, pmodels/mpich#6083,
 * and the kernels must not), and MAX(0, all ones) must be all ones.  If
 * MPI_Reduce_local rejects a pair, there must be no kernel.  Under another MPI
 * than MPICH (Open MPI), floating results may differ where the standard leaves
 * them open (which NaN, and MIN/MAX of unordered or equal operands), and the
 * pairs library_differs lists are checked against the standard's answer.  For
 * every pair,
 * trd_reduce_local_accepts must agree with MPI_Reduce_local, raise no error
 * handler and leave the handlers as they were.  Then the reducer's fallback:
 * a non-commutative user op on MPI_INT (operand order), non-predefined types
 * (MPI_ERR_TYPE) and a rejected pair (the error is passed on).
 *
 * Run with one rank: mpiexec -n 1 test_kernels.  The last line reads
 * "N passed, M failed" (N counts checked pairs and reducer checks); the exit
 * status is non-zero if any check failed.
 */
#include "rt.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_COUNT 1000
#define MAX_EXTENT 32

/* MINLOC/MAXLOC layouts as documented in mpi.h. */
struct float_int {
    float v;
    int loc;
};
struct double_int {
    double v;
    int loc;
};
struct long_int {
    long v;
    int loc;
};
struct two_int {
    int v;
    int loc;
};
struct short_int {
    short v;
    int loc;
};
struct long_double_int {
    long double v;
    int loc;
};
struct two_fint {
    MPI_Fint v;
    MPI_Fint loc;
};

/* How to fill one element with test data. */
enum gen {
    GEN_BYTES, /* integers: random bytes, zeros, small values */
    GEN_BOOL,  /* 0 or 1 */
    GEN_FLOAT, /* floating, complex: each component a float, double, ... */
    GEN_DOUBLE,
    GEN_LDOUBLE,
    GEN_PAIR, /* value (by value_gen) at 0, int loc at loc_offset */
};

/* UNSIGNED: an unsigned integer type, whose MIN/MAX are checked against the
 * reference computed here (unsigned_minmax_reference). */
enum scope { REQUIRED, UNSIGNED };

struct type_case {
    MPI_Datatype type;
    const char *name;
    enum gen gen;
    enum gen value_gen; /* GEN_PAIR: generator of the value member */
    size_t value_size;  /* GEN_PAIR: size of the value member */
    size_t loc_offset;  /* GEN_PAIR: offset of the loc member */
    enum scope scope;
};

#define T(type, gen)                                                                               \
    {                                                                                              \
        type, #type, gen, GEN_BYTES, 0, 0, REQUIRED                                                \
    }
#define T_UNS(type)                                                                                \
    {                                                                                              \
        type, #type, GEN_BYTES, GEN_BYTES, 0, 0, UNSIGNED                                          \
    }
#define T_PAIR(type, s, gen)                                                                       \
    {                                                                                              \
        type, #type, GEN_PAIR, gen, sizeof(((struct s *)0)->v), offsetof(struct s, loc), REQUIRED  \
    }

static const struct type_case types[] = {
    /* C integer */
    T(MPI_CHAR, GEN_BYTES),
    T(MPI_SIGNED_CHAR, GEN_BYTES),
    T_UNS(MPI_UNSIGNED_CHAR),
    T(MPI_SHORT, GEN_BYTES),
    T_UNS(MPI_UNSIGNED_SHORT),
    T(MPI_INT, GEN_BYTES),
    T_UNS(MPI_UNSIGNED),
    T(MPI_LONG, GEN_BYTES),
    T_UNS(MPI_UNSIGNED_LONG),
    T(MPI_LONG_LONG_INT, GEN_BYTES),
    T_UNS(MPI_UNSIGNED_LONG_LONG),
    T(MPI_INT8_T, GEN_BYTES),
    T(MPI_INT16_T, GEN_BYTES),
    T(MPI_INT32_T, GEN_BYTES),
    T(MPI_INT64_T, GEN_BYTES),
    T_UNS(MPI_UINT8_T),
    T_UNS(MPI_UINT16_T),
    T_UNS(MPI_UINT32_T),
    T_UNS(MPI_UINT64_T),
    T(MPI_WCHAR, GEN_BYTES),
    T(MPI_AINT, GEN_BYTES),
    T(MPI_OFFSET, GEN_BYTES),
    T(MPI_COUNT, GEN_BYTES),
    /* floating, complex */
    T(MPI_FLOAT, GEN_FLOAT),
    T(MPI_DOUBLE, GEN_DOUBLE),
    T(MPI_LONG_DOUBLE, GEN_LDOUBLE),
    T(MPI_C_FLOAT_COMPLEX, GEN_FLOAT),
    T(MPI_C_DOUBLE_COMPLEX, GEN_DOUBLE),
    T(MPI_C_LONG_DOUBLE_COMPLEX, GEN_LDOUBLE),
    T(MPI_CXX_FLOAT_COMPLEX, GEN_FLOAT),
    T(MPI_CXX_DOUBLE_COMPLEX, GEN_DOUBLE),
    T(MPI_CXX_LONG_DOUBLE_COMPLEX, GEN_LDOUBLE),
    /* logical, byte, others */
    T(MPI_C_BOOL, GEN_BOOL),
    T(MPI_CXX_BOOL, GEN_BOOL),
    T(MPI_BYTE, GEN_BYTES),
    T(MPI_PACKED, GEN_BYTES),
    /* MINLOC/MAXLOC pairs */
    T_PAIR(MPI_FLOAT_INT, float_int, GEN_FLOAT),
    T_PAIR(MPI_DOUBLE_INT, double_int, GEN_DOUBLE),
    T_PAIR(MPI_LONG_INT, long_int, GEN_BYTES),
    T_PAIR(MPI_2INT, two_int, GEN_BYTES),
    T_PAIR(MPI_SHORT_INT, short_int, GEN_BYTES),
    T_PAIR(MPI_LONG_DOUBLE_INT, long_double_int, GEN_LDOUBLE),
    /* Fortran, through MPI's own handles (MPI_DATATYPE_NULL where MPICH has
     * no such type: skipped) */
    T(MPI_CHARACTER, GEN_BYTES),
    T(MPI_INTEGER, GEN_BYTES),
    T(MPI_REAL, GEN_FLOAT),
    T(MPI_DOUBLE_PRECISION, GEN_DOUBLE),
    T(MPI_COMPLEX, GEN_FLOAT),
    T(MPI_DOUBLE_COMPLEX, GEN_DOUBLE),
    T(MPI_LOGICAL, GEN_BYTES), /* 0, 1, 2, -1, random: any nonzero is .TRUE. */
    T_PAIR(MPI_2INTEGER, two_fint, GEN_BYTES),
    T(MPI_2REAL, GEN_FLOAT), /* value and index both REAL */
    T(MPI_2DOUBLE_PRECISION, GEN_DOUBLE),
/* the sized ones only where this mpi.h defines them (Open MPI: where its
 * Fortran compiler has them) */
#ifdef MPI_INTEGER1
    T(MPI_INTEGER1, GEN_BYTES),
#endif
#ifdef MPI_INTEGER2
    T(MPI_INTEGER2, GEN_BYTES),
#endif
#ifdef MPI_INTEGER4
    T(MPI_INTEGER4, GEN_BYTES),
#endif
#ifdef MPI_INTEGER8
    T(MPI_INTEGER8, GEN_BYTES),
#endif
#ifdef MPI_INTEGER16
    T(MPI_INTEGER16, GEN_BYTES),
#endif
#ifdef MPI_REAL2
    T(MPI_REAL2, GEN_BYTES),
#endif
#ifdef MPI_REAL4
    T(MPI_REAL4, GEN_FLOAT),
#endif
#ifdef MPI_REAL8
    T(MPI_REAL8, GEN_DOUBLE),
#endif
#ifdef MPI_REAL16
    T(MPI_REAL16, GEN_BYTES),
#endif
#ifdef MPI_COMPLEX8
    T(MPI_COMPLEX8, GEN_FLOAT),
#endif
#ifdef MPI_COMPLEX16
    T(MPI_COMPLEX16, GEN_DOUBLE),
#endif
#ifdef MPI_COMPLEX32
    T(MPI_COMPLEX32, GEN_BYTES),
#endif
#ifdef MPIX_C_FLOAT16
    T(MPIX_C_FLOAT16, GEN_BYTES),
#endif
};

#define OP(op)                                                                                     \
    {                                                                                              \
        op, #op                                                                                    \
    }
static const struct op_case {
    MPI_Op op;
    const char *name;
} ops[] = {
    OP(MPI_MAX),    OP(MPI_MIN),    OP(MPI_SUM),     OP(MPI_PROD),  OP(MPI_LAND),
    OP(MPI_BAND),   OP(MPI_LOR),    OP(MPI_BOR),     OP(MPI_LXOR),  OP(MPI_BXOR),
    OP(MPI_MINLOC), OP(MPI_MAXLOC), OP(MPI_REPLACE), OP(MPI_NO_OP),
};

#define NTYPES (sizeof types / sizeof types[0])
#define NOPS (sizeof ops / sizeof ops[0])

static int passed, failed;
static int signed_minmax; /* unsigned MIN/MAX pairs this MPI computes as signed */
static int left_pairs;    /* pairs accepted by MPI_Reduce_local, documented as without kernel */

static void check(int ok, const char *type, const char *op, const char *what)
{
    if (ok) {
        passed++;
    } else {
        failed++;
        printf("FAIL %s %s: %s\n", type, op, what);
    }
}

/* MPICH 4.0.2 accepts these pairs in its argument check and then aborts inside
 * the op (MPIR_Assert(0) in opland.c, oplor.c, and for MPIX_C_FLOAT16), so
 * MPI_Reduce_local cannot be asked; the only consistent answer is no kernel. */
static int reduce_local_aborts(MPI_Datatype type, MPI_Op op)
{
#if defined(MPICH_NUMVERSION)
    if ((type == MPI_FLOAT || type == MPI_DOUBLE || type == MPI_LONG_DOUBLE) &&
        (op == MPI_LAND || op == MPI_LOR))
        return 1;
#ifdef MPIX_C_FLOAT16
    if (type == MPIX_C_FLOAT16 &&
        (op == MPI_MAX || op == MPI_MIN || op == MPI_SUM || op == MPI_PROD || op == MPI_LAND ||
         op == MPI_LOR || op == MPI_LXOR))
        return 1;
#endif
#else
    (void)type;
    (void)op;
#endif
    return 0;
}

/* Pairs MPI_Reduce_local accepts that have no kernel on purpose (see
 * runtime/kernels.c): MPICH 4.0.2 leaves inout as it was for LAND/LOR/LXOR
 * on the Fortran REAL types (no result to match), and computes MPI_REAL16 as no
 * C type of its representation.  They run through MPI_Reduce_local. */
static int left_on_reduce_local(MPI_Datatype type, MPI_Op op)
{
#if defined(MPICH_NUMVERSION)
    if (type != MPI_DATATYPE_NULL && type == MPI_REAL16)
        return 1;
    if ((type == MPI_REAL || type == MPI_DOUBLE_PRECISION || type == MPI_REAL4 ||
         type == MPI_REAL8) &&
        (op == MPI_LAND || op == MPI_LOR || op == MPI_LXOR))
        return 1;
#elif defined(OPEN_MPI)
    /* Open MPI 4.1 accepts arithmetic and logical ops on MPI_BYTE (as uint8_t)
     * and computes REAL16 and COMPLEX32 in types treeduce has no kernel for */
    if (type == MPI_BYTE && op != MPI_BAND && op != MPI_BOR && op != MPI_BXOR)
        return 1;
#ifdef MPI_REAL16
    if (type == MPI_REAL16)
        return 1;
#endif
#ifdef MPI_COMPLEX32
    if (type == MPI_COMPLEX32)
        return 1;
#endif
#else
    (void)type;
    (void)op;
#endif
    return 0;
}

/* Whether this MPI's MAX(0, all ones) on an unsigned type is 0: MIN and MAX
 * compared as signed (MPICH 4.0.x, pmodels/mpich#6083). */
static int minmax_is_signed(MPI_Datatype type)
{
    unsigned char ones[8], result[8] = {0};
    memset(ones, 0xff, sizeof ones);
    MPI_Reduce_local(ones, result, 1, type, MPI_MAX);
    return result[0] == 0;
}

static int is_minmax(MPI_Op op)
{
    return op == MPI_MAX || op == MPI_MIN;
}

/* The standard's MIN or MAX of unsigned integers of size bytes (1 .. 8):
 * inout[i] = in[i] op inout[i], compared as unsigned. */
static void unsigned_minmax_reference(const unsigned char *in, unsigned char *inout, size_t count,
                                      size_t size, int max)
{
    for (size_t i = 0; i < count; i++) {
        uint64_t a = 0, b = 0; /* little-endian: the low bytes hold the value */
        memcpy(&a, inout + i * size, size);
        memcpy(&b, in + i * size, size);
        if (max ? b > a : b < a)
            memcpy(inout + i * size, in + i * size, size);
    }
}

/* Pairs where the MPI library's answer is not the standard's, so the kernels'
 * is checked against standard_reference: Open MPI 4.1's AVX op component adds
 * 8- and 16-bit integers with saturation (C wraps them), and it compares
 * MPI_OFFSET (a signed type) as unsigned. */
static int library_differs(const struct type_case *tc, MPI_Op op, size_t extent)
{
#if defined(OPEN_MPI)
    if (tc->gen == GEN_BYTES && op == MPI_SUM && extent <= 2)
        return 1;
    if (tc->type == MPI_OFFSET && is_minmax(op))
        return 1;
#else
    (void)tc;
    (void)op;
    (void)extent;
#endif
    return 0;
}

/* The standard's answer for a library_differs pair: a wrapping sum, or MIN and
 * MAX compared as signed; inout[i] = in[i] op inout[i], little-endian. */
static void standard_reference(MPI_Op op, const unsigned char *in, unsigned char *inout,
                               size_t count, size_t size)
{
    for (size_t i = 0; i < count; i++) {
        uint64_t a = 0, b = 0;
        memcpy(&a, inout + i * size, size);
        memcpy(&b, in + i * size, size);
        if (op == MPI_SUM) {
            uint64_t sum = a + b;
            memcpy(inout + i * size, &sum, size);
        } else if (op == MPI_MAX ? (int64_t)b > (int64_t)a : (int64_t)b < (int64_t)a) {
            memcpy(inout + i * size, in + i * size, size);
        }
    }
}

/* ---- Test data ------------------------------------------------------------ */

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
    /* xorshift64* */
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545f4914f6cdd1dull;
}

static void random_bytes(unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (unsigned char)rnd();
}

/* Zeros, +-1 and 2 often enough to hit ties and logical cases. */
static void gen_integer(unsigned char *p, size_t n)
{
    switch (rnd() % 8) {
    case 0:
        memset(p, 0, n);
        break;
    case 1:
        memset(p, 0xff, n); /* -1 / all ones */
        break;
    case 2:
    case 3:
        memset(p, 0, n);
        p[0] = (unsigned char)(1 + rnd() % 2); /* little-endian 1 or 2 */
        break;
    default:
        random_bytes(p, n);
    }
}

static const uint32_t float_specials[] = {
    0x00000000, 0x80000000, 0x7f800000, 0xff800000,             /* +-0, +-inf */
    0x7fc00000, 0xffc00000, 0x7fa00000, 0x7fc12345, 0xffa54321, /* NaNs */
    0x00000001, 0x807fffff, 0x00800000, 0x7f7fffff,             /* denormals, min, max */
    0x3f800000, 0xbf800000, 0x40000000,                         /* 1, -1, 2 */
};

static const uint64_t double_specials[] = {
    0x0000000000000000ull, 0x8000000000000000ull, 0x7ff0000000000000ull, 0xfff0000000000000ull,
    0x7ff8000000000000ull, 0xfff8000000000000ull, 0x7ff4000000000000ull, 0x7ff8000000012345ull,
    0xfff4000000054321ull, 0x0000000000000001ull, 0x800fffffffffffffull, 0x0010000000000000ull,
    0x7fefffffffffffffull, 0x3ff0000000000000ull, 0xbff0000000000000ull, 0x4000000000000000ull,
};

/* x87 extended: 64-bit significand with explicit integer bit, then sign and
 * exponent. */
static const struct {
    uint64_t mant;
    uint16_t sexp;
} ldouble_specials[] = {
    {0, 0x0000},
    {0, 0x8000}, /* +-0 */
    {0x8000000000000000ull, 0x7fff},
    {0x8000000000000000ull, 0xffff}, /* +-inf */
    {0xc000000000000000ull, 0x7fff},
    {0xc000000000000000ull, 0xffff}, /* qNaN */
    {0xa000000000000000ull, 0x7fff},
    {0xc000000000012345ull, 0x7fff}, /* sNaN, payload */
    {1, 0x0000},
    {0x7fffffffffffffffull, 0x8000}, /* denormals */
    {0x8000000000000000ull, 0x0001},
    {0xffffffffffffffffull, 0x7ffe}, /* min, max */
    {0x8000000000000000ull, 0x3fff},
    {0x8000000000000000ull, 0xbfff}, /* 1, -1 */
    {0x8000000000000000ull, 0x4000}, /* 2 */
};

#define NSPECIAL(a) (sizeof a / sizeof a[0])

/* One floating component at p: a special value, random bits (a random normal
 * number for long double) or a small integer, which makes ties likely.  The
 * padding of a long double keeps whatever random bytes were there. */
static void gen_floating(unsigned char *p, enum gen g)
{
    unsigned pick = (unsigned)(rnd() % 3);
    long k = (long)(rnd() % 5) - 2;
    if (g == GEN_FLOAT) {
        uint32_t bits = pick == 0   ? float_specials[rnd() % NSPECIAL(float_specials)]
                        : pick == 1 ? (uint32_t)rnd()
                                    : 0;
        float f = (float)k;
        if (pick == 2)
            memcpy(&bits, &f, sizeof bits);
        memcpy(p, &bits, sizeof bits);
    } else if (g == GEN_DOUBLE) {
        uint64_t bits = pick == 0   ? double_specials[rnd() % NSPECIAL(double_specials)]
                        : pick == 1 ? rnd()
                                    : 0;
        double d = (double)k;
        if (pick == 2)
            memcpy(&bits, &d, sizeof bits);
        memcpy(p, &bits, sizeof bits);
    } else {
        uint64_t mant;
        uint16_t sexp;
        if (pick == 0) {
            size_t i = rnd() % NSPECIAL(ldouble_specials);
            mant = ldouble_specials[i].mant;
            sexp = ldouble_specials[i].sexp;
        } else if (pick == 1) { /* random normal number */
            mant = rnd() | 0x8000000000000000ull;
            sexp = (uint16_t)(1 + rnd() % 0x7ffe) | (uint16_t)(rnd() & 0x8000);
        } else {
            long double x = (long double)k;
            memcpy(&mant, &x, sizeof mant);
            memcpy(&sexp, (unsigned char *)&x + 8, sizeof sexp);
        }
        memcpy(p, &mant, sizeof mant);
        memcpy(p + 8, &sexp, sizeof sexp);
    }
}

static size_t component_size(enum gen g)
{
    return g == GEN_FLOAT ? sizeof(float) : g == GEN_DOUBLE ? sizeof(double) : sizeof(long double);
}

static void gen_element(const struct type_case *tc, unsigned char *p, size_t extent)
{
    random_bytes(p, extent); /* padding stays random */
    switch (tc->gen) {
    case GEN_BYTES:
        gen_integer(p, extent);
        break;
    case GEN_BOOL:
        memset(p, 0, extent);
        p[0] = (unsigned char)(rnd() & 1);
        break;
    case GEN_FLOAT:
    case GEN_DOUBLE:
    case GEN_LDOUBLE:
        /* real: one component; complex: two */
        for (size_t off = 0; off < extent; off += component_size(tc->gen))
            gen_floating(p + off, tc->gen);
        break;
    case GEN_PAIR: {
        if (tc->value_gen == GEN_BYTES)
            gen_integer(p, tc->value_size);
        else
            gen_floating(p, tc->value_gen);
        int loc = rnd() % 4 ? (int)(rnd() % 7) - 3 : (int)rnd();
        memcpy(p + tc->loc_offset, &loc, sizeof loc);
        break;
    }
    }
}

/* ---- The pair check --------------------------------------------------------- */

_Alignas(64) static unsigned char in_buf[MAX_COUNT * MAX_EXTENT];
_Alignas(64) static unsigned char in_copy[MAX_COUNT * MAX_EXTENT];
_Alignas(64) static unsigned char ref_buf[MAX_COUNT * MAX_EXTENT];
_Alignas(64) static unsigned char kernel_buf[MAX_COUNT * MAX_EXTENT];
_Alignas(64) static unsigned char reducer_buf[MAX_COUNT * MAX_EXTENT];
_Alignas(64) static unsigned char inout_copy[MAX_COUNT * MAX_EXTENT];

/* Bytes of a floating component's value (x87: 10 of 16), and whether it is NaN. */
static size_t value_bytes(enum gen g)
{
    return g == GEN_FLOAT ? sizeof(float) : g == GEN_DOUBLE ? sizeof(double) : 10;
}

static int component_is_nan(const unsigned char *p, enum gen g)
{
    float f;
    double d;
    long double x;
    if (g == GEN_FLOAT)
        return memcpy(&f, p, sizeof f), f != f;
    if (g == GEN_DOUBLE)
        return memcpy(&d, p, sizeof d), d != d;
    return memcpy(&x, p, sizeof x), x != x;
}

static int components_equal(const unsigned char *p, const unsigned char *q, enum gen g)
{
    float f, f2;
    double d, d2;
    long double x, x2;
    if (g == GEN_FLOAT)
        return memcpy(&f, p, sizeof f), memcpy(&f2, q, sizeof f2), f == f2;
    if (g == GEN_DOUBLE)
        return memcpy(&d, p, sizeof d), memcpy(&d2, q, sizeof d2), d == d2;
    return memcpy(&x, p, sizeof x), memcpy(&x2, q, sizeof x2), x == x2;
}

/* Whether got equals the reference.  MPICH: byte for byte.  Another MPI
 * (Open MPI's op component picks NaNs and signed zeros differently in its
 * vector and scalar loops, and by CPU): a floating component may differ where
 * the standard leaves it open: any NaN for a NaN, and for MIN/MAX either
 * operand where they are unordered or equal (a NaN, -0 vs +0). */
static int results_match(const struct type_case *tc, const struct op_case *oc,
                         const unsigned char *got, size_t count, size_t extent)
{
    if (memcmp(got, ref_buf, count * extent) == 0)
        return 1;
#if defined(MPICH_NUMVERSION)
    (void)tc;
    (void)oc;
    return 0;
#else
    enum gen g = tc->gen;
    int minmax = is_minmax(oc->op);
    if (g != GEN_FLOAT && g != GEN_DOUBLE && g != GEN_LDOUBLE)
        return 0;
    size_t step = component_size(g), vb = value_bytes(g);
    for (size_t off = 0; off < count * extent; off += step) {
        const unsigned char *x = in_copy + off, *y = inout_copy + off, *r = ref_buf + off,
                            *z = got + off;
        if (memcmp(z, r, vb) == 0 || (component_is_nan(z, g) && component_is_nan(r, g)))
            continue;
        if (minmax &&
            (component_is_nan(x, g) || component_is_nan(y, g) || components_equal(x, y, g)) &&
            (memcmp(z, x, vb) == 0 || memcmp(z, y, vb) == 0))
            continue;
        return 0;
    }
    return 1;
#endif
}

static void describe_difference(const char *type, const char *op, const char *path,
                                const unsigned char *got, size_t count, size_t extent)
{
    for (size_t i = 0; i < count; i++) {
        if (memcmp(got + i * extent, ref_buf + i * extent, extent) == 0)
            continue;
        printf("  %s %s via %s, count %zu, element %zu\n    in     ", type, op, path, count, i);
        for (size_t b = 0; b < extent; b++)
            printf("%02x", in_buf[i * extent + b]);
        printf("\n    ref    ");
        for (size_t b = 0; b < extent; b++)
            printf("%02x", ref_buf[i * extent + b]);
        printf("\n    got    ");
        for (size_t b = 0; b < extent; b++)
            printf("%02x", got[i * extent + b]);
        printf("\n");
        return;
    }
}

/* Returns 1 if the kernel and the reducer agree with the reference on every
 * count and round: MPI_Reduce_local, or for own_reference the unsigned MIN/MAX
 * computed here. */
static int compare_with_reference(const struct type_case *tc, const struct op_case *oc,
                                  trd_kernel_fn fn, size_t extent, int own_reference)
{
    static const size_t counts[] = {0, 1, 7, MAX_COUNT};
    trd_reducer r;
    int rc = trd_reducer_init(&r, tc->type, oc->op);
    if (rc != MPI_SUCCESS || r.fn != fn || r.extent != extent || !r.commutative) {
        printf("  %s %s: trd_reducer_init rc %d, fn %s, extent %zu, commutative %d\n", tc->name,
               oc->name, rc, r.fn == fn ? "ok" : "differs", r.extent, r.commutative);
        return 0;
    }
    for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++) {
        for (int round = 0; round < 3; round++) {
            size_t count = counts[c], bytes = count * extent;
            for (size_t i = 0; i < count; i++) {
                gen_element(tc, in_buf + i * extent, extent);
                gen_element(tc, ref_buf + i * extent, extent);
            }
            memcpy(in_copy, in_buf, bytes);
            memcpy(inout_copy, ref_buf, bytes);
            memcpy(kernel_buf, ref_buf, bytes);
            memcpy(reducer_buf, ref_buf, bytes);

            if (own_reference) {
                unsigned_minmax_reference(in_buf, ref_buf, count, extent, oc->op == MPI_MAX);
            } else if (fn && library_differs(tc, oc->op, extent)) {
                standard_reference(oc->op, in_buf, ref_buf, count, extent);
            } else if (MPI_Reduce_local(in_buf, ref_buf, (int)count, tc->type, oc->op) !=
                       MPI_SUCCESS) {
                printf("  %s %s: MPI_Reduce_local failed on count %zu\n", tc->name, oc->name,
                       count);
                return 0;
            }
            if (fn)
                fn(in_buf, kernel_buf, count);
            else
                memcpy(kernel_buf, ref_buf, bytes);
            rc = trd_reduce_local(&r, in_copy, reducer_buf, count);

            if (!results_match(tc, oc, kernel_buf, count, extent)) {
                describe_difference(tc->name, oc->name, "kernel", kernel_buf, count, extent);
                return 0;
            }
            if (rc != MPI_SUCCESS || !results_match(tc, oc, reducer_buf, count, extent)) {
                describe_difference(tc->name, oc->name, "trd_reduce", reducer_buf, count, extent);
                return 0;
            }
            if (memcmp(in_buf, in_copy, bytes) != 0) {
                printf("  %s %s: kernel wrote to in\n", tc->name, oc->name);
                return 0;
            }
        }
    }
    return 1;
}

/* The extremes of an unsigned type of size bytes, through the reducer:
 * MAX(0, all ones) and MAX(all ones, 0) are all ones, MIN of them 0, which a
 * signed comparison gets the other way round. */
static int unsigned_extremes_ok(MPI_Datatype type, MPI_Op op, size_t size)
{
    unsigned char zero[8] = {0}, ones[8], io[8];
    const unsigned char *want = op == MPI_MAX ? ones : zero;
    trd_reducer r;
    int ok = trd_reducer_init(&r, type, op) == MPI_SUCCESS;

    memset(ones, 0xff, sizeof ones);
    memcpy(io, zero, size);
    ok = ok && trd_reduce_local(&r, ones, io, 1) == MPI_SUCCESS && memcmp(io, want, size) == 0;
    memcpy(io, ones, size);
    ok = ok && trd_reduce_local(&r, zero, io, 1) == MPI_SUCCESS && memcmp(io, want, size) == 0;
    return ok;
}

/* Counts the handlers called: none may be while trd_reduce_local_accepts asks. */
static int handler_calls;
static void count_errors(MPI_Comm *comm, int *code, ...)
{
    (void)comm;
    (void)code;
    handler_calls++;
}

static void check_pair(const struct type_case *tc, const struct op_case *oc, int *kernels,
                       MPI_Errhandler counting)
{
    MPI_Aint lb, extent;
    unsigned char scratch_in[MAX_EXTENT] = {0}, scratch_inout[MAX_EXTENT] = {0};

    /* What trd_reduce_local_accepts and trd_kernel_lookup (which asks
     * MPI_Reduce_local too) say, with a handler on both communicators that
     * must neither be called nor replaced. */
    int accepted0 = MPI_Reduce_local(scratch_in, scratch_inout, 0, tc->type, oc->op) == MPI_SUCCESS;
    int one_sided = oc->op == MPI_REPLACE || oc->op == MPI_NO_OP;
    MPI_Errhandler world, self;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, counting);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, counting);
    handler_calls = 0;
    int says = trd_reduce_local_accepts(tc->type, oc->op);
    int again = trd_reduce_local_accepts(tc->type, oc->op); /* remembered */
    trd_kernel_fn fn = trd_kernel_lookup(tc->type, oc->op);
    if (fn)
        ++*kernels;
    check(trd_kernel_lookup(tc->type, oc->op) == fn, tc->name, oc->name,
          "trd_kernel_lookup gives another answer the second time");
    MPI_Comm_get_errhandler(MPI_COMM_WORLD, &world);
    MPI_Comm_get_errhandler(MPI_COMM_SELF, &self);
    check(says == (accepted0 && !one_sided) && again == says, tc->name, oc->name,
          "trd_reduce_local_accepts differs from MPI_Reduce_local");
    check(handler_calls == 0 && world == counting && self == counting, tc->name, oc->name,
          "trd_reduce_local_accepts or trd_kernel_lookup called or changed an error handler");
    MPI_Errhandler_free(&world);
    MPI_Errhandler_free(&self);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);

    if (reduce_local_aborts(tc->type, oc->op)) {
        check(fn == NULL, tc->name, oc->name, "kernel for a pair MPI_Reduce_local aborts on");
        return;
    }
    int accepted = MPI_Reduce_local(scratch_in, scratch_inout, 1, tc->type, oc->op) == MPI_SUCCESS;
    if (!accepted) {
        check(fn == NULL, tc->name, oc->name, "kernel for a pair MPI_Reduce_local rejects");
        return;
    }
    if (left_on_reduce_local(tc->type, oc->op)) {
        left_pairs++;
        if (fn) {
            check(0, tc->name, oc->name, "kernel for a pair documented as without one");
            return;
        }
    } else if (!fn) {
        check(0, tc->name, oc->name, "no kernel for a pair MPI_Reduce_local accepts");
        return;
    }
    MPI_Type_get_extent(tc->type, &lb, &extent);
    if (extent <= 0 || extent > MAX_EXTENT) {
        check(0, tc->name, oc->name, "unexpected extent");
        return;
    }
    if (tc->scope == UNSIGNED && is_minmax(oc->op)) {
        signed_minmax += minmax_is_signed(tc->type);
        check(compare_with_reference(tc, oc, fn, (size_t)extent, 1), tc->name, oc->name,
              "result differs from the standard's unsigned MIN/MAX");
        check(unsigned_extremes_ok(tc->type, oc->op, (size_t)extent), tc->name, oc->name,
              "MIN/MAX of 0 and all ones compared as signed");
        return;
    }
    check(compare_with_reference(tc, oc, fn, (size_t)extent, 0), tc->name, oc->name,
          "result differs from MPI_Reduce_local");
}

/* ---- Reducer checks ------------------------------------------------------- */

/* inout = 2 * in + inout: operand order is visible in the result. */
static void twice_plus(void *in, void *inout, int *len, MPI_Datatype *type)
{
    const int *a = in;
    int *b = inout;
    (void)type;
    for (int i = 0; i < *len; i++)
        b[i] = 2 * a[i] + b[i];
}

static void check_user_op(void)
{
    enum { N = 100 };
    int in[N], inout[N], ok = 1;
    MPI_Op op;
    trd_reducer r;

    MPI_Op_create(twice_plus, 0, &op);
    int rc = trd_reducer_init(&r, MPI_INT, op);
    ok = rc == MPI_SUCCESS && r.fn == NULL && !r.commutative && r.extent == sizeof(int) &&
         trd_kernel_lookup(MPI_INT, op) == NULL;
    for (int i = 0; i < N; i++) {
        in[i] = i;
        inout[i] = 1000 + 3 * i;
    }
    ok = ok && trd_reduce_local(&r, in, inout, 0) == MPI_SUCCESS && inout[1] == 1003;
    ok = ok && trd_reduce_local(&r, in, inout, N) == MPI_SUCCESS;
    for (int i = 0; i < N; i++)
        ok = ok && inout[i] == 2 * i + 1000 + 3 * i;
    check(ok, "MPI_INT", "user op 2*in+inout", "fallback result or operand order wrong");
    MPI_Op_free(&op);
}

static void check_not_predefined(void)
{
    MPI_Datatype pair, dup;
    trd_reducer r;

    MPI_Type_contiguous(2, MPI_INT, &pair);
    MPI_Type_commit(&pair);
    check(trd_reducer_init(&r, pair, MPI_SUM) == MPI_ERR_TYPE, "contiguous(2, MPI_INT)", "MPI_SUM",
          "trd_reducer_init must return MPI_ERR_TYPE");
    check(trd_kernel_lookup(pair, MPI_SUM) == NULL, "contiguous(2, MPI_INT)", "MPI_SUM",
          "kernel for a derived type");
    MPI_Type_free(&pair);

    MPI_Type_dup(MPI_INT, &dup);
    check(trd_reducer_init(&r, dup, MPI_SUM) == MPI_ERR_TYPE, "dup(MPI_INT)", "MPI_SUM",
          "trd_reducer_init must return MPI_ERR_TYPE");
    MPI_Type_free(&dup);

    check(trd_reducer_init(&r, MPI_DATATYPE_NULL, MPI_SUM) == MPI_ERR_TYPE, "MPI_DATATYPE_NULL",
          "MPI_SUM", "trd_reducer_init must return MPI_ERR_TYPE");
    check(trd_kernel_lookup(MPI_DATATYPE_NULL, MPI_SUM) == NULL &&
              trd_kernel_lookup(MPI_INT, MPI_OP_NULL) == NULL,
          "MPI_DATATYPE_NULL", "MPI_OP_NULL", "kernel for a null handle");
}

/* A pair MPI_Reduce_local rejects: the reducer falls back and passes the error
 * on, for count 0 too, and leaves inout alone. */
static void check_rejected_pair(void)
{
    trd_reducer r;
    double in = 1.0, inout = 2.0;

    int ok = trd_reducer_init(&r, MPI_DOUBLE, MPI_BAND) == MPI_SUCCESS && r.fn == NULL;
    ok = ok && trd_reduce_local(&r, &in, &inout, 0) != MPI_SUCCESS;
    ok = ok && trd_reduce_local(&r, &in, &inout, 1) != MPI_SUCCESS && inout == 2.0;
    check(ok, "MPI_DOUBLE", "MPI_BAND", "trd_reduce must return MPI_Reduce_local's error");
}

int main(int argc, char **argv)
{
    int kernels = 0, npairs = 0;
    MPI_Errhandler counting;

    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    MPI_Comm_create_errhandler(count_errors, &counting);

    for (size_t t = 0; t < NTYPES; t++) {
        if (types[t].type == MPI_DATATYPE_NULL) /* e.g. a Fortran type not built */
            continue;
        for (size_t o = 0; o < NOPS; o++) {
            check_pair(&types[t], &ops[o], &kernels, counting);
            npairs++;
        }
    }
    MPI_Errhandler_free(&counting);
    printf("%d (type, op) pairs, %d with kernels, %d accepted and left on MPI_Reduce_local\n",
           npairs, kernels, left_pairs);
    if (signed_minmax)
        printf("%d unsigned MIN/MAX pairs are signed in MPI_Reduce_local (MPICH 4.0.x: "
               "pmodels/mpich#6083); the kernels compare as unsigned\n",
               signed_minmax);
    check_user_op();
    check_not_predefined();
    check_rejected_pair();

    printf("%d passed, %d failed\n", passed, failed);
    MPI_Finalize();
    return failed ? 1 : 0;
}
