/* The topology model: constructors used by every reader, name resolution,
 * tree checks and DFS ring numbering [TREE §3.2, Lemma 4]. */
#include "topo.h"
#include "util.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct ref {
    char *name;
    trd_loc loc;
};

struct link {
    char *name;
    trd_link_cost cost;
};

struct nodetype {
    char *name;
    int npackages;
    int cores[TRD_MAX_PACKAGES];
    struct ref package_link, node_link; /* name NULL: default costs */
    trd_link_cost package_cost, node_cost;
    char *source;
    /* a shape hw->shape() reads when a node first uses the type (hw_kind
     * NULL: none, or built); hw_failed once it refused */
    const trd_nodetype_hook *hw;
    char *hw_kind, *hw_arg;
    trd_loc hw_loc;
    int hw_failed;
};

struct node {
    char *name;
    struct ref type_ref; /* name NULL: default node type */
    int type;
    int sw;
};

struct sw {
    char *name;
    trd_loc loc;
    struct ref link_ref; /* name NULL: default link */
    int link;            /* index into links, -1 = default */
    int parent;
    int depth;
    struct ref *children;
    int nchildren, capchildren;
    int *nodes; /* indices into t->nodes, attach order */
    int nnodes, capnodes;
};

struct trd_topo {
    char *name;
    struct link *links;
    int nlinks, caplinks;
    struct nodetype *types;
    int ntypes, captypes;
    struct node *nodes;
    int nnodes, capnodes;
    struct sw *sws;
    int nsws, capsws;
    trd_namemap link_map, type_map, node_map, sw_map;
    int have_default_link, have_default_type;
    trd_link_cost default_link;
    double alpha_r_ratio; /* alpha_r of a link that gives none, over its latency */
    char *source;         /* the file read, for errors of no line; NULL: none */
    struct nodetype default_type;
    int finalized;
    int *dfs_sw;   /* DFS position -> index in sws */
    int *sw_dfs;   /* index in sws -> DFS position */
    int *dfs_node; /* ring position -> index in nodes */
    int *node_dfs; /* index in nodes -> ring position */
};

/* ---- small utilities ----------------------------------------------------- */

static int set_ref(struct ref *r, const char *name, trd_loc loc)
{
    r->loc = loc;
    r->name = NULL;
    if (!name)
        return 0;
    r->name = strdup(name);
    return r->name ? 0 : -1;
}

static int find_link(trd_topo_t t, const char *name)
{
    return trd__namemap_get(&t->link_map, name);
}

static int find_type(trd_topo_t t, const char *name)
{
    return trd__namemap_get(&t->type_map, name);
}

/* ---- construction ------------------------------------------------------- */

int trd_topo_create(trd_topo_t *t)
{
    *t = calloc(1, sizeof(struct trd_topo));
    if (!*t)
        return TRD_ERR_NOMEM;
    (*t)->alpha_r_ratio = TRD_ALPHA_R_RATIO;
    return TRD_OK;
}

void trd_topo_destroy(trd_topo_t t)
{
    if (!t)
        return;
    free(t->name);
    free(t->source);
    for (int i = 0; i < t->nlinks; i++)
        free(t->links[i].name);
    for (int i = 0; i < t->ntypes; i++) {
        free(t->types[i].name);
        free(t->types[i].package_link.name);
        free(t->types[i].node_link.name);
        free(t->types[i].source);
        free(t->types[i].hw_kind);
        free(t->types[i].hw_arg);
    }
    free(t->default_type.source);
    for (int i = 0; i < t->nnodes; i++) {
        free(t->nodes[i].name);
        free(t->nodes[i].type_ref.name);
    }
    for (int i = 0; i < t->nsws; i++) {
        struct sw *s = &t->sws[i];
        free(s->name);
        free(s->link_ref.name);
        for (int c = 0; c < s->nchildren; c++)
            free(s->children[c].name);
        free(s->children);
        free(s->nodes);
    }
    free(t->links);
    free(t->types);
    free(t->nodes);
    free(t->sws);
    trd__namemap_free(&t->link_map);
    trd__namemap_free(&t->type_map);
    trd__namemap_free(&t->node_map);
    trd__namemap_free(&t->sw_map);
    free(t->dfs_sw);
    free(t->sw_dfs);
    free(t->dfs_node);
    free(t->node_dfs);
    free(t);
}

/* Length of the UTF-8 sequence at p with its code point in *cp, or 0 if p
 * starts no well-formed one (RFC 3629: no overlong forms, no surrogates). */
static size_t utf8_seq(const unsigned char *p, unsigned *cp)
{
    static const unsigned min[4] = {0, 0x80, 0x800, 0x10000};
    size_t n = 0;
    if (p[0] < 0x80)
        n = 1;
    else if (p[0] >= 0xc2 && p[0] < 0xe0)
        n = 2;
    else if (p[0] >= 0xe0 && p[0] < 0xf0)
        n = 3;
    else if (p[0] >= 0xf0 && p[0] < 0xf5)
        n = 4;
    if (n == 0)
        return 0;
    unsigned c = n == 1 ? p[0] : p[0] & (0x7fu >> n);
    for (size_t i = 1; i < n; i++) {
        if ((p[i] & 0xc0) != 0x80)
            return 0;
        c = c << 6 | (p[i] & 0x3fu);
    }
    if (c < min[n - 1] || (c >= 0xd800 && c < 0xe000) || c > 0x10ffff)
        return 0;
    *cp = c;
    return n;
}

int trd_topo_check_name(trd_diag *d, trd_loc loc, const char *what, const char *name)
{
    const unsigned char *p = (const unsigned char *)name;
    if (!*p) {
        trd_diag_error(d, loc, "%s name is empty", what);
        return TRD_ERR_INPUT;
    }
    for (size_t at = 0, n; p[at]; at += n) {
        unsigned cp = 0;
        if (!(n = utf8_seq(p + at, &cp))) {
            trd_diag_error(d, loc, "%s name: byte 0x%02x (byte %zu) is not UTF-8 text", what, p[at],
                           at + 1);
            return TRD_ERR_INPUT;
        }
        if (cp < 0x20 || (cp >= 0x7f && cp < 0xa0)) {
            trd_diag_error(d, loc, "%s name: control character U+%04X (byte %zu) is not allowed",
                           what, cp, at + 1);
            return TRD_ERR_INPUT;
        }
    }
    return TRD_OK;
}

int trd_topo_set_name(trd_topo_t t, const char *name)
{
    char *c = strdup(name);
    if (!c)
        return TRD_ERR_NOMEM;
    free(t->name);
    t->name = c;
    return TRD_OK;
}

const char *trd_topo_name(trd_topo_t t)
{
    return t->name;
}

static int check_cost(trd_diag *d, trd_loc loc, const char *what, trd_link_cost c)
{
    if (!(c.latency_s >= 0 && c.latency_s <= TRD_MAX_TIME_S)) {
        trd_diag_error(d, loc, "%s: latency must be from 0 to 1 hour", what);
        return TRD_ERR_INPUT;
    }
    if (!(c.bandwidth_Bps >= TRD_MIN_BANDWIDTH_BPS && c.bandwidth_Bps <= TRD_MAX_BANDWIDTH_BPS)) {
        trd_diag_error(d, loc, "%s: bandwidth must be from 1 B/s to 1 PB/s", what);
        return TRD_ERR_INPUT;
    }
    if (!(c.injection_Bps == 0 ||
          (c.injection_Bps >= TRD_MIN_BANDWIDTH_BPS && c.injection_Bps <= TRD_MAX_BANDWIDTH_BPS))) {
        trd_diag_error(d, loc, "%s: injection bandwidth must be 0 (none) or from 1 B/s to 1 PB/s",
                       what);
        return TRD_ERR_INPUT;
    }
    /* alpha_r is the part of the latency that a further message in flight
     * still costs [RM §3, Eq. 3]: never more than the latency itself */
    if (!TRD_ALPHA_R_OK(c)) {
        trd_diag_error(d, loc, "%s: alpha_r must be >= 0 and at most the latency", what);
        return TRD_ERR_INPUT;
    }
    return TRD_OK;
}

int trd_topo_add_link(trd_topo_t t, trd_diag *d, trd_loc loc, const char *name, trd_link_cost cost)
{
    trd_topo_check_name(d, loc, "link", name); /* reported; kept, so that its uses resolve */
    if (find_link(t, name) >= 0) {
        trd_diag_error(d, loc, "link '%s' is already defined", name);
        return TRD_ERR_INPUT;
    }
    char what[300];
    snprintf(what, sizeof what, "link '%s'", name);
    if (check_cost(d, loc, what, cost))
        return TRD_ERR_INPUT;
    cost.alpha_r_s = fmin(cost.alpha_r_s, cost.latency_s); /* rounding only, see TRD_ALPHA_R_OK */
    if (trd__grow((void **)&t->links, &t->caplinks, t->nlinks + 1, sizeof(struct link)))
        return TRD_ERR_NOMEM;
    struct link *l = &t->links[t->nlinks];
    if (!(l->name = strdup(name)) || trd__namemap_put(&t->link_map, l->name, t->nlinks)) {
        free(l->name);
        return TRD_ERR_NOMEM;
    }
    l->cost = cost;
    t->nlinks++;
    return TRD_OK;
}

static int check_shape(trd_diag *d, trd_loc loc, const char *name, int npackages, const int *cores)
{
    if (npackages < 1 || npackages > TRD_MAX_PACKAGES) {
        trd_diag_error(d, loc, "node type '%s': expected 1 to %d packages, got %d", name,
                       TRD_MAX_PACKAGES, npackages);
        return TRD_ERR_INPUT;
    }
    for (int p = 0; p < npackages; p++) {
        if (cores[p] < 1 || cores[p] > 65536) {
            trd_diag_error(d, loc, "node type '%s': package %d: expected 1 to 65536 cores, got %d",
                           name, p, cores[p]);
            return TRD_ERR_INPUT;
        }
    }
    return TRD_OK;
}

/* A new type named name, its shape not set, at the end of t->types.
 * TRD_OK, TRD_ERR_INPUT (reported) or TRD_ERR_NOMEM. */
static int new_type(trd_topo_t t, trd_diag *d, trd_loc loc, const char *name,
                    const char *package_link, const char *node_link, const char *source,
                    struct nodetype **out)
{
    trd_topo_check_name(d, loc, "node type", name);
    if (find_type(t, name) >= 0) {
        trd_diag_error(d, loc, "node type '%s' is already defined", name);
        return TRD_ERR_INPUT;
    }
    if (trd__grow((void **)&t->types, &t->captypes, t->ntypes + 1, sizeof(struct nodetype)))
        return TRD_ERR_NOMEM;
    struct nodetype *ty = &t->types[t->ntypes];
    memset(ty, 0, sizeof *ty);
    if (!(ty->name = strdup(name)) || set_ref(&ty->package_link, package_link, loc) ||
        set_ref(&ty->node_link, node_link, loc) || !(ty->source = strdup(source ? source : "")) ||
        trd__namemap_put(&t->type_map, ty->name, t->ntypes)) {
        free(ty->source);
        free(ty->name);
        free(ty->package_link.name);
        free(ty->node_link.name);
        return TRD_ERR_NOMEM;
    }
    t->ntypes++;
    *out = ty;
    return TRD_OK;
}

int trd_topo_add_nodetype(trd_topo_t t, trd_diag *d, trd_loc loc, const char *name, int npackages,
                          const int *cores_per_package, const char *package_link,
                          const char *node_link, const char *source)
{
    struct nodetype *ty;
    if (find_type(t, name) < 0 && check_shape(d, loc, name, npackages, cores_per_package))
        return TRD_ERR_INPUT;
    int rc = new_type(t, d, loc, name, package_link, node_link, source, &ty);
    if (rc != TRD_OK)
        return rc;
    ty->npackages = npackages;
    memcpy(ty->cores, cores_per_package, (size_t)npackages * sizeof(int));
    return TRD_OK;
}

int trd_topo_add_nodetype_hwloc(trd_topo_t t, trd_diag *d, trd_loc loc, const char *name,
                                const trd_nodetype_hook *hook, const char *kind, const char *arg,
                                trd_loc arg_loc, const char *package_link, const char *node_link,
                                const char *source)
{
    struct nodetype *ty;
    char err[512];
    if (!hook || !hook->shape || !hook->check_synthetic) {
        trd_diag_error(d, arg_loc,
                       "node type '%s' is described for hwloc, which this program "
                       "does not read",
                       name);
        return TRD_ERR_INPUT;
    }
    if (find_type(t, name) < 0 && strcmp(kind, "synthetic") == 0 &&
        hook->check_synthetic(arg, err, sizeof err) != TRD_OK) {
        trd_diag_error(d, arg_loc, "%s", err);
        return TRD_ERR_INPUT;
    }
    int rc = new_type(t, d, loc, name, package_link, node_link, source, &ty);
    if (rc != TRD_OK)
        return rc;
    ty->hw = hook;
    ty->hw_loc = arg_loc;
    if (!(ty->hw_kind = strdup(kind)) || (arg && !(ty->hw_arg = strdup(arg))))
        return TRD_ERR_NOMEM; /* the type stays, unbuilt; destroy frees it */
    return TRD_OK;
}

/* Build type ty from hwloc if it waits for that; reports a refusal at its
 * description.  TRD_OK (also after a refusal, then hw_failed) or
 * TRD_ERR_NOMEM. */
static int build_type(trd_topo_t t, trd_diag *d, int ty)
{
    struct nodetype *y = &t->types[ty];
    int np, cores[TRD_MAX_PACKAGES];
    char err[512];
    if (!y->hw_kind || y->hw_failed)
        return TRD_OK;
    int rc = y->hw->shape(y->hw_kind, y->hw_arg, &np, cores, NULL, err, sizeof err);
    if (rc == TRD_ERR_NOMEM)
        return rc;
    if (rc != TRD_OK || check_shape(d, y->hw_loc, y->name, np, cores)) {
        if (rc != TRD_OK)
            trd_diag_error(d, y->hw_loc, "%s", err);
        y->hw_failed = 1;
        return TRD_OK;
    }
    y->npackages = np;
    memcpy(y->cores, cores, (size_t)np * sizeof(int));
    free(y->hw_kind);
    y->hw_kind = NULL;
    return TRD_OK;
}

int trd_topo_set_source(trd_topo_t t, const char *file)
{
    if (t->source || !file)
        return TRD_OK; /* the first file read names the topology */
    return (t->source = strdup(file)) ? TRD_OK : TRD_ERR_NOMEM;
}

int trd_topo_set_alpha_r_ratio(trd_topo_t t, double ratio)
{
    if (!(ratio >= 0 && ratio <= 1))
        return TRD_ERR_INPUT;
    t->alpha_r_ratio = ratio;
    return TRD_OK;
}

double trd_topo_alpha_r_ratio(trd_topo_t t)
{
    return t->alpha_r_ratio;
}

int trd_topo_set_default_link(trd_topo_t t, trd_link_cost cost)
{
    t->default_link = cost;
    t->have_default_link = 1;
    return TRD_OK;
}

int trd_topo_default_link(trd_topo_t t, trd_link_cost *cost)
{
    if (t->have_default_link) {
        *cost = t->default_link;
        return 1;
    }
    *cost = (trd_link_cost){TRD_DEFAULT_NET_LATENCY_S, TRD_DEFAULT_NET_BANDWIDTH_BPS, 0, 0};
    return 0;
}

int trd_topo_set_default_nodetype(trd_topo_t t, int npackages, const int *cores_per_package,
                                  const char *source)
{
    if (npackages < 1 || npackages > TRD_MAX_PACKAGES)
        return TRD_ERR_INPUT;
    for (int p = 0; p < npackages; p++)
        if (cores_per_package[p] < 1)
            return TRD_ERR_INPUT;
    struct nodetype *ty = &t->default_type;
    char *src = strdup(source ? source : "default");
    if (!src)
        return TRD_ERR_NOMEM;
    free(ty->source);
    ty->source = src;
    ty->npackages = npackages;
    memcpy(ty->cores, cores_per_package, (size_t)npackages * sizeof(int));
    t->have_default_type = 1;
    return TRD_OK;
}

int trd_topo_add_switch(trd_topo_t t, trd_diag *d, trd_loc loc, const char *name, const char *link,
                        int *swid)
{
    trd_topo_check_name(d, loc, "switch", name);
    int prev = trd__namemap_get(&t->sw_map, name);
    if (prev >= 0) {
        trd_diag_error(d, loc, "switch '%s' is already defined at line %d", name,
                       t->sws[prev].loc.line);
        return TRD_ERR_INPUT;
    }
    if (trd__grow((void **)&t->sws, &t->capsws, t->nsws + 1, sizeof(struct sw)))
        return TRD_ERR_NOMEM;
    struct sw *s = &t->sws[t->nsws];
    memset(s, 0, sizeof *s);
    s->loc = loc;
    s->parent = -1;
    s->link = -1;
    if (!(s->name = strdup(name)) || set_ref(&s->link_ref, link, loc) ||
        trd__namemap_put(&t->sw_map, s->name, t->nsws)) {
        free(s->name);
        free(s->link_ref.name);
        return TRD_ERR_NOMEM;
    }
    *swid = t->nsws++;
    return TRD_OK;
}

int trd_topo_switch_add_node(trd_topo_t t, trd_diag *d, trd_loc loc, int swid, const char *name,
                             const char *nodetype)
{
    if (swid < 0 || swid >= t->nsws)
        return TRD_ERR_STATE;
    trd_topo_check_name(d, loc, "node", name);
    if (trd__namemap_get(&t->node_map, name) >= 0) {
        int prev = trd__namemap_get(&t->node_map, name);
        trd_diag_error(d, loc, "node '%s' is already attached to switch '%s'", name,
                       t->sws[t->nodes[prev].sw].name);
        return TRD_ERR_INPUT;
    }
    if (t->nnodes >= TRD_MAX_NODES) {
        trd_diag_error(d, loc, "too many nodes (at most %d)", TRD_MAX_NODES);
        return TRD_ERR_INPUT;
    }
    struct sw *s = &t->sws[swid];
    if (trd__grow((void **)&t->nodes, &t->capnodes, t->nnodes + 1, sizeof(struct node)) ||
        trd__grow((void **)&s->nodes, &s->capnodes, s->nnodes + 1, sizeof(int)))
        return TRD_ERR_NOMEM;
    struct node *n = &t->nodes[t->nnodes];
    memset(n, 0, sizeof *n);
    n->sw = swid;
    n->type = -1;
    if (!(n->name = strdup(name)) || set_ref(&n->type_ref, nodetype, loc) ||
        trd__namemap_put(&t->node_map, n->name, t->nnodes)) {
        free(n->name);
        free(n->type_ref.name);
        return TRD_ERR_NOMEM;
    }
    s->nodes[s->nnodes++] = t->nnodes++;
    return TRD_OK;
}

int trd_topo_switch_add_child(trd_topo_t t, trd_diag *d, trd_loc loc, int swid, const char *child)
{
    (void)d;
    if (swid < 0 || swid >= t->nsws)
        return TRD_ERR_STATE;
    struct sw *s = &t->sws[swid];
    if (trd__grow((void **)&s->children, &s->capchildren, s->nchildren + 1, sizeof(struct ref)))
        return TRD_ERR_NOMEM;
    if (set_ref(&s->children[s->nchildren], child, loc))
        return TRD_ERR_NOMEM;
    s->nchildren++;
    return TRD_OK;
}

/* ---- finalize ----------------------------------------------------------- */

static int resolve_link_cost(trd_topo_t t, trd_diag *d, const struct ref *r, trd_link_cost dflt,
                             trd_link_cost *out)
{
    if (!r->name) {
        *out = dflt;
        return 0;
    }
    int l = find_link(t, r->name);
    if (l < 0) {
        trd_diag_error(d, r->loc, "unknown link '%s'", r->name);
        return -1;
    }
    *out = t->links[l].cost;
    return 0;
}

int trd_topo_finalize(trd_topo_t t, trd_diag *d)
{
    int errs = trd_diag_count(d);
    if (t->finalized)
        return TRD_ERR_STATE;
    const trd_link_cost pkg_default = {TRD_DEFAULT_PACKAGE_LATENCY_S,
                                       TRD_DEFAULT_PACKAGE_BANDWIDTH_BPS, 0, 0};
    const trd_link_cost node_default = {TRD_DEFAULT_NODE_LATENCY_S, TRD_DEFAULT_NODE_BANDWIDTH_BPS,
                                        0, 0};
    for (int i = 0; i < t->ntypes; i++) {
        struct nodetype *ty = &t->types[i];
        resolve_link_cost(t, d, &ty->package_link, pkg_default, &ty->package_cost);
        resolve_link_cost(t, d, &ty->node_link, node_default, &ty->node_cost);
    }
    /* The default node type becomes a real type the first time a node needs it. */
    int default_type = -1;
    for (int i = 0; i < t->nnodes; i++) {
        struct node *n = &t->nodes[i];
        if (n->type_ref.name) {
            n->type = find_type(t, n->type_ref.name);
            if (n->type >= 0 && build_type(t, d, n->type) != TRD_OK)
                return TRD_ERR_NOMEM;
            /* a node list like n[0-999] shares one location: report it once */
            const struct node *prev = i > 0 ? &t->nodes[i - 1] : NULL;
            if (n->type < 0 && !(prev && prev->type < 0 && prev->type_ref.name &&
                                 strcmp(prev->type_ref.name, n->type_ref.name) == 0 &&
                                 prev->type_ref.loc.line == n->type_ref.loc.line &&
                                 prev->type_ref.loc.col == n->type_ref.loc.col))
                trd_diag_error(d, n->type_ref.loc, "unknown node type '%s'", n->type_ref.name);
            continue;
        }
        if (!t->have_default_type) {
            trd_diag_error(d, n->type_ref.loc,
                           "node '%s' has no node type and no default node type is given", n->name);
            continue;
        }
        if (default_type < 0) {
            const char *nm = find_type(t, "default") < 0 ? "default" : "default-nodetype";
            if (trd_topo_add_nodetype(t, d, n->type_ref.loc, nm, t->default_type.npackages,
                                      t->default_type.cores, NULL, NULL, t->default_type.source))
                return TRD_ERR_NOMEM;
            default_type = t->ntypes - 1;
            t->types[default_type].package_cost = pkg_default;
            t->types[default_type].node_cost = node_default;
            n = &t->nodes[i];
        }
        n->type = default_type;
    }
    for (int i = 0; i < t->nsws; i++) {
        struct sw *s = &t->sws[i];
        if (s->link_ref.name) {
            s->link = find_link(t, s->link_ref.name);
            if (s->link < 0)
                trd_diag_error(d, s->link_ref.loc, "unknown link '%s'", s->link_ref.name);
        } else if (!t->have_default_link) {
            trd_diag_error(d, s->loc, "switch '%s' has no link and no default link is given",
                           s->name);
        }
        for (int c = 0; c < s->nchildren; c++) {
            struct ref *r = &s->children[c];
            int ch = trd__namemap_get(&t->sw_map, r->name);
            if (ch < 0) {
                trd_diag_error(d, r->loc, "unknown switch '%s'", r->name);
            } else if (ch == i) {
                trd_diag_error(d, r->loc, "switch '%s' cannot contain itself", r->name);
            } else if (t->sws[ch].parent >= 0) {
                trd_diag_error(d, r->loc, "switch '%s' is already a child of switch '%s'", r->name,
                               t->sws[t->sws[ch].parent].name);
            } else {
                t->sws[ch].parent = i;
            }
        }
    }
    if (trd_diag_count(d) > errs)
        return TRD_ERR_INPUT;

    if (t->nsws == 0) {
        trd_diag_error(d, (trd_loc){t->source ? trd_diag_intern(d, t->source) : NULL, 0, 0},
                       "the topology has no switch");
        return TRD_ERR_INPUT;
    }
    int root = -1;
    for (int i = 0; i < t->nsws; i++) {
        if (t->sws[i].parent >= 0)
            continue;
        if (root >= 0) {
            trd_diag_error(d, t->sws[i].loc,
                           "switch '%s' is a second root (switch '%s' is the first); "
                           "expected one switch that contains all others",
                           t->sws[i].name, t->sws[root].name);
            return TRD_ERR_INPUT;
        }
        root = i;
    }
    if (root < 0) {
        trd_diag_error(d, t->sws[0].loc, "the switches form a cycle; expected a tree");
        return TRD_ERR_INPUT;
    }
    /* Iterative pre-order DFS from the root, children in listed order. */
    t->dfs_sw = malloc((size_t)t->nsws * sizeof(int));
    t->sw_dfs = malloc((size_t)t->nsws * sizeof(int));
    t->dfs_node = malloc((size_t)(t->nnodes ? t->nnodes : 1) * sizeof(int));
    t->node_dfs = malloc((size_t)(t->nnodes ? t->nnodes : 1) * sizeof(int));
    int *stack = malloc((size_t)t->nsws * sizeof(int));
    if (!t->dfs_sw || !t->sw_dfs || !t->dfs_node || !t->node_dfs || !stack) {
        free(stack);
        return TRD_ERR_NOMEM;
    }
    for (int i = 0; i < t->nsws; i++)
        t->sw_dfs[i] = -1;
    int top = 0, nvis = 0, nn = 0;
    stack[top++] = root;
    t->sws[root].depth = 0;
    while (top > 0) {
        int s = stack[--top];
        t->sw_dfs[s] = nvis;
        t->dfs_sw[nvis++] = s;
        for (int k = 0; k < t->sws[s].nnodes; k++) {
            t->node_dfs[t->sws[s].nodes[k]] = nn;
            t->dfs_node[nn++] = t->sws[s].nodes[k];
        }
        for (int c = t->sws[s].nchildren - 1; c >= 0; c--) {
            int ch = trd__namemap_get(&t->sw_map, t->sws[s].children[c].name);
            t->sws[ch].depth = t->sws[s].depth + 1;
            stack[top++] = ch;
        }
    }
    free(stack);
    if (nvis != t->nsws) {
        for (int i = 0; i < t->nsws; i++) {
            if (t->sw_dfs[i] < 0) {
                trd_diag_error(d, t->sws[i].loc,
                               "switch '%s' is on a cycle not connected to root '%s'",
                               t->sws[i].name, t->sws[root].name);
                break;
            }
        }
        return TRD_ERR_INPUT;
    }
    if (t->nnodes == 0) {
        trd_diag_error(d, t->sws[root].loc, "the topology has no node");
        return TRD_ERR_INPUT;
    }
    if (!t->name)
        trd_topo_set_name(t, t->sws[root].name);
    t->finalized = 1;
    return TRD_OK;
}

/* ---- queries ------------------------------------------------------------ */

int trd_topo_nswitches(trd_topo_t t)
{
    return t->finalized ? t->nsws : 0;
}

static const struct sw *sw_at(trd_topo_t t, int i)
{
    return &t->sws[t->dfs_sw[i]];
}

const char *trd_topo_switch_name(trd_topo_t t, int i)
{
    return sw_at(t, i)->name;
}

int trd_topo_switch_parent(trd_topo_t t, int i)
{
    int p = sw_at(t, i)->parent;
    return p < 0 ? -1 : t->sw_dfs[p];
}

int trd_topo_switch_depth(trd_topo_t t, int i)
{
    return sw_at(t, i)->depth;
}

trd_link_cost trd_topo_switch_link(trd_topo_t t, int i)
{
    const struct sw *s = sw_at(t, i);
    return s->link < 0 ? t->default_link : t->links[s->link].cost;
}

const char *trd_topo_switch_link_name(trd_topo_t t, int i)
{
    const struct sw *s = sw_at(t, i);
    return s->link < 0 ? "default" : t->links[s->link].name;
}

int trd_topo_nnodes(trd_topo_t t)
{
    return t->finalized ? t->nnodes : 0;
}

const char *trd_topo_node_name(trd_topo_t t, int i)
{
    return t->nodes[t->dfs_node[i]].name;
}

int trd_topo_node_switch(trd_topo_t t, int i)
{
    return t->sw_dfs[t->nodes[t->dfs_node[i]].sw];
}

int trd_topo_node_type(trd_topo_t t, int i)
{
    return t->nodes[t->dfs_node[i]].type;
}

int trd_topo_find_node(trd_topo_t t, const char *name)
{
    int k = trd__namemap_get(&t->node_map, name);
    if (k < 0 || !t->finalized)
        return -1;
    return t->node_dfs[k];
}

int trd_topo_nnodetypes(trd_topo_t t)
{
    return t->ntypes;
}

const char *trd_topo_nodetype_name(trd_topo_t t, int ty)
{
    return t->types[ty].name;
}

int trd_topo_nodetype_npackages(trd_topo_t t, int ty)
{
    return t->types[ty].npackages;
}

int trd_topo_nodetype_cores(trd_topo_t t, int ty, int package)
{
    return t->types[ty].cores[package];
}

int trd_topo_nodetype_ncores(trd_topo_t t, int ty)
{
    int n = 0;
    for (int p = 0; p < t->types[ty].npackages; p++)
        n += t->types[ty].cores[p];
    return n;
}

const char *trd_topo_nodetype_source(trd_topo_t t, int ty)
{
    return t->types[ty].source;
}

trd_link_cost trd_topo_nodetype_package_link(trd_topo_t t, int ty)
{
    return t->types[ty].package_cost;
}

trd_link_cost trd_topo_nodetype_node_link(trd_topo_t t, int ty)
{
    return t->types[ty].node_cost;
}

trd_link_cost trd_topo_path_cost(trd_topo_t t, int a, int b)
{
    trd_link_cost c = {0, INFINITY, 0, 0};
    if (a == b)
        return c;
    int sa = trd_topo_node_switch(t, a), sb = trd_topo_node_switch(t, b);
    /* node -> its switch uses that switch's link class, on both ends */
    trd_link_cost la = trd_topo_switch_link(t, sa), lb = trd_topo_switch_link(t, sb);
    c.latency_s = la.latency_s + lb.latency_s;
    c.bandwidth_Bps = fmin(la.bandwidth_Bps, lb.bandwidth_Bps);
    c.injection_Bps = la.injection_Bps;
    /* the largest alpha_r of the link classes on the path [RM §3, Eq. 3] */
    c.alpha_r_s = fmax(la.alpha_r_s, lb.alpha_r_s);
    while (sa != sb) {
        /* climb the deeper side; the hop child->parent uses the parent's link */
        int *s = trd_topo_switch_depth(t, sa) >= trd_topo_switch_depth(t, sb) ? &sa : &sb;
        int p = trd_topo_switch_parent(t, *s);
        trd_link_cost l = trd_topo_switch_link(t, p);
        c.latency_s += l.latency_s;
        c.bandwidth_Bps = fmin(c.bandwidth_Bps, l.bandwidth_Bps);
        c.alpha_r_s = fmax(c.alpha_r_s, l.alpha_r_s);
        *s = p;
    }
    return c;
}
