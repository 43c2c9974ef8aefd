/* treeduce-tune's parts: the command line and the job (treeduce_tune.c),
 * measuring one table, a collective on one communicator shape
 * (tune_measure.c). */
#ifndef TUNE_RUN_H
#define TUNE_RUN_H

#include <mpi.h>
#include <stddef.h>

#include "plan.h"
#include "topo.h"
#include "treeduce_rt.h"
#include "wisdom.h"

#define TUNE_MAX_SPECS 32   /* --candidates options */
#define TUNE_MAX_SHAPES 64  /* shapes formed from one job */
#define TUNE_MAX_CANDS 128  /* candidates of one table */
#define TUNE_MAX_POINTS 512 /* sizes measured in one table, the bisection's included */
#define TUNE_MAX_PASSES 9   /* --passes */
/* --passes by default: the node's speed changes within seconds
 * (docs/tuning.md); under SimGrid's SMPI a simulated time is the same in
 * every pass. */
#if defined(SMPI_H)
#define TUNE_DEFAULT_PASSES 1
#else
#define TUNE_DEFAULT_PASSES 3
#endif
/* Most bytes of one rank's buffers for the pieces whose vector is a block per
 * rank (reduce_scatter_block's input, allgather's output): larger sizes of
 * the grid are not measured on those shapes. */
#define TUNE_MAX_VECTOR_BYTES ((size_t)1 << 30)

typedef struct tune_opts {
    size_t min_bytes, max_bytes; /* the grid, whole doubles, sizes factor apart */
    double factor;
    double budget_s; /* 0: none */
    double size_s;   /* time to spend on one size of one table, all candidates together */
    int verbose;     /* --verbose: every candidate's median per size on stderr */
    int passes;      /* --passes: times over the grid, the winner from all (tune_measure) */
    int ncolls;      /* the collectives measured, in this order on each shape */
    int coll[TRD_NCOLLS];
    int nshapes; /* --shapes: 0 every shape the job can form */
    int shape[TUNE_MAX_SHAPES][2];
    int nspecs; /* --candidates */
    struct {
        int coll; /* -1: every collective */
        char spec[TRD_CANDIDATE_MAX];
    } spec[TUNE_MAX_SPECS];
} tune_opts;

/* One size measured: the fastest candidate and the second (indices into the
 * table's candidates, runner -1 none), their medians in microseconds. */
typedef struct tune_point {
    size_t bytes;
    int win, runner;
    double us, runner_us;
} tune_point;

typedef struct tune_state tune_state; /* a table's, between its passes (tune_measure.c) */

/* The machine as the model sees it, for the pruning's predictions and the
 * check pass's untuned choice: the description and its plan as
 * treeduce-gen makes it (trd_plan_machine); t NULL: no model (nothing is
 * skipped, nothing checked). */
typedef struct tune_model {
    trd_topo_t t;
    const trd_machine_plan *p;
} tune_model;

typedef struct tune_table {
    int coll, nnodes, ppn;
    int ncands;
    char cands[TUNE_MAX_CANDS][TRD_CANDIDATE_MAX];
    int npoints; /* sorted by bytes once measured */
    tune_point point[TUNE_MAX_POINTS];
    /* The measured ranges (tune_finish): from the bisection bound below the
     * smallest size measured to the one above the largest, each checked
     * against the model's choice and the MPI library's routine where the
     * check pass ran (wisdom.h); nranges 0: none. */
    int nranges;
    trd_wisdom_range range[TRD_MAX_RANGES];
    double noise;    /* relative: the median of the twin timings' differences */
    int checked;     /* the check pass ran over every range */
    int complete;    /* every size measured */
    int wrong;       /* candidates that gave a wrong result */
    double seconds;  /* wall time spent measuring the table (MPI_Wtime) */
    int passes_done; /* passes over the whole grid */
    tune_state *st;  /* NULL once finished */
} tune_table;

/* The budget and the progress, kept by rank 0 of the job (rank 0 of every
 * communicator measured). */
typedef struct tune_clock {
    double start, budget_s; /* MPI_Wtime at the start; the budget in seconds (0: none) */
    long steps, done;       /* sizes of the grid in every table planned, and measured */
    int stopped;            /* the budget ran out */
} tune_clock;

/* The grid's sizes in bytes (whole doubles, ascending, no repeats) for coll
 * on nranks ranks into bytes[0..cap); returns how many. */
int tune_grid(const tune_opts *o, int coll, int nranks, size_t *bytes, int cap);

/* One pass over t's grid, md the model (pass 0 .. o->passes - 1, in order; pass 0 sets
 * up the table's candidates and grid), for t->coll on comm (every rank of
 * comm calls it; t->nnodes, t->ppn its shape) with machine m.  alt: comm's
 * ranks in the second order the MPI library's routine and the rank-order
 * candidates are timed in (tune_shuffled_order), MPI_COMM_NULL where that
 * is comm's own.  Where the
 * budget runs out, c->stopped is set (on every rank of comm) and the pass
 * does not count.  Returns MPI_SUCCESS or an MPI error code. */
int tune_measure(const trd_machine *m, const tune_model *md, const tune_opts *o, MPI_Comm comm,
                 MPI_Comm alt, tune_table *t, tune_clock *c, int pass);

/* After the passes: each size's winner from every pass done, then (where
 * bisect) each change of winner bisected, then the ranges (t->range) and,
 * where bisect and md has a model, the check pass over them (docs/tuning.md).
 * t->complete where at least one pass covered the grid.  Frees what the
 * passes kept.  Returns MPI_SUCCESS or an MPI error code. */
int tune_finish(const trd_machine *m, const tune_model *md, const tune_opts *o, MPI_Comm comm,
                MPI_Comm alt, tune_table *t, tune_clock *c, int bisect);

/* Whether spec (a candidate) is kept by the --candidates of o for coll: 1
 * where one of them names it or its algorithm, or none applies to coll;
 * else 0. */
int tune_spec_kept(const tune_opts *o, int coll, const char *spec);

#endif
