/* The one rule for names from the input (trd_topo_check_name, gen/model/topo.c):
 * the names sites use are taken, control characters and bytes that are not
 * UTF-8 are refused with exact messages, through the readers that can carry
 * them (Slurm topology.conf, topology.yaml, ibnetdiscover); and a message
 * that quotes such a name shows no control character (gen/model/diag.c). */
#include <CUnit/Basic.h>
#include <stdio.h>
#include <string.h>

#include "diag.h"
#include "readers.h"
#include "test_util.h"
#include "topo.h"

static const trd_link_cost net = {1e-6, 12.5e9, 0, 0};
static const int cores[1] = {4};

static void defaults(trd_topo_t t)
{
    trd_topo_set_default_link(t, net);
    trd_topo_set_default_nodetype(t, 1, cores, "--nodetype \"package:1 core:4\"");
}

static const trd_test_format slurm = {trd_read_slurm_string, defaults, "topology.conf"};
static const trd_test_format yaml = {trd_read_yaml_string, defaults, "topology.yaml"};
static const trd_test_format ib = {trd_read_ibnet_string, defaults, "fabric.ibnet"};

/* The message trd_topo_check_name gives for name ("" when it takes it). */
static const char *check(const char *name)
{
    static char msg[512];
    trd_diag *d = NULL;
    CU_ASSERT_EQUAL_FATAL(trd_diag_create(&d), TRD_OK);
    msg[0] = '\0';
    if (trd_topo_check_name(d, (trd_loc){"f", 3, 7}, "switch", name) != TRD_OK)
        snprintf(msg, sizeof msg, "%s", trd_diag_message(d, 0));
    CU_ASSERT_EQUAL(trd_diag_count(d), msg[0] ? 1 : 0);
    trd_diag_destroy(d);
    return msg;
}

static void test_names_sites_use(void)
{
    static const char *const good[] = {"node01",
                                       "leaf-1.rack3",
                                       "rack/3",
                                       "MF0 spine 1",
                                       "n\xc5\x93ud-\xc3\xa9",
                                       "\xe7\xaf\x80\xe9\xbb\x9e",
                                       "\xf0\x9f\x96\xa5",
                                       "%s%n",
                                       "#1",
                                       "a*/b/*c",
                                       "q\"q",
                                       "b\\",
                                       "?\?/",
                                       "\xc2\xa0",
                                       "\xf4\x8f\xbf\xbf"};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        const char *m = check(good[i]);
        if (*m)
            printf("\n  refused '%s': %s\n", good[i], m);
        CU_ASSERT_STRING_EQUAL(m, "");
    }
}

static void test_names_refused(void)
{
    static const char *const bad[][2] = {
        {"", "f:3:7: error: switch name is empty"},
        {"a\nb", "f:3:7: error: switch name: control character U+000A (byte 2) is not allowed"},
        {"\x1b[2J", "f:3:7: error: switch name: control character U+001B (byte 1) is not allowed"},
        {"a\t", "f:3:7: error: switch name: control character U+0009 (byte 2) is not allowed"},
        {"ab\x7f", "f:3:7: error: switch name: control character U+007F (byte 3) is not allowed"},
        {"\xc2\x9b", "f:3:7: error: switch name: control character U+009B (byte 1) is not allowed"},
        {"r\xff", "f:3:7: error: switch name: byte 0xff (byte 2) is not UTF-8 text"},
        {"\xc0\xaf", "f:3:7: error: switch name: byte 0xc0 (byte 1) is not UTF-8 text"},
        {"x\xe0\x80\xaf", "f:3:7: error: switch name: byte 0xe0 (byte 2) is not UTF-8 text"},
        {"\xed\xa0\x80", "f:3:7: error: switch name: byte 0xed (byte 1) is not UTF-8 text"},
        {"\xe6\xbc", "f:3:7: error: switch name: byte 0xe6 (byte 1) is not UTF-8 text"},
        {"\xf4\x90\x80\x80", "f:3:7: error: switch name: byte 0xf4 (byte 1) is not UTF-8 text"},
        {"\x80", "f:3:7: error: switch name: byte 0x80 (byte 1) is not UTF-8 text"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        CU_ASSERT_STRING_EQUAL(check(bad[i][0]), bad[i][1]);
}

static void test_readers_refuse(void)
{
    TRD_EXPECT_ERRORS(&slurm, "SwitchName=s\xff Nodes=n[0-1]\n",
                      "topology.conf:1:12: error: switch name: byte 0xff (byte 2) is not UTF-8 "
                      "text");
    TRD_EXPECT_ERRORS(&yaml,
                      "- topology: \"m\\u001b\"\n  block:\n    blocks:\n"
                      "      - block: \"b\\n#define X\"\n        nodes: n[0-1]\n",
                      "topology.yaml:1:13: error: topology name: control character U+001B (byte 2) "
                      "is not allowed",
                      "topology.yaml:4:16: error: switch name: control character U+000A (byte 2) "
                      "is not allowed");
    TRD_EXPECT_ERRORS(&ib,
                      "Switch\t40 \"S-1\"\t# \"MF0;s\x07:M/U1\" enhanced port 0 lid 1 lmc 0\n"
                      "[1]\t\"H-1\"[1](1)\t# \"h\x1b[1m mlx5_0\" lid 2 4xHDR\n",
                      "fabric.ibnet:1:11: error: switch name: control character U+0007 (byte 2) is "
                      "not allowed",
                      "fabric.ibnet:2:5: error: node name: control character U+001B (byte 2) is "
                      "not allowed");
}

/* Names with blanks, UTF-8 and C's and DOT's special characters read as
 * they are. */
static void test_readers_take(void)
{
    trd_test_result r = trd_test_read_as(
        &ib, "fabric.ibnet",
        "Switch\t40 \"S-1\"\t# \"MF0;leaf */ \\ ?\?/ \xc3\xa9:M/U1\" enhanced port 0 lid 1 lmc 0\n"
        "[1]\t\"H-1\"[1](1)\t# \"h*/%s\xe6\xbc\xa2 HCA-1\" lid 2 4xHDR\n");
    CU_ASSERT_EQUAL_FATAL(r.rc, TRD_OK);
    CU_ASSERT_STRING_EQUAL(trd_topo_switch_name(r.t, 0), "leaf */ \\ ?\?/ \xc3\xa9");
    CU_ASSERT_STRING_EQUAL(trd_topo_node_name(r.t, 0), "h*/%s\xe6\xbc\xa2");
    trd_test_release(&r);
}

/* A located message quotes the line with its control characters shown as
 * '?', the caret still under the column. */
static void test_message_shows_no_control(void)
{
    trd_diag *d = NULL;
    CU_ASSERT_EQUAL_FATAL(trd_diag_create(&d), TRD_OK);
    static const char text[] = "ok\nSwitchName=\x1b]0;x\x07 Nodes=a\r\n";
    trd_diag_add_source(d, "t.conf", text, sizeof text - 1);
    trd_diag_error(d, (trd_loc){"t.conf", 2, 12}, "switch '%s'", "\x1b]0;x\x07");
    char buf[512] = "";
    FILE *f = fmemopen(buf, sizeof buf - 1, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    trd_diag_print(d, f);
    fclose(f);
    CU_ASSERT_STRING_EQUAL(buf, "t.conf:2:12: error: switch '?]0;x?'\n"
                                "  SwitchName=?]0;x? Nodes=a\n"
                                "             ^\n");
    trd_diag_destroy(d);
}

int main(void)
{
    static const trd_test_case tests[] = {
        {"names sites use are taken", test_names_sites_use},
        {"control characters and bytes that are not UTF-8 are refused", test_names_refused},
        {"Slurm, yaml and ibnetdiscover readers refuse them, located", test_readers_refuse},
        {"blanks, UTF-8, comment closers and trigraphs are read as they are", test_readers_take},
        {"a message quotes no control character", test_message_shows_no_control},
    };
    return trd_test_main("names", tests, TRD_NTESTS(tests));
}
