/* Every schedule the runtime can run for a machine, verified before anything
 * is written (check.h). */
#include "check.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ring.h"
#include "shape.h"
#include "util.h"
#include "verify.h"

/* --break-schedule ALG:RANK:OP, parsed once: drop that op (alg "" none). */
typedef struct breaker {
    char alg[32];
    int rank;
    long op;
} breaker;

static int parse_break(const char *spec, breaker *b)
{
    const char *c = strrchr(spec, ':'), *a = NULL;
    for (const char *q = spec; c && q < c; q++)
        if (*q == ':')
            a = q; /* the last ':' before OP: names may hold one ("shm:rx") */
    if (!a || (size_t)(a - spec) >= sizeof b->alg)
        return TRD_ERR_INPUT;
    memcpy(b->alg, spec, (size_t)(a - spec));
    b->alg[a - spec] = '\0';
    char *end;
    b->rank = (int)strtol(a + 1, &end, 10);
    if (end != c || end == a + 1)
        return TRD_ERR_INPUT;
    b->op = strtol(c + 1, &end, 10);
    return *end || end == c + 1 || b->rank < 0 || b->op < 0 ? TRD_ERR_INPUT : TRD_OK;
}

/* ---- One algorithm in its variants ---------------------------------------------- */

/* A pair above the rank limit, to be covered by a smaller shape. */
typedef struct skip {
    const trd_algo *a;
    const char *params;
    int comm, shape; /* check_alg's comm; index into stats->shape */
} skip;

/* A pair verified by execution on a shape of uniform ranks per node. */
typedef struct proved {
    const trd_algo *a;
    const char *params;
    int nnodes, ppn;
} proved;

typedef struct checker {
    trd_topo_t t;
    const trd_check_opts *o;
    trd_diag *d;
    trd_check_stats *stats;
    breaker brk;
    const char *shape_name; /* "the whole machine" etc., or NULL: nodes x ranks */
    trd_check_shape *cur;   /* the shape being checked; NULL for a covering shape */
    int cover;              /* checking a covering shape: the cover limits apply */
    skip *skips;
    size_t nskips, capskips;
    proved *done;
    size_t ndone, capdone;
    trd_loc loc; /* where errors are reported: the input, or a wisdom's range */
} checker;

/* What the memory of a node offers in one variant. */
typedef struct memv {
    int shm, cma;
    size_t slot; /* 0: the runtime's */
} memv;

/* Whether a's parameters and refuse accept call on sh (before planning:
 * trd_plan's refusals are not errors here, its planners' failures are). */
static int accepts(const trd_algo *a, const char *params, const trd_shape *sh, const trd_call *call)
{
    void *pp = NULL;
    char why[256];
    int ok = 1;
    if (a->params_size && !(pp = calloc(1, a->params_size)))
        return 0;
    if (a->parse)
        ok = a->parse(params, sh, pp, why, sizeof why) == 0;
    else
        ok = !*params;
    if (ok && a->refuse && a->refuse(sh, call, pp))
        ok = 0;
    free(pp);
    return ok;
}

/* Whether a's parameters parse from text on sh. */
static int accepts_text(const trd_algo *a, const char *text, const trd_shape *sh)
{
    void *pp = NULL;
    char why[256];
    int ok;
    if (!a->parse)
        return !*text;
    if (a->params_size && !(pp = calloc(1, a->params_size)))
        return 0;
    ok = a->parse(text, sh, pp, why, sizeof why) == 0;
    free(pp);
    return ok;
}

/* Whether s uses the node's shared memory or counters (then the call runs
 * twice, and the segment's variants apply). */
static int uses_node_memory(const trd_sched *s)
{
    for (size_t i = 0; i < s->nops; i++) {
        const trd_sstep *o = &s->op[i];
        if (o->op == TRD_S_SIGNAL || o->op == TRD_S_WAIT || o->src == TRD_B_SEG ||
            o->src == TRD_B_INL || o->dst == TRD_B_SEG || o->dst == TRD_B_INL)
            return 1;
    }
    return 0;
}

static void describe(const checker *c, const trd_shape *sh, const trd_algo *a, const char *params,
                     const trd_call *call, const memv *m, char *out, size_t n)
{
    char shape[96], mem[96] = "", root[32] = "";
    if (c->shape_name)
        snprintf(shape, sizeof shape, "%s", c->shape_name);
    else
        snprintf(shape, sizeof shape, "%d node%s x %d ranks", sh->nnodes,
                 sh->nnodes == 1 ? "" : "s", sh->nranks / (sh->nnodes ? sh->nnodes : 1));
    if (m->cma)
        snprintf(mem, sizeof mem, ", single-copy reads%s",
                 m->cma & TRD_CMA_WRITE ? " and writes" : "");
    if (m->slot)
        snprintf(mem + strlen(mem), sizeof mem - strlen(mem), ", %zu-byte slots", m->slot);
    if (call->coll == TRD_COLL_REDUCE || call->coll == TRD_COLL_BCAST)
        snprintf(root, sizeof root, ", root %d", call->root);
    snprintf(out, n, "the %s%s%s%s%s schedule for %s (%zu elements, %s%s%s%s%s)",
             a->coll == TRD_COLL_ALLREDUCE ? "" : trd_coll_name(a->coll),
             a->coll == TRD_COLL_ALLREDUCE ? "" : " ", a->name, *params ? ":" : "", params, shape,
             call->count, m->shm ? "shared memory" : "point to point", mem,
             call->in_place ? ", in place" : "", call->commutative ? "" : ", rank order", root);
}

/* A hash of everything of s the verifier reads but the call: its ops, who
 * holds which, the epochs and the buffer sizes. */
static uint64_t sched_hash(const trd_sched *s)
{
    uint64_t h = 0xcbf29ce484222325ull;
#define MIX(v) (h = (h ^ (uint64_t)(v)) * 0x100000001b3ull)
    MIX(s->seg_slot);
    MIX(s->inl_slot);
    MIX(s->tmp_count);
    for (int r = 0; r < s->nplanned; r++) {
        MIX(s->first[r + 1]);
        MIX(s->nepochs[r]);
    }
    for (size_t i = 0; i < s->nops; i++) {
        const trd_sstep *o = &s->op[i];
        MIX(o->op | o->dst << 8 | o->src << 16 | o->nb << 24 | (uint64_t)o->ctr << 32);
        MIX((uint64_t)(uint32_t)o->peer << 32 | (uint32_t)o->peer2);
        MIX((uint64_t)(uint32_t)o->nwait << 32 | (uint32_t)o->round);
        MIX(o->epoch);
        MIX(o->off);
        MIX(o->soff);
        MIX(o->len);
        MIX(o->rlen);
    }
#undef MIX
    return h;
}

/* Plan a with params for call on sh in memory variant m and verify it;
 * *shared gets whether the schedule uses the node's memory.  A schedule
 * whose hash is *seen (one proved in rank order, where the operation's
 * commutativity changes nothing) is not verified again; *seen gets the
 * hash of a schedule verified for a non-commutative operation (seen NULL:
 * a takes one kind of operation only).  TRD_OK where a refuses it. */
static int check_variant(checker *c, const trd_shape_store *st, const trd_algo *a,
                         const char *params, const trd_call *call, const memv *m, int *shared,
                         uint64_t *seen)
{
    trd_shape sh = st->s;
    static const size_t none[TRD_CMA_MAX] = {0};
    char why[512], what[320];
    trd_sched s;
    sh.shm = m->shm;
    sh.cma = m->shm ? m->cma : 0;
    if (m->cma)
        memcpy(sh.cma_min, none, sizeof none);
    sh.slot_bytes = m->slot ? m->slot : TRD_SEG_SLOT_BYTES;
    *shared = 0;
    if (!accepts(a, params, &sh, call))
        return TRD_OK;
    if (trd_plan(&s, a, params, &sh, call, -1, why, sizeof why)) {
        describe(c, &sh, a, params, call, m, what, sizeof what);
        trd_diag_error(c->d, c->loc, "cannot plan %s: %s", what, why);
        return TRD_ERR_VERIFY;
    }
    *shared = uses_node_memory(&s);
    if (!strcmp(c->brk.alg, a->name))
        trd_sched_drop(&s, c->brk.rank, (size_t)c->brk.op);
    uint64_t h = seen ? sched_hash(&s) : 0;
    if (seen && call->commutative && *seen == h) {
        trd_sched_free(&s);
        return TRD_OK; /* proved already, for any operation */
    }
    if (seen && !call->commutative)
        *seen = h;
    /* the call twice where the slots and counters carry over */
    trd_verify_opts vo = {c->t, 1, *shared ? 2 : 1};
    int rc = trd_sched_verify(&s, &sh, &vo, why, sizeof why);
    c->stats->ops += s.nops * (size_t)vo.repeat;
    c->stats->nverified++;
    if (sh.nranks > c->stats->largest)
        c->stats->largest = sh.nranks;
    trd_sched_free(&s);
    if (rc == TRD_ERR_NOMEM) {
        trd_diag_error(c->d, c->loc, "out of memory");
        return rc;
    }
    if (rc) {
        describe(c, &sh, a, params, call, m, what, sizeof what);
        trd_diag_error(c->d, c->loc, "%s fails verification: %s; nothing written", what, why);
        return TRD_ERR_VERIFY;
    }
    return TRD_OK;
}

/* The element counts of a's variants on sh: a few elements, and enough for
 * a block per rank (blocks are cut on 64-byte lines, 8 doubles). */
static void counts_of(const trd_algo *a, const trd_shape *sh, size_t n[2])
{
    int ppn_min, ppn_max;
    trd_shape_ppn(sh, &ppn_min, &ppn_max);
    n[0] = 3;
    switch (a->coll) {
    case TRD_COLL_REDUCE_SCATTER_BLOCK: /* count is each rank's block: more than a line */
        n[1] = 9;
        break;
    case TRD_COLL_ALLGATHER: /* the same; one node copies them through slots of 8 ppn */
        n[1] = sh->nnodes == 1 ? (size_t)ppn_max * 8 + 5 : 9;
        break;
    case TRD_COLL_REDUCE:
    case TRD_COLL_BCAST:
        n[1] = (size_t)sh->nranks * 8 + 5;
        break;
    default: /* algorithms that split the vector per rank, or per node's ranks */
        n[1] = (size_t)((a->flags & TRD_ALGO_SPLITS) ? sh->nranks : ppn_max) * 8 + 5;
        break;
    }
}

static int check_alg_run(checker *c, const trd_shape_store *st, const trd_algo *a,
                         const char *params, int comm, int ppn_max);

/* Algorithm a with params over st in every variant, for commutative ops
 * (comm 1), non-commutative ones (0) or both (-1); above the rank limit the
 * pair is recorded for a covering shape. */
static int check_alg(checker *c, const trd_shape_store *st, const trd_algo *a, const char *params,
                     int comm)
{
    const trd_shape *sh = &st->s;
    int p = sh->nranks, ppn_min, ppn_max;
    int big = (a->flags & TRD_ALGO_QUADRATIC) || a->coll == TRD_COLL_REDUCE_SCATTER_BLOCK ||
              a->coll == TRD_COLL_ALLGATHER;
    int limit = c->cover ? (big ? TRD_CHECK_COVER_QUADRATIC : TRD_CHECK_COVER_RANKS)
                         : (big ? TRD_CHECK_MAX_QUADRATIC : TRD_CHECK_MAX_RANKS);
    trd_shape_ppn(sh, &ppn_min, &ppn_max);
    if (p > limit) {
        trd_call any = {a->coll, (size_t)p * 8 + 5, 8, 0, 0, comm != 0, 0};
        if (c->cover || !c->cur || !accepts(a, params, sh, &any))
            return TRD_OK; /* a pair the runtime does not run here needs no cover */
        c->stats->skipped++;
        if (trd__grow_n((void **)&c->skips, &c->capskips, c->nskips + 1, sizeof *c->skips))
            return TRD_ERR_NOMEM;
        c->skips[c->nskips++] = (skip){a, params, comm, (int)(c->cur - c->stats->shape)};
        return TRD_OK;
    }
    int before = c->stats->nverified, rc = check_alg_run(c, st, a, params, comm, ppn_max);
    if (rc || c->stats->nverified == before)
        return rc;
    if (c->cur)
        c->cur->executed++;
    if (ppn_min == ppn_max) {
        if (trd__grow_n((void **)&c->done, &c->capdone, c->ndone + 1, sizeof *c->done))
            return TRD_ERR_NOMEM;
        c->done[c->ndone++] = (proved){a, params, sh->nnodes, ppn_min};
    }
    return TRD_OK;
}

/* check_alg's variants, on a shape within the limit. */
static int check_alg_run(checker *c, const trd_shape_store *st, const trd_algo *a,
                         const char *params, int comm, int ppn_max)
{
    const trd_shape *sh = &st->s;
    int p = sh->nranks;
    /* small slots: several chunks per call and slots reused within two calls */
    size_t small = (size_t)8 * 8 * (size_t)(ppn_max > 1 ? ppn_max : 2);
    size_t n[2];
    counts_of(a, sh, n);
    int rooted = a->coll == TRD_COLL_REDUCE || a->coll == TRD_COLL_BCAST;
    /* user-defined ops too (whole vectors) where the algorithm plans them */
    int wholes = (a->flags & TRD_ALGO_WHOLE) &&
                 (a->coll == TRD_COLL_ALLREDUCE || a->coll == TRD_COLL_REDUCE);
    for (int wh = 0; wh <= wholes; wh++)
        for (int k = 0; k < 2; k++)
            for (int in_place = 0; in_place < 2; in_place++)
                for (int ri = 0; ri < (rooted && p > 1 ? 2 : 1); ri++) {
                    /* rank order first: a schedule that does not change with the
                     * operation is then proved once */
                    uint64_t seen[5] = {0};
                    for (int cm = comm < 0 ? 0 : comm; cm <= (comm < 0 ? 1 : comm); cm++) {
                        trd_call call = {a->coll, n[k], 8, ri ? p - 1 : 0, in_place, cm, wh};
                        memv mem[5] = {{1, 0, 0},
                                       {0, 0, 0},
                                       {1, 0, small},
                                       {1, TRD_CMA_READ, 0},
                                       {1, TRD_CMA_READ | TRD_CMA_WRITE, small}};
                        int shared = 0, rc;
                        if (a->coll == TRD_COLL_BCAST && in_place)
                            continue; /* bcast has no in place */
                        for (int i = 0; i < 5; i++) {
                            /* without shared memory: only where the node phases
                             * change; small slots and single copy: only where the
                             * schedule uses the node's memory (a user op: never
                             * single copy) */
                            if ((i == 1 && !(a->flags & TRD_ALGO_NODE_PHASES)) ||
                                (i >= 2 && !shared) || (wh && i >= 3))
                                continue;
                            int sh_i;
                            if ((rc = check_variant(c, st, a, params, &call, &mem[i], &sh_i,
                                                    comm < 0 ? &seen[i] : NULL)))
                                return rc;
                            if (i == 0)
                                shared = sh_i;
                        }
                    }
                }
    return TRD_OK;
}

/* The pieces (every collective but allreduce): every registered algorithm
 * that accepts the shape, in its variants. */
static int check_pieces(checker *c, const trd_shape_store *st)
{
    for (int i = 0; trd_algos[i]; i++) {
        const trd_algo *a = trd_algos[i];
        if (a->coll == TRD_COLL_ALLREDUCE || (a->flags & TRD_ALGO_LIBRARY))
            continue;
        int rc = check_alg(c, st, a, "", -1);
        if (rc)
            return rc;
    }
    return TRD_OK;
}

/* Verify over shape st every algorithm of choice[0..n) with its default
 * parameters and, where with_params, with the range's searched ones (the
 * runtime uses those on communicators of the planned rank count), each pair
 * once; recursive doubling in rank order; the pieces. */
static int check_shape(checker *c, const trd_shape_store *st, const trd_choice *choice, int n,
                       int with_params)
{
    const trd_algo *rd = trd_algo_find(TRD_COLL_ALLREDUCE, "rd", 2);
    int rc = check_alg(c, st, rd, "", 0);
    struct {
        const trd_algo *alg;
        const char *params;
    } pair[2 * TRD_MAX_CHOICES];
    int np = 0;
    for (int i = 0; i < 2 * n && !rc; i++) {
        const char *params = i < n ? "" : choice[i - n].params;
        const trd_algo *a = choice[i % n].alg;
        int seen = i >= n && (!with_params || !*params);
        for (int k = 0; k < np && !seen; k++)
            seen = pair[k].alg == a && !strcmp(pair[k].params, params);
        if (!seen)
            pair[np].alg = a, pair[np++].params = params;
    }
    for (int k = 0; k < np && !rc; k++)
        rc = check_alg(c, st, pair[k].alg, pair[k].params, 1);
    if (!rc)
        rc = check_pieces(c, st);
    return rc;
}

/* The prime factors of n joined by ',' ("1" for 1). */
static void factor_list(int n, char *out, size_t len)
{
    size_t o = 0;
    out[0] = '\0';
    if (n <= 1)
        snprintf(out, len, "1");
    for (int f = 2; n > 1 && o < len; f++)
        while (n % f == 0 && o < len) {
            o += (size_t)snprintf(out + o, len - o, "%s%d", o ? "," : "", f);
            n /= f;
        }
}

/* One node of the first node type: every algorithm the runtime can run on a
 * one-node communicator.  Allreduce: the segment's (shm, shm:rx with the
 * cores' prime factors, shm:tree:2, shm:cyclic, shm:socket; any op where
 * they take it), without shared memory NAP and the ring, rank order rd;
 * the pieces. */
static int check_one_node(checker *c, const trd_machine_plan *p)
{
    trd_shape_store st;
    int *aux, rc, cores = trd_topo_nodetype_ncores(c->t, trd_topo_node_type(c->t, 0));
    char fx[TRD_PARAMS_MAX];
    if (trd_machine_shape(c->t, 1, 0, &st, &aux) != TRD_OK) {
        trd_diag_error(c->d, (trd_loc){c->o->input, 0, 0}, "out of memory");
        return TRD_ERR_NOMEM;
    }
    factor_list(cores, fx, sizeof fx);
    c->shape_name = p->nnodes == 1 ? "the machine's node" : "one node of the first type";
    const trd_algo *rd = trd_algo_find(TRD_COLL_ALLREDUCE, "rd", 2);
    rc = check_alg(c, &st, rd, "", 0);
    for (int i = 0; trd_algos[i] && !rc; i++) {
        const trd_algo *a = trd_algos[i];
        if (a->coll != TRD_COLL_ALLREDUCE || a == rd || (a->flags & TRD_ALGO_LIBRARY))
            continue;
        /* parameters where the default is none: the cores' prime factors
         * (shm:rx), else radix 2 (shm:tree) */
        const char *params = accepts_text(a, "", &st.s)   ? ""
                             : accepts_text(a, fx, &st.s) ? fx
                                                          : "2";
        rc = check_alg(c, &st, a, params, (a->flags & TRD_ALGO_CANDIDATE) ? 1 : -1);
    }
    if (!rc)
        rc = check_pieces(c, &st);
    c->shape_name = NULL;
    trd_shape_free(&st);
    free(aux);
    return rc;
}

/* A new shape record for st (NULL where the table is full: then its pairs
 * above the limit are not recorded, and count as uncovered). */
static trd_check_shape *new_shape(checker *c, const trd_shape *sh)
{
    trd_check_stats *stats = c->stats;
    if (stats->nshapes >= TRD_CHECK_MAX_SHAPES)
        return NULL;
    trd_check_shape *r = &stats->shape[stats->nshapes++];
    memset(r, 0, sizeof *r);
    r->nnodes = sh->nnodes;
    trd_shape_ppn(sh, &r->ppn_min, &r->ppn_max);
    r->ring_runs = -1;
    return r;
}

/* The ring order of a shape too large to execute, proved contention-free
 * by structure (trd_ring_dfs_proof over its nodes in ring order). */
static int prove_ring(checker *c, const trd_shape *sh, trd_check_shape *r)
{
    char why[320];
    int *nodes = malloc(((size_t)sh->nnodes + 1) * sizeof *nodes), runs = 0, rc;
    if (!nodes)
        return TRD_ERR_NOMEM;
    for (int v = 0; v < sh->nnodes; v++)
        nodes[v] = sh->machine_node[v];
    rc = trd_ring_dfs_proof(c->t, nodes, sh->nnodes, &runs, why, sizeof why);
    free(nodes);
    if (rc)
        return rc;
    if (r)
        r->ring_runs = runs;
    if (runs) {
        trd_diag_error(c->d, (trd_loc){c->o->input, 0, 0},
                       "the ring over %d nodes is not contention-free: %s; nothing written",
                       sh->nnodes, why);
        return TRD_ERR_VERIFY;
    }
    return TRD_OK;
}

/* One planned (or whole-machine, or one-node) shape: its pairs within the
 * limits executed, the rest recorded; the ring proved where too large. */
static int check_one_shape(checker *c, const trd_shape_store *st, const trd_choice *choice, int n,
                           int with_params)
{
    c->cur = new_shape(c, &st->s);
    int rc = check_shape(c, st, choice, n, with_params);
    if (!rc && st->s.nranks > TRD_CHECK_MAX_QUADRATIC && st->s.nnodes > 1)
        rc = prove_ring(c, &st->s, c->cur);
    c->cur = NULL;
    return rc;
}

static int is_pow2(int n)
{
    return n > 0 && (n & (n - 1)) == 0;
}

/* The verified pair that covers skip k: the same algorithm and parameters
 * on fewer nodes of the same ranks per node and node-count class; NULL if
 * none. */
static const proved *find_cover(const checker *c, const skip *k, const trd_check_shape *r)
{
    const proved *best = NULL;
    for (size_t i = 0; i < c->ndone; i++) {
        const proved *d = &c->done[i];
        if (d->a == k->a && !strcmp(d->params, k->params) && d->ppn == r->ppn_min &&
            d->nnodes >= 2 && d->nnodes < r->nnodes && is_pow2(d->nnodes) == is_pow2(r->nnodes) &&
            (!best || d->nnodes > best->nnodes))
            best = d;
    }
    return best;
}

/* Cover every recorded pair: by a verified pair of the same structure, or
 * by verifying one on 2 (a power of two) or 3 nodes of the same ranks per
 * node. */
static int cover_skips(checker *c)
{
    trd_check_stats *stats = c->stats;
    int nn = trd_topo_nnodes(c->t);
    for (size_t i = 0; i < c->nskips; i++) {
        const skip *k = &c->skips[i];
        trd_check_shape *r = &stats->shape[k->shape];
        const proved *d = r->ppn_min == r->ppn_max ? find_cover(c, k, r) : NULL;
        int want = is_pow2(r->nnodes) ? 2 : 3;
        if (!d && r->ppn_min == r->ppn_max && want < r->nnodes && want <= nn) {
            trd_shape_store st;
            int *aux, rc;
            if (trd_machine_shape(c->t, want, r->ppn_min, &st, &aux) != TRD_OK)
                return TRD_ERR_NOMEM;
            c->cover = 1;
            rc = check_alg(c, &st, k->a, k->params, k->comm);
            c->cover = 0;
            trd_shape_free(&st);
            free(aux);
            if (rc)
                return rc;
            d = find_cover(c, k, r);
        }
        if (d) {
            stats->covered++;
            r->covered++;
            if (d->nnodes > r->rep_nnodes)
                r->rep_nnodes = d->nnodes;
        } else {
            r->uncovered++;
            if (!r->uncovered_alg)
                r->uncovered_alg = k->a->name;
        }
    }
    return TRD_OK;
}

/* A checker for o's input; TRD_ERR_INPUT (in d) for a bad --break-schedule. */
static int checker_init(checker *c, trd_topo_t t, const trd_check_opts *o, trd_diag *d,
                        trd_check_stats *stats)
{
    *c = (checker){
        .t = t, .o = o, .d = d, .stats = stats, .brk = {"", -1, -1}, .loc = {o->input, 0, 0}};
    memset(stats, 0, sizeof *stats);
    if (o->break_spec && parse_break(o->break_spec, &c->brk)) {
        trd_diag_error(d, (trd_loc){o->input, 0, 0},
                       "--break-schedule: expected ALG:RANK:OP, not '%s'", o->break_spec);
        return TRD_ERR_INPUT;
    }
    return TRD_OK;
}

int trd_check_schedules(trd_topo_t t, const trd_machine_plan *p, const trd_check_opts *o,
                        trd_diag *d, trd_check_stats *stats)
{
    clock_t t0 = clock();
    checker c;
    int rc = TRD_OK;
    if (checker_init(&c, t, o, d, stats) != TRD_OK)
        return TRD_ERR_INPUT;
    for (int s = 0; s < p->nshapes && !rc; s++) {
        trd_shape_store st;
        int *aux;
        if (trd_machine_shape(t, p->shape[s].nnodes, p->shape[s].ppn, &st, &aux) != TRD_OK) {
            rc = TRD_ERR_NOMEM;
            break;
        }
        rc = check_one_shape(&c, &st, p->shape[s].choice, p->shape[s].nchoices, 1);
        trd_shape_free(&st);
        free(aux);
    }
    /* the whole machine with every node's own core count, where that is not
     * a planned shape: the searched parameters apply where its rank count is
     * the planned one */
    int ranks = 0, uniform = 1;
    for (int v = 0; v < p->nnodes; v++) {
        int cores = trd_topo_nodetype_ncores(t, trd_topo_node_type(t, v));
        ranks += cores;
        uniform &= cores == p->ppn;
    }
    if (!rc && p->nnodes > 1 && !uniform) {
        trd_shape_store st;
        int *aux;
        if (trd_machine_shape(t, 0, 0, &st, &aux) != TRD_OK) {
            rc = TRD_ERR_NOMEM;
        } else {
            c.shape_name = "the whole machine";
            rc = check_one_shape(&c, &st, p->choice, p->nchoices, ranks == p->nnodes * p->ppn);
            c.shape_name = NULL;
            trd_shape_free(&st);
            free(aux);
        }
    }
    if (!rc) {
        c.cur = stats->nshapes < TRD_CHECK_MAX_SHAPES ? &stats->shape[stats->nshapes] : NULL;
        int *aux = NULL;
        trd_shape_store st;
        if (c.cur && trd_machine_shape(t, 1, 0, &st, &aux) == TRD_OK) {
            new_shape(&c, &st.s);
            trd_shape_free(&st);
            free(aux);
        }
        rc = check_one_node(&c, p);
        c.cur = NULL;
    }
    if (!rc)
        rc = cover_skips(&c);
    if (rc == TRD_ERR_NOMEM)
        trd_diag_error(d, (trd_loc){o->input, 0, 0}, "out of memory");
    free(c.skips);
    free(c.done);
    stats->seconds = (double)(clock() - t0) / CLOCKS_PER_SEC;
    return rc;
}

/* Whether range i of w repeats an earlier range's collective, shape and
 * algorithm (verified once). */
static int wisdom_seen(const trd_wisdom *w, int i)
{
    const trd_wisdom_range *r = &w->range[i];
    for (int k = 0; k < i; k++) {
        const trd_wisdom_range *o = &w->range[k];
        if (o->coll == r->coll && o->nnodes == r->nnodes && o->ppn == r->ppn &&
            !strcmp(o->alg, r->alg))
            return 1;
    }
    return 0;
}

/* Range r's algorithm a with params on st: it must take the shape and a
 * call of r's collective (doubles, a commutative operation), then verify
 * in every variant; above the rank limits on a shape of 2 or 3 nodes
 * (power of two or not) with the same ranks per node, the covering
 * argument of TRD_CHECK_COVER_RANKS. */
static int check_wisdom_range(checker *c, const trd_wisdom_range *r, const trd_algo *a,
                              const char *params, int *covered)
{
    trd_shape_store st;
    int *aux, rc, nn = r->nnodes;
    char why[512];
    if (r->nnodes > trd_topo_nnodes(c->t)) {
        trd_diag_error(c->d, c->loc, "%s %dx%d: the machine has %d node%s", trd_coll_name(r->coll),
                       r->nnodes, r->ppn, trd_topo_nnodes(c->t),
                       trd_topo_nnodes(c->t) == 1 ? "" : "s");
        return TRD_ERR_INPUT;
    }
    if (trd_machine_shape(c->t, nn, r->ppn, &st, &aux) != TRD_OK)
        return TRD_ERR_NOMEM;
    trd_sched s;
    trd_call call = {a->coll, (size_t)st.s.nranks * 8 + 5, 8, 0, 0, 1, 0};
    if (trd_plan(&s, a, params, &st.s, &call, -1, why, sizeof why)) {
        trd_diag_error(c->d, c->loc, "%s %dx%d: %s does not plan for %d node%s x %d ranks: %s",
                       trd_coll_name(r->coll), r->nnodes, r->ppn, r->alg, nn, nn == 1 ? "" : "s",
                       r->ppn, why);
        rc = TRD_ERR_INPUT;
    } else {
        trd_sched_free(&s);
        int big = (a->flags & TRD_ALGO_QUADRATIC) || a->coll == TRD_COLL_REDUCE_SCATTER_BLOCK ||
                  a->coll == TRD_COLL_ALLGATHER;
        int want = nn & (nn - 1) ? 3 : 2;
        if (st.s.nranks > (big ? TRD_CHECK_MAX_QUADRATIC : TRD_CHECK_MAX_RANKS)) {
            c->cover = 1; /* the covering shape's limits */
            if (want < nn) {
                trd_shape_free(&st);
                free(aux);
                if (trd_machine_shape(c->t, want, r->ppn, &st, &aux) != TRD_OK)
                    return TRD_ERR_NOMEM;
                (*covered)++;
            }
        }
        int before = c->stats->nverified;
        rc = check_alg(c, &st, a, params, 1);
        c->cover = 0;
        if (rc == TRD_OK && c->stats->nverified == before)
            c->stats->skipped++; /* above the cover limits too: not executed */
    }
    trd_shape_free(&st);
    free(aux);
    return rc;
}

int trd_check_wisdom(trd_topo_t t, const trd_wisdom *w, const trd_check_opts *o, trd_diag *d,
                     trd_check_stats *stats)
{
    clock_t t0 = clock();
    checker c;
    int rc = TRD_OK;
    if (checker_init(&c, t, o, d, stats) != TRD_OK)
        return TRD_ERR_INPUT;
    for (int i = 0; i < w->nranges && !rc; i++) {
        const trd_wisdom_range *r = &w->range[i];
        const char *params = "";
        if (trd_wisdom_is_model(r)) /* the model's tables: verified with the plan */
            continue;
        const trd_algo *a = trd_algo_parse(r->coll, r->alg, &params);
        if (!a || (a->flags & TRD_ALGO_LIBRARY) || wisdom_seen(w, i))
            continue;
        const char *file = trd_wisdom_range_file(w, r);
        c.loc = (trd_loc){file ? file : o->input, r->line, 1};
        rc = check_wisdom_range(&c, r, a, params, &stats->covered);
    }
    if (rc == TRD_ERR_NOMEM)
        trd_diag_error(d, (trd_loc){o->input, 0, 0}, "out of memory");
    free(c.skips);
    free(c.done);
    stats->seconds = (double)(clock() - t0) / CLOCKS_PER_SEC;
    return rc;
}

int trd_check_report(FILE *f, const trd_check_stats *c)
{
    int executed = 0, structural = 0, partial = 0;
    for (int i = 0; i < c->nshapes; i++) {
        const trd_check_shape *r = &c->shape[i];
        if (r->uncovered)
            partial++;
        else if (r->covered)
            structural++;
        else
            executed++;
    }
    fprintf(f,
            "\nschedules verified before writing: %d by symbolic execution of every rank (each\n"
            "  element reduced over all ranks once, sends and receives matched, no read before a\n"
            "  write, no race on the node's memory, ring contention on the switch tree), on up to\n"
            "  %d ranks, %zu ops, %.2f s\n",
            c->nverified, c->largest, c->ops, c->seconds);
    fprintf(
        f,
        "  %d checked shape%s executed in full (every pair up to %d ranks, %d for the ring and\n"
        "  the pieces whose buffers hold p blocks); %d by the structural argument; %d with\n"
        "  pairs that nothing covers\n",
        executed, executed == 1 ? "" : "s", TRD_CHECK_MAX_RANKS, TRD_CHECK_MAX_QUADRATIC,
        structural, partial);
    if (c->skipped) {
        fprintf(f,
                "  the structural argument, for shapes above the limits: a planner builds a\n"
                "  schedule from (nodes, ranks per node, parameters); each pair too large to\n"
                "  execute was verified on a smaller shape of the same ranks per node (the same\n"
                "  node phases, lanes and radix) and node-count class (a power of two or not: the\n"
                "  fold of recursive doubling and halving, NAP's short groups); the larger shape\n"
                "  itself is not executed, so this is an argument over the planners, not a proof\n"
                "  at that shape.  The ring order of each such shape is proved contention-free\n"
                "  structurally: every switch's subtree is one contiguous run of the ring (a DFS\n"
                "  order), so every directed link carries one message of a step [TREE Lemma 4].\n");
        for (int i = 0; i < c->nshapes; i++) {
            const trd_check_shape *r = &c->shape[i];
            if (!r->covered && !r->uncovered)
                continue;
            char ppn[32];
            if (r->ppn_min == r->ppn_max)
                snprintf(ppn, sizeof ppn, "%d", r->ppn_min);
            else
                snprintf(ppn, sizeof ppn, "%d..%d", r->ppn_min, r->ppn_max);
            fprintf(f, "    %d x %s: %d pair%s executed, %d covered", r->nnodes, ppn, r->executed,
                    r->executed == 1 ? "" : "s", r->covered);
            if (r->covered)
                fprintf(f, " (by shapes of up to %d x %s)", r->rep_nnodes, ppn);
            if (r->uncovered)
                fprintf(f, ", %d NOT verified (e.g. %s)", r->uncovered, r->uncovered_alg);
            if (r->ring_runs == 0)
                fprintf(f, "; ring order proved");
            fprintf(f, "\n");
        }
    }
    fprintf(
        f,
        "  summary: %d shapes executed, %d structural (%d pairs covered), %d pairs not verified\n",
        executed, structural, c->covered, c->skipped - c->covered);
    return TRD_OK;
}
