/* Slurm topology.yaml reader (Slurm 25.05 and later), with libyaml:
 *
 *   - topology: topo1
 *     cluster_default: true
 *     tree:
 *       switches:
 *         - switch: sw_root
 *           children: s[1-2]
 *         - switch: s1
 *           nodes: node[01-02]
 *   - topology: topo2
 *     block:
 *       block_sizes: [4, 16]
 *       blocks:
 *         - block: b1
 *           nodes: node[01-04]
 *   - topology: topo3
 *     ring:
 *       rings:
 *         - ring: r0
 *           nodes: node[01-08]
 *   - topology: topo4
 *     flat: true
 *
 * The file is a list of topologies [Slurm topology.yaml(5)]; each has a name
 * (topology), cluster_default (default false) and exactly one of tree, block,
 * ring and flat.  The model holds one machine: the first topology with
 * cluster_default: true is read, else the first one; the others are checked
 * for their keys only.  tree is topology.conf's SwitchName lines (switch,
 * children, nodes); block is its BlockName lines and BlockSizes (block_sizes,
 * blocks: block, nodes); ring its RingName lines (rings: ring, nodes), mapped
 * as gen/read/slurm_plugins.c says.  The ring section follows the shape of the
 * other two, as Slurm's topology/ring configuration names its fields
 * (ring_name, nodes).  A flat topology names no nodes (Slurm takes every node
 * of slurm.conf) and is refused when chosen.  Node lists are Slurm host lists
 * ("n[1-4],login"), as a string or a list of strings; block_sizes is a list
 * of node counts or one "4,16" string.  As in topology.conf, nodes get the
 * default node type and switches the default link.
 */
#include "reader.h"
#include "readers.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <yaml.h>

/* Reading state: the document, the file name for messages. */
struct ctx {
    yaml_document_t *doc;
    trd_diag *d;
    const char *file;
    trd_topo_t t;
};

static trd_loc loc_of(const struct ctx *c, const yaml_node_t *n)
{
    return (trd_loc){c->file, (int)n->start_mark.line + 1, (int)n->start_mark.column + 1};
}

static yaml_node_t *node(const struct ctx *c, int id)
{
    return yaml_document_get_node(c->doc, id);
}

static const char *kind_name(const yaml_node_t *n)
{
    return n->type == YAML_SCALAR_NODE     ? "a scalar"
           : n->type == YAML_SEQUENCE_NODE ? "a list"
                                           : "a mapping";
}

static const char *scalar(const yaml_node_t *n)
{
    return (const char *)n->data.scalar.value;
}

/* n must be a mapping; what names it in the message.  1 when it is. */
static int want(const struct ctx *c, const yaml_node_t *n, yaml_node_type_t type, const char *what)
{
    if (n->type == type)
        return 1;
    trd_diag_error(c->d, loc_of(c, n), "expected %s, got %s", what, kind_name(n));
    return 0;
}

/* The values of the keys of mapping m into v[] (NULL when absent), for the
 * keys in names[0..n), which the message lists as expect.  Unknown and
 * repeated keys are reported.  1 when there was no error. */
static int fields(const struct ctx *c, const yaml_node_t *m, const char *const *names, int n,
                  yaml_node_t **v, const yaml_node_t **k, const char *expect)
{
    int ok = 1;
    for (int i = 0; i < n; i++)
        v[i] = NULL;
    for (yaml_node_pair_t *p = m->data.mapping.pairs.start; p < m->data.mapping.pairs.top; p++) {
        yaml_node_t *key = node(c, p->key), *val = node(c, p->value);
        if (key->type != YAML_SCALAR_NODE) {
            trd_diag_error(c->d, loc_of(c, key), "expected a key, got %s", kind_name(key));
            ok = 0;
            continue;
        }
        int i = 0;
        while (i < n && strcmp(scalar(key), names[i]) != 0)
            i++;
        if (i == n) {
            trd_diag_error(c->d, loc_of(c, key), "unknown key '%s', expected %s", scalar(key),
                           expect);
            ok = 0;
        } else if (v[i]) {
            trd_diag_error(c->d, loc_of(c, key), "duplicate key '%s'", names[i]);
            ok = 0;
        } else {
            v[i] = val;
            if (k)
                k[i] = key;
        }
    }
    return ok;
}

/* A name: a scalar without host list syntax.  NULL after an error. */
static const char *one_name(const struct ctx *c, const yaml_node_t *n, const char *what)
{
    if (!want(c, n, YAML_SCALAR_NODE, what))
        return NULL;
    if (!*scalar(n) || strpbrk(scalar(n), "[],")) {
        trd_diag_error(c->d, loc_of(c, n), "expected %s, got '%s'", what, scalar(n));
        return NULL;
    }
    return scalar(n);
}

static int seq_len(const yaml_node_t *n)
{
    return (int)(n->data.sequence.items.top - n->data.sequence.items.start);
}

static yaml_node_t *item(const struct ctx *c, const yaml_node_t *seq, int i)
{
    return node(c, seq->data.sequence.items.start[i]);
}

/* A host list (a scalar, or a list of scalars) expanded and appended to
 * *names / *cnt.  TRD_OK (errors in d) or TRD_ERR_NOMEM. */
static int hosts(const struct ctx *c, const yaml_node_t *n, char ***names, int *cnt)
{
    int list = n->type == YAML_SEQUENCE_NODE, nitems = list ? seq_len(n) : 1, rc = TRD_OK;
    for (int i = 0; i < nitems && rc == TRD_OK; i++) {
        const yaml_node_t *h = list ? item(c, n, i) : n;
        if (!want(c, h, YAML_SCALAR_NODE, "a host list such as n[1-4]"))
            continue;
        char **v = NULL, err[256];
        int nv = 0, errpos = 0;
        int e = trd_hostlist_expand(scalar(h), &v, &nv, err, sizeof err, &errpos);
        if (e == TRD_ERR_NOMEM) {
            rc = e;
        } else if (e != TRD_OK) {
            trd_loc at = loc_of(c, h);
            if (errpos > 0 && (size_t)errpos <= strlen(scalar(h)) &&
                h->data.scalar.style == YAML_PLAIN_SCALAR_STYLE)
                at.col += errpos;
            trd_diag_error(c->d, at, "%s", err);
        } else {
            char **all = realloc(*names, (size_t)(*cnt + nv + 1) * sizeof *all);
            if (!all) {
                trd_hostlist_free(v, nv);
                rc = TRD_ERR_NOMEM;
                break;
            }
            *names = all;
            memcpy(all + *cnt, v, (size_t)nv * sizeof *v);
            *cnt += nv;
            free(v);
        }
    }
    return rc;
}

/* tree: {switches: [{switch, children, nodes}]}.  TRD_OK or TRD_ERR_NOMEM. */
static int read_tree(const struct ctx *c, const yaml_node_t *tree)
{
    static const char *const tk[] = {"switches"};
    static const char *const sk[] = {"switch", "children", "nodes"};
    yaml_node_t *v[3];
    if (!want(c, tree, YAML_MAPPING_NODE, "a mapping with switches") ||
        !fields(c, tree, tk, 1, v, NULL, "switches"))
        return TRD_OK;
    if (!v[0]) {
        trd_diag_error(c->d, loc_of(c, tree), "expected switches in a tree");
        return TRD_OK;
    }
    if (!want(c, v[0], YAML_SEQUENCE_NODE, "a list of switches"))
        return TRD_OK;
    int rc = TRD_OK;
    for (int i = 0; i < seq_len(v[0]) && rc != TRD_ERR_NOMEM; i++) {
        yaml_node_t *s = item(c, v[0], i), *f[3];
        if (!want(c, s, YAML_MAPPING_NODE, "a switch") ||
            !fields(c, s, sk, 3, f, NULL, "switch, children or nodes"))
            continue;
        if (!f[0]) {
            trd_diag_error(c->d, loc_of(c, s), "expected 'switch' with the switch's name");
            continue;
        }
        const char *name = one_name(c, f[0], "one switch name");
        char **nodes = NULL, **kids = NULL;
        int nn = 0, nk = 0, errs = trd_diag_count(c->d), sw;
        if (f[2])
            rc = hosts(c, f[2], &nodes, &nn);
        if (f[1] && rc == TRD_OK)
            rc = hosts(c, f[1], &kids, &nk);
        if (rc == TRD_OK && name && trd_diag_count(c->d) == errs) {
            rc = trd_topo_add_switch(c->t, c->d, loc_of(c, f[0]), name, NULL, &sw);
            for (int j = 0; rc == TRD_OK && j < nn; j++)
                if (trd_topo_switch_add_node(c->t, c->d, loc_of(c, f[2]), sw, nodes[j], NULL) ==
                    TRD_ERR_NOMEM)
                    rc = TRD_ERR_NOMEM;
            for (int j = 0; rc == TRD_OK && j < nk; j++)
                rc = trd_topo_switch_add_child(c->t, c->d, loc_of(c, f[1]), sw, kids[j]);
            if (rc == TRD_ERR_INPUT)
                rc = TRD_OK;
        }
        trd_hostlist_free(nodes, nn);
        trd_hostlist_free(kids, nk);
    }
    return rc;
}

/* The blocks or rings of a list: [{key: name, nodes: list}] into g (names
 * borrowed from the document, node lists owned).  TRD_OK or TRD_ERR_NOMEM. */
static int read_groups(const struct ctx *c, const yaml_node_t *list, const char *key,
                       trd_slurm_group **g, int *n)
{
    const char *const gk[] = {key, "nodes"};
    char expect[64], what[64];
    snprintf(expect, sizeof expect, "%s or nodes", key);
    snprintf(what, sizeof what, "one %s name", key);
    *g = calloc((size_t)seq_len(list) + 1, sizeof **g);
    *n = 0;
    if (!*g)
        return TRD_ERR_NOMEM;
    for (int i = 0; i < seq_len(list); i++) {
        yaml_node_t *b = item(c, list, i), *f[2];
        if (!want(c, b, YAML_MAPPING_NODE, key[0] == 'b' ? "a block" : "a ring") ||
            !fields(c, b, gk, 2, f, NULL, expect))
            continue;
        if (!f[0] || !f[1]) {
            trd_diag_error(c->d, loc_of(c, b), "expected '%s' in each %s", f[0] ? "nodes" : key,
                           key);
            continue;
        }
        int errs = trd_diag_count(c->d);
        const char *name = one_name(c, f[0], what);
        trd_slurm_group *e = &(*g)[*n];
        if (hosts(c, f[1], &e->nodes, &e->n) != TRD_OK)
            return TRD_ERR_NOMEM;
        if (trd_diag_count(c->d) != errs) {
            trd_hostlist_free(e->nodes, e->n);
            e->nodes = NULL;
            e->n = 0;
            continue;
        }
        e->name = name;
        e->loc = loc_of(c, f[0]);
        e->nodes_loc = loc_of(c, f[1]);
        (*n)++;
    }
    return TRD_OK;
}

/* block_sizes: a list of node counts or one "4,16" scalar.  0 or -1 (memory). */
static int read_sizes(const struct ctx *c, const yaml_node_t *v, long **sizes, trd_loc **locs,
                      int *n)
{
    int max = 1;
    if (v->type == YAML_SEQUENCE_NODE)
        max = seq_len(v);
    else if (v->type == YAML_SCALAR_NODE)
        for (const char *p = scalar(v); *p; p++)
            max += *p == ',';
    *n = 0;
    *sizes = calloc((size_t)max + 1, sizeof **sizes);
    *locs = calloc((size_t)max + 1, sizeof **locs);
    if (!*sizes || !*locs)
        return -1;
    if (v->type == YAML_MAPPING_NODE) {
        want(c, v, YAML_SEQUENCE_NODE, "a list of block sizes");
        return 0;
    }
    for (int i = 0; i < max; i++) {
        const yaml_node_t *s = v->type == YAML_SEQUENCE_NODE ? item(c, v, i) : v;
        if (!want(c, s, YAML_SCALAR_NODE, "a block size"))
            continue;
        const char *p = scalar(s), *start;
        trd_loc at = loc_of(c, s);
        if (v->type == YAML_SCALAR_NODE) { /* the i-th element of "4,16" */
            for (int k = 0; k < i; k++)
                p = strchr(p, ',') + 1;
            if (s->data.scalar.style == YAML_PLAIN_SCALAR_STYLE)
                at.col += (int)(p - scalar(s));
        }
        start = p;
        long x;
        trd__slurm_block_size(start, &x, &p);
        if (p == start || x == 0 || (*p && *p != ',') || (v->type == YAML_SEQUENCE_NODE && *p)) {
            size_t e = strcspn(start, v->type == YAML_SCALAR_NODE ? "," : "");
            trd_diag_error(c->d, at, "expected a positive whole number of nodes, got '%.*s'",
                           (int)e, start);
            return 0;
        }
        (*sizes)[*n] = x;
        (*locs)[(*n)++] = at;
        if (v->type == YAML_SCALAR_NODE && !*p)
            break;
    }
    return 0;
}

/* block: {block_sizes, blocks} or ring: {rings}.  TRD_OK or TRD_ERR_NOMEM. */
static int read_plugin(const struct ctx *c, const yaml_node_t *v, int block)
{
    static const char *const bk[] = {"block_sizes", "blocks"};
    static const char *const rk[] = {"rings"};
    yaml_node_t *f[2];
    int errs = trd_diag_count(c->d), rc = TRD_OK;
    if (!want(c, v, YAML_MAPPING_NODE, block ? "a mapping with blocks" : "a mapping with rings") ||
        !fields(c, v, block ? bk : rk, block ? 2 : 1, f, NULL,
                block ? "block_sizes or blocks" : "rings"))
        return TRD_OK;
    yaml_node_t *list = block ? f[1] : f[0];
    if (!list) {
        trd_diag_error(c->d, loc_of(c, v), "expected %s in a %s", block ? "blocks" : "rings",
                       block ? "block" : "ring");
        return TRD_OK;
    }
    if (!want(c, list, YAML_SEQUENCE_NODE, block ? "a list of blocks" : "a list of rings"))
        return TRD_OK;
    trd_slurm_group *g = NULL;
    long *sizes = NULL;
    trd_loc *locs = NULL;
    int n = 0, nsizes = 0;
    rc = read_groups(c, list, block ? "block" : "ring", &g, &n);
    if (rc == TRD_OK && block && f[0] && read_sizes(c, f[0], &sizes, &locs, &nsizes))
        rc = TRD_ERR_NOMEM;
    if (rc == TRD_OK && trd_diag_count(c->d) == errs) {
        if (n == 0)
            trd_diag_error(c->d, loc_of(c, list), "expected at least one %s",
                           block ? "block" : "ring");
        else
            rc = block ? trd__slurm_blocks(c->t, c->d, g, n, sizes, locs, nsizes)
                       : trd__slurm_rings(c->t, c->d, g, n);
    }
    for (int i = 0; g && i < n; i++)
        trd_hostlist_free(g[i].nodes, g[i].n);
    free(g);
    free(sizes);
    free(locs);
    return rc == TRD_ERR_INPUT ? TRD_OK : rc;
}

enum { T_TOPOLOGY, T_DEFAULT, T_TREE, T_BLOCK, T_RING, T_FLAT, T_MAX };
static const char *const topo_keys[T_MAX] = {"topology", "cluster_default", "tree", "block", "ring",
                                             "flat"};

/* "true"/"false" (and YAML 1.1's yes/no, on/off) into *b; 1 when it is one. */
static int boolean(const struct ctx *c, const yaml_node_t *n, int *b)
{
    static const char *const yes[] = {"true", "yes", "on"}, *const no[] = {"false", "no", "off"};
    if (n->type == YAML_SCALAR_NODE)
        for (int i = 0; i < 3; i++) {
            if (strcasecmp(scalar(n), yes[i]) == 0)
                return *b = 1;
            if (strcasecmp(scalar(n), no[i]) == 0) {
                *b = 0;
                return 1;
            }
        }
    trd_diag_error(c->d, loc_of(c, n), "expected true or false, got %s%s%s",
                   n->type == YAML_SCALAR_NODE ? "'" : "",
                   n->type == YAML_SCALAR_NODE ? scalar(n) : kind_name(n),
                   n->type == YAML_SCALAR_NODE ? "'" : "");
    return 0;
}

/* Check one topology's keys; *model gets its tree/block/ring/flat key index
 * (-1 after an error), *def its cluster_default. */
static void check_topology(const struct ctx *c, const yaml_node_t *m, yaml_node_t **v, int *model,
                           int *def)
{
    const yaml_node_t *k[T_MAX] = {0};
    *model = -1;
    *def = 0;
    if (!want(c, m, YAML_MAPPING_NODE, "a topology (a mapping with 'topology: NAME')") ||
        !fields(c, m, topo_keys, T_MAX, v, k,
                "topology, cluster_default, tree, block, ring or flat"))
        return;
    int errs = trd_diag_count(c->d);
    if (!v[T_TOPOLOGY])
        trd_diag_error(c->d, loc_of(c, m), "expected 'topology' with the topology's name");
    else
        one_name(c, v[T_TOPOLOGY], "one topology name");
    if (v[T_DEFAULT])
        boolean(c, v[T_DEFAULT], def);
    int first = -1;
    for (int i = T_TREE; i < T_MAX; i++) {
        if (!v[i])
            continue;
        if (first < 0)
            first = i;
        else if (k[i]->start_mark.index > k[first]->start_mark.index)
            trd_diag_error(c->d, loc_of(c, k[i]), "'%s' cannot go with '%s' in one topology",
                           topo_keys[i], topo_keys[first]);
        else
            trd_diag_error(c->d, loc_of(c, k[first]), "'%s' cannot go with '%s' in one topology",
                           topo_keys[first], topo_keys[i]);
    }
    if (first < 0)
        trd_diag_error(c->d, loc_of(c, m), "expected one of tree, block, ring or flat");
    if (trd_diag_count(c->d) == errs)
        *model = first;
}

static int read_doc(struct ctx *c)
{
    yaml_node_t *root = yaml_document_get_root_node(c->doc);
    if (!root) {
        trd_diag_error(c->d, (trd_loc){c->file, 1, 1}, "expected a list of topologies");
        return TRD_OK;
    }
    if (!want(c, root, YAML_SEQUENCE_NODE, "a list of topologies"))
        return TRD_OK;
    int n = seq_len(root), model = -1, chosen_def = 0, errs = trd_diag_count(c->d);
    yaml_node_t *v[T_MAX], *cv[T_MAX] = {0};
    /* The first topology with cluster_default: true, else the first. */
    for (int i = 0; i < n; i++) {
        int m, def;
        check_topology(c, item(c, root, i), v, &m, &def);
        if (m >= 0 && (model < 0 || (def && !chosen_def))) {
            model = m;
            chosen_def = def;
            memcpy(cv, v, sizeof v);
        }
    }
    if (n == 0)
        trd_diag_error(c->d, loc_of(c, root), "expected at least one topology");
    if (trd_diag_count(c->d) != errs || model < 0)
        return TRD_OK;
    const char *name = scalar(cv[T_TOPOLOGY]);
    trd_topo_check_name(c->d, loc_of(c, cv[T_TOPOLOGY]), "topology", name);
    if (trd_topo_set_name(c->t, name) != TRD_OK)
        return TRD_ERR_NOMEM;
    switch (model) {
    case T_TREE:
        return read_tree(c, cv[T_TREE]);
    case T_BLOCK:
        return read_plugin(c, cv[T_BLOCK], 1);
    case T_RING:
        return read_plugin(c, cv[T_RING], 0);
    default:
        trd_diag_error(c->d, loc_of(c, cv[T_FLAT]),
                       "topology '%s' is flat: it names no nodes (Slurm takes them from "
                       "slurm.conf); give the machine as a tree, block or ring",
                       name);
        return TRD_OK;
    }
}

/* Deepest nesting of lists and mappings read, as the XML reader's elements:
 * libyaml's scanner takes time that grows with the square of the depth (a
 * line of 200 KB of '[' kept it busy for minutes). */
#define TRD_YAML_MAX_DEPTH 256

/* Walk the events of text only as far as nesting past TRD_YAML_MAX_DEPTH,
 * which is reported at the list or mapping that opens the level past it.
 * Malformed YAML is left to yaml_parser_load() to report.
 * \return TRD_OK, TRD_ERR_INPUT or TRD_ERR_NOMEM. */
static int check_depth(trd_diag *d, const char *file, const char *text, size_t len)
{
    yaml_parser_t parser;
    yaml_event_t ev;
    int depth = 0, rc = TRD_OK;
    if (!yaml_parser_initialize(&parser))
        return TRD_ERR_NOMEM;
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
    while (rc == TRD_OK && yaml_parser_parse(&parser, &ev)) {
        yaml_event_type_t type = ev.type;
        if (type == YAML_SEQUENCE_START_EVENT || type == YAML_MAPPING_START_EVENT) {
            if (++depth > TRD_YAML_MAX_DEPTH) {
                trd_diag_error(
                    d, (trd_loc){file, (int)ev.start_mark.line + 1, (int)ev.start_mark.column + 1},
                    "nested more than %d levels deep", TRD_YAML_MAX_DEPTH);
                rc = TRD_ERR_INPUT;
            }
        } else if (type == YAML_SEQUENCE_END_EVENT || type == YAML_MAPPING_END_EVENT) {
            depth--;
        }
        yaml_event_delete(&ev);
        if (type == YAML_STREAM_END_EVENT)
            break;
    }
    if (rc == TRD_OK && parser.error == YAML_MEMORY_ERROR)
        rc = TRD_ERR_NOMEM;
    yaml_parser_delete(&parser);
    return rc;
}

int trd_read_yaml_string(trd_topo_t t, trd_diag *d, const char *filename, const char *text,
                         size_t len)
{
    const char *file;
    int before = trd_diag_count(d);
    int rc = trd__reader_begin(t, d, filename, &text, len, &file);
    if (rc == TRD_OK)
        rc = check_depth(d, file, text, len);
    if (rc != TRD_OK)
        return rc;
    yaml_parser_t parser;
    yaml_document_t doc;
    if (!yaml_parser_initialize(&parser))
        return TRD_ERR_NOMEM;
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
    if (!yaml_parser_load(&parser, &doc)) {
        if (parser.error == YAML_MEMORY_ERROR) {
            rc = TRD_ERR_NOMEM;
        } else {
            yaml_mark_t m = parser.problem_mark;
            trd_loc at = {file, (int)m.line + 1, (int)m.column + 1};
            if (parser.context)
                trd_diag_error(d, at, "%s %s (line %d)", parser.problem, parser.context,
                               (int)parser.context_mark.line + 1);
            else
                trd_diag_error(d, at, "%s", parser.problem ? parser.problem : "malformed YAML");
        }
        yaml_parser_delete(&parser);
        return rc == TRD_OK ? TRD_ERR_INPUT : rc;
    }
    struct ctx c = {&doc, d, file, t};
    rc = read_doc(&c);
    yaml_document_delete(&doc);
    yaml_parser_delete(&parser);
    if (rc == TRD_OK && trd_diag_count(d) > before)
        rc = TRD_ERR_INPUT;
    return rc;
}

int trd_read_yaml(trd_topo_t t, trd_diag *d, const char *path)
{
    return trd__read_file(t, d, path, trd_read_yaml_string);
}
