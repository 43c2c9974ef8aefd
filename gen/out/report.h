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

/* For --explain with --wisdom: per collective and shape of w (read from
 * file), each measured range with its winner and runner-up, the model's
 * time for the winner at the range's typical size and its ratio to the
 * measured one, the model's own pick there and whether it agrees, a count
 * of the agreements per shape; then what the model fills.  Allreduce is
 * timed on the schedules as the selection times it (tune.h), the pieces
 * planned and timed with the same cost model (cost.h) up to
 * TRD_TIME_SAFE_COUNT elements ("no model" above).  Returns TRD_OK,
 * TRD_ERR_NOMEM or TRD_ERR_IO. */
int trd_explain_wisdom(FILE *f, trd_topo_t t, const trd_machine_plan *p, const trd_wisdom *w,
                       const char *file);

/* Write a Graphviz digraph of the switch tree with the ring drawn on it
 * (dashed arrows between consecutive nodes of the DFS order).  Returns
 * TRD_OK or TRD_ERR_IO. */
int trd_dot(FILE *f, trd_topo_t t);

#endif
