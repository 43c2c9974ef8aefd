/* Algorithm: radix-K tree reduce + tree bcast on one node's segment
 * [FLEX §2.3, Fig. 6], TREEDUCE_ALGORITHM=shm:tree:K.  Local rank r roots the
 * ranks [r, r + size); its children root the min(K, size-1) nearly equal,
 * contiguous parts of [r+1, r+size), in order, so the tree is K-ary with
 * height h ~ log_K p and every subtree is a range of consecutive ranks.
 * Reduce: a rank waits for its children's results (`red`) and writes
 * x_r op y_c1 op ... op y_cK (rank order: any op) to its output area; a leaf
 * writes its input there.  Bcast: the root's output area holds the result;
 * every other rank copies its parent's copy into its input area (if it has
 * children; signalled on `in`) and into recvbuf.  One epoch per chunk; chunks
 * in both slots pipeline through the levels; a user-defined op, called on
 * whole vectors, runs where the vector is one chunk.  Along the critical path:
 * Cost = (2h+1) alpha_shm + (2h+1) m beta_mem + h K m gamma
 */
#include <limits.h>

#include "phases.h"

typedef struct tree_params {
    int radix;
} tree_params;

static int parse(const char *text, const trd_shape *sh, void *out, char *why, size_t whylen)
{
    tree_params *tp = out;
    long long v = 0;
    const char *t = text;
    (void)sh;
    for (; *t >= '0' && *t <= '9' && v <= INT_MAX; t++)
        v = v * 10 + (*t - '0');
    if (t == text || *t || v < 2 || v > INT_MAX) {
        snprintf(why, whylen, "shm:tree needs a radix of at least 2");
        return TRD_ERR_INPUT;
    }
    tp->radix = (int)v;
    return 0;
}

/* First local rank of child j of the subtree [r, r + size) with nch children. */
static int tree_child(int r, int size, int nch, int j)
{
    return r + 1 + (int)((long long)(size - 1) * j / nch);
}

/* This rank's parent (-1 at the root) and the size of its subtree. */
static void tree_locate(int p, int radix, int me, int *parent, int *size)
{
    int r = 0, sz = p;
    *parent = -1;
    while (r != me) {
        int nch = sz - 1 < radix ? sz - 1 : radix, j = nch - 1;
        while (tree_child(r, sz, nch, j) > me)
            j--;
        int next = j + 1 < nch ? tree_child(r, sz, nch, j + 1) : r + sz;
        *parent = r;
        r = tree_child(r, sz, nch, j);
        sz = next - r;
    }
    *size = sz;
}

static int plan(trd_sb *b, const void *params)
{
    int radix = ((const tree_params *)params)->radix, parent, size;
    size_t per = b->s->seg_slot, count = b->call->count;
    int in_buf = b->call->in_place ? TRD_B_RECV : TRD_B_SEND;
    if (per == 0) {
        b->fail = "an element larger than a segment slot";
        return TRD_ERR_INPUT;
    }
    tree_locate(b->ppn, radix, b->local, &parent, &size);
    int nch = size - 1 < radix ? size - 1 : radix;
    for (size_t first = 0; first < count; first += per) {
        size_t cnt = count - first < per ? count - first : per;
        int e = trd_seg_next(b, 0);
        size_t acc = trd_sb_seg_out(b, e), cin = trd_sb_seg_in(b, e);
        if (nch == 0)
            trd_s_copy(b, 0, TRD_B_SEG, -1, acc, in_buf, -1, first, cnt);
        for (int j = nch - 1; j >= 0; j--) {
            int ch = trd_sb_local_rank(b, tree_child(b->local, size, nch, j));
            trd_s_wait(b, 0, ch, 0, TRD_CTR_RED, e);
            if (j == nch - 1)
                trd_s_copy(b, 0, TRD_B_SEG, -1, acc, TRD_B_SEG, ch, acc, cnt);
            else
                trd_s_reduce(b, 0, TRD_B_SEG, acc, TRD_B_SEG, ch, acc, cnt);
        }
        if (nch > 0)
            trd_s_reduce(b, 0, TRD_B_SEG, acc, in_buf, -1, first, cnt);
        trd_s_signal(b, 0, TRD_CTR_RED, e);
        /* the result: the root's output area, handed down the input areas */
        int from_owner = -1;
        size_t from = acc;
        if (parent == 0) {
            from_owner = trd_sb_local_rank(b, 0);
            trd_s_wait(b, 0, from_owner, 0, TRD_CTR_RED, e);
        } else if (parent > 0) {
            from_owner = trd_sb_local_rank(b, parent);
            trd_s_wait(b, 0, from_owner, 0, TRD_CTR_IN, e);
            from = cin;
        }
        if (parent >= 0 && nch > 0) {
            trd_s_copy(b, 0, TRD_B_SEG, -1, cin, TRD_B_SEG, from_owner, from, cnt);
            trd_s_signal(b, 0, TRD_CTR_IN, e);
            from_owner = -1;
            from = cin;
        }
        trd_s_copy(b, 0, TRD_B_RECV, -1, first, TRD_B_SEG, from_owner, from, cnt);
        trd_s_signal(b, 0, TRD_CTR_DONE, e);
    }
    return 0;
}

/* For measuring [FLEX §2.3]: radix 2, and 4 and 8 where the node's ranks
 * leave the root more children than that; one node only. */
static int candidates(const trd_shape *sh, char (*cand)[TRD_PARAMS_MAX], int cap)
{
    int k = 0;
    if (sh->nnodes != 1)
        return 0;
    for (int r = 2; r <= 8 && k < cap; r *= 2)
        if (r == 2 || r < sh->nranks - 1)
            snprintf(cand[k++], TRD_PARAMS_MAX, "%d", r);
    return k;
}

const trd_algo trd_allreduce_shm_tree = {
    .name = "shm:tree",
    .coll = TRD_COLL_ALLREDUCE,
    .flags = TRD_ALGO_WHOLE,
    .source = "[FLEX §2.3]",
    .levels = "one node: radix-K tree reduce, then radix-K tree bcast through the segment",
    .params_size = sizeof(tree_params),
    .parse = parse,
    .refuse = trd_refuse_one_node,
    .plan = plan,
    .candidates = candidates,
};
