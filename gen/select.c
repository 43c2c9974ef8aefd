/* Cost model and the NAP / ring threshold [MPICH §3, NAP Eq. 4-6, TREE §3.2]. */
#include <math.h>
#include <stdint.h>

#include "../runtime/trd_nap.h"
#include "plan.h"

static double log2_ceil(int n)
{
    int s = 0;
    while ((1 << s) < n)
        s++;
    return s;
}

/* one message of b bytes over link l */
static double msg(trd_link_cost l, double b)
{
    return l.latency_s + b / l.bandwidth_Bps;
}

double trd_model_rd(const trd_plan *p, int nodes, int ppn, double bytes)
{
    /* log2(ppn) steps stay on the node, log2(nodes) cross the network with
     * ppn messages injected at once (max-rate [NAP Eq. 3-4]) */
    double intra = log2_ceil(ppn) * (msg(p->intra, bytes) + bytes * p->gamma_s_per_byte);
    double inj = p->far_inter.injection_Bps > 0 ? ppn * bytes / p->far_inter.injection_Bps : 0;
    double one = fmax(msg(p->far_inter, bytes), p->far_inter.latency_s + inj);
    double inter = log2_ceil(nodes) * (one + bytes * p->gamma_s_per_byte);
    return intra + inter;
}

double trd_model_nap(const trd_plan *p, int nodes, int ppn, double bytes)
{
    int lanes = ppn, k = trd_nap_radix(lanes);
    int steps = trd_nap_nsteps(nodes, k);
    double intra = log2_ceil(ppn) * (msg(p->intra, bytes) + bytes * p->gamma_s_per_byte);
    int per_lane = (k + lanes - 1) / lanes; /* messages a lane receives per step */
    double inj = p->far_inter.injection_Bps > 0 ? ppn * bytes / p->far_inter.injection_Bps : 0;
    double one = fmax(msg(p->far_inter, bytes), p->far_inter.latency_s + inj);
    double inter = steps * per_lane * (one + bytes * p->gamma_s_per_byte);
    return (steps + 1) * intra + inter;
}

double trd_model_ring(const trd_plan *p, int nodes, int ppn, double bytes)
{
    int np = nodes * ppn;
    if (np <= 1)
        return 0;
    trd_link_cost l = nodes > 1 ? p->ring_inter : p->intra;
    double block = bytes / np;
    return 2.0 * (np - 1) * msg(l, block) + (np - 1) * block * p->gamma_s_per_byte;
}

size_t trd_model_crossover(const trd_plan *p, int nodes, int ppn)
{
    /* scan powers of two, then bisect between the last NAP-better size and
     * the first ring-better one */
    double lo = 0, hi = -1;
    for (double b = 1; b <= 1099511627776.0; b *= 2) {
        if (trd_model_ring(p, nodes, ppn, b) < trd_model_nap(p, nodes, ppn, b)) {
            hi = b;
            break;
        }
        lo = b;
    }
    if (hi < 0)
        return SIZE_MAX;
    while (hi - lo > 1) {
        double mid = floor((lo + hi) / 2);
        if (trd_model_ring(p, nodes, ppn, mid) < trd_model_nap(p, nodes, ppn, mid))
            hi = mid;
        else
            lo = mid;
    }
    return (size_t)hi;
}

static trd_link_cost worse(trd_link_cost a, trd_link_cost b)
{
    trd_link_cost w = a;
    w.latency_s = fmax(a.latency_s, b.latency_s);
    w.bandwidth_Bps = fmin(a.bandwidth_Bps, b.bandwidth_Bps);
    if (b.injection_Bps > 0 && (w.injection_Bps == 0 || b.injection_Bps < w.injection_Bps))
        w.injection_Bps = b.injection_Bps;
    return w;
}

int trd_plan_build(trd_topo_t t, trd_plan *p)
{
    int n = trd_topo_nnodes(t);
    p->nnodes = n;
    p->ppn = 0;
    p->gamma_s_per_byte = TRD_DEFAULT_GAMMA_S_PER_BYTE;
    int first = 1;
    for (int v = 0; v < n; v++) {
        int ty = trd_topo_node_type(t, v);
        int c = trd_topo_nodetype_ncores(t, ty);
        if (!p->ppn || c < p->ppn)
            p->ppn = c;
        trd_link_cost in = trd_topo_nodetype_package_link(t, ty);
        if (trd_topo_nodetype_npackages(t, ty) > 1)
            in = worse(in, trd_topo_nodetype_node_link(t, ty));
        p->intra = first ? in : worse(p->intra, in);
        first = 0;
    }
    /* ring neighbours (wrapping), and the dearest path from the first node as
     * the stand-in for the pairs NAP and recursive doubling connect */
    p->ring_inter = (trd_link_cost){0, INFINITY, 0};
    p->far_inter = (trd_link_cost){0, INFINITY, 0};
    for (int v = 0; v < n && n > 1; v++) {
        trd_link_cost a = trd_topo_path_cost(t, v, (v + 1) % n);
        p->ring_inter = worse(p->ring_inter, a);
        trd_link_cost f = trd_topo_path_cost(t, 0, v == 0 ? n - 1 : v);
        p->far_inter = worse(p->far_inter, f);
    }
    if (n <= 1)
        p->ring_inter = p->far_inter = p->intra;
    p->nap_lanes = p->ppn;
    p->nap_radix = trd_nap_radix(p->ppn);
    p->nap_steps = trd_nap_nsteps(n, p->nap_radix);
    p->nap_max_bytes = trd_model_crossover(p, n, p->ppn);
    p->nap_max_bytes_1node = trd_model_crossover(p, 1, p->ppn);
    return TRD_OK;
}
