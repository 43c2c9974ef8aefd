/* Algorithm: recursive multiplying allreduce [RM §4], a generalisation of
 * recursive doubling in which stage i exchanges vectors among B_i ranks at
 * once, so a factorisation n = B_1 B_2 ... B_s gives s stages.  Counts with
 * awkward prime factors are handled by collapse/expand (MPICH's
 * non-power-of-two fix with any base [MPICH §4]) or by merging the remaining
 * ranks into one group of the first and last stage of a hypercuboid
 * [RM §4.1, Fig. 7].  The grammar of the schedule strings and the meaning of
 * every token are in trd_rm.h and rm_schedule.c parses, checks and formats
 * them and chooses a default; this file gives each rank its steps and plans
 * them.
 * Each step posts its receives and its sends of the whole vector at once, so
 * the B-1 messages of a stage overlap (the pipelined postal model [RM §3]),
 * then folds the vectors in the plan's operand order.  Every rank of a group
 * evaluates the same expression, so all ranks get the same bits; schedules
 * without merge keep rank order and serve non-commutative ops (rank order is
 * then the list; commutative ops run in ring order).
 * Cost, for m bytes, of each step (each term at the rank that pays most)
 * [RM Eqs. 3-4]:
 *   aB          alpha_p + (B-1) alpha_r + (B-1) m beta + (B-1) m gamma
 *   cTmB        alpha_p + (B-1) alpha_r + (B-1) m beta + (B-1) m gamma
 *   eTmB        alpha_p + (B-1) alpha_r + (B-1) m beta
 *   mRgGaB      alpha_p + B alpha_r + B m beta + (B-1+R) m gamma
 *   nRgGaB      alpha_p + (B-1+R) alpha_r + (B-1+R) m beta + (B-1) m gamma
 * Cost = the sum over the steps; e.g. "a2,a3" on 6 ranks:
 *   2 alpha_p + 3 alpha_r + 3 m beta + 3 m gamma, against 4 (alpha + m beta +
 *   m gamma) for recursive doubling with MPICH's fold [RM Fig. 2, MPICH §4].
 */
#include "trd_rm.h"

#include <stdio.h>
#include <string.h>

#include "algo.h"
#include "phases.h"

/* ---- Per-rank plan ------------------------------------------------------------------- */

/* Rank v of the level around collapse c -> rank in c's inner level, or -1
 * for a rank that sits idle inside it. */
static int collapse_down(const trd_rm_token *c, int v)
{
    int T = c->arg, B = c->base;
    if (v < 0)
        return -1;
    if (v < T)
        return v % B ? -1 : v / B;
    return v - T + T / B;
}

/* Rank u of c's inner level -> rank of the level around c. */
static int collapse_up(const trd_rm_token *c, int u)
{
    int T = c->arg, B = c->base;
    return u < T / B ? u * B : u - T / B + T;
}

/* Lowest member of group g of a stage of base B at stride S. */
static int group_low(int g, int S, int B)
{
    return (g / S) * S * B + g % S;
}

int trd_rm_plan_step(const trd_rm_schedule *s, int me, int step, trd_rm_step *out)
{
    int chain[TRD_RM_MAX_TOKENS], depth = 0;
    out->nsend = out->nrecv = out->nfold = 0;
    if (!s || me < 0 || me >= s->n || step < 0 || step >= s->ntokens)
        return TRD_ERR_INPUT;
    const trd_rm_token *t = &s->tok[step];
    /* the collapses around the token, innermost first */
    for (int o = t->outer; o >= 0; o = s->tok[o].outer)
        chain[depth++] = o;
    int v = me;
    for (int d = depth - 1; d >= 0; d--)
        v = collapse_down(&s->tok[chain[d]], v);
    if (v < 0)
        return 0;
    /* peers in level ranks now, virtual ranks at the end */
    int B = t->base, S = t->stride, n = t->ranks, H = n - t->remain;
    int *send = out->send, *recv = out->recv, *fold = out->fold;
    int ns = 0, nr = 0, nf = 0;
    switch (t->kind) {
    case TRD_RM_C:
    case TRD_RM_E: {
        int T = t->arg, d = v % B;
        if (v >= T)
            break;
        if (t->kind == TRD_RM_C && d == 0) {
            fold[nf++] = TRD_RM_SELF;
            for (int k = 1; k < B; k++) {
                fold[nf++] = nr;
                recv[nr++] = v + k;
            }
        } else if (t->kind == TRD_RM_C) {
            send[ns++] = v - d;
        } else if (d == 0) {
            for (int k = 1; k < B; k++)
                send[ns++] = v + k;
        } else {
            fold[nf++] = nr;
            recv[nr++] = v - d;
        }
        break;
    }
    case TRD_RM_A:
    case TRD_RM_M:
    case TRD_RM_N: {
        int G = t->group;
        if (v >= H) { /* a remaining rank of a merge */
            if (t->kind == TRD_RM_M) {
                for (int k = 0; k < B; k++)
                    send[ns++] = G * B + k;
            } else if (t->kind == TRD_RM_N) {
                int lo = group_low(G, S, B);
                for (int k = 0; k < B; k++) {
                    fold[nf++] = nr;
                    recv[nr++] = lo + k * S;
                }
            }
            break;
        }
        int d = (v / S) % B, lo = v - d * S;
        int mine = lo / (S * B) * S + lo % S; /* index of v's group */
        for (int k = 0; k < B; k++) {
            if (k == d) {
                fold[nf++] = TRD_RM_SELF;
                continue;
            }
            send[ns++] = lo + k * S;
            fold[nf++] = nr;
            recv[nr++] = lo + k * S;
        }
        if (t->kind == TRD_RM_M && mine == G) {
            for (int j = H; j < n; j++) {
                fold[nf++] = nr;
                recv[nr++] = j;
            }
        } else if (t->kind == TRD_RM_N && mine == G) {
            for (int j = H; j < n; j++)
                send[ns++] = j;
        }
        break;
    }
    default:
        return TRD_ERR_INPUT;
    }
    /* level ranks -> virtual ranks, through the collapses innermost first */
    for (int d = 0; d < depth; d++) {
        const trd_rm_token *c = &s->tok[chain[d]];
        for (int i = 0; i < ns; i++)
            send[i] = collapse_up(c, send[i]);
        for (int i = 0; i < nr; i++)
            recv[i] = collapse_up(c, recv[i]);
    }
    out->nsend = ns;
    out->nrecv = nr;
    out->nfold = nf;
    return 0;
}

/* ---- The allreduce ------------------------------------------------------------ */

/* The schedule text, or with "" the default of trd_rm_default_first(size,
 * ppn, 4): when every node holds the same number ppn (2..64) of ranks and
 * ppn divides the size, the first stage is the allreduce within each node
 * (consecutive in ring order) and the other bases are at most 4; otherwise
 * all bases are at most 4, with a collapse where the size has a prime factor
 * above 4.  Base 4: per factor of ranks covered a stage costs (alpha_p +
 * (B-1) alpha_r) / ln B, nearly flat for B = 4..6 at an overlap ratio
 * alpha_p / alpha_r of 4 [RM Eqs. 4-5, Fig. 4], while the (B-1) m beta term
 * favours the smaller base. */
static int parse(const char *text, const trd_shape *sh, void *out, char *why, size_t whylen)
{
    trd_rm_schedule *rs = out;
    char err[128];
    int ppn_min, ppn_max;
    if (!*text) {
        trd_shape_ppn(sh, &ppn_min, &ppn_max);
        trd_rm_default_first(sh->nranks, ppn_min == ppn_max ? ppn_max : 0, 4, rs);
        return 0;
    }
    if (trd_rm_parse(text, sh->nranks, rs, err, sizeof err) == 0)
        return 0;
    snprintf(why, whylen, "rm schedule '%s' does not fit this communicator of %d ranks: %s", text,
             sh->nranks, err);
    return TRD_ERR_INPUT;
}

static const char *refuse(const trd_shape *sh, const trd_call *call, const void *params)
{
    (void)sh;
    if (!call->commutative && !trd_rm_keeps_order(params))
        return "schedule with merge needs a commutative operation";
    return NULL;
}

/* Schedule rs over recvbuf[base, base + cnt) of the ranks list[0..n) (NULL:
 * comm ranks 0..n-1), me this rank's index, steps in rounds round.. */
static void rm_steps(trd_sb *b, int round, const int *list, int me, size_t base, size_t cnt,
                     const trd_rm_schedule *rs)
{
    int nslots = trd_rm_max_recv(rs);
    size_t mark = b->tmp_top;
    size_t slots = trd_sb_tmp(b, cnt * (size_t)(nslots + 1)), acc0 = slots + (size_t)nslots * cnt;
    trd_rm_step st;
#define RM_RANK(v) (list ? list[v] : (v))
    for (int k = 0; k < trd_rm_nsteps(rs); k++) {
        trd_rm_plan_step(rs, me, k, &st);
        if (st.nsend == 0 && st.nrecv == 0)
            continue;
        /* a lone received vector that replaces this rank's lands in recvbuf */
        int direct = st.nsend == 0 && st.nfold == 1 && st.fold[0] == 0 && st.nrecv == 1;
        for (int i = 0; i < st.nrecv; i++) {
            if (direct)
                trd_s_recv(b, round + k, RM_RANK(st.recv[i]), TRD_B_RECV, base, cnt);
            else
                trd_s_recv(b, round + k, RM_RANK(st.recv[i]), TRD_B_TMP, slots + (size_t)i * cnt,
                           cnt);
            trd_sb_nb(b, 1);
        }
        for (int i = 0; i < st.nsend; i++) {
            trd_s_send(b, round + k, RM_RANK(st.send[i]), TRD_B_RECV, base, cnt);
            trd_sb_nb(b, 1);
        }
        trd_sb_nb(b, 0); /* then wait for all of them */
        if (st.nfold == 0 || direct)
            continue;
        /* recvbuf = src(fold[0]) op ... op src(fold[nfold-1]), folded right
         * to left; the last received source serves as the accumulator (its
         * slot is not read again), otherwise acc does */
        int last = st.fold[st.nfold - 1];
        if (st.nfold == 1 && last == TRD_RM_SELF)
            continue;
        size_t acc = acc0;
        if (last == TRD_RM_SELF)
            trd_s_copy(b, round + k, TRD_B_TMP, -1, acc, TRD_B_RECV, -1, base, cnt);
        else
            acc = slots + (size_t)last * cnt;
        for (int i = st.nfold - 2; i >= 0; i--) {
            int f = st.fold[i];
            if (f == TRD_RM_SELF)
                trd_s_reduce(b, round + k, TRD_B_TMP, acc, TRD_B_RECV, -1, base, cnt);
            else
                trd_s_reduce(b, round + k, TRD_B_TMP, acc, TRD_B_TMP, -1, slots + (size_t)f * cnt,
                             cnt);
        }
        trd_s_copy(b, round + k, TRD_B_RECV, -1, base, TRD_B_TMP, -1, acc, cnt);
    }
#undef RM_RANK
    trd_sb_tmp_release(b, mark);
}

int trd_plan_rm_list(trd_sb *b, int round, const int *ranks, int n, int me, int maxbase,
                     size_t base, size_t count)
{
    trd_rm_schedule rs;
    if (n <= 1 || count == 0)
        return 0;
    trd_rm_default(n, maxbase, &rs);
    rm_steps(b, round, ranks, me, base, count, &rs);
    return 0;
}

static int plan(trd_sb *b, const void *params)
{
    const int *list = b->call->commutative ? b->sh->ring : NULL;
    trd_sb_input_to_recv(b);
    rm_steps(b, 0, list, b->call->commutative ? b->pos : b->rank, 0, b->call->count, params);
    return 0;
}

/* One stage of base ppn on the node, then base 2 stages across nodes, as
 * recursive doubling's [RM §4, Eq. 4, TREE §2]. */
static double model(const trd_levels *l, int nodes, int ppn, double m)
{
    double t = ppn > 1 ? l->intra.latency_s +
                             (ppn - 1) * (m / l->intra.bandwidth_Bps + m * l->gamma_s_per_byte)
                       : 0;
    return t + trd_rd_nodes_s(l, nodes, ppn, m);
}

static int candidates(const trd_shape *sh, char (*cand)[TRD_PARAMS_MAX], int cap)
{
    return trd_factor_lists(sh->nranks, "a", cand, cap);
}

const trd_algo trd_allreduce_rm = {
    .name = "rm",
    .coll = TRD_COLL_ALLREDUCE,
    .flags = TRD_ALGO_CANDIDATE | TRD_ALGO_WHOLE,
    .source = "[RM §4]",
    .levels = "base-ppn stage on the node; base-2 stages across nodes",
    .params_size = sizeof(trd_rm_schedule),
    .parse = parse,
    .refuse = refuse,
    .plan = plan,
    .model = model,
    .candidates = candidates,
    .mpich = "recursive_doubling",
    .ompi = TRD_OMPI_RECURSIVE_DOUBLING,
};
