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

/* The shape of a placement: comm rank r on machine node node_of_rank[r]
 * (ring indices of t), r in 0..nranks-1, as the runtime builds it from its
 * ranks' hosts (runtime/comm.c): the nodes holding ranks in ring (DFS)
 * order, a node's ranks in comm rank order, so that the ring stays the DFS
 * ring whatever the rank order [TREE §3.2, Lemma 4]; shared memory on, no
 * single copy, the runtime's slot size; machine_node and node_packages set
 * from t.  *aux gets their storage (free it after st).  Returns TRD_OK,
 * TRD_ERR_INPUT (nranks < 1 or a node out of range) or TRD_ERR_NOMEM. */
int trd_placement_shape(trd_topo_t t, const int *node_of_rank, int nranks, trd_shape_store *st,
                        int **aux);

/* A permutation of t's nodes that alternates the leaves: the nodes grouped
 * by the switch they hang from, the groups in DFS order, then round j takes
 * the j-th node of every group that has one, groups in order.  Nodes
 * n0 n1 | n2 n3 under two switches give n0 n2 n1 n3; n0 n1 n2 | n3 give
 * n0 n3 n1 n2; one switch gives the ring order itself.  order gets
 * trd_topo_nnodes(t) ring indices.  Returns TRD_OK or TRD_ERR_NOMEM. */
int trd_topo_leaf_alternating(trd_topo_t t, int *order);

#endif
