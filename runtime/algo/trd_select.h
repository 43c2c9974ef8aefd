/* Selection: which algorithm runs a call when nothing is forced.  The
 * generated tables (size ranges per planned communicator shape, chosen by
 * the generator on the cost model) and the fixed rules of the pieces meet
 * here; the runtime selects with it per call and the generator verifies what
 * it can select.  Selection is apart from the algorithms: the planners know
 * no thresholds.  Pure C, no MPI.
 */
#ifndef TRD_SELECT_H
#define TRD_SELECT_H

#include <stddef.h>

#include "algo.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One message-size range of the generated selection [MPICH §3]. */
typedef struct trd_size_choice {
    size_t below;       /* the range ends before this many bytes; SIZE_MAX: no end */
    const char *alg;    /* the algorithm's registry name; in a measured table
                         * (trd_tuned_shape) NULL: the model's range or the
                         * piece's rule there (trd_select) */
    const char *params; /* its parameters, "" the default (chosen on the schedules' cost
                         * model for the shape's rank count) */
} trd_size_choice;

/* The size ranges planned for communicators of nnodes nodes with ppn ranks
 * on each (commutative ops).  The generator plans nnodes = 2, 4, 8, ... and
 * the machine's node count, times ppn = 1, 2, 4, ... and the machine's
 * smallest core count. */
typedef struct trd_shape_choice {
    int nnodes, ppn;
    const trd_size_choice *choices; /* [nchoices], the last one ends at SIZE_MAX */
    int nchoices;
} trd_shape_choice;

/* Index of the planned shape a communicator of nnodes nodes with at most ppn
 * ranks on a node uses: the largest planned node count <= nnodes (the
 * smallest if none is), and among those shapes the largest planned ppn <= ppn
 * (the smallest if none is).  -1 if nshapes is 0. */
int trd_shape_pick(const trd_shape_choice *shapes, int nshapes, int nnodes, int ppn);

/* Most size ranges of a table the runtime reads (planned or measured: a
 * measured table holds the ranges of several wisdom files and the model's
 * entries between them). */
#define TRD_MAX_RANGES 32

/* The size ranges measured on the machine for one collective and one
 * communicator shape (treeduce-tune's wisdom, treeduce-gen --wisdom): a
 * communicator of exactly nnodes nodes with ppn ranks on each uses them for
 * every call of coll with a predefined commutative operation (allgather,
 * bcast: every call), in place of the model's ranges and of the pieces'
 * fixed rules.  Bytes are the call's count times the type's extent (the
 * block of one rank for reduce_scatter_block and allgather).  An algorithm
 * named "mpi" hands the range to the MPI library's own routine; an entry
 * with alg NULL hands it back to the selection without measurements (the
 * sizes no wisdom range covers, and those where the check found the
 * model's choice faster). */
typedef struct trd_tuned_shape {
    int coll; /* enum trd_coll */
    int nnodes, ppn;
    const trd_size_choice *choices; /* [nchoices], the last one ends at SIZE_MAX */
    int nchoices;
} trd_tuned_shape;

/* A communicator's selection, resolved once from the machine's tables. */
typedef struct trd_selection {
    int nchoices;
    struct {
        size_t below;
        const trd_algo *alg;
        const char *params; /* "" where the communicator's rank count is not the shape's */
    } choice[TRD_MAX_RANGES];
    size_t nap_max_bytes_1node; /* one node without shared memory: NAP below, ring from */
    /* the measured ranges of the communicator's exact shape, per collective
     * (trd_selection_tune); ntuned[coll] 0: none */
    int ntuned[TRD_COLL_MAX];
    struct {
        size_t below;
        const trd_algo *alg; /* NULL: the model's range or the piece's rule */
        const char *params;
    } tuned[TRD_COLL_MAX][TRD_MAX_RANGES];
} trd_selection;

/* The one-node rule without a segment (trd_select): the smallest message
 * size in bytes (>= 1) from which the ring's closed form [MPICH §3] is below
 * NAP's over ppn ranks on one node with link classes l, which trd_select
 * takes as nap_max_bytes_1node; SIZE_MAX if never within 1 TiB.  The
 * generator writes it into the machine's tables. */
size_t trd_select_noseg_crossover(const trd_levels *l, int ppn);

/* Resolve the tables for a communicator of nnodes nodes, at most ppn_max
 * ranks on a node and nranks ranks.  Returns TRD_OK, or TRD_ERR_INPUT with
 * why (a table
 * naming an algorithm this runtime does not have, or too many ranges). */
int trd_selection_init(trd_selection *sel, const trd_shape_choice *shapes, int nshapes,
                       size_t nap_max_bytes_1node, int nnodes, int ppn_max, int nranks, char *why,
                       size_t whylen);

/* Resolve into sel the measured ranges of tuned[0..ntuned) whose shape is
 * exactly that of a communicator of nnodes nodes with ppn ranks on each
 * (ppn 0: its nodes hold different counts, none is); an entry with alg NULL
 * is kept as such (the model's there).  Returns TRD_OK, or TRD_ERR_INPUT
 * with why where one of them names an algorithm this runtime does not have
 * for its collective or has no or too many ranges: sel then has none. */
int trd_selection_tune(trd_selection *sel, const trd_tuned_shape *tuned, int ntuned, int nnodes,
                       int ppn, char *why, size_t whylen);

/* The algorithm that runs call on sh (at least 2 ranks) when nothing is
 * forced, and its parameters (*params, "" the default).  First the measured
 * range of sel that holds the call's bytes (count x extent), where
 * trd_selection_tune found one for call's collective: allgather and bcast
 * always, the reductions for a predefined commutative op; where that range
 * has no algorithm (a size no measurement covers, or one the check gave to
 * the model), or none was measured:
 *   allreduce  a user-defined op (call->whole): shm on one node with a
 *              segment where the vector fits a slot, else rd, so that the op
 *              sees whole vectors at every size, as MPICH calls it;
 *              one node with a segment: shm (any op: local order is rank
 *              order); a non-commutative op: rd in rank order; one node
 *              without a segment: nap below nap_max_bytes_1node, else ring;
 *              otherwise the range of sel that holds the message's bytes;
 *   reduce     a user-defined op: shm on one node up to a slot, else
 *              binomial (whole vectors); otherwise as below;
 *   the pieces one node with a segment: their shm algorithm; otherwise
 *              MPICH's rules by message size, power-of-two size and
 *              commutativity [MPICH §4] (select.c). */
const trd_algo *trd_select(const trd_selection *sel, const trd_shape *sh, const trd_call *call,
                           const char **params);

#ifdef __cplusplus
}
#endif

#endif
