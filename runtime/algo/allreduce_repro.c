/* Algorithm: reproducible allreduce: every element is reduced in one fixed
 * order that depends only on the number of ranks p, never on the placement,
 * the node count, the message size or the block split -- a binary tree over
 * the comm ranks in rank order, ((x0 op x1) op (x2 op x3)) op ..., pairs at
 * distance 1, then 2, 4, ..., a group without a partner carried up as is.
 * The vector is cut into p even blocks (trd_even_at); a reduce_scatter by
 * direct exchange in comm-rank terms gives rank i block i of every rank's
 * input (step k: to i+k, from i-k, up to TRD_REPRO_WINDOW steps posted
 * together) in a temporary of p pieces, which it reduces in the tree's
 * order [MPICH §4.3 pairwise exchange, reduction deferred]; an allgather of
 * the blocks, data movement only, follows: recursive doubling when p is a
 * power of two, else the ring [MPICH §4.1].  Summation order is what makes
 * floating-point results differ; here it is fixed, so any algorithm choice,
 * placement or node count of the same rank order gives the same bits.  The
 * tree keeps rank order, so any associative op (commutative or not) runs.
 * Cost = (ceil((p-1)/W) + g) alpha + 2 (p-1)/p m beta + (p-1)/p m gamma,
 *        W = TRD_REPRO_WINDOW, g = lg p for p a power of two, else p-1:
 *        Rabenseifner's bandwidth and arithmetic for any op, with 2(p-1)
 *        messages per rank where Rabenseifner sends 2 lg p.
 *
 * A user-defined op is called on whole vectors (trd_call.whole), as MPICH's
 * own algorithms call it: the same tree then runs as a binomial reduce to
 * rank 0, whose rank j combines the results of j+1, j+2..j+3, j+4..j+7, ...
 * on the right of its own -- the groups above, so the same bits -- and a
 * binomial bcast of the result [MPICH §4.4, §4.2].
 * Cost = 2 ceil(lg p) (alpha + m beta) + ceil(lg p) m gamma
 */
#include "phases.h"

#include <stdlib.h>

/* Steps of the direct exchange posted at once: enough to cover the latency
 * of small messages, few enough not to flood a receiver with large ones. */
#define TRD_REPRO_WINDOW 8

/* Where piece j (block i of rank j's input) lives on rank i. */
typedef struct repro_loc {
    int buf;
    size_t off;
} repro_loc;

/* Whether piece j is the right operand of one of the tree's reductions,
 * which write their result there: the odd pieces and the last. */
static int tree_writes(int p, int j)
{
    return p > 1 && (j % 2 == 1 || j == p - 1);
}

static int plan(trd_sb *b, const void *params)
{
    int p = b->sh->nranks, me = b->rank, round = 1;
    size_t count = b->call->count, lo = trd_even_at(count, p, me);
    size_t n = trd_even_at(count, p, me + 1) - lo; /* my block's elements */
    int in_place = b->call->in_place, in_buf = in_place ? TRD_B_RECV : TRD_B_SEND;
    (void)params;
    if (b->call->whole) {
        int rc = trd_plan_reduce_binomial(b, 0, NULL, p, me, 0, in_buf, 0, count);
        if (rc)
            return rc;
        return trd_plan_bcast_binomial(b, TRD_PHASE, NULL, p, me, 0, count, 0);
    }
    repro_loc *loc = malloc((size_t)p * sizeof *loc);
    if (!loc)
        return TRD_ERR_NOMEM;
    /* pieces in the temporary; the last one straight into recvbuf where
     * that is not where my own input still is; mine where it is */
    size_t tmp = trd_sb_tmp(b, (size_t)p * n);
    for (int j = 0; j < p; j++)
        loc[j] = (repro_loc){TRD_B_TMP, tmp + (size_t)j * n};
    if (!in_place)
        loc[p - 1] = (repro_loc){TRD_B_RECV, lo};
    loc[me] = (repro_loc){in_buf, lo};
    /* my input is the right operand of a reduction: it cannot stay in sendbuf */
    if (n && tree_writes(p, me) && loc[me].buf == TRD_B_SEND) {
        repro_loc to = me == p - 1 ? (repro_loc){TRD_B_RECV, lo}
                                   : (repro_loc){TRD_B_TMP, tmp + (size_t)me * n};
        trd_s_copy(b, 0, to.buf, -1, to.off, TRD_B_SEND, -1, lo, n);
        loc[me] = to;
    }
    /* reduce_scatter: block i+k of my input to rank i+k, mine from i-k;
     * empty blocks travel in no message, on either side */
    for (int k = 1; k < p; k++, round++) {
        int to = (me + k) % p, from = (me - k + p) % p;
        size_t so = trd_even_at(count, p, to), sn = trd_even_at(count, p, to + 1) - so;
        if (sn && n)
            trd_s_sendrecv(b, round, to, in_buf, so, sn, from, loc[from].buf, loc[from].off, n);
        else if (sn)
            trd_s_send(b, round, to, in_buf, so, sn);
        else if (n)
            trd_s_recv(b, round, from, loc[from].buf, loc[from].off, n);
        else
            continue;
        trd_sb_nb(b, k % TRD_REPRO_WINDOW != 0 && k < p - 1);
    }
    /* a window's last message may have had nothing to post: close it */
    trd_sb_nb(b, 0);
    /* the fixed tree: at distance s = 1, 2, 4, ... the groups [j, j+s) and
     * [j+s, min(j+2s, p)) join, each group's running result kept at its
     * last piece (the left operand is the lower ranks'); rounds advance
     * alike on every rank, so that the allgather's messages match by round */
    for (int s = 1; s < p; s *= 2, round++)
        for (int j = 0; n && j + s < p; j += 2 * s) {
            int l = j + s - 1, r = (j + 2 * s < p ? j + 2 * s : p) - 1;
            trd_s_reduce(b, round, loc[r].buf, loc[r].off, loc[l].buf, -1, loc[l].off, n);
        }
    trd_s_copy(b, round, TRD_B_RECV, -1, lo, loc[p - 1].buf, -1, loc[p - 1].off, n);
    if ((p & (p - 1)) == 0)
        trd_plan_gather_doubling(b, round + 1, count, 0);
    else
        trd_plan_gather_ring(b, round + 1, count, 0);
    free(loc);
    return 0;
}

const trd_algo trd_allreduce_repro = {
    .name = "repro",
    .coll = TRD_COLL_ALLREDUCE,
    .flags = TRD_ALGO_SPLITS | TRD_ALGO_QUADRATIC | TRD_ALGO_WHOLE | TRD_ALGO_RANK_ORDER,
    .source = "[MPICH §4.3, §4.1]",
    .levels = "direct exchange, fixed rank-order tree, allgather (reproducible)",
    .plan = plan,
};
