/* The node segment: one window per node from MPI_Win_allocate_shared (MPI
 * releases it even when a job aborts; nothing is left in /dev/shm), holding
 * each rank's counters, its small payloads and two slots of input and output
 * areas [FLEX §3.1]; and the probe of the single-copy path (Linux
 * cross-memory attach between the node's ranks).  What runs through the
 * segment is the schedules' business (runtime/algo, executed by exec.c).
 *
 * Rank 0 of the node asks for the whole window, one page-aligned stride per
 * rank plus a cache line, and the others for none: rank r's segment starts r
 * strides after rank 0's base (MPI_Win_shared_query).  The size is not a
 * page multiple on purpose: MPICH 4.x first tries a "symmetric heap" for a
 * window whose every size is a page multiple, an address range common to
 * all ranks that it probes page by page with msync; that took 390 of a
 * segment's 450 us here (two ranks, 1 MiB each), against 25-31 us for the
 * window without it.  SimGrid's SMPI allocates rank 0's size times the
 * ranks and answers MPI_Win_shared_query with one base for every rank, so
 * there every rank asks for its stride, as that layout expects.  The layout
 * computed is checked against the window MPI made, and shared memory is left
 * off where they differ.  Under SMPI all ranks share one address space, so
 * single copy is a plain memcpy.
 */
#include "rt.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#if defined(SMPI_H)
/* Simulated ranks live in one process: another rank's buffer is addressable. */
int trd_cma_read(const trd_shm *s, int r, uint64_t remote, void *local, size_t bytes)
{
    (void)s;
    (void)r;
    memcpy(local, (const void *)(uintptr_t)remote, bytes);
    return MPI_SUCCESS;
}

int trd_cma_write(const trd_shm *s, int r, const void *local, uint64_t remote, size_t bytes)
{
    (void)s;
    (void)r;
    memcpy((void *)(uintptr_t)remote, local, bytes);
    return MPI_SUCCESS;
}
#else
int trd_cma_read(const trd_shm *s, int r, uint64_t remote, void *local, size_t bytes)
{
    pid_t pid = (pid_t)trd_shm_ctrl(s, r)->pid;
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

int trd_cma_write(const trd_shm *s, int r, const void *local, uint64_t remote, size_t bytes)
{
    pid_t pid = (pid_t)trd_shm_ctrl(s, r)->pid;
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
#endif

/* Whether every rank of the node can read the next one's memory, and write
 * it (a kernel may refuse cross-memory attach: Yama ptrace_scope, seccomp,
 * containers; seccomp may filter one call and not the other): 0, or
 * TRD_CMA_READ with TRD_CMA_WRITE where writing works too.  Collective over
 * the node. */
static int cma_probe(trd_shm *s)
{
    static const uint64_t word = 0x7e1dc0de;
    /* the previous rank writes word here: on this thread's stack, since
     * threads may probe for different communicators at once */
    volatile uint64_t box = 0;
    const char *env = getenv("TREEDUCE_CMA");
    int ok = s->n > 1 && !(env && strcmp(env, "0") == 0), all[2] = {0, 0};
    int next = (s->me + 1) % s->n;
    struct trd_shm_ctrl *me = trd_shm_ctrl(s, s->me);
#if defined(SMPI_H)
    me->pid = 0; /* unused: trd_cma_read is memcpy */
#else
    me->pid = (int64_t)getpid();
#endif
    me->src = (uint64_t)(uintptr_t)&word;
    me->dst = (uint64_t)(uintptr_t)&box;
    PMPI_Barrier(s->comm);
    int can[2] = {0, 0}; /* read, write */
    if (ok) {
        uint64_t got = 0;
        can[0] =
            trd_cma_read(s, next, trd_shm_ctrl(s, next)->src, &got, sizeof got) == MPI_SUCCESS &&
            got == word;
        can[1] =
            trd_cma_write(s, next, &word, trd_shm_ctrl(s, next)->dst, sizeof word) == MPI_SUCCESS;
    }
    PMPI_Barrier(s->comm);
    can[1] = can[1] && box == word;
    PMPI_Allreduce(can, all, 2, MPI_INT, MPI_MIN, s->comm);
    return all[0] ? TRD_CMA_READ | (all[1] ? TRD_CMA_WRITE : 0) : 0;
}

/* Node segments this process has created (trd_segments). */
static atomic_long segments;

long trd_segments(void)
{
    return atomic_load_explicit(&segments, memory_order_relaxed);
}

void trd_shm_none(trd_comm *c)
{
    static const size_t cma_min[TRD_CMA_MAX] = TRD_CMA_MIN_DEFAULTS;
    long long cma_bytes = trd_env_number("TREEDUCE_CMA_BYTES", 0, LLONG_MAX, -1);
    c->shm = NULL;
    c->shape.shm = 0;
    c->shape.cma = 0;
    c->shape.slot_bytes = TRD_SEG_SLOT_BYTES;
    for (int i = 0; i < TRD_CMA_MAX; i++)
        c->shape.cma_min[i] = cma_bytes >= 0 ? (size_t)cma_bytes : cma_min[i];
}

int trd_shm_create(trd_comm *c)
{
    const char *env = getenv("TREEDUCE_SHM");
    MPI_Comm node = MPI_COMM_NULL, shared = MPI_COMM_NULL;
    int rc, nshared = 0, ok, all_ok;
    trd_shm_none(c);
    /* TREEDUCE_SHM=0 on any rank: no node communicator at all (one
     * allreduce, not a split of the communicator and a window) */
    int want = !(env && strcmp(env, "0") == 0), all_want = 0;
    if ((rc = PMPI_Allreduce(&want, &all_want, 1, MPI_INT, MPI_MIN, c->comm)) != MPI_SUCCESS)
        return rc;
    if (!all_want)
        return MPI_SUCCESS;
    if ((rc = PMPI_Comm_split(c->comm, c->node, c->local, &node)) != MPI_SUCCESS)
        return rc;
    /* the ranks of one (possibly virtual) node must really share memory */
    if ((rc = PMPI_Comm_split_type(node, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &shared)) !=
        MPI_SUCCESS)
        goto fail;
    PMPI_Comm_size(shared, &nshared);
    PMPI_Comm_free(&shared);
    ok = nshared == c->ppn; /* every rank wants shared memory (above) */
    if ((rc = PMPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, c->comm)) != MPI_SUCCESS)
        goto fail;
    if (!all_ok) {
        PMPI_Comm_free(&node);
        trd_note(c->machine, "no shared memory: the ranks of a node do not all share memory "
                             "(MPI_Comm_split_type)");
        return MPI_SUCCESS;
    }
    trd_shm *s = calloc(1, sizeof *s);
    if (!s || !(s->seg = calloc((size_t)c->ppn, sizeof(char *)))) {
        free(s);
        rc = MPI_ERR_NO_MEM;
        goto fail;
    }
    s->comm = node;
    PMPI_Comm_rank(MPI_COMM_WORLD, &s->owner);
    s->n = c->ppn;
    s->me = c->local;
    s->slot = TRD_SEG_SLOT_BYTES;
    /* segments start page-aligned at rank * stride, each first touched by
     * its owner */
    const size_t page = 4096;
    size_t stride = (sizeof(struct trd_shm_ctrl) + 4 * s->slot + page - 1) / page * page;
#if defined(SMPI_H)
    MPI_Aint ask = (MPI_Aint)stride;
#else
    MPI_Aint ask = s->me == 0 ? (MPI_Aint)((size_t)s->n * stride + TRD_CACHE_LINE) : 0;
#endif
    char *base, *base0;
    rc = PMPI_Win_allocate_shared(ask, 1, MPI_INFO_NULL, node, &base, &s->win);
    if (rc != MPI_SUCCESS) {
        free(s->seg);
        free(s);
        goto fail;
    }
    atomic_fetch_add_explicit(&segments, 1, memory_order_relaxed);
    MPI_Aint size0;
    int disp0;
    PMPI_Win_shared_query(s->win, 0, &size0, &disp0, &base0);
    /* the layout computed must fit the window MPI made, on every rank: under
     * SMPI each rank's segment at its own base; elsewhere all of them within
     * rank 0's part, which starts at rank 0's base */
    for (int r = 0; r < s->n; r++)
        s->seg[r] = base0 + (size_t)r * stride;
#if defined(SMPI_H)
    int same = s->seg[s->me] == base;
#else
    int same = base0 && (size_t)size0 >= (size_t)s->n * stride && (s->me != 0 || base0 == base);
#endif
    int all_same = 0;
    if ((rc = PMPI_Allreduce(&same, &all_same, 1, MPI_INT, MPI_MIN, c->comm)) != MPI_SUCCESS ||
        !all_same) {
        PMPI_Win_free(&s->win);
        PMPI_Comm_free(&s->comm);
        free(s->seg);
        free(s);
        if (rc == MPI_SUCCESS)
            trd_note(c->machine, "no shared memory: the MPI library's shared window is not laid "
                                 "out contiguously (MPI_Win_shared_query)");
        return rc;
    }
    memset(s->seg[s->me], 0, sizeof(struct trd_shm_ctrl));
    /* a passive-target epoch for the window's lifetime; loads and stores are
     * ordered by the counters */
    PMPI_Win_lock_all(MPI_MODE_NOCHECK, s->win);
    PMPI_Barrier(node);
    /* single copy where every node allows it (nodes of one rank need none) */
    int cma = s->n > 1 ? cma_probe(s) : TRD_CMA_READ | TRD_CMA_WRITE, all_cma = 0;
    if ((rc = PMPI_Allreduce(&cma, &all_cma, 1, MPI_INT, MPI_BAND, c->comm)) != MPI_SUCCESS) {
        c->shm = s;
        trd_shm_free(c);
        return rc;
    }
    c->shm = s;
    c->shape.shm = 1;
    c->shape.cma = all_cma;
    return MPI_SUCCESS;
fail:
    if (node != MPI_COMM_NULL)
        PMPI_Comm_free(&node);
    return rc;
}

void trd_shm_free(trd_comm *c)
{
    trd_shm *s = c->shm;
    if (!s)
        return;
    int wrank = s->owner;
#if defined(SMPI_H)
    /* SMPI's MPI_COMM_WORLD is one object for all simulated ranks, and after
     * MPI_Finalize one rank deletes every rank's attributes on it: a
     * collective MPI_Win_free there would wait for ranks that never come.
     * The window is the simulator's to reclaim then. */
    int finalized = 0;
    PMPI_Finalized(&finalized);
    if (finalized)
        wrank = -1;
    else
        PMPI_Comm_rank(MPI_COMM_WORLD, &wrank);
#endif
    if (wrank == s->owner) {
        PMPI_Win_unlock_all(s->win);
        PMPI_Win_free(&s->win);
    }
    PMPI_Comm_free(&s->comm);
    free(s->seg);
    free(s);
    c->shm = NULL;
}
