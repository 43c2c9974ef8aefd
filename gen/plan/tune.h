/* Selection on the schedules: the size ranges and the algorithms'
 * parameters chosen on the timed execution of the schedules the runtime
 * runs (cost.h) [MPICH §3, TREE §2, NAP Eq. 3, RM Eq. 3]. */
#ifndef TRD_TUNE_H
#define TRD_TUNE_H

#include <stdio.h>

#include "cost.h"
#include "plan.h"
#include "trd_sched.h"
#include "topo.h"

/* Largest planned shape whose size ranges are drawn on the schedules. */
#define TRD_SELECT_MAX_RANKS 32
/* Largest planned shape whose parameters are searched on the schedules. */
#define TRD_SEARCH_MAX_RANKS 64

/* The timings of one shape's schedules for the selection, memoised: the
 * algorithm's collective (allreduce for the selection; any of them for
 * treeduce-tune's pruning) over count doubles, commutative, out of place,
 * root 0.  Schedules whose
 * ops grow with the count (the node phases' chunks of one segment slot
 * each) are timed exactly while they hold at most TRD_TIME_MAX_OPS ops;
 * above, their time is extrapolated linearly from the two largest counts
 * timed exactly (from TRD_TIME_SAFE_COUNT on, where every chunk repeats the
 * same steps).  The schedules of the ring, recursive doubling and the like,
 * whose ops do not grow, are always timed exactly. */
typedef struct trd_timer trd_timer;

/* Largest schedule timed exactly, in ops. */
#define TRD_TIME_MAX_OPS ((size_t)256 << 10)
/* The counts of doubles the extrapolation starts from: this and its half. */
#define TRD_TIME_SAFE_COUNT ((size_t)1 << 18)

/* A timer for sh (machine_node set) on t with p's gamma.  A shape of one
 * node with shared memory is timed with the single-copy path from the
 * runtime's default sizes (TRD_CMA_MIN_DEFAULTS), as the runtime runs it
 * where the kernel allows it.  *tm is the caller's, freed with
 * trd_timer_destroy() (NULL is ignored).  Returns TRD_OK or TRD_ERR_NOMEM. */
int trd_timer_create(trd_timer **tm, trd_topo_t t, const trd_machine_plan *p, const trd_shape *sh);
void trd_timer_destroy(trd_timer *tm);

/* Predicted microseconds of a with params for count doubles (at least 1;
 * one rank's block for reduce_scatter_block and allgather):
 * *us gets INFINITY where a does not plan for the shape.  Returns TRD_OK,
 * TRD_ERR_STATE where a schedule cannot be timed, or TRD_ERR_NOMEM. */
int trd_timer_us(trd_timer *tm, const trd_algo *a, const char *params, size_t count, double *us);

/* Schedules timed exactly so far into *timed, and times extrapolated into
 * *extrapolated. */
void trd_timer_counts(const trd_timer *tm, int *timed, int *extrapolated);

/* A bound below the timed cost of the ring's schedule (trd_sched_cost of a
 * TRD_ALGO_QUADRATIC allreduce over sh, sh->machine_node set) for count
 * elements of extent bytes, in seconds: each rank runs 2(p-1) exchanges in
 * turn, each at least a latency of the cheapest link to its ring successor
 * (the switch-tree path between nodes, the cheaper of the package and node
 * links on one); it sends every block but the largest in each half at that
 * link's bandwidth at best, and reads and reduces those of the first half
 * (package link bandwidth, gamma_s_per_byte) [TREE §3.2, MPICH §3]. */
double trd_ring_bound(trd_topo_t t, const trd_shape *sh, size_t count, size_t extent,
                      double gamma_s_per_byte);

typedef struct trd_select_stats {
    int drawn;        /* shapes whose ranges were drawn on the schedules */
    int closed;       /* shapes left on the closed forms (above 1024 ranks) */
    int timed;        /* schedules timed */
    int extrapolated; /* timings extrapolated (trd_timer) */
    int pruned;       /* quadratic schedules not timed: their bound was above the others */
    double seconds;   /* CPU time */
} trd_select_stats;

/* Redraw the size ranges of every planned shape of p of up to
 * TRD_SELECT_MAX_RANKS ranks on the schedules' cost model in place of the
 * closed forms: at 8 B, 16 B, 32 B, ... up to 4 MiB, then every factor of 4
 * up to 1 GiB, every candidate's schedule (plan.h) is planned and timed, and
 * each change of the fastest is bisected to 1/64 of its size (trd_draw_ranges).
 * A TRD_ALGO_QUADRATIC candidate is timed only where its bound
 * (trd_ring_bound) is below the other candidates.  Each range gets the
 * predicted microseconds of its choice and runner-up at its typical size;
 * such shapes get on_schedules, and the whole machine's choice[] is its
 * nnodes x ppn shape's.  Shapes above the limit, or where a schedule cannot
 * be timed, keep the closed forms.  stats (counts, CPU seconds) is filled.
 * Returns TRD_OK or TRD_ERR_NOMEM. */
int trd_select_on_schedules(trd_topo_t t, trd_machine_plan *p, trd_select_stats *stats);

typedef struct trd_search_stats {
    int searched;   /* ranges whose parameters were searched */
    int evaluated;  /* schedules timed */
    double seconds; /* CPU time */
} trd_search_stats;

/* The parameters of the chosen algorithms, from the schedules' cost model:
 * for every planned shape of up to TRD_SEARCH_MAX_RANKS ranks and every
 * range whose algorithm offers candidates (trd_algo.candidates: rm's bases
 * [RM §4.1], smp's and flex's inter-node algorithm [NAP §II-A, FLEX
 * §2.1.3]), the parameter string with the lowest predicted time at the
 * range's typical size goes to choice[].params ("" when the default wins)
 * and, for ranges drawn on the schedules, its time to choice[].us.  The
 * runtime uses them where the communicator has the shape's rank count.
 * Returns TRD_OK or TRD_ERR_NOMEM. */
int trd_search_params(trd_topo_t t, trd_machine_plan *p, trd_search_stats *stats);

/* The whole plan as treeduce-gen makes it, and the library it generates
 * without wisdom runs: trd_plan_build (the closed forms), then
 * trd_select_on_schedules and trd_search_params, their counts into sel and
 * search (either may be NULL).  treeduce-tune plans its machine the same
 * way, so that its "untuned" choice is the untuned library's.  Returns
 * TRD_OK or TRD_ERR_NOMEM. */
int trd_plan_machine(trd_topo_t t, trd_machine_plan *p, trd_select_stats *sel,
                     trd_search_stats *search);

/* The allreduce algorithm the runtime built from plan p selects for call
 * on sh (at least 2 ranks), with its parameters (*params, "" the default):
 * p's planned shapes as the generated tables carry them, resolved for sh's
 * nodes, ranks per node and ranks (trd_selection_init), then trd_select
 * (trd_select.h), as the runtime selects when nothing is forced and no
 * wisdom was measured.  Returns the algorithm, or NULL with why. */
const trd_algo *trd_plan_select(const trd_machine_plan *p, const trd_shape *sh,
                                const trd_call *call, const char **params, char *why,
                                size_t whylen);

/* --predict: CSV "algorithm,bytes,predicted_us" of every allreduce
 * algorithm that plans over the whole machine (each node's cores, shared
 * memory on the node, commutative op, doubles, out of place) for 8 B ..
 * max_bytes in powers of two, with its default parameters and with each
 * parameter candidate it offers for the machine ("shm:rx:2;2": a parameter
 * text's commas written as ';', so that every line has three fields).  Returns
 * TRD_OK, TRD_ERR_STATE (a schedule that cannot be timed) or TRD_ERR_NOMEM. */
int trd_predict_csv(FILE *f, trd_topo_t t, const trd_machine_plan *p, double max_bytes);

/* For --explain: every candidate's schedule over the whole machine (each
 * node's own core count) timed at 8 B .. 64 MiB in factors of 16, in
 * microseconds; machines of up to TRD_SELECT_MAX_RANKS ranks.  Returns
 * TRD_OK or TRD_ERR_NOMEM. */
int trd_explain_schedules(FILE *f, trd_topo_t t, const trd_machine_plan *p);

#endif
