/* Topology DSL reader (grammar/topo.l, grammar/topo.y, gen/read/read_dsl.c): good
 * files checked through the model after trd_topo_finalize (names, DFS ring
 * order, switch parents, link costs, node shapes), bad files checked by the
 * exact text of every message, several errors per file, names that only
 * finalize can resolve, every truncation of a good file (no crash, and an
 * error is always reported), and the byte ranges of the source map. */
#include <CUnit/Basic.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "readers.h"
#include "test_util.h"
#include "topo.h"

static const trd_test_format dsl = {trd_read_dsl_string, NULL, "t.topo"};

/* Read text as file name, then finalize if the reader found no error. */
static trd_test_result read_as(const char *name, const char *text)
{
    return trd_test_read_as(&dsl, name, text);
}

/* text read as "t.topo" must fail with exactly the given messages, in order. */
#define EXPECT_ERRORS(text, ...) TRD_EXPECT_ERRORS(&dsl, text, __VA_ARGS__)

/* ---- Good files --------------------------------------------------------- */

static const char cluster[] =
    "# the example from treeduce-topology(5)\n"
    "machine mycluster;\n"
    "link eth { latency 50us; bandwidth 125MB/s; injection 10GB/s; }\n"
    "link shm { latency 0.3us; bandwidth 20GB/s; alpha_r 0.1us; }\n"
    "link qpi { latency 0.6 us; bandwidth 1.5 GB/s; }   # blanks before the unit\n"
    "nodetype pc   { synthetic \"package:1 core:1\"; }\n"
    "nodetype big  { synthetic \"package:2 core:4\"; package shm; node qpi; }\n"
    "nodetype hand { packages 2; cores 8; }\n"
    "nodetype odd  { cores 8 8 4; }\n"
    "switch s0 { link eth; nodes n[0-3] : pc; nodes gpu[00-01],login : big; }\n"
    "switch s1 { link shm; nodes x, y : hand; nodes z : odd; }\n"
    "switch root { link eth; switches s0 s1; }\n";

static void test_cluster(void)
{
    trd_test_result r = read_as("cluster.topo", cluster);
    trd_topo_t t = r.t;
    CU_ASSERT_EQUAL_FATAL(r.rc, TRD_OK);
    CU_ASSERT_EQUAL(trd_diag_count(r.d), 0);
    CU_ASSERT_STRING_EQUAL(trd_topo_name(t), "mycluster");

    /* Switches in DFS order with their parents and links. */
    CU_ASSERT_EQUAL_FATAL(trd_topo_nswitches(t), 3);
    CU_ASSERT_STRING_EQUAL(trd_topo_switch_name(t, 0), "root");
    CU_ASSERT_STRING_EQUAL(trd_topo_switch_name(t, 1), "s0");
    CU_ASSERT_STRING_EQUAL(trd_topo_switch_name(t, 2), "s1");
    CU_ASSERT_EQUAL(trd_topo_switch_parent(t, 0), -1);
    CU_ASSERT_EQUAL(trd_topo_switch_parent(t, 1), 0);
    CU_ASSERT_EQUAL(trd_topo_switch_parent(t, 2), 0);
    CU_ASSERT_STRING_EQUAL(trd_topo_switch_link_name(t, 1), "eth");
    CU_ASSERT_STRING_EQUAL(trd_topo_switch_link_name(t, 2), "shm");
    trd_link_cost eth = trd_topo_switch_link(t, 0);
    CU_ASSERT_DOUBLE_EQUAL(eth.latency_s, 50e-6, 1e-15);
    CU_ASSERT_DOUBLE_EQUAL(eth.bandwidth_Bps, 125e6, 1e-3);
    CU_ASSERT_DOUBLE_EQUAL(eth.injection_Bps, 10e9, 1e-3);
    trd_link_cost shm = trd_topo_switch_link(t, 2);
    CU_ASSERT_DOUBLE_EQUAL(shm.latency_s, 0.3e-6, 1e-15);
    CU_ASSERT_DOUBLE_EQUAL(shm.bandwidth_Bps, 20e9, 1e-3);
    CU_ASSERT_DOUBLE_EQUAL(shm.injection_Bps, 0, 0);
    CU_ASSERT_DOUBLE_EQUAL(shm.alpha_r_s, 0.1e-6, 1e-15);
    CU_ASSERT_DOUBLE_EQUAL(eth.alpha_r_s, 0, 0); /* not given */

    /* Nodes in ring order: each switch's nodes in written order. */
    static const char *const names[] = {"n0",    "n1",    "n2", "n3", "gpu00",
                                        "gpu01", "login", "x",  "y",  "z"};
    static const int sw[] = {1, 1, 1, 1, 1, 1, 1, 2, 2, 2};
    CU_ASSERT_EQUAL_FATAL(trd_topo_nnodes(t), 10);
    for (int i = 0; i < 10; i++) {
        CU_ASSERT_STRING_EQUAL(trd_topo_node_name(t, i), names[i]);
        CU_ASSERT_EQUAL(trd_topo_node_switch(t, i), sw[i]);
    }
    CU_ASSERT_EQUAL(trd_topo_find_node(t, "login"), 6);

    /* Node types in definition order, with their shapes and links. */
    CU_ASSERT_EQUAL_FATAL(trd_topo_nnodetypes(t), 4);
    CU_ASSERT_STRING_EQUAL(trd_topo_nodetype_name(t, trd_topo_node_type(t, 0)), "pc");
    CU_ASSERT_STRING_EQUAL(trd_topo_nodetype_name(t, trd_topo_node_type(t, 4)), "big");
    CU_ASSERT_STRING_EQUAL(trd_topo_nodetype_name(t, trd_topo_node_type(t, 8)), "hand");
    CU_ASSERT_STRING_EQUAL(trd_topo_nodetype_name(t, trd_topo_node_type(t, 9)), "odd");
    CU_ASSERT_EQUAL(trd_topo_nodetype_npackages(t, 0), 1);
    CU_ASSERT_EQUAL(trd_topo_nodetype_cores(t, 0, 0), 1);
    CU_ASSERT_STRING_EQUAL(trd_topo_nodetype_source(t, 0), "synthetic \"package:1 core:1\"");
    CU_ASSERT_EQUAL(trd_topo_nodetype_npackages(t, 1), 2);
    CU_ASSERT_EQUAL(trd_topo_nodetype_cores(t, 1, 1), 4);
    CU_ASSERT_EQUAL(trd_topo_nodetype_npackages(t, 2), 2);
    CU_ASSERT_EQUAL(trd_topo_nodetype_cores(t, 2, 0), 8);
    CU_ASSERT_EQUAL(trd_topo_nodetype_cores(t, 2, 1), 8);
    CU_ASSERT_STRING_EQUAL(trd_topo_nodetype_source(t, 2), "packages 2 cores 8");
    CU_ASSERT_EQUAL(trd_topo_nodetype_npackages(t, 3), 3);
    CU_ASSERT_EQUAL(trd_topo_nodetype_cores(t, 3, 2), 4);
    CU_ASSERT_EQUAL(trd_topo_nodetype_ncores(t, 3), 20);
    CU_ASSERT_STRING_EQUAL(trd_topo_nodetype_source(t, 3), "cores 8 8 4");

    trd_link_cost pkg = trd_topo_nodetype_package_link(t, 1);
    trd_link_cost node = trd_topo_nodetype_node_link(t, 1);
    CU_ASSERT_DOUBLE_EQUAL(pkg.latency_s, 0.3e-6, 1e-15);
    CU_ASSERT_DOUBLE_EQUAL(node.latency_s, 0.6e-6, 1e-15);
    CU_ASSERT_DOUBLE_EQUAL(node.bandwidth_Bps, 1.5e9, 1e-3);
    pkg = trd_topo_nodetype_package_link(t, 0); /* none given: the defaults */
    CU_ASSERT_DOUBLE_EQUAL(pkg.latency_s, TRD_DEFAULT_PACKAGE_LATENCY_S, 1e-15);

    /* n0 -> z: up through s0 (eth) and root (eth), down through root and s1 (shm). */
    trd_link_cost c = trd_topo_path_cost(t, 0, 9);
    CU_ASSERT_DOUBLE_EQUAL(c.latency_s, 50e-6 + 50e-6 + 50e-6 + 0.3e-6, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(c.bandwidth_Bps, 125e6, 1e-3);
    CU_ASSERT_DOUBLE_EQUAL(c.alpha_r_s, 0.1e-6, 1e-15); /* shm's: eth gives none */
    trd_test_release(&r);
}

/* Layout freedom: comments anywhere, CRLF, no blanks, units with or without
 * a blank, a deeper tree, a switch named before it is defined, and a node
 * type of the local machine. */
static void test_layout(void)
{
    trd_test_result r =
        read_as("layout.topo", "link l{latency 2e-6s;bandwidth 100 Gb/s;}# no blanks\r\n"
                               "nodetype t{packages 2;cores 4 6;}\r\n"
                               "switch top { switches mid; link l; }\r\n"
                               "switch mid { switches leaf-a leaf.b; link l; }\r\n"
                               "switch leaf-a { link l; nodes a[1-2]:t; }\n"
                               "switch leaf.b {\n"
                               "  # a comment inside a block\n"
                               "  link l;\n"
                               "  nodes b_1 : t;\n"
                               "}\n"
                               "nodetype here { local; }\n");
    trd_topo_t t = r.t;
    CU_ASSERT_EQUAL_FATAL(r.rc, TRD_OK);
    CU_ASSERT_STRING_EQUAL(trd_topo_name(t), "top"); /* no machine: the root's name */
    CU_ASSERT_EQUAL_FATAL(trd_topo_nswitches(t), 4);
    CU_ASSERT_STRING_EQUAL(trd_topo_switch_name(t, 2), "leaf-a");
    CU_ASSERT_STRING_EQUAL(trd_topo_switch_name(t, 3), "leaf.b");
    CU_ASSERT_EQUAL(trd_topo_switch_parent(t, 3), 1);
    CU_ASSERT_EQUAL(trd_topo_switch_depth(t, 3), 2);
    CU_ASSERT_EQUAL_FATAL(trd_topo_nnodes(t), 3);
    CU_ASSERT_STRING_EQUAL(trd_topo_node_name(t, 2), "b_1");
    trd_link_cost l = trd_topo_switch_link(t, 0);
    CU_ASSERT_DOUBLE_EQUAL(l.latency_s, 2e-6, 1e-15);
    CU_ASSERT_DOUBLE_EQUAL(l.bandwidth_Bps, 100e9 / 8, 1e-3);
    CU_ASSERT_EQUAL(trd_topo_nodetype_cores(t, 0, 1), 6);
    CU_ASSERT_EQUAL_FATAL(trd_topo_nnodetypes(t), 2); /* "here": unused, still defined */
    CU_ASSERT_STRING_EQUAL(trd_topo_nodetype_source(t, 1), "local");
    CU_ASSERT_EQUAL(trd_topo_nodetype_npackages(t, 1), 0); /* and never read by hwloc */
    trd_test_release(&r);
}

/* alpha_r [RM §3, Eq. 3]: optional, in any order among the link's items, a
 * time like latency; a path takes the largest alpha_r of its link classes,
 * 0 where none gives one. */
static void test_alpha_r(void)
{
    trd_test_result r =
        read_as("alpha.topo", "link leaf { alpha_r 0.2us; latency 1us; bandwidth 10GB/s; }\n"
                              "link spine { latency 2us; bandwidth 25GB/s; alpha_r 500 ns; "
                              "injection 20GB/s; }\n"
                              "link plain { latency 1us; bandwidth 10GB/s; }\n"
                              "link zero { latency 1us; bandwidth 10GB/s; alpha_r 0us; }\n"
                              "link full { latency 1us; bandwidth 1GB/s; alpha_r 1000ns; }\n"
                              "nodetype pc { cores 2; package full; node zero; }\n"
                              "switch a { link leaf; nodes a[0-1] : pc; }\n"
                              "switch b { link plain; nodes b[0-1] : pc; }\n"
                              "switch root { link spine; switches a b; }\n");
    trd_topo_t t = r.t;
    CU_ASSERT_EQUAL_FATAL(r.rc, TRD_OK);
    CU_ASSERT_EQUAL(trd_diag_count(r.d), 0);
    CU_ASSERT_EQUAL_FATAL(trd_topo_nswitches(t), 3);
    CU_ASSERT_STRING_EQUAL(trd_topo_switch_link_name(t, 0), "spine");
    CU_ASSERT_STRING_EQUAL(trd_topo_switch_link_name(t, 1), "leaf");
    CU_ASSERT_STRING_EQUAL(trd_topo_switch_link_name(t, 2), "plain");
    trd_link_cost spine = trd_topo_switch_link(t, 0), leaf = trd_topo_switch_link(t, 1);
    CU_ASSERT_DOUBLE_EQUAL(spine.alpha_r_s, 0.5e-6, 1e-15);
    CU_ASSERT_DOUBLE_EQUAL(spine.latency_s, 2e-6, 1e-15);
    CU_ASSERT_DOUBLE_EQUAL(spine.injection_Bps, 20e9, 1e-3);
    CU_ASSERT_DOUBLE_EQUAL(leaf.alpha_r_s, 0.2e-6, 1e-15);
    CU_ASSERT_DOUBLE_EQUAL(leaf.latency_s, 1e-6, 1e-15);
    CU_ASSERT_EQUAL(trd_topo_switch_link(t, 2).alpha_r_s, 0); /* not given */
    /* equal to the latency is allowed (1000ns is 1us give or take rounding, and
     * is kept at the latency); 0 means not given */
    trd_link_cost full = trd_topo_nodetype_package_link(t, 0);
    CU_ASSERT(full.alpha_r_s <= full.latency_s);
    CU_ASSERT_DOUBLE_EQUAL(full.alpha_r_s, 1e-6, 1e-15);
    CU_ASSERT_EQUAL(trd_topo_nodetype_node_link(t, 0).alpha_r_s, 0);

    /* a0 -> b0: leaf, spine up to root and down, plain: the largest is the spine's. */
    CU_ASSERT_EQUAL_FATAL(trd_topo_nnodes(t), 4);
    trd_link_cost c = trd_topo_path_cost(t, 0, 2);
    CU_ASSERT_DOUBLE_EQUAL(c.latency_s, 1e-6 + 2e-6 + 2e-6 + 1e-6, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(c.alpha_r_s, 0.5e-6, 1e-15);
    CU_ASSERT_DOUBLE_EQUAL(trd_topo_path_cost(t, 2, 0).alpha_r_s, 0.5e-6, 1e-15);
    /* a0 -> a1: leaf on both ends */
    CU_ASSERT_DOUBLE_EQUAL(trd_topo_path_cost(t, 0, 1).alpha_r_s, 0.2e-6, 1e-15);
    /* b0 -> b1: no link class on the path gives one */
    CU_ASSERT_EQUAL(trd_topo_path_cost(t, 2, 3).alpha_r_s, 0);
    CU_ASSERT_EQUAL(trd_topo_path_cost(t, 1, 1).alpha_r_s, 0);
    trd_test_release(&r);

    /* Bad values, located at the value, as for latency. */
    EXPECT_ERRORS("link eth { latency 5us; bandwidth 1GB/s; alpha_r fast; }\n",
                  "t.topo:1:50: error: expected a time such as 0.5us, got 'fast'");
    EXPECT_ERRORS("link eth { latency 5us; bandwidth 1GB/s; alpha_r 2GB/s; }\n",
                  "t.topo:1:50: error: unknown unit 'GB/s' in time '2GB/s'");
    EXPECT_ERRORS("link eth { latency 5us; bandwidth 1GB/s; alpha_r 1e999s; }\n",
                  "t.topo:1:50: error: expected a time from 0 to 1 hour, got '1e999s'");
    EXPECT_ERRORS("link eth { latency 5us; bandwidth 1GB/s; alpha_r ; }\n",
                  "t.topo:1:50: error: expected a time such as 0.5us, got ';'");
    EXPECT_ERRORS("link eth { latency 5us; bandwidth 1GB/s; alpha_r 1us }\n",
                  "t.topo:1:53: error: expected ';' after alpha_r value");
    EXPECT_ERRORS("link eth { alpha_r 1us; latency 5us; alpha_r 2us; bandwidth 1GB/s; }\n",
                  "t.topo:1:38: error: duplicate 'alpha_r' in link 'eth'");
    /* alpha_r is part of the latency: never above it, in any order */
    EXPECT_ERRORS("link eth { latency 5us; bandwidth 1GB/s; alpha_r 6us; }\n",
                  "t.topo:1:42: error: link 'eth': alpha_r must be >= 0 and at most the latency");
    EXPECT_ERRORS("link eth { alpha_r 1ms;\n  latency 5us; bandwidth 1GB/s; }\n",
                  "t.topo:1:12: error: link 'eth': alpha_r must be >= 0 and at most the latency");
    /* a keyword now: not a name */
    EXPECT_ERRORS("link alpha_r { latency 5us; bandwidth 1GB/s; }\n",
                  "t.topo:1:6: error: expected a link name, got 'alpha_r'");
}

/* The model refuses an alpha_r above the latency from any reader. */
static void test_alpha_r_model(void)
{
    trd_topo_t t;
    trd_diag *d = NULL;
    CU_ASSERT_EQUAL_FATAL(trd_diag_create(&d), TRD_OK);
    trd_loc loc = {trd_diag_intern(d, "api"), 3, 7};
    CU_ASSERT_EQUAL_FATAL(trd_topo_create(&t), TRD_OK);
    CU_ASSERT_EQUAL(trd_topo_add_link(t, d, loc, "ok", (trd_link_cost){2e-6, 1e9, 0, 2e-6}),
                    TRD_OK);
    CU_ASSERT_EQUAL(trd_topo_add_link(t, d, loc, "high", (trd_link_cost){2e-6, 1e9, 0, 3e-6}),
                    TRD_ERR_INPUT);
    CU_ASSERT_EQUAL(trd_topo_add_link(t, d, loc, "neg", (trd_link_cost){2e-6, 1e9, 0, -1e-9}),
                    TRD_ERR_INPUT);
    CU_ASSERT_EQUAL(trd_topo_add_link(t, d, loc, "nan", (trd_link_cost){2e-6, 1e9, 0, NAN}),
                    TRD_ERR_INPUT);
    CU_ASSERT_EQUAL_FATAL(trd_diag_count(d), 3);
    CU_ASSERT_STRING_EQUAL(trd_diag_message(d, 0),
                           "api:3:7: error: link 'high': alpha_r must be >= 0 and at most the "
                           "latency");
    CU_ASSERT_STRING_EQUAL(trd_diag_message(d, 1),
                           "api:3:7: error: link 'neg': alpha_r must be >= 0 and at most the "
                           "latency");
    trd_topo_destroy(t);
    trd_diag_destroy(d);
}

/* Link costs through the API outside the model's range are refused by the
 * model with the range (a denormal bandwidth made every prediction inf). */
static void test_cost_range_model(void)
{
    trd_topo_t t;
    trd_diag *d = NULL;
    CU_ASSERT_EQUAL_FATAL(trd_diag_create(&d), TRD_OK);
    trd_loc loc = {trd_diag_intern(d, "api"), 1, 1};
    CU_ASSERT_EQUAL_FATAL(trd_topo_create(&t), TRD_OK);
    CU_ASSERT_EQUAL(trd_topo_add_link(t, d, loc, "den", (trd_link_cost){1e-6, 1e-320, 0, 0}),
                    TRD_ERR_INPUT);
    CU_ASSERT_EQUAL(trd_topo_add_link(t, d, loc, "inf", (trd_link_cost){1e-6, INFINITY, 0, 0}),
                    TRD_ERR_INPUT);
    CU_ASSERT_EQUAL(trd_topo_add_link(t, d, loc, "inj", (trd_link_cost){1e-6, 1e9, 1e-320, 0}),
                    TRD_ERR_INPUT);
    CU_ASSERT_EQUAL(trd_topo_add_link(t, d, loc, "lat", (trd_link_cost){7200, 1e9, 0, 0}),
                    TRD_ERR_INPUT);
    CU_ASSERT_EQUAL(trd_topo_add_link(t, d, loc, "ok", (trd_link_cost){3600, 1, 1e15, 0}), TRD_OK);
    CU_ASSERT_EQUAL_FATAL(trd_diag_count(d), 4);
    CU_ASSERT_STRING_EQUAL(trd_diag_message(d, 0),
                           "api:1:1: error: link 'den': bandwidth must be from 1 B/s to 1 PB/s");
    CU_ASSERT_STRING_EQUAL(trd_diag_message(d, 1),
                           "api:1:1: error: link 'inf': bandwidth must be from 1 B/s to 1 PB/s");
    CU_ASSERT_STRING_EQUAL(trd_diag_message(d, 2),
                           "api:1:1: error: link 'inj': injection bandwidth must be 0 (none) or "
                           "from 1 B/s to 1 PB/s");
    CU_ASSERT_STRING_EQUAL(trd_diag_message(d, 3),
                           "api:1:1: error: link 'lat': latency must be from 0 to 1 hour");
    trd_topo_destroy(t);
    trd_diag_destroy(d);
}

/* Nodes without ": type" take the default node type, if one is set. */
static void test_default_nodetype(void)
{
    static const char text[] = "link l { latency 1us; bandwidth 1GB/s; }\n"
                               "switch s { link l; nodes n[1-3]; }\n";
    trd_topo_t t;
    trd_diag *d = NULL;
    CU_ASSERT_EQUAL_FATAL(trd_diag_create(&d), TRD_OK);
    int cores[2] = {4, 4};
    CU_ASSERT_EQUAL_FATAL(trd_topo_create(&t), TRD_OK);
    CU_ASSERT_EQUAL(trd_topo_set_default_nodetype(t, 2, cores, "--nodetype"), TRD_OK);
    CU_ASSERT_EQUAL(trd_read_dsl_string(t, d, "d.topo", text, strlen(text)), TRD_OK);
    CU_ASSERT_EQUAL_FATAL(trd_topo_finalize(t, d), TRD_OK);
    CU_ASSERT_EQUAL(trd_topo_nnodes(t), 3);
    CU_ASSERT_EQUAL(trd_topo_nodetype_ncores(t, trd_topo_node_type(t, 2)), 8);
    trd_topo_destroy(t);
    trd_diag_destroy(d);
}

/* trd_read_dsl on files: hwloc XML paths relative to the .topo file, the
 * text kept for quoting, and a file that cannot be read. */
static void test_files(void)
{
    trd_topo_t t;
    trd_diag *d = NULL;
    CU_ASSERT_EQUAL_FATAL(trd_diag_create(&d), TRD_OK);
    CU_ASSERT_EQUAL_FATAL(trd_topo_create(&t), TRD_OK);
    CU_ASSERT_EQUAL_FATAL(trd_read_dsl(t, d, trd_test_path("tests/data/two-level.topo")), TRD_OK);
    CU_ASSERT_EQUAL_FATAL(trd_topo_finalize(t, d), TRD_OK);
    CU_ASSERT_STRING_EQUAL(trd_topo_name(t), "tworack");
    CU_ASSERT_EQUAL(trd_topo_nnodes(t), 8);
    int big = trd_topo_node_type(t, trd_topo_find_node(t, "gpu01"));
    CU_ASSERT_STRING_EQUAL(trd_topo_nodetype_name(t, big), "big");
    CU_ASSERT_EQUAL(trd_topo_nodetype_npackages(t, big), 2);
    CU_ASSERT_EQUAL(trd_topo_nodetype_cores(t, big, 1), 4);
    CU_ASSERT_STRING_EQUAL(trd_topo_nodetype_source(t, big), "hwloc node-2x4.xml");
    trd_topo_destroy(t);
    trd_diag_destroy(d);

    /* The same file read as text from elsewhere: the XML is not found, when
     * a node first uses the type (hwloc reads no type that no node uses). */
    CU_ASSERT_EQUAL_FATAL(trd_diag_create(&d), TRD_OK);
    CU_ASSERT_EQUAL_FATAL(trd_topo_create(&t), TRD_OK);
    static const char text[] = "nodetype big { hwloc \"node-2x4.xml\"; }\n"
                               "link l { latency 1us; bandwidth 1GB/s; }\n";
    CU_ASSERT_EQUAL(trd_read_dsl_string(t, d, "/nonexistent/x.topo", text, strlen(text)), TRD_OK);
    CU_ASSERT_EQUAL(trd_topo_nnodetypes(t), 1);
    trd_topo_destroy(t);
    CU_ASSERT_EQUAL_FATAL(trd_topo_create(&t), TRD_OK);
    static const char used[] = "nodetype big { hwloc \"node-2x4.xml\"; }\n"
                               "link l { latency 1us; bandwidth 1GB/s; }\n"
                               "switch s { link l; nodes n0 : big; }\n";
    CU_ASSERT_EQUAL(trd_read_dsl_string(t, d, "/nonexistent/x.topo", used, strlen(used)), TRD_OK);
    CU_ASSERT_EQUAL(trd_topo_finalize(t, d), TRD_ERR_INPUT);
    CU_ASSERT_EQUAL_FATAL(trd_diag_count(d), 1);
    CU_ASSERT_STRING_EQUAL(trd_diag_message(d, 0),
                           "/nonexistent/x.topo:1:22: error: cannot read hwloc XML "
                           "'/nonexistent/node-2x4.xml': No such file or directory");
    trd_topo_destroy(t);
    trd_diag_destroy(d);

    CU_ASSERT_EQUAL_FATAL(trd_diag_create(&d), TRD_OK);
    CU_ASSERT_EQUAL_FATAL(trd_topo_create(&t), TRD_OK);
    CU_ASSERT_EQUAL(trd_read_dsl(t, d, "/nonexistent/x.topo"), TRD_ERR_IO);
    CU_ASSERT_EQUAL_FATAL(trd_diag_count(d), 1);
    CU_ASSERT_STRING_EQUAL(trd_diag_message(d, 0),
                           "/nonexistent/x.topo: error: cannot read file: No such file or "
                           "directory");
    trd_topo_destroy(t);
    trd_diag_destroy(d);
}

/* ---- Bad files: exact messages ------------------------------------------ */

#define ETH "link eth { latency 50us; bandwidth 125MB/s; }\n"
#define PC "nodetype pc { cores 1; }\n"

static void test_syntax(void)
{
    /* A missing ';' is reported where it belongs, and reading goes on. */
    EXPECT_ERRORS("machine m;\n"
                  "\n"
                  "link eth { latency 50us; bandwidth 125MB/s }\n",
                  "t.topo:3:43: error: expected ';' after bandwidth value");
    EXPECT_ERRORS("link eth { latency 50us bandwidth 125MB/s; }\n",
                  "t.topo:1:24: error: expected ';' after latency value");
    EXPECT_ERRORS(ETH PC "switch s0 { link eth; nodes n[0-3] : pc }\n",
                  "t.topo:3:40: error: expected ';' after node type");
    EXPECT_ERRORS(ETH PC "switch s0 { link eth; nodes n[0-3] pc; }\n",
                  "t.topo:3:35: error: expected ':' or ';' after host list");
    /* an empty file, or one of links only: the error names the file */
    EXPECT_ERRORS("", "t.topo: error: the topology has no switch");
    EXPECT_ERRORS(ETH, "t.topo: error: the topology has no switch");
    /* a node too large for hwloc's synthetic builder: refused at once */
    EXPECT_ERRORS(ETH "nodetype pc { synthetic \"package:100000 core:100000\"; }\n",
                  "t.topo:2:25: error: synthetic description 'package:100000 core:100000' has more "
                  "than 4096 cores, more than hwloc builds in good time; give the node's package "
                  "and core counts instead");
    /* a host number past LONG_MAX: an error, not a loop (gen/model/hostlist.c) */
    EXPECT_ERRORS(
        ETH PC "switch s0 { link eth; nodes n[9223372036854775807-9223372036854775808] : pc; }\n",
        "t.topo:3:51: error: host number too large");
    EXPECT_ERRORS("switch s0 link eth; }\n", "t.topo:1:10: error: expected '{' after switch name");
    EXPECT_ERRORS("nodetype x { local }\n", "t.topo:1:19: error: expected ';' after 'local'");

    /* A missing '}' at the end of the file and before the next block. */
    EXPECT_ERRORS(ETH PC "switch s0 { link eth; nodes n[0-7] : pc;\n",
                  "t.topo:3:41: error: expected '}' to close switch 's0'");
    EXPECT_ERRORS(ETH PC "switch s0 { link eth; nodes n[0-7] : pc;\n"
                         "switch root { link eth; switches s0; }\n",
                  "t.topo:4:1: error: expected '}' to close switch 's0'");

    /* Anything else names what the grammar expected there. */
    EXPECT_ERRORS("switch s0 { bogus; link eth; }\n",
                  "t.topo:1:13: error: expected 'link', 'nodes', 'switches' or '}', got 'bogus'");
    EXPECT_ERRORS("}\n", "t.topo:1:1: error: expected 'machine', 'link', 'nodetype', 'switch' "
                         "or end of file, got '}'");
    EXPECT_ERRORS("switch { link eth; }\n", "t.topo:1:8: error: expected a switch name, got '{'");
    EXPECT_ERRORS("link eth { latency ; bandwidth 1GB/s; }\n",
                  "t.topo:1:20: error: expected a time such as 50us, got ';'");
    EXPECT_ERRORS("nodetype x { package; cores 1; }\n",
                  "t.topo:1:21: error: expected a link name, got ';'");
    EXPECT_ERRORS("switch s0 { nodes : pc; }\n",
                  "t.topo:1:19: error: expected a host list such as n[0-7], got ':'");
    EXPECT_ERRORS("machine", "t.topo:1:8: error: expected identifier, got end of file");
}

static void test_lexical(void)
{
    EXPECT_ERRORS("nodetype pc { synthetic \"package:1 core:1; }\n",
                  "t.topo:1:25: error: unterminated string");
    EXPECT_ERRORS("machine x@y;\n", "t.topo:1:10: error: unexpected character '@'");
    EXPECT_ERRORS("machine x;\n# caf\xc3\xa9 is fine in a comment\nlink \xc3\xa9 { }\n",
                  "t.topo:3:6: error: unexpected character '\xc3\xa9'");
    EXPECT_ERRORS("machine m;\x01\n", "t.topo:1:11: error: unexpected character '\\x01'");
    EXPECT_ERRORS("switch s0 {\tnodes n[0-3 : pc; }\n",
                  "t.topo:1:20: error: expected ']' in host range");
    EXPECT_ERRORS("switch s0 { nodes a, : pc; }\n",
                  "t.topo:1:22: error: expected a host name after ','");

    /* A file of garbage stops after 100 messages. */
    char garbage[400];
    memset(garbage, '@', 300);
    garbage[300] = '\0';
    trd_test_result r = read_as("t.topo", garbage);
    CU_ASSERT_EQUAL(r.rc, TRD_ERR_INPUT);
    CU_ASSERT_EQUAL_FATAL(trd_diag_count(r.d), 100);
    CU_ASSERT_STRING_EQUAL(trd_diag_message(r.d, 98),
                           "t.topo:1:99: error: unexpected character '@'");
    CU_ASSERT_STRING_EQUAL(
        trd_diag_message(r.d, 99),
        "t.topo:1:100: error: too many errors; the rest of the file is not read");
    trd_test_release(&r);
}

static void test_values(void)
{
    EXPECT_ERRORS("link eth { latency fast; bandwidth 125MB/s; }\n",
                  "t.topo:1:20: error: expected a time such as 50us, got 'fast'");
    EXPECT_ERRORS("link eth { latency 5xs; bandwidth 125MB/s; }\n",
                  "t.topo:1:20: error: unknown unit 'xs' in time '5xs'");
    EXPECT_ERRORS("link eth { latency 5us; bandwidth 12Mbps; }\n",
                  "t.topo:1:35: error: unknown unit 'Mbps' in bandwidth '12Mbps'");
    EXPECT_ERRORS("link eth { latency 5us; bandwidth 0GB/s; }\n",
                  "t.topo:1:35: error: expected a bandwidth from 1 B/s to 1 PB/s, got '0GB/s'");
    /* out of the model's range: overflow (was "must be > 0"), a denormal (was
     * inf in every prediction), an hour and more of latency */
    EXPECT_ERRORS("link eth { latency 5us; bandwidth 1e308GB/s; }\n",
                  "t.topo:1:35: error: expected a bandwidth from 1 B/s to 1 PB/s, got '1e308GB/s'");
    EXPECT_ERRORS("link eth { latency 5us; bandwidth 1e-320GB/s; }\n",
                  "t.topo:1:35: error: expected a bandwidth from 1 B/s to 1 PB/s, got "
                  "'1e-320GB/s'");
    EXPECT_ERRORS("link eth { latency 5us; bandwidth 1GB/s; injection 1e-320GB/s; }\n",
                  "t.topo:1:52: error: expected a bandwidth from 1 B/s to 1 PB/s, got "
                  "'1e-320GB/s'");
    EXPECT_ERRORS("link eth { latency 3601s; bandwidth 1GB/s; }\n",
                  "t.topo:1:20: error: expected a time from 0 to 1 hour, got '3601s'");
    EXPECT_ERRORS("link eth { latency 5us; bandwidth 1GB/s; injection 5us; }\n",
                  "t.topo:1:52: error: unknown unit 'us' in bandwidth '5us'");
    EXPECT_ERRORS("nodetype x { packages 0; cores 1; }\n",
                  "t.topo:1:23: error: expected a package count from 1 to 64, got '0'");
    EXPECT_ERRORS("nodetype x { cores 4 many; }\n",
                  "t.topo:1:22: error: expected a core count such as 8, got 'many'");
    /* hwloc parses a description when a node first uses the type; an unused
     * one is checked without hwloc for what needs no hwloc */
    EXPECT_ERRORS("nodetype x { synthetic \"foo:2\"; }\n"
                  "link l { latency 1us; bandwidth 1GB/s; }\nswitch s { link l; nodes n0 : x; }\n",
                  "t.topo:1:24: error: hwloc cannot parse synthetic description 'foo:2'");
    EXPECT_ERRORS("nodetype x { synthetic \"package:2 (core:4\"; }\n",
                  "t.topo:1:24: error: synthetic description 'package:2 (core:4' has a '(' or '[' "
                  "that is not closed");
}

static void test_blocks(void)
{
    EXPECT_ERRORS("link eth { latency 50us; }\n",
                  "t.topo:1:26: error: expected 'bandwidth' in link 'eth'");
    EXPECT_ERRORS("link eth { bandwidth 1GB/s; latency 1us; bandwidth 2GB/s; }\n",
                  "t.topo:1:42: error: duplicate 'bandwidth' in link 'eth'");
    EXPECT_ERRORS("nodetype x { }\n",
                  "t.topo:1:14: error: expected synthetic, hwloc, local or cores in nodetype 'x'");
    EXPECT_ERRORS("nodetype x { packages 2; }\n",
                  "t.topo:1:26: error: expected 'cores' with 'packages' in nodetype 'x'");
    EXPECT_ERRORS("nodetype x { packages 2; cores 8 8 8; }\n",
                  "t.topo:1:26: error: expected 1 or 2 core counts for 2 packages, got 3");
    EXPECT_ERRORS("nodetype x { synthetic \"package:2 core:2\"; cores 4; }\n",
                  "t.topo:1:44: error: expected only one shape (synthetic, hwloc, local or "
                  "packages/cores) in nodetype 'x'");
    EXPECT_ERRORS(ETH "switch s0 { link eth; link eth; }\n",
                  "t.topo:2:23: error: duplicate 'link' in switch 's0'");
    EXPECT_ERRORS("machine a;\nmachine b;\n", "t.topo:2:9: error: duplicate 'machine' statement");
    /* Reported by the model, at the second definition. */
    EXPECT_ERRORS(ETH ETH, "t.topo:2:6: error: link 'eth' is already defined");
    EXPECT_ERRORS(ETH PC "switch s0 { link eth; nodes a,b : pc; }\n"
                         "switch s1 { link eth; nodes b : pc; }\n",
                  "t.topo:4:29: error: node 'b' is already attached to switch 's0'");
}

/* Every broken statement of one file, in file order; a block with an error
 * is left out of the model, so it causes no follow-up error. */
static void test_many_errors(void)
{
    EXPECT_ERRORS("machine m;\n"
                  "link eth { latency 50 us; bandwidth 125MB/s }\n"
                  "link shm { latency fast; bandwidth 20GB/s; }\n"
                  "nodetype pc { synthetic \"package:1 core:1\" }\n"
                  "switch s0 { link eth; nodes n[0-3] : pc; bogus; nodes m@ : pc; }\n"
                  "switch s1 { link shm; nodes x[1-0] : pc; }\n"
                  "switch root { link eth; switches s0 s1; }\n"
                  "link eth {\n",
                  "t.topo:2:44: error: expected ';' after bandwidth value",
                  "t.topo:3:20: error: expected a time such as 50us, got 'fast'",
                  "t.topo:4:43: error: expected ';' after synthetic description",
                  "t.topo:5:42: error: expected 'link', 'nodes', 'switches' or '}', got 'bogus'",
                  "t.topo:5:56: error: unexpected character '@'",
                  "t.topo:6:31: error: host range goes downwards",
                  "t.topo:8:11: error: expected '}' to close link 'eth'");
}

/* Names that only trd_topo_finalize can resolve: the reader succeeds. */
static void test_finalize_errors(void)
{
    static const char text[] = ETH PC "switch s0 { link eth; nodes n[0-3] : pc; }\n"
                                      "switch root { link eth; switches s0 s9; }\n";
    trd_topo_t t;
    trd_diag *d = NULL;
    CU_ASSERT_EQUAL_FATAL(trd_diag_create(&d), TRD_OK);
    CU_ASSERT_EQUAL_FATAL(trd_topo_create(&t), TRD_OK);
    CU_ASSERT_EQUAL(trd_read_dsl_string(t, d, "t.topo", text, strlen(text)), TRD_OK);
    CU_ASSERT_EQUAL(trd_diag_count(d), 0);
    CU_ASSERT_EQUAL(trd_topo_finalize(t, d), TRD_ERR_INPUT);
    CU_ASSERT_EQUAL_FATAL(trd_diag_count(d), 1);
    CU_ASSERT_STRING_EQUAL(trd_diag_message(d, 0), "t.topo:4:37: error: unknown switch 's9'");
    trd_topo_destroy(t);
    trd_diag_destroy(d);

    EXPECT_ERRORS(ETH "switch s0 { link ethx; nodes a : pc; }\n",
                  "t.topo:2:30: error: unknown node type 'pc'",
                  "t.topo:2:8: error: unknown link 'ethx'");
}

/* ---- Source map ------------------------------------------------------------ */

/* Comments between and inside statements, values with a blank before the
 * unit, host lists of several ranges and with a tab after the comma, child
 * lists of several names, a statement without a blank before the next one. */
static const char mapped[] =
    "# where the parser found things\n"
    "machine m;\n"
    "link eth {  # the network\n"
    "    latency 50 us;    # number and unit apart\n"
    "    bandwidth 1.5 GB/s ;\n"
    "    injection 10GB/s;alpha_r 0.5us;\n"
    "}\n"
    "nodetype big { synthetic \"package:2 core:4\"; package eth; node eth; }\n"
    "nodetype here { local; }\n"
    "nodetype hand { packages 2; cores 8 4; }\n"
    "switch s0 {\n"
    "    link eth;\n"
    "    nodes n[0-7], gpu[00-03] # two ranges\n"
    "        : big;\n"
    "    nodes login;\n"
    "}\n"
    "switch s1 { nodes x,\ty : hand; }\n"
    "switch root { link eth; switches s0 s1; }\n";

typedef struct want_stmt {
    const char *kw;
    size_t kw_off, arg_off, arg_end, end;
    const char *arg; /* the text of arg_off..arg_end */
} want_stmt;

typedef struct want_block {
    const char *kind, *name;
    size_t kw_off, close;
    int nstmts;
} want_block;

static void test_map(void)
{
    static const want_block blocks[] = {
        {"link", "eth", 43, 176, 4},       {"nodetype", "big", 178, 246, 3},
        {"nodetype", "here", 248, 271, 1}, {"nodetype", "hand", 273, 312, 2},
        {"switch", "s0", 314, 414, 3},     {"switch", "s1", 416, 447, 1},
        {"switch", "root", 449, 489, 2},
    };
    static const want_stmt stmts[] = {
        {"latency", 73, 81, 86, 87, "50 us"},
        {"bandwidth", 119, 129, 137, 139, "1.5 GB/s"}, /* the blank before ';' is not in it */
        {"injection", 144, 154, 160, 161, "10GB/s"},
        {"alpha_r", 161, 169, 174, 175, "0.5us"},
        {"synthetic", 193, 203, 221, 222, "\"package:2 core:4\""},
        {"package", 223, 231, 234, 235, "eth"},
        {"node", 236, 241, 244, 245, "eth"},
        {"local", 264, 269, 269, 270, ""}, /* no argument: the empty range at its ';' */
        {"packages", 289, 298, 299, 300, "2"},
        {"cores", 301, 307, 310, 311, "8 4"},
        {"link", 330, 335, 338, 339, "eth"},
        {"nodes", 344, 350, 395, 396, "n[0-7], gpu[00-03] # two ranges\n        : big"},
        {"nodes", 401, 407, 412, 413, "login"},
        {"nodes", 428, 434, 445, 446, "x,\ty : hand"},
        {"link", 463, 468, 471, 472, "eth"},
        {"switches", 473, 482, 487, 488, "s0 s1"},
    };
    trd_topo_t t;
    trd_diag *d = NULL;
    CU_ASSERT_EQUAL_FATAL(trd_diag_create(&d), TRD_OK);
    trd_dsl_map *m = NULL;
    CU_ASSERT_EQUAL_FATAL(trd_topo_create(&t), TRD_OK);
    CU_ASSERT_EQUAL_FATAL(trd_read_dsl_string_map(t, d, "map.topo", mapped, strlen(mapped), &m),
                          TRD_OK);
    CU_ASSERT_EQUAL(trd_diag_count(d), 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    CU_ASSERT_EQUAL_FATAL(m->nblocks, 7);
    CU_ASSERT_EQUAL_FATAL(m->nstmts, 16);
    int k = 0;
    for (int i = 0; i < m->nblocks; i++) {
        const trd_dsl_block *b = &m->blocks[i];
        CU_ASSERT_STRING_EQUAL(b->kind, blocks[i].kind);
        CU_ASSERT_STRING_EQUAL(b->name, blocks[i].name);
        CU_ASSERT_EQUAL(b->kw_off, blocks[i].kw_off);
        CU_ASSERT_EQUAL(b->close, blocks[i].close);
        CU_ASSERT_EQUAL(mapped[b->close], '}');
        CU_ASSERT_EQUAL_FATAL(b->nstmts, blocks[i].nstmts);
        CU_ASSERT_PTR_EQUAL(b->stmts, m->stmts + k);
        for (int j = 0; j < b->nstmts; j++, k++) {
            const trd_dsl_stmt *s = &b->stmts[j];
            const want_stmt *w = &stmts[k];
            CU_ASSERT_STRING_EQUAL(s->kw, w->kw);
            CU_ASSERT_EQUAL(s->kw_off, w->kw_off);
            CU_ASSERT_EQUAL(s->arg_off, w->arg_off);
            CU_ASSERT_EQUAL(s->arg_end, w->arg_end);
            CU_ASSERT_EQUAL(s->end, w->end);
            /* the numbers above are the places of these texts */
            CU_ASSERT_EQUAL(strncmp(mapped + w->kw_off, w->kw, strlen(w->kw)), 0);
            CU_ASSERT_EQUAL(w->arg_end - w->arg_off, strlen(w->arg));
            CU_ASSERT_EQUAL(strncmp(mapped + w->arg_off, w->arg, strlen(w->arg)), 0);
            CU_ASSERT_EQUAL(mapped[w->end - 1], ';');
        }
    }
    trd_dsl_map_free(m);
    trd_topo_destroy(t);
    trd_diag_destroy(d);

    /* A text with an error gives no map; NULL asks for none. */
    CU_ASSERT_EQUAL_FATAL(trd_topo_create(&t), TRD_OK);
    CU_ASSERT_EQUAL_FATAL(trd_diag_create(&d), TRD_OK);
    static trd_dsl_map stale;
    m = &stale; /* must be reset */
    CU_ASSERT_EQUAL(trd_read_dsl_string_map(t, d, "bad.topo", "link a { latency 1us; }", 23, &m),
                    TRD_ERR_INPUT);
    CU_ASSERT_PTR_NULL(m);
    CU_ASSERT_EQUAL(trd_read_dsl_string_map(t, d, "ok.topo", "machine m;", 10, NULL), TRD_OK);
    trd_topo_destroy(t);
    trd_diag_destroy(d);
}

/* The source map of a text whose only block has no statement: the block with
 * none (the map has no statement at all, and its blocks point nowhere; found
 * by tests/fuzz/fuzz_dsl, which saw NULL + 0 here).  Finalize then finds the
 * switch without a link. */
static void test_map_empty_block(void)
{
    static const char text[] = "switch s0 {\n}\n";
    trd_topo_t t;
    trd_diag *d = NULL;
    CU_ASSERT_EQUAL_FATAL(trd_diag_create(&d), TRD_OK);
    trd_dsl_map *m = NULL;
    CU_ASSERT_EQUAL_FATAL(trd_topo_create(&t), TRD_OK);
    CU_ASSERT_EQUAL_FATAL(trd_read_dsl_string_map(t, d, "e.topo", text, strlen(text), &m), TRD_OK);
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    CU_ASSERT_EQUAL(m->nstmts, 0);
    CU_ASSERT_EQUAL_FATAL(m->nblocks, 1);
    CU_ASSERT_STRING_EQUAL(m->blocks[0].kind, "switch");
    CU_ASSERT_STRING_EQUAL(m->blocks[0].name, "s0");
    CU_ASSERT_EQUAL(m->blocks[0].kw_off, 0);
    CU_ASSERT_EQUAL(m->blocks[0].close, 12);
    CU_ASSERT_EQUAL(m->blocks[0].nstmts, 0);
    trd_dsl_map_free(m);
    CU_ASSERT_EQUAL(trd_topo_finalize(t, d), TRD_ERR_INPUT);
    CU_ASSERT_EQUAL_FATAL(trd_diag_count(d), 1);
    CU_ASSERT_STRING_EQUAL(
        trd_diag_message(d, 0),
        "e.topo:1:8: error: switch 's0' has no link and no default link is given");
    trd_topo_destroy(t);
    trd_diag_destroy(d);
}

/* Every prefix of a good file, and the file with any one byte replaced by
 * '}', reads without a crash and either succeeds or reports an error; a
 * source map comes with success only, and its offsets lie in the text. */
static void test_robust(void)
{
    size_t len = strlen(cluster);
    char *buf = malloc(len + 1);
    int bad = 0;
    CU_ASSERT_PTR_NOT_NULL_FATAL(buf);
    for (size_t cut = 0; cut <= 2 * len; cut++) {
        trd_topo_t t;
        trd_diag *d = NULL;
        size_t n = cut <= len ? cut : len;
        memcpy(buf, cluster, len);
        if (cut > len)
            buf[cut - len - 1] = '}';
        if (trd_diag_create(&d) != TRD_OK || trd_topo_create(&t) != TRD_OK)
            break;
        trd_dsl_map *m = NULL;
        int rc = trd_read_dsl_string_map(t, d, "t.topo", buf, n, &m);
        if (rc != TRD_OK && rc != TRD_ERR_INPUT)
            bad++;
        if (rc == TRD_ERR_INPUT && trd_diag_count(d) == 0)
            bad++;
        if ((rc == TRD_OK) != (m != NULL))
            bad++;
        for (int i = 0; m && i < m->nblocks; i++)
            bad += m->blocks[i].close >= n || buf[m->blocks[i].close] != '}';
        for (int i = 0; m && i < m->nstmts; i++)
            bad += m->stmts[i].end > n || buf[m->stmts[i].end - 1] != ';';
        trd_dsl_map_free(m);
        trd_topo_destroy(t);
        trd_diag_destroy(d);
    }
    CU_ASSERT_EQUAL(bad, 0);
    free(buf);
}

int main(void)
{
    static const trd_test_case tests[] = {
        {"example cluster through the model", test_cluster},
        {"layout, units and a deeper tree", test_layout},
        {"alpha_r: values, path cost and errors", test_alpha_r},
        {"alpha_r checked by the model", test_alpha_r_model},
        {"cost ranges checked by the model", test_cost_range_model},
        {"default node type", test_default_nodetype},
        {"files and relative hwloc paths", test_files},
        {"syntax errors", test_syntax},
        {"lexical errors", test_lexical},
        {"bad values", test_values},
        {"incomplete and duplicate statements", test_blocks},
        {"many errors in one file", test_many_errors},
        {"names resolved at finalize", test_finalize_errors},
        {"truncated and damaged files", test_robust},
        {"source map: byte ranges of blocks and statements", test_map},
        {"source map: a block without statements", test_map_empty_block},
    };
    return trd_test_main("dsl", tests, TRD_NTESTS(tests));
}
