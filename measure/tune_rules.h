/* treeduce-tune's rules that need no MPI (tune_rules.c): which candidates a
 * table times at each size of its grid (the pruning), the noise of a pass,
 * and the check pass's verdict.  The measuring (tune_measure.c) calls them;
 * the unit tests drive them with a fake timer.
 *
 * Pruning, in the spirit of FFTW's planner, which measures every plan for
 * the problem at hand and never carries a verdict from one size to another:
 * a candidate may be skipped at a size only where the measurements and the
 * model agree that it is out of reach there, and it is timed again at least
 * once per factor TUNE_RETIME_FACTOR in size whatever it did below
 * (docs/tuning.md).
 */
#ifndef TUNE_RULES_H
#define TUNE_RULES_H

#include <stddef.h>

/* Measured: a candidate more than TUNE_SLOW_FACTOR times as slow as the
 * fastest at TUNE_SLOW_SIZES timed sizes in a row is behind. */
#define TUNE_SLOW_FACTOR 2.0
#define TUNE_SLOW_SIZES 2
/* Modelled: a prediction more than TUNE_MODEL_REACH times the best
 * prediction at a size is out of reach there; the model's TUNE_MODEL_TOP
 * best are always timed. */
#define TUNE_MODEL_REACH 2.0
#define TUNE_MODEL_TOP 3
/* Every candidate is timed again at least once per this factor in size. */
#define TUNE_RETIME_FACTOR 8.0

/* What the pruning keeps of one table's candidates between its sizes. */
typedef struct tune_prune {
    int ncands;
    int *slow;    /* [ncands] timed sizes in a row at > TUNE_SLOW_FACTOR x the fastest */
    size_t *last; /* [ncands] bytes of the size it was last timed at; 0: never */
} tune_prune;

/* Set up pr for ncands candidates (arrays allocated, freed by
 * tune_prune_free).  Returns 0, or -1 out of memory. */
int tune_prune_init(tune_prune *pr, int ncands);

/* Free pr's arrays (pr itself is the caller's). */
void tune_prune_free(tune_prune *pr);

/* Whether candidate i is timed at bytes: yes unless it is behind on the
 * measurements (TUNE_SLOW_SIZES sizes), and the model's prediction
 * model[i] (microseconds; NAN: the model has none, which keeps it; INFINITY:
 * the model cannot plan it there) is more than TUNE_MODEL_REACH times the
 * best of model[0..pr->ncands), and it is not among the model's
 * TUNE_MODEL_TOP best there, and it was timed at a size more than
 * bytes / TUNE_RETIME_FACTOR.  Returns 1 or 0. */
int tune_prune_keep(const tune_prune *pr, const double *model, int i, size_t bytes);

/* After candidates idx[0..n) were timed at bytes in us[0..n) microseconds
 * (INFINITY: not run there): each one's last size and slow count. */
void tune_prune_update(tune_prune *pr, const int *idx, int n, const double *us, size_t bytes);

/* Times candidates idx[0..n) at grid size g into us[0..n) (microseconds,
 * INFINITY: not run there); may mark candidates dead.  Returns 0, 1 to stop
 * (nothing measured at g), or another value, an error, which ends the pass
 * with it. */
typedef int (*tune_time_fn)(void *arg, int g, const int *idx, int n, double *us);

/* The first pass over a table's grid grid[0..ngrid) (ascending bytes) for
 * pr->ncands candidates: at each size the candidates that are not dead
 * (dead[i]) and that tune_prune_keep keeps (model[g * cap + i], the model's
 * predictions) are listed in gidx[g * cap ..] (gn[g] of them) and timed by
 * time_fn, then pr is updated (tune_prune_update); a candidate timed again
 * after skipping sizes that is now within TUNE_SLOW_FACTOR of the fastest
 * is listed at the sizes it skipped, and each of those sizes is timed
 * again, whole, by time_fn.  Returns 0 with *ndone the sizes done (ngrid),
 * or what time_fn returned (1: stopped) with *ndone those done before. */
int tune_first_pass(tune_prune *pr, const size_t *grid, int ngrid, const double *model,
                    const int *dead, int *gidx, int *gn, int cap, tune_time_fn time_fn, void *arg,
                    int *ndone);

/* The relative difference of two timings of one candidate, |a - b| /
 * min(a, b); 0 where either is not positive and finite. */
double tune_twin_noise(double a, double b);

/* The median of v[0..n) (v is sorted in place); 0 for n 0. */
double tune_median(double *v, int n);

/* The least difference (microseconds) the check pass takes for a verdict:
 * closer times are a tie.  The tuner calls every candidate through
 * trd_X_with, which parses the algorithm's name on each call: 0.11 us more
 * than the library's own selected call on this node (2 ranks, 16-512 B:
 * 0.35-0.39 us against 0.24-0.28).  There shm and nap measured 0.79 and
 * 0.77-0.79 us in the check pass, a difference of 0.02 us beyond the pass's
 * relative noise, and the tuned library with nap ran 0.01-0.03 us (4-12%)
 * slower than the untuned one with shm; differences that small are not the
 * candidates'. */
#define TUNE_TIE_US 0.05

/* The check pass's verdict (TRD_WISDOM_KEPT, _TO_MODEL, _TO_MPI of
 * wisdom.h) for the measured winner's time alg_us beside the model's
 * choice's model_us and the MPI library's mpi_us (microseconds, INFINITY:
 * not run), with the pass's relative noise; same 1 where the model's choice
 * is the measured winner.  The winner keeps the size where it is faster
 * than the model's choice beyond the noise (or is that choice) and not
 * slower than the library's routine beyond it: a tie goes to what the
 * library generated without wisdom runs, which is never worse than itself.
 * Else the MPI library's routine takes it where it is within the noise of
 * the model's choice, or faster, and the model's choice where that is
 * faster beyond the noise.  "Beyond the noise" is by more than the larger
 * of noise times the time and TUNE_TIE_US. */
int tune_check_verdict(double alg_us, double model_us, double mpi_us, double noise, int same);

struct trd_wisdom_point;

/* The time (microseconds) a checked size p measured for the choice name:
 * the MPI library's routine ("mpi"), the model's choice (TRD_WISDOM_MODEL,
 * or an algorithm that is the model's choice there), or p's measured
 * winner by name; INFINITY where p did not time it. */
double tune_check_time(const struct trd_wisdom_point *p, const char *name);

/* The choice at each of a table's checked sizes p[0..n) (in size order,
 * their verdicts and noise set; docs/tuning.md, "The check pass"): who[k]
 * is "mpi", TRD_WISDOM_MODEL or p[k].alg, as p[k]'s verdict gives, unless
 * the choice at the size before was timed at p[k] too (tune_check_time)
 * and holds there: within p[k]'s noise of the verdict's choice, and no
 * slower than the MPI library's routine or the model's choice beyond it.
 * Then it stays, and a tie does not cut the sizes: choices that only the
 * noise tells apart swapped at every checked size (with --passes 1 on the
 * emulated cluster, 67 ranges over four tables, of which neighbours took
 * the model's choice, the MPI library's routine and the winner in turn at
 * times within 1-3% of one another).  who[k] points into p or at a
 * literal. */
void tune_check_choices(const struct trd_wisdom_point *p, int n, const char **who);

/* The second rank order in which the MPI library's routine and the
 * rank-order candidates are timed (docs/tuning.md, "Rank order"): most of
 * treeduce's schedules follow the nodes' places in the switch tree
 * whatever the ranks' order, these pair ranks by number, so they are timed
 * in the job's order and in this one, and the slower median is the time.
 * For a communicator of n ranks, rank r on node node[r] (the node's place
 * in the machine's ring order) under leaf switch leaf[r] (any id; one value
 * for all where the machine has no switches): the shuffled order of bench/cluster.sh, where
 * consecutive nodes sit on different leaves - the leaves in the order of
 * their first rank, each leaf's nodes in the order of their first rank, one
 * node of each leaf in turn until every node is taken - or, where the ranks
 * are in that order already, tree order (the nodes by their places in the
 * ring); a node's ranks consecutive and in their own order in both.
 * key[r] (n of them): rank r's place, 0 .. n-1.  Returns 1 where that
 * differs from the ranks' own order, 0 where it is the same (one leaf with
 * its nodes in ring order), -1 out of memory. */
int tune_shuffled_order(const int *node, const int *leaf, int n, int *key);

#endif
