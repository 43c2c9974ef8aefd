/* Algorithm: multi-radix recursive exchange on one node's segment
 * [FLEX §2.1, Figs. 1-2], TREEDUCE_ALGORITHM=shm:rx:F1,F2,... (the product of
 * the factors is the ranks on the node).  Write local rank r in the mixed
 * radix of the factors, r = d_1 + F_1 (d_2 + F_2 (d_3 + ...)), lowest digit
 * first.  Reduce_scatter step i groups the F_i ranks whose digits differ in
 * digit i only; they share a range of the chunk (the whole chunk in step 1),
 * cut it into F_i pieces at cache lines, and the rank with digit d reduces
 * piece d over the group, folding the members in digit order.  The first
 * digit counts consecutive local ranks, so after step i a piece holds the
 * reduction of F_1...F_i consecutive ranks in rank order, and after the last
 * step of all p: non-commutative ops are right.  Allgather runs the steps
 * reversed: in step i each rank copies the pieces of its group's members, so
 * that it holds the range it had before reduce_scatter step i.  Every piece
 * is reduced once and then copied, so every rank gets the same bits.
 *
 * One epoch per step: step 1 reads the members' input areas (filled in the
 * same epoch with the pieces the others reduce, signalled on `in`); every
 * later reduce_scatter step reads the members' output areas of the previous
 * epoch (`red`) and writes its piece to its own output area of this epoch.
 * The last reduce_scatter step and the first allgather step share an epoch:
 * the members' pieces are read after `red` of this epoch, gathered into the
 * rank's own output area beside its piece and signalled on `in`; later
 * allgather steps read the previous epoch's output areas after `in`.  The
 * last allgather step writes only recvbuf.  A rank signals `done` for an
 * epoch one step after it, since a step reads what the previous one wrote
 * [FLEX §3.1].  Chunks of one slot; with k steps (factors > 1) and
 * M_i = m / (F_1...F_i), k >= 2:
 * Cost = (4k-1) alpha_shm + (2m + M_1 + 2 (M_2 + ... + M_{k-1})) beta_mem
 *        + (p-1)/p m gamma
 * and for k = 1: 3 alpha_shm + 2 m beta_mem + (p-1)/p m gamma.
 */
#include <limits.h>

#include "phases.h"

#define RX_MAX_STEPS 32

typedef struct rx_factors {
    int n;
    int f[RX_MAX_STEPS]; /* the factors > 1, in order */
} rx_factors;

/* Piece i of n of the chunk's elements [lo, hi), cut at whole cache lines
 * as trd_block_split cuts [0, count); lo lies on a line boundary of the
 * chunk, as every cut does, so the pieces of pieces stay whole lines. */
static void piece(size_t lo, size_t hi, size_t ext, int n, int i, size_t *plo, size_t *phi)
{
    trd_block_split(hi - lo, ext, n, i, plo, phi);
    *plo += lo;
    *phi += lo;
}

/* A decimal number of at most max at *p (advanced past it), or -1. */
static long long parse_number(const char **p, long long max)
{
    long long v = 0;
    if (**p < '0' || **p > '9')
        return -1;
    for (; **p >= '0' && **p <= '9'; (*p)++) {
        v = v * 10 + (**p - '0');
        if (v > max)
            return -1;
    }
    return v;
}

static int parse(const char *text, const trd_shape *sh, void *out, char *why, size_t whylen)
{
    rx_factors *fx = out;
    long long product = 1;
    int ppn = sh->nnodes == 1 ? sh->nranks : 0;
    fx->n = 0;
    while (*text) {
        long long f = parse_number(&text, INT_MAX);
        if (f < 1) {
            snprintf(why, whylen, "shm:rx factors are not a list of positive integers");
            return TRD_ERR_INPUT;
        }
        if (product * f > ppn) {
            snprintf(why, whylen, "shm:rx factors do not multiply to the ranks on the node");
            return TRD_ERR_INPUT;
        }
        product *= f;
        if (f > 1)
            fx->f[fx->n++] = (int)f;
        if (*text == ',' && text[1])
            text++;
        else if (*text) {
            snprintf(why, whylen, "shm:rx factors are not a list of positive integers");
            return TRD_ERR_INPUT;
        }
    }
    if (product != ppn) {
        snprintf(why, whylen, "shm:rx factors do not multiply to the ranks on the node");
        return TRD_ERR_INPUT;
    }
    return 0;
}

/* This rank's place in the steps: factor, local-rank distance between
 * neighbouring digits, and its digit, of step i. */
typedef struct rx_place {
    int k, f[RX_MAX_STEPS], stride[RX_MAX_STEPS], digit[RX_MAX_STEPS];
} rx_place;

/* Comm rank (-1: this rank) of the member with digit d of this rank's group of step i. */
static int member(const trd_sb *b, const rx_place *pl, int i, int d)
{
    return trd_sb_owner(b, b->local + (d - pl->digit[i]) * pl->stride[i]);
}

/* Reduce_scatter step i in epoch e: this rank's piece [lo, hi) of the
 * chunk, x_0 op x_1 op ... over the members in digit order (right to left,
 * so that "in op inout" keeps operand order), into its output area of e.
 * In step 0 the rank's own part comes from its input in_buf at in_at, which
 * no other rank reads. */
static void reduce_step(trd_sb *b, const rx_place *pl, int i, size_t lo, size_t hi, int e,
                        int in_buf, size_t in_at)
{
    size_t acc = trd_sb_seg_out(b, e) + lo;
    for (int d = pl->f[i] - 1; d >= 0; d--) {
        int m = member(b, pl, i, d), xb = TRD_B_SEG;
        size_t x;
        if (i == 0 && m < 0) {
            xb = in_buf;
            x = in_at + lo;
        } else if (i == 0) {
            trd_s_wait(b, 0, m, 0, TRD_CTR_IN, e);
            x = trd_sb_seg_in(b, e) + lo;
        } else {
            if (m >= 0)
                trd_s_wait(b, 0, m, 0, TRD_CTR_RED, e - 1);
            x = trd_sb_seg_out(b, e - 1) + lo;
        }
        if (d == pl->f[i] - 1)
            trd_s_copy(b, 0, TRD_B_SEG, -1, acc, xb, xb == TRD_B_SEG ? m : -1, x, hi - lo);
        else
            trd_s_reduce(b, 0, TRD_B_SEG, acc, xb, xb == TRD_B_SEG ? m : -1, x, hi - lo);
    }
}

/* Allgather step i: the members of this rank's group hold their pieces of
 * [lo, hi) in their output areas of epoch from, signalled on ctr at epoch
 * cte.  Copies the other members' pieces to recvbuf (at out, which holds
 * this rank's own piece already) and, when into > 0, gathers the whole range
 * into this rank's output area of epoch into for the next step's readers. */
static void gather_step(trd_sb *b, const rx_place *pl, int i, size_t lo, size_t hi, int from,
                        int ctr, int cte, size_t out, int into)
{
    size_t ext = b->call->extent;
    for (int d = 0; d < pl->f[i]; d++) {
        int m = member(b, pl, i, d);
        size_t plo, phi;
        piece(lo, hi, ext, pl->f[i], d, &plo, &phi);
        if (phi == plo)
            continue;
        size_t x = trd_sb_seg_out(b, from) + plo;
        if (m >= 0) {
            trd_s_wait(b, 0, m, 0, ctr, cte);
            trd_s_copy(b, 0, TRD_B_RECV, -1, out + plo, TRD_B_SEG, m, x, phi - plo);
        }
        if (into > 0 && (m >= 0 || into != from))
            trd_s_copy(b, 0, TRD_B_SEG, -1, trd_sb_seg_out(b, into) + plo, TRD_B_SEG, m, x,
                       phi - plo);
    }
}

int trd_plan_rx(trd_sb *b, const int *factors, int nfactors)
{
    size_t ext = b->call->extent, per = b->s->seg_slot, count = b->call->count;
    size_t lo[RX_MAX_STEPS + 1], hi[RX_MAX_STEPS + 1];
    int in_buf = b->call->in_place ? TRD_B_RECV : TRD_B_SEND;
    rx_place pl = {0};
    long long product = 1;
    for (int i = 0; i < nfactors && pl.k < RX_MAX_STEPS; i++) {
        if (factors[i] > 1) {
            pl.f[pl.k] = factors[i];
            pl.stride[pl.k] = (int)product;
            pl.digit[pl.k] = (int)(b->local / product % factors[i]);
            pl.k++;
        }
        product *= factors[i];
    }
    int k = pl.k;
    if (k == 0) {
        trd_sb_input_to_recv(b);
        return 0;
    }
    if (per == 0) {
        b->fail = "an element larger than a segment slot";
        return TRD_ERR_INPUT;
    }
    for (size_t first = 0; first < count; first += per) {
        size_t cnt = count - first < per ? count - first : per;
        /* this rank's range of the chunk before reduce_scatter step i: [lo[i], hi[i]) */
        lo[0] = 0;
        hi[0] = cnt;
        for (int i = 0; i < k; i++)
            piece(lo[i], hi[i], ext, pl.f[i], pl.digit[i], &lo[i + 1], &hi[i + 1]);
        for (int i = 0; i < k; i++) {
            int e = trd_seg_next(b, 0);
            if (i == 0) { /* the pieces the other members reduce */
                size_t cin = trd_sb_seg_in(b, e);
                if (lo[1] > 0)
                    trd_s_copy(b, 0, TRD_B_SEG, -1, cin, in_buf, -1, first, lo[1]);
                if (cnt > hi[1])
                    trd_s_copy(b, 0, TRD_B_SEG, -1, cin + hi[1], in_buf, -1, first + hi[1],
                               cnt - hi[1]);
                trd_s_signal(b, 0, TRD_CTR_IN, e);
            }
            if (hi[i + 1] > lo[i + 1])
                reduce_step(b, &pl, i, lo[i + 1], hi[i + 1], e, in_buf, first);
            trd_s_signal(b, 0, TRD_CTR_RED, e);
            if (i < k - 1) {
                trd_s_signal(b, 0, TRD_CTR_DONE, e - 1); /* the next step reads this epoch's */
                continue;
            }
            /* the first allgather step, in the same epoch */
            if (hi[k] > lo[k])
                trd_s_copy(b, 0, TRD_B_RECV, -1, first + lo[k], TRD_B_SEG, -1,
                           trd_sb_seg_out(b, e) + lo[k], hi[k] - lo[k]);
            gather_step(b, &pl, k - 1, lo[k - 1], hi[k - 1], e, TRD_CTR_RED, e, first,
                        k > 1 ? e : 0);
            if (k > 1) {
                trd_s_signal(b, 0, TRD_CTR_IN, e);
                trd_s_signal(b, 0, TRD_CTR_DONE, e - 1);
            } else {
                trd_s_signal(b, 0, TRD_CTR_DONE, e);
            }
        }
        for (int i = k - 2; i >= 0; i--) {
            int e = trd_seg_next(b, 0);
            gather_step(b, &pl, i, lo[i], hi[i], e - 1, TRD_CTR_IN, e - 1, first, i > 0 ? e : 0);
            if (i > 0) {
                trd_s_signal(b, 0, TRD_CTR_IN, e);
                trd_s_signal(b, 0, TRD_CTR_DONE, e - 1);
            } else {
                trd_s_signal(b, 0, TRD_CTR_DONE, e);
            }
        }
    }
    return 0;
}

/* For measuring [FLEX §2.1.3]: the node's ranks as one factor (one step),
 * their prime factors ascending and descending; one node only. */
static int candidates(const trd_shape *sh, char (*cand)[TRD_PARAMS_MAX], int cap)
{
    int f[32], n = 0, k = 0, p = sh->nranks;
    if (sh->nnodes != 1 || p < 2 || cap < 1)
        return 0;
    snprintf(cand[k++], TRD_PARAMS_MAX, "%d", p);
    for (int d = 2; p > 1 && n < 32; d++)
        while (p % d == 0 && n < 32) {
            f[n++] = d;
            p /= d;
        }
    for (int dir = 0; dir < 2 && n > 1 && k < cap; dir++) {
        size_t o = 0;
        for (int i = 0; i < n && o < TRD_PARAMS_MAX; i++)
            o += (size_t)snprintf(cand[k] + o, TRD_PARAMS_MAX - o, "%s%d", i ? "," : "",
                                  f[dir ? n - 1 - i : i]);
        if (o < TRD_PARAMS_MAX && (!dir || f[0] != f[n - 1]))
            k++;
    }
    return k;
}

static int plan(trd_sb *b, const void *params)
{
    const rx_factors *fx = params;
    return trd_plan_rx(b, fx->f, fx->n);
}

const trd_algo trd_allreduce_shm_rx = {
    .name = "shm:rx",
    .coll = TRD_COLL_ALLREDUCE,
    .source = "[FLEX §2.1]",
    .levels = "one node: multi-radix recursive exchange through the segment",
    .params_size = sizeof(rx_factors),
    .parse = parse,
    .refuse = trd_refuse_one_node,
    .plan = plan,
    .candidates = candidates,
};
