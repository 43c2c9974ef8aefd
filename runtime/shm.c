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
 *
 * Single-copy path: from a few KiB up (cma_min, per routine, measured on a
 * 2-rank node: allreduce 32 KiB, reduce_scatter_block and allgather 16 KiB,
 * bcast 8 KiB), where the kernel allows it, ranks read each other's user
 * buffers directly with process_vm_readv (Linux cross-memory attach): one
 * copy per byte instead of two, and no chunking.  The segment then carries
 * only the counters and the buffer addresses.  TREEDUCE_CMA=0 turns it off;
 * TREEDUCE_CMA_BYTES=N sets every routine's threshold (for tuning).
 * Where process_vm_writev works too, large allgathers push instead of pull
 * and the root of a large bcast writes a share of the message itself (see
 * TRD_SHM_PUSH_BYTES and TRD_SHM_BCAST_SPLIT_BYTES).
 */
#include "shm_impl.h"

#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

/* s->cma: which directions of cross-memory attach the kernel allows between
 * every pair of ranks of the node (0: neither, single-copy path off) */
#define TRD_CMA_CAN_READ 1  /* process_vm_readv */
#define TRD_CMA_CAN_WRITE 2 /* process_vm_writev */

/* Allgathers of at least this many bytes (the whole output) push: each rank
 * writes its block into the others' outputs in pieces of TRD_SHM_PUSH_PIECE
 * and copies the same piece into its own output right after, while it is
 * still in this core's cache: the input is read from memory once instead of
 * twice (pull reads it once remotely and once for the own copy), about a
 * quarter less memory traffic; measured 1.1-1.3x over pull from 2 MiB up on a
 * 2-rank node.  Below, the whole exchange fits the caches and pull (the
 * reader's own lines stay local) is faster. */
#define TRD_SHM_PUSH_BYTES (2u << 20)
#define TRD_SHM_PUSH_PIECE (256u * 1024)

/* Bcasts of at least this many bytes split the copying: each non-root reads
 * the first (n-1)/n of the message from the root, and the root writes the
 * rest into each non-root's buffer, so the root's core copies too instead of
 * idling: 1.6-2x on a 2-rank node from 4 MiB up.  Below, the buffers live in
 * the cores' caches and the root's writes into lines cached by the reader
 * cost more than they save (measured slower up to 1 MiB, even at 2 MiB). */
#define TRD_SHM_BCAST_SPLIT_BYTES (4u << 20)

/* Read bytes from address remote of local rank r's process into local:
 * MPI_SUCCESS, or MPI_ERR_OTHER if the kernel refuses. */
static int cma_read(const struct trd_shm *s, int r, uint64_t remote, void *local, size_t bytes)
{
    pid_t pid = (pid_t)ctrl(s, r)->pid;
    while (bytes > 0) {
        struct iovec l = {local, bytes}, rv = {(void *)(uintptr_t)remote, bytes};
        ssize_t got = process_vm_readv(pid, &l, 1, &rv, 1, 0);
        if (got <= 0)
            return MPI_ERR_OTHER;
        bytes -= (size_t)got;
        remote += (uint64_t)got;
        local = (char *)local + got;
    }
    return MPI_SUCCESS;
}

/* Write bytes from local to address remote of local rank r's process:
 * MPI_SUCCESS, or MPI_ERR_OTHER if the kernel refuses. */
static int cma_write(const struct trd_shm *s, int r, const void *local, uint64_t remote,
                     size_t bytes)
{
    pid_t pid = (pid_t)ctrl(s, r)->pid;
    while (bytes > 0) {
        struct iovec l = {(void *)local, bytes}, rv = {(void *)(uintptr_t)remote, bytes};
        ssize_t put = process_vm_writev(pid, &l, 1, &rv, 1, 0);
        if (put <= 0)
            return MPI_ERR_OTHER;
        bytes -= (size_t)put;
        remote += (uint64_t)put;
        local = (const char *)local + put;
    }
    return MPI_SUCCESS;
}

/* Whether every rank of the node can read the next one's memory, and write
 * it (a kernel may refuse cross-memory attach: Yama ptrace_scope, seccomp,
 * containers; seccomp may filter one call and not the other): 0, or
 * TRD_CMA_CAN_READ with TRD_CMA_CAN_WRITE where writing works too.
 * Collective over the node. */
static int cma_probe(struct trd_shm *s)
{
    static const uint64_t word = 0x7e1dc0de;
    static uint64_t box; /* the previous rank writes word here */
    const char *env = getenv("TREEDUCE_CMA");
    int ok = s->n > 1 && s->tmp && !(env && strcmp(env, "0") == 0), all[2] = {0, 0};
    int next = (s->me + 1) % s->n;
    struct trd_shm_ctrl *me = ctrl(s, s->me);
    me->pid = (int64_t)getpid();
    me->src = (uint64_t)(uintptr_t)&word;
    me->dst = (uint64_t)(uintptr_t)&box;
    box = 0;
    PMPI_Barrier(s->comm);
    int can[2] = {0, 0}; /* read, write */
    if (ok) {
        uint64_t got = 0;
        can[0] = cma_read(s, next, ctrl(s, next)->src, &got, sizeof got) == MPI_SUCCESS &&
                 got == word;
        can[1] = cma_write(s, next, &word, ctrl(s, next)->dst, sizeof word) == MPI_SUCCESS;
    }
    PMPI_Barrier(s->comm);
    can[1] = can[1] && box == word;
    PMPI_Allreduce(can, all, 2, MPI_INT, MPI_MIN, s->comm);
    return all[0] ? TRD_CMA_CAN_READ | (all[1] ? TRD_CMA_CAN_WRITE : 0) : 0;
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
    s->tmp = malloc(2 * TRD_SHM_CMA_PIECE);
    s->cma = cma_probe(s);
    const size_t cma_min[TRD_SHM_NCMA] = TRD_SHM_CMA_DEFAULTS;
    const char *cma_env = getenv("TREEDUCE_CMA_BYTES");
    for (int i = 0; i < TRD_SHM_NCMA; i++)
        s->cma_min[i] = cma_env && *cma_env ? strtoull(cma_env, NULL, 10) : cma_min[i];
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
    free(s->tmp);
    free(s->seg);
    free(s);
    c->shm = NULL;
}

size_t trd_block_max(size_t count, size_t extent, int n)
{
    size_t most = 0, lo, hi;
    for (int i = 0; i < n; i++) {
        trd_block_range(count, extent, n, i, &lo, &hi);
        most = hi - lo > most ? hi - lo : most;
    }
    return most;
}

void trd_block_range(size_t count, size_t extent, int n, int i, size_t *lo, size_t *hi)
{
    trd_block_split(count, extent, n, i, lo, hi); /* the generator's schedules use it too */
}

/* ---- The single-copy path ------------------------------------------------- */

/* Start a single-copy step: publish this rank's buffers with "in". */
static uint64_t cma_begin(struct trd_shm *s, const void *src, void *dst)
{
    int b;
    uint64_t e = next_epoch(s, &b);
    ctrl(s, s->me)->src = (uint64_t)(uintptr_t)src;
    ctrl(s, s->me)->dst = (uint64_t)(uintptr_t)dst;
    publish(s, CTR_IN, e);
    return e;
}

/* End it: nobody reads this rank's buffers once every rank is done. */
static void cma_end(struct trd_shm *s, uint64_t e)
{
    publish(s, CTR_DONE, e);
    wait_all(s, CTR_DONE, s->n, e);
}

/* out[0:len) = x_0 op x_1 op ... op x_{n-1} over elements [a, a+len) of the
 * ranks' inputs (this rank's at src, the others' read from their memory).
 * Commutative ops fold into out directly in a staggered order; others fold
 * right to left so that the left operand is always the lower rank. */
static int cma_fold(struct trd_shm *s, const char *src, char *out, size_t a, size_t len,
                    const trd_reducer *red)
{
    size_t ext = red->extent, off = a * ext, bytes = len * ext;
    char *stage = s->tmp, *acc = s->tmp + TRD_SHM_CMA_PIECE;
    int n = s->n, me = s->me, rc = MPI_SUCCESS;
    if (red->commutative) {
        /* Out of place, the first other rank's part is read straight into
         * out and this rank's input is folded in last: no copy of it. */
        int k0 = 1, last = src + off != out;
        if (last && n == 1)
            memcpy(out, src + off, bytes);
        else if (last)
            rc = cma_read(s, (me + k0++) % n, ctrl(s, (me + 1) % n)->src + off, out, bytes);
        for (int k = k0; k < n && rc == MPI_SUCCESS; k++) {
            int j = (me + k) % n;
            if ((rc = cma_read(s, j, ctrl(s, j)->src + off, stage, bytes)) == MPI_SUCCESS)
                rc = trd_reduce(red, stage, out, len);
        }
        if (rc == MPI_SUCCESS && last && n > 1)
            rc = trd_reduce(red, src + off, out, len);
        return rc;
    }
    /* the last rank's part first; this rank's input stays intact until the
     * end even when it is out (in place) */
    if (me == n - 1) {
        if (src + off != out)
            memcpy(out, src + off, bytes);
        acc = out;
    } else {
        if (src + off != out)
            acc = out; /* out of place: accumulate in out from the start */
        rc = cma_read(s, n - 1, ctrl(s, n - 1)->src + off, acc, bytes);
    }
    for (int j = n - 2; j >= 0 && rc == MPI_SUCCESS; j--) {
        if (j == me)
            rc = trd_reduce(red, src + off, acc, len);
        else if ((rc = cma_read(s, j, ctrl(s, j)->src + off, stage, bytes)) == MPI_SUCCESS)
            rc = trd_reduce(red, stage, acc, len);
    }
    if (rc == MPI_SUCCESS && acc != out)
        memcpy(out, acc, bytes);
    return rc;
}

/* Allreduce over all ranks of the node without copies into the segment:
 * rank i reads block i of every other rank's input straight from that rank's
 * memory (Linux cross-memory attach) and folds it into block i of its output,
 * then reads the other blocks from their owners' outputs -- the one-step
 * radix-ppn reduce_scatter + allgather of [FLEX §2.1] with one copy per byte
 * instead of two.  In place is safe: during the reduce_scatter a rank writes
 * only its own block, and it overwrites block r only after rank r has
 * finished reading its inputs.
 * Cost = 3 alpha_shm + 2 (p-1) alpha_cma + 2 (p-1)/p m beta_cma + (p-1)/p m gamma */
static int cma_allreduce(trd_comm *c, const char *src, char *dst, int count,
                         const trd_reducer *red)
{
    struct trd_shm *s = c->shm;
    size_t ext = red->extent, per = TRD_SHM_CMA_PIECE / ext, lo, hi;
    int rc = MPI_SUCCESS;
    uint64_t e = cma_begin(s, src, dst);
    wait_all(s, CTR_IN, s->n, e);
    trd_block_range((size_t)count, ext, s->n, s->me, &lo, &hi);
    for (size_t a = lo; a < hi && rc == MPI_SUCCESS; a += per)
        rc = cma_fold(s, src, dst + a * ext, a, hi - a < per ? hi - a : per, red);
    publish(s, CTR_RED, e);
    for (int k = 1; k < s->n; k++) {
        int r = (s->me + k) % s->n;
        trd_block_range((size_t)count, ext, s->n, r, &lo, &hi);
        wait_one(s, CTR_RED, r, e);
        if (rc == MPI_SUCCESS && hi > lo)
            rc = cma_read(s, r, ctrl(s, r)->dst + lo * ext, dst + lo * ext, (hi - lo) * ext);
    }
    cma_end(s, e);
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
    if (s->cma && root < 0 && ncontrib == s->n && (size_t)count * ext >= s->cma_min[TRD_CMA_ALLREDUCE])
        return cma_allreduce(c, src, dst, count, red);
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
    if (s->cma && sendbuf != MPI_IN_PLACE &&
        (size_t)recvcount * ext * n >= s->cma_min[TRD_CMA_RSB]) {
        /* single copy: rank i folds block i of every rank's input, read from
         * its memory, into recvbuf (not in place: rank i's result would
         * overwrite block 0 while rank 0 reads it).
         * Cost = 2 alpha_shm + (p-1) alpha_cma + (p-1)/p m beta_cma + (p-1)/p m gamma */
        size_t first = (size_t)s->me * (size_t)recvcount, step = TRD_SHM_CMA_PIECE / ext;
        uint64_t e = cma_begin(s, src, dst);
        wait_all(s, CTR_IN, s->n, e);
        for (size_t a = 0; a < (size_t)recvcount && rc == MPI_SUCCESS; a += step)
            rc = cma_fold(s, src, dst + a * ext, first + a,
                          (size_t)recvcount - a < step ? (size_t)recvcount - a : step, red);
        cma_end(s, e);
        return rc;
    }
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
    size_t total = (size_t)count * extent * (size_t)s->n;
    if (s->cma && total >= s->cma_min[TRD_CMA_ALLGATHER]) {
        /* single copy: every rank moves the others' blocks between the user
         * buffers directly; in place, the own block is already there.
         * Cost = 2 alpha_shm + (p-1) alpha_cma + (p-1)/p m beta_cma */
        size_t bytes = (size_t)count * extent;
        char *own = dst + (size_t)s->me * bytes;
        int rc = MPI_SUCCESS, copy = sendbuf != MPI_IN_PLACE;
        uint64_t e = cma_begin(s, src, dst);
        if ((s->cma & TRD_CMA_CAN_WRITE) && total >= TRD_SHM_PUSH_BYTES) {
            /* push: piece by piece, write it into every other output, then
             * copy it into this rank's own while it is still cached */
            for (int k = 1; k < s->n; k++)
                wait_one(s, CTR_IN, (s->me + k) % s->n, e);
            for (size_t a = 0; a < bytes && rc == MPI_SUCCESS; a += TRD_SHM_PUSH_PIECE) {
                size_t len = bytes - a < TRD_SHM_PUSH_PIECE ? bytes - a : TRD_SHM_PUSH_PIECE;
                for (int k = 1; k < s->n && rc == MPI_SUCCESS; k++) {
                    int r = (s->me + k) % s->n;
                    rc = cma_write(s, r, src + a, ctrl(s, r)->dst + (size_t)s->me * bytes + a, len);
                }
                if (copy)
                    memcpy(own + a, src + a, len);
            }
        } else {
            /* pull: read the others' blocks first (the critical path: they
             * wait for nothing), the own block after (measured faster than
             * the other order by up to 1.2x at 1 MiB) */
            for (int k = 1; k < s->n; k++) {
                int r = (s->me + k) % s->n;
                wait_one(s, CTR_IN, r, e);
                if (rc == MPI_SUCCESS)
                    rc = cma_read(s, r, ctrl(s, r)->src, dst + (size_t)r * bytes, bytes);
            }
            if (copy)
                memcpy(own, src, bytes);
        }
        cma_end(s, e);
        return rc;
    }
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
    if (s->cma && (size_t)count * extent >= s->cma_min[TRD_CMA_BCAST]) {
        /* single copy: every rank reads the root's buffer from its memory,
         * bytes [0, cut); from TRD_SHM_BCAST_SPLIT_BYTES the root writes the
         * last 1/p of it, [cut, m), into every other rank's buffer meanwhile.
         * Cost = 2 alpha_shm + alpha_cma + m beta_cma, or with the split
         * 2 alpha_shm + (p-1) alpha_cma + (p-1)/p m beta_cma */
        int rc = MPI_SUCCESS;
        size_t m = (size_t)count * extent, cut = m;
        if ((s->cma & TRD_CMA_CAN_WRITE) && m >= TRD_SHM_BCAST_SPLIT_BYTES)
            cut = (m - m / (size_t)s->n) & ~(size_t)(TRD_CACHE_LINE - 1);
        uint64_t e = cma_begin(s, data, NULL);
        if (s->me != root) {
            wait_one(s, CTR_IN, root, e);
            rc = cma_read(s, root, ctrl(s, root)->src, data, cut);
        } else {
            for (int k = 1; k < s->n && cut < m && rc == MPI_SUCCESS; k++) {
                int r = (s->me + k) % s->n;
                wait_one(s, CTR_IN, r, e);
                rc = cma_write(s, r, data + cut, ctrl(s, r)->src + cut, m - cut);
            }
        }
        cma_end(s, e);
        return rc;
    }
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
    size_t rounds = (trd_block_max((size_t)count, ext, nlanes) + q - 1) / q;
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
    size_t rounds = (trd_block_max((size_t)count, extent, nlanes) + q - 1) / q;
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
