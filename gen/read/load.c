/* The table of the input formats, and reading a machine as treeduce-gen
 * and treeduce-tune take it (load.h). */
#include "load.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "reader.h"
#include "readers.h"
#include "util.h"
#include "xml_common.h"

/* ---- The readers, one row each ------------------------------------------------ */

/* An `lstopo --of xml` dump, by the root element; a treeduce machine (or
 * text that is no XML, for the XML reader to report) otherwise. */
static int is_hwloc_dump(const char *text, size_t len)
{
    char root[64] = "";
    return trd_xml_root_text(text, len, root, sizeof root, NULL, 0) == TRD_OK &&
           strcmp(root, "topology") == 0;
}

static int is_treeduce_xml(const char *text, size_t len)
{
    return !is_hwloc_dump(text, len);
}

static int read_local(trd_topo_t t, trd_diag *d, const char *filename, const char *text, size_t len)
{
    (void)filename;
    (void)text;
    (void)len;
    return trd_read_hwloc_machine(t, d, "local", NULL);
}

static const trd_reader_desc readers[] = {
    {.name = "dsl",
     .extensions = ".topo",
     .description = "the treeduce topology language",
     .read = trd_read_dsl_string,
     .reads_text = 1,
     .listed = 1,
     .write_back = "*.topo"},
    {.name = "xml",
     .extensions = ".xml",
     .description = "a treeduce XML topology",
     .detect = is_treeduce_xml,
     .read = trd_read_xml_string,
     .reads_text = 1,
     .listed = 1,
     .write_back = "treeduce *.xml"},
    {.name = "slurm",
     .extensions = ".conf",
     .description = "a Slurm topology.conf: topology/tree, block or ring (node type and link\n"
                    "from --nodetype, --latency, --bandwidth)",
     .read = trd_read_slurm_string,
     .reads_text = 1,
     .listed = 1,
     .no_costs = "a Slurm topology.conf carries no link costs"},
    {.name = "yaml",
     .extensions = ".yaml .yml",
     .description = "a Slurm topology.yaml (tree, block or ring), as FILE.conf",
     .read = trd_read_yaml_string,
     .reads_text = 1,
     .listed = 1,
     .no_costs = "a Slurm topology.yaml carries no link costs"},
    {.name = "ibnetdiscover",
     .alias = "ibnet",
     .description = "ibnetdiscover output (found by its content; node type and latency as\n"
                    "FILE.conf, bandwidth from the links)",
     .detect = trd_ibnet_detect,
     .read = trd_read_ibnet_string,
     .reads_text = 1,
     .listed = 1,
     .no_costs = "ibnetdiscover output has no link classes"},
    {.name = "hwloc",
     .extensions = ".xml",
     .description = "an hwloc XML dump (lstopo --of xml) of one node",
     .detect = is_hwloc_dump,
     .read = trd_read_hwloc_machine_string,
     .reads_text = 1,
     .listed = 1,
     .no_costs = "an lstopo dump has no link classes"},
    {.name = "local",
     .input = "local",
     .description = "this machine, one node, read with hwloc",
     .read = read_local,
     .no_costs = "'local' is this machine, not a file"},
};

#define NREADERS ((int)(sizeof readers / sizeof readers[0]))

const trd_reader_desc *trd_readers(int *n)
{
    *n = NREADERS;
    return readers;
}

const trd_reader_desc *trd_reader_find(const char *name)
{
    for (int i = 0; name && i < NREADERS; i++)
        if (strcmp(name, readers[i].name) == 0 ||
            (readers[i].alias && strcmp(name, readers[i].alias) == 0))
            return &readers[i];
    return NULL;
}

/* Whether path ends in one of the blank-separated extensions exts. */
static int has_extension(const char *path, const char *exts)
{
    size_t plen = strlen(path);
    for (const char *e = exts; e && *e;) {
        size_t n = strcspn(e, " ");
        if (n > 0 && plen >= n && strncmp(path + plen - n, e, n) == 0)
            return 1;
        e += n;
        e += strspn(e, " ");
    }
    return 0;
}

const trd_reader_desc *trd_reader_detect(const char *path, const char *text, size_t len)
{
    for (int i = 0; i < NREADERS; i++)
        if (readers[i].input && strcmp(path, readers[i].input) == 0)
            return &readers[i];
    for (int i = 0; i < NREADERS; i++)
        if (!readers[i].detect && has_extension(path, readers[i].extensions))
            return &readers[i];
    if (!text)
        return NULL;
    /* by content: among the readers of the name's extension first */
    for (int i = 0; i < NREADERS; i++)
        if (readers[i].detect && has_extension(path, readers[i].extensions) &&
            readers[i].detect(text, len))
            return &readers[i];
    for (int i = 0; i < NREADERS; i++)
        if (readers[i].detect && !readers[i].extensions && !readers[i].input &&
            readers[i].detect(text, len))
            return &readers[i];
    return &readers[0];
}

const char *trd_input_format(const char *path, const char *text, size_t len)
{
    const trd_reader_desc *r = trd_reader_detect(path, text, len);
    return r ? r->name : NULL;
}

/* Append s to buf (len bytes, n of them used) as far as it fits. */
static void append(char *buf, size_t len, size_t *n, const char *s)
{
    int k = snprintf(buf + *n, len - *n, "%s", s);
    if (k > 0)
        *n += (size_t)k < len - *n ? (size_t)k : len - *n - 1;
}

/* "a, b or c" of the rows that want(), each as name() writes it. */
static void list_rows(char *buf, size_t len, int (*want)(const trd_reader_desc *),
                      void (*name)(const trd_reader_desc *, char *, size_t))
{
    size_t n = 0;
    int total = 0, k = 0;
    if (len == 0)
        return;
    buf[0] = '\0';
    for (int i = 0; i < NREADERS; i++)
        total += want(&readers[i]);
    for (int i = 0; i < NREADERS; i++) {
        if (!want(&readers[i]))
            continue;
        char one[128];
        name(&readers[i], one, sizeof one);
        append(buf, len, &n, k == 0 ? "" : k == total - 1 ? " or " : ", ");
        append(buf, len, &n, one);
        k++;
    }
}

static int is_listed(const trd_reader_desc *r)
{
    return r->listed;
}

static void format_name(const trd_reader_desc *r, char *buf, size_t len)
{
    if (r->alias)
        snprintf(buf, len, "%s (or %s)", r->name, r->alias);
    else
        snprintf(buf, len, "%s", r->name);
}

void trd_reader_list(char *buf, size_t len)
{
    list_rows(buf, len, is_listed, format_name);
}

static int writes_back(const trd_reader_desc *r)
{
    return r->write_back != NULL;
}

static void write_back_name(const trd_reader_desc *r, char *buf, size_t len)
{
    snprintf(buf, len, "%s", r->write_back);
}

void trd_reader_write_back_list(char *buf, size_t len)
{
    list_rows(buf, len, writes_back, write_back_name);
}

/* Whether rows a and b are read from files of the same extensions. */
static int same_extensions(const trd_reader_desc *a, const trd_reader_desc *b)
{
    return a->extensions && b->extensions && strcmp(a->extensions, b->extensions) == 0;
}

/* A description with its continuation lines under the first. */
static void put_description(FILE *out, const char *s)
{
    for (; *s; s++) {
        fputc(*s, out);
        if (*s == '\n')
            fprintf(out, "%19s", "");
    }
}

void trd_reader_usage(FILE *out)
{
    for (int i = 0; i < NREADERS; i++) {
        const trd_reader_desc *r = &readers[i];
        int seen = 0;
        for (int j = 0; j < i; j++)
            seen |= same_extensions(&readers[j], r);
        if (seen) /* on the line of the first row of its extensions */
            continue;
        char label[64];
        size_t n = 0;
        label[0] = '\0';
        if (r->input) {
            append(label, sizeof label, &n, r->input);
        } else {
            /* FILE.yaml, .yml */
            append(label, sizeof label, &n, "FILE");
            for (const char *e = r->extensions; e && *e;) {
                size_t k = strcspn(e, " ");
                char one[32];
                snprintf(one, sizeof one, "%s%.*s", e == r->extensions ? "" : ", ", (int)k, e);
                append(label, sizeof label, &n, one);
                e += k;
                e += strspn(e, " ");
            }
        }
        fprintf(out, "  %-16s ", label);
        put_description(out, r->description);
        for (int j = i + 1; j < NREADERS; j++)
            if (same_extensions(r, &readers[j])) {
                fputs(", or ", out);
                put_description(out, readers[j].description);
            }
        fputc('\n', out);
    }
}

/* ---- Loading the TOPOLOGY argument -------------------------------------------- */

trd_load_opts trd_load_opts_default(const char *input, const char *program)
{
    return (trd_load_opts){.input = input,
                           .nodetype = TRD_DEFAULT_NODETYPE,
                           .latency = TRD_DEFAULT_LATENCY,
                           .bandwidth = TRD_DEFAULT_BANDWIDTH,
                           .program = program};
}

int trd_load_defaults(const trd_load_opts *a, trd_topo_t t, trd_diag *d)
{
    trd_loc cli = {a->program, 0, 0};
    int errors = trd_diag_count(d);
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
    return trd_diag_count(d) > errors ? TRD_ERR_INPUT : TRD_OK;
}

int trd_load_topology(const trd_load_opts *a, trd_topo_t t, trd_diag *d, char **intext,
                      size_t *inlen)
{
    trd_loc cli = {a->program, 0, 0};
    int rc = TRD_OK;
    trd_load_defaults(a, t, d); /* its errors stop the load below */
    /* without --format, by the text once it is read below (once: it may be a FIFO) */
    const trd_reader_desc *r =
        a->format ? trd_reader_find(a->format) : trd_reader_detect(a->input, NULL, 0);
    if (trd_diag_count(d) > 0)
        return TRD_ERR_INPUT;
    if (r && !r->reads_text) {
        rc = r->read(t, d, a->input, NULL, 0);
    } else if (trd__read_input(d, a->input, intext, inlen) == TRD_OK) {
        if (!a->format)
            r = trd_reader_detect(a->input, *intext, *inlen);
        if (r) {
            rc = r->read(t, d, a->input, *intext, *inlen);
        } else {
            char list[256];
            trd_reader_list(list, sizeof list);
            trd_diag_error(d, cli, "--format '%s': expected %s", a->format, list);
        }
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
