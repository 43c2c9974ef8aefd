/* Planner: what the generator decides for a machine, and the alpha-beta-gamma
 * cost model it decides with [MPICH §3, NAP Eq. 3-6, TREE §3.2]. */
#ifndef TRD_PLAN_H
#define TRD_PLAN_H

#include <stddef.h>

#include "topo.h"

/* Seconds per byte for applying a reduction (gamma) when the topology gives
 * none: about 4 GB/s of reduced data per core. */
#define TRD_DEFAULT_GAMMA_S_PER_BYTE 0.25e-9

#define TRD_MAX_CHOICES 16
/* planned communicator shapes: node counts 2, 4, ... and the machine's, times
 * ranks per node 1, 2, 4, ... and the machine's smallest core count */
#define TRD_MAX_SHAPES 160

/* The costs and choices for one machine. */
typedef struct trd_plan {
    int nnodes;
    int ppn;                  /* cores of the smallest node */
    trd_link_cost intra;      /* between two ranks of one node (worst of package/node links) */
    trd_link_cost ring_inter; /* slowest link any ring neighbour pair crosses */
    trd_link_cost far_inter;  /* the most expensive node-to-node path */
    double gamma_s_per_byte;
    int nap_lanes, nap_radix, nap_steps; /* NAP over the whole machine */
    size_t nap_max_bytes;       /* NAP below, ring from (several nodes, NAP vs ring only) */
    size_t nap_max_bytes_1node; /* the same on one node without shared memory */
    /* The choice for communicators over several nodes and commutative ops,
     * by message size: range i is [choice[i-1].below, choice[i].below), the
     * last one ends at SIZE_MAX. */
    int nchoices;
    struct trd_choice {
        size_t below;
        int alg;       /* index into trd_model_names() */
        size_t typical; /* a size inside the range (geometric middle) */
        int runner_up;  /* the second best at that size */
        double us, runner_us; /* their predicted microseconds at typical, by the model that
                               * drew the ranges (on_schedules below) */
        char params[48]; /* the algorithm's parameters ("" its default): for rm, the
                          * schedule string the search of the bases chose */
    } choice[TRD_MAX_CHOICES];
    int on_schedules; /* as trd_shape_plan.on_schedules, for choice[] */
    /* The same per planned communicator shape (nodes x ranks per node), for
     * communicators smaller than the machine; choice[] above is the shape of
     * the whole machine, nnodes x ppn, which is also one of these. */
    int nshapes;
    struct trd_shape_plan {
        int nnodes, ppn, nchoices;
        int on_schedules; /* 1: ranges drawn on the schedules' timed execution
                           * (trd_select_on_schedules), 0: on the closed forms */
        struct trd_choice choice[TRD_MAX_CHOICES];
    } shape[TRD_MAX_SHAPES];
} trd_plan;

/* The algorithms the planner weighs for several nodes, by index: their
 * runtime names ("nap", "ring", "rd", "rabenseifner", "smp", "hring", "flex",
 * "rm") and a one-line description of the levels (intra-node phase,
 * inter-node phase). */
enum { TRD_NMODELS = 8 };
const char *trd_model_name(int alg);
const char *trd_model_levels(int alg);

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
 * *second gets the runner-up (or -1 where none was seen). */
int trd_model_pick(const double *t, int n, int *second);

/* Predicted seconds of candidate alg for bytes bytes over nodes x ppn. */
double trd_model_time(const trd_plan *p, int alg, int nodes, int ppn, double bytes);

/* Fill p for the finalized topology t.  Returns TRD_OK. */
int trd_plan_build(trd_topo_t t, trd_plan *p);

/* Predicted seconds for one allreduce of bytes bytes over nodes x ppn ranks
 * (alpha-beta-gamma per level [MPICH §3]; NAP per [NAP Eq. 6]; ring per
 * [TREE §3.2] with the slowest ring link). */
double trd_model_ring(const trd_plan *p, int nodes, int ppn, double bytes);
double trd_model_nap(const trd_plan *p, int nodes, int ppn, double bytes);
double trd_model_rd(const trd_plan *p, int nodes, int ppn, double bytes);

/* Smallest message size (bytes, >= 1) from which ring is predicted faster
 * than NAP over nodes x ppn ranks; SIZE_MAX if never within 1 TiB. */
size_t trd_model_crossover(const trd_plan *p, int nodes, int ppn);

/* Check that the ring through nodes[0..n-1] (ring indices of t, in ring order,
 * wrapping around; repeated consecutive nodes are one node) sends no two
 * neighbour messages over the same directed link of the switch tree
 * [TREE §2, Lemma 4].  Returns 0 if contention-free, else the number of
 * directed links used more than once, with the first one described in why. */
int trd_ring_contention(trd_topo_t t, const int *nodes, int n, char *why, size_t whylen);

#endif
