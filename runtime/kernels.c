/* Reduction kernels: inout[i] = in[i] op inout[i] for predefined types and ops.
 *
 * Algorithm: one plain element-wise loop per (predefined type, predefined op)
 * pair, generated from the type table below; restrict pointers and a
 * branch-free body let the compiler vectorise it.  A pair without a kernel
 * goes through MPI_Reduce_local, so every result is MPICH's own.
 * Cost = 0 alpha + 0 beta + n gamma (n elements, gamma one element op).
 * Source: MPI 3.1 §5.9.2 (which pairs are defined); MPICH 4.0.2
 * src/mpi/coll/op/op*.c and src/include/mpir_op_util.h (exact semantics).
 *
 * Results equal MPI_Reduce_local's bit for bit (tests/mpi/test_kernels.c
 * compares every pair on random data and special values, on x86-64).  What
 * that takes:
 *  - Operand order as in MPICH: a = inout[i], b = in[i], result a op b.  MAX is
 *    (a > b ? a : b) and MIN (a < b ? a : b): when either is NaN, or for
 *    +0 vs -0, the result is b (the incoming value), not an IEEE maxNum.
 *  - When both operands of a float/double + - * are NaN, x86 SSE returns the
 *    first one, quieted, so the result depends on the operand order the
 *    compiler emitted.  MPICH's build returns inout's NaN for real and C99
 *    complex types, and in's for C++ complex SUM and for ar*br in C++ complex
 *    PROD.  Compilers swap the operands of + and * freely, so the kernels pick
 *    the NaN explicitly (TRD__ADD_N and friends).  x87 long double returns the
 *    NaN with the larger significand, whatever the order.
 *  - Pairs MPICH defines beyond MPI 3.1 get kernels too (MPI_CHAR in arithmetic,
 *    LXOR on floating types: 1.0 or 0.0, NaN counts as true); pairs MPICH
 *    rejects have none.  MPI_WCHAR is rejected by MPICH for every op.  MPICH
 *    4.0.2 accepts LAND/LOR on floating types but then aborts inside the op,
 *    so those stay on MPI_Reduce_local as well.
 *  - MPICH 4.0.x compares unsigned types as signed in MIN/MAX (MPICH bug
 *    pmodels/mpich#6083).  Where the library in use does, those pairs stay on
 *    MPI_Reduce_local rather than copy the bug (checked once per type).
 *  - Signed SUM/PROD are computed in the unsigned type (two's complement wrap,
 *    as MPICH's code does in practice, without undefined behaviour).
 *  - C99 complex PROD is GCC's expansion (ac - bd, ad + bc) with the Annex G
 *    recovery (libgcc __mul?c3) when both parts are NaN; the C++ complex types
 *    are structs in MPICH with the textbook product and no recovery.
 *  - MINLOC/MAXLOC: strictly better value wins; equal values keep the smaller
 *    index; NaN on either side keeps inout.  Padding bytes are not written.
 *  - MPI_C_BOOL, MPI_CXX_BOOL: any nonzero byte is true; results are 0 or 1.
 *  - No contraction into FMA (MPICH's library is built for baseline x86-64)
 *    and no -ffast-math.
 * Fortran types and MPIX_C_FLOAT16 have no kernels and use MPI_Reduce_local.
 * As for MPI_Reduce_local, in and inout must not overlap (the kernels take
 * them restrict).
 */
#include "rt.h"

#include <limits.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#if defined(__FAST_MATH__) || (defined(__FINITE_MATH_ONLY__) && __FINITE_MATH_ONLY__)
#error "runtime/kernels.c must not be built with -ffast-math: results must match MPI_Reduce_local"
#endif

#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#define TRD__NO_CONTRACT
#elif defined(__GNUC__)
/* GCC ignores the STDC pragma, and its SLP complex-multiply pattern emits
 * vfmaddsub even under -ffp-contract=off. */
#define TRD__NO_CONTRACT __attribute__((optimize("fp-contract=off", "no-tree-slp-vectorize")))
#else
#define TRD__NO_CONTRACT
#endif

#define TRD__CHECK(call)                                                                           \
    do {                                                                                           \
        rc = (call);                                                                               \
        if (rc != MPI_SUCCESS)                                                                     \
            goto fn_exit;                                                                          \
    } while (0)

/* Handles are compile-time constants only in MPICH and its derivatives, and the
 * kernels were checked against MPICH; elsewhere every pair uses the fallback. */
#if defined(MPICH_NUMVERSION)

/* ---- MINLOC/MAXLOC pair layouts, as in mpi.h ------------------------------- */

struct trd__float_int {
    float value;
    int loc;
};
struct trd__double_int {
    double value;
    int loc;
};
struct trd__long_int {
    long value;
    int loc;
};
struct trd__2int {
    int value;
    int loc;
};
struct trd__short_int {
    short value;
    int loc;
};
struct trd__long_double_int {
    long double value;
    int loc;
};

/* ---- The type table -------------------------------------------------------
 * X(handle, name, C type, A, class).  The class says which ops have kernels
 * (TRD__ROW_<class>) and how they compute.  A is where integer SUM/PROD are
 * computed (unsigned, at least int wide), the component type of a complex
 * type, the value type of a MINLOC/MAXLOC pair. */
#define TRD__TYPES(X)                                                                              \
    X(MPI_CHAR, char, char, unsigned, INTEGER)                                                     \
    X(MPI_SIGNED_CHAR, schar, signed char, unsigned, INTEGER)                                      \
    X(MPI_UNSIGNED_CHAR, uchar, unsigned char, unsigned, UNSIGNED)                                 \
    X(MPI_SHORT, short, short, unsigned, INTEGER)                                                  \
    X(MPI_UNSIGNED_SHORT, ushort, unsigned short, unsigned, UNSIGNED)                              \
    X(MPI_INT, int, int, unsigned, INTEGER)                                                        \
    X(MPI_UNSIGNED, uint, unsigned, unsigned, UNSIGNED)                                            \
    X(MPI_LONG, long, long, unsigned long, INTEGER)                                                \
    X(MPI_UNSIGNED_LONG, ulong, unsigned long, unsigned long, UNSIGNED)                            \
    X(MPI_LONG_LONG, llong, long long, unsigned long long, INTEGER)                                \
    X(MPI_UNSIGNED_LONG_LONG, ullong, unsigned long long, unsigned long long, UNSIGNED)            \
    X(MPI_INT8_T, int8, int8_t, unsigned, INTEGER)                                                 \
    X(MPI_INT16_T, int16, int16_t, unsigned, INTEGER)                                              \
    X(MPI_INT32_T, int32, int32_t, uint32_t, INTEGER)                                              \
    X(MPI_INT64_T, int64, int64_t, uint64_t, INTEGER)                                              \
    X(MPI_UINT8_T, uint8, uint8_t, unsigned, UNSIGNED)                                             \
    X(MPI_UINT16_T, uint16, uint16_t, unsigned, UNSIGNED)                                          \
    X(MPI_UINT32_T, uint32, uint32_t, uint32_t, UNSIGNED)                                          \
    X(MPI_UINT64_T, uint64, uint64_t, uint64_t, UNSIGNED)                                          \
    X(MPI_AINT, aint, MPI_Aint, unsigned long long, INTEGER)                                       \
    X(MPI_OFFSET, offset, MPI_Offset, unsigned long long, INTEGER)                                 \
    X(MPI_COUNT, count, MPI_Count, unsigned long long, INTEGER)                                    \
    X(MPI_FLOAT, float, float, float, FLOATING)                                                    \
    X(MPI_DOUBLE, double, double, double, FLOATING)                                                \
    X(MPI_LONG_DOUBLE, ldouble, long double, long double, EXTENDED)                                \
    X(MPI_C_FLOAT_COMPLEX, cfloat, float _Complex, float, COMPLEX)                                 \
    X(MPI_C_DOUBLE_COMPLEX, cdouble, double _Complex, double, COMPLEX)                             \
    X(MPI_C_LONG_DOUBLE_COMPLEX, cldouble, long double _Complex, long double, EXTENDED_COMPLEX)    \
    X(MPI_CXX_FLOAT_COMPLEX, cxxfloat, float, float, CXX_COMPLEX)                                  \
    X(MPI_CXX_DOUBLE_COMPLEX, cxxdouble, double, double, CXX_COMPLEX)                              \
    X(MPI_CXX_LONG_DOUBLE_COMPLEX, cxxldouble, long double, long double, CXX_EXTENDED_COMPLEX)     \
    X(MPI_C_BOOL, cbool, unsigned char, unsigned char, LOGICAL)                                    \
    X(MPI_CXX_BOOL, cxxbool, unsigned char, unsigned char, LOGICAL)                                \
    X(MPI_BYTE, byte, unsigned char, unsigned char, BYTE)                                          \
    X(MPI_FLOAT_INT, float_int, struct trd__float_int, float, PAIR)                                \
    X(MPI_DOUBLE_INT, double_int, struct trd__double_int, double, PAIR)                            \
    X(MPI_LONG_INT, long_int, struct trd__long_int, long, PAIR)                                    \
    X(MPI_2INT, 2int, struct trd__2int, int, PAIR)                                                 \
    X(MPI_SHORT_INT, short_int, struct trd__short_int, short, PAIR)                                \
    X(MPI_LONG_DOUBLE_INT, long_double_int, struct trd__long_double_int, long double, PAIR)

enum trd__op_index {
    TRD__OP_MAX,
    TRD__OP_MIN,
    TRD__OP_SUM,
    TRD__OP_PROD,
    TRD__OP_LAND,
    TRD__OP_BAND,
    TRD__OP_LOR,
    TRD__OP_BOR,
    TRD__OP_LXOR,
    TRD__OP_BXOR,
    TRD__OP_MINLOC,
    TRD__OP_MAXLOC,
    TRD__OP_INDEX_MAX
};

enum trd__type_index {
#define X(handle, name, ctype, atype, class) TRD__TYPE_##name,
    TRD__TYPES(X)
#undef X
        TRD__TYPE_INDEX_MAX
};

/* ---- Element operations ----------------------------------------------------- */

#define TRD__MAX(a, b) ((a) > (b) ? (a) : (b))
#define TRD__MIN(a, b) ((a) < (b) ? (a) : (b))

/* x + y, x - y, x * y for float and double, returning x's NaN when x is NaN
 * whichever operand order the compiler emits: then the sum is x + x. */
#define TRD__ADD_N(x, y) ((x) + ((x) != (x) ? (x) : (y)))
#define TRD__SUB_N(x, y) ((x) - ((x) != (x) ? (x) : (y)))
#define TRD__MUL_N(x, y) ((x) * ((x) != (x) ? (x) : (y)))

/* Plain forms, for x87 long double. */
#define TRD__ADD(x, y) ((x) + (y))
#define TRD__SUB(x, y) ((x) - (y))
#define TRD__MUL(x, y) ((x) * (y))

/* ---- Loop generators ------------------------------------------------------ */

/* Every kernel has this signature; restrict on the parameters is what lets
 * GCC drop its runtime alias checks. */
#define TRD__KERNEL(fn)                                                                            \
    static void fn(const void *restrict in_, void *restrict inout_, size_t count)

/* io[i] = expr for i in [0, count * n), where expr reads a = io[i] and
 * b = in[i]; n > 1 runs over the components of a compound element.  Blocks of
 * a fixed length vectorise under GCC's -O2 cost model too, which leaves loops
 * that need a scalar epilogue alone. */
#define TRD__BLOCK 64
#define TRD__LOOP_N(fn, T, n, expr)                                                                \
    TRD__KERNEL(fn)                                                                                \
    {                                                                                              \
        const T *restrict in = in_;                                                                \
        T *restrict io = inout_;                                                                   \
        size_t len = count * (n), i = 0;                                                           \
        for (; i + TRD__BLOCK <= len; i += TRD__BLOCK) {                                           \
            for (size_t j = 0; j < TRD__BLOCK; j++) {                                              \
                T a = io[i + j], b = in[i + j];                                                    \
                io[i + j] = (T)(expr);                                                             \
            }                                                                                      \
        }                                                                                          \
        for (; i < len; i++) {                                                                     \
            T a = io[i], b = in[i];                                                                \
            io[i] = (T)(expr);                                                                     \
        }                                                                                          \
    }
#define TRD__LOOP(fn, T, expr) TRD__LOOP_N(fn, T, 1, expr)

#define TRD__DEF_INTEGER(name, T, A)                                                               \
    TRD__LOOP(k_##name##_max, T, TRD__MAX(a, b))                                                   \
    TRD__LOOP(k_##name##_min, T, TRD__MIN(a, b))                                                   \
    TRD__LOOP(k_##name##_sum, T, (A)a + (A)b)                                                      \
    TRD__LOOP(k_##name##_prod, T, (A)a *(A)b)                                                      \
    TRD__LOOP(k_##name##_land, T, (a != 0) & (b != 0))                                             \
    TRD__LOOP(k_##name##_band, T, a &b)                                                            \
    TRD__LOOP(k_##name##_lor, T, (a != 0) | (b != 0))                                              \
    TRD__LOOP(k_##name##_bor, T, a | b)                                                            \
    TRD__LOOP(k_##name##_lxor, T, (a != 0) != (b != 0))                                            \
    TRD__LOOP(k_##name##_bxor, T, a ^ b)
#define TRD__DEF_UNSIGNED TRD__DEF_INTEGER

#define TRD__DEF_REAL(name, T, ADD, MUL)                                                           \
    TRD__LOOP(k_##name##_max, T, TRD__MAX(a, b))                                                   \
    TRD__LOOP(k_##name##_min, T, TRD__MIN(a, b))                                                   \
    TRD__LOOP(k_##name##_sum, T, ADD(a, b))                                                        \
    TRD__LOOP(k_##name##_prod, T, MUL(a, b))                                                       \
    TRD__LOOP(k_##name##_lxor, T, (a != 0) != (b != 0))
#define TRD__DEF_FLOATING(name, T, A) TRD__DEF_REAL(name, T, TRD__ADD_N, TRD__MUL_N)
#define TRD__DEF_EXTENDED(name, T, A) TRD__DEF_REAL(name, T, TRD__ADD, TRD__MUL)

/* Complex products of float and double.  Operand order shows only in NaN
 * payloads, so the plain formula runs first and a NaN result is recomputed
 * with the operands picked as MPICH's compiled loop picks them. */

/* C99 complex PROD as GCC expands a * b: (ac - bd, ad + bc), then the
 * Annex G recovery (libgcc __mul?c3, reached through the C operator) when
 * both parts are NaN.  R is the component type, C the complex type. */
#define TRD__C99_PROD(fn, R, C)                                                                    \
    TRD__NO_CONTRACT TRD__KERNEL(fn)                                                               \
    {                                                                                              \
        const R *restrict in = in_;                                                                \
        R *restrict io = inout_;                                                                   \
        for (size_t i = 0; i < count; i++) {                                                       \
            R ar = io[2 * i], ai = io[2 * i + 1];                                                  \
            R br = in[2 * i], bi = in[2 * i + 1];                                                  \
            R re = ar * br - ai * bi, im = ar * bi + ai * br;                                      \
            if (re != re || im != im) {                                                            \
                R ac = TRD__MUL_N(ar, br), bd = TRD__MUL_N(ai, bi);                                \
                R ad = TRD__MUL_N(ar, bi), bc = TRD__MUL_N(ai, br);                                \
                re = TRD__SUB_N(ac, bd);                                                           \
                im = TRD__ADD_N(ad, bc);                                                           \
            }                                                                                      \
            if (re != re && im != im) {                                                            \
                union {                                                                            \
                    C z;                                                                           \
                    R part[2];                                                                     \
                } x = {.part = {ar, ai}};                                                          \
                union {                                                                            \
                    C z;                                                                           \
                    R part[2];                                                                     \
                } y = {.part = {br, bi}};                                                          \
                x.z *= y.z;                                                                        \
                re = x.part[0];                                                                    \
                im = x.part[1];                                                                    \
            }                                                                                      \
            io[2 * i] = re;                                                                        \
            io[2 * i + 1] = im;                                                                    \
        }                                                                                          \
    }

/* MPICH opprod.c on s_complex, d_complex, ld_complex: the textbook product
 * (ar*br - ai*bi, ai*br + ar*bi), no recovery.  Where two NaNs meet, MPICH's
 * compiled loop returns in's NaN for ar*br and inout's elsewhere. */
#define TRD__CXX_PROD(fn, R, ADD, SUB, MUL)                                                        \
    TRD__NO_CONTRACT TRD__KERNEL(fn)                                                               \
    {                                                                                              \
        const R *restrict in = in_;                                                                \
        R *restrict io = inout_;                                                                   \
        for (size_t i = 0; i < count; i++) {                                                       \
            R ar = io[2 * i], ai = io[2 * i + 1];                                                  \
            R br = in[2 * i], bi = in[2 * i + 1];                                                  \
            R re = ar * br - ai * bi, im = ai * br + ar * bi;                                      \
            if (re != re || im != im) {                                                            \
                re = SUB(MUL(br, ar), MUL(ai, bi));                                                \
                im = ADD(MUL(ai, br), MUL(ar, bi));                                                \
            }                                                                                      \
            io[2 * i] = re;                                                                        \
            io[2 * i + 1] = im;                                                                    \
        }                                                                                          \
    }

/* Complex SUM adds components: the real loop over 2 * count. */
#define TRD__DEF_COMPLEX(name, T, R)                                                               \
    TRD__LOOP_N(k_##name##_sum, R, 2, TRD__ADD_N(a, b))                                            \
    TRD__C99_PROD(k_##name##_prod, R, T)

/* x87: no NaN choice to make, so the C operators as MPICH writes them. */
#define TRD__DEF_EXTENDED_COMPLEX(name, T, R)                                                      \
    TRD__LOOP(k_##name##_sum, T, a + b)                                                            \
    TRD__NO_CONTRACT TRD__LOOP(k_##name##_prod, T, a *b)

/* C++ complex SUM: MPICH's compiled loop returns in's NaN when two meet. */
#define TRD__DEF_CXX_COMPLEX(name, T, R)                                                           \
    TRD__LOOP_N(k_##name##_sum, R, 2, TRD__ADD_N(b, a))                                            \
    TRD__CXX_PROD(k_##name##_prod, R, TRD__ADD_N, TRD__SUB_N, TRD__MUL_N)
#define TRD__DEF_CXX_EXTENDED_COMPLEX(name, T, R)                                                  \
    TRD__LOOP_N(k_##name##_sum, R, 2, TRD__ADD(b, a))                                              \
    TRD__CXX_PROD(k_##name##_prod, R, TRD__ADD, TRD__SUB, TRD__MUL)

#define TRD__DEF_LOGICAL(name, T, A)                                                               \
    TRD__LOOP(k_##name##_land, T, (a != 0) & (b != 0))                                             \
    TRD__LOOP(k_##name##_lor, T, (a != 0) | (b != 0))                                              \
    TRD__LOOP(k_##name##_lxor, T, (a != 0) != (b != 0))

#define TRD__DEF_BYTE(name, T, A)                                                                  \
    TRD__LOOP(k_##name##_band, T, a &b)                                                            \
    TRD__LOOP(k_##name##_bor, T, a | b)                                                            \
    TRD__LOOP(k_##name##_bxor, T, a ^ b)

/* MPICH opminloc.c / opmaxloc.c: in wins when strictly better ("better" is
 * less for MINLOC, greater for MAXLOC); on equal values the smaller loc wins;
 * unordered (NaN) keeps inout.  Written branch-free; only the value and loc
 * members are stored, never the padding. */
#define TRD__LOC_LOOP(fn, T, A, better)                                                            \
    TRD__KERNEL(fn)                                                                                \
    {                                                                                              \
        const T *restrict in = in_;                                                                \
        T *restrict io = inout_;                                                                   \
        for (size_t i = 0; i < count; i++) {                                                       \
            A a = io[i].value, b = in[i].value;                                                    \
            int la = io[i].loc, lb = in[i].loc;                                                    \
            int take = better(b, a), tie = (a == b);                                               \
            io[i].value = take ? b : a;                                                            \
            io[i].loc = take ? lb : (tie && lb < la) ? lb : la;                                    \
        }                                                                                          \
    }

#define TRD__LESS(x, y) ((x) < (y))
#define TRD__GREATER(x, y) ((x) > (y))

#define TRD__DEF_PAIR(name, T, A)                                                                  \
    TRD__LOC_LOOP(k_##name##_minloc, T, A, TRD__LESS)                                              \
    TRD__LOC_LOOP(k_##name##_maxloc, T, A, TRD__GREATER)

#define X(handle, name, ctype, atype, class) TRD__DEF_##class(name, ctype, atype)
TRD__TYPES(X)
#undef X

/* ---- Rows: which ops each class of type has -------------------------------- */

#define TRD__ROW_INTEGER(name)                                                                     \
    {                                                                                              \
        [TRD__OP_MAX] = k_##name##_max, [TRD__OP_MIN] = k_##name##_min,                            \
        [TRD__OP_SUM] = k_##name##_sum, [TRD__OP_PROD] = k_##name##_prod,                          \
        [TRD__OP_LAND] = k_##name##_land, [TRD__OP_BAND] = k_##name##_band,                        \
        [TRD__OP_LOR] = k_##name##_lor, [TRD__OP_BOR] = k_##name##_bor,                            \
        [TRD__OP_LXOR] = k_##name##_lxor, [TRD__OP_BXOR] = k_##name##_bxor,                        \
    }
#define TRD__ROW_UNSIGNED TRD__ROW_INTEGER
#define TRD__ROW_FLOATING(name)                                                                    \
    {                                                                                              \
        [TRD__OP_MAX] = k_##name##_max, [TRD__OP_MIN] = k_##name##_min,                            \
        [TRD__OP_SUM] = k_##name##_sum, [TRD__OP_PROD] = k_##name##_prod,                          \
        [TRD__OP_LXOR] = k_##name##_lxor,                                                          \
    }
#define TRD__ROW_EXTENDED TRD__ROW_FLOATING
#define TRD__ROW_COMPLEX(name)                                                                     \
    {                                                                                              \
        [TRD__OP_SUM] = k_##name##_sum, [TRD__OP_PROD] = k_##name##_prod                           \
    }
#define TRD__ROW_EXTENDED_COMPLEX TRD__ROW_COMPLEX
#define TRD__ROW_CXX_COMPLEX TRD__ROW_COMPLEX
#define TRD__ROW_CXX_EXTENDED_COMPLEX TRD__ROW_COMPLEX
#define TRD__ROW_LOGICAL(name)                                                                     \
    {                                                                                              \
        [TRD__OP_LAND] = k_##name##_land, [TRD__OP_LOR] = k_##name##_lor,                          \
        [TRD__OP_LXOR] = k_##name##_lxor,                                                          \
    }
#define TRD__ROW_BYTE(name)                                                                        \
    {                                                                                              \
        [TRD__OP_BAND] = k_##name##_band, [TRD__OP_BOR] = k_##name##_bor,                          \
        [TRD__OP_BXOR] = k_##name##_bxor,                                                          \
    }
#define TRD__ROW_PAIR(name)                                                                        \
    {                                                                                              \
        [TRD__OP_MINLOC] = k_##name##_minloc, [TRD__OP_MAXLOC] = k_##name##_maxloc                 \
    }

static const trd_kernel_fn trd__kernels[TRD__TYPE_INDEX_MAX][TRD__OP_INDEX_MAX] = {
#define X(handle, name, ctype, atype, class) [TRD__TYPE_##name] = TRD__ROW_##class(name),
    TRD__TYPES(X)
#undef X
};

static int trd__type_index(MPI_Datatype type)
{
    switch (type) {
#define X(handle, name, ctype, atype, class)                                                       \
    case handle:                                                                                   \
        return TRD__TYPE_##name;
        TRD__TYPES(X)
#undef X
    default:
        return -1;
    }
}

static int trd__op_index(MPI_Op op)
{
    switch (op) {
    case MPI_MAX:
        return TRD__OP_MAX;
    case MPI_MIN:
        return TRD__OP_MIN;
    case MPI_SUM:
        return TRD__OP_SUM;
    case MPI_PROD:
        return TRD__OP_PROD;
    case MPI_LAND:
        return TRD__OP_LAND;
    case MPI_BAND:
        return TRD__OP_BAND;
    case MPI_LOR:
        return TRD__OP_LOR;
    case MPI_BOR:
        return TRD__OP_BOR;
    case MPI_LXOR:
        return TRD__OP_LXOR;
    case MPI_BXOR:
        return TRD__OP_BXOR;
    case MPI_MINLOC:
        return TRD__OP_MINLOC;
    case MPI_MAXLOC:
        return TRD__OP_MAXLOC;
    default:
        return -1; /* user ops, MPI_REPLACE, MPI_NO_OP, MPI_OP_NULL */
    }
}

/* ---- Unsigned MIN/MAX in the MPICH in use ----------------------------------- */

/* 1 for the UNSIGNED class, whose MIN/MAX kernels depend on the probe below. */
#define TRD__IS_UNSIGNED_INTEGER 0
#define TRD__IS_UNSIGNED_UNSIGNED 1
#define TRD__IS_UNSIGNED_FLOATING 0
#define TRD__IS_UNSIGNED_EXTENDED 0
#define TRD__IS_UNSIGNED_COMPLEX 0
#define TRD__IS_UNSIGNED_EXTENDED_COMPLEX 0
#define TRD__IS_UNSIGNED_CXX_COMPLEX 0
#define TRD__IS_UNSIGNED_CXX_EXTENDED_COMPLEX 0
#define TRD__IS_UNSIGNED_LOGICAL 0
#define TRD__IS_UNSIGNED_BYTE 0
#define TRD__IS_UNSIGNED_PAIR 0

static const unsigned char trd__is_unsigned[TRD__TYPE_INDEX_MAX] = {
#define X(handle, name, ctype, atype, class) [TRD__TYPE_##name] = TRD__IS_UNSIGNED_##class,
    TRD__TYPES(X)
#undef X
};

enum { TRD__UNPROBED, TRD__MINMAX_UNSIGNED, TRD__MINMAX_SIGNED };
static atomic_int trd__minmax[TRD__TYPE_INDEX_MAX];

/* Whether MPI_Reduce_local does MIN and MAX on this unsigned type as unsigned:
 * MAX(0, all ones) must be all ones and MIN(all ones, 0) zero.  The answer is
 * the same for every caller, so racing first calls are harmless. */
static int trd__minmax_is_unsigned(int t, MPI_Datatype type)
{
    int known = atomic_load_explicit(&trd__minmax[t], memory_order_relaxed);
    if (known == TRD__UNPROBED) {
        unsigned char zero[sizeof(uint64_t)] = {0}, ones[sizeof(uint64_t)];
        unsigned char max[sizeof(uint64_t)] = {0}, min[sizeof(uint64_t)];
        memset(ones, 0xff, sizeof ones);
        memset(min, 0xff, sizeof min);
        int ok = MPI_Reduce_local(ones, max, 1, type, MPI_MAX) == MPI_SUCCESS &&
                 MPI_Reduce_local(zero, min, 1, type, MPI_MIN) == MPI_SUCCESS && max[0] == 0xff &&
                 min[0] == 0;
        known = ok ? TRD__MINMAX_UNSIGNED : TRD__MINMAX_SIGNED;
        atomic_store_explicit(&trd__minmax[t], known, memory_order_relaxed);
    }
    return known == TRD__MINMAX_UNSIGNED;
}

trd_kernel_fn trd_kernel_lookup(MPI_Datatype type, MPI_Op op)
{
    int t = trd__type_index(type), o = trd__op_index(op);
    if (t < 0 || o < 0)
        return NULL;
    if (trd__is_unsigned[t] && (o == TRD__OP_MAX || o == TRD__OP_MIN) &&
        !trd__minmax_is_unsigned(t, type))
        return NULL;
    return trd__kernels[t][o];
}

#else /* !MPICH_NUMVERSION */

trd_kernel_fn trd_kernel_lookup(MPI_Datatype type, MPI_Op op)
{
    (void)type;
    (void)op;
    return NULL;
}

#endif

/* ---- Reducer --------------------------------------------------------------- */

int trd_reducer_init(trd_reducer *r, MPI_Datatype type, MPI_Op op)
{
    /* The last predefined (type, op) pair resolved on this thread: handles of
     * predefined objects never change, and most programs repeat one pair. */
    static _Thread_local trd_reducer last;
    int rc = MPI_SUCCESS;
    int nints, naddrs, ntypes, combiner, commutative;
    MPI_Aint lb, extent;

    if (last.extent && last.type == type && last.op == op) {
        *r = last;
        return MPI_SUCCESS;
    }
    r->fn = NULL;
    r->op = op;
    r->type = type;
    r->extent = 0;
    r->commutative = 0;

    /* Null handles are checked here: the MPI calls below would raise the
     * error handler on them. */
    if (type == MPI_DATATYPE_NULL) {
        rc = MPI_ERR_TYPE;
        goto fn_exit;
    }
    if (op == MPI_OP_NULL) {
        rc = MPI_ERR_OP;
        goto fn_exit;
    }
    TRD__CHECK(MPI_Type_get_envelope(type, &nints, &naddrs, &ntypes, &combiner));
    if (combiner != MPI_COMBINER_NAMED) {
        rc = MPI_ERR_TYPE;
        goto fn_exit;
    }
    TRD__CHECK(MPI_Type_get_extent(type, &lb, &extent));
    TRD__CHECK(MPI_Op_commutative(op, &commutative));
    r->extent = (size_t)extent;
    r->commutative = commutative;
    r->fn = trd_kernel_lookup(type, op);
    if (trd_op_is_predefined(op))
        last = *r;

fn_exit:
    return rc;
}

int trd_reduce_local(const trd_reducer *r, const void *in, void *inout, size_t count)
{
    if (r->fn) {
        r->fn(in, inout, count);
        return MPI_SUCCESS;
    }
    /* MPI_Reduce_local takes an int count.  Called at least once, so that a
     * pair MPICH rejects is reported even for count 0. */
    const char *src = in;
    char *dst = inout;
    do {
        int n = count > (size_t)INT_MAX ? INT_MAX : (int)count;
        int rc = MPI_Reduce_local(src, dst, n, r->type, r->op);
        if (rc != MPI_SUCCESS)
            return rc;
        src += (size_t)n * r->extent;
        dst += (size_t)n * r->extent;
        count -= (size_t)n;
    } while (count > 0);
    return MPI_SUCCESS;
}
