/* Node shapes from hwloc (gen/read/hwloc_nodetype.c) and the single-node hwloc
 * machine reader (trd_read_hwloc_machine in gen/read/read_xml.c): synthetic
 * descriptions, lstopo XML dumps from topologies/, the local machine, and the
 * exact error text for sources hwloc cannot use. */
#include <CUnit/Basic.h>
#include <hwloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "readers.h"
#include "test_util.h"
#include "topo.h"

struct shape {
    int rc;
    int npackages;
    int cores[TRD_MAX_PACKAGES];
    char *host;
    char err[512];
};

static struct shape read_shape(const char *kind, const char *arg)
{
    struct shape s;
    memset(&s, 0, sizeof s);
    s.rc = trd_hwloc_node_shape(kind, arg, &s.npackages, s.cores, &s.host, s.err, sizeof s.err);
    return s;
}

/* rc 0 and exactly npackages packages of the given core counts. */
static void expect_shape(const char *kind, const char *arg, int npackages, const int *cores)
{
    struct shape s = read_shape(kind, arg);
    CU_ASSERT_EQUAL_FATAL(s.rc, 0);
    CU_ASSERT_EQUAL(s.npackages, npackages);
    for (int p = 0; p < npackages && p < s.npackages; p++)
        CU_ASSERT_EQUAL(s.cores[p], cores[p]);
    if (s.rc != 0)
        fprintf(stderr, "\n%s '%s': %s\n", kind, arg, s.err);
    free(s.host);
}

static void expect_error(const char *kind, const char *arg, const char *msg)
{
    struct shape s = read_shape(kind, arg);
    CU_ASSERT_EQUAL(s.rc, TRD_ERR_INPUT);
    CU_ASSERT_STRING_EQUAL(s.err, msg);
    CU_ASSERT_PTR_NULL(s.host);
    if (strcmp(s.err, msg) != 0)
        fprintf(stderr, "\n  got:      %s\n  expected: %s\n", s.err, msg);
    free(s.host);
}

static void test_synthetic(void)
{
    static const int c8x2[] = {8, 8}, c4x2[] = {4, 4}, c6[] = {6}, c1[] = {1};

    expect_shape("synthetic", "package:2 core:8", 2, c8x2);
    expect_shape("synthetic", "package:2 core:8 pu:1", 2, c8x2);
    /* Hyperthreads are not cores. */
    expect_shape("synthetic", "package:2 core:4 pu:2", 2, c4x2);
    /* Levels between package and core do not matter. */
    expect_shape("synthetic", "package:2 [numa] l3:2 core:4 pu:2", 2, c8x2);
    /* No core level: count PUs. */
    expect_shape("synthetic", "package:2 pu:4", 2, c4x2);
    /* No package level: one package holding every core. */
    expect_shape("synthetic", "core:6 pu:2", 1, c6);
    expect_shape("synthetic", "package:1 core:1", 1, c1);

    struct shape s = read_shape("synthetic", "package:64 core:1");
    CU_ASSERT_EQUAL(s.rc, 0);
    CU_ASSERT_EQUAL(s.npackages, TRD_MAX_PACKAGES);
    CU_ASSERT_PTR_NULL(s.host); /* synthetic topologies carry no host name */
    free(s.host);
}

static void test_synthetic_errors(void)
{
    expect_error("synthetic", "package:x", "hwloc cannot parse synthetic description 'package:x'");
    expect_error("synthetic", "", "hwloc cannot parse synthetic description ''");
    expect_error("synthetic", "package:65 core:1",
                 "hwloc topology has 65 packages; at most 64 are supported");
    expect_error("magic", "x", "unknown hwloc source 'magic' (expected synthetic, xml or local)");
    /* Refused before hwloc, which would take minutes to build it; every
     * arity form counts (bare numbers, attributes, memory children). */
    expect_error("synthetic", "package:100000 core:100000",
                 "synthetic description 'package:100000 core:100000' has more than 4096 cores, "
                 "more than hwloc builds in good time; give the node's package and core counts "
                 "instead");
    expect_error("synthetic", "2 2 1025",
                 "synthetic description '2 2 1025' has more than 4096 cores, more than hwloc "
                 "builds in good time; give the node's package and core counts instead");
    expect_error("synthetic",
                 "package:2(indexes=0,1) [numa(memory=1000)] core:99999999999999999999",
                 "synthetic description 'package:2(indexes=0,1) [numa(memory=1000)] "
                 "core:99999999999999999999' has more than 4096 cores, more than hwloc builds in "
                 "good time; give the node's package and core counts instead");
    /* hwloc takes attributes before the ':' ("package(x):100000" is 100,000
     * packages), and a '(' never closed hid every arity after it from the
     * count but not from hwloc (tests/fuzz/fuzz_xml: more than 30 s). */
    expect_error("synthetic", "package(x):100000 core:1",
                 "synthetic description 'package(x):100000 core:1' has more than 4096 cores, "
                 "more than hwloc builds in good time; give the node's package and core counts "
                 "instead");
    expect_error("synthetic", "pack(ge:100000 core:100000",
                 "synthetic description 'pack(ge:100000 core:100000' has a '(' or '[' that is "
                 "not closed");
    expect_error("synthetic", "pack(ge:100000 cor]e:100000",
                 "synthetic description 'pack(ge:100000 cor]e:100000' has a '(' or '[' that is "
                 "not closed");
    expect_error("synthetic", "package:2 [numa core:4",
                 "synthetic description 'package:2 [numa core:4' has a '(' or '[' that is not "
                 "closed");
}

/* The largest synthetic node read through hwloc. */
static void test_synthetic_largest(void)
{
    static const int c2048x2[] = {2048, 2048};
    expect_shape("synthetic", "package:2 core:2048", 2, c2048x2);
}

static void test_xml(void)
{
    static const int epyc[] = {64, 64}, grace[] = {72}, build[] = {2};

    expect_shape("xml", trd_test_path("topologies/epyc-2s.xml"), 2, epyc);
    expect_shape("xml", trd_test_path("topologies/grace-hopper.xml"), 1, grace);
    expect_shape("xml", trd_test_path("topologies/buildhost.xml"), 1, build);

    /* A real lstopo dump names its host. */
    struct shape s = read_shape("xml", trd_test_path("topologies/buildhost.xml"));
    CU_ASSERT_EQUAL(s.rc, 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s.host);
    CU_ASSERT_STRING_EQUAL(s.host, "vm");
    free(s.host);
}

static void test_xml_errors(void)
{
    char dir[] = "/tmp/trd_hwloc_XXXXXX", file[64], msg[256];
    FILE *f;

    expect_error("xml", "/nonexistent/epyc.xml",
                 "cannot read hwloc XML '/nonexistent/epyc.xml': No such file or directory");
    CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
    snprintf(file, sizeof file, "%s/bad.xml", dir);
    f = fopen(file, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fputs("<?xml version=\"1.0\"?>\n<machine name=\"m\"/>\n", f);
    fclose(f);
    snprintf(msg, sizeof msg, "cannot read hwloc XML '%s': not an hwloc topology file", file);
    expect_error("xml", file, msg);
    f = fopen(file, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fputs("not xml at all\n", f);
    fclose(f);
    expect_error("xml", file, msg);

    /* A dump of a newer hwloc than this build's: the versions are named. */
    f = fopen(file, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!DOCTYPE topology SYSTEM \"hwloc2.dtd\">\n"
          "<topology version=\"3.0\">\n  <object type=\"Machine\" os_index=\"0\" "
          "cpuset=\"0x00000001\"><object type=\"PU\" os_index=\"0\" cpuset=\"0x00000001\"/>"
          "</object>\n</topology>\n",
          f);
    fclose(f);
    char v[512];
    unsigned api = hwloc_get_api_version();
    snprintf(v, sizeof v,
             "cannot read hwloc XML '%s': it is an hwloc 3.0 topology (<topology version=\"3.0\">) "
             "and this build has hwloc %u.%u.%u, which reads versions up to %u.x; dump it with an "
             "hwloc %u.x lstopo (lstopo --of xml)",
             file, api >> 16, (api >> 8) & 0xff, api & 0xff, api >> 16, api >> 16);
    if (api >> 16 < 3)
        expect_error("xml", file, v);
    unlink(file);
    rmdir(dir);
}

static void test_local(void)
{
    struct shape s = read_shape("local", NULL);
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    int total = 0;

    CU_ASSERT_EQUAL_FATAL(s.rc, 0);
    CU_ASSERT(s.npackages >= 1 && s.npackages <= TRD_MAX_PACKAGES);
    for (int p = 0; p < s.npackages; p++) {
        CU_ASSERT(s.cores[p] >= 1);
        total += s.cores[p];
    }
    CU_ASSERT(online <= 0 || total <= online);
    CU_ASSERT_PTR_NOT_NULL(s.host);
    free(s.host);
}

static void test_machine_xml(void)
{
    trd_topo_t t;
    trd_diag *d = NULL;
    CU_ASSERT_EQUAL_FATAL(trd_diag_create(&d), TRD_OK);
    const char *path = trd_test_path("topologies/epyc-2s.xml");
    char source[sizeof "hwloc " + TRD_TEST_PATH_MAX];

    CU_ASSERT_EQUAL_FATAL(trd_topo_create(&t), TRD_OK);
    CU_ASSERT_EQUAL_FATAL(trd_read_hwloc_machine(t, d, "xml", path), TRD_OK);
    CU_ASSERT_EQUAL_FATAL(trd_topo_finalize(t, d), TRD_OK);
    CU_ASSERT_EQUAL(trd_diag_count(d), 0);
    CU_ASSERT_STRING_EQUAL(trd_topo_name(t), "localhost");
    CU_ASSERT_EQUAL(trd_topo_nswitches(t), 1);
    CU_ASSERT_STRING_EQUAL(trd_topo_switch_name(t, 0), "node-switch");
    CU_ASSERT_STRING_EQUAL(trd_topo_switch_link_name(t, 0), "default");
    CU_ASSERT_DOUBLE_EQUAL(trd_topo_switch_link(t, 0).latency_s, TRD_DEFAULT_NET_LATENCY_S, 1e-15);
    CU_ASSERT_EQUAL(trd_topo_nnodes(t), 1);
    CU_ASSERT_STRING_EQUAL(trd_topo_node_name(t, 0), "localhost");
    int ty = trd_topo_node_type(t, 0);
    CU_ASSERT_STRING_EQUAL(trd_topo_nodetype_name(t, ty), "node");
    CU_ASSERT_EQUAL(trd_topo_nodetype_npackages(t, ty), 2);
    CU_ASSERT_EQUAL(trd_topo_nodetype_ncores(t, ty), 128);
    snprintf(source, sizeof source, "hwloc %s", path);
    CU_ASSERT_STRING_EQUAL(trd_topo_nodetype_source(t, ty), source);
    trd_topo_destroy(t);
    trd_diag_destroy(d);

    /* The node takes the host name of the dump. */
    CU_ASSERT_EQUAL_FATAL(trd_diag_create(&d), TRD_OK);
    CU_ASSERT_EQUAL_FATAL(trd_topo_create(&t), TRD_OK);
    CU_ASSERT_EQUAL_FATAL(
        trd_read_hwloc_machine(t, d, "xml", trd_test_path("topologies/buildhost.xml")), TRD_OK);
    CU_ASSERT_EQUAL_FATAL(trd_topo_finalize(t, d), TRD_OK);
    CU_ASSERT_STRING_EQUAL(trd_topo_node_name(t, 0), "vm");
    CU_ASSERT_STRING_EQUAL(trd_topo_name(t), "vm");
    CU_ASSERT_EQUAL(trd_topo_nodetype_ncores(t, trd_topo_node_type(t, 0)), 2);
    trd_topo_destroy(t);
    trd_diag_destroy(d);
}

static void test_machine_local(void)
{
    trd_topo_t t;
    trd_diag *d = NULL;
    CU_ASSERT_EQUAL_FATAL(trd_diag_create(&d), TRD_OK);
    struct shape s = read_shape("local", NULL);

    CU_ASSERT_EQUAL_FATAL(s.rc, 0);
    CU_ASSERT_EQUAL_FATAL(trd_topo_create(&t), TRD_OK);
    CU_ASSERT_EQUAL_FATAL(trd_read_hwloc_machine(t, d, "local", NULL), TRD_OK);
    CU_ASSERT_EQUAL_FATAL(trd_topo_finalize(t, d), TRD_OK);
    CU_ASSERT_EQUAL(trd_topo_nnodes(t), 1);
    CU_ASSERT_STRING_EQUAL(trd_topo_node_name(t, 0), s.host ? s.host : "localhost");
    int ty = trd_topo_node_type(t, 0);
    CU_ASSERT_EQUAL(trd_topo_nodetype_npackages(t, ty), s.npackages);
    CU_ASSERT_EQUAL(trd_topo_nodetype_cores(t, ty, 0), s.cores[0]);
    CU_ASSERT_STRING_EQUAL(trd_topo_nodetype_source(t, ty), "local");
    free(s.host);
    trd_topo_destroy(t);
    trd_diag_destroy(d);
}

static void test_machine_errors(void)
{
    trd_topo_t t;
    trd_diag *d = NULL;
    CU_ASSERT_EQUAL_FATAL(trd_diag_create(&d), TRD_OK);

    CU_ASSERT_EQUAL_FATAL(trd_topo_create(&t), TRD_OK);
    CU_ASSERT_EQUAL(trd_read_hwloc_machine(t, d, "xml", "/nonexistent/node.xml"), TRD_ERR_IO);
    CU_ASSERT_EQUAL_FATAL(trd_diag_count(d), 1);
    CU_ASSERT_STRING_EQUAL(trd_diag_message(d, 0),
                           "/nonexistent/node.xml: error: cannot read hwloc XML "
                           "'/nonexistent/node.xml': No such file or directory");
    CU_ASSERT_EQUAL(trd_read_hwloc_machine(t, d, "synthetic", "package:2"), TRD_ERR_INPUT);
    CU_ASSERT_EQUAL_FATAL(trd_diag_count(d), 2);
    CU_ASSERT_STRING_EQUAL(trd_diag_message(d, 1),
                           "local machine: error: unknown hwloc source 'synthetic' "
                           "(expected xml or local)");
    /* Nothing was added. */
    CU_ASSERT_EQUAL(trd_topo_nnodetypes(t), 0);
    trd_topo_destroy(t);
    trd_diag_destroy(d);
}

/* The model reads a node type described for hwloc only through the hook its
 * reader gave: checked when declared, read once when a node uses it; with
 * no hook the declaration is refused. */
static int stub_shapes, stub_checks;

static int stub_shape(const char *kind, const char *arg, int *npackages,
                      int cores_per_package[TRD_MAX_PACKAGES], char **hostname, char *err,
                      size_t errlen)
{
    (void)err;
    (void)errlen;
    stub_shapes++;
    CU_ASSERT_STRING_EQUAL(kind, "synthetic");
    CU_ASSERT_STRING_EQUAL(arg, "stub");
    CU_ASSERT_PTR_NULL(hostname);
    *npackages = 3;
    for (int p = 0; p < 3; p++)
        cores_per_package[p] = 5;
    return TRD_OK;
}

static int stub_check(const char *desc, char *err, size_t errlen)
{
    stub_checks++;
    if (strcmp(desc, "stub") == 0)
        return TRD_OK;
    snprintf(err, errlen, "stub refuses '%s'", desc);
    return TRD_ERR_INPUT;
}

static void test_nodetype_hook(void)
{
    static const trd_nodetype_hook stub = {stub_shape, stub_check};
    trd_loc loc = {"m.topo", 3, 1}, arg_loc = {"m.topo", 3, 20};
    trd_link_cost net = {TRD_DEFAULT_NET_LATENCY_S, TRD_DEFAULT_NET_BANDWIDTH_BPS, 0, 0};
    trd_topo_t t;
    trd_diag *d = NULL;
    CU_ASSERT_EQUAL_FATAL(trd_diag_create(&d), TRD_OK);
    int sw;

    stub_shapes = stub_checks = 0;
    CU_ASSERT_EQUAL_FATAL(trd_topo_create(&t), TRD_OK);
    CU_ASSERT_EQUAL(trd_topo_add_nodetype_hwloc(t, d, loc, "bad", &stub, "synthetic", "nope",
                                                arg_loc, NULL, NULL, "synthetic \"nope\""),
                    TRD_ERR_INPUT);
    CU_ASSERT_EQUAL(trd_topo_add_nodetype_hwloc(t, d, loc, "pc", &stub, "synthetic", "stub",
                                                arg_loc, NULL, NULL, "synthetic \"stub\""),
                    TRD_OK);
    CU_ASSERT_EQUAL(stub_checks, 2);
    CU_ASSERT_EQUAL(stub_shapes, 0);
    CU_ASSERT_EQUAL_FATAL(trd_diag_count(d), 1);
    CU_ASSERT_STRING_EQUAL(trd_diag_message(d, 0), "m.topo:3:20: error: stub refuses 'nope'");
    CU_ASSERT_EQUAL(trd_topo_set_default_link(t, net), TRD_OK);
    CU_ASSERT_EQUAL_FATAL(trd_topo_add_switch(t, d, loc, "s", NULL, &sw), TRD_OK);
    CU_ASSERT_EQUAL(trd_topo_switch_add_node(t, d, loc, sw, "a", "pc"), TRD_OK);
    CU_ASSERT_EQUAL(trd_topo_switch_add_node(t, d, loc, sw, "b", "pc"), TRD_OK);
    CU_ASSERT_EQUAL_FATAL(trd_topo_finalize(t, d), TRD_OK);
    CU_ASSERT_EQUAL(stub_shapes, 1);
    int ty = trd_topo_node_type(t, 0);
    CU_ASSERT_EQUAL(trd_topo_nodetype_npackages(t, ty), 3);
    CU_ASSERT_EQUAL(trd_topo_nodetype_ncores(t, ty), 15);
    trd_topo_destroy(t);
    trd_diag_destroy(d);

    CU_ASSERT_EQUAL_FATAL(trd_diag_create(&d), TRD_OK);
    CU_ASSERT_EQUAL_FATAL(trd_topo_create(&t), TRD_OK);
    CU_ASSERT_EQUAL(trd_topo_add_nodetype_hwloc(t, d, loc, "pc", NULL, "xml", "n.xml", arg_loc,
                                                NULL, NULL, "hwloc n.xml"),
                    TRD_ERR_INPUT);
    CU_ASSERT_EQUAL(trd_topo_nnodetypes(t), 0);
    CU_ASSERT_EQUAL_FATAL(trd_diag_count(d), 1);
    CU_ASSERT_STRING_EQUAL(trd_diag_message(d, 0),
                           "m.topo:3:20: error: node type 'pc' is described for hwloc, which "
                           "this program does not read");
    trd_topo_destroy(t);
    trd_diag_destroy(d);
}

int main(void)
{
    static const trd_test_case tests[] = {
        {"synthetic shapes", test_synthetic},
        {"synthetic errors", test_synthetic_errors},
        {"largest synthetic node", test_synthetic_largest},
        {"lstopo XML shapes", test_xml},
        {"lstopo XML errors", test_xml_errors},
        {"local machine", test_local},
        {"machine from lstopo XML", test_machine_xml},
        {"machine from the local host", test_machine_local},
        {"machine errors", test_machine_errors},
        {"node types through the hook", test_nodetype_hook},
    };
    return trd_test_main("hwloc", tests, TRD_NTESTS(tests));
}
