/* Every algorithm's descriptor (algo.h), declared here once: registry.c
 * lists them in trd_algos[]; the selection (select.c) and the composites
 * (phases.h) name a few directly.  Each is defined in its own file of this
 * folder, the libraries' own routines in library.c.  Internal to
 * runtime/algo. */
#ifndef TRD_ALGOS_H
#define TRD_ALGOS_H

#include "algo.h"

extern const trd_algo trd_allreduce_nap, trd_allreduce_ring, trd_allreduce_rd,
    trd_allreduce_rabenseifner, trd_allreduce_smp, trd_allreduce_hring, trd_allreduce_flex,
    trd_allreduce_rm, trd_allreduce_shm, trd_allreduce_shm_rx, trd_allreduce_shm_tree,
    trd_allreduce_shm_cyclic, trd_allreduce_shm_socket, trd_allreduce_shm_direct,
    trd_allreduce_repro;
extern const trd_algo trd_rsb_shm, trd_rsb_halving, trd_rsb_doubling, trd_rsb_pairwise;
extern const trd_algo trd_allgather_shm, trd_allgather_rd, trd_allgather_bruck, trd_allgather_ring;
extern const trd_algo trd_bcast_shm, trd_bcast_binomial, trd_bcast_scatter_allgather;
extern const trd_algo trd_reduce_shm, trd_reduce_binomial, trd_reduce_rabenseifner;
extern const trd_algo trd_allreduce_mpi, trd_rsb_mpi, trd_allgather_mpi, trd_reduce_mpi,
    trd_bcast_mpi;

#endif
