/* The collectives' entry points (treeduce.h): the checks that send a call to
 * the MPI library, the selection (trd_select.h) or the forced algorithm, and
 * the run of this rank's plan (exec.c).  Nothing here knows an algorithm's
 * steps.  A call falls back only before anything has been sent or written, so
 * the MPI library's routine gets the call as the application made it. */
#include "rt.h"

#include <stdlib.h>
#include <string.h>

const char *trd_machine_name(const trd_machine *m)
{
    return m->name;
}

/* Why a reduction with these arguments goes to the MPI library, or NULL; red
 * and dc: how the plan runs it (dtype.c turns a derived datatype's call into
 * one on base elements or on whole elements). */
static const char *reduction_checks(int count, MPI_Datatype datatype, MPI_Op op, trd_reducer *red,
                                    trd_dtype_call *dc)
{
    const char *why;
    if (count < 0)
        return "invalid arguments";
    if (trd_reducer_init(red, datatype, op) == MPI_SUCCESS) {
        dc->derived = 0;
        dc->per = 1;
        dc->type = datatype;
    } else if (op == MPI_OP_NULL) {
        return "invalid arguments";
    } else if ((why = trd_dtype_reduction(dc, datatype, op, (size_t)count, red))) {
        return why;
    }
    if (!red->fn && trd_op_is_predefined(op))
        return "operation not defined for this datatype";
    return NULL;
}

/* count elements of the call from src to dst (one rank: its input is the result). */
static int copy_input(const trd_dtype_call *dc, const trd_reducer *red, void *dst, const void *src,
                      size_t count)
{
    if (dc->derived)
        return trd_dtype_copy(dc, dst, src, count);
    memcpy(dst, src, count * red->extent);
    return MPI_SUCCESS;
}

/* The communicator's description, or why the call goes to the MPI library
 * (*why set, MPI_SUCCESS returned). */
static int setup(const trd_machine *m, MPI_Comm comm, trd_comm **c, const char **why)
{
    int rc;
    if (trd_env_disabled()) {
        *why = "TREEDUCE_DISABLE is set";
        return MPI_SUCCESS;
    }
    if (comm == MPI_COMM_NULL) {
        *why = "invalid arguments";
        return MPI_SUCCESS;
    }
    if ((rc = trd_comm_get(comm, m, c)) != MPI_SUCCESS)
        return rc;
    if ((*c)->fallback)
        *why = (*c)->why;
    return MPI_SUCCESS;
}

/* Run algorithm a (the selection's when NULL) for call: *why set, nothing
 * done, where it cannot. */
static int run(trd_comm *c, const char *routine, const trd_algo *a, const char *params,
               const trd_call *call, const void *sendbuf, void *recvbuf, MPI_Datatype type,
               const trd_reducer *red, const char **why)
{
    trd_plan_entry *p;
    int rc = trd_plan_get(c, a, params, call, &p, why);
    if (rc != MPI_SUCCESS || !p)
        return rc;
    rc = trd_exec(c, p, sendbuf, recvbuf, type, red);
    if (trd_env_verbose() >= 2) {
        a = trd_plan_algo(p, &params);
        trd_choice_note(c->machine, routine, a->name, params);
    }
    return rc;
}

/* Run the plan on the plan's buffers for the call's nin input and nout
 * output elements (see trd_dtype_enter), the result copied back. */
static int run_reduction(trd_comm *c, const char *routine, const trd_algo *a, const char *params,
                         const trd_call *call, const void *sendbuf, void *recvbuf, size_t nin,
                         size_t nout, trd_dtype_call *dc, const trd_reducer *red, const char **why)
{
    int rc;
    if (dc->derived && (rc = trd_dtype_enter(dc, &sendbuf, &recvbuf, nin, nout)) != MPI_SUCCESS)
        return rc;
    rc = run(c, routine, a, params, call, sendbuf, recvbuf, dc->type, red, why);
    return dc->derived ? trd_dtype_leave(dc, !*why, rc) : rc;
}

/* ---- Allreduce ---------------------------------------------------------------------- */

static int allreduce(const trd_machine *m, const void *sendbuf, void *recvbuf, int count,
                     MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, const trd_algo *a,
                     const char *params)
{
    const char *why = NULL;
    trd_reducer red;
    trd_dtype_call dc;
    trd_comm *c = NULL;
    int rc;
    if (trd_env_disabled())
        why = "TREEDUCE_DISABLE is set";
    else if (comm == MPI_COMM_NULL)
        why = "invalid arguments";
    else
        why = reduction_checks(count, datatype, op, &red, &dc);
    if (why)
        goto fallback;
    /* sendbuf == recvbuf is erroneous in MPI, but ranks must not disagree on
     * the path: treat it as MPI_IN_PLACE */
    if (sendbuf == recvbuf)
        sendbuf = MPI_IN_PLACE;
    if (count == 0)
        return MPI_SUCCESS;
    if ((rc = trd_comm_get(comm, m, &c)) != MPI_SUCCESS)
        return rc;
    if (c->fallback) {
        why = c->why;
        goto fallback;
    }
    int in_place = sendbuf == MPI_IN_PLACE;
    if (c->size == 1)
        return in_place ? MPI_SUCCESS : copy_input(&dc, &red, recvbuf, sendbuf, (size_t)count);
    trd_call call = {TRD_COLL_ALLREDUCE, (size_t)count * dc.per, red.extent, 0,
                     in_place,           red.commutative};
    rc = run_reduction(c, "MPI_Allreduce", a, params, &call, in_place ? NULL : sendbuf, recvbuf,
                       (size_t)count, (size_t)count, &dc, &red, &why);
    if (!why)
        return rc;
fallback:
    trd_fallback_note(m, "MPI_Allreduce", why);
    return PMPI_Allreduce(sendbuf, recvbuf, count, datatype, op, comm);
}

int trd_allreduce(const trd_machine *m, const void *sendbuf, void *recvbuf, int count,
                  MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    const char *params;
    const trd_algo *a = trd_env_algorithm(&params);
    return allreduce(m, sendbuf, recvbuf, count, datatype, op, comm, a, params);
}

int trd_allreduce_with(const trd_machine *m, const void *sendbuf, void *recvbuf, int count,
                       MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, const char *algorithm)
{
    const char *params = "";
    const trd_algo *a = NULL;
    if (algorithm && *algorithm && strcmp(algorithm, "auto") != 0 &&
        !(a = trd_algo_parse(TRD_COLL_ALLREDUCE, algorithm, &params))) {
        trd_fallback_note(m, "MPI_Allreduce", "unknown algorithm name");
        return PMPI_Allreduce(sendbuf, recvbuf, count, datatype, op, comm);
    }
    return allreduce(m, sendbuf, recvbuf, count, datatype, op, comm, a, params);
}

/* ---- The pieces --------------------------------------------------------------------- */

int trd_reduce_scatter_block(const trd_machine *m, const void *sendbuf, void *recvbuf,
                             int recvcount, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    trd_reducer red;
    trd_dtype_call dc;
    const char *why = reduction_checks(recvcount, datatype, op, &red, &dc);
    trd_comm *c = NULL;
    int rc;
    if (!why && recvcount == 0)
        return MPI_SUCCESS;
    if (!why && (rc = setup(m, comm, &c, &why)) != MPI_SUCCESS)
        return rc;
    if (!why) {
        if (sendbuf == recvbuf)
            sendbuf = MPI_IN_PLACE;
        int in_place = sendbuf == MPI_IN_PLACE;
        if (c->size == 1)
            return in_place ? MPI_SUCCESS
                            : copy_input(&dc, &red, recvbuf, sendbuf, (size_t)recvcount);
        trd_call call = {TRD_COLL_REDUCE_SCATTER_BLOCK,
                         (size_t)recvcount * dc.per,
                         red.extent,
                         0,
                         in_place,
                         red.commutative};
        rc = run_reduction(c, "MPI_Reduce_scatter_block", NULL, "", &call,
                           in_place ? NULL : sendbuf, recvbuf, (size_t)recvcount * (size_t)c->size,
                           (size_t)recvcount, &dc, &red, &why);
        if (!why)
            return rc;
    }
    trd_fallback_note(m, "MPI_Reduce_scatter_block", why);
    return PMPI_Reduce_scatter_block(sendbuf, recvbuf, recvcount, datatype, op, comm);
}

/* PMPI_Reduce with MPI_IN_PLACE turned into a copy at the root: MPICH 4.0's
 * in-place reduce crashes at roots other than 0 above a few KiB. */
static int fallback_reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                           MPI_Op op, int root, MPI_Comm comm)
{
    int rank, rc, size;
    if (sendbuf != MPI_IN_PLACE || count <= 0 || comm == MPI_COMM_NULL ||
        PMPI_Comm_rank(comm, &rank) != MPI_SUCCESS || rank != root ||
        PMPI_Pack_size(count, datatype, comm, &size) != MPI_SUCCESS)
        return PMPI_Reduce(sendbuf, recvbuf, count, datatype, op, root, comm);
    MPI_Aint lb, ext, tlb, text;
    PMPI_Type_get_extent(datatype, &lb, &ext);
    PMPI_Type_get_true_extent(datatype, &tlb, &text);
    size_t span = (size_t)(count - 1) * (size_t)ext + (size_t)text;
    char *copy = malloc(span);
    if (!copy)
        return MPI_ERR_NO_MEM;
    char *in = copy - tlb; /* the copy as a buffer of count elements of datatype */
    rc = PMPI_Sendrecv((char *)recvbuf, count, datatype, 0, 0, in, count, datatype, 0, 0,
                       MPI_COMM_SELF, MPI_STATUS_IGNORE);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Reduce(in, recvbuf, count, datatype, op, root, comm);
    free(copy);
    return rc;
}

int trd_reduce(const trd_machine *m, const void *sendbuf, void *recvbuf, int count,
               MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm)
{
    trd_reducer red;
    trd_dtype_call dc;
    const char *why = reduction_checks(count, datatype, op, &red, &dc);
    trd_comm *c = NULL;
    int rc;
    if (!why && (rc = setup(m, comm, &c, &why)) != MPI_SUCCESS)
        return rc;
    if (!why && (root < 0 || root >= c->size))
        why = "invalid root";
    if (!why) {
        if (count == 0)
            return MPI_SUCCESS;
        int at_root = c->rank == root;
        if (at_root && sendbuf == recvbuf)
            sendbuf = MPI_IN_PLACE;
        int in_place = at_root && sendbuf == MPI_IN_PLACE;
        if (c->size == 1)
            return in_place ? MPI_SUCCESS : copy_input(&dc, &red, recvbuf, sendbuf, (size_t)count);
        trd_call call = {TRD_COLL_REDUCE, (size_t)count * dc.per, red.extent, root,
                         in_place,        red.commutative};
        rc = run_reduction(c, "MPI_Reduce", NULL, "", &call, in_place ? NULL : sendbuf, recvbuf,
                           (size_t)count, at_root ? (size_t)count : 0, &dc, &red, &why);
        if (!why)
            return rc;
    }
    trd_fallback_note(m, "MPI_Reduce", why);
    return fallback_reduce(sendbuf, recvbuf, count, datatype, op, root, comm);
}

int trd_bcast(const trd_machine *m, void *buffer, int count, MPI_Datatype datatype, int root,
              MPI_Comm comm)
{
    const char *why = count < 0 ? "invalid arguments" : NULL;
    trd_comm *c = NULL;
    size_t ext;
    int rc;
    if (!why && (rc = setup(m, comm, &c, &why)) != MPI_SUCCESS)
        return rc;
    if (!why && (root < 0 || root >= c->size))
        why = "invalid root";
    if (!why && trd_type_extent(datatype, &ext) == MPI_SUCCESS) {
        if (count == 0 || c->size == 1)
            return MPI_SUCCESS;
        trd_call call = {TRD_COLL_BCAST, (size_t)count, ext, root, 0, 0};
        rc = run(c, "MPI_Bcast", NULL, "", &call, NULL, buffer, datatype, NULL, &why);
        if (!why)
            return rc;
    } else if (!why) {
        /* a derived datatype: ranks may describe the same bytes differently,
         * so every rank moves the packed bytes and the choice stays the same */
        int size, pos = 0;
        if ((rc = PMPI_Pack_size(count, datatype, comm, &size)) != MPI_SUCCESS)
            return rc;
        if (size == 0)
            return MPI_SUCCESS;
        char *packed = malloc((size_t)size);
        if (!packed)
            return MPI_ERR_NO_MEM;
        if (c->rank == root)
            rc = PMPI_Pack(buffer, count, datatype, packed, size, &pos, comm);
        if (rc == MPI_SUCCESS)
            rc = trd_bcast(m, packed, size, MPI_BYTE, root, comm);
        pos = 0;
        if (rc == MPI_SUCCESS && c->rank != root)
            rc = PMPI_Unpack(packed, size, &pos, buffer, count, datatype, comm);
        free(packed);
        return rc;
    }
    trd_fallback_note(m, "MPI_Bcast", why);
    return PMPI_Bcast(buffer, count, datatype, root, comm);
}

int trd_allgather(const trd_machine *m, const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                  void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    const char *why = NULL;
    trd_comm *c = NULL;
    size_t ext;
    int rc;
    if (recvcount < 0 || (sendbuf != MPI_IN_PLACE && sendcount < 0))
        why = "invalid arguments";
    if (!why && (rc = setup(m, comm, &c, &why)) != MPI_SUCCESS)
        return rc;
    int in_place = sendbuf == MPI_IN_PLACE;
    int same = in_place || (sendtype == recvtype && sendcount == recvcount);
    if (!why && same && trd_type_extent(recvtype, &ext) == MPI_SUCCESS) {
        if (recvcount == 0)
            return MPI_SUCCESS;
        if (c->size == 1) {
            if (!in_place)
                memcpy(recvbuf, sendbuf, (size_t)recvcount * ext);
            return MPI_SUCCESS;
        }
        trd_call call = {TRD_COLL_ALLGATHER, (size_t)recvcount, ext, 0, in_place, 0};
        rc = run(c, "MPI_Allgather", NULL, "", &call, in_place ? NULL : sendbuf, recvbuf, recvtype,
                 NULL, &why);
        if (!why)
            return rc;
    } else if (!why) {
        /* derived or differing datatypes: gather the packed bytes */
        MPI_Aint lb, rext;
        int size, pos = 0;
        if ((rc = PMPI_Type_get_extent(recvtype, &lb, &rext)) != MPI_SUCCESS ||
            (rc = PMPI_Pack_size(recvcount, recvtype, comm, &size)) != MPI_SUCCESS)
            return rc;
        if (size == 0)
            return MPI_SUCCESS;
        char *packed = malloc((size_t)size * (size_t)(c->size + 1));
        if (!packed)
            return MPI_ERR_NO_MEM;
        char *mine = packed + (size_t)size * (size_t)c->size;
        if (in_place)
            rc = PMPI_Pack((char *)recvbuf + (MPI_Aint)c->rank * recvcount * rext, recvcount,
                           recvtype, mine, size, &pos, comm);
        else
            rc = PMPI_Pack(sendbuf, sendcount, sendtype, mine, size, &pos, comm);
        if (rc == MPI_SUCCESS)
            rc = trd_allgather(m, mine, size, MPI_BYTE, packed, size, MPI_BYTE, comm);
        pos = 0;
        if (rc == MPI_SUCCESS)
            rc = PMPI_Unpack(packed, size * c->size, &pos, recvbuf, recvcount * c->size, recvtype,
                             comm);
        free(packed);
        return rc;
    }
    trd_fallback_note(m, "MPI_Allgather", why);
    return PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}
