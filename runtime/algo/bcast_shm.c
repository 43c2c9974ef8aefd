/*  Algorithm: bcast on one node through its shared segment [FLEX §2.3, one
 * level of radix ppn]: the root copies each chunk into its input area (up to
 * TRD_INLINE_BYTES into the line of its counter) and signals it; every other
 * rank copies it out.  Two slots alternate, so the root fills chunk e+1 while
 * the others still read chunk e.  Messages up to TRD_SHM_BCAST_PIPE_MAX go in
 * chunks of TRD_SHM_BCAST_PIPE_BYTES, so that the readers copy out while the
 * root still copies in: whole, the two copies run one after the other (on a
 * 2-rank node 8 KiB took 1.31 us in 2 KiB chunks, 1.72 us whole; 16 KiB
 * 2.0 us against 3.2 us).
 * Cost = 2 alpha_shm + 2 m beta_mem, pipelined (k chunks)
 *        (k + 1) alpha_shm + (1 + 1/k) m beta_mem
 *
 * Single copy: from cma_min (16 KiB, measured on a 2-rank node) every rank
 * reads the root's buffer directly (process_vm_readv), bytes [0, cut); from
 * TRD_SHM_BCAST_SPLIT_BYTES, where writing works too, the root meanwhile
 * writes the last 1/p of it, [cut, m), into every other rank's buffer, so the
 * root's core copies too instead of idling: on a 2-rank node 1.5x at 1 MiB
 * and 1.1-1.8x at 2 MiB (each buffer on its own, or the root writing its
 * buffer and the others reading theirs before each call), 1.6-2x from 4 MiB
 * up.  Below, the buffers live in the cores' caches and the root's writes
 * into lines cached by the reader cost more than they save where the reader
 * has just read them (0.8x at 256-512 KiB).
 * Cost = 2 alpha_shm + alpha_cma + m beta_cma, or with the split
 *        2 alpha_shm + (p-1) alpha_cma + (p-1)/p m beta_cma
 */
#include "phases.h"

#define TRD_SHM_BCAST_SPLIT_BYTES (1u << 20)
#define TRD_SHM_BCAST_PIPE_BYTES 2048
#define TRD_SHM_BCAST_PIPE_MAX (64u * 1024)

int trd_plan_shm_bcast(trd_sb *b, int round, int root, size_t count)
{
    const trd_shape *sh = b->sh;
    size_t ext = b->call->extent, per = b->s->seg_slot;
    int n = b->ppn, me = b->local;
    if (n == 1)
        return 0; /* a node of one rank holds the data */
    if (per == 0) {
        b->fail = "an element larger than a segment slot";
        return TRD_ERR_INPUT;
    }
    if (n > 1 && (sh->cma & TRD_CMA_READ) && count * ext >= sh->cma_min[TRD_CMA_BCAST]) {
        size_t m = count * ext, cut = count;
        if ((sh->cma & TRD_CMA_WRITE) && m >= TRD_SHM_BCAST_SPLIT_BYTES)
            cut = ((m - m / (size_t)n) & ~(size_t)63) / ext;
        int e = trd_seg_direct_begin(b, round);
        if (me != root) {
            trd_s_wait(b, round, trd_sb_local_rank(b, root), 0, TRD_CTR_IN, e);
            trd_s_copy(b, round, TRD_B_RECV, -1, 0, TRD_B_RECV, trd_sb_local_rank(b, root), 0, cut);
        } else {
            for (int k = 1; k < n && cut < count; k++) {
                int r = trd_sb_local_rank(b, (me + k) % n);
                trd_s_wait(b, round, r, 0, TRD_CTR_IN, e);
                trd_s_copy(b, round, TRD_B_RECV, r, cut, TRD_B_RECV, -1, cut, count - cut);
            }
        }
        trd_seg_direct_end(b, round, e);
        return 0;
    }
    if (count * ext <= TRD_SHM_BCAST_PIPE_MAX && TRD_SHM_BCAST_PIPE_BYTES / ext > 0 &&
        TRD_SHM_BCAST_PIPE_BYTES / ext < per)
        per = TRD_SHM_BCAST_PIPE_BYTES / ext;
    for (size_t first = 0; first < count; first += per) {
        size_t cnt = count - first < per ? count - first : per;
        size_t cin;
        int e = trd_seg_next(b, round), cbuf = trd_seg_contrib(b, e, cnt, &cin);
        if (me == root) {
            trd_s_copy(b, round, cbuf, -1, cin, TRD_B_RECV, -1, first, cnt);
            trd_s_signal(b, round, TRD_CTR_IN, e);
        } else {
            trd_s_wait(b, round, trd_sb_local_rank(b, root), 0, TRD_CTR_IN, e);
            trd_s_copy(b, round, TRD_B_RECV, -1, first, cbuf, trd_sb_local_rank(b, root), cin, cnt);
        }
        trd_s_signal(b, round, TRD_CTR_DONE, e);
    }
    return 0;
}

static int plan(trd_sb *b, const void *params)
{
    (void)params;
    return trd_plan_shm_bcast(b, 0, trd_sb_local_of(b, b->call->root), b->call->count);
}

const trd_algo trd_bcast_shm = {
    .name = "shm",
    .coll = TRD_COLL_BCAST,
    .source = "[FLEX §2.3]",
    .levels = "one node: through the segment, or single copy from the root's buffer",
    .refuse = trd_refuse_one_node,
    .plan = plan,
};
