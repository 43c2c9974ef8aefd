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
 * ring); each with its default parameters and with the range's searched
 * ones (trd_search_params), which the runtime uses where the communicator
 * has the planned rank count.  Returns 0, or -1 with one error in d naming
 * the algorithm, the shape and the verifier's message (rank, op, round,
 * element). */
int trd_check_schedules(trd_topo_t t, const trd_plan *p, const trd_check_opts *o, trd_diag *d,
                        trd_check_stats *stats);

/* The shape of nnodes of t's nodes (0: all) in ring order with ppn ranks
 * each (0: each node's cores), ranks in ring order; machine gets the node
 * map (free it after st).  Returns 0, or -1 out of memory. */
int trd_machine_shape(trd_topo_t t, int nnodes, int ppn, trd_shape_store *st, int **machine);

/* alpha_r / alpha_p where the topology gives no measured value: four
 * messages in flight cost about two latencies [RM Eq. 3, Fig. 4]. */
#define TRD_ALPHA_R_RATIO 0.25

/* For --explain: every candidate's schedule over the whole machine (each
 * node's own core count) timed by trd_sched_cost at 8 B .. 64 MiB in
 * factors of 16, in microseconds; machines of up to 1024 ranks. */
void trd_explain_schedules(FILE *f, trd_topo_t t, const trd_plan *p);

/* A bound below the ring's timed cost (trd_sched_cost of the "ring"
 * schedule over sh, sh->machine_node set) for count elements of extent
 * bytes, in seconds: each rank runs 2(p-1) exchanges in turn, each at least
 * a latency of the cheapest link to its ring successor (the switch-tree path
 * between nodes, the cheaper of the package and node links on one); it
 * sends every block but the largest in each half at that link's bandwidth at
 * best, and reads and reduces those of the first half (package link
 * bandwidth, gamma_s_per_byte) [TREE §3.2, MPICH §3]. */
double trd_ring_bound(trd_topo_t t, const trd_shape *sh, size_t count, size_t extent,
                      double gamma_s_per_byte);

/* Largest planned shape whose size ranges are drawn on the schedules. */
#define TRD_SELECT_MAX_RANKS 1024

typedef struct trd_select_stats {
    int drawn;      /* shapes whose ranges were drawn on the schedules */
    int closed;     /* shapes left on the closed forms (above 1024 ranks) */
    int timed;      /* schedules timed */
    int pruned;     /* ring timings skipped: its bound was above the others */
    double seconds; /* CPU time */
} trd_select_stats;

/* Redraw the size ranges of every planned shape of p of up to 1024 ranks on
 * the schedules' cost model (trd_sched_cost: alpha, beta and gamma per
 * level, link sharing and max-rate injection, alpha_r [MPICH §3, TREE §2,
 * NAP Eq. 3, RM Eq. 3]) in place of the closed forms of plan.h: at 8 B,
 * 16 B, 32 B, ... up to 4 MiB, then every factor of 4 up to 1 GiB, every
 * candidate's schedule is planned and timed, and each change of the fastest
 * is bisected to 1/64 of its size.  The ring, whose schedule has p^2 messages, is timed only where
 * a bound on its time (2(p-1) exchanges at the cheapest link) is below the
 * other candidates.  Each range gets the predicted microseconds of its
 * choice and runner-up at its typical size; such shapes get on_schedules,
 * and the whole machine's choice[] is its nnodes x ppn shape's.  Shapes
 * above 1024 ranks, or where a schedule cannot be timed, keep the closed
 * forms. */
void trd_select_on_schedules(trd_topo_t t, trd_plan *p, trd_select_stats *stats);

typedef struct trd_search_stats {
    int searched;   /* ranges whose parameters were searched */
    int evaluated;  /* schedules timed */
    double seconds; /* CPU time */
} trd_search_stats;

/* The parameters of the chosen algorithms, from the schedules' cost model:
 * for every planned shape of up to 4096 ranks and every range that chose
 * recursive multiplying, SMP or the FLEX composite, the parameter string
 * with the lowest predicted time at the range's typical size goes to
 * choice[].params ("" when the default wins) and its time to choice[].us.
 * Candidates: for rm the bases [RM §4.1] -- the orderings (increasing,
 * decreasing) of each multiset of bases 2..8 whose product is the rank
 * count, at most 64; for smp (among the leaders) and flex (per lane) the
 * inter-node algorithm rd, rabenseifner or ring (the ring up to 1024
 * nodes) [NAP §II-A, FLEX §2.1.3].  The runtime uses them where the
 * communicator has the shape's rank count, the default otherwise. */
void trd_search_params(trd_topo_t t, trd_plan *p, trd_search_stats *stats);

/* --predict: CSV "algorithm,bytes,predicted_us" of every planner's schedule
 * over the whole machine (each node's cores, shared memory on the node,
 * commutative op, doubles, out of place) for 8 B .. max_bytes in powers of
 * two, timed by trd_sched_cost.  Returns 0, or -1. */
int trd_predict_csv(FILE *f, trd_topo_t t, const trd_plan *p, double max_bytes);

#endif
