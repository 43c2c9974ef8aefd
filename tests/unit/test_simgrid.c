/* Export of a machine as a SimGrid platform (simgrid.h): the XML parses and
 * holds one host per node in ring order with its cores, one router per
 * switch, per-node links with the switch's link class (a network interface
 * link only where the class limits injection), a loopback route per node,
 * both directions of every tree edge; the hostfile lists node:cores in ring
 * order; the output is deterministic and a write error is reported.  That
 * SMPI loads the file and times messages as the model does is the test
 * smpi.export. */
#include <CUnit/Basic.h>
#include <libxml/parser.h>
#include <libxml/xpath.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "simgrid.h"
#include "test_util.h"

static const trd_test_format dsl = {trd_read_dsl_string, NULL, "sg.topo"};

/* Three levels; node "core" shares its name with a switch; one link class
 * with an injection limit. */
static const char machine[] =
    "machine sg;\n"
    "link nic  { latency 1us; bandwidth 12GB/s; injection 8GB/s; }\n"
    "link wire { latency 2us; bandwidth 10GB/s; }\n"
    "nodetype big { synthetic \"package:2 core:4\"; package wire; node wire; }\n"
    "nodetype one { synthetic \"package:1 core:1\"; }\n"
    "switch leaf0 { link nic; nodes a[0-1] : big; }\n"
    "switch leaf1 { link wire; nodes core : one; }\n"
    "switch mid { link wire; switches leaf0 leaf1; }\n"
    "switch core { link wire; switches mid; nodes z0 : big; }\n";

static char *capture(trd_topo_t t, int hostfile)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    int rc = hostfile ? trd_simgrid_hostfile(f, t) : trd_simgrid_platform(f, t);
    CU_ASSERT_EQUAL(rc, TRD_OK);
    fclose(f);
    return buf;
}

/* Number of nodes matching an XPath expression. */
static int count(xmlDocPtr doc, const char *xpath)
{
    xmlXPathContextPtr ctx = xmlXPathNewContext(doc);
    xmlXPathObjectPtr o = xmlXPathEvalExpression((const xmlChar *)xpath, ctx);
    int n = o && o->nodesetval ? o->nodesetval->nodeNr : -1;
    xmlXPathFreeObject(o);
    xmlXPathFreeContext(ctx);
    return n;
}

/* The value of attribute attr of the first node matching xpath ("" if none),
 * in a static buffer. */
static const char *attr(xmlDocPtr doc, const char *xpath, const char *name)
{
    static char buf[256];
    buf[0] = '\0';
    xmlXPathContextPtr ctx = xmlXPathNewContext(doc);
    xmlXPathObjectPtr o = xmlXPathEvalExpression((const xmlChar *)xpath, ctx);
    if (o && o->nodesetval && o->nodesetval->nodeNr > 0) {
        xmlChar *v = xmlGetProp(o->nodesetval->nodeTab[0], (const xmlChar *)name);
        if (v)
            snprintf(buf, sizeof buf, "%s", (const char *)v);
        xmlFree(v);
    }
    xmlXPathFreeObject(o);
    xmlXPathFreeContext(ctx);
    return buf;
}

static void test_platform(void)
{
    trd_test_result r = trd_test_read_as(&dsl, "sg.topo", machine);
    CU_ASSERT_EQUAL_FATAL(r.rc, TRD_OK);
    char *text = capture(r.t, 0), *again = capture(r.t, 0);
    CU_ASSERT_STRING_EQUAL(text, again); /* deterministic */
    xmlDocPtr doc = xmlReadMemory(text, (int)strlen(text), "sg.xml", NULL, XML_PARSE_NONET);
    CU_ASSERT_PTR_NOT_NULL_FATAL(doc);
    CU_ASSERT_STRING_EQUAL(attr(doc, "/platform", "version"), "4.1");
    CU_ASSERT_STRING_EQUAL(attr(doc, "/platform/zone", "routing"), "Floyd");

    /* hosts: ring order (DFS: core's node z0 first, then leaf0's, leaf1's) */
    int N = trd_topo_nnodes(r.t), S = trd_topo_nswitches(r.t);
    CU_ASSERT_EQUAL(count(doc, "//host"), N);
    for (int i = 0; i < N; i++) {
        char xp[128];
        snprintf(xp, sizeof xp, "//host[%d]", i + 1);
        CU_ASSERT_STRING_EQUAL(attr(doc, xp, "id"), trd_topo_node_name(r.t, i));
        char cores[16];
        snprintf(cores, sizeof cores, "%d",
                 trd_topo_nodetype_ncores(r.t, trd_topo_node_type(r.t, i)));
        CU_ASSERT_STRING_EQUAL(attr(doc, xp, "core"), cores);
    }
    /* routers: one per switch; "core" is also a node, so its router is renamed */
    CU_ASSERT_EQUAL(count(doc, "//router"), S);
    CU_ASSERT_EQUAL(count(doc, "//router[@id='core_switch']"), 1);
    CU_ASSERT_EQUAL(count(doc, "//router[@id='mid']"), 1);

    /* links: leaf0's nodes carry the nic class (12 GB/s, 1 us) and an
     * interface at 8 GB/s; the others have no interface link */
    CU_ASSERT_STRING_EQUAL(attr(doc, "//link[@id='a0_link']", "bandwidth"), "1.2e+10Bps");
    CU_ASSERT_STRING_EQUAL(attr(doc, "//link[@id='a0_link']", "sharing_policy"), "SPLITDUPLEX");
    CU_ASSERT_STRING_EQUAL(attr(doc, "//link[@id='a0_nic']", "bandwidth"), "8e+09Bps");
    CU_ASSERT_EQUAL(count(doc, "//link[substring(@id, string-length(@id) - 3) = '_nic']"), 2);
    /* mid's link up to core_switch has core's class (wire) */
    CU_ASSERT_STRING_EQUAL(attr(doc, "//link[@id='mid_up']", "latency"), "2e-06s");
    /* loopback of a two-package node: the slower of package and node links */
    CU_ASSERT_STRING_EQUAL(attr(doc, "//link[@id='a0_loopback']", "bandwidth"), "1e+10Bps");
    CU_ASSERT_EQUAL(count(doc, "//route[@src='a0' and @dst='a0']/link_ctn[@id='a0_loopback']"), 1);

    /* routes: per node a loopback, up and down; per non-root switch up and down */
    CU_ASSERT_EQUAL(count(doc, "//route"), 3 * N + 2 * (S - 1));
    CU_ASSERT_EQUAL(count(doc, "//route[@src='a1' and @dst='leaf0']/link_ctn"), 2);
    CU_ASSERT_STRING_EQUAL(attr(doc, "//route[@src='a1' and @dst='leaf0']/link_ctn[1]", "id"),
                           "a1_nic");
    CU_ASSERT_STRING_EQUAL(
        attr(doc, "//route[@src='leaf0' and @dst='a1']/link_ctn[1]", "direction"), "DOWN");
    CU_ASSERT_EQUAL(count(doc, "//route[@src='mid' and @dst='core_switch']/link_ctn"), 1);
    CU_ASSERT_EQUAL(count(doc, "//route[@symmetrical!='NO']"), 0);
    xmlFreeDoc(doc);
    free(text);
    free(again);
    trd_test_release(&r);
}

static void test_hostfile(void)
{
    trd_test_result r = trd_test_read_as(&dsl, "sg.topo", machine);
    CU_ASSERT_EQUAL_FATAL(r.rc, TRD_OK);
    char *text = capture(r.t, 1);
    char want[256] = "";
    for (int i = 0; i < trd_topo_nnodes(r.t); i++) {
        size_t n = strlen(want);
        snprintf(want + n, sizeof want - n, "%s:%d\n", trd_topo_node_name(r.t, i),
                 trd_topo_nodetype_ncores(r.t, trd_topo_node_type(r.t, i)));
    }
    CU_ASSERT_STRING_EQUAL(text, want);
    CU_ASSERT_STRING_EQUAL(text, "z0:8\na0:8\na1:8\ncore:1\n");
    free(text);

    char path[32];
    CU_ASSERT_EQUAL(trd_simgrid_hostfile_path("dir/m.xml", path, sizeof path), 0);
    CU_ASSERT_STRING_EQUAL(path, "dir/m.hosts");
    CU_ASSERT_EQUAL(trd_simgrid_hostfile_path("m.platform", path, sizeof path), 0);
    CU_ASSERT_STRING_EQUAL(path, "m.platform.hosts");
    CU_ASSERT_EQUAL(trd_simgrid_hostfile_path("a-very-long-platform-name.xml", path, 16),
                    TRD_ERR_INPUT);

    FILE *f = fopen("/dev/full", "w");
    if (f) {
        CU_ASSERT_EQUAL(trd_simgrid_platform(f, r.t), TRD_ERR_IO);
        fclose(f);
    }
    trd_test_release(&r);
}

int main(void)
{
    static const trd_test_case tests[] = {
        {"platform: hosts, routers, links, routes", test_platform},
        {"hostfile, its path, write errors", test_hostfile},
    };
    return trd_test_main("simgrid", tests, TRD_NTESTS(tests));
}
