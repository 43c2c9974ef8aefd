/* The cost model on the schedules (cost.h): the engine of exec.h with a
 * clock per rank. */
#include "cost.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ring.h"
#include "symexec.h"

typedef struct cst {
    const trd_sched *s;
    const trd_shape *sh;
    const trd_cost_model *cm;
    trd_exec x;
    double ext;
    double *clock;    /* [p] seconds */
    double *post;     /* [p] when the current window was posted */
    double *fin;      /* [nops] when the op's messages completed */
    double *alpha_r;  /* [nops] alpha_r of the op's link (the largest of its messages') */
    double *sig_time; /* [signal id] when it was given */
    size_t capsig;
    int *pkg;            /* [p] package of each rank on its node */
    const double *share; /* [nops] bandwidth divisor of the message each send op starts */
} cst;

/* Package of rank r on its node: local ranks spread over the packages in
 * order, socket-major, as the runtime assumes [TREE Lemma 5]. */
static int package_of(const cst *c, int r)
{
    const trd_shape *sh = c->sh;
    int v = sh->node_of[r], first = sh->node_first[v], ppn = sh->node_first[v + 1] - first;
    int np = trd_topo_nodetype_npackages(c->cm->topo,
                                         trd_topo_node_type(c->cm->topo, sh->machine_node[v]));
    int l = 0;
    while (sh->ring[first + l] != r)
        l++;
    return np > 1 ? (int)((long)l * np / ppn) : 0;
}

/* The link between ranks a and b: a package link, the node link between
 * packages, or the switch-tree path between nodes. */
static trd_link_cost pair_cost(const cst *c, int a, int b)
{
    trd_topo_t t = c->cm->topo;
    int va = c->sh->node_of[a], vb = c->sh->node_of[b];
    int na = c->sh->machine_node[va], nb = c->sh->machine_node[vb];
    if (va != vb)
        return trd_topo_path_cost(t, na, nb);
    int ty = trd_topo_node_type(t, na);
    if (a == b || c->pkg[a] == c->pkg[b])
        return trd_topo_nodetype_package_link(t, ty);
    return trd_topo_nodetype_node_link(t, ty);
}

static double move_s(trd_link_cost l, double bytes)
{
    return l.bandwidth_Bps > 0 ? bytes / l.bandwidth_Bps : 0;
}

static int user_buf(int b)
{
    return b == TRD_B_SEND || b == TRD_B_RECV;
}

/* The fixed cost of a copy from or into another rank's user buffer: a
 * system call, the link's latency or TRD_COST_SINGLE_COPY_S if more. */
static double single_copy_s(trd_link_cost l)
{
    return l.latency_s > TRD_COST_SINGLE_COPY_S ? l.latency_s : TRD_COST_SINGLE_COPY_S;
}

/* On one node, what the data's place in the memory hierarchy makes of the
 * links' beta, by the message of the call (each rank's m bytes): in the
 * private caches (TRD_COST_L1_BYTES) a fraction of it, in the caches beta
 * as given, beyond them TRD_COST_MEM_SLOWDOWN times it.  1 across nodes,
 * where the network's links set the pace. */
static double cache_level(const cst *c)
{
    double m = (double)c->s->call.count * c->ext;
    if (c->sh->nnodes != 1)
        return 1;
    if (m <= TRD_COST_L1_BYTES)
        return 1 / TRD_COST_L1_SPEEDUP;
    return m <= TRD_COST_CACHE_BYTES ? 1 : TRD_COST_MEM_SLOWDOWN;
}

/* A copy or reduce: beta of the link to the owner of the memory it reaches
 * (the rank's own package link for its own), plus a system call where that
 * is another rank's user buffer (single_copy_s), plus gamma per byte reduced
 * [MPICH §3]; on one node beta and gamma at the data's place (cache_level:
 * gamma as given is the rate from memory), a system call's copy no faster
 * than from the caches. */
static int h_local(trd_exec *x, int r, size_t k)
{
    cst *c = x->ctx;
    const trd_sstep *o = &c->s->op[k];
    double bytes = (double)o->len * c->ext, lvl = cache_level(c);
    int src = o->peer >= 0 && o->peer < x->p ? o->peer : r;
    int dst = o->op == TRD_S_COPY && o->peer2 >= 0 && o->peer2 < x->p ? o->peer2 : r;
    if (src != r && user_buf(o->src)) {
        trd_link_cost l = pair_cost(c, r, src);
        c->clock[r] += single_copy_s(l) + move_s(l, bytes) * (lvl > 1 ? lvl : 1);
    } else if (dst != r) {
        trd_link_cost l = pair_cost(c, r, dst);
        c->clock[r] += single_copy_s(l) + move_s(l, bytes) * (lvl > 1 ? lvl : 1);
    } else {
        c->clock[r] += move_s(pair_cost(c, r, src), bytes) * lvl;
    }
    if (o->op == TRD_S_REDUCE)
        c->clock[r] += bytes * c->cm->gamma_s_per_byte *
                       (c->sh->nnodes == 1 ? lvl / TRD_COST_MEM_SLOWDOWN : 1);
    return 0;
}

static int h_posted(trd_exec *x, int r, size_t k, size_t end)
{
    cst *c = x->ctx;
    c->post[r] = c->clock[r];
    for (size_t i = k; i < end; i++)
        c->fin[i] = c->alpha_r[i] = 0;
    return 0;
}

/* A message from a (op i) to b (op k): it starts when both have posted it
 * and takes alpha + bytes beta, beta multiplied by its share of the links
 * and the injection of its round [TREE §2, NAP Eq. 3]. */
static int h_message(trd_exec *x, int a, size_t i, int b, size_t k)
{
    cst *c = x->ctx;
    trd_link_cost l = pair_cost(c, a, b);
    double share = c->share[i];
    double start = c->post[a] > c->post[b] ? c->post[a] : c->post[b];
    double end = start + l.latency_s + share * move_s(l, (double)c->s->op[i].len * c->ext);
    if (end > c->fin[i])
        c->fin[i] = end;
    if (end > c->fin[k])
        c->fin[k] = end;
    /* alpha_r of the link: measured, or the ratio of its latency [RM Eq. 3] */
    double ar = l.alpha_r_s > 0 ? l.alpha_r_s : l.latency_s * c->cm->alpha_r_ratio;
    c->alpha_r[i] = ar > c->alpha_r[i] ? ar : c->alpha_r[i];
    c->alpha_r[k] = ar > c->alpha_r[k] ? ar : c->alpha_r[k];
    return 0;
}

/* Several messages in flight: alpha_r per further one [RM Eq. 3]. */
static int h_completed(trd_exec *x, int r, size_t k0, size_t end)
{
    cst *c = x->ctx;
    double done = c->clock[r], ar = 0;
    int nmsg = 0;
    for (size_t k = k0; k < end; k++) {
        done = c->fin[k] > done ? c->fin[k] : done;
        ar = c->alpha_r[k] > ar ? c->alpha_r[k] : ar;
        nmsg += c->s->op[k].op == TRD_S_SENDRECV ? 2 : 1;
    }
    c->clock[r] = done + (nmsg - 1) * ar;
    return 0;
}

static int h_signal(trd_exec *x, int r, size_t k, int id)
{
    cst *c = x->ctx;
    (void)k;
    if ((size_t)id >= c->capsig) {
        size_t cap = c->capsig ? 2 * c->capsig : 1024;
        while (cap <= (size_t)id)
            cap *= 2;
        double *t = realloc(c->sig_time, cap * sizeof *t);
        if (!t)
            return trd_exec_oom(x);
        c->sig_time = t;
        c->capsig = cap;
    }
    c->sig_time[id] = c->clock[r];
    return 0;
}

/* A wait ends one latency of the link after the signal it sees, on a node
 * at most one cache-line handshake (TRD_COST_HANDSHAKE_S) [FLEX §3.1]. */
static int h_waited(trd_exec *x, int r, size_t k, int t, int id)
{
    cst *c = x->ctx;
    (void)k;
    if (t == r || id < 0)
        return 0;
    double lat = pair_cost(c, r, t).latency_s;
    if (c->sh->node_of[r] == c->sh->node_of[t] && lat > TRD_COST_HANDSHAKE_S)
        lat = TRD_COST_HANDSHAKE_S;
    double at = c->sig_time[id] + lat;
    if (at > c->clock[r])
        c->clock[r] = at;
    return 0;
}

static void cst_free(cst *c)
{
    free(c->clock);
    free(c->post);
    free(c->fin);
    free(c->alpha_r);
    free(c->sig_time);
    free(c->pkg);
    trd_exec_free(&c->x);
}

/* Bandwidth divisor of the message of every send op: the most messages of
 * its round on one directed link of its path [TREE §2], or the messages of
 * its round leaving its node times the path bandwidth over the node's
 * injection bandwidth R_N [NAP Eq. 3], whichever limits more; 1 on a node.
 * A round's messages are the schedule's sends of that round, whatever
 * order they match in. */
static int shares(const cst *c, double **out)
{
    trd_topo_t t = c->cm->topo;
    const trd_sched *s = c->s;
    const trd_shape *sh = c->sh;
    int S = trd_topo_nswitches(t), N = trd_topo_nnodes(t), links[256];
    size_t nl = 2 * ((size_t)S + (size_t)N), n = 0;
    int *use = calloc(nl, sizeof *use), *leave = calloc((size_t)N + 1, sizeof *leave);
    double *f = malloc((s->nops + 1) * sizeof *f);
    trd_xmsg *msg = malloc((s->nops + 1) * sizeof *msg);
    size_t *at = malloc((s->nops + 1) * sizeof *at);
    int rc = use && leave && f && msg && at ? TRD_OK : TRD_ERR_NOMEM;
    for (int r = 0; r < s->nranks && !rc; r++)
        for (size_t i = s->first[r]; i < s->first[r + 1]; i++) {
            const trd_sstep *o = &s->op[i];
            f[i] = 1;
            if ((o->op == TRD_S_SEND || o->op == TRD_S_SENDRECV) && o->peer >= 0 &&
                o->peer < s->nranks) {
                msg[n] = (trd_xmsg){0, o->round, r, o->peer};
                at[n++] = i;
            }
        }
    trd_exec view = {.msgs = msg, .nmsgs = n};
    size_t *order = rc ? NULL : trd_exec_round_order(&view, &n);
    if (!rc && !order)
        rc = TRD_ERR_NOMEM;
    for (size_t g0 = 0, g1; !rc && g0 < n; g0 = g1) {
        g1 = trd_exec_round_end(&view, order, n, g0);
        /* count this round's messages per link and per leaving node */
        for (int pass = 0; pass < 3; pass++)
            for (size_t i = g0; i < g1; i++) {
                const trd_xmsg *g = &msg[order[i]];
                int a = sh->machine_node[sh->node_of[g->from]];
                int b = sh->machine_node[sh->node_of[g->to]];
                if (a == b)
                    continue;
                int cnt = trd_topo_path_links(t, a, b, links, 256);
                if (pass == 0) {
                    for (int l = 0; l < cnt && l < 256; l++)
                        use[links[l]]++;
                    leave[a]++;
                } else if (pass == 1) {
                    double d = 1;
                    for (int l = 0; l < cnt && l < 256; l++)
                        d = use[links[l]] > d ? use[links[l]] : d;
                    trd_link_cost pc = trd_topo_path_cost(t, a, b);
                    if (pc.injection_Bps > 0 && pc.bandwidth_Bps > 0) {
                        double inj = leave[a] * pc.bandwidth_Bps / pc.injection_Bps;
                        d = inj > d ? inj : d;
                    }
                    f[at[order[i]]] = d;
                } else {
                    for (int l = 0; l < cnt && l < 256; l++)
                        use[links[l]] = 0;
                    leave[a] = 0;
                }
            }
    }
    free(use);
    free(leave);
    free(msg);
    free(at);
    free(order);
    if (rc)
        free(f);
    else
        *out = f;
    return rc;
}

int trd_sched_cost(const trd_sched *s, const trd_shape *sh, const trd_cost_model *cm,
                   double *seconds, char *why, size_t whylen)
{
    static const trd_exec_hooks hooks = {.local = h_local,
                                         .posted = h_posted,
                                         .message = h_message,
                                         .completed = h_completed,
                                         .signal = h_signal,
                                         .waited = h_waited};
    int p = s->nranks;
    double *share = NULL;
    cst c;
    *seconds = -1;
    memset(&c, 0, sizeof c);
    if (!sh->machine_node || s->nranks != sh->nranks) {
        snprintf(why, whylen, "the cost needs the communicator's nodes on the machine");
        return TRD_ERR_VERIFY;
    }
    c.s = s;
    c.sh = sh;
    c.cm = cm;
    c.ext = (double)s->call.extent;
    int rc = trd_exec_init(&c.x, s, sh, 1, &hooks, &c, TRD_X_RECORD_NONE, why, whylen);
    if (!rc) {
        c.clock = calloc((size_t)p + 1, sizeof *c.clock);
        c.post = calloc((size_t)p + 1, sizeof *c.post);
        c.fin = calloc(s->nops + 1, sizeof *c.fin);
        c.alpha_r = calloc(s->nops + 1, sizeof *c.alpha_r);
        c.pkg = malloc(((size_t)p + 1) * sizeof *c.pkg);
        if (!c.clock || !c.post || !c.fin || !c.alpha_r || !c.pkg)
            rc = trd_exec_oom(&c.x);
    }
    /* every rank's package, once: pair_cost asks for it per op */
    for (int r = 0; r < p && !rc; r++)
        c.pkg[r] = package_of(&c, r);
    if (!rc && (rc = shares(&c, &share)) != TRD_OK)
        trd_exec_oom(&c.x);
    c.share = share;
    if (!rc)
        rc = trd_exec_run(&c.x);
    if (!rc) {
        double worst = 0;
        for (int r = 0; r < p; r++)
            worst = c.clock[r] > worst ? c.clock[r] : worst;
        *seconds = worst;
    }
    cst_free(&c);
    free(share);
    return rc;
}
