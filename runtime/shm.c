/* Shared memory among the ranks of a node: one segment per node from
 * MPI_Win_allocate_shared, per-rank epoch counters, and the node allreduce
 * that streams messages through the segment.
 *
 * Algorithm: for every chunk of at most TRD_SHM_SLOT_BYTES, each contributing
 * rank copies its part into its slot and publishes the chunk's epoch; then
 * either every rank reduces the whole chunk (small chunks: one round of
 * flags), or rank i reduces block i of the chunk over all slots and publishes
 * it, and every rank gathers the blocks (reduce_scatter + allgather, the
 * one-step radix-ppn recursive exchange of [FLEX §2.1] in shared memory).
 * Two slots per rank alternate, so a rank writes chunk e+1 while others still
 * read chunk e; before it reuses a slot it waits until every rank has finished
 * chunk e-1 (the counter-integrated barrier of [FLEX §3.1]).
 * Cost per chunk of b bytes = 3 alpha_shm + (2 + 1/ppn) b beta_mem + (ncontrib-1)/ppn b gamma
 */
#define _GNU_SOURCE
#include "treeduce_rt.h"

#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define TRD_CACHE_LINE 64
/* chunks at most this large are reduced whole by every rank */
#define TRD_SHM_WHOLE_BYTES 8192
/* spins before a wait starts yielding the core (ranks may outnumber cores) */
#define TRD_SHM_SPINS 2000

/* The head of every rank's segment: one cache line per counter, each written
 * only by its owner. */
#define TRD_SHM_INLINE_BYTES 24
struct trd_shm_ctrl {
    _Alignas(TRD_CACHE_LINE) _Atomic uint64_t in; /* slot of this epoch is filled */
    /* payloads of at most TRD_SHM_INLINE_BYTES travel in the line of the
     * counter that announces them: one cache miss instead of two */
    unsigned char inline_data[2][TRD_SHM_INLINE_BYTES];
    _Alignas(TRD_CACHE_LINE) _Atomic uint64_t red; /* block of this epoch is reduced */
    _Alignas(TRD_CACHE_LINE) _Atomic uint64_t done; /* finished reading others' epoch */
};

struct trd_shm {
    MPI_Comm comm; /* the ranks of this node, local order */
    MPI_Win win;
    int n, me;
    char **seg; /* [n] each rank's segment */
    size_t slot;
    uint64_t epoch;
};

static struct trd_shm_ctrl *ctrl(const struct trd_shm *s, int r)
{
    return (struct trd_shm_ctrl *)s->seg[r];
}

/* slot b (0 or 1) of rank r: input area, then output area */
static char *slot_in(const struct trd_shm *s, int r, int b)
{
    return s->seg[r] + sizeof(struct trd_shm_ctrl) + (size_t)b * 2 * s->slot;
}

static char *slot_out(const struct trd_shm *s, int r, int b)
{
    return slot_in(s, r, b) + s->slot;
}

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ volatile("yield");
#endif
}

enum { CTR_IN, CTR_RED, CTR_DONE };

static _Atomic uint64_t *counter(const struct trd_shm *s, int r, int which)
{
    struct trd_shm_ctrl *c = ctrl(s, r);
    return which == CTR_IN ? &c->in : which == CTR_RED ? &c->red : &c->done;
}

static void publish(struct trd_shm *s, int which, uint64_t e)
{
    atomic_store_explicit(counter(s, s->me, which), e, memory_order_release);
}

/* Wait until rank r has published at least e: spin, then yield. */
static void wait_one(const struct trd_shm *s, int which, int r, uint64_t e)
{
    _Atomic uint64_t *f = counter(s, r, which);
    unsigned spins = 0;
    while (atomic_load_explicit(f, memory_order_acquire) < e) {
        if (++spins < TRD_SHM_SPINS)
            cpu_relax();
        else
            sched_yield();
    }
}

/* Wait until ranks 0..nranks-1 have published at least e. */
static void wait_all(const struct trd_shm *s, int which, int nranks, uint64_t e)
{
    for (int r = 0; r < nranks; r++)
        wait_one(s, which, r, e);
}

/* Start the next chunk: its epoch, with slot b = epoch & 1 free for reuse
 * (every rank has finished the chunk that last used it, epoch - 2). */
static uint64_t next_epoch(struct trd_shm *s, int *b)
{
    uint64_t e = ++s->epoch;
    *b = (int)(e & 1);
    if (e > 2)
        wait_all(s, CTR_DONE, s->n, e - 2);
    return e;
}

int trd_shm_create(trd_comm *c)
{
    const char *env = getenv("TREEDUCE_SHM");
    MPI_Comm node = MPI_COMM_NULL, shared = MPI_COMM_NULL;
    int rc, nshared = 0, ok, all_ok;
    c->shm = NULL;
    if ((rc = PMPI_Comm_split(c->comm, c->node, c->local, &node)) != MPI_SUCCESS)
        return rc;
    /* the ranks of one (possibly virtual) node must really share memory */
    if ((rc = PMPI_Comm_split_type(node, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &shared)) !=
        MPI_SUCCESS)
        goto fail;
    PMPI_Comm_size(shared, &nshared);
    PMPI_Comm_free(&shared);
    ok = nshared == c->ppn && !(env && strcmp(env, "0") == 0);
    if ((rc = PMPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, c->comm)) != MPI_SUCCESS)
        goto fail;
    if (!all_ok) {
        PMPI_Comm_free(&node);
        return MPI_SUCCESS;
    }
    struct trd_shm *s = calloc(1, sizeof *s);
    if (!s || !(s->seg = calloc((size_t)c->ppn, sizeof(char *)))) {
        free(s);
        rc = MPI_ERR_NO_MEM;
        goto fail;
    }
    s->comm = node;
    s->n = c->ppn;
    s->me = c->local;
    s->slot = TRD_SHM_SLOT_BYTES;
    MPI_Info info;
    PMPI_Info_create(&info);
    PMPI_Info_set(info, "alloc_shared_noncontig", "true");
    void *base;
    rc = PMPI_Win_allocate_shared((MPI_Aint)(sizeof(struct trd_shm_ctrl) + 4 * s->slot), 1, info,
                                  node, &base, &s->win);
    PMPI_Info_free(&info);
    if (rc != MPI_SUCCESS) {
        free(s->seg);
        free(s);
        goto fail;
    }
    for (int r = 0; r < s->n; r++) {
        MPI_Aint size;
        int disp;
        PMPI_Win_shared_query(s->win, r, &size, &disp, &s->seg[r]);
    }
    memset(base, 0, sizeof(struct trd_shm_ctrl));
    /* a passive-target epoch for the window's lifetime; loads and stores are
     * ordered by the counters */
    PMPI_Win_lock_all(MPI_MODE_NOCHECK, s->win);
    PMPI_Barrier(node);
    c->shm = s;
    return MPI_SUCCESS;
fail:
    if (node != MPI_COMM_NULL)
        PMPI_Comm_free(&node);
    return rc;
}

void trd_shm_free(trd_comm *c)
{
    struct trd_shm *s = c->shm;
    if (!s)
        return;
    PMPI_Win_unlock_all(s->win);
    PMPI_Win_free(&s->win);
    PMPI_Comm_free(&s->comm);
    free(s->seg);
    free(s);
    c->shm = NULL;
}

/* Block i of n of a chunk of cnt elements, in whole cache lines where the
 * element size allows: [*lo, *hi). */
static void block_range(size_t cnt, size_t extent, int n, int i, size_t *lo, size_t *hi)
{
    size_t unit = extent < TRD_CACHE_LINE ? TRD_CACHE_LINE / extent : 1;
    size_t units = (cnt + unit - 1) / unit;
    size_t a = units * (size_t)i / (size_t)n, b = units * (size_t)(i + 1) / (size_t)n;
    *lo = a * unit < cnt ? a * unit : cnt;
    *hi = b * unit < cnt ? b * unit : cnt;
}

/* Where rank r put its contribution for buffer b. */
static char *contribution(const struct trd_shm *s, int r, int b, int inl)
{
    return inl ? (char *)ctrl(s, r)->inline_data[b] : slot_in(s, r, b);
}

/* dst = x_0 op x_1 op ... op x_{k-1}, x_j = contribution(j) + off, len
 * elements, folded right to left so that "in op inout" keeps operand order. */
static int fold(const struct trd_shm *s, int b, int inl, int k, size_t off, size_t len, void *dst,
                const trd_reducer *red)
{
    size_t bytes = len * red->extent;
    int rc = MPI_SUCCESS;
    memcpy(dst, contribution(s, k - 1, b, inl) + off, bytes);
    for (int j = k - 2; j >= 0 && rc == MPI_SUCCESS; j--)
        rc = trd_reduce(red, contribution(s, j, b, inl) + off, dst, len);
    return rc;
}

/* The reduction of ranks 0..ncontrib-1's contributions, chunk by chunk, to
 * every rank (root < 0) or to local rank root only. */
static int shm_reduce(trd_comm *c, const void *sendbuf, void *recvbuf, int count,
                      const trd_reducer *red, int ncontrib, int root)
{
    struct trd_shm *s = c->shm;
    const char *src = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
    char *dst = recvbuf;
    size_t ext = red->extent, per = s->slot / ext;
    int rc = MPI_SUCCESS, gets = root < 0 || root == s->me;
    if (per == 0)
        return MPI_ERR_TYPE;
    for (size_t first = 0; first < (size_t)count && rc == MPI_SUCCESS; first += per) {
        size_t cnt = (size_t)count - first < per ? (size_t)count - first : per;
        size_t bytes = cnt * ext;
        int b, inl = bytes <= TRD_SHM_INLINE_BYTES;
        uint64_t e = next_epoch(s, &b);
        if (s->me < ncontrib)
            memcpy(contribution(s, s->me, b, inl), src + first * ext, bytes);
        publish(s, CTR_IN, e);
        if (bytes <= TRD_SHM_WHOLE_BYTES || s->n == 1) {
            if (gets) {
                wait_all(s, CTR_IN, ncontrib, e);
                rc = fold(s, b, inl, ncontrib, 0, cnt, dst + first * ext, red);
            }
        } else {
            size_t lo, hi;
            wait_all(s, CTR_IN, ncontrib, e);
            block_range(cnt, ext, s->n, s->me, &lo, &hi);
            if (hi > lo)
                rc = fold(s, b, 0, ncontrib, lo * ext, hi - lo, slot_out(s, s->me, b) + lo * ext,
                          red);
            publish(s, CTR_RED, e);
            if (gets) {
                wait_all(s, CTR_RED, s->n, e);
                for (int r = 0; r < s->n; r++) {
                    block_range(cnt, ext, s->n, r, &lo, &hi);
                    memcpy(dst + (first + lo) * ext, slot_out(s, r, b) + lo * ext, (hi - lo) * ext);
                }
            }
        }
        publish(s, CTR_DONE, e);
    }
    return rc;
}

int trd_shm_allreduce(trd_comm *c, const void *sendbuf, void *recvbuf, int count,
                      const trd_reducer *red, int ncontrib)
{
    return shm_reduce(c, sendbuf, recvbuf, count, red, ncontrib, -1);
}

int trd_shm_reduce(trd_comm *c, const void *sendbuf, void *recvbuf, int count,
                   const trd_reducer *red, int root)
{
    return shm_reduce(c, sendbuf, recvbuf, count, red, c->shm->n, root);
}

int trd_shm_reduce_scatter_block(trd_comm *c, const void *sendbuf, void *recvbuf, int recvcount,
                                 const trd_reducer *red)
{
    struct trd_shm *s = c->shm;
    const char *src = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
    char *dst = recvbuf;
    size_t ext = red->extent, n = (size_t)s->n, per = s->slot / (ext * n);
    int rc = MPI_SUCCESS;
    if (per == 0)
        return MPI_ERR_TYPE;
    /* chunk k holds elements [first, first+cnt) of every rank's block */
    for (size_t first = 0; first < (size_t)recvcount && rc == MPI_SUCCESS; first += per) {
        size_t cnt = (size_t)recvcount - first < per ? (size_t)recvcount - first : per;
        int b;
        uint64_t e = next_epoch(s, &b);
        char *slot = slot_in(s, s->me, b);
        for (size_t j = 0; j < n; j++)
            memcpy(slot + j * cnt * ext, src + (j * (size_t)recvcount + first) * ext, cnt * ext);
        publish(s, CTR_IN, e);
        wait_all(s, CTR_IN, s->n, e);
        rc = fold(s, b, 0, s->n, (size_t)s->me * cnt * ext, cnt, dst + first * ext, red);
        publish(s, CTR_DONE, e);
    }
    return rc;
}

int trd_shm_allgather(trd_comm *c, const void *sendbuf, void *recvbuf, int count, size_t extent)
{
    struct trd_shm *s = c->shm;
    char *dst = recvbuf;
    const char *src = sendbuf == MPI_IN_PLACE ? dst + (size_t)s->me * (size_t)count * extent
                                              : (const char *)sendbuf;
    size_t per = s->slot / extent;
    if (per == 0)
        return MPI_ERR_TYPE;
    for (size_t first = 0; first < (size_t)count; first += per) {
        size_t cnt = (size_t)count - first < per ? (size_t)count - first : per;
        size_t bytes = cnt * extent;
        int b, inl = bytes <= TRD_SHM_INLINE_BYTES;
        uint64_t e = next_epoch(s, &b);
        memcpy(contribution(s, s->me, b, inl), src + first * extent, bytes);
        publish(s, CTR_IN, e);
        for (int r = 0; r < s->n; r++) {
            char *to = dst + ((size_t)r * (size_t)count + first) * extent;
            if (r == s->me) {
                if (sendbuf != MPI_IN_PLACE)
                    memcpy(to, src + first * extent, bytes);
                continue;
            }
            wait_one(s, CTR_IN, r, e);
            memcpy(to, contribution(s, r, b, inl), bytes);
        }
        publish(s, CTR_DONE, e);
    }
    return MPI_SUCCESS;
}

int trd_shm_bcast(trd_comm *c, void *buf, int count, size_t extent, int root)
{
    struct trd_shm *s = c->shm;
    char *data = buf;
    size_t per = s->slot / extent;
    if (per == 0)
        return MPI_ERR_TYPE;
    for (size_t first = 0; first < (size_t)count; first += per) {
        size_t cnt = (size_t)count - first < per ? (size_t)count - first : per;
        size_t bytes = cnt * extent;
        int b, inl = bytes <= TRD_SHM_INLINE_BYTES;
        uint64_t e = next_epoch(s, &b);
        if (s->me == root) {
            memcpy(contribution(s, root, b, inl), data + first * extent, bytes);
            publish(s, CTR_IN, e);
        } else {
            wait_one(s, CTR_IN, root, e);
            memcpy(data + first * extent, contribution(s, root, b, inl), bytes);
        }
        publish(s, CTR_DONE, e);
    }
    return MPI_SUCCESS;
}
