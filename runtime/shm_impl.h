/* Internal to the runtime: the layout of the node segment and the counter
 * protocol shared by the shared-memory algorithms (shm.c, shm_intra.c).
 *
 * Every rank owns one segment: a control block of counters, each on its own
 * cache line and written only by its owner, then two data slots (input and
 * output areas of TRD_SHM_SLOT_BYTES each) that alternate between chunks.
 * A chunk is identified by its epoch, the per-node sequence number that every
 * rank advances in the same order; a rank publishes an epoch on a counter
 * with release semantics and readers wait for it with acquire semantics
 * [FLEX §2.1.1, §3.1: barriers integrated into the steps as counters].
 */
#ifndef TRD_SHM_IMPL_H
#define TRD_SHM_IMPL_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "treeduce_rt.h"

#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#define TRD_CACHE_LINE 64
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
    /* single-copy path: the process and the user buffers of this rank's
     * current call, published with "in" */
    _Alignas(TRD_CACHE_LINE) int64_t pid;
    uint64_t src, dst;
};

/* Routines with a single-copy path, and the message size (bytes of the
 * whole vector) from which they take it unless TREEDUCE_CMA_BYTES says. */
enum { TRD_CMA_ALLREDUCE, TRD_CMA_RSB, TRD_CMA_ALLGATHER, TRD_CMA_BCAST, TRD_SHM_NCMA };
#define TRD_SHM_CMA_DEFAULTS {32 * 1024, 16 * 1024, 16 * 1024, 8 * 1024}

struct trd_shm {
    MPI_Comm comm; /* the ranks of this node, local order */
    MPI_Win win;
    int n, me;
    char **seg; /* [n] each rank's segment */
    size_t slot;
    uint64_t epoch;
    uint64_t all_in; /* latest epoch whose "in" this rank saw from every rank */
    int cma;      /* cross-memory attach works between the ranks of this node:
                     0, or TRD_CMA_CAN_READ [| TRD_CMA_CAN_WRITE] (shm.c) */
    size_t cma_min[TRD_SHM_NCMA]; /* bytes from which each routine reads directly */
    char *tmp;    /* [2 * TRD_SHM_CMA_PIECE] staging for the single-copy path */
};

/* The single-copy path (shm.c): messages of at least cma_min bytes are read
 * straight from the other ranks' user buffers with Linux cross-memory attach
 * (process_vm_readv), in pieces of TRD_SHM_CMA_PIECE bytes. */
#define TRD_SHM_CMA_PIECE (512 * 1024)

static inline struct trd_shm_ctrl *ctrl(const struct trd_shm *s, int r)
{
    return (struct trd_shm_ctrl *)s->seg[r];
}

/* slot b (0 or 1) of rank r: input area, then output area */
static inline char *slot_in(const struct trd_shm *s, int r, int b)
{
    return s->seg[r] + sizeof(struct trd_shm_ctrl) + (size_t)b * 2 * s->slot;
}

static inline char *slot_out(const struct trd_shm *s, int r, int b)
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

static inline _Atomic uint64_t *counter(const struct trd_shm *s, int r, int which)
{
    struct trd_shm_ctrl *c = ctrl(s, r);
    return which == CTR_IN ? &c->in : which == CTR_RED ? &c->red : &c->done;
}

static inline void publish(struct trd_shm *s, int which, uint64_t e)
{
    atomic_store_explicit(counter(s, s->me, which), e, memory_order_release);
}

/* Wait until rank r has published at least e: spin, then yield. */
static inline void wait_one(const struct trd_shm *s, int which, int r, uint64_t e)
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
static inline void wait_all(struct trd_shm *s, int which, int nranks, uint64_t e)
{
    for (int r = 0; r < nranks; r++)
        wait_one(s, which, r, e);
    if (which == CTR_IN && nranks == s->n && e > s->all_in)
        s->all_in = e;
}

/* Start the next chunk: its epoch, with slot b = epoch & 1 free for reuse
 * (every rank has finished the chunk that last used it, epoch - 2).  A rank
 * publishes "in" for an epoch only after it has finished the epochs before,
 * so once this rank has seen every rank's "in" of epoch - 1 it need not read
 * their "done" lines at all: back-to-back small calls then cost one cache
 * line transfer per rank, not two. */
static inline uint64_t next_epoch(struct trd_shm *s, int *b)
{
    uint64_t e = ++s->epoch;
    *b = (int)(e & 1);
    if (e > 2 && s->all_in < e - 1)
        wait_all(s, CTR_DONE, s->n, e - 2);
    return e;
}

/* Where rank r put its contribution for buffer b. */
static inline char *contribution(const struct trd_shm *s, int r, int b, int inl)
{
    return inl ? (char *)ctrl(s, r)->inline_data[b] : slot_in(s, r, b);
}

/* dst = x_0 op x_1 op ... op x_{k-1}, x_j = contribution(j) + off, len
 * elements, folded right to left so that "in op inout" keeps operand order. */
static inline int fold(const struct trd_shm *s, int b, int inl, int k, size_t off, size_t len, void *dst,
                const trd_reducer *red)
{
    size_t bytes = len * red->extent;
    int rc = MPI_SUCCESS;
    memcpy(dst, contribution(s, k - 1, b, inl) + off, bytes);
    for (int j = k - 2; j >= 0 && rc == MPI_SUCCESS; j--)
        rc = trd_reduce(red, contribution(s, j, b, inl) + off, dst, len);
    return rc;
}

#endif
