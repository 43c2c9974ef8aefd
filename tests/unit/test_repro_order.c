/* The order of reduction of the reproducible allreduce (runtime/algo/
 * allreduce_repro.c), without MPI: every rank's schedule is executed for all
 * ranks at once on symbolic values -- each element holds an expression, a
 * leaf per rank's input or (left op right), interned so that equal
 * expressions have equal ids -- and every element of every rank's result
 * must be the one expression ((x0 op x1) op (x2 op x3)) op ... that depends
 * only on the rank count: over placements (block and shuffled), node counts,
 * uneven nodes, counts (fewer elements than ranks too), in place or not,
 * with and without shared memory.  The verifier (test_verify) proves each
 * element reduced once over all ranks, in rank order; this proves the
 * parenthesisation, which is what floating-point results depend on.  The
 * ring, whose order follows the placement, is shown to fail the same check.
 * User-defined ops, called on whole vectors, run the same tree as a binomial
 * reduce and bcast: the same expression. */
#include <CUnit/Basic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "algo.h"
#include "test_util.h"

/* ---- Expressions ------------------------------------------------------------- */

/* Ids 1..p are the ranks' inputs; id p+1+k is pair[k] = (left, right). */
typedef struct exprs {
    int p, n, cap;
    int (*pair)[2];
} exprs;

static int intern(exprs *e, int l, int r)
{
    for (int k = 0; k < e->n; k++)
        if (e->pair[k][0] == l && e->pair[k][1] == r)
            return e->p + 1 + k;
    if (e->n == e->cap) {
        e->cap = e->cap ? 2 * e->cap : 64;
        e->pair = realloc(e->pair, (size_t)e->cap * sizeof *e->pair);
        CU_ASSERT_FATAL(e->pair != NULL);
    }
    e->pair[e->n][0] = l;
    e->pair[e->n][1] = r;
    return e->p + 1 + e->n++;
}

/* The fixed order over p ranks: pairs at distance 1, 2, 4, ..., each
 * group's value at its last rank, a group without a partner carried up. */
static int tree_expr(exprs *e, int p)
{
    int *v = calloc((size_t)p, sizeof *v), id;
    CU_ASSERT_FATAL(v != NULL && p >= 1);
    for (int j = 0; j < p; j++)
        v[j] = j + 1;
    for (int s = 1; s < p; s *= 2)
        for (int j = 0; j + s < p; j += 2 * s) {
            int l = j + s - 1, r = (j + 2 * s < p ? j + 2 * s : p) - 1;
            v[r] = intern(e, v[l], v[r]);
        }
    id = v[p - 1];
    free(v);
    return id;
}

/* ---- Symbolic execution of point-to-point schedules --------------------------- */

typedef struct msg {
    int *data;
    size_t len;
    struct msg *next;
} msg;

typedef struct rank_state {
    int *buf[3]; /* TRD_B_SEND, TRD_B_RECV, TRD_B_TMP */
    size_t pc, nops, got;
    const trd_sstep *ops;
    int posted;
} rank_state;

static int is_msg(int op)
{
    return op == TRD_S_SEND || op == TRD_S_RECV || op == TRD_S_SENDRECV;
}

/* Runs every rank of s (planned for all) over p ranks; sends are buffered,
 * a window's sends posted before its receives, messages between two ranks
 * matched in order.  Leaves each rank's recvbuf in st[r].buf[TRD_B_RECV];
 * returns 0, or -1 if the schedule uses what this interpreter has not
 * (the segment, another rank's memory) or does not finish. */
static int run_symbolic(const trd_sched *s, exprs *e, int p, rank_state *st)
{
    msg **head = calloc((size_t)p * (size_t)p, sizeof *head);
    int rc = 0, left = p;
    const trd_call *c = &s->call;
    for (int r = 0; r < p; r++) {
        size_t ns, nr;
        trd_call_sizes(c, p, r, &ns, &nr);
        memset(&st[r], 0, sizeof st[r]);
        st[r].ops = trd_sched_ops(s, r, &st[r].nops);
        st[r].buf[TRD_B_SEND] = calloc(ns + 1, sizeof(int));
        st[r].buf[TRD_B_RECV] = calloc(nr + 1, sizeof(int));
        st[r].buf[TRD_B_TMP] = calloc(s->tmp_count + 1, sizeof(int));
        for (size_t i = 0; i < c->count; i++)
            st[r].buf[c->in_place ? TRD_B_RECV : TRD_B_SEND][i] = r + 1;
        /* only messages, and reductions and copies within the rank's own
         * user buffers and temporary */
        for (size_t k = 0; k < st[r].nops; k++) {
            const trd_sstep *o = &st[r].ops[k];
            int local = o->op == TRD_S_REDUCE || o->op == TRD_S_COPY;
            if ((!local && !is_msg(o->op)) || (local && (o->peer != -1 || o->peer2 != -1)) ||
                (o->op != TRD_S_RECV && o->src > TRD_B_TMP) ||
                (o->op != TRD_S_SEND && o->dst > TRD_B_TMP))
                rc = -1;
        }
    }
    while (rc == 0 && left > 0) {
        int progress = 0;
        left = 0;
        for (int r = 0; r < p && rc == 0; r++) {
            rank_state *x = &st[r];
            while (x->pc < x->nops && rc == 0) {
                const trd_sstep *o = &x->ops[x->pc];
                if (o->op == TRD_S_REDUCE || o->op == TRD_S_COPY) {
                    int *d = x->buf[o->dst] + o->off, *a = x->buf[o->src] + o->soff;
                    for (size_t i = 0; i < o->len; i++)
                        d[i] = o->op == TRD_S_COPY ? a[i] : intern(e, a[i], d[i]);
                    x->pc++;
                    progress = 1;
                    continue;
                }
                size_t end = x->pc; /* the window: ops with nb, and the one after */
                while (end < x->nops && is_msg(x->ops[end].op))
                    if (!x->ops[end++].nb)
                        break;
                if (!x->posted) { /* every send of the window, buffered */
                    for (size_t k = x->pc; k < end; k++) {
                        const trd_sstep *w = &x->ops[k];
                        if (w->op == TRD_S_RECV)
                            continue;
                        msg *m = malloc(sizeof *m), **q = &head[(size_t)r * (size_t)p + w->peer];
                        m->len = w->len;
                        m->data = malloc((w->len + 1) * sizeof(int));
                        memcpy(m->data, x->buf[w->src] + w->soff, w->len * sizeof(int));
                        m->next = NULL;
                        while (*q)
                            q = &(*q)->next;
                        *q = m;
                    }
                    x->posted = 1;
                    progress = 1;
                }
                /* its receives, in order, as far as messages have arrived */
                for (; x->pc + x->got < end; x->got++) {
                    const trd_sstep *w = &x->ops[x->pc + x->got];
                    if (w->op == TRD_S_SEND)
                        continue;
                    int from = w->op == TRD_S_SENDRECV ? w->peer2 : w->peer;
                    size_t len = w->op == TRD_S_SENDRECV ? w->rlen : w->len;
                    msg **q = &head[(size_t)from * (size_t)p + r], *m = *q;
                    if (!m)
                        break;
                    if (m->len != len) {
                        rc = -1;
                        break;
                    }
                    memcpy(x->buf[w->dst] + w->off, m->data, len * sizeof(int));
                    *q = m->next;
                    free(m->data);
                    free(m);
                    progress = 1;
                }
                if (x->pc + x->got < end || rc)
                    break;
                x->pc = end;
                x->got = 0;
                x->posted = 0;
            }
            if (x->pc < x->nops)
                left++;
        }
        if (!progress && left)
            rc = -1; /* deadlock */
    }
    for (size_t k = 0; k < (size_t)p * (size_t)p; k++)
        while (head[k]) {
            msg *m = head[k];
            head[k] = m->next;
            free(m->data);
            free(m);
            rc = -1; /* a message nobody received */
        }
    free(head);
    return rc;
}

static void free_states(rank_state *st, int p)
{
    for (int r = 0; r < p; r++)
        for (int b = 0; b < 3; b++)
            free(st[r].buf[b]);
}

/* Plans algorithm name on nnodes nodes of ppn[v] ranks (placement seed) for
 * count elements and runs it symbolically: the number of result elements,
 * over all ranks, that are not the fixed-order tree (-1: did not run). */
static long not_tree(const char *name, int nnodes, const int *ppn, unsigned seed, size_t count,
                     int in_place, int shm, int whole)
{
    trd_shape_store st;
    trd_sched s;
    char why[256];
    exprs e = {0};
    long bad = 0;
    const trd_algo *a = trd_algo_find(TRD_COLL_ALLREDUCE, name, strlen(name));
    CU_ASSERT_FATAL(a != NULL);
    CU_ASSERT_FATAL(trd_shape_init(&st, nnodes, ppn, seed) == 0);
    st.s.shm = shm;
    int p = st.s.nranks;
    trd_call call = {TRD_COLL_ALLREDUCE, count, 8, 0, in_place, 1, whole};
    if (trd_plan(&s, a, "", &st.s, &call, -1, why, sizeof why) != 0) {
        fprintf(stderr, "\n  %s: %s", name, why);
        trd_shape_free(&st);
        return -1;
    }
    e.p = p;
    int want = tree_expr(&e, p);
    rank_state *rs = calloc((size_t)p, sizeof *rs);
    if (run_symbolic(&s, &e, p, rs) != 0) {
        bad = -1;
    } else {
        for (int r = 0; r < p; r++)
            for (size_t i = 0; i < count; i++)
                bad += rs[r].buf[TRD_B_RECV][i] != want;
    }
    if (bad)
        fprintf(stderr, "\n    %s on %d nodes, %d ranks, seed %u, count %zu, %s, %s%s: %ld", name,
                nnodes, p, seed, count, in_place ? "in place" : "out of place", shm ? "shm" : "p2p",
                whole ? ", whole vectors" : "", bad);
    free_states(rs, p);
    free(rs);
    free(e.pair);
    trd_sched_free(&s);
    trd_shape_free(&st);
    return bad;
}

/* ---- Tests ---------------------------------------------------------------------- */

/* Every placement and count, for predefined ops (the vector split) or for
 * user-defined ones (whole vectors). */
static void fixed_order(int whole)
{
    static const int nodes[] = {1, 2, 3, 4, 5, 7};
    static const int ppns[] = {1, 2, 3};
    static const int uneven[][6] = {{3, 3, 1, 2}, {2, 1, 4}, {5, 1, 1, 3, 2, 2}};
    static const int nuneven[] = {4, 3, 6};
    int runs = 0;
    for (size_t i = 0; i < sizeof nodes / sizeof *nodes; i++)
        for (size_t j = 0; j < sizeof ppns / sizeof *ppns; j++) {
            int ppn[8], p = nodes[i] * ppns[j];
            for (int v = 0; v < nodes[i]; v++)
                ppn[v] = ppns[j];
            size_t counts[] = {1, 7, (size_t)p * 8 + 5};
            for (unsigned seed = 0; seed < 3; seed++)
                for (int k = 0; k < 3; k++)
                    for (int ip = 0; ip < 2; ip++, runs++)
                        CU_ASSERT_EQUAL(not_tree("repro", nodes[i], ppn, seed * 7919, counts[k], ip,
                                                 (k + ip) % 2, whole),
                                        0);
        }
    for (size_t u = 0; u < sizeof nuneven / sizeof *nuneven; u++)
        for (unsigned seed = 0; seed < 3; seed++, runs++)
            CU_ASSERT_EQUAL(
                not_tree("repro", nuneven[u], uneven[u], seed, 1000, seed % 2, 1, whole), 0);
    int ppn4[16] = {4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4};
    CU_ASSERT_EQUAL(not_tree("repro", 16, ppn4, 5, 1000, 0, 1, whole), 0);
    CU_ASSERT_EQUAL(not_tree("repro", 13, ppn4, 0, 77, 1, 0, whole), 0);
    fprintf(stderr, "\n    %d placements x counts in the fixed order", runs + 2);
}

static void test_fixed_order(void)
{
    fixed_order(0);
}

/* A user-defined op gets whole vectors: the tree as a binomial reduce and
 * bcast, the same expression, so the same bits as a predefined op's. */
static void test_fixed_order_whole(void)
{
    fixed_order(1);
}

/* The check can fail: the ring reduces each block starting at another rank of
 * the DFS order, so its expressions are not the tree's. */
static void test_ring_differs(void)
{
    int two[2] = {2, 2}, ones[3] = {1, 1, 1};
    CU_ASSERT(not_tree("ring", 2, two, 0, 100, 0, 1, 0) > 0);
    CU_ASSERT(not_tree("ring", 3, ones, 3, 100, 0, 1, 0) > 0);
}

int main(void)
{
    static const trd_test_case tests[] = {
        {"repro: one expression per rank count, over placements and counts", test_fixed_order},
        {"repro for user ops (whole vectors): the same expression", test_fixed_order_whole},
        {"ring: the check fails on an order that follows the placement", test_ring_differs},
    };
    return trd_test_main("repro_order", tests, TRD_NTESTS(tests));
}
