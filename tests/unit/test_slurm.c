/* Slurm topology.conf reader (gen/read/read_slurm.c): good files checked through
 * the model after trd_topo_finalize (DFS ring order, switch parents, the
 * default link and node type), bad files checked by the exact text of every
 * message, several errors per file, and names only finalize can resolve. */
#include <CUnit/Basic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "readers.h"
#include "test_util.h"
#include "topo.h"

static const trd_link_cost net = {1e-6, 12.5e9, 0, 0};
static const int cores[2] = {8, 8};

/* The defaults a Slurm file needs (as the CLI sets them). */
static void slurm_defaults(trd_topo_t t)
{
    trd_topo_set_default_link(t, net);
    trd_topo_set_default_nodetype(t, 2, cores, "--nodetype \"package:2 core:8\"");
}

static const trd_test_format slurm = {trd_read_slurm_string, slurm_defaults, "topology.conf"};

/* A topology with the defaults a Slurm file needs. */
static trd_test_result fresh(void)
{
    return trd_test_fresh(&slurm);
}

/* Read text as file name, then finalize if the reader found no error. */
static trd_test_result read_as(const char *name, const char *text)
{
    return trd_test_read_as(&slurm, name, text);
}

/* text read as "topology.conf" must fail with exactly the given messages, in
 * order. */
#define EXPECT_ERRORS(text, ...) TRD_EXPECT_ERRORS(&slurm, text, __VA_ARGS__)

/* ---- Good files --------------------------------------------------------- */

static void test_tree(void)
{
    /* s3 is listed in Switches= before its own line. */
    trd_test_result r =
        read_as("topology.conf", "# three leaves, two levels\n"
                                 "SwitchName=s0 Nodes=tux[0-3] LinkSpeed=100\n"
                                 "\n"
                                 "   # an indented comment\n"
                                 "SwitchName=s1 Nodes=tux[4-5]   # trailing comment\n"
                                 "SwitchName=spine Switches=s[0-1],s3\n"
                                 "SwitchName=s3 Nodes=gpu[00-01],login\n");
    trd_topo_t t = r.t;
    CU_ASSERT_EQUAL_FATAL(r.rc, TRD_OK);
    CU_ASSERT_STRING_EQUAL(trd_topo_name(t), "spine"); /* the root's name */
    CU_ASSERT_EQUAL_FATAL(trd_topo_nswitches(t), 4);
    static const char *const sws[] = {"spine", "s0", "s1", "s3"};
    for (int i = 0; i < 4; i++) {
        CU_ASSERT_STRING_EQUAL(trd_topo_switch_name(t, i), sws[i]);
        CU_ASSERT_EQUAL(trd_topo_switch_parent(t, i), i == 0 ? -1 : 0);
        CU_ASSERT_STRING_EQUAL(trd_topo_switch_link_name(t, i), "default");
    }
    CU_ASSERT_DOUBLE_EQUAL(trd_topo_switch_link(t, 1).bandwidth_Bps, 12.5e9, 1e-3);

    static const char *const nodes[] = {"tux0", "tux1",  "tux2",  "tux3", "tux4",
                                        "tux5", "gpu00", "gpu01", "login"};
    static const int sw[] = {1, 1, 1, 1, 2, 2, 3, 3, 3};
    CU_ASSERT_EQUAL_FATAL(trd_topo_nnodes(t), 9);
    for (int i = 0; i < 9; i++) {
        CU_ASSERT_STRING_EQUAL(trd_topo_node_name(t, i), nodes[i]);
        CU_ASSERT_EQUAL(trd_topo_node_switch(t, i), sw[i]);
    }
    int ty = trd_topo_node_type(t, 8);
    CU_ASSERT_EQUAL(trd_topo_nodetype_npackages(t, ty), 2);
    CU_ASSERT_EQUAL(trd_topo_nodetype_ncores(t, ty), 16);
    CU_ASSERT_STRING_EQUAL(trd_topo_nodetype_source(t, ty), "--nodetype \"package:2 core:8\"");
    trd_test_release(&r);
}

/* Keys in any case and order, continued lines, CRLF, tabs, no final newline. */
static void test_layout(void)
{
    trd_test_result r = read_as("topology.conf", "switchname=leaf0\tNODES=a[1-2],\\\r\n"
                                                 "    a[3-4]\r\n"
                                                 "Nodes=b1 SWITCHNAME=leaf1 linkspeed=1\r\n"
                                                 "Switches=leaf[0-1] \\\n"
                                                 "  SwitchName=top");
    trd_topo_t t = r.t;
    CU_ASSERT_EQUAL_FATAL(r.rc, TRD_OK);
    CU_ASSERT_EQUAL_FATAL(trd_topo_nnodes(t), 5);
    CU_ASSERT_STRING_EQUAL(trd_topo_node_name(t, 3), "a4");
    CU_ASSERT_STRING_EQUAL(trd_topo_node_name(t, 4), "b1");
    CU_ASSERT_STRING_EQUAL(trd_topo_switch_name(t, 0), "top");
    CU_ASSERT_EQUAL(trd_topo_switch_parent(t, 2), 0);
    trd_test_release(&r);
}

/* trd_read_slurm on files, and a file that cannot be read. */
static void test_files(void)
{
    trd_test_result r = fresh();
    CU_ASSERT_EQUAL_FATAL(
        trd_read_slurm(r.t, r.d, trd_test_path("tests/data/slurm-two-level.conf")), TRD_OK);
    CU_ASSERT_EQUAL_FATAL(trd_topo_finalize(r.t, r.d), TRD_OK);
    CU_ASSERT_EQUAL(trd_topo_nnodes(r.t), 8);
    CU_ASSERT_STRING_EQUAL(trd_topo_node_name(r.t, 7), "tux7");
    CU_ASSERT_EQUAL(trd_topo_node_switch(r.t, 7), 2);
    trd_test_release(&r);

    r = fresh();
    CU_ASSERT_EQUAL(trd_read_slurm(r.t, r.d, "/nonexistent/topology.conf"), TRD_ERR_IO);
    CU_ASSERT_EQUAL_FATAL(trd_diag_count(r.d), 1);
    CU_ASSERT_STRING_EQUAL(trd_diag_message(r.d, 0),
                           "/nonexistent/topology.conf: error: cannot read file: No such file "
                           "or directory");
    trd_test_release(&r);
}

/* ---- Bad files: exact messages ------------------------------------------ */

static void test_errors(void)
{
    EXPECT_ERRORS("SwitchName=s0 Nodes=a Foo=1\n",
                  "topology.conf:1:23: error: unknown key 'Foo', expected SwitchName, Switches, "
                  "Nodes, LinkSpeed, BlockName, BlockSizes or RingName");
    EXPECT_ERRORS("SwitchName=s0 Nodes\n",
                  "topology.conf:1:15: error: expected Key=Value, got 'Nodes'");
    EXPECT_ERRORS("SwitchName=s0 Nodes= Switches=s1\n",
                  "topology.conf:1:21: error: expected a value after 'Nodes='");
    EXPECT_ERRORS("SwitchName=s0 Nodes=a nodes=b\n",
                  "topology.conf:1:23: error: duplicate key 'nodes'");
    EXPECT_ERRORS("Nodes=a[0-3]\n", "topology.conf:1:1: error: expected SwitchName, BlockName, "
                                    "RingName or BlockSizes on the line");
    EXPECT_ERRORS("SwitchName=s[0-1] Nodes=a\n",
                  "topology.conf:1:12: error: expected one switch name, got 's[0-1]'");
    EXPECT_ERRORS("SwitchName=s0 Nodes=a[0-3\n",
                  "topology.conf:1:22: error: expected ']' in host range");
    EXPECT_ERRORS("SwitchName=s0 Nodes=a[0-1],\\\n  b[3-x]\n",
                  "topology.conf:2:7: error: expected a number after '-' in host range");
    /* Reported by the model, naming the file. */
    EXPECT_ERRORS("", "topology.conf: error: the topology has no switch");
    EXPECT_ERRORS("# comments only\n", "topology.conf: error: the topology has no switch");
    EXPECT_ERRORS("SwitchName=s0 Nodes=a\nSwitchName=s0 Nodes=b\n",
                  "topology.conf:2:12: error: switch 's0' is already defined at line 1");
    EXPECT_ERRORS("SwitchName=s0 Nodes=a,b\nSwitchName=s1 Nodes=b,c\n",
                  "topology.conf:2:21: error: node 'b' is already attached to switch 's0'");
}

/* Host numbers at the edge of a long: the range ends at LONG_MAX without
 * stepping past it; one more digit, or more hosts than a machine may have, is
 * an error, not a loop. */
static void test_host_numbers(void)
{
    trd_test_result r =
        read_as("topology.conf", "SwitchName=r Nodes=n[9223372036854775806-9223372036854775807]\n"
                                 "SwitchName=q Nodes=m[9223372036854775807]\n"
                                 "SwitchName=top Switches=r,q\n");
    CU_ASSERT_EQUAL_FATAL(r.rc, TRD_OK);
    CU_ASSERT_EQUAL_FATAL(trd_topo_nnodes(r.t), 3);
    CU_ASSERT_STRING_EQUAL(trd_topo_node_name(r.t, 0), "n9223372036854775806");
    CU_ASSERT_STRING_EQUAL(trd_topo_node_name(r.t, 1), "n9223372036854775807");
    CU_ASSERT_STRING_EQUAL(trd_topo_node_name(r.t, 2), "m9223372036854775807");
    trd_test_release(&r);
    EXPECT_ERRORS("SwitchName=r Nodes=n[9223372036854775808]\n",
                  "topology.conf:1:22: error: host number too large");
    EXPECT_ERRORS("SwitchName=r Nodes=n[1-99999999999999999999]\n",
                  "topology.conf:1:24: error: host number too large");
    EXPECT_ERRORS("SwitchName=r Nodes=n[0-1048575],m[0-1]\n",
                  "topology.conf:1:35: error: host list too long");
}

/* Every bad line of one file, in order; a bad line adds nothing. */
static void test_many_errors(void)
{
    EXPECT_ERRORS("# leaves\n"
                  "SwitchName=s0 Nodes=tux[0-3] Bandwidth=10\n"
                  "SwitchName=s1 Nodes=tux[4-2]\n"
                  "SwitchName=s2 Nodes=tux[8-9]\n"
                  "Switches=s[0-2]\n"
                  "SwitchName=top Switches=s[0-2] junk\n",
                  "topology.conf:2:30: error: unknown key 'Bandwidth', expected SwitchName, "
                  "Switches, Nodes, LinkSpeed, BlockName, BlockSizes or RingName",
                  "topology.conf:3:25: error: host range goes downwards",
                  "topology.conf:5:1: error: expected SwitchName, BlockName, RingName or "
                  "BlockSizes on the line",
                  "topology.conf:6:32: error: expected Key=Value, got 'junk'");
}

/* A file of garbage stops after 100 messages. */
static void test_too_many(void)
{
    char text[1000];
    for (int i = 0; i < 300; i++)
        memcpy(text + 3 * i, "x\n\n", 3);
    text[900] = '\0';
    trd_test_result r = read_as("topology.conf", text);
    CU_ASSERT_EQUAL(r.rc, TRD_ERR_INPUT);
    CU_ASSERT_EQUAL_FATAL(trd_diag_count(r.d), 101);
    CU_ASSERT_STRING_EQUAL(trd_diag_message(r.d, 99),
                           "topology.conf:199:1: error: expected Key=Value, got 'x'");
    CU_ASSERT_STRING_EQUAL(trd_diag_message(r.d, 100),
                           "topology.conf:200:1: error: too many errors; the rest of the file is "
                           "not read");
    trd_test_release(&r);
}

/* A switch named in Switches= but never defined: finalize reports it. */
static void test_finalize_errors(void)
{
    static const char text[] = "SwitchName=s0 Nodes=a\nSwitchName=top Switches=s0,s9\n";
    trd_test_result r = fresh();
    CU_ASSERT_EQUAL(trd_read_slurm_string(r.t, r.d, "topology.conf", text, strlen(text)), TRD_OK);
    CU_ASSERT_EQUAL(trd_diag_count(r.d), 0);
    CU_ASSERT_EQUAL(trd_topo_finalize(r.t, r.d), TRD_ERR_INPUT);
    CU_ASSERT_EQUAL_FATAL(trd_diag_count(r.d), 1);
    CU_ASSERT_STRING_EQUAL(trd_diag_message(r.d, 0),
                           "topology.conf:2:25: error: unknown switch 's9'");
    trd_test_release(&r);

    /* Without the defaults the CLI sets, nodes and switches lack their types. */
    CU_ASSERT_EQUAL(trd_topo_create(&r.t), TRD_OK);
    CU_ASSERT_EQUAL_FATAL(trd_diag_create(&r.d), TRD_OK);
    static const char one[] = "SwitchName=s0 Nodes=a\n";
    CU_ASSERT_EQUAL(trd_read_slurm_string(r.t, r.d, "topology.conf", one, strlen(one)), TRD_OK);
    CU_ASSERT_EQUAL(trd_topo_finalize(r.t, r.d), TRD_ERR_INPUT);
    CU_ASSERT_EQUAL(trd_diag_count(r.d), 2);
    trd_test_release(&r);
}

/* Every prefix of a good file, and the file with any one byte replaced by
 * '\\', '=' or '#', reads without a crash and either succeeds or reports. */
static void test_robust(void)
{
    static const char good[] = "SwitchName=s0 Nodes=tux[0-3],\\\n  tux[4-5] LinkSpeed=1\n"
                               "SwitchName=top Switches=s0 # spine\n";
    static const char subst[] = "\\=#";
    size_t len = strlen(good);
    char buf[sizeof good];
    int bad = 0;
    for (size_t k = 0; k <= 4 * len; k++) {
        size_t n = k <= len ? k : len;
        memcpy(buf, good, len);
        if (k > len)
            buf[(k - len - 1) / 3] = subst[(k - len - 1) % 3];
        trd_test_result r = fresh();
        int rc = trd_read_slurm_string(r.t, r.d, "topology.conf", buf, n);
        if ((rc != TRD_OK && rc != TRD_ERR_INPUT) ||
            (rc == TRD_ERR_INPUT) != (trd_diag_count(r.d) > 0))
            bad++;
        trd_test_release(&r);
    }
    CU_ASSERT_EQUAL(bad, 0);
}

/* ---- topology/block and topology/ring ---------------------------------- */

/* Slurm's example of topology.conf(5): four blocks of 32 nodes, BlockSizes
 * 30 (the base block size, in nodes) and 120 (four blocks). */
static void test_block(void)
{
    char shape[512];
    trd_test_result r = read_as("topology.conf", "BlockName=block1 Nodes=node[1-32]\n"
                                                 "BlockName=block2 Nodes=node[33-64]\n"
                                                 "blockname=block3 nodes=node[65-96]\n"
                                                 "BlockName=block4 Nodes=node[97-128]\n"
                                                 "BlockSizes=30,120\n");
    CU_ASSERT_EQUAL_FATAL(r.rc, TRD_OK);
    trd_test_tree_shape(r.t, shape, sizeof shape);
    CU_ASSERT_STRING_EQUAL(shape, "block1..block4< block1<block1..block4 block2<block1..block4 "
                                  "block3<block1..block4 block4<block1..block4");
    CU_ASSERT_EQUAL(trd_topo_nnodes(r.t), 128);
    CU_ASSERT_STRING_EQUAL(trd_topo_node_name(r.t, 32), "node33");
    CU_ASSERT_EQUAL(trd_topo_node_switch(r.t, 32), 2);
    CU_ASSERT_STRING_EQUAL(trd_topo_switch_link_name(r.t, 0), "default");
    CU_ASSERT_DOUBLE_EQUAL(trd_topo_path_cost(r.t, 0, 127).latency_s, 4e-6, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(trd_topo_path_cost(r.t, 0, 31).latency_s, 2e-6, 1e-12);
    trd_test_release(&r);

    /* Five blocks of 2, levels of 2 and 4 blocks: b5 is alone at level 2
     * (Slurm makes no group of it) and joins the top. */
    r = read_as("topology.conf", "BlockSizes=2,4,8\n"
                                 "BlockName=b1 Nodes=n[1-2]\nBlockName=b2 Nodes=n[3-4]\n"
                                 "BlockName=b3 Nodes=n[5-6]\nBlockName=b4 Nodes=n[7-8]\n"
                                 "BlockName=b5 Nodes=n[9-11]\n");
    CU_ASSERT_EQUAL_FATAL(r.rc, TRD_OK);
    trd_test_tree_shape(r.t, shape, sizeof shape);
    CU_ASSERT_STRING_EQUAL(shape, "b1..b5< b1..b4<b1..b5 b1..b2<b1..b4 b1<b1..b2 b2<b1..b2 "
                                  "b3..b4<b1..b4 b3<b3..b4 b4<b3..b4 b5<b1..b5");
    CU_ASSERT_EQUAL(trd_topo_nnodes(r.t), 11);
    trd_test_release(&r);

    /* Without BlockSizes: the first block's size, levels 1, 2, 4, 8 blocks;
     * ten blocks: groups of 2 (5), 4 (2: k8..k9 is no bigger than a group of
     * 2) and 8 (1), and a root above k0..k7 and k8..k9. */
    char text[1024];
    size_t o = 0;
    for (int i = 0; i < 10; i++)
        o += (size_t)snprintf(text + o, sizeof text - o, "BlockName=k%d Nodes=h[%d-%d]\n", i, 2 * i,
                              2 * i + 1);
    r = read_as("topology.conf", text);
    CU_ASSERT_EQUAL_FATAL(r.rc, TRD_OK);
    CU_ASSERT_EQUAL(trd_topo_nswitches(r.t), 10 + 5 + 2 + 1 + 1);
    CU_ASSERT_STRING_EQUAL(trd_topo_switch_name(r.t, 0), "k0..k9");
    CU_ASSERT_STRING_EQUAL(trd_topo_switch_name(r.t, 1), "k0..k7");
    CU_ASSERT_STRING_EQUAL(trd_topo_switch_name(r.t, trd_topo_nswitches(r.t) - 3), "k8..k9");
    trd_test_release(&r);

    r = fresh();
    CU_ASSERT_EQUAL_FATAL(trd_read_slurm(r.t, r.d, trd_test_path("topologies/slurm-block.conf")),
                          TRD_OK);
    CU_ASSERT_EQUAL_FATAL(trd_topo_finalize(r.t, r.d), TRD_OK);
    CU_ASSERT_EQUAL(trd_topo_nnodes(r.t), 32);
    CU_ASSERT_EQUAL(trd_topo_nswitches(r.t), 13);
    trd_test_release(&r);
}

/* Rings: one switch per ring, the DFS ring order walks each in its order. */
static void test_ring(void)
{
    char shape[256];
    trd_test_result r = read_as("topology.conf", "# topology/ring\n"
                                                 "RingName=ring0 Nodes=node[01-04],node08,node07\n"
                                                 "RingName=ring1 Nodes=node[16-09]\n");
    CU_ASSERT_EQUAL_FATAL(r.rc, TRD_ERR_INPUT); /* a range must go upwards */
    trd_test_release(&r);
    r = read_as("topology.conf", "RingName=ring0 Nodes=node[01-04],node08,node07\n"
                                 "RingName=ring1 Nodes=node12,node[09-11]\n");
    CU_ASSERT_EQUAL_FATAL(r.rc, TRD_OK);
    trd_test_tree_shape(r.t, shape, sizeof shape);
    CU_ASSERT_STRING_EQUAL(shape, "ring0..ring1< ring0<ring0..ring1 ring1<ring0..ring1");
    static const char *const order[] = {"node01", "node02", "node03", "node04", "node08",
                                        "node07", "node12", "node09", "node10", "node11"};
    CU_ASSERT_EQUAL_FATAL(trd_topo_nnodes(r.t), 10);
    for (int i = 0; i < 10; i++)
        CU_ASSERT_STRING_EQUAL(trd_topo_node_name(r.t, i), order[i]);
    trd_test_release(&r);

    r = read_as("topology.conf", "RingName=solo Nodes=a[1-16]\n");
    CU_ASSERT_EQUAL_FATAL(r.rc, TRD_OK);
    CU_ASSERT_EQUAL(trd_topo_nswitches(r.t), 1);
    CU_ASSERT_STRING_EQUAL(trd_topo_name(r.t), "solo");
    trd_test_release(&r);
}

static void test_plugin_errors(void)
{
    EXPECT_ERRORS("BlockName=b1\n", "topology.conf:1:1: error: expected Nodes on a BlockName line");
    EXPECT_ERRORS("RingName=r0 Nodes=a[1-17]\n",
                  "topology.conf:1:19: error: ring 'r0' has 17 nodes, more than the 16 Slurm "
                  "allows");
    EXPECT_ERRORS("SwitchName=s0 Nodes=a[1-2]\nBlockName=b1 Nodes=b[1-2]\n",
                  "topology.conf:2:1: error: BlockName is topology/block, but line 1 made this a "
                  "topology/tree file");
    EXPECT_ERRORS("RingName=r0 Nodes=a1\nBlockSizes=4\n",
                  "topology.conf:2:1: error: BlockSizes is topology/block, but line 1 made this a "
                  "topology/ring file");
    EXPECT_ERRORS("BlockName=b1 SwitchName=s1 Nodes=a1\n",
                  "topology.conf:1:14: error: 'SwitchName' cannot share a line with 'BlockName'");
    EXPECT_ERRORS("BlockName=b1 Nodes=a1 Switches=s2\n",
                  "topology.conf:1:23: error: 'Switches' does not belong on a BlockName line");
    EXPECT_ERRORS("BlockSizes=2 Nodes=a1\n",
                  "topology.conf:1:14: error: 'Nodes' does not belong on a BlockSizes line");
    EXPECT_ERRORS("BlockName=b[1-2] Nodes=a1\n",
                  "topology.conf:1:11: error: expected one block name, got 'b[1-2]'");
    EXPECT_ERRORS("BlockName=b1 Nodes=a[1-4]\nBlockSizes=4,x6\n",
                  "topology.conf:2:14: error: expected a positive whole number of nodes in "
                  "BlockSizes, got 'x6'");
    EXPECT_ERRORS("BlockName=b1 Nodes=a[1-4]\nBlockSizes=4,12\n",
                  "topology.conf:2:14: error: BlockSizes 12 is not the base block size 4 times a "
                  "power of two");
    EXPECT_ERRORS("BlockName=b1 Nodes=a[1-4]\nBlockSizes=4,6\n",
                  "topology.conf:2:14: error: BlockSizes 6 is not the base block size 4 times a "
                  "power of two");
    EXPECT_ERRORS("BlockName=b1 Nodes=a[1-4]\nBlockSizes=4,16,8\n",
                  "topology.conf:2:17: error: BlockSizes 8 is not larger than 16 before it");
    EXPECT_ERRORS("BlockName=b1 Nodes=a[1-4]\nBlockSizes=1,65536\n",
                  "topology.conf:2:14: error: BlockSizes 65536 is more than 2^15 base blocks of 1 "
                  "nodes");
    EXPECT_ERRORS("BlockName=b1 Nodes=a[1-4]\nBlockSizes=4\nBlockSizes=4\n",
                  "topology.conf:3:1: error: BlockSizes is already given at line 2");
    EXPECT_ERRORS("BlockName=b1 Nodes=a[1-4]\nBlockName=b2 Nodes=a[5-7]\n",
                  "topology.conf:2:11: error: block 'b2' has 3 nodes, fewer than the base block "
                  "size 4");
    EXPECT_ERRORS("BlockSizes=4\n", "topology.conf:1:12: error: BlockSizes without any block");
    EXPECT_ERRORS("BlockName=b1 Nodes=a[1-2]\nBlockName=b1 Nodes=a[3-4]\n",
                  "topology.conf:2:11: error: switch 'b1' is already defined at line 1");
    EXPECT_ERRORS("RingName=r0 Nodes=a[1-2]\nRingName=r1 Nodes=a2\n",
                  "topology.conf:2:19: error: node 'a2' is already attached to switch 'r0'");
}

int main(void)
{
    static const trd_test_case tests[] = {
        {"two-level tree through the model", test_tree},
        {"case, order, continuation, CRLF", test_layout},
        {"files", test_files},
        {"bad lines", test_errors},
        {"host numbers at the edge of a long", test_host_numbers},
        {"many errors in one file", test_many_errors},
        {"too many errors", test_too_many},
        {"names resolved at finalize", test_finalize_errors},
        {"truncated and damaged files", test_robust},
        {"topology/block: levels, default sizes", test_block},
        {"topology/ring: ring order", test_ring},
        {"topology/block and topology/ring errors", test_plugin_errors},
    };
    return trd_test_main("slurm", tests, TRD_NTESTS(tests));
}
