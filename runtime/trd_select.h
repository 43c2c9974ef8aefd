/* The generated selection tables, how a communicator finds its own, and the
 * block split: pure C, no MPI.  Shared by the runtime (one lookup per communicator) and the
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

#ifdef __cplusplus
}
#endif

#endif
