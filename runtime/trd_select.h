/* The generated selection tables, how a communicator finds its own, the
 * block split and the FLEX lane choice: pure C, no MPI.  Shared by the runtime (one lookup per communicator) and the
 * generator's tests. */
#ifndef TRD_SELECT_H
#define TRD_SELECT_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One message-size range of the generated selection [MPICH §3]. */
typedef struct trd_size_choice {
    size_t below; /* the range ends before this many bytes; SIZE_MAX: no end */
    int alg;      /* enum trd_algorithm */
    const char *params; /* its parameters, "" the default (rm: a schedule for the
                         * shape's rank count, chosen on the schedules' cost model) */
} trd_size_choice;

/* The size ranges planned for communicators of nnodes nodes with ppn ranks
 * on each (commutative ops), from the alpha-beta-gamma model of the machine.
 * The generator plans nnodes = 2, 4, 8, ... and the machine's node count,
 * times ppn = 1, 2, 4, ... and the machine's smallest core count. */
typedef struct trd_shape_choice {
    int nnodes, ppn;
    const trd_size_choice *choices; /* [nchoices], the last one ends at SIZE_MAX */
    int nchoices;
} trd_shape_choice;

/* Index of the planned shape a communicator of nnodes nodes with at most ppn
 * ranks on a node uses: the largest planned node count <= nnodes (the
 * smallest if none is), and among those shapes the largest planned ppn <= ppn
 * (the smallest if none is).  -1 if nshapes is 0. */
static inline int trd_shape_pick(const trd_shape_choice *shapes, int nshapes, int nnodes, int ppn)
{
    int best = -1;
    for (int i = 0; i < nshapes; i++) {
        const trd_shape_choice *s = &shapes[i], *b = best >= 0 ? &shapes[best] : NULL;
        int fits = s->nnodes <= nnodes, bfits = b && b->nnodes <= nnodes;
        if (!b || (fits && !bfits) ||
            (fits == bfits && (fits ? s->nnodes > b->nnodes : s->nnodes < b->nnodes))) {
            best = i;
            continue;
        }
        if (s->nnodes != b->nnodes)
            continue;
        fits = s->ppn <= ppn, bfits = b->ppn <= ppn;
        if ((fits && !bfits) || (fits == bfits && (fits ? s->ppn > b->ppn : s->ppn < b->ppn)))
            best = i;
    }
    return best;
}

/* Block i of count elements of extent bytes split n ways on cache-line (64
 * byte) boundaries: elements [*lo, *hi).  The runtime's trd_block_range and
 * the generator's schedules use this one split. */
static inline void trd_block_split(size_t count, size_t extent, int n, int i, size_t *lo,
                                   size_t *hi)
{
    size_t unit = extent < 64 ? 64 / extent : 1;
    size_t units = (count + unit - 1) / unit;
    size_t a = units * (size_t)i / (size_t)n, b = units * (size_t)(i + 1) / (size_t)n;
    *lo = a * unit < count ? a * unit : count;
    *hi = b * unit < count ? b * unit : count;
}

/* Shared-memory allreduce and reduce chunks of at most this many bytes are
 * folded whole by every receiving rank (one synchronisation); larger ones
 * block-wise (two).  The runtime's shm.c and the generator's schedules use
 * this one threshold. */
#define TRD_SHM_WHOLE_BYTES 4096

/* Bytes one network latency is worth (alpha / beta): the scale of the FLEX
 * composite's lane algorithm choice. */
#define TRD_ALPHA_BETA_BYTES 8192

enum { TRD_LANE_RD, TRD_LANE_RABENSEIFNER, TRD_LANE_RING };

/* The lane algorithm of the FLEX composite for a block of bytes bytes among
 * n nodes when its parameters leave it open.  Recursive doubling below
 * TRD_ALPHA_BETA_BYTES: latency bound, lg n steps beat Rabenseifner's 2 lg n.
 * Above it Rabenseifner and the ring move the same 2 (n-1)/n m beta;
 * Rabenseifner has 2 lg n latencies against the ring's 2(n-1), but for n not
 * a power of two its fold adds about 2 alpha + 2 m beta.  So Rabenseifner
 * for n a power of two, and otherwise while the ring's extra latencies cost
 * more than the fold's extra bytes, (n - 2 - floor(lg n)) alpha > m beta;
 * from there the ring, contention-free over the DFS node order [TREE Lemma
 * 4].  The runtime and the generator's schedules use this one choice. */
static inline int trd_flex_lane(size_t bytes, int n)
{
    int lg = 0;
    while ((2 << lg) <= n)
        lg++;
    if (bytes < TRD_ALPHA_BETA_BYTES)
        return TRD_LANE_RD;
    if ((n & (n - 1)) == 0 || bytes < (size_t)(n - 2 - lg) * TRD_ALPHA_BETA_BYTES)
        return TRD_LANE_RABENSEIFNER;
    return TRD_LANE_RING;
}

#ifdef __cplusplus
}
#endif

#endif
