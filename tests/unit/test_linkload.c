/* The link loads of a schedule (gen/verify/linkload.h) and the placements
 * they are taken on (gen/model/shape.h), without MPI, against sums by hand
 * on four one-core nodes under two leaf switches:
 *
 *            root
 *          /      \
 *       sw0        sw1
 *      /   \      /   \
 *     n0   n1    n2   n3
 *
 * An allreduce of n = 1024 doubles (8192 bytes): the ring's and
 * Rabenseifner's blocks are n/4 = 2048 bytes, whole cache lines.  Every
 * load below is per directed link, the same up and down by symmetry. */
#include <CUnit/Basic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "algo.h"
#include "linkload.h"
#include "ring.h"
#include "shape.h"
#include "test_util.h"
#include "verify.h"

#define N_DOUBLES 1024
#define N_BYTES (8 * N_DOUBLES)

static const char quad[] = "machine quad;\n"
                           "link eth { latency 20us; bandwidth 1GB/s; }\n"
                           "nodetype one { synthetic \"package:1 core:1\"; }\n"
                           "switch sw0 { link eth; nodes n0,n1 : one; }\n"
                           "switch sw1 { link eth; nodes n2,n3 : one; }\n"
                           "switch root { link eth; switches sw0 sw1; }\n";

/* The loads of one link: a node's (node >= 0) or a switch's uplink. */
typedef struct load {
    uint64_t up, down;
} load;

typedef struct loads {
    load node[4], sw0, sw1, root;
    uint64_t inter, intra;
} loads;

/* Plan alg over shape sh of t (one call of N_DOUBLES doubles, commutative
 * unless noncomm), verify it (its claim of contention freedom too, where
 * contention) and take its link loads. */
static loads run(trd_topo_t t, const trd_shape *sh, const char *alg, int noncomm, int contention)
{
    trd_sched s;
    trd_link_loads ll;
    char why[512];
    loads out;
    trd_call call = {TRD_COLL_ALLREDUCE, N_DOUBLES, 8, 0, 0, !noncomm, 0};
    trd_verify_opts vo = {t, contention, 1};
    memset(&out, 0, sizeof out);
    CU_ASSERT_FATAL(trd_plan(&s, trd_algo_find(TRD_COLL_ALLREDUCE, alg, strlen(alg)), "", sh, &call,
                             -1, why, sizeof why) == TRD_OK);
    CU_ASSERT_EQUAL(trd_sched_verify(&s, sh, &vo, why, sizeof why), TRD_OK);
    CU_ASSERT_EQUAL_FATAL(trd_sched_link_loads(&s, sh, t, &ll, why, sizeof why), TRD_OK);
    int S = ll.nswitches;
    CU_ASSERT_EQUAL(S, 3);
    CU_ASSERT_EQUAL(ll.nnodes, 4);
    for (int v = 0; v < 4; v++)
        out.node[v] = (load){ll.bytes[2 * (S + v)], ll.bytes[2 * (S + v) + 1]};
    out.root = (load){ll.bytes[0], ll.bytes[1]};
    out.sw0 = (load){ll.bytes[2], ll.bytes[3]};
    out.sw1 = (load){ll.bytes[4], ll.bytes[5]};
    out.inter = ll.inter_bytes;
    out.intra = ll.intra_bytes;
    trd_link_loads_free(&ll);
    trd_sched_free(&s);
    return out;
}

/* The runtime's shape of comm rank r on machine node nodes[r]. */
static loads placed(trd_topo_t t, const int *nodes, int p, const char *alg, int noncomm)
{
    trd_shape_store st;
    int *aux;
    CU_ASSERT_FATAL(trd_placement_shape(t, nodes, p, &st, &aux) == TRD_OK);
    loads l = run(t, &st.s, alg, noncomm, 1);
    trd_shape_free(&st);
    free(aux);
    return l;
}

static void expect(const loads *l, uint64_t node, uint64_t leaf)
{
    for (int v = 0; v < 4; v++) {
        CU_ASSERT_EQUAL(l->node[v].up, node);
        CU_ASSERT_EQUAL(l->node[v].down, node);
    }
    CU_ASSERT_EQUAL(l->sw0.up, leaf);
    CU_ASSERT_EQUAL(l->sw0.down, leaf);
    CU_ASSERT_EQUAL(l->sw1.up, leaf);
    CU_ASSERT_EQUAL(l->sw1.down, leaf);
    CU_ASSERT_EQUAL(l->root.up, 0); /* the root has no uplink */
    CU_ASSERT_EQUAL(l->root.down, 0);
}

/* The DFS ring n0 n1 n2 n3: 2(p-1) = 6 steps, each node sends one block of
 * n/4 to its successor and receives one from its predecessor: 6 x 2048 =
 * 12288 = 2(p-1)/p n each way on every node link [TREE §3.2].  Of the ring's
 * four neighbour messages only n1 -> n2 leaves sw0 and only n3 -> n0 enters
 * it: its uplink carries the same 12288 each way, no more: contention-free
 * [TREE Lemma 4].  Every message crosses the network: 4 x 12288. */
static void test_ring_dfs(void)
{
    trd_diag *d;
    trd_topo_t t = trd_test_load_text("quad.topo", quad, &d);
    int tree[4] = {0, 1, 2, 3};
    loads l = placed(t, tree, 4, "ring", 0);
    expect(&l, 3 * N_BYTES / 2, 3 * N_BYTES / 2);
    CU_ASSERT_EQUAL(l.inter, 4 * 3 * N_BYTES / 2);
    CU_ASSERT_EQUAL(l.intra, 0);
    trd_topo_destroy(t);
    trd_diag_destroy(d);
}

/* Rabenseifner in tree order: its list is the ring order n0 n1 n2 n3 (q = 4,
 * no fold).  Reduce-scatter: distance 1 (n0-n1, n2-n3) half the vector, 4096
 * each way, under the leaves; distance 2 (n0-n2, n1-n3) a quarter, 2048,
 * across the root.  The allgather retraces them: 2048 across, then 4096
 * under.  Node links: 4096 + 2048 + 2048 + 4096 = 12288 each way, the
 * ring's; leaf uplinks: the two quarter exchanges, both nodes of the leaf
 * at once, twice: 2 x 2 x 2048 = 8192 each way. */
static void test_rabenseifner_tree(void)
{
    trd_diag *d;
    trd_topo_t t = trd_test_load_text("quad.topo", quad, &d);
    int tree[4] = {0, 1, 2, 3};
    loads l = placed(t, tree, 4, "rabenseifner", 0);
    expect(&l, 3 * N_BYTES / 2, N_BYTES);
    trd_topo_destroy(t);
    trd_diag_destroy(d);
}

/* The shuffled placement, ranks 0..3 on n0 n2 n1 n3 (the leaves in turn):
 * the runtime orders its list by the nodes' DFS index, not by rank
 * (runtime/comm.c), so the ring and Rabenseifner run over n0 n1 n2 n3 as in
 * tree order and load every link as above: the rank order does not reach
 * the wire.  Recursive doubling for a commutative op too (ring order): two
 * whole-vector exchanges, distance 1 under the leaves, distance 2 across:
 * 2 x 8192 each way on a node link, 2 x 8192 on a leaf uplink. */
static void test_shuffled_placement(void)
{
    trd_diag *d;
    trd_topo_t t = trd_test_load_text("quad.topo", quad, &d);
    int order[4], tree[4] = {0, 1, 2, 3};
    CU_ASSERT_EQUAL_FATAL(trd_topo_leaf_alternating(t, order), TRD_OK);
    CU_ASSERT(order[0] == 0 && order[1] == 2 && order[2] == 1 && order[3] == 3);
    loads l = placed(t, order, 4, "ring", 0);
    expect(&l, 3 * N_BYTES / 2, 3 * N_BYTES / 2);
    l = placed(t, order, 4, "rabenseifner", 0);
    expect(&l, 3 * N_BYTES / 2, N_BYTES);
    l = placed(t, tree, 4, "rd", 0);
    expect(&l, 2 * N_BYTES, 2 * N_BYTES);
    l = placed(t, order, 4, "rd", 0);
    expect(&l, 2 * N_BYTES, 2 * N_BYTES);
    /* a non-commutative op runs rd in rank order, n0 n2 n1 n3: distance 1
     * (n0-n2, n1-n3) now crosses the root and distance 2 (n0-n1, n2-n3)
     * stays under the leaves; over the call the same sums */
    l = placed(t, order, 4, "rd", 1);
    expect(&l, 2 * N_BYTES, 2 * N_BYTES);
    trd_topo_destroy(t);
    trd_diag_destroy(d);
}

/* Lists in the shuffled order n0 n2 n1 n3 themselves (a shape whose node
 * order is not the DFS order; the runtime never builds one): the ring's
 * four neighbour messages n0 -> n2, n2 -> n1, n1 -> n3, n3 -> n0 all cross
 * the root, two of them over each leaf uplink in each direction at every
 * step: 2 x 12288 = 24576, twice a node link's load: the contention the
 * DFS order avoids [TREE §2, Lemma 4].  Rabenseifner over that list: its
 * half-vector exchanges (distance 1: n0-n2, n1-n3) cross the root, 2 x 4096
 * per leaf uplink in the reduce-scatter and again in the allgather: 16384,
 * twice the tree order's 8192; node links unchanged, 12288.  The verifier
 * refuses the ring's claim of contention freedom there. */
static void test_shuffled_lists(void)
{
    trd_diag *d;
    trd_topo_t t = trd_test_load_text("quad.topo", quad, &d);
    int ones[4] = {1, 1, 1, 1}, machine[4] = {0, 2, 1, 3}, packages[4] = {1, 1, 1, 1};
    trd_shape_store st;
    CU_ASSERT_FATAL(trd_shape_init(&st, 4, ones, 0) == TRD_OK);
    st.s.machine_node = machine;
    st.s.node_packages = packages;
    trd_sched s;
    char why[512];
    trd_call call = {TRD_COLL_ALLREDUCE, N_DOUBLES, 8, 0, 0, 1, 0};
    trd_verify_opts vo = {t, 1, 1};
    CU_ASSERT_FATAL(trd_plan(&s, trd_algo_find(TRD_COLL_ALLREDUCE, "ring", 4), "", &st.s, &call, -1,
                             why, sizeof why) == TRD_OK);
    CU_ASSERT_EQUAL(trd_sched_verify(&s, &st.s, &vo, why, sizeof why), TRD_ERR_VERIFY);
    trd_sched_free(&s);
    loads l = run(t, &st.s, "ring", 0, 0);
    expect(&l, 3 * N_BYTES / 2, 3 * N_BYTES);
    l = run(t, &st.s, "rabenseifner", 0, 0);
    expect(&l, 3 * N_BYTES / 2, 2 * N_BYTES);
    trd_shape_free(&st);
    trd_topo_destroy(t);
    trd_diag_destroy(d);
}

/* The non-power-of-two fold, recursive doubling over n0 n1 n2 (rem 1): n0
 * hands its vector to n1 (8192 under sw0), n1 and n2 exchange theirs (8192
 * each way across the root), n1 hands the result back to n0 (8192).  n0:
 * 8192 each way; n1: 16384 each way; n2: 8192 each way; each leaf uplink
 * 8192 each way; n3 idle. */
static void test_fold(void)
{
    trd_diag *d;
    trd_topo_t t = trd_test_load_text("quad.topo", quad, &d);
    int three[3] = {0, 1, 2};
    loads l = placed(t, three, 3, "rd", 0);
    uint64_t want[4] = {N_BYTES, 2 * N_BYTES, N_BYTES, 0};
    for (int v = 0; v < 4; v++) {
        CU_ASSERT_EQUAL(l.node[v].up, want[v]);
        CU_ASSERT_EQUAL(l.node[v].down, want[v]);
    }
    CU_ASSERT(l.sw0.up == N_BYTES && l.sw0.down == N_BYTES);
    CU_ASSERT(l.sw1.up == N_BYTES && l.sw1.down == N_BYTES);
    CU_ASSERT_EQUAL(l.inter, 4 * N_BYTES);
    trd_topo_destroy(t);
    trd_diag_destroy(d);
}

/* Two ranks on n0 and two on n2, ranks 0 and 2 on n0: the runtime's shape
 * keeps a node's ranks together in rank order, nodes in DFS order; the
 * ring's messages between the two ranks of a node load no link (intra). */
static void test_placement_shape(void)
{
    trd_diag *d;
    trd_topo_t t = trd_test_load_text("quad.topo", quad, &d);
    int nodes[4] = {0, 2, 0, 2}, bad[2] = {0, 4}, *aux;
    trd_shape_store st;
    CU_ASSERT_FATAL(trd_placement_shape(t, nodes, 4, &st, &aux) == TRD_OK);
    CU_ASSERT_EQUAL(st.s.nnodes, 2);
    CU_ASSERT(st.s.ring[0] == 0 && st.s.ring[1] == 2 && st.s.ring[2] == 1 && st.s.ring[3] == 3);
    CU_ASSERT(st.s.machine_node[0] == 0 && st.s.machine_node[1] == 2);
    CU_ASSERT(st.s.node_of[0] == 0 && st.s.node_of[2] == 0 && st.s.node_of[1] == 1);
    trd_shape_free(&st);
    free(aux);
    CU_ASSERT_EQUAL(trd_placement_shape(t, bad, 2, &st, &aux), TRD_ERR_INPUT);
    /* the ring without shared memory: 6 steps of a 2048-byte block, two of
     * the four neighbour messages (2 -> 1 and 3 -> 0) between the nodes */
    CU_ASSERT_FATAL(trd_placement_shape(t, nodes, 4, &st, &aux) == TRD_OK);
    st.s.shm = 0;
    loads l = run(t, &st.s, "ring", 0, 1);
    CU_ASSERT(l.node[0].up == 6 * 2048 && l.node[0].down == 6 * 2048);
    CU_ASSERT(l.node[2].up == 6 * 2048 && l.node[2].down == 6 * 2048);
    CU_ASSERT(l.sw0.up == 6 * 2048 && l.sw1.down == 6 * 2048);
    CU_ASSERT(l.node[1].up == 0 && l.node[3].down == 0);
    CU_ASSERT_EQUAL(l.intra, 2 * 6 * 2048);
    trd_shape_free(&st);
    free(aux);
    trd_topo_destroy(t);
    trd_diag_destroy(d);
}

/* Uneven leaves: n0 n1 n2 | n3 alternate as n0 n3 n1 n2; one switch keeps
 * the ring order. */
static void test_leaf_alternating(void)
{
    trd_diag *d;
    trd_topo_t t = trd_test_load_text("uneven.topo",
                                      "machine uneven;\n"
                                      "link eth { latency 20us; bandwidth 1GB/s; }\n"
                                      "nodetype one { synthetic \"package:1 core:1\"; }\n"
                                      "switch a { link eth; nodes n0,n1,n2 : one; }\n"
                                      "switch b { link eth; nodes n3 : one; }\n"
                                      "switch top { link eth; switches a b; }\n",
                                      &d);
    int order[4];
    CU_ASSERT_EQUAL_FATAL(trd_topo_leaf_alternating(t, order), TRD_OK);
    CU_ASSERT(order[0] == 0 && order[1] == 3 && order[2] == 1 && order[3] == 2);
    trd_topo_destroy(t);
    trd_diag_destroy(d);
    t = trd_test_load_text("one.topo",
                           "machine one;\n"
                           "link eth { latency 20us; bandwidth 1GB/s; }\n"
                           "nodetype one { synthetic \"package:1 core:1\"; }\n"
                           "switch a { link eth; nodes n0,n1,n2 : one; }\n",
                           &d);
    CU_ASSERT_EQUAL_FATAL(trd_topo_leaf_alternating(t, order), TRD_OK);
    CU_ASSERT(order[0] == 0 && order[1] == 1 && order[2] == 2);
    trd_topo_destroy(t);
    trd_diag_destroy(d);
}

/* A shape without machine nodes has no links to load. */
static void test_no_machine(void)
{
    trd_diag *d;
    trd_topo_t t = trd_test_load_text("quad.topo", quad, &d);
    int ones[2] = {1, 1};
    trd_shape_store st;
    trd_sched s;
    trd_link_loads ll;
    char why[256];
    trd_call call = {TRD_COLL_ALLREDUCE, 16, 8, 0, 0, 1, 0};
    CU_ASSERT_FATAL(trd_shape_init(&st, 2, ones, 0) == TRD_OK);
    CU_ASSERT_FATAL(trd_plan(&s, trd_algo_find(TRD_COLL_ALLREDUCE, "ring", 4), "", &st.s, &call, -1,
                             why, sizeof why) == TRD_OK);
    CU_ASSERT_EQUAL(trd_sched_link_loads(&s, &st.s, t, &ll, why, sizeof why), TRD_ERR_VERIFY);
    CU_ASSERT_STRING_EQUAL(why, "the link loads need the communicator's nodes on the machine");
    trd_sched_free(&s);
    trd_shape_free(&st);
    trd_topo_destroy(t);
    trd_diag_destroy(d);
}

int main(void)
{
    static const trd_test_case tests[] = {
        {"link loads: the DFS ring, contention-free", test_ring_dfs},
        {"link loads: Rabenseifner in tree order", test_rabenseifner_tree},
        {"link loads: the shuffled placement runs the DFS lists", test_shuffled_placement},
        {"link loads: lists in shuffled order share the uplinks", test_shuffled_lists},
        {"link loads: recursive doubling's non-power-of-two fold", test_fold},
        {"link loads: the runtime's shape of a placement", test_placement_shape},
        {"placement: the leaves in turn", test_leaf_alternating},
        {"link loads: a shape without machine nodes refused", test_no_machine},
    };
    return trd_test_main("linkload", tests, TRD_NTESTS(tests));
}
