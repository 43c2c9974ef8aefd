/* The collectives' entry points (treeduce.h), every form of every collective
 * run by one routine, collective(): the checks that send a call to the MPI
 * library, the communicator's setup, a call with nothing to move done here,
 * the call turned into a job for this rank's plan (the selection's or the
 * forced algorithm's), and the job run to the end, started (nonblocking) or
 * kept (persistent) by nbc.c.  What differs between the collectives is in
 * one descriptor each (struct coll_desc, the table colls[]), stamped from
 * its line of treeduce_colls.h: its names, its checks, how its call and
 * buffers are formed from its parameters and given back to the MPI
 * library's routine, and the hooks its line names.  Nothing here knows an
 * algorithm's steps.  A call falls back only before anything has been sent or written,
 * through one path at the end of collective(), so the MPI library's routine
 * gets the call as the application made it: blocking, nonblocking or
 * persistent, with the large-count form where a count does not fit an int.
 * Adding a collective is one line of the table and its algorithms.
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
 * form, waited for while treeduce's runs advance (library_form); set too on
 * that nonblocking form as the library's routine gets it. */
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

_Static_assert((int)TRD_ALLREDUCE == (int)TRD_COLL_ALLREDUCE &&
                   (int)TRD_REDUCE_SCATTER_BLOCK == (int)TRD_COLL_REDUCE_SCATTER_BLOCK &&
                   (int)TRD_ALLGATHER == (int)TRD_COLL_ALLGATHER &&
                   (int)TRD_REDUCE == (int)TRD_COLL_REDUCE &&
                   (int)TRD_BCAST == (int)TRD_COLL_BCAST && (int)TRD_NCOLLS == (int)TRD_COLL_MAX,
               "treeduce.h's collectives are enum trd_coll");

/* trd_fell_back: set to 0 as a routine starts, to 1 where it calls the MPI
 * library's routine (the label `library` of collective()).  Initial-exec: one store
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
 * (said once; the call goes to the MPI library's blocking routine). */
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
    return -1;
}

/* The notes of a call that goes to the MPI library's routine (routine name):
 * why; where "mpi" was chosen or forced, its name as any choice's
 * (TREEDUCE_VERBOSE=2); else where an algorithm a was forced, that it cannot
 * run the call. */
static void library_note(const trd_machine *m, const char *name, const trd_algo *a,
                         const char *params, const char *why)
{
    int verbose = trd_env_verbose();  /* looked at once: this runs on every such call */
    if (why == trd_why_first_calls) { /* not a refusal: said where choices are */
        char msg[200];
        if (verbose >= 2) {
            snprintf(msg, sizeof msg,
                     "%s: the MPI library's routine takes a communicator's first %lld calls "
                     "(TREEDUCE_SEGMENT_CALLS)",
                     name, trd_env_segment_calls() - 1);
            trd_note(m, msg);
        }
        return;
    }
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
 * The library's routine chosen by the tables ("mpi") keeps the blocking
 * routine for its speed (MPICH's nonblocking allreduce of 8 bytes takes 1.7
 * times as long), except on a communicator c that has had a nonblocking or
 * persistent call since its setup: a run of it may be outstanding here and
 * awaited by a peer that joins this call only after it (mpi.tuned.hold hung
 * every time).  Every rank makes the same calls on c in the same order, so
 * c->nonblocking is the same on all of them at this call.  The same for
 * "mpi" forced by TREEDUCE_ALGORITHM (peek set), which forces allreduce
 * alone, so the other collectives' runs may be outstanding: decided before
 * the setup, it looks comm's description up (c NULL).  "mpi" forced through
 * a *_with routine (the tuner timing the library's routine) and the
 * application's errors keep the blocking routine.
 * Under SMPI every call keeps it: SMPI's nonblocking allreduce of 1 MiB
 * over 128 simulated ranks took 157 s of wall time for 5 calls where the
 * blocking one takes seconds, and the simulated runs (scale studies) make
 * no nonblocking calls. */
static const how *library_form(const how *h, const char *why, const trd_comm *c, MPI_Comm comm,
                               int peek, how *nb)
{
#if defined(SMPI_H)
    (void)why;
    (void)c;
    (void)comm;
    (void)peek;
    (void)nb;
    return h;
#else
    if (h->mode != TRD_BLOCKING || why == why_erroneous || why == why_invalid ||
        why == why_invalid_root || why == why_disabled)
        return h;
    if (why == trd_why_library_chosen || why == trd_why_library_forced) {
        if (!c && peek && why == trd_why_library_forced)
            c = trd_comm_peek(comm);
        if (!(c && c->nonblocking))
            return h;
    }
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

/* A collective's flags (its line of treeduce_colls.h): the checks its
 * arguments get (check_args), and what else collective() does for it. */
enum {
    ARG_OP = 1,           /* a reduction: op must be valid */
    ARG_ROOT = 2,         /* root must be a rank of comm */
    ARG_RECV_AT_ROOT = 4, /* recv is significant at the root only (MPI_Reduce) */
    ARG_NO_SEND = 8,      /* no send buffer (MPI_Bcast) */
    ARG_ALIAS = 16,       /* a blocking call whose sendbuf is recvbuf runs in place (aliased) */
    ARG_SEND_BLOCKS = 32, /* the send buffer holds a block of the receive count per rank */
    ARG_RECV_BLOCKS = 64, /* the receive buffer holds a block per rank */
    /* and two that are not checks: */
    COLL_EMPTY_FIRST = 128, /* nothing to move: done before the communicator is set up */
    COLL_WHOLE = 256        /* a user-defined op reduces the whole vector at once (trd_call) */
};

/* A call's arguments, every collective's in one form: as MPI checks them,
 * and as the MPI library's routine gets them back (library_of).  Formed by
 * ARGS(P) from the parameters P of a collective's line, then by its flags
 * (collective()): ARG_SEND_BLOCKS and ARG_RECV_BLOCKS set per_rank. */
typedef struct call_args {
    MPI_Comm comm;
    buf_arg send, recv; /* recv.buf: the application's void *, kept const here (recv_buf) */
    MPI_Op op;          /* reductions */
    int root;           /* reduce, bcast */
    /* reduce_scatter's count per rank, int or MPI_Count (the other NULL);
     * send.count and recv.count are then the whole vector's and this
     * rank's, set by its descriptor's prepare */
    const int *icounts;
    const MPI_Count *ccounts;
} call_args;

/* The receive buffer, as the application gave it. */
static inline void *recv_buf(const call_args *x)
{
    return (void *)x->recv.buf;
}

/* counts as an array of T, or NULL where it is of the other count type. */
#define COUNTS_AS(T, counts) _Generic((counts), const T * : (counts), default : (const T *)NULL)

/* ARGS(P): the call_args of an entry point's parameters P, as an
 * initialiser; SET_p: what parameter p sets, by its name in MPI's
 * collectives (treeduce_colls.h). */
#define ARGS(P)                                                                                    \
    {                                                                                              \
        TRD_MAP(SET, ~, TRD_COMMA, P)                                                              \
    }
#define SET(unused, p) SET_##p
#define SET_sendbuf .send.buf = sendbuf
#define SET_recvbuf .recv.buf = recvbuf
#define SET_buffer .recv.buf = buffer
#define SET_count .send.count = count, .recv.count = count
#define SET_sendcount .send.count = sendcount
#define SET_recvcount .recv.count = recvcount
#define SET_recvcounts                                                                             \
    .icounts = COUNTS_AS(int, recvcounts), .ccounts = COUNTS_AS(MPI_Count, recvcounts)
#define SET_datatype .send.type = datatype, .recv.type = datatype
#define SET_sendtype .send.type = sendtype
#define SET_recvtype .recv.type = recvtype
#define SET_op .op = op
#define SET_root .root = root
#define SET_comm .comm = comm

/* GET((x, I), p), the other way: parameter p of call_args *x as the MPI
 * library's routine takes it, a scalar count through I (TRD_AS_INT for the
 * int form, TRD_AS_IS for the large-count one) and counts per rank as the
 * array of that form.  BIG(x, p): "|| CONDITION" where parameter p needs
 * the large-count form (a count above INT_MAX, counts per rank given as
 * MPI_Count), nothing for the parameters that are not counts. */
#define GET(xi, p) GET_##p xi
#define GET_sendbuf(x, I) (x)->send.buf
#define GET_recvbuf(x, I) recv_buf(x)
#define GET_buffer(x, I) recv_buf(x)
#define GET_count(x, I) I((x)->recv.count)
#define GET_sendcount(x, I) I((x)->send.count)
#define GET_recvcount(x, I) I((x)->recv.count)
#define GET_recvcounts(x, I) I##_COUNTS(x)
#define TRD_AS_INT_COUNTS(x) (x)->icounts
#define TRD_AS_IS_COUNTS(x) (x)->ccounts
#define GET_datatype(x, I) (x)->recv.type
#define GET_sendtype(x, I) (x)->send.type
#define GET_recvtype(x, I) (x)->recv.type
#define GET_op(x, I) (x)->op
#define GET_root(x, I) (x)->root
#define GET_comm(x, I) (x)->comm
#define BIG(x, p) BIG_##p(x)
#define BIG_count(x) || (x)->recv.count > INT_MAX
#define BIG_sendcount(x) || (x)->send.count > INT_MAX
#define BIG_recvcount(x) || (x)->recv.count > INT_MAX
#define BIG_recvcounts(x) || (x)->ccounts
#define BIG_sendbuf(x)
#define BIG_recvbuf(x)
#define BIG_buffer(x)
#define BIG_datatype(x)
#define BIG_sendtype(x)
#define BIG_recvtype(x)
#define BIG_op(x)
#define BIG_root(x)
#define BIG_comm(x)

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
 * every form of every collective; flags: which (ARG_*).  MPI_SUCCESS, and *why NULL where the call
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
static int check_args(const call_args *a, int flags, int *aliased, const char **why)
{
    int size = 1, rank = 0, named[2] = {1, 1};
    MPI_Aint ext[2] = {0, 0};
    const buf_arg *b[2] = {flags & ARG_NO_SEND ? NULL : &a->send, &a->recv};
    *why = why_erroneous;
    if (a->comm == MPI_COMM_NULL)
        return MPI_SUCCESS;
    for (int i = 0; i < 2; i++)
        if (b[i] && b[i]->buf != MPI_IN_PLACE && b[i]->count < 0)
            return raise_error(a->comm, MPI_ERR_COUNT);
    if ((flags & (ARG_ROOT | ARG_RECV_AT_ROOT)) || a->send.per_rank || a->recv.per_rank) {
        if (PMPI_Comm_size(a->comm, &size) != MPI_SUCCESS ||
            PMPI_Comm_rank(a->comm, &rank) != MPI_SUCCESS)
            return MPI_SUCCESS;
    }
    if ((flags & ARG_ROOT) && (a->root < 0 || a->root >= size)) {
        /* MPI_ROOT, MPI_PROC_NULL or a remote rank: valid on an intercommunicator */
        int inter = 0;
        if (PMPI_Comm_test_inter(a->comm, &inter) == MPI_SUCCESS && inter)
            *why = "intercommunicator";
        return MPI_SUCCESS;
    }
    if ((flags & ARG_OP) && a->op == MPI_OP_NULL)
        return MPI_SUCCESS;
    int recv_used = !(flags & ARG_RECV_AT_ROOT) || rank == a->root;
    if (!recv_used)
        b[1] = NULL;
    if (a->recv.buf == MPI_IN_PLACE && recv_used)
        return MPI_SUCCESS;
    /* MPI_IN_PLACE at a rank other than the root (MPICH 4.0 crashes) */
    if (b[0] && b[0]->buf == MPI_IN_PLACE && (flags & ARG_RECV_AT_ROOT) && !recv_used)
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
static int check_call(const call_args *args, int flags, int *aliased, const trd_algo *a,
                      const char **why)
{
    int rc = check_args(args, flags, aliased, why);
    if (rc == MPI_SUCCESS && !*why && a && (a->flags & TRD_ALGO_LIBRARY))
        *why = trd_why_library_forced;
    return rc;
}

/* When a call of kind h sets its communicator up and makes its segment
 * (trd_comm_get): at once for a forced algorithm a (the one named may need
 * it) and a persistent request (made to be started many times); else the
 * communicator's TREEDUCE_SEGMENT_CALLS-th call sets it up (the calls
 * before go to the MPI library's routine) and a blocking call from then on
 * makes the segment once the calls have moved TREEDUCE_SEGMENT_BYTES. */
static int segment_when(const trd_algo *a, const how *h)
{
    return a || h->mode == TRD_PERSISTENT ? TRD_SEGMENT_NOW
           : h->mode == TRD_BLOCKING      ? TRD_SEGMENT_BLOCKING
                                          : TRD_SEGMENT_LATER;
}

/* The communicator's description for a call of kind `when`
 * (segment_when), or why the call goes to the MPI library (*why set,
 * MPI_SUCCESS returned). */
static int setup(const trd_machine *m, MPI_Comm comm, int when, MPI_Count count, MPI_Datatype type,
                 trd_comm **c, const char **why)
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
    if ((rc = trd_comm_get(comm, m, when, count, type, c)) != MPI_SUCCESS)
        return rc;
    if ((*c)->fallback)
        *why = (*c)->unbuilt ? trd_why_first_calls : (*c)->why;
    return MPI_SUCCESS;
}

/* Why a call has nothing to move. */
static const char count0[] = "count 0, nothing to move";
static const char one_rank[] = "a communicator of one rank, nothing to move";

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

/* A blocking call with nothing outstanding: run to the end here. */
static int run_here(const trd_job *j, const char **why)
{
    trd_plan_entry *p;
    int rc = trd_plan_get(j->c, j->a, j->params, &j->call, j->untuned, &p, why);
    if (rc == MPI_SUCCESS && !p)
        return rc;           /* refused: the caller falls back and still owns the stage */
    if (rc != MPI_SUCCESS) { /* an error ends the call, and its stage */
        if (j->stage && j->stage->free)
            j->stage->free(j->stage);
        return rc;
    }
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

/* Launch job j as h says; a derived datatype's call (blocking only) runs on
 * the plan's buffers, nin input and nout output elements of the call copied
 * in and out (trd_dtype_enter). */
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
    if ((rc = trd_dtype_enter(dc, &j->sendbuf, &j->recvbuf, nin, nout)) != MPI_SUCCESS) {
        if (j->stage && j->stage->free) /* an error ends the call, and its stage */
            j->stage->free(j->stage);
        return rc;
    }
    rc = run_or_queue(j, h, why);
    return trd_dtype_leave(dc, !*why, rc);
}

/* ---- One routine for every collective ------------------------------------------------ */

typedef struct coll_desc coll_desc;

/* A call on its way through collective(): what the checks and the setup
 * found, for its descriptor's hooks. */
typedef struct call_ctx {
    const coll_desc *d;
    const trd_machine *m;
    call_args *x;
    const how *h;
    const char *algorithm; /* the *_with routines' spec, or NULL */
    const trd_algo *a;     /* the forced algorithm; NULL: the selection's */
    const char *params;
    const char *why; /* set: the call goes to the MPI library's routine */
    int when;        /* the segment's (segment_when) */
    int done;        /* a hook completed the call itself */
    int aliased;     /* sendbuf is recvbuf: runs in place, ends with MPI_ERR_BUFFER */
    int in_place;
    trd_comm *c;
    MPI_Count n;        /* elements: the count of allreduce, reduce and bcast, a rank's block of
                         * reduce_scatter_block and allgather, reduce_scatter's whole vector */
    size_t ext;         /* bytes of an element: the reducer's, or the datatype's */
    trd_reducer *red;   /* reductions (ARG_OP) */
    trd_dtype_call *dc; /* reductions: how a derived datatype runs; dc->derived 0 otherwise */
} call_ctx;

/* A descriptor's hook: MPI_SUCCESS, with k->why set where the call goes to
 * the MPI library's routine, or k->done where the hook completed it; or an
 * error, which the call returns as it is. */
typedef int coll_hook(call_ctx *k);

/* A collective: what collective() does not do alike for all of them.  The
 * first four fields come from its line of treeduce_colls.h; the hooks are
 * those its line names, NULL where it names none. */
struct coll_desc {
    const char *names[3]; /* its routine as MPI spells it, blocking, nonblocking, persistent */
    int coll;             /* enum trd_coll, whose algorithms *_with forces; -1: none */
    int flags;            /* ARG_*, COLL_* */
    /* the MPI library's routine for the call made as h says (library_of) */
    int (*pmpi)(const call_args *x, const how *h);
    coll_hook *prepare;   /* before the checks, or NULL */
    coll_hook *check;     /* after the checks common to all, or NULL */
    coll_hook *datatypes; /* after the setup: k->ext where the plan moves the datatypes, else
                           * the call made on packed bytes; NULL: a reduction's (k->red) */
    /* where a stage moves the arguments for the plan: j's call, buffers
     * and stage made over (NULL: the plan runs on the arguments) */
    int (*stage)(call_ctx *k, trd_job *j);
    /* in place of pmpi: the call changed on its way to the library's
     * routine; *scratch: memory to free once it has completed */
    int (*library)(const call_args *x, const how *h, void **scratch);
};

/* run_name: collective() for the table's row name (defined after the
 * table). */
#define RUN_DECLARE(name, ...)                                                                     \
    static int run_##name(const trd_machine *m, call_args *x, const char *algorithm, const how *h);
TRD_COLLS(RUN_DECLARE)
#undef RUN_DECLARE

/* A call's input copied to its output (one rank: its input is the result). */
static int copy_input(const call_ctx *k)
{
    if (k->dc->derived)
        return trd_dtype_copy(k->dc, recv_buf(k->x), k->x->send.buf, (size_t)k->n);
    memcpy(recv_buf(k->x), k->x->send.buf, (size_t)k->n * k->ext);
    return MPI_SUCCESS;
}

/* A call with nothing to move (why: count0 or one_rank): done here when
 * blocking (*rc its result); the others take the MPI library's request,
 * which costs nothing either, and say so.  Returns 1 if done. */
static int trivial(const call_ctx *k, const char *why, int *rc)
{
    if (k->h->mode != TRD_BLOCKING) {
        trd_fallback_note(k->m, routine(k->d->names, k->h), why);
        return 0;
    }
    *rc = raise_error(k->x->comm, k->aliased                 ? MPI_ERR_BUFFER
                                  : k->in_place || k->n == 0 ? MPI_SUCCESS
                                                             : copy_input(k));
    return 1;
}

/* Collective d on machine m with arguments x, made as h says; algorithm:
 * the *_with routines' spec (NULL: the machine's choice).  The arguments
 * checked, the communicator set up (its segment when segment_when says), a
 * call with nothing to move done here, the job planned and run, started or
 * kept; where any of them refuses the call, the MPI library's routine.
 * Inlined into one routine per collective (run_name), where d is a constant:
 * its flags fold and its hooks are called directly, and a small blocking
 * call costs little more than it did in a driver written for it. */
__attribute__((always_inline)) static inline int collective(const coll_desc *d,
                                                            const trd_machine *m, call_args *x,
                                                            const char *algorithm, const how *h)
{
    how nb; /* the form library_form gives a refused blocking call */
    trd_reducer red;
    trd_dtype_call dc;
    call_ctx k = {.d = d,
                  .m = m,
                  .x = x,
                  .h = h,
                  .algorithm = algorithm,
                  .a = NULL,
                  .params = "",
                  .why = NULL,
                  .when = TRD_SEGMENT_NOW,
                  .done = 0,
                  .aliased = 0,
                  .in_place = 0,
                  .c = NULL,
                  .n = x->recv.count,
                  .ext = 0,
                  .red = &red,
                  .dc = &dc};
    int rc, reduction = d->flags & ARG_OP;
    fell_back = 0;
    dc.derived = 0;
    if (d->flags & ARG_SEND_BLOCKS) {
        x->send.count = x->recv.count;
        x->send.per_rank = 1;
    }
    if (d->flags & ARG_RECV_BLOCKS)
        x->recv.per_rank = 1;
    if (algorithm && forced_spec(m, d->coll, d->names[TRD_BLOCKING], algorithm, &k.a, &k.params))
        goto library;
    k.when = segment_when(k.a, h);
    if (d->prepare && (rc = d->prepare(&k)) != MPI_SUCCESS)
        return rc;
    if (!k.why &&
        (rc = check_call(x, d->flags,
                         h->mode == TRD_BLOCKING && (d->flags & ARG_ALIAS) ? &k.aliased : NULL, k.a,
                         &k.why)) != MPI_SUCCESS)
        return rc;
    if (!k.why && reduction && !(k.why = reduction_checks(k.n, x->recv.type, x->op, &red, &dc)))
        k.ext = red.extent;
    if (!k.why && d->check && (rc = d->check(&k)) != MPI_SUCCESS)
        return rc;
    k.in_place = k.aliased || x->send.buf == MPI_IN_PLACE || (d->flags & ARG_NO_SEND);
    if (!k.why && k.n == 0 && (d->flags & COLL_EMPTY_FIRST)) {
        if (trivial(&k, count0, &rc))
            return rc;
        goto library;
    }
    if (!k.why && d->coll < 0 && !d->stage) /* a line of the table without algorithms yet */
        k.why = "no algorithms of its own";
    if (!k.why && (rc = setup(m, x->comm, k.when, k.n, x->recv.type, &k.c, &k.why)) != MPI_SUCCESS)
        return rc;
    if (!k.why && h->mode != TRD_BLOCKING && !k.c->nonblocking)
        k.c->nonblocking = 1; /* library_form */
    if (!k.why && (d->flags & ARG_ROOT) && (x->root < 0 || x->root >= k.c->size))
        k.why = why_invalid_root;
    if (!k.why && d->datatypes && ((rc = d->datatypes(&k)) != MPI_SUCCESS || k.done))
        return rc;
    if (!k.why && (k.n == 0 || k.c->size == 1)) {
        if (trivial(&k, k.n == 0 ? count0 : one_rank, &rc))
            return rc;
        goto library;
    }
    if (!k.why) {
        trd_job j = {.c = k.c,
                     .routine = routine(d->names, h),
                     .a = k.a,
                     .params = k.params,
                     .call = {.coll = d->coll,
                              .count = (size_t)k.n * (reduction ? dc.per : 1),
                              .extent = k.ext,
                              .root = x->root,
                              .in_place = k.in_place && !(d->flags & ARG_NO_SEND),
                              .commutative = reduction ? red.commutative : 0,
                              .whole = (d->flags & COLL_WHOLE) && !trd_op_is_predefined(x->op)},
                     .sendbuf = k.in_place ? NULL : x->send.buf,
                     .recvbuf = recv_buf(x),
                     .type = reduction ? dc.type : x->recv.type,
                     .red = reduction ? &red : NULL,
                     .stage = NULL,
                     .untuned = reduction && !trd_op_is_predefined(x->op)};
        if (d->stage && (rc = d->stage(&k, &j)) != MPI_SUCCESS)
            return rc;
        if (reduction) /* a derived datatype's elements copied in and out */
            rc = launch(&j, h, &dc, (size_t)k.n * (x->send.per_rank ? (size_t)k.c->size : 1),
                        (d->flags & ARG_RECV_AT_ROOT) && k.c->rank != x->root ? 0 : (size_t)k.n,
                        &k.why);
        else
            rc = run_or_queue(&j, h, &k.why);
        if (!k.why)
            return raise_error(x->comm, rc || !k.aliased ? rc : MPI_ERR_BUFFER);
        if (j.stage && j.stage->free)
            j.stage->free(j.stage);
    }
    library_note(m, routine(d->names, h), k.a, k.params, k.why);
    h = library_form(h, k.why, k.c, x->comm, !algorithm, &nb);
library:
    fell_back = 1;
    {
        MPI_Request q;
        const how waited = {TRD_NONBLOCKING, MPI_INFO_NULL, &q, 1};
        void *scratch = NULL;
        rc = d->library ? d->library(x, h->progress ? &waited : h, &scratch)
                        : d->pmpi(x, h->progress ? &waited : h);
        if (h->progress)
            rc = library_wait(rc, &q);
        free(scratch);
        return rc;
    }
}

/* ---- The collectives ------------------------------------------------------------------ */

/* library_of_name: the MPI library's routine of a collective, for the
 * call_args *x of a call made as h says, in its large-count form where a
 * count does not fit an int (per rank: where the counts are MPI_Count). */
#define LIBRARY_OF(name, Name, K, P, ...)                                                          \
    static int library_of_##name(const call_args *x, const how *h)                                 \
    {                                                                                              \
        return TRD_PMPI(                                                                           \
            h->mode, (0 TRD_MAP(BIG, x, TRD_NOTHING, P)),                                          \
            PMPI_##Name(TRD_MAP(GET, (x, TRD_AS_INT), TRD_COMMA, P)),                              \
            PMPI_##Name##_c(TRD_MAP(GET, (x, TRD_AS_IS), TRD_COMMA, P)),                           \
            PMPI_I##name(TRD_MAP(GET, (x, TRD_AS_INT), TRD_COMMA, P), h->req),                     \
            PMPI_I##name##_c(TRD_MAP(GET, (x, TRD_AS_IS), TRD_COMMA, P), h->req),                  \
            PMPI_##Name##_init(TRD_MAP(GET, (x, TRD_AS_INT), TRD_COMMA, P), h->info, h->req),      \
            PMPI_##Name##_init_c(TRD_MAP(GET, (x, TRD_AS_IS), TRD_COMMA, P), h->info, h->req));    \
    }
TRD_COLLS(LIBRARY_OF)
#undef LIBRARY_OF

/* Each collective below: the hooks its line names. */

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

/* The algorithm TREEDUCE_ALGORITHM forces where the call forces none (its
 * segment made as for a forced one), or TREEDUCE_REPRODUCIBLE's; and
 * TREEDUCE_DISABLE, which sends even an erroneous call to the library
 * unchecked.  Inlined in run_allreduce: every allreduce passes here. */
__attribute__((always_inline)) static inline int allreduce_prepare(call_ctx *k)
{
    if (!k->a) {
        k->a = trd_env_algorithm(&k->params);
        k->when = segment_when(k->a, k->h); /* before the reproducible mode names its algorithm */
    }
    if (trd_env_reproducible()) { /* its results from the first call on */
        k->a = reproducible(k->m, k->a, &k->params);
        k->when |= TRD_SETUP_NOW;
    }
    if (trd_env_disabled())
        k->why = why_disabled;
    return MPI_SUCCESS;
}

/* ---- Reduce_scatter (a count per rank) ---------------------------------------------- */

/* Rank r's count. */
static MPI_Count count_of(const call_args *x, int r)
{
    return x->icounts ? x->icounts[r] : x->ccounts[r];
}

/* The counts as the checks see them: the whole vector sent, this rank's
 * block received (-1 where a count is negative). */
static int reduce_scatter_prepare(call_ctx *k)
{
    call_args *x = k->x;
    int size = 0, rank = 0, negative = 0;
    size_t total = 0;
    if (x->comm != MPI_COMM_NULL && (PMPI_Comm_size(x->comm, &size) != MPI_SUCCESS ||
                                     PMPI_Comm_rank(x->comm, &rank) != MPI_SUCCESS)) {
        k->why = why_invalid;
        return MPI_SUCCESS;
    }
    for (int r = 0; r < size; r++) {
        MPI_Count n = count_of(x, r);
        negative |= n < 0;
        total += n > 0 ? (size_t)n : 0;
    }
    x->send.count = negative ? -1 : (MPI_Count)total;
    x->recv.count = negative ? -1 : size ? count_of(x, rank) : 0;
    k->n = (MPI_Count)total;
    return MPI_SUCCESS;
}

static int reduce_scatter_check(call_ctx *k)
{
    if (k->dc->derived)
        k->why = "derived datatype with a count per rank";
    return MPI_SUCCESS;
}

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

/* The staged call: the padded reduce_scatter_block or the allreduce, on
 * buffers of the stage's. */
static int reduce_scatter_stage(call_ctx *k, trd_job *j)
{
    const call_args *x = k->x;
    int size = k->c->size;
    size_t total = (size_t)k->n, maxc = 0;
    rs_stage *s = calloc(1, sizeof *s);
    if (!s || !(s->counts = malloc(2 * (size_t)size * sizeof *s->counts))) {
        free(s);
        return MPI_ERR_NO_MEM;
    }
    s->st = (trd_stage){rs_pre, rs_post, rs_free};
    s->displs = s->counts + size;
    for (int r = 0; r < size; r++) {
        s->counts[r] = (size_t)count_of(x, r);
        s->displs[r] = r ? s->displs[r - 1] + s->counts[r - 1] : 0;
        maxc = s->counts[r] > maxc ? s->counts[r] : maxc;
    }
    s->size = size;
    s->ext = k->red->extent;
    s->input = k->in_place ? recv_buf(x) : x->send.buf;
    s->recvbuf = recv_buf(x);
    s->mine = s->counts[k->c->rank];
    int padded = maxc * (size_t)size <= 2 * total;
    s->block = maxc * s->ext;
    s->own_at = padded ? 0 : s->displs[k->c->rank];
    if ((padded && !(s->in = calloc((size_t)size, s->block))) ||
        !(s->out = malloc((padded ? maxc : total) * s->ext))) {
        rs_free(&s->st);
        return MPI_ERR_NO_MEM;
    }
    j->call.coll = padded ? TRD_COLL_REDUCE_SCATTER_BLOCK : TRD_COLL_ALLREDUCE;
    j->call.count = padded ? maxc : total;
    j->call.in_place = 0;
    j->sendbuf = s->in ? s->in : s->input;
    j->recvbuf = s->out;
    j->stage = &s->st;
    return MPI_SUCCESS;
}

/* ---- Allgather ---------------------------------------------------------------------- */

/* Allgather of derived or differing datatypes, blocking: the packed bytes
 * gathered (k->done).  Out of line, as bcast_packed. */
__attribute__((noinline)) static int allgather_packed(call_ctx *k)
{
    const call_args *x = k->x;
    const trd_comm *c = k->c;
    int count = (int)x->recv.count, rc, size, pos = 0;
    MPI_Aint lb, rext;
    k->done = 1;
    if ((rc = PMPI_Type_get_extent(x->recv.type, &lb, &rext)) != MPI_SUCCESS ||
        (rc = PMPI_Pack_size(count, x->recv.type, x->comm, &size)) != MPI_SUCCESS)
        return rc;
    if (size == 0)
        return MPI_SUCCESS;
    char *packed = malloc((size_t)size * (size_t)(c->size + 1));
    if (!packed)
        return MPI_ERR_NO_MEM;
    char *mine = packed + (size_t)size * (size_t)c->size;
    if (x->send.buf == MPI_IN_PLACE)
        rc = PMPI_Pack((char *)recv_buf(x) + (MPI_Aint)c->rank * count * rext, count, x->recv.type,
                       mine, size, &pos, x->comm);
    else
        rc = PMPI_Pack(x->send.buf, (int)x->send.count, x->send.type, mine, size, &pos, x->comm);
    if (rc == MPI_SUCCESS) {
        call_args y = {.comm = x->comm,
                       .send = {mine, size, MPI_BYTE, 0},
                       .recv = {packed, size, MPI_BYTE, 1}};
        rc = run_allgather(k->m, &y, k->algorithm, &blocking);
    }
    pos = 0;
    if (rc == MPI_SUCCESS)
        rc = PMPI_Unpack(packed, size * c->size, &pos, recv_buf(x), count * c->size, x->recv.type,
                         x->comm);
    free(packed);
    return rc;
}

/* The plan moves a predefined datatype, the same on both sides; derived or
 * differing datatypes: blocking, the packed bytes gathered. */
static int allgather_datatypes(call_ctx *k)
{
    const call_args *x = k->x;
    if ((x->send.buf == MPI_IN_PLACE ||
         (x->send.type == x->recv.type && x->send.count == x->recv.count)) &&
        trd_type_extent(x->recv.type, &k->ext) == MPI_SUCCESS)
        return MPI_SUCCESS;
    if (k->h->mode != TRD_BLOCKING || x->recv.count > INT_MAX || x->send.count > INT_MAX) {
        k->why = "derived or differing datatypes in a nonblocking, persistent or large-count "
                 "allgather";
        return MPI_SUCCESS;
    }
    return allgather_packed(k);
}

/* ---- Reduce ------------------------------------------------------------------------- */

/* The library's routine for reduce: PMPI_Reduce, with MPI_IN_PLACE at the
 * root turned into a copy (*scratch)
 * where the call waits for the library's routine (blocking, or its
 * nonblocking form waited for): MPICH 4.0's in-place reduce crashes at
 * roots other than 0 above a few KiB. */
static int reduce_library(const call_args *x, const how *h, void **scratch)
{
    const void *sendbuf = x->send.buf;
    MPI_Datatype type = x->recv.type;
    int count = (int)x->recv.count, rank, rc, size;
    if ((h->mode == TRD_BLOCKING || h->progress) && sendbuf == MPI_IN_PLACE && x->recv.count > 0 &&
        x->recv.count <= INT_MAX && x->comm != MPI_COMM_NULL &&
        PMPI_Comm_rank(x->comm, &rank) == MPI_SUCCESS && rank == x->root &&
        PMPI_Pack_size(count, type, x->comm, &size) == MPI_SUCCESS) {
        MPI_Aint lb, ext, tlb, text;
        PMPI_Type_get_extent(type, &lb, &ext);
        PMPI_Type_get_true_extent(type, &tlb, &text);
        size_t span = (size_t)(count - 1) * (size_t)ext + (size_t)text;
        char *copy = malloc(span);
        if (!(*scratch = copy))
            return MPI_ERR_NO_MEM;
        sendbuf = copy - tlb; /* the copy as a buffer of count elements of type */
        rc = PMPI_Sendrecv(recv_buf(x), count, type, 0, 0, (char *)sendbuf, count, type, 0, 0,
                           MPI_COMM_SELF, MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    call_args y = *x;
    y.send.buf = sendbuf;
    return library_of_reduce(&y, h);
}

/* ---- Bcast -------------------------------------------------------------------------- */

/* Bcast of a derived datatype, blocking: the packed bytes, since ranks may
 * describe the same bytes differently and the choice must stay the same on
 * every rank (k->done).  Out of line: its frame would cost every bcast of a
 * predefined datatype the saving of registers. */
__attribute__((noinline)) static int bcast_packed(call_ctx *k)
{
    const call_args *x = k->x;
    int count = (int)x->recv.count, at_root = k->c->rank == x->root, rc = MPI_SUCCESS, size,
        pos = 0;
    k->done = 1;
    if ((rc = PMPI_Pack_size(count, x->recv.type, x->comm, &size)) != MPI_SUCCESS)
        return rc;
    if (size == 0)
        return MPI_SUCCESS;
    char *packed = malloc((size_t)size);
    if (!packed)
        return MPI_ERR_NO_MEM;
    if (at_root)
        rc = PMPI_Pack(x->recv.buf, count, x->recv.type, packed, size, &pos, x->comm);
    if (rc == MPI_SUCCESS) {
        call_args y = {.comm = x->comm, .recv = {packed, size, MPI_BYTE, 0}, .root = x->root};
        rc = run_bcast(k->m, &y, k->algorithm, &blocking);
    }
    pos = 0;
    if (rc == MPI_SUCCESS && !at_root)
        rc = PMPI_Unpack(packed, size, &pos, recv_buf(x), count, x->recv.type, x->comm);
    free(packed);
    return rc;
}

/* The plan moves a predefined datatype; a derived one: blocking, the packed
 * bytes. */
static int bcast_datatypes(call_ctx *k)
{
    const call_args *x = k->x;
    if (trd_type_extent(x->recv.type, &k->ext) == MPI_SUCCESS)
        return MPI_SUCCESS;
    if (k->h->mode != TRD_BLOCKING || x->recv.count > INT_MAX) {
        k->why = "derived datatype in a nonblocking, persistent or large-count bcast";
        return MPI_SUCCESS;
    }
    return bcast_packed(k);
}

/* ---- The table ---------------------------------------------------------------------- */

/* ROW_name: a collective's row of the table (treeduce_colls.h's order). */
#define ROW(name, ...) ROW_##name,
enum { TRD_COLLS(ROW) NROWS };
#undef ROW

/* Each line of treeduce_colls.h, its descriptor. */
#define DESC(name, Name, K, P, coll_, flags_, hooks)                                               \
    [ROW_##name] = {.names = {"MPI_" #Name, "MPI_I" #name, "MPI_" #Name "_init"},                  \
                    .coll = coll_,                                                                 \
                    .flags = flags_,                                                               \
                    .pmpi = library_of_##name,                                                     \
                    TRD_UNPAREN hooks},
static const coll_desc colls[NROWS] = {TRD_COLLS(DESC)};
#undef DESC

/* run_name: collective() with the row's descriptor. */
#define RUN(name, ...)                                                                             \
    static int run_##name(const trd_machine *m, call_args *x, const char *algorithm, const how *h) \
    {                                                                                              \
        return collective(&colls[ROW_##name], m, x, algorithm, h);                                 \
    }
TRD_COLLS(RUN)
#undef RUN

/* ---- Every form of every collective, from the table (treeduce_colls.h) ---- */

/* trd_name (int counts) and trd_name_c (MPI_Count): blocking; then the
 * nonblocking and persistent forms, trd_iname##K and trd_name_init##K,
 * with MPI_Count counts (for scalar counts both MPI_Iname and
 * MPI_Iname_c); and for counts per rank the same with int counts, without
 * the _c.  The machine's choice (allreduce: TREEDUCE_ALGORITHM's where
 * set). */
#define FORMS(name, Name, K, P, ...)                                                               \
    int trd_##name(const trd_machine *m, TRD_PARAMS(int, P))                                       \
    {                                                                                              \
        call_args x = ARGS(P);                                                                     \
        return run_##name(m, &x, NULL, &blocking);                                                 \
    }                                                                                              \
    int trd_##name##_c(const trd_machine *m, TRD_PARAMS(MPI_Count, P))                             \
    {                                                                                              \
        call_args x = ARGS(P);                                                                     \
        return run_##name(m, &x, NULL, &blocking);                                                 \
    }                                                                                              \
    REQUEST_FORMS(name, P, MPI_Count, K)
#define INT_REQUEST_FORMS(name, Name, K, P, ...) TRD_IF_PER_RANK##K(REQUEST_FORMS(name, P, int, ))
#define REQUEST_FORMS(name, P, C, S)                                                               \
    int trd_i##name##S(const trd_machine *m, TRD_PARAMS(C, P), MPI_Request *request)               \
    {                                                                                              \
        const how h = {TRD_NONBLOCKING, MPI_INFO_NULL, request, 0};                                \
        call_args x = ARGS(P);                                                                     \
        return run_##name(m, &x, NULL, &h);                                                        \
    }                                                                                              \
    int trd_##name##_init##S(const trd_machine *m, TRD_PARAMS(C, P), MPI_Info info,                \
                             MPI_Request *request)                                                 \
    {                                                                                              \
        const how h = {TRD_PERSISTENT, info, request, 0};                                          \
        call_args x = ARGS(P);                                                                     \
        return run_##name(m, &x, NULL, &h);                                                        \
    }
TRD_COLLS(FORMS)
TRD_COLLS(INT_REQUEST_FORMS)

/* trd_name_with: blocking, with the algorithm given by name (forced_spec);
 * the collectives of the registry, those with scalar counts. */
#define WITH(name, Name, K, P, ...) TRD_IF_SCALAR##K(WITH_OF(name, P))
#define WITH_OF(name, P)                                                                           \
    int trd_##name##_with(const trd_machine *m, TRD_PARAMS(int, P), const char *algorithm)         \
    {                                                                                              \
        call_args x = ARGS(P);                                                                     \
        return run_##name(m, &x, algorithm, &blocking);                                            \
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
        trd_comm_get(comm, m, TRD_SEGMENT_NOW, 0, MPI_DATATYPE_NULL, &c) != MPI_SUCCESS ||
        c->fallback)
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
