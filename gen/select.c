/* Cost model and the NAP / ring threshold [MPICH §3, NAP Eq. 4-6, TREE §3.2]. */
#include <math.h>
#include <stdint.h>

#include "trd_nap.h"
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

/* Seconds per byte when `concurrent` ranks of a node send over link l at
 * once: the link's own rate or the node's share of injection, whichever is
 * slower (max-rate [NAP Eq. 3]). */
static double beta_eff(trd_link_cost l, int concurrent)
{
    double b = 1.0 / l.bandwidth_Bps;
    if (l.injection_Bps > 0)
        b = fmax(b, concurrent / l.injection_Bps);
    return b;
}

/* recursive halving + doubling over nodes x ppn in ring order: the first
 * log2(ppn) distances stay on a node [MPICH §4] */
static double model_rabenseifner(const trd_plan *p, int nodes, int ppn, double m)
{
    int np = nodes * ppn, steps = (int)log2_ceil(np), in = (int)log2_ceil(ppn);
    double t = 0, part = m;
    for (int k = 0; k < steps; k++) {
        part /= 2;
        trd_link_cost l = k < in ? p->intra : p->far_inter;
        double beta = k < in ? 1.0 / l.bandwidth_Bps : beta_eff(l, ppn);
        t += 2 * (l.latency_s + part * beta) + part * p->gamma_s_per_byte;
    }
    if (np & (np - 1)) /* the fold of the non-power-of-two ranks */
        t += 2 * msg(p->intra, m) + m * p->gamma_s_per_byte;
    return t;
}

/* the node phases of the composites in shared memory: one step each way */
static double node_phases(const trd_plan *p, int ppn, double m)
{
    return ppn > 1 ? 2 * msg(p->intra, m) + m * p->gamma_s_per_byte : 0;
}

/* node reduce + bcast, recursive doubling among the leaders [NAP §II-A] */
static double model_smp(const trd_plan *p, int nodes, int ppn, double m)
{
    return node_phases(p, ppn, m) +
           log2_ceil(nodes) * (msg(p->far_inter, m) + m * p->gamma_s_per_byte);
}

/* node reduce_scatter to ppn lanes, a ring over the nodes per lane, node
 * allgather [FLEX §2.1.2, TREE §3.2] */
static double model_hring(const trd_plan *p, int nodes, int ppn, double m)
{
    double lane = m / ppn, block = lane / nodes;
    return node_phases(p, ppn, m) +
           2.0 * (nodes - 1) * (p->ring_inter.latency_s + block * beta_eff(p->ring_inter, ppn)) +
           (nodes - 1) * block * p->gamma_s_per_byte;
}

/* the same with recursive doubling per lane */
static double model_flex(const trd_plan *p, int nodes, int ppn, double m)
{
    double lane = m / ppn;
    return node_phases(p, ppn, m) +
           log2_ceil(nodes) * (p->far_inter.latency_s + lane * beta_eff(p->far_inter, ppn) +
                               lane * p->gamma_s_per_byte);
}

/* recursive multiplying: one stage of base ppn on the node, then base 2
 * stages across nodes [RM §4, Eq. 4] */
static double model_rm(const trd_plan *p, int nodes, int ppn, double m)
{
    double t = ppn > 1 ? p->intra.latency_s + (ppn - 1) * (m / p->intra.bandwidth_Bps +
                                                           m * p->gamma_s_per_byte)
                       : 0;
    return t + log2_ceil(nodes) * (p->far_inter.latency_s + m * beta_eff(p->far_inter, ppn) +
                                   m * p->gamma_s_per_byte);
}

static const struct {
    const char *name, *levels;
    double (*time)(const trd_plan *, int, int, double);
} models[TRD_NMODELS] = {
    {"nap", "node allreduce in shared memory; log_k(nodes) exchanges, every lane active", trd_model_nap},
    {"ring", "one ring through every rank in DFS order", trd_model_ring},
    {"rd", "recursive doubling through every rank", trd_model_rd},
    {"rabenseifner", "recursive halving + doubling through every rank", model_rabenseifner},
    {"smp", "node reduce/bcast in shared memory; recursive doubling among leaders", model_smp},
    {"hring", "node reduce_scatter/allgather in shared memory; DFS ring per lane", model_hring},
    {"flex", "node reduce_scatter/allgather in shared memory; recursive doubling per lane",
     model_flex},
    {"rm", "base-ppn stage on the node; base-2 stages across nodes", model_rm},
};

const char *trd_model_name(int alg)
{
    return alg >= 0 && alg < TRD_NMODELS ? models[alg].name : "?";
}

const char *trd_model_levels(int alg)
{
    return alg >= 0 && alg < TRD_NMODELS ? models[alg].levels : "?";
}

double trd_model_time(const trd_plan *p, int alg, int nodes, int ppn, double bytes)
{
    return models[alg].time(p, nodes, ppn, bytes);
}

size_t trd_range_typical(size_t from, size_t below)
{
    double a = from < 8 ? 8 : (double)from;
    double z = below == SIZE_MAX ? 16 * a : (double)below - 1;
    return (size_t)floor(sqrt(a * fmax(a, z)));
}

int trd_model_pick(const double *t, int n, int *second)
{
    int b = 0, s = -1;
    double tb = INFINITY, ts = INFINITY;
    for (int a = 0; a < n; a++) {
        if (t[a] < tb * (1 - TRD_MODEL_TIE)) {
            if (tb < INFINITY)
                s = b, ts = tb;
            b = a, tb = t[a];
        } else if (t[a] < ts) {
            s = a, ts = t[a];
        }
    }
    *second = s;
    return b;
}

/* The best and second best candidates for bytes over nodes x ppn ranks. */
static int best(const trd_plan *p, int nodes, int ppn, double bytes, int *second)
{
    double t[TRD_NMODELS];
    for (int a = 0; a < TRD_NMODELS; a++)
        t[a] = trd_model_time(p, a, nodes, ppn, bytes);
    return trd_model_pick(t, TRD_NMODELS, second);
}

/* Size ranges of the best candidate over nodes x ppn ranks into
 * choice[0..*nchoices): from the start of each range, probe sizes doubling
 * up to 1 TiB until another candidate wins, then bisect to the byte where it
 * does; the next range starts there.  The models are piecewise (lane and
 * phase choices switch at fixed sizes), so several changes may fall between
 * two powers of two: each is found from the range before it. */
static void select_ranges(const trd_plan *p, int nodes, int ppn, struct trd_choice *choice,
                          int *nchoices)
{
    const double top = 1099511627776.0;
    int second, cur = best(p, nodes, ppn, 1, &second), nc = 0;
    double lo = 1;
    while (nc < TRD_MAX_CHOICES - 1) {
        double good = lo, b = lo * 2 > lo + 1 ? lo * 2 : lo + 1;
        int s2;
        while (b <= top && best(p, nodes, ppn, b, &s2) == cur) {
            good = b;
            b *= 2;
        }
        if (b > top)
            break;
        double l = good, h = b;
        while (h - l > 1) {
            double mid = floor((l + h) / 2);
            int s3;
            if (best(p, nodes, ppn, mid, &s3) == cur)
                l = mid;
            else
                h = mid;
        }
        choice[nc++] = (struct trd_choice){.below = (size_t)h, .alg = cur};
        cur = best(p, nodes, ppn, h, &second);
        lo = h;
    }
    choice[nc++] = (struct trd_choice){.below = SIZE_MAX, .alg = cur};
    size_t from = 0;
    for (int i = 0; i < nc; i++) {
        struct trd_choice *ch = &choice[i];
        ch->typical = trd_range_typical(from, ch->below);
        (void)best(p, nodes, ppn, (double)ch->typical, &ch->runner_up);
        ch->us = trd_model_time(p, ch->alg, nodes, ppn, (double)ch->typical) * 1e6;
        ch->runner_us = ch->runner_up >= 0
                            ? trd_model_time(p, ch->runner_up, nodes, ppn, (double)ch->typical) * 1e6
                            : 0;
        from = ch->below;
    }
    *nchoices = nc;
}

/* The planned shapes (see trd_plan.shape): node counts 2, 4, ... below the
 * machine's and the machine's, times 1, 2, 4, ... below ppn and ppn. */
static void select_shapes(trd_plan *p)
{
    p->nshapes = 0;
    for (int nodes = 2;; nodes = nodes * 2 < p->nnodes ? nodes * 2 : p->nnodes) {
        for (int ppn = 1;; ppn = ppn * 2 < p->ppn ? ppn * 2 : p->ppn) {
            if (p->nshapes == TRD_MAX_SHAPES)
                return;
            struct trd_shape_plan *sp = &p->shape[p->nshapes++];
            sp->nnodes = nodes;
            sp->ppn = ppn;
            select_ranges(p, nodes, ppn, sp->choice, &sp->nchoices);
            if (ppn >= p->ppn)
                break;
        }
        if (nodes >= p->nnodes)
            break;
    }
}

static trd_link_cost worse(trd_link_cost a, trd_link_cost b)
{
    trd_link_cost w = a;
    w.latency_s = fmax(a.latency_s, b.latency_s);
    w.bandwidth_Bps = fmin(a.bandwidth_Bps, b.bandwidth_Bps);
    w.alpha_r_s = fmax(a.alpha_r_s, b.alpha_r_s);
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
    p->ring_inter = (trd_link_cost){0, INFINITY, 0, 0};
    p->far_inter = (trd_link_cost){0, INFINITY, 0, 0};
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
    select_ranges(p, n, p->ppn, p->choice, &p->nchoices);
    p->nshapes = 0;
    if (n > 1)
        select_shapes(p);
    return TRD_OK;
}
