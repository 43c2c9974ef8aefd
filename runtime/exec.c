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

/* Lower rank c->rank's ops of s into p; NULL, or why they cannot run here. */
static const char *lower(trd_comm *c, const trd_sched *s, trd_plan_entry *p)
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
    if (p->maxreq && !(p->reqs = malloc((size_t)p->maxreq * sizeof *p->reqs)))
        return "out of memory";
    return NULL;
}

/* TREEDUCE_BREAK=ALG:RANK:OP (testing): drop that op from this rank's plan of
 * ALG, as treeduce-gen --break-schedule does before it verifies. */
static void apply_break(trd_sched *s, const trd_algo *a, int rank)
{
    const char *spec = trd_env_break(), *c1, *c2;
    if (!spec || !(c2 = strrchr(spec, ':')) || c2 == spec)
        return;
    for (c1 = c2 - 1; c1 > spec && *c1 != ':'; c1--)
        ;
    if (*c1 != ':' || (size_t)(c1 - spec) != strlen(a->name) ||
        strncmp(spec, a->name, strlen(a->name)))
        return;
    if (atoi(c1 + 1) == rank)
        trd_sched_drop(s, rank, (size_t)atol(c2 + 1));
}

/* Whether p was planned for call. */
static inline int same_call(const trd_plan_entry *p, const trd_call *call)
{
    return p->call.count == call->count && p->call.extent == call->extent &&
           p->call.coll == call->coll && p->call.root == call->root &&
           p->call.in_place == call->in_place && p->call.commutative == call->commutative &&
           p->call.whole == call->whole;
}

int trd_plan_get(trd_comm *c, const trd_algo *a, const char *params, const trd_call *call,
                 trd_plan_entry **out, const char **why)
{
    /* the same on every rank that plans the same call; per thread, since
     * threads may plan for different communicators at once */
    static _Thread_local char reason[256];
    trd_plan_entry *p = c->plans[c->mru];
    int victim = 0, selected = !a;
    c->calls++;
    /* calls of one kind in a row: the selection would choose the same */
    if (p && same_call(p, call) &&
        (a ? p->alg == a && (p->given == params || !strcmp(p->params, params)) : p->selected)) {
        p->used = c->calls;
        *out = p;
        return MPI_SUCCESS;
    }
    if (!a)
        a = trd_select(&c->sel, &c->shape, call, &params);
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
    if (trd_plan(&s, a, params, &c->shape, call, c->rank, reason, sizeof reason)) {
        *why = reason;
        return strcmp(reason, "out of memory") ? MPI_SUCCESS : MPI_ERR_NO_MEM;
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
    const char *no = lower(c, &s, p);
    trd_sched_free(&s);
    if (no) {
        trd_plan_free(p);
        snprintf(reason, sizeof reason, "%s: %s", a->name, no);
        *why = reason;
        return strcmp(no, "out of memory") ? MPI_SUCCESS : MPI_ERR_NO_MEM;
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

/* Wait until counter f holds at least e: spin, then yield. */
static inline void wait_one(_Atomic uint64_t *f, uint64_t e)
{
    unsigned spins = 0;
    while (atomic_load_explicit(f, memory_order_acquire) < e)
        trd_relax(&spins);
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

/* The window of messages at x (x->win ops): blocking, a window of one op
 * through the blocking call, else posted and waited for; otherwise posted
 * once and tested.  *done when all completed. */
static int messages(trd_run *e, const trd_xop *x, int blocking, int *done)
{
    MPI_Comm comm = e->c->comm;
    MPI_Request *reqs = e->p->reqs;
    int rc = MPI_SUCCESS;
    *done = 1;
    if (blocking && x->win == 1) {
        switch (x->op) {
        case TRD_S_SEND:
            return PMPI_Send(e->b[x->sbuf] + x->soff, (int)x->len, e->type, x->speer, TRD_TAG,
                             comm);
        case TRD_S_RECV:
            return PMPI_Recv(e->b[x->dbuf] + x->doff, (int)x->len, e->type, x->dpeer, TRD_TAG, comm,
                             MPI_STATUS_IGNORE);
        default:
            return PMPI_Sendrecv(e->b[x->sbuf] + x->soff, (int)x->len, e->type, x->speer, TRD_TAG,
                                 e->b[x->dbuf] + x->doff, (int)x->rlen, e->type, x->dpeer, TRD_TAG,
                                 comm, MPI_STATUS_IGNORE);
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
                rc = PMPI_Isend(e->b[o->sbuf] + o->soff, (int)o->len, e->type, o->speer, TRD_TAG,
                                comm, &reqs[e->nreq++]);
        }
        e->posted = 1;
        if (rc != MPI_SUCCESS)
            return rc;
    }
    /* MPICH's prototypes give PMPI_Waitall and PMPI_Testall an access
     * attribute that GCC 12 checks against MPI_STATUSES_IGNORE, a sentinel
     * pointer; the calls are correct */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstringop-overflow"
    if (blocking) {
        rc = PMPI_Waitall(e->nreq, reqs, MPI_STATUSES_IGNORE);
    } else {
        rc = PMPI_Testall(e->nreq, reqs, done, MPI_STATUSES_IGNORE);
    }
#pragma GCC diagnostic pop
    if (*done)
        e->posted = 0;
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
    if (p->tmp_bytes && !tmp && !(r->b[TRD_B_TMP] = trd_comm_scratch(c, p->tmp_bytes)))
        return MPI_ERR_NO_MEM;
    if (s) {
        /* the node's epochs of this call: every rank of the node runs the
         * same calls in the same order */
        r->base = s->epoch;
        s->epoch += (uint64_t)p->nepochs;
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

/* Whether the wait x is satisfied (blocking: wait until it is). */
static inline __attribute__((always_inline)) int wait_done(trd_run *e, const trd_xop *x,
                                                           int blocking)
{
    trd_shm *s = e->c->shm;
    long long at = (long long)e->base + x->epoch;
    if (at <= 0)
        return 1;
    if (!x->nwait) {
        if (blocking)
            wait_one(x->ctrp, (uint64_t)at);
        return blocking || atomic_load_explicit(x->ctrp, memory_order_acquire) >= (uint64_t)at;
    }
    /* every rank published IN of a later epoch only after it had finished
     * the epochs before: their DONE lines need no reading */
    if (x->ctr == TRD_CTR_DONE && x->nwait == s->n && s->all_in >= (uint64_t)at + 1)
        return 1;
    for (int r = 0; r < x->nwait; r++) {
        if (blocking)
            wait_one(counter(s, r, x->ctr), (uint64_t)at);
        else if (atomic_load_explicit(counter(s, r, x->ctr), memory_order_acquire) < (uint64_t)at)
            return 0;
    }
    if (x->ctr == TRD_CTR_IN && x->nwait == s->n && (uint64_t)at > s->all_in)
        s->all_in = (uint64_t)at;
    return 1;
}

static inline __attribute__((always_inline)) int run_progress(trd_run *e, int blocking, int *done)
{
    const trd_plan_entry *p = e->p;
    int rc = MPI_SUCCESS, ok;
    while (e->pc < p->nx && rc == MPI_SUCCESS) {
        const trd_xop *x = &p->x[e->pc];
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
            if (!wait_done(e, x, blocking)) {
                *done = 0;
                return MPI_SUCCESS;
            }
            e->pc++;
            break;
        default:
            rc = messages(e, x, blocking, &ok);
            if (rc == MPI_SUCCESS && !ok) {
                *done = 0;
                return MPI_SUCCESS;
            }
            e->pc += (size_t)x->win;
            break;
        }
    }
    *done = 1;
    return rc;
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
