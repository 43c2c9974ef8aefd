/* Schedules and their verifier (gen/sched.h), without MPI:
 *   - every planner over a matrix of communicator shapes (1..4096 ranks,
 *     primes, uneven ranks per node, shuffled placements; switch trees of
 *     1..4 levels with the contention check), counts, in place
 *     or not, with and without shared memory, commutative or not where the
 *     planner serves both: the verifier proves each;
 *   - schedules broken on purpose (a dropped reduce, a wrong length, swapped
 *     operands, a missing send, an early read, a missing barrier, a ring off
 *     the DFS order): the verifier refuses each with its exact message;
 *   - the cost model: link sharing and the start of a message when both ends
 *     have posted it, added up by hand; the ring's bound below its cost;
 *   - the size ranges drawn on the schedules: inside each range the chosen
 *     schedule is timed fastest of all the planners, timed again here. */
#include <CUnit/Basic.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "plan.h"
#include "sched.h"
#include "test_util.h"

/* Plan alg on nnodes nodes of ppn[v] ranks and verify; returns the
 * verifier's result, why filled. */
static int plan_verify(const char *alg, const char *params, int nnodes, const int *ppn,
                       unsigned seed, size_t count, int in_place, int commutative, int shm,
                       char *why, size_t whylen)
{
    trd_shape_store st;
    trd_sched s;
    CU_ASSERT_FATAL(trd_shape_init(&st, nnodes, ppn, seed) == 0);
    int rc = trd_sched_plan(&s, alg, params, &st.s, count, 8, in_place, commutative, shm, why,
                            whylen);
    CU_ASSERT_EQUAL(rc, 0);
    if (rc == 0) {
        trd_verify_opts o = {0};
        rc = trd_sched_verify(&s, &st.s, &o, why, whylen);
        trd_sched_free(&s);
    }
    trd_shape_free(&st);
    return rc;
}

static int uniform[4096];

static void check_one(const char *alg, const char *params, int nnodes, const int *ppn,
                      unsigned seed, size_t count, int in_place, int commutative, int shm)
{
    char why[512];
    int rc = plan_verify(alg, params, nnodes, ppn, seed, count, in_place, commutative, shm, why,
                         sizeof why);
    if (rc) {
        int n = 0;
        for (int v = 0; v < nnodes; v++)
            n += ppn[v];
        fprintf(stderr, "\n  %s%s%s on %d nodes, %d ranks, seed %u, count %zu, %s, %s, %s: %s\n",
                alg, *params ? ":" : "", params, nnodes, n, seed, count,
                in_place ? "in place" : "out of place", commutative ? "commutative" : "rank order",
                shm ? "shm" : "p2p", why);
    }
    CU_ASSERT_EQUAL(rc, 0);
}

/* The planners serving non-commutative operations. */
static int keeps_order(const char *alg)
{
    return !strcmp(alg, "rd") || !strcmp(alg, "rm");
}

static void test_shape_matrix(void)
{
    static const int nodes[] = {1, 2, 3, 4, 5, 7, 8, 13, 16};
    static const int ppns[] = {1, 2, 3, 4};
    static const int uneven[][6] = {{3, 3, 1, 2}, {2, 1, 4}, {2, 2, 5}, {5, 1, 1, 3, 2, 2}};
    static const int nuneven[] = {4, 3, 3, 6};
    int checked = 0;
    for (int a = 0; trd_sched_planners[a]; a++) {
        const char *alg = trd_sched_planners[a];
        for (size_t i = 0; i < sizeof nodes / sizeof *nodes; i++)
            for (size_t j = 0; j < sizeof ppns / sizeof *ppns; j++) {
                int ppn[16];
                for (int v = 0; v < nodes[i]; v++)
                    ppn[v] = ppns[j];
                int p = nodes[i] * ppns[j];
                size_t counts[3] = {1, 7, (size_t)p * 8 * 3 + 5};
                for (int k = 0; k < 3; k++)
                    for (int shm = 0; shm < 2; shm++) {
                        unsigned seed = (unsigned)(k == 2 ? 0 : 17 * (i + 1) + j);
                        check_one(alg, "", nodes[i], ppn, seed, counts[k], k == 1, 1, shm);
                        checked++;
                        if (keeps_order(alg)) {
                            check_one(alg, "", nodes[i], ppn, seed, counts[k], k == 0, 0, shm);
                            checked++;
                        }
                    }
            }
        for (size_t u = 0; u < sizeof nuneven / sizeof *nuneven; u++)
            for (unsigned seed = 0; seed < 2; seed++) {
                check_one(alg, "", nuneven[u], uneven[u], seed, 1000, (int)seed, 1, 1);
                check_one(alg, "", nuneven[u], uneven[u], seed, 3, 0, 1, 0);
                checked += 2;
                if (keeps_order(alg)) {
                    check_one(alg, "", nuneven[u], uneven[u], seed, 100, 0, 0, 0);
                    checked++;
                }
            }
    }
    /* parameters: leader algorithms, RM schedules */
    int ppn4[8] = {4, 4, 4, 4, 4, 4, 4, 4}, ones[12] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1};
    check_one("smp", "ring", 8, ppn4, 0, 333, 0, 1, 1);
    check_one("smp", "rabenseifner", 5, ppn4, 3, 333, 0, 1, 0);
    check_one("smp", "rd", 7, ppn4, 0, 33, 1, 1, 1);
    check_one("flex", "ring", 5, ppn4, 0, 3333, 0, 1, 1);
    check_one("flex", "rabenseifner", 6, ppn4, 2, 3333, 1, 1, 0);
    check_one("flex", "rd", 3, ppn4, 0, 77, 0, 1, 0);
    check_one("rm", "a2,a3", 6, ones, 0, 40, 0, 0, 0);
    check_one("rm", "m1g0a3,n1g0a2", 7, ones, 5, 40, 0, 1, 0);
    check_one("rm", "c2m2,a2,a3,e2m2", 7, ones, 0, 40, 0, 0, 0);
    check_one("rm", "a4,a3", 12, ones, 0, 40, 1, 0, 0);
    CU_ASSERT(checked > 500);
}

/* Large and prime rank counts, each in a second or less, except the ring
 * over 4096 ranks, whose schedule alone has 2 * 4096 * 4095 messages. */
static void test_large(void)
{
    static const struct {
        const char *alg;
        int nnodes, ppn;
        size_t count;
        int commutative;
    } big[] = {
        {"rd", 4096, 1, 7, 1},          {"rd", 4093, 1, 5, 0},
        {"rabenseifner", 4096, 1, 4099, 1}, {"rabenseifner", 4093, 1, 9, 1},
        {"rm", 4096, 1, 5, 0},          {"rm", 4093, 1, 5, 1},
        {"nap", 4096, 1, 3, 1},         {"nap", 256, 16, 33, 1},
        {"nap", 1021, 4, 5, 1},         {"smp", 512, 8, 9, 1},
        {"flex", 512, 8, 1000, 1},      {"hring", 256, 16, 2000, 1},
        {"ring", 1024, 1, 2051, 1},     {"ring", 64, 16, 2051, 1},
        {"ring", 4096, 1, 3, 1},
    };
    for (size_t i = 0; i < sizeof big / sizeof *big; i++) {
        for (int v = 0; v < big[i].nnodes; v++)
            uniform[v] = big[i].ppn;
        clock_t t0 = clock();
        check_one(big[i].alg, "", big[i].nnodes, uniform, 0, big[i].count, 0, big[i].commutative, 1);
        fprintf(stderr, "\n    %s on %d x %d ranks, %zu elements: verified in %.2f s",
                big[i].alg, big[i].nnodes, big[i].ppn, big[i].count,
                (double)(clock() - t0) / CLOCKS_PER_SEC);
    }
}

/* ---- Broken schedules -------------------------------------------------------- */

typedef struct broken {
    trd_shape_store st;
    trd_sched s;
} broken;

static void plan(broken *b, const char *alg, int nnodes, int ppn, size_t count, int commutative,
                 int shm)
{
    char why[256];
    int p[64];
    for (int v = 0; v < nnodes; v++)
        p[v] = ppn;
    CU_ASSERT_FATAL(trd_shape_init(&b->st, nnodes, p, 0) == 0);
    CU_ASSERT_FATAL(trd_sched_plan(&b->s, alg, "", &b->st.s, count, 8, 0, commutative, shm, why,
                                   sizeof why) == 0);
}

/* The index of rank r's k-th op of kind op (k from 0), or -1. */
static long find(const trd_sched *s, int r, int op, int k)
{
    for (size_t i = s->first[r]; i < s->first[r + 1]; i++)
        if (s->op[i].op == op && k-- == 0)
            return (long)i;
    return -1;
}

static void expect(broken *b, const char *msg)
{
    char why[512] = "";
    trd_verify_opts o = {0};
    CU_ASSERT_EQUAL(trd_sched_verify(&b->s, &b->st.s, &o, why, sizeof why), -1);
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
    plan(&b, "rd", 4, 1, 8, 1, 0);
    i = find(&b.s, 2, TRD_S_REDUCE, 0);
    CU_ASSERT_FATAL(i >= 0);
    trd_sched_drop(&b.s, (size_t)i);
    expect(&b, "rank 0: recvbuf[0] holds 3 of the 4 contributions");

    /* a receive one element short */
    plan(&b, "ring", 3, 1, 72, 1, 0);
    i = find(&b.s, 1, TRD_S_SENDRECV, 0);
    b.s.op[i].rlen--;
    expect(&b, "rank 1, op 1 (round 1): receives 23 elements from rank 0, which sends 24 (its op 1)");

    /* operands swapped in a rank-order schedule */
    plan(&b, "rd", 4, 1, 5, 0, 0);
    i = find(&b.s, 1, TRD_S_REDUCE, 0);
    b.s.op[i].left = !b.s.op[i].left;
    expect(&b, "rank 1: recvbuf[0] holds all 4 contributions, but not in rank order (starts with rank 1)");

    /* a send that never happens: rank 0 goes on to wait for the result */
    plan(&b, "rd", 3, 1, 4, 1, 0);
    i = find(&b.s, 0, TRD_S_SEND, 0);
    trd_sched_drop(&b.s, (size_t)i);
    expect(&b, "rank 0, op 1 (round 41): deadlock: waits to receive from 1, which no rank matches");

    /* the temporary read before it is written */
    plan(&b, "rd", 2, 1, 4, 1, 0);
    b.s.op[find(&b.s, 0, TRD_S_SENDRECV, 0)].rlen = 0;
    b.s.op[find(&b.s, 1, TRD_S_SENDRECV, 0)].len = 0;
    expect(&b, "rank 0, op 2 (round 2): reads tmp[0] of rank 0 before it is written");

    /* shared memory: the barrier after the copy-in dropped */
    plan(&b, "nap", 1, 3, 40, 1, 1);
    trd_sched_drop(&b.s, (size_t)find(&b.s, 1, TRD_S_BARRIER, 0));
    trd_sched_drop(&b.s, (size_t)find(&b.s, 0, TRD_S_BARRIER, 0));
    trd_sched_drop(&b.s, (size_t)find(&b.s, 2, TRD_S_BARRIER, 0));
    expect(&b, "rank 0, op 2 (round 0): reads shm[0] of rank 2, which rank 2 has not written before "
               "a barrier both passed");
}

/* The ring on a switch tree: contention-free in DFS order [TREE Lemma 4];
 * nodes visited out of that order share links, and the verifier says which. */
static void test_contention(void)
{
    trd_diag *d = trd_diag_create();
    trd_topo_t t = NULL;
    CU_ASSERT_EQUAL_FATAL(trd_topo_create(&t), TRD_OK);
    CU_ASSERT_EQUAL_FATAL(trd_read_dsl(t, d, trd_test_path("topologies/ethernet32.topo")), TRD_OK);
    CU_ASSERT_EQUAL_FATAL(trd_topo_finalize(t, d), TRD_OK);
    int n = trd_topo_nnodes(t), ones[64], machine[64];
    for (int v = 0; v < n; v++)
        ones[v] = 1, machine[v] = v;
    trd_shape_store st;
    trd_sched s;
    char why[512] = "";
    CU_ASSERT_FATAL(trd_shape_init(&st, n, ones, 0) == 0);
    st.s.machine_node = machine;
    CU_ASSERT_FATAL(trd_sched_plan(&s, "ring", "", &st.s, 64, 8, 0, 1, 0, why, sizeof why) == 0);
    trd_verify_opts o = {t, 1};
    CU_ASSERT_EQUAL(trd_sched_verify(&s, &st.s, &o, why, sizeof why), 0);
    /* ring positions 0..15 alternating between the first two switches: n0,
     * n8, n1, n9, ...: their up-links carry a message every other hop */
    for (int v = 0; v < 16; v++)
        machine[v] = (v % 2) * 8 + v / 2;
    CU_ASSERT_EQUAL(trd_sched_verify(&s, &st.s, &o, why, sizeof why), -1);
    CU_ASSERT_STRING_EQUAL(why, "round 1: the messages n31 -> n0 and n8 -> n1 share the link down to "
                                "'sw0' [TREE §2]");
    fprintf(stderr, "\n    out of DFS order: %s", why);
    trd_sched_free(&s);
    trd_shape_free(&st);
    trd_topo_destroy(t);
    trd_diag_destroy(d);
}

static trd_topo_t load(const char *rel, trd_diag **d)
{
    trd_topo_t t = NULL;
    *d = trd_diag_create();
    CU_ASSERT_EQUAL_FATAL(trd_topo_create(&t), TRD_OK);
    CU_ASSERT_EQUAL_FATAL(trd_read_dsl(t, *d, trd_test_path(rel)), TRD_OK);
    CU_ASSERT_EQUAL_FATAL(trd_topo_finalize(t, *d), TRD_OK);
    return t;
}

/* Switch trees of 1..4 levels (a binary tree of switches, two nodes of two
 * packages x 2 cores under each leaf, nodes listed out of DFS order in the
 * file for the deeper trees): every planner over the whole machine, in its
 * DFS ring, with and without shared memory, verified with the contention
 * check on and timed; the ring is contention-free at every depth, and the
 * generator's whole chain (plan, ranges on the schedules, parameter search,
 * verification of every chosen schedule) passes. */
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
                                      "switch s%d { link net; nodes n%d,n%d : two; }\n", i, 2 * k + 1,
                                      2 * k);
            } else {
                o += (size_t)snprintf(text + o, sizeof text - o,
                                      "switch s%d { link net; switches s%d s%d; }\n", i, 2 * i,
                                      2 * i + 1);
            }
        }
        CU_ASSERT_FATAL(o < sizeof text);
        trd_diag *d = trd_diag_create();
        trd_topo_t t = NULL;
        CU_ASSERT_EQUAL_FATAL(trd_topo_create(&t), TRD_OK);
        CU_ASSERT_EQUAL_FATAL(trd_read_dsl_string(t, d, "levels.topo", text, o), TRD_OK);
        CU_ASSERT_EQUAL_FATAL(trd_topo_finalize(t, d), TRD_OK);
        CU_ASSERT_EQUAL(trd_topo_nnodes(t), 2 * leaf0);
        trd_shape_store st;
        int *machine;
        CU_ASSERT_FATAL(trd_machine_shape(t, 0, 0, &st, &machine) == 0);
        static trd_plan p;
        trd_plan_build(t, &p);
        trd_cost_model cm = {t, p.gamma_s_per_byte, TRD_ALPHA_R_RATIO};
        for (int a = 0; trd_sched_planners[a]; a++)
            for (int shm = 0; shm < 2; shm++) {
                trd_sched s;
                char why[512] = "";
                CU_ASSERT_FATAL(trd_sched_plan(&s, trd_sched_planners[a], "", &st.s, 1000, 8, 0, 1,
                                               shm, why, sizeof why) == 0);
                trd_verify_opts vo = {t, 1};
                int rc = trd_sched_verify(&s, &st.s, &vo, why, sizeof why);
                CU_ASSERT_EQUAL(rc, 0);
                if (rc)
                    fprintf(stderr, "\n    %d levels, %s: %s", levels, trd_sched_planners[a], why);
                CU_ASSERT(!strcmp(trd_sched_planners[a], "ring") ? s.contention_free : 1);
                CU_ASSERT(trd_sched_cost(&s, &st.s, &cm, 8, why, sizeof why) > 0);
                trd_sched_free(&s);
            }
        trd_select_stats sel;
        trd_search_stats srch;
        trd_check_stats chk;
        trd_select_on_schedules(t, &p, &sel);
        trd_search_params(t, &p, &srch);
        trd_check_opts co = {"levels.topo", NULL};
        CU_ASSERT_EQUAL(sel.drawn, p.nshapes);
        CU_ASSERT_EQUAL(trd_check_schedules(t, &p, &co, d, &chk), 0);
        CU_ASSERT(chk.nverified > 0 && chk.largest == 4 * trd_topo_nnodes(t));
        trd_shape_free(&st);
        free(machine);
        trd_topo_destroy(t);
        trd_diag_destroy(d);
    }
}

/* Timed cost of recursive doubling (point to point) over the first nnodes
 * nodes of t, one rank each, n doubles, gamma 0.25 ns/B, alpha_r ratio 1/4. */
static double rd_cost(trd_topo_t t, int nnodes, size_t n)
{
    int ones[4] = {1, 1, 1, 1}, machine[4] = {0, 1, 2, 3};
    trd_shape_store st;
    trd_sched s;
    char why[256];
    CU_ASSERT_FATAL(nnodes <= 4 && trd_shape_init(&st, nnodes, ones, 0) == 0);
    st.s.machine_node = machine;
    CU_ASSERT_FATAL(trd_sched_plan(&s, "rd", "", &st.s, n, 8, 0, 1, 0, why, sizeof why) == 0);
    trd_cost_model cm = {t, 0.25e-9, 0.25};
    double got = trd_sched_cost(&s, &st.s, &cm, 8, why, sizeof why);
    trd_sched_free(&s);
    trd_shape_free(&st);
    return got;
}

/* The cost model on a schedule small enough to add up by hand: recursive
 * doubling over the four nodes of tests/data/testbed.topo (two leaf
 * switches): the first exchange stays under a leaf, the second crosses the
 * root, where the two pairs' messages share each leaf's up- and down-link,
 * so each gets half the bandwidth [TREE §2]. */
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
    double want = local                                                           /* copy in */
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
    static const char text[] = "machine ar;\n"
                               "link eth { latency 20us; bandwidth 1GB/s; alpha_r 3us; }\n"
                               "nodetype one { synthetic \"package:1 core:1\"; }\n"
                               "switch top { link eth; nodes a,b : one; }\n";
    trd_diag *d = trd_diag_create();
    trd_topo_t t = NULL;
    CU_ASSERT_EQUAL_FATAL(trd_topo_create(&t), TRD_OK);
    CU_ASSERT_EQUAL_FATAL(trd_read_dsl_string(t, d, "ar.topo", text, sizeof text - 1), TRD_OK);
    CU_ASSERT_EQUAL_FATAL(trd_topo_finalize(t, d), TRD_OK);
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

/* A message starts when both ends have posted it.  On two nodes of two
 * ranks, rank 3 copies a long vector and then meets rank 2 at the node's
 * barrier; rank 2 then receives n elements from rank 0, which sent at once.
 * The message starts when the barrier releases rank 2, one package latency
 * after the copy, not when rank 0 posted it. */
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
    double want = copy + pk.latency_s + near.latency_s + 8.0 * (double)n / near.bandwidth_Bps;
    trd_sched s;
    char why[256];
    CU_ASSERT_FATAL(trd_sched_init(&s, "test", 4, big, 0) == 0);
    trd_sched_rank(&s, 0);
    trd_s_send(&s, 2, 2, TRD_B_SEND, 0, n);
    trd_sched_rank(&s, 1);
    trd_sched_rank(&s, 2);
    trd_s_barrier(&s, 1);
    trd_s_recv(&s, 2, 0, TRD_B_TMP, 0, n);
    trd_sched_rank(&s, 3);
    trd_s_copy(&s, 1, TRD_B_RECV, 0, TRD_B_SEND, -1, 0, big);
    trd_s_barrier(&s, 1);
    CU_ASSERT_FATAL(trd_sched_end(&s) == 0);
    double got = trd_sched_cost(&s, &st.s, &cm, 8, why, sizeof why);
    CU_ASSERT_DOUBLE_EQUAL(got, want, want * 1e-9);
    trd_sched_free(&s);
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
    for (int k = 0; k < 2; k++) {
        trd_diag *d;
        trd_topo_t t = load(topos[k], &d);
        static trd_plan p;
        trd_plan_build(t, &p);
        trd_cost_model cm = {t, p.gamma_s_per_byte, TRD_ALPHA_R_RATIO};
        static const int shapes[][2] = {{2, 1}, {2, 2}, {4, 2}, {8, 1}, {8, 2}, {16, 8}, {3, 2}};
        for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
            trd_shape_store st;
            int *machine;
            if (shapes[i][0] > p.nnodes || shapes[i][1] > p.ppn)
                continue;
            CU_ASSERT_FATAL(trd_machine_shape(t, shapes[i][0], shapes[i][1], &st, &machine) == 0);
            static const size_t counts[] = {1, 7, 100, 1001, 65536, 1000003};
            for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++) {
                trd_sched s;
                char why[256];
                CU_ASSERT_FATAL(trd_sched_plan(&s, "ring", "", &st.s, counts[c], 8, 0, 1, 1, why,
                                               sizeof why) == 0);
                double cost = trd_sched_cost(&s, &st.s, &cm, 8, why, sizeof why);
                double bound = trd_ring_bound(t, &st.s, counts[c], 8, p.gamma_s_per_byte);
                CU_ASSERT(cost > 0);
                CU_ASSERT(bound <= cost * (1 + 1e-12));
                CU_ASSERT(bound >= cost / 1.5);
                if (bound > cost * (1 + 1e-12) || bound < cost / 1.5)
                    fprintf(stderr, "\n    %s %d x %d, %zu elements: bound %g s, cost %g s", topos[k],
                            shapes[i][0], shapes[i][1], counts[c], bound, cost);
                trd_sched_free(&s);
            }
            trd_shape_free(&st);
            free(machine);
        }
        trd_topo_destroy(t);
        trd_diag_destroy(d);
    }
}

/* Microseconds of planner alg's schedule over st for bytes of doubles, as
 * the selection times it; INFINITY where it does not plan. */
static double timed_params_us(trd_topo_t t, const trd_plan *p, const trd_shape *sh,
                              const char *alg, const char *params, double bytes)
{
    trd_sched s;
    char why[256];
    size_t count = (size_t)(bytes / 8) ? (size_t)(bytes / 8) : 1;
    if (trd_sched_plan(&s, alg, params, sh, count, 8, 0, 1, 1, why, sizeof why))
        return INFINITY;
    trd_cost_model cm = {t, p->gamma_s_per_byte, TRD_ALPHA_R_RATIO};
    double c = trd_sched_cost(&s, sh, &cm, 8, why, sizeof why);
    trd_sched_free(&s);
    CU_ASSERT(c >= 0);
    return c * 1e6;
}

static double timed_us(trd_topo_t t, const trd_plan *p, const trd_shape *sh, const char *alg,
                       double bytes)
{
    return timed_params_us(t, p, sh, alg, "", bytes);
}

/* The searched parameters of each range of sh: at the range's typical size
 * the chosen string times no slower than the default, and for smp and flex
 * than each inter-node algorithm; the range's prediction is the chosen
 * one's.  Returns how many ranges had parameters to search. */
static int check_params(trd_topo_t t, const trd_plan *p, const trd_shape *sh,
                        const struct trd_shape_plan *sp)
{
    static const char *const inter[] = {"", "rd", "rabenseifner", "ring"};
    int searched = 0;
    for (int c = 0; c < sp->nchoices; c++) {
        const struct trd_choice *ch = &sp->choice[c];
        const char *name = trd_model_name(ch->alg);
        int composite = !strcmp(name, "smp") || !strcmp(name, "flex");
        if (!composite && strcmp(name, "rm"))
            continue;
        searched++;
        double mine = timed_params_us(t, p, sh, name, ch->params, (double)ch->typical);
        CU_ASSERT_DOUBLE_EQUAL(ch->us, mine, mine * 1e-9);
        for (int k = 0; k < (composite ? 4 : 1); k++)
            CU_ASSERT(mine <= timed_params_us(t, p, sh, name, inter[k], (double)ch->typical) *
                                  (1 + 1e-9));
    }
    return searched;
}

/* The ranges drawn on the schedules, for every planned shape of two
 * machines: contiguous, ending at SIZE_MAX, a different algorithm each; at
 * sizes doubling from 8 B inside each range (1/32 away from its ends, where
 * the bisection stops) the chosen algorithm's schedule is timed no slower
 * than any planner's; the whole machine's ranges are its shape's; the
 * searched parameters are the fastest of their candidates. */
static void test_select(void)
{
    static const char *topos[] = {"tests/data/select-16x8.topo", "topologies/ethernet32.topo"};
    for (int k = 0; k < 2; k++) {
        trd_diag *d;
        trd_topo_t t = load(topos[k], &d);
        static trd_plan p;
        trd_plan_build(t, &p);
        trd_select_stats stats;
        trd_select_on_schedules(t, &p, &stats);
        CU_ASSERT(stats.drawn == p.nshapes && stats.closed == 0 && stats.timed > 0);
        CU_ASSERT(p.on_schedules);
        trd_search_stats sstats;
        trd_search_params(t, &p, &sstats);
        int checked = 0, searched = 0;
        for (int i = 0; i < p.nshapes; i++) {
            const struct trd_shape_plan *sp = &p.shape[i];
            CU_ASSERT(sp->on_schedules);
            CU_ASSERT_FATAL(sp->nchoices >= 1);
            CU_ASSERT_EQUAL(sp->choice[sp->nchoices - 1].below, SIZE_MAX);
            trd_shape_store st;
            int *machine;
            CU_ASSERT_FATAL(trd_machine_shape(t, sp->nnodes, sp->ppn, &st, &machine) == 0);
            double from = 0;
            for (int c = 0; c < sp->nchoices; c++) {
                const struct trd_choice *ch = &sp->choice[c];
                if (c > 0) {
                    CU_ASSERT(ch->below > sp->choice[c - 1].below);
                    CU_ASSERT_NOT_EQUAL(ch->alg, sp->choice[c - 1].alg);
                }
                double end = ch->below == SIZE_MAX ? 1073741824.0 : (double)ch->below;
                for (double b = 8; b < end * (1 - 1.0 / 32); b *= 2) {
                    if (b < from * (1 + 1.0 / 32) || b < 8)
                        continue;
                    double mine = timed_us(t, &p, &st.s, trd_model_name(ch->alg), b);
                    for (int a = 0; trd_sched_planners[a]; a++) {
                        double other = timed_us(t, &p, &st.s, trd_sched_planners[a], b);
                        CU_ASSERT(mine <= other * (1 + 1e-9));
                        if (mine > other * (1 + 1e-9))
                            fprintf(stderr, "\n    %s %d x %d at %.0f B: %s %.3f us, %s %.3f us",
                                    topos[k], sp->nnodes, sp->ppn, b, trd_model_name(ch->alg), mine,
                                    trd_sched_planners[a], other);
                    }
                    checked++;
                }
                from = (double)ch->below;
            }
            searched += check_params(t, &p, &st.s, sp);
            if (sp->nnodes == p.nnodes && sp->ppn == p.ppn) {
                CU_ASSERT_EQUAL(p.nchoices, sp->nchoices);
                for (int c = 0; c < sp->nchoices && c < p.nchoices; c++)
                    CU_ASSERT(p.choice[c].below == sp->choice[c].below &&
                              p.choice[c].alg == sp->choice[c].alg);
            }
            trd_shape_free(&st);
            free(machine);
        }
        CU_ASSERT(checked > 10 * p.nshapes);
        CU_ASSERT_EQUAL(searched, sstats.searched);
        CU_ASSERT(searched > 0);
        trd_topo_destroy(t);
        trd_diag_destroy(d);
    }
}

int main(void)
{
    static const trd_test_case tests[] = {
        {"every planner over the shape matrix", test_shape_matrix},
        {"large and prime rank counts", test_large},
        {"broken schedules refused with their message", test_broken},
        {"ring contention on the switch tree", test_contention},
        {"every planner on switch trees of 1..4 levels", test_levels},
        {"cost model: link sharing added up by hand", test_cost},
        {"cost model: a message starts when both ends have posted it", test_cost_posted},
        {"cost model: a link's measured alpha_r", test_cost_alpha_r},
        {"the ring's bound stays below its timed cost", test_ring_bound},
        {"size ranges drawn on the schedules are the fastest inside", test_select},
    };
    return trd_test_main("sched", tests, TRD_NTESTS(tests));
}
