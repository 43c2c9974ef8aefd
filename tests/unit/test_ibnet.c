/* ibnetdiscover reader (gen/read/read_ibnet.c): fabrics through the model after
 * trd_topo_finalize (the root, the dropped spines, hosts named by their
 * adapters, link bandwidths from width x speed with parallel links added),
 * bad files by the exact text of every message, and the content detection
 * the CLI uses. */
#include <CUnit/Basic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "load.h"
#include "readers.h"
#include "test_util.h"
#include "topo.h"

static const trd_link_cost net = {1e-6, 12.5e9, 0, 0};
static const int cores[1] = {4};

static void ib_defaults(trd_topo_t t)
{
    trd_topo_set_default_link(t, net);
    trd_topo_set_default_nodetype(t, 1, cores, "--nodetype \"package:1 core:4\"");
}

static const trd_test_format ib = {trd_read_ibnet_string, ib_defaults, "fabric.ibnet"};

#define EXPECT_ERRORS(text, ...) TRD_EXPECT_ERRORS(&ib, text, __VA_ARGS__)

static trd_test_result read_as(const char *text)
{
    return trd_test_read_as(&ib, "fabric.ibnet", text);
}

/* One leaf: node n01 with two adapters (their bandwidths add), n02 with one
 * narrower link, a router that is skipped, no Ca blocks (the names come from
 * the switch's port lines). */
static const char leaf[] =
    "switchguid=0x1(1)\n"
    "Switch\t36 \"S-0000000000000001\"\t\t# \"MF0;leaf:MSB7700/U1\" enhanced port 0 lid 1 lmc 0\n"
    "[1]\t\"H-00000000000000a1\"[1](a1) \t\t# \"n01 HCA-1\" lid 2 4xEDR\n"
    "[2]\t\"H-00000000000000a2\"[1](a2) \t\t# \"n01 HCA-2\" lid 3 4xEDR\n"
    "[3]\t\"H-00000000000000b1\"[1](b1) \t\t# \"n02 HCA-1\" lid 4 2xEDR\n"
    "[4]\t\"R-00000000000000c1\"[1] \t\t# \"router\" lid 5 4xEDR\n";

static void test_leaf(void)
{
    trd_test_result r = read_as(leaf);
    CU_ASSERT_EQUAL_FATAL(r.rc, TRD_OK);
    CU_ASSERT_EQUAL(trd_topo_nswitches(r.t), 1);
    CU_ASSERT_STRING_EQUAL(trd_topo_switch_name(r.t, 0), "leaf");
    CU_ASSERT_STRING_EQUAL(trd_topo_name(r.t), "leaf");
    CU_ASSERT_EQUAL_FATAL(trd_topo_nnodes(r.t), 2);
    CU_ASSERT_STRING_EQUAL(trd_topo_node_name(r.t, 0), "n01");
    CU_ASSERT_STRING_EQUAL(trd_topo_node_name(r.t, 1), "n02");
    /* the slowest host link: 2xEDR, 50 Gb/s; the default link's latency */
    CU_ASSERT_STRING_EQUAL(trd_topo_switch_link_name(r.t, 0), "ib-50Gb/s");
    CU_ASSERT_DOUBLE_EQUAL(trd_topo_switch_link(r.t, 0).bandwidth_Bps, 6.25e9, 1);
    CU_ASSERT_DOUBLE_EQUAL(trd_topo_switch_link(r.t, 0).latency_s, 1e-6, 1e-15);
    CU_ASSERT_EQUAL(trd_topo_nodetype_ncores(r.t, trd_topo_node_type(r.t, 0)), 4);
    trd_test_release(&r);
}

/* Two spines and two leaves (tests/data/ib-two-level.ibnet): spine1 is the
 * root, spine2 is dropped, each leaf's uplink is its links to both spines. */
static void test_fat_tree(void)
{
    trd_test_result r = trd_test_fresh(&ib);
    CU_ASSERT_EQUAL_FATAL(trd_read_ibnet(r.t, r.d, trd_test_path("tests/data/ib-two-level.ibnet")),
                          TRD_OK);
    CU_ASSERT_EQUAL_FATAL(trd_topo_finalize(r.t, r.d), TRD_OK);
    static const char *const sws[] = {"spine1", "leaf1", "leaf2"};
    CU_ASSERT_EQUAL_FATAL(trd_topo_nswitches(r.t), 3);
    for (int i = 0; i < 3; i++) {
        CU_ASSERT_STRING_EQUAL(trd_topo_switch_name(r.t, i), sws[i]);
        CU_ASSERT_EQUAL(trd_topo_switch_parent(r.t, i), i == 0 ? -1 : 0);
    }
    CU_ASSERT_STRING_EQUAL(trd_topo_switch_link_name(r.t, 0), "ib-400Gb/s");
    CU_ASSERT_STRING_EQUAL(trd_topo_switch_link_name(r.t, 1), "ib-200Gb/s");
    CU_ASSERT_EQUAL_FATAL(trd_topo_nnodes(r.t), 4);
    CU_ASSERT_STRING_EQUAL(trd_topo_node_name(r.t, 2), "node03");
    CU_ASSERT_EQUAL(trd_topo_node_switch(r.t, 2), 2);
    trd_link_cost c = trd_topo_path_cost(r.t, 0, 2);
    CU_ASSERT_DOUBLE_EQUAL(c.bandwidth_Bps, 25e9, 1);
    CU_ASSERT_DOUBLE_EQUAL(c.latency_s, 4e-6, 1e-15);
    trd_test_release(&r);

    /* The example of topologies/: four leaves, two links to each spine. */
    r = trd_test_fresh(&ib);
    CU_ASSERT_EQUAL_FATAL(trd_read_ibnet(r.t, r.d, trd_test_path("topologies/ib-fattree.ibnet")),
                          TRD_OK);
    CU_ASSERT_EQUAL_FATAL(trd_topo_finalize(r.t, r.d), TRD_OK);
    CU_ASSERT_EQUAL(trd_topo_nswitches(r.t), 5);
    CU_ASSERT_EQUAL(trd_topo_nnodes(r.t), 16);
    CU_ASSERT_STRING_EQUAL(trd_topo_switch_link_name(r.t, 0), "ib-800Gb/s");
    trd_test_release(&r);
}

/* The root is the highest switch wherever it is in the file; parallel links
 * add; names that repeat fall back to the ids; a switch with no host under
 * it is dropped. */
static void test_root(void)
{
    trd_test_result r =
        read_as("Switch 8 \"S-00000000000000a0\" # \"ISR9024 Voltaire\" base port 0 lid 6 lmc 0\n"
                "[1] \"H-0000000000000001\"[1] # \"alpha HCA-1\" lid 10 4xQDR\n"
                "[5] \"S-00000000000000c0\"[1] # \"ISR9024 Voltaire\" lid 8 4xQDR\n"
                "[6] \"S-00000000000000c0\"[2] # \"ISR9024 Voltaire\" lid 8 4xQDR\n"
                "\n"
                "Switch 8 \"S-00000000000000b0\" # \"ISR9024 Voltaire\" base port 0 lid 7 lmc 0\n"
                "[1] \"H-0000000000000002\"[1] # \"beta\" lid 11 4xQDR\n"
                "[5] \"S-00000000000000c0\"[3] # \"ISR9024 Voltaire\" lid 8 1xSDR\n"
                "\n"
                "Switch 8 \"S-00000000000000c0\" # \"ISR9024 Voltaire\" base port 0 lid 8 lmc 0\n"
                "[1] \"S-00000000000000a0\"[5] # \"ISR9024 Voltaire\" lid 6 4xQDR\n"
                "[2] \"S-00000000000000a0\"[6] # \"ISR9024 Voltaire\" lid 6 4xQDR\n"
                "[3] \"S-00000000000000b0\"[5] # \"ISR9024 Voltaire\" lid 7 1xSDR\n"
                "[4] \"S-00000000000000d0\"[1] # \"ISR9024 Voltaire\" lid 9 4xQDR\n"
                "\n"
                "Switch 8 \"S-00000000000000d0\" # \"ISR9024 Voltaire\" base port 0 lid 9 lmc 0\n"
                "[1] \"S-00000000000000c0\"[4] # \"ISR9024 Voltaire\" lid 8 4xQDR\n");
    CU_ASSERT_EQUAL_FATAL(r.rc, TRD_OK);
    static const char *const sws[] = {"S-00000000000000c0", "S-00000000000000a0",
                                      "S-00000000000000b0"};
    CU_ASSERT_EQUAL_FATAL(trd_topo_nswitches(r.t), 3);
    for (int i = 0; i < 3; i++)
        CU_ASSERT_STRING_EQUAL(trd_topo_switch_name(r.t, i), sws[i]);
    /* a0's two 4xQDR links add to 64 Gb/s; b0's 1xSDR is 2 Gb/s, the slowest */
    CU_ASSERT_STRING_EQUAL(trd_topo_switch_link_name(r.t, 0), "ib-2Gb/s");
    CU_ASSERT_STRING_EQUAL(trd_topo_switch_link_name(r.t, 1), "ib-32Gb/s");
    CU_ASSERT_STRING_EQUAL(trd_topo_node_name(r.t, 0), "alpha");
    CU_ASSERT_STRING_EQUAL(trd_topo_node_name(r.t, 1), "beta");
    trd_test_release(&r);
}

/* A host with adapters on two switches (rails): one node on the switch of
 * its first adapter, where its two adapters add. */
static void test_rails(void)
{
    trd_test_result r = read_as("Switch 8 \"S-01\" # \"s\"\n"
                                "[1] \"H-02\"[1] # \"h mlx5_0\" lid 2 4xEDR\n"
                                "[2] \"H-03\"[1] # \"h mlx5_1\" lid 3 4xEDR\n"
                                "[3] \"S-04\"[3] # \"t\" lid 4 4xEDR\n"
                                "\n"
                                "Switch 8 \"S-04\" # \"t\"\n"
                                "[1] \"H-05\"[1] # \"h mlx5_2\" lid 5 4xEDR\n"
                                "[2] \"H-06\"[1] # \"k mlx5_0\" lid 6 4xHDR\n"
                                "[3] \"S-01\"[3] # \"s\" lid 1 4xEDR\n");
    CU_ASSERT_EQUAL_FATAL(r.rc, TRD_OK);
    CU_ASSERT_EQUAL_FATAL(trd_topo_nnodes(r.t), 2);
    CU_ASSERT_STRING_EQUAL(trd_topo_switch_name(r.t, 0), "S-01");
    CU_ASSERT_STRING_EQUAL(trd_topo_node_name(r.t, 0), "h");
    CU_ASSERT_EQUAL(trd_topo_node_switch(r.t, 0), 0);
    CU_ASSERT_STRING_EQUAL(trd_topo_node_name(r.t, 1), "k");
    CU_ASSERT_EQUAL(trd_topo_node_switch(r.t, 1), 1);
    /* S-01: min(h's 2 x 100, S-04's uplink 100) */
    CU_ASSERT_STRING_EQUAL(trd_topo_switch_link_name(r.t, 0), "ib-100Gb/s");
    CU_ASSERT_STRING_EQUAL(trd_topo_switch_link_name(r.t, 1), "ib-200Gb/s");
    trd_test_release(&r);
}

static void test_errors(void)
{
    EXPECT_ERRORS("Switch 8 \"S-01\" # \"s\"\n[1] \"H-02\"[1] # \"h\" lid 2 3xEDR\n",
                  "fabric.ibnet:2:27: error: unknown link width '3x', expected 1x, 2x, 4x, 8x or "
                  "12x");
    EXPECT_ERRORS("Switch 8 \"S-01\" # \"s\"\n[1] \"H-02\"[1] # \"h\" lid 2 4xZDR\n",
                  "fabric.ibnet:2:29: error: unknown link speed 'ZDR', expected SDR, DDR, QDR, "
                  "FDR10, FDR, EDR, HDR, NDR or XDR");
    EXPECT_ERRORS("Switch 8 \"S-01\" # \"s\"\n[1] \"H-02\"[1] # \"h\" lid 2\n",
                  "fabric.ibnet:2:25: error: expected the link's width and speed such as 4xEDR, "
                  "got '2'");
    EXPECT_ERRORS("Switch 8 \"S-01\" # \"s\"\n[1] \"H-02\"[1] # \"h\"\n",
                  "fabric.ibnet:2:20: error: expected the link's width and speed such as 4xEDR at "
                  "the end of the line");
    EXPECT_ERRORS("Switch 8 \"S-01\" # \"s\"\n[3]\n",
                  "fabric.ibnet:2:4: error: expected the remote port, such as "
                  "\"S-0002c903000e0b72\"[1]");
    EXPECT_ERRORS(
        "Switch 8 \"S-01\" # \"s\"\n[3] \"H-02\"\n",
        "fabric.ibnet:2:11: error: expected the remote port number in [ ] after \"H-02\"");
    EXPECT_ERRORS("Switch 8 \"S-01\" # \"s\"\n[3 \"H-02\"[1] # lid 2 4xEDR\n",
                  "fabric.ibnet:2:2: error: expected a port number and ']'");
    EXPECT_ERRORS("Switch 8 \"S-01\" # \"s\"\n[3] \"H-02\"[1] lid 2 4xEDR\n",
                  "fabric.ibnet:2:15: error: expected '#' and the link's lid, width and speed "
                  "after the remote port");
    EXPECT_ERRORS("[1] \"H-02\"[1] # \"h\" lid 2 4xEDR\n[2] \"H-03\"[1] # \"h\" lid 2 4xEDR\n",
                  "fabric.ibnet:1:1: error: expected a Switch or Ca line before this port line");
    EXPECT_ERRORS("Switch x \"S-01\"\n[1] \"H-02\"[1] # \"h\" lid 2 4xEDR\n",
                  "fabric.ibnet:1:8: error: expected the number of ports after 'Switch'");
    EXPECT_ERRORS("Switch 8 S-01\n", "fabric.ibnet:1:10: error: expected the quoted id of the "
                                     "Switch, such as \"S-0002c903000e0b72\"");
    EXPECT_ERRORS("Ca 2 \"S-01\" # \"h\"\n",
                  "fabric.ibnet:1:6: error: expected a Ca id \"H-<guid>\", got \"S-01\"");
    EXPECT_ERRORS("vendid=0x2c9\nportguid=0x1\n",
                  "fabric.ibnet:2:1: error: unknown key 'portguid', expected vendid, devid, "
                  "sysimgguid, switchguid, caguid or rtguid");
    EXPECT_ERRORS("Switches 8 \"S-01\"\n",
                  "fabric.ibnet:1:1: error: expected a Switch, Ca or port line, got 'Switches'");
    EXPECT_ERRORS("Switch 8 \"S-01\" # \"s\"\n[1] \"S-09\"[1] # \"t\" lid 2 4xEDR\n",
                  "fabric.ibnet:2:5: error: \"S-09\" is not described in the file");
    EXPECT_ERRORS("Switch 8 \"S-01\" # \"s\"\n\nSwitch 8 \"S-01\" # \"s\"\n",
                  "fabric.ibnet:3:10: error: \"S-01\" is already described at line 1");
    EXPECT_ERRORS("Switch 8 \"S-01\" # \"s\"\n", "fabric.ibnet: error: no host is linked to a "
                                                 "switch");
    EXPECT_ERRORS("Switch 8 \"S-01\" # \"s\"\n[1] \"H-02\"[1] # \"h\" lid 2 4xEDR\n\n"
                  "Switch 8 \"S-03\" # \"t\"\n[1] \"H-04\"[1] # \"k\" lid 2 4xEDR\n",
                  "fabric.ibnet:4:10: error: switch \"S-03\" is not linked to switch \"S-01\"");
}

static void test_detect(void)
{
    static const char *const yes[] = {
        "#\n# Topology file: generated on Tue Jun  5 14:15:10 2007\n#\n",
        "\nvendid=0x2c9\n",
        "# a comment\nSwitch\t36 \"S-0002c903000e0b72\" # \"x\"\n",
        "Ca 2 \"H-0002c903000e0b72\" # \"x\"\n",
    };
    static const char *const no[] = {
        "machine m;\n", "# Slurm\nSwitchName=s0 Nodes=a\n", "- topology: t\n", "Switch s0 {\n", "",
    };
    for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++)
        CU_ASSERT(trd_ibnet_detect(yes[i], strlen(yes[i])));
    for (size_t i = 0; i < sizeof no / sizeof no[0]; i++)
        CU_ASSERT(!trd_ibnet_detect(no[i], strlen(no[i])));
}

/* The one detector of every tool's input (trd_input_format): the name, then
 * the XML root, then the ibnetdiscover text, else the topology language. */
static void test_input_format(void)
{
    static const struct {
        const char *path, *text, *format; /* text NULL: by the name alone */
    } c[] = {
        {"local", NULL, "local"},
        {"m.topo", NULL, "dsl"},
        {"topology.conf", NULL, "slurm"},
        {"t.yaml", NULL, "yaml"},
        {"t.yml", NULL, "yaml"},
        {"m.xml", NULL, NULL},
        {"fabric", NULL, NULL},
        {"m.topo", "vendid=0x2c9\n", "dsl"},
        {"m.xml", "<machine name=\"m\"/>", "xml"},
        {"m.xml", "<?xml version=\"1.0\"?>\n<topology version=\"2.0\"/>", "hwloc"},
        {"m.xml", "not xml", "xml"},
        {"fabric", "# Topology file: x\n", "ibnetdiscover"},
        {"fabric.xml.txt", "machine m;\n", "dsl"},
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        const char *f = trd_input_format(c[i].path, c[i].text, c[i].text ? strlen(c[i].text) : 0);
        if (!c[i].format) {
            CU_ASSERT_PTR_NULL(f);
        } else if (!f || strcmp(f, c[i].format) != 0) {
            CU_FAIL("wrong format");
            fprintf(stderr, "%s: %s, expected %s\n", c[i].path, f ? f : "NULL", c[i].format);
        }
    }
}

/* Every prefix of a good file, and bytes replaced: a status and messages
 * that agree, never a crash. */
static void test_robust(void)
{
    CU_ASSERT_EQUAL(trd_test_robust(&ib, leaf, "]\"\n"), 0);
}

int main(void)
{
    static const trd_test_case tests[] = {
        {"one leaf: hosts, adapters, widths", test_leaf},
        {"fat tree: root, dropped spine, uplinks", test_fat_tree},
        {"root and parallel links", test_root},
        {"a host on two switches", test_rails},
        {"bad files", test_errors},
        {"content detection", test_detect},
        {"input format by name and text", test_input_format},
        {"truncated and damaged files", test_robust},
    };
    return trd_test_main("ibnet", tests, TRD_NTESTS(tests));
}
