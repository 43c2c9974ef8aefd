/* Verification of the schedules a machine's plan uses, before the generator
 * writes anything. */
#ifndef TRD_CHECK_H
#define TRD_CHECK_H

#include "diag.h"
#include "plan.h"
#include "sched.h"

typedef struct trd_check_opts {
    const char *input;       /* the topology file, for the messages */
    const char *break_spec;  /* testing: "ALG:RANK:OP" drops that op from every ALG schedule
                              * before it is verified, so the refusal can be seen; NULL */
} trd_check_opts;

typedef struct trd_check_stats {
    int nverified;  /* schedules verified */
    int skipped;    /* (shape, algorithm) pairs not verified: not planned as a schedule yet, or
                     * above the rank limit */
    int largest;    /* ranks of the largest verified shape */
    size_t ops;     /* ops executed symbolically */
    double seconds; /* CPU time */
} trd_check_stats;

/* For every planned shape of p (nodes x ranks per node, up to 4096 ranks;
 * the ring up to 1024) and for the whole machine with each node's own core
 * count: plan every algorithm its size ranges choose that is available as a
 * schedule (sched.h), plus recursive doubling in rank order (what
 * non-commutative operations run), at two counts, with and without shared
 * memory, and verify each on the switch tree of t (contention for the
 * ring).  Returns 0, or -1 with one error in d naming the algorithm, the
 * shape and the verifier's message (rank, op, round, element). */
int trd_check_schedules(trd_topo_t t, const trd_plan *p, const trd_check_opts *o, trd_diag *d,
                        trd_check_stats *stats);

/* The shape of nnodes of t's nodes (0: all) in ring order with ppn ranks
 * each (0: each node's cores), ranks in ring order; machine gets the node
 * map (free it after st).  Returns 0, or -1 out of memory. */
int trd_machine_shape(trd_topo_t t, int nnodes, int ppn, trd_shape_store *st, int **machine);

/* alpha_r / alpha_p where the topology gives no measured value: four
 * messages in flight cost about two latencies [RM Eq. 3, Fig. 4]. */
#define TRD_ALPHA_R_RATIO 0.25

/* For --explain: the whole machine's size ranges evaluated on their
 * schedules with the cost model of sched.h (trd_sched_cost), chosen and
 * runner-up at each range's typical size, in microseconds; machines of up
 * to 1024 ranks. */
void trd_explain_schedules(FILE *f, trd_topo_t t, const trd_plan *p);

typedef struct trd_search_stats {
    int searched;   /* ranges whose parameters were searched */
    int evaluated;  /* schedules timed */
    double seconds; /* CPU time */
} trd_search_stats;

/* The parameters of the chosen algorithms, from the schedules' cost model:
 * for every planned shape of up to 4096 ranks and every range that chose
 * recursive multiplying, the bases [RM §4.1] -- the default schedule or one
 * of the orderings (increasing, decreasing) of each multiset of bases 2..8
 * whose product is the rank count, at most 64 -- with the lowest predicted
 * time at the range's typical size go to choice[].params ("" when the
 * default wins).  The runtime uses them where the communicator has the
 * shape's rank count, the default otherwise. */
void trd_search_params(trd_topo_t t, trd_plan *p, trd_search_stats *stats);

/* --predict: CSV "algorithm,bytes,predicted_us" of every planner's schedule
 * over the whole machine (each node's cores, shared memory on the node,
 * commutative op, doubles, out of place) for 8 B .. max_bytes in powers of
 * two, timed by trd_sched_cost.  Returns 0, or -1. */
int trd_predict_csv(FILE *f, trd_topo_t t, const trd_plan *p, double max_bytes);

#endif
