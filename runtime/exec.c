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
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* spins before a wait starts yielding the core */
#define TRD_SPINS 2000

enum { REMOTE_NONE = 0, REMOTE_LOAD, REMOTE_CMA };

/* One lowered op. */
typedef struct trd_xop {
    unsigned char op, sbuf, dbuf, ctr;
    unsigned char sremote, dremote; /* REMOTE_*: the other rank's segment, or its user buffer */
    unsigned char spar, dpar;       /* slot parity of SEG/INL addresses */
    int speer, dpeer;               /* segment/single copy: local index (-1: own); send:
                                     * destination, recv: source (comm ranks) */
    int nwait;                      /* wait: local ranks 0..nwait-1, 0: speer only */
    int win;                        /* first op of a window of messages: its ops */
    long long epoch;
    size_t soff, doff;              /* bytes within the buffer, or within the slot pair */
    size_t len, rlen;               /* elements */
} trd_xop;

struct trd_plan_entry {
    const trd_algo *alg;
    char params[TRD_PARAMS_MAX];
    trd_call call;
    trd_xop *x;
    size_t nx;
    size_t tmp_bytes;
    int nepochs;
    int maxreq;
    MPI_Request *reqs;
    unsigned long used;
};

void trd_plan_free(trd_plan_entry *p)
{
    if (!p)
        return;
    free(p->x);
    free(p->reqs);
    free(p);
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

/* Byte offset and slot parity of a segment address (SEG or INL); -1 where the
 * range does not stay in one area. */
static int seg_addr(const trd_sched *s, const trd_comm *c, int buf, size_t v, size_t len,
                    size_t ext, size_t *off, unsigned char *par)
{
    if (buf == TRD_B_SEG) {
        size_t S = s->seg_slot, a = v % (2 * S);
        *par = (unsigned char)((v / (2 * S)) & 1);
        if (a < S) {
            *off = a * ext;
            return a + len <= S ? 0 : -1;
        }
        *off = c->shm->slot + (a - S) * ext;
        return a + len <= 2 * S ? 0 : -1;
    }
    size_t I = s->inl_slot;
    if (I == 0)
        return -1;
    *par = (unsigned char)((v / I) & 1);
    *off = (v % I) * ext;
    return v % I + len <= I ? 0 : -1;
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
    if (!(p->x = calloc(n + 1, sizeof *p->x)))
        return "out of memory";
    p->nx = n;
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
            continue;
        }
        /* copy, reduce: source, then destination */
        for (int side = 0; side < 2; side++) {
            int buf = side ? o->dst : o->src, owner = side ? o->peer2 : o->peer;
            size_t v = side ? o->off : o->soff, off = v * ext;
            unsigned char remote = REMOTE_NONE, par = 0;
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
            if (buf == TRD_B_SEG || buf == TRD_B_INL) {
                if (!c->shm || seg_addr(s, c, buf, v, o->len, ext, &off, &par))
                    return "a segment access outside its areas";
            }
            if (side) {
                x->dremote = remote;
                x->dpeer = li;
                x->dpar = par;
                x->doff = off;
            } else {
                x->sremote = remote;
                x->speer = li;
                x->spar = par;
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
    if (*c1 != ':' || (size_t)(c1 - spec) != strlen(a->name) || strncmp(spec, a->name, strlen(a->name)))
        return;
    if (atoi(c1 + 1) == rank)
        trd_sched_drop(s, rank, (size_t)atol(c2 + 1));
}

int trd_plan_get(trd_comm *c, const trd_algo *a, const char *params, const trd_call *call,
                 trd_plan_entry **out, const char **why)
{
    static char reason[256]; /* the same on every rank that plans the same call */
    trd_plan_entry *p;
    int victim = 0;
    c->calls++;
    for (int i = 0; i < TRD_PLAN_CACHE; i++) {
        p = c->plans[i];
        if (!p) {
            victim = i;
            continue;
        }
        if (p->alg == a && p->call.count == call->count && p->call.extent == call->extent &&
            p->call.coll == call->coll && p->call.root == call->root &&
            p->call.in_place == call->in_place && p->call.commutative == call->commutative &&
            strcmp(p->params, params) == 0) {
            p->used = c->calls;
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
    if (!(p = calloc(1, sizeof *p))) {
        trd_sched_free(&s);
        return MPI_ERR_NO_MEM;
    }
    apply_break(&s, a, c->rank);
    p->alg = a;
    snprintf(p->params, sizeof p->params, "%s", params);
    p->call = *call;
    p->nepochs = s.nepochs[0];
    p->tmp_bytes = s.tmp_count * call->extent;
    const char *no = lower(c, &s, p);
    trd_sched_free(&s);
    if (no) {
        trd_plan_free(p);
        snprintf(reason, sizeof reason, "%s: %s", a->name, no);
        *why = reason;
        return strcmp(no, "out of memory") ? MPI_SUCCESS : MPI_ERR_NO_MEM;
    }
    trd_plan_free(c->plans[victim]);
    c->plans[victim] = p;
    p->used = c->calls;
    *out = p;
    return MPI_SUCCESS;
}

/* ---- Execution ------------------------------------------------------------------ */

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ volatile("yield");
#endif
}

static inline _Atomic uint64_t *counter(const trd_shm *s, int r, int ctr)
{
    struct trd_shm_ctrl *k = trd_shm_ctrl(s, r);
    return ctr == TRD_CTR_IN ? &k->ctr_in : ctr == TRD_CTR_RED ? &k->ctr_red : &k->ctr_done;
}

/* Wait until local rank r has published at least e: spin, then yield. */
static inline void wait_one(const trd_shm *s, int r, int ctr, uint64_t e)
{
    _Atomic uint64_t *f = counter(s, r, ctr);
    unsigned spins = 0;
    while (atomic_load_explicit(f, memory_order_acquire) < e) {
        if (++spins < TRD_SPINS)
            cpu_relax();
        else
            sched_yield();
    }
}

typedef struct exec {
    trd_comm *c;
    const trd_shm *s;
    const char *send;
    char *recv, *tmp;
    MPI_Datatype type;
    const trd_reducer *red;
    uint64_t base;
    unsigned basepar;
} exec;

/* Address of a side of a local or segment access. */
static inline char *addr(const exec *e, int buf, int peer, unsigned par, size_t off)
{
    switch (buf) {
    case TRD_B_SEND:
        return (char *)e->send + off;
    case TRD_B_RECV:
        return e->recv + off;
    case TRD_B_TMP:
        return e->tmp + off;
    case TRD_B_SEG:
        return e->s->seg[peer < 0 ? e->s->me : peer] + sizeof(struct trd_shm_ctrl) +
               (size_t)(par ^ e->basepar) * 2 * e->s->slot + off;
    default:
        return (char *)trd_shm_ctrl(e->s, peer < 0 ? e->s->me : peer)->inline_data +
               32 * (par ^ e->basepar) + off;
    }
}

/* The other rank's published address of its user buffer buf. */
static inline uint64_t remote_addr(const exec *e, int buf, int peer, size_t off)
{
    struct trd_shm_ctrl *k = trd_shm_ctrl(e->s, peer);
    return (buf == TRD_B_SEND ? k->src : k->dst) + off;
}

static int copy(const exec *e, const trd_xop *x, size_t ext)
{
    size_t bytes = x->len * ext;
    if (x->sremote == REMOTE_CMA)
        return trd_cma_read(e->s, x->speer, remote_addr(e, x->sbuf, x->speer, x->soff),
                            addr(e, x->dbuf, x->dpeer, x->dpar, x->doff), bytes);
    const char *src = addr(e, x->sbuf, x->speer, x->spar, x->soff);
    if (x->dremote == REMOTE_CMA)
        return trd_cma_write(e->s, x->dpeer, src, remote_addr(e, x->dbuf, x->dpeer, x->doff),
                             bytes);
    memcpy(addr(e, x->dbuf, x->dpeer, x->dpar, x->doff), src, bytes);
    return MPI_SUCCESS;
}

/* Post the window of messages at x (x->win ops) and wait for all of them.
 * A window of one op uses the blocking call. */
static int messages(const exec *e, const trd_xop *x, trd_plan_entry *p)
{
    MPI_Comm comm = e->c->comm;
    int rc = MPI_SUCCESS, nreq = 0;
    if (x->win == 1) {
        switch (x->op) {
        case TRD_S_SEND:
            return PMPI_Send(addr(e, x->sbuf, -1, 0, x->soff), (int)x->len, e->type, x->speer,
                             TRD_TAG, comm);
        case TRD_S_RECV:
            return PMPI_Recv(addr(e, x->dbuf, -1, 0, x->doff), (int)x->len, e->type, x->dpeer,
                             TRD_TAG, comm, MPI_STATUS_IGNORE);
        default:
            return PMPI_Sendrecv(addr(e, x->sbuf, -1, 0, x->soff), (int)x->len, e->type, x->speer,
                                 TRD_TAG, addr(e, x->dbuf, -1, 0, x->doff), (int)x->rlen, e->type,
                                 x->dpeer, TRD_TAG, comm, MPI_STATUS_IGNORE);
        }
    }
    for (int k = 0; k < x->win && rc == MPI_SUCCESS; k++) {
        const trd_xop *o = &x[k];
        if (o->op != TRD_S_SEND)
            rc = PMPI_Irecv(addr(e, o->dbuf, -1, 0, o->doff),
                            (int)(o->op == TRD_S_SENDRECV ? o->rlen : o->len), e->type, o->dpeer,
                            TRD_TAG, comm, &p->reqs[nreq++]);
        if (rc == MPI_SUCCESS && o->op != TRD_S_RECV)
            rc = PMPI_Isend(addr(e, o->sbuf, -1, 0, o->soff), (int)o->len, e->type, o->speer,
                            TRD_TAG, comm, &p->reqs[nreq++]);
    }
    /* MPICH's prototype gives PMPI_Waitall an access attribute that GCC 12
     * checks against MPI_STATUSES_IGNORE, a sentinel pointer; the call is
     * correct */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstringop-overflow"
    int wrc = PMPI_Waitall(nreq, p->reqs, MPI_STATUSES_IGNORE);
#pragma GCC diagnostic pop
    return rc != MPI_SUCCESS ? rc : wrc;
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

int trd_exec(trd_comm *c, trd_plan_entry *p, const void *sendbuf, void *recvbuf,
             MPI_Datatype type, const trd_reducer *red)
{
    trd_shm *s = c->shm;
    size_t ext = p->call.extent;
    int rc = MPI_SUCCESS;
    exec e = {c, s, sendbuf, recvbuf, NULL, type, red, s ? s->epoch : 0, 0};
    e.basepar = (unsigned)(e.base & 1);
    if (p->tmp_bytes && !(e.tmp = trd_comm_scratch(c, p->tmp_bytes)))
        return MPI_ERR_NO_MEM;
    if (s && c->shape.cma) {
        /* another rank's ops may read or write this rank's buffers directly:
         * where they are, before anything is signalled */
        struct trd_shm_ctrl *k = trd_shm_ctrl(s, s->me);
        k->src = (uint64_t)(uintptr_t)input_of(c, &p->call, sendbuf, recvbuf);
        k->dst = (uint64_t)(uintptr_t)recvbuf;
    }
    for (size_t i = 0; i < p->nx && rc == MPI_SUCCESS;) {
        const trd_xop *x = &p->x[i];
        switch (x->op) {
        case TRD_S_COPY:
            rc = copy(&e, x, ext);
            i++;
            break;
        case TRD_S_REDUCE:
            rc = trd_reduce_local(red, addr(&e, x->sbuf, x->speer, x->spar, x->soff),
                            addr(&e, x->dbuf, x->dpeer, x->dpar, x->doff), x->len);
            i++;
            break;
        case TRD_S_SIGNAL:
            atomic_store_explicit(counter(s, s->me, x->ctr), e.base + (uint64_t)x->epoch,
                                  memory_order_release);
            i++;
            break;
        case TRD_S_WAIT: {
            long long at = (long long)e.base + x->epoch;
            i++;
            if (at <= 0)
                break;
            if (!x->nwait) {
                wait_one(s, x->speer, x->ctr, (uint64_t)at);
                break;
            }
            /* every rank published IN of a later epoch only after it had
             * finished the epochs before: their DONE lines need no reading */
            if (x->ctr == TRD_CTR_DONE && x->nwait == s->n && s->all_in >= (uint64_t)at + 1)
                break;
            for (int r = 0; r < x->nwait; r++)
                wait_one(s, r, x->ctr, (uint64_t)at);
            if (x->ctr == TRD_CTR_IN && x->nwait == s->n && (uint64_t)at > s->all_in)
                s->all_in = (uint64_t)at;
            break;
        }
        default:
            rc = messages(&e, x, p);
            i += (size_t)x->win;
            break;
        }
    }
    if (s)
        s->epoch += (uint64_t)p->nepochs;
    return rc;
}
