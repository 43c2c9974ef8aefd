/* Small helpers shared by the generator's modules. */
#ifndef TRD_UTIL_H
#define TRD_UTIL_H

#include <errno.h>
#include <stdlib.h>

#include "trd_status.h"

/* A system call's errno value e as a status: TRD_OK for 0, else e left in
 * errno and TRD_ERR_NOMEM for ENOMEM, TRD_ERR_IO for anything else. */
static inline int trd__errno_status(int e)
{
    if (e == 0)
        return TRD_OK;
    errno = e;
    return e == ENOMEM ? TRD_ERR_NOMEM : TRD_ERR_IO;
}

/* Make the array *p (of *cap elements of elt bytes) hold at least need
 * elements, doubling its capacity.  Returns TRD_OK, or TRD_ERR_NOMEM with *p
 * unchanged. */
static inline int trd__grow(void **p, int *cap, int need, size_t elt)
{
    if (need <= *cap)
        return TRD_OK;
    int ncap = *cap ? *cap * 2 : 16;
    while (ncap < need)
        ncap *= 2;
    void *np = realloc(*p, (size_t)ncap * elt);
    if (!np)
        return TRD_ERR_NOMEM;
    *p = np;
    *cap = ncap;
    return TRD_OK;
}

/* The same for capacities counted in size_t (the schedules' engine), from
 * 64 elements. */
static inline int trd__grow_n(void **p, size_t *cap, size_t need, size_t elt)
{
    if (need <= *cap)
        return TRD_OK;
    size_t ncap = *cap ? *cap : 64;
    while (ncap < need)
        ncap *= 2;
    void *np = realloc(*p, ncap * elt);
    if (!np)
        return TRD_ERR_NOMEM;
    *p = np;
    *cap = ncap;
    return TRD_OK;
}

/* Open-addressing map from a name to an int (gen/namemap.c); zeroed is
 * empty.  Keys are borrowed and must outlive the map. */
typedef struct trd_namemap {
    const char **keys;
    int *vals;
    size_t cap, n;
} trd_namemap;

/* The value of key, or -1 when it is not in the map. */
int trd__namemap_get(const trd_namemap *m, const char *key);
/* Add key (not yet in the map) with value val.  TRD_OK or TRD_ERR_NOMEM. */
int trd__namemap_put(trd_namemap *m, const char *key, int val);
/* Free the map's storage (not the keys, which are borrowed). */
void trd__namemap_free(trd_namemap *m);

#endif
