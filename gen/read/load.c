/* Reading a machine as treeduce-gen and treeduce-tune take it (load.h). */
#include "load.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "reader.h"
#include "readers.h"
#include "util.h"
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

int trd_read_hosts(trd_diag *d, const char *path, trd_topo_t t, int **node_of_rank, int *nranks)
{
    char *text = NULL;
    const char *file = path, *txt;
    size_t len = 0;
    int n = 0, cap = 0, line = 1, *nodes = NULL;
    *node_of_rank = NULL;
    *nranks = 0;
    int rc = trd__read_input(d, path, &text, &len);
    txt = text;
    if (rc == TRD_OK)
        rc = trd__text_begin(d, path, &txt, len, &file);
    const char *bol = txt;
    for (size_t i = 0; rc == TRD_OK && i < len;) {
        if (strchr(", \t\r\n", txt[i])) {
            if (txt[i++] == '\n') {
                line++;
                bol = txt + i;
            }
            continue;
        }
        size_t j = i;
        while (j < len && !strchr(", \t\r\n", txt[j]))
            j++;
        trd_loc at = {file, line, (int)(txt + i - bol) + 1};
        if (n == TRD_MAX_HOSTS_RANKS) {
            trd_diag_error(d, at, "more than %d ranks", TRD_MAX_HOSTS_RANKS);
            rc = TRD_ERR_INPUT;
            break;
        }
        char *name = strndup(txt + i, j - i);
        if (!name || trd__grow((void **)&nodes, &cap, n + 1, sizeof *nodes) != TRD_OK) {
            free(name);
            rc = TRD_ERR_NOMEM;
            break;
        }
        int v = trd_topo_find_node(t, name);
        char *dot = strchr(name, '.');
        if (v < 0 && dot) { /* a fully qualified name may carry the domain the topology omits */
            *dot = '\0';
            v = trd_topo_find_node(t, name);
            *dot = '.';
        }
        if (v < 0)
            trd_diag_error(d, at, "host '%s' is not a node of machine '%s'", name,
                           trd_topo_name(t) ? trd_topo_name(t) : "?");
        free(name);
        nodes[n++] = v;
        i = j;
    }
    if (rc == TRD_OK && n == 0)
        trd_diag_error(d, (trd_loc){file, 0, 0}, "no host names: expected one per rank");
    if (rc == TRD_OK && trd_diag_count(d) > 0)
        rc = TRD_ERR_INPUT;
    free(text);
    if (rc != TRD_OK) {
        free(nodes);
        return rc;
    }
    *node_of_rank = nodes;
    *nranks = n;
    return TRD_OK;
}
