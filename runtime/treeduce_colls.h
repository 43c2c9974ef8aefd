/* The collectives treeduce replaces, in one table: each one's parameters as
 * MPI lists them, written once.  The MPI entry points (treeduce_mpi.inc),
 * the declarations of treeduce.h and of a machine's header, and the
 * runtime's trd_ routines (coll.c) are stamped out of it in every form MPI
 * has (blocking; nonblocking, MPI_I...; persistent, ..._init, MPI 4.0;
 * large-count, ..._c, MPI 4.0), as MPICH generates its own from one list.
 *
 * TRD_COLLS(X) expands X(name, Name, K) once per collective, in the order
 * that indexes coll.c's table of descriptors:
 *   name  as in trd_name and MPI_Iname ("allreduce");
 *   Name  as in MPI_Name ("Allreduce");
 *   K     empty where the counts are scalars: the runtime's nonblocking and
 *         persistent routines take MPI_Count, so trd_iname serves both
 *         MPI_Iname and MPI_Iname_c; _c where there is a count per rank
 *         (reduce_scatter), whose arrays differ in type: trd_iname_c and
 *         trd_name_init_c serve the large-count forms.
 * TRD_P_name(C)  the parameters, with every count of type C (int or
 *                MPI_Count), named as MPI names them;
 * TRD_A_name(I)  the same names as arguments, every scalar count passed
 *                through I: TRD_AS_IS, or TRD_AS_INT where the int form is
 *                called with counts that fit (TRD_BIG_name is false);
 * TRD_BIG_name   whether the call's counts need the large-count form.
 * The MPI, trd_ and PMPI_ names of a collective's forms follow MPI's
 * spelling from name and Name, and coll.c runs every one of them through
 * one routine with one fallback path.  Adding a collective is one X line
 * and these three macros, its descriptor in coll.c (its names, its checks,
 * how its call and buffers are formed, its MPI library routine), and its
 * algorithms. */
#ifndef TREEDUCE_COLLS_H
#define TREEDUCE_COLLS_H

#include <limits.h>

#define TRD_COLLS(X)                                                                               \
    X(allreduce, Allreduce, )                                                                      \
    X(reduce_scatter_block, Reduce_scatter_block, )                                                \
    X(reduce_scatter, Reduce_scatter, _c)                                                          \
    X(allgather, Allgather, )                                                                      \
    X(reduce, Reduce, )                                                                            \
    X(bcast, Bcast, )

/* TRD_IF_SCALAR##K(...): its arguments where the counts are scalars (K
 * empty), nothing where they are per rank (K _c); TRD_IF_PER_RANK##K(...)
 * the other way round.  For what only one kind has: trd_name_with for the
 * scalar ones, nonblocking and persistent routines per count type for the
 * others. */
#define TRD_IF_SCALAR(...) __VA_ARGS__
#define TRD_IF_SCALAR_c(...)
#define TRD_IF_PER_RANK(...)
#define TRD_IF_PER_RANK_c(...) __VA_ARGS__

/* The I of TRD_A_name: a count passed as it is, or cast to int. */
#define TRD_AS_IS(x) x
#define TRD_AS_INT(x) ((int)(x))

#define TRD_P_allreduce(C)                                                                         \
    const void *sendbuf, void *recvbuf, C count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm
#define TRD_A_allreduce(I) sendbuf, recvbuf, I(count), datatype, op, comm
#define TRD_BIG_allreduce (count > INT_MAX)

#define TRD_P_reduce_scatter_block(C)                                                              \
    const void *sendbuf, void *recvbuf, C recvcount, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm
#define TRD_A_reduce_scatter_block(I) sendbuf, recvbuf, I(recvcount), datatype, op, comm
#define TRD_BIG_reduce_scatter_block (recvcount > INT_MAX)

/* the counts are an array: I and TRD_BIG do not apply */
#define TRD_P_reduce_scatter(C)                                                                    \
    const void *sendbuf, void *recvbuf, const C recvcounts[], MPI_Datatype datatype, MPI_Op op,    \
        MPI_Comm comm
#define TRD_A_reduce_scatter(I) sendbuf, recvbuf, recvcounts, datatype, op, comm

#define TRD_P_allgather(C)                                                                         \
    const void *sendbuf, C sendcount, MPI_Datatype sendtype, void *recvbuf, C recvcount,           \
        MPI_Datatype recvtype, MPI_Comm comm
#define TRD_A_allgather(I) sendbuf, I(sendcount), sendtype, recvbuf, I(recvcount), recvtype, comm
#define TRD_BIG_allgather (sendcount > INT_MAX || recvcount > INT_MAX)

#define TRD_P_reduce(C)                                                                            \
    const void *sendbuf, void *recvbuf, C count, MPI_Datatype datatype, MPI_Op op, int root,       \
        MPI_Comm comm
#define TRD_A_reduce(I) sendbuf, recvbuf, I(count), datatype, op, root, comm
#define TRD_BIG_reduce (count > INT_MAX)

#define TRD_P_bcast(C) void *buffer, C count, MPI_Datatype datatype, int root, MPI_Comm comm
#define TRD_A_bcast(I) buffer, I(count), datatype, root, comm
#define TRD_BIG_bcast (count > INT_MAX)

#endif
