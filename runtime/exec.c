/* The executor: runs this rank's schedule, op by op, on MPI point to point,
 * the node segment, single-copy reads and writes, and the reduction kernels.
 *
 * A plan is made once per kind of call on a communicator (algorithm,
 * parameters, collective, count, extent, root, in place, commutativity) by the
 * algorithm's planner for this rank only -- the same code that treeduce-gen
 * ran for every rank and verified -- and lowered: comm ranks of the node
 * become local indices, element offsets become bytes, segment addresses a
 * slot parity and an offset, runs of posted-together messages a window.
 * Lowering changes how ops are addressed, not what they do.
 *
 * Segment synchronisation is by counters: a signal publishes the node's epoch
 * base + the op's epoch with release semantics; a wait spins, then yields
 * (ranks may outnumber cores), until the counter holds at least that with
 * acquire semantics [FLEX §3.1].  Epochs are counted per node: every rank of
 * a node runs the same sequence of calls, so bases agree.
 *
 * Erroneous calls [MPI-4.0 §6.1.1: counts must match]: a rank whose peers on
 * the node run another call (another count) learns it from their call word,
 * read when a wait on them completes; it then skips the node's ops, raises
 * its counters to the next epoch block, where the others follow, and returns
 * MPI_ERR_TRUNCATE.  A message of another size than the plan's is the same
 * error.  Either way the schedule's messages still run, as MPICH's
 * collectives go on after an error, so that no peer waits forever; empty,
 * so that their receivers err too rather than succeed on what this rank could
 * not compute.
 */
#include "rt.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { REMOTE_NONE = 0, REMOTE_LOAD, REMOTE_CMA };

/* One lowered op. */
typedef struct trd_xop {
    unsigned char op, sbuf, dbuf, ctr;
    unsigned char sremote, dremote; /* REMOTE_*: the other rank's segment, or its user buffer */
    int speer, dpeer;               /* segment/single copy: local index (-1: own); send:
                                     * destination, recv: source (comm ranks) */
    int nwait;                      /* wait: local ranks 0..nwait-1, 0: one rank */
    int win;                        /* first op of a window of messages: its ops */
    long long epoch;
    size_t soff, doff;       /* user buffers: bytes from their start */
    size_t len, rlen, bytes; /* elements; bytes of a copy */
    char *sseg[2], *dseg[2]; /* segment sides: the address when the node's epoch base is
                              * even, odd (NULL: a user buffer or the temporary) */
    _Atomic uint64_t *ctrp;  /* signal: this rank's counter; a wait on one rank: its */
} trd_xop;

struct trd_plan_entry {
    const trd_algo *alg;
    const char *given; /* the params pointer it was planned for (tables and literals stay put) */
    /* flags and the holders' count in one word, so that the ops start where
     * they always did (a small call touches few lines) */
    unsigned char selected; /* the selection chose it for this call */
    unsigned char publish;  /* the node's ranks access each other's user buffers (single copy) */
    unsigned char cached;   /* in its communicator's cache */
    int refs;               /* requests holding it (persistent and nonblocking calls) */
    char params[TRD_PARAMS_MAX];
    trd_call call;
    trd_xop *x;
    size_t nx;
    size_t tmp_bytes;
    int nepochs;
    int maxreq;
    MPI_Request *reqs;
    MPI_Status *stats; /* [maxreq]: the sizes of the messages received */
    unsigned long used;
    trd_xop x0[]; /* the ops, in the same allocation: a small call touches few lines */
};

const trd_algo *trd_plan_algo(const trd_plan_entry *p, const char **params)
{
    *params = p->params;
    return p->alg;
}

void trd_plan_free(trd_plan_entry *p)
{
    if (!p)
        return;
    free(p->reqs);
    free(p->stats);
    free(p);
}

/* Out of the cache: freed now, or by the last request that holds it. */
static void plan_uncache(trd_plan_entry *p)
{
    if (p && !(p->cached = 0) && !p->refs)
        trd_plan_free(p);
}

void trd_plan_pin(trd_plan_entry *p)
{
    p->refs++;
}

void trd_plan_release(trd_plan_entry *p)
{
    if (p && --p->refs == 0 && !p->cached)
        trd_plan_free(p);
}

void trd_plan_cache_free(trd_comm *c)
{
    for (int i = 0; i < TRD_PLAN_CACHE; i++) {
        plan_uncache(c->plans[i]);
        c->plans[i] = NULL;
    }
}

size_t trd_plan_tmp_bytes(const trd_plan_entry *p)
{
    return p->tmp_bytes;
}

/* ---- Lowering ------------------------------------------------------------------ */

/* Local index of comm rank r on this rank's node, or -1. */
static int local_of(const trd_comm *c, int r)
{
    if (r < 0 || r >= c->size || c->node_of[r] != c->node)
        return -1;
    for (int l = 0; l < c->ppn; l++)
        if (c->ring[c->node_first[c->node] + l] == r)
            return l;
    return -1;
}

static inline _Atomic uint64_t *counter(const trd_shm *s, int r, int ctr)
{
    struct trd_shm_ctrl *k = trd_shm_ctrl(s, r);
    return ctr == TRD_CTR_IN ? &k->ctr_in : ctr == TRD_CTR_RED ? &k->ctr_red : &k->ctr_done;
}

/* The addresses of a segment range (SEG or INL) of local rank li at virtual
 * offset v, for an even and an odd epoch base; -1 where the range does not
 * stay in one area. */
static int seg_addr(const trd_sched *s, const trd_comm *c, int buf, int li, size_t v, size_t len,
                    size_t ext, char *out[2])
{
    const trd_shm *shm = c->shm;
    for (unsigned q = 0; q < 2; q++) {
        if (buf == TRD_B_SEG) {
            size_t S = s->seg_slot, a = v % (2 * S), par = ((v / (2 * S)) & 1) ^ q;
            if (a + len > (a < S ? S : 2 * S))
                return -1;
            out[q] = shm->seg[li] + sizeof(struct trd_shm_ctrl) + par * 2 * shm->slot +
                     (a < S ? a * ext : shm->slot + (a - S) * ext);
        } else {
            size_t I = s->inl_slot;
            if (I == 0 || v % I + len > I)
                return -1;
            out[q] = (char *)trd_shm_ctrl(shm, li)->inline_data + 32 * (((v / I) & 1) ^ q) +
                     (v % I) * ext;
        }
    }
    return 0;
}

static int is_msg(int op)
{
    return op == TRD_S_SEND || op == TRD_S_RECV || op == TRD_S_SENDRECV;
}

/* Lower rank c->rank's ops of s into p (its requests not yet allocated:
 * lower); NULL, or why they cannot run here. */
static const char *lower_ops(trd_comm *c, const trd_sched *s, trd_plan_entry *p)
{
    size_t n, ext = s->call.extent;
    const trd_sstep *ops = trd_sched_ops(s, c->rank, &n);
    for (size_t i = 0; i < n; i++) {
        const trd_sstep *o = &ops[i];
        trd_xop *x = &p->x[i];
        x->op = o->op;
        x->sbuf = o->src;
        x->dbuf = o->dst;
        x->ctr = o->ctr;
        x->epoch = o->epoch;
        x->len = o->len;
        x->rlen = o->rlen;
        x->bytes = o->len * ext;
        x->speer = x->dpeer = -1;
        if (is_msg(o->op)) {
            if (o->len > INT_MAX || o->rlen > INT_MAX)
                return "a message of more than INT_MAX elements";
            if (o->src >= TRD_B_SEG || (o->op != TRD_S_SEND && o->dst >= TRD_B_SEG))
                return "a message from or into the segment";
            x->speer = o->peer;
            x->dpeer = o->op == TRD_S_SENDRECV ? o->peer2 : o->peer;
            x->soff = o->soff * ext;
            x->doff = o->off * ext;
            continue;
        }
        if (o->op == TRD_S_SIGNAL || o->op == TRD_S_WAIT) {
            if (!c->shm)
                return "a node synchronisation without a segment";
            if (o->op == TRD_S_WAIT && o->peer == TRD_PEER_LOCALS) {
                if (o->nwait < 1 || o->nwait > c->ppn)
                    return "a wait on more ranks than the node has";
                x->nwait = o->nwait;
            } else if (o->op == TRD_S_WAIT && (x->speer = local_of(c, o->peer)) < 0) {
                return "a wait on a rank of another node";
            }
            if (!x->nwait)
                x->ctrp = counter(c->shm, o->op == TRD_S_SIGNAL ? c->shm->me : x->speer, o->ctr);
            continue;
        }
        /* copy, reduce: source, then destination */
        for (int side = 0; side < 2; side++) {
            int buf = side ? o->dst : o->src, owner = side ? o->peer2 : o->peer;
            size_t v = side ? o->off : o->soff, off = v * ext;
            unsigned char remote = REMOTE_NONE;
            char **seg = side ? x->dseg : x->sseg;
            int li = -1;
            if (owner >= 0 && owner != c->rank) {
                if ((li = local_of(c, owner)) < 0)
                    return "a copy from a rank of another node";
                if (buf == TRD_B_SEG || buf == TRD_B_INL)
                    remote = REMOTE_LOAD;
                else if ((buf == TRD_B_SEND || buf == TRD_B_RECV) && (c->shape.cma & TRD_CMA_READ))
                    remote = REMOTE_CMA;
                else
                    return "a remote access the node does not allow";
                if (remote == REMOTE_CMA && (o->op != TRD_S_COPY || (side && buf != TRD_B_RECV)))
                    return "a single-copy access other than a copy";
                if (remote == REMOTE_CMA && side && !(c->shape.cma & TRD_CMA_WRITE))
                    return "a single-copy write the node does not allow";
            }
            if ((buf == TRD_B_SEG || buf == TRD_B_INL) &&
                (!c->shm || seg_addr(s, c, buf, li < 0 ? c->shm->me : li, v, o->len, ext, seg)))
                return "a segment access outside its areas";
            if (side) {
                x->dremote = remote;
                x->dpeer = li;
                x->doff = off;
            } else {
                x->sremote = remote;
                x->speer = li;
                x->soff = off;
            }
        }
        if (x->sremote == REMOTE_CMA && x->dremote != REMOTE_NONE)
            return "a single copy between two other ranks";
    }
    /* windows of messages posted together */
    for (size_t i = 0; i < n;) {
        if (!is_msg(ops[i].op)) {
            i++;
            continue;
        }
        size_t j = i;
        int reqs = 0;
        while (j < n && is_msg(ops[j].op)) {
            reqs += ops[j].op == TRD_S_SENDRECV ? 2 : 1;
            if (!ops[j++].nb)
                break;
        }
        if (ops[j - 1].nb && j < n)
            return "a local op posted with messages";
        p->x[i].win = (int)(j - i);
        p->maxreq = reqs > p->maxreq ? reqs : p->maxreq;
        i = j;
    }
    return NULL;
}

/* Lower rank c->rank's ops of s into p, with the requests its largest
 * window of messages needs (none: an injected failure).  MPI_SUCCESS with
 * *no NULL, or with *no saying why the plan cannot run here (the call falls
 * back); MPI_ERR_NO_MEM. */
static int lower(trd_comm *c, const trd_sched *s, trd_plan_entry *p, int inject, const char **no)
{
    if ((*no = lower_ops(c, s, p)))
        return MPI_SUCCESS;
    if (inject == TRD_INJECT_LOWER_NOMEM ||
        (p->maxreq && (!(p->reqs = malloc((size_t)p->maxreq * sizeof *p->reqs)) ||
                       !(p->stats = malloc((size_t)p->maxreq * sizeof *p->stats)))))
        return MPI_ERR_NO_MEM;
    return MPI_SUCCESS;
}

/* TREEDUCE_INJECT's planners: out of memory, and a refusal without a word. */
static int plan_nomem(trd_sb *b, const void *params)
{
    (void)b;
    (void)params;
    return TRD_ERR_NOMEM;
}

static int plan_refuse(trd_sb *b, const void *params)
{
    (void)b;
    (void)params;
    return TRD_ERR_INPUT;
}

/* The failure TREEDUCE_INJECT asks of a's plans (0: none); *planner a with
 * the failing planner in its place, where the planner is to fail. */
static int inject(const trd_algo *a, trd_algo *planner)
{
    char alg[64];
    int kind = trd_env_inject(alg, sizeof alg);
    if (!kind || strcmp(alg, a->name))
        return 0;
    *planner = *a;
    if (kind != TRD_INJECT_LOWER_NOMEM)
        planner->plan = kind == TRD_INJECT_NOMEM ? plan_nomem : plan_refuse;
    return kind;
}

/* TREEDUCE_BREAK=ALG:RANK:OP (testing): drop that op from this rank's plan of
 * ALG, as treeduce-gen --break-schedule does before it verifies. */
static void apply_break(trd_sched *s, const trd_algo *a, int rank)
{
    char alg[64];
    int brank;
    size_t op;
    if (trd_env_break(alg, sizeof alg, &brank, &op) && strcmp(alg, a->name) == 0 && brank == rank)
        trd_sched_drop(s, rank, op);
}

/* Whether p was planned for call. */
static inline int same_call(const trd_plan_entry *p, const trd_call *call)
{
    return p->call.count == call->count && p->call.extent == call->extent &&
           p->call.coll == call->coll && p->call.root == call->root &&
           p->call.in_place == call->in_place && p->call.commutative == call->commutative &&
           p->call.whole == call->whole;
}

const char trd_why_library_chosen[] = "the machine's tables choose it at this size";
const char trd_why_library_forced[] = "it is forced (mpi)";

int trd_plan_get(trd_comm *c, const trd_algo *a, const char *params, const trd_call *call,
                 int no_tuned, trd_plan_entry **out, const char **why)
{
    /* the same on every rank that plans the same call; per thread, since
     * threads may plan for different communicators at once */
    static _Thread_local char reason[256];
    trd_plan_entry *p = c->plans[c->mru];
    /* a call the measured ranges would choose for but must not: chosen
     * without them, and the plan not marked as the selection's */
    int untuned = !a && no_tuned && c->sel.ntuned[call->coll];
    int victim = 0, selected = !a && !untuned;
    c->calls++;
    /* calls of one kind in a row: the selection would choose the same */
    if (p && same_call(p, call) &&
        (a ? p->alg == a && (p->given == params || !strcmp(p->params, params)) : p->selected) &&
        !untuned) {
        p->used = c->calls;
        *out = p;
        return MPI_SUCCESS;
    }
    if (untuned || (!a && !c->segment_made)) {
        /* the measured ranges were measured with the node's segment: a
         * communicator waiting for its own takes the model's choice */
        trd_selection model = c->sel;
        model.ntuned[call->coll] = 0;
        a = trd_select(&model, &c->shape, call, &params);
    } else if (!a) {
        a = trd_select(&c->sel, &c->shape, call, &params);
    }
    if (a->flags & TRD_ALGO_LIBRARY) { /* "mpi": the caller calls the library */
        *out = NULL;
        *why = selected || untuned ? trd_why_library_chosen : trd_why_library_forced;
        return MPI_SUCCESS;
    }
    for (int i = 0; i < TRD_PLAN_CACHE; i++) {
        p = c->plans[i];
        if (!p) {
            victim = i;
            continue;
        }
        if (same_call(p, call) && p->alg == a &&
            (p->given == params || strcmp(p->params, params) == 0)) {
            p->used = c->calls;
            p->selected |= selected;
            c->mru = i;
            *out = p;
            return MPI_SUCCESS;
        }
        if (c->plans[victim] && p->used < c->plans[victim]->used)
            victim = i;
    }
    *out = NULL;
    trd_sched s;
    trd_algo failing;
    int injected = inject(a, &failing);
    int rc = trd_plan(&s, injected ? &failing : a, params, &c->shape, call, c->rank, reason,
                      sizeof reason);
    if (rc != TRD_OK) { /* the one place a planner's status becomes an MPI error code */
        if (rc == TRD_ERR_NOMEM)
            return MPI_ERR_NO_MEM; /* an error, not a refusal: the call raises it */
        *why = reason;
        return MPI_SUCCESS;
    }
    size_t nops;
    apply_break(&s, a, c->rank);
    trd_sched_ops(&s, c->rank, &nops);
    if (!(p = calloc(1, sizeof *p + (nops + 1) * sizeof(trd_xop)))) {
        trd_sched_free(&s);
        return MPI_ERR_NO_MEM;
    }
    p->x = p->x0;
    p->nx = nops;
    p->alg = a;
    p->given = params;
    p->selected = selected;
    snprintf(p->params, sizeof p->params, "%s", params);
    p->call = *call;
    p->nepochs = s.nepochs[0];
    p->publish = s.direct;
    p->tmp_bytes = s.tmp_count * call->extent;
    const char *no;
    rc = lower(c, &s, p, injected, &no);
    trd_sched_free(&s);
    if (rc != MPI_SUCCESS || no) {
        trd_plan_free(p);
        if (no) {
            snprintf(reason, sizeof reason, "%s: %s", a->name, no);
            *why = reason;
        }
        return rc;
    }
    plan_uncache(c->plans[victim]);
    p->cached = 1;
    c->plans[victim] = p;
    c->mru = victim;
    p->used = c->calls;
    *out = p;
    return MPI_SUCCESS;
}

/* ---- Execution ------------------------------------------------------------------ */

/* Wait until counter f holds at least e: spin, then yield, and let the MPI
 * library progress now and then (the peer may be blocked in it, waiting for
 * this rank's part of one of the library's collectives before it signals). */
static inline void wait_one(_Atomic uint64_t *f, uint64_t e, MPI_Comm comm)
{
    unsigned spins = 0;
    while (atomic_load_explicit(f, memory_order_acquire) < e) {
        trd_relax(&spins);
        if (spins % TRD_PROGRESS_SPINS == 0)
            trd_library_progress(comm);
    }
}

/* Address of a side of an op: a segment address, or a user buffer or the
 * temporary at off. */
static inline char *addr(const trd_run *e, char *const seg[2], int buf, size_t off)
{
    return seg[0] ? seg[e->base & 1] : e->b[buf] + off;
}

/* The other rank's published address of its user buffer buf. */
static inline uint64_t remote_addr(const trd_run *e, int buf, int peer, size_t off)
{
    struct trd_shm_ctrl *k = trd_shm_ctrl(e->s, peer);
    return (buf == TRD_B_SEND ? k->src : k->dst) + off;
}

static int copy(const trd_run *e, const trd_xop *x)
{
    if (x->sremote == REMOTE_CMA)
        return trd_cma_read(e->s, x->speer, remote_addr(e, x->sbuf, x->speer, x->soff),
                            addr(e, x->dseg, x->dbuf, x->doff), x->bytes);
    const char *src = addr(e, x->sseg, x->sbuf, x->soff);
    if (x->dremote == REMOTE_CMA)
        return trd_cma_write(e->s, x->dpeer, src, remote_addr(e, x->dbuf, x->dpeer, x->doff),
                             x->bytes);
    memcpy(addr(e, x->dseg, x->dbuf, x->doff), src, x->bytes);
    return MPI_SUCCESS;
}

/* rc of a receive of len elements, MPI_ERR_TRUNCATE where fewer came (a
 * peer with a smaller count; the MPI library reports a larger one). */
static int received(const trd_run *e, int rc, const MPI_Status *st, size_t len)
{
    int n;
    if (rc == MPI_SUCCESS && (PMPI_Get_count(st, e->type, &n) != MPI_SUCCESS || n != (int)len))
        return MPI_ERR_TRUNCATE;
    return rc;
}

/* The first error of the completed window at x (rc: its MPI_Waitall's). */
static int window_errors(const trd_run *e, const trd_xop *x, int rc)
{
    const MPI_Status *st = e->p->stats;
    int each = rc == MPI_ERR_IN_STATUS, first = each ? MPI_SUCCESS : rc;
    for (int k = 0, q = 0; k < x->win; k++) {
        const trd_xop *o = &x[k];
        int r;
        if (o->op != TRD_S_SEND) {
            r = received(e, each ? st[q].MPI_ERROR : MPI_SUCCESS, &st[q],
                         o->op == TRD_S_SENDRECV ? o->rlen : o->len);
            first = first == MPI_SUCCESS ? r : first;
            q++;
        }
        if (o->op != TRD_S_RECV) {
            r = each ? st[q].MPI_ERROR : MPI_SUCCESS;
            first = first == MPI_SUCCESS ? r : first;
            q++;
        }
    }
    return first;
}

/* Elements that send x sends: none after an error, so that the receivers
 * find it too (a message of another size) instead of using what this rank
 * could not compute. */
static inline int sent(const trd_run *e, const trd_xop *x)
{
    return e->err == MPI_SUCCESS ? (int)x->len : 0;
}

/* The window of messages at x (x->win ops): blocking, a window of one op
 * through the blocking call, else posted and waited for; otherwise posted
 * once and tested.  *done when all completed; with an error, every request
 * has completed too. */
static int messages(trd_run *e, const trd_xop *x, int blocking, int *done)
{
    MPI_Comm comm = e->c->comm;
    MPI_Request *reqs = e->p->reqs;
    MPI_Status st;
    int rc = MPI_SUCCESS;
    *done = 1;
    if (blocking && x->win == 1) {
        switch (x->op) {
        case TRD_S_SEND:
            return PMPI_Send(e->b[x->sbuf] + x->soff, sent(e, x), e->type, x->speer, TRD_TAG, comm);
        case TRD_S_RECV:
            rc = PMPI_Recv(e->b[x->dbuf] + x->doff, (int)x->len, e->type, x->dpeer, TRD_TAG, comm,
                           &st);
            return received(e, rc, &st, x->len);
        default:
            rc = PMPI_Sendrecv(e->b[x->sbuf] + x->soff, sent(e, x), e->type, x->speer, TRD_TAG,
                               e->b[x->dbuf] + x->doff, (int)x->rlen, e->type, x->dpeer, TRD_TAG,
                               comm, &st);
            return received(e, rc, &st, x->rlen);
        }
    }
    if (!e->posted) {
        e->nreq = 0;
        for (int k = 0; k < x->win && rc == MPI_SUCCESS; k++) {
            const trd_xop *o = &x[k];
            if (o->op != TRD_S_SEND)
                rc = PMPI_Irecv(e->b[o->dbuf] + o->doff,
                                (int)(o->op == TRD_S_SENDRECV ? o->rlen : o->len), e->type,
                                o->dpeer, TRD_TAG, comm, &reqs[e->nreq++]);
            if (rc == MPI_SUCCESS && o->op != TRD_S_RECV)
                rc = PMPI_Isend(e->b[o->sbuf] + o->soff, sent(e, o), e->type, o->speer, TRD_TAG,
                                comm, &reqs[e->nreq++]);
        }
        e->posted = 1;
        if (rc != MPI_SUCCESS) {
            /* what was posted completes; the error is the call's */
            PMPI_Waitall(e->nreq, reqs, e->p->stats);
            e->posted = 0;
            return rc;
        }
    }
    /* MPICH's prototypes give PMPI_Waitall and PMPI_Testall an access
     * attribute that GCC 12 checks against MPI_STATUSES_IGNORE, a sentinel
     * pointer; the calls are correct */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstringop-overflow"
    if (blocking) {
        rc = PMPI_Waitall(e->nreq, reqs, e->p->stats);
    } else if ((rc = PMPI_Testall(e->nreq, reqs, done, e->p->stats)) != MPI_SUCCESS && !*done) {
        /* completed requests are freed: the others complete here */
        PMPI_Waitall(e->nreq, reqs, MPI_STATUSES_IGNORE);
        *done = 1;
    }
#pragma GCC diagnostic pop
    if (*done) {
        e->posted = 0;
        rc = window_errors(e, x, rc);
    }
    return rc;
}

/* The input other ranks read by single copy: sendbuf, or where MPI_IN_PLACE
 * keeps it. */
static const char *input_of(const trd_comm *c, const trd_call *call, const void *sendbuf,
                            void *recvbuf)
{
    switch (call->coll) {
    case TRD_COLL_ALLGATHER:
        return call->in_place ? (char *)recvbuf + (size_t)c->rank * call->count * call->extent
                              : sendbuf;
    case TRD_COLL_REDUCE:
        return call->in_place && c->rank == call->root ? recvbuf : sendbuf;
    case TRD_COLL_BCAST:
        return recvbuf;
    default:
        return call->in_place ? recvbuf : sendbuf;
    }
}

/* ---- Calls that differ between the node's ranks ---------------------------------- */

/* Epochs of one block: a node never uses so many in its life, so counters at
 * or above the next block's start mean ranks that found their calls differ. */
#define TRD_EPOCH_BLOCK (UINT64_C(1) << 40)
#define TRD_CALL_ASTRAY UINT64_C(0xffffffff)

/* A rank's call word: the low bits of its first epoch base above a hash of
 * the call (never TRD_CALL_ASTRAY, the word of a rank that went astray). */
static inline uint64_t call_word(uint64_t base, const trd_call *call)
{
    uint64_t h = (uint64_t)call->count * call->extent * 16 + (uint64_t)call->coll;
    h = (h ^ (h >> 32) ^ ((uint64_t)call->root << 20)) & TRD_CALL_ASTRAY;
    return (base << 32) | (h == TRD_CALL_ASTRAY ? 0 : h);
}

static inline uint64_t next_block(uint64_t base)
{
    return (base | (TRD_EPOCH_BLOCK - 1)) + 1;
}

/* Whether local rank r, waited for on counter ctr, runs another call than this
 * rank: its word is of this call's base and differs, or its counters went to
 * a later block. */
static inline int astray_peer(const trd_run *e, int r, int ctr)
{
    uint64_t w = atomic_load_explicit(&trd_shm_ctrl(e->s, r)->call, memory_order_relaxed);
    uint64_t mine = atomic_load_explicit(&trd_shm_ctrl(e->s, e->s->me)->call, memory_order_relaxed);
    return ((w ^ mine) >> 32 == 0 && w != mine) ||
           atomic_load_explicit(counter(e->s, r, ctr), memory_order_relaxed) >= next_block(e->base);
}

/* This rank leaves the node's part of the call: its word says so, its
 * counters release every wait of the call on it, and the node's later calls
 * start at the next block, where the other ranks that find out go too. */
static void go_astray(trd_run *e)
{
    trd_shm *s = e->s;
    struct trd_shm_ctrl *k = trd_shm_ctrl(s, s->me);
    uint64_t next = next_block(e->base);
    atomic_store_explicit(&k->call, (e->base << 32) | TRD_CALL_ASTRAY, memory_order_relaxed);
    atomic_store_explicit(&k->ctr_in, next, memory_order_release);
    atomic_store_explicit(&k->ctr_red, next, memory_order_release);
    atomic_store_explicit(&k->ctr_done, next, memory_order_release);
    s->epoch = next;
    e->astray = 1;
    if (e->err == MPI_SUCCESS)
        e->err = MPI_ERR_TRUNCATE;
}

/* (inlined into trd_exec: a small blocking call pays for no generality it does not use) */
static inline __attribute__((always_inline)) int run_start(trd_run *r, trd_comm *c,
                                                           trd_plan_entry *p, const void *sendbuf,
                                                           void *recvbuf, MPI_Datatype type,
                                                           const trd_reducer *red, void *tmp)
{
    trd_shm *s = c->shm;
    r->c = c;
    r->p = p;
    r->s = s;
    r->b[TRD_B_SEND] = (char *)sendbuf;
    r->b[TRD_B_RECV] = recvbuf;
    r->b[TRD_B_TMP] = tmp;
    r->type = type;
    r->red = red;
    r->base = 0;
    r->pc = 0;
    r->posted = r->nreq = 0;
    r->err = MPI_SUCCESS;
    r->astray = 0;
    if (p->tmp_bytes && !tmp && !(r->b[TRD_B_TMP] = trd_comm_scratch(c, p->tmp_bytes)))
        return MPI_ERR_NO_MEM;
    if (s) {
        /* the node's epochs of this call: every rank of the node runs the
         * same calls in the same order */
        r->base = s->epoch;
        s->epoch += (uint64_t)p->nepochs;
        atomic_store_explicit(&trd_shm_ctrl(s, s->me)->call, call_word(r->base, &p->call),
                              memory_order_relaxed);
        if (p->publish) {
            /* another rank's ops may read or write this rank's buffers
             * directly: where they are, before anything is signalled */
            struct trd_shm_ctrl *k = trd_shm_ctrl(s, s->me);
            k->src = (uint64_t)(uintptr_t)input_of(c, &p->call, sendbuf, recvbuf);
            k->dst = (uint64_t)(uintptr_t)recvbuf;
        }
    }
    return MPI_SUCCESS;
}

/* Whether the wait x is satisfied (blocking: wait until it is); -1 where a
 * rank waited for runs another call. */
static inline __attribute__((always_inline)) int wait_done(trd_run *e, const trd_xop *x,
                                                           int blocking)
{
    trd_shm *s = e->c->shm;
    long long at = (long long)e->base + x->epoch;
    if (at <= 0)
        return 1;
    if (!x->nwait) {
        if (blocking)
            wait_one(x->ctrp, (uint64_t)at, e->c->comm);
        else if (atomic_load_explicit(x->ctrp, memory_order_acquire) < (uint64_t)at)
            return 0;
        return x->epoch > 0 && astray_peer(e, x->speer, x->ctr) ? -1 : 1;
    }
    /* every rank published IN of a later epoch only after it had finished
     * the epochs before: their DONE lines need no reading */
    if (x->ctr == TRD_CTR_DONE && x->nwait == s->n && s->all_in >= (uint64_t)at + 1)
        return 1;
    for (int r = 0; r < x->nwait; r++) {
        if (blocking)
            wait_one(counter(s, r, x->ctr), (uint64_t)at, e->c->comm);
        else if (atomic_load_explicit(counter(s, r, x->ctr), memory_order_acquire) < (uint64_t)at)
            return 0;
    }
    for (int r = 0; x->epoch > 0 && r < x->nwait; r++)
        if (r != s->me && astray_peer(e, r, x->ctr))
            return -1;
    if (x->ctr == TRD_CTR_IN && x->nwait == s->n && (uint64_t)at > s->all_in)
        s->all_in = (uint64_t)at;
    return 1;
}

static inline __attribute__((always_inline)) int run_progress(trd_run *e, int blocking, int *done)
{
    const trd_plan_entry *p = e->p;
    int rc = MPI_SUCCESS, ok;
    while (e->pc < p->nx) {
        const trd_xop *x = &p->x[e->pc];
        rc = MPI_SUCCESS;
        if (e->astray && !is_msg(x->op)) {
            e->pc++;
            continue;
        }
        switch (x->op) {
        case TRD_S_COPY:
            rc = copy(e, x);
            e->pc++;
            break;
        case TRD_S_REDUCE:
            rc = trd_reduce_local(e->red, addr(e, x->sseg, x->sbuf, x->soff),
                                  addr(e, x->dseg, x->dbuf, x->doff), x->len);
            e->pc++;
            break;
        case TRD_S_SIGNAL:
            atomic_store_explicit(x->ctrp, e->base + (uint64_t)x->epoch, memory_order_release);
            e->pc++;
            break;
        case TRD_S_WAIT:
            if (!(ok = wait_done(e, x, blocking))) {
                *done = 0;
                return MPI_SUCCESS;
            }
            if (ok < 0)
                go_astray(e);
            e->pc++;
            break;
        default:
            rc = messages(e, x, blocking, &ok);
            if (!ok) {
                *done = 0;
                return MPI_SUCCESS;
            }
            e->pc += (size_t)x->win;
            break;
        }
        if (rc != MPI_SUCCESS && e->err == MPI_SUCCESS)
            e->err = rc;
    }
    *done = 1;
    return e->err;
}

int trd_run_start(trd_run *r, trd_comm *c, trd_plan_entry *p, const void *sendbuf, void *recvbuf,
                  MPI_Datatype type, const trd_reducer *red, void *tmp)
{
    return run_start(r, c, p, sendbuf, recvbuf, type, red, tmp);
}

int trd_run_progress(trd_run *r, int blocking, int *done)
{
    return run_progress(r, blocking, done);
}

int trd_exec(trd_comm *c, trd_plan_entry *p, const void *sendbuf, void *recvbuf, MPI_Datatype type,
             const trd_reducer *red)
{
    trd_run r;
    int done, rc = run_start(&r, c, p, sendbuf, recvbuf, type, red, NULL);
    return rc != MPI_SUCCESS ? rc : run_progress(&r, 1, &done);
}
