/* Human-readable views of a plan: --explain text and --dot Graphviz. */
#ifndef TRD_REPORT_H
#define TRD_REPORT_H

#include <stdio.h>

#include "plan.h"
#include "topo.h"

/* Print the plan for t: node types, switch tree, DFS ring order and its
 * contention check, costs per level, NAP groups per step over the whole
 * machine, the message-size thresholds and predicted times. */
void trd_explain(FILE *f, trd_topo_t t, const trd_plan *p, const char *input);

/* Write a Graphviz digraph of the switch tree with the ring drawn on it
 * (dashed arrows between consecutive nodes of the DFS order). */
void trd_dot(FILE *f, trd_topo_t t);

#endif
