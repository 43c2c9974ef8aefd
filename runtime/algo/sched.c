/* Schedule IR storage, shapes, the builder and the readable step script
 * (sched.h). */
#include "trd_sched.h"

#include <stdlib.h>
#include <string.h>

const char *trd_coll_name(int coll)
{
    static const char *const names[TRD_COLL_MAX] = {"allreduce", "reduce_scatter_block",
                                                    "allgather", "reduce", "bcast"};
    return coll >= 0 && coll < TRD_COLL_MAX ? names[coll] : "?";
}

int trd_shape_init(trd_shape_store *st, int nnodes, const int *ppn, unsigned seed)
{
    static const size_t cma_min[TRD_CMA_MAX] = TRD_CMA_MIN_DEFAULTS;
    int n = 0;
    memset(st, 0, sizeof *st);
    for (int v = 0; v < nnodes; v++)
        n += ppn[v];
    st->ring = malloc((size_t)(n > 0 ? n : 1) * sizeof(int));
    st->node_first = malloc(((size_t)nnodes + 1) * sizeof(int));
    st->node_of = malloc((size_t)(n > 0 ? n : 1) * sizeof(int));
    if (!st->ring || !st->node_first || !st->node_of) {
        trd_shape_free(st);
        return TRD_ERR_NOMEM;
    }
    n = 0;
    for (int v = 0; v < nnodes; v++) {
        st->node_first[v] = n;
        for (int k = 0; k < ppn[v]; k++, n++)
            st->ring[n] = n;
    }
    st->node_first[nnodes] = n;
    /* a placement that is not block-wise: shuffle which rank sits where */
    unsigned x = seed;
    for (int i = n - 1; seed && i > 0; i--) {
        x = x * 1103515245u + 12345u;
        int j = (int)((x >> 8) % (unsigned)(i + 1));
        int t = st->ring[i];
        st->ring[i] = st->ring[j];
        st->ring[j] = t;
    }
    for (int v = 0; v < nnodes; v++)
        for (int i = st->node_first[v]; i < st->node_first[v + 1]; i++)
            st->node_of[st->ring[i]] = v;
    st->s = (trd_shape){.nranks = n,
                        .nnodes = nnodes,
                        .ring = st->ring,
                        .node_first = st->node_first,
                        .node_of = st->node_of,
                        .shm = 1,
                        .slot_bytes = TRD_SEG_SLOT_BYTES};
    memcpy(st->s.cma_min, cma_min, sizeof cma_min);
    return 0;
}

void trd_shape_free(trd_shape_store *st)
{
    free(st->ring);
    free(st->node_first);
    free(st->node_of);
    memset(st, 0, sizeof *st);
}

void trd_shape_ppn(const trd_shape *sh, int *min, int *max)
{
    *min = sh->nranks;
    *max = 0;
    for (int v = 0; v < sh->nnodes; v++) {
        int k = sh->node_first[v + 1] - sh->node_first[v];
        *min = k < *min ? k : *min;
        *max = k > *max ? k : *max;
    }
}

void trd_call_sizes(const trd_call *c, int nranks, int r, size_t *send, size_t *recv)
{
    size_t n = c->count, all = (size_t)nranks * c->count;
    switch (c->coll) {
    case TRD_COLL_REDUCE_SCATTER_BLOCK:
        *send = c->in_place ? 0 : all;
        *recv = c->in_place ? all : n;
        break;
    case TRD_COLL_ALLGATHER:
        *send = c->in_place ? 0 : n;
        *recv = all;
        break;
    case TRD_COLL_REDUCE:
        *send = c->in_place && r == c->root ? 0 : n;
        *recv = r == c->root ? n : 0;
        break;
    case TRD_COLL_BCAST:
        *send = 0;
        *recv = n;
        break;
    default:
        *send = c->in_place ? 0 : n;
        *recv = n;
        break;
    }
}

size_t trd_block_max(size_t count, size_t extent, int n)
{
    size_t most = 0, lo, hi;
    for (int i = 0; i < n; i++) {
        trd_block_split(count, extent, n, i, &lo, &hi);
        most = hi - lo > most ? hi - lo : most;
    }
    return most;
}

/* ---- Storage ------------------------------------------------------------------ */

const trd_sstep *trd_sched_ops(const trd_sched *s, int r, size_t *n)
{
    int i = r - s->rank0;
    if (i < 0 || i >= s->nplanned) {
        *n = 0;
        return s->op;
    }
    *n = s->first[i + 1] - s->first[i];
    return s->op + s->first[i];
}

size_t trd_sched_first(const trd_sched *s, int r)
{
    return s->first[r - s->rank0];
}

void trd_sched_free(trd_sched *s)
{
    free(s->first);
    free(s->op);
    free(s->nepochs);
    memset(s, 0, sizeof *s);
}

void trd_sched_drop(trd_sched *s, int r, size_t k)
{
    int i = r - s->rank0;
    if (i < 0 || i >= s->nplanned || k >= s->first[i + 1] - s->first[i])
        return;
    size_t at = s->first[i] + k;
    memmove(&s->op[at], &s->op[at + 1], (s->nops - at - 1) * sizeof *s->op);
    s->nops--;
    for (int q = i + 1; q <= s->nplanned; q++)
        s->first[q]--;
}

/* ---- Builder ------------------------------------------------------------------ */

size_t trd_sb_tmp(trd_sb *b, size_t n)
{
    size_t at = b->tmp_top;
    b->tmp_top += n;
    if (b->tmp_top > b->s->tmp_count)
        b->s->tmp_count = b->tmp_top;
    return at;
}

void trd_sb_tmp_release(trd_sb *b, size_t mark)
{
    b->tmp_top = mark;
}

int trd_sb_epoch(trd_sb *b)
{
    return ++b->epoch;
}

size_t trd_sb_seg_in(const trd_sb *b, int e)
{
    return (size_t)e * 2 * b->s->seg_slot;
}

size_t trd_sb_seg_out(const trd_sb *b, int e)
{
    return (size_t)e * 2 * b->s->seg_slot + b->s->seg_slot;
}

size_t trd_sb_inl(const trd_sb *b, int e)
{
    return (size_t)e * b->s->inl_slot;
}

void trd_sb_add(trd_sb *b, trd_sstep st)
{
    trd_sched *s = b->s;
    if (s->nops == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 64;
        trd_sstep *p = realloc(s->op, cap * sizeof *p);
        if (!p) {
            s->oom = 1;
            return;
        }
        s->op = p;
        s->cap = cap;
    }
    if (st.round + 1 > s->nrounds)
        s->nrounds = st.round + 1;
    s->op[s->nops++] = st;
}

void trd_sb_nb(trd_sb *b, int nb)
{
    size_t first = b->s->first[b->rank - b->s->rank0];
    if (b->s->nops > first)
        b->s->op[b->s->nops - 1].nb = (unsigned char)(nb != 0);
}

void trd_s_send(trd_sb *b, int round, int peer, int src, size_t soff, size_t len)
{
    trd_sb_add(b, (trd_sstep){.op = TRD_S_SEND,
                              .src = (unsigned char)src,
                              .peer = peer,
                              .peer2 = -1,
                              .soff = soff,
                              .len = len,
                              .round = round});
}

void trd_s_recv(trd_sb *b, int round, int peer, int dst, size_t off, size_t len)
{
    trd_sb_add(b, (trd_sstep){.op = TRD_S_RECV,
                              .dst = (unsigned char)dst,
                              .peer = peer,
                              .peer2 = -1,
                              .off = off,
                              .len = len,
                              .round = round});
}

void trd_s_sendrecv(trd_sb *b, int round, int to, int src, size_t soff, size_t len, int from,
                    int dst, size_t off, size_t rlen)
{
    trd_sb_add(b, (trd_sstep){.op = TRD_S_SENDRECV,
                              .src = (unsigned char)src,
                              .dst = (unsigned char)dst,
                              .peer = to,
                              .peer2 = from,
                              .soff = soff,
                              .len = len,
                              .off = off,
                              .rlen = rlen,
                              .round = round});
}

void trd_s_reduce(trd_sb *b, int round, int dst, size_t off, int src, int owner, size_t soff,
                  size_t len)
{
    if (len == 0)
        return;
    trd_sb_add(b, (trd_sstep){.op = TRD_S_REDUCE,
                              .dst = (unsigned char)dst,
                              .src = (unsigned char)src,
                              .peer = owner,
                              .peer2 = -1,
                              .off = off,
                              .soff = soff,
                              .len = len,
                              .round = round});
}

void trd_s_copy(trd_sb *b, int round, int dst, int downer, size_t off, int src, int owner,
                size_t soff, size_t len)
{
    if (len == 0 || (dst == src && downer == owner && off == soff))
        return;
    trd_sb_add(b, (trd_sstep){.op = TRD_S_COPY,
                              .dst = (unsigned char)dst,
                              .src = (unsigned char)src,
                              .peer = owner,
                              .peer2 = downer,
                              .off = off,
                              .soff = soff,
                              .len = len,
                              .round = round});
}

void trd_s_signal(trd_sb *b, int round, int ctr, int epoch)
{
    trd_sb_add(b, (trd_sstep){.op = TRD_S_SIGNAL,
                              .ctr = (unsigned char)ctr,
                              .peer = -1,
                              .peer2 = -1,
                              .epoch = epoch,
                              .round = round});
}

void trd_s_wait(trd_sb *b, int round, int peer, int nwait, int ctr, int epoch)
{
    trd_sb_add(b, (trd_sstep){.op = TRD_S_WAIT,
                              .ctr = (unsigned char)ctr,
                              .peer = peer,
                              .peer2 = -1,
                              .nwait = nwait,
                              .epoch = epoch,
                              .round = round});
}

/* ---- The step script ------------------------------------------------------------ */

static const char *const buf_names[TRD_B_MAX] = {"sendbuf", "recvbuf", "tmp", "seg", "inl"};
static const char *const ctr_names[TRD_CTR_MAX] = {"in", "red", "done"};

/* buffer b of owner (-1: own) at element off, len elements; segment
 * addresses as epoch, area and offset */
static void range(FILE *f, const trd_sched *s, int b, int owner, size_t off, size_t len)
{
    fprintf(f, "%s", buf_names[b]);
    if (owner >= 0)
        fprintf(f, "(%d)", owner);
    if (b == TRD_B_SEG && s->seg_slot) {
        size_t e = off / (2 * s->seg_slot), a = off % (2 * s->seg_slot);
        int out = a >= s->seg_slot;
        fprintf(f, "@%zu.%s[%zu:%zu]", e, out ? "out" : "in", a - (out ? s->seg_slot : 0),
                a - (out ? s->seg_slot : 0) + len);
        return;
    }
    if (b == TRD_B_INL && s->inl_slot) {
        size_t e = off / s->inl_slot, a = off % s->inl_slot;
        fprintf(f, "@%zu[%zu:%zu]", e, a, a + len);
        return;
    }
    fprintf(f, "[%zu:%zu]", off, off + len);
}

void trd_sched_print(FILE *f, const trd_sched *s, int r)
{
    int round = -1;
    size_t n;
    const trd_sstep *ops = trd_sched_ops(s, r, &n);
    fprintf(f, "# %s%s%s %s, rank %d of %d, %zu elements%s%s\n", s->alg, s->params[0] ? ":" : "",
            s->params, trd_coll_name(s->call.coll), r, s->nranks, s->call.count,
            s->call.in_place ? ", in place" : "", s->call.commutative ? ", commutative op" : "");
    for (size_t i = 0; i < n; i++) {
        const trd_sstep *o = &ops[i];
        if (o->round != round) {
            round = o->round;
            fprintf(f, "STEP %d\n", round);
        }
        fprintf(f, i > 0 && o[-1].nb ? "  & " : "  ");
        switch (o->op) {
        case TRD_S_SEND:
            fprintf(f, "SENDTO %d ", o->peer);
            range(f, s, o->src, -1, o->soff, o->len);
            break;
        case TRD_S_RECV:
            fprintf(f, "RECVFROM %d ", o->peer);
            range(f, s, o->dst, -1, o->off, o->len);
            break;
        case TRD_S_SENDRECV:
            fprintf(f, "SENDTO %d ", o->peer);
            range(f, s, o->src, -1, o->soff, o->len);
            fprintf(f, " RECVFROM %d ", o->peer2);
            range(f, s, o->dst, -1, o->off, o->rlen);
            break;
        case TRD_S_REDUCE:
            fprintf(f, "REDUCE ");
            range(f, s, o->dst, -1, o->off, o->len);
            fprintf(f, " = ");
            range(f, s, o->src, o->peer, o->soff, o->len);
            fprintf(f, " op ");
            range(f, s, o->dst, -1, o->off, o->len);
            break;
        case TRD_S_COPY:
            fprintf(f, "COPY ");
            range(f, s, o->dst, o->peer2, o->off, o->len);
            fprintf(f, " = ");
            range(f, s, o->src, o->peer, o->soff, o->len);
            break;
        case TRD_S_SIGNAL:
            fprintf(f, "SIGNAL %s @%d", ctr_names[o->ctr], o->epoch);
            break;
        case TRD_S_WAIT:
            if (o->peer == TRD_PEER_LOCALS)
                fprintf(f, "WAIT local 0..%d %s @%d", o->nwait - 1, ctr_names[o->ctr], o->epoch);
            else
                fprintf(f, "WAIT %d %s @%d", o->peer, ctr_names[o->ctr], o->epoch);
            break;
        }
        fprintf(f, "\n");
    }
}
