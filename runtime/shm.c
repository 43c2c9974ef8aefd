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
#include "shm_impl.h"

#include <stdlib.h>
#include <string.h>

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

void trd_block_range(size_t count, size_t extent, int n, int i, size_t *lo, size_t *hi)
{
    size_t unit = extent < TRD_CACHE_LINE ? TRD_CACHE_LINE / extent : 1;
    size_t units = (count + unit - 1) / unit;
    size_t a = units * (size_t)i / (size_t)n, b = units * (size_t)(i + 1) / (size_t)n;
    *lo = a * unit < count ? a * unit : count;
    *hi = b * unit < count ? b * unit : count;
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
            trd_block_range(cnt, ext, s->n, s->me, &lo, &hi);
            if (hi > lo)
                rc = fold(s, b, 0, ncontrib, lo * ext, hi - lo, slot_out(s, s->me, b) + lo * ext,
                          red);
            publish(s, CTR_RED, e);
            if (gets) {
                wait_all(s, CTR_RED, s->n, e);
                for (int r = 0; r < s->n; r++) {
                    trd_block_range(cnt, ext, s->n, r, &lo, &hi);
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

/* Elements of lane l's block that round k moves when every round moves at
 * most q elements of each block: [*lo, *hi) (empty once the block is done). */
static void lane_piece(size_t count, size_t ext, int nlanes, int l, size_t k, size_t q, size_t *lo,
                       size_t *hi)
{
    size_t blo, bhi;
    trd_block_range(count, ext, nlanes, l, &blo, &bhi);
    *lo = blo + k * q < bhi ? blo + k * q : bhi;
    *hi = *lo + q < bhi ? *lo + q : bhi;
}

/* Rounds needed to move every lane's block q elements at a time. */
static size_t lane_rounds(size_t count, size_t ext, int nlanes, size_t q)
{
    size_t most = 0, lo, hi;
    for (int l = 0; l < nlanes; l++) {
        trd_block_range(count, ext, nlanes, l, &lo, &hi);
        most = hi - lo > most ? hi - lo : most;
    }
    return (most + q - 1) / q;
}

int trd_shm_reduce_scatter_lanes(trd_comm *c, void *buf, int count, const trd_reducer *red,
                                 int nlanes)
{
    struct trd_shm *s = c->shm;
    char *data = buf;
    size_t ext = red->extent, q = s->slot / ext / (size_t)nlanes;
    int rc = MPI_SUCCESS;
    if (q == 0)
        return MPI_ERR_TYPE;
    /* round k: part l of every slot holds piece k of lane l's block */
    size_t rounds = lane_rounds((size_t)count, ext, nlanes, q);
    for (size_t k = 0; k < rounds && rc == MPI_SUCCESS; k++) {
        int b;
        size_t lo, hi;
        uint64_t e = next_epoch(s, &b);
        char *slot = slot_in(s, s->me, b);
        for (int l = 0; l < nlanes; l++) {
            lane_piece((size_t)count, ext, nlanes, l, k, q, &lo, &hi);
            memcpy(slot + (size_t)l * q * ext, data + lo * ext, (hi - lo) * ext);
        }
        publish(s, CTR_IN, e);
        if (s->me < nlanes) {
            lane_piece((size_t)count, ext, nlanes, s->me, k, q, &lo, &hi);
            wait_all(s, CTR_IN, s->n, e);
            if (hi > lo)
                rc = fold(s, b, 0, s->n, (size_t)s->me * q * ext, hi - lo, data + lo * ext, red);
        }
        publish(s, CTR_DONE, e);
    }
    return rc;
}

int trd_shm_allgather_lanes(trd_comm *c, void *buf, int count, size_t extent, int nlanes)
{
    struct trd_shm *s = c->shm;
    char *data = buf;
    size_t q = s->slot / extent;
    if (q == 0)
        return MPI_ERR_TYPE;
    size_t rounds = lane_rounds((size_t)count, extent, nlanes, q);
    for (size_t k = 0; k < rounds; k++) {
        int b;
        size_t lo, hi;
        uint64_t e = next_epoch(s, &b);
        if (s->me < nlanes) {
            lane_piece((size_t)count, extent, nlanes, s->me, k, q, &lo, &hi);
            memcpy(slot_in(s, s->me, b), data + lo * extent, (hi - lo) * extent);
        }
        publish(s, CTR_IN, e);
        for (int l = 0; l < nlanes; l++) {
            if (l == s->me)
                continue;
            lane_piece((size_t)count, extent, nlanes, l, k, q, &lo, &hi);
            if (hi == lo)
                continue;
            wait_one(s, CTR_IN, l, e);
            memcpy(data + lo * extent, slot_in(s, l, b), (hi - lo) * extent);
        }
        publish(s, CTR_DONE, e);
    }
    return MPI_SUCCESS;
}
