/* Human-readable views of a plan: --explain text and --dot Graphviz. */
#ifndef TRD_REPORT_H
#define TRD_REPORT_H

#include <stdio.h>

#include "plan.h"
#include "topo.h"
#include "wisdom.h"

/* Print the plan for t: node types, switch tree, DFS ring order and its
 * contention check, costs per level, NAP groups per step over the whole
 * machine, the message-size ranges with the chosen algorithms (their names,
 * levels and sources from the registry, algo.h) and predicted times.
 * Returns TRD_OK, TRD_ERR_NOMEM or TRD_ERR_IO (f could not be written). */
int trd_explain(FILE *f, trd_topo_t t, const trd_machine_plan *p, const char *input);

/* For --explain with --wisdom: w the files merged (trd_wisdom_merge), per
 * collective and shape each range with its file and line, its winner and
 * runner-up, the model's time for the winner at the range's typical size
 * and its ratio to the measured one, the model's own pick there and
 * whether it agrees, a count of the agreements per shape, and each check
 * point ("checked at 65536 B: tuned rm:a8 431.5 us, untuned (ring) 139.6
 * us, MPI 160.2 us, noise 0.0%: to the model"); then the conflicts
 * [0..nconflicts) of the merge, one line each naming both files, lines,
 * dates and algorithms and which is used; then what the model fills: per
 * measured shape the sizes no range covers and the ranges of
 * TRD_WISDOM_MODEL, and per collective the other shapes.  Allreduce is
 * timed on the schedules as the selection times it (tune.h), the pieces
 * planned and timed with the same cost model (cost.h) up to
 * TRD_TIME_SAFE_COUNT elements ("no model" above).  Returns TRD_OK,
 * TRD_ERR_NOMEM or TRD_ERR_IO. */
int trd_explain_wisdom(FILE *f, trd_topo_t t, const trd_machine_plan *p, const trd_wisdom *w,
                       const trd_wisdom_conflict *conflicts, int nconflicts);

/* Write a Graphviz digraph of the switch tree with the ring drawn on it
 * (dashed arrows between consecutive nodes of the DFS order).  Returns
 * TRD_OK or TRD_ERR_IO. */
int trd_dot(FILE *f, trd_topo_t t);

#endif
