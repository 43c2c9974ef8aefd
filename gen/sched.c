/* Schedule IR storage, shapes and the readable step script (sched.h). */
#include "sched.h"

#include <stdlib.h>
#include <string.h>

int trd_shape_init(trd_shape_store *st, int nnodes, const int *ppn, unsigned seed)
{
    int n = 0;
    memset(st, 0, sizeof *st);
    for (int v = 0; v < nnodes; v++)
        n += ppn[v];
    st->ring = malloc((size_t)(n > 0 ? n : 1) * sizeof(int));
    st->node_first = malloc(((size_t)nnodes + 1) * sizeof(int));
    st->node_of = malloc((size_t)(n > 0 ? n : 1) * sizeof(int));
    if (!st->ring || !st->node_first || !st->node_of) {
        trd_shape_free(st);
        return -1;
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
    st->s = (trd_shape){n, nnodes, st->ring, st->node_first, st->node_of, NULL};
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

int trd_sched_init(trd_sched *s, const char *alg, int nranks, size_t count, int in_place)
{
    memset(s, 0, sizeof *s);
    s->alg = alg;
    s->nranks = nranks;
    s->count = count;
    s->tmp_count = count;
    s->in_place = in_place;
    s->first = calloc((size_t)nranks + 1, sizeof *s->first);
    s->building = -1;
    return s->first ? 0 : -1;
}

void trd_sched_free(trd_sched *s)
{
    free(s->first);
    free(s->op);
    memset(s, 0, sizeof *s);
}

void trd_sched_rank(trd_sched *s, int r)
{
    while (s->building < r)
        s->first[++s->building] = s->nops;
}

void trd_sched_add(trd_sched *s, trd_sstep st)
{
    if (s->nops == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 256;
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

int trd_sched_end(trd_sched *s)
{
    trd_sched_rank(s, s->nranks - 1);
    s->first[s->nranks] = s->nops;
    return s->oom ? -1 : 0;
}

void trd_sched_drop(trd_sched *s, size_t i)
{
    if (i >= s->nops)
        return;
    memmove(&s->op[i], &s->op[i + 1], (s->nops - i - 1) * sizeof *s->op);
    s->nops--;
    for (int q = 0; q <= s->nranks; q++)
        if (s->first[q] > i)
            s->first[q]--;
}

void trd_s_send(trd_sched *s, int round, int peer, int src, size_t soff, size_t len)
{
    trd_sched_add(s, (trd_sstep){.op = TRD_S_SEND, .src = (unsigned char)src, .peer = peer,
                                 .soff = soff, .len = len, .round = round, .peer2 = -1});
}

void trd_s_recv(trd_sched *s, int round, int peer, int dst, size_t off, size_t len)
{
    trd_sched_add(s, (trd_sstep){.op = TRD_S_RECV, .dst = (unsigned char)dst, .peer = peer,
                                 .off = off, .len = len, .round = round, .peer2 = -1});
}

void trd_s_sendrecv(trd_sched *s, int round, int to, int src, size_t soff, size_t len, int from,
                    int dst, size_t off, size_t rlen)
{
    trd_sched_add(s, (trd_sstep){.op = TRD_S_SENDRECV, .src = (unsigned char)src,
                                 .dst = (unsigned char)dst, .peer = to, .peer2 = from, .soff = soff,
                                 .len = len, .off = off, .rlen = rlen, .round = round});
}

void trd_s_reduce(trd_sched *s, int round, int dst, size_t off, int src, int owner, size_t soff,
                  size_t len, int left)
{
    trd_sched_add(s, (trd_sstep){.op = TRD_S_REDUCE, .dst = (unsigned char)dst,
                                 .src = (unsigned char)src, .peer = owner, .peer2 = -1, .off = off,
                                 .soff = soff, .len = len, .left = (unsigned char)left,
                                 .round = round});
}

void trd_s_copy(trd_sched *s, int round, int dst, size_t off, int src, int owner, size_t soff,
                size_t len)
{
    trd_sched_add(s, (trd_sstep){.op = TRD_S_COPY, .dst = (unsigned char)dst,
                                 .src = (unsigned char)src, .peer = owner, .peer2 = -1, .off = off,
                                 .soff = soff, .len = len, .round = round});
}

void trd_s_barrier(trd_sched *s, int round)
{
    trd_sched_add(s, (trd_sstep){.op = TRD_S_BARRIER, .peer = -1, .peer2 = -1, .round = round});
}

void trd_s_nb(trd_sched *s)
{
    if (s->nops)
        s->op[s->nops - 1].nb = 1;
}

static const char *const buf_names[TRD_B_MAX] = {"sendbuf", "recvbuf", "tmp", "shm"};

static void range(FILE *f, int b, int owner, size_t off, size_t len)
{
    if (b == TRD_B_SHM && owner >= 0)
        fprintf(f, "shm(%d)", owner);
    else
        fprintf(f, "%s", buf_names[b]);
    fprintf(f, "[%zu:%zu]", off, off + len);
}

void trd_sched_print(FILE *f, const trd_sched *s, int r)
{
    int round = -1;
    fprintf(f, "# %s%s%s allreduce, rank %d of %d, %zu elements%s%s\n", s->alg,
            s->params[0] ? ":" : "", s->params, r, s->nranks, s->count,
            s->in_place ? ", in place" : "", s->commutative ? ", commutative op" : "");
    for (size_t i = s->first[r]; i < s->first[r + 1]; i++) {
        const trd_sstep *o = &s->op[i];
        if (o->round != round) {
            round = o->round;
            fprintf(f, "STEP %d\n", round);
        }
        fprintf(f, i > s->first[r] && o[-1].nb ? "  & " : "  ");
        switch (o->op) {
        case TRD_S_SEND:
            fprintf(f, "SENDTO %d ", o->peer);
            range(f, o->src, -1, o->soff, o->len);
            break;
        case TRD_S_RECV:
            fprintf(f, "RECVFROM %d ", o->peer);
            range(f, o->dst, -1, o->off, o->len);
            break;
        case TRD_S_SENDRECV:
            fprintf(f, "SENDTO %d ", o->peer);
            range(f, o->src, -1, o->soff, o->len);
            fprintf(f, " RECVFROM %d ", o->peer2);
            range(f, o->dst, -1, o->off, o->rlen);
            break;
        case TRD_S_REDUCE:
            fprintf(f, "REDUCE ");
            range(f, o->dst, -1, o->off, o->len);
            fprintf(f, " = ");
            if (o->left) {
                range(f, o->src, o->peer, o->soff, o->len);
                fprintf(f, " op ");
                range(f, o->dst, -1, o->off, o->len);
            } else {
                range(f, o->dst, -1, o->off, o->len);
                fprintf(f, " op ");
                range(f, o->src, o->peer, o->soff, o->len);
            }
            break;
        case TRD_S_COPY:
            fprintf(f, "COPY ");
            range(f, o->dst, -1, o->off, o->len);
            fprintf(f, " = ");
            range(f, o->src, o->peer, o->soff, o->len);
            break;
        case TRD_S_BARRIER:
            fprintf(f, "BARRIER node");
            break;
        }
        fprintf(f, "\n");
    }
}
