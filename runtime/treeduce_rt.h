/* What generated code fills in: a machine's tables (treeduce-gen emits one
 * trd_machine per machine in generated/<machine>/trd_<machine>.c).  Generated
 * code includes this header and MPI only; applications use treeduce.h and
 * the generated header. */
#ifndef TREEDUCE_RT_H
#define TREEDUCE_RT_H

#include <stddef.h>

#include "treeduce.h"
#include "trd_select.h"

#ifdef __cplusplus
extern "C" {
#endif

struct trd_machine {
    const char *name;
    int nnodes;
    const char *const *node_names; /* [nnodes] node names in DFS ring order [TREE §3.2] */
    const int *name_order;         /* [nnodes] ring indices sorted by strcmp of names */
    const int *node_cores;         /* [nnodes] cores of each node */
    const int *node_packages;      /* [nnodes] packages (sockets) of each node */
    size_t nap_max_bytes_1node;    /* one node without shared memory: NAP below, ring from */
    /* communicators over several nodes, commutative ops: per planned shape
     * (nodes x ranks per node), the allreduce algorithm of each message-size
     * range, chosen by the generator on the verified schedules' cost model */
    const trd_shape_choice *shapes;
    int nshapes;
    /* the ranges measured on the machine (treeduce-gen --wisdom), per
     * collective and communicator shape; NULL/0: none */
    const trd_tuned_shape *tuned;
    int ntuned;
    /* the first line of MPI_Get_library_version of the MPI library the
     * tuned ranges were measured with: a communicator under another
     * library keeps the model's ranges (TREEDUCE_VERBOSE=1 says so) */
    const char *tuned_mpi;
};

#ifdef __cplusplus
}
#endif
#endif
