/* libtrd_cluster_finalize.so: MPICH 4.0's MPI_Finalize made safe over UCX's
 * TCP transport between hosts, preloaded by bench/cluster.sh on its emulated
 * clusters (LD_PRELOAD; with --mpi mpich).
 *
 * MPICH 4.0's ch4/ucx finalize (MPIDI_UCX_mpi_finalize_hook) disconnects
 * every endpoint (ucp_disconnect_nb), progresses its UCX worker until its
 * own requests complete, then waits in a PMI barrier, which makes no UCX
 * progress.  A peer whose disconnect from this rank still needs an answer
 * from it then waits for ever: in 5-8 of 20 runs of a 4-node program, some
 * ranks in the PMI barrier, the others in ucp_worker_progress.  MPICH
 * removed that barrier in 4.2 (pmodels/mpich pull request 6596: "having the
 * process stuck in PMI_barrier may prevent other processes to complete the
 * previous ucp_disconnect_nb").
 *
 * This library stands between MPICH and UCX (the calls go through the PLT,
 * so a preloaded definition takes them): it notes the disconnect requests
 * MPICH makes, and where the last of them is released (MPICH's next step is
 * the PMI barrier), or at the progress call that finds none pending, it
 * holds the rank in a barrier of its own that keeps progressing the worker: each rank creates the
 * file RANK in $TRD_FINALIZE_DIR (a folder of the run that every node sees), then progresses until
 * SIZE files are there (PMI_RANK, PMI_SIZE: set by hydra). Every rank thus answers its peers'
 * disconnects until all are done, and only then enters the PMI barrier.  After TRD_FINALIZE_WAIT_S
 * seconds (default 60) it gives up the wait with a message on stderr, and the run goes on as it
 * would without this library.
 *
 * Without TRD_FINALIZE_DIR, PMI_RANK or PMI_SIZE it holds no barrier.
 *
 * It also makes waiting polite: MPICH's ch4 progress loop polls UCX without
 * ever yielding the CPU.  An emulated cluster runs more ranks than this host
 * has CPUs, and a rank spinning on an empty worker kept the rank it waited
 * for off the CPU for a scheduler slice: 8 ms for an 8-byte allreduce of 4
 * ranks on 2 CPUs, 0.3 ms with yielding.  With TRD_CLUSTER_YIELD=N, after N
 * progress calls in a row that found nothing, each further one calls
 * sched_yield (Open MPI's mpi_yield_when_idle does the same).  Without it,
 * the calls pass on unchanged.
 *
 * Not for production use: a site runs MPICH 4.2 or later, or Open MPI, on
 * nodes with a core per rank, where none of this is needed (docs/scale.md). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* UCX's types, as opaque as MPICH uses them (ucp/api/ucp.h). */
typedef void *ucp_ep_h;
typedef void *ucp_worker_h;
typedef void *ucs_status_ptr_t;

/* The most disconnect requests followed (MPICH makes one per peer). */
#define MAX_PENDING 65536

static struct {
    int started;  /* a disconnect seen: MPI_Finalize is under way */
    int inside;   /* in ucp_disconnect_nb (UCX may progress from there) */
    int done;     /* the barrier held (or given up) */
    int npending; /* requests returned by ucp_disconnect_nb, not yet released */
} st;
static void *pending[MAX_PENDING];
static int npending_seen;
static ucp_worker_h last_worker;                /* the worker MPICH progresses */
static unsigned (*real_progress)(ucp_worker_h); /* UCX's ucp_worker_progress */

static void *next(const char *name)
{
    void *f = dlsym(RTLD_NEXT, name);
    if (!f) {
        fprintf(stderr, "libtrd_cluster_finalize: %s not found: %s\n", name, dlerror());
        abort();
    }
    return f;
}

/* UCS_PTR_IS_PTR: a request, neither NULL (done) nor an error status. */
static int is_request(ucs_status_ptr_t p)
{
    return (unsigned long)p - 1 < (unsigned long)-1000 - 1;
}

ucs_status_ptr_t ucp_disconnect_nb(ucp_ep_h ep)
{
    static ucs_status_ptr_t (*real)(ucp_ep_h);
    if (!real)
        real = (ucs_status_ptr_t(*)(ucp_ep_h))next("ucp_disconnect_nb");
    st.inside = 1;
    ucs_status_ptr_t r = real(ep);
    st.inside = 0;
    st.started = 1;
    if (is_request(r) && npending_seen < MAX_PENDING) {
        pending[npending_seen++] = r;
        st.npending++;
    }
    return r;
}

static void hold(ucp_worker_h w, unsigned (*progress)(ucp_worker_h));

/* The barrier, once, where MPICH's disconnects are all released. */
static void hold_once(void)
{
    if (st.started && !st.inside && !st.done && st.npending == 0 && last_worker && real_progress) {
        st.done = 1;
        hold(last_worker, real_progress);
    }
}

void ucp_request_release(void *request)
{
    static void (*real)(void *);
    if (!real)
        real = (void (*)(void *))next("ucp_request_release");
    int ours = 0;
    for (int i = 0; i < npending_seen && !ours; i++)
        if (pending[i] == request) {
            pending[i] = NULL;
            st.npending--;
            ours = 1;
        }
    real(request);
    if (ours) /* MPICH's next step is the PMI barrier */
        hold_once();
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The files 0 .. size-1 of dir that exist, counted from *seen on (the
 * lowest not yet seen). */
static int count_from(const char *dir, int size, int *seen)
{
    char path[PATH_MAX];
    struct stat sb;
    while (*seen < size) {
        snprintf(path, sizeof path, "%s/%d", dir, *seen);
        if (stat(path, &sb) != 0)
            break;
        (*seen)++;
    }
    return *seen;
}

/* The barrier of every rank's files in dir, progressing worker w. */
static void hold(ucp_worker_h w, unsigned (*progress)(ucp_worker_h))
{
    const char *dir = getenv("TRD_FINALIZE_DIR"), *r = getenv("PMI_RANK"), *n = getenv("PMI_SIZE"),
               *wait = getenv("TRD_FINALIZE_WAIT_S");
    if (!dir || !r || !n)
        return;
    int rank = atoi(r), size = atoi(n), seen = 0;
    double limit = wait ? atof(wait) : 60, t0 = now_s();
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%d", dir, rank);
    int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) {
        fprintf(stderr, "libtrd_cluster_finalize: rank %d: %s: %s\n", rank, path, strerror(errno));
        return;
    }
    close(fd);
    while (count_from(dir, size, &seen) < size) {
        for (int k = 0; k < 64; k++)
            progress(w);
        if (now_s() - t0 > limit) {
            fprintf(stderr,
                    "libtrd_cluster_finalize: rank %d: %d of %d ranks finalized after %.0f s; "
                    "going on\n",
                    rank, seen, size, limit);
            return;
        }
        usleep(100);
    }
}

/* TRD_CLUSTER_YIELD=N (N > 0): after N progress calls in a row that found
 * nothing to do, each such call yields the CPU (sched_yield). */
static unsigned yield_after(void)
{
    static int n = -1;
    if (n < 0) {
        const char *e = getenv("TRD_CLUSTER_YIELD");
        n = e && atoi(e) > 0 ? atoi(e) : 0;
    }
    return (unsigned)n;
}

unsigned ucp_worker_progress(ucp_worker_h w)
{
    static unsigned idle;
    if (!real_progress)
        real_progress = (unsigned (*)(ucp_worker_h))next("ucp_worker_progress");
    last_worker = w;
    hold_once(); /* no disconnect pending at all: the loop's one progress */
    unsigned n = real_progress(w), after = yield_after();
    if (n)
        idle = 0;
    else if (after && ++idle >= after)
        sched_yield();
    return n;
}
