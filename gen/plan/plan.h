/* Planner: what the generator decides for a machine, and the alpha-beta-gamma
 * closed forms it decides with [MPICH §3, NAP Eq. 3-6, TREE §3.2].  The
 * candidates are the registry's algorithms flagged TRD_ALGO_CANDIDATE
 * (algo.h), in registry order; each brings its own closed form. */
#ifndef TRD_PLAN_H
#define TRD_PLAN_H

#include <stddef.h>

#include "algo.h"
#include "topo.h"

/* Seconds per byte for applying a reduction (gamma) when the topology gives
 * none: about 4 GB/s of reduced data per core. */
#define TRD_DEFAULT_GAMMA_S_PER_BYTE 0.25e-9

#define TRD_MAX_CHOICES 16
/* planned communicator shapes: node counts 2, 4, ... and the machine's, times
 * ranks per node 1, 2, 4, ... and the machine's smallest core count */
#define TRD_MAX_SHAPES 160
/* most candidates the selection weighs */
#define TRD_MAX_CANDIDATES 32

/* One message-size range: [the previous range's below, below). */
typedef struct trd_choice {
    size_t below;                /* bytes; SIZE_MAX: no end */
    const trd_algo *alg;         /* the chosen allreduce algorithm */
    size_t typical;              /* a size inside the range (geometric middle) */
    const trd_algo *runner_up;   /* the second best at that size, or NULL */
    double us, runner_us;        /* their predicted microseconds at typical, by the model that
                                  * drew the ranges (on_schedules below) */
    char params[TRD_PARAMS_MAX]; /* the algorithm's parameters ("" its default), as the search
                                  * on the schedules chose them (rm's bases, smp's and flex's
                                  * inter-node algorithm) */
} trd_choice;

/* The ranges of one planned communicator shape (nodes x ranks per node). */
typedef struct trd_shape_plan {
    int nnodes, ppn, nchoices;
    int on_schedules; /* 1: ranges drawn on the schedules' timed execution (tune.h), 0: on the
                       * closed forms */
    trd_choice choice[TRD_MAX_CHOICES];
} trd_shape_plan;

/* The costs and choices for one machine. */
typedef struct trd_machine_plan {
    int nnodes;
    int ppn;                    /* cores of the smallest node */
    trd_levels levels;          /* the link classes and gamma the closed forms weigh */
    size_t nap_max_bytes_1node; /* NAP below, ring from, on one node without shared memory */
    /* The choice for communicators over the whole machine and commutative
     * ops, by message size: the shape nnodes x ppn's, the last range ends at
     * SIZE_MAX. */
    int nchoices;
    trd_choice choice[TRD_MAX_CHOICES];
    int on_schedules;
    /* The same per planned communicator shape, for communicators smaller
     * than the machine; nnodes x ppn is one of them. */
    int nshapes;
    trd_shape_plan shape[TRD_MAX_SHAPES];
} trd_machine_plan;

/* The candidates of the size selection: the registry's allreduce algorithms
 * with TRD_ALGO_CANDIDATE and a closed form, in registry order, into
 * out[0..cap); returns how many (at most cap). */
int trd_model_candidates(const trd_algo **out, int cap);

/* The typical size of the range [from, below) in bytes (below SIZE_MAX: no
 * end): the geometric middle, at least 8; a range without end takes
 * 16 times its start as its other end. */
size_t trd_range_typical(size_t from, size_t below);

/* Predictions closer than this (relative) are a tie, which goes to the
 * candidate listed first: models that reduce to the same steps (flex with
 * one lane and recursive doubling, say) then do not alternate byte by byte
 * on rounding. */
#define TRD_MODEL_TIE 1e-9

/* The fastest of the predictions t[0..n) (seconds or any one unit; INFINITY
 * for a candidate not available), ties to the first within TRD_MODEL_TIE;
 * *second gets the runner-up (or -1 where none was seen).  Returns the index
 * of the fastest (0 where none is below INFINITY). */
int trd_model_pick(const double *t, int n, int *second);

/* Predicted seconds of algorithm a's closed form for bytes bytes over nodes x
 * ppn ranks on p's levels [MPICH §3]; INFINITY for an algorithm without one. */
double trd_model_time(const trd_machine_plan *p, const trd_algo *a, int nodes, int ppn,
                      double bytes);

/* How a range drawing probes sizes (in units of unit_bytes bytes). */
typedef struct trd_range_probe {
    /* The fastest candidate at u units; NULL where none can run there. */
    const trd_algo *(*best)(void *ctx, size_t u);
    void *ctx;
    /* The probe after b in the range that starts at lo; b 0: the first one
     * above lo. */
    size_t (*next)(size_t lo, size_t b);
    size_t top;        /* units: no probe above, the last range goes on from there */
    size_t precision;  /* a change is bisected to 1/precision of its size; 0: to one unit */
    size_t unit_bytes; /* bytes per unit */
} trd_range_probe;

/* Size ranges of the best candidate [MPICH §3]: from 1 unit, probe sizes
 * (pr->next) up to pr->top until another candidate wins, bisect the change,
 * and start the next range there; the models are piecewise (lane and phase
 * choices switch at fixed sizes), so several changes may fall between two
 * probes: each is found from the range before it.  Fills below (bytes) and
 * alg of choice[0..*nchoices), the last ending at SIZE_MAX.  Returns TRD_OK,
 * or TRD_ERR_STATE where no candidate runs at 1 unit. */
int trd_draw_ranges(const trd_range_probe *pr, trd_choice *choice, int *nchoices);

/* Fill p for the finalized topology t: the levels, the one-node threshold,
 * and the size ranges of every planned shape on the closed forms.  Returns
 * TRD_OK or TRD_ERR_NOMEM. */
int trd_plan_build(trd_topo_t t, trd_machine_plan *p);

#endif
