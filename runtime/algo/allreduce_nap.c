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
 * Cost = ceil(log_k n) (alpha_inter + m beta_inter + m gamma)
 *        + (ceil(log_k n) + 1) ceil(log2 ppn) (alpha_intra + m beta_intra + m gamma)
 * [NAP Eq. 6].
 *
 * The step plan (trd_nap.h) is pure C: the planner below, the generator's
 * --explain and the unit test of every (nodes, lanes) shape use it.
 */
#include "trd_nap.h"

#include <math.h>
#include <stdlib.h>

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

int trd_nap_step(int n, int lanes, int radix, int step, int node, int lane, trd_nap_stepinfo *info,
                 trd_nap_xfer *recv, int *nrecv, trd_nap_xfer *send, int *nsend)
{
    if (n < 1 || lanes < 1 || radix < 2 || step < 0 || node < 0 || node >= n || lane < 0 ||
        lane >= lanes)
        return -1;
    long long S = 1;
    for (int s = 0; s < step; s++) {
        S *= radix;
        if (S >= n) /* a step past the last one: a single subgroup */
            break;
    }
    long long span = S * radix;
    int base = (int)((node / span) * span);
    int end = (int)(base + span < n ? base + span : n);
    int j = (int)((node - base) / S);
    int p = (int)((node - base) % S);
    int g = (int)((end - base + S - 1) / S);
    if (S >= n)
        g = 1, j = 0, p = node;
    if (info)
        *info = (trd_nap_stepinfo){(int)S, g, j, p};
    *nrecv = 0;
    *nsend = 0;
    if (g <= 1)
        return 0;
        /* size of subgroup r of this group */
#define SUBSIZE(r) imin((int)S, end - (base + (r) * (int)S))
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
        int sz2 = SUBSIZE(j2);
        for (int p2 = p; p2 < sz2; p2 += szj) {
            if ((j2 + p2 / szj) % lanes != lane)
                continue;
            send[(*nsend)++] = (trd_nap_xfer){base + j2 * (int)S + p2, j % lanes, j};
        }
    }
#undef SUBSIZE
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
            trd_s_send(b, round + 100, trd_sb_local_rank(b, l), TRD_B_RECV, 0, cnt);
    } else {
        trd_s_recv(b, round + 100, trd_sb_local_rank(b, b->local % k), TRD_B_RECV, 0, cnt);
    }
    return 0;
}

/* Rounds of one phase: phase k uses k * PHASE .. */
#define PHASE (1 << 20)
/* Most requests one rank has open at once. */
#define NAP_MAX_REQUESTS 64

/* Commutative ops; a user-defined one (whole vectors) in one chunk. */
static const char *refuse(const trd_shape *sh, const trd_call *call, const void *params)
{
    const char *no = trd_refuse_whole_chunk(sh, call);
    return no ? no : trd_refuse_noncommutative(sh, call, params);
}

static int plan(trd_sb *b, const void *params)
{
    const trd_shape *sh = b->sh;
    size_t cnt = b->call->count;
    int ppn_min, ppn_max, rc = 0;
    (void)params;
    trd_shape_ppn(sh, &ppn_min, &ppn_max);
    int lanes = ppn_min, radix = trd_nap_radix(lanes), steps = trd_nap_nsteps(sh->nnodes, radix);
    int maxrecv = (radix + lanes - 1) / lanes;
    trd_nap_xfer *recv = malloc((size_t)maxrecv * sizeof *recv);
    trd_nap_xfer *send = malloc((size_t)sh->nnodes * sizeof *send);
    size_t acc = trd_sb_tmp(b, cnt), slots = trd_sb_tmp(b, cnt * (size_t)maxrecv);
    if (!recv || !send) {
        free(recv);
        free(send);
        return -1;
    }
    trd_sb_input_to_recv(b);
    rc = node_allreduce(b, 0, b->ppn);
#define NODE_RANK(v, l) sh->ring[sh->node_first[(v)] + (l)]
    for (int st = 0; st < steps && !rc; st++) {
        int round = (st + 1) * PHASE, nr = 0, ns = 0, lane = b->local < lanes ? b->local : 0;
        trd_nap_stepinfo info;
        if (trd_nap_step(sh->nnodes, lanes, radix, st, b->node, lane, &info, recv, &nr, send,
                         &ns)) {
            b->fail = "the NAP step plan failed";
            rc = -1;
            break;
        }
        int g = info.nsub, j = info.sub;
        if (g <= 1)
            continue;
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
    }
#undef NODE_RANK
    free(recv);
    free(send);
    return rc;
}

static double model(const trd_levels *l, int nodes, int ppn, double bytes)
{
    int lanes = ppn, k = trd_nap_radix(lanes);
    int steps = trd_nap_nsteps(nodes, k);
    double intra = trd_lg(ppn) * (trd_msg_s(l->intra, bytes) + bytes * l->gamma_s_per_byte);
    int per_lane = (k + lanes - 1) / lanes; /* messages a lane receives per step */
    double inj = l->far_inter.injection_Bps > 0 ? ppn * bytes / l->far_inter.injection_Bps : 0;
    double one = fmax(trd_msg_s(l->far_inter, bytes), l->far_inter.latency_s + inj);
    double inter = steps * per_lane * (one + bytes * l->gamma_s_per_byte);
    return (steps + 1) * intra + inter;
}

const trd_algo trd_allreduce_nap = {
    .name = "nap",
    .coll = TRD_COLL_ALLREDUCE,
    .flags = TRD_ALGO_CANDIDATE | TRD_ALGO_NODE_PHASES | TRD_ALGO_WHOLE,
    .source = "[NAP Alg. 1, §III-A]",
    .levels = "node allreduce in shared memory; log_k(nodes) exchanges, every lane active",
    .refuse = refuse,
    .plan = plan,
    .model = model,
    .mpich = "smp",
    .ompi = 3,
};
