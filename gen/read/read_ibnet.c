/* InfiniBand fabric from the text output of `ibnetdiscover` [infiniband-diags
 * ibnetdiscover(8)]:
 *
 *   # Topology file: generated on Tue Jun  5 14:15:10 2007
 *   vendid=0x2c9
 *   switchguid=0x7cfe900300a5a2a0(7cfe900300a5a2a0)
 *   Switch  36 "S-7cfe900300a5a2a0"  # "MF0;leaf1:MSB7700/U1" enhanced port 0 lid 3 lmc 0
 *   [1]   "H-248a070300f8a2c4"[1](248a070300f8a2c4)  # "node01 HCA-1" lid 12 4xEDR
 *   [35]  "S-7cfe900300a5a2b0"[1]                    # "MF0;spine1:MSB7700/U1" lid 1 4xEDR
 *
 *   caguid=0x248a070300f8a2c4
 *   Ca  1 "H-248a070300f8a2c4"  # "node01 HCA-1"
 *   [1](248a070300f8a2c4)  "S-7cfe900300a5a2a0"[1]  # lid 12 lmc 0 "MF0;leaf1:MSB7700/U1" lid 3
 * 4xEDR
 *
 * Devices are blocks of a header line (Switch or Ca, port count, "S-guid" or
 * "H-guid", then a comment with the quoted description) and one line per
 * connected port ([port], the remote "id"[port], optional (port guids), and a
 * comment that ends in the link's width and speed).  Links are read from
 * the switches' port lines; a Ca block gives its adapter's description,
 * else the switch's port line does (ibnetdiscover -S lists no Ca blocks);
 * a remote switch must have its own block.  Blank lines, '#' lines
 * and the vendid=, devid=, sysimgguid=, switchguid=, caguid= and rtguid=
 * lines carry nothing the model uses.  Routers (Rt) and links to them are
 * skipped.
 *
 * Mapping onto the model (one tree of switches, nodes on switches):
 *   - Hosts: a channel adapter belongs to the host named by the first word of
 *     its description ("node01 HCA-1" and "node01 mlx5_1" are node01; an empty
 *     description names the host after the adapter, "H-<guid>").  A host is
 *     one node, attached to the switch of its first adapter link in the file;
 *     links of its other adapters to that switch add to its bandwidth, links
 *     to other switches are not in the model.
 *   - Switches are named NAME of a "MF0;NAME:MODEL" description when that is
 *     unique, else after their id "S-<guid>".
 *   - Links: width x the data rate of one lane after line encoding: SDR 2,
 *     DDR 4, QDR 8, FDR10 10, FDR 13.64, EDR 25, HDR 50, NDR 100, XDR 200
 *     Gb/s; widths 1x, 2x, 4x, 8x, 12x.  Parallel links between two switches
 *     add.  Each switch's link class (its links down to its children) gets
 *     the bandwidth of its slowest child link and the latency of the default
 *     link (--latency); classes are named "ib-<Gb/s>Gb/s".
 *   - The tree: the height of a switch is its distance in hops to the nearest
 *     switch with a host.  The root is the switch whose farthest switch with
 *     a host is nearest (a centre of the fabric: a spine of a two-level fat
 *     tree, a core switch of a three-level one), the highest among equals,
 *     then the first in the file.  Every other switch hangs
 *     under the switch that reaches it first in a breadth-first search from
 *     the root, neighbours taken in port order; switches with no host under
 *     them are dropped (the other spines of a fat tree).  The uplink of a
 *     switch counts its links to every switch one level higher (height + 1),
 *     so that a leaf's bandwidth to the spines is the sum of its uplinks to
 *     all of them, as in the fabric (its links to its parent alone when the
 *     parent is not higher).
 */
#include "reader.h"
#include "readers.h"
#include "util.h"

#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Reading stops after this many messages. */
#define TRD_IBNET_MAX_ERRORS 100

enum { DEV_SWITCH, DEV_CA };

struct dev {
    char *id, *desc; /* "S-..." / "H-...", the description ("" if none) */
    int type;
    trd_loc loc; /* of the id on the header line */
};

/* One port line of a switch. */
struct port {
    int dev;      /* the switch that lists it */
    int port;     /* its port number */
    char *remote; /* the remote id */
    char *rdesc;  /* the remote description of the comment, or NULL */
    int rport;    /* the remote port number */
    double gbps;  /* width x lane rate */
    trd_loc loc;  /* of the remote id */
};

struct adj {
    int to;
    double gbps;
};

struct sw {
    struct adj *adj;
    int nadj, cap;
    int nhosts, keep;
    double up_gbps, link_gbps;
    char *name;
};

struct reader {
    trd_topo_t t;
    trd_diag *d;
    const char *file;
    struct dev *devs;
    int ndevs, capdevs;
    struct port *ports;
    int nports, capports;
};

static const char *skip_blank(const char *p)
{
    while (*p == ' ' || *p == '\t' || *p == '\r')
        p++;
    return p;
}

/* A quoted string at *p into a malloc'd copy; *p moves past it.  NULL when
 * there is none (*p unchanged) or out of memory (*oom set). */
static char *quoted(const char **p, int *oom)
{
    if (**p != '"')
        return NULL;
    const char *e = strchr(*p + 1, '"');
    if (!e)
        return NULL;
    char *s = strndup(*p + 1, (size_t)(e - *p - 1));
    if (!s)
        *oom = 1;
    *p = e + 1;
    return s;
}

/* A decimal number at *p into *v (0 .. 1e6); *p moves past it.  0 or -1. */
static int number(const char **p, int *v)
{
    long x = 0;
    const char *s = *p;
    while (isdigit((unsigned char)**p) && x <= 1000000)
        x = 10 * x + (*(*p)++ - '0');
    if (*p == s || x > 1000000)
        return -1;
    *v = (int)x;
    return 0;
}

/* Data rate of one lane in Gb/s after line encoding. */
static const struct {
    const char *name;
    double gbps;
} speeds[] = {{"SDR", 2},  {"DDR", 4},  {"QDR", 8},   {"FDR10", 10}, {"FDR", 14.0625 * 64 / 66},
              {"EDR", 25}, {"HDR", 50}, {"NDR", 100}, {"XDR", 200}};

/* "4xEDR" at the end of a comment into Gb/s; errors reported at loc. */
static int width_speed(struct reader *r, trd_loc loc, const char *tok, size_t len, double *gbps)
{
    const char *p = tok;
    int w = 0;
    if (number(&p, &w) || (*p != 'x' && *p != 'X') || p >= tok + len) {
        trd_diag_error(r->d, loc, "expected the link's width and speed such as 4xEDR, got '%.*s'",
                       (int)len, tok);
        return -1;
    }
    if (w != 1 && w != 2 && w != 4 && w != 8 && w != 12) {
        trd_diag_error(r->d, loc, "unknown link width '%dx', expected 1x, 2x, 4x, 8x or 12x", w);
        return -1;
    }
    p++;
    size_t slen = len - (size_t)(p - tok);
    loc.col += (int)(p - tok);
    for (size_t i = 0; i < sizeof speeds / sizeof speeds[0]; i++)
        if (strlen(speeds[i].name) == slen && strncmp(speeds[i].name, p, slen) == 0) {
            *gbps = w * speeds[i].gbps;
            return 0;
        }
    trd_diag_error(r->d, loc,
                   "unknown link speed '%.*s', expected SDR, DDR, QDR, FDR10, FDR, EDR, HDR, NDR "
                   "or XDR",
                   (int)slen, p);
    return -1;
}

/* A device header: Switch/Ca/Rt NPORTS "ID" # "desc" ...  Returns the
 * device index, -2 for a router, -1 after an error, -3 out of memory. */
static int header(struct reader *r, const char *s, int lineno, const char *kw)
{
    const char *p = skip_blank(s + strlen(kw));
    int nports, oom = 0;
    trd_loc loc = {r->file, lineno, (int)(p - s) + 1};
    if (number(&p, &nports)) {
        trd_diag_error(r->d, loc, "expected the number of ports after '%s'", kw);
        return -1;
    }
    p = skip_blank(p);
    loc.col = (int)(p - s) + 1;
    const char *idp = p;
    char *id = quoted(&p, &oom);
    if (oom)
        return -3;
    if (!id) {
        trd_diag_error(r->d, loc,
                       "expected the quoted id of the %s, such as \"%s-0002c903000e0b72\"", kw,
                       kw[0] == 'S' ? "S" : "H");
        return -1;
    }
    if (strcmp(kw, "Rt") == 0) {
        free(id);
        return -2;
    }
    char want = kw[0] == 'S' ? 'S' : 'H';
    if (id[0] != want || id[1] != '-') {
        trd_diag_error(r->d, (trd_loc){r->file, lineno, (int)(idp - s) + 1},
                       "expected a %s id \"%c-<guid>\", got \"%s\"", kw, want, id);
        free(id);
        return -1;
    }
    p = skip_blank(p);
    char *desc = NULL;
    if (*p == '#') {
        p = skip_blank(p + 1);
        desc = quoted(&p, &oom);
    }
    if (!desc && !oom)
        desc = strdup("");
    if (!desc || trd__grow((void **)&r->devs, &r->capdevs, r->ndevs + 1, sizeof *r->devs)) {
        free(id);
        free(desc);
        return -3;
    }
    r->devs[r->ndevs] = (struct dev){id, desc, kw[0] == 'S' ? DEV_SWITCH : DEV_CA, loc};
    return r->ndevs++;
}

/* A port line of device dev ([p] "ID"[q] ... # ... 4xEDR).  0, -1 after an
 * error, -3 out of memory. */
static int port_line(struct reader *r, const char *s, int lineno, int dev)
{
    const char *p = s + 1;
    int port, rport, oom = 0;
    trd_loc loc = {r->file, lineno, 2};
    if (number(&p, &port) || *p != ']') {
        trd_diag_error(r->d, loc, "expected a port number and ']'");
        return -1;
    }
    p++;
    if (*p == '(') /* the local port guid */
        while (*p && *p != ')')
            p++;
    if (*p == ')')
        p++;
    p = skip_blank(p);
    loc.col = (int)(p - s) + 1;
    trd_loc rloc = loc;
    char *remote = quoted(&p, &oom);
    if (oom)
        return -3;
    if (!remote) {
        trd_diag_error(r->d, loc, "expected the remote port, such as \"S-0002c903000e0b72\"[1]");
        return -1;
    }
    loc.col = (int)(p - s) + 1;
    if (*p != '[' || (p++, number(&p, &rport)) || *p != ']') {
        trd_diag_error(r->d, loc, "expected the remote port number in [ ] after \"%s\"", remote);
        free(remote);
        return -1;
    }
    p = skip_blank(p + 1);
    if (*p == '(')
        while (*p && *p != ')')
            p++;
    if (*p == ')')
        p++;
    p = skip_blank(p);
    if (*p != '#') {
        trd_diag_error(r->d, (trd_loc){r->file, lineno, (int)(p - s) + 1},
                       "expected '#' and the link's lid, width and speed after the remote port");
        free(remote);
        return -1;
    }
    /* The comment: the remote description (the first quoted string) and the
     * width and speed (the last word). */
    const char *c = p + 1, *q = strchr(c, '"');
    char *rdesc = NULL;
    if (q && (rdesc = quoted(&q, &oom), oom)) {
        free(remote);
        return -3;
    }
    const char *end = s + strlen(s);
    while (end > c && isspace((unsigned char)end[-1]))
        end--;
    const char *tok = end;
    while (tok > c && !isspace((unsigned char)tok[-1]) && tok[-1] != '"')
        tok--;
    double gbps = 0;
    if (tok == end) {
        trd_diag_error(r->d, (trd_loc){r->file, lineno, (int)(end - s) + 1},
                       "expected the link's width and speed such as 4xEDR at the end of the line");
        free(remote);
        free(rdesc);
        return -1;
    }
    if (width_speed(r, (trd_loc){r->file, lineno, (int)(tok - s) + 1}, tok, (size_t)(end - tok),
                    &gbps)) {
        free(remote);
        free(rdesc);
        return -1;
    }
    if (trd__grow((void **)&r->ports, &r->capports, r->nports + 1, sizeof *r->ports)) {
        free(remote);
        free(rdesc);
        return -3;
    }
    r->ports[r->nports++] = (struct port){dev, port, remote, rdesc, rport, gbps, rloc};
    return 0;
}

static const char *const guid_keys[] = {"vendid",     "devid",  "sysimgguid",
                                        "switchguid", "caguid", "rtguid"};

/* Read the lines into r->devs and r->ports.  TRD_OK or TRD_ERR_NOMEM. */
static int scan(struct reader *r, const char *text, size_t len)
{
    int lineno = 0, dev = -1, before = trd_diag_count(r->d);
    char *line = NULL;
    size_t cap = 0;
    for (size_t pos = 0; pos < len;) {
        size_t eol = pos;
        while (eol < len && text[eol] != '\n')
            eol++;
        lineno++;
        if (eol - pos + 1 > cap) {
            cap = eol - pos + 1;
            char *nl = realloc(line, cap);
            if (!nl) {
                free(line);
                return TRD_ERR_NOMEM;
            }
            line = nl;
        }
        memcpy(line, text + pos, eol - pos);
        line[eol - pos] = '\0';
        pos = eol + 1;
        const char *s = skip_blank(line);
        int rc = 0;
        if (trd_diag_count(r->d) - before >= TRD_IBNET_MAX_ERRORS) {
            trd_diag_error(r->d, (trd_loc){r->file, lineno, 1},
                           "too many errors; the rest of the file is not read");
            break;
        }
        if (*s == '\0') {
            dev = -1;
            continue;
        }
        if (*s == '#')
            continue;
        size_t w = strcspn(s, "= \t[\"");
        if (s[w] == '=') {
            size_t k = 0;
            while (k < sizeof guid_keys / sizeof guid_keys[0] &&
                   !(strlen(guid_keys[k]) == w && strncmp(s, guid_keys[k], w) == 0))
                k++;
            if (k == sizeof guid_keys / sizeof guid_keys[0])
                trd_diag_error(r->d, (trd_loc){r->file, lineno, (int)(s - line) + 1},
                               "unknown key '%.*s', expected vendid, devid, sysimgguid, "
                               "switchguid, caguid or rtguid",
                               (int)w, s);
            continue;
        }
        if ((w == 6 && strncmp(s, "Switch", 6) == 0) || (w == 2 && strncmp(s, "Ca", 2) == 0) ||
            (w == 2 && strncmp(s, "Rt", 2) == 0)) {
            char kw[8];
            snprintf(kw, sizeof kw, "%.*s", (int)w, s);
            dev = header(r, line, lineno, kw);
            if (dev == -3)
                rc = -1;
            else if (dev == -1)
                dev = -4; /* its port lines: the header's error says enough */
        } else if (*s == '[') {
            if (dev == -1 || dev == -4) {
                if (dev == -1)
                    trd_diag_error(r->d, (trd_loc){r->file, lineno, (int)(s - line) + 1},
                                   "expected a Switch or Ca line before this port line");
                dev = -4; /* said once per block */
            } else if (dev >= 0 && r->devs[dev].type == DEV_SWITCH) {
                if (port_line(r, line, lineno, dev) == -3)
                    rc = -1;
            }
            /* Ca port lines repeat what the switches say; router ports are skipped. */
        } else {
            trd_diag_error(r->d, (trd_loc){r->file, lineno, (int)(s - line) + 1},
                           "expected a Switch, Ca or port line, got '%.*s'",
                           (int)strcspn(s, " \t\r"), s);
        }
        if (rc) {
            free(line);
            return TRD_ERR_NOMEM;
        }
    }
    free(line);
    return TRD_OK;
}

/* A device id and its index, sorted by id then index. */
struct byid {
    const char *id;
    int i;
};

static int cmp_id(const void *a, const void *b)
{
    const struct byid *x = a, *y = b;
    int c = strcmp(x->id, y->id);
    return c ? c : (x->i > y->i) - (x->i < y->i);
}

/* Index of the device with id among the sorted ones, or -1. */
static int find_dev(const struct reader *r, const struct byid *sorted, const char *id)
{
    int lo = 0, hi = r->ndevs - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2, c = strcmp(id, sorted[mid].id);
        if (c == 0)
            return sorted[mid].i;
        if (c < 0)
            hi = mid - 1;
        else
            lo = mid + 1;
    }
    return -1;
}

static int add_adj(struct sw *s, int to, double gbps)
{
    for (int i = 0; i < s->nadj; i++)
        if (s->adj[i].to == to) {
            s->adj[i].gbps += gbps;
            return 0;
        }
    if (trd__grow((void **)&s->adj, &s->cap, s->nadj + 1, sizeof *s->adj))
        return -1;
    s->adj[s->nadj++] = (struct adj){to, gbps};
    return 0;
}

/* A host: its name, its switch (device index) and bandwidth there. */
struct host {
    char *name;
    int sw;
    double gbps;
    trd_loc loc;
};

/* The link class of bandwidth gbps, defined once: its name into buf. */
static int link_class(struct reader *r, double gbps, char *buf, size_t len, double *defined,
                      int *ndefined)
{
    snprintf(buf, len, "ib-%gGb/s", gbps);
    for (int i = 0; i < *ndefined; i++)
        if (defined[i] == gbps)
            return TRD_OK;
    trd_link_cost cost;
    trd_topo_default_link(r->t, &cost);
    cost.bandwidth_Bps = gbps * 1e9 / 8;
    defined[(*ndefined)++] = gbps;
    int rc = trd_topo_add_link(r->t, r->d, (trd_loc){r->file, 0, 0}, buf, cost);
    return rc == TRD_ERR_NOMEM ? rc : TRD_OK;
}

/* Switch name: NAME of "MF0;NAME:MODEL" when unique, else the id. */
static char *switch_name(const struct reader *r, int dev)
{
    const char *d = r->devs[dev].desc, *semi = strchr(d, ';'),
               *colon = semi ? strchr(semi, ':') : 0;
    if (semi && colon && colon > semi + 1) {
        size_t n = (size_t)(colon - semi - 1);
        int unique = 1;
        for (int i = 0; i < r->ndevs && unique; i++) {
            const char *o = r->devs[i].desc, *os = strchr(o, ';');
            if (i != dev && r->devs[i].type == DEV_SWITCH && os &&
                strncmp(os + 1, semi + 1, n) == 0 && os[n + 1] == ':')
                unique = 0;
        }
        if (unique)
            return strndup(semi + 1, n);
    }
    return strdup(r->devs[dev].id);
}

/* Breadth first from the switches queue[0..qt), whose dist is set (every
 * other dist -1): the dist of every switch reached, in hops, and its parent
 * (the switch it was reached from, neighbours in port order; parent may be
 * NULL).  The search order is left in queue; returns its length. */
static int bfs(const struct sw *sw, int *queue, int qt, int *dist, int *parent)
{
    for (int qh = 0; qh < qt; qh++) {
        int s = queue[qh];
        for (int j = 0; j < sw[s].nadj; j++) {
            int c = sw[s].adj[j].to;
            if (dist[c] < 0) {
                dist[c] = dist[s] + 1;
                if (parent)
                    parent[c] = s;
                queue[qt++] = c;
            }
        }
    }
    return qt;
}

/* Build the tree from the devices and ports.  TRD_OK or TRD_ERR_NOMEM. */
static int build(struct reader *r)
{
    int n = r->ndevs, rc = TRD_OK, nhosts = 0, caphosts = 0, errs = trd_diag_count(r->d);
    struct byid *sorted = malloc((size_t)(n + 1) * sizeof *sorted);
    int *queue = malloc((size_t)(n + 1) * sizeof(int));
    struct sw *sw = calloc((size_t)n + 1, sizeof *sw);
    struct host *hosts = NULL;
    trd_namemap host_map = {0};
    int *next_host = NULL, *first_host = NULL; /* each switch's hosts, in port order */
    double *defined = malloc((size_t)(n + 1) * sizeof *defined);
    /* per device: hops to the nearest switch with a host, to the root, the
     * parent in the tree, the eccentricity among host switches, a distance */
    int *height = malloc((size_t)(n + 1) * sizeof *height);
    int *depth = malloc((size_t)(n + 1) * sizeof *depth);
    int *parent = malloc((size_t)(n + 1) * sizeof *parent);
    int *ecc = calloc((size_t)n + 1, sizeof *ecc), *dist = malloc((size_t)(n + 1) * sizeof *dist);
    int ndefined = 0;
    if (!sorted || !queue || !sw || !defined || !height || !depth || !parent || !ecc || !dist) {
        rc = TRD_ERR_NOMEM;
        goto out;
    }
    for (int i = 0; i < n; i++)
        sorted[i] = (struct byid){r->devs[i].id, i};
    qsort(sorted, (size_t)n, sizeof *sorted, cmp_id);
    for (int i = 1; i < n; i++)
        if (strcmp(sorted[i].id, sorted[i - 1].id) == 0)
            trd_diag_error(r->d, r->devs[sorted[i].i].loc, "\"%s\" is already described at line %d",
                           sorted[i].id, r->devs[sorted[i - 1].i].loc.line);
    if (trd_diag_count(r->d) != errs)
        goto out;
    /* Links: switch-switch once (from the side with the smaller id and
     * port), switch-host from the switch. */
    for (int i = 0; i < r->nports && rc == TRD_OK; i++) {
        struct port *p = &r->ports[i];
        if (p->remote[0] == 'R' && p->remote[1] == '-')
            continue;
        int o = find_dev(r, sorted, p->remote);
        if (o < 0 && !(p->remote[0] == 'H' && p->remote[1] == '-')) {
            trd_diag_error(r->d, p->loc, "\"%s\" is not described in the file", p->remote);
            continue;
        }
        if (o >= 0 && r->devs[o].type == DEV_SWITCH) {
            int c = strcmp(r->devs[p->dev].id, p->remote);
            if (c > 0 || (c == 0 && p->port >= p->rport))
                continue;
            if (add_adj(&sw[p->dev], o, p->gbps) || add_adj(&sw[o], p->dev, p->gbps))
                rc = TRD_ERR_NOMEM;
            continue;
        }
        /* A host without a Ca block (ibnetdiscover -S): the port line's
         * description names it. */
        const char *desc = o >= 0 && r->devs[o].desc[0] ? r->devs[o].desc : p->rdesc;
        size_t w = desc ? strcspn(desc, " \t") : 0;
        char *name = w ? strndup(desc, w) : strdup(p->remote);
        if (!name) {
            rc = TRD_ERR_NOMEM;
            break;
        }
        int h = trd__namemap_get(&host_map, name);
        if (h >= 0) {
            if (hosts[h].sw == p->dev)
                hosts[h].gbps += p->gbps;
            free(name);
            continue;
        }
        if (trd__grow((void **)&hosts, &caphosts, nhosts + 1, sizeof *hosts)) {
            free(name);
            rc = TRD_ERR_NOMEM;
            break;
        }
        hosts[nhosts] = (struct host){name, p->dev, p->gbps, p->loc};
        if (trd__namemap_put(&host_map, name, nhosts)) {
            free(name);
            rc = TRD_ERR_NOMEM;
            break;
        }
        nhosts++;
        sw[p->dev].nhosts++;
    }
    if (rc != TRD_OK || trd_diag_count(r->d) != errs)
        goto out;
    /* Heights: hops to the nearest switch with a host. */
    int qt = 0, root = -1;
    for (int i = 0; i < n; i++) {
        height[i] = -1;
        depth[i] = -1;
        parent[i] = -1;
        if (r->devs[i].type == DEV_SWITCH && sw[i].nhosts > 0) {
            height[i] = 0;
            queue[qt++] = i;
        }
    }
    bfs(sw, queue, qt, height, NULL);
    /* The root: the switch nearest to the farthest switch with hosts (the
     * least eccentricity), then the highest, then the first. */
    for (int src = 0; src < n; src++) {
        if (height[src] != 0)
            continue;
        for (int i = 0; i < n; i++)
            dist[i] = -1;
        dist[src] = 0;
        queue[0] = src;
        qt = bfs(sw, queue, 1, dist, NULL);
        for (int k = 0; k < qt; k++)
            if (dist[queue[k]] > ecc[queue[k]])
                ecc[queue[k]] = dist[queue[k]];
    }
    for (int i = 0; i < n; i++)
        if (height[i] >= 0 &&
            (root < 0 || ecc[i] < ecc[root] || (ecc[i] == ecc[root] && height[i] > height[root])))
            root = i;
    if (root < 0) {
        trd_diag_error(r->d, (trd_loc){r->file, 0, 0}, "no host is linked to a switch");
        goto out;
    }
    /* The tree: breadth first from the root. */
    depth[root] = 0;
    queue[0] = root;
    qt = bfs(sw, queue, 1, depth, parent);
    for (int i = 0; i < n; i++)
        if (sw[i].nhosts > 0 && depth[i] < 0)
            trd_diag_error(r->d, r->devs[i].loc, "switch \"%s\" is not linked to switch \"%s\"",
                           r->devs[i].id, r->devs[root].id);
    if (trd_diag_count(r->d) != errs)
        goto out;
    /* Keep switches with hosts under them; uplinks and link classes. */
    for (int k = qt - 1; k >= 0; k--) {
        int s = queue[k];
        sw[s].keep |= sw[s].nhosts > 0;
        sw[s].link_gbps = 0;
        if (!sw[s].keep || parent[s] < 0)
            continue;
        sw[parent[s]].keep = 1;
        /* to every switch one level higher, or to the parent alone when it
         * is not higher */
        int higher = height[parent[s]] == height[s] + 1;
        for (int j = 0; j < sw[s].nadj; j++)
            if (higher ? height[sw[s].adj[j].to] == height[s] + 1 : sw[s].adj[j].to == parent[s])
                sw[s].up_gbps += sw[s].adj[j].gbps;
    }
    for (int k = 0; k < qt; k++) {
        int s = queue[k];
        if (sw[s].keep && parent[s] >= 0) {
            double *m = &sw[parent[s]].link_gbps;
            if (*m == 0 || sw[s].up_gbps < *m)
                *m = sw[s].up_gbps;
        }
    }
    for (int h = 0; h < nhosts; h++) {
        double *m = &sw[hosts[h].sw].link_gbps;
        if (*m == 0 || hosts[h].gbps < *m)
            *m = hosts[h].gbps;
    }
    next_host = malloc((size_t)(nhosts + 1) * sizeof *next_host);
    first_host = malloc((size_t)(n + 1) * sizeof *first_host);
    if (!next_host || !first_host) {
        rc = TRD_ERR_NOMEM;
        goto out;
    }
    for (int i = 0; i < n; i++)
        first_host[i] = -1;
    for (int h = nhosts - 1; h >= 0; h--) {
        next_host[h] = first_host[hosts[h].sw];
        first_host[hosts[h].sw] = h;
    }
    /* Switches in search order, each with its hosts and kept children. */
    for (int k = 0; k < qt && rc == TRD_OK; k++)
        if (sw[queue[k]].keep && !(sw[queue[k]].name = switch_name(r, queue[k])))
            rc = TRD_ERR_NOMEM;
    for (int k = 0; k < qt && rc == TRD_OK; k++) {
        int s = queue[k], id;
        char link[64];
        if (!sw[s].keep)
            continue;
        rc = link_class(r, sw[s].link_gbps, link, sizeof link, defined, &ndefined);
        if (rc == TRD_OK)
            rc = trd_topo_add_switch(r->t, r->d, r->devs[s].loc, sw[s].name, link, &id);
        for (int h = first_host[s]; h >= 0 && rc == TRD_OK; h = next_host[h])
            rc = trd_topo_switch_add_node(r->t, r->d, hosts[h].loc, id, hosts[h].name, NULL);
        for (int j = 0; j < sw[s].nadj && rc == TRD_OK; j++) {
            int c = sw[s].adj[j].to;
            if (sw[c].keep && parent[c] == s)
                rc = trd_topo_switch_add_child(r->t, r->d, r->devs[c].loc, id, sw[c].name);
        }
        if (rc == TRD_ERR_INPUT)
            rc = TRD_OK;
    }
out:
    for (int i = 0; i < n && sw; i++) {
        free(sw[i].adj);
        free(sw[i].name);
    }
    for (int h = 0; h < nhosts; h++)
        free(hosts[h].name);
    free(hosts);
    trd__namemap_free(&host_map);
    free(next_host);
    free(first_host);
    free(sw);
    free(sorted);
    free(queue);
    free(defined);
    free(height);
    free(depth);
    free(parent);
    free(ecc);
    free(dist);
    return rc;
}

int trd_read_ibnet_string(trd_topo_t t, trd_diag *d, const char *filename, const char *text,
                          size_t len)
{
    const char *file;
    int before = trd_diag_count(d);
    int rc = trd__reader_begin(t, d, filename, &text, len, &file);
    if (rc != TRD_OK)
        return rc;
    struct reader r = {t, d, file, NULL, 0, 0, NULL, 0, 0};
    rc = scan(&r, text, len);
    if (rc == TRD_OK && trd_diag_count(d) == before)
        rc = build(&r);
    for (int i = 0; i < r.ndevs; i++) {
        free(r.devs[i].id);
        free(r.devs[i].desc);
    }
    for (int i = 0; i < r.nports; i++) {
        free(r.ports[i].remote);
        free(r.ports[i].rdesc);
    }
    free(r.devs);
    free(r.ports);
    if (rc == TRD_OK && trd_diag_count(d) > before)
        rc = TRD_ERR_INPUT;
    return rc;
}

int trd_read_ibnet(trd_topo_t t, trd_diag *d, const char *path)
{
    return trd__read_file(t, d, path, trd_read_ibnet_string);
}

int trd_ibnet_detect(const char *text, size_t len)
{
    static const char *const starts[] = {
        "vendid=", "devid=", "sysimgguid=", "switchguid=", "caguid=", "# Topology file:"};
    for (size_t pos = 0; pos < len;) {
        size_t eol = pos;
        while (eol < len && text[eol] != '\n')
            eol++;
        const char *s = text + pos, *e = text + eol;
        while (s < e && (*s == ' ' || *s == '\t' || *s == '\r'))
            s++;
        pos = eol + 1;
        size_t n = (size_t)(e - s);
        for (size_t i = 0; i < sizeof starts / sizeof starts[0]; i++)
            if (n >= strlen(starts[i]) && strncmp(s, starts[i], strlen(starts[i])) == 0)
                return 1;
        if (s == e || *s == '#')
            continue; /* blank lines and other comments: keep looking */
        /* Switch 36 "S-   or   Ca 2 "H- */
        const char *p = s;
        int sw = n > 6 && strncmp(p, "Switch", 6) == 0, ca = n > 2 && strncmp(p, "Ca", 2) == 0;
        if (!sw && !ca)
            return 0;
        p += sw ? 6 : 2;
        while (p < e && (*p == ' ' || *p == '\t'))
            p++;
        while (p < e && isdigit((unsigned char)*p))
            p++;
        while (p < e && (*p == ' ' || *p == '\t'))
            p++;
        return e - p >= 3 && p[0] == '"' && p[1] == (sw ? 'S' : 'H') && p[2] == '-';
    }
    return 0;
}
