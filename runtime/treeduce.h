/* treeduce: allreduce and its pieces planned for one machine.
 *
 * An application links a library generated for its machine
 * (libtreeduce_<machine>.so, built by treeduce_generate() in CMake); it
 * defines MPI_Allreduce, MPI_Reduce_scatter_block, MPI_Allgather, MPI_Reduce
 * and MPI_Bcast through the MPI profiling interface, so an MPI program needs no
 * change.  The routines below are the same with the machine given
 * explicitly; the generated header trd_<machine>.h declares the machine
 * (trd_<machine>_machine) and wrappers trd_<machine>_allreduce() etc.
 *
 * Every routine has the contract of the MPI routine of the same name and
 * returns an MPI error code.  A call the plan does not cover (derived
 * datatypes in reductions, operations not defined for the datatype,
 * intercommunicators, ranks on hosts that are not nodes of the machine,
 * TREEDUCE_DISABLE=1, a forced algorithm that cannot run the call) goes to
 * the MPI library's own routine (PMPI_*), never to a wrong result;
 * TREEDUCE_VERBOSE=1 says why, once per reason.  The algorithm runs as the
 * schedule its planner wrote for this rank, the one treeduce-gen verified
 * (README: Algorithms).
 */
#ifndef TREEDUCE_H
#define TREEDUCE_H

#include <mpi.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A machine's tables, emitted by treeduce-gen (layout: treeduce_rt.h). */
typedef struct trd_machine trd_machine;

/* Its name ("bluewaters64"). */
const char *trd_machine_name(const trd_machine *m);

/* MPI_Allreduce on machine m: count elements of datatype in sendbuf (or
 * MPI_IN_PLACE) reduced with op over every rank of comm into recvbuf on every
 * rank.  The algorithm: chosen by message size and communicator shape from
 * the machine's tables [MPICH §3], or TREEDUCE_ALGORITHM=NAME[:PARAMS]. */
int trd_allreduce(const trd_machine *m, const void *sendbuf, void *recvbuf, int count,
                  MPI_Datatype datatype, MPI_Op op, MPI_Comm comm);

/* The same with the algorithm given as TREEDUCE_ALGORITHM spells it, "NAME"
 * or "NAME:PARAMS" (NULL or "auto": chosen as above), e.g. "ring",
 * "rm:a3,a2", "shm:tree:4", "flex:rd". */
int trd_allreduce_with(const trd_machine *m, const void *sendbuf, void *recvbuf, int count,
                       MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, const char *algorithm);

/* The pieces of allreduce, contracts of the MPI routines: recvcount
 * elements per rank (reduce_scatter_block), sendcount/recvcount elements
 * per rank (allgather), count elements (reduce, bcast); root a rank of comm.
 * Bcast and allgather move derived datatypes as packed bytes. */
int trd_reduce_scatter_block(const trd_machine *m, const void *sendbuf, void *recvbuf,
                             int recvcount, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm);
int trd_allgather(const trd_machine *m, const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                  void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm);
int trd_reduce(const trd_machine *m, const void *sendbuf, void *recvbuf, int count,
               MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm);
int trd_bcast(const trd_machine *m, void *buffer, int count, MPI_Datatype datatype, int root,
              MPI_Comm comm);

#ifdef __cplusplus
}
#endif
#endif
