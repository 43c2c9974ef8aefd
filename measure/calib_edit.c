/* Write-back of measured link costs into a topology file.
 *
 * Method: the file is read twice.  The generator's reader (libtrdgen) checks
 * it and answers the semantic questions: which node a host name is, its node
 * type, the switches and link classes on the path between two nodes
 * (trd_topo_path_cost's walk: node -> leaf switch on both ends, then child ->
 * parent hops, each hop costing the parent's link class [MPICH §3]).  The
 * topology API does not name a node type's package and node link classes, so
 * those come from the file itself: for the DSL the reader's source map
 * (trd_read_dsl_string_map: the link, nodetype and switch blocks with the
 * byte offsets of their statements, from the parser's own tokens); for XML
 * the libxml2 tree.
 *
 * Writing: latency, bandwidth, injection (when measured) and alpha_r (when
 * the pipelined postal fit was meaningful [RM §3, Eq. 3]; an older alpha_r
 * that is now above the latency is removed, since the model refuses it).
 * DSL values are replaced byte range by byte range, so every comment
 * and every other byte stays as it was; XML attributes are set on the tree
 * and the tree is saved by libxml2 (blanks and comments are kept, the
 * declaration is written as libxml2 writes it).  The result must pass the
 * schema (xmlSchemaValidateDoc, XML only) and the generator's reader, and
 * must read back the values that were written, before it goes to a temporary
 * file beside the original that is renamed over it.
 */
#define _GNU_SOURCE
#include "calib_edit.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libxml/parser.h>
#include <libxml/tree.h>
#include <libxml/xmlsave.h>
#include <libxml/xmlschemas.h>

#include "load.h"
#include "outfile.h"
#include "reader.h"
#include "readers.h"
#include "topo.h"

/* The schema text compiled into libtrdgen (cmake/Embed.cmake, KIND=xsd). */
extern const char trd_topology_xsd[];
extern const size_t trd_topology_xsd_len;

#define CAL_NS "urn:treeduce:topology:1"
#define CAL_MARK "measured by treeduce-calibrate"

static const char *const level_link_kw[CAL_NLEVELS] = {"package", "node", "link"};
static const char *const level_xml_attr[CAL_NLEVELS] = {"package-link", "node-link", "link"};
static const char *const level_new_name[CAL_NLEVELS] = {"measured_package", "measured_node",
                                                        "measured_network"};

struct cal_file {
    char *path; /* as given, for messages */
    char *real; /* what is replaced */
    int xml;
    char *text;
    size_t len;
    struct stat st;
    trd_topo_t topo;
    trd_dsl_map *map; /* DSL: where the blocks and statements are in text */
    xmlDocPtr doc;
    int dropped_ar[CAL_NLEVELS]; /* cal_write removed a stale alpha_r of this level's link */
};

static int line_of(const char *text, size_t off)
{
    int line = 1;
    for (size_t i = 0; i < off; i++)
        line += text[i] == '\n';
    return line;
}

/* ---- DSL blocks ------------------------------------------------------------ */

/* Block names are planned and looked up in cal_target's 128-byte fields: a
 * file with a longer one is refused before anything is measured. */
static int dsl_check_names(cal_file *f, char *err, size_t errlen)
{
    for (int i = 0; i < f->map->nblocks; i++) {
        const trd_dsl_block *b = &f->map->blocks[i];
        if (strlen(b->name) >= sizeof(((cal_target *)0)->link)) {
            trd_errf(err, errlen, "%s:%d: cannot follow the file's structure here", f->path,
                     line_of(f->text, b->kw_off));
            return -1;
        }
    }
    return 0;
}

static const trd_dsl_block *dsl_find(cal_file *f, const char *kind, const char *name)
{
    for (int i = 0; i < f->map->nblocks; i++)
        if (strcmp(f->map->blocks[i].kind, kind) == 0 && strcmp(f->map->blocks[i].name, name) == 0)
            return &f->map->blocks[i];
    return NULL;
}

static const trd_dsl_stmt *dsl_item_of(const trd_dsl_block *b, const char *kw)
{
    for (int i = 0; b && i < b->nstmts; i++)
        if (strcmp(b->stmts[i].kw, kw) == 0)
            return &b->stmts[i];
    return NULL;
}

/* ---- XML helpers ------------------------------------------------------------- */

static int is_elem(xmlNodePtr n, const char *name)
{
    return n && n->type == XML_ELEMENT_NODE && xmlStrcmp(n->name, (const xmlChar *)name) == 0 &&
           n->ns && xmlStrcmp(n->ns->href, (const xmlChar *)CAL_NS) == 0;
}

static xmlNodePtr xml_find(cal_file *f, const char *elem, const char *name)
{
    xmlNodePtr root = xmlDocGetRootElement(f->doc);
    for (xmlNodePtr c = root ? root->children : NULL; c; c = c->next) {
        if (!is_elem(c, elem))
            continue;
        xmlChar *v = xmlGetProp(c, (const xmlChar *)"name");
        int hit = v && strcmp((const char *)v, name) == 0;
        xmlFree(v);
        if (hit)
            return c;
    }
    return NULL;
}

/* ---- model questions, either format ------------------------------------------ */

static int has_link(cal_file *f, const char *name)
{
    return f->xml ? xml_find(f, "link", name) != NULL : dsl_find(f, "link", name) != NULL;
}

/* The package (level 0) or node (level 1) link class a node type names, into
 * buf; 0 found, 1 names none, -1 the node type is not written in the file. */
static int nodetype_link(cal_file *f, const char *nt, int level, char *buf, size_t len)
{
    if (f->xml) {
        xmlNodePtr n = xml_find(f, "nodetype", nt);
        if (!n)
            return -1;
        xmlChar *v = xmlGetProp(n, (const xmlChar *)level_xml_attr[level]);
        if (!v)
            return 1;
        snprintf(buf, len, "%s", (const char *)v);
        xmlFree(v);
        return 0;
    }
    const trd_dsl_block *b = dsl_find(f, "nodetype", nt);
    if (!b)
        return -1;
    const trd_dsl_stmt *it = dsl_item_of(b, level_link_kw[level]);
    if (!it)
        return 1;
    snprintf(buf, len, "%.*s", (int)(it->arg_end - it->arg_off), f->text + it->arg_off);
    return 0;
}

/* A fresh link class name. */
static void new_link_name(cal_file *f, int level, const char *owner, char *buf, size_t len)
{
    int n = snprintf(buf, len, "%s", level_new_name[level]);
    if (has_link(f, buf))
        n = snprintf(buf, len, "%s_%s", level_new_name[level], owner);
    for (int k = 2; has_link(f, buf) && n >= 0; k++)
        n = snprintf(buf, len, "%s_%s_%d", level_new_name[level], owner, k);
}

/* Node index of host (also tried without its domain), or -1. */
static int find_host(trd_topo_t t, const char *host)
{
    if (!host || !*host)
        return -1;
    int i = trd_topo_find_node(t, host);
    if (i >= 0)
        return i;
    char shortname[256];
    snprintf(shortname, sizeof shortname, "%s", host);
    char *dot = strchr(shortname, '.');
    if (!dot)
        return -1;
    *dot = '\0';
    return trd_topo_find_node(t, shortname);
}

static void list_nodetypes(trd_topo_t t, char *buf, size_t len)
{
    size_t o = 0;
    buf[0] = '\0';
    for (int i = 0; i < trd_topo_nnodetypes(t) && o < len; i++)
        o +=
            (size_t)snprintf(buf + o, len - o, "%s%s", i ? ", " : "", trd_topo_nodetype_name(t, i));
}

/* ---- open ------------------------------------------------------------------------ */

/* The reader's messages, as treeduce-gen prints them, into err. */
static void diag_to(trd_diag *d, const char *head, char *err, size_t errlen)
{
    char *buf = NULL;
    size_t n = 0;
    FILE *m = open_memstream(&buf, &n);
    if (m) {
        trd_diag_print(d, m);
        fclose(m);
    }
    trd_errf(err, errlen, "%s\n%s", head, buf ? buf : "");
    size_t l = strlen(err);
    while (l > 0 && err[l - 1] == '\n')
        err[--l] = '\0';
    free(buf);
}

/* Read text with the generator's reader into a finalized model; map (DSL
 * only, may be NULL) receives the reader's source map of an accepted text. */
static trd_topo_t read_model(const char *path, int xml, const char *text, size_t len,
                             const char *what, trd_dsl_map **map, char *err, size_t errlen)
{
    trd_topo_t t = NULL;
    trd_diag *d = NULL;
    if (trd_diag_create(&d) != TRD_OK || trd_topo_create(&t) != TRD_OK) {
        trd_errf(err, errlen, "out of memory");
        trd_diag_destroy(d);
        return NULL;
    }
    /* the defaults treeduce-gen uses without options */
    trd_load_opts o = trd_load_opts_default(path, "treeduce-calibrate");
    int rc = trd_load_defaults(&o, t, d);
    if (rc == TRD_OK)
        rc = xml ? trd_read_xml_string(t, d, path, text, len)
                 : trd_read_dsl_string_map(t, d, path, text, len, map);
    if (rc == TRD_OK && trd_diag_count(d) == 0)
        rc = trd_topo_finalize(t, d);
    if (rc != TRD_OK || trd_diag_count(d) > 0) {
        diag_to(d, what, err, errlen);
        trd_topo_destroy(t);
        t = NULL;
        if (map) {
            trd_dsl_map_free(*map);
            *map = NULL;
        }
    }
    trd_diag_destroy(d);
    return t;
}

/* A file of a format without link classes refused: "x.conf: a Slurm
 * topology.conf carries no link costs; write the costs into a *.topo or
 * treeduce *.xml topology". */
static void refuse_format(const char *path, const trd_reader_desc *r, char *err, size_t errlen)
{
    char formats[128];
    trd_reader_write_back_list(formats, sizeof formats);
    trd_errf(err, errlen, "%s: %s; write the costs into a %s topology", path, r->no_costs, formats);
}

int cal_open(cal_file **out, const char *path, char *err, size_t errlen)
{
    *out = NULL;
    cal_file *f = calloc(1, sizeof *f);
    if (!f) {
        trd_errf(err, errlen, "out of memory");
        return TRD_ERR_NOMEM;
    }
    f->path = strdup(path);
    /* the formats of treeduce-gen (trd_reader_detect): those that hold link
     * classes, by the name where it tells, else by the text (read below) */
    const trd_reader_desc *r = trd_reader_detect(path, NULL, 0);
    if (r && !r->write_back) {
        refuse_format(path, r, err, errlen);
        goto bad;
    }
    f->real = realpath(path, NULL);
    if (!f->path || !f->real || stat(f->real, &f->st) != 0) {
        trd_errf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
        goto bad;
    }
    if (!S_ISREG(f->st.st_mode)) {
        trd_errf(err, errlen, "%s: not a regular file", path);
        goto bad;
    }
    if ((f->st.st_mode & 0222) == 0 || access(f->real, W_OK) != 0) {
        trd_errf(err, errlen,
                 "%s: the file is read-only; not measuring what cannot be written "
                 "(make it writable, or run without --write)",
                 path);
        goto bad;
    }
    char *dcopy = strdup(f->real);
    int dir_ok = dcopy && access(dirname(dcopy), W_OK) == 0;
    free(dcopy);
    if (!dir_ok) {
        trd_errf(err, errlen,
                 "%s: its folder is not writable (the new file is written beside it "
                 "and renamed over it)",
                 path);
        goto bad;
    }
    if (trd_read_text(f->real, &f->text, &f->len) != TRD_OK) {
        trd_errf(err, errlen, "%s: cannot read: %s", path, strerror(errno));
        goto bad;
    }
    r = trd_reader_detect(path, f->text, f->len);
    if (!r->write_back) {
        refuse_format(path, r, err, errlen);
        goto bad;
    }
    f->xml = strcmp(r->name, "xml") == 0; /* else the topology language */
    f->topo = read_model(path, f->xml, f->text, f->len,
                         "the topology file has errors; nothing measured or written:",
                         f->xml ? NULL : &f->map, err, errlen);
    if (!f->topo)
        goto bad;
    if (f->xml) {
        f->doc = xmlReadMemory(f->text, (int)f->len, f->real, NULL,
                               XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
        if (!f->doc) {
            trd_errf(err, errlen, "%s: libxml2 cannot read it", path);
            goto bad;
        }
    } else if (dsl_check_names(f, err, errlen) != 0)
        goto bad;
    *out = f;
    return TRD_OK;
bad:
    cal_close(f);
    return TRD_ERR_INPUT;
}

void cal_close(cal_file *f)
{
    if (!f)
        return;
    if (f->topo)
        trd_topo_destroy(f->topo);
    if (f->doc)
        xmlFreeDoc(f->doc);
    trd_dsl_map_free(f->map);
    free(f->text);
    free(f->real);
    free(f->path);
    free(f);
}

/* ---- plan ----------------------------------------------------------------------- */

static int plan_nodetype(cal_file *f, int level, const char *host, const char *opt, cal_target *tg,
                         char *err, size_t errlen)
{
    trd_topo_t t = f->topo;
    char nt[128], types[512];
    list_nodetypes(t, types, sizeof types);
    int node = find_host(t, host);
    if (opt) {
        int ok = 0;
        for (int i = 0; i < trd_topo_nnodetypes(t); i++)
            ok |= strcmp(trd_topo_nodetype_name(t, i), opt) == 0;
        if (!ok) {
            trd_errf(err, errlen, "--nodetype '%s': %s has no such node type (it has: %s)", opt,
                     f->path, types);
            return -1;
        }
        snprintf(nt, sizeof nt, "%s", opt);
        snprintf(tg->why, sizeof tg->why, "node type '%s' from --nodetype", nt);
    } else if (node >= 0) {
        snprintf(nt, sizeof nt, "%s", trd_topo_nodetype_name(t, trd_topo_node_type(t, node)));
        snprintf(tg->why, sizeof tg->why, "host '%s' is node '%s' of type '%s'", host,
                 trd_topo_node_name(t, node), nt);
    } else if (trd_topo_nnodetypes(t) == 1) {
        snprintf(nt, sizeof nt, "%s", trd_topo_nodetype_name(t, 0));
        snprintf(tg->why, sizeof tg->why,
                 "'%s' is the only node type (host '%s' is not a node "
                 "of the file)",
                 nt, host);
    } else {
        trd_errf(err, errlen,
                 "cannot tell which node type this job runs on: host '%s' is not a node "
                 "of %s, which has %d node types (%s); say which with --nodetype NAME",
                 host, f->path, trd_topo_nnodetypes(t), types);
        return -1;
    }
    char link[128];
    int r = nodetype_link(f, nt, level, link, sizeof link);
    if (r < 0) {
        trd_errf(err, errlen,
                 "node type '%s' is not written in %s (nodes without a type get the "
                 "default); give the nodes a node type, or name one with --nodetype",
                 nt, f->path);
        return -1;
    }
    snprintf(tg->owner, sizeof tg->owner, "%s", nt);
    if (r == 0) {
        snprintf(tg->link, sizeof tg->link, "%s", link);
        int other = nodetype_link(f, nt, 1 - level, link, sizeof link);
        if (other == 0 && strcmp(link, tg->link) == 0) {
            size_t l = strlen(tg->why);
            snprintf(tg->why + l, sizeof tg->why - l, "; note: '%s' is its %s link too", tg->link,
                     level == CAL_PACKAGE ? "node" : "package");
        }
    } else {
        tg->create = 1;
        new_link_name(f, level, nt, tg->link, sizeof tg->link);
        size_t l = strlen(tg->why);
        snprintf(tg->why + l, sizeof tg->why - l, "; it names no %s link: new link class",
                 level_link_kw[level]);
    }
    tg->hops = 1;
    return 0;
}

static int plan_network(cal_file *f, const char *h1, const char *h2, const char *opt,
                        cal_target *tg, char *err, size_t errlen)
{
    trd_topo_t t = f->topo;
    int a = find_host(t, h1), b = find_host(t, h2);
    char path_link[128] = "";
    int hops = 0, mixed = 0, nolink = 0;
    if (a >= 0 && b >= 0 && a != b) {
        /* the walk of trd_topo_path_cost */
        int sa = trd_topo_node_switch(t, a), sb = trd_topo_node_switch(t, b);
        int hop_sw[2 + 2 * 64], nh = 0;
        hop_sw[nh++] = sa;
        hop_sw[nh++] = sb;
        while (sa != sb && nh < (int)(sizeof hop_sw / sizeof hop_sw[0])) {
            int *s = trd_topo_switch_depth(t, sa) >= trd_topo_switch_depth(t, sb) ? &sa : &sb;
            *s = trd_topo_switch_parent(t, *s);
            hop_sw[nh++] = *s;
        }
        for (int i = 0; i < nh; i++) {
            const char *ln = trd_topo_switch_link_name(t, hop_sw[i]);
            if (strcmp(ln, "default") == 0 && !has_link(f, "default"))
                nolink = 1;
            if (!path_link[0])
                snprintf(path_link, sizeof path_link, "%s", ln);
            else if (strcmp(path_link, ln) != 0)
                mixed = 1;
        }
        hops = nh;
        snprintf(tg->owner, sizeof tg->owner, "%s", trd_topo_switch_name(t, hop_sw[0]));
    }
    if (opt) {
        if (!has_link(f, opt)) {
            trd_errf(err, errlen, "--switch-link '%s': %s has no such link class", opt, f->path);
            return -1;
        }
        snprintf(tg->link, sizeof tg->link, "%s", opt);
        tg->hops = hops > 0 ? hops : 2;
        snprintf(tg->why, sizeof tg->why, "link class '%s' from --switch-link, %d hops%s", opt,
                 tg->hops, hops > 0 ? " between the nodes" : " assumed (hosts not in the file)");
        return 0;
    }
    if (hops > 0) {
        if (nolink) {
            trd_errf(err, errlen,
                     "a switch between nodes '%s' and '%s' names no link class; add "
                     "'link NAME;' to it or use --switch-link NAME",
                     trd_topo_node_name(t, a), trd_topo_node_name(t, b));
            return -1;
        }
        if (mixed) {
            trd_errf(err, errlen,
                     "the path between nodes '%s' and '%s' crosses several link "
                     "classes; say which one to write with --switch-link NAME",
                     trd_topo_node_name(t, a), trd_topo_node_name(t, b));
            return -1;
        }
        snprintf(tg->link, sizeof tg->link, "%s", path_link);
        tg->hops = hops;
        snprintf(tg->why, sizeof tg->why,
                 "nodes '%s' and '%s' are %d hops of link class '%s' "
                 "apart",
                 trd_topo_node_name(t, a), trd_topo_node_name(t, b), hops, path_link);
        return 0;
    }
    /* hosts not in the file: only a topology with one switch link class is clear */
    path_link[0] = '\0';
    for (int i = 0; i < trd_topo_nswitches(t); i++) {
        const char *ln = trd_topo_switch_link_name(t, i);
        if (!path_link[0])
            snprintf(path_link, sizeof path_link, "%s", ln);
        else if (strcmp(path_link, ln) != 0)
            mixed = 1;
    }
    if (mixed || (strcmp(path_link, "default") == 0 && !has_link(f, "default"))) {
        trd_errf(err, errlen,
                 "hosts '%s' and '%s' are not nodes of %s and its switches use %s; say "
                 "which link class to write with --switch-link NAME",
                 h1, h2, f->path, mixed ? "several link classes" : "no link class");
        return -1;
    }
    snprintf(tg->link, sizeof tg->link, "%s", path_link);
    snprintf(tg->owner, sizeof tg->owner, "%s", trd_topo_switch_name(t, 0));
    tg->hops = 2;
    snprintf(tg->why, sizeof tg->why,
             "'%s' is the only switch link class; hosts not in the "
             "file: 2 hops (one switch) assumed",
             path_link);
    return 0;
}

int cal_plan(cal_file *f, const int want[CAL_NLEVELS], const char *const host[CAL_NLEVELS],
             const char *const host2[CAL_NLEVELS], const char *nodetype, const char *switch_link,
             cal_target tg[CAL_NLEVELS], char *err, size_t errlen)
{
    static const char *const lname[CAL_NLEVELS] = {"same package", "other package", "other node"};
    memset(tg, 0, CAL_NLEVELS * sizeof *tg);
    for (int l = 0; l < CAL_NLEVELS; l++) {
        if (!want[l])
            continue;
        tg[l].wanted = 1;
        int rc = l == CAL_NETWORK
                     ? plan_network(f, host[l], host2[l], switch_link, &tg[l], err, errlen)
                     : plan_nodetype(f, l, host[l], nodetype, &tg[l], err, errlen);
        if (rc != 0)
            return TRD_ERR_INPUT;
    }
    for (int i = 0; i < CAL_NLEVELS; i++)
        for (int j = i + 1; j < CAL_NLEVELS; j++)
            if (tg[i].wanted && tg[j].wanted && strcmp(tg[i].link, tg[j].link) == 0) {
                trd_errf(err, errlen,
                         "link class '%s' would get both the %s and the %s costs; give "
                         "the levels link classes of their own in %s",
                         tg[i].link, lname[i], lname[j], f->path);
                return TRD_ERR_INPUT;
            }
    return 0;
}

/* ---- values ------------------------------------------------------------------- */

static void fmt3(double v, const char *unit, char *buf, size_t len)
{
    int dec = v >= 99.95 ? 0 : v >= 9.995 ? 1 : v >= 0.9995 ? 2 : 3;
    snprintf(buf, len, "%.*f%s", dec, v, unit);
}

void cal_format_time(double s, char *buf, size_t len)
{
    if (s < 1e-7)
        fmt3(s * 1e9, "ns", buf, len);
    else if (s < 1e-3 * 0.9995)
        fmt3(s * 1e6, "us", buf, len);
    else if (s < 0.9995)
        fmt3(s * 1e3, "ms", buf, len);
    else
        fmt3(s, "s", buf, len);
}

void cal_format_bandwidth(double b, char *buf, size_t len)
{
    if (b >= 1e12 * 0.9995)
        fmt3(b / 1e12, "TB/s", buf, len);
    else if (b >= 1e9 * 0.9995)
        fmt3(b / 1e9, "GB/s", buf, len);
    else if (b >= 1e6 * 0.9995)
        fmt3(b / 1e6, "MB/s", buf, len);
    else if (b >= 1e3 * 0.9995)
        fmt3(b / 1e3, "KB/s", buf, len);
    else
        fmt3(b, "B/s", buf, len);
}

/* The strings written for one level. */
typedef struct cal_strings {
    char lat[32], bw[32], inj[32]; /* inj "": not written */
    char ar[32];                   /* alpha_r; "": not written */
} cal_strings;

static cal_strings level_strings(const cal_target *tg, const cal_values *v)
{
    cal_strings s;
    double lat = v->latency_s / (tg->hops > 0 ? tg->hops : 1), wl, wa;
    cal_format_time(lat, s.lat, sizeof s.lat);
    cal_format_bandwidth(v->bandwidth_Bps, s.bw, sizeof s.bw);
    s.inj[0] = '\0';
    if (v->injection_Bps > 0)
        cal_format_bandwidth(v->injection_Bps, s.inj, sizeof s.inj);
    /* alpha_r is not divided by the hops (a path takes the largest alpha_r of
     * its links, not their sum [RM §3, Eq. 3]), but a link class may not give
     * more than its own latency: clamp to the latency written, as rounded. */
    s.ar[0] = '\0';
    if (v->alpha_r_s > 0 && isfinite(v->alpha_r_s)) {
        cal_format_time(fmin(v->alpha_r_s, lat), s.ar, sizeof s.ar);
        if (trd_parse_time(s.ar, &wa) != 0 || trd_parse_time(s.lat, &wl) != 0 || wa > wl)
            snprintf(s.ar, sizeof s.ar, "%s", s.lat);
        else if (wa <= 0)
            s.ar[0] = '\0'; /* rounds to 0, which would mean "not given" */
    }
    return s;
}

/* An alpha_r the file already has (val) that no new one replaces and that is
 * above the latency written now: the link class would be refused, so it goes. */
static int stale_alpha_r(const char *val, const cal_strings *s)
{
    trd_link_cost c = {0, 0, 0, 0};
    return !s->ar[0] && trd_parse_time(val, &c.alpha_r_s) == 0 &&
           trd_parse_time(s->lat, &c.latency_s) == 0 && !TRD_ALPHA_R_OK(c);
}

/* ---- DSL edits ----------------------------------------------------------------- */

typedef struct edit {
    size_t off, del;
    char ins[512];
    int seq;
} edit;

typedef struct edits {
    edit e[32];
    int n;
} edits;

static int add_edit(edits *es, size_t off, size_t del, const char *ins)
{
    if (es->n == (int)(sizeof es->e / sizeof es->e[0]) || strlen(ins) >= sizeof es->e[0].ins)
        return -1;
    edit *e = &es->e[es->n];
    e->off = off;
    e->del = del;
    e->seq = es->n++;
    snprintf(e->ins, sizeof e->ins, "%s", ins);
    return 0;
}

static int edit_cmp(const void *x, const void *y)
{
    const edit *a = x, *b = y;
    if (a->off != b->off)
        return a->off < b->off ? -1 : 1;
    return a->seq - b->seq;
}

static char *apply_edits(const char *text, size_t len, edits *es, size_t *outlen)
{
    qsort(es->e, (size_t)es->n, sizeof es->e[0], edit_cmp);
    size_t cap = len + 1;
    for (int i = 0; i < es->n; i++)
        cap += strlen(es->e[i].ins);
    char *out = malloc(cap);
    if (!out)
        return NULL;
    size_t o = 0, pos = 0;
    for (int i = 0; i < es->n; i++) {
        memcpy(out + o, text + pos, es->e[i].off - pos);
        o += es->e[i].off - pos;
        size_t l = strlen(es->e[i].ins);
        memcpy(out + o, es->e[i].ins, l);
        o += l;
        pos = es->e[i].off + es->e[i].del;
    }
    memcpy(out + o, text + pos, len - pos);
    o += len - pos;
    out[o] = '\0';
    *outlen = o;
    return out;
}

/* Start of the line holding off, and the blanks before off on it (if only blanks). */
static size_t line_start(const char *text, size_t off, char *indent, size_t len)
{
    size_t s = off;
    while (s > 0 && text[s - 1] != '\n')
        s--;
    int blanks = 1;
    for (size_t i = s; i < off; i++)
        blanks &= text[i] == ' ' || text[i] == '\t';
    snprintf(indent, len, "%.*s", blanks ? (int)(off - s) : 0, text + s);
    return s;
}

/* Comment line above the block at kw_off: replace an earlier calibration's. */
static int dsl_comment(const char *text, size_t kw_off, const char *comment, edits *es)
{
    char indent[128], line[700];
    size_t ls = line_start(text, kw_off, indent, sizeof indent);
    snprintf(line, sizeof line, "%s# %s", indent, comment);
    if (ls > 0) {
        size_t ps = ls - 1;
        while (ps > 0 && text[ps - 1] != '\n')
            ps--;
        size_t q = ps;
        while (q < ls && (text[q] == ' ' || text[q] == '\t'))
            q++;
        if (strncmp(text + q, "# " CAL_MARK " ", strlen("# " CAL_MARK " ")) == 0)
            return add_edit(es, ps, ls - 1 - ps, line);
    }
    strcat(line, "\n");
    return add_edit(es, ls, 0, line);
}

/* Insert "stmt" before the '}' at close. */
static int dsl_insert_item(const char *text, size_t close, const char *stmt, edits *es)
{
    char buf[300];
    if (close > 0 && (text[close - 1] == ' ' || text[close - 1] == '\t'))
        snprintf(buf, sizeof buf, "%s ", stmt);
    else
        snprintf(buf, sizeof buf, " %s", stmt);
    return add_edit(es, close, 0, buf);
}

/* Remove a statement; a statement alone on its line takes its line along. */
static int dsl_delete_item(const char *text, size_t len, const trd_dsl_stmt *it, edits *es)
{
    size_t start = it->kw_off, end = it->end;
    while (start > 0 && (text[start - 1] == ' ' || text[start - 1] == '\t'))
        start--;
    size_t after = end;
    while (after < len && (text[after] == ' ' || text[after] == '\t' || text[after] == '\r'))
        after++;
    int bol = start == 0 || text[start - 1] == '\n';
    if (bol && (after == len || text[after] == '\n'))
        return add_edit(es, start, (after < len ? after + 1 : after) - start, "");
    if (bol) /* keep the indentation: take the blanks after it instead */
        return add_edit(es, it->kw_off, after - it->kw_off, "");
    return add_edit(es, start, end - start, "");
}

static int dsl_value(cal_file *f, const trd_dsl_block *b, const char *kw, const char *val,
                     edits *es)
{
    const trd_dsl_stmt *it = dsl_item_of(b, kw);
    char stmt[64];
    if (it)
        return add_edit(es, it->arg_off, it->arg_end - it->arg_off, val);
    snprintf(stmt, sizeof stmt, "%s %s;", kw, val);
    return dsl_insert_item(f->text, b->close, stmt, es);
}

static int dsl_write(cal_file *f, const cal_target tg[], const cal_values v[], const char *comment,
                     char **out, size_t *outlen, char *err, size_t errlen)
{
    edits es = {.n = 0};
    for (int l = 0; l < CAL_NLEVELS; l++) {
        if (!tg[l].wanted || !v[l].measured)
            continue;
        cal_strings s = level_strings(&tg[l], &v[l]);
        int rc = 0;
        if (!tg[l].create) {
            const trd_dsl_block *b = dsl_find(f, "link", tg[l].link);
            if (!b) {
                trd_errf(err, errlen, "link class '%s' is not written in %s", tg[l].link, f->path);
                return -1;
            }
            rc |= dsl_comment(f->text, b->kw_off, comment, &es);
            rc |= dsl_value(f, b, "latency", s.lat, &es);
            rc |= dsl_value(f, b, "bandwidth", s.bw, &es);
            if (s.inj[0])
                rc |= dsl_value(f, b, "injection", s.inj, &es);
            const trd_dsl_stmt *ar = dsl_item_of(b, "alpha_r");
            char old[64];
            if (s.ar[0]) {
                rc |= dsl_value(f, b, "alpha_r", s.ar, &es);
            } else if (ar) {
                snprintf(old, sizeof old, "%.*s", (int)(ar->arg_end - ar->arg_off),
                         f->text + ar->arg_off);
                if (stale_alpha_r(old, &s)) {
                    rc |= dsl_delete_item(f->text, f->len, ar, &es);
                    f->dropped_ar[l] = 1;
                }
            }
        } else {
            const trd_dsl_block *owner =
                dsl_find(f, l == CAL_NETWORK ? "switch" : "nodetype", tg[l].owner);
            if (!owner) {
                trd_errf(err, errlen, "'%s' is not written in %s", tg[l].owner, f->path);
                return -1;
            }
            char indent[128], text[700], stmt[200];
            size_t ls = line_start(f->text, owner->kw_off, indent, sizeof indent);
            snprintf(text, sizeof text,
                     "%s# %s\n%slink %s { latency %s; bandwidth %s;%s%s%s%s%s%s }\n", indent,
                     comment, indent, tg[l].link, s.lat, s.bw, s.inj[0] ? " injection " : "", s.inj,
                     s.inj[0] ? ";" : "", s.ar[0] ? " alpha_r " : "", s.ar, s.ar[0] ? ";" : "");
            rc |= add_edit(&es, ls, 0, text);
            snprintf(stmt, sizeof stmt, "%s %s;", level_link_kw[l], tg[l].link);
            rc |= dsl_insert_item(f->text, owner->close, stmt, &es);
        }
        if (rc) {
            trd_errf(err, errlen, "too many edits");
            return -1;
        }
    }
    *out = apply_edits(f->text, f->len, &es, outlen);
    if (!*out) {
        trd_errf(err, errlen, "out of memory");
        return -1;
    }
    return 0;
}

/* ---- XML edits ----------------------------------------------------------------- */

/* Blanks after the last newline of the whitespace before n: its indentation. */
static void xml_indent(xmlNodePtr n, char *buf, size_t len)
{
    snprintf(buf, len, "  ");
    if (n && n->prev && n->prev->type == XML_TEXT_NODE && n->prev->content) {
        const char *c = (const char *)n->prev->content, *nl = strrchr(c, '\n');
        if (nl && strspn(nl + 1, " \t") == strlen(nl + 1))
            snprintf(buf, len, "%s", nl + 1);
    }
}

static int is_mark_comment(xmlNodePtr n)
{
    return n && n->type == XML_COMMENT_NODE && n->content &&
           strncmp((const char *)n->content, " " CAL_MARK " ", strlen(" " CAL_MARK " ")) == 0;
}

static int xml_write(cal_file *f, const cal_target tg[], const cal_values v[], const char *comment,
                     char **out, size_t *outlen, char *err, size_t errlen)
{
    char ctext[600];
    snprintf(ctext, sizeof ctext, " %s ", comment);
    xmlNodePtr root = xmlDocGetRootElement(f->doc);
    xmlNsPtr ns = root ? xmlSearchNsByHref(f->doc, root, (const xmlChar *)CAL_NS) : NULL;
    if (!ns) {
        trd_errf(err, errlen, "%s: root element is not in namespace %s", f->path, CAL_NS);
        return -1;
    }
    for (int l = 0; l < CAL_NLEVELS; l++) {
        if (!tg[l].wanted || !v[l].measured)
            continue;
        cal_strings s = level_strings(&tg[l], &v[l]);
        xmlNodePtr link;
        if (!tg[l].create) {
            link = xml_find(f, "link", tg[l].link);
            if (!link) {
                trd_errf(err, errlen, "link class '%s' is not written in %s", tg[l].link, f->path);
                return -1;
            }
            xmlNodePtr p = link->prev;
            while (p && p->type == XML_TEXT_NODE && xmlIsBlankNode(p))
                p = p->prev;
            if (is_mark_comment(p))
                xmlNodeSetContent(p, (const xmlChar *)ctext);
            else {
                char ws[140], indent[128];
                xml_indent(link, indent, sizeof indent);
                snprintf(ws, sizeof ws, "\n%s", indent);
                xmlAddPrevSibling(link, xmlNewDocComment(f->doc, (const xmlChar *)ctext));
                xmlAddPrevSibling(link, xmlNewDocText(f->doc, (const xmlChar *)ws));
            }
        } else {
            xmlNodePtr owner = l == CAL_NETWORK ? NULL : xml_find(f, "nodetype", tg[l].owner);
            if (!owner) {
                trd_errf(err, errlen, "'%s' is not written in %s", tg[l].owner, f->path);
                return -1;
            }
            link = xmlNewDocNode(f->doc, ns, (const xmlChar *)"link", NULL);
            xmlNewProp(link, (const xmlChar *)"name", (const xmlChar *)tg[l].link);
            xmlNodePtr last = NULL, first = NULL;
            for (xmlNodePtr c = root->children; c; c = c->next) {
                if (c->type == XML_ELEMENT_NODE && !first)
                    first = c;
                if (is_elem(c, "link"))
                    last = c;
            }
            char ws[140], indent[128];
            xml_indent(last ? last : first, indent, sizeof indent);
            snprintf(ws, sizeof ws, "\n%s", indent);
            if (last) { /* after the last link: ws comment ws link */
                xmlNodePtr cur =
                    xmlAddNextSibling(last, xmlNewDocText(f->doc, (const xmlChar *)ws));
                cur = xmlAddNextSibling(cur, xmlNewDocComment(f->doc, (const xmlChar *)ctext));
                cur = xmlAddNextSibling(cur, xmlNewDocText(f->doc, (const xmlChar *)ws));
                xmlAddNextSibling(cur, link);
            } else { /* before the first element: comment ws link ws */
                xmlAddPrevSibling(first, xmlNewDocComment(f->doc, (const xmlChar *)ctext));
                xmlAddPrevSibling(first, xmlNewDocText(f->doc, (const xmlChar *)ws));
                xmlAddPrevSibling(first, link);
                xmlAddPrevSibling(first, xmlNewDocText(f->doc, (const xmlChar *)ws));
            }
            xmlSetProp(owner, (const xmlChar *)level_xml_attr[l], (const xmlChar *)tg[l].link);
        }
        xmlSetProp(link, (const xmlChar *)"latency", (const xmlChar *)s.lat);
        xmlSetProp(link, (const xmlChar *)"bandwidth", (const xmlChar *)s.bw);
        if (s.inj[0])
            xmlSetProp(link, (const xmlChar *)"injection", (const xmlChar *)s.inj);
        xmlChar *old = xmlGetProp(link, (const xmlChar *)"alpha_r");
        if (s.ar[0]) {
            xmlSetProp(link, (const xmlChar *)"alpha_r", (const xmlChar *)s.ar);
        } else if (old && stale_alpha_r((const char *)old, &s)) {
            xmlUnsetProp(link, (const xmlChar *)"alpha_r");
            f->dropped_ar[l] = 1;
        }
        xmlFree(old);
    }

    /* the schema, before anything is saved */
    char verr[2048] = "";
    xmlSchemaParserCtxtPtr pc =
        xmlSchemaNewMemParserCtxt(trd_topology_xsd, (int)trd_topology_xsd_len);
    xmlSchemaPtr schema = pc ? xmlSchemaParse(pc) : NULL;
    xmlSchemaValidCtxtPtr vc = schema ? xmlSchemaNewValidCtxt(schema) : NULL;
    int vrc = -1;
    if (vc) {
        xmlSchemaSetValidErrors(vc, NULL, NULL, NULL); /* result code is enough */
        vrc = xmlSchemaValidateDoc(vc, f->doc);
    } else
        snprintf(verr, sizeof verr, "the compiled-in schema cannot be loaded");
    if (vc)
        xmlSchemaFreeValidCtxt(vc);
    if (schema)
        xmlSchemaFree(schema);
    if (pc)
        xmlSchemaFreeParserCtxt(pc);
    if (vrc != 0) {
        trd_errf(err, errlen, "the updated %s does not match the schema%s%s; not written", f->path,
                 verr[0] ? ": " : "", verr);
        return -1;
    }

    xmlBufferPtr buf = xmlBufferCreate();
    xmlSaveCtxtPtr sc = buf ? xmlSaveToBuffer(buf, (const char *)f->doc->encoding, 0) : NULL;
    long sr = sc ? xmlSaveDoc(sc, f->doc) : -1;
    if (sc && xmlSaveClose(sc) < 0)
        sr = -1;
    if (sr < 0 || !buf) {
        if (buf)
            xmlBufferFree(buf);
        trd_errf(err, errlen, "libxml2 cannot serialise the updated %s", f->path);
        return -1;
    }
    *outlen = (size_t)xmlBufferLength(buf);
    *out = malloc(*outlen + 1);
    if (*out) {
        memcpy(*out, xmlBufferContent(buf), *outlen);
        (*out)[*outlen] = '\0';
    }
    xmlBufferFree(buf);
    if (!*out) {
        trd_errf(err, errlen, "out of memory");
        return -1;
    }
    return 0;
}

/* ---- check and replace ------------------------------------------------------------ */

static int same(double x, const char *s, int (*parse)(const char *, double *))
{
    double y;
    return parse(s, &y) == 0 && fabs(x - y) <= 1e-12 * fabs(y);
}

/* The updated text, read by the generator, gives the written costs. */
static int check_back(cal_file *f, const char *text, size_t len, const cal_target tg[],
                      const cal_values v[], char *err, size_t errlen)
{
    trd_topo_t t =
        read_model(f->path, f->xml, text, len,
                   "the generator rejects the updated file (bug); not written:", NULL, err, errlen);
    if (!t)
        return -1;
    int ok = 1;
    for (int l = 0; l < CAL_NLEVELS && ok; l++) {
        if (!tg[l].wanted || !v[l].measured)
            continue;
        cal_strings s = level_strings(&tg[l], &v[l]);
        int found = 0;
        if (l == CAL_NETWORK) {
            for (int i = 0; i < trd_topo_nswitches(t); i++)
                if (strcmp(trd_topo_switch_link_name(t, i), tg[l].link) == 0) {
                    trd_link_cost c = trd_topo_switch_link(t, i);
                    found = 1;
                    ok &= same(c.latency_s, s.lat, trd_parse_time) &&
                          same(c.bandwidth_Bps, s.bw, trd_parse_bandwidth) &&
                          (!s.inj[0] || same(c.injection_Bps, s.inj, trd_parse_bandwidth)) &&
                          (!s.ar[0] || same(c.alpha_r_s, s.ar, trd_parse_time));
                }
            if (!found)
                ok = 1; /* a link class no switch uses: nothing to compare */
        } else {
            for (int i = 0; i < trd_topo_nnodetypes(t); i++)
                if (strcmp(trd_topo_nodetype_name(t, i), tg[l].owner) == 0) {
                    trd_link_cost c = l == CAL_PACKAGE ? trd_topo_nodetype_package_link(t, i)
                                                       : trd_topo_nodetype_node_link(t, i);
                    found = 1;
                    ok &= same(c.latency_s, s.lat, trd_parse_time) &&
                          same(c.bandwidth_Bps, s.bw, trd_parse_bandwidth) &&
                          (!s.ar[0] || same(c.alpha_r_s, s.ar, trd_parse_time));
                }
            ok &= found;
        }
    }
    trd_topo_destroy(t);
    if (!ok) {
        trd_errf(err, errlen,
                 "the updated %s does not read back the measured values (bug); not "
                 "written",
                 f->path);
        return -1;
    }
    return 0;
}

static int replace_file(cal_file *f, const char *text, size_t len, char *err, size_t errlen)
{
    trd_outfile o;
    const char *what;
    int e = trd_outfile_open(&o, f->real, &what) != TRD_OK ? errno : 0;
    if (e) {
        trd_errf(err, errlen, "%s: cannot %s: %s; unchanged", f->path, what, strerror(e));
        return -1;
    }
    if (fwrite(text, 1, len, o.f) != len || fflush(o.f) != 0)
        e = errno ? errno : EIO, what = "write the new file";
    else if (fchmod(fileno(o.f), f->st.st_mode & 07777) != 0)
        e = errno, what = "set the mode of the new file";
    if (fchown(fileno(o.f), f->st.st_uid, f->st.st_gid) != 0) {
        /* not the owner: the new file is ours, which is all we can do */
    }
    if (e) {
        trd_outfile_discard(&o);
        trd_errf(err, errlen, "%s: cannot %s: %s; unchanged", f->path, what, strerror(e));
        return -1;
    }
    /* someone may have edited the file while we measured */
    size_t nowlen = 0;
    char *now;
    int changed = trd_read_text(f->real, &now, &nowlen) != TRD_OK || nowlen != f->len ||
                  memcmp(now, f->text, nowlen) != 0;
    free(now);
    if (changed) {
        trd_outfile_discard(&o);
        trd_errf(err, errlen, "%s changed (or vanished) while measuring; not written", f->path);
        return -1;
    }
    if (trd_outfile_commit(&o, &what) != TRD_OK) {
        e = errno;
        trd_errf(err, errlen, "%s: cannot %s: %s; unchanged", f->path, what, strerror(e));
        return -1;
    }
    return 0;
}

int cal_write(cal_file *f, const cal_target tg[CAL_NLEVELS], const cal_values v[CAL_NLEVELS],
              const char *date, int nranks, char *summary, size_t sumlen, int *written, char *err,
              size_t errlen)
{
    char comment[256];
    snprintf(comment, sizeof comment, CAL_MARK " on %s, %d rank%s", date, nranks,
             nranks == 1 ? "" : "s");
    if (summary && sumlen)
        summary[0] = '\0';
    memset(f->dropped_ar, 0, sizeof f->dropped_ar);
    int any = 0;
    for (int l = 0; l < CAL_NLEVELS; l++)
        any |= tg[l].wanted && v[l].measured;
    *written = 0;
    if (!any) {
        trd_errf(err, errlen, "nothing was measured; %s unchanged", f->path);
        return TRD_OK;
    }
    for (int l = 0; l < CAL_NLEVELS; l++)
        if (tg[l].wanted && v[l].measured &&
            !(v[l].latency_s > 0 && isfinite(v[l].latency_s) && v[l].bandwidth_Bps > 0 &&
              isfinite(v[l].bandwidth_Bps))) {
            trd_errf(err, errlen,
                     "the measured costs of link class '%s' are not usable (latency %g s, "
                     "bandwidth %g B/s); %s unchanged",
                     tg[l].link, v[l].latency_s, v[l].bandwidth_Bps, f->path);
            return TRD_ERR_INPUT;
        }
    char *text = NULL;
    size_t len = 0;
    int rc = f->xml ? xml_write(f, tg, v, comment, &text, &len, err, errlen)
                    : dsl_write(f, tg, v, comment, &text, &len, err, errlen);
    if (rc == 0)
        rc = check_back(f, text, len, tg, v, err, errlen);
    if (rc == 0)
        rc = replace_file(f, text, len, err, errlen);
    free(text);
    if (rc != 0)
        return TRD_ERR_IO;
    *written = 1;
    if (summary) {
        size_t o = 0;
        for (int l = 0; l < CAL_NLEVELS && o < sumlen; l++) {
            if (!tg[l].wanted || !v[l].measured)
                continue;
            cal_strings s = level_strings(&tg[l], &v[l]);
            o += (size_t)snprintf(summary + o, sumlen - o,
                                  "  %s link class '%s'%s%s: latency %s, bandwidth %s%s%s%s%s%s\n",
                                  tg[l].create ? "added" : "updated", tg[l].link,
                                  tg[l].create ? " for " : "", tg[l].create ? tg[l].owner : "",
                                  s.lat, s.bw, s.inj[0] ? ", injection " : "", s.inj,
                                  s.ar[0] ? ", alpha_r " : "", s.ar,
                                  f->dropped_ar[l] ? "; its alpha_r was above the new latency "
                                                     "and is removed"
                                                   : "");
        }
    }
    return TRD_OK;
}
