/* treeduce: allreduce and its pieces planned for one machine.
 *
 * An application links a library generated for its machine
 * (libtreeduce_<machine>.so, built by treeduce_generate() in CMake); it
 * defines MPI_Allreduce, MPI_Reduce_scatter_block, MPI_Reduce_scatter,
 * MPI_Allgather, MPI_Reduce and MPI_Bcast through the MPI profiling
 * interface, so an MPI program needs no change.  The routines below are the
 * same with the machine given explicitly; the generated header
 * trd_<machine>.h declares the machine (trd_<machine>_machine) and wrappers
 * trd_<machine>_allreduce() etc.
 *
 * Every routine has the contract of the MPI routine of the same name and
 * returns an MPI error code.  A call the plan does not cover (derived
 * datatypes in reductions, operations not defined for the datatype,
 * intercommunicators, ranks on hosts that are not nodes of the machine,
 * TREEDUCE_DISABLE=1, a forced algorithm that cannot run the call) goes to
 * the MPI library's own routine (PMPI_*), never to a wrong result;
 * TREEDUCE_VERBOSE=1 says why, once per reason.  The algorithm runs as the
 * schedule its planner wrote for this rank, the one treeduce-gen verified
 * (docs/algorithms.md).  Every form of every collective below is declared
 * and defined from one table of the collectives and their parameters
 * (treeduce_colls.h).
 *
 * Threads (MPI_THREAD_MULTIPLE): calls on different communicators may run at
 * once; calls on one communicator come from one thread at a time, as MPI
 * requires of its collectives.
 */
#ifndef TREEDUCE_H
#define TREEDUCE_H

#include <mpi.h>

#include "treeduce_colls.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A machine's tables, emitted by treeduce-gen (layout: treeduce_rt.h). */
typedef struct trd_machine trd_machine;

/* Its name ("bluewaters64"). */
const char *trd_machine_name(const trd_machine *m);

/* The collectives, one line each of the table in treeduce_colls.h, which
 * gives their parameters as MPI names them; each routine has the contract
 * of the MPI routine of the same name:
 *   allreduce: count elements of datatype in sendbuf (or MPI_IN_PLACE)
 *     reduced with op over every rank of comm into recvbuf on every rank;
 *   reduce_scatter_block: recvcount elements per rank;
 *   reduce_scatter: the vector of sum(recvcounts) elements reduced over
 *     comm's ranks, rank r receiving recvcounts[r] elements (zeros allowed)
 *     from offset recvcounts[0] + ... + recvcounts[r-1] [MPICH §4.3]: each
 *     rank's block padded to the largest and reduce_scatter_block's plan
 *     run, or, where padding would more than double the data, allreduce's
 *     and the own block kept;
 *   allgather: sendcount/recvcount elements per rank;
 *   reduce, bcast: count elements; root a rank of comm.
 * The algorithm: chosen by message size and communicator shape from the
 * machine's tables [MPICH §3] (allreduce: or TREEDUCE_ALGORITHM=NAME[:PARAMS]).
 * Bcast and allgather move derived datatypes as packed bytes.
 *
 * Blocking: trd_NAME(m, ...) with int counts, and trd_NAME_c(m, ...) with
 * MPI_Count counts, for the large-count forms (MPI 4.0 MPI_*_c).  Sizes
 * stay size_t inside; a plan whose messages would exceed INT_MAX elements
 * falls back to the MPI library's _c routine (TREEDUCE_VERBOSE=1 says so). */
#define TRD_DECLARE_BLOCKING(name, Name, K, P, ...)                                                \
    int trd_##name(const trd_machine *m, TRD_PARAMS(int, P));                                      \
    int trd_##name##_c(const trd_machine *m, TRD_PARAMS(MPI_Count, P));
TRD_COLLS(TRD_DECLARE_BLOCKING)
#undef TRD_DECLARE_BLOCKING

/* trd_NAME_with(m, ..., algorithm), for the collectives whose counts are
 * scalars: blocking, with the algorithm given as TREEDUCE_ALGORITHM spells
 * it, "NAME" or "NAME:PARAMS" of one of the collective's algorithms
 * (docs/algorithms.md; for allreduce e.g. "ring", "rm:a3,a2",
 * "shm:tree:4", "flex:rd"), "mpi" for the MPI library's own routine, NULL
 * or "auto" for the machine's choice.  A name that is not one of the
 * collective's algorithms, or an algorithm that cannot run the call, goes
 * to the MPI library's routine with a note on stderr (once per name and
 * reason). */
#define TRD_DECLARE_WITH(name, Name, K, P, ...)                                                    \
    TRD_IF_SCALAR##K(                                                                              \
        int trd_##name##_with(const trd_machine *m, TRD_PARAMS(int, P), const char *algorithm);)
TRD_COLLS(TRD_DECLARE_WITH)
#undef TRD_DECLARE_WITH

/* The collectives by name, as the candidates and the wisdom name them. */
enum {
    TRD_ALLREDUCE = 0,
    TRD_REDUCE_SCATTER_BLOCK,
    TRD_ALLGATHER,
    TRD_REDUCE,
    TRD_BCAST,
    TRD_NCOLLS
};

/* Longest candidate spec, with its terminating NUL. */
#define TRD_CANDIDATE_MAX 64

/* The algorithms that can be forced (the *_with routines) for collective
 * coll (TRD_ALLREDUCE ...) on comm, collective over comm: every algorithm of
 * the registry for coll that plans for comm's shape, once with its default
 * parameters ("NAME") and once per parameter candidate the algorithm offers
 * for that shape ("shm:rx:2,2", "rm:a4,a2", "shm:tree:4" [RM §4.1, FLEX
 * §2.1.3]), in registry order, then "mpi" (the MPI library's routine).
 * The same list on every rank.  Writes at most cap specs into out and
 * returns how many there are (may exceed cap), or -1 (*out unchanged) where
 * coll is not one of the collectives, comm is MPI_COMM_NULL or comm cannot
 * be set up (an intercommunicator, a host not in m). */
int trd_candidates(const trd_machine *m, MPI_Comm comm, int coll, char (*out)[TRD_CANDIDATE_MAX],
                   int cap);

/* 1 if this thread's last treeduce routine ran the MPI library's routine
 * (a fallback for any reason, one of a communicator's first calls before
 * its TREEDUCE_SEGMENT_CALLS-th, or "mpi" chosen or forced), 0 if it ran a
 * schedule of treeduce's.  For measuring forced candidates: a candidate
 * that cannot run a call is not timed as if it had.  A call with nothing to
 * move (count 0, a communicator of one rank) is 0 where treeduce completes
 * it itself (blocking calls), 1 where it hands it to the library
 * (nonblocking and persistent ones); an erroneous call that treeduce
 * raises itself (a negative count) is 0. */
int trd_fell_back(void);

/* How many node segments (shared windows, MPI_Win_allocate_shared) this
 * process has created so far: one per communicator of several ranks on a
 * node, with shared memory on, made at a blocking call from its
 * TREEDUCE_SEGMENT_CALLS-th collective call on (the calls before that go
 * to the MPI library's routine) once its calls have moved
 * TREEDUCE_SEGMENT_BYTES (docs/runtime.md).  For tests and diagnostics. */
long trd_segments(void);

/* How many passes of progress over treeduce's outstanding runs this
 * process's application threads have made so far (each treeduce call or
 * wait that advances them makes one); the progress thread's are not
 * counted.  With TREEDUCE_ASYNC_PROGRESS=1 a nonblocking call or MPI_Start
 * makes none: it leaves the run it starts to the thread.  For tests and
 * diagnostics. */
long trd_progress_passes(void);

/* Nonblocking (MPI_I*): the same schedule, started here and completed by
 * MPI_Wait/MPI_Test and friends on *request (treeduce's library intercepts
 * them).  Outstanding calls advance in every treeduce call, in MPI_Test* and
 * MPI_Wait* on any request, and in blocking MPI_Send, MPI_Ssend, MPI_Recv,
 * MPI_Sendrecv, MPI_Probe and MPI_Barrier; calls on one communicator run in
 * call order.  The first call on a communicator sets it up (one allgather).
 * trd_iNAME(m, ..., request) with MPI_Count counts, for MPI_Iname and
 * MPI_Iname_c both; where the counts are per rank, trd_iNAME with int and
 * trd_iNAME_c with MPI_Count arrays (K of the table).
 *
 * Persistent (MPI 4.0 MPI_*_init) [FLEX §4]: trd_NAME_init(m, ..., info,
 * request), the counts as above: the communicator is set up and this rank's
 * schedule planned here, once; MPI_Start/MPI_Startall only run it (no
 * allocation, no host names), MPI_Wait/MPI_Test complete it, and
 * MPI_Request_free releases it.  info is passed on where the call falls
 * back. */
#define TRD_DECLARE_REQUESTS(name, Name, K, P, ...)                                                \
    TRD_IF_PER_RANK##K(TRD_DECLARE_REQUESTS_OF(name, P, int, ))                                    \
        TRD_DECLARE_REQUESTS_OF(name, P, MPI_Count, K)
#define TRD_DECLARE_REQUESTS_OF(name, P, C, S)                                                     \
    int trd_i##name##S(const trd_machine *m, TRD_PARAMS(C, P), MPI_Request *request);              \
    int trd_##name##_init##S(const trd_machine *m, TRD_PARAMS(C, P), MPI_Info info,                \
                             MPI_Request *request);
TRD_COLLS(TRD_DECLARE_REQUESTS)
#undef TRD_DECLARE_REQUESTS
#undef TRD_DECLARE_REQUESTS_OF

#ifdef __cplusplus
}
#endif
#endif
