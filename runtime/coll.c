/* The collectives' entry points (treeduce.h): the checks that send a call to
 * the MPI library, the call turned into a job for this rank's plan (the
 * selection's or the forced algorithm's), and the job run to the end, started
 * (nonblocking) or kept (persistent) by nbc.c.  Nothing here knows an
 * algorithm's steps.  A call falls back only before anything has been sent or
 * written, so the MPI library's routine gets the call as the application made
 * it: blocking, nonblocking or persistent, with the large-count form where a
 * count does not fit an int.
 */
#include "rt.h"
#include "treeduce_colls.h"

#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *trd_machine_name(const trd_machine *m)
{
    return m->name;
}

/* The MPI library's routine for the call as it was made: b, i, p the
 * blocking, nonblocking and persistent calls, bc, ic, pc their large-count
 * forms (MPI 4.0) where big. */
#if MPI_VERSION >= 4
#define TRD_PMPI(mode, big, b, bc, i, ic, p, pc)                                                   \
    ((mode) == TRD_BLOCKING      ? ((big) ? (bc) : (b))                                            \
     : (mode) == TRD_NONBLOCKING ? ((big) ? (ic) : (i))                                            \
                                 : ((big) ? (pc) : (p)))
#else
#define TRD_PMPI(mode, big, b, bc, i, ic, p, pc)                                                   \
    ((big)                       ? MPI_ERR_COUNT                                                   \
     : (mode) == TRD_BLOCKING    ? (b)                                                             \
     : (mode) == TRD_NONBLOCKING ? (i)                                                             \
                                 : MPI_ERR_UNSUPPORTED_OPERATION)
#endif

/* How a call was made: the mode, and for the others the request and info.
 * progress: a blocking call that goes to the MPI library in its nonblocking
 * form, waited for while treeduce's runs advance (library_form). */
typedef struct how {
    int mode; /* TRD_BLOCKING, TRD_NONBLOCKING, TRD_PERSISTENT */
    MPI_Info info;
    MPI_Request *req;
    int progress;
} how;

static const how blocking = {TRD_BLOCKING, MPI_INFO_NULL, NULL, 0};

/* The routine's name as the application called it, for the notes. */
static const char *routine(const char *const names[3], const how *h)
{
    return names[h->mode];
}

/* name_names: each collective's blocking, nonblocking and persistent names
 * (TRD_BLOCKING, TRD_NONBLOCKING, TRD_PERSISTENT), as MPI spells them. */
#define NAMES(name, Name, K)                                                                       \
    static const char *const name##_names[3] = {"MPI_" #Name, "MPI_I" #name, "MPI_" #Name "_init"};
TRD_COLLS(NAMES)
#undef NAMES

_Static_assert((int)TRD_ALLREDUCE == (int)TRD_COLL_ALLREDUCE &&
                   (int)TRD_REDUCE_SCATTER_BLOCK == (int)TRD_COLL_REDUCE_SCATTER_BLOCK &&
                   (int)TRD_ALLGATHER == (int)TRD_COLL_ALLGATHER &&
                   (int)TRD_REDUCE == (int)TRD_COLL_REDUCE &&
                   (int)TRD_BCAST == (int)TRD_COLL_BCAST && (int)TRD_NCOLLS == (int)TRD_COLL_MAX,
               "treeduce.h's collectives are enum trd_coll");

/* trd_fell_back: set to 0 as a routine starts, to 1 where it calls the MPI
 * library's routine (the label `library` of each).  Initial-exec: one store
 * at a fixed offset from the thread pointer, not a call to find the
 * library's thread-local block on every collective (an int fits the static
 * space the C library keeps for libraries loaded later).  Not under SMPI,
 * which loads the program once per simulated rank and would exhaust that
 * space. */
#if defined(SMPI_H)
static _Thread_local int fell_back;
#else
static _Thread_local int fell_back __attribute__((tls_model("initial-exec")));
#endif

int trd_fell_back(void)
{
    return fell_back;
}

/* The algorithm a *_with routine is given: 0 with *a (NULL: the machine's
 * choice) and *params, or -1 where spec names none of coll's algorithms
 * (said once; the caller calls the MPI library's routine). */
static int forced_spec(const trd_machine *m, int coll, const char *name, const char *spec,
                       const trd_algo **a, const char **params)
{
    /* The last name parsed, per thread: a caller timing one algorithm calls
     * with the same name again and again, and parsing it (a look through
     * the registry) cost 0.1 us a call, a third of a small allreduce. */
    static _Thread_local struct {
        int coll;
        char spec[TRD_CANDIDATE_MAX];
        const trd_algo *a;
        size_t at; /* params: spec + at */
    } last;
    *a = NULL;
    *params = "";
    if (!spec || !*spec || strcmp(spec, "auto") == 0)
        return 0;
    if (last.a && last.coll == coll && strcmp(last.spec, spec) == 0) {
        *a = last.a;
        *params = spec + last.at;
        return 0;
    }
    if ((*a = trd_algo_parse(coll, spec, params))) {
        if (strlen(spec) < sizeof last.spec) {
            last.coll = coll;
            strcpy(last.spec, spec);
            last.a = *a;
            last.at = (size_t)(*params - spec);
            if (!**params) /* "" of the parser, not in spec */
                last.at = strlen(spec);
        }
        return 0;
    }
    trd_forced_note(m, name, spec, "", "not an algorithm's name");
    fell_back = 1;
    return -1;
}

/* The notes of a call that goes to the MPI library's routine (routine name):
 * why; where "mpi" was chosen or forced, its name as any choice's
 * (TREEDUCE_VERBOSE=2); else where an algorithm a was forced, that it cannot
 * run the call. */
static void library_note(const trd_machine *m, const char *name, const trd_algo *a,
                         const char *params, const char *why)
{
    int verbose = trd_env_verbose(); /* looked at once: this runs on every such call */
    if (verbose)
        trd_fallback_note(m, name, why);
    if (why == trd_why_library_chosen || why == trd_why_library_forced) {
        if (verbose >= 2)
            trd_choice_note(m, name, "mpi", "");
    } else if (a && !trd_env_disabled())
        trd_forced_note(m, name, a->name, params, why);
}

/* Why a call goes to the MPI library's routine where treeduce has not
 * refused it: the application's errors, raised by the library; treeduce
 * switched off.  Compared by address (library_form). */
static const char why_erroneous[] =
    "erroneous arguments, which it reports with its own error class",
                  why_invalid[] = "invalid arguments", why_invalid_root[] = "invalid root",
                  why_disabled[] = "TREEDUCE_DISABLE is set";

/* How the MPI library takes a call of kind *h that goes to it for why: a
 * blocking call treeduce refused (a forced algorithm that cannot run it, a
 * datatype or a communicator it does not handle) in its nonblocking form,
 * waited for while treeduce's outstanding runs advance (*nb, returned), as
 * MPI_Barrier is (nbc.c).  A peer may wait for one of this rank's runs
 * before it joins this call, and the library's blocking routine would not
 * let them advance: a forced algorithm refused among nonblocking calls hung
 * test_mixed_waits every time.  Every rank refuses the same calls and
 * blocking calls match only blocking ones, so the form is the same on every
 * rank (a form chosen by whether runs are outstanding hung on the mismatch).
 * The library's routine chosen by the tables ("mpi"), or forced, and the
 * application's errors keep the blocking routine: the first for its speed
 * (MPICH's nonblocking allreduce of 8 bytes takes 1.7 times as long).
 * Under SMPI every call keeps it: SMPI's nonblocking allreduce of 1 MiB
 * over 128 simulated ranks took 157 s of wall time for 5 calls where the
 * blocking one takes seconds, and the simulated runs (scale studies) make
 * no nonblocking calls. */
static const how *library_form(const how *h, const char *why, how *nb)
{
#if defined(SMPI_H)
    (void)why;
    (void)nb;
    return h;
#else
    if (h->mode != TRD_BLOCKING || why == trd_why_library_chosen || why == trd_why_library_forced ||
        why == why_erroneous || why == why_invalid || why == why_invalid_root ||
        why == why_disabled)
        return h;
    *nb = *h;
    nb->progress = 1;
    return nb;
#endif
}

/* The MPI library's nonblocking form of a blocking call, started with rc and
 * *q: waited for while treeduce's runs advance. */
static int library_wait(int rc, MPI_Request *q)
{
    return rc != MPI_SUCCESS ? rc : trd_nbc_wait_library(q, MPI_STATUS_IGNORE);
}

/* ---- Arguments ------------------------------------------------------------------ */

/* A buffer of a call: count elements of type at buf, times the
 * communicator's size where per_rank. */
typedef struct buf_arg {
    const void *buf;
    MPI_Count count;
    MPI_Datatype type;
    int per_rank;
} buf_arg;

enum {
    ARG_OP = 1,           /* a reduction: op must be valid */
    ARG_ROOT = 2,         /* root must be a rank of comm */
    ARG_RECV_AT_ROOT = 4, /* recv is significant at the root only (MPI_Reduce) */
    ARG_NO_SEND = 8       /* no send buffer (MPI_Bcast) */
};

/* A call's arguments as MPI checks them. */
typedef struct call_args {
    MPI_Comm comm;
    buf_arg send, recv;
    MPI_Op op;
    int root, flags; /* ARG_* */
} call_args;

/* A communicator of this process alone on which errors return: MPI_Pack_size
 * on it asks whether a datatype is committed without raising anything. */
static MPI_Comm quiet = MPI_COMM_NULL;
static pthread_once_t quiet_once = PTHREAD_ONCE_INIT;

static void quiet_make(void)
{
    if (PMPI_Comm_dup(MPI_COMM_SELF, &quiet) == MPI_SUCCESS)
        PMPI_Comm_set_errhandler(quiet, MPI_ERRORS_RETURN);
}

/* Whether MPI takes datatype t in a call: not MPI_DATATYPE_NULL, committed
 * where derived; *ext its extent, *named whether it is predefined. */
static int type_valid(MPI_Datatype t, MPI_Aint *ext, int *named)
{
    /* the last predefined type seen on this thread: most programs repeat one */
    static _Thread_local MPI_Datatype last = MPI_DATATYPE_NULL;
    static _Thread_local MPI_Aint last_ext;
    int ni, na, nt, combiner, size;
    MPI_Aint lb;
    if (t != MPI_DATATYPE_NULL && t == last) {
        *ext = last_ext;
        *named = 1;
        return 1;
    }
    if (t == MPI_DATATYPE_NULL ||
        PMPI_Type_get_envelope(t, &ni, &na, &nt, &combiner) != MPI_SUCCESS ||
        PMPI_Type_get_extent(t, &lb, ext) != MPI_SUCCESS)
        return 0;
    if ((*named = combiner == MPI_COMBINER_NAMED)) {
        last = t;
        last_ext = *ext;
        return 1;
    }
    pthread_once(&quiet_once, quiet_make);
    return quiet != MPI_COMM_NULL && PMPI_Pack_size(1, t, quiet, &size) == MPI_SUCCESS;
}

/* Whether a NULL buffer of a positive count of t is erroneous, as MPICH
 * decides: always for a predefined type; for a derived one unless its data
 * may start elsewhere (a true lower bound other than 0: MPI_BOTTOM). */
static int null_erroneous(MPI_Datatype t, int named)
{
    MPI_Aint tlb, text;
    MPI_Count size;
    return named || (PMPI_Type_get_true_extent(t, &tlb, &text) == MPI_SUCCESS && tlb == 0 &&
                     PMPI_Type_size_x(t, &size) == MPI_SUCCESS && size > 0);
}

/* rc raised through comm's error handler (MPI_ERRORS_ARE_FATAL aborts,
 * MPI_ERRORS_RETURN returns), for an error that treeduce finds itself. */
static int raise_error(MPI_Comm comm, int rc)
{
    if (rc != MPI_SUCCESS && comm != MPI_COMM_NULL)
        PMPI_Comm_call_errhandler(comm, rc);
    return rc;
}

/* The checks MPI makes on a call before any byte moves, in one place for
 * every form of every collective.  MPI_SUCCESS, and *why NULL where the call
 * is valid, or the note where the MPI library's routine must take it:
 * the library raises its own class through the communicator's error handler,
 * and no treeduce code has touched a buffer (a NULL or aliased buffer, a
 * count whose bytes overflow, MPI_DATATYPE_NULL or an uncommitted datatype,
 * MPI_OP_NULL, a root out of range, MPI_COMM_NULL).  A negative count, and
 * MPI_IN_PLACE at a reduce's other ranks, on which MPICH 4.0 crashes, are
 * raised here (MPI_ERR_COUNT, MPI_ERR_BUFFER) and returned.
 * aliased (NULL: the library takes such a call): set where sendbuf is
 * recvbuf, which the call then runs as MPI_IN_PLACE and ends with
 * MPI_ERR_BUFFER, so that ranks that did not alias are not left waiting. */
static int check_args(const call_args *a, int *aliased, const char **why)
{
    int size = 1, rank = 0, named[2] = {1, 1};
    MPI_Aint ext[2] = {0, 0};
    const buf_arg *b[2] = {a->flags & ARG_NO_SEND ? NULL : &a->send, &a->recv};
    *why = why_erroneous;
    if (a->comm == MPI_COMM_NULL)
        return MPI_SUCCESS;
    for (int i = 0; i < 2; i++)
        if (b[i] && b[i]->buf != MPI_IN_PLACE && b[i]->count < 0)
            return raise_error(a->comm, MPI_ERR_COUNT);
    if ((a->flags & (ARG_ROOT | ARG_RECV_AT_ROOT)) || a->send.per_rank || a->recv.per_rank) {
        if (PMPI_Comm_size(a->comm, &size) != MPI_SUCCESS ||
            PMPI_Comm_rank(a->comm, &rank) != MPI_SUCCESS)
            return MPI_SUCCESS;
    }
    if ((a->flags & ARG_ROOT) && (a->root < 0 || a->root >= size)) {
        /* MPI_ROOT, MPI_PROC_NULL or a remote rank: valid on an intercommunicator */
        int inter = 0;
        if (PMPI_Comm_test_inter(a->comm, &inter) == MPI_SUCCESS && inter)
            *why = "intercommunicator";
        return MPI_SUCCESS;
    }
    if ((a->flags & ARG_OP) && a->op == MPI_OP_NULL)
        return MPI_SUCCESS;
    int recv_used = !(a->flags & ARG_RECV_AT_ROOT) || rank == a->root;
    if (!recv_used)
        b[1] = NULL;
    if (a->recv.buf == MPI_IN_PLACE && recv_used)
        return MPI_SUCCESS;
    /* MPI_IN_PLACE at a rank other than the root (MPICH 4.0 crashes) */
    if (b[0] && b[0]->buf == MPI_IN_PLACE && (a->flags & ARG_RECV_AT_ROOT) && !recv_used)
        return raise_error(a->comm, MPI_ERR_BUFFER);
    for (int i = 0; i < 2; i++) {
        if (!b[i] || b[i]->buf == MPI_IN_PLACE)
            continue;
        MPI_Count n, bytes;
        if (__builtin_mul_overflow(b[i]->count, (MPI_Count)(b[i]->per_rank ? size : 1), &n) ||
            !type_valid(b[i]->type, &ext[i], &named[i]) ||
            (ext[i] > 0 &&
             (__builtin_mul_overflow(n, (MPI_Count)ext[i], &bytes) || bytes > PTRDIFF_MAX)) ||
            (!b[i]->buf && n > 0 && null_erroneous(b[i]->type, named[i])))
            return MPI_SUCCESS;
    }
    if (b[0] && b[1] && b[0]->buf == b[1]->buf && b[0]->buf && b[0]->buf != MPI_IN_PLACE &&
        b[0]->count > 0) {
        if (!aliased)
            return MPI_SUCCESS;
        *aliased = 1;
    }
    *why = NULL;
    return MPI_SUCCESS;
}

/* check_args, then a forced "mpi" (a): the MPI library's routine, taken
 * like a fallback before anything else is looked at (*why
 * trd_why_library_forced). */
static int check_call(const call_args *args, int *aliased, const trd_algo *a, const char **why)
{
    int rc = check_args(args, aliased, why);
    if (rc == MPI_SUCCESS && !*why && a && (a->flags & TRD_ALGO_LIBRARY))
        *why = trd_why_library_forced;
    return rc;
}

/* When a call of kind h makes its communicator's segment (trd_comm_get):
 * at once for a forced algorithm a (the one named may need it) and a
 * persistent request (made to be started many times); else a blocking call
 * from the communicator's TREEDUCE_SEGMENT_CALLS-th on. */
static int segment_when(const trd_algo *a, const how *h)
{
    return a || h->mode == TRD_PERSISTENT ? TRD_SEGMENT_NOW
           : h->mode == TRD_BLOCKING      ? TRD_SEGMENT_BLOCKING
                                          : TRD_SEGMENT_LATER;
}

/* The communicator's description for a call of kind `when`
 * (segment_when), or why the call goes to the MPI library (*why set,
 * MPI_SUCCESS returned). */
static int setup(const trd_machine *m, MPI_Comm comm, int when, trd_comm **c, const char **why)
{
    int rc;
    if (trd_env_disabled()) {
        *why = why_disabled;
        return MPI_SUCCESS;
    }
    if (comm == MPI_COMM_NULL) {
        *why = why_invalid;
        return MPI_SUCCESS;
    }
    if ((rc = trd_comm_get(comm, m, when, c)) != MPI_SUCCESS)
        return rc;
    if ((*c)->fallback)
        *why = (*c)->why;
    return MPI_SUCCESS;
}

/* Why a call has nothing to move. */
static const char count0[] = "count 0, nothing to move";
static const char one_rank[] = "a communicator of one rank, nothing to move";

/* A call with nothing to move (why: count0 or one_rank): done here when
 * blocking (copy bytes from src to dst unless src is NULL); the others take
 * the MPI library's request, which costs nothing either, and say so in the
 * note of the routine names[h->mode].  Returns 1 if handled. */
static int trivial(const trd_machine *m, const char *const names[3], const how *h, const char *why,
                   const void *src, void *dst, size_t bytes)
{
    if (h->mode != TRD_BLOCKING) {
        trd_fallback_note(m, routine(names, h), why);
        return 0;
    }
    if (src && bytes)
        memcpy(dst, src, bytes);
    return 1;
}

/* Why a reduction with these arguments goes to the MPI library, or NULL; red
 * and dc: how the plan runs it (dtype.c turns a derived datatype's call into
 * one on base elements or on whole elements). */
static const char *reduction_checks(MPI_Count count, MPI_Datatype datatype, MPI_Op op,
                                    trd_reducer *red, trd_dtype_call *dc)
{
    const char *why;
    if (count < 0)
        return why_invalid;
    if (trd_reducer_init(red, datatype, op) == MPI_SUCCESS) {
        dc->derived = 0;
        dc->per = 1;
        dc->type = datatype;
    } else if (op == MPI_OP_NULL) {
        return why_invalid;
    } else if ((why = trd_dtype_reduction(dc, datatype, op, (size_t)count, red))) {
        return why;
    }
    /* A predefined op without a kernel runs through MPI_Reduce_local on the
     * plan's element type; where the MPI library rejects the pair (a kernel
     * exists only for pairs it accepts), its own routine raises the error. */
    if (!red->fn && trd_op_is_predefined(op) && !trd_reduce_local_accepts(red->type, op))
        return op == MPI_REPLACE || op == MPI_NO_OP
                   ? "MPI_REPLACE or MPI_NO_OP in a reduction"
                   : "the MPI library rejects this operation on this datatype";
    return NULL;
}

/* Launch job j as h says; a derived datatype's call (blocking only) runs on
 * the plan's buffers, nin input and nout output elements of the call copied
 * in and out (trd_dtype_enter). */
/* A blocking call with nothing outstanding: run to the end here. */
static int run_here(const trd_job *j, const char **why)
{
    trd_plan_entry *p;
    int rc = trd_plan_get(j->c, j->a, j->params, &j->call, j->untuned, &p, why);
    if (rc != MPI_SUCCESS || !p)
        return rc; /* the caller falls back and still owns the stage */
    if (!j->stage || !j->stage->pre || (rc = j->stage->pre(j->stage)) == MPI_SUCCESS) {
        rc = trd_exec(j->c, p, j->sendbuf, j->recvbuf, j->type, j->red);
        if (rc == MPI_SUCCESS && j->stage && j->stage->post)
            rc = j->stage->post(j->stage);
        trd_note_choice(j, p);
    }
    if (j->stage && j->stage->free)
        j->stage->free(j->stage);
    return rc;
}

/* Run, start or keep job j as h says: directly when blocking with nothing
 * outstanding, else queued (nbc.c). */
static inline int run_or_queue(const trd_job *j, const how *h, const char **why)
{
    if (h->mode == TRD_BLOCKING && !trd_nbc_outstanding())
        return run_here(j, why);
#if MPI_VERSION < 4
    if (h->mode == TRD_PERSISTENT && !j->untuned) {
        trd_job k = *j;
        k.untuned = 1;
        return trd_launch(&k, h->mode, h->req, why);
    }
#endif
    return trd_launch(j, h->mode, h->req, why);
}

static int launch(trd_job *j, const how *h, trd_dtype_call *dc, size_t nin, size_t nout,
                  const char **why)
{
    int rc;
    if (!dc->derived)
        return run_or_queue(j, h, why);
    if (h->mode != TRD_BLOCKING) {
        *why = "derived datatype in a nonblocking or persistent reduction";
        return MPI_SUCCESS;
    }
    if ((rc = trd_dtype_enter(dc, &j->sendbuf, &j->recvbuf, nin, nout)) != MPI_SUCCESS)
        return rc;
    rc = run_or_queue(j, h, why);
    return trd_dtype_leave(dc, !*why, rc);
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

/* ---- The MPI library's routines ------------------------------------------------------ */

/* PMPI_Reduce, or where progress its nonblocking form waited for while
 * treeduce's runs advance (library_form), with MPI_IN_PLACE turned into a
 * copy at the root: MPICH 4.0's in-place reduce crashes at roots other than
 * 0 above a few KiB. */
static int reduce_copying(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                          MPI_Op op, int root, MPI_Comm comm, int progress)
{
    int rank, rc, size;
    MPI_Request q;
    char *copy = NULL;
    if (sendbuf == MPI_IN_PLACE && count > 0 && comm != MPI_COMM_NULL &&
        PMPI_Comm_rank(comm, &rank) == MPI_SUCCESS && rank == root &&
        PMPI_Pack_size(count, datatype, comm, &size) == MPI_SUCCESS) {
        MPI_Aint lb, ext, tlb, text;
        PMPI_Type_get_extent(datatype, &lb, &ext);
        PMPI_Type_get_true_extent(datatype, &tlb, &text);
        size_t span = (size_t)(count - 1) * (size_t)ext + (size_t)text;
        if (!(copy = malloc(span)))
            return MPI_ERR_NO_MEM;
        sendbuf = copy - tlb; /* the copy as a buffer of count elements of datatype */
        rc = PMPI_Sendrecv((char *)recvbuf, count, datatype, 0, 0, (char *)sendbuf, count, datatype,
                           0, 0, MPI_COMM_SELF, MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS) {
            free(copy);
            return rc;
        }
    }
    rc = progress
             ? library_wait(PMPI_Ireduce(sendbuf, recvbuf, count, datatype, op, root, comm, &q), &q)
             : PMPI_Reduce(sendbuf, recvbuf, count, datatype, op, root, comm);
    free(copy);
    return rc;
}

static int pmpi_reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                       MPI_Op op, int root, MPI_Comm comm)
{
    return reduce_copying(sendbuf, recvbuf, count, datatype, op, root, comm, 0);
}

/* pmpi_name: the MPI library's blocking routine with int counts. */
#define pmpi_allreduce PMPI_Allreduce
#define pmpi_reduce_scatter_block PMPI_Reduce_scatter_block
#define pmpi_allgather PMPI_Allgather
#define pmpi_bcast PMPI_Bcast

/* library_name: the MPI library's routine for a call of a collective with
 * scalar counts as it was made (h), in its large-count form where a count
 * does not fit an int.  reduce_scatter's arrays: in its own routine. */
#define LIBRARY(name, Name, K) LIBRARY_SCALAR##K(name, Name)
#define LIBRARY_SCALAR_c(name, Name)
#define LIBRARY_SCALAR(name, Name)                                                                 \
    static int library_##name(TRD_P_##name(MPI_Count), const how *h)                               \
    {                                                                                              \
        if (h->mode == TRD_BLOCKING && h->progress) {                                              \
            MPI_Request q;                                                                         \
            const how nb = {TRD_NONBLOCKING, MPI_INFO_NULL, &q, 0};                                \
            return library_wait(library_##name(TRD_A_##name(TRD_AS_IS), &nb), &q);                 \
        }                                                                                          \
        return TRD_PMPI(h->mode, TRD_BIG_##name, pmpi_##name(TRD_A_##name(TRD_AS_INT)),            \
                        PMPI_##Name##_c(TRD_A_##name(TRD_AS_IS)),                                  \
                        PMPI_I##name(TRD_A_##name(TRD_AS_INT), h->req),                            \
                        PMPI_I##name##_c(TRD_A_##name(TRD_AS_IS), h->req),                         \
                        PMPI_##Name##_init(TRD_A_##name(TRD_AS_INT), h->info, h->req),             \
                        PMPI_##Name##_init_c(TRD_A_##name(TRD_AS_IS), h->info, h->req));           \
    }
TRD_COLLS(LIBRARY)
#undef LIBRARY

/* ---- Allreduce ---------------------------------------------------------------------- */

/* TREEDUCE_REPRODUCIBLE: the algorithm whose order of reduction depends only
 * on the communicator's size, in place of a (said once where a was forced). */
static const trd_algo *reproducible(const trd_machine *m, const trd_algo *a, const char **params)
{
    const trd_algo *repro = trd_algo_find(TRD_COLL_ALLREDUCE, "repro", 5);
    char msg[128];
    if (a && a != repro && trd_env_verbose()) {
        snprintf(msg, sizeof msg, "TREEDUCE_REPRODUCIBLE is set: MPI_Allreduce runs repro, not %s",
                 a->name);
        trd_note(m, msg);
    }
    *params = "";
    return repro;
}

static int allreduce(const trd_machine *m, const void *sendbuf, void *recvbuf, MPI_Count count,
                     MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, const trd_algo *a,
                     const char *params, const how *h)
{
    how nb; /* the form library_form gives a refused blocking call */
    const char *why = NULL;
    trd_reducer red;
    trd_dtype_call dc;
    trd_comm *c = NULL;
    int rc, aliased = 0;
    const call_args args = {
        comm, {sendbuf, count, datatype, 0}, {recvbuf, count, datatype, 0}, op, 0, ARG_OP};
    fell_back = 0;
    if (!a)
        a = trd_env_algorithm(&params);
    int when = segment_when(a, h); /* before the reproducible mode names its algorithm */
    if (trd_env_reproducible())
        a = reproducible(m, a, &params);
    if (trd_env_disabled())
        why = why_disabled;
    else if ((rc = check_call(&args, h->mode == TRD_BLOCKING ? &aliased : NULL, a, &why)))
        return rc;
    else if (!why)
        why = reduction_checks(count, datatype, op, &red, &dc);
    if (why)
        goto fallback;
    int in_place = aliased || sendbuf == MPI_IN_PLACE;
    if (count == 0) {
        if (trivial(m, allreduce_names, h, count0, NULL, recvbuf, 0))
            return MPI_SUCCESS;
        goto library;
    }
    if ((rc = trd_comm_get(comm, m, when, &c)) != MPI_SUCCESS)
        return rc;
    if (c->fallback) {
        why = c->why;
        goto fallback;
    }
    if (c->size == 1) {
        if (!trivial(m, allreduce_names, h, one_rank, NULL, NULL, 0))
            goto library;
        return raise_error(comm, in_place ? aliased ? MPI_ERR_BUFFER : MPI_SUCCESS
                                          : copy_input(&dc, &red, recvbuf, sendbuf, (size_t)count));
    }
    trd_job j = {c,
                 routine(allreduce_names, h),
                 a,
                 params,
                 {TRD_COLL_ALLREDUCE, (size_t)count * dc.per, red.extent, 0, in_place,
                  red.commutative, !trd_op_is_predefined(op)},
                 in_place ? NULL : sendbuf,
                 recvbuf,
                 dc.type,
                 &red,
                 NULL,
                 !trd_op_is_predefined(op)};
    rc = launch(&j, h, &dc, (size_t)count, (size_t)count, &why);
    if (!why)
        return raise_error(comm, rc || !aliased ? rc : MPI_ERR_BUFFER);
fallback:
    library_note(m, routine(allreduce_names, h), a, params, why);
    h = library_form(h, why, &nb);
library:
    fell_back = 1;
    return library_allreduce(TRD_A_allreduce(TRD_AS_IS), h);
}

/* ---- Reduce_scatter_block ----------------------------------------------------------- */

static int reduce_scatter_block(const trd_machine *m, const void *sendbuf, void *recvbuf,
                                MPI_Count recvcount, MPI_Datatype datatype, MPI_Op op,
                                MPI_Comm comm, const trd_algo *a, const char *params, const how *h)
{
    how nb; /* the form library_form gives a refused blocking call */
    trd_reducer red;
    trd_dtype_call dc;
    const call_args args = {
        comm, {sendbuf, recvcount, datatype, 1}, {recvbuf, recvcount, datatype, 0}, op, 0, ARG_OP};
    const char *why;
    trd_comm *c = NULL;
    fell_back = 0;
    int aliased = 0, rc = check_call(&args, h->mode == TRD_BLOCKING ? &aliased : NULL, a, &why);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!why)
        why = reduction_checks(recvcount, datatype, op, &red, &dc);
    if (!why && recvcount == 0) {
        if (trivial(m, reduce_scatter_block_names, h, count0, NULL, recvbuf, 0))
            return MPI_SUCCESS;
        goto library;
    }
    if (!why && (rc = setup(m, comm, segment_when(a, h), &c, &why)) != MPI_SUCCESS)
        return rc;
    if (!why) {
        int in_place = aliased || sendbuf == MPI_IN_PLACE;
        if (c->size == 1) {
            if (!trivial(m, reduce_scatter_block_names, h, one_rank, NULL, NULL, 0))
                goto library;
            return raise_error(
                comm, in_place ? aliased ? MPI_ERR_BUFFER : MPI_SUCCESS
                               : copy_input(&dc, &red, recvbuf, sendbuf, (size_t)recvcount));
        }
        trd_job j = {c,
                     routine(reduce_scatter_block_names, h),
                     a,
                     params,
                     {TRD_COLL_REDUCE_SCATTER_BLOCK, (size_t)recvcount * dc.per, red.extent, 0,
                      in_place, red.commutative, 0},
                     in_place ? NULL : sendbuf,
                     recvbuf,
                     dc.type,
                     &red,
                     NULL,
                     !trd_op_is_predefined(op)};
        rc = launch(&j, h, &dc, (size_t)recvcount * (size_t)c->size, (size_t)recvcount, &why);
        if (!why)
            return raise_error(comm, rc || !aliased ? rc : MPI_ERR_BUFFER);
    }
    library_note(m, routine(reduce_scatter_block_names, h), a, params, why);
    h = library_form(h, why, &nb);
library:
    fell_back = 1;
    return library_reduce_scatter_block(TRD_A_reduce_scatter_block(TRD_AS_IS), h);
}

/* ---- Reduce_scatter (a count per rank) ---------------------------------------------- */

/* Reduce_scatter on the plans of the equal-block collectives: every rank's
 * block padded to the largest count (zeros), reduce_scatter_block, the own
 * block copied out; or, where padding would more than double the data, an
 * allreduce of the whole vector and the own block copied out [MPICH §4.3]. */
typedef struct rs_stage {
    trd_stage st;
    const char *input; /* the user's vector: sendbuf, or recvbuf in place */
    char *recvbuf;
    char *in, *out; /* padded blocks (NULL: the allreduce form), the plan's result */
    size_t ext, block, mine, own_at; /* bytes: an element, a padded block; elements */
    size_t *counts, *displs;         /* elements per rank and where they start */
    int size;
} rs_stage;

static int rs_pre(trd_stage *st)
{
    rs_stage *s = (rs_stage *)st;
    for (int r = 0; s->in && r < s->size; r++)
        memcpy(s->in + (size_t)r * s->block, s->input + s->displs[r] * s->ext,
               s->counts[r] * s->ext);
    return MPI_SUCCESS;
}

static int rs_post(trd_stage *st)
{
    rs_stage *s = (rs_stage *)st;
    memmove(s->recvbuf, s->out + s->own_at * s->ext, s->mine * s->ext);
    return MPI_SUCCESS;
}

static void rs_free(trd_stage *st)
{
    rs_stage *s = (rs_stage *)st;
    free(s->in);
    free(s->out);
    free(s->counts);
    free(s);
}

/* recvcounts: icounts (int) or ccounts (MPI_Count), the other NULL; a and
 * params: NULL and "" (the machine's choice). */
static int reduce_scatter_counts(const trd_machine *m, const void *sendbuf, void *recvbuf,
                                 const int *icounts, const MPI_Count *ccounts,
                                 MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, const trd_algo *a,
                                 const char *params, const how *h)
{
    how nb; /* the form library_form gives a refused blocking call */
    trd_reducer red;
    const char *why = NULL;
    trd_comm *c = NULL;
    rs_stage *s = NULL;
    int rc, size = 0, rank = 0, negative = 0;
    fell_back = 0;
    if (comm != MPI_COMM_NULL &&
        (PMPI_Comm_size(comm, &size) != MPI_SUCCESS || PMPI_Comm_rank(comm, &rank) != MPI_SUCCESS))
        why = why_invalid;
    size_t total = 0, maxc = 0;
    for (int r = 0; !why && r < size; r++) {
        MPI_Count n = icounts ? icounts[r] : ccounts[r];
        negative |= n < 0;
        total += n > 0 ? (size_t)n : 0;
        maxc = n > 0 && (size_t)n > maxc ? (size_t)n : maxc;
    }
    MPI_Count mine = size ? (icounts ? icounts[rank] : ccounts[rank]) : 0;
    const call_args args = {comm,
                            {sendbuf, negative ? -1 : (MPI_Count)total, datatype, 0},
                            {recvbuf, negative ? -1 : mine, datatype, 0},
                            op,
                            0,
                            ARG_OP};
    int aliased = 0;
    if (!why && (rc = check_args(&args, h->mode == TRD_BLOCKING ? &aliased : NULL, &why)))
        return rc;
    trd_dtype_call dc;
    if (!why)
        why = reduction_checks((MPI_Count)total, datatype, op, &red, &dc);
    if (!why && dc.derived)
        why = "derived datatype with a count per rank";
    if (!why && total == 0) {
        if (trivial(m, reduce_scatter_names, h, count0, NULL, recvbuf, 0))
            return MPI_SUCCESS;
        goto library;
    }
    if (!why && (rc = setup(m, comm, segment_when(a, h), &c, &why)) != MPI_SUCCESS)
        return rc;
    if (!why) {
        const void *input = aliased ? MPI_IN_PLACE : sendbuf;
        if (c->size == 1) {
            if (trivial(m, reduce_scatter_names, h, one_rank, input == MPI_IN_PLACE ? NULL : input,
                        recvbuf, total * red.extent))
                return raise_error(comm, aliased ? MPI_ERR_BUFFER : MPI_SUCCESS);
            goto library;
        }
        if (!(s = calloc(1, sizeof *s)) ||
            !(s->counts = malloc(2 * (size_t)size * sizeof *s->counts))) {
            free(s);
            return MPI_ERR_NO_MEM;
        }
        s->st = (trd_stage){rs_pre, rs_post, rs_free};
        s->displs = s->counts + size;
        for (int r = 0; r < size; r++) {
            s->counts[r] = (size_t)(icounts ? icounts[r] : ccounts[r]);
            s->displs[r] = r ? s->displs[r - 1] + s->counts[r - 1] : 0;
        }
        s->size = size;
        s->ext = red.extent;
        s->input = input == MPI_IN_PLACE ? recvbuf : input;
        s->recvbuf = recvbuf;
        s->mine = s->counts[c->rank];
        int padded = maxc * (size_t)size <= 2 * total;
        trd_call call = {padded ? TRD_COLL_REDUCE_SCATTER_BLOCK : TRD_COLL_ALLREDUCE,
                         padded ? maxc : total,
                         red.extent,
                         0,
                         0,
                         red.commutative,
                         0};
        s->block = maxc * red.extent;
        s->own_at = padded ? 0 : s->displs[c->rank];
        if (padded && !(s->in = calloc((size_t)size, s->block)))
            goto nomem;
        if (!(s->out = malloc((padded ? maxc : total) * red.extent)))
            goto nomem;
        trd_job j = {c,
                     routine(reduce_scatter_names, h),
                     a,
                     params,
                     call,
                     s->in ? s->in : s->input,
                     s->out,
                     red.type,
                     &red,
                     &s->st,
                     !trd_op_is_predefined(op)};
        rc = run_or_queue(&j, h, &why);
        if (!why)
            return raise_error(comm, rc || !aliased ? rc : MPI_ERR_BUFFER);
        rs_free(&s->st);
    }
    trd_fallback_note(m, routine(reduce_scatter_names, h), why);
    h = library_form(h, why, &nb);
library:
    fell_back = 1;
    if (h->progress) {
        MPI_Request q;
        return library_wait(
            ccounts ? TRD_PMPI(
                          TRD_NONBLOCKING, 1, MPI_ERR_COUNT, MPI_ERR_COUNT, MPI_ERR_COUNT,
                          PMPI_Ireduce_scatter_c(sendbuf, recvbuf, ccounts, datatype, op, comm, &q),
                          MPI_ERR_COUNT, MPI_ERR_COUNT)
                    : PMPI_Ireduce_scatter(sendbuf, recvbuf, icounts, datatype, op, comm, &q),
            &q);
    }
    if (ccounts)
        return TRD_PMPI(
            h->mode, 1, MPI_ERR_COUNT,
            PMPI_Reduce_scatter_c(sendbuf, recvbuf, ccounts, datatype, op, comm), MPI_ERR_COUNT,
            PMPI_Ireduce_scatter_c(sendbuf, recvbuf, ccounts, datatype, op, comm, h->req),
            MPI_ERR_COUNT,
            PMPI_Reduce_scatter_init_c(sendbuf, recvbuf, ccounts, datatype, op, comm, h->info,
                                       h->req));
    return TRD_PMPI(
        h->mode, 0, PMPI_Reduce_scatter(sendbuf, recvbuf, icounts, datatype, op, comm),
        MPI_ERR_COUNT, PMPI_Ireduce_scatter(sendbuf, recvbuf, icounts, datatype, op, comm, h->req),
        MPI_ERR_COUNT,
        PMPI_Reduce_scatter_init(sendbuf, recvbuf, icounts, datatype, op, comm, h->info, h->req),
        MPI_ERR_COUNT);
nomem:
    rs_free(&s->st);
    return MPI_ERR_NO_MEM;
}

/* reduce_scatter with the table's arguments (treeduce_colls.h): recvcounts
 * as int or as MPI_Count elements. */
#define reduce_scatter(m, sendbuf, recvbuf, counts, ...)                                           \
    reduce_scatter_counts(m, sendbuf, recvbuf,                                                     \
                          _Generic((counts), const int *: (counts), default: (const int *)NULL),   \
                          _Generic((counts), const MPI_Count *: (counts),                          \
                                   default: (const MPI_Count *)NULL),                              \
                          __VA_ARGS__)

/* ---- Reduce ------------------------------------------------------------------------- */

static int reduce(const trd_machine *m, const void *sendbuf, void *recvbuf, MPI_Count count,
                  MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm, const trd_algo *a,
                  const char *params, const how *h)
{
    how nb; /* the form library_form gives a refused blocking call */
    trd_reducer red;
    trd_dtype_call dc;
    const call_args args = {
        comm, {sendbuf, count, datatype, 0},       {recvbuf, count, datatype, 0}, op,
        root, ARG_OP | ARG_ROOT | ARG_RECV_AT_ROOT};
    const char *why;
    trd_comm *c = NULL;
    fell_back = 0;
    int aliased = 0, rc = check_call(&args, h->mode == TRD_BLOCKING ? &aliased : NULL, a, &why);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!why)
        why = reduction_checks(count, datatype, op, &red, &dc);
    if (!why && (rc = setup(m, comm, segment_when(a, h), &c, &why)) != MPI_SUCCESS)
        return rc;
    if (!why && (root < 0 || root >= c->size))
        why = why_invalid_root;
    if (!why) {
        int at_root = c->rank == root;
        int in_place = at_root && (aliased || sendbuf == MPI_IN_PLACE);
        if (count == 0 || c->size == 1) {
            if (!trivial(m, reduce_names, h, count == 0 ? count0 : one_rank, NULL, NULL, 0))
                goto library;
            return raise_error(comm, aliased ? MPI_ERR_BUFFER
                                     : in_place || !count
                                         ? MPI_SUCCESS
                                         : copy_input(&dc, &red, recvbuf, sendbuf, (size_t)count));
        }
        trd_job j = {c,
                     routine(reduce_names, h),
                     a,
                     params,
                     {TRD_COLL_REDUCE, (size_t)count * dc.per, red.extent, root, in_place,
                      red.commutative, !trd_op_is_predefined(op)},
                     in_place ? NULL : sendbuf,
                     recvbuf,
                     dc.type,
                     &red,
                     NULL,
                     !trd_op_is_predefined(op)};
        rc = launch(&j, h, &dc, (size_t)count, at_root ? (size_t)count : 0, &why);
        if (!why)
            return raise_error(comm, rc || !aliased ? rc : MPI_ERR_BUFFER);
    }
    library_note(m, routine(reduce_names, h), a, params, why);
    h = library_form(h, why, &nb);
library:
    fell_back = 1;
    if (h->progress && count <= INT_MAX) /* its in-place copy too (reduce_copying) */
        return reduce_copying(sendbuf, recvbuf, (int)count, datatype, op, root, comm, 1);
    return library_reduce(TRD_A_reduce(TRD_AS_IS), h);
}

/* ---- Bcast -------------------------------------------------------------------------- */

static int bcast(const trd_machine *m, void *buffer, MPI_Count count, MPI_Datatype datatype,
                 int root, MPI_Comm comm, const trd_algo *a, const char *params, const how *h)
{
    how nb; /* the form library_form gives a refused blocking call */
    const call_args args = {comm, {NULL, 0, datatype, 0}, {buffer, count, datatype, 0}, MPI_OP_NULL,
                            root, ARG_ROOT | ARG_NO_SEND};
    const char *why;
    trd_comm *c = NULL;
    size_t ext;
    fell_back = 0;
    int rc = check_call(&args, NULL, a, &why);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!why && (rc = setup(m, comm, segment_when(a, h), &c, &why)) != MPI_SUCCESS)
        return rc;
    if (!why && (root < 0 || root >= c->size))
        why = why_invalid_root;
    if (!why && trd_type_extent(datatype, &ext) == MPI_SUCCESS) {
        if (count == 0 || c->size == 1) {
            if (trivial(m, bcast_names, h, count == 0 ? count0 : one_rank, NULL, buffer, 0))
                return MPI_SUCCESS;
            goto library;
        }
        trd_job j = {c,
                     routine(bcast_names, h),
                     a,
                     params,
                     {TRD_COLL_BCAST, (size_t)count, ext, root, 0, 0, 0},
                     NULL,
                     buffer,
                     datatype,
                     NULL,
                     NULL,
                     0};
        rc = run_or_queue(&j, h, &why);
        if (!why)
            return raise_error(comm, rc);
    } else if (!why && h->mode == TRD_BLOCKING && count <= INT_MAX) {
        /* a derived datatype: ranks may describe the same bytes differently,
         * so every rank moves the packed bytes and the choice stays the same */
        int size, pos = 0;
        if ((rc = PMPI_Pack_size((int)count, datatype, comm, &size)) != MPI_SUCCESS)
            return rc;
        if (size == 0)
            return MPI_SUCCESS;
        char *packed = malloc((size_t)size);
        if (!packed)
            return MPI_ERR_NO_MEM;
        if (c->rank == root)
            rc = PMPI_Pack(buffer, (int)count, datatype, packed, size, &pos, comm);
        if (rc == MPI_SUCCESS)
            rc = bcast(m, packed, size, MPI_BYTE, root, comm, a, params, &blocking);
        pos = 0;
        if (rc == MPI_SUCCESS && c->rank != root)
            rc = PMPI_Unpack(packed, size, &pos, buffer, (int)count, datatype, comm);
        free(packed);
        return rc;
    } else if (!why) {
        why = "derived datatype in a nonblocking, persistent or large-count bcast";
    }
    library_note(m, routine(bcast_names, h), a, params, why);
    h = library_form(h, why, &nb);
library:
    fell_back = 1;
    return library_bcast(TRD_A_bcast(TRD_AS_IS), h);
}

/* ---- Allgather ---------------------------------------------------------------------- */

static int allgather(const trd_machine *m, const void *sendbuf, MPI_Count sendcount,
                     MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount,
                     MPI_Datatype recvtype, MPI_Comm comm, const trd_algo *a, const char *params,
                     const how *h)
{
    how nb; /* the form library_form gives a refused blocking call */
    const call_args args = {
        comm, {sendbuf, sendcount, sendtype, 0}, {recvbuf, recvcount, recvtype, 1}, MPI_OP_NULL, 0,
        0};
    const char *why;
    trd_comm *c = NULL;
    size_t ext;
    fell_back = 0;
    int rc = check_call(&args, NULL, a, &why);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!why && (rc = setup(m, comm, segment_when(a, h), &c, &why)) != MPI_SUCCESS)
        return rc;
    int in_place = sendbuf == MPI_IN_PLACE;
    int same = in_place || (sendtype == recvtype && sendcount == recvcount);
    if (!why && same && trd_type_extent(recvtype, &ext) == MPI_SUCCESS) {
        if (recvcount == 0 || c->size == 1) {
            if (trivial(m, allgather_names, h, recvcount == 0 ? count0 : one_rank,
                        in_place ? NULL : sendbuf, recvbuf, (size_t)recvcount * ext))
                return MPI_SUCCESS;
            goto library;
        }
        trd_job j = {c,
                     routine(allgather_names, h),
                     a,
                     params,
                     {TRD_COLL_ALLGATHER, (size_t)recvcount, ext, 0, in_place, 0, 0},
                     in_place ? NULL : sendbuf,
                     recvbuf,
                     recvtype,
                     NULL,
                     NULL,
                     0};
        rc = run_or_queue(&j, h, &why);
        if (!why)
            return raise_error(comm, rc);
    } else if (!why && h->mode == TRD_BLOCKING && recvcount <= INT_MAX && sendcount <= INT_MAX) {
        /* derived or differing datatypes: gather the packed bytes */
        MPI_Aint lb, rext;
        int size, pos = 0;
        if ((rc = PMPI_Type_get_extent(recvtype, &lb, &rext)) != MPI_SUCCESS ||
            (rc = PMPI_Pack_size((int)recvcount, recvtype, comm, &size)) != MPI_SUCCESS)
            return rc;
        if (size == 0)
            return MPI_SUCCESS;
        char *packed = malloc((size_t)size * (size_t)(c->size + 1));
        if (!packed)
            return MPI_ERR_NO_MEM;
        char *mine = packed + (size_t)size * (size_t)c->size;
        if (in_place)
            rc = PMPI_Pack((char *)recvbuf + (MPI_Aint)c->rank * recvcount * rext, (int)recvcount,
                           recvtype, mine, size, &pos, comm);
        else
            rc = PMPI_Pack(sendbuf, (int)sendcount, sendtype, mine, size, &pos, comm);
        if (rc == MPI_SUCCESS)
            rc = allgather(m, mine, size, MPI_BYTE, packed, size, MPI_BYTE, comm, a, params,
                           &blocking);
        pos = 0;
        if (rc == MPI_SUCCESS)
            rc = PMPI_Unpack(packed, size * c->size, &pos, recvbuf, (int)recvcount * c->size,
                             recvtype, comm);
        free(packed);
        return rc;
    } else if (!why) {
        why = "derived or differing datatypes in a nonblocking, persistent or large-count "
              "allgather";
    }
    library_note(m, routine(allgather_names, h), a, params, why);
    h = library_form(h, why, &nb);
library:
    fell_back = 1;
    return library_allgather(TRD_A_allgather(TRD_AS_IS), h);
}

/* ---- Every form of every collective, from the table (treeduce_colls.h) ---- */

/* f(...) with its arguments expanded first: the table's TRD_A_name becomes
 * the arguments it lists before f, maybe a macro, takes them apart. */
#define CALL(f, ...) f(__VA_ARGS__)

/* trd_name (int counts) and trd_name_c (MPI_Count): blocking; then the
 * nonblocking and persistent forms, whose scalar counts are MPI_Count
 * (REQUEST_FORMS), and for counts per rank one of each per count type
 * (REQUEST_FORMS_c).  a NULL: the machine's choice (allreduce:
 * TREEDUCE_ALGORITHM's where set). */
#define FORMS(name, Name, K)                                                                       \
    int trd_##name(const trd_machine *m, TRD_P_##name(int))                                        \
    {                                                                                              \
        return CALL(name, m, TRD_A_##name(TRD_AS_IS), NULL, "", &blocking);                        \
    }                                                                                              \
    int trd_##name##_c(const trd_machine *m, TRD_P_##name(MPI_Count))                              \
    {                                                                                              \
        return CALL(name, m, TRD_A_##name(TRD_AS_IS), NULL, "", &blocking);                        \
    }                                                                                              \
    REQUEST_FORMS##K(name)
#define REQUEST_FORMS(name) REQUEST_FORMS_OF(name, MPI_Count, )
#define REQUEST_FORMS_c(name) REQUEST_FORMS_OF(name, int, ) REQUEST_FORMS_OF(name, MPI_Count, _c)
#define REQUEST_FORMS_OF(name, C, S)                                                               \
    int trd_i##name##S(const trd_machine *m, TRD_P_##name(C), MPI_Request *request)                \
    {                                                                                              \
        how h = {TRD_NONBLOCKING, MPI_INFO_NULL, request, 0};                                      \
        return CALL(name, m, TRD_A_##name(TRD_AS_IS), NULL, "", &h);                               \
    }                                                                                              \
    int trd_##name##_init##S(const trd_machine *m, TRD_P_##name(C), MPI_Info info,                 \
                             MPI_Request *request)                                                 \
    {                                                                                              \
        how h = {TRD_PERSISTENT, info, request, 0};                                                \
        return CALL(name, m, TRD_A_##name(TRD_AS_IS), NULL, "", &h);                               \
    }
TRD_COLLS(FORMS)

/* trd_name_with: blocking, with the algorithm given by name (forced_spec);
 * the collectives of the registry, those with scalar counts. */
#define COLL_allreduce TRD_COLL_ALLREDUCE
#define COLL_reduce_scatter_block TRD_COLL_REDUCE_SCATTER_BLOCK
#define COLL_allgather TRD_COLL_ALLGATHER
#define COLL_reduce TRD_COLL_REDUCE
#define COLL_bcast TRD_COLL_BCAST
#define WITH(name, Name, K) WITH_SCALAR##K(name, Name)
#define WITH_SCALAR_c(name, Name)
#define WITH_SCALAR(name, Name)                                                                    \
    int trd_##name##_with(const trd_machine *m, TRD_P_##name(int), const char *algorithm)          \
    {                                                                                              \
        const char *params;                                                                        \
        const trd_algo *a;                                                                         \
        if (forced_spec(m, COLL_##name, "MPI_" #Name, algorithm, &a, &params))                     \
            return pmpi_##name(TRD_A_##name(TRD_AS_IS));                                           \
        return CALL(name, m, TRD_A_##name(TRD_AS_IS), a, params, &blocking);                       \
    }
TRD_COLLS(WITH)

/* ---- Candidates --------------------------------------------------------------------- */

/* Whether a plans call on sh with params: rank 0's schedule, the same answer
 * on every rank. */
static int candidate_plans(const trd_algo *a, const char *params, const trd_shape *sh,
                           const trd_call *call)
{
    trd_sched s;
    char why[256];
    if (trd_plan(&s, a, params, sh, call, 0, why, sizeof why))
        return 0;
    trd_sched_free(&s);
    return 1;
}

/* Whether parameter texts p and q parse to the same parameters of a on sh. */
static int same_params(const trd_algo *a, const char *p, const char *q, const trd_shape *sh)
{
    char why[256];
    if (strcmp(p, q) == 0)
        return 1;
    if (!a->parse || !a->params_size)
        return 0;
    char *x = calloc(2, a->params_size);
    int same = x && !a->parse(p, sh, x, why, sizeof why) &&
               !a->parse(q, sh, x + a->params_size, why, sizeof why) &&
               memcmp(x, x + a->params_size, a->params_size) == 0;
    free(x);
    return same;
}

/* out[n] = "name[:params]" where n < cap (a registry name and parameters
 * shorter than TRD_PARAMS_MAX fit); returns n + 1. */
static int candidate_add(char (*out)[TRD_CANDIDATE_MAX], int cap, int n, const char *name,
                         const char *params)
{
    if (n < cap &&
        snprintf(out[n], TRD_CANDIDATE_MAX, "%s%s%s", name, *params ? ":" : "", params) < 0)
        out[n][0] = '\0';
    return n + 1;
}

int trd_candidates(const trd_machine *m, MPI_Comm comm, int coll, char (*out)[TRD_CANDIDATE_MAX],
                   int cap)
{
    trd_comm *c;
    char cand[32][TRD_PARAMS_MAX];
    int n = 0;
    if (coll < 0 || coll >= TRD_COLL_MAX || comm == MPI_COMM_NULL ||
        trd_comm_get(comm, m, TRD_SEGMENT_NOW, &c) != MPI_SUCCESS || c->fallback)
        return -1;
    /* a representative call: 1024 doubles per rank, a predefined commutative op */
    const trd_call call = {coll, (size_t)1024 * (size_t)c->size, sizeof(double), 0, 0, 1, 0};
    for (int i = 0; trd_algos[i]; i++) {
        const trd_algo *a = trd_algos[i];
        if (a->coll != coll || (a->flags & TRD_ALGO_LIBRARY))
            continue;
        int dflt = candidate_plans(a, "", &c->shape, &call);
        if (dflt)
            n = candidate_add(out, cap, n, a->name, "");
        int nc = a->candidates ? a->candidates(&c->shape, cand, 32) : 0;
        for (int k = 0; k < nc && k < 32; k++)
            if (candidate_plans(a, cand[k], &c->shape, &call) &&
                !(dflt && same_params(a, "", cand[k], &c->shape)))
                n = candidate_add(out, cap, n, a->name, cand[k]);
    }
    return candidate_add(out, cap, n, "mpi", "");
}
