/* Planners: the runtime's allreduce algorithms as schedules (sched.h).
 *
 * Each builder follows its template in templates/ op for op -- the same
 * peers, element ranges, operand order and nonblocking groups -- for one
 * rank at a time; the NAP and RM step plans come from the same pure-C
 * functions the runtime calls (runtime/nap.c, runtime/rm.c), the block split
 * from runtime/trd_select.h.  The shared-memory node phases are modelled as
 * the runtime's block-wise path: copy in, barrier, every rank folds its block
 * of the contributions in local order, barrier, copy out, barrier.
 */
#include "sched.h"

#include <stdlib.h>
#include <string.h>

#include "trd_nap.h"
#include "trd_rm.h"
#include "trd_select.h"

/* Rounds of one phase of a composite: phase k uses k * PHASE .. */
#define PHASE (1 << 20)

typedef struct ctx {
    trd_sched *s;
    const trd_shape *sh;
    size_t count, ext;
    size_t base; /* where the vector starts in recvbuf (a lane's block in flex) */
    int shm, commutative;
    int rank, pos, node, local, ppn; /* the rank being planned */
    const int *local_ranks;          /* its node's ranks in local order */
} ctx;

static size_t range_offset(const ctx *c, int n, int i)
{
    size_t lo, hi;
    trd_block_split(c->count, c->ext, n, i < n ? i : n - 1, &lo, &hi);
    return i < n ? lo : hi;
}

/* ---- Recursive doubling [MPICH §4] (templates/allreduce_rd.c.in) ------- */

static void rd_list(ctx *c, int round, const int *ranks, int n, int me)
{
    trd_sched *s = c->s;
    size_t cnt = c->count;
    int pof2 = 1, newrank;
    if (n <= 1)
        return;
    while (pof2 * 2 <= n)
        pof2 *= 2;
    int rem = n - pof2;
#define RANK(i) (ranks ? ranks[i] : (i))
    if (me < 2 * rem) {
        if (me % 2 == 0) {
            trd_s_send(s, round, RANK(me + 1), TRD_B_RECV, c->base, cnt);
            newrank = -1;
        } else {
            trd_s_recv(s, round, RANK(me - 1), TRD_B_TMP, 0, cnt);
            trd_s_reduce(s, round, TRD_B_RECV, c->base, TRD_B_TMP, -1, 0, cnt, 1);
            newrank = me / 2;
        }
    } else {
        newrank = me - rem;
    }
    int k = 1;
    for (int mask = 1; newrank >= 0 && mask < pof2; mask <<= 1, k++) {
        int newdst = newrank ^ mask;
        int dst = newdst < rem ? newdst * 2 + 1 : newdst + rem;
        trd_s_sendrecv(s, round + k, RANK(dst), TRD_B_RECV, c->base, cnt, RANK(dst), TRD_B_TMP, 0, cnt);
        if (c->commutative || dst < me) {
            trd_s_reduce(s, round + k, TRD_B_RECV, c->base, TRD_B_TMP, -1, 0, cnt, 1);
        } else {
            trd_s_reduce(s, round + k, TRD_B_TMP, 0, TRD_B_RECV, -1, c->base, cnt, 1);
            trd_s_copy(s, round + k, TRD_B_RECV, c->base, TRD_B_TMP, -1, 0, cnt);
        }
    }
    int last = round + 40;
    if (me < 2 * rem) {
        if (me % 2)
            trd_s_send(s, last, RANK(me - 1), TRD_B_RECV, c->base, cnt);
        else
            trd_s_recv(s, last, RANK(me + 1), TRD_B_RECV, c->base, cnt);
    }
#undef RANK
}

/* ---- Ring [TREE §3.2] (templates/allreduce_ring.c.in) -------------------- */

static void ring_list(ctx *c, int round, const int *ranks, int n, int me)
{
    trd_sched *s = c->s;
    int next = ranks[(me + 1) % n], prev = ranks[(me + n - 1) % n];
#define OFF(i) range_offset(c, n, (i))
#define AT(i) (c->base + OFF(i))
#define LEN(i) (OFF((i) + 1) - OFF(i))
    for (int k = 0; k < n - 1; k++) {
        int sb = (me - k + n) % n, rb = (me - k - 1 + n) % n;
        trd_s_sendrecv(s, round + k, next, TRD_B_RECV, AT(sb), LEN(sb), prev, TRD_B_TMP, 0, LEN(rb));
        trd_s_reduce(s, round + k, TRD_B_RECV, AT(rb), TRD_B_TMP, -1, 0, LEN(rb), 1);
    }
    for (int k = 0; k < n - 1; k++) {
        int sb = (me + 1 - k + n) % n, rb = (me - k + n) % n;
        trd_s_sendrecv(s, round + n - 1 + k, next, TRD_B_RECV, AT(sb), LEN(sb), prev, TRD_B_RECV,
                       AT(rb), LEN(rb));
    }
#undef AT
#undef LEN
#undef OFF
}

/* ---- Rabenseifner [MPICH §4.3] (templates/allreduce_hier.c.in) ----------- */

static void rabenseifner_list(ctx *c, int round, const int *ranks, int n, int me)
{
    trd_sched *s = c->s;
    size_t cnt = c->count;
    int q = 1, newrank;
    if (n <= 1)
        return;
    while (q * 2 <= n)
        q *= 2;
    int rem = n - q;
    if (me < 2 * rem) {
        if (me % 2 == 0) {
            trd_s_send(s, round, ranks[me + 1], TRD_B_RECV, c->base, cnt);
            newrank = -1;
        } else {
            trd_s_recv(s, round, ranks[me - 1], TRD_B_TMP, 0, cnt);
            trd_s_reduce(s, round, TRD_B_RECV, c->base, TRD_B_TMP, -1, 0, cnt, 1);
            newrank = me / 2;
        }
    } else {
        newrank = me - rem;
    }
#define PEER(k) ranks[(k) < rem ? 2 * (k) + 1 : (k) + rem]
#define OFF(i) range_offset(c, q, (i))
    if (newrank >= 0) {
        int plo[32], phi[32], steps = 0, lo = 0, hi = q;
        for (int mask = 1; mask < q; mask <<= 1, steps++) {
            int mid = lo + (hi - lo) / 2, upper = (newrank & mask) != 0;
            int klo = upper ? mid : lo, khi = upper ? hi : mid;
            int slo = upper ? lo : mid, shi = upper ? mid : hi;
            size_t ko = OFF(klo), so = OFF(slo), kn = OFF(khi) - ko, sn = OFF(shi) - so;
            int peer = PEER(newrank ^ mask);
            plo[steps] = lo;
            phi[steps] = hi;
            trd_s_sendrecv(s, round + 1 + steps, peer, TRD_B_RECV, c->base + so, sn, peer, TRD_B_TMP, 0, kn);
            trd_s_reduce(s, round + 1 + steps, TRD_B_RECV, c->base + ko, TRD_B_TMP, -1, 0, kn, 1);
            lo = klo;
            hi = khi;
        }
        for (int k = steps - 1; k >= 0; k--) {
            int olo = lo == plo[k] ? hi : plo[k], ohi = lo == plo[k] ? phi[k] : lo;
            size_t mo = OFF(lo), oo = OFF(olo), mn = OFF(hi) - mo, on = OFF(ohi) - oo;
            int peer = PEER(newrank ^ (1 << k));
            trd_s_sendrecv(s, round + 1 + 2 * steps - k, peer, TRD_B_RECV, c->base + mo, mn, peer,
                           TRD_B_RECV, c->base + oo, on);
            lo = plo[k];
            hi = phi[k];
        }
    }
#undef OFF
#undef PEER
    if (me < 2 * rem) {
        if (me % 2)
            trd_s_send(s, round + 80, ranks[me - 1], TRD_B_RECV, c->base, cnt);
        else
            trd_s_recv(s, round + 80, ranks[me + 1], TRD_B_RECV, c->base, cnt);
    }
}

/* ---- Recursive multiplying [RM §4] (templates/allreduce_rm.c.in) --------- */

static int rm_plan(ctx *c, const trd_rm_schedule *rs)
{
    trd_sched *s = c->s;
    const int *list = c->commutative ? c->sh->ring : NULL;
    int me = c->commutative ? c->pos : c->rank;
    size_t cnt = c->count;
    int nslots = trd_rm_max_recv(rs);
    trd_rm_step st;
#define RM_RANK(v) (list ? list[v] : (v))
    for (int k = 0; k < trd_rm_nsteps(rs); k++) {
        trd_rm_plan_step(rs, me, k, &st);
        if (st.nsend == 0 && st.nrecv == 0)
            continue;
        int direct = st.nsend == 0 && st.nfold == 1 && st.fold[0] == 0 && st.nrecv == 1;
        for (int i = 0; i < st.nrecv; i++) {
            if (direct)
                trd_s_recv(s, k, RM_RANK(st.recv[i]), TRD_B_RECV, 0, cnt);
            else
                trd_s_recv(s, k, RM_RANK(st.recv[i]), TRD_B_TMP, (size_t)i * cnt, cnt);
            trd_s_nb(s);
        }
        for (int i = 0; i < st.nsend; i++) {
            trd_s_send(s, k, RM_RANK(st.send[i]), TRD_B_RECV, 0, cnt);
            trd_s_nb(s);
        }
        s->op[s->nops - 1].nb = 0; /* the wait */
        if (st.nfold == 0 || direct)
            continue;
        int last = st.fold[st.nfold - 1];
        if (st.nfold == 1 && last == TRD_RM_SELF)
            continue;
        size_t acc = (size_t)nslots * cnt;
        if (last == TRD_RM_SELF)
            trd_s_copy(s, k, TRD_B_TMP, acc, TRD_B_RECV, -1, 0, cnt);
        else
            acc = (size_t)last * cnt;
        for (int i = st.nfold - 2; i >= 0; i--) {
            int f = st.fold[i];
            if (f == TRD_RM_SELF)
                trd_s_reduce(s, k, TRD_B_TMP, acc, TRD_B_RECV, -1, 0, cnt, 1);
            else
                trd_s_reduce(s, k, TRD_B_TMP, acc, TRD_B_TMP, -1, (size_t)f * cnt, cnt, 1);
        }
        trd_s_copy(s, k, TRD_B_RECV, 0, TRD_B_TMP, -1, acc, cnt);
    }
#undef RM_RANK
    return 0;
}

/* ---- Node phases ---------------------------------------------------------- */

/* The shared-memory reduction of the first k local ranks' buffers to every
 * rank of the node (root < 0: trd_shm_allreduce) or to local rank root only
 * (trd_shm_reduce) as runtime/shm.c does: the segment's first count
 * elements are the input area, the next count the output area; up to
 * TRD_SHM_WHOLE_BYTES every receiver folds the whole vector from the
 * inputs, above it every rank folds its block into the output area, then
 * the receivers copy all blocks out.  (The runtime reads large vectors
 * straight from the other ranks' buffers where the kernel allows it; the
 * schedule keeps the segment path, which moves the same bytes plus the
 * copy in.) */
static void shm_reduce_to(ctx *c, int round, int k, int root)
{
    trd_sched *s = c->s;
    size_t cnt = c->count, lo, hi;
    if (root < 0 && c->ppn == 1 && k == 1)
        return;
    if (c->local < k)
        trd_s_copy(s, round, TRD_B_SHM, 0, TRD_B_RECV, -1, 0, cnt);
    trd_s_barrier(s, round);
    if (cnt * c->ext <= TRD_SHM_WHOLE_BYTES || c->ppn == 1) {
        /* small: every receiver folds the whole vector from the k inputs */
        if (root < 0 || c->local == root) {
            trd_s_copy(s, round, TRD_B_RECV, 0, TRD_B_SHM, c->local_ranks[k - 1], 0, cnt);
            for (int j = k - 2; j >= 0; j--)
                trd_s_reduce(s, round, TRD_B_RECV, 0, TRD_B_SHM, c->local_ranks[j], 0, cnt, 1);
        }
        trd_s_barrier(s, round);
        return;
    }
    trd_block_split(cnt, c->ext, c->ppn, c->local, &lo, &hi);
    if (hi > lo) {
        trd_s_copy(s, round, TRD_B_SHM, cnt + lo, TRD_B_SHM, c->local_ranks[k - 1], lo, hi - lo);
        for (int j = k - 2; j >= 0; j--)
            trd_s_reduce(s, round, TRD_B_SHM, cnt + lo, TRD_B_SHM, c->local_ranks[j], lo, hi - lo, 1);
    }
    trd_s_barrier(s, round);
    for (int r = 0; (root < 0 || c->local == root) && r < c->ppn; r++) {
        trd_block_split(cnt, c->ext, c->ppn, r, &lo, &hi);
        if (hi > lo)
            trd_s_copy(s, round, TRD_B_RECV, lo, TRD_B_SHM, c->local_ranks[r], cnt + lo, hi - lo);
    }
    trd_s_barrier(s, round);
}

/* The shared-memory bcast from local rank 0 (trd_shm_bcast). */
static void shm_bcast0(ctx *c, int round)
{
    trd_sched *s = c->s;
    if (c->local == 0)
        trd_s_copy(s, round, TRD_B_SHM, 0, TRD_B_RECV, -1, 0, c->count);
    trd_s_barrier(s, round);
    if (c->local != 0)
        trd_s_copy(s, round, TRD_B_RECV, 0, TRD_B_SHM, c->local_ranks[0], 0, c->count);
    trd_s_barrier(s, round);
}

/* Binomial reduce to local rank 0 and binomial bcast from it [MPICH §4.4,
 * §4.2] (node_reduce_p2p, node_bcast_p2p). */
static void p2p_reduce0(ctx *c, int round)
{
    int j = c->local;
    for (int mask = 1, k = 0; mask < c->ppn; mask <<= 1, k++) {
        if (j & mask) {
            trd_s_send(c->s, round + k, c->local_ranks[j - mask], TRD_B_RECV, 0, c->count);
            return;
        }
        if (j + mask < c->ppn) {
            trd_s_recv(c->s, round + k, c->local_ranks[j + mask], TRD_B_TMP, 0, c->count);
            trd_s_reduce(c->s, round + k, TRD_B_RECV, 0, TRD_B_TMP, -1, 0, c->count, 1);
        }
    }
}

static void p2p_bcast0(ctx *c, int round)
{
    int j = c->local, mask = 1, k = 0;
    while (mask < c->ppn && !(j & mask))
        mask <<= 1, k++;
    if (j)
        trd_s_recv(c->s, round + k, c->local_ranks[j - mask], TRD_B_RECV, 0, c->count);
    for (mask >>= 1, k--; mask > 0; mask >>= 1, k--)
        if (j + mask < c->ppn)
            trd_s_send(c->s, round + k, c->local_ranks[j + mask], TRD_B_RECV, 0, c->count);
}

/* ---- NAP [NAP Alg. 1, §III-A] (templates/allreduce_nap.c.in) ------------- */

static int nap_plan(ctx *c, char *why, size_t whylen)
{
    trd_sched *s = c->s;
    const trd_shape *sh = c->sh;
    size_t cnt = c->count;
    int ppn_min, ppn_max;
    trd_shape_ppn(sh, &ppn_min, &ppn_max);
    int lanes = ppn_min, radix = trd_nap_radix(lanes), steps = trd_nap_nsteps(sh->nnodes, radix);
    int maxrecv = (radix + lanes - 1) / lanes;
    trd_nap_xfer *recv = malloc((size_t)maxrecv * sizeof *recv);
    trd_nap_xfer *send = malloc((size_t)sh->nnodes * sizeof *send);
    if (!recv || !send) {
        free(recv);
        free(send);
        snprintf(why, whylen, "out of memory");
        return -1;
    }
    s->tmp_count = cnt * (size_t)(maxrecv + 2);
#define NODE_RANK(v, l) sh->ring[sh->node_first[(v)] + (l)]
    if (c->shm)
        shm_reduce_to(c, 0, c->ppn, -1);
    else
        rd_list(c, 0, c->local_ranks, c->ppn, c->local);
    for (int st = 0; st < steps; st++) {
        int round = (st + 1) * PHASE, nr = 0, ns = 0, lane = c->local < lanes ? c->local : 0;
        trd_nap_stepinfo info;
        if (trd_nap_step(sh->nnodes, lanes, radix, st, c->node, lane, &info, recv, &nr, send, &ns)) {
            free(recv);
            free(send);
            snprintf(why, whylen, "NAP plan failed at step %d", st);
            return -1;
        }
        int g = info.nsub, j = info.sub;
        if (g <= 1)
            continue;
        int cntl = g < lanes ? g : lanes;
        if (c->local < lanes) {
            int nreq = 0;
            for (int i = 0; i < nr; i++) {
                trd_s_recv(s, round, NODE_RANK(recv[i].node, recv[i].lane), TRD_B_TMP,
                           (size_t)(2 + i) * cnt, cnt);
                trd_s_nb(s);
                nreq++;
            }
            for (int i = 0; i < ns; i++) {
                if (nreq == 64) {
                    s->op[s->nops - 1].nb = 0;
                    nreq = 0;
                }
                trd_s_send(s, round, NODE_RANK(send[i].node, send[i].lane), TRD_B_RECV, 0, cnt);
                trd_s_nb(s);
                nreq++;
            }
            if (nr + ns > 0)
                s->op[s->nops - 1].nb = 0;
            int ri = 0, first = 1;
            for (int r = c->local; r < g; r += lanes) {
                int from_buf = r == j;
                size_t part = from_buf ? 0 : (size_t)(2 + ri++) * cnt;
                if (first)
                    trd_s_copy(s, round, TRD_B_TMP, cnt, from_buf ? TRD_B_RECV : TRD_B_TMP, -1, part, cnt);
                else
                    trd_s_reduce(s, round, TRD_B_TMP, cnt, from_buf ? TRD_B_RECV : TRD_B_TMP, -1, part,
                                 cnt, 1);
                first = 0;
            }
            if (!first)
                trd_s_copy(s, round, TRD_B_RECV, 0, TRD_B_TMP, -1, cnt, cnt);
        }
        if (c->shm) {
            shm_reduce_to(c, round + 1, cntl, -1);
        } else if (c->local < cntl) {
            rd_list(c, round + 1, c->local_ranks, cntl, c->local);
            for (int l = c->local + cntl; l < c->ppn; l += cntl)
                trd_s_send(s, round + 100, c->local_ranks[l], TRD_B_RECV, 0, cnt);
        } else {
            trd_s_recv(s, round + 100, c->local_ranks[c->local % cntl], TRD_B_RECV, 0, cnt);
        }
    }
#undef NODE_RANK
    free(recv);
    free(send);
    return 0;
}

/* ---- SMP [NAP §II-A] (templates/allreduce_hier.c.in) --------------------- */

static int smp_plan(ctx *c, const char *params, char *why, size_t whylen)
{
    const trd_shape *sh = c->sh;
    int leader_alg = !*params || !strcmp(params, "rd") ? 0 : !strcmp(params, "rabenseifner") ? 1
                   : !strcmp(params, "ring")                ? 2
                                                            : -1;
    if (leader_alg < 0) {
        snprintf(why, whylen, "smp: the leader algorithm must be rd, rabenseifner or ring, not '%s'",
                 params);
        return -1;
    }
    int *leaders = malloc((size_t)sh->nnodes * sizeof *leaders);
    if (!leaders) {
        snprintf(why, whylen, "out of memory");
        return -1;
    }
    for (int v = 0; v < sh->nnodes; v++)
        leaders[v] = sh->ring[sh->node_first[v]];
    if (c->ppn > 1 && c->shm)
        shm_reduce_to(c, 0, c->ppn, 0);
    else if (c->ppn > 1)
        p2p_reduce0(c, 0);
    if (c->local == 0) {
        if (leader_alg == 1)
            rabenseifner_list(c, PHASE, leaders, sh->nnodes, c->node);
        else if (leader_alg == 2)
            ring_list(c, PHASE, leaders, sh->nnodes, c->node);
        else
            rd_list(c, PHASE, leaders, sh->nnodes, c->node);
    }
    if (c->ppn > 1 && c->shm)
        shm_bcast0(c, 2 * PHASE);
    else if (c->ppn > 1)
        p2p_bcast0(c, 2 * PHASE);
    free(leaders);
    return 0;
}

/* ---- The FLEX composite and the hierarchical ring [FLEX §2.1.2, TREE §3.2] ---- */

/* (1) node reduce_scatter to the lanes, (2) one allreduce per lane among
 * the nodes, (3) node allgather from the lanes (composite_allreduce).  The
 * temporary holds the lane's accumulator, then one block per local rank for
 * the point-to-point reduce_scatter (the runtime reuses one block; the data
 * flow and the fold order are the same). */
static int flex_plan(ctx *c, int lane_alg, int nlanes, size_t blk)
{
    trd_sched *s = c->s;
    const trd_shape *sh = c->sh;
    size_t cnt = c->count, lo, hi;
    /* (1) */
    if (c->ppn > 1 && c->shm) {
        trd_s_copy(s, 0, TRD_B_SHM, 0, TRD_B_RECV, -1, 0, cnt);
        trd_s_barrier(s, 0);
        if (c->local < nlanes) {
            trd_block_split(cnt, c->ext, nlanes, c->local, &lo, &hi);
            if (hi > lo) {
                trd_s_copy(s, 0, TRD_B_RECV, lo, TRD_B_SHM, c->local_ranks[c->ppn - 1], lo, hi - lo);
                for (int j = c->ppn - 2; j >= 0; j--)
                    trd_s_reduce(s, 0, TRD_B_RECV, lo, TRD_B_SHM, c->local_ranks[j], lo, hi - lo, 1);
            }
        }
        trd_s_barrier(s, 0);
    } else if (c->ppn > 1) {
        int posted = 0;
        for (int l = 0; l < nlanes; l++) {
            trd_block_split(cnt, c->ext, nlanes, l, &lo, &hi);
            if (l != c->local && hi > lo) {
                trd_s_send(s, 0, c->local_ranks[l], TRD_B_RECV, lo, hi - lo);
                trd_s_nb(s);
                posted = 1;
            }
        }
        if (c->local < nlanes) {
            trd_block_split(cnt, c->ext, nlanes, c->local, &lo, &hi);
            for (int j = c->ppn - 1; hi > lo && j >= 0; j--)
                if (j != c->local) {
                    trd_s_recv(s, 0, c->local_ranks[j], TRD_B_TMP, blk * (size_t)(1 + j), hi - lo);
                    trd_s_nb(s);
                    posted = 1;
                }
        }
        if (posted)
            s->op[s->nops - 1].nb = 0;
        if (c->local < nlanes && hi > lo) {
            /* x_0 op (x_1 op (... op x_{ppn-1})) into acc, then into the block */
            for (int j = c->ppn - 1; j >= 0; j--) {
                int own = j == c->local;
                size_t at = own ? lo : blk * (size_t)(1 + j);
                int from = own ? TRD_B_RECV : TRD_B_TMP;
                if (j == c->ppn - 1)
                    trd_s_copy(s, 0, TRD_B_TMP, 0, from, -1, at, hi - lo);
                else
                    trd_s_reduce(s, 0, TRD_B_TMP, 0, from, -1, at, hi - lo, 1);
            }
            trd_s_copy(s, 0, TRD_B_RECV, lo, TRD_B_TMP, -1, 0, hi - lo);
        }
    }
    /* (2) */
    if (c->local < nlanes && sh->nnodes > 1) {
        int *lane = malloc((size_t)sh->nnodes * sizeof *lane);
        if (!lane)
            return -1;
        for (int v = 0; v < sh->nnodes; v++)
            lane[v] = sh->ring[sh->node_first[v] + c->local];
        trd_block_split(cnt, c->ext, nlanes, c->local, &lo, &hi);
        ctx sub = *c;
        sub.count = hi - lo;
        sub.base = lo;
        int alg = lane_alg >= 0 ? lane_alg : trd_flex_lane((hi - lo) * c->ext, sh->nnodes);
        if (alg == TRD_LANE_RING)
            ring_list(&sub, PHASE, lane, sh->nnodes, c->node);
        else if (alg == TRD_LANE_RABENSEIFNER)
            rabenseifner_list(&sub, PHASE, lane, sh->nnodes, c->node);
        else
            rd_list(&sub, PHASE, lane, sh->nnodes, c->node);
        free(lane);
    }
    /* (3) */
    if (c->ppn > 1 && c->shm) {
        if (c->local < nlanes) {
            trd_block_split(cnt, c->ext, nlanes, c->local, &lo, &hi);
            if (hi > lo)
                trd_s_copy(s, 2 * PHASE, TRD_B_SHM, cnt + lo, TRD_B_RECV, -1, lo, hi - lo);
        }
        trd_s_barrier(s, 2 * PHASE);
        for (int l = 0; l < nlanes; l++) {
            trd_block_split(cnt, c->ext, nlanes, l, &lo, &hi);
            if (l != c->local && hi > lo)
                trd_s_copy(s, 2 * PHASE, TRD_B_RECV, lo, TRD_B_SHM, c->local_ranks[l], cnt + lo, hi - lo);
        }
        trd_s_barrier(s, 2 * PHASE);
    } else if (c->ppn > 1) {
        int posted = 0;
        for (int l = 0; l < nlanes; l++) {
            trd_block_split(cnt, c->ext, nlanes, l, &lo, &hi);
            if (l != c->local && hi > lo) {
                trd_s_recv(s, 2 * PHASE, c->local_ranks[l], TRD_B_RECV, lo, hi - lo);
                trd_s_nb(s);
                posted = 1;
            }
        }
        if (c->local < nlanes) {
            trd_block_split(cnt, c->ext, nlanes, c->local, &lo, &hi);
            for (int j = 0; j < c->ppn && hi > lo; j++)
                if (j != c->local) {
                    trd_s_send(s, 2 * PHASE, c->local_ranks[j], TRD_B_RECV, lo, hi - lo);
                    trd_s_nb(s);
                    posted = 1;
                }
        }
        if (posted)
            s->op[s->nops - 1].nb = 0;
    }
    return 0;
}

/* ---- Dispatch ---------------------------------------------------------------- */

const char *const trd_sched_planners[] = {"ring", "rd",  "rabenseifner", "rm",
                                          "nap",  "smp", "flex",         "hring", NULL};

int trd_sched_plan(trd_sched *s, const char *alg, const char *params, const trd_shape *sh,
                   size_t count, size_t extent, int in_place, int commutative, int shm, char *why,
                   size_t whylen)
{
    int a = -1;
    trd_rm_schedule rs;
    int ppn_min, ppn_max;
    if (!params)
        params = "";
    trd_shape_ppn(sh, &ppn_min, &ppn_max);
    for (int i = 0; trd_sched_planners[i]; i++)
        if (!strcmp(alg, trd_sched_planners[i]))
            a = i;
    if (a < 0) {
        snprintf(why, whylen,
                 "unknown algorithm '%s' (planned: ring, rd, rabenseifner, rm, nap, smp, flex, hring)", alg);
        return -1;
    }
    if (!commutative && a != 1 && a != 3) {
        snprintf(why, whylen, "%s needs a commutative operation", alg);
        return -1;
    }
    if (*params && a != 3 && a != 5 && a != 6) {
        snprintf(why, whylen, "%s takes no parameters", alg);
        return -1;
    }
    int lane_alg = -1;
    if (a == 6 && *params) {
        lane_alg = !strcmp(params, "rd") ? TRD_LANE_RD : !strcmp(params, "rabenseifner") ? TRD_LANE_RABENSEIFNER
                 : !strcmp(params, "ring")                                        ? TRD_LANE_RING
                                                                                  : -2;
        if (lane_alg == -2) {
            snprintf(why, whylen, "flex: the lane algorithm must be rd, rabenseifner or ring, not '%s'",
                     params);
            return -1;
        }
    }
    if (a == 7)
        lane_alg = TRD_LANE_RING;
    if (a == 3) {
        if (*params) {
            char err[128];
            if (trd_rm_parse(params, sh->nranks, &rs, err, sizeof err)) {
                snprintf(why, whylen, "rm schedule '%s' for %d ranks: %s", params, sh->nranks, err);
                return -1;
            }
        } else {
            trd_rm_default_first(sh->nranks, ppn_min == ppn_max ? ppn_max : 0, 4, &rs);
        }
        if (!commutative && !trd_rm_keeps_order(&rs)) {
            snprintf(why, whylen, "rm schedule with merge needs a commutative operation");
            return -1;
        }
    }
    if (trd_sched_init(s, trd_sched_planners[a], sh->nranks, count, in_place)) {
        snprintf(why, whylen, "out of memory");
        return -1;
    }
    snprintf(s->params, sizeof s->params, "%s", params);
    s->commutative = commutative;
    s->contention_free = a == 0;
    if (a == 3)
        s->tmp_count = count * (size_t)(trd_rm_max_recv(&rs) + 1);
    size_t blk = 0;
    for (int l = 0; l < ppn_min; l++) {
        size_t lo, hi;
        trd_block_split(count, extent, ppn_min, l, &lo, &hi);
        blk = hi - lo > blk ? hi - lo : blk;
    }
    if (a >= 6)
        s->tmp_count = blk * (size_t)(ppn_max + 1) + 1;
    int *pos_of = malloc((size_t)(sh->nranks > 0 ? sh->nranks : 1) * sizeof *pos_of);
    if (!pos_of) {
        trd_sched_free(s);
        snprintf(why, whylen, "out of memory");
        return -1;
    }
    for (int i = 0; i < sh->nranks; i++)
        pos_of[sh->ring[i]] = i;
    int rc = 0;
    for (int r = 0; r < sh->nranks && !rc; r++) {
        ctx c = {.s = s, .sh = sh, .count = count, .ext = extent, .shm = shm,
                 .commutative = commutative, .rank = r, .pos = pos_of[r], .node = sh->node_of[r]};
        c.local = c.pos - sh->node_first[c.node];
        c.ppn = sh->node_first[c.node + 1] - sh->node_first[c.node];
        c.local_ranks = sh->ring + sh->node_first[c.node];
        trd_sched_rank(s, r);
        /* the runtime copies the input into recvbuf first (not in place) */
        if (!in_place)
            trd_s_copy(s, 0, TRD_B_RECV, 0, TRD_B_SEND, -1, 0, count);
        if (sh->nranks == 1)
            continue;
        switch (a) {
        case 0:
            ring_list(&c, 1, sh->ring, sh->nranks, c.pos);
            break;
        case 1:
            if (commutative)
                rd_list(&c, 1, sh->ring, sh->nranks, c.pos);
            else
                rd_list(&c, 1, NULL, sh->nranks, r);
            break;
        case 2:
            rabenseifner_list(&c, 1, sh->ring, sh->nranks, c.pos);
            break;
        case 3:
            rc = rm_plan(&c, &rs);
            break;
        case 4:
            rc = nap_plan(&c, why, whylen);
            break;
        case 5:
            rc = smp_plan(&c, params, why, whylen);
            break;
        default:
            if (flex_plan(&c, lane_alg, ppn_min, blk)) {
                snprintf(why, whylen, "out of memory");
                rc = -1;
            }
            break;
        }
    }
    free(pos_of);
    if (!rc && trd_sched_end(s)) {
        snprintf(why, whylen, "out of memory");
        rc = -1;
    }
    if (rc)
        trd_sched_free(s);
    return rc;
}
