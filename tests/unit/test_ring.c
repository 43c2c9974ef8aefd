/* Ring contention on switch trees [TREE §2, §3.2 Lemma 4]: the DFS order, and
 * every subsequence of it, uses no directed link twice, on many random trees;
 * orders that interleave subtrees are caught. */
#include <CUnit/Basic.h>
#include <stdio.h>
#include <stdlib.h>

#include "ring.h"
#include "test_util.h"
#include "topo.h"

static unsigned long long rng_state = 88172645463325252ull;
static unsigned rnd(unsigned n)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (unsigned)(rng_state % n);
}

/* A random tree: nsw switches, each attached to a random earlier switch
 * (listed as a child in random order), nodes scattered over the switches. */
static trd_topo_t random_tree(int nsw, int nnodes, trd_diag *d)
{
    trd_topo_t t;
    trd_topo_create(&t);
    trd_loc loc = {"random", 1, 1};
    trd_link_cost eth = {1e-6, 1e9, 0, 0};
    int cores[1] = {1};
    trd_topo_add_link(t, d, loc, "eth", eth);
    trd_topo_add_nodetype(t, d, loc, "pc", 1, cores, NULL, NULL, "test");
    int *ids = malloc((size_t)nsw * sizeof(int)), *parent = malloc((size_t)nsw * sizeof(int));
    char name[32];
    for (int s = 0; s < nsw; s++) {
        snprintf(name, sizeof name, "s%d", s);
        trd_topo_add_switch(t, d, loc, name, "eth", &ids[s]);
        parent[s] = s ? (int)rnd((unsigned)s) : -1;
    }
    /* children are added in a shuffled order so DFS order != creation order */
    int *order = malloc((size_t)nsw * sizeof(int));
    for (int s = 0; s < nsw; s++)
        order[s] = s;
    for (int s = nsw - 1; s > 0; s--) {
        int k = (int)rnd((unsigned)s + 1), tmp = order[s];
        order[s] = order[k];
        order[k] = tmp;
    }
    for (int i = 0; i < nsw; i++) {
        int s = order[i];
        if (parent[s] >= 0) {
            snprintf(name, sizeof name, "s%d", s);
            trd_topo_switch_add_child(t, d, loc, ids[parent[s]], name);
        }
    }
    for (int v = 0; v < nnodes; v++) {
        snprintf(name, sizeof name, "n%d", v);
        trd_topo_switch_add_node(t, d, loc, ids[rnd((unsigned)nsw)], name, "pc");
    }
    free(ids);
    free(parent);
    free(order);
    CU_ASSERT_EQUAL_FATAL(trd_topo_finalize(t, d), TRD_OK);
    return t;
}

/* Directed links the ring through nodes[0..n) uses twice (trd_ring_contention). */
static int ring_dups(trd_topo_t t, const int *nodes, int n, char *why, size_t whylen)
{
    int dups = -1;
    CU_ASSERT_EQUAL(trd_ring_contention(t, nodes, n, &dups, why, whylen), TRD_OK);
    return dups;
}

static void test_dfs_rings_are_contention_free(void)
{
    trd_diag *d = NULL;
    CU_ASSERT_EQUAL_FATAL(trd_diag_create(&d), TRD_OK);
    char why[256];
    int checked = 0;
    for (int trial = 0; trial < 400; trial++) {
        int nsw = 1 + (int)rnd(40), nnodes = 1 + (int)rnd(200);
        trd_topo_t t = random_tree(nsw, nnodes, d);
        int n = trd_topo_nnodes(t);
        int *seq = malloc((size_t)n * sizeof(int));
        for (int v = 0; v < n; v++)
            seq[v] = v;
        int dups = ring_dups(t, seq, n, why, sizeof why);
        if (dups)
            fprintf(stderr, "trial %d (%d switches, %d nodes): %s\n", trial, nsw, n, why);
        CU_ASSERT_EQUAL(dups, 0);
        /* a job on a random subset keeps the DFS order: still contention-free */
        for (int sub = 0; sub < 5; sub++) {
            int m = 0;
            for (int v = 0; v < n; v++)
                if (rnd(3) == 0)
                    seq[m++] = v;
            CU_ASSERT_EQUAL(ring_dups(t, seq, m, why, sizeof why), 0);
            checked++;
        }
        /* several ranks per node: repeated consecutive nodes cost nothing */
        int *smp = malloc((size_t)n * 3 * sizeof(int));
        for (int v = 0; v < n; v++)
            smp[3 * v] = smp[3 * v + 1] = smp[3 * v + 2] = v;
        CU_ASSERT_EQUAL(ring_dups(t, smp, 3 * n, why, sizeof why), 0);
        free(smp);
        free(seq);
        trd_topo_destroy(t);
        checked++;
    }
    CU_ASSERT_EQUAL(trd_diag_count(d), 0);
    CU_ASSERT(checked >= 2400);
    trd_diag_destroy(d);
}

/* Two switches a and b of four one-core nodes each (a0..a3, b0..b3) under a
 * root, finalized: ring indices a0..a3 = 0..3, b0..b3 = 4..7. */
static trd_topo_t two_switches(trd_diag *d)
{
    trd_topo_t t;
    trd_topo_create(&t);
    trd_loc loc = {"two", 1, 1};
    int cores[1] = {1}, root, a, b;
    trd_topo_add_link(t, d, loc, "eth", (trd_link_cost){1e-6, 1e9, 0, 0});
    trd_topo_add_nodetype(t, d, loc, "pc", 1, cores, NULL, NULL, "test");
    trd_topo_add_switch(t, d, loc, "root", "eth", &root);
    trd_topo_add_switch(t, d, loc, "a", "eth", &a);
    trd_topo_add_switch(t, d, loc, "b", "eth", &b);
    trd_topo_switch_add_child(t, d, loc, root, "a");
    trd_topo_switch_add_child(t, d, loc, root, "b");
    const char *na[] = {"a0", "a1", "a2", "a3"}, *nb[] = {"b0", "b1", "b2", "b3"};
    for (int i = 0; i < 4; i++) {
        trd_topo_switch_add_node(t, d, loc, a, na[i], "pc");
        trd_topo_switch_add_node(t, d, loc, b, nb[i], "pc");
    }
    CU_ASSERT_EQUAL_FATAL(trd_topo_finalize(t, d), TRD_OK);
    return t;
}

/* Two switches of four nodes under a root: alternating between the switches
 * sends two messages up each leaf switch's uplink. */
static void test_interleaved_ring_contends(void)
{
    trd_diag *d = NULL;
    CU_ASSERT_EQUAL_FATAL(trd_diag_create(&d), TRD_OK);
    trd_topo_t t = two_switches(d);
    /* ring indices: a0..a3 = 0..3, b0..b3 = 4..7 */
    CU_ASSERT_STRING_EQUAL(trd_topo_node_name(t, 4), "b0");
    int good[] = {0, 1, 2, 3, 4, 5, 6, 7}, bad[] = {0, 4, 1, 5, 2, 6, 3, 7};
    char why[256];
    CU_ASSERT_EQUAL(ring_dups(t, good, 8, why, sizeof why), 0);
    CU_ASSERT(ring_dups(t, bad, 8, why, sizeof why) > 0);
    CU_ASSERT_STRING_EQUAL(why, "the link up from 'a' is used twice");
    trd_topo_destroy(t);
    trd_diag_destroy(d);
}

/* Subtrees entered more than once (trd_ring_dfs_proof). */
static int ring_runs(trd_topo_t t, const int *nodes, int n, char *why, size_t whylen)
{
    int runs = -1;
    CU_ASSERT_EQUAL(trd_ring_dfs_proof(t, nodes, n, &runs, why, whylen), TRD_OK);
    return runs;
}

/* The structural proof gives the pairwise walk's verdict on every order:
 * DFS orders and their subsets, and random orders (shuffled, with nodes
 * repeated), which mostly contend. */
static void test_structural_equals_pairwise(void)
{
    trd_diag *d = NULL;
    CU_ASSERT_EQUAL_FATAL(trd_diag_create(&d), TRD_OK);
    char why[256], why2[256];
    int contended = 0, free_orders = 0;
    for (int trial = 0; trial < 300; trial++) {
        int nsw = 1 + (int)rnd(30), nnodes = 1 + (int)rnd(60);
        trd_topo_t t = random_tree(nsw, nnodes, d);
        int n = trd_topo_nnodes(t), len = 2 * n;
        int *seq = malloc((size_t)len * sizeof(int));
        for (int k = 0; k < 8; k++) {
            int m = 0;
            if (k == 0) { /* the DFS order */
                for (int v = 0; v < n; v++)
                    seq[m++] = v;
            } else if (k < 3) { /* a subset of it */
                for (int v = 0; v < n; v++)
                    if (rnd(2))
                        seq[m++] = v;
            } else { /* random: a few swaps of the DFS order, or any sequence */
                for (int v = 0; v < n; v++)
                    seq[m++] = v;
                for (int sw = 0; sw < (k < 6 ? 1 : n); sw++) {
                    int i = (int)rnd((unsigned)n), j = (int)rnd((unsigned)n), tmp = seq[i];
                    seq[i] = seq[j];
                    seq[j] = tmp;
                }
                if (k == 7)
                    for (; m < len; m++)
                        seq[m] = (int)rnd((unsigned)n);
            }
            int dups = ring_dups(t, seq, m, why, sizeof why);
            int runs = ring_runs(t, seq, m, why2, sizeof why2);
            if ((dups == 0) != (runs == 0))
                fprintf(stderr, "trial %d order %d: pairwise %d (%s), structural %d (%s)\n", trial,
                        k, dups, why, runs, why2);
            CU_ASSERT_EQUAL(dups == 0, runs == 0);
            contended += dups != 0;
            free_orders += dups == 0;
        }
        free(seq);
        trd_topo_destroy(t);
    }
    /* both verdicts were seen often: the comparison could fail */
    CU_ASSERT(contended > 300);
    CU_ASSERT(free_orders > 600);
    CU_ASSERT_EQUAL(trd_diag_count(d), 0);
    trd_diag_destroy(d);
}

/* The proof refuses an order that is not a DFS order, naming the subtree;
 * and takes a chain of 1,000 nested switches (paths of 2,000 links) in
 * linear time. */
static void test_structural_refuses_non_dfs(void)
{
    trd_diag *d = NULL;
    CU_ASSERT_EQUAL_FATAL(trd_diag_create(&d), TRD_OK);
    trd_topo_t t = two_switches(d);
    int good[] = {4, 5, 6, 7, 0, 1, 2, 3}, bad[] = {0, 1, 4, 5, 2, 3, 6, 7};
    int split[] = {0, 0, 1, 2, 3, 0}; /* node a0's ranks in two runs of a one-switch ring */
    char why[320];
    CU_ASSERT_EQUAL(ring_runs(t, good, 8, why, sizeof why), 0);
    CU_ASSERT_EQUAL(ring_runs(t, bad, 8, why, sizeof why), 2);
    CU_ASSERT_STRING_EQUAL(why, "not a DFS order: the ring enters and leaves switch 'a' 2 times "
                                "(its nodes are not one contiguous run), so its up- and down-links "
                                "carry 2 messages of one step");
    CU_ASSERT_EQUAL(ring_runs(t, split, 6, why, sizeof why), 0); /* cyclic: one run */
    int split2[] = {0, 1, 0, 2};
    CU_ASSERT_EQUAL(ring_runs(t, split2, 4, why, sizeof why), 1);
    trd_topo_destroy(t);

    /* a chain: switch i holds node ci and switch i+1 */
    trd_topo_create(&t);
    trd_loc loc = {"chain", 1, 1};
    int cores[1] = {1}, ids[1000];
    char name[32];
    trd_topo_add_link(t, d, loc, "eth", (trd_link_cost){1e-6, 1e9, 0, 0});
    trd_topo_add_nodetype(t, d, loc, "pc", 1, cores, NULL, NULL, "test");
    for (int i = 0; i < 1000; i++) {
        snprintf(name, sizeof name, "s%d", i);
        trd_topo_add_switch(t, d, loc, name, "eth", &ids[i]);
        snprintf(name, sizeof name, "c%d", i);
        trd_topo_switch_add_node(t, d, loc, ids[i], name, "pc");
    }
    for (int i = 0; i + 1 < 1000; i++) {
        snprintf(name, sizeof name, "s%d", i + 1);
        trd_topo_switch_add_child(t, d, loc, ids[i], name);
    }
    CU_ASSERT_EQUAL_FATAL(trd_topo_finalize(t, d), TRD_OK);
    int seq[1000];
    for (int v = 0; v < 1000; v++)
        seq[v] = v;
    CU_ASSERT_EQUAL(ring_runs(t, seq, 1000, why, sizeof why), 0);
    seq[10] = 900, seq[900] = 10; /* s11..s900 left twice */
    CU_ASSERT_EQUAL(ring_runs(t, seq, 1000, why, sizeof why), 890);
    CU_ASSERT_EQUAL(trd_diag_count(d), 0);
    trd_topo_destroy(t);
    trd_diag_destroy(d);
}

int main(void)
{
    static const trd_test_case tests[] = {
        {"DFS rings on 400 random trees and subsets", test_dfs_rings_are_contention_free},
        {"interleaved ring is caught", test_interleaved_ring_contends},
        {"structural proof agrees with the pairwise walk", test_structural_equals_pairwise},
        {"structural proof refuses non-DFS orders, takes a 1000-switch chain",
         test_structural_refuses_non_dfs},
    };
    return trd_test_main("ring", tests, TRD_NTESTS(tests));
}
