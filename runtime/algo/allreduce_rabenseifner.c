/* Algorithm: Rabenseifner's allreduce = recursive halving reduce_scatter +
 * recursive doubling allgather [MPICH §4.3, §4.1; RM §2].  The list is folded
 * to q = 2^floor(lg n) as MPICH does [MPICH §4.3]: of the first 2r ranks
 * (r = n - q) each even one hands its vector to the odd one above it and gets
 * the result back at the end.  The halving runs at distances 1, 2, 4, ... in
 * list order, so the largest exchanges stay between neighbours (on a node or
 * under one switch in DFS order); the survivor with new rank i ends with the
 * block whose index is i bit-reversed, and the allgather retraces the steps.
 * Over the whole communicator the list is the ring order.  Commutative ops.
 * Cost = 2 lg q alpha + 2 (q-1)/q m beta + (q-1)/q m gamma
 *        + [n != q] (2 alpha + 2 m beta + m gamma)
 */
#include "phases.h"

static int rabenseifner_list(trd_sb *b, int round, const int *ranks, int n, int me, size_t base,
                             size_t count)
{
    size_t ext = b->call->extent;
    int q = 1, newrank;
    if (n <= 1 || count == 0)
        return 0;
    while (q * 2 <= n)
        q *= 2;
    int rem = n - q;
    size_t mark = b->tmp_top, tmp = trd_sb_tmp(b, count);
    if (me < 2 * rem) {
        if (me % 2 == 0) {
            trd_s_send(b, round, ranks[me + 1], TRD_B_RECV, base, count);
            newrank = -1;
        } else {
            trd_s_recv(b, round, ranks[me - 1], TRD_B_TMP, tmp, count);
            trd_s_reduce(b, round, TRD_B_RECV, base, TRD_B_TMP, -1, tmp, count);
            newrank = me / 2;
        }
    } else {
        newrank = me - rem;
    }
#define PEER(k) ranks[(k) < rem ? 2 * (k) + 1 : (k) + rem]
#define OFF(i) trd_block_at(count, ext, q, (i))
    if (newrank >= 0) {
        int plo[32], phi[32], steps = 0, lo = 0, hi = q; /* blocks [lo, hi) are this rank's */
        /* reduce_scatter: keep the half that bit `mask` of newrank selects */
        for (int mask = 1; mask < q; mask <<= 1, steps++) {
            int mid = lo + (hi - lo) / 2, upper = (newrank & mask) != 0;
            int klo = upper ? mid : lo, khi = upper ? hi : mid;
            int slo = upper ? lo : mid, shi = upper ? mid : hi;
            size_t ko = OFF(klo), so = OFF(slo), kn = OFF(khi) - ko, sn = OFF(shi) - so;
            int peer = PEER(newrank ^ mask);
            plo[steps] = lo;
            phi[steps] = hi;
            trd_s_sendrecv(b, round + 1 + steps, peer, TRD_B_RECV, base + so, sn, peer, TRD_B_TMP,
                           tmp, kn);
            trd_s_reduce(b, round + 1 + steps, TRD_B_RECV, base + ko, TRD_B_TMP, -1, tmp, kn);
            lo = klo;
            hi = khi;
        }
        /* allgather: at the steps in reverse, swap halves of the step's range */
        for (int k = steps - 1; k >= 0; k--) {
            int olo = lo == plo[k] ? hi : plo[k], ohi = lo == plo[k] ? phi[k] : lo;
            size_t mo = OFF(lo), oo = OFF(olo), mn = OFF(hi) - mo, on = OFF(ohi) - oo;
            int peer = PEER(newrank ^ (1 << k));
            trd_s_sendrecv(b, round + 1 + 2 * steps - k, peer, TRD_B_RECV, base + mo, mn, peer,
                           TRD_B_RECV, base + oo, on);
            lo = plo[k];
            hi = phi[k];
        }
    }
#undef OFF
#undef PEER
    if (me < 2 * rem) {
        if (me % 2)
            trd_s_send(b, round + TRD_ROUND_HALVING_UNFOLD, ranks[me - 1], TRD_B_RECV, base, count);
        else
            trd_s_recv(b, round + TRD_ROUND_HALVING_UNFOLD, ranks[me + 1], TRD_B_RECV, base, count);
    }
    trd_sb_tmp_release(b, mark);
    return 0;
}

static int plan(trd_sb *b, const void *params)
{
    (void)params;
    trd_sb_input_to_recv(b);
    return rabenseifner_list(b, 1, b->sh->ring, b->sh->nranks, b->pos, 0, b->call->count);
}

/* in ring order the first lg(ppn) distances stay on a node [MPICH §4]; the
 * others cross the network at node distances 1, 2, 4, ..., all ppn ranks of
 * a node at once (trd_beta_step) */
static double model(const trd_levels *l, int nodes, int ppn, double m)
{
    int np = nodes * ppn, steps = (int)trd_lg(np), in = (int)trd_lg(ppn);
    double t = 0, part = m;
    for (int k = 0; k < in && k < steps; k++) {
        part /= 2;
        t += 2 * (l->intra.latency_s + part / l->intra.bandwidth_Bps) + part * l->gamma_s_per_byte;
    }
    t += trd_halving_nodes_s(l, steps - in, ppn, part);
    if (np & (np - 1)) /* the fold of the non-power-of-two ranks */
        t += 2 * trd_msg_s(l->intra, m) + m * l->gamma_s_per_byte;
    return t;
}

const trd_algo trd_allreduce_rabenseifner = {
    .name = "rabenseifner",
    .coll = TRD_COLL_ALLREDUCE,
    .flags = TRD_ALGO_CANDIDATE | TRD_ALGO_SPLITS,
    .source = "[MPICH §4.3, RM §2]",
    .levels = "recursive halving + doubling through every rank",
    .refuse = trd_refuse_noncommutative,
    .plan = plan,
    .list = rabenseifner_list,
    .model = model,
    .mpich = "reduce_scatter_allgather",
    .ompi = TRD_OMPI_RABENSEIFNER,
};
