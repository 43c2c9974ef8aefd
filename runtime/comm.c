/* Communicator cache: rank -> node mapping, ring order, the shape the
 * planners plan for, the selection, the segment and the plans.
 *
 * A communicator's first calls go to the MPI library's routine, counted in a
 * description that holds nothing else.  At its TREEDUCE_SEGMENT_CALLS-th call
 * (or at once, where a call must run treeduce's schedules) every rank finds
 * its node of the generated machine (by host name, or by TREEDUCE_HOSTS for
 * virtual placement), the ranks make a private duplicate and agree on the
 * mapping with one allgather, and the description is kept as an attribute
 * that MPI frees with the communicator.  A job on a subset of
 * the machine keeps a contention-free ring: a subsequence of a DFS order is
 * still one [TREE §3.2, Lemma 4].
 *
 * MPI_Finalize frees the attributes of MPI_COMM_WORLD and of the
 * communicators the application never freed after the MPI library has begun
 * to shut down (Open MPI has finalized its one-sided component by then: a
 * window freed there crashes).  So everything treeduce holds is released
 * where MPI_Finalize begins, in the delete callback of an attribute on
 * MPI_COMM_SELF, which MPI calls first [MPI-4.1 §11.2.4], whether the
 * application calls MPI_Finalize or PMPI_Finalize; the descriptions freed
 * later give back memory only.
 */
#include "rt.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The attribute's keyval, created by the first call of any thread; later
 * calls read it with one atomic load and take no lock. */
static atomic_int comm_keyval = MPI_KEYVAL_INVALID;
static pthread_mutex_t comm_keyval_lock = PTHREAD_MUTEX_INITIALIZER;

/* Every description alive (built, not yet freed), and how many this process
 * has built: their teardown order at MPI_Finalize. */
static pthread_mutex_t live_lock = PTHREAD_MUTEX_INITIALIZER;
static trd_comm *live;
static atomic_int built;

/* MPI_Finalize has begun: every call from then on goes to the MPI library,
 * through this description. */
static atomic_int finalizing;
static trd_comm after_finalize = {.fallback = 1, .why = "MPI_Finalize has begun", .refs = 1};

int trd_machine_find_node(const trd_machine *m, const char *name)
{
    int lo = 0, hi = m->nnodes - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        int c = strcmp(m->node_names[m->name_order[mid]], name);
        if (c == 0)
            return m->name_order[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return -1;
}

/* Whether a's key comes before b's (comm_build: rank 0's world rank, then
 * its count of descriptions built before): the same on every rank. */
static int order_before(const trd_comm *a, const trd_comm *b)
{
    return a->order[0] != b->order[0] ? a->order[0] < b->order[0] : a->order[1] < b->order[1];
}

/* Into the list, which stays sorted by key, largest first (a new
 * description usually has its root's largest: few steps). */
static void live_add(trd_comm *c)
{
    pthread_mutex_lock(&live_lock);
    trd_comm **at = &live;
    while (*at && order_before(c, *at))
        at = &(*at)->live_next;
    if ((c->live_next = *at))
        c->live_next->live_pnext = &c->live_next;
    *at = c;
    c->live_pnext = at;
    pthread_mutex_unlock(&live_lock);
}

static void live_remove(trd_comm *c)
{
    pthread_mutex_lock(&live_lock);
    if (c->live_pnext) {
        if ((*c->live_pnext = c->live_next))
            c->live_next->live_pnext = c->live_pnext;
        c->live_pnext = NULL;
    }
    pthread_mutex_unlock(&live_lock);
}

/* What c holds of the MPI library: its segment (collective over the node)
 * and its duplicate.  Nothing once released. */
static void comm_release(trd_comm *c)
{
    trd_shm_free(c);
    if (c->comm != MPI_COMM_NULL)
        PMPI_Comm_free(&c->comm);
}

static void comm_free(trd_comm *c)
{
    if (!c)
        return;
    live_remove(c);
    comm_release(c);
    trd_plan_cache_free(c);
    free(c->ring);
    free(c->node_first);
    free(c->node_of);
    free(c->machine_node);
    free(c->node_packages);
    free(c->scratch);
    free(c);
}

void trd_comm_ref(trd_comm *c)
{
    atomic_fetch_add_explicit(&c->refs, 1, memory_order_relaxed);
}

void trd_comm_unref(trd_comm *c)
{
    if (c && atomic_fetch_sub_explicit(&c->refs, 1, memory_order_acq_rel) == 1)
        comm_free(c);
}

/* Bumped whenever a description leaves its communicator (delete_fn): the
 * last lookup each thread keeps (trd_comm_get) is good while it is unchanged.
 * A handle freed and reused for a new communicator finds it bumped. */
static atomic_uint comm_generation;

/* The user's communicator is freed: its description lives on while a
 * persistent or nonblocking request still holds it. */
static int delete_fn(MPI_Comm comm, int keyval, void *attr, void *extra)
{
    (void)comm;
    (void)keyval;
    (void)extra;
    atomic_fetch_add_explicit(&comm_generation, 1, memory_order_acq_rel);
    ((trd_comm *)attr)->user = MPI_COMM_NULL; /* its requests may outlive it */
    trd_comm_unref(attr);
    return MPI_SUCCESS;
}

/* Most bytes of a TREEDUCE_HOSTS file read for one entry, and the longest
 * entry: an endless file (/dev/zero) ends in an error, not a hang. */
#define TRD_HOSTS_MAX_BYTES (64 << 20)
#define TRD_HOSTS_MAX_NAME 255

/* Entry `want` of the names in f (separated by commas and white space) into
 * buf, reading no further than that entry; what names f in the messages
 * ("TREEDUCE_HOSTS" or "TREEDUCE_HOSTS file PATH").  Returns 0, or -1 with
 * why. */
static int hosts_entry(FILE *f, const char *what, int want, char *buf, size_t len, char *why,
                       size_t whylen)
{
    char name[TRD_HOSTS_MAX_NAME + 1];
    size_t n = 0, total = 0;
    int i = 0, ch;
    do {
        ch = getc(f);
        if (ch == 0) {
            snprintf(why, whylen, "%s is not text (a NUL byte at offset %zu)", what, total);
            return -1;
        }
        if (ch != EOF && !strchr(", \t\r\n", ch)) {
            if (n == TRD_HOSTS_MAX_NAME) {
                snprintf(why, whylen, "%s: entry %d is longer than %d bytes", what, i,
                         TRD_HOSTS_MAX_NAME);
                return -1;
            }
            name[n++] = (char)ch;
        } else if (n > 0) {
            if (i++ == want) {
                snprintf(buf, len, "%.*s", (int)n, name);
                return 0;
            }
            n = 0;
        }
        if (++total > TRD_HOSTS_MAX_BYTES) {
            snprintf(why, whylen, "%s: no entry for world rank %d in its first %d MiB", what, want,
                     TRD_HOSTS_MAX_BYTES >> 20);
            return -1;
        }
    } while (ch != EOF);
    snprintf(why, whylen, "TREEDUCE_HOSTS has %d entries, none for world rank %d", i, want);
    return -1;
}

/* What a file of mode st_mode is, where it is not a regular file. */
static const char *file_kind(mode_t mode)
{
    return S_ISFIFO(mode)   ? "a FIFO"
           : S_ISDIR(mode)  ? "a directory"
           : S_ISCHR(mode)  ? "a character device"
           : S_ISBLK(mode)  ? "a block device"
           : S_ISSOCK(mode) ? "a socket"
                            : "not a plain file";
}

/* TREEDUCE_HOSTS's value path, open for reading in *f if it names a regular
 * file; *f NULL where nothing is at path (the value is then the list).  A
 * FIFO, a device or a directory is refused without blocking: opened
 * nonblocking, never read.  Returns 0, or -1 with why. */
static int hosts_file(const char *path, FILE **f, char *why, size_t whylen)
{
    struct stat st;
    *f = NULL;
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0 && (errno == ENOENT || errno == ENOTDIR || errno == ENAMETOOLONG))
        return 0;
    if (fd < 0 || fstat(fd, &st) != 0)
        goto fail;
    if (!S_ISREG(st.st_mode)) {
        snprintf(why, whylen, "TREEDUCE_HOSTS file %s is not a regular file (%s)", path,
                 file_kind(st.st_mode));
        close(fd);
        return -1;
    }
    if ((*f = fdopen(fd, "r")))
        return 0;
fail:
    snprintf(why, whylen, "cannot read TREEDUCE_HOSTS file %s: %s", path, strerror(errno));
    if (fd >= 0)
        close(fd);
    return -1;
}

/* The name of this rank's host: entry `world_rank` of TREEDUCE_HOSTS (a
 * comma-separated list, or a regular file with one name per line or word),
 * else MPI_Get_processor_name.  Returns 0, or -1 with a reason in why. */
static int host_name(char *buf, size_t len, char *why, size_t whylen)
{
    const char *env = getenv("TREEDUCE_HOSTS");
    int wrank;
    PMPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    if (env && *env) {
        char what[PATH_MAX + 32] = "TREEDUCE_HOSTS";
        FILE *f = NULL;
        if (!strchr(env, ',') && hosts_file(env, &f, why, whylen) != 0)
            return -1;
        if (f)
            snprintf(what, sizeof what, "TREEDUCE_HOSTS file %s", env);
        else /* not a file: the list itself */
            f = fmemopen((void *)env, strlen(env), "r");
        if (!f) {
            snprintf(why, whylen, "cannot read TREEDUCE_HOSTS: %s", strerror(errno));
            return -1;
        }
        int rc = hosts_entry(f, what, wrank, buf, len, why, whylen);
        fclose(f);
        return rc;
    }
    char name[MPI_MAX_PROCESSOR_NAME];
    int nlen = 0;
    PMPI_Get_processor_name(name, &nlen);
    snprintf(buf, len, "%.*s", nlen, name);
    return 0;
}

int trd_host_node(const trd_machine *m, char *host, size_t hostlen, char *why, size_t whylen)
{
    if (host_name(host, hostlen, why, whylen) != 0)
        return -1;
    int node = trd_machine_find_node(m, host);
    if (node < 0) {
        /* a fully qualified name may carry the domain the topology omits */
        char *dot = strchr(host, '.');
        if (dot) {
            *dot = '\0';
            node = trd_machine_find_node(m, host);
        }
    }
    if (node < 0)
        snprintf(why, whylen, "host '%.80s' is not a node of machine '%.80s'", host, m->name);
    return node;
}

/* Ring order: (machine node, rank), one rank per entry. */
struct rank_node {
    int node, rank;
};

/* Tag of treeduce's own setup messages, on its private duplicate (rt.h). */
#define TRD_SETUP_TAG TRD_TAG

/* all[k r .. k r + k) = mine[0 .. k) of rank r, for every rank of comm (p
 * ranks, this one rank): Bruck's allgather [MPICH §4.1], ceil(lg p)
 * PMPI_Sendrecv, p lg p messages in all.  Setup must not cost p^2 messages,
 * which a ring allgather (SMPI's default at any size) does: minutes of
 * simulation at 1024 ranks. */
static int allgather_ints(const int *mine, int k, int *all, int p, int rank, MPI_Comm comm)
{
    int *tmp = malloc((size_t)p * (size_t)k * sizeof(int));
    if (!tmp)
        return MPI_ERR_NO_MEM;
    int rc = MPI_SUCCESS;
    memcpy(tmp, mine, (size_t)k * sizeof(int)); /* block i: the values of rank (rank + i) mod p */
    for (int d = 1; d < p && rc == MPI_SUCCESS; d *= 2) {
        int n = d < p - d ? d : p - d;
        rc = PMPI_Sendrecv(tmp, n * k, MPI_INT, (rank - d + p) % p, TRD_SETUP_TAG, tmp + d * k,
                           n * k, MPI_INT, (rank + d) % p, TRD_SETUP_TAG, comm, MPI_STATUS_IGNORE);
    }
    for (int i = 0; i < p; i++)
        memcpy(all + (size_t)((rank + i) % p) * (size_t)k, tmp + (size_t)i * (size_t)k,
               (size_t)k * sizeof(int));
    free(tmp);
    return rc;
}

/* Bytes of the library line the measured tables record (with its NUL): a
 * longer first line is compared up to there. */
#define TRD_LIBRARY_LINE_MAX 256

static char library_line[TRD_LIBRARY_LINE_MAX];
static pthread_once_t library_line_once = PTHREAD_ONCE_INIT;

static void library_line_read(void)
{
    char v[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    if (PMPI_Get_library_version(v, &len) != MPI_SUCCESS)
        len = 0;
    v[len < MPI_MAX_LIBRARY_VERSION_STRING ? len : MPI_MAX_LIBRARY_VERSION_STRING - 1] = '\0';
    v[strcspn(v, "\r\n")] = '\0';
    size_t n = strlen(v) < sizeof library_line ? strlen(v) : sizeof library_line - 1;
    memcpy(library_line, v, n);
    library_line[n] = '\0';
}

/* The first line of MPI_Get_library_version. */
static const char *library_version(void)
{
    pthread_once(&library_line_once, library_line_read);
    return library_line;
}

/* The machine's measured ranges for c's exact shape (nnodes nodes of ppn
 * ranks each; ppn 0: uneven), unless they were measured under another MPI
 * library or cannot be read: then the model's, and the note says why. */
static void tune(trd_comm *c, const trd_machine *m, int nnodes, int ppn)
{
    char why[400];
    int any = 0;
    if (trd_selection_tune(&c->sel, m->tuned, m->ntuned, nnodes, ppn, why, sizeof why) != 0) {
        snprintf(why + strlen(why), sizeof why - strlen(why), ": the model's ranges are used");
        trd_note(m, why);
        return;
    }
    for (int k = 0; k < TRD_COLL_MAX; k++)
        any |= c->sel.ntuned[k] != 0;
    if (any && m->tuned_mpi && strncmp(m->tuned_mpi, library_version(), TRD_LIBRARY_LINE_MAX - 1)) {
        memset(c->sel.ntuned, 0, sizeof c->sel.ntuned);
        snprintf(
            why, sizeof why,
            "the machine's measured tables are for the MPI library '%.120s', not '%.120s': the "
            "model's ranges are used",
            m->tuned_mpi, library_version());
        trd_note(m, why);
    }
}

/* An empty description of comm for machine m, its attribute's reference
 * held, or NULL (out of memory). */
static trd_comm *comm_new(MPI_Comm comm, const trd_machine *m)
{
    trd_comm *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    atomic_init(&c->refs, 1);
    c->machine = m;
    c->comm = MPI_COMM_NULL;
    c->user = comm;
    return c;
}

static int comm_build(MPI_Comm comm, const trd_machine *m, trd_comm **out)
{
    trd_comm *c = comm_new(comm, m);
    int *nodes = NULL;
    struct rank_node *rn = NULL;
    int rc = MPI_ERR_NO_MEM;
    if (!c)
        return rc;
    int inter = 0;
    PMPI_Comm_test_inter(comm, &inter);
    if (inter) {
        c->fallback = 1;
        snprintf(c->why, sizeof c->why, "intercommunicator");
        *out = c;
        return MPI_SUCCESS;
    }
    PMPI_Comm_size(comm, &c->size);
    PMPI_Comm_rank(comm, &c->rank);

    char host[MPI_MAX_PROCESSOR_NAME + 64];
    int mynode = trd_host_node(m, host, sizeof host, c->why, sizeof c->why);
    nodes = malloc((size_t)c->size * 3 * sizeof(int));
    rn = malloc((size_t)c->size * sizeof *rn);
    if (!nodes || !rn)
        goto fail;
    /* the private duplicate first: the setup's own messages never meet the user's.
     * Once it exists every rank is in the setup, whose blocking calls then stall no one */
    if ((rc = trd_nbc_comm_dup(comm, &c->comm)) != MPI_SUCCESS)
        goto fail;
    /* its errors come back to the call, which raises them on the user's
     * communicator (coll.c), whatever handler that has by then */
    PMPI_Comm_set_errhandler(c->comm, MPI_ERRORS_RETURN);
    /* each rank's node, with rank 0's key for the teardown order
     * (comm_finalize: its world rank, then its count of descriptions built
     * before; no two descriptions of one process have the same) */
    int mine[3] = {mynode, 0, atomic_fetch_add(&built, 1)};
    PMPI_Comm_rank(MPI_COMM_WORLD, &mine[1]);
    if ((rc = allgather_ints(mine, 3, nodes, c->size, c->rank, c->comm)) != MPI_SUCCESS)
        goto fail;
    c->order[0] = nodes[1];
    c->order[1] = nodes[2];
    for (int r = 1; r < c->size; r++) /* nodes[r]: the node of rank r */
        nodes[r] = nodes[3 * r];
    for (int r = 0; r < c->size; r++) {
        if (nodes[r] < 0 || nodes[r] >= m->nnodes) {
            c->fallback = 1;
            if (mynode >= 0)
                snprintf(c->why, sizeof c->why,
                         "the host of rank %d is not a node of machine '%.80s'", r, m->name);
            goto done;
        }
    }
    /* (node, rank) order by counting ranks per machine node: O(p + nodes),
     * where a comparison sort on every rank of a simulated 4096 costs seconds */
    rc = MPI_ERR_NO_MEM;
    int *first = calloc((size_t)m->nnodes + 1, sizeof(int));
    if (!first)
        goto fail;
    for (int r = 0; r < c->size; r++)
        first[nodes[r] + 1]++;
    for (int k = 0; k < m->nnodes; k++)
        first[k + 1] += first[k];
    for (int r = 0; r < c->size; r++)
        rn[first[nodes[r]]++] = (struct rank_node){nodes[r], r};
    free(first);
    c->ring = malloc((size_t)c->size * sizeof(int));
    c->node_first = malloc(((size_t)c->size + 1) * sizeof(int));
    c->node_of = malloc((size_t)c->size * sizeof(int));
    c->machine_node = malloc((size_t)c->size * sizeof(int));
    c->node_packages = malloc((size_t)c->size * sizeof(int));
    rc = MPI_ERR_NO_MEM;
    if (!c->ring || !c->node_first || !c->node_of || !c->machine_node || !c->node_packages)
        goto fail;
    int nnodes = 0;
    for (int i = 0; i < c->size; i++) {
        c->ring[i] = rn[i].rank;
        if (i == 0 || rn[i].node != rn[i - 1].node) {
            c->machine_node[nnodes] = rn[i].node;
            c->node_packages[nnodes] = m->node_packages[rn[i].node];
            c->node_first[nnodes++] = i;
        }
        c->node_of[rn[i].rank] = nnodes - 1;
        if (rn[i].rank == c->rank) {
            c->pos = i;
            c->node = nnodes - 1;
        }
    }
    c->node_first[nnodes] = c->size;
    c->local = c->pos - c->node_first[c->node];
    c->ppn = c->node_first[c->node + 1] - c->node_first[c->node];
    c->shape = (trd_shape){.nranks = c->size,
                           .nnodes = nnodes,
                           .ring = c->ring,
                           .node_first = c->node_first,
                           .node_of = c->node_of,
                           .machine_node = c->machine_node,
                           .node_packages = c->node_packages};
    int ppn_min, ppn_max;
    trd_shape_ppn(&c->shape, &ppn_min, &ppn_max);
    if (trd_selection_init(&c->sel, m->shapes, m->nshapes, m->nap_max_bytes_1node, nnodes, ppn_max,
                           c->size, c->why, sizeof c->why) != 0) {
        c->fallback = 1;
        goto done;
    }
    if (m->ntuned > 0)
        tune(c, m, nnodes, ppn_min == ppn_max ? ppn_max : 0);
    trd_shm_none(c); /* until the segment pays (trd_comm_get) */
done:
    free(nodes);
    free(rn);
    live_add(c);
    *out = c;
    return MPI_SUCCESS;
fail:
    free(nodes);
    free(rn);
    comm_free(c);
    return rc;
}

/* MPI_Finalize has begun (MPI still works): free the requests that are not
 * running, then release every description still alive in the order of
 * their keys (the windows of two communicators are freed in the same order
 * on their common ranks, whatever order threads built them in), and the
 * keyval.  The descriptions themselves go with their attributes or their
 * last request, memory only. */
static void comm_finalize(void)
{
    atomic_store(&finalizing, 1);
    trd_nbc_finalize();
    pthread_mutex_lock(&live_lock);
    for (trd_comm *c = live; c; c = c->live_next) {
        c->fallback = 1;
        snprintf(c->why, sizeof c->why, "%s", after_finalize.why);
        comm_release(c);
    }
    pthread_mutex_unlock(&live_lock);
    int kv = atomic_exchange(&comm_keyval, MPI_KEYVAL_INVALID);
    if (kv != MPI_KEYVAL_INVALID)
        PMPI_Comm_free_keyval(&kv);
}

static int finalize_fn(MPI_Comm comm, int keyval, void *attr, void *extra)
{
    (void)comm;
    (void)keyval;
    (void)attr;
    (void)extra;
    comm_finalize();
    return MPI_SUCCESS;
}

/* The keyval in *kv, created once per process even when threads make their
 * first calls at the same time, with the attribute on MPI_COMM_SELF that
 * releases everything when MPI_Finalize begins (its keyval freed at once:
 * the attribute keeps it). */
static int keyval_get(int *kv)
{
    int rc = MPI_SUCCESS, k = atomic_load_explicit(&comm_keyval, memory_order_acquire);
    if (k == MPI_KEYVAL_INVALID) {
        pthread_mutex_lock(&comm_keyval_lock);
        k = atomic_load_explicit(&comm_keyval, memory_order_relaxed);
        int fk = MPI_KEYVAL_INVALID;
        if (k == MPI_KEYVAL_INVALID &&
            (rc = PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, finalize_fn, &fk, NULL)) ==
                MPI_SUCCESS &&
            (rc = PMPI_Comm_set_attr(MPI_COMM_SELF, fk, NULL)) == MPI_SUCCESS &&
            (rc = PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_fn, &k, NULL)) ==
                MPI_SUCCESS)
            atomic_store_explicit(&comm_keyval, k, memory_order_release);
        if (fk != MPI_KEYVAL_INVALID)
            PMPI_Comm_free_keyval(&fk);
        pthread_mutex_unlock(&comm_keyval_lock);
    }
    *kv = k;
    return rc;
}

const char trd_why_first_calls[] =
    "a communicator's first calls, before treeduce sets it up (TREEDUCE_SEGMENT_CALLS)";

/* Whether a call of kind `when`, a communicator's calls-th, sets it up: at
 * its n-th call (n: TREEDUCE_SEGMENT_CALLS), or at once where the call must
 * run treeduce's schedules.  Every rank makes the same collective calls on a
 * communicator in the same order, so all set it up in the same call, as
 * they did when that was the first. */
static int setup_due(unsigned long calls, int when, long long n)
{
    return (when & ~TRD_SETUP_NOW) == TRD_SEGMENT_NOW || (when & TRD_SETUP_NOW) ||
           calls >= (unsigned long)n;
}

/* A description of comm's first calls: their count, and the reason that
 * sends them to the MPI library.  Nothing of the library's is held: the
 * private duplicate and the exchange would cost a short-lived communicator
 * more than its few calls gain (docs/runtime.md). */
static trd_comm *comm_unbuilt(MPI_Comm comm, const trd_machine *m)
{
    trd_comm *c = comm_new(comm, m);
    if (!c)
        return NULL;
    c->unbuilt = 1;
    c->fallback = 1;
    c->ncoll = 1;
    memcpy(c->why, trd_why_first_calls, sizeof trd_why_first_calls);
    return c;
}

/* The bytes of count elements of type, with a call's fixed share
 * (TRD_SEGMENT_CALL_BYTES): what a call counts towards the segment. */
static uint64_t call_bytes(MPI_Count count, MPI_Datatype type)
{
    const uint64_t most = UINT64_MAX / 4;
    MPI_Count size = 0;
    if (count <= 0 || PMPI_Type_size_x(type, &size) != MPI_SUCCESS || size <= 0)
        return TRD_SEGMENT_CALL_BYTES;
    return (uint64_t)count > most / (uint64_t)size
               ? most
               : (uint64_t)count * (uint64_t)size + TRD_SEGMENT_CALL_BYTES;
}

/* Whether c's calls have moved enough for its segment (TREEDUCE_SEGMENT_BYTES
 * need, > 0): asked of every rank at once, at the blocking calls that double
 * its count of calls since setup, by a nonblocking allreduce of the largest
 * count of bytes waited for while treeduce's outstanding runs advance.
 * Every rank makes the same calls on c in the same order, blocking matching
 * blocking [MPI-4.1 §6.12], so all of them ask in the same call; the
 * largest count answers the same on every rank even where an erroneous
 * call's counts differ between them. */
static int segment_paid(trd_comm *c, long long need, int *paid)
{
    *paid = 0;
    if (c->seg_calls < c->seg_check)
        return MPI_SUCCESS;
    c->seg_check = 2 * c->seg_calls;
    uint64_t mine = c->seg_bytes, most = 0;
    MPI_Request q;
    int rc = PMPI_Iallreduce(&mine, &most, 1, MPI_UINT64_T, MPI_MAX, c->comm, &q);
    if (rc == MPI_SUCCESS)
        rc = trd_nbc_wait_library(&q, MPI_STATUS_IGNORE);
    *paid = rc == MPI_SUCCESS && most >= (uint64_t)need;
    return rc;
}

/* Make c's node segment where a call of kind `when` (its count already in
 * c->ncoll) moving count elements of type makes it due: at once
 * (TRD_SEGMENT_NOW, or TREEDUCE_SEGMENT_CALLS=0), or at a blocking call
 * from the n-th call on (n: TREEDUCE_SEGMENT_CALLS) once the calls have
 * moved TREEDUCE_SEGMENT_BYTES (segment_paid; 0: at the first).  Every
 * rank makes the same collective calls on c in the same order, blocking
 * matching blocking [MPI-4.1 §6.12], so all of them make it in the same
 * call.  The ranks meet first in a nonblocking collective (segment_paid's
 * allreduce, or a barrier), while treeduce's outstanding runs advance: a
 * rank that arrives first stalls no run that a rank not yet there waits
 * for, and once every rank is here the segment's blocking calls stall no
 * one. */
static int segment_due(trd_comm *c, int when, long long n, MPI_Count count, MPI_Datatype type)
{
    if (c->fallback || c->segment_made)
        return MPI_SUCCESS;
    int rc, kind = when & ~TRD_SETUP_NOW, paid = 1;
    long long need = 0;
    if (kind != TRD_SEGMENT_NOW && n > 0) {
        uint64_t b = call_bytes(count, type);
        c->seg_bytes = c->seg_bytes > UINT64_MAX / 2 - b ? UINT64_MAX / 2 : c->seg_bytes + b;
        c->seg_calls++;
        if (kind != TRD_SEGMENT_BLOCKING || c->ncoll < (unsigned long)n)
            return MPI_SUCCESS;
        need = trd_env_segment_bytes();
    }
    rc = need > 0 ? segment_paid(c, need, &paid) : trd_nbc_barrier(c->comm);
    if (rc != MPI_SUCCESS) {
        c->segment_made = 1; /* not tried again */
        return rc;
    }
    if (!paid)
        return MPI_SUCCESS;
    c->segment_made = 1; /* tried once, made or not */
    rc = trd_shm_create(c);
    if (c->shm)
        trd_plan_cache_free(c); /* planned for the shape without a segment */
    return rc;
}

const trd_comm *trd_comm_peek(MPI_Comm comm)
{
    int flag = 0, kv = atomic_load_explicit(&comm_keyval, memory_order_acquire);
    trd_comm *c = NULL;
    if (kv == MPI_KEYVAL_INVALID || comm == MPI_COMM_NULL || atomic_load(&finalizing) ||
        PMPI_Comm_get_attr(comm, kv, &c, &flag) != MPI_SUCCESS || !flag)
        return NULL;
    return c;
}

int trd_comm_get(MPI_Comm comm, const trd_machine *m, int when, MPI_Count count, MPI_Datatype type,
                 trd_comm **out)
{
    /* this thread's last lookup: a program calls on few communicators, and
     * the attribute lookup costs more than the rest of a small call's
     * dispatch */
    static _Thread_local struct {
        MPI_Comm comm;
        const trd_machine *m;
        trd_comm *c;
        unsigned gen;
    } last;
    int rc, flag = 0, kv = MPI_KEYVAL_INVALID;
    trd_comm *c = NULL;
    if (atomic_load(&finalizing)) {
        *out = &after_finalize;
        return MPI_SUCCESS;
    }
    long long n = trd_env_segment_calls();
    unsigned gen = atomic_load_explicit(&comm_generation, memory_order_acquire);
    if (last.c && last.comm == comm && last.m == m && last.gen == gen) {
        c = last.c;
    } else {
        if ((rc = keyval_get(&kv)) != MPI_SUCCESS)
            return rc;
        if ((rc = PMPI_Comm_get_attr(comm, kv, &c, &flag)) != MPI_SUCCESS)
            return rc;
        if (!flag || c->machine != m) {
            c = NULL; /* another machine's entry is replaced below */
        } else {
            last.comm = comm;
            last.m = m;
            last.c = c;
            last.gen = gen;
        }
    }
    if (c && c->ncoll < (unsigned long)n) /* counted up to n: all that is asked of it */
        c->ncoll++;
    if (c && (!c->unbuilt || !setup_due(c->ncoll, when, n))) {
        *out = c;
        return c->unbuilt ? MPI_SUCCESS : segment_due(c, when, n, count, type);
    }
    unsigned long calls = c ? c->ncoll : 1;
    if (kv == MPI_KEYVAL_INVALID && (rc = keyval_get(&kv)) != MPI_SUCCESS)
        return rc;
    if (!c && !setup_due(1, when, n)) {
        if (!(c = comm_unbuilt(comm, m)))
            return MPI_ERR_NO_MEM;
    } else {
        if ((rc = comm_build(comm, m, &c)) != MPI_SUCCESS)
            return rc;
        c->ncoll = calls;
    }
    /* replaces (and frees, through delete_fn) the first calls' description
     * or another machine's */
    if ((rc = PMPI_Comm_set_attr(comm, kv, c)) != MPI_SUCCESS) {
        comm_free(c);
        return rc;
    }
    *out = c;
    return c->unbuilt ? MPI_SUCCESS : segment_due(c, when, n, count, type);
}

void *trd_comm_scratch(trd_comm *c, size_t bytes)
{
    if (bytes <= c->scratch_bytes)
        return c->scratch;
    void *p = malloc(bytes);
    if (!p)
        return NULL;
    free(c->scratch);
    c->scratch = p;
    c->scratch_bytes = bytes;
    return p;
}
