/* Schedule verifier: symbolic execution of a schedule for all ranks
 * (sched.h).
 *
 * Every element of every buffer carries the sequence of ranks whose
 * contributions it holds, in operand order, as a list of rank intervals.
 * Sequences are interned (equal sequences share an id) and the result of
 * combining two ids is memoised, so ring schedules over a thousand ranks
 * check in well under a second.  A reduction concatenates the left
 * operand's sequence and the right one's; a rank appearing twice is an
 * error at once.  At the end every rank's receive buffer must hold the
 * sequence 0..p-1 (any order of the ranks for commutative schedules).
 *
 * Ranks run until they block: a send matches the receiver's oldest posted
 * receive from the sender (synchronous semantics: both must have reached
 * the op, so a schedule that relies on buffering is reported as a
 * deadlock), a barrier waits for the whole node.  When no rank can move and
 * some have ops left, the schedule deadlocks.
 */
#include "sched.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct ivl {
    int lo, hi;
} ivl;

/* ---- Interned contribution sequences ------------------------------------- */

#define SEQ_UNDEF 0u /* never written */

typedef struct seqtab {
    size_t n;          /* sequences; id 0 is SEQ_UNDEF */
    size_t start_cap, len_cap, total_cap;
    size_t *start;     /* [cap] first interval in pool */
    int *len;          /* [cap] intervals */
    int *total;        /* [cap] ranks */
    ivl *pool;
    size_t pool_n, pool_cap;
    uint32_t *slot;    /* intern table: ids, 0 empty */
    size_t slot_cap;
    uint64_t *mkey;    /* memo (a << 32 | b) + 1, 0 empty */
    uint32_t *mval;
    size_t mcap, mn;
    int sets; /* commutative: keep sequences as sorted, merged sets */
    int oom;
} seqtab;

static uint64_t mix(uint64_t h)
{
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ull;
    return h ^ (h >> 33);
}

static uint64_t hash_ivls(const ivl *v, int n)
{
    uint64_t h = 0x9e3779b97f4a7c15ull;
    for (int i = 0; i < n; i++)
        h = mix(h ^ ((uint64_t)(uint32_t)v[i].lo << 32 | (uint32_t)v[i].hi));
    return h;
}

static int grow(void **p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return 0;
    size_t c = *cap ? *cap : 64;
    while (c < need)
        c *= 2;
    void *q = realloc(*p, c * elem);
    if (!q)
        return -1;
    *p = q;
    *cap = c;
    return 0;
}

static int rehash(seqtab *t, size_t cap)
{
    uint32_t *s = calloc(cap, sizeof *s);
    if (!s)
        return -1;
    for (size_t id = 1; id < t->n; id++) {
        size_t i = hash_ivls(t->pool + t->start[id], t->len[id]) & (cap - 1);
        while (s[i])
            i = (i + 1) & (cap - 1);
        s[i] = (uint32_t)id;
    }
    free(t->slot);
    t->slot = s;
    t->slot_cap = cap;
    return 0;
}

/* The id of the sequence v[0..n), interned. */
static uint32_t intern(seqtab *t, const ivl *v, int n, int total)
{
    if (t->oom)
        return SEQ_UNDEF;
    if ((t->n + 1) * 2 > t->slot_cap && rehash(t, t->slot_cap ? 2 * t->slot_cap : 1024)) {
        t->oom = 1;
        return SEQ_UNDEF;
    }
    uint64_t h = hash_ivls(v, n);
    size_t i = h & (t->slot_cap - 1);
    for (; t->slot[i]; i = (i + 1) & (t->slot_cap - 1)) {
        uint32_t id = t->slot[i];
        if (t->len[id] == n && !memcmp(t->pool + t->start[id], v, (size_t)n * sizeof *v))
            return id;
    }
    if (grow((void **)&t->pool, &t->pool_cap, t->pool_n + (size_t)n, sizeof *t->pool) ||
        grow((void **)&t->start, &t->start_cap, t->n + 1, sizeof *t->start) ||
        grow((void **)&t->len, &t->len_cap, t->n + 1, sizeof *t->len) ||
        grow((void **)&t->total, &t->total_cap, t->n + 1, sizeof *t->total)) {
        t->oom = 1;
        return SEQ_UNDEF;
    }
    uint32_t id = (uint32_t)t->n++;
    t->start[id] = t->pool_n;
    t->len[id] = n;
    t->total[id] = total;
    memcpy(t->pool + t->pool_n, v, (size_t)n * sizeof *v);
    t->pool_n += (size_t)n;
    t->slot[i] = id;
    return id;
}

static int seqtab_init(seqtab *t)
{
    memset(t, 0, sizeof *t);
    t->n = 1; /* SEQ_UNDEF */
    if (grow((void **)&t->start, &t->start_cap, 1024, sizeof *t->start) ||
        grow((void **)&t->len, &t->len_cap, 1024, sizeof *t->len) ||
        grow((void **)&t->total, &t->total_cap, 1024, sizeof *t->total))
        return -1;
    t->start[0] = 0;
    t->len[0] = 0;
    t->total[0] = 0;
    return 0;
}

static void seqtab_free(seqtab *t)
{
    free(t->start);
    free(t->len);
    free(t->total);
    free(t->pool);
    free(t->slot);
    free(t->mkey);
    free(t->mval);
}

static int cmp_ivl(const void *x, const void *y)
{
    const ivl *a = x, *b = y;
    return (a->lo > b->lo) - (a->lo < b->lo);
}

/* a op b: the concatenation (the union, for sets); *dup gets a rank both
 * hold (or -1), and then the result is SEQ_UNDEF. */
static uint32_t combine(seqtab *t, uint32_t a, uint32_t b, int *dup)
{
    *dup = -1;
    uint64_t key = ((uint64_t)a << 32 | b) + 1;
    if ((t->mn + 1) * 2 > t->mcap) {
        size_t cap = t->mcap ? 2 * t->mcap : 4096;
        uint64_t *k = calloc(cap, sizeof *k);
        uint32_t *v = malloc(cap * sizeof *v);
        if (!k || !v) {
            free(k);
            free(v);
            t->oom = 1;
            return SEQ_UNDEF;
        }
        for (size_t i = 0; i < t->mcap; i++)
            if (t->mkey[i]) {
                size_t j = mix(t->mkey[i]) & (cap - 1);
                while (k[j])
                    j = (j + 1) & (cap - 1);
                k[j] = t->mkey[i];
                v[j] = t->mval[i];
            }
        free(t->mkey);
        free(t->mval);
        t->mkey = k;
        t->mval = v;
        t->mcap = cap;
    }
    size_t j = mix(key) & (t->mcap - 1);
    for (; t->mkey[j]; j = (j + 1) & (t->mcap - 1))
        if (t->mkey[j] == key)
            return t->mval[j];
    const ivl *va = t->pool + t->start[a], *vb = t->pool + t->start[b];
    int na = t->len[a], nb = t->len[b];
    ivl stackbuf[64], *v = na + nb <= 64 ? stackbuf : malloc((size_t)(na + nb) * sizeof *v);
    if (!v) {
        t->oom = 1;
        return SEQ_UNDEF;
    }
    int n = 0;
    if (t->sets) {
        /* both sorted: merge, a rank in both is a duplicate */
        int x = 0, y = 0;
        while (x < na || y < nb) {
            ivl next = y >= nb || (x < na && va[x].lo < vb[y].lo) ? va[x++] : vb[y++];
            if (n > 0 && next.lo <= v[n - 1].hi) {
                *dup = next.lo;
                break;
            }
            if (n > 0 && v[n - 1].hi + 1 == next.lo)
                v[n - 1].hi = next.hi;
            else
                v[n++] = next;
        }
    } else {
        /* operand order: a's ranks then b's; duplicates by sorted copies */
        memcpy(v, va, (size_t)na * sizeof *v);
        memcpy(v + na, vb, (size_t)nb * sizeof *v);
        qsort(v, (size_t)(na + nb), sizeof *v, cmp_ivl);
        for (int i = 1; i < na + nb; i++)
            if (v[i].lo <= v[i - 1].hi) {
                *dup = v[i].lo;
                break;
            }
        memcpy(v, va, (size_t)na * sizeof *v);
        n = na;
        for (int y = 0; y < nb; y++) {
            if (n > 0 && v[n - 1].hi + 1 == vb[y].lo)
                v[n - 1].hi = vb[y].hi;
            else
                v[n++] = vb[y];
        }
    }
    if (*dup >= 0) {
        if (v != stackbuf)
            free(v);
        return SEQ_UNDEF;
    }
    uint32_t c = intern(t, v, n, t->total[a] + t->total[b]);
    if (v != stackbuf)
        free(v);
    /* intern may have moved the pool: va/vb are not used again */
    t->mkey[j] = key;
    t->mval[j] = c;
    t->mn++;
    return c;
}

/* ---- Execution ----------------------------------------------------------- */

typedef struct vm {
    const trd_sched *s;
    const trd_shape *sh;
    seqtab t;
    size_t size[TRD_B_MAX];  /* elements per rank of each buffer */
    uint32_t *buf[TRD_B_MAX]; /* [nranks * size] */
    int *wepoch;             /* [nranks * size[SHM]] owner's barrier count at its last write, -1 */
    int *repoch;             /* [nranks * size[SHM]] latest barrier count of another rank's read */
    size_t *pc;              /* [nranks] next op */
    unsigned char *done;     /* [nops] bit 0: send half done, bit 1: recv half done */
    int *barriers;           /* [nranks] barriers passed */
    int *at_barrier;         /* [nnodes] ranks of the node waiting at a barrier */
    /* inter-node messages for the contention check */
    struct msg {
        int round, from, to;
    } *msgs;
    size_t nmsgs, msgcap;
    char *why;
    size_t whylen;
    /* timing mode (trd_sched_cost): no element state, clocks instead */
    const trd_cost_model *cm;
    size_t ext;
    double *clock;           /* [nranks] seconds */
    double *post;            /* [nranks] when the current window was posted */
    double *fin;             /* [nops] when the op's messages completed */
    double *alpha_r;         /* [nops] alpha_r of the op's link (the largest of its messages') */
    double *barrier_at;      /* [nnodes] latest arrival at the pending barrier */
    const double *share;     /* [nmsgs of the first pass] bandwidth divisor per message */
    int *pkg;                /* [nranks] package of each rank on its node (package_of) */
    int *queue;              /* timed runs: [nranks] ranks to visit, a ring buffer */
    unsigned char *queued;   /* [nranks] r is in queue */
    size_t qhead, qtail;
    int record_all;          /* record every matched message, not only inter-node ones */
    size_t nmatched;
} vm;

static int fail(vm *m, const char *fmt, ...)
{
    va_list ap;
    if (m->why && m->whylen) {
        va_start(ap, fmt);
        vsnprintf(m->why, m->whylen, fmt, ap);
        va_end(ap);
    }
    return -1;
}

static const char *const bname[TRD_B_MAX] = {"sendbuf", "recvbuf", "tmp", "shm"};

static uint32_t *cell(vm *m, int b, int r, size_t e)
{
    return m->buf[b] + (size_t)r * m->size[b] + e;
}

#define WHERE "rank %d, op %zu (round %d): "
#define AT(r, i) (r), (i) - m->s->first[(r)], m->s->op[(i)].round

/* Check that rank r's op i may read buffer b of owner o over [off, off+len). */
static int check_read(vm *m, int r, size_t i, int b, int o, size_t off, size_t len)
{
    if (off > m->size[b] || len > m->size[b] - off)
        return fail(m, WHERE "reads %s[%zu:%zu] beyond its %zu elements", AT(r, i), bname[b], off,
                    off + len, m->size[b]);
    if (b == TRD_B_SEND && m->s->in_place)
        return fail(m, WHERE "reads sendbuf in place (MPI_IN_PLACE: there is none)", AT(r, i));
    for (size_t e = off; e < off + len; e++) {
        if (b == TRD_B_SHM && o != r &&
            (*cell(m, b, o, e) == SEQ_UNDEF || m->wepoch[(size_t)o * m->size[b] + e] >= m->barriers[r]))
            return fail(m,
                        WHERE "reads shm[%zu] of rank %d, which rank %d has not written before a "
                              "barrier both passed",
                        AT(r, i), e, o, o);
        if (*cell(m, b, o, e) == SEQ_UNDEF)
            return fail(m, WHERE "reads %s[%zu] of rank %d before it is written", AT(r, i),
                        bname[b], e, o);
        if (b == TRD_B_SHM && o != r) {
            size_t k = (size_t)o * m->size[b] + e;
            int now = m->barriers[r];
            if (m->repoch[k] < now)
                m->repoch[k] = now;
        }
    }
    return 0;
}

static int check_write(vm *m, int r, size_t i, int b, size_t off, size_t len)
{
    if (off > m->size[b] || len > m->size[b] - off)
        return fail(m, WHERE "writes %s[%zu:%zu] beyond its %zu elements", AT(r, i), bname[b], off,
                    off + len, m->size[b]);
    if (b == TRD_B_SEND)
        return fail(m, WHERE "writes the send buffer", AT(r, i));
    if (b == TRD_B_SHM)
        for (size_t e = off; e < off + len; e++) {
            size_t k = (size_t)r * m->size[b] + e;
            int now = m->barriers[r];
            if (m->repoch[k] >= now)
                return fail(m,
                            WHERE "overwrites shm[%zu] while another rank of the node may still "
                                  "read it (no barrier between)",
                            AT(r, i), e);
            m->wepoch[k] = now;
        }
    return 0;
}

/* ---- Timing (trd_sched_cost) ------------------------------------------------- */

/* Package of rank r on its node: local ranks spread over the packages in
 * order, socket-major, as the runtime assumes [TREE Lemma 5]. */
static int package_of(const vm *m, int r)
{
    if (m->pkg)
        return m->pkg[r];
    const trd_shape *sh = m->sh;
    int v = sh->node_of[r], first = sh->node_first[v], ppn = sh->node_first[v + 1] - first;
    int np = trd_topo_nodetype_npackages(m->cm->topo, trd_topo_node_type(m->cm->topo, sh->machine_node[v]));
    int l = 0;
    while (sh->ring[first + l] != r)
        l++;
    return np > 1 ? (int)((long)l * np / ppn) : 0;
}

/* The link between ranks a and b: a package link, the node link between
 * packages, or the switch-tree path between nodes. */
static trd_link_cost pair_cost(const vm *m, int a, int b)
{
    trd_topo_t t = m->cm->topo;
    int va = m->sh->node_of[a], vb = m->sh->node_of[b];
    int na = m->sh->machine_node[va], nb = m->sh->machine_node[vb];
    if (va != vb)
        return trd_topo_path_cost(t, na, nb);
    int ty = trd_topo_node_type(t, na);
    if (a == b || package_of(m, a) == package_of(m, b))
        return trd_topo_nodetype_package_link(t, ty);
    return trd_topo_nodetype_node_link(t, ty);
}

static double move_s(trd_link_cost l, double bytes)
{
    return l.bandwidth_Bps > 0 ? bytes / l.bandwidth_Bps : 0;
}

/* A copy or reduce: beta of the link to the segment's owner (the rank's own
 * package link for its own buffers) for the bytes read, gamma per byte
 * reduced [MPICH §3]. */
static void time_local(vm *m, int r, const trd_sstep *o)
{
    int owner = o->src == TRD_B_SHM && o->peer >= 0 ? o->peer : r;
    double bytes = (double)o->len * (double)m->ext;
    m->clock[r] += move_s(pair_cost(m, r, owner), bytes);
    if (o->op == TRD_S_REDUCE)
        m->clock[r] += bytes * m->cm->gamma_s_per_byte;
}

/* A message from a (op i) to b (op k): it starts when both have posted it
 * and takes alpha + bytes beta, beta divided among the messages of its round
 * that share a link or leave the same node (share) [TREE §2, NAP Eq. 3]. */
static void time_message(vm *m, int a, size_t i, int b, size_t k, size_t len)
{
    trd_link_cost l = pair_cost(m, a, b);
    double share = m->share ? m->share[m->nmatched] : 1;
    double start = m->post[a] > m->post[b] ? m->post[a] : m->post[b];
    double end = start + l.latency_s + share * move_s(l, (double)len * (double)m->ext);
    if (end > m->fin[i])
        m->fin[i] = end;
    if (end > m->fin[k])
        m->fin[k] = end;
    /* alpha_r of the link: measured, or the ratio of its latency [RM Eq. 3] */
    double ar = l.alpha_r_s > 0 ? l.alpha_r_s : l.latency_s * m->cm->alpha_r_ratio;
    m->alpha_r[i] = ar > m->alpha_r[i] ? ar : m->alpha_r[i];
    m->alpha_r[k] = ar > m->alpha_r[k] ? ar : m->alpha_r[k];
}

/* Copy or reduce: the local ops. */
static int local_op(vm *m, int r, size_t i)
{
    const trd_sstep *o = &m->s->op[i];
    int owner = o->src == TRD_B_SHM && o->peer >= 0 ? o->peer : r;
    if (m->cm) {
        time_local(m, r, o);
        return 0;
    }
    if (owner != r && (owner >= m->s->nranks || m->sh->node_of[owner] != m->sh->node_of[r]))
        return fail(m, WHERE "reads the segment of rank %d, not on its node", AT(r, i), owner);
    if (check_read(m, r, i, o->src, owner, o->soff, o->len))
        return -1;
    if (o->op == TRD_S_REDUCE && check_read(m, r, i, o->dst, r, o->off, o->len))
        return -1;
    /* read all first: source and destination ranges may be the same buffer */
    uint32_t stackbuf[256], *v = o->len <= 256 ? stackbuf : malloc(o->len * sizeof *v);
    if (!v)
        return fail(m, "out of memory");
    for (size_t e = 0; e < o->len; e++) {
        uint32_t x = *cell(m, o->src, owner, o->soff + e);
        if (o->op == TRD_S_REDUCE) {
            uint32_t y = *cell(m, o->dst, r, o->off + e), z;
            int dup;
            z = o->left ? combine(&m->t, x, y, &dup) : combine(&m->t, y, x, &dup);
            if (dup >= 0) {
                if (v != stackbuf)
                    free(v);
                return fail(m, WHERE "element %zu of %s would hold rank %d's contribution twice",
                            AT(r, i), o->off + e, bname[o->dst], dup);
            }
            x = z;
        }
        v[e] = x;
    }
    int rc = check_write(m, r, i, o->dst, o->off, o->len);
    for (size_t e = 0; rc == 0 && e < o->len; e++)
        *cell(m, o->dst, r, o->off + e) = v[e];
    if (v != stackbuf)
        free(v);
    return rc;
}

/* The window of rank r: ops pc .. end-1 posted together. */
static size_t window_end(const vm *m, int r)
{
    size_t i = m->pc[r], end = m->s->first[r + 1];
    while (i < end && m->s->op[i].nb)
        i++;
    return i < end ? i + 1 : end;
}

static int is_comm(const trd_sstep *o)
{
    return o->op == TRD_S_SEND || o->op == TRD_S_RECV || o->op == TRD_S_SENDRECV;
}

static int sends_to(const trd_sstep *o, int b)
{
    return (o->op == TRD_S_SEND || o->op == TRD_S_SENDRECV) && o->peer == b;
}

static int recvs_from(const trd_sstep *o, int a)
{
    return (o->op == TRD_S_RECV && o->peer == a) || (o->op == TRD_S_SENDRECV && o->peer2 == a);
}

/* Timed runs visit only ranks whose state may have changed: queue r. */
static void wake(vm *m, int r)
{
    if (m->queued && !m->queued[r]) {
        m->queued[r] = 1;
        m->queue[m->qtail++ % (size_t)m->s->nranks] = r;
    }
}

/* Try to complete the send halves of rank a's window; returns progress. */
static int try_sends(vm *m, int a, int *err)
{
    const trd_sched *s = m->s;
    size_t end = window_end(m, a);
    int progress = 0;
    for (size_t i = m->pc[a]; i < end && !*err; i++) {
        const trd_sstep *o = &s->op[i];
        if (!sends_to(o, o->peer) || (m->done[i] & 1))
            continue;
        int b = o->peer;
        if (b < 0 || b >= s->nranks || b == a) {
            *err = fail(m, WHERE "sends to rank %d", AT(a, i), b);
            break;
        }
        /* FIFO between a and b: an earlier undone send to b goes first */
        int earlier = 0;
        for (size_t k = m->pc[a]; k < i; k++)
            if (sends_to(&s->op[k], b) && !(m->done[k] & 1))
                earlier = 1;
        if (earlier)
            continue;
        /* timed: a message starts when both ends have posted it, so b's
         * window must be posted (its time is post[b]) */
        if (m->cm && (m->pc[b] >= s->first[b + 1] || !(m->done[m->pc[b]] & 8)))
            continue;
        size_t bend = m->pc[b] < s->first[b + 1] ? window_end(m, b) : m->pc[b];
        for (size_t k = m->pc[b]; k < bend; k++) {
            const trd_sstep *q = &s->op[k];
            if (!is_comm(q) || !recvs_from(q, a) || (m->done[k] & 2))
                continue;
            size_t rlen = q->op == TRD_S_SENDRECV ? q->rlen : q->len;
            int rdst = q->dst;
            if (rlen != o->len) {
                *err = fail(m, WHERE "receives %zu elements from rank %d, which sends %zu (its op %zu)",
                            AT(b, k), rlen, a, o->len, i - s->first[a]);
                break;
            }
            if (o->round != q->round) {
                *err = fail(m, WHERE "receives from rank %d the message of its round %d",
                            AT(b, k), a, o->round);
                break;
            }
            if (m->cm) {
                time_message(m, a, i, b, k, rlen);
            } else if (check_read(m, a, i, o->src, a, o->soff, o->len) ||
                       check_write(m, b, k, rdst, q->off, rlen)) {
                *err = -1;
                break;
            } else {
                for (size_t e = 0; e < rlen; e++)
                    *cell(m, rdst, b, q->off + e) = *cell(m, o->src, a, o->soff + e);
            }
            m->nmatched++;
            m->done[i] |= 1;
            m->done[k] |= 2;
            wake(m, b);
            progress = 1;
            if (m->record_all || m->sh->node_of[a] != m->sh->node_of[b]) {
                if (grow((void **)&m->msgs, &m->msgcap, m->nmsgs + 1, sizeof *m->msgs)) {
                    *err = fail(m, "out of memory");
                    break;
                }
                m->msgs[m->nmsgs++] = (struct msg){o->round, m->sh->node_of[a], m->sh->node_of[b]};
            }
            break;
        }
    }
    return progress;
}

static int op_done(const vm *m, size_t i)
{
    const trd_sstep *o = &m->s->op[i];
    switch (o->op) {
    case TRD_S_SEND:
        return m->done[i] & 1;
    case TRD_S_RECV:
        return (m->done[i] & 2) != 0;
    case TRD_S_SENDRECV:
        return (m->done[i] & 3) == 3;
    default:
        return 0;
    }
}

/* Overlap of a window's send sources and receive destinations. */
static int check_window(vm *m, int r, size_t end)
{
    const trd_sstep *op = m->s->op;
    for (size_t i = m->pc[r]; i < end; i++)
        for (size_t k = m->pc[r]; k < end; k++) {
            const trd_sstep *a = &op[i], *b = &op[k];
            if (!(a->op == TRD_S_SEND || a->op == TRD_S_SENDRECV) ||
                !(b->op == TRD_S_RECV || b->op == TRD_S_SENDRECV))
                continue;
            size_t rl = b->op == TRD_S_SENDRECV ? b->rlen : b->len;
            if (a->src == b->dst && a->len && rl && a->soff < b->off + rl && b->off < a->soff + a->len)
                return fail(m, WHERE "sends %s[%zu:%zu] while receiving into %s[%zu:%zu] in the same step",
                            AT(r, i), bname[a->src], a->soff, a->soff + a->len, bname[b->dst], b->off,
                            b->off + rl);
        }
    return 0;
}

/* Run rank r as far as it goes; returns progress, sets *err. */
static int run_rank(vm *m, int r, int *err)
{
    const trd_sched *s = m->s;
    int progress = 0;
    while (!*err && m->pc[r] < s->first[r + 1]) {
        size_t i = m->pc[r];
        const trd_sstep *o = &s->op[i];
        if (o->op == TRD_S_REDUCE || o->op == TRD_S_COPY) {
            if (o->nb) {
                *err = fail(m, WHERE "a local op cannot be posted with the next", AT(r, i));
                break;
            }
            if (local_op(m, r, i)) {
                *err = -1;
                break;
            }
            m->pc[r]++;
            progress = 1;
            continue;
        }
        if (o->op == TRD_S_BARRIER) {
            int v = m->sh->node_of[r];
            if (!(m->done[i] & 4)) {
                m->done[i] |= 4;
                m->at_barrier[v]++;
                if (m->cm && m->clock[r] > m->barrier_at[v])
                    m->barrier_at[v] = m->clock[r];
                progress = 1;
            }
            int members = m->sh->node_first[v + 1] - m->sh->node_first[v];
            if (m->at_barrier[v] < members)
                break;
            /* the last to arrive releases the node: a counter round [FLEX §3.1] */
            for (int k = m->sh->node_first[v]; k < m->sh->node_first[v + 1]; k++) {
                int q = m->sh->ring[k];
                m->pc[q]++;
                m->barriers[q]++;
                wake(m, q);
                if (m->cm)
                    m->clock[q] = m->barrier_at[v] + pair_cost(m, q, q).latency_s;
            }
            if (m->cm)
                m->barrier_at[v] = 0;
            m->at_barrier[v] = 0;
            progress = 1;
            continue;
        }
        size_t end = window_end(m, r);
        for (size_t k = i; k < end; k++)
            if (!is_comm(&s->op[k])) {
                *err = fail(m, WHERE "a local op cannot be posted with a send or receive", AT(r, k));
                return progress;
            }
        if (!(m->done[i] & 8)) {
            if (!m->cm && check_window(m, r, end)) {
                *err = -1;
                break;
            }
            m->done[i] |= 8;
            if (m->cm) {
                m->post[r] = m->clock[r];
                /* the ranks sending to this window may match it now */
                for (size_t k = i; k < end; k++) {
                    const trd_sstep *q = &s->op[k];
                    if (q->op == TRD_S_RECV)
                        wake(m, q->peer);
                    else if (q->op == TRD_S_SENDRECV)
                        wake(m, q->peer2);
                }
            }
        }
        progress |= try_sends(m, r, err);
        int all = 1;
        for (size_t k = i; k < end; k++)
            all &= op_done(m, k) != 0;
        if (!all)
            break;
        if (m->cm) {
            /* several messages in flight: alpha_r per extra one [RM Eq. 3] */
            double done = m->clock[r], ar = 0;
            int nmsg = 0;
            for (size_t k = i; k < end; k++) {
                done = m->fin[k] > done ? m->fin[k] : done;
                ar = m->alpha_r[k] > ar ? m->alpha_r[k] : ar;
                nmsg += s->op[k].op == TRD_S_SENDRECV ? 2 : 1;
            }
            m->clock[r] = done + (nmsg - 1) * ar;
        }
        m->pc[r] = end;
        progress = 1;
    }
    return progress;
}

static const char *describe(const trd_sstep *o, char *buf, size_t n)
{
    switch (o->op) {
    case TRD_S_SEND:
        snprintf(buf, n, "send to %d", o->peer);
        break;
    case TRD_S_RECV:
        snprintf(buf, n, "receive from %d", o->peer);
        break;
    case TRD_S_SENDRECV:
        snprintf(buf, n, "send to %d and receive from %d", o->peer, o->peer2);
        break;
    case TRD_S_BARRIER:
        snprintf(buf, n, "barrier");
        break;
    default:
        snprintf(buf, n, "local op");
    }
    return buf;
}

static const struct msg *sort_msgs;

static int cmp_round(const void *x, const void *y)
{
    const struct msg *a = &sort_msgs[*(const size_t *)x], *b = &sort_msgs[*(const size_t *)y];
    if (a->round != b->round)
        return (a->round > b->round) - (a->round < b->round);
    return (*(const size_t *)x > *(const size_t *)y) - (*(const size_t *)x < *(const size_t *)y);
}

/* Indices of m's messages in round order, match order within a round
 * (rounds are numbered per phase, so they are sparse), or NULL. */
static size_t *round_order(const vm *m)
{
    size_t *order = malloc((m->nmsgs + 1) * sizeof *order);
    if (!order)
        return NULL;
    for (size_t k = 0; k < m->nmsgs; k++)
        order[k] = k;
    sort_msgs = m->msgs;
    qsort(order, m->nmsgs, sizeof *order, cmp_round);
    return order;
}

/* The end of the round that starts at order[g0]. */
static size_t round_end(const vm *m, const size_t *order, size_t g0)
{
    size_t g1 = g0;
    while (g1 < m->nmsgs && m->msgs[order[g1]].round == m->msgs[order[g0]].round)
        g1++;
    return g1;
}

static int check_contention(vm *m, const trd_verify_opts *opts)
{
    trd_topo_t t = opts->topo;
    const trd_shape *sh = m->sh;
    if (!sh->machine_node)
        return 0;
    int S = trd_topo_nswitches(t), N = trd_topo_nnodes(t);
    size_t nlinks = 2 * ((size_t)S + (size_t)N), n = m->nmsgs;
    int *use = calloc(nlinks, sizeof *use), links[256];
    struct msg *owner = malloc(nlinks * sizeof *owner);
    size_t *order = round_order(m);
    if (!use || !owner || !order) {
        free(use);
        free(owner);
        free(order);
        return fail(m, "out of memory");
    }
    int rc = 0;
    for (size_t g0 = 0, g1; g0 < n && !rc; g0 = g1) {
        g1 = round_end(m, order, g0);
        for (size_t x = g0; x < g1 && !rc; x++) {
            const struct msg *g = &m->msgs[order[x]];
            int a = sh->machine_node[g->from], b = sh->machine_node[g->to];
            int nl = trd_topo_path_links(t, a, b, links, 256);
            for (int l = 0; l < nl && l < 256 && !rc; l++) {
                if (use[links[l]]++) {
                    int v = links[l] / 2, down = links[l] % 2;
                    const char *vn = v < S ? trd_topo_switch_name(t, v) : trd_topo_node_name(t, v - S);
                    const struct msg *h = &owner[links[l]];
                    rc = fail(m,
                              "round %d: the messages %s -> %s and %s -> %s share the link %s '%s' "
                              "[TREE §2]",
                              g->round, trd_topo_node_name(t, sh->machine_node[h->from]),
                              trd_topo_node_name(t, sh->machine_node[h->to]), trd_topo_node_name(t, a),
                              trd_topo_node_name(t, b), down ? "down to" : "up from", vn);
                }
                owner[links[l]] = *g;
            }
        }
        for (size_t x = g0; x < g1; x++) {
            const struct msg *g = &m->msgs[order[x]];
            int nl = trd_topo_path_links(t, sh->machine_node[g->from], sh->machine_node[g->to], links, 256);
            for (int l = 0; l < nl && l < 256; l++)
                use[links[l]] = 0;
        }
    }
    free(use);
    free(owner);
    free(order);
    return rc;
}

/* The control arrays of a run (element buffers are the verifier's own). */
static int vm_alloc(vm *m)
{
    int p = m->s->nranks;
    m->pc = malloc(((size_t)p + 1) * sizeof *m->pc);
    m->done = calloc(m->s->nops + 1, 1);
    m->barriers = calloc((size_t)p + 1, sizeof *m->barriers);
    m->at_barrier = calloc((size_t)m->sh->nnodes + 1, sizeof *m->at_barrier);
    if (!m->pc || !m->done || !m->barriers || !m->at_barrier)
        return fail(m, "out of memory");
    for (int r = 0; r < p; r++)
        m->pc[r] = m->s->first[r];
    return 0;
}

static void vm_free(vm *m)
{
    for (int b = 0; b < TRD_B_MAX; b++)
        free(m->buf[b]);
    free(m->wepoch);
    free(m->repoch);
    free(m->pc);
    free(m->done);
    free(m->barriers);
    free(m->at_barrier);
    free(m->msgs);
    free(m->clock);
    free(m->post);
    free(m->fin);
    free(m->alpha_r);
    free(m->barrier_at);
    free(m->pkg);
    free(m->queue);
    free(m->queued);
    seqtab_free(&m->t);
}

/* Run every rank until nobody moves; a rank left with ops is a deadlock. */
static int run_all(vm *m)
{
    const trd_sched *s = m->s;
    int rc = 0, p = s->nranks;
    if (m->queue) {
        /* timed: every rank once, then those woken by a match, a posted
         * window or a barrier, until none is left */
        for (int r = 0; r < p; r++)
            wake(m, r);
        while (!rc && m->qhead != m->qtail) {
            int r = m->queue[m->qhead++ % (size_t)p];
            m->queued[r] = 0;
            run_rank(m, r, &rc);
        }
    }
    for (int progress = !m->queue; !rc && progress;) {
        progress = 0;
        for (int r = 0; r < p && !rc; r++)
            progress |= run_rank(m, r, &rc);
        if (m->t.oom && !rc)
            rc = fail(m, "out of memory");
    }
    for (int r = 0; r < p && !rc; r++)
        if (m->pc[r] < s->first[r + 1]) {
            char d[96];
            size_t i = m->pc[r];
            rc = fail(m, WHERE "deadlock: waits to %s, which no rank matches", r,
                      i - s->first[r], s->op[i].round, describe(&s->op[i], d, sizeof d));
        }
    return rc;
}

int trd_sched_verify(const trd_sched *s, const trd_shape *sh, const trd_verify_opts *opts,
                     char *why, size_t whylen)
{
    vm m;
    int p = s->nranks, rc = 0;
    memset(&m, 0, sizeof m);
    m.s = s;
    m.sh = sh;
    m.why = why;
    m.whylen = whylen;
    if (p != sh->nranks)
        return fail(&m, "the schedule has %d ranks, the communicator %d", p, sh->nranks);
    if (seqtab_init(&m.t)) {
        vm_free(&m);
        return fail(&m, "out of memory");
    }
    m.t.sets = s->commutative;
    m.size[TRD_B_SEND] = m.size[TRD_B_RECV] = s->count;
    m.size[TRD_B_TMP] = s->tmp_count;
    m.size[TRD_B_SHM] = 2 * s->count;
    size_t nshm = (size_t)p * m.size[TRD_B_SHM];
    for (int b = 0; b < TRD_B_MAX && !rc; b++)
        if (!(m.buf[b] = calloc((size_t)p * m.size[b] + 1, sizeof *m.buf[b])))
            rc = fail(&m, "out of memory");
    m.wepoch = malloc((nshm + 1) * sizeof *m.wepoch);
    m.repoch = malloc((nshm + 1) * sizeof *m.repoch);
    if (!rc && (!m.wepoch || !m.repoch))
        rc = fail(&m, "out of memory");
    if (!rc)
        rc = vm_alloc(&m);
    if (!rc) {
        for (size_t k = 0; k < nshm; k++)
            m.wepoch[k] = m.repoch[k] = -1;
        for (int r = 0; r < p; r++) {
            ivl one = {r, r};
            uint32_t id = intern(&m.t, &one, 1, 1);
            int b = s->in_place ? TRD_B_RECV : TRD_B_SEND;
            for (size_t e = 0; e < s->count; e++)
                *cell(&m, b, r, e) = id;
        }
    }
    if (!rc)
        rc = run_all(&m);
    /* every rank holds the reduction over all ranks, each once */
    for (int r = 0; r < p && !rc; r++)
        for (size_t e = 0; e < s->count && !rc; e++) {
            uint32_t id = *cell(&m, TRD_B_RECV, r, e);
            const ivl *v = m.t.pool + m.t.start[id];
            if (id == SEQ_UNDEF)
                rc = fail(&m, "rank %d: recvbuf[%zu] is never written", r, e);
            else if (m.t.total[id] != p)
                rc = fail(&m, "rank %d: recvbuf[%zu] holds %d of the %d contributions", r, e,
                          m.t.total[id], p);
            else if (!s->commutative && (m.t.len[id] != 1 || v[0].lo != 0))
                rc = fail(&m,
                          "rank %d: recvbuf[%zu] holds all %d contributions, but not in rank order "
                          "(starts with rank %d)",
                          r, e, p, v[0].lo);
        }
    if (!rc && s->contention_free && opts && opts->topo && opts->check_contention)
        rc = check_contention(&m, opts);
    vm_free(&m);
    return rc;
}

/* ---- Cost -------------------------------------------------------------------- */

/* Bandwidth divisor of every message of the first pass, in match order: the
 * most messages of its round on one directed link of its path [TREE §2], or
 * the messages of its round leaving its node times the path bandwidth over
 * the node's injection bandwidth R_N [NAP Eq. 3], whichever limits more; 1
 * on a node. */
static int shares(vm *m, double **out)
{
    trd_topo_t t = m->cm->topo;
    const trd_shape *sh = m->sh;
    int S = trd_topo_nswitches(t), N = trd_topo_nnodes(t), links[256];
    size_t nl = 2 * ((size_t)S + (size_t)N), n = m->nmsgs;
    int *use = calloc(nl, sizeof *use), *leave = calloc((size_t)N, sizeof *leave);
    double *f = malloc((n + 1) * sizeof *f);
    size_t *order = round_order(m);
    if (!use || !leave || !f || !order) {
        free(use);
        free(leave);
        free(f);
        free(order);
        return fail(m, "out of memory");
    }
    for (size_t g0 = 0, g1; g0 < n; g0 = g1) {
        g1 = round_end(m, order, g0);
        /* count this round's messages per link and per leaving node */
        for (int pass = 0; pass < 3; pass++)
            for (size_t x = g0; x < g1; x++) {
                const struct msg *g = &m->msgs[order[x]];
                if (g->from == g->to) {
                    f[order[x]] = 1;
                    continue;
                }
                int a = sh->machine_node[g->from], b = sh->machine_node[g->to];
                int c = trd_topo_path_links(t, a, b, links, 256);
                if (pass == 0) {
                    for (int l = 0; l < c && l < 256; l++)
                        use[links[l]]++;
                    leave[a]++;
                } else if (pass == 1) {
                    double d = 1;
                    for (int l = 0; l < c && l < 256; l++)
                        d = use[links[l]] > d ? use[links[l]] : d;
                    trd_link_cost pc = trd_topo_path_cost(t, a, b);
                    if (pc.injection_Bps > 0 && pc.bandwidth_Bps > 0) {
                        double inj = leave[a] * pc.bandwidth_Bps / pc.injection_Bps;
                        d = inj > d ? inj : d;
                    }
                    f[order[x]] = d;
                } else {
                    for (int l = 0; l < c && l < 256; l++)
                        use[links[l]] = 0;
                    leave[a] = 0;
                }
            }
    }
    free(use);
    free(leave);
    free(order);
    *out = f;
    return 0;
}

static int cost_pass(const trd_sched *s, const trd_shape *sh, const trd_cost_model *cm,
                     size_t extent, const double *share, vm *m, char *why, size_t whylen)
{
    memset(m, 0, sizeof *m);
    m->why = why;
    m->whylen = whylen;
    m->s = s;
    m->sh = sh;
    m->cm = cm;
    m->ext = extent;
    m->share = share;
    m->record_all = 1;
    int p = s->nranks;
    if (seqtab_init(&m->t))
        return fail(m, "out of memory");
    m->clock = calloc((size_t)p + 1, sizeof *m->clock);
    m->post = calloc((size_t)p + 1, sizeof *m->post);
    m->fin = calloc(s->nops + 1, sizeof *m->fin);
    m->alpha_r = calloc(s->nops + 1, sizeof *m->alpha_r);
    m->barrier_at = calloc((size_t)sh->nnodes + 1, sizeof *m->barrier_at);
    if (!m->clock || !m->post || !m->fin || !m->alpha_r || !m->barrier_at)
        return fail(m, "out of memory");
    /* every rank's package, once: pair_cost asks for it per op */
    int *pkg = malloc(((size_t)p + 1) * sizeof *pkg);
    if (!pkg)
        return fail(m, "out of memory");
    for (int r = 0; r < p; r++)
        pkg[r] = package_of(m, r);
    m->pkg = pkg;
    m->queue = malloc(((size_t)p + 1) * sizeof *m->queue);
    m->queued = calloc((size_t)p + 1, 1);
    if (!m->queue || !m->queued)
        return fail(m, "out of memory");
    if (vm_alloc(m))
        return -1;
    return run_all(m);
}

double trd_sched_cost(const trd_sched *s, const trd_shape *sh, const trd_cost_model *cm,
                      size_t extent, char *why, size_t whylen)
{
    vm m;
    double *share = NULL, worst = -1;
    if (!sh->machine_node || s->nranks != sh->nranks) {
        snprintf(why, whylen, "the cost needs the communicator's nodes on the machine");
        return -1;
    }
    int rc = cost_pass(s, sh, cm, extent, NULL, &m, why, whylen);
    if (!rc)
        rc = shares(&m, &share);
    vm_free(&m);
    if (!rc)
        rc = cost_pass(s, sh, cm, extent, share, &m, why, whylen);
    if (!rc) {
        worst = 0;
        for (int r = 0; r < s->nranks; r++)
            worst = m.clock[r] > worst ? m.clock[r] : worst;
    }
    vm_free(&m);
    free(share);
    return worst;
}
