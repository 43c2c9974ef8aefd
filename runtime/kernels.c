/* Reduction kernels: inout[i] = in[i] op inout[i] for predefined types and ops.
 *
 * Algorithm: one plain element-wise loop per (predefined type, predefined op)
 * pair, generated from the type table below; restrict pointers and a
 * branch-free body let the compiler vectorise it.  A pair without a kernel
 * goes through MPI_Reduce_local, so every result is the MPI library's own.
 * Handles are found by == in tables built at the first lookup (integers in
 * MPICH, addresses in Open MPI and SMPI), and a kernel is given only for a
 * pair MPI_Reduce_local accepts, so the library raises its own errors.
 * Cost = 0 alpha + 0 beta + n gamma (n elements, gamma one element op).
 * Source: MPI 3.1 §5.9.2 (which pairs are defined); MPICH 4.0.2
 * src/mpi/coll/op/op*.c and src/include/mpir_op_util.h (exact semantics);
 * Open MPI 4.1 ompi/mca/op/base (where it differs: TRD__FORTRAN_*_ROW).
 *
 * The semantics below are MPICH's.  Under Open MPI, MPI_CHARACTER computes as
 * unsigned char and the C++ and Fortran complex types as C99 complex, as Open
 * MPI does; NaN payloads and MIN/MAX of unordered or equal operands follow
 * MPICH's rule, which Open MPI's own vector and scalar loops do not agree on.
 *
 * Results equal MPI_Reduce_local's bit for bit (tests/mpi/test_kernels.c
 * compares every pair on random data and special values, on x86-64), with one
 * exception on purpose: unsigned MIN/MAX (below).  What that takes:
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
 *    4.0.2 accepts LAND/LOR on floating types but then aborts inside the op
 *    (C types), and LAND/LOR/LXOR on the Fortran REAL types but leaves inout
 *    as it was; those stay on MPI_Reduce_local as well.
 *  - Unsigned MIN/MAX compare as unsigned, as the standard says.  MPICH 4.0.x
 *    compares them as signed (MAX(0, UINT_MAX) = 0, pmodels/mpich#6083), in
 *    MPI_Reduce_local and its collectives alike; these kernels do not copy
 *    that, so only the MPI library's own routines (the fallback) give it.
 *  - Signed SUM/PROD are computed in the unsigned type (two's complement wrap,
 *    as MPICH's code does in practice, without undefined behaviour).
 *  - C99 complex PROD is GCC's expansion (ac - bd, ad + bc) with the Annex G
 *    recovery (libgcc __mul?c3) when both parts are NaN; the C++ and Fortran
 *    complex types are structs in MPICH with the textbook product and no
 *    recovery.
 *  - MINLOC/MAXLOC: strictly better value wins; equal values keep the smaller
 *    index; NaN on either side keeps inout.  Padding bytes are not written.
 *    MPI_2REAL and MPI_2DOUBLE_PRECISION hold their index in the value's type
 *    and the smaller is MPICH's MPL_MIN(inout's, in's): in's unless inout's
 *    compares less (so in's for -0 vs +0 or a NaN index).
 *  - MPI_C_BOOL, MPI_CXX_BOOL: any nonzero byte is true; results are 0 or 1.
 *    MPI_LOGICAL as MPICH's MPII_FROM_FLOG/MPII_TO_FLOG with gfortran's
 *    .FALSE. = 0 and .TRUE. = 1: any nonzero value is true, results 0 or 1.
 *  - Fortran types run the kernels of the C type of the same representation,
 *    chosen by MPI_Type_size (MPI_INTEGER of 4 bytes as int32_t, MPI_REAL of
 *    8 bytes as double without LXOR, MPI_COMPLEX as the C++ float complex,
 *    MPI_CHARACTER as MPI_CHAR), as MPICH computes them; a size without such
 *    a type has no kernel.  MPI_REAL16 (which MPICH 4.0.2 computes as no C
 *    type of its representation: binary128 1.5 + 2.25 gives a NaN),
 *    MPI_COMPLEX32 (MPICH rejects every op) and MPI_INTEGER16
 *    (MPI_DATATYPE_NULL in MPICH 4.0.2) have none.  A Fortran handle that is MPI_DATATYPE_NULL
 * (MPICH built without Fortran) matches nothing.
 *  - No contraction into FMA (MPICH's library is built for baseline x86-64)
 *    and no -ffast-math.
 * MPIX_C_FLOAT16 has no kernels: MPICH 4.0.2 accepts it and aborts in the op.
 * As for MPI_Reduce_local, in and inout must not overlap (the kernels take
 * them restrict).
 */
#include "rt.h"

#include <limits.h>
#include <pthread.h>
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

/* Rows for Fortran semantics no C type has, in the same form; the handle is
 * the Fortran type each was made for, which reaches it through
 * TRD__FORTRAN_TYPES below (by size), not by this column. */
#define TRD__FORTRAN_ROWS(X)                                                                       \
    X(MPI_REAL, freal, float, float, FREAL)                                                        \
    X(MPI_DOUBLE_PRECISION, fdouble, double, double, FREAL)                                        \
    X(MPI_LOGICAL, flogical, MPI_Fint, MPI_Fint, LOGICAL)                                          \
    X(MPI_2REAL, f2real, float, float, FPAIR)                                                      \
    X(MPI_2DOUBLE_PRECISION, f2double, double, double, FPAIR)

#define TRD__ROWS(X) TRD__TYPES(X) TRD__FORTRAN_ROWS(X)

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
    TRD__ROWS(X)
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
/* The same loops on an unsigned T: MIN and MAX compare as unsigned, the
 * standard's answer, not MPICH 4.0.x's signed one. */
#define TRD__DEF_UNSIGNED TRD__DEF_INTEGER

#define TRD__DEF_REAL(name, T, ADD, MUL)                                                           \
    TRD__LOOP(k_##name##_max, T, TRD__MAX(a, b))                                                   \
    TRD__LOOP(k_##name##_min, T, TRD__MIN(a, b))                                                   \
    TRD__LOOP(k_##name##_sum, T, ADD(a, b))                                                        \
    TRD__LOOP(k_##name##_prod, T, MUL(a, b))                                                       \
    TRD__LOOP(k_##name##_lxor, T, (a != 0) != (b != 0))
#define TRD__DEF_FLOATING(name, T, A) TRD__DEF_REAL(name, T, TRD__ADD_N, TRD__MUL_N)
/* Fortran REAL: MPICH 4.0.2 accepts LAND, LOR and LXOR on it but leaves inout
 * as it was, so those have no kernel. */
#define TRD__DEF_FREAL(name, T, A)                                                                 \
    TRD__LOOP(k_##name##_max, T, TRD__MAX(a, b))                                                   \
    TRD__LOOP(k_##name##_min, T, TRD__MIN(a, b))                                                   \
    TRD__LOOP(k_##name##_sum, T, TRD__ADD_N(a, b))                                                 \
    TRD__LOOP(k_##name##_prod, T, TRD__MUL_N(a, b))
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

/* MPICH's loop for the Fortran pairs (two of A, the index in A too): on equal
 * values the index is MPL_MIN(la, lb), i.e. la only when it compares less. */
#define TRD__FLOC_LOOP(fn, A, better)                                                              \
    TRD__KERNEL(fn)                                                                                \
    {                                                                                              \
        const A *restrict in = in_;                                                                \
        A *restrict io = inout_;                                                                   \
        for (size_t i = 0; i < count; i++) {                                                       \
            A a = io[2 * i], b = in[2 * i];                                                        \
            A la = io[2 * i + 1], lb = in[2 * i + 1];                                              \
            int take = better(b, a), tie = (a == b);                                               \
            io[2 * i] = take ? b : a;                                                              \
            io[2 * i + 1] = take ? lb : tie ? (la < lb ? la : lb) : la;                            \
        }                                                                                          \
    }

#define TRD__DEF_FPAIR(name, T, A)                                                                 \
    TRD__FLOC_LOOP(k_##name##_minloc, A, TRD__LESS)                                                \
    TRD__FLOC_LOOP(k_##name##_maxloc, A, TRD__GREATER)

#define X(handle, name, ctype, atype, class) TRD__DEF_##class(name, ctype, atype)
TRD__ROWS(X)
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
#define TRD__ROW_FREAL(name)                                                                       \
    {                                                                                              \
        [TRD__OP_MAX] = k_##name##_max, [TRD__OP_MIN] = k_##name##_min,                            \
        [TRD__OP_SUM] = k_##name##_sum, [TRD__OP_PROD] = k_##name##_prod,                          \
    }
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
#define TRD__ROW_FPAIR TRD__ROW_PAIR

static const trd_kernel_fn trd__kernels[TRD__TYPE_INDEX_MAX][TRD__OP_INDEX_MAX] = {
#define X(handle, name, ctype, atype, class) [TRD__TYPE_##name] = TRD__ROW_##class(name),
    TRD__ROWS(X)
#undef X
};

/* ---- Fortran types ------------------------------------------------------------
 * F(handle, family): the row of a Fortran type is the row of its family whose
 * element has the type's MPI_Type_size (trd__family_row), as MPICH computes it
 * with the C type of that size.  Listed here and not in the C table since
 * their size is known only at run time (MPICH can be built with 8-byte INTEGER
 * and REAL). */
#define TRD__FORTRAN_TYPES(F)                                                                      \
    F(MPI_CHARACTER, CHARACTER)                                                                    \
    F(MPI_INTEGER, INTEGER)                                                                        \
    F(MPI_INTEGER1, INTEGER)                                                                       \
    F(MPI_INTEGER2, INTEGER)                                                                       \
    F(MPI_INTEGER4, INTEGER)                                                                       \
    F(MPI_INTEGER8, INTEGER)                                                                       \
    F(MPI_REAL, REAL)                                                                              \
    F(MPI_REAL4, REAL)                                                                             \
    F(MPI_REAL8, REAL)                                                                             \
    F(MPI_DOUBLE_PRECISION, REAL)                                                                  \
    F(MPI_COMPLEX, COMPLEX)                                                                        \
    F(MPI_COMPLEX8, COMPLEX)                                                                       \
    F(MPI_COMPLEX16, COMPLEX)                                                                      \
    F(MPI_DOUBLE_COMPLEX, COMPLEX)                                                                 \
    F(MPI_LOGICAL, LOGICAL)                                                                        \
    F(MPI_2INTEGER, 2INTEGER)                                                                      \
    F(MPI_2REAL, 2REAL)                                                                            \
    F(MPI_2DOUBLE_PRECISION, 2REAL)

/* Types an mpi.h may leave out (Open MPI defines the sized Fortran types only
 * where its Fortran compiler has them, and long long and the C complex types
 * only where its C compiler has them) count as MPI_DATATYPE_NULL, as MPICH
 * defines a type it was built without: the table skips them. */
#ifndef MPI_LONG_LONG
#define MPI_LONG_LONG MPI_DATATYPE_NULL
#endif
#ifndef MPI_UNSIGNED_LONG_LONG
#define MPI_UNSIGNED_LONG_LONG MPI_DATATYPE_NULL
#endif
#ifndef MPI_C_FLOAT_COMPLEX
#define MPI_C_FLOAT_COMPLEX MPI_DATATYPE_NULL
#endif
#ifndef MPI_C_DOUBLE_COMPLEX
#define MPI_C_DOUBLE_COMPLEX MPI_DATATYPE_NULL
#endif
#ifndef MPI_C_LONG_DOUBLE_COMPLEX
#define MPI_C_LONG_DOUBLE_COMPLEX MPI_DATATYPE_NULL
#endif
#ifndef MPI_INTEGER1
#define MPI_INTEGER1 MPI_DATATYPE_NULL
#endif
#ifndef MPI_INTEGER2
#define MPI_INTEGER2 MPI_DATATYPE_NULL
#endif
#ifndef MPI_INTEGER4
#define MPI_INTEGER4 MPI_DATATYPE_NULL
#endif
#ifndef MPI_INTEGER8
#define MPI_INTEGER8 MPI_DATATYPE_NULL
#endif
#ifndef MPI_REAL4
#define MPI_REAL4 MPI_DATATYPE_NULL
#endif
#ifndef MPI_REAL8
#define MPI_REAL8 MPI_DATATYPE_NULL
#endif
#ifndef MPI_COMPLEX8
#define MPI_COMPLEX8 MPI_DATATYPE_NULL
#endif
#ifndef MPI_COMPLEX16
#define MPI_COMPLEX16 MPI_DATATYPE_NULL
#endif

enum trd__family {
    TRD__FAMILY_CHARACTER,
    TRD__FAMILY_INTEGER,
    TRD__FAMILY_REAL,
    TRD__FAMILY_COMPLEX,
    TRD__FAMILY_LOGICAL,
    TRD__FAMILY_2INTEGER,
    TRD__FAMILY_2REAL,
    TRD__FAMILY_MAX
};

/* MPICH computes MPI_CHARACTER as char and the Fortran and C++ complex types
 * as structs (the textbook product); Open MPI 4.1 computes MPI_CHARACTER as
 * unsigned char and both complex kinds as C99 complex (Annex G product). */
#if defined(OPEN_MPI)
#define TRD__FORTRAN_CHARACTER_ROW TRD__TYPE_uchar
#define TRD__FORTRAN_COMPLEX_ROW(real) TRD__TYPE_c##real
#define TRD__CXX_COMPLEX_AS_C99 1
#else
#define TRD__FORTRAN_CHARACTER_ROW TRD__TYPE_char
#define TRD__FORTRAN_COMPLEX_ROW(real) TRD__TYPE_cxx##real
#define TRD__CXX_COMPLEX_AS_C99 0
#endif

/* The row for a Fortran type of this family and size in bytes, or -1. */
static int trd__family_row(enum trd__family family, size_t size)
{
    switch (family) {
    case TRD__FAMILY_CHARACTER:
        return size == sizeof(char) ? TRD__FORTRAN_CHARACTER_ROW : -1;
    case TRD__FAMILY_INTEGER:
        return size == sizeof(int8_t)    ? TRD__TYPE_int8
               : size == sizeof(int16_t) ? TRD__TYPE_int16
               : size == sizeof(int32_t) ? TRD__TYPE_int32
               : size == sizeof(int64_t) ? TRD__TYPE_int64
                                         : -1;
    case TRD__FAMILY_REAL:
        return size == sizeof(float)    ? TRD__TYPE_freal
               : size == sizeof(double) ? TRD__TYPE_fdouble
                                        : -1;
    case TRD__FAMILY_COMPLEX:
        return size == 2 * sizeof(float)    ? TRD__FORTRAN_COMPLEX_ROW(float)
               : size == 2 * sizeof(double) ? TRD__FORTRAN_COMPLEX_ROW(double)
                                            : -1;
    case TRD__FAMILY_LOGICAL:
        return size == sizeof(MPI_Fint) ? TRD__TYPE_flogical : -1;
    case TRD__FAMILY_2INTEGER:
        return size == sizeof(struct trd__2int) ? TRD__TYPE_2int : -1;
    case TRD__FAMILY_2REAL:
        return size == 2 * sizeof(float)    ? TRD__TYPE_f2real
               : size == 2 * sizeof(double) ? TRD__TYPE_f2double
                                            : -1;
    default:
        return -1;
    }
}

/* ---- Handles to rows -----------------------------------------------------------
 * Datatype and op handles are integer constants in MPICH but addresses of the
 * library's objects in Open MPI and SMPI, so no switch: open-addressing hash
 * tables from a handle's bits to its row or op index, filled once at the first
 * lookup (MPI is initialized then: Fortran rows need MPI_Type_size) and
 * read-only afterwards.  A handle is compared with ==; aliases (SMPI's
 * MPI_LOGICAL is MPI_INT) keep the first row listed. */
#define TRD__FORTRAN_COUNT (0 TRD__FORTRAN_TYPES(TRD__COUNT_F))
#define TRD__COUNT_F(handle, family) +1
#define TRD__TYPE_BITS 7 /* 128 slots: at most half full */
#define TRD__OP_BITS 5   /* 32 slots for 12 ops */
_Static_assert(2 * (TRD__TYPE_INDEX_MAX + TRD__FORTRAN_COUNT) <= (1 << TRD__TYPE_BITS),
               "type table too small");
_Static_assert(2 * TRD__OP_INDEX_MAX <= (1 << TRD__OP_BITS), "op table too small");

struct trd__type_slot {
    MPI_Datatype handle;
    int row; /* row + 1; 0: empty slot */
    /* Bit o: MPI_Reduce_local was asked about (handle, op o), and accepted
     * it.  A kernel runs only on a pair the MPI library accepts, so that the
     * library raises its own error on the others. */
    atomic_uint asked, accepted;
};
struct trd__op_slot {
    MPI_Op handle;
    int index; /* op index + 1; 0: empty slot */
};
static struct trd__type_slot trd__type_slots[1 << TRD__TYPE_BITS];
static struct trd__op_slot trd__op_slots[1 << TRD__OP_BITS];
static pthread_once_t trd__handles_once = PTHREAD_ONCE_INIT;

/* A handle's bits as an integer: an int in MPICH, a pointer elsewhere. */
#define TRD__KEY(handle) trd__key(&(handle), sizeof(handle))
static inline uint64_t trd__key(const void *handle, size_t size)
{
    uint64_t key = 0;
    memcpy(&key, handle, size < sizeof key ? size : sizeof key);
    return key;
}

/* The first slot to probe, of 2^bits: Fibonacci hashing spreads MPICH's
 * consecutive integers and Open MPI's aligned addresses alike. */
static inline unsigned trd__slot(uint64_t key, unsigned bits)
{
    return (unsigned)((key * 0x9e3779b97f4a7c15ull) >> (64 - bits));
}

static void trd__add_type(MPI_Datatype handle, int row)
{
    const unsigned mask = (1u << TRD__TYPE_BITS) - 1;
    if (handle == MPI_DATATYPE_NULL || row < 0)
        return;
    for (unsigned i = trd__slot(TRD__KEY(handle), TRD__TYPE_BITS);; i = (i + 1) & mask) {
        struct trd__type_slot *s = &trd__type_slots[i];
        if (!s->row) {
            s->handle = handle;
            s->row = row + 1;
            return;
        }
        if (s->handle == handle)
            return;
    }
}

/* Whether handle's elements are bytes bytes from offset 0 (lower bound 0,
 * extent bytes): the kernel's C type has this MPI's representation. */
static int trd__layout_is(MPI_Datatype handle, size_t bytes)
{
    MPI_Aint lb, extent;
    return MPI_Type_get_extent(handle, &lb, &extent) == MPI_SUCCESS && lb == 0 &&
           extent == (MPI_Aint)bytes;
}

static void trd__add_c_type(MPI_Datatype handle, int row, size_t bytes)
{
    if (handle != MPI_DATATYPE_NULL && trd__layout_is(handle, bytes))
        trd__add_type(handle, row);
}

/* A Fortran type of size 0 is one the MPI library was built without (Open
 * MPI without Fortran keeps the handles). */
static void trd__add_fortran_type(MPI_Datatype handle, enum trd__family family)
{
    int size;
    if (handle != MPI_DATATYPE_NULL && MPI_Type_size(handle, &size) == MPI_SUCCESS && size > 0 &&
        trd__layout_is(handle, (size_t)size))
        trd__add_type(handle, trd__family_row(family, (size_t)size));
}

/* Bytes per element of a row of this class, C type ctype: the C++ complex rows
 * are written on their component type. */
#define TRD__BYTES_INTEGER(ctype) sizeof(ctype)
#define TRD__BYTES_UNSIGNED TRD__BYTES_INTEGER
#define TRD__BYTES_FLOATING TRD__BYTES_INTEGER
#define TRD__BYTES_EXTENDED TRD__BYTES_INTEGER
#define TRD__BYTES_COMPLEX TRD__BYTES_INTEGER
#define TRD__BYTES_EXTENDED_COMPLEX TRD__BYTES_INTEGER
#define TRD__BYTES_CXX_COMPLEX(ctype) (2 * sizeof(ctype))
#define TRD__BYTES_CXX_EXTENDED_COMPLEX TRD__BYTES_CXX_COMPLEX
#define TRD__BYTES_LOGICAL TRD__BYTES_INTEGER
#define TRD__BYTES_BYTE TRD__BYTES_INTEGER
#define TRD__BYTES_PAIR TRD__BYTES_INTEGER

static void trd__handles_init(void)
{
    /* in the order of enum trd__op_index */
    const MPI_Op ops[TRD__OP_INDEX_MAX] = {MPI_MAX,  MPI_MIN,  MPI_SUM,    MPI_PROD,
                                           MPI_LAND, MPI_BAND, MPI_LOR,    MPI_BOR,
                                           MPI_LXOR, MPI_BXOR, MPI_MINLOC, MPI_MAXLOC};
    const unsigned mask = (1u << TRD__OP_BITS) - 1;
    if (TRD__CXX_COMPLEX_AS_C99) { /* listed first, these rows win */
        trd__add_c_type(MPI_CXX_FLOAT_COMPLEX, TRD__TYPE_cfloat, sizeof(float _Complex));
        trd__add_c_type(MPI_CXX_DOUBLE_COMPLEX, TRD__TYPE_cdouble, sizeof(double _Complex));
        trd__add_c_type(MPI_CXX_LONG_DOUBLE_COMPLEX, TRD__TYPE_cldouble,
                        sizeof(long double _Complex));
    }
#define X(handle, name, ctype, atype, class)                                                       \
    trd__add_c_type(handle, TRD__TYPE_##name, TRD__BYTES_##class(ctype));
    TRD__TYPES(X)
#undef X
#define F(handle, family) trd__add_fortran_type(handle, TRD__FAMILY_##family);
    TRD__FORTRAN_TYPES(F)
#undef F
    for (int o = 0; o < TRD__OP_INDEX_MAX; o++) {
        unsigned i = trd__slot(TRD__KEY(ops[o]), TRD__OP_BITS);
        while (trd__op_slots[i].index && trd__op_slots[i].handle != ops[o])
            i = (i + 1) & mask;
        if (!trd__op_slots[i].index) {
            trd__op_slots[i].handle = ops[o];
            trd__op_slots[i].index = o + 1;
        }
    }
}

static struct trd__type_slot *trd__find_type(MPI_Datatype type)
{
    const unsigned mask = (1u << TRD__TYPE_BITS) - 1;
    for (unsigned i = trd__slot(TRD__KEY(type), TRD__TYPE_BITS);; i = (i + 1) & mask) {
        struct trd__type_slot *s = &trd__type_slots[i];
        if (!s->row)
            return NULL;
        if (s->handle == type)
            return s;
    }
}

/* The op's index, or -1: user ops, MPI_REPLACE, MPI_NO_OP, MPI_OP_NULL. */
static int trd__find_op(MPI_Op op)
{
    const unsigned mask = (1u << TRD__OP_BITS) - 1;
    for (unsigned i = trd__slot(TRD__KEY(op), TRD__OP_BITS);; i = (i + 1) & mask) {
        if (!trd__op_slots[i].index)
            return -1;
        if (trd__op_slots[i].handle == op)
            return trd__op_slots[i].index - 1;
    }
}

static int trd__ask_reduce_local(MPI_Datatype type, MPI_Op op);

trd_kernel_fn trd_kernel_lookup(MPI_Datatype type, MPI_Op op)
{
    pthread_once(&trd__handles_once, trd__handles_init);
    struct trd__type_slot *s = trd__find_type(type);
    int o = trd__find_op(op);
    if (!s || o < 0)
        return NULL;
    trd_kernel_fn fn = trd__kernels[s->row - 1][o];
    unsigned bit = 1u << o;
    if (!fn)
        return NULL;
    /* Racing first lookups ask the same question and get the same answer. */
    if (!(atomic_load_explicit(&s->asked, memory_order_acquire) & bit)) {
        if (trd__ask_reduce_local(type, op))
            atomic_fetch_or_explicit(&s->accepted, bit, memory_order_relaxed);
        atomic_fetch_or_explicit(&s->asked, bit, memory_order_release);
    }
    return atomic_load_explicit(&s->accepted, memory_order_relaxed) & bit ? fn : NULL;
}

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
    r->shift = 0;

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
    const char *src = (const char *)in + r->shift;
    char *dst = (char *)inout + r->shift;
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

/* ---- Pairs without a kernel -------------------------------------------------- */

/* The (type, op) pairs asked so far: a slot is claimed (BUSY), filled, then
 * published (READY).  When every slot is taken a pair is asked again each
 * time, which is slower, never wrong. */
#define TRD__ASKED 64
enum { TRD__SLOT_EMPTY, TRD__SLOT_BUSY, TRD__SLOT_READY };
static struct {
    atomic_int state;
    MPI_Datatype type;
    MPI_Op op;
    int accepted;
} trd__asked[TRD__ASKED];

/* MPI_Reduce_local's verdict on (type, op), asked now.  Count 0: MPICH checks
 * the pair without running the op (it aborts inside some ops it accepts, e.g.
 * on MPIX_C_FLOAT16).  Its error goes to the handler of MPI_COMM_WORLD (MPICH
 * 4.0, Open MPI) or MPI_COMM_SELF (MPI 4), fatal by default, so both return
 * codes while asking (for another thread too, in that moment: once per pair). */
static int trd__ask_reduce_local(MPI_Datatype type, MPI_Op op)
{
    unsigned char in[64] = {0}, inout[64] = {0};
    MPI_Errhandler world = MPI_ERRHANDLER_NULL, self = MPI_ERRHANDLER_NULL;
    int have = MPI_Comm_get_errhandler(MPI_COMM_WORLD, &world) == MPI_SUCCESS &&
               MPI_Comm_get_errhandler(MPI_COMM_SELF, &self) == MPI_SUCCESS;
    if (have) {
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    }
    int accepted = have && MPI_Reduce_local(in, inout, 0, type, op) == MPI_SUCCESS;
    if (world != MPI_ERRHANDLER_NULL) {
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, world);
        MPI_Errhandler_free(&world);
    }
    if (self != MPI_ERRHANDLER_NULL) {
        MPI_Comm_set_errhandler(MPI_COMM_SELF, self);
        MPI_Errhandler_free(&self);
    }
    return accepted;
}

int trd_reduce_local_accepts(MPI_Datatype type, MPI_Op op)
{
    /* one-sided operations only, whatever MPI_Reduce_local says */
    if (op == MPI_REPLACE || op == MPI_NO_OP)
        return 0;
    for (int i = 0; i < TRD__ASKED; i++)
        if (atomic_load_explicit(&trd__asked[i].state, memory_order_acquire) == TRD__SLOT_READY &&
            trd__asked[i].type == type && trd__asked[i].op == op)
            return trd__asked[i].accepted;
    int accepted = trd__ask_reduce_local(type, op);

    for (int i = 0; i < TRD__ASKED; i++) {
        int empty = TRD__SLOT_EMPTY;
        if (atomic_compare_exchange_strong(&trd__asked[i].state, &empty, TRD__SLOT_BUSY)) {
            trd__asked[i].type = type;
            trd__asked[i].op = op;
            trd__asked[i].accepted = accepted;
            atomic_store_explicit(&trd__asked[i].state, TRD__SLOT_READY, memory_order_release);
            break;
        }
    }
    return accepted;
}
