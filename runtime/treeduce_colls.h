/* The collectives treeduce replaces, in one table: a line each, holding all
 * that the runtime needs to know of the collective besides its algorithms.
 * The MPI entry points (treeduce_mpi.inc), the declarations of treeduce.h
 * and of a machine's header, the runtime's trd_ routines and the calls of
 * the MPI library's own routine (coll.c) are stamped out of it in every
 * form MPI has (blocking; nonblocking, MPI_I...; persistent, ..._init, MPI
 * 4.0; large-count, ..._c, MPI 4.0), as MPICH generates its own from one
 * list (maint/gen_coll.py).  Adding a collective is one line here and its
 * algorithms (the planners of its enum trd_coll, trd_sched.h); a collective
 * whose arguments need more than the common checks and buffers names its
 * own hooks in its line, as allreduce, reduce_scatter, allgather, reduce
 * and bcast do.
 *
 * TRD_COLLS(X) expands X(name, Name, K, P, coll, flags, hooks) once per
 * collective, in the order that indexes coll.c's table of descriptors:
 *   name  as in trd_name and MPI_Iname ("allreduce");
 *   Name  as in MPI_Name ("Allreduce");
 *   K     empty where the counts are scalars: the runtime's nonblocking and
 *         persistent routines take MPI_Count, so trd_iname serves both
 *         MPI_Iname and MPI_Iname_c; _c where there is a count per rank
 *         (reduce_scatter), whose arrays differ in type: trd_iname_c and
 *         trd_name_init_c serve the large-count forms;
 *   P     its parameters in MPI's order, each by the name MPI gives it,
 *         (sendbuf, recvbuf, count, ...): the name says its type and what
 *         it means (TRD_DECL_p below; coll.c's SET_p and GET_p);
 * and, read by coll.c alone:
 *   coll  the enum trd_coll whose plans run it, -1 where a hook stages the
 *         call onto another collective's plans (reduce_scatter);
 *   flags its checks and properties (coll.c, ARG_* and COLL_*);
 *   hooks (.hook = function, ...): what its MPI semantics add to the one
 *         routine every collective runs (coll.c, struct coll_desc), () for
 *         none.
 * Every X takes them as (name, Name, K, P, ...) where it needs no more.
 * The MPI, trd_ and PMPI_ names of a collective's forms follow MPI's
 * spelling from name and Name. */
#ifndef TREEDUCE_COLLS_H
#define TREEDUCE_COLLS_H

/* clang-format off */
#define TRD_COLLS(X) \
    X(allreduce, Allreduce, , (sendbuf, recvbuf, count, datatype, op, comm), \
      TRD_COLL_ALLREDUCE, ARG_OP | ARG_ALIAS | COLL_EMPTY_FIRST | COLL_WHOLE, \
      (.prepare = allreduce_prepare)) \
    X(reduce_scatter_block, Reduce_scatter_block, , (sendbuf, recvbuf, recvcount, datatype, op, comm), \
      TRD_COLL_REDUCE_SCATTER_BLOCK, ARG_OP | ARG_ALIAS | ARG_SEND_BLOCKS | COLL_EMPTY_FIRST, ()) \
    X(reduce_scatter, Reduce_scatter, _c, (sendbuf, recvbuf, recvcounts, datatype, op, comm), \
      -1, ARG_OP | ARG_ALIAS | COLL_EMPTY_FIRST, \
      (.prepare = reduce_scatter_prepare, .check = reduce_scatter_check, .stage = reduce_scatter_stage)) \
    X(allgather, Allgather, , (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm), \
      TRD_COLL_ALLGATHER, ARG_RECV_BLOCKS, (.datatypes = allgather_datatypes)) \
    X(reduce, Reduce, , (sendbuf, recvbuf, count, datatype, op, root, comm), \
      TRD_COLL_REDUCE, ARG_OP | ARG_ROOT | ARG_RECV_AT_ROOT | ARG_ALIAS | COLL_WHOLE, \
      (.library = reduce_library)) \
    X(bcast, Bcast, , (buffer, count, datatype, root, comm), \
      TRD_COLL_BCAST, ARG_ROOT | ARG_NO_SEND, (.datatypes = bcast_datatypes))
/* clang-format on */

/* TRD_PARAMS(C, P): the parameters P as a function declares them, every
 * count of type C (int or MPI_Count); TRD_ARGS(I, P): the same names as
 * arguments, every scalar count passed through I: TRD_AS_IS, or TRD_AS_INT
 * where the int form is called with counts that fit. */
#define TRD_PARAMS(C, P) TRD_MAP(TRD_DECL, C, TRD_COMMA, P)
#define TRD_ARGS(I, P) TRD_MAP(TRD_ARG, I, TRD_COMMA, P)

/* The I of TRD_ARGS: a count passed as it is, or cast to int. */
#define TRD_AS_IS(x) x
#define TRD_AS_INT(x) ((int)(x))

/* Each parameter, by its name in MPI's collectives: TRD_DECL_p(C) its
 * declaration; TRD_ARG_p(I) its argument. */
#define TRD_DECL_sendbuf(C) const void *sendbuf
#define TRD_DECL_recvbuf(C) void *recvbuf
#define TRD_DECL_buffer(C) void *buffer
#define TRD_DECL_count(C) C count
#define TRD_DECL_sendcount(C) C sendcount
#define TRD_DECL_recvcount(C) C recvcount
#define TRD_DECL_recvcounts(C) const C recvcounts[]
#define TRD_DECL_datatype(C) MPI_Datatype datatype
#define TRD_DECL_sendtype(C) MPI_Datatype sendtype
#define TRD_DECL_recvtype(C) MPI_Datatype recvtype
#define TRD_DECL_op(C) MPI_Op op
#define TRD_DECL_root(C) int root
#define TRD_DECL_comm(C) MPI_Comm comm

#define TRD_ARG_sendbuf(I) sendbuf
#define TRD_ARG_recvbuf(I) recvbuf
#define TRD_ARG_buffer(I) buffer
#define TRD_ARG_count(I) I(count)
#define TRD_ARG_sendcount(I) I(sendcount)
#define TRD_ARG_recvcount(I) I(recvcount)
#define TRD_ARG_recvcounts(I) recvcounts /* the array: I does not apply */
#define TRD_ARG_datatype(I) datatype
#define TRD_ARG_sendtype(I) sendtype
#define TRD_ARG_recvtype(I) recvtype
#define TRD_ARG_op(I) op
#define TRD_ARG_root(I) root
#define TRD_ARG_comm(I) comm

#define TRD_DECL(C, p) TRD_DECL_##p(C)
#define TRD_ARG(I, p) TRD_ARG_##p(I)

/* TRD_IF_SCALAR##K(...): its arguments where the counts are scalars (K
 * empty), nothing where they are per rank (K _c); TRD_IF_PER_RANK##K(...)
 * the other way round.  For what only one kind has: trd_name_with for the
 * scalar ones, nonblocking and persistent routines per count type for the
 * others. */
#define TRD_IF_SCALAR(...) __VA_ARGS__
#define TRD_IF_SCALAR_c(...)
#define TRD_IF_PER_RANK(...)
#define TRD_IF_PER_RANK_c(...) __VA_ARGS__

/* TRD_MAP(F, a, S, P): F(a, p) for each p of the parenthesised list P (up
 * to 12), separated by S(): TRD_COMMA or TRD_NOTHING.  TRD_UNPAREN(...)
 * takes a list out of its parentheses. */
#define TRD_COMMA() ,
#define TRD_NOTHING()
#define TRD_UNPAREN(...) __VA_ARGS__
#define TRD_MAP(F, a, S, P) TRD_MAP_CALL(TRD_MAP_N(TRD_NARGS P), (F, a, S, TRD_UNPAREN P))
#define TRD_MAP_CALL(m, args) m args
#define TRD_NARGS(...) TRD_NARGS_(__VA_ARGS__, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0)
#define TRD_NARGS_(_1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11, _12, n, ...) n
#define TRD_MAP_N(n) TRD_MAP_N_(n)
#define TRD_MAP_N_(n) TRD_MAP_##n
#define TRD_MAP_1(F, a, S, p) F(a, p)
#define TRD_MAP_2(F, a, S, p, ...) F(a, p) S() TRD_MAP_1(F, a, S, __VA_ARGS__)
#define TRD_MAP_3(F, a, S, p, ...) F(a, p) S() TRD_MAP_2(F, a, S, __VA_ARGS__)
#define TRD_MAP_4(F, a, S, p, ...) F(a, p) S() TRD_MAP_3(F, a, S, __VA_ARGS__)
#define TRD_MAP_5(F, a, S, p, ...) F(a, p) S() TRD_MAP_4(F, a, S, __VA_ARGS__)
#define TRD_MAP_6(F, a, S, p, ...) F(a, p) S() TRD_MAP_5(F, a, S, __VA_ARGS__)
#define TRD_MAP_7(F, a, S, p, ...) F(a, p) S() TRD_MAP_6(F, a, S, __VA_ARGS__)
#define TRD_MAP_8(F, a, S, p, ...) F(a, p) S() TRD_MAP_7(F, a, S, __VA_ARGS__)
#define TRD_MAP_9(F, a, S, p, ...) F(a, p) S() TRD_MAP_8(F, a, S, __VA_ARGS__)
#define TRD_MAP_10(F, a, S, p, ...) F(a, p) S() TRD_MAP_9(F, a, S, __VA_ARGS__)
#define TRD_MAP_11(F, a, S, p, ...) F(a, p) S() TRD_MAP_10(F, a, S, __VA_ARGS__)
#define TRD_MAP_12(F, a, S, p, ...) F(a, p) S() TRD_MAP_11(F, a, S, __VA_ARGS__)

#endif
