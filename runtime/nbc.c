/* Persistent and nonblocking collectives: requests, their order on a
 * communicator, and progress [FLEX §4: setup once, execute many times].
 *
 * A treeduce request's handle is one the MPI library made and will not reuse
 * while it lives: a generalized request (PMPI_Grequest_start), completed
 * only when the request is freed.  (Not a PMPI_Send_init to MPI_PROC_NULL:
 * freeing one of those before an MPI_Allreduce_init request makes MPICH 4.0.2
 * hang in the next persistent allreduce.)  MPI_Wait*, MPI_Test*,
 * MPI_Start*, MPI_Request_free and MPI_Request_get_status are intercepted:
 * they advance the outstanding runs, complete treeduce's requests themselves
 * (an empty status, as for any collective), and hand the library the rest of
 * the array with treeduce's entries as MPI_REQUEST_NULL.
 *
 * Runs of one communicator execute one at a time, in call order (every rank
 * makes the same calls in the same order, so they agree on the node's epochs
 * and on which messages belong together; a single tag suffices).  Nothing
 * progresses by itself: outstanding runs advance in every treeduce collective,
 * in every MPI_Test and MPI_Wait call (whatever request it names), and in the
 * blocking point-to-point calls and MPI_Barrier intercepted below, so that a
 * rank blocked in one of those still does its part of a collective that
 * another rank waits for.  A blocking collective while runs are outstanding
 * queues behind them and waits in the same loop, never blocking inside a run.
 */
#include "rt.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct trd_req {
    MPI_Request handle; /* MPI_REQUEST_NULL: a blocking call's run */
    trd_comm *c;
    trd_plan_entry *p;
    trd_reducer red;
    const trd_reducer *redp; /* &red, or NULL */
    const void *sendbuf;
    void *recvbuf;
    MPI_Datatype type;
    trd_stage *stage;
    void *tmp; /* the plan's temporary (persistent requests), or NULL */
    trd_run run;
    int persistent, active, started, done, freed, rc;
    trd_req *next;  /* in the communicator's queue */
    trd_req *hnext; /* in the handle table */
};

/* One lock for the handle table, the queues and the list of busy
 * communicators: progress under it never blocks. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_int live;      /* requests in the table */
_Atomic int trd_nbc_runs;    /* runs queued or running (rt.h) */
static trd_comm *busy;       /* communicators with queued runs */
static unsigned long moves;  /* ops completed and runs ended, for trd_nbc_poll */
static unsigned long passes; /* of progress_all, made by the application's threads */

#define TRD_REQ_BUCKETS 256
static trd_req *table[TRD_REQ_BUCKETS];

static unsigned bucket(MPI_Request h)
{
    uintptr_t k = 0;
    memcpy(&k, &h, sizeof h < sizeof k ? sizeof h : sizeof k);
    k ^= k >> 17;
    k *= 0x9e3779b97f4a7c15ull;
    return (unsigned)(k >> 56) % TRD_REQ_BUCKETS;
}

static trd_req *find(MPI_Request h)
{
    if (h == MPI_REQUEST_NULL)
        return NULL;
    for (trd_req *r = table[bucket(h)]; r; r = r->hnext)
        if (r->handle == h)
            return r;
    return NULL;
}

static void table_add(trd_req *r)
{
    unsigned b = bucket(r->handle);
    r->hnext = table[b];
    table[b] = r;
    atomic_fetch_add(&live, 1);
}

static void table_remove(trd_req *r)
{
    for (trd_req **q = &table[bucket(r->handle)]; *q; q = &(*q)->hnext)
        if (*q == r) {
            *q = r->hnext;
            atomic_fetch_sub(&live, 1);
            return;
        }
}

/* MPI lets an application free an operation while calls that use it are
 * pending: it is marked for deallocation and they complete normally
 * [MPI-4.1 §6.9.5].  A treeduce request keeps only the handle, on which
 * MPI_Reduce_local fails once it is freed; so MPI_Op_free of an operation
 * that a request still holds is deferred until the last such request is
 * freed (lock held for these). */
static MPI_Op *deferred; /* operations freed by the application, still held */
static int ndeferred, deferred_cap;

static int op_held(MPI_Op op)
{
    for (int b = 0; b < TRD_REQ_BUCKETS; b++)
        for (trd_req *r = table[b]; r; r = r->hnext)
            if (r->redp && r->red.op == op)
                return 1;
    return 0;
}

/* op, no longer held by r: freed now if the application freed it before. */
static void op_release(MPI_Op op)
{
    for (int i = 0; i < ndeferred; i++) {
        if (deferred[i] == op && !op_held(op)) {
            PMPI_Op_free(&deferred[i]);
            deferred[i] = deferred[--ndeferred];
            return;
        }
    }
}

int MPI_Op_free(MPI_Op *op)
{
    if (!op || *op == MPI_OP_NULL || !atomic_load(&live) || trd_op_is_predefined(*op))
        return PMPI_Op_free(op);
    pthread_mutex_lock(&lock);
    int keep = op_held(*op);
    if (keep && ndeferred == deferred_cap) {
        int cap = deferred_cap ? 2 * deferred_cap : 8;
        MPI_Op *d = realloc(deferred, (size_t)cap * sizeof *d);
        if (d) {
            deferred = d;
            deferred_cap = cap;
        }
        keep = ndeferred < deferred_cap;
    }
    if (keep) {
        deferred[ndeferred++] = *op;
        *op = MPI_OP_NULL;
    }
    pthread_mutex_unlock(&lock);
    return keep ? MPI_SUCCESS : PMPI_Op_free(op);
}

/* Release everything r holds (lock held). */
static void destroy(trd_req *r)
{
    if (r->handle != MPI_REQUEST_NULL) {
        table_remove(r);
        PMPI_Grequest_complete(r->handle);
        PMPI_Request_free(&r->handle);
    }
    trd_plan_release(r->p);
    if (r->stage && r->stage->free)
        r->stage->free(r->stage);
    free(r->tmp);
    trd_comm_unref(r->c);
    if (ndeferred && r->redp)
        op_release(r->red.op);
    free(r);
}

static void enqueue(trd_req *r)
{
    trd_comm *c = r->c;
    r->active = 1;
    r->started = r->done = 0;
    r->rc = MPI_SUCCESS;
    r->next = NULL;
    if (c->qtail)
        c->qtail->next = r;
    else
        c->qhead = r;
    c->qtail = r;
    if (!c->in_busy) {
        c->in_busy = 1;
        c->busy = busy;
        busy = c;
    }
    if (atomic_fetch_add(&trd_nbc_runs, 1) == 0 && trd_progress_on())
        trd_progress_wake();
}

/* Advance c's runs in order, as far as they go without waiting (lock held). */
static void comm_progress(trd_comm *c)
{
    trd_req *r;
    while ((r = c->qhead)) {
        int done = 0;
        if (!r->started) {
            r->started = 1;
            if (r->stage && r->stage->pre)
                r->rc = r->stage->pre(r->stage);
            if (r->rc == MPI_SUCCESS)
                r->rc = trd_run_start(&r->run, c, r->p, r->sendbuf, r->recvbuf, r->type, r->redp,
                                      r->tmp);
            done = r->rc != MPI_SUCCESS;
        }
        if (!done) {
            size_t pc = r->run.pc;
            int rc = trd_run_progress(&r->run, 0, &done);
            if (rc != MPI_SUCCESS) {
                r->rc = rc;
                done = 1;
            }
            moves += r->run.pc != pc;
        }
        if (!done)
            return;
        moves++;
        if (r->rc == MPI_SUCCESS && r->stage && r->stage->post)
            r->rc = r->stage->post(r->stage);
        if (!(c->qhead = r->next))
            c->qtail = NULL;
        r->next = NULL;
        r->done = 1;
        atomic_fetch_sub(&trd_nbc_runs, 1);
        if (r->handle != MPI_REQUEST_NULL && r->freed)
            destroy(r);
    }
}

/* Advance every communicator's runs (lock held); where some wait for a
 * peer, let the MPI library progress too: the peer may be blocked in it on a
 * request of the library's that needs this rank's progress first. */
static void advance_all(void)
{
    for (trd_comm **pc = &busy; *pc;) {
        trd_comm *c = *pc;
        comm_progress(c);
        if (!c->qhead) {
            *pc = c->busy;
            c->in_busy = 0;
        } else {
            pc = &c->busy;
        }
    }
    if (busy)
        trd_library_progress(busy->comm);
}

/* advance_all, made by an application's thread (a call or a wait). */
static void progress_all(void)
{
    passes++;
    advance_all();
}

/* After a nonblocking or persistent run was started (lock held): advanced
 * as far as it goes without waiting, unless the progress thread runs.  Then
 * the run is left to the thread, woken by enqueue: work done here would be
 * done before the application's computation, not beside it (at 1 MiB on 2
 * ranks of a node with cores to spare, the overlap was at most 51% with
 * the start's pass and 77-93% without it; docs/runtime.md). */
static void progress_started(void)
{
    if (!trd_progress_on())
        progress_all();
}

static void progress(void)
{
    pthread_mutex_lock(&lock);
    progress_all();
    pthread_mutex_unlock(&lock);
}

long trd_progress_passes(void)
{
    pthread_mutex_lock(&lock);
    long n = (long)passes;
    pthread_mutex_unlock(&lock);
    return n;
}

int trd_nbc_poll(int *on_node)
{
    static unsigned long seen; /* passes at the last poll */
    if (!trd_nbc_outstanding())
        return -1;
    if (pthread_mutex_trylock(&lock) != 0)
        return 0;
    int moved = 0;
    if (passes != seen) {
        seen = passes; /* an application's thread is advancing them: leave it the core */
        moved = 2;
    } else {
        unsigned long before = moves;
        int node = 1;
        for (const trd_comm *c = busy; c; c = c->busy)
            node &= c->ppn == c->size;
        *on_node = node;
        advance_all();
        moved = moves != before;
    }
    pthread_mutex_unlock(&lock);
    return moved;
}

/* Advance everything until r's run has ended. */
static void wait_run(trd_req *r)
{
    unsigned spins = 0;
    for (;;) {
        pthread_mutex_lock(&lock);
        progress_all();
        int done = r->done;
        pthread_mutex_unlock(&lock);
        if (done)
            return;
        trd_relax(&spins);
    }
}

/* Complete a request of the MPI library's while treeduce's runs advance. */
static int wait_foreign(MPI_Request *q, MPI_Status *status)
{
    unsigned spins = 0;
    for (;;) {
        int flag, rc;
        progress();
        if ((rc = PMPI_Test(q, &flag, status)) != MPI_SUCCESS || flag)
            return rc;
        trd_relax(&spins);
    }
}

/* Complete q, a request of the MPI library's, while treeduce's outstanding
 * runs advance (PMPI_Wait where none is outstanding). */
static int wait_library(MPI_Request *q, MPI_Status *status)
{
    return trd_nbc_outstanding() ? wait_foreign(q, status) : PMPI_Wait(q, status);
}

int trd_nbc_wait_library(MPI_Request *q, MPI_Status *status)
{
    return wait_library(q, status);
}

int trd_nbc_comm_dup(MPI_Comm comm, MPI_Comm *dup)
{
#if defined(SMPI_H)
    /* SimGrid's SMPI has no MPI_Comm_idup */
    return PMPI_Comm_dup(comm, dup);
#else
    MPI_Request q;
    int rc = PMPI_Comm_idup(comm, dup, &q);
    return rc != MPI_SUCCESS ? rc : wait_library(&q, MPI_STATUS_IGNORE);
#endif
}

int trd_nbc_barrier(MPI_Comm comm)
{
    MPI_Request q;
    int rc = PMPI_Ibarrier(comm, &q);
    return rc != MPI_SUCCESS ? rc : wait_library(&q, MPI_STATUS_IGNORE);
}

/* The generalized request behind a handle: never waited for by the library
 * (treeduce completes its requests itself), so its callbacks have nothing to
 * say. */
static int handle_query(void *extra, MPI_Status *status)
{
    (void)extra;
    PMPI_Status_set_elements(status, MPI_BYTE, 0);
    PMPI_Status_set_cancelled(status, 0);
    return MPI_SUCCESS;
}

static int handle_free(void *extra)
{
    (void)extra;
    return MPI_SUCCESS;
}

static int handle_cancel(void *extra, int complete)
{
    (void)extra;
    (void)complete;
    return MPI_SUCCESS;
}

/* ---- Launching a call ------------------------------------------------------------- */

static trd_req *req_new(const trd_job *j, trd_plan_entry *p)
{
    trd_req *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    r->handle = MPI_REQUEST_NULL;
    r->c = j->c;
    r->p = p;
    if (j->red) {
        r->red = *j->red;
        r->redp = &r->red;
    }
    r->sendbuf = j->sendbuf;
    r->recvbuf = j->recvbuf;
    r->type = j->type;
    r->stage = j->stage;
    trd_plan_pin(p);
    trd_comm_ref(j->c);
    return r;
}

void trd_note_choice(const trd_job *j, const trd_plan_entry *p)
{
    if (trd_env_verbose() >= 2) {
        const char *params;
        const trd_algo *a = trd_plan_algo(p, &params);
        trd_choice_note(j->c->machine, j->routine, a->name, params);
    }
}

int trd_launch(const trd_job *j, int mode, MPI_Request *req, const char **why)
{
    trd_plan_entry *p;
    int rc;
    if (mode != TRD_BLOCKING)
        trd_progress_start(j->c->machine);
    pthread_mutex_lock(&lock); /* the plan cache is shared with queued runs */
    rc = trd_plan_get(j->c, j->a, j->params, &j->call, j->untuned, &p, why);
    trd_req *r = rc == MPI_SUCCESS && p ? req_new(j, p) : NULL;
    if (!r) {
        pthread_mutex_unlock(&lock);
        if (rc == MPI_SUCCESS && !p)
            return rc; /* refused: the caller falls back and still owns the stage */
        if (j->stage && j->stage->free) /* an error: the call ends here */
            j->stage->free(j->stage);
        return rc != MPI_SUCCESS ? rc : MPI_ERR_NO_MEM;
    }
    if (mode != TRD_BLOCKING && ((rc = PMPI_Grequest_start(handle_query, handle_free, handle_cancel,
                                                           NULL, &r->handle)) != MPI_SUCCESS ||
                                 (mode == TRD_PERSISTENT && trd_plan_tmp_bytes(p) &&
                                  !(r->tmp = malloc(trd_plan_tmp_bytes(p)))))) {
        destroy(r); /* and the stage: an error ends the call */
        pthread_mutex_unlock(&lock);
        return rc != MPI_SUCCESS ? rc : MPI_ERR_NO_MEM;
    }
    if (r->handle != MPI_REQUEST_NULL)
        table_add(r);
    r->persistent = mode == TRD_PERSISTENT;
    if (mode != TRD_PERSISTENT) {
        enqueue(r);
        if (mode == TRD_BLOCKING)
            progress_all();
        else
            progress_started();
    }
    pthread_mutex_unlock(&lock);
    trd_note_choice(j, p);
    if (mode != TRD_BLOCKING) {
        *req = r->handle;
        return MPI_SUCCESS;
    }
    /* a blocking call behind outstanding runs */
    wait_run(r);
    rc = r->rc;
    pthread_mutex_lock(&lock);
    destroy(r);
    pthread_mutex_unlock(&lock);
    return rc;
}

void trd_nbc_finalize(void)
{
    trd_progress_stop();
    pthread_mutex_lock(&lock);
    for (int b = 0; b < TRD_REQ_BUCKETS; b++) {
        for (trd_req *r = table[b], *next; r; r = next) {
            next = r->hnext;
            if (!r->active || r->done) /* a run still queued is the application's error */
                destroy(r);
        }
    }
    pthread_mutex_unlock(&lock);
}

/* ---- The MPI library's request calls -------------------------------------------- */

/* The empty status MPI gives a completed collective (MPI_Wait on a null
 * request returns one). */
static void empty_status(MPI_Status *status)
{
    MPI_Request null = MPI_REQUEST_NULL;
    if (status != MPI_STATUS_IGNORE)
        PMPI_Wait(&null, status);
}

/* Request r, at user handle *q, has completed for the application (lock
 * held): a nonblocking call's is freed, a persistent one's becomes inactive. */
/* A request's error is raised where MPI raises it, in the call that
 * completes the request, through the error handler of the communicator the
 * application called with: *rc and *at take r's error if none is taken yet
 * (lock held); raised() raises it once the lock is let go, since a handler
 * may call MPI. */
static void take_error(const trd_req *r, int *rc, MPI_Comm *at)
{
    if (*rc == MPI_SUCCESS && r->rc != MPI_SUCCESS) {
        *rc = r->rc;
        *at = r->c->user;
    }
}

static int raised(MPI_Comm at, int rc)
{
    if (rc != MPI_SUCCESS && at != MPI_COMM_NULL)
        PMPI_Comm_call_errhandler(at, rc);
    return rc;
}

static void completed(trd_req *r, MPI_Request *q)
{
    if (r->persistent) {
        r->active = 0;
        return;
    }
    destroy(r);
    *q = MPI_REQUEST_NULL;
}

/* Whether a request call is the MPI library's alone: none of treeduce's
 * requests is alive and, for the calls that progress treeduce's runs
 * (progresses: the tests and waits), none of its runs is in progress. */
static inline int library_alone(int progresses)
{
    return !atomic_load(&live) && (!progresses || !trd_nbc_outstanding());
}

/* Takes the lock, progresses the runs where progress, and returns treeduce's
 * request of handle q, or NULL where q is the MPI library's; the lock stays
 * held. */
static trd_req *lock_find(int progress, MPI_Request q)
{
    pthread_mutex_lock(&lock);
    if (progress)
        progress_all();
    return find(q);
}

/* Start a persistent treeduce request (lock held). */
static int start(trd_req *r)
{
    if (!r->persistent || r->active)
        return MPI_ERR_REQUEST;
    enqueue(r);
    return MPI_SUCCESS;
}

int MPI_Start(MPI_Request *request)
{
    if (library_alone(0))
        return PMPI_Start(request);
    trd_req *r = lock_find(0, *request);
    int rc = r ? start(r) : PMPI_Start(request);
    if (r)
        progress_started();
    pthread_mutex_unlock(&lock);
    return rc;
}

int MPI_Startall(int count, MPI_Request array_of_requests[])
{
    int rc = MPI_SUCCESS;
    if (library_alone(0))
        return PMPI_Startall(count, array_of_requests);
    pthread_mutex_lock(&lock);
    for (int i = 0; i < count && rc == MPI_SUCCESS; i++) {
        trd_req *r = find(array_of_requests[i]);
        rc = r ? start(r) : PMPI_Start(&array_of_requests[i]);
    }
    progress_started();
    pthread_mutex_unlock(&lock);
    return rc;
}

/* The user's requests as the library sees them (lock held): treeduce's are
 * MPI_REQUEST_NULL in tmp (the library treats them as inactive).  Returns how
 * many of them are still running; *first_done is the index of the first whose
 * run has ended and that the application has not completed yet, or -1. */
static int hide_ours(int n, const MPI_Request *in, MPI_Request *tmp, trd_req **ours,
                     int *first_done)
{
    int pending = 0;
    *first_done = -1;
    for (int i = 0; i < n; i++) {
        trd_req *r = find(in[i]);
        ours[i] = r;
        tmp[i] = r ? MPI_REQUEST_NULL : in[i];
        if (r && r->active && !r->done)
            pending++;
        else if (r && r->active && *first_done < 0)
            *first_done = i;
    }
    return pending;
}

/* The library's requests back into the user's array (lock held). */
static void write_back(int n, MPI_Request *user, const MPI_Request *tmp, trd_req **ours)
{
    for (int i = 0; i < n; i++)
        if (!ours[i])
            user[i] = tmp[i];
}

/* Complete every treeduce request of the array whose run has ended (lock
 * held); the first error of their runs, MPI_SUCCESS if none (*at: its
 * communicator). */
static int complete_done(int n, MPI_Request *user, trd_req **ours, MPI_Comm *at)
{
    int rc = MPI_SUCCESS;
    for (int i = 0; i < n; i++) {
        trd_req *r = ours[i];
        if (r && r->active && r->done) {
            take_error(r, &rc, at);
            completed(r, &user[i]);
        }
    }
    return rc;
}

/* Scratch arrays for the calls below: small ones on the stack. */
#define TRD_SMALL 32
struct arrays {
    MPI_Request tmp_s[TRD_SMALL];
    trd_req *ours_s[TRD_SMALL];
    int idx_s[TRD_SMALL];
    MPI_Request *tmp;
    trd_req **ours;
    int *idx;
};

static int arrays_get(struct arrays *a, int n)
{
    if (n <= TRD_SMALL) {
        a->tmp = a->tmp_s;
        a->ours = a->ours_s;
        a->idx = a->idx_s;
        return MPI_SUCCESS;
    }
    a->tmp = malloc((size_t)n * sizeof *a->tmp);
    a->ours = malloc((size_t)n * sizeof *a->ours);
    a->idx = malloc((size_t)n * sizeof *a->idx);
    if (a->tmp && a->ours && a->idx)
        return MPI_SUCCESS;
    free(a->tmp);
    free(a->ours);
    free(a->idx);
    return MPI_ERR_NO_MEM;
}

static void arrays_free(struct arrays *a)
{
    if (a->tmp != a->tmp_s) {
        free(a->tmp);
        free(a->ours);
        free(a->idx);
    }
}

/* MPICH's prototypes give the request calls an access attribute that GCC 12
 * checks against MPI_STATUSES_IGNORE, a sentinel pointer; the calls are right */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstringop-overflow"

int MPI_Test(MPI_Request *request, int *flag, MPI_Status *status)
{
    if (library_alone(1))
        return PMPI_Test(request, flag, status);
    trd_req *r = lock_find(1, *request);
    int rc = MPI_SUCCESS;
    MPI_Comm at = MPI_COMM_NULL;
    if (!r) {
        rc = PMPI_Test(request, flag, status);
    } else if ((*flag = !r->active || r->done)) {
        empty_status(status);
        if (r->active) {
            take_error(r, &rc, &at);
            completed(r, request);
        }
    }
    pthread_mutex_unlock(&lock);
    return raised(at, rc);
}

int MPI_Wait(MPI_Request *request, MPI_Status *status)
{
    if (library_alone(1))
        return PMPI_Wait(request, status);
    trd_req *r = lock_find(0, *request);
    pthread_mutex_unlock(&lock);
    if (!r)
        return wait_library(request, status);
    wait_run(r); /* at once if it is inactive */
    int rc = MPI_SUCCESS;
    MPI_Comm at = MPI_COMM_NULL;
    pthread_mutex_lock(&lock);
    empty_status(status);
    if (r->active) {
        take_error(r, &rc, &at);
        completed(r, request);
    }
    pthread_mutex_unlock(&lock);
    return raised(at, rc);
}

/* Testall (blocking 0) and Waitall (1). */
static int all(int count, MPI_Request reqs[], int *flag, MPI_Status statuses[], int blocking)
{
    struct arrays a;
    unsigned spins = 0;
    int rc, first;
    MPI_Comm at = MPI_COMM_NULL;
    if ((rc = arrays_get(&a, count)) != MPI_SUCCESS)
        return rc;
    for (;;) {
        *flag = 0;
        pthread_mutex_lock(&lock);
        progress_all();
        if (hide_ours(count, reqs, a.tmp, a.ours, &first) == 0) {
            if (blocking && !trd_nbc_outstanding()) {
                rc = PMPI_Waitall(count, a.tmp, statuses);
                *flag = 1;
            } else {
                rc = PMPI_Testall(count, a.tmp, flag, statuses);
            }
            if (*flag) {
                write_back(count, reqs, a.tmp, a.ours);
                MPI_Comm rat = MPI_COMM_NULL;
                int rr = complete_done(count, reqs, a.ours, &rat);
                if (rc == MPI_SUCCESS) { /* the library's error, raised by it, comes first */
                    rc = rr;
                    at = rat;
                }
            }
        }
        pthread_mutex_unlock(&lock);
        if (!blocking || *flag || rc != MPI_SUCCESS)
            break;
        trd_relax(&spins);
    }
    arrays_free(&a);
    return raised(at, rc);
}

int MPI_Testall(int count, MPI_Request array_of_requests[], int *flag,
                MPI_Status array_of_statuses[])
{
    if (library_alone(1))
        return PMPI_Testall(count, array_of_requests, flag, array_of_statuses);
    return all(count, array_of_requests, flag, array_of_statuses, 0);
}

int MPI_Waitall(int count, MPI_Request array_of_requests[], MPI_Status array_of_statuses[])
{
    int flag;
    if (library_alone(1))
        return PMPI_Waitall(count, array_of_requests, array_of_statuses);
    return all(count, array_of_requests, &flag, array_of_statuses, 1);
}

/* Testany (blocking 0) and Waitany (1). */
static int any(int count, MPI_Request reqs[], int *indx, int *flag, MPI_Status *status,
               int blocking)
{
    struct arrays a;
    unsigned spins = 0;
    int rc, first;
    MPI_Comm at = MPI_COMM_NULL;
    if ((rc = arrays_get(&a, count)) != MPI_SUCCESS)
        return rc;
    for (;;) {
        pthread_mutex_lock(&lock);
        progress_all();
        int pending = hide_ours(count, reqs, a.tmp, a.ours, &first);
        if (first >= 0) {
            /* one of treeduce's has ended: it is the one completed */
            empty_status(status);
            *indx = first;
            *flag = 1;
            take_error(a.ours[first], &rc, &at);
            completed(a.ours[first], &reqs[first]);
        } else {
            if (blocking && !pending && !trd_nbc_outstanding()) {
                rc = PMPI_Waitany(count, a.tmp, indx, status);
                *flag = 1;
            } else {
                rc = PMPI_Testany(count, a.tmp, indx, flag, status);
                if (*flag && *indx == MPI_UNDEFINED && pending)
                    *flag = 0; /* only treeduce's runs are left, and they go on */
            }
            write_back(count, reqs, a.tmp, a.ours);
        }
        pthread_mutex_unlock(&lock);
        if (!blocking || *flag || rc != MPI_SUCCESS)
            break;
        trd_relax(&spins);
    }
    arrays_free(&a);
    return raised(at, rc);
}

int MPI_Testany(int count, MPI_Request array_of_requests[], int *indx, int *flag,
                MPI_Status *status)
{
    if (library_alone(1))
        return PMPI_Testany(count, array_of_requests, indx, flag, status);
    return any(count, array_of_requests, indx, flag, status, 0);
}

int MPI_Waitany(int count, MPI_Request array_of_requests[], int *indx, MPI_Status *status)
{
    int flag;
    if (library_alone(1))
        return PMPI_Waitany(count, array_of_requests, indx, status);
    return any(count, array_of_requests, indx, &flag, status, 1);
}

/* Testsome (blocking 0) and Waitsome (1): treeduce's ended requests first,
 * then what the library completes of its own. */
static int some(int count, MPI_Request reqs[], int *outcount, int indices[], MPI_Status statuses[],
                int blocking)
{
    struct arrays a;
    unsigned spins = 0;
    int rc, first;
    MPI_Comm at = MPI_COMM_NULL;
    if ((rc = arrays_get(&a, count)) != MPI_SUCCESS)
        return rc;
    for (;;) {
        int n = 0, lib = 0, active = 0;
        pthread_mutex_lock(&lock);
        progress_all();
        int pending = hide_ours(count, reqs, a.tmp, a.ours, &first);
        for (int i = 0; i < count; i++) {
            trd_req *r = a.ours[i];
            active |= !a.ours[i] && reqs[i] != MPI_REQUEST_NULL;
            if (r && r->active && r->done) {
                take_error(r, &rc, &at);
                if (statuses != MPI_STATUSES_IGNORE)
                    empty_status(&statuses[n]);
                indices[n++] = i;
                completed(r, &reqs[i]);
            }
        }
        if (active) {
            MPI_Status *st = statuses == MPI_STATUSES_IGNORE ? statuses : statuses + n;
            int lrc = blocking && !n && !pending && !trd_nbc_outstanding()
                          ? PMPI_Waitsome(count, a.tmp, &lib, a.idx, st)
                          : PMPI_Testsome(count, a.tmp, &lib, a.idx, st);
            if (rc == MPI_SUCCESS) /* an error of treeduce's taken above stays */
                rc = lrc;
            write_back(count, reqs, a.tmp, a.ours);
            for (int k = 0; lib != MPI_UNDEFINED && k < lib; k++)
                indices[n++] = a.idx[k];
        }
        pthread_mutex_unlock(&lock);
        *outcount = n || pending || (active && lib != MPI_UNDEFINED) ? n : MPI_UNDEFINED;
        if (!blocking || *outcount != 0 || rc != MPI_SUCCESS)
            break;
        trd_relax(&spins);
    }
    arrays_free(&a);
    return raised(at, rc);
}

int MPI_Testsome(int incount, MPI_Request array_of_requests[], int *outcount,
                 int array_of_indices[], MPI_Status array_of_statuses[])
{
    if (library_alone(1))
        return PMPI_Testsome(incount, array_of_requests, outcount, array_of_indices,
                             array_of_statuses);
    return some(incount, array_of_requests, outcount, array_of_indices, array_of_statuses, 0);
}

int MPI_Waitsome(int incount, MPI_Request array_of_requests[], int *outcount,
                 int array_of_indices[], MPI_Status array_of_statuses[])
{
    if (library_alone(1))
        return PMPI_Waitsome(incount, array_of_requests, outcount, array_of_indices,
                             array_of_statuses);
    return some(incount, array_of_requests, outcount, array_of_indices, array_of_statuses, 1);
}

#pragma GCC diagnostic pop

int MPI_Request_get_status(MPI_Request request, int *flag, MPI_Status *status)
{
    if (library_alone(1))
        return PMPI_Request_get_status(request, flag, status);
    trd_req *r = lock_find(1, request);
    int rc = MPI_SUCCESS;
    if (!r)
        rc = PMPI_Request_get_status(request, flag, status);
    else if ((*flag = !r->active || r->done))
        empty_status(status);
    pthread_mutex_unlock(&lock);
    return rc;
}

int MPI_Request_free(MPI_Request *request)
{
    if (library_alone(0))
        return PMPI_Request_free(request);
    trd_req *r = lock_find(0, *request);
    int rc = MPI_SUCCESS;
    if (!r) {
        rc = PMPI_Request_free(request);
    } else if (r->active && !r->done) {
        r->freed = 1; /* its run goes on; freed when it ends */
        *request = MPI_REQUEST_NULL;
    } else {
        destroy(r);
        *request = MPI_REQUEST_NULL;
    }
    pthread_mutex_unlock(&lock);
    return rc;
}

/* ---- Blocking calls that must not stall treeduce's runs -------------------------- */

int MPI_Send(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm)
{
    MPI_Request q;
    int rc;
    if (!trd_nbc_outstanding())
        return PMPI_Send(buf, count, datatype, dest, tag, comm);
    if ((rc = PMPI_Isend(buf, count, datatype, dest, tag, comm, &q)) != MPI_SUCCESS)
        return rc;
    return wait_foreign(&q, MPI_STATUS_IGNORE);
}

int MPI_Ssend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm)
{
    MPI_Request q;
    int rc;
    if (!trd_nbc_outstanding())
        return PMPI_Ssend(buf, count, datatype, dest, tag, comm);
    if ((rc = PMPI_Issend(buf, count, datatype, dest, tag, comm, &q)) != MPI_SUCCESS)
        return rc;
    return wait_foreign(&q, MPI_STATUS_IGNORE);
}

int MPI_Recv(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
             MPI_Status *status)
{
    MPI_Request q;
    int rc;
    if (!trd_nbc_outstanding())
        return PMPI_Recv(buf, count, datatype, source, tag, comm, status);
    if ((rc = PMPI_Irecv(buf, count, datatype, source, tag, comm, &q)) != MPI_SUCCESS)
        return rc;
    return wait_foreign(&q, status);
}

int MPI_Sendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                 void *recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag,
                 MPI_Comm comm, MPI_Status *status)
{
    MPI_Request q[2];
    int rc;
    if (!trd_nbc_outstanding())
        return PMPI_Sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount,
                             recvtype, source, recvtag, comm, status);
    if ((rc = PMPI_Irecv(recvbuf, recvcount, recvtype, source, recvtag, comm, &q[0])) !=
        MPI_SUCCESS)
        return rc;
    if ((rc = PMPI_Isend(sendbuf, sendcount, sendtype, dest, sendtag, comm, &q[1])) !=
            MPI_SUCCESS ||
        (rc = wait_foreign(&q[1], MPI_STATUS_IGNORE)) != MPI_SUCCESS) {
        /* the receive posted must not stay behind to take a message meant
         * for a later one: cancelled, and left to complete by itself */
        PMPI_Cancel(&q[0]);
        PMPI_Request_free(&q[0]);
        return rc;
    }
    return wait_foreign(&q[0], status);
}

int MPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status *status)
{
    unsigned spins = 0;
    if (!trd_nbc_outstanding())
        return PMPI_Probe(source, tag, comm, status);
    for (;;) {
        int flag, rc;
        progress();
        if ((rc = PMPI_Iprobe(source, tag, comm, &flag, status)) != MPI_SUCCESS || flag)
            return rc;
        trd_relax(&spins);
    }
}

/* Always the library's nonblocking barrier: whether this rank has runs
 * outstanding is its own affair, and a rank that chose the blocking form
 * while its peer chose the nonblocking one would never meet it (MPI matches
 * blocking collectives only with blocking ones).  MPICH 4.0.2's
 * MPI_Ibarrier + MPI_Wait takes 0.8 us at 2 ranks of a node against 1.4 us
 * for its MPI_Barrier. */
int MPI_Barrier(MPI_Comm comm)
{
    return trd_nbc_barrier(comm);
}
