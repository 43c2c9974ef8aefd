/* Verification of every schedule the runtime can run for a machine, before
 * the generator writes anything [STYLE: validate what you build]. */
#ifndef TRD_CHECK_H
#define TRD_CHECK_H

#include <stdio.h>

#include "diag.h"
#include "plan.h"
#include "trd_sched.h"
#include "topo.h"
#include "wisdom.h"

typedef struct trd_check_opts {
    const char *input;      /* the topology file, for the messages */
    const char *break_spec; /* testing: "ALG:RANK:OP" drops that op from every schedule of a
                             * registry algorithm named ALG (any collective) before it is
                             * verified, so the refusal can be seen; NULL */
} trd_check_opts;

/* How one checked shape was proved. */
typedef struct trd_check_shape {
    int nnodes, ppn_min, ppn_max;
    int executed;   /* (algorithm, parameters) pairs verified by symbolic execution on it */
    int covered;    /* pairs above the rank limit covered by a smaller shape of its structure */
    int uncovered;  /* pairs above the limit that no verified shape covers */
    int rep_nnodes; /* the covering shape: rep_nnodes x ppn_min (0: none) */
    int ring_runs;  /* -1: not proved here; 0: its ring proved contention-free structurally */
    const char *uncovered_alg; /* the first uncovered pair's algorithm name */
} trd_check_shape;

#define TRD_CHECK_MAX_SHAPES 168

typedef struct trd_check_stats {
    int nverified;  /* schedules verified */
    int skipped;    /* (shape, algorithm) pairs above the rank limit, not executed */
    int covered;    /* of those, covered by a verified smaller shape of the same structure */
    int largest;    /* ranks of the largest verified shape */
    size_t ops;     /* ops executed symbolically */
    double seconds; /* CPU time */
    int nshapes;    /* shape[0..nshapes): every checked shape, planned ones first */
    trd_check_shape shape[TRD_CHECK_MAX_SHAPES];
} trd_check_stats;

/* Largest communicator a schedule is verified on at generation time; the
 * algorithms whose schedules or buffers grow as p^2 (TRD_ALGO_QUADRATIC,
 * reduce_scatter_block and allgather, whose buffers hold p blocks) up to
 * TRD_CHECK_MAX_QUADRATIC. */
#define TRD_CHECK_MAX_RANKS 64
#define TRD_CHECK_MAX_QUADRATIC 32
/* Larger shapes are not executed.  Each (algorithm, parameters) pair on such
 * a shape of uniform ranks per node is covered by the same planner verified
 * on a smaller shape of the same structure: the same ranks per node (and so
 * the same node phases, lanes and per-node radix) and a node count of the
 * same class, a power of two or not (which decides recursive doubling's and
 * halving's fold and NAP's short groups); representatives of 2 (powers of
 * two) or 3 nodes are verified for that, up to these ranks.  This is an
 * argument over the planners' code, not a proof at the larger shape: the
 * report says so, and says which pairs nothing covers. */
#define TRD_CHECK_COVER_RANKS 128
#define TRD_CHECK_COVER_QUADRATIC 128

/* Verify (verify.h) every schedule the runtime can run on t with plan p:
 *   - for every planned shape (nodes x ranks per node), for the whole
 *     machine with each node's own core count, and for a one-node machine
 *     its node: each allreduce algorithm the shape's size ranges choose,
 *     with its default and its searched parameters; recursive doubling in
 *     rank order (non-commutative operations); the one-node choice without
 *     shared memory (NAP, ring); every registered algorithm of the pieces
 *     (reduce_scatter_block, allgather, bcast, reduce) that accepts the
 *     shape, for commutative and non-commutative operations where it takes
 *     them (trd_select can choose any of them by size);
 *   - on a one-node shape of the first node type: every one-node algorithm
 *     of every collective (shm, shm:rx with the cores' prime factors,
 *     shm:tree:2, shm:cyclic, shm:socket, each piece's shm);
 * each at a few elements and at enough for a block per rank, in place and
 * not, roots 0 and p-1 for reduce and bcast; with and without shared memory
 * for the algorithms with node phases; with shared memory and no single
 * copy, single-copy reads, and reads and writes (from 0 bytes), at the
 * runtime's slot size and at a small one (chunks and slot reuse) for the
 * algorithms that use the segment; the call twice back to back where a
 * schedule uses the segment or counters; with the contention check on the
 * switch tree.  Algorithms above the rank limits are counted in
 * stats->skipped.  Returns TRD_OK, TRD_ERR_VERIFY with one error in d naming
 * the algorithm, the shape, the variant and the verifier's message (rank,
 * op, round, element), TRD_ERR_INPUT for a bad o->break_spec, or
 * TRD_ERR_NOMEM. */
int trd_check_schedules(trd_topo_t t, const trd_machine_plan *p, const trd_check_opts *o,
                        trd_diag *d, trd_check_stats *stats);

/* Verify, as trd_check_schedules verifies the planned choices, the
 * algorithm of each range of w (not the MPI library's, nor a range that
 * the model's tables take, TRD_WISDOM_MODEL) on its shape: the
 * first nnodes of t's nodes in ring order with ppn ranks each, a call of the
 * range's collective with a commutative operation, every variant.  A shape
 * above the rank limits is verified on 2 or 3 nodes (a power of two or not)
 * of the same ranks per node (the covering argument above; counted in
 * stats->covered).  An algorithm that does not plan for its shape (more
 * nodes than t has, parameters or a call it refuses) or fails verification
 * is an error in d at its range's line of its file (trd_wisdom_range_file:
 * a merged range names the file it came from).  stats counts what was
 * verified.  Returns TRD_OK, TRD_ERR_INPUT, TRD_ERR_VERIFY or
 * TRD_ERR_NOMEM. */
int trd_check_wisdom(trd_topo_t t, const trd_wisdom *w, const trd_check_opts *o, trd_diag *d,
                     trd_check_stats *stats);

/* For --explain and the summary line: what was proved how, per checked
 * shape (symbolic execution, the structural argument and its covering
 * shape, what nothing covers), from stats.  Returns TRD_OK. */
int trd_check_report(FILE *f, const trd_check_stats *stats);

#endif
