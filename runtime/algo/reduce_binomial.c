/* Algorithm: binomial tree reduce [MPICH §4.4].  Relative rank j combines the
 * results of j+1, j+2..j+3, j+4..j+7, ... on the right of its own, so it holds
 * x_j..x_{j+2^i-1} in order.  For a non-commutative op the tree is rooted at
 * list index 0 (relative order is then list order) and index 0 sends the
 * result to the root.  Results alternate between two buffers so that the
 * last lands in recvbuf at the root; a root reducing in place first moves its
 * input out of the way.  Over a rank list it also serves SMP's node reduce
 * without shared memory.
 * Cost = ceil(lg p) (alpha + m beta + m gamma)  (+ alpha + m beta if moved)
 */
#include "phases.h"

int trd_plan_reduce_binomial(trd_sb *b, int round, const int *ranks, int n, int me, int root,
                             int in_buf, size_t in_off, size_t count)
{
    int top = b->call->commutative ? root : 0, rel = (me - top + n) % n, nchild = 0, mask = 1;
    for (; mask < n && !(rel & mask); mask <<= 1)
        nchild += rel + mask < n;
#define RANK(i) (ranks ? ranks[i] : (i))
    int at_root = me == root;
    size_t mark = b->tmp_top, s0 = trd_sb_tmp(b, count), s1 = trd_sb_tmp(b, count);
    if (at_root && in_buf == TRD_B_RECV) { /* recvbuf receives before the input is used */
        size_t in = trd_sb_tmp(b, count);
        trd_s_copy(b, round, TRD_B_TMP, -1, in, TRD_B_RECV, -1, in_off, count);
        in_buf = TRD_B_TMP;
        in_off = in;
    }
    int in_recvbuf = at_root && rel == 0, acc_buf = in_buf, k = 0, step = 0;
    size_t acc = in_off;
    for (int m = 1; m < mask; m <<= 1, step++) {
        if (rel + m >= n)
            continue;
        int into_buf = TRD_B_TMP;
        size_t into = k % 2 ? s1 : s0;
        if (in_recvbuf) {
            int last_parity = (nchild - 1 - k) % 2 == 0;
            into_buf = last_parity ? TRD_B_RECV : TRD_B_TMP;
            into = last_parity ? 0 : s0;
        }
        trd_s_recv(b, round + step, RANK((rel + m + top) % n), into_buf, into, count);
        trd_s_reduce(b, round + step, into_buf, into, acc_buf, -1, acc, count);
        acc_buf = into_buf;
        acc = into;
        k++;
    }
    if (rel) {
        trd_s_send(b, round + step, RANK((rel - mask + top) % n), acc_buf, acc, count);
    } else if (!at_root) {
        trd_s_send(b, round + TRD_ROUND_TO_ROOT, RANK(root), acc_buf, acc, count);
    } else if (nchild == 0) {
        trd_s_copy(b, round, TRD_B_RECV, -1, 0, acc_buf, -1, acc, count);
    }
    if (at_root && rel)
        trd_s_recv(b, round + TRD_ROUND_TO_ROOT, RANK(top), TRD_B_RECV, 0, count);
#undef RANK
    trd_sb_tmp_release(b, mark);
    return 0;
}

static int plan(trd_sb *b, const void *params)
{
    int in_buf = b->call->in_place && b->rank == b->call->root ? TRD_B_RECV : TRD_B_SEND;
    (void)params;
    return trd_plan_reduce_binomial(b, 0, NULL, b->sh->nranks, b->rank, b->call->root, in_buf, 0,
                                    b->call->count);
}

const trd_algo trd_reduce_binomial = {
    .name = "binomial",
    .coll = TRD_COLL_REDUCE,
    .flags = TRD_ALGO_WHOLE | TRD_ALGO_RANK_ORDER,
    .source = "[MPICH §4.4]",
    .levels = "binomial tree in rank order (any operation)",
    .plan = plan,
};
