/* Algorithm: recursive doubling allreduce with the non-power-of-two fold
 * [MPICH §4, RM §2].  The first 2*rem ranks of the list pair up (even sends
 * to odd), the remaining power of two exchange whole vectors at distances 1,
 * 2, 4, ..., and the folded ranks get the result back.  For a non-commutative
 * op the lower list index is always the left operand, so the list must be in
 * rank order; every rank then computes the same expression, bit for bit.
 * Cost = (ceil(lg p) + 2 [p not a power of two]) (alpha + m beta) + lg p m gamma
 *
 * Over the whole communicator: in ring order for commutative ops (the low
 * distances stay on a node), in rank order otherwise.  The composites run it
 * among node leaders or per lane (the list form).
 */
#include "phases.h"

/* Allreduce of recvbuf[base, base+count) over ranks[0..n) (NULL: comm ranks
 * 0..n-1), me this rank's index; tmp holds count elements. */
static int rd_list(trd_sb *b, int round, const int *ranks, int n, int me, size_t base, size_t count)
{
    int pof2 = 1, newrank;
    if (n <= 1 || count == 0)
        return 0;
    while (pof2 * 2 <= n)
        pof2 *= 2;
    int rem = n - pof2;
    size_t mark = b->tmp_top, tmp = trd_sb_tmp(b, count);
#define RANK(i) (ranks ? ranks[i] : (i))
    if (me < 2 * rem) {
        if (me % 2 == 0) {
            trd_s_send(b, round, RANK(me + 1), TRD_B_RECV, base, count);
            newrank = -1;
        } else {
            trd_s_recv(b, round, RANK(me - 1), TRD_B_TMP, tmp, count);
            trd_s_reduce(b, round, TRD_B_RECV, base, TRD_B_TMP, -1, tmp, count);
            newrank = me / 2;
        }
    } else {
        newrank = me - rem;
    }
    int k = 1;
    for (int mask = 1; newrank >= 0 && mask < pof2; mask <<= 1, k++) {
        int newdst = newrank ^ mask;
        int dst = newdst < rem ? newdst * 2 + 1 : newdst + rem;
        trd_s_sendrecv(b, round + k, RANK(dst), TRD_B_RECV, base, count, RANK(dst), TRD_B_TMP, tmp,
                       count);
        if (b->call->commutative || dst < me) {
            trd_s_reduce(b, round + k, TRD_B_RECV, base, TRD_B_TMP, -1, tmp, count);
        } else { /* tmp = mine op theirs, then back into recvbuf */
            trd_s_reduce(b, round + k, TRD_B_TMP, tmp, TRD_B_RECV, -1, base, count);
            trd_s_copy(b, round + k, TRD_B_RECV, -1, base, TRD_B_TMP, -1, tmp, count);
        }
    }
    int last = round + TRD_ROUND_RD_UNFOLD;
    if (me < 2 * rem) {
        if (me % 2)
            trd_s_send(b, last, RANK(me - 1), TRD_B_RECV, base, count);
        else
            trd_s_recv(b, last, RANK(me + 1), TRD_B_RECV, base, count);
    }
#undef RANK
    trd_sb_tmp_release(b, mark);
    return 0;
}

static int plan(trd_sb *b, const void *params)
{
    (void)params;
    trd_sb_input_to_recv(b);
    if (b->call->commutative)
        return rd_list(b, 1, b->sh->ring, b->sh->nranks, b->pos, 0, b->call->count);
    return rd_list(b, 1, NULL, b->sh->nranks, b->rank, 0, b->call->count);
}

/* log2(ppn) steps stay on the node, log2(nodes) cross the network with ppn
 * messages of each node at once, sharing its injection (max-rate [NAP Eq.
 * 3-4]) and the tree's links [TREE §2] */
static double model(const trd_levels *l, int nodes, int ppn, double bytes)
{
    double intra = trd_lg(ppn) * (trd_msg_s(l->intra, bytes) + bytes * l->gamma_s_per_byte);
    return intra + trd_rd_nodes_s(l, nodes, ppn, bytes);
}

const trd_algo trd_allreduce_rd = {
    .name = "rd",
    .coll = TRD_COLL_ALLREDUCE,
    .flags = TRD_ALGO_CANDIDATE | TRD_ALGO_WHOLE,
    .source = "[MPICH §4, RM §2]",
    .levels = "recursive doubling through every rank",
    .plan = plan,
    .list = rd_list,
    .model = model,
    .mpich = "recursive_doubling",
    .ompi = TRD_OMPI_RECURSIVE_DOUBLING,
};
