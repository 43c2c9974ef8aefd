/* Reading a machine as treeduce-gen and treeduce-tune take it (load.h). */
#include "load.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "reader.h"
#include "readers.h"
#include "xml_common.h"

static int has_suffix(const char *s, const char *suf)
{
    size_t a = strlen(s), b = strlen(suf);
    return a >= b && strcmp(s + a - b, suf) == 0;
}

const char *trd_input_format(const char *path, const char *text, size_t len)
{
    if (strcmp(path, "local") == 0)
        return "local";
    if (has_suffix(path, ".topo"))
        return "dsl";
    if (has_suffix(path, ".conf"))
        return "slurm";
    if (has_suffix(path, ".yaml") || has_suffix(path, ".yml"))
        return "yaml";
    if (!text)
        return NULL;
    if (has_suffix(path, ".xml")) {
        char root[64] = "";
        int dump = trd_xml_root_text(text, len, root, sizeof root, NULL, 0) == TRD_OK &&
                   strcmp(root, "topology") == 0;
        return dump ? "hwloc" : "xml";
    }
    return trd_ibnet_detect(text, len) ? "ibnetdiscover" : "dsl";
}

int trd_load_topology(const trd_load_opts *a, trd_topo_t t, trd_diag *d, char **intext,
                      size_t *inlen)
{
    trd_loc cli = {a->program, 0, 0};
    const char *format = a->format;
    int rc = TRD_OK;
    /* defaults for inputs that carry no costs or node types (Slurm) */
    trd_link_cost dl = {0, 0, 0, 0};
    if (trd_parse_time(a->latency, &dl.latency_s) != TRD_OK)
        trd_diag_error(d, cli, "--latency '%s': expected a time such as 2us", a->latency);
    if (trd_parse_bandwidth(a->bandwidth, &dl.bandwidth_Bps) != TRD_OK)
        trd_diag_error(d, cli, "--bandwidth '%s': expected a bandwidth such as 10GB/s",
                       a->bandwidth);
    trd_topo_set_default_link(t, dl);
    if (a->alpha_r_ratio) {
        char *end;
        errno = 0;
        double r = strtod(a->alpha_r_ratio, &end);
        if (end == a->alpha_r_ratio || *end || errno || trd_topo_set_alpha_r_ratio(t, r) != TRD_OK)
            trd_diag_error(d, cli, "--alpha-r-ratio '%s': expected a number from 0 to 1",
                           a->alpha_r_ratio);
    }
    int npk, cores[TRD_MAX_PACKAGES];
    char err[512];
    if (trd_hwloc_node_shape("synthetic", a->nodetype, &npk, cores, NULL, err, sizeof err) !=
        TRD_OK) {
        trd_diag_error(d, cli, "--nodetype: %s", err);
    } else {
        char src[600];
        snprintf(src, sizeof src, "--nodetype \"%s\"", a->nodetype);
        trd_topo_set_default_nodetype(t, npk, cores, src);
    }
    if (!format) /* else by the text, once it is read below (once: it may be a FIFO) */
        format = trd_input_format(a->input, NULL, 0);
    if (trd_diag_count(d) > 0)
        return TRD_ERR_INPUT;
    if (format && strcmp(format, "local") == 0) {
        rc = trd_read_hwloc_machine(t, d, "local", NULL);
    } else if (trd__read_input(d, a->input, intext, inlen) == TRD_OK) {
        if (!format)
            format = trd_input_format(a->input, *intext, *inlen);
        if (strcmp(format, "dsl") == 0)
            rc = trd_read_dsl_string(t, d, a->input, *intext, *inlen);
        else if (strcmp(format, "slurm") == 0)
            rc = trd_read_slurm_string(t, d, a->input, *intext, *inlen);
        else if (strcmp(format, "xml") == 0)
            rc = trd_read_xml_string(t, d, a->input, *intext, *inlen);
        else if (strcmp(format, "yaml") == 0)
            rc = trd_read_yaml_string(t, d, a->input, *intext, *inlen);
        else if (strcmp(format, "ibnetdiscover") == 0 || strcmp(format, "ibnet") == 0)
            rc = trd_read_ibnet_string(t, d, a->input, *intext, *inlen);
        else if (strcmp(format, "hwloc") == 0)
            rc = trd_read_hwloc_machine_string(t, d, a->input, *intext, *inlen);
        else
            trd_diag_error(d, cli,
                           "--format '%s': expected dsl, xml, slurm, yaml, ibnetdiscover or hwloc",
                           format);
    }
    if (rc == TRD_OK && trd_diag_count(d) == 0)
        rc = trd_topo_finalize(t, d);
    return rc == TRD_OK && trd_diag_count(d) > 0 ? TRD_ERR_INPUT : rc;
}
