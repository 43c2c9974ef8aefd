/* The machine as a shape of the schedule IR (trd_sched.h): what the
 * planners, the verifier and the cost model run a schedule on. */
#ifndef TRD_SHAPE_H
#define TRD_SHAPE_H

#include "topo.h"
#include "trd_sched.h"

/* The shape of the first nnodes of t's nodes (0: all) in ring order with
 * ppn ranks each (0: each node's cores), ranks in ring order, shared memory
 * on, no single copy, the runtime's slot size; machine_node and
 * node_packages set from t.  *aux gets their storage (free it after st).
 * Returns TRD_OK or TRD_ERR_NOMEM. */
int trd_machine_shape(trd_topo_t t, int nnodes, int ppn, trd_shape_store *st, int **aux);

#endif
