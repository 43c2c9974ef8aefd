/* treeduce runtime interface for generated code.
 *
 * Generated routines (generated/<machine>/trd_<machine>.c) include this header
 * and MPI only.  Applications use treeduce.h and the generated header.
 * Every function returns an MPI error code (MPI_SUCCESS on success) unless it
 * says otherwise.
 */
#ifndef TREEDUCE_RT_H
#define TREEDUCE_RT_H

#include <mpi.h>
#include <stddef.h>

#include "trd_nap.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Reduction kernels (runtime/kernels.c) ---------------------------- */

/* inout[i] = in[i] op inout[i] for i in [0, count): the argument order of
 * MPI_Reduce_local, so that for a non-commutative op "in" is the left operand.
 * count in elements. */
typedef void (*trd_kernel_fn)(const void *in, void *inout, size_t count);

/* The kernel for a predefined (named) datatype and predefined op, or NULL if
 * the pair is not one MPI defines (e.g. MPI_BAND on MPI_DOUBLE), the type is
 * not predefined, or op is a user op.  Covers every predefined C and
 * fixed-width integer type, floating types incl. long double and the C complex
 * types (SUM, PROD only), MPI_C_BOOL, MPI_BYTE (bitwise ops), and the
 * MINLOC/MAXLOC pair types (MPI_FLOAT_INT, MPI_DOUBLE_INT, MPI_LONG_INT,
 * MPI_2INT, MPI_SHORT_INT, MPI_LONG_DOUBLE_INT) with MPI's tie rule (the
 * smaller index wins). */
trd_kernel_fn trd_kernel_lookup(MPI_Datatype type, MPI_Op op);

/* A reduction operator resolved once per call: the kernel if there is one,
 * otherwise MPI_Reduce_local with (op, type). */
typedef struct trd_reducer {
    trd_kernel_fn fn; /* NULL: use MPI_Reduce_local */
    MPI_Op op;
    MPI_Datatype type;
    size_t extent; /* bytes per element */
    int commutative;
} trd_reducer;

/* Fill r for (type, op).  Returns MPI_SUCCESS, or MPI_ERR_TYPE if type is not
 * a predefined datatype (the caller then falls back to the PMPI routine). */
int trd_reducer_init(trd_reducer *r, MPI_Datatype type, MPI_Op op);

/* inout[0:count) = in[0:count) op inout[0:count); count in elements. */
int trd_reduce(const trd_reducer *r, const void *in, void *inout, size_t count);

#ifdef __cplusplus
}
#endif
#endif
