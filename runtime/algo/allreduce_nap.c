/* Algorithm: NAP, node-aware parallel allreduce [NAP Alg. 1, §III-A].  An
 * intra-node allreduce (through the segment where the node has one, else
 * recursive doubling) gives every rank of a node the node's partial result;
 * then ceil(log_k n) inter-node steps (k = max(2, lanes), lanes = the fewest
 * ranks on a node): at step i, lane r of a node in subgroup j exchanges with
 * lane j of the node at the same position in subgroup r, so k subgroups are
 * combined per step; each step ends with an intra-node allreduce over the
 * lanes that hold a part.  Node counts that are not a power of k leave the
 * last subgroup of a group short; nodes facing it take that subgroup's data
 * from position p mod size (all its nodes hold the same data), the
 * generalisation of the paper's "extra node sends to the idle process"
 * (Fig. 9).  Commutative ops; the fold order depends only on the step's
 * shape, so every rank gets the same bits.  Every step reduces the whole
 * vector, so a user-defined op runs where the node phases' vector fits a
 * segment slot.
 *
 * Radix per step (parameters "K1,K2,...", e.g. nap:16,2,2): step i combines
 * k_i subgroups of S_i = k_0 ... k_{i-1} nodes, the multi-radix of FLEX's
 * recursive exchange [FLEX §2.1.3] and of recursive multiplying's bases
 * [RM §4] applied to NAP's groups [NAP §III]; the groups of a step are the
 * subgroups of the next, so the rules above hold unchanged.  Consecutive
 * nodes in ring order share a leaf switch, so the first steps stay under it
 * and the later ones cross its uplink: there a smaller radix sends k_i - 1
 * vectors per node over the uplink instead of lanes - 1.  A width ("K/W")
 * goes further: only the first W nodes of each subgroup exchange, so W, not
 * S, of a leaf's nodes send across its uplink, and one more step under the
 * leaf switch passes their result on (trd_nap_spread).  The generator
 * weighs the lists (trd_nap_radix_lists) with the link sharing of the switch
 * tree [TREE §2].
 * Cost = sum over steps i of (alpha_inter + (k_i - 1) m beta_i + m gamma)
 *        + (steps + 1) ceil(log2 ppn) (alpha_intra + m beta_intra + m gamma)
 *        + for a step of width W: alpha_sub + ceil((S_i - W)/W) m beta_inter
 *          + alpha_intra + m beta_intra
 * [NAP Eq. 6], beta_i the inverse bandwidth of the most loaded link of step i
 * (W of every S_i nodes sending), alpha_sub the latency under the subgroup's
 * switch.
 *
 * The step plan (trd_nap.h) is pure C: the planner below, the generator's
 * --explain and the unit test of every (nodes, lanes) shape use it.
 */
#include "trd_nap.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "phases.h"

int trd_nap_radix(int lanes)
{
    return lanes < 2 ? 2 : lanes;
}

int trd_nap_nsteps(int n, int radix)
{
    int steps = 0;
    if (radix < 2)
        return 0;
    for (long long span = 1; span < n; span *= radix)
        steps++;
    return steps;
}

static int imin(int a, int b)
{
    return a < b ? a : b;
}

int trd_nap_radix_at(const trd_nap_radices *r, int lanes, int step)
{
    if (!r || r->n <= 0)
        return trd_nap_radix(lanes);
    return r->k[step < r->n ? step : r->n - 1];
}

int trd_nap_width_at(const trd_nap_radices *r, int step)
{
    if (!r || r->n <= 0)
        return 0;
    return r->w[step < r->n ? step : r->n - 1];
}

int trd_nap_nsteps_list(int n, int lanes, const trd_nap_radices *r)
{
    int steps = 0;
    for (long long span = 1; span < n; span *= trd_nap_radix_at(r, lanes, steps++))
        ;
    return steps;
}

int trd_nap_radices_parse(const char *text, trd_nap_radices *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    for (size_t p = 0; text[p];) {
        size_t col = p + 1;
        long long v = 0;
        if (out->n && text[p++] != ',') {
            if (err)
                snprintf(err, errlen, "column %zu: expected ',' between radices", col);
            goto fail;
        }
        col = p + 1;
        if (text[p] < '0' || text[p] > '9') {
            if (err)
                snprintf(err, errlen, "column %zu: expected a radix >= 2", col);
            goto fail;
        }
        for (; text[p] >= '0' && text[p] <= '9'; p++)
            v = v < TRD_NAP_MAX_RADIX + 1 ? v * 10 + (text[p] - '0') : v;
        if (v < 2 || v > TRD_NAP_MAX_RADIX) {
            if (err)
                snprintf(err, errlen, "column %zu: radix %lld is not in 2..%d", col, v,
                         TRD_NAP_MAX_RADIX);
            goto fail;
        }
        long long w = 0;
        if (text[p] == '/') {
            size_t wcol = ++p + 1;
            if (text[p] < '0' || text[p] > '9') {
                if (err)
                    snprintf(err, errlen, "column %zu: expected a width >= 1 after '/'", wcol);
                goto fail;
            }
            for (; text[p] >= '0' && text[p] <= '9'; p++)
                w = w < TRD_NAP_MAX_RADIX + 1 ? w * 10 + (text[p] - '0') : w;
            if (w < 1 || w > TRD_NAP_MAX_RADIX) {
                if (err)
                    snprintf(err, errlen, "column %zu: width %lld is not in 1..%d", wcol, w,
                             TRD_NAP_MAX_RADIX);
                goto fail;
            }
        }
        if (out->n == TRD_NAP_MAX_RADICES) {
            if (err)
                snprintf(err, errlen, "column %zu: more than %d radices", col, TRD_NAP_MAX_RADICES);
            goto fail;
        }
        out->w[out->n] = (int)w;
        out->k[out->n++] = (int)v;
    }
    return 0;
fail:
    memset(out, 0, sizeof *out);
    return TRD_ERR_INPUT;
}

int trd_nap_radices_format(const trd_nap_radices *r, char *buf, size_t len)
{
    int o = 0;
    if (len)
        buf[0] = '\0';
    for (int i = 0; r && i < r->n; i++) {
        int w = snprintf(buf + ((size_t)o < len ? (size_t)o : len),
                         (size_t)o < len ? len - (size_t)o : 0, "%s%d", i ? "," : "", r->k[i]);
        if (w > 0 && r->w[i]) {
            o += w;
            w = snprintf(buf + ((size_t)o < len ? (size_t)o : len),
                         (size_t)o < len ? len - (size_t)o : 0, "/%d", r->w[i]);
        }
        o += w > 0 ? w : 0;
    }
    return o;
}

/* r's radices as the steps over n nodes use them: cut to the steps, the
 * last no larger than the subgroups left (a larger one plans the same). */
static void effective(int n, int lanes, const trd_nap_radices *r, trd_nap_radices *out)
{
    long long S = 1;
    memset(out, 0, sizeof *out);
    for (int s = 0; S < n && out->n < TRD_NAP_MAX_RADICES; s++) {
        long long k = trd_nap_radix_at(r, lanes, s), left = (n + S - 1) / S;
        out->k[out->n++] = (int)(k < left ? k : left);
        S *= k;
    }
}

typedef struct lists {
    int n, lanes, cap, count, nr;
    int radix[32];
    trd_nap_radices cur, dflt;
    trd_nap_radices *out;
} lists;

static void add_one(lists *L, const trd_nap_radices *r)
{
    for (int i = 0; i < L->count; i++)
        if (!memcmp(&L->out[i], r, sizeof *r))
            return;
    if (!memcmp(r, &L->dflt, sizeof *r) || L->count == L->cap)
        return;
    L->out[L->count++] = *r;
}

/* The list cur, and with widths 2 and 1 on its steps after the first (over
 * subgroups of more nodes than the width): the steps across the uplinks. */
static void add_list(lists *L)
{
    add_one(L, &L->cur);
    for (int w = 2; w >= 1; w--) {
        trd_nap_radices r = L->cur;
        long long S = r.k[0];
        int any = 0;
        for (int i = 1; i < r.n; S *= r.k[i++])
            if (S > w)
                r.w[i] = w, any = 1;
        if (any)
            add_one(L, &r);
    }
}

/* Non-increasing lists from step cur.n on, S nodes per subgroup. */
static void more_lists(lists *L, long long S, int prev)
{
    long long left = (L->n + S - 1) / S;
    int last = 0;
    for (int i = 0; i < L->nr && L->count < L->cap; i++) {
        int k = L->radix[i];
        if (k > prev)
            continue;
        if (k >= left) {
            if (last)
                continue; /* the same cut list as a larger radix */
            last = 1;
            L->cur.k[L->cur.n++] = (int)left;
            add_list(L);
            L->cur.k[--L->cur.n] = 0;
        } else if (L->cur.n + 1 < TRD_NAP_MAX_RADICES) {
            L->cur.k[L->cur.n++] = k;
            more_lists(L, S * k, k);
            L->cur.k[--L->cur.n] = 0;
        }
    }
}

int trd_nap_radix_lists(int n, int lanes, trd_nap_radices *out, int cap)
{
    lists L;
    if (cap < 1)
        return 0;
    memset(&L, 0, sizeof L);
    L.n = n;
    L.lanes = lanes;
    L.cap = cap;
    L.out = out;
    memset(&out[0], 0, sizeof out[0]);
    L.count = 1; /* the default */
    if (n <= 1)
        return 1;
    effective(n, lanes, NULL, &L.dflt);
    L.cur = L.dflt; /* the default's steps, narrowed */
    add_list(&L);
    memset(&L.cur, 0, sizeof L.cur);
    /* lanes, then the powers of two below it, largest first */
    int top = trd_nap_radix(lanes);
    L.radix[L.nr++] = top;
    for (int k = 1 << 30; k >= 2; k /= 2)
        if (k < top && L.nr < 32)
            L.radix[L.nr++] = k;
    more_lists(&L, 1, top);
    return L.count;
}

/* far_load and far_latency_s at node distance dist >= 1 (its power of two
 * below): the sharing and latency of the level the distance climbs to. */
static double load_at(const struct trd_levels *l, long long dist)
{
    int lg = 0;
    while (lg + 1 < TRD_LEVELS_MAX_LG && (2LL << lg) <= dist)
        lg++;
    return l->far_load[lg] > 1 ? l->far_load[lg] : 1;
}

static double latency_at(const struct trd_levels *l, long long dist)
{
    int lg = 0;
    while (lg + 1 < TRD_LEVELS_MAX_LG && (2LL << lg) <= dist)
        lg++;
    return l->far_latency_s[lg] > 0 ? l->far_latency_s[lg] : l->far_inter.latency_s;
}

double trd_nap_model_list(const struct trd_levels *l, int nodes, int ppn, double bytes,
                          const trd_nap_radices *r)
{
    int lanes = ppn < 1 ? 1 : ppn;
    double msg = trd_msg_s(l->intra, bytes) + bytes * l->gamma_s_per_byte;
    double t = trd_lg(ppn) * msg; /* the node allreduce before the steps */
    long long S = 1;
    for (int s = 0; S < nodes; s++) {
        int k = trd_nap_radix_at(r, lanes, s), w = trd_nap_width_at(r, s);
        long long left = (nodes + S - 1) / S, wide = w > 0 && w < S ? w : S;
        int g = (int)(k < left ? k : left), per_lane = (g + lanes - 1) / lanes;
        /* the partners at node distances d S share the tree's links [TREE §2],
         * wide of every S nodes taking part */
        double load = 0;
        for (int d = 1; d < g; d++)
            load += fmax(1, load_at(l, d * S) * (double)wide / (double)S);
        double beta = load / l->far_inter.bandwidth_Bps;
        double inj = l->far_inter.injection_Bps > 0 ? (g - 1) / l->far_inter.injection_Bps : 0;
        t += per_lane * (l->far_inter.latency_s + bytes * l->gamma_s_per_byte) +
             bytes * (beta > inj ? beta : inj);
        /* the lanes with a part allreduce, then hand the result on */
        int with_part = g < lanes ? g : lanes;
        t += trd_lg(with_part) * msg + (with_part < ppn ? trd_msg_s(l->intra, bytes) : 0);
        if (wide < S) /* the result on to the others of the subgroup (under its own
                       * switch: that level's latency), then from lane 0 to the node's
                       * other ranks, one step as the lanes' result above */
            t += latency_at(l, S - 1) +
                 bytes * (double)((S - wide + wide - 1) / wide) / l->far_inter.bandwidth_Bps +
                 (ppn > 1 ? trd_msg_s(l->intra, bytes) : 0);
        S *= k;
    }
    return t;
}

double trd_nap_model_best(const struct trd_levels *l, int nodes, int ppn, double bytes,
                          trd_nap_radices *best)
{
    trd_nap_radices cand[256];
    int n = trd_nap_radix_lists(nodes, ppn, cand, 256), b = 0;
    double tb = INFINITY;
    for (int i = 0; i < n; i++) {
        double t = trd_nap_model_list(l, nodes, ppn, bytes, &cand[i]);
        if (t < tb * (1 - 1e-9))
            tb = t, b = i;
    }
    if (best)
        *best = cand[b];
    return tb;
}

int trd_nap_step(int n, int lanes, int radix, int step, int node, int lane, trd_nap_stepinfo *info,
                 trd_nap_xfer *recv, int *nrecv, trd_nap_xfer *send, int *nsend)
{
    trd_nap_radices r = {1, {radix}, {0}};
    if (radix < 2)
        return TRD_ERR_INPUT;
    return trd_nap_step_list(n, lanes, &r, step, node, lane, info, recv, nrecv, send, nsend);
}

int trd_nap_step_list(int n, int lanes, const trd_nap_radices *rad, int step, int node, int lane,
                      trd_nap_stepinfo *info, trd_nap_xfer *recv, int *nrecv, trd_nap_xfer *send,
                      int *nsend)
{
    if (n < 1 || lanes < 1 || step < 0 || node < 0 || node >= n || lane < 0 || lane >= lanes)
        return TRD_ERR_INPUT;
    for (int i = 0; rad && i < rad->n; i++)
        if (rad->k[i] < 2)
            return TRD_ERR_INPUT;
    long long S = 1;
    for (int s = 0; s < step; s++) {
        S *= trd_nap_radix_at(rad, lanes, s);
        if (S >= n) /* a step past the last one: a single subgroup */
            break;
    }
    int radix = trd_nap_radix_at(rad, lanes, step);
    long long span = S * radix;
    int base = (int)((node / span) * span);
    int end = (int)(base + span < n ? base + span : n);
    int j = (int)((node - base) / S);
    int p = (int)((node - base) % S);
    int g = (int)((end - base + S - 1) / S);
    if (S >= n)
        g = 1, j = 0, p = node;
        /* size of subgroup r of this group */
#define SUBSIZE(r) imin((int)S, end - (base + (r) * (int)S))
    /* nodes at positions >= the width sit the exchange out */
    int width = trd_nap_width_at(rad, step), wide = width > 0 && width < S ? width : (int)S;
    int spread = g > 1 && p >= imin(wide, SUBSIZE(j));
    if (info)
        *info = (trd_nap_stepinfo){(int)S, g, j, p, spread};
    *nrecv = 0;
    *nsend = 0;
    if (g <= 1 || spread || !recv || !send) /* no arrays: the step's shape only */
        return 0;
    for (int r = lane; r < g; r += lanes) {
        if (r == j)
            continue;
        int sz = SUBSIZE(r);
        recv[(*nrecv)++] = (trd_nap_xfer){base + r * (int)S + p % sz, (j + p / sz) % lanes, r};
    }
    /* Sends: node (j, p) serves every (j2, p2), j2 != j, with p2 mod size_j == p,
     * from lane (j2 + p2 / size_j) mod lanes, to that node's lane j mod lanes. */
    int szj = SUBSIZE(j);
    for (int j2 = 0; j2 < g; j2++) {
        if (j2 == j)
            continue;
        int sz2 = imin(SUBSIZE(j2), wide);
        for (int p2 = p; p2 < sz2; p2 += szj) {
            if ((j2 + p2 / szj) % lanes != lane)
                continue;
            send[(*nsend)++] = (trd_nap_xfer){base + j2 * (int)S + p2, j % lanes, j};
        }
    }
#undef SUBSIZE
    return 0;
}

int trd_nap_spread(int n, int lanes, const trd_nap_radices *rad, int step, int node,
                   trd_nap_xfer *from, trd_nap_xfer *to, int *nto)
{
    trd_nap_stepinfo info;
    int nr, ns;
    *from = (trd_nap_xfer){-1, 0, 0};
    *nto = 0;
    if (lanes < 1 || trd_nap_step_list(n, lanes, rad, step, node, 0, &info, NULL, &nr, NULL, &ns))
        return TRD_ERR_INPUT;
    int width = trd_nap_width_at(rad, step);
    if (info.nsub <= 1 || width <= 0 || width >= info.subsize)
        return 0;
    int first = node - info.pos;              /* the subgroup's first node */
    int size = imin(info.subsize, n - first); /* the group's last may be short */
    int w = imin(width, size);
    if (info.pos >= w) {
        *from = (trd_nap_xfer){first + info.pos % w, (info.pos / w - 1) % lanes, info.sub};
        return 0;
    }
    for (int p2 = info.pos + w; p2 < size; p2 += w)
        to[(*nto)++] = (trd_nap_xfer){first + p2, (p2 / w - 1) % lanes, info.sub};
    return 0;
}

/* ---- The allreduce ------------------------------------------------------------ */

/* The node's allreduce over its first k local ranks' vectors, every rank
 * ending with it: through the segment, or by point-to-point messages among
 * the k and the result handed on to the others.  Without the segment,
 * vectors of at most TRD_NAP_RM_MAX_BYTES go through recursive multiplying
 * of bases up to 4 (lg4 k rounds instead of lg2 k: a base-4 stage costs one
 * latency and two alpha_r where two base-2 stages cost two latencies, while
 * its 3 m beta against 2 m beta matters only above about alpha/beta / 2 of
 * a node's links, a few KiB [RM §3 Eq. 3, Fig. 4]); larger ones, recursive
 * doubling. */
#define TRD_NAP_RM_MAX_BYTES 2048
static int node_allreduce(trd_sb *b, int round, int k)
{
    size_t cnt = b->call->count;
    if (b->sh->shm)
        return trd_plan_shm_fold(b, round, k, -1, TRD_B_RECV, cnt);
    if (b->local < k) {
        if (k > 2 && cnt * b->call->extent <= TRD_NAP_RM_MAX_BYTES)
            trd_plan_rm_list(b, round, b->local_ranks, k, b->local, 4, 0, cnt);
        else
            trd_allreduce_rd.list(b, round, b->local_ranks, k, b->local, 0, cnt);
        for (int l = b->local + k; l < b->ppn; l += k)
            trd_s_send(b, round + TRD_ROUND_NODE_HANDON, trd_sb_local_rank(b, l), TRD_B_RECV, 0,
                       cnt);
    } else {
        trd_s_recv(b, round + TRD_ROUND_NODE_HANDON, trd_sb_local_rank(b, b->local % k), TRD_B_RECV,
                   0, cnt);
    }
    return 0;
}

/* Most requests one rank has open at once. */
#define NAP_MAX_REQUESTS 64

/* Commutative ops; a user-defined one (whole vectors) in one chunk. */
static const char *refuse(const trd_shape *sh, const trd_call *call, const void *params)
{
    const char *no = trd_refuse_whole_chunk(sh, call);
    return no ? no : trd_refuse_noncommutative(sh, call, params);
}

/* The radices per step: "K1,K2,..." (trd_nap.h), "" the paper's max(2, lanes). */
static int parse(const char *text, const trd_shape *sh, void *out, char *why, size_t whylen)
{
    char err[96];
    (void)sh;
    if (trd_nap_radices_parse(text, out, err, sizeof err) == 0)
        return 0;
    snprintf(why, whylen, "nap radices '%s': %s", text, err);
    return TRD_ERR_INPUT;
}

/* A step narrower than its subgroups (trd_nap_spread): the nodes of the
 * width send the result on, each other node takes it on lane 0 and hands it
 * to its ranks; to[] has room for n nodes. */
static int spread(trd_sb *b, int round, const trd_nap_radices *rad, int lanes, int step,
                  trd_nap_xfer *to)
{
    const trd_shape *sh = b->sh;
    size_t cnt = b->call->count;
    trd_nap_xfer from;
    int nto, nreq = 0;
    if (trd_nap_spread(sh->nnodes, lanes, rad, step, b->node, &from, to, &nto)) {
        b->fail = "the NAP spread plan failed";
        return TRD_ERR_INPUT;
    }
#define NODE_RANK(v, l) sh->ring[sh->node_first[(v)] + (l)]
    if (from.node >= 0) {
        if (b->local == 0)
            trd_s_recv(b, round, NODE_RANK(from.node, from.lane), TRD_B_RECV, 0, cnt);
        return node_allreduce(b, round + 1, 1); /* lane 0's vector to every rank */
    }
    for (int i = 0; i < nto; i++) {
        if (to[i].lane != b->local)
            continue;
        if (nreq == NAP_MAX_REQUESTS) {
            trd_sb_nb(b, 0);
            nreq = 0;
        }
        trd_s_send(b, round, NODE_RANK(to[i].node, 0), TRD_B_RECV, 0, cnt);
        trd_sb_nb(b, 1);
        nreq++;
    }
    if (nreq)
        trd_sb_nb(b, 0);
#undef NODE_RANK
    return 0;
}

static int plan(trd_sb *b, const void *params)
{
    const trd_shape *sh = b->sh;
    const trd_nap_radices *rad = params;
    size_t cnt = b->call->count;
    int ppn_min, ppn_max, rc = 0;
    trd_shape_ppn(sh, &ppn_min, &ppn_max);
    int lanes = ppn_min, steps = trd_nap_nsteps_list(sh->nnodes, lanes, rad), maxrecv = 1;
    for (int st = 0; st < steps; st++) {
        int k = trd_nap_radix_at(rad, lanes, st);
        maxrecv = (k + lanes - 1) / lanes > maxrecv ? (k + lanes - 1) / lanes : maxrecv;
    }
    trd_nap_xfer *recv = malloc((size_t)maxrecv * sizeof *recv);
    trd_nap_xfer *send = malloc((size_t)sh->nnodes * sizeof *send);
    size_t acc = trd_sb_tmp(b, cnt), slots = trd_sb_tmp(b, cnt * (size_t)maxrecv);
    if (!recv || !send) {
        free(recv);
        free(send);
        return TRD_ERR_NOMEM;
    }
    trd_sb_input_to_recv(b);
    rc = node_allreduce(b, 0, b->ppn);
#define NODE_RANK(v, l) sh->ring[sh->node_first[(v)] + (l)]
    for (int st = 0; st < steps && !rc; st++) {
        int round = (st + 1) * TRD_PHASE, nr = 0, ns = 0, lane = b->local < lanes ? b->local : 0;
        trd_nap_stepinfo info;
        if (trd_nap_step_list(sh->nnodes, lanes, rad, st, b->node, lane, &info, recv, &nr, send,
                              &ns)) {
            b->fail = "the NAP step plan failed";
            rc = TRD_ERR_INPUT;
            break;
        }
        int g = info.nsub, j = info.sub;
        if (g <= 1)
            continue;
        if (info.spread) { /* past the step's width: the result comes from the subgroup */
            rc = spread(b, round + 2, rad, lanes, st, send);
            continue;
        }
        int with_part = g < lanes ? g : lanes; /* lanes holding a part after the exchange */
        if (b->local < lanes) {
            int nreq = 0;
            for (int i = 0; i < nr; i++, nreq++) {
                trd_s_recv(b, round, NODE_RANK(recv[i].node, recv[i].lane), TRD_B_TMP,
                           slots + (size_t)i * cnt, cnt);
                trd_sb_nb(b, 1);
            }
            for (int i = 0; i < ns; i++, nreq++) {
                if (nreq == NAP_MAX_REQUESTS) { /* wait for those open */
                    trd_sb_nb(b, 0);
                    nreq = 0;
                }
                trd_s_send(b, round, NODE_RANK(send[i].node, send[i].lane), TRD_B_RECV, 0, cnt);
                trd_sb_nb(b, 1);
            }
            if (nr + ns > 0)
                trd_sb_nb(b, 0);
            /* fold subgroups local, local+lanes, ... in increasing order */
            int ri = 0, first = 1;
            for (int r = b->local; r < g; r += lanes, first = 0) {
                int own = r == j;
                size_t part = own ? 0 : slots + (size_t)(ri++) * cnt;
                if (first)
                    trd_s_copy(b, round, TRD_B_TMP, -1, acc, own ? TRD_B_RECV : TRD_B_TMP, -1, part,
                               cnt);
                else
                    trd_s_reduce(b, round, TRD_B_TMP, acc, own ? TRD_B_RECV : TRD_B_TMP, -1, part,
                                 cnt);
            }
            if (!first)
                trd_s_copy(b, round, TRD_B_RECV, -1, 0, TRD_B_TMP, -1, acc, cnt);
        }
        /* allreduce over the lanes with a part, then hand the result on */
        rc = node_allreduce(b, round + 1, with_part);
        if (!rc)
            rc = spread(b, round + 2, rad, lanes, st, send);
    }
#undef NODE_RANK
    free(recv);
    free(send);
    return rc;
}

/* The best radix list's closed form (trd_nap_model_best). */
static double model(const trd_levels *l, int nodes, int ppn, double bytes)
{
    return trd_nap_model_best(l, nodes, ppn, bytes, NULL);
}

/* The radix list of the best closed form (trd_nap_model_best). */
static void model_params(const trd_levels *l, int nodes, int ppn, double bytes, char *params)
{
    trd_nap_radices r;
    trd_nap_model_best(l, nodes, ppn, bytes, &r);
    trd_nap_radices_format(&r, params, TRD_PARAMS_MAX);
}

static int candidates(const trd_shape *sh, char (*cand)[TRD_PARAMS_MAX], int cap)
{
    trd_nap_radices r[65];
    int ppn_min, ppn_max, k = 0;
    trd_shape_ppn(sh, &ppn_min, &ppn_max);
    int n = trd_nap_radix_lists(sh->nnodes, ppn_min, r, cap + 1 < 65 ? cap + 1 : 65);
    for (int i = 1; i < n; i++) /* not the default: the search weighs "" itself */
        if (trd_nap_radices_format(&r[i], cand[k], TRD_PARAMS_MAX) < TRD_PARAMS_MAX)
            k++;
    return k;
}

/* ---- --explain and the generated files' banner ---------------------------------- */

/* Node names first..last of m as "a..b" or "a". */
static void print_span(FILE *f, const trd_explain_machine *m, int first, int last)
{
    if (first == last)
        fprintf(f, "%s", m->node_name(m->ctx, first));
    else
        fprintf(f, "%s..%s", m->node_name(m->ctx, first), m->node_name(m->ctx, last));
}

/* The switch of the widest group of a step over nodes 0..n-1 (ring order)
 * with subgroups of S nodes and radix k: the shallowest of the groups'
 * lowest common switches, the level the step's messages climb to (its
 * depth into *depth). */
static const char *step_switch(const trd_explain_machine *m, long long S, int k, int *depth)
{
    long long span = S * k;
    int n = m->nnodes;
    const char *top = NULL;
    for (long long base = 0; base < n; base += span) {
        int d;
        const char *sw =
            m->span_switch(m->ctx, (int)base, (int)(base + span < n ? base + span - 1 : n - 1), &d);
        if (!top || d < *depth) {
            top = sw;
            *depth = d;
        }
    }
    return top;
}

/* The radix per step with list r, and the switch level each step's groups
 * climb to [NAP §III, FLEX §2.1.3]. */
static void print_radices(FILE *f, const trd_explain_machine *m, const trd_nap_radices *r)
{
    long long S = 1;
    int n = m->nnodes;
    for (int s = 0; S < n; s++) {
        int k = trd_nap_radix_at(r, m->ppn, s), depth = 0;
        const char *sw = step_switch(m, S, k, &depth);
        long long left = (n + S - 1) / S;
        int w = trd_nap_width_at(r, s);
        fprintf(f,
                "    step %d: radix %lld over subgroups of %lld node%s, up to switch %s (depth %d)",
                s + 1, k < left ? (long long)k : left, S, S == 1 ? "" : "s", sw, depth);
        if (w > 0 && w < S)
            fprintf(f, "; %d node%s of each subgroup, which pass%s the result on", w,
                    w == 1 ? "" : "s", w == 1 ? "es" : "");
        fprintf(f, "\n");
        S *= k;
    }
}

/* NAP over the whole machine with the default radix: its groups per step,
 * and the radix per step of the ranges that chose NAP. */
static int explain(FILE *f, const trd_explain_machine *m)
{
    int n = m->nnodes, lanes = m->ppn, radix = trd_nap_radix(lanes);
    int steps = trd_nap_nsteps(n, radix);
    fprintf(f,
            "\nNAP over all %d nodes x %d ranks [NAP Alg. 1]: %d lane%s, radix %d, %d inter-node "
            "step%s\n",
            n, m->ppn, lanes, lanes == 1 ? "" : "s", radix, steps, steps == 1 ? "" : "s");
    for (int s = 0; s < steps; s++) {
        trd_nap_stepinfo info;
        trd_nap_xfer rbuf[64], *sbuf = malloc((size_t)n * sizeof *sbuf);
        int nr, ns;
        if (!sbuf)
            return TRD_ERR_NOMEM;
        trd_nap_step(n, lanes, radix, s, 0, 0, &info, rbuf, &nr, sbuf, &ns);
        long long span = (long long)info.subsize * radix;
        int groups = (int)((n + span - 1) / span);
        fprintf(f, "  step %d: subgroups of %d node%s, %d group%s of up to %d subgroups\n", s + 1,
                info.subsize, info.subsize == 1 ? "" : "s", groups, groups == 1 ? "" : "s", radix);
        for (int gi = 0; gi < groups && gi < 4; gi++) {
            int base = (int)(gi * span), end = (int)(base + span < n ? base + span : n);
            fprintf(f, "    group %d:", gi);
            for (int sb = base, k = 0; sb < end && k < 8; sb += info.subsize, k++) {
                int last = sb + info.subsize - 1 < end - 1 ? sb + info.subsize - 1 : end - 1;
                fprintf(f, " [");
                print_span(f, m, sb, last);
                fprintf(f, "]");
                if (k == 7 && sb + info.subsize < end)
                    fprintf(f, " ...");
            }
            fprintf(f, "\n");
        }
        if (groups > 4)
            fprintf(f, "    ... %d more groups\n", groups - 4);
        /* the last node is the one most likely to face a short subgroup */
        int v = n - 1;
        trd_nap_step(n, lanes, radix, s, v, 0, &info, rbuf, &nr, sbuf, &ns);
        fprintf(f, "    e.g. node %s (subgroup %d, position %d) lane 0 receives from",
                m->node_name(m->ctx, v), info.sub, info.pos);
        if (!nr)
            fprintf(f, " nobody (its own subgroup)");
        for (int i = 0; i < nr; i++)
            fprintf(f, " %s lane %d", m->node_name(m->ctx, rbuf[i].node), rbuf[i].lane);
        fprintf(f, "\n");
        free(sbuf);
    }
    for (int i = 0; i < m->nranges && n > 1; i++) {
        const trd_explain_range *rg = &m->range[i];
        trd_nap_radices r;
        if (rg->alg != &trd_allreduce_nap || trd_nap_radices_parse(rg->params, &r, NULL, 0))
            continue;
        fprintf(f, "  radix per step from %d B to %zu B (nap%s%s):\n", (int)rg->from, rg->below - 1,
                rg->params[0] ? ":" : "", rg->params);
        print_radices(f, m, &r);
    }
    return 0;
}

static int summary(char *buf, size_t len, int nodes, int ppn)
{
    int radix = trd_nap_radix(ppn), steps = trd_nap_nsteps(nodes, radix);
    return snprintf(buf, len, "NAP over all %d nodes: %d lanes, radix %d, %d inter-node step%s",
                    nodes, ppn, radix, steps, steps == 1 ? "" : "s");
}

const trd_algo trd_allreduce_nap = {
    .name = "nap",
    .coll = TRD_COLL_ALLREDUCE,
    .flags = TRD_ALGO_CANDIDATE | TRD_ALGO_NODE_PHASES | TRD_ALGO_WHOLE,
    .source = "[NAP Alg. 1, §III-A; radix per step: FLEX §2.1, RM §4]",
    .levels = "node allreduce in shared memory; log_k(nodes) exchanges, a radix k per step",
    .params_size = sizeof(trd_nap_radices),
    .parse = parse,
    .refuse = refuse,
    .plan = plan,
    .model = model,
    .model_params = model_params,
    .candidates = candidates,
    .mpich = "smp",
    .ompi = TRD_OMPI_RECURSIVE_DOUBLING,
    .explain = explain,
    .summary = summary,
};
