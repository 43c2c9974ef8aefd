/* The size selection on the closed forms and the one range drawing shared
 * with the schedules (plan.h) [MPICH §3, NAP Eq. 4-6, TREE §3.2]. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan.h"
#include "trd_select.h"

int trd_model_candidates(const trd_algo **out, int cap)
{
    int n = 0;
    for (int i = 0; trd_algos[i] && n < cap; i++)
        if (trd_algos[i]->coll == TRD_COLL_ALLREDUCE &&
            (trd_algos[i]->flags & TRD_ALGO_CANDIDATE) && trd_algos[i]->model)
            out[n++] = trd_algos[i];
    return n;
}

double trd_model_time(const trd_machine_plan *p, const trd_algo *a, int nodes, int ppn,
                      double bytes)
{
    return a && a->model ? a->model(&p->levels, nodes, ppn, bytes) : INFINITY;
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

int trd_draw_ranges(const trd_range_probe *pr, trd_choice *choice, int *nchoices)
{
    int nc = 0;
    size_t lo = 1;
    const trd_algo *cur = pr->best(pr->ctx, lo);
    if (!cur)
        return TRD_ERR_STATE;
    while (nc < TRD_MAX_CHOICES - 1) {
        size_t good = lo, b = pr->next(lo, 0);
        while (b <= pr->top && pr->best(pr->ctx, b) == cur) {
            good = b;
            b = pr->next(lo, b);
        }
        if (b > pr->top)
            break;
        size_t l = good, h = b;
        for (;;) {
            size_t step = pr->precision && l / pr->precision > 1 ? l / pr->precision : 1;
            if (h - l <= step)
                break;
            size_t mid = l + (h - l) / 2;
            if (pr->best(pr->ctx, mid) == cur)
                l = mid;
            else
                h = mid;
        }
        choice[nc++] = (trd_choice){.below = h * pr->unit_bytes, .alg = cur};
        cur = pr->best(pr->ctx, h);
        lo = h;
    }
    choice[nc++] = (trd_choice){.below = SIZE_MAX, .alg = cur};
    *nchoices = nc;
    return TRD_OK;
}

/* ---- On the closed forms -------------------------------------------------------- */

typedef struct closed {
    const trd_machine_plan *p;
    int nodes, ppn, n;
    const trd_algo *cand[TRD_MAX_CANDIDATES];
} closed;

/* The best and second best (NULL none) candidates for bytes. */
static const trd_algo *closed_pick(const closed *c, double bytes, const trd_algo **second)
{
    double t[TRD_MAX_CANDIDATES];
    int s;
    for (int a = 0; a < c->n; a++)
        t[a] = trd_model_time(c->p, c->cand[a], c->nodes, c->ppn, bytes);
    int b = trd_model_pick(t, c->n, &s);
    *second = s >= 0 ? c->cand[s] : NULL;
    return c->cand[b];
}

static const trd_algo *closed_best(void *ctx, size_t bytes)
{
    const trd_algo *second;
    return closed_pick(ctx, (double)bytes, &second);
}

/* Every power of two from the range's start, to the byte. */
static size_t closed_next(size_t lo, size_t b)
{
    return b ? 2 * b : lo * 2 > lo + 1 ? lo * 2 : lo + 1;
}

/* The ranges of an algorithm with model_params (NAP) cut where the
 * parameters of its lowest closed form change, each with those parameters:
 * NAP's steps across an oversubscribed uplink take a smaller radix as the
 * vectors grow [NAP §III, TREE §2].  choice[0..*n) in place, at most
 * TRD_MAX_CHOICES. */
static void split_param_ranges(const trd_machine_plan *p, int nodes, int ppn, trd_choice *choice,
                               int *n)
{
    trd_choice out[TRD_MAX_CHOICES];
    int k = 0;
    size_t from = 0;
    for (int i = 0; i < *n; i++) {
        trd_choice ch = choice[i];
        size_t lo = from ? from : 1;
        from = ch.below;
        if (!ch.alg->model_params || k + 1 >= TRD_MAX_CHOICES) {
            if (k < TRD_MAX_CHOICES)
                out[k++] = ch;
            continue;
        }
        char cur[TRD_PARAMS_MAX], r[TRD_PARAMS_MAX];
        ch.alg->model_params(&p->levels, nodes, ppn, (double)lo, cur);
        for (size_t b = lo;;) {
            size_t nb = b * 2 > b ? b * 2 : SIZE_MAX;
            int last = nb >= ch.below || nb > ((size_t)1 << 40);
            size_t probe = last ? ch.below - 1 : nb;
            ch.alg->model_params(&p->levels, nodes, ppn, (double)probe, r);
            if (strcmp(r, cur) != 0 && k + 2 < TRD_MAX_CHOICES) {
                size_t l = b, h = probe; /* cur at l, other parameters at h */
                while (h - l > 1) {
                    size_t mid = l + (h - l) / 2;
                    ch.alg->model_params(&p->levels, nodes, ppn, (double)mid, r);
                    if (strcmp(r, cur) == 0)
                        l = mid;
                    else
                        h = mid;
                }
                out[k] = ch;
                out[k].below = h;
                snprintf(out[k++].params, TRD_PARAMS_MAX, "%s", cur);
                ch.alg->model_params(&p->levels, nodes, ppn, (double)h, cur);
                b = h;
                continue;
            }
            if (last)
                break;
            b = nb;
        }
        out[k] = ch;
        snprintf(out[k++].params, TRD_PARAMS_MAX, "%s", cur);
    }
    memcpy(choice, out, (size_t)k * sizeof *out);
    *n = k;
}

/* Size ranges of the best candidate over nodes x ppn ranks on the closed
 * forms: probes doubling up to 1 TiB, changes bisected to the byte. */
static void select_ranges(const trd_machine_plan *p, int nodes, int ppn, trd_choice *choice,
                          int *nchoices)
{
    closed c = {p, nodes, ppn, 0, {0}};
    c.n = trd_model_candidates(c.cand, TRD_MAX_CANDIDATES);
    trd_range_probe pr = {closed_best, &c, closed_next, (size_t)1 << 40, 0, 1};
    if (c.n == 0 || trd_draw_ranges(&pr, choice, nchoices) != TRD_OK) {
        *nchoices = 0;
        return;
    }
    split_param_ranges(p, nodes, ppn, choice, nchoices);
    size_t from = 0;
    for (int i = 0; i < *nchoices; i++) {
        trd_choice *ch = &choice[i];
        double at;
        ch->typical = trd_range_typical(from, ch->below);
        at = (double)ch->typical;
        (void)closed_pick(&c, at, &ch->runner_up);
        ch->us = trd_model_time(p, ch->alg, nodes, ppn, at) * 1e6;
        ch->runner_us = ch->runner_up ? trd_model_time(p, ch->runner_up, nodes, ppn, at) * 1e6 : 0;
        from = ch->below;
    }
}

/* The planned shapes (see trd_machine_plan.shape): node counts 2, 4, ...
 * below the machine's and the machine's, times 1, 2, 4, ... below ppn and
 * ppn. */
static void select_shapes(trd_machine_plan *p)
{
    p->nshapes = 0;
    for (int nodes = 2;; nodes = nodes * 2 < p->nnodes ? nodes * 2 : p->nnodes) {
        for (int ppn = 1;; ppn = ppn * 2 < p->ppn ? ppn * 2 : p->ppn) {
            if (p->nshapes == TRD_MAX_SHAPES)
                return;
            trd_shape_plan *sp = &p->shape[p->nshapes++];
            sp->nnodes = nodes;
            sp->ppn = ppn;
            sp->on_schedules = 0;
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

/* l->far_load[k] and far_latency_s[k] for every k with 2^k < the node count: every node v (ring
 * order) sends to v xor 2^k; count the messages on each directed link of
 * the tree (a switch's uplink and downlink have its parent's link class, a
 * node's its switch's), weigh each link by far_inter's bandwidth over its
 * own and keep the largest [TREE §2].  O(nodes x depth) per k. */
static int far_loads(trd_topo_t t, trd_levels *l)
{
    int n = trd_topo_nnodes(t), nsw = trd_topo_nswitches(t);
    double *up = calloc((size_t)nsw, sizeof *up), *down = calloc((size_t)nsw, sizeof *down);
    double *w = malloc((size_t)nsw * sizeof *w);
    if (!up || !down || !w) {
        free(up);
        free(down);
        free(w);
        return TRD_ERR_NOMEM;
    }
    /* the weight of switch s's uplink (its parent's link class) */
    for (int s = 0; s < nsw; s++) {
        int par = trd_topo_switch_parent(t, s);
        w[s] =
            par < 0 ? 0 : l->far_inter.bandwidth_Bps / trd_topo_switch_link(t, par).bandwidth_Bps;
    }
    for (int k = 0; k < TRD_LEVELS_MAX_LG && (1LL << k) < n; k++) {
        memset(up, 0, (size_t)nsw * sizeof *up);
        memset(down, 0, (size_t)nsw * sizeof *down);
        double most = 1, lat = 0;
        for (int v = 0; v < n; v++) {
            long long u = (long long)v ^ (1LL << k);
            if (u >= n)
                continue;
            lat = fmax(lat, trd_topo_path_cost(t, v, (int)u).latency_s);
            int a = trd_topo_node_switch(t, v), b = trd_topo_node_switch(t, (int)u);
            double node = l->far_inter.bandwidth_Bps / trd_topo_switch_link(t, a).bandwidth_Bps;
            most = node > most ? node : most;
            /* up from a, down to b, until they meet */
            while (a != b) {
                if (trd_topo_switch_depth(t, a) >= trd_topo_switch_depth(t, b)) {
                    up[a] += w[a];
                    most = up[a] > most ? up[a] : most;
                    a = trd_topo_switch_parent(t, a);
                } else {
                    down[b] += w[b];
                    most = down[b] > most ? down[b] : most;
                    b = trd_topo_switch_parent(t, b);
                }
            }
        }
        l->far_load[k] = (float)most;
        l->far_latency_s[k] = (float)lat;
    }
    free(up);
    free(down);
    free(w);
    return TRD_OK;
}

int trd_plan_build(trd_topo_t t, trd_machine_plan *p)
{
    int n = trd_topo_nnodes(t);
    trd_levels *l = &p->levels;
    memset(p, 0, sizeof *p);
    p->nnodes = n;
    l->gamma_s_per_byte = TRD_DEFAULT_GAMMA_S_PER_BYTE;
    for (int v = 0; v < n; v++) {
        int ty = trd_topo_node_type(t, v);
        int c = trd_topo_nodetype_ncores(t, ty);
        if (!p->ppn || c < p->ppn)
            p->ppn = c;
        trd_link_cost in = trd_topo_nodetype_package_link(t, ty);
        if (trd_topo_nodetype_npackages(t, ty) > 1)
            in = worse(in, trd_topo_nodetype_node_link(t, ty));
        l->intra = v == 0 ? in : worse(l->intra, in);
    }
    /* ring neighbours (wrapping), and the dearest path from the first node as
     * the stand-in for the pairs NAP and recursive doubling connect */
    l->ring_inter = (trd_link_cost){0, INFINITY, 0, 0};
    l->far_inter = (trd_link_cost){0, INFINITY, 0, 0};
    for (int v = 0; v < n && n > 1; v++) {
        trd_link_cost a = trd_topo_path_cost(t, v, (v + 1) % n);
        l->ring_inter = worse(l->ring_inter, a);
        trd_link_cost f = trd_topo_path_cost(t, 0, v == 0 ? n - 1 : v);
        l->far_inter = worse(l->far_inter, f);
    }
    if (n <= 1)
        l->ring_inter = l->far_inter = l->intra;
    else if (far_loads(t, l) != TRD_OK)
        return TRD_ERR_NOMEM;
    p->nap_max_bytes_1node = trd_select_noseg_crossover(&p->levels, p->ppn);
    select_ranges(p, n, p->ppn, p->choice, &p->nchoices);
    if (n > 1)
        select_shapes(p);
    return TRD_OK;
}
