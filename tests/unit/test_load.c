/* The table of the input formats and the loading of the TOPOLOGY argument
 * (gen/read/load.h): the rows, the lists that --help and treeduce-calibrate
 * print from them, a --format no row has, and the defaults. */
#include "load.h"
#include "test_util.h"

/* Every row named, described and read; names and aliases unique; a row
 * either takes costs back or says why not; the first row, which reads what
 * nothing selects, has no detection of its own. */
static void test_rows(void)
{
    int n = 0;
    const trd_reader_desc *r = trd_readers(&n);
    CU_ASSERT_FATAL(n > 0);
    CU_ASSERT_PTR_NULL(r[0].detect);
    CU_ASSERT_PTR_NULL(r[0].input);
    for (int i = 0; i < n; i++) {
        CU_ASSERT_PTR_NOT_NULL(r[i].name);
        CU_ASSERT_PTR_NOT_NULL(r[i].description);
        CU_ASSERT_PTR_NOT_NULL(r[i].read);
        CU_ASSERT((r[i].write_back != NULL) != (r[i].no_costs != NULL));
        CU_ASSERT(r[i].write_back == NULL || r[i].reads_text);
        CU_ASSERT_PTR_EQUAL(trd_reader_find(r[i].name), &r[i]);
        if (r[i].alias)
            CU_ASSERT_PTR_EQUAL(trd_reader_find(r[i].alias), &r[i]);
        if (r[i].input)
            CU_ASSERT_PTR_EQUAL(trd_reader_detect(r[i].input, NULL, 0), &r[i]);
        for (int j = 0; j < i; j++) {
            CU_ASSERT(strcmp(r[i].name, r[j].name) != 0);
            CU_ASSERT(!r[i].alias || strcmp(r[i].alias, r[j].name) != 0);
            CU_ASSERT(!r[j].alias || strcmp(r[j].alias, r[i].name) != 0);
        }
    }
    CU_ASSERT_PTR_NULL(trd_reader_find("topo"));
    CU_ASSERT_PTR_NULL(trd_reader_find(""));
    CU_ASSERT_PTR_NULL(trd_reader_find(NULL));
}

/* The lists printed from the rows, as the docs and man pages write them
 * (tests/cli/check_doc_formats.py holds those to treeduce-gen --help). */
static void test_lists(void)
{
    char buf[256];
    trd_reader_list(buf, sizeof buf);
    CU_ASSERT_STRING_EQUAL(buf, "dsl, xml, slurm, yaml, ibnetdiscover (or ibnet) or hwloc");
    trd_reader_write_back_list(buf, sizeof buf);
    CU_ASSERT_STRING_EQUAL(buf, "*.topo or treeduce *.xml");
    trd_reader_list(buf, 12); /* cut short, terminated */
    CU_ASSERT_STRING_EQUAL(buf, "dsl, xml, s");

    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    trd_reader_usage(f);
    fclose(f);
    CU_ASSERT_STRING_EQUAL(
        text,
        "  FILE.topo        the treeduce topology language\n"
        "  FILE.xml         a treeduce XML topology, or an hwloc XML dump (lstopo --of xml) of "
        "one node\n"
        "  FILE.conf        a Slurm topology.conf: topology/tree, block or ring (node type and "
        "link\n"
        "                   from --nodetype, --latency, --bandwidth)\n"
        "  FILE.yaml, .yml  a Slurm topology.yaml (tree, block or ring), as FILE.conf\n"
        "  FILE             ibnetdiscover output (found by its content; node type and latency "
        "as\n"
        "                   FILE.conf, bandwidth from the links)\n"
        "  local            this machine, one node, read with hwloc\n");
    free(text);
}

/* A --format no row has is refused with the list, once the input is read. */
static void test_unknown_format(void)
{
    trd_topo_t t = NULL;
    trd_diag *d = NULL;
    char *text = NULL;
    size_t len = 0;
    CU_ASSERT_EQUAL_FATAL(trd_topo_create(&t), TRD_OK);
    CU_ASSERT_EQUAL_FATAL(trd_diag_create(&d), TRD_OK);
    trd_load_opts o =
        trd_load_opts_default(trd_test_path("tests/data/two-level.topo"), "treeduce-gen");
    o.format = "topo";
    CU_ASSERT_EQUAL(trd_load_topology(&o, t, d, &text, &len), TRD_ERR_INPUT);
    CU_ASSERT_EQUAL_FATAL(trd_diag_count(d), 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(trd_diag_message(d, 0),
                                  "--format 'topo': expected dsl, xml, slurm, yaml, "
                                  "ibnetdiscover (or ibnet) or hwloc"));
    free(text);
    trd_diag_destroy(d);
    trd_topo_destroy(t);
}

/* The loader's defaults as text are the model's defaults in numbers, and a
 * command line without options gets them. */
static void test_defaults(void)
{
    double v = 0;
    CU_ASSERT_EQUAL(trd_parse_time(TRD_DEFAULT_LATENCY, &v), TRD_OK);
    CU_ASSERT_EQUAL(v, TRD_DEFAULT_NET_LATENCY_S);
    CU_ASSERT_EQUAL(trd_parse_bandwidth(TRD_DEFAULT_BANDWIDTH, &v), TRD_OK);
    CU_ASSERT_EQUAL(v, TRD_DEFAULT_NET_BANDWIDTH_BPS);

    trd_load_opts o = trd_load_opts_default("m.topo", "prog");
    CU_ASSERT_STRING_EQUAL(o.input, "m.topo");
    CU_ASSERT_STRING_EQUAL(o.program, "prog");
    CU_ASSERT_STRING_EQUAL(o.nodetype, TRD_DEFAULT_NODETYPE);
    CU_ASSERT_STRING_EQUAL(o.latency, TRD_DEFAULT_LATENCY);
    CU_ASSERT_STRING_EQUAL(o.bandwidth, TRD_DEFAULT_BANDWIDTH);
    CU_ASSERT_PTR_NULL(o.format);
    CU_ASSERT_PTR_NULL(o.alpha_r_ratio);

    /* a Slurm file takes its link and node type from them */
    trd_topo_t t = NULL;
    trd_diag *d = NULL;
    CU_ASSERT_EQUAL_FATAL(trd_topo_create(&t), TRD_OK);
    CU_ASSERT_EQUAL_FATAL(trd_diag_create(&d), TRD_OK);
    CU_ASSERT_EQUAL(trd_load_defaults(&o, t, d), TRD_OK);
    static const char conf[] = "SwitchName=s0 Nodes=n[0-1]\n";
    CU_ASSERT_EQUAL(trd_read_slurm_string(t, d, "t.conf", conf, sizeof conf - 1), TRD_OK);
    CU_ASSERT_EQUAL(trd_topo_finalize(t, d), TRD_OK);
    CU_ASSERT_EQUAL(trd_diag_count(d), 0);
    CU_ASSERT_EQUAL_FATAL(trd_topo_nnodes(t), 2);
    CU_ASSERT_EQUAL(trd_topo_nodetype_npackages(t, trd_topo_node_type(t, 0)), 1);
    CU_ASSERT_EQUAL(trd_topo_nodetype_ncores(t, trd_topo_node_type(t, 0)), 1);
    CU_ASSERT_EQUAL(trd_topo_switch_link(t, 0).latency_s, TRD_DEFAULT_NET_LATENCY_S);
    CU_ASSERT_EQUAL(trd_topo_switch_link(t, 0).bandwidth_Bps, TRD_DEFAULT_NET_BANDWIDTH_BPS);
    trd_diag_destroy(d);
    trd_topo_destroy(t);

    /* and a value that does not parse is the option's error */
    CU_ASSERT_EQUAL_FATAL(trd_topo_create(&t), TRD_OK);
    CU_ASSERT_EQUAL_FATAL(trd_diag_create(&d), TRD_OK);
    o.latency = "soon";
    CU_ASSERT_EQUAL(trd_load_defaults(&o, t, d), TRD_ERR_INPUT);
    CU_ASSERT_EQUAL_FATAL(trd_diag_count(d), 1);
    CU_ASSERT_STRING_EQUAL(trd_diag_message(d, 0),
                           "prog: error: --latency 'soon': expected a time such as 2us");
    trd_diag_destroy(d);
    trd_topo_destroy(t);
}

int main(void)
{
    static const trd_test_case tests[] = {
        {"the rows", test_rows},
        {"the lists of --help", test_lists},
        {"a format no row has", test_unknown_format},
        {"the defaults", test_defaults},
    };
    return trd_test_main("load", tests, TRD_NTESTS(tests));
}
