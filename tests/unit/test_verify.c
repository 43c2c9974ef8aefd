/* Schedules of the algorithm registry (runtime/algo) and their verifier
 * (gen/verify/verify.h), without MPI:
 *   - every registered algorithm over a matrix of communicator shapes
 *     (1..64 ranks, primes, uneven ranks per node, shuffled placements),
 *     counts, in place or not, commutative or not where it takes both, with
 *     and without shared memory, single copy and small segment slots, roots
 *     0 and p-1, the call twice: the verifier proves each, and each
 *     algorithm is proved on many shapes; large shapes timed;
 *   - schedules broken on purpose (a dropped reduce, a wrong length, swapped
 *     operands, a missing send, an early read, a missing wait or signal, an
 *     overwrite of a slot still read, a user buffer read after its owner
 *     returned, an element at the wrong offset, a wrong allgather block, a
 *     ring off the DFS order): the verifier refuses each with its exact
 *     message;
 *   - switch trees of 1..4 levels: every candidate verified with the
 *     contention check, and the generator's whole chain;
 *   - one node's ops as the runtime plans them: allreduce by single copy in
 *     one step or two, bcast's root writing a part from 1 MiB, bcast through
 *     the segment in chunks at mid sizes. */
#include <CUnit/Basic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "algo.h"
#include "check.h"
#include "cost.h"
#include "plan.h"
#include "shape.h"
#include "test_util.h"
#include "tune.h"
#include "verify.h"

/* ---- Planning and verifying one variant -------------------------------------- */

/* What a node's memory offers in a variant. */
typedef struct mem {
    int shm, cma;
    size_t cma_min, slot; /* slot 0: the runtime's */
} mem;

static const mem mems[] = {
    {1, 0, 0, 0},                              /* the segment, no single copy */
    {0, 0, 0, 0},                              /* point to point */
    {1, 0, 0, 256},                            /* small slots: chunks, slot reuse */
    {1, TRD_CMA_READ, 64, 0},                  /* single-copy reads from 64 bytes */
    {1, TRD_CMA_READ | TRD_CMA_WRITE, 0, 256}, /* reads and writes from 0 bytes */
};
#define NMEMS ((int)(sizeof mems / sizeof mems[0]))

static int verified[64]; /* per registry index */

/* Whether a accepts params and call on sh (refusals are skipped, not
 * failures). */
static int accepts(const trd_algo *a, const char *params, const trd_shape *sh, const trd_call *call)
{
    void *pp = a->params_size ? calloc(1, a->params_size) : NULL;
    char why[256];
    int ok = a->parse ? a->parse(params, sh, pp, why, sizeof why) == 0 : !*params;
    if (ok && a->refuse && a->refuse(sh, call, pp))
        ok = 0;
    free(pp);
    return ok;
}

static int registry_index(const trd_algo *a)
{
    int i = 0;
    while (trd_algos[i] && trd_algos[i] != a)
        i++;
    return i;
}

/* Plan a with params on nnodes nodes of ppn[v] ranks (placement seed) for
 * call in memory m, verify with repeat calls; report a failure.  Returns
 * 1 verified, 0 refused. */
static int check_one(const trd_algo *a, const char *params, int nnodes, const int *ppn,
                     unsigned seed, trd_call call, const mem *m, int repeat)
{
    trd_shape_store st;
    trd_sched s;
    char why[512];
    CU_ASSERT_FATAL(trd_shape_init(&st, nnodes, ppn, seed) == 0);
    st.s.shm = m->shm;
    st.s.cma = m->shm ? m->cma : 0;
    if (m->cma)
        for (int i = 0; i < TRD_CMA_MAX; i++)
            st.s.cma_min[i] = m->cma_min;
    if (m->slot)
        st.s.slot_bytes = m->slot;
    if (call.root >= st.s.nranks)
        call.root = st.s.nranks - 1;
    if (!accepts(a, params, &st.s, &call)) {
        trd_shape_free(&st);
        return 0;
    }
    int rc = trd_plan(&s, a, params, &st.s, &call, -1, why, sizeof why);
    CU_ASSERT_EQUAL(rc, 0);
    if (rc == 0) {
        trd_verify_opts o = {NULL, 0, repeat};
        rc = trd_sched_verify(&s, &st.s, &o, why, sizeof why);
        trd_sched_free(&s);
    }
    if (rc)
        fprintf(stderr,
                "\n  %s %s%s%s on %d nodes, %d ranks, seed %u, count %zu, %s, %s, %s%s%s, "
                "root %d: %s\n",
                trd_coll_name(a->coll), a->name, *params ? ":" : "", params, nnodes, st.s.nranks,
                seed, call.count, call.in_place ? "in place" : "out of place",
                call.commutative ? "commutative" : "rank order", m->shm ? "shm" : "p2p",
                m->cma ? " cma" : "", m->slot ? " small slots" : "", call.root, why);
    CU_ASSERT_EQUAL(rc, TRD_OK);
    verified[registry_index(a)]++;
    trd_shape_free(&st);
    return 1;
}

/* Rabenseifner's reduce with either halving order (near: distances 1, 2,
 * 4, ...; far: q/2 first) over the ring order, on shapes with and without
 * a power of two of ranks, block-wise and shuffled, every root kind (the
 * fold's even rank, its odd one, a rank above the fold), in place or not. */
static void test_reduce_halving(void)
{
    const trd_algo *a = trd_algo_find(TRD_COLL_REDUCE, "rabenseifner", 12);
    static const int nodes[] = {2, 3, 4, 5, 7, 8, 13};
    static const char *const orders[] = {"", "near", "far"};
    CU_ASSERT_FATAL(a != NULL);
    int n = 0;
    for (size_t o = 0; o < 3; o++)
        for (size_t i = 0; i < sizeof nodes / sizeof *nodes; i++)
            for (int ppn1 = 1; ppn1 <= 3; ppn1++)
                for (unsigned seed = 0; seed < 2; seed++) {
                    int ppn[16], p = nodes[i] * ppn1;
                    for (int v = 0; v < nodes[i]; v++)
                        ppn[v] = ppn1;
                    int roots[3] = {0, 1, p - 1};
                    for (int r = 0; r < 3; r++) {
                        trd_call call = {
                            TRD_COLL_REDUCE, (size_t)p * 5 + 3, 8, roots[r], r == 1, 1, 0};
                        n += check_one(a, orders[o], nodes[i], ppn, seed ? 7u * (unsigned)p : 0,
                                       call, &mems[(o + i + r) % NMEMS], 2);
                    }
                }
    CU_ASSERT_EQUAL(n, 3 * 7 * 3 * 2 * 3);
    fprintf(stderr, "%d schedules verified ", n);
}

/* The parameters the one-node algorithms without a default take: the prime
 * factors of the ranks (shm:rx), else a radix of 2 (shm:tree). */
static const char *params_for(const trd_algo *a, const trd_shape *sh, char *buf, size_t len)
{
    trd_call call = {a->coll, (size_t)sh->nranks, 8, 0, 0, 1, 0};
    size_t o = 0;
    int n = sh->nranks;
    if (!a->parse || accepts(a, "", sh, &call))
        return "";
    buf[0] = '\0';
    for (int f = 2; n > 1; f++)
        while (n % f == 0 && o < len) {
            o += (size_t)snprintf(buf + o, len - o, "%s%d", o ? "," : "", f);
            n /= f;
        }
    if (!o)
        snprintf(buf, len, "1");
    void *pp = a->params_size ? calloc(1, a->params_size) : NULL;
    char why[128];
    int ok = a->parse(buf, sh, pp, why, sizeof why) == 0;
    free(pp);
    return ok ? buf : "2";
}

/* Algorithm a on one shape at three counts, in four variants each: in place
 * or not, commutative or not, a memory variant and a root that rotate with
 * the shape. */
static int check_shape_variants(const trd_algo *a, int nnodes, const int *ppn, unsigned seed,
                                int turn)
{
    trd_shape_store st;
    char buf[64];
    int p = 0, n = 0;
    for (int v = 0; v < nnodes; v++)
        p += ppn[v];
    CU_ASSERT_FATAL(trd_shape_init(&st, nnodes, ppn, seed) == 0);
    const char *params = params_for(a, &st.s, buf, sizeof buf);
    trd_shape_free(&st);
    /* reduce_scatter_block and allgather count per rank's block */
    int blocks = a->coll == TRD_COLL_REDUCE_SCATTER_BLOCK || a->coll == TRD_COLL_ALLGATHER;
    size_t counts[3] = {1, 7, blocks ? 8 * 3 + 5 : (size_t)p * 8 * 3 + 5};
    for (int k = 0; k < 3; k++)
        for (int in_place = 0; in_place < 2; in_place++)
            for (int comm = 1; comm >= 0; comm--) {
                int v = turn + k + in_place + 2 * comm;
                trd_call call = {a->coll,
                                 counts[k],
                                 8,
                                 (turn + k) % 2 ? p - 1 : 0,
                                 a->coll == TRD_COLL_BCAST ? 0 : in_place,
                                 comm,
                                 0};
                n += check_one(a, params, nnodes, ppn, seed, call, &mems[v % NMEMS], 2);
            }
    return n;
}

static void test_every_algorithm(void)
{
    static const int nodes[] = {1, 2, 3, 4, 5, 7, 8, 13, 16};
    static const int ppns[] = {1, 2, 3, 4};
    static const int uneven[][6] = {{3, 3, 1, 2}, {2, 1, 4}, {2, 2, 5}, {5, 1, 1, 3, 2, 2}};
    static const int nuneven[] = {4, 3, 3, 6};
    clock_t t0 = clock();
    memset(verified, 0, sizeof verified);
    for (int ai = 0; trd_algos[ai]; ai++) {
        const trd_algo *a = trd_algos[ai];
        int turn = 0;
        for (size_t i = 0; i < sizeof nodes / sizeof *nodes; i++)
            for (size_t j = 0; j < sizeof ppns / sizeof *ppns; j++, turn++) {
                int ppn[16];
                for (int v = 0; v < nodes[i]; v++)
                    ppn[v] = ppns[j];
                /* placements that are not block-wise, except on one node
                 * (whose algorithms need local order = rank order) */
                unsigned seed = nodes[i] == 1 ? 0 : (unsigned)(17 * (i + 1) + j);
                check_shape_variants(a, nodes[i], ppn, seed, turn);
                if (seed)
                    check_shape_variants(a, nodes[i], ppn, 0, turn + 1);
            }
        for (size_t u = 0; u < sizeof nuneven / sizeof *nuneven; u++)
            for (unsigned seed = 0; seed < 2; seed++, turn++)
                check_shape_variants(a, nuneven[u], uneven[u], seed, turn);
    }
    /* parameters: leader and lane algorithms, RM schedules, radices (NAP's per step) */
    int ppn4[8] = {4, 4, 4, 4, 4, 4, 4, 4}, ones[12] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1};
    const trd_algo *smp = trd_algo_find(TRD_COLL_ALLREDUCE, "smp", 3);
    const trd_algo *flex = trd_algo_find(TRD_COLL_ALLREDUCE, "flex", 4);
    const trd_algo *rm = trd_algo_find(TRD_COLL_ALLREDUCE, "rm", 2);
    const trd_algo *rx = trd_algo_find(TRD_COLL_ALLREDUCE, "shm:rx", 6);
    const trd_algo *tree = trd_algo_find(TRD_COLL_ALLREDUCE, "shm:tree", 8);
    const trd_algo *sa = trd_algo_find(TRD_COLL_BCAST, "scatter_allgather", 17);
    const trd_algo *nap = trd_algo_find(TRD_COLL_ALLREDUCE, "nap", 3);
    struct {
        const trd_algo *a;
        const char *params;
        int nnodes;
        const int *ppn;
        unsigned seed;
        size_t count;
        int in_place, comm;
    } extra[] = {
        {smp, "ring", 8, ppn4, 0, 333, 0, 1},
        {smp, "rabenseifner", 5, ppn4, 3, 333, 0, 1},
        {smp, "rd", 7, ppn4, 0, 33, 1, 1},
        {flex, "ring", 5, ppn4, 0, 3333, 0, 1},
        {flex, "rabenseifner", 6, ppn4, 2, 3333, 1, 1},
        {flex, "rd", 3, ppn4, 0, 77, 0, 1},
        {rm, "a2,a3", 6, ones, 0, 40, 0, 0},
        {rm, "m1g0a3,n1g0a2", 7, ones, 5, 40, 0, 1},
        {rm, "c2m2,a2,a3,e2m2", 7, ones, 0, 40, 0, 0},
        {rm, "a4,a3", 12, ones, 0, 40, 1, 0},
        {nap, "4,2", 8, ppn4, 0, 333, 0, 1},
        {nap, "2,4", 8, ppn4, 3, 333, 1, 1},
        {nap, "3", 7, ppn4, 0, 77, 0, 1},
        {nap, "5,2", 12, ones, 0, 40, 0, 1},
        {nap, "2", 3, uneven[1], 1, 40, 1, 1},
        {nap, "3,2", 6, uneven[3], 0, 333, 0, 1},
        {nap, "2,4/1", 8, ppn4, 0, 333, 0, 1},
        {nap, "3/1", 7, ppn4, 3, 77, 1, 1},
        {nap, "2,3/2,2/1", 12, ones, 0, 40, 0, 1},
        {nap, "2,2/1", 6, uneven[3], 1, 333, 1, 1},
        {rx, "4", 1, ppn4, 0, 3333, 0, 0},
        {rx, "1,2,1,2", 1, ppn4, 0, 333, 1, 0},
        {tree, "3", 1, ppn4, 0, 3333, 1, 0},
        {tree, "2", 1, ppn4, 0, 77, 0, 1},
        {sa, "ring", 8, ones, 0, 333, 0, 1},
        {sa, "rd", 8, ones, 0, 333, 0, 1},
    };
    for (size_t i = 0; i < sizeof extra / sizeof *extra; i++)
        for (int m = 0; m < NMEMS; m++) {
            trd_call call = {extra[i].a->coll,  extra[i].count, 8, 0,
                             extra[i].in_place, extra[i].comm,  0};
            /* the one-node algorithms refuse a node without a segment */
            CU_ASSERT(check_one(extra[i].a, extra[i].params, extra[i].nnodes, extra[i].ppn,
                                extra[i].seed, call, &mems[m], 2) == 1 ||
                      (!mems[m].shm && extra[i].nnodes == 1));
        }
    /* each algorithm proved on many shapes: the one-node ones on the one-node
     * shapes, the others on most (recursive doubling allgather on powers of
     * two only, Rabenseifner's reduce with an element per survivor) */
    for (int ai = 0; trd_algos[ai]; ai++) {
        const trd_algo *a = trd_algos[ai];
        if (a->flags & TRD_ALGO_LIBRARY) /* the MPI library's: no schedule */
            continue;
        trd_shape_store two;
        trd_call call = {a->coll, 1, 8, 0, 0, 1, 0};
        char buf[64];
        CU_ASSERT_FATAL(trd_shape_init(&two, 2, (int[]){2, 2}, 0) == 0);
        int multi = accepts(a, params_for(a, &two.s, buf, sizeof buf), &two.s, &call);
        trd_shape_free(&two);
        fprintf(stderr, "\n    %s %s: %d schedules verified", trd_coll_name(a->coll), a->name,
                verified[ai]);
        CU_ASSERT(verified[ai] >= (multi ? 150 : 15));
    }
    fprintf(stderr, "\n    in %.2f s", (double)(clock() - t0) / CLOCKS_PER_SEC);
}

/* Large and prime rank counts, each in a second or less, with the time. */
static void test_large(void)
{
    static int uniform[4096];
    static const struct {
        const char *alg, *params;
        int nnodes, ppn;
        size_t count;
        int commutative;
    } big[] = {
        {"rd", "", 4096, 1, 7, 1},
        {"rd", "", 4093, 1, 5, 0},
        {"rabenseifner", "", 4096, 1, 4099, 1},
        {"rabenseifner", "", 4093, 1, 9, 1},
        {"rm", "", 4096, 1, 5, 0},
        {"rm", "", 4093, 1, 5, 1},
        {"nap", "", 4096, 1, 3, 1},
        {"nap", "", 256, 16, 33, 1},
        {"nap", "", 1021, 4, 5, 1},
        /* the radix lists auto picks on bluewaters64 and bluewaters256 */
        {"nap", "16,4/2", 64, 16, 33, 1},
        {"nap", "16,16/1", 256, 16, 33, 1},
        {"smp", "", 512, 8, 9, 1},
        {"flex", "", 512, 8, 1000, 1},
        {"hring", "", 256, 16, 2000, 1},
        {"ring", "", 1024, 1, 2051, 1},
        {"ring", "", 64, 16, 2051, 1},
    };
    for (size_t i = 0; i < sizeof big / sizeof *big; i++) {
        const trd_algo *a = trd_algo_find(TRD_COLL_ALLREDUCE, big[i].alg, strlen(big[i].alg));
        for (int v = 0; v < big[i].nnodes; v++)
            uniform[v] = big[i].ppn;
        trd_call call = {TRD_COLL_ALLREDUCE, big[i].count, 8, 0, 0, big[i].commutative, 0};
        clock_t t0 = clock();
        CU_ASSERT(check_one(a, big[i].params, big[i].nnodes, uniform, 0, call, &mems[0], 2) == 1);
        fprintf(stderr,
                "\n    %s%s%s on %d x %d ranks, %zu elements, called twice: verified in %.2f s",
                big[i].alg, *big[i].params ? ":" : "", big[i].params, big[i].nnodes, big[i].ppn,
                big[i].count, (double)(clock() - t0) / CLOCKS_PER_SEC);
    }
}

/* ---- Broken schedules -------------------------------------------------------- */

typedef struct broken {
    trd_shape_store st;
    trd_sched s;
    int repeat;
} broken;

static void plan(broken *b, int coll, const char *alg, int nnodes, int ppn, size_t count,
                 int commutative, int cma, size_t slot)
{
    char why[256];
    int p[64];
    for (int v = 0; v < nnodes; v++)
        p[v] = ppn;
    CU_ASSERT_FATAL(trd_shape_init(&b->st, nnodes, p, 0) == 0);
    if (cma) {
        b->st.s.cma = cma;
        memset(b->st.s.cma_min, 0, sizeof b->st.s.cma_min);
    }
    if (slot)
        b->st.s.slot_bytes = slot;
    trd_call call = {coll, count, 8, 0, 0, commutative, 0};
    const trd_algo *a = trd_algo_find(coll, alg, strlen(alg));
    CU_ASSERT_FATAL(a != NULL);
    CU_ASSERT_FATAL(trd_plan(&b->s, a, "", &b->st.s, &call, -1, why, sizeof why) == 0);
    b->repeat = 1;
}

/* Rank r's k-th op of kind op (k from 0), as an index of its ops, or -1. */
static long find(const trd_sched *s, int r, int op, int k)
{
    for (size_t i = s->first[r]; i < s->first[r + 1]; i++)
        if (s->op[i].op == op && k-- == 0)
            return (long)(i - s->first[r]);
    return -1;
}

static trd_sstep *at(trd_sched *s, int r, long k)
{
    CU_ASSERT_FATAL(k >= 0);
    return &s->op[s->first[r] + (size_t)k];
}

static void expect(broken *b, const char *msg)
{
    char why[512] = "";
    trd_verify_opts o = {NULL, 0, b->repeat};
    CU_ASSERT_EQUAL(trd_sched_verify(&b->s, &b->st.s, &o, why, sizeof why), TRD_ERR_VERIFY);
    CU_ASSERT_STRING_EQUAL(why, msg);
    if (strcmp(why, msg))
        fprintf(stderr, "\n    got: %s\n    expected: %s\n", why, msg);
    trd_sched_free(&b->s);
    trd_shape_free(&b->st);
}

static void test_broken(void)
{
    broken b;
    long i;

    /* a reduce dropped: rank 2 misses rank 3's contribution */
    plan(&b, TRD_COLL_ALLREDUCE, "rd", 4, 1, 8, 1, 0, 0);
    trd_sched_drop(&b.s, 2, (size_t)find(&b.s, 2, TRD_S_REDUCE, 0));
    expect(&b, "rank 0: recvbuf[0] holds 3 of the 4 contributions");

    /* a receive one element short */
    plan(&b, TRD_COLL_ALLREDUCE, "ring", 3, 1, 72, 1, 0, 0);
    at(&b.s, 1, find(&b.s, 1, TRD_S_SENDRECV, 0))->rlen--;
    expect(&b,
           "rank 1, op 1 (round 1): receives 23 elements from rank 0, which sends 24 (its op 1)");

    /* operands swapped in a rank-order fold: rank 1 folds x1 before x2 */
    plan(&b, TRD_COLL_ALLREDUCE, "shm", 1, 4, 5, 0, 0, 0);
    i = find(&b.s, 1, TRD_S_REDUCE, 0);
    trd_sstep tmp = *at(&b.s, 1, i);
    *at(&b.s, 1, i) = *at(&b.s, 1, i + 1);
    *at(&b.s, 1, i + 1) = tmp;
    expect(&b,
           "rank 1: recvbuf[0] holds all 4 contributions, but not in rank order (rank 2 follows "
           "rank 0)");

    /* a send that never happens: rank 0 goes on to wait for the result */
    plan(&b, TRD_COLL_ALLREDUCE, "rd", 3, 1, 4, 1, 0, 0);
    trd_sched_drop(&b.s, 0, (size_t)find(&b.s, 0, TRD_S_SEND, 0));
    expect(&b, "rank 0, op 1 (round 41): deadlock: waits to receive from 1, which no rank matches");

    /* the temporary read before it is written */
    plan(&b, TRD_COLL_ALLREDUCE, "rd", 2, 1, 4, 1, 0, 0);
    at(&b.s, 0, find(&b.s, 0, TRD_S_SENDRECV, 0))->rlen = 0;
    at(&b.s, 1, find(&b.s, 1, TRD_S_SENDRECV, 0))->len = 0;
    expect(&b, "rank 0, op 2 (round 2): reads tmp[0] of rank 0 before it is written");

    /* the segment: rank 3 folds without waiting for the others' inputs */
    plan(&b, TRD_COLL_ALLREDUCE, "shm", 1, 4, 100, 1, 0, 256);
    trd_sched_drop(&b.s, 3, (size_t)find(&b.s, 3, TRD_S_WAIT, 1));
    expect(&b, "rank 3, op 4 (round 0): reads seg(2)@1.in[0:32] before rank 2's write to it is "
               "signalled");

    /* a signal that never comes */
    plan(&b, TRD_COLL_ALLREDUCE, "shm", 1, 4, 100, 1, 0, 256);
    trd_sched_drop(&b.s, 2, (size_t)find(&b.s, 2, TRD_S_SIGNAL, 0));
    expect(&b, "rank 0, op 3 (round 0): deadlock: waits for rank 2's in counter to reach epoch 1; "
               "it stays at 0");

    /* the call twice: the root of a bcast refills slot 1 in the second call
     * without waiting until the readers of the first are done with it */
    plan(&b, TRD_COLL_BCAST, "shm", 1, 4, 200, 1, 0, 256);
    trd_sched_drop(&b.s, 0, (size_t)find(&b.s, 0, TRD_S_WAIT, 0));
    b.repeat = 2;
    expect(&b, "rank 0, op 0 (round 0, second call): overwrites seg(0)@1.in[0:32] while rank 1 may "
               "still read it");

    /* single copy: rank 0 returns without waiting until the others have
     * read its sendbuf */
    plan(&b, TRD_COLL_ALLGATHER, "shm", 1, 3, 7, 1, TRD_CMA_READ, 0);
    trd_sched_drop(&b.s, 0, b.s.first[1] - b.s.first[0] - 1);
    expect(&b, "rank 0 returns while rank 2 may still read its sendbuf[0:7]");

    /* an element at the wrong offset: rank 2 of a reduce_scatter_block takes
     * its result from block 1 */
    plan(&b, TRD_COLL_REDUCE_SCATTER_BLOCK, "halving", 4, 1, 4, 1, 0, 0);
    at(&b.s, 2, find(&b.s, 2, TRD_S_COPY, 1))->soff -= 4;
    expect(&b, "rank 2: recvbuf[0] holds element 4, not element 8");

    /* a block sent at the wrong offset: the ring passes block 3 on */
    plan(&b, TRD_COLL_ALLREDUCE, "ring", 3, 1, 48, 1, 0, 0);
    at(&b.s, 1, find(&b.s, 1, TRD_S_SENDRECV, 0))->soff += 1;
    expect(&b, "rank 2, op 2 (round 1): combines element 17 with element 16 into recvbuf[16]");

    /* the wrong allgather block: rank 0 passes its own block on for rank 3's */
    plan(&b, TRD_COLL_ALLGATHER, "ring", 4, 1, 4, 1, 0, 0);
    at(&b.s, 0, find(&b.s, 0, TRD_S_SENDRECV, 1))->soff = 0;
    expect(&b, "rank 1: recvbuf[12] holds element 0 of rank 0's input, not element 0 of rank 3's");
}

/* ---- A planner's failures ---------------------------------------------------------- */

static int plan_nomem(trd_sb *b, const void *params)
{
    (void)b;
    (void)params;
    return TRD_ERR_NOMEM;
}

static int plan_refuse_silently(trd_sb *b, const void *params)
{
    (void)b;
    (void)params;
    return TRD_ERR_INPUT;
}

static int plan_refuse_saying(trd_sb *b, const void *params)
{
    (void)params;
    b->fail = "needs more ranks";
    return TRD_ERR_INPUT;
}

/* trd_plan turns a planner's status into its own, never guessing from a
 * message: out of memory stays out of memory; a refusal, said or not, is a
 * refusal (the runtime then falls back), where a silent one once came back
 * as out of memory. */
static void test_planner_status(void)
{
    static const struct {
        int (*plan)(trd_sb *, const void *);
        int rc;
        const char *why;
    } cases[] = {
        {plan_nomem, TRD_ERR_NOMEM, "out of memory"},
        {plan_refuse_silently, TRD_ERR_INPUT, "rd: cannot plan this call"},
        {plan_refuse_saying, TRD_ERR_INPUT, "rd: needs more ranks"},
    };
    trd_shape_store st;
    int ppn[2] = {1, 1};
    CU_ASSERT_FATAL(trd_shape_init(&st, 2, ppn, 0) == 0);
    trd_call call = {TRD_COLL_ALLREDUCE, 16, 8, 0, 0, 1, 0};
    const trd_algo *rd = trd_algo_find(TRD_COLL_ALLREDUCE, "rd", 2);
    CU_ASSERT_FATAL(rd != NULL);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        trd_algo a = *rd;
        a.plan = cases[i].plan;
        for (int rank = -1; rank < 2; rank++) {
            trd_sched s;
            char why[256] = "";
            CU_ASSERT_EQUAL(trd_plan(&s, &a, "", &st.s, &call, rank, why, sizeof why), cases[i].rc);
            CU_ASSERT_STRING_EQUAL(why, cases[i].why);
        }
    }
    trd_shape_free(&st);
}

/* ---- Topologies ------------------------------------------------------------------ */

/* The ring on a switch tree: contention-free in DFS order [TREE Lemma 4];
 * nodes visited out of that order share links, and the verifier says which. */
static void test_contention(void)
{
    trd_diag *d;
    trd_topo_t t = trd_test_load("topologies/ethernet32.topo", &d);
    int n = trd_topo_nnodes(t), ones[64], machine[64];
    for (int v = 0; v < n; v++)
        ones[v] = 1, machine[v] = v;
    trd_shape_store st;
    trd_sched s;
    char why[512] = "";
    CU_ASSERT_FATAL(trd_shape_init(&st, n, ones, 0) == 0);
    st.s.machine_node = machine;
    trd_call call = {TRD_COLL_ALLREDUCE, 64, 8, 0, 0, 1, 0};
    CU_ASSERT_FATAL(trd_plan(&s, trd_algo_find(TRD_COLL_ALLREDUCE, "ring", 4), "", &st.s, &call, -1,
                             why, sizeof why) == 0);
    trd_verify_opts o = {t, 1, 1};
    CU_ASSERT_EQUAL(trd_sched_verify(&s, &st.s, &o, why, sizeof why), TRD_OK);
    /* ring positions 0..15 alternating between the first two switches: n0,
     * n8, n1, n9, ...: their up-links carry a message every other hop */
    for (int v = 0; v < 16; v++)
        machine[v] = (v % 2) * 8 + v / 2;
    CU_ASSERT_EQUAL(trd_sched_verify(&s, &st.s, &o, why, sizeof why), TRD_ERR_VERIFY);
    CU_ASSERT_STRING_EQUAL(why,
                           "round 1: the messages n31 -> n0 and n8 -> n1 share the link down to "
                           "'sw0' [TREE §2]");
    fprintf(stderr, "\n    out of DFS order: %s", why);
    trd_sched_free(&s);
    trd_shape_free(&st);
    trd_topo_destroy(t);
    trd_diag_destroy(d);
}

/* Switch trees of 1..4 levels (a binary tree of switches, two nodes of two
 * packages x 2 cores under each leaf, nodes listed out of DFS order in the
 * file for the deeper trees): every candidate over the whole machine, in its
 * DFS ring, with and without shared memory, verified with the contention
 * check on and timed; the ring is contention-free at every depth, and the
 * generator's whole chain (plan, ranges on the schedules, parameter search,
 * verification of every schedule the runtime can run) passes. */
static void test_levels(void)
{
    for (int levels = 1; levels <= 4; levels++) {
        char text[4096];
        size_t o = (size_t)snprintf(text, sizeof text,
                                    "machine lv%d;\nlink net { latency 1us; bandwidth 10GB/s; }\n"
                                    "nodetype two { synthetic \"package:2 core:2\"; }\n",
                                    levels);
        /* switches in heap order: s1 the root, s(2i), s(2i+1) its children */
        int nsw = (1 << levels) - 1, leaf0 = 1 << (levels - 1);
        for (int i = nsw; i >= 1; i--) {
            if (i >= leaf0) {
                int k = i - leaf0;
                o += (size_t)snprintf(text + o, sizeof text - o,
                                      "switch s%d { link net; nodes n%d,n%d : two; }\n", i,
                                      2 * k + 1, 2 * k);
            } else {
                o += (size_t)snprintf(text + o, sizeof text - o,
                                      "switch s%d { link net; switches s%d s%d; }\n", i, 2 * i,
                                      2 * i + 1);
            }
        }
        CU_ASSERT_FATAL(o < sizeof text);
        trd_diag *d;
        trd_topo_t t = trd_test_load_text("levels.topo", text, &d);
        CU_ASSERT_EQUAL(trd_topo_nnodes(t), 2 * leaf0);
        trd_shape_store st;
        int *aux;
        CU_ASSERT_FATAL(trd_machine_shape(t, 0, 0, &st, &aux) == TRD_OK);
        static trd_machine_plan p;
        CU_ASSERT_EQUAL(trd_plan_build(t, &p), TRD_OK);
        trd_cost_model cm = {t, p.levels.gamma_s_per_byte, TRD_ALPHA_R_RATIO};
        const trd_algo *cand[TRD_MAX_CANDIDATES];
        int nc = trd_model_candidates(cand, TRD_MAX_CANDIDATES);
        for (int a = 0; a < nc; a++)
            for (int shm = 0; shm < 2; shm++) {
                trd_sched s;
                char why[512] = "";
                double sec;
                st.s.shm = shm;
                trd_call call = {TRD_COLL_ALLREDUCE, 1000, 8, 0, 0, 1, 0};
                CU_ASSERT_FATAL(trd_plan(&s, cand[a], "", &st.s, &call, -1, why, sizeof why) == 0);
                trd_verify_opts vo = {t, 1, 2};
                int rc = trd_sched_verify(&s, &st.s, &vo, why, sizeof why);
                CU_ASSERT_EQUAL(rc, TRD_OK);
                if (rc)
                    fprintf(stderr, "\n    %d levels, %s: %s", levels, cand[a]->name, why);
                if (cand[a]->flags & TRD_ALGO_CONTENTION_FREE)
                    CU_ASSERT(s.contention_free);
                CU_ASSERT_EQUAL(trd_sched_cost(&s, &st.s, &cm, &sec, why, sizeof why), TRD_OK);
                CU_ASSERT(sec > 0);
                trd_sched_free(&s);
            }
        trd_select_stats sel;
        trd_search_stats srch;
        trd_check_stats chk;
        CU_ASSERT_EQUAL(trd_select_on_schedules(t, &p, &sel), TRD_OK);
        CU_ASSERT_EQUAL(trd_search_params(t, &p, &srch), TRD_OK);
        trd_check_opts co = {"levels.topo", NULL};
        int within = 0; /* shapes drawn on the schedules; the others on the closed forms */
        for (int i = 0; i < p.nshapes; i++)
            within += p.shape[i].nnodes * p.shape[i].ppn <= TRD_SELECT_MAX_RANKS;
        CU_ASSERT_EQUAL(sel.drawn, within);
        CU_ASSERT_EQUAL(sel.drawn + sel.closed, p.nshapes);
        CU_ASSERT_EQUAL(trd_check_schedules(t, &p, &co, d, &chk), TRD_OK);
        if (trd_diag_count(d))
            trd_diag_print(d, stderr);
        CU_ASSERT(chk.nverified > 0 && chk.largest == 4 * trd_topo_nnodes(t));
        fprintf(stderr, "\n    %d levels: %d schedules verified in %.2f s", levels, chk.nverified,
                chk.seconds);
        trd_shape_free(&st);
        free(aux);
        trd_topo_destroy(t);
        trd_diag_destroy(d);
    }
}

/* ---- One node as the runtime plans it ------------------------------------------ */

/* Signals of counter ctr in rank r's ops of s. */
static int count_signals(const trd_sched *s, int r, int ctr)
{
    size_t n;
    const trd_sstep *ops = trd_sched_ops(s, r, &n);
    int k = 0;
    for (size_t i = 0; i < n; i++)
        k += ops[i].op == TRD_S_SIGNAL && ops[i].ctr == ctr;
    return k;
}

/* test_one_node_single_copy_steps for one algorithm (direct: shm:direct). */
static void one_node_single_copy_steps(const trd_algo *alg, int direct)
{
    static const size_t counts[] = {4096, 4097, 16384, 16385, 65536};
    CU_ASSERT_FATAL(alg != NULL);
    for (int p = 2; p <= 3; p++)
        for (size_t k = 0; k < sizeof counts / sizeof *counts; k++)
            for (int v = 0; v < 4; v++) {
                trd_shape_store st;
                trd_sched s;
                char why[512];
                int ppn[1] = {p}, in_place = v & 1, comm = v >> 1;
                trd_call call = {TRD_COLL_ALLREDUCE, counts[k], 8, 0, in_place, comm, 0};
                CU_ASSERT_FATAL(trd_shape_init(&st, 1, ppn, 0) == 0);
                st.s.cma = TRD_CMA_READ | TRD_CMA_WRITE;
                CU_ASSERT_FATAL(trd_plan(&s, alg, "", &st.s, &call, -1, why, sizeof why) == 0);
                trd_verify_opts o = {NULL, 0, 2};
                int rc = trd_sched_verify(&s, &st.s, &o, why, sizeof why);
                if (rc)
                    fprintf(stderr, "\n  allreduce %s, %d ranks, count %zu, %s, %s: %s\n",
                            alg->name, p, counts[k], in_place ? "in place" : "out of place",
                            comm ? "commutative" : "rank order", why);
                CU_ASSERT_EQUAL(rc, TRD_OK);
                CU_ASSERT_EQUAL(s.direct, 1);
                int one_step = direct && !in_place;
                for (int r = 0; r < p; r++)
                    CU_ASSERT_EQUAL(count_signals(&s, r, TRD_CTR_RED), one_step ? 0 : 1);
                trd_sched_free(&s);
                trd_shape_free(&st);
            }
}

/* Allreduce on one node by single copy, as the runtime plans it: shm in two
 * steps (each rank folds its block of every input, signals RED, then copies
 * the other blocks from their owners' outputs); shm:direct out of place in
 * one step (every rank reads every other's input and folds the whole vector:
 * no RED signal, no rank reads another's output), in place as shm; two and
 * three ranks, any op, each schedule proved, the call twice. */
static void test_one_node_single_copy_steps(void)
{
    for (int d = 0; d < 2; d++) {
        const trd_algo *alg = d ? trd_algo_find(TRD_COLL_ALLREDUCE, "shm:direct", 10)
                                : trd_algo_find(TRD_COLL_ALLREDUCE, "shm", 3);
        one_node_single_copy_steps(alg, d);
    }
}
/* bcast shm from root on one node of p ranks, count doubles, reads and
 * writes of other ranks' buffers allowed, planned into *s on *st and proved;
 * the caller frees both. */
static void plan_bcast_one_node(const trd_algo *bc, int p, size_t count, int root,
                                trd_shape_store *st, trd_sched *s)
{
    char why[512];
    int ppn[1] = {p};
    trd_call call = {TRD_COLL_BCAST, count, 8, root, 0, 1, 0};
    CU_ASSERT_FATAL(trd_shape_init(st, 1, ppn, 0) == 0);
    st->s.cma = TRD_CMA_READ | TRD_CMA_WRITE;
    CU_ASSERT_FATAL(trd_plan(s, bc, "", &st->s, &call, -1, why, sizeof why) == 0);
    trd_verify_opts o = {NULL, 0, 2};
    int rc = trd_sched_verify(s, &st->s, &o, why, sizeof why);
    if (rc)
        fprintf(stderr, "\n  bcast shm, %d ranks, count %zu, root %d: %s\n", p, count, root, why);
    CU_ASSERT_EQUAL(rc, TRD_OK);
}

/* Bcast on one node by single copy with writes allowed: from 1 MiB the root
 * writes the last 1/p of the message into the others' buffers while they
 * read the rest from its buffer (the root's core copies too); below, only
 * the others copy.  2..4 ranks, roots 0 and p-1, each schedule proved. */
static void test_one_node_bcast_split(void)
{
    const trd_algo *bc = trd_algo_find(TRD_COLL_BCAST, "shm", 3);
    static const size_t counts[] = {(512u << 10) / 8, (1u << 20) / 8, (1u << 20) / 8 + 3};
    CU_ASSERT_FATAL(bc != NULL);
    for (int p = 2; p <= 4; p++)
        for (size_t k = 0; k < sizeof counts / sizeof *counts; k++)
            for (int root = 0; root < p; root += p - 1) {
                trd_shape_store st;
                trd_sched s;
                int writes = 0;
                plan_bcast_one_node(bc, p, counts[k], root, &st, &s);
                size_t n;
                const trd_sstep *ops = trd_sched_ops(&s, root, &n);
                for (size_t i = 0; i < n; i++)
                    writes += ops[i].op == TRD_S_COPY && ops[i].peer2 >= 0;
                CU_ASSERT_EQUAL(writes, counts[k] * 8 >= (1u << 20) ? p - 1 : 0);
                trd_sched_free(&s);
                trd_shape_free(&st);
            }
}

/* The pieces on one node at mid sizes, as the runtime plans them (its
 * single-copy thresholds, reads and writes allowed), 2..4 ranks, roots 0 and
 * p-1, counts on and off the chunks: bcast below 16 KiB goes through the
 * segment in pipelined chunks (the root copies chunk e+1 in while the others
 * copy chunk e out), not by single copy, whose system call costs more there;
 * each schedule proved, the call twice. */
static void test_one_node_mid_sizes(void)
{
    const trd_algo *bc = trd_algo_find(TRD_COLL_BCAST, "shm", 3);
    static const size_t counts[] = {1024, 1031, 1999, 255};
    CU_ASSERT_FATAL(bc != NULL);
    for (int p = 2; p <= 4; p++)
        for (size_t k = 0; k < sizeof counts / sizeof *counts; k++)
            for (int root = 0; root < p; root += p - 1) {
                trd_shape_store st;
                trd_sched s;
                plan_bcast_one_node(bc, p, counts[k], root, &st, &s);
                CU_ASSERT_EQUAL(s.direct, 0);
                /* 2 KiB chunks: 8 KiB in 4 epochs or more */
                CU_ASSERT(s.nepochs[0] >= (int)(counts[k] * 8 / 2048));
                trd_sched_free(&s);
                trd_shape_free(&st);
            }
}

int main(void)
{
    static const trd_test_case tests[] = {
        {"every registered algorithm over the shape matrix", test_every_algorithm},
        {"large and prime rank counts", test_large},
        {"reduce's halving near and far, every root", test_reduce_halving},
        {"broken schedules refused with their message", test_broken},
        {"a planner's failures kept apart: out of memory, refusals", test_planner_status},
        {"ring contention on the switch tree", test_contention},
        {"every candidate on switch trees of 1..4 levels, the generator's chain", test_levels},
        {"the pieces on one node at mid sizes, as the runtime plans them", test_one_node_mid_sizes},
        {"allreduce on one node by single copy in one step or two",
         test_one_node_single_copy_steps},
        {"bcast on one node: the root writes a part from 1 MiB", test_one_node_bcast_split},
    };
    return trd_test_main("verify", tests, TRD_NTESTS(tests));
}
