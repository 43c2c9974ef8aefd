/* Schedules of the algorithm registry (runtime/algo), their verifier
 * (gen/verify/verify.h), cost model (gen/plan/cost.h) and the selection on them
 * (gen/plan/tune.h), without MPI:
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
 *   - the cost model added up by hand: link sharing, a message starting
 *     when both ends have posted it, a wait on a signal, a single-copy read,
 *     alpha_r; the ring's bound below its cost;
 *   - the size ranges drawn on the schedules: inside each range the chosen
 *     schedule is timed fastest of all the candidates, the searched
 *     parameters beat their candidates; switch trees of 1..4 levels with the
 *     generator's whole chain. */
#include <CUnit/Basic.h>
#include <math.h>
#include <stdint.h>
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
#include "trd_nap.h"
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

/* The parameters the one-node algorithms without a default take: the prime
 * factors of the ranks (shm:rx), else a radix of 2 (shm:tree). */
static const char *params_for(const trd_algo *a, const trd_shape *sh, char *buf, size_t len)
{
    trd_call call = {a->coll, 1, 8, 0, 0, 1, 0};
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

/* ---- Topologies ------------------------------------------------------------------ */

static trd_topo_t load(const char *rel, trd_diag **d)
{
    trd_topo_t t = NULL;
    *d = trd_diag_create();
    CU_ASSERT_EQUAL_FATAL(trd_topo_create(&t), TRD_OK);
    CU_ASSERT_EQUAL_FATAL(trd_read_dsl(t, *d, trd_test_path(rel)), TRD_OK);
    CU_ASSERT_EQUAL_FATAL(trd_topo_finalize(t, *d), TRD_OK);
    return t;
}

static trd_topo_t load_text(const char *name, const char *text, trd_diag **d)
{
    trd_topo_t t = NULL;
    *d = trd_diag_create();
    CU_ASSERT_EQUAL_FATAL(trd_topo_create(&t), TRD_OK);
    CU_ASSERT_EQUAL_FATAL(trd_read_dsl_string(t, *d, name, text, strlen(text)), TRD_OK);
    CU_ASSERT_EQUAL_FATAL(trd_topo_finalize(t, *d), TRD_OK);
    return t;
}

/* The ring on a switch tree: contention-free in DFS order [TREE Lemma 4];
 * nodes visited out of that order share links, and the verifier says which. */
static void test_contention(void)
{
    trd_diag *d;
    trd_topo_t t = load("topologies/ethernet32.topo", &d);
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
        trd_topo_t t = load_text("levels.topo", text, &d);
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

/* ---- The cost model by hand ---------------------------------------------------- */

/* Timed cost of recursive doubling (point to point) over the first nnodes
 * nodes of t, one rank each, n doubles, gamma 0.25 ns/B, alpha_r ratio 1/4. */
static double rd_cost(trd_topo_t t, int nnodes, size_t n)
{
    int ones[4] = {1, 1, 1, 1}, machine[4] = {0, 1, 2, 3};
    trd_shape_store st;
    trd_sched s;
    char why[256];
    double sec = -1;
    CU_ASSERT_FATAL(nnodes <= 4 && trd_shape_init(&st, nnodes, ones, 0) == 0);
    st.s.machine_node = machine;
    trd_call call = {TRD_COLL_ALLREDUCE, n, 8, 0, 0, 1, 0};
    CU_ASSERT_FATAL(trd_plan(&s, trd_algo_find(TRD_COLL_ALLREDUCE, "rd", 2), "", &st.s, &call, -1,
                             why, sizeof why) == 0);
    trd_cost_model cm = {t, 0.25e-9, 0.25};
    CU_ASSERT_EQUAL(trd_sched_cost(&s, &st.s, &cm, &sec, why, sizeof why), TRD_OK);
    trd_sched_free(&s);
    trd_shape_free(&st);
    return sec;
}

/* Recursive doubling over the four nodes of tests/data/testbed.topo (two
 * leaf switches): the first exchange stays under a leaf, the second crosses
 * the root, where the two pairs' messages share each leaf's up- and
 * down-link, so each gets half the bandwidth [TREE §2]. */
static void test_cost(void)
{
    trd_diag *d;
    trd_topo_t t = load("tests/data/testbed.topo", &d);
    size_t n = 1000;
    double m = 8.0 * (double)n, gamma = 0.25e-9;
    trd_link_cost pk = trd_topo_nodetype_package_link(t, trd_topo_node_type(t, 0));
    trd_link_cost near = trd_topo_path_cost(t, 0, 1), far = trd_topo_path_cost(t, 0, 2);
    CU_ASSERT(far.latency_s > near.latency_s);
    double local = m / pk.bandwidth_Bps;
    double want = local                                                                /* copy in */
                  + 1.25 * near.latency_s + m / near.bandwidth_Bps + local + m * gamma /* step 1 */
                  + 1.25 * far.latency_s + 2 * m / far.bandwidth_Bps + local + m * gamma; /* 2 */
    CU_ASSERT_DOUBLE_EQUAL(rd_cost(t, 4, n), want, want * 1e-9);
    /* without the root crossing (two nodes under one leaf) nothing is shared */
    want = local + 1.25 * near.latency_s + m / near.bandwidth_Bps + local + m * gamma;
    CU_ASSERT_DOUBLE_EQUAL(rd_cost(t, 2, n), want, want * 1e-9);
    trd_topo_destroy(t);
    trd_diag_destroy(d);
}

/* A link's measured alpha_r replaces the default alpha_r_ratio x latency:
 * recursive doubling over two nodes of one switch whose link gives alpha_r
 * 3 us pays it once per exchange (a sendrecv is two messages in flight). */
static void test_cost_alpha_r(void)
{
    trd_diag *d;
    trd_topo_t t = load_text("ar.topo",
                             "machine ar;\n"
                             "link eth { latency 20us; bandwidth 1GB/s; alpha_r 3us; }\n"
                             "nodetype one { synthetic \"package:1 core:1\"; }\n"
                             "switch top { link eth; nodes a,b : one; }\n",
                             &d);
    size_t n = 1000;
    double m = 8.0 * (double)n, gamma = 0.25e-9;
    trd_link_cost pk = trd_topo_nodetype_package_link(t, trd_topo_node_type(t, 0));
    trd_link_cost path = trd_topo_path_cost(t, 0, 1);
    CU_ASSERT_DOUBLE_EQUAL(path.alpha_r_s, 3e-6, 1e-15);
    double local = m / pk.bandwidth_Bps;
    double want = local + path.latency_s + 3e-6 + m / path.bandwidth_Bps + local + m * gamma;
    CU_ASSERT_DOUBLE_EQUAL(rd_cost(t, 2, n), want, want * 1e-9);
    trd_topo_destroy(t);
    trd_diag_destroy(d);
}

/* A schedule written by hand, rank by rank in rank order. */
typedef struct hand {
    trd_sched s;
    trd_sb b;
    const trd_shape *sh;
} hand;

static void hand_init(hand *h, const trd_shape *sh, trd_call call)
{
    memset(h, 0, sizeof *h);
    h->sh = sh;
    h->s.alg = "hand";
    h->s.call = call;
    h->s.nranks = h->s.nplanned = sh->nranks;
    h->s.seg_slot = sh->slot_bytes / call.extent;
    h->s.inl_slot = TRD_INLINE_BYTES / call.extent;
    h->s.first = calloc((size_t)sh->nranks + 1, sizeof *h->s.first);
    h->s.nepochs = calloc((size_t)sh->nranks + 1, sizeof *h->s.nepochs);
    CU_ASSERT_FATAL(h->s.first && h->s.nepochs);
}

/* The builder for rank r, whose node takes epochs epochs. */
static trd_sb *hand_rank(hand *h, int r, int epochs)
{
    h->s.first[r] = h->s.nops;
    h->s.nepochs[r] = epochs;
    h->b = (trd_sb){.s = &h->s, .sh = h->sh, .call = &h->s.call, .rank = r};
    return &h->b;
}

static void hand_end(hand *h)
{
    h->s.first[h->s.nranks] = h->s.nops;
    h->s.tmp_count = 1 << 20;
    CU_ASSERT_FATAL(!h->s.oom);
}

/* A message starts when both ends have posted it; a wait ends one latency
 * of the link after the signal it sees, on a node at most a cache-line
 * handshake [FLEX §3.1].  On two nodes of two ranks, rank 3 copies a long
 * vector and signals; rank 2 waits for that signal, then receives n
 * elements from rank 0, which sent at once.  The message starts one
 * handshake after rank 3's copy, not when rank 0 posted it. */
static void test_cost_posted(void)
{
    trd_diag *d;
    trd_topo_t t = load("tests/data/testbed.topo", &d);
    int twos[2] = {2, 2}, machine[2] = {0, 1};
    trd_shape_store st;
    CU_ASSERT_FATAL(trd_shape_init(&st, 2, twos, 0) == 0);
    st.s.machine_node = machine;
    trd_cost_model cm = {t, 0.25e-9, 0.25};
    trd_link_cost pk = trd_topo_nodetype_package_link(t, trd_topo_node_type(t, 0));
    trd_link_cost near = trd_topo_path_cost(t, 0, 1);
    size_t big = 1 << 20, n = 100;
    double copy = 8.0 * (double)big / pk.bandwidth_Bps;
    double seen = pk.latency_s < TRD_COST_HANDSHAKE_S ? pk.latency_s : TRD_COST_HANDSHAKE_S;
    CU_ASSERT(seen < pk.latency_s); /* the package link's latency is a message's */
    double want = copy + seen + near.latency_s + 8.0 * (double)n / near.bandwidth_Bps;
    hand h;
    char why[256];
    double got = -1;
    hand_init(&h, &st.s, (trd_call){TRD_COLL_ALLREDUCE, big, 8, 0, 0, 1, 0});
    trd_s_send(hand_rank(&h, 0, 0), 2, 2, TRD_B_SEND, 0, n);
    hand_rank(&h, 1, 0);
    trd_sb *b = hand_rank(&h, 2, 1);
    trd_s_wait(b, 1, 3, 0, TRD_CTR_IN, 1);
    trd_s_recv(b, 2, 0, TRD_B_TMP, 0, n);
    b = hand_rank(&h, 3, 1);
    trd_s_copy(b, 1, TRD_B_RECV, -1, 0, TRD_B_SEND, -1, 0, big);
    trd_s_signal(b, 1, TRD_CTR_IN, 1);
    hand_end(&h);
    CU_ASSERT_EQUAL(trd_sched_cost(&h.s, &st.s, &cm, &got, why, sizeof why), TRD_OK);
    CU_ASSERT_DOUBLE_EQUAL(got, want, want * 1e-9);
    trd_sched_free(&h.s);
    trd_shape_free(&st);
    trd_topo_destroy(t);
    trd_diag_destroy(d);
}

/* A one-node shape is timed as the runtime runs it: shm reads the other
 * rank's buffer directly from TRD_CMA_MIN_DEFAULTS (32 KiB) up, and beats
 * the variants through the segment from 256 KiB; below 32 KiB it runs
 * through the segment.  Up to 128 KiB two ranks fold in one step, which the
 * model times above the segment's variants, as measured on the 2-core node
 * (bench_allreduce --also all, inputs written before each call, two runs:
 * one step 8.7 and 9.4 us at 32 KiB, 14.8 and 14.7 us at 64 KiB; shm:cyclic
 * 4.2 and 7.5 us, 8.2 and 13.1 us); the one step is faster than the two
 * steps by single copy it replaced there.  Multi-node shapes keep no single
 * copy. */
static void test_cost_one_node_single_copy(void)
{
    trd_diag *d;
    trd_topo_t t = load_text("one.topo",
                             "machine one;\nlink eth { latency 2us; bandwidth 10GB/s; }\n"
                             "nodetype duo { synthetic \"package:1 core:2\"; }\n"
                             "switch top { link eth; nodes a : duo; }\n",
                             &d);
    static trd_machine_plan p;
    trd_plan_build(t, &p);
    const trd_algo *shm = trd_algo_find(TRD_COLL_ALLREDUCE, "shm", 3);
    const trd_algo *cyc = trd_algo_find(TRD_COLL_ALLREDUCE, "shm:cyclic", 10);
    trd_shape_store st;
    int *aux;
    trd_timer *tm;
    CU_ASSERT_FATAL(trd_machine_shape(t, 1, 2, &st, &aux) == TRD_OK);
    CU_ASSERT_EQUAL(st.s.cma, 0);
    CU_ASSERT_FATAL(trd_timer_create(&tm, t, &p, &st.s) == TRD_OK);
    double a, b;
    for (size_t bytes = 256 << 10; bytes <= (4u << 20); bytes *= 4) {
        CU_ASSERT_EQUAL(trd_timer_us(tm, shm, "", bytes / 8, &a), TRD_OK);
        CU_ASSERT_EQUAL(trd_timer_us(tm, cyc, "", bytes / 8, &b), TRD_OK);
        CU_ASSERT(a < b * 0.97);
    }
    /* below the threshold through the segment, which costs less there than
     * single copy from 0 B (a shape that already has it is kept) */
    trd_timer_destroy(tm);
    st.s.cma = TRD_CMA_READ;
    memset(st.s.cma_min, 0, sizeof st.s.cma_min);
    CU_ASSERT_FATAL(trd_timer_create(&tm, t, &p, &st.s) == TRD_OK);
    CU_ASSERT_EQUAL(trd_timer_us(tm, shm, "", 2048, &b), TRD_OK);
    trd_timer_destroy(tm);
    st.s.cma = 0;
    CU_ASSERT_FATAL(trd_timer_create(&tm, t, &p, &st.s) == TRD_OK);
    CU_ASSERT_EQUAL(trd_timer_us(tm, shm, "", 2048, &a), TRD_OK);
    CU_ASSERT(a < b);
    trd_timer_destroy(tm);
    trd_shape_free(&st);
    free(aux);
    trd_topo_destroy(t);
    trd_diag_destroy(d);
}

/* NAP with a width on bluewaters64 (64 nodes x 16, alpha_r 0 as SimGrid):
 * its closed form ranks 16,4/2 against the default 16,4 as the timed
 * schedules do, plain NAP at 512 B and 16,4/2 at 1 KiB (SimGrid: 25.10 us
 * against 27.15 us).  The nodes past the width take the result on lane 0
 * and hand it to their ranks in one step through the segment, as the lanes'
 * result is handed on after every step, not in ceil(log2 ppn) steps. */
static void test_nap_width_closed_form(void)
{
    trd_diag *d;
    trd_topo_t t = load("topologies/bluewaters64.topo", &d);
    CU_ASSERT_FATAL(trd_topo_set_alpha_r_ratio(t, 0) == TRD_OK);
    static trd_machine_plan p;
    trd_plan_build(t, &p);
    const trd_algo *nap = trd_algo_find(TRD_COLL_ALLREDUCE, "nap", 3);
    trd_nap_radices plain, wide;
    char err[128];
    CU_ASSERT_FATAL(trd_nap_radices_parse("16,4", &plain, err, sizeof err) == 0);
    CU_ASSERT_FATAL(trd_nap_radices_parse("16,4/2", &wide, err, sizeof err) == 0);
    trd_shape_store st;
    int *aux;
    trd_timer *tm;
    CU_ASSERT_FATAL(trd_machine_shape(t, 64, 16, &st, &aux) == TRD_OK);
    CU_ASSERT_FATAL(trd_timer_create(&tm, t, &p, &st.s) == TRD_OK);
    for (size_t bytes = 512; bytes <= 1024; bytes *= 2) {
        double a, b;
        CU_ASSERT_EQUAL(trd_timer_us(tm, nap, "", bytes / 8, &a), TRD_OK);
        CU_ASSERT_EQUAL(trd_timer_us(tm, nap, "16,4/2", bytes / 8, &b), TRD_OK);
        int timed = b < a;
        double ca = trd_nap_model_list(&p.levels, 64, 16, (double)bytes, &plain);
        double cb = trd_nap_model_list(&p.levels, 64, 16, (double)bytes, &wide);
        CU_ASSERT_EQUAL(timed, bytes == 1024);
        CU_ASSERT_EQUAL(cb < ca, timed);
    }
    trd_timer_destroy(tm);
    trd_shape_free(&st);
    free(aux);
    trd_topo_destroy(t);
    trd_diag_destroy(d);
}

/* On one node a copy costs by where the call's data lies: in the L1 caches
 * (16 KiB) TRD_COST_L1_SPEEDUP times faster than in the L2/L3 caches (the
 * link's bandwidth), from memory (beyond 4 MiB) TRD_COST_MEM_SLOWDOWN times
 * slower; a reduction's gamma is memory's rate, a copy's in the caches.
 * Across nodes the links' costs stay as given. */
static void test_cost_cache_levels(void)
{
    trd_diag *d;
    trd_topo_t t = load_text("lvl.topo",
                             "machine lvl;\nlink eth { latency 2us; bandwidth 10GB/s; }\n"
                             "link pkg { latency 100ns; bandwidth 20GB/s; }\n"
                             "nodetype duo { synthetic \"package:1 core:2\"; package pkg; }\n"
                             "switch top { link eth; nodes n[0-1] : duo; }\n",
                             &d);
    static const size_t counts[3] = {1024, 65536, 1 << 20}; /* 8 KiB, 512 KiB, 8 MiB */
    const double lvl[3] = {1 / TRD_COST_L1_SPEEDUP, 1, TRD_COST_MEM_SLOWDOWN};
    double gamma = 0.25e-9, piece = 512;
    trd_cost_model cm = {t, gamma, 0.25};
    for (int nodes = 1; nodes <= 2; nodes++)
        for (int k = 0; k < 3; k++) {
            int twos[2] = {2, 2}, machine[2] = {0, 1};
            trd_shape_store st;
            CU_ASSERT_FATAL(trd_shape_init(&st, nodes, twos, 0) == 0);
            st.s.machine_node = machine;
            hand h;
            char why[256];
            double got = -1, f = nodes == 1 ? lvl[k] : 1, g = nodes == 1 ? lvl[k] / 4.5 : 1;
            hand_init(&h, &st.s, (trd_call){TRD_COLL_ALLREDUCE, counts[k], 8, 0, 0, 1, 0});
            trd_sb *b = hand_rank(&h, 0, 0);
            trd_s_copy(b, 0, TRD_B_RECV, -1, 0, TRD_B_SEND, -1, 0, (size_t)piece);
            trd_s_reduce(b, 0, TRD_B_RECV, 0, TRD_B_SEND, -1, 0, (size_t)piece);
            for (int r = 1; r < 2 * nodes; r++)
                hand_rank(&h, r, 0);
            hand_end(&h);
            double want = 8 * piece * (2 * f / 20e9 + g * gamma);
            CU_ASSERT_EQUAL(trd_sched_cost(&h.s, &st.s, &cm, &got, why, sizeof why), TRD_OK);
            CU_ASSERT_DOUBLE_EQUAL(got, want, want * 1e-9);
            trd_sched_free(&h.s);
            trd_shape_free(&st);
        }
    CU_ASSERT_DOUBLE_EQUAL(TRD_COST_MEM_SLOWDOWN, 4.5, 1e-12);
    trd_topo_destroy(t);
    trd_diag_destroy(d);
}

/* Single copy: on one node of two packages, rank 0 waits for rank 1's
 * signal (a cache-line handshake, less than the link's latency), then
 * reads rank 1's sendbuf (a system call: TRD_COST_SINGLE_COPY_S, more than
 * the node link's latency, and the link's bandwidth) and reduces a piece of
 * rank 1's segment into it (that link's bandwidth, gamma at the rate of the
 * caches, where 32 KiB lie).  Rank 1 copies into its segment first. */
static void test_cost_single_copy(void)
{
    trd_diag *d;
    trd_topo_t t =
        load_text("cma.topo",
                  "machine cma;\nlink eth { latency 2us; bandwidth 10GB/s; }\n"
                  "link pkg { latency 100ns; bandwidth 20GB/s; }\n"
                  "link qpi { latency 400ns; bandwidth 8GB/s; }\n"
                  "nodetype two { synthetic \"package:2 core:1\"; package pkg; node qpi; }\n"
                  "switch top { link eth; nodes a : two; }\n",
                  &d);
    int twos[1] = {2}, machine[1] = {0};
    trd_shape_store st;
    CU_ASSERT_FATAL(trd_shape_init(&st, 1, twos, 0) == 0);
    st.s.machine_node = machine;
    st.s.cma = TRD_CMA_READ;
    trd_link_cost pk = trd_topo_nodetype_package_link(t, trd_topo_node_type(t, 0));
    trd_link_cost qpi = trd_topo_nodetype_node_link(t, trd_topo_node_type(t, 0));
    CU_ASSERT_DOUBLE_EQUAL(qpi.latency_s, 400e-9, 1e-15);
    size_t n = 4096, piece = 64;
    double gamma = 0.25e-9;
    double in = 8.0 * (double)piece / pk.bandwidth_Bps; /* rank 1's copy into its segment */
    CU_ASSERT(TRD_COST_HANDSHAKE_S < qpi.latency_s && TRD_COST_SINGLE_COPY_S > qpi.latency_s);
    double want = in + TRD_COST_HANDSHAKE_S /* the wait */
                  + TRD_COST_SINGLE_COPY_S +
                  8.0 * (double)n / qpi.bandwidth_Bps /* the single copy */
                  + 8.0 * (double)piece *
                        (1 / qpi.bandwidth_Bps + gamma / TRD_COST_MEM_SLOWDOWN); /* the reduce */
    hand h;
    char why[256];
    double got = -1;
    trd_cost_model cm = {t, gamma, 0.25};
    hand_init(&h, &st.s, (trd_call){TRD_COLL_ALLREDUCE, n, 8, 0, 0, 1, 0});
    trd_sb *b = hand_rank(&h, 0, 1);
    trd_s_wait(b, 0, 1, 0, TRD_CTR_IN, 1);
    trd_s_copy(b, 0, TRD_B_RECV, -1, 0, TRD_B_SEND, 1, 0, n);
    trd_s_reduce(b, 0, TRD_B_RECV, 0, TRD_B_SEG, 1, 0, piece);
    b = hand_rank(&h, 1, 1);
    trd_s_copy(b, 0, TRD_B_SEG, -1, 0, TRD_B_SEND, -1, 0, piece);
    trd_s_signal(b, 0, TRD_CTR_IN, 1);
    hand_end(&h);
    CU_ASSERT_EQUAL(trd_sched_cost(&h.s, &st.s, &cm, &got, why, sizeof why), TRD_OK);
    CU_ASSERT_DOUBLE_EQUAL(got, want, want * 1e-9);
    trd_sched_free(&h.s);
    trd_shape_free(&st);
    trd_topo_destroy(t);
    trd_diag_destroy(d);
}

/* trd_ring_bound stays below the ring's timed cost, over shapes of two
 * machines (one with two packages per node), counts with empty and uneven
 * blocks; and it is not vacuous: within 1.5x of the cost. */
static void test_ring_bound(void)
{
    static const char *topos[] = {"tests/data/select-16x8.topo", "tests/data/two-level.topo"};
    const trd_algo *ring = trd_algo_find(TRD_COLL_ALLREDUCE, "ring", 4);
    for (int k = 0; k < 2; k++) {
        trd_diag *d;
        trd_topo_t t = load(topos[k], &d);
        static trd_machine_plan p;
        trd_plan_build(t, &p);
        trd_cost_model cm = {t, p.levels.gamma_s_per_byte, TRD_ALPHA_R_RATIO};
        static const int shapes[][2] = {{2, 1}, {2, 2}, {4, 2}, {8, 1}, {8, 2}, {16, 8}, {3, 2}};
        for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
            trd_shape_store st;
            int *aux;
            if (shapes[i][0] > p.nnodes || shapes[i][1] > p.ppn)
                continue;
            CU_ASSERT_FATAL(trd_machine_shape(t, shapes[i][0], shapes[i][1], &st, &aux) == TRD_OK);
            static const size_t counts[] = {1, 7, 100, 1001, 65536, 1000003};
            for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++) {
                trd_sched s;
                char why[256];
                double cost = -1;
                trd_call call = {TRD_COLL_ALLREDUCE, counts[c], 8, 0, 0, 1, 0};
                CU_ASSERT_FATAL(trd_plan(&s, ring, "", &st.s, &call, -1, why, sizeof why) == 0);
                CU_ASSERT_EQUAL(trd_sched_cost(&s, &st.s, &cm, &cost, why, sizeof why), TRD_OK);
                double bound = trd_ring_bound(t, &st.s, counts[c], 8, p.levels.gamma_s_per_byte);
                CU_ASSERT(cost > 0);
                CU_ASSERT(bound <= cost * (1 + 1e-12));
                CU_ASSERT(bound >= cost / 1.5);
                if (bound > cost * (1 + 1e-12) || bound < cost / 1.5)
                    fprintf(stderr, "\n    %s %d x %d, %zu elements: bound %g s, cost %g s",
                            topos[k], shapes[i][0], shapes[i][1], counts[c], bound, cost);
                trd_sched_free(&s);
            }
            trd_shape_free(&st);
            free(aux);
        }
        trd_topo_destroy(t);
        trd_diag_destroy(d);
    }
}

/* ---- Selection on the schedules ------------------------------------------------- */

/* The searched parameters of each range of the shape: at the range's
 * typical size the chosen string times no slower than the default and than
 * every candidate the descriptor offers; the range's prediction is the
 * chosen one's.  Returns how many ranges had parameters to search. */
static int check_params(trd_timer *tm, const trd_shape *sh, const trd_shape_plan *sp)
{
    char cand[64][TRD_PARAMS_MAX];
    int searched = 0;
    for (int c = 0; c < sp->nchoices; c++) {
        const trd_choice *ch = &sp->choice[c];
        int nc = ch->alg->candidates ? ch->alg->candidates(sh, cand, 64) : 0;
        if (!nc)
            continue;
        searched++;
        size_t count = ch->typical / 8 ? ch->typical / 8 : 1;
        double mine, other;
        CU_ASSERT_EQUAL(trd_timer_us(tm, ch->alg, ch->params, count, &mine), TRD_OK);
        CU_ASSERT_DOUBLE_EQUAL(ch->us, mine, mine * 1e-9);
        for (int k = -1; k < nc; k++) {
            CU_ASSERT_EQUAL(trd_timer_us(tm, ch->alg, k < 0 ? "" : cand[k], count, &other), TRD_OK);
            CU_ASSERT(mine <= other * (1 + 1e-9));
        }
    }
    return searched;
}

/* The ranges drawn on the schedules, for every planned shape of two
 * machines: contiguous, ending at SIZE_MAX, a different algorithm each; at
 * sizes doubling from 8 B inside each range (1/32 away from its ends, where
 * the bisection stops) the chosen algorithm's schedule is timed no slower
 * than any candidate's; the whole machine's ranges are its shape's; the
 * searched parameters are the fastest of their candidates. */
static void test_select(void)
{
    static const char *topos[] = {"tests/data/select-16x8.topo", "topologies/ethernet32.topo"};
    const trd_algo *cand[TRD_MAX_CANDIDATES];
    int ncand = trd_model_candidates(cand, TRD_MAX_CANDIDATES);
    for (int k = 0; k < 2; k++) {
        trd_diag *d;
        trd_topo_t t = load(topos[k], &d);
        static trd_machine_plan p;
        trd_plan_build(t, &p);
        trd_select_stats stats;
        CU_ASSERT_EQUAL(trd_select_on_schedules(t, &p, &stats), TRD_OK);
        int within = 0; /* shapes drawn on the schedules; the others on the closed forms */
        for (int i = 0; i < p.nshapes; i++)
            within += p.shape[i].nnodes * p.shape[i].ppn <= TRD_SELECT_MAX_RANKS;
        CU_ASSERT(within > 0 && stats.drawn == within && stats.timed > 0);
        CU_ASSERT(stats.drawn + stats.closed == p.nshapes);
        trd_search_stats sstats;
        CU_ASSERT_EQUAL(trd_search_params(t, &p, &sstats), TRD_OK);
        int checked = 0, searched = 0;
        for (int i = 0; i < p.nshapes; i++) {
            const trd_shape_plan *sp = &p.shape[i];
            CU_ASSERT_EQUAL(sp->on_schedules, sp->nnodes * sp->ppn <= TRD_SELECT_MAX_RANKS);
            if (!sp->on_schedules)
                continue;
            CU_ASSERT_FATAL(sp->nchoices >= 1);
            CU_ASSERT_EQUAL(sp->choice[sp->nchoices - 1].below, SIZE_MAX);
            trd_shape_store st;
            int *aux;
            trd_timer *tm;
            CU_ASSERT_FATAL(trd_machine_shape(t, sp->nnodes, sp->ppn, &st, &aux) == TRD_OK);
            CU_ASSERT_FATAL(trd_timer_create(&tm, t, &p, &st.s) == TRD_OK);
            double from = 0;
            for (int c = 0; c < sp->nchoices; c++) {
                const trd_choice *ch = &sp->choice[c];
                if (c > 0) {
                    CU_ASSERT(ch->below > sp->choice[c - 1].below);
                    CU_ASSERT_PTR_NOT_EQUAL(ch->alg, sp->choice[c - 1].alg);
                }
                double end = ch->below == SIZE_MAX ? 1073741824.0 : (double)ch->below;
                for (double b = 8; b < end * (1 - 1.0 / 32); b *= 2) {
                    if (b < from * (1 + 1.0 / 32))
                        continue;
                    double mine, other;
                    CU_ASSERT_EQUAL(trd_timer_us(tm, ch->alg, "", (size_t)(b / 8), &mine), TRD_OK);
                    for (int a = 0; a < ncand; a++) {
                        CU_ASSERT_EQUAL(trd_timer_us(tm, cand[a], "", (size_t)(b / 8), &other),
                                        TRD_OK);
                        CU_ASSERT(mine <= other * (1 + 1e-9));
                        if (mine > other * (1 + 1e-9))
                            fprintf(stderr, "\n    %s %d x %d at %.0f B: %s %.3f us, %s %.3f us",
                                    topos[k], sp->nnodes, sp->ppn, b, ch->alg->name, mine,
                                    cand[a]->name, other);
                    }
                    checked++;
                }
                from = (double)ch->below;
            }
            searched += check_params(tm, &st.s, sp);
            if (sp->nnodes == p.nnodes && sp->ppn == p.ppn) {
                CU_ASSERT_EQUAL(p.nchoices, sp->nchoices);
                for (int c = 0; c < sp->nchoices && c < p.nchoices; c++)
                    CU_ASSERT(p.choice[c].below == sp->choice[c].below &&
                              p.choice[c].alg == sp->choice[c].alg);
            }
            trd_timer_destroy(tm);
            trd_shape_free(&st);
            free(aux);
        }
        CU_ASSERT(checked > 10 * within);
        CU_ASSERT(searched <= sstats.searched); /* also searched: shapes on the closed forms */
        CU_ASSERT(searched > 0);
        trd_topo_destroy(t);
        trd_diag_destroy(d);
    }
}

/* One range drawing serves the closed forms: on them, the ranges are those
 * of a plain scan of every power of two with each change bisected to the
 * byte (trd_plan_build's). */
static void test_closed_ranges(void)
{
    trd_diag *d;
    trd_topo_t t = load("topologies/bluewaters64.topo", &d);
    static trd_machine_plan p;
    CU_ASSERT_EQUAL(trd_plan_build(t, &p), TRD_OK);
    const trd_algo *cand[TRD_MAX_CANDIDATES];
    int nc = trd_model_candidates(cand, TRD_MAX_CANDIDATES);
    for (int s = 0; s < p.nshapes; s++) {
        const trd_shape_plan *sp = &p.shape[s];
        for (int c = 0; c + 1 < sp->nchoices; c++) {
            /* the fastest changes exactly at the boundary */
            size_t at = sp->choice[c].below;
            double t1[TRD_MAX_CANDIDATES], t0[TRD_MAX_CANDIDATES];
            int s1, s0;
            for (int a = 0; a < nc; a++) {
                t0[a] = trd_model_time(&p, cand[a], sp->nnodes, sp->ppn, (double)(at - 1));
                t1[a] = trd_model_time(&p, cand[a], sp->nnodes, sp->ppn, (double)at);
            }
            CU_ASSERT_PTR_EQUAL(cand[trd_model_pick(t0, nc, &s0)], sp->choice[c].alg);
            CU_ASSERT_PTR_EQUAL(cand[trd_model_pick(t1, nc, &s1)], sp->choice[c + 1].alg);
        }
    }
    trd_topo_destroy(t);
    trd_diag_destroy(d);
}

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
        {"broken schedules refused with their message", test_broken},
        {"ring contention on the switch tree", test_contention},
        {"every candidate on switch trees of 1..4 levels, the generator's chain", test_levels},
        {"cost model: link sharing added up by hand", test_cost},
        {"cost model: a message starts when both ends have posted it", test_cost_posted},
        {"cost model: a single-copy read and a remote segment", test_cost_single_copy},
        {"cost model: one node timed with the single-copy path", test_cost_one_node_single_copy},
        {"NAP's closed form weighs a width as the schedules do", test_nap_width_closed_form},
        {"cost model: one node's copies by where the data lies", test_cost_cache_levels},
        {"cost model: a link's measured alpha_r", test_cost_alpha_r},
        {"the ring's bound stays below its timed cost", test_ring_bound},
        {"size ranges drawn on the schedules are the fastest inside", test_select},
        {"size ranges on the closed forms change where the fastest does", test_closed_ranges},
        {"the pieces on one node at mid sizes, as the runtime plans them", test_one_node_mid_sizes},
        {"allreduce on one node by single copy in one step or two",
         test_one_node_single_copy_steps},
        {"bcast on one node: the root writes a part from 1 MiB", test_one_node_bcast_split},
    };
    return trd_test_main("sched", tests, TRD_NTESTS(tests));
}
