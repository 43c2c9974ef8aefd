/* A machine as a SimGrid platform and an smpirun hostfile (simgrid.h). */
#include "simgrid.h"

#include <string.h>

/* Write s with XML's five special characters escaped. */
static void put_xml(FILE *f, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '&':
            fputs("&amp;", f);
            break;
        case '<':
            fputs("&lt;", f);
            break;
        case '>':
            fputs("&gt;", f);
            break;
        case '"':
            fputs("&quot;", f);
            break;
        case '\'':
            fputs("&apos;", f);
            break;
        default:
            fputc(*s, f);
        }
    }
}

/* A link element: bandwidth in bytes per second, latency in seconds. */
static void put_link(FILE *f, const char *name, const char *suffix, double bandwidth_Bps,
                     double latency_s, const char *sharing)
{
    fputs("    <link id=\"", f);
    put_xml(f, name);
    fprintf(f, "%s\" bandwidth=\"%.9gBps\" latency=\"%.9gs\" sharing_policy=\"%s\"/>\n", suffix,
            bandwidth_Bps, latency_s, sharing);
}

/* The router name of switch i: its own, unless a node has that name. */
static void put_router(FILE *f, trd_topo_t t, int i)
{
    const char *name = trd_topo_switch_name(t, i);
    put_xml(f, name);
    if (trd_topo_find_node(t, name) >= 0)
        fputs("_switch", f);
}

/* One route, src to dst (a host, or the router of a switch), over links
 * given as (name, suffix, direction) triples; direction NULL for links that
 * are not split duplex. */
struct hop {
    const char *name, *suffix, *dir;
};

static void put_route(FILE *f, trd_topo_t t, const char *src_host, int src_sw, const char *dst_host,
                      int dst_sw, const struct hop *hops, int nhops)
{
    fputs("    <route src=\"", f);
    if (src_host)
        put_xml(f, src_host);
    else
        put_router(f, t, src_sw);
    fputs("\" dst=\"", f);
    if (dst_host)
        put_xml(f, dst_host);
    else
        put_router(f, t, dst_sw);
    fputs("\" symmetrical=\"NO\">", f);
    for (int i = 0; i < nhops; i++) {
        fputs("<link_ctn id=\"", f);
        put_xml(f, hops[i].name);
        fputs(hops[i].suffix, f);
        if (hops[i].dir)
            fprintf(f, "\" direction=\"%s", hops[i].dir);
        fputs("\"/>", f);
    }
    fputs("</route>\n", f);
}

/* The cost of two ranks of one node of type ty: the slower of its package
 * and node links, as the model takes it (trd_levels.intra). */
static trd_link_cost intra_cost(trd_topo_t t, int ty)
{
    trd_link_cost c = trd_topo_nodetype_package_link(t, ty);
    if (trd_topo_nodetype_npackages(t, ty) > 1) {
        trd_link_cost n = trd_topo_nodetype_node_link(t, ty);
        if (n.latency_s > c.latency_s)
            c.latency_s = n.latency_s;
        if (n.bandwidth_Bps < c.bandwidth_Bps)
            c.bandwidth_Bps = n.bandwidth_Bps;
    }
    return c;
}

int trd_simgrid_platform(FILE *f, trd_topo_t t)
{
    int S = trd_topo_nswitches(t), N = trd_topo_nnodes(t);
    /* no name in the comment: names are written only through put_xml, and
     * a comment takes no escapes (the machine's name is the zone's id) */
    fprintf(f,
            "<?xml version='1.0'?>\n"
            "<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
            "<!-- SimGrid platform of a machine (the zone), written by treeduce-gen %s.\n"
            "     %d nodes (hosts, one per node, ring order) under %d switches (routers).\n"
            "     SMPI simulates the model's link costs with its network factors set to 1:\n"
            "     smpi/lat-factor and smpi/bw-factor 0:1, network/crosstraffic 0,\n"
            "     network/TCP-gamma 0 (smpirun's cfg option). -->\n",
            TRD_VERSION, N, S);
    fputs("<platform version=\"4.1\">\n  <zone id=\"", f);
    put_xml(f, trd_topo_name(t));
    fprintf(f, "\" routing=\"%s\">\n", N + S <= TRD_SIMGRID_FLOYD_MAX ? "Floyd" : "DijkstraCache");

    for (int i = 0; i < N; i++) {
        fputs("    <host id=\"", f);
        put_xml(f, trd_topo_node_name(t, i));
        fprintf(f, "\" speed=\"1Gf\" core=\"%d\"/>\n",
                trd_topo_nodetype_ncores(t, trd_topo_node_type(t, i)));
    }
    for (int i = 0; i < S; i++) {
        fputs("    <router id=\"", f);
        put_router(f, t, i);
        fputs("\"/>\n", f);
    }
    for (int i = 0; i < N; i++) {
        const char *name = trd_topo_node_name(t, i);
        trd_link_cost l = trd_topo_switch_link(t, trd_topo_node_switch(t, i));
        trd_link_cost in = intra_cost(t, trd_topo_node_type(t, i));
        put_link(f, name, "_link", l.bandwidth_Bps, l.latency_s, "SPLITDUPLEX");
        if (l.injection_Bps > 0)
            put_link(f, name, "_nic", l.injection_Bps, 0, "SPLITDUPLEX");
        put_link(f, name, "_loopback", in.bandwidth_Bps, in.latency_s, "FATPIPE");
    }
    for (int i = 0; i < S; i++) {
        int p = trd_topo_switch_parent(t, i);
        if (p < 0)
            continue;
        trd_link_cost l = trd_topo_switch_link(t, p);
        const char *name = trd_topo_switch_name(t, i);
        put_link(f, name, "_up", l.bandwidth_Bps, l.latency_s, "SPLITDUPLEX");
    }
    for (int i = 0; i < N; i++) {
        const char *name = trd_topo_node_name(t, i);
        int sw = trd_topo_node_switch(t, i);
        int nic = trd_topo_switch_link(t, sw).injection_Bps > 0;
        struct hop up[2] = {{name, "_nic", "UP"}, {name, "_link", "UP"}};
        struct hop down[2] = {{name, "_link", "DOWN"}, {name, "_nic", "DOWN"}};
        struct hop loop = {name, "_loopback", NULL};
        put_route(f, t, name, -1, name, -1, &loop, 1);
        put_route(f, t, name, -1, NULL, sw, up + !nic, 1 + nic);
        put_route(f, t, NULL, sw, name, -1, down, 1 + nic);
    }
    for (int i = 0; i < S; i++) {
        int p = trd_topo_switch_parent(t, i);
        if (p < 0)
            continue;
        const char *name = trd_topo_switch_name(t, i);
        struct hop up = {name, "_up", "UP"}, down = {name, "_up", "DOWN"};
        put_route(f, t, NULL, i, NULL, p, &up, 1);
        put_route(f, t, NULL, p, NULL, i, &down, 1);
    }
    fputs("  </zone>\n</platform>\n", f);
    return fflush(f) == 0 && !ferror(f) ? TRD_OK : TRD_ERR_IO;
}

int trd_simgrid_check_names(trd_topo_t t, char *err, size_t errlen)
{
    for (int i = 0, n = trd_topo_nnodes(t); i < n; i++)
        if (strchr(trd_topo_node_name(t, i), ' ')) {
            snprintf(err, errlen,
                     "node '%s': an smpirun hostfile cannot hold a name with a blank "
                     "(nothing written)",
                     trd_topo_node_name(t, i));
            return TRD_ERR_INPUT;
        }
    return TRD_OK;
}

int trd_simgrid_hostfile(FILE *f, trd_topo_t t)
{
    for (int i = 0, n = trd_topo_nnodes(t); i < n; i++)
        fprintf(f, "%s:%d\n", trd_topo_node_name(t, i),
                trd_topo_nodetype_ncores(t, trd_topo_node_type(t, i)));
    return fflush(f) == 0 && !ferror(f) ? TRD_OK : TRD_ERR_IO;
}

int trd_simgrid_hostfile_path(const char *platform, char *out, size_t len)
{
    size_t n = strlen(platform);
    if (n >= 4 && strcmp(platform + n - 4, ".xml") == 0)
        n -= 4;
    if (n + sizeof ".hosts" > len)
        return TRD_ERR_INPUT;
    memcpy(out, platform, n);
    memcpy(out + n, ".hosts", sizeof ".hosts");
    return TRD_OK;
}
