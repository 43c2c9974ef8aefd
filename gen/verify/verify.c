/* Schedule verifier (verify.h): symbolic execution of a schedule for all
 * ranks on the engine of symexec.h.
 *
 * Every cell of every buffer holds a value: the index of the element of the
 * collective's vector it is, and the sequence of ranks whose contributions
 * it holds, in operand order, as a list of rank intervals.  Sequences are
 * interned (equal sequences share an id) and the result of combining two ids
 * is memoised, so ring schedules over a thousand ranks check in well under a
 * second; the element index is kept beside the id, so that the sequences of
 * different elements share their ids.  A reduction concatenates the left
 * operand's sequence and the right one's (a set union for commutative
 * schedules); a rank appearing twice, or two different elements, is an
 * error at once.  Elements of a repeated call carry the call in their top
 * bit, so that a value left over from the call before never passes for one
 * of this call.
 *
 * Memory shared by the ranks of a node -- the segment's SEG and INL areas,
 * and user buffers another rank reads or writes by single copy -- also keeps,
 * per run of cells, its last writer with the writer's clock component at the
 * write, and each reader's component at its last read.  Clocks are vector
 * clocks over the node's ranks: a rank's own component counts its signals,
 * and a wait merges the clock of the first signal that satisfied it.  An
 * access is race-free when the rank has seen a signal the writer (or the
 * reader, for an overwrite) gave after its access [FLEX §3.1].  Segment
 * addresses are virtual (sched.h); only the cells the ops touch in the two
 * physical slots are kept. */
#include "verify.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ring.h"
#include "symexec.h"
#include "util.h"

typedef struct ivl {
    int lo, hi;
} ivl;

/* ---- Interned contribution sequences ------------------------------------- */

#define SEQ_UNDEF 0u /* never written */

typedef struct seqtab {
    size_t n; /* sequences; id 0 is SEQ_UNDEF */
    size_t start_cap, len_cap, total_cap;
    size_t *start; /* [cap] first interval in pool */
    int *len;      /* [cap] intervals */
    int *total;    /* [cap] ranks */
    ivl *pool;
    size_t pool_n, pool_cap;
    uint32_t *slot; /* intern table: ids, 0 empty */
    size_t slot_cap;
    uint64_t *mkey; /* memo (a << 32 | b) + 1, 0 empty */
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
    if (trd__grow_n((void **)&t->pool, &t->pool_cap, t->pool_n + (size_t)n, sizeof *t->pool) ||
        trd__grow_n((void **)&t->start, &t->start_cap, t->n + 1, sizeof *t->start) ||
        trd__grow_n((void **)&t->len, &t->len_cap, t->n + 1, sizeof *t->len) ||
        trd__grow_n((void **)&t->total, &t->total_cap, t->n + 1, sizeof *t->total)) {
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
    if (trd__grow_n((void **)&t->start, &t->start_cap, 1024, sizeof *t->start) ||
        trd__grow_n((void **)&t->len, &t->len_cap, 1024, sizeof *t->len) ||
        trd__grow_n((void **)&t->total, &t->total_cap, 1024, sizeof *t->total))
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
                *dup = v[i].lo > v[i - 1].lo ? v[i].lo : v[i - 1].lo;
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

/* ---- Runs of shared cells: writer and readers --------------------------------- */

typedef struct rdr {
    int rank, comp;
} rdr;

/* Cells [lo, the next run's lo) of a buffer: their last writer (-1: none)
 * with its clock component at the write, and the ranks that read them since,
 * with their components at their last read. */
typedef struct run {
    size_t lo;
    int writer, wcomp;
    int nr, cap;
    rdr *r;
} run;

typedef struct runmap {
    run *v;
    size_t n, cap;
} runmap;

static void runmap_reset(runmap *m, int writer, int wcomp)
{
    for (size_t i = 0; i < m->n; i++)
        free(m->v[i].r);
    m->n = 0;
    if (m->cap || !trd__grow_n((void **)&m->v, &m->cap, 1, sizeof *m->v)) {
        m->v[0] = (run){0, writer, wcomp, 0, 0, NULL};
        m->n = 1;
    }
}

static void runmap_free(runmap *m)
{
    for (size_t i = 0; i < m->n; i++)
        free(m->v[i].r);
    free(m->v);
}

/* Index of the run that starts at `at` (split off where `at` is inside
 * one); m->n past the last; -1 out of memory. */
static long runmap_split(runmap *m, size_t at)
{
    size_t lo = 0, hi = m->n;
    while (hi - lo > 1) { /* the last run with v.lo <= at (runs start at 0) */
        size_t mid = lo + (hi - lo) / 2;
        if (m->v[mid].lo <= at)
            lo = mid;
        else
            hi = mid;
    }
    if (m->v[lo].lo == at)
        return (long)lo;
    if (trd__grow_n((void **)&m->v, &m->cap, m->n + 1, sizeof *m->v))
        return -1;
    run copy = m->v[lo];
    copy.lo = at;
    copy.r = NULL;
    copy.cap = copy.nr;
    if (copy.nr && !(copy.r = malloc((size_t)copy.nr * sizeof *copy.r)))
        return -1;
    if (copy.nr)
        memcpy(copy.r, m->v[lo].r, (size_t)copy.nr * sizeof *copy.r);
    memmove(&m->v[lo + 2], &m->v[lo + 1], (m->n - lo - 1) * sizeof *m->v);
    m->v[lo + 1] = copy;
    m->n++;
    return (long)lo + 1;
}

/* ---- The verifier's state ------------------------------------------------------- */

typedef struct cell {
    uint32_t elem, seq;
} cell;

#define CALL_BIT 0x80000000u /* elements of the second call */

/* The cells of a segment area (SEG or INL) of one rank that the ops touch,
 * in physical addresses of the two slots: sorted intervals and their cells. */
typedef struct area {
    size_t *lo, *hi, *base;
    int n;
    cell *v;
    runmap meta;
} area;

/* Another rank's latest access to a rank's user buffers in this call. */
typedef struct uacc {
    int rank, comp, write, buf;
    size_t lo, hi;
} uacc;

typedef struct vm {
    const trd_sched *s;
    const trd_shape *sh;
    const trd_call *call;
    trd_exec x;
    seqtab t;
    int p;
    uint32_t *single;      /* [p] the id of {r} */
    uint32_t all_id;       /* 0..p-1 in rank order (or the set) */
    size_t *nsend, *nrecv; /* [p] elements of each rank's buffers */
    size_t *ntmp;          /* [p] elements of the temporary its ops reach (<= tmp_count) */
    cell **recv, **tmp;    /* [p] */
    area *seg[2];          /* [p] SEG and INL areas */
    size_t W[2];           /* slot width of SEG (2S) and INL (I) */
    /* user buffers that other ranks access by single copy */
    unsigned char *shared; /* [p] */
    runmap *umeta;         /* [p] sync of recvbuf, where shared */
    int *start_comp;       /* [p] own component when the call began */
    uacc **acc;            /* [p] other ranks' accesses this call */
    int *nacc, *capacc;
    /* vector clocks over the node's ranks */
    int **vc;  /* [p] -> [ranks on the node] */
    int *snap; /* clocks at each signal */
    size_t nsnap, capsnap;
    size_t *snap_at; /* [signal id] offset in snap */
    size_t capat;
    cell *scratch;
    size_t capscratch;
} vm;

static const char *const bname[TRD_B_MAX] = {"sendbuf", "recvbuf", "tmp", "seg", "inl"};

/* "buf[a:b]", "buf(owner)[a:b]", "seg(owner)@epoch.in[a:b]": range of buffer b
 * of owner o (-1 none shown) at virtual offset off, as trd_sched_print
 * writes it. */
static const char *range_text(const vm *m, char *out, size_t n, int b, int o, size_t off,
                              size_t len)
{
    char own[16] = "";
    if (o >= 0)
        snprintf(own, sizeof own, "(%d)", o);
    if (b == TRD_B_SEG && m->s->seg_slot) {
        size_t S = m->s->seg_slot, e = off / (2 * S), a = off % (2 * S), in = a < S;
        snprintf(out, n, "seg%s@%zu.%s[%zu:%zu]", own, e, in ? "in" : "out", a - (in ? 0 : S),
                 a - (in ? 0 : S) + len);
    } else if (b == TRD_B_INL && m->s->inl_slot) {
        size_t I = m->s->inl_slot;
        snprintf(out, n, "inl%s@%zu[%zu:%zu]", own, off / I, off % I, off % I + len);
    } else {
        snprintf(out, n, "%s%s[%zu:%zu]", bname[b], own, off, off + len);
    }
    return out;
}

/* One element: "tmp[3]", "seg@2.in[3]". */
static const char *elem_text(const vm *m, char *out, size_t n, int b, size_t off)
{
    char r[96];
    range_text(m, r, sizeof r, b, -1, off, 1);
    char *colon = strrchr(r, ':');
    if (colon) {
        *colon = ']';
        colon[1] = '\0';
    }
    snprintf(out, n, "%s", r);
    return out;
}

/* "5", or "5 of the first call" for a value of another call than `call`. */
static const char *elem_name(char *out, size_t n, uint32_t elem, int call)
{
    int c = (elem & CALL_BIT) != 0;
    snprintf(out, n, "%u%s", elem & ~CALL_BIT,
             c == call ? ""
             : c       ? " of the second call"
                       : " of the first call");
    return out;
}

static int vcomp(const vm *m, int q, int w)
{
    return m->vc[q][m->x.local[w]];
}

/* ---- The cells an op touches ---------------------------------------------------- */

/* A resolved range: cells (or, v NULL, the implicit input of rank `in` from
 * element at) and the sync runs (NULL: private memory) from address mlo. */
typedef struct ref {
    cell *v;
    int in;
    size_t at;
    runmap *meta;
    size_t mlo;
    int owner, buf; /* as named by the op */
} ref;

/* Elements of rank w's input (where it lives: *buf at *at), 0 if none. */
static size_t input_of(const vm *m, int w, int *buf, size_t *at)
{
    const trd_call *c = m->call;
    *at = 0;
    *buf = c->in_place && m->nsend[w] == 0 ? TRD_B_RECV : TRD_B_SEND;
    switch (c->coll) {
    case TRD_COLL_REDUCE_SCATTER_BLOCK:
        return (size_t)m->p * c->count;
    case TRD_COLL_ALLGATHER:
        if (*buf == TRD_B_RECV)
            *at = (size_t)w * c->count;
        return c->count;
    case TRD_COLL_BCAST:
        *buf = TRD_B_RECV;
        return w == c->root ? c->count : 0;
    default:
        return c->count;
    }
}

/* Find the cells of segment area k (0 SEG, 1 INL) of rank w at physical
 * address a, len of them (all in one interval, as the first pass made). */
static cell *area_cells(area *ar, size_t a, size_t len)
{
    int lo = 0, hi = ar->n;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (ar->hi[mid] <= a)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo >= ar->n || ar->lo[lo] > a || a + len > ar->hi[lo])
        return NULL;
    return ar->v + ar->base[lo] + (a - ar->lo[lo]);
}

/* Physical address in its two slots of virtual segment offset off of area k
 * for rank r in its current call; -1 (and an error) if [off, off+len)
 * crosses the end of a slot. */
static int seg_phys(vm *m, int r, size_t k, int kind, int owner, size_t off, size_t len,
                    size_t *phys)
{
    size_t W = m->W[kind];
    char t[96];
    if (W == 0)
        return trd_exec_fail(&m->x, r, k, "uses %s, whose slots hold no element of %zu bytes",
                             bname[TRD_B_SEG + kind], m->call->extent);
    size_t v = off / W + (size_t)m->x.call[r] * (size_t)m->x.epochs[m->sh->node_of[owner]];
    if (off % W + len > W)
        return trd_exec_fail(&m->x, r, k, "%s crosses the end of its slot",
                             range_text(m, t, sizeof t, TRD_B_SEG + kind, owner, off, len));
    *phys = (v % 2) * W + off % W;
    return 0;
}

/* Resolve buffer b of owner o (-1: rank q's own) at [off, off+len) for rank
 * q's op k, reading (write 0) or writing: the checks of ranges, of where a
 * rank may reach, and of the calls of single-copy partners. */
static int resolve(vm *m, int q, size_t k, int b, int o, size_t off, size_t len, int write,
                   ref *out)
{
    const trd_call *c = m->call;
    int w = o >= 0 ? o : q, remote = w != q;
    char t[96];
    const char *verb = write ? "writes" : "reads";
    *out = (ref){NULL, -1, 0, NULL, 0, remote ? w : -1, b};
    if (b >= TRD_B_MAX)
        return trd_exec_fail(&m->x, q, k, "%s buffer %d, which does not exist", verb, b);
    if (w >= m->p)
        return trd_exec_fail(&m->x, q, k, "%s %s of rank %d, which does not exist", verb, bname[b],
                             w);
    if (remote) {
        if (m->sh->node_of[w] != m->sh->node_of[q])
            return trd_exec_fail(&m->x, q, k, "%s %s of rank %d, not on its node", verb, bname[b],
                                 w);
        if (b == TRD_B_TMP)
            return trd_exec_fail(&m->x, q, k, "%s tmp of rank %d (a temporary is its rank's own)",
                                 verb, w);
        if (write && b != TRD_B_RECV)
            return trd_exec_fail(
                &m->x, q, k, "writes %s of rank %d (of another rank only recvbuf may be written)",
                bname[b], w);
    }
    if (b == TRD_B_SEG || b == TRD_B_INL) {
        int kind = b - TRD_B_SEG;
        size_t a = 0;
        if (!m->sh->shm)
            return trd_exec_fail(&m->x, q, k, "%s %s on a shape without shared memory", verb,
                                 range_text(m, t, sizeof t, b, w, off, len));
        if (seg_phys(m, q, k, kind, w, off, len, &a))
            return -1;
        out->v = area_cells(&m->seg[kind][w], a, len);
        if (!out->v)
            return trd_exec_failf(&m->x, "internal error: segment cells not indexed");
        out->meta = &m->seg[kind][w].meta;
        out->mlo = a;
        return 0;
    }
    size_t at = off, size;
    int ub = b, named = b;
    if (b == TRD_B_SEND) {
        if (write)
            return trd_exec_fail(&m->x, q, k, "writes the send buffer");
        if (m->nsend[w] == 0 && c->in_place && c->coll != TRD_COLL_BCAST) {
            size_t in_at;
            int ib;
            size_t nin = input_of(m, w, &ib, &in_at);
            if (!remote || ib != TRD_B_RECV)
                return trd_exec_fail(&m->x, q, k,
                                     "reads sendbuf in place (MPI_IN_PLACE: there is none)");
            /* another rank's input is where MPI_IN_PLACE keeps it */
            if (off > nin || len > nin - off)
                return trd_exec_fail(&m->x, q, k, "reads %s beyond its %zu elements",
                                     range_text(m, t, sizeof t, b, w, off, len), nin);
            ub = TRD_B_RECV;
            at = in_at + off;
        }
    }
    size = ub == TRD_B_SEND ? m->nsend[w] : ub == TRD_B_RECV ? m->nrecv[w] : m->s->tmp_count;
    if (at > size || len > size - at)
        return trd_exec_fail(&m->x, q, k, "%s %s beyond its %zu elements", verb,
                             range_text(m, t, sizeof t, named, remote ? w : -1, off, len), size);
    if (ub == TRD_B_SEND) {
        out->in = w;
        out->at = at;
    } else {
        out->v = (ub == TRD_B_RECV ? m->recv[w] : m->tmp[w]) + at;
    }
    if (!remote && !m->shared[w])
        return 0;
    if (ub == TRD_B_RECV && m->shared[w]) {
        out->meta = &m->umeta[w];
        out->mlo = at;
    }
    if (!remote)
        return 0;
    /* single copy: another rank's user buffer, during its call */
    if (!(m->sh->cma & (write ? TRD_CMA_WRITE : TRD_CMA_READ)))
        return trd_exec_fail(&m->x, q, k, "%s %s by single copy, which the shape does not allow",
                             verb, range_text(m, t, sizeof t, named, w, off, len));
    if (m->x.call[w] < m->x.call[q])
        return trd_exec_fail(&m->x, q, k, "%s %s before rank %d enters the call", verb,
                             range_text(m, t, sizeof t, named, w, off, len), w);
    if (m->x.call[w] > m->x.call[q])
        return trd_exec_failf(&m->x, "rank %d returns while rank %d may still %s its %s", w, q,
                              write ? "write" : "read",
                              range_text(m, t, sizeof t, named, -1, off, len));
    if (ub == TRD_B_SEND && vcomp(m, q, w) <= m->start_comp[w])
        return trd_exec_fail(&m->x, q, k,
                             "reads %s before rank %d signals that it entered the call",
                             range_text(m, t, sizeof t, named, w, off, len), w);
    /* the latest access of q, checked when w returns */
    uacc a = {q, vcomp(m, q, q), write, named, off, off + len};
    for (int i = 0; i < m->nacc[w]; i++)
        if (m->acc[w][i].rank == q && m->acc[w][i].write == write) {
            m->acc[w][i] = a;
            return 0;
        }
    size_t cap = (size_t)m->capacc[w];
    if (trd__grow_n((void **)&m->acc[w], &cap, (size_t)m->nacc[w] + 1, sizeof a))
        return trd_exec_oom(&m->x);
    m->capacc[w] = (int)cap;
    m->acc[w][m->nacc[w]++] = a;
    return 0;
}

/* The sync checks of rank q's access (op k) to the runs of r over
 * [mlo, mlo+len); the op's range named for the messages. */
static int sync_access(vm *m, int q, size_t k, const ref *r, size_t off, size_t len, int write)
{
    runmap *mp = r->meta;
    char t[96];
    if (!mp || len == 0)
        return 0;
    int owner = r->owner >= 0 ? r->owner : q;
    long i0 = runmap_split(mp, r->mlo), i1 = runmap_split(mp, r->mlo + len);
    if (i0 < 0 || i1 < 0)
        return trd_exec_oom(&m->x);
    int own = vcomp(m, q, q);
    for (long i = i0; i < i1; i++) {
        run *u = &mp->v[i];
        if (u->writer >= 0 && u->writer != q && vcomp(m, q, u->writer) <= u->wcomp)
            return trd_exec_fail(&m->x, q, k, "%s %s before rank %d's write to it is signalled",
                                 write ? "overwrites" : "reads",
                                 range_text(m, t, sizeof t, r->buf, owner, off, len), u->writer);
        if (write) {
            for (int j = 0; j < u->nr; j++)
                if (u->r[j].rank != q && vcomp(m, q, u->r[j].rank) <= u->r[j].comp)
                    return trd_exec_fail(
                        &m->x, q, k, "overwrites %s while rank %d may still read it",
                        range_text(m, t, sizeof t, r->buf, owner, off, len), u->r[j].rank);
            continue;
        }
        int j = 0;
        while (j < u->nr && u->r[j].rank != q)
            j++;
        if (j == u->nr) {
            size_t cap = (size_t)u->cap;
            if (trd__grow_n((void **)&u->r, &cap, (size_t)u->nr + 1, sizeof *u->r))
                return trd_exec_oom(&m->x);
            u->cap = (int)cap;
            u->nr++;
        }
        u->r[j] = (rdr){q, own};
    }
    if (write) { /* one run: q wrote it all, nobody read it since */
        for (long i = i0 + 1; i < i1; i++)
            free(mp->v[i].r);
        mp->v[i0].writer = q;
        mp->v[i0].wcomp = own;
        mp->v[i0].nr = 0;
        if (i1 > i0 + 1) {
            memmove(&mp->v[i0 + 1], &mp->v[i1], (mp->n - (size_t)i1) * sizeof *mp->v);
            mp->n -= (size_t)(i1 - i0 - 1);
        }
    }
    return 0;
}

static cell *scratch(vm *m, size_t n)
{
    if (trd__grow_n((void **)&m->scratch, &m->capscratch, n + 1, sizeof *m->scratch))
        return NULL;
    return m->scratch;
}

/* Read [off, off+len) of buffer b of owner o for rank q's op k into
 * scratch: every cell defined, race-free. */
static cell *read_cells(vm *m, int q, size_t k, int b, int o, size_t off, size_t len)
{
    ref r;
    cell *v;
    char t[96];
    if (resolve(m, q, k, b, o, off, len, 0, &r) || sync_access(m, q, k, &r, off, len, 0))
        return NULL;
    if (!(v = scratch(m, len))) {
        trd_exec_oom(&m->x);
        return NULL;
    }
    if (!r.v) { /* the input of rank r.in */
        uint32_t cb = m->x.call[q] ? CALL_BIT : 0, id = m->single[r.in];
        for (size_t e = 0; e < len; e++)
            v[e] = (cell){(uint32_t)(r.at + e) | cb, id};
        return v;
    }
    for (size_t e = 0; e < len; e++) {
        if (r.v[e].seq == SEQ_UNDEF) {
            trd_exec_fail(&m->x, q, k, "reads %s of rank %d before it is written",
                          elem_text(m, t, sizeof t, b, off + e), o >= 0 ? o : q);
            return NULL;
        }
        v[e] = r.v[e];
    }
    return v;
}

/* Write v[0..len) to [off, off+len) of buffer b of owner o for rank q's op k. */
static int write_cells(vm *m, int q, size_t k, int b, int o, size_t off, size_t len, const cell *v)
{
    ref r;
    if (resolve(m, q, k, b, o, off, len, 1, &r) || sync_access(m, q, k, &r, off, len, 1))
        return -1;
    memcpy(r.v, v, len * sizeof *v);
    return 0;
}

/* ---- Hooks ---------------------------------------------------------------------- */

static int h_local(trd_exec *x, int q, size_t k)
{
    vm *m = x->ctx;
    const trd_sstep *o = &m->s->op[k];
    char t[96], e1[48], e2[48];
    int dst_owner = o->op == TRD_S_COPY ? o->peer2 : -1;
    if (o->op == TRD_S_REDUCE && o->peer2 >= 0 && o->peer2 != q)
        return trd_exec_fail(x, q, k,
                             "reduces into %s of rank %d (only a copy writes another "
                             "rank's memory)",
                             bname[o->dst < TRD_B_MAX ? o->dst : 0], o->peer2);
    if (o->op == TRD_S_REDUCE && m->s->call.whole && o->len != m->s->call.count)
        return trd_exec_fail(x, q, k,
                             "reduces %zu of the %zu elements: a user-defined operation is "
                             "called on the whole vector",
                             o->len, m->s->call.count);
    if (dst_owner == q)
        dst_owner = -1;
    cell *v = read_cells(m, q, k, o->src, o->peer == q ? -1 : o->peer, o->soff, o->len);
    if (!v)
        return -1;
    if (o->op == TRD_S_REDUCE) {
        ref r;
        if (resolve(m, q, k, o->dst, -1, o->off, o->len, 0, &r) ||
            sync_access(m, q, k, &r, o->off, o->len, 0))
            return -1;
        for (size_t e = 0; e < o->len; e++) {
            cell y = r.v[e];
            if (y.seq == SEQ_UNDEF)
                return trd_exec_fail(x, q, k, "reads %s of rank %d before it is written",
                                     elem_text(m, t, sizeof t, o->dst, o->off + e), q);
            if (y.elem != v[e].elem)
                return trd_exec_fail(x, q, k, "combines element %s with element %s into %s",
                                     elem_name(e1, sizeof e1, v[e].elem, x->call[q]),
                                     elem_name(e2, sizeof e2, y.elem, x->call[q]),
                                     elem_text(m, t, sizeof t, o->dst, o->off + e));
            int dup;
            uint32_t z = combine(&m->t, v[e].seq, y.seq, &dup);
            if (dup >= 0)
                return trd_exec_fail(x, q, k,
                                     "element %zu of %s would hold rank %d's contribution "
                                     "twice",
                                     o->off + e, bname[o->dst], dup);
            if (z == SEQ_UNDEF)
                return trd_exec_oom(x);
            v[e].seq = z;
        }
    }
    return write_cells(m, q, k, o->dst, dst_owner, o->off, o->len, v);
}

static int h_message(trd_exec *x, int a, size_t i, int b, size_t k)
{
    vm *m = x->ctx;
    const trd_sstep *o = &m->s->op[i], *q = &m->s->op[k];
    cell *v = read_cells(m, a, i, o->src, -1, o->soff, o->len);
    if (!v)
        return -1;
    return write_cells(m, b, k, q->dst, -1, q->off, q->op == TRD_S_SENDRECV ? q->rlen : q->len, v);
}

/* A window's send sources and receive destinations do not overlap. */
static int h_posted(trd_exec *x, int r, size_t k0, size_t end)
{
    vm *m = x->ctx;
    const trd_sstep *op = m->s->op;
    char t1[96], t2[96];
    for (size_t i = k0; i < end; i++)
        for (size_t k = k0; k < end; k++) {
            const trd_sstep *a = &op[i], *b = &op[k];
            if (!(a->op == TRD_S_SEND || a->op == TRD_S_SENDRECV) ||
                !(b->op == TRD_S_RECV || b->op == TRD_S_SENDRECV))
                continue;
            size_t rl = b->op == TRD_S_SENDRECV ? b->rlen : b->len;
            if (a->src == b->dst && a->len && rl && a->soff < b->off + rl &&
                b->off < a->soff + a->len)
                return trd_exec_fail(x, r, i, "sends %s while receiving into %s in the same step",
                                     range_text(m, t1, sizeof t1, a->src, -1, a->soff, a->len),
                                     range_text(m, t2, sizeof t2, b->dst, -1, b->off, rl));
        }
    return 0;
}

static int h_signal(trd_exec *x, int r, size_t k, int id)
{
    vm *m = x->ctx;
    int n = x->npn[r];
    (void)k;
    m->vc[r][x->local[r]]++;
    if (trd__grow_n((void **)&m->snap, &m->capsnap, m->nsnap + (size_t)n, sizeof *m->snap) ||
        trd__grow_n((void **)&m->snap_at, &m->capat, (size_t)id + 1, sizeof *m->snap_at))
        return trd_exec_oom(x);
    memcpy(m->snap + m->nsnap, m->vc[r], (size_t)n * sizeof *m->snap);
    m->snap_at[id] = m->nsnap;
    m->nsnap += (size_t)n;
    return 0;
}

static int h_waited(trd_exec *x, int r, size_t k, int t, int id)
{
    vm *m = x->ctx;
    (void)k;
    if (t == r || id < 0)
        return 0;
    const int *s = m->snap + m->snap_at[id];
    for (int i = 0; i < x->npn[r]; i++)
        if (s[i] > m->vc[r][i])
            m->vc[r][i] = s[i];
    return 0;
}

/* Rank w starts call c: fresh user buffers and temporary, the input in
 * place where MPI_IN_PLACE keeps it. */
static int h_enter(trd_exec *x, int w, int c)
{
    vm *m = x->ctx;
    uint32_t cb = c ? CALL_BIT : 0;
    int ib;
    size_t at, n = input_of(m, w, &ib, &at);
    memset(m->recv[w], 0, m->nrecv[w] * sizeof(cell));
    memset(m->tmp[w], 0, m->ntmp[w] * sizeof(cell));
    if (ib == TRD_B_RECV)
        for (size_t e = 0; e < n && at + e < m->nrecv[w]; e++)
            m->recv[w][at + e] = (cell){
                (uint32_t)e | cb, m->single[m->call->coll == TRD_COLL_BCAST ? m->call->root : w]};
    m->start_comp[w] = vcomp(m, w, w);
    if (m->shared[w])
        runmap_reset(&m->umeta[w], w, m->start_comp[w]);
    m->nacc[w] = 0;
    return 0;
}

/* The result of rank w's call c. */
static int check_result(vm *m, int w, int c)
{
    const trd_call *call = m->call;
    const char *ord = c ? ", second call" : "";
    uint32_t cb = c ? CALL_BIT : 0;
    int p = m->p, coll = call->coll;
    size_t count = call->count, n = coll == TRD_COLL_ALLGATHER ? (size_t)p * count : count;
    char e1[48];
    if (coll == TRD_COLL_REDUCE && w != call->root)
        return 0;
    for (size_t e = 0; e < n; e++) {
        cell v = m->recv[w][e];
        const ivl *iv = m->t.pool + m->t.start[v.seq];
        if (v.seq == SEQ_UNDEF)
            return trd_exec_failf(&m->x, "rank %d%s: recvbuf[%zu] is never written", w, ord, e);
        if (coll == TRD_COLL_ALLGATHER || coll == TRD_COLL_BCAST) {
            int j = coll == TRD_COLL_BCAST ? call->root : (int)(e / count);
            size_t want = coll == TRD_COLL_BCAST ? e : e % count;
            if (m->t.total[v.seq] != 1)
                return trd_exec_failf(&m->x,
                                      "rank %d%s: recvbuf[%zu] holds %d contributions, not "
                                      "element %zu of rank %d's input",
                                      w, ord, e, m->t.total[v.seq], want, j);
            if (v.elem != (uint32_t)(want | cb) || iv[0].lo != j)
                return trd_exec_failf(&m->x,
                                      "rank %d%s: recvbuf[%zu] holds element %s of rank %d's "
                                      "input, not element %zu of rank %d's",
                                      w, ord, e, elem_name(e1, sizeof e1, v.elem, c), iv[0].lo,
                                      want, j);
            continue;
        }
        size_t want = coll == TRD_COLL_REDUCE_SCATTER_BLOCK ? (size_t)w * count + e : e;
        if (v.elem != (uint32_t)(want | cb))
            return trd_exec_failf(&m->x,
                                  "rank %d%s: recvbuf[%zu] holds element %s, not element %zu", w,
                                  ord, e, elem_name(e1, sizeof e1, v.elem, c), want);
        if (m->t.total[v.seq] != p)
            return trd_exec_failf(&m->x, "rank %d%s: recvbuf[%zu] holds %d of the %d contributions",
                                  w, ord, e, m->t.total[v.seq], p);
        if (!call->commutative && iv[0].lo != 0)
            return trd_exec_failf(&m->x,
                                  "rank %d%s: recvbuf[%zu] holds all %d contributions, but "
                                  "not in rank order (starts with rank %d)",
                                  w, ord, e, p, iv[0].lo);
        if (!call->commutative && m->t.len[v.seq] != 1)
            return trd_exec_failf(&m->x,
                                  "rank %d%s: recvbuf[%zu] holds all %d contributions, but "
                                  "not in rank order (rank %d follows rank %d)",
                                  w, ord, e, p, iv[1].lo, iv[0].hi);
    }
    return 0;
}

/* Rank w returns from call c: the others are done with its user buffers. */
static int h_leave(trd_exec *x, int w, int c)
{
    vm *m = x->ctx;
    char t[96];
    for (int i = 0; i < m->nacc[w]; i++) {
        const uacc *a = &m->acc[w][i];
        if (vcomp(m, w, a->rank) <= a->comp)
            return trd_exec_failf(x, "rank %d returns while rank %d may still %s its %s", w,
                                  a->rank, a->write ? "write" : "read",
                                  range_text(m, t, sizeof t, a->buf, -1, a->lo, a->hi - a->lo));
    }
    m->nacc[w] = 0;
    return check_result(m, w, c);
}

/* ---- Setting up --------------------------------------------------------------- */

/* The physical segment ranges every op touches, per rank and area, for
 * ncalls calls: the areas' intervals. */
typedef struct touch {
    int rank, kind;
    size_t lo, hi;
} touch;

static int cmp_touch(const void *x, const void *y)
{
    const touch *a = x, *b = y;
    if (a->rank != b->rank)
        return (a->rank > b->rank) - (a->rank < b->rank);
    if (a->kind != b->kind)
        return (a->kind > b->kind) - (a->kind < b->kind);
    return (a->lo > b->lo) - (a->lo < b->lo);
}

static int add_touch(vm *m, touch **tv, size_t *n, size_t *cap, int r, int b, int owner, size_t off,
                     size_t len, int ncalls, const int *epochs)
{
    if ((b != TRD_B_SEG && b != TRD_B_INL) || len == 0)
        return 0;
    int w = owner >= 0 ? owner : r, kind = b - TRD_B_SEG;
    size_t W = m->W[kind];
    if (w >= m->p || W == 0 || off % W + len > W || m->sh->node_of[w] != m->sh->node_of[r])
        return 0; /* an error when it runs */
    for (int c = 0; c < ncalls; c++) {
        size_t v = off / W + (size_t)c * (size_t)epochs[m->sh->node_of[w]];
        if (trd__grow_n((void **)tv, cap, *n + 1, sizeof **tv))
            return -1;
        size_t a = (v % 2) * W + off % W;
        (*tv)[(*n)++] = (touch){w, kind, a, a + len};
    }
    return 0;
}

static int vm_init(vm *m, const trd_sched *s, const trd_shape *sh, int ncalls)
{
    int p = s->nranks;
    const trd_sstep *op = s->op;
    memset(m, 0, sizeof *m);
    m->s = s;
    m->sh = sh;
    m->call = &s->call;
    m->p = p;
    if (seqtab_init(&m->t))
        return -1;
    m->t.sets = s->call.commutative;
    size_t np = (size_t)p + 1;
    m->single = malloc(np * sizeof *m->single);
    m->nsend = malloc(np * sizeof *m->nsend);
    m->nrecv = malloc(np * sizeof *m->nrecv);
    m->ntmp = calloc(np, sizeof *m->ntmp);
    m->recv = calloc(np, sizeof *m->recv);
    m->tmp = calloc(np, sizeof *m->tmp);
    m->seg[0] = calloc(np, sizeof *m->seg[0]);
    m->seg[1] = calloc(np, sizeof *m->seg[1]);
    m->shared = calloc(np, 1);
    m->umeta = calloc(np, sizeof *m->umeta);
    m->start_comp = calloc(np, sizeof *m->start_comp);
    m->acc = calloc(np, sizeof *m->acc);
    m->nacc = calloc(np, sizeof *m->nacc);
    m->capacc = calloc(np, sizeof *m->capacc);
    m->vc = calloc(np, sizeof *m->vc);
    if (!m->single || !m->nsend || !m->nrecv || !m->ntmp || !m->recv || !m->tmp || !m->seg[0] ||
        !m->seg[1] || !m->shared || !m->umeta || !m->start_comp || !m->acc || !m->nacc ||
        !m->capacc || !m->vc)
        return -1;
    m->W[0] = 2 * s->seg_slot;
    m->W[1] = s->inl_slot;
    for (int r = 0; r < p; r++) {
        ivl one = {r, r};
        m->single[r] = intern(&m->t, &one, 1, 1);
        trd_call_sizes(&s->call, p, r, &m->nsend[r], &m->nrecv[r]);
        /* only the part of the temporary the ops reach gets cells (the
         * single-copy path sizes its pieces for large messages) */
        for (size_t k = s->first[r]; k < s->first[r + 1]; k++) {
            const trd_sstep *o = &op[k];
            size_t rl = o->op == TRD_S_SENDRECV ? o->rlen : o->len;
            if (o->src == TRD_B_TMP && o->op != TRD_S_RECV && o->op != TRD_S_SIGNAL &&
                o->op != TRD_S_WAIT && o->soff < s->tmp_count)
                m->ntmp[r] = o->soff + o->len > m->ntmp[r] ? o->soff + o->len : m->ntmp[r];
            if (o->dst == TRD_B_TMP && o->op != TRD_S_SEND && o->op != TRD_S_SIGNAL &&
                o->op != TRD_S_WAIT && o->off < s->tmp_count)
                m->ntmp[r] = o->off + rl > m->ntmp[r] ? o->off + rl : m->ntmp[r];
        }
        if (m->ntmp[r] > s->tmp_count)
            m->ntmp[r] = s->tmp_count;
        m->recv[r] = calloc(m->nrecv[r] + 1, sizeof(cell));
        m->tmp[r] = calloc(m->ntmp[r] + 1, sizeof(cell));
        if (!m->recv[r] || !m->tmp[r])
            return -1;
    }
    ivl all = {0, p - 1};
    m->all_id = intern(&m->t, &all, 1, p);
    /* vector clocks: one component per rank of the node */
    for (int v = 0; v < sh->nnodes; v++) {
        int n = sh->node_first[v + 1] - sh->node_first[v];
        for (int i = sh->node_first[v]; i < sh->node_first[v + 1]; i++)
            if (!(m->vc[sh->ring[i]] = calloc((size_t)n, sizeof(int))))
                return -1;
    }
    /* which user buffers other ranks reach, and the segment cells the ops
     * touch in each call */
    int *epochs = calloc((size_t)sh->nnodes + 1, sizeof *epochs);
    touch *tv = NULL;
    size_t nt = 0, capt = 0;
    int rc = epochs ? 0 : -1;
    for (int r = 0; r < p && !rc; r++)
        epochs[sh->node_of[r]] = s->nepochs[r];
    for (int r = 0; r < p && !rc; r++)
        for (size_t k = s->first[r]; k < s->first[r + 1] && !rc; k++) {
            const trd_sstep *o = &op[k];
            int local = o->op == TRD_S_COPY || o->op == TRD_S_REDUCE;
            int src = o->op == TRD_S_SEND || o->op == TRD_S_SENDRECV || local;
            int dst = o->op == TRD_S_RECV || o->op == TRD_S_SENDRECV || local;
            int so = local ? o->peer : -1, dow = o->op == TRD_S_COPY ? o->peer2 : -1;
            if (local && so >= 0 && so < p && so != r &&
                (o->src == TRD_B_SEND || o->src == TRD_B_RECV))
                m->shared[so] = 1;
            if (dow >= 0 && dow < p && dow != r && o->dst == TRD_B_RECV)
                m->shared[dow] = 1;
            if (src)
                rc = add_touch(m, &tv, &nt, &capt, r, o->src, so, o->soff, o->len, ncalls, epochs);
            if (dst && !rc)
                rc = add_touch(m, &tv, &nt, &capt, r, o->dst, dow, o->off,
                               o->op == TRD_S_SENDRECV ? o->rlen : o->len, ncalls, epochs);
        }
    free(epochs);
    if (!rc && nt)
        qsort(tv, nt, sizeof *tv, cmp_touch);
    /* merge each rank's intervals per area and give them cells */
    for (size_t i = 0, j; i < nt && !rc; i = j) {
        area *ar = &m->seg[tv[i].kind][tv[i].rank];
        size_t cells = 0, cap = 0;
        j = i;
        while (j < nt && tv[j].rank == tv[i].rank && tv[j].kind == tv[i].kind)
            j++;
        for (size_t a = i; a < j && !rc; a++) {
            if (ar->n > 0 && tv[a].lo <= ar->hi[ar->n - 1]) {
                if (tv[a].hi > ar->hi[ar->n - 1]) {
                    cells += tv[a].hi - ar->hi[ar->n - 1];
                    ar->hi[ar->n - 1] = tv[a].hi;
                }
                continue;
            }
            size_t c1 = cap, c2 = cap, c3 = cap;
            if (trd__grow_n((void **)&ar->lo, &c1, (size_t)ar->n + 1, sizeof *ar->lo) ||
                trd__grow_n((void **)&ar->hi, &c2, (size_t)ar->n + 1, sizeof *ar->hi) ||
                trd__grow_n((void **)&ar->base, &c3, (size_t)ar->n + 1, sizeof *ar->base)) {
                rc = -1;
                break;
            }
            cap = c1;
            ar->lo[ar->n] = tv[a].lo;
            ar->hi[ar->n] = tv[a].hi;
            ar->base[ar->n] = cells;
            cells += tv[a].hi - tv[a].lo;
            ar->n++;
        }
        if (!rc && !(ar->v = calloc(cells + 1, sizeof *ar->v)))
            rc = -1;
    }
    free(tv);
    for (int r = 0; r < p && !rc; r++) {
        runmap_reset(&m->seg[0][r].meta, -1, 0);
        runmap_reset(&m->seg[1][r].meta, -1, 0);
        if (m->shared[r])
            runmap_reset(&m->umeta[r], r, 0);
        if (!m->seg[0][r].meta.n || !m->seg[1][r].meta.n || (m->shared[r] && !m->umeta[r].n))
            rc = -1;
    }
    return rc;
}

static void vm_free(vm *m)
{
    for (int r = 0; r < m->p; r++) {
        if (m->recv)
            free(m->recv[r]);
        if (m->tmp)
            free(m->tmp[r]);
        for (int k = 0; k < 2; k++)
            if (m->seg[k]) {
                area *ar = &m->seg[k][r];
                free(ar->lo);
                free(ar->hi);
                free(ar->base);
                free(ar->v);
                runmap_free(&ar->meta);
            }
        if (m->umeta)
            runmap_free(&m->umeta[r]);
        if (m->acc)
            free(m->acc[r]);
        if (m->vc)
            free(m->vc[r]);
    }
    free(m->single);
    free(m->nsend);
    free(m->nrecv);
    free(m->ntmp);
    free(m->recv);
    free(m->tmp);
    free(m->seg[0]);
    free(m->seg[1]);
    free(m->shared);
    free(m->umeta);
    free(m->start_comp);
    free(m->acc);
    free(m->nacc);
    free(m->capacc);
    free(m->vc);
    free(m->snap);
    free(m->snap_at);
    free(m->scratch);
    seqtab_free(&m->t);
    trd_exec_free(&m->x);
}

/* ---- Contention on the switch tree [TREE §2] --------------------------------------- */

static int check_contention(vm *m, trd_topo_t t)
{
    const trd_shape *sh = m->sh;
    const trd_exec *x = &m->x;
    int S = trd_topo_nswitches(t), N = trd_topo_nnodes(t), links[256];
    size_t nlinks = 2 * ((size_t)S + (size_t)N), n;
    int *use = calloc(nlinks, sizeof *use);
    trd_xmsg *owner = malloc(nlinks * sizeof *owner);
    size_t *order = trd_exec_round_order(x, &n);
    if (!use || !owner || !order) {
        free(use);
        free(owner);
        free(order);
        return trd_exec_oom(&m->x);
    }
    int rc = 0;
    for (size_t g0 = 0, g1; g0 < n && !rc; g0 = g1) {
        g1 = trd_exec_round_end(x, order, n, g0);
        for (size_t i = g0; i < g1 && !rc; i++) {
            const trd_xmsg *g = &x->msgs[order[i]];
            int a = sh->machine_node[sh->node_of[g->from]],
                b = sh->machine_node[sh->node_of[g->to]];
            int nl = trd_topo_path_links(t, a, b, links, 256);
            for (int l = 0; l < nl && l < 256 && !rc; l++) {
                if (use[links[l]]++) {
                    int v = links[l] / 2, down = links[l] % 2;
                    const char *vn =
                        v < S ? trd_topo_switch_name(t, v) : trd_topo_node_name(t, v - S);
                    const trd_xmsg *h = &owner[links[l]];
                    rc = trd_exec_failf(
                        &m->x,
                        "round %d: the messages %s -> %s and %s -> %s share the link %s '%s' "
                        "[TREE §2]",
                        g->round, trd_topo_node_name(t, sh->machine_node[sh->node_of[h->from]]),
                        trd_topo_node_name(t, sh->machine_node[sh->node_of[h->to]]),
                        trd_topo_node_name(t, a), trd_topo_node_name(t, b),
                        down ? "down to" : "up from", vn);
                }
                owner[links[l]] = *g;
            }
        }
        for (size_t i = g0; i < g1; i++) {
            const trd_xmsg *g = &x->msgs[order[i]];
            int nl = trd_topo_path_links(t, sh->machine_node[sh->node_of[g->from]],
                                         sh->machine_node[sh->node_of[g->to]], links, 256);
            for (int l = 0; l < nl && l < 256; l++)
                use[links[l]] = 0;
        }
    }
    free(use);
    free(owner);
    free(order);
    return rc;
}

int trd_sched_verify(const trd_sched *s, const trd_shape *sh, const trd_verify_opts *opts,
                     char *why, size_t whylen)
{
    static const trd_exec_hooks hooks = {.enter = h_enter,
                                         .leave = h_leave,
                                         .local = h_local,
                                         .posted = h_posted,
                                         .message = h_message,
                                         .signal = h_signal,
                                         .waited = h_waited};
    trd_verify_opts none = {NULL, 0, 1};
    vm m;
    if (!opts)
        opts = &none;
    int ncalls = opts->repeat == 2 ? 2 : 1;
    int contention = s->contention_free && opts->topo && opts->check_contention && sh->machine_node;
    if (s->nranks != sh->nranks || s->rank0 != 0 || s->nplanned != s->nranks) {
        trd_exec x;
        int rc = trd_exec_init(&x, s, sh, 1, &hooks, NULL, 0, why, whylen);
        trd_exec_free(&x);
        return rc;
    }
    if (vm_init(&m, s, sh, ncalls)) {
        vm_free(&m);
        snprintf(why, whylen, "out of memory");
        return TRD_ERR_NOMEM;
    }
    int rc = trd_exec_init(&m.x, s, sh, ncalls, &hooks, &m,
                           contention ? TRD_X_RECORD_INTER : TRD_X_RECORD_NONE, why, whylen);
    if (!rc)
        rc = trd_exec_run(&m.x);
    if (!rc && m.t.oom)
        rc = trd_exec_oom(&m.x);
    if (!rc && contention)
        rc = check_contention(&m, opts->topo);
    vm_free(&m);
    return rc;
}
