/* Slurm topology.yaml reader (gen/read/read_yaml.c): the topology it chooses,
 * tree, block and ring through the model after trd_topo_finalize, and bad
 * files by the exact text of every message, libyaml's own with its line and
 * column. */
#include <CUnit/Basic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "readers.h"
#include "test_util.h"
#include "topo.h"

static const trd_link_cost net = {1e-6, 12.5e9, 0, 0};
static const int cores[1] = {4};

static void yaml_defaults(trd_topo_t t)
{
    trd_topo_set_default_link(t, net);
    trd_topo_set_default_nodetype(t, 1, cores, "--nodetype \"package:1 core:4\"");
}

static const trd_test_format yaml = {trd_read_yaml_string, yaml_defaults, "topology.yaml"};

#define EXPECT_ERRORS(text, ...) TRD_EXPECT_ERRORS(&yaml, text, __VA_ARGS__)

static trd_test_result read_as(const char *text)
{
    return trd_test_read_as(&yaml, "topology.yaml", text);
}

/* The example of topology.yaml(5), Slurm 25.05: topo1 is the cluster default. */
static const char manual[] = "---\n"
                             "- topology: topo1\n"
                             "  cluster_default: true\n"
                             "  tree:\n"
                             "    switches:\n"
                             "      - switch: sw_root\n"
                             "        children: s[1-2]\n"
                             "      - switch: s1\n"
                             "        nodes: node[01-02]\n"
                             "      - switch: s2\n"
                             "        nodes: node[03-04]\n"
                             "- topology: topo2\n"
                             "  cluster_default: false\n"
                             "  block:\n"
                             "    block_sizes:\n"
                             "      - 4\n"
                             "      - 16\n"
                             "    blocks:\n"
                             "      - block: b1\n"
                             "        nodes: node[01-04]\n"
                             "      - block: b2\n"
                             "        nodes: node[05-08]\n"
                             "      - block: b3\n"
                             "        nodes: node[09-12]\n"
                             "      - block: b4\n"
                             "        nodes: node[13-16]\n"
                             "- topology: topo3\n"
                             "  cluster_default: false\n"
                             "  flat: true\n";

static void test_tree(void)
{
    char shape[256];
    trd_test_result r = read_as(manual);
    CU_ASSERT_EQUAL_FATAL(r.rc, TRD_OK);
    CU_ASSERT_STRING_EQUAL(trd_topo_name(r.t), "topo1");
    trd_test_tree_shape(r.t, shape, sizeof shape);
    CU_ASSERT_STRING_EQUAL(shape, "sw_root< s1<sw_root s2<sw_root");
    CU_ASSERT_EQUAL_FATAL(trd_topo_nnodes(r.t), 4);
    CU_ASSERT_STRING_EQUAL(trd_topo_node_name(r.t, 2), "node03");
    CU_ASSERT_EQUAL(trd_topo_node_switch(r.t, 2), 2);
    /* node03 is four links away from node01: the default link's 1 us each */
    CU_ASSERT_DOUBLE_EQUAL(trd_topo_path_cost(r.t, 0, 3).latency_s, 4e-6, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(trd_topo_path_cost(r.t, 0, 3).bandwidth_Bps, 12.5e9, 1);
    CU_ASSERT_EQUAL(trd_topo_nodetype_ncores(r.t, trd_topo_node_type(r.t, 0)), 4);
    trd_test_release(&r);

    /* Flow style, node lists as lists, children before their switch. */
    r = read_as("[{topology: t, tree: {switches: [{switch: top, children: [a, b]},\n"
                "  {switch: b, nodes: [x1, 'y[1-2]']}, {switch: a, nodes: z}]}}]\n");
    CU_ASSERT_EQUAL_FATAL(r.rc, TRD_OK);
    trd_test_tree_shape(r.t, shape, sizeof shape);
    CU_ASSERT_STRING_EQUAL(shape, "top< a<top b<top");
    CU_ASSERT_EQUAL_FATAL(trd_topo_nnodes(r.t), 4);
    CU_ASSERT_STRING_EQUAL(trd_topo_node_name(r.t, 0), "z");
    CU_ASSERT_STRING_EQUAL(trd_topo_node_name(r.t, 3), "y2");
    trd_test_release(&r);
}

/* cluster_default chooses; without one, the first topology. */
static void test_block_ring(void)
{
    char shape[256];
    trd_test_result r = read_as("- topology: tree\n"
                                "  tree: {switches: [{switch: s, nodes: 'n[01-16]'}]}\n"
                                "- topology: blocks\n"
                                "  cluster_default: True\n"
                                "  block:\n"
                                "    block_sizes: 4,8\n"
                                "    blocks:\n"
                                "      - {block: b1, nodes: 'n[01-04]'}\n"
                                "      - {block: b2, nodes: 'n[05-08]'}\n"
                                "      - {block: b3, nodes: 'n[09-12]'}\n"
                                "      - {block: b4, nodes: 'n[13-16]'}\n"
                                "- topology: later\n"
                                "  cluster_default: yes\n"
                                "  flat: true\n");
    CU_ASSERT_EQUAL_FATAL(r.rc, TRD_OK);
    CU_ASSERT_STRING_EQUAL(trd_topo_name(r.t), "blocks");
    trd_test_tree_shape(r.t, shape, sizeof shape);
    CU_ASSERT_STRING_EQUAL(shape, "b1..b4< b1..b2<b1..b4 b1<b1..b2 b2<b1..b2 b3..b4<b1..b4 "
                                  "b3<b3..b4 b4<b3..b4");
    CU_ASSERT_EQUAL(trd_topo_nnodes(r.t), 16);
    trd_test_release(&r);

    r = read_as("- topology: rings\n"
                "  ring:\n"
                "    rings:\n"
                "      - ring: r0\n"
                "        nodes: [n3, n1, n2]\n"
                "- topology: other\n"
                "  flat: true\n");
    CU_ASSERT_EQUAL_FATAL(r.rc, TRD_OK);
    CU_ASSERT_EQUAL(trd_topo_nswitches(r.t), 1);
    CU_ASSERT_EQUAL_FATAL(trd_topo_nnodes(r.t), 3);
    CU_ASSERT_STRING_EQUAL(trd_topo_node_name(r.t, 0), "n3");
    CU_ASSERT_STRING_EQUAL(trd_topo_node_name(r.t, 2), "n2");
    trd_test_release(&r);

    r = trd_test_fresh(&yaml);
    CU_ASSERT_EQUAL_FATAL(trd_read_yaml(r.t, r.d, trd_test_path("tests/data/topology.yaml")),
                          TRD_OK);
    CU_ASSERT_EQUAL_FATAL(trd_topo_finalize(r.t, r.d), TRD_OK);
    CU_ASSERT_STRING_EQUAL(trd_topo_name(r.t), "fabric");
    CU_ASSERT_EQUAL(trd_topo_nnodes(r.t), 8);
    trd_test_release(&r);
}

static void test_errors(void)
{
    /* libyaml's own messages, at its marks */
    EXPECT_ERRORS("- topology: a\n  tree: {switches: [\n",
                  "topology.yaml:3:1: error: did not find expected node content while parsing "
                  "a flow node (line 3)");
    EXPECT_ERRORS("- topology: a\n tree: x\n",
                  "topology.yaml:2:2: error: did not find expected '-' indicator while parsing a "
                  "block collection (line 1)");
    EXPECT_ERRORS("- topology: a\n  nodes: 'x\n",
                  "topology.yaml:3:1: error: found unexpected end of stream while scanning a "
                  "quoted scalar (line 2)");
    /* the document */
    EXPECT_ERRORS("", "topology.yaml:1:1: error: expected a list of topologies");
    EXPECT_ERRORS("topology: a\n", "topology.yaml:1:1: error: expected a list of topologies, got "
                                   "a mapping");
    EXPECT_ERRORS("[]\n", "topology.yaml:1:1: error: expected at least one topology");
    EXPECT_ERRORS("- topology: a\n  trees: {}\n",
                  "topology.yaml:2:3: error: unknown key 'trees', expected topology, "
                  "cluster_default, tree, block, ring or flat");
    EXPECT_ERRORS("- topology: a\n  cluster_default: true\n",
                  "topology.yaml:1:3: error: expected one of tree, block, ring or flat");
    EXPECT_ERRORS("- cluster_default: true\n  flat: true\n",
                  "topology.yaml:1:3: error: expected 'topology' with the topology's name");
    EXPECT_ERRORS("- topology: a\n  cluster_default: maybe\n  flat: true\n",
                  "topology.yaml:2:20: error: expected true or false, got 'maybe'");
    EXPECT_ERRORS("- topology: a\n  flat: true\n  tree: {}\n",
                  "topology.yaml:3:3: error: 'tree' cannot go with 'flat' in one topology");
    EXPECT_ERRORS("- topology: a\n  flat: true\n",
                  "topology.yaml:2:9: error: topology 'a' is flat: it names no nodes (Slurm "
                  "takes them from slurm.conf); give the machine as a tree, block or ring");
    EXPECT_ERRORS("- topology: a\n  topology: b\n  flat: true\n",
                  "topology.yaml:2:3: error: duplicate key 'topology'");
    /* tree */
    EXPECT_ERRORS("- topology: a\n  tree: {switches: [{switch: s, nodes: 'n[1-'}]}\n",
                  "topology.yaml:2:40: error: expected ']' in host range");
    EXPECT_ERRORS(
        "- topology: a\n  tree:\n    switches:\n      - switch: s\n        nodes: n[1-x]\n",
        "topology.yaml:5:20: error: expected a number after '-' in host range");
    EXPECT_ERRORS("- topology: a\n  tree: {switches: [{nodes: n1}]}\n",
                  "topology.yaml:2:21: error: expected 'switch' with the switch's name");
    EXPECT_ERRORS("- topology: a\n  tree: {switches: [{switch: 's[1-2]', nodes: n1}]}\n",
                  "topology.yaml:2:30: error: expected one switch name, got 's[1-2]'");
    EXPECT_ERRORS("- topology: a\n  tree: {switches: [{switch: s, node: n1}]}\n",
                  "topology.yaml:2:33: error: unknown key 'node', expected switch, children or "
                  "nodes");
    EXPECT_ERRORS("- topology: a\n  tree: {switchs: []}\n",
                  "topology.yaml:2:10: error: unknown key 'switchs', expected switches");
    EXPECT_ERRORS("- topology: a\n  tree: {switches: {switch: s}}\n",
                  "topology.yaml:2:20: error: expected a list of switches, got a mapping");
    EXPECT_ERRORS("- topology: a\n  tree: {switches: [{switch: s, nodes: n1, children: t}]}\n",
                  "topology.yaml:2:54: error: unknown switch 't'");
    /* block and ring */
    EXPECT_ERRORS("- topology: a\n  block: {blocks: [{block: b1}]}\n",
                  "topology.yaml:2:20: error: expected 'nodes' in each block");
    EXPECT_ERRORS("- topology: a\n  block: {block_sizes: [2, x], blocks: [{block: b, nodes: "
                  "'n[1-2]'}]}\n",
                  "topology.yaml:2:28: error: expected a positive whole number of nodes, got "
                  "'x'");
    EXPECT_ERRORS("- topology: a\n  block:\n    block_sizes: 2,6\n    blocks: [{block: b, nodes: "
                  "'n[1-2]'}]\n",
                  "topology.yaml:3:20: error: BlockSizes 6 is not the base block size 2 times a "
                  "power of two");
    EXPECT_ERRORS("- topology: a\n  block: {block_sizes: [4]}\n",
                  "topology.yaml:2:10: error: expected blocks in a block");
    EXPECT_ERRORS("- topology: a\n  ring: {rings: [{ring: r, nodes: 'n[1-20]'}]}\n",
                  "topology.yaml:2:35: error: ring 'r' has 20 nodes, more than the 16 Slurm "
                  "allows");
    EXPECT_ERRORS("- topology: a\n  ring: {rings: []}\n",
                  "topology.yaml:2:17: error: expected at least one ring");
}

/* Every prefix of a good file, and bytes replaced: a status and messages
 * that agree, never a crash. */
static void test_robust(void)
{
    CU_ASSERT_EQUAL(trd_test_robust(&yaml, manual, "]{"), 0);
}

int main(void)
{
    static const trd_test_case tests[] = {
        {"tree: the manual's example, flow style", test_tree},
        {"block and ring; cluster_default", test_block_ring},
        {"bad files", test_errors},
        {"truncated and damaged files", test_robust},
    };
    return trd_test_main("yaml", tests, TRD_NTESTS(tests));
}
