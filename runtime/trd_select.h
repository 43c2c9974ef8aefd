/* The generated selection tables and how a communicator finds its own: pure
 * C, no MPI.  Shared by the runtime (one lookup per communicator) and the
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

#ifdef __cplusplus
}
#endif

#endif
