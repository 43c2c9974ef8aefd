/* Algorithm: Rabenseifner's reduce [MPICH §4.4]: recursive halving
 * reduce_scatter of q = 2^floor(lg p) even blocks, then a binomial gather
 * that retraces the halving to the root - over the ranks in ring order, as
 * allreduce_rabenseifner.c does, not in rank order as MPICH does, so the
 * ranks' numbering does not matter.  Params "" or "near": the halving runs
 * at list distances 1, 2, 4, ... (MPICH's order), its largest exchanges
 * (half the vector) between neighbours in DFS order, on a node or under one
 * switch, and the gather's largest messages come back over the shortest
 * distances too; the uplinks carry the smaller pieces, which is never more
 * on any uplink than "far" and less where the uplinks are thinner than the
 * node links.  "far": distances q/2, ..., 2, 1, the largest exchanges
 * across the widest subtree first; on the emulated 4-node tree of
 * docs/scale.md, whose uplinks are as fast as its node links, it measured
 * 1.2-1.3x faster than "near" from 256 KiB, which the links' loads do not
 * explain, so both are candidates and the tuner decides.  The list is folded
 * to q as MPICH folds it [MPICH §4.3]: of the first 2r positions (r = p - q)
 * each pair's odd one survives, or the root where it is the even one, so
 * no final move is needed.  Commutative ops; at least q elements.
 * Cost = 2 lg q alpha + 2 (q-1)/q m beta + (q-1)/q m gamma
 *        + [p != 2^k] (alpha + m beta + m gamma)
 */
#include <string.h>

#include "phases.h"

typedef struct rab_params {
    int far; /* 1: the halving from distance q/2 down */
} rab_params;

static int parse(const char *text, const trd_shape *sh, void *out, char *why, size_t whylen)
{
    rab_params *rp = out;
    (void)sh;
    if (!*text || !strcmp(text, "near") || !strcmp(text, "far")) {
        rp->far = !strcmp(text, "far");
        return 0;
    }
    snprintf(why, whylen, "the halving of reduce's rabenseifner is near or far, not '%s'", text);
    return TRD_ERR_INPUT;
}

static int candidates(const trd_shape *sh, char (*cand)[TRD_PARAMS_MAX], int cap)
{
    if (cap < 1 || sh->nranks < 4) /* one step: the same schedule */
        return 0;
    snprintf(cand[0], TRD_PARAMS_MAX, "far");
    return 1;
}

static int plan(trd_sb *b, const void *params)
{
    const int *ring = b->sh->ring;
    int p = b->sh->nranks, me = b->pos, root = b->call->root, q = trd_pof2_floor(p), rem = p - q;
    size_t count = b->call->count, in_off = 0;
    int in_buf = TRD_B_SEND, rpos = 0, far = ((const rab_params *)params)->far;
    while (ring[rpos] != root)
        rpos++;
    if (b->call->in_place && b->rank == root) { /* recvbuf is the work vector at the root */
        in_off = trd_sb_tmp(b, count);
        in_buf = TRD_B_TMP;
        trd_s_copy(b, 0, TRD_B_TMP, -1, in_off, TRD_B_RECV, -1, 0, count);
    }
    int work_buf = b->rank == root ? TRD_B_RECV : TRD_B_TMP;
    size_t work = b->rank == root ? 0 : trd_sb_tmp(b, count), tmp = trd_sb_tmp(b, count);
    /* the fold: new rank i < rem is pair i's survivor (trd_fold_rank keeps
     * the root), the others sit 2 rem .. p-1 */
#define PEER(k) ring[trd_fold_rank((k), rem, rpos)]
#define OFF(i) trd_even_at(count, q, (i))
    int newrank;
    if (me >= 2 * rem) {
        newrank = me - rem;
        trd_s_copy(b, 0, work_buf, -1, work, in_buf, -1, in_off, count);
    } else if (trd_fold_rank(me / 2, rem, rpos) != me) {
        trd_s_send(b, 0, ring[me ^ 1], in_buf, in_off, count);
        return 0;
    } else {
        newrank = me / 2;
        trd_s_recv(b, 0, ring[me ^ 1], work_buf, work, count);
        trd_s_reduce(b, 0, work_buf, work, in_buf, -1, in_off, count);
    }
    int rootnew = rpos >= 2 * rem ? rpos - rem : rpos / 2;
    int steps = 0, lo = 0, hi = q, bit[32], plo[32], phi[32]; /* blocks [lo, hi) are this rank's */
    while ((1 << steps) < q)
        steps++;
    /* reduce_scatter: at step s, keep the half that bit bit[s] of newrank selects */
    for (int s = 0; s < steps; s++) {
        bit[s] = far ? steps - 1 - s : s;
        int mid = lo + (hi - lo) / 2, upper = (newrank >> bit[s]) & 1;
        int klo = upper ? mid : lo, khi = upper ? hi : mid;
        int slo = upper ? lo : mid, shi = upper ? mid : hi;
        size_t ko = OFF(klo), so = OFF(slo), kn = OFF(khi) - ko, sn = OFF(shi) - so;
        int peer = PEER(newrank ^ (1 << bit[s]));
        plo[s] = lo;
        phi[s] = hi;
        trd_s_sendrecv(b, 1 + s, peer, work_buf, work + so, sn, peer, TRD_B_TMP, tmp, kn);
        trd_s_reduce(b, 1 + s, work_buf, work + ko, TRD_B_TMP, -1, tmp, kn);
        lo = klo;
        hi = khi;
    }
    /* gather: the steps in reverse; at each, the rank off the root's side
     * of the step's bit hands its blocks over and is done */
    for (int s = steps - 1; s >= 0; s--) {
        int peer = PEER(newrank ^ (1 << bit[s])), round = 1 + 2 * steps - s;
        if (((newrank ^ rootnew) >> bit[s]) & 1) {
            trd_s_send(b, round, peer, work_buf, work + OFF(lo), OFF(hi) - OFF(lo));
            return 0;
        }
        int olo = lo == plo[s] ? hi : plo[s], ohi = lo == plo[s] ? phi[s] : lo;
        trd_s_recv(b, round, peer, work_buf, work + OFF(olo), OFF(ohi) - OFF(olo));
        lo = plo[s];
        hi = phi[s];
    }
#undef OFF
#undef PEER
    return 0;
}

static const char *refuse(const trd_shape *sh, const trd_call *call, const void *params)
{
    if (!call->commutative)
        return trd_refuse_noncommutative(sh, call, params);
    return call->count >= (size_t)trd_pof2_floor(sh->nranks) ? NULL
                                                             : "needs an element per survivor";
}

const trd_algo trd_reduce_rabenseifner = {
    .name = "rabenseifner",
    .coll = TRD_COLL_REDUCE,
    .source = "[MPICH §4.4]",
    .levels = "recursive halving reduce_scatter in ring order, then a binomial gather to the root",
    .params_size = sizeof(rab_params),
    .parse = parse,
    .refuse = refuse,
    .plan = plan,
    .candidates = candidates,
};
