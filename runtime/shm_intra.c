/* Intra-node allreduce algorithms in shared memory [FLEX §2.1-2.3, §3.1], picked by the
 * parameters of the shm algorithm (TREEDUCE_ALGORITHM=shm:PARAMS):
 *
 *   rx:F1,F2,...  multi-radix recursive exchange: reduce_scatter in one step per factor,
 *                 allgather in the same steps reversed [FLEX §2.1];
 *   tree:K        radix-K tree reduce to local rank 0, then tree bcast [FLEX §2.3];
 *   cyclic        cyclic shift reduce_scatter + allgather, commutative ops [FLEX §2.2];
 *   socket        rx with factors {ranks per package, packages}: the package-local step
 *                 first, then one cross-package step on pieces of m/q bytes (q ranks per
 *                 package) [FLEX §2.1, hardware mapping §3].
 *
 * All of them run on the node segment of shm.c and keep its counter protocol (shm_impl.h):
 * every step starts with next_epoch on every rank of the node, so epochs advance alike on
 * all ranks; a rank announces data in its own areas by publishing the epoch on `in` or
 * `red`, and publishes `done` once it no longer reads others' areas of that epoch (for rx,
 * one step after it, since a step reads what the previous step wrote) [FLEX §3.1].
 * Messages stream through the slots in chunks of TRD_SHM_SLOT_BYTES; an element sits at the
 * same chunk offset in every rank's areas, so pieces cut at cache lines of the chunk are
 * whole lines in every area and no two ranks write one line [FLEX §2.1.3].
 *
 * Costs are per chunk of m bytes on p ranks, in shm.c's terms: alpha_shm one flag handed
 * from a writer to its readers, beta_mem per byte written, gamma per byte reduced.
 * An element larger than a slot gives MPI_ERR_TYPE (no predefined datatype is).
 */
#include "shm_impl.h"

#include <limits.h>
#include <string.h>

/* Steps of a recursive exchange: the product of the factors > 1 is at most INT_MAX. */
#define RX_MAX_STEPS 32

static size_t min_size(size_t a, size_t b)
{
    return a < b ? a : b;
}

/* Piece i of n of the chunk's elements [lo, hi), cut at whole cache lines as
 * trd_block_range cuts [0, count); lo lies on a line boundary of the chunk, as every cut
 * does, so the pieces of pieces stay whole lines.  Empty with few elements. */
static void piece(size_t lo, size_t hi, size_t ext, int n, int i, size_t *plo, size_t *phi)
{
    trd_block_range(hi - lo, ext, n, i, plo, phi);
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

/* ---- rx: multi-radix recursive exchange ---------------------------------------------
 *
 * Algorithm [FLEX §2.1, Figs. 1-2]: write local rank r in the mixed radix of the factors,
 * r = d_1 + F_1 (d_2 + F_2 (d_3 + ...)), lowest digit first.  Reduce_scatter step i groups
 * the F_i ranks whose digits differ in digit i only; they share a range of the chunk (the
 * whole chunk in step 1), cut it into F_i pieces at cache lines, and the rank with digit d
 * reduces piece d over the group, folding the members in digit order.  The first digit
 * counts consecutive local ranks, so after step i a piece holds the reduction of F_1...F_i
 * consecutive ranks in rank order, and after the last step of all p: non-commutative ops
 * are right.  Allgather runs the steps reversed: in step i each rank copies the pieces of
 * its group's members, so that it holds the range it had before reduce_scatter step i.
 * Every piece is reduced once and then copied, so every rank gets the same bits.  (The
 * code counts steps from 0.)
 *
 * One epoch per step: step 1 reads the members' input areas (filled in the same epoch with
 * the pieces the others reduce, announced on `in`); every later reduce_scatter step reads
 * the members' output areas of the previous epoch (`red`) and writes its piece to its own
 * output area of this epoch.  The last reduce_scatter step and the first allgather step
 * share an epoch: the members' pieces are read after `red` of this epoch, gathered into
 * the rank's own output area beside its piece and announced on `in`; later allgather
 * steps read the previous epoch's output areas after `in`.  The last allgather step writes
 * only recvbuf.  With k steps
 * (factors > 1) and M_i = m / (F_1...F_i), k >= 2:
 * Cost = (4k-1) alpha_shm + (2m + M_1 + 2 (M_2 + ... + M_{k-1})) beta_mem + (p-1)/p m gamma
 * and for k = 1: 3 alpha_shm + 2 m beta_mem + (p-1)/p m gamma. */

struct rx_plan {
    int k;                    /* steps: the factors > 1 */
    int f[RX_MAX_STEPS];      /* factor of step i */
    int stride[RX_MAX_STEPS]; /* local-rank distance between neighbouring digits of step i */
    int digit[RX_MAX_STEPS];  /* this rank's digit in step i */
};

/* Append a step of factor f (none for f = 1) to this rank's plan; *product is the product
 * of the factors so far. */
static void rx_plan_add(struct rx_plan *pl, long long *product, int f, int me)
{
    if (f > 1) {
        pl->f[pl->k] = f;
        pl->stride[pl->k] = (int)*product;
        pl->digit[pl->k] = (int)(me / *product % f);
        pl->k++;
    }
    *product *= f;
}

/* Plan the factors "F1,F2,..." for this rank (no factor at all is the product 1): NULL, or
 * why they do not fit. */
static const char *rx_plan_parse(const char *text, int ppn, int me, struct rx_plan *pl)
{
    long long product = 1;
    pl->k = 0;
    while (*text) {
        long long f = parse_number(&text, INT_MAX);
        if (f < 1)
            return "shm:rx factors are not a list of positive integers";
        if (product * f > ppn)
            return "shm:rx factors do not multiply to the ranks on the node";
        rx_plan_add(pl, &product, (int)f, me);
        if (*text == ',' && text[1])
            text++;
        else if (*text)
            return "shm:rx factors are not a list of positive integers";
    }
    return product == ppn ? NULL : "shm:rx factors do not multiply to the ranks on the node";
}

/* The member with digit d of this rank's group of step i. */
static int rx_member(const struct trd_shm *s, const struct rx_plan *pl, int i, int d)
{
    return s->me + (d - pl->digit[i]) * pl->stride[i];
}

/* Reduce_scatter step i in epoch e (slot b): this rank's piece [lo, hi) of the chunk,
 * x_0 op x_1 op ... over the members in digit order (folded right to left, so that "in op
 * inout" keeps operand order), into its output area of slot b.  In step 0 the rank's own
 * part comes from its chunk in, which no other rank reads. */
static int rx_reduce_step(struct trd_shm *s, const struct rx_plan *pl, int i, size_t lo, size_t hi,
                          const trd_reducer *red, int b, uint64_t e, const char *in)
{
    size_t ext = red->extent;
    char *acc = slot_out(s, s->me, b) + lo * ext;
    int rc = MPI_SUCCESS;
    for (int d = pl->f[i] - 1; d >= 0; d--) {
        int m = rx_member(s, pl, i, d);
        const char *x;
        if (i == 0 && m == s->me) {
            x = in + lo * ext;
        } else if (i == 0) {
            wait_one(s, CTR_IN, m, e);
            x = slot_in(s, m, b) + lo * ext;
        } else {
            if (m != s->me)
                wait_one(s, CTR_RED, m, e - 1);
            x = slot_out(s, m, !b) + lo * ext;
        }
        if (d == pl->f[i] - 1)
            memcpy(acc, x, (hi - lo) * ext);
        else if (rc == MPI_SUCCESS)
            rc = trd_reduce(red, x, acc, hi - lo);
    }
    return rc;
}

/* Allgather step i: the members of this rank's group of step i hold their pieces of the
 * range [lo, hi) in their output areas of slot from, announced on counter ctr at epoch e.
 * Copies the other members' pieces to out (the chunk in recvbuf, which holds this rank's
 * own piece already) and, when into >= 0, gathers the whole range into this rank's output
 * area of slot into for the next step's readers. */
static void rx_gather_step(struct trd_shm *s, const struct rx_plan *pl, int i, size_t lo, size_t hi,
                           size_t ext, int from, int ctr, uint64_t e, char *out, int into)
{
    for (int d = 0; d < pl->f[i]; d++) {
        int m = rx_member(s, pl, i, d);
        size_t plo, phi;
        piece(lo, hi, ext, pl->f[i], d, &plo, &phi);
        if (phi == plo)
            continue;
        const char *x = slot_out(s, m, from) + plo * ext;
        size_t bytes = (phi - plo) * ext;
        if (m != s->me) {
            wait_one(s, ctr, m, e);
            memcpy(out + plo * ext, x, bytes);
        }
        if (into >= 0 && (m != s->me || into != from))
            memcpy(slot_out(s, s->me, into) + plo * ext, x, bytes);
    }
}

static int rx_allreduce(struct trd_shm *s, const char *src, char *dst, size_t count,
                        const trd_reducer *red, const struct rx_plan *pl)
{
    size_t ext = red->extent, per = s->slot / ext;
    size_t lo[RX_MAX_STEPS + 1], hi[RX_MAX_STEPS + 1];
    int k = pl->k, rc = MPI_SUCCESS;
    if (k == 0) {
        if (src != dst)
            memcpy(dst, src, count * ext);
        return MPI_SUCCESS;
    }
    for (size_t first = 0; first < count; first += per) {
        size_t cnt = min_size(count - first, per);
        const char *in = src + first * ext;
        char *out = dst + first * ext;
        /* this rank's range of the chunk before reduce_scatter step i: [lo[i], hi[i]) */
        lo[0] = 0;
        hi[0] = cnt;
        for (int i = 0; i < k; i++)
            piece(lo[i], hi[i], ext, pl->f[i], pl->digit[i], &lo[i + 1], &hi[i + 1]);

        for (int i = 0; i < k; i++) {
            int b, r = MPI_SUCCESS;
            uint64_t e = next_epoch(s, &b);
            if (i == 0) { /* the pieces the other members reduce */
                memcpy(slot_in(s, s->me, b), in, lo[1] * ext);
                memcpy(slot_in(s, s->me, b) + hi[1] * ext, in + hi[1] * ext, (cnt - hi[1]) * ext);
                publish(s, CTR_IN, e);
            }
            if (hi[i + 1] > lo[i + 1])
                r = rx_reduce_step(s, pl, i, lo[i + 1], hi[i + 1], red, b, e, in);
            rc = rc == MPI_SUCCESS ? r : rc;
            publish(s, CTR_RED, e);
            if (i < k - 1) {
                publish(s, CTR_DONE, e - 1); /* the next step reads this epoch's areas */
                continue;
            }
            /* the first allgather step, in the same epoch */
            memcpy(out + lo[k] * ext, slot_out(s, s->me, b) + lo[k] * ext, (hi[k] - lo[k]) * ext);
            rx_gather_step(s, pl, k - 1, lo[k - 1], hi[k - 1], ext, b, CTR_RED, e, out,
                           k > 1 ? b : -1);
            if (k > 1) {
                publish(s, CTR_IN, e);
                publish(s, CTR_DONE, e - 1);
            } else {
                publish(s, CTR_DONE, e);
            }
        }
        for (int i = k - 2; i >= 0; i--) {
            int b;
            uint64_t e = next_epoch(s, &b);
            rx_gather_step(s, pl, i, lo[i], hi[i], ext, !b, CTR_IN, e - 1, out, i > 0 ? b : -1);
            if (i > 0) {
                publish(s, CTR_IN, e);
                publish(s, CTR_DONE, e - 1);
            } else {
                publish(s, CTR_DONE, e);
            }
        }
    }
    return rc;
}

/* ---- tree:K: radix-K tree reduce + tree bcast ------------------------------------------
 *
 * Algorithm [FLEX §2.3, Fig. 6]: local rank r roots the ranks [r, r + size); its children
 * root the min(K, size-1) nearly equal, contiguous parts of [r+1, r+size), in order, so the
 * tree is K-ary with height h ~ log_K p and every subtree is a range of consecutive ranks.
 * Reduce: a rank waits for its children's results (`red`) and writes x_r op y_c1 op ...
 * op y_cK (rank order: any op) to its output area; a leaf writes its input there.  Bcast:
 * the root's output area holds the result; every other rank copies its parent's copy into
 * its input area (if it has children; announced on `in`) and into recvbuf.  One epoch per
 * chunk; chunks in both slots pipeline through the levels.  Along the critical path:
 * Cost = (2h+1) alpha_shm + (2h+1) m beta_mem + h K m gamma */

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

static int tree_allreduce(struct trd_shm *s, const char *src, char *dst, size_t count,
                          const trd_reducer *red, int radix)
{
    size_t ext = red->extent, per = s->slot / ext;
    int parent, size, rc = MPI_SUCCESS;
    tree_locate(s->n, radix, s->me, &parent, &size);
    int nch = size - 1 < radix ? size - 1 : radix;
    for (size_t first = 0; first < count; first += per) {
        size_t cnt = min_size(count - first, per), bytes = cnt * ext;
        int b;
        uint64_t e = next_epoch(s, &b);
        char *acc = slot_out(s, s->me, b);
        if (nch == 0)
            memcpy(acc, src + first * ext, bytes);
        for (int j = nch - 1; j >= 0; j--) {
            int ch = tree_child(s->me, size, nch, j);
            wait_one(s, CTR_RED, ch, e);
            if (j == nch - 1)
                memcpy(acc, slot_out(s, ch, b), bytes);
            else if (rc == MPI_SUCCESS)
                rc = trd_reduce(red, slot_out(s, ch, b), acc, cnt);
        }
        if (nch > 0 && rc == MPI_SUCCESS)
            rc = trd_reduce(red, src + first * ext, acc, cnt);
        publish(s, CTR_RED, e);

        const char *from = acc; /* the root's result */
        if (parent == 0) {
            wait_one(s, CTR_RED, 0, e);
            from = slot_out(s, 0, b);
        } else if (parent > 0) {
            wait_one(s, CTR_IN, parent, e);
            from = slot_in(s, parent, b);
        }
        if (parent >= 0 && nch > 0) {
            memcpy(slot_in(s, s->me, b), from, bytes);
            publish(s, CTR_IN, e);
            from = slot_in(s, s->me, b);
        }
        memcpy(dst + first * ext, from, bytes);
        publish(s, CTR_DONE, e);
    }
    return rc;
}

/* ---- cyclic: cyclic shift reduce_scatter + allgather -------------------------------------
 *
 * Algorithm [FLEX §2.2]: rank i owns block i of the chunk (cut at cache lines).  Every rank
 * copies the blocks it does not own into its input area (`in`).  Reduce_scatter: in round
 * j = 1..p-1 rank i folds block i of rank (i+j) mod p into its own block, in its output
 * area (`red`).  Allgather: in round j rank i copies block (i+j) mod p from that rank's
 * output area to recvbuf.  In every round each slot is read by one rank only, instead of
 * by all of them at once.  The fold order is
 * rotated per block, so the op must be commutative; every block is reduced once, so every
 * rank gets the same bits.  One epoch per chunk:
 * Cost = 3 alpha_shm + 2 m beta_mem + (p-1)/p m gamma */

static int cyclic_allreduce(struct trd_shm *s, const char *src, char *dst, size_t count,
                            const trd_reducer *red)
{
    size_t ext = red->extent, per = s->slot / ext;
    int p = s->n, rc = MPI_SUCCESS;
    for (size_t first = 0; first < count; first += per) {
        size_t cnt = min_size(count - first, per), lo, hi;
        const char *in = src + first * ext;
        char *out = dst + first * ext;
        int b;
        uint64_t e = next_epoch(s, &b);
        trd_block_range(cnt, ext, p, s->me, &lo, &hi);
        memcpy(slot_in(s, s->me, b), in, lo * ext);
        memcpy(slot_in(s, s->me, b) + hi * ext, in + hi * ext, (cnt - hi) * ext);
        publish(s, CTR_IN, e);
        char *acc = slot_out(s, s->me, b) + lo * ext;
        if (hi > lo) {
            memcpy(acc, in + lo * ext, (hi - lo) * ext);
            for (int j = 1; j < p; j++) {
                int r = (s->me + j) % p;
                wait_one(s, CTR_IN, r, e);
                if (rc == MPI_SUCCESS)
                    rc = trd_reduce(red, slot_in(s, r, b) + lo * ext, acc, hi - lo);
            }
        }
        publish(s, CTR_RED, e);
        memcpy(out + lo * ext, acc, (hi - lo) * ext);
        for (int j = 1; j < p; j++) {
            int r = (s->me + j) % p;
            size_t rlo, rhi;
            trd_block_range(cnt, ext, p, r, &rlo, &rhi);
            if (rhi == rlo)
                continue;
            wait_one(s, CTR_RED, r, e);
            memcpy(out + rlo * ext, slot_out(s, r, b) + rlo * ext, (rhi - rlo) * ext);
        }
        publish(s, CTR_DONE, e);
    }
    return rc;
}

/* ---- Entry ----------------------------------------------------------------------------- */

int trd_shm_allreduce_params(trd_comm *c, const void *sendbuf, void *recvbuf, int count,
                             const trd_reducer *red, const char *params, const char **why)
{
    enum { RX, TREE, CYCLIC } alg;
    struct trd_shm *s = c->shm;
    const char *src = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
    struct rx_plan plan;
    long long radix = 0;

    /* every check depends only on what all ranks of the node share, so all of them decide
     * alike, and before anything is touched */
    if (!s) {
        *why = "no shared memory among the ranks of the node";
        return MPI_SUCCESS;
    }
    if (strncmp(params, "rx:", 3) == 0) {
        alg = RX;
        if ((*why = rx_plan_parse(params + 3, c->ppn, c->local, &plan)))
            return MPI_SUCCESS;
    } else if (strncmp(params, "tree:", 5) == 0) {
        const char *t = params + 5;
        alg = TREE;
        radix = parse_number(&t, INT_MAX);
        if (*t || radix < 2) {
            *why = "shm:tree needs a radix of at least 2";
            return MPI_SUCCESS;
        }
    } else if (strcmp(params, "cyclic") == 0) {
        alg = CYCLIC;
        if (!red->commutative) {
            *why = "shm:cyclic needs a commutative operation";
            return MPI_SUCCESS;
        }
    } else if (strcmp(params, "socket") == 0) {
        /* rx {q, packages} when every package holds q ranks, else the one-step algorithm */
        int np = c->npackages, q = np > 0 ? c->ppn / np : 0;
        long long product = 1;
        for (int i = 0; i < np; i++)
            if (c->package_first[i + 1] - c->package_first[i] != q)
                q = 0;
        if (q == 0)
            return trd_shm_allreduce(c, sendbuf, recvbuf, count, red, c->ppn);
        alg = RX;
        plan.k = 0;
        rx_plan_add(&plan, &product, q, c->local);
        rx_plan_add(&plan, &product, np, c->local);
    } else {
        *why = "unknown shm parameters (rx:F1,F2,..., tree:K, cyclic or socket)";
        return MPI_SUCCESS;
    }
    if (count <= 0)
        return MPI_SUCCESS;
    if (red->extent > s->slot)
        return MPI_ERR_TYPE;
    switch (alg) {
    case RX:
        return rx_allreduce(s, src, recvbuf, (size_t)count, red, &plan);
    case TREE:
        return tree_allreduce(s, src, recvbuf, (size_t)count, red, (int)radix);
    default:
        return cyclic_allreduce(s, src, recvbuf, (size_t)count, red);
    }
}
