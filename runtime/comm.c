/* Communicator cache: rank -> node mapping, ring order, NAP plan.
 *
 * On first use on a communicator every rank finds its node of the generated
 * machine (by host name, or by TREEDUCE_HOSTS for virtual placement), the
 * ranks agree on the mapping with one allgather, and the description is kept
 * as an attribute that MPI frees with the communicator.  A job on a subset of
 * the machine keeps a contention-free ring: a subsequence of a DFS order is
 * still one [TREE §3.2, Lemma 4].
 */
#include "treeduce_rt.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int comm_keyval = MPI_KEYVAL_INVALID;

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

static void comm_free(trd_comm *c)
{
    if (!c)
        return;
    trd_shm_free(c);
    if (c->comm != MPI_COMM_NULL)
        PMPI_Comm_free(&c->comm);
    free(c->ring);
    free(c->node_first);
    free(c->package_first);
    free(c->nap_nsub);
    free(c->nap_sub);
    free(c->nap_recv_off);
    free(c->nap_recv_rank);
    free(c->nap_recv_sub);
    free(c->nap_send_off);
    free(c->nap_send_rank);
    free(c->scratch);
    free(c);
}

static int delete_fn(MPI_Comm comm, int keyval, void *attr, void *extra)
{
    (void)comm;
    (void)keyval;
    (void)extra;
    comm_free(attr);
    return MPI_SUCCESS;
}

/* The name of this rank's host: entry `world_rank` of TREEDUCE_HOSTS (a
 * comma-separated list, or a file with one name per line or word), else
 * MPI_Get_processor_name.  Returns 0, or -1 with a reason in why. */
static int host_name(char *buf, size_t len, char *why, size_t whylen)
{
    const char *env = getenv("TREEDUCE_HOSTS");
    int wrank;
    PMPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    if (env && *env) {
        char *text = NULL;
        if (!strchr(env, ',')) {
            FILE *f = fopen(env, "r");
            if (f) {
                size_t cap = 4096, n = 0;
                text = malloc(cap);
                int ch;
                while (text && (ch = fgetc(f)) != EOF) {
                    if (n + 2 > cap) {
                        char *nt = realloc(text, cap *= 2);
                        if (!nt) {
                            free(text);
                            text = NULL;
                            break;
                        }
                        text = nt;
                    }
                    text[n++] = (char)ch;
                }
                fclose(f);
                if (text)
                    text[n] = '\0';
            }
        }
        if (!text)
            text = strdup(env);
        if (!text) {
            snprintf(why, whylen, "out of memory reading TREEDUCE_HOSTS");
            return -1;
        }
        int i = 0, found = 0;
        for (char *save = NULL, *tok = strtok_r(text, ", \t\r\n", &save); tok;
             tok = strtok_r(NULL, ", \t\r\n", &save), i++) {
            if (i == wrank) {
                snprintf(buf, len, "%s", tok);
                found = 1;
                break;
            }
        }
        free(text);
        if (!found) {
            snprintf(why, whylen, "TREEDUCE_HOSTS has %d entries, none for world rank %d", i, wrank);
            return -1;
        }
        return 0;
    }
    char name[MPI_MAX_PROCESSOR_NAME];
    int nlen = 0;
    PMPI_Get_processor_name(name, &nlen);
    snprintf(buf, len, "%.*s", nlen, name);
    return 0;
}

/* Sort key for ring order: (machine node, rank). */
struct rank_node {
    int node, rank;
};

static int cmp_rank_node(const void *a, const void *b)
{
    const struct rank_node *x = a, *y = b;
    if (x->node != y->node)
        return x->node < y->node ? -1 : 1;
    return x->rank < y->rank ? -1 : x->rank > y->rank;
}

/* Precompute this rank's NAP exchanges [NAP Alg. 1]. */
static int plan_nap(trd_comm *c)
{
    c->nap_lanes = c->ppn_min;
    c->nap_radix = trd_nap_radix(c->nap_lanes);
    c->nap_steps = trd_nap_nsteps(c->nnodes, c->nap_radix);
    int S = c->nap_steps;
    int maxrecv = (c->nap_radix + c->nap_lanes - 1) / c->nap_lanes;
    trd_nap_xfer *recv = malloc((size_t)maxrecv * sizeof *recv);
    trd_nap_xfer *send = malloc((size_t)c->nnodes * sizeof *send);
    c->nap_nsub = calloc((size_t)S + 1, sizeof(int));
    c->nap_sub = calloc((size_t)S + 1, sizeof(int));
    c->nap_recv_off = calloc((size_t)S + 1, sizeof(int));
    c->nap_send_off = calloc((size_t)S + 1, sizeof(int));
    c->nap_recv_rank = malloc(((size_t)S * maxrecv + 1) * sizeof(int));
    c->nap_recv_sub = malloc(((size_t)S * maxrecv + 1) * sizeof(int));
    int sendcap = c->nnodes + 1, nsendtot = 0;
    c->nap_send_rank = malloc((size_t)sendcap * sizeof(int));
    int rc = MPI_ERR_NO_MEM;
    if (!recv || !send || !c->nap_nsub || !c->nap_sub || !c->nap_recv_off || !c->nap_send_off ||
        !c->nap_recv_rank || !c->nap_recv_sub || !c->nap_send_rank)
        goto out;
    int nrecvtot = 0;
    for (int s = 0; s < S; s++) {
        int nr = 0, ns = 0;
        trd_nap_stepinfo info;
        /* the step's shape depends on the node only: ranks beyond the lanes
         * need it too, to wait for the lanes' result */
        int lane = c->local < c->nap_lanes ? c->local : 0;
        if (trd_nap_step(c->nnodes, c->nap_lanes, c->nap_radix, s, c->node, lane, &info, recv, &nr,
                         send, &ns) != 0) {
            rc = MPI_ERR_INTERN;
            goto out;
        }
        if (c->local >= c->nap_lanes)
            nr = ns = 0;
        c->nap_nsub[s] = info.nsub;
        c->nap_sub[s] = info.sub;
        for (int i = 0; i < nr; i++) {
            c->nap_recv_rank[nrecvtot] = trd_node_rank(c, recv[i].node, recv[i].lane);
            c->nap_recv_sub[nrecvtot++] = recv[i].sub;
        }
        if (nsendtot + ns > sendcap) {
            sendcap = 2 * (nsendtot + ns);
            int *nsr = realloc(c->nap_send_rank, (size_t)sendcap * sizeof(int));
            if (!nsr)
                goto out;
            c->nap_send_rank = nsr;
        }
        for (int i = 0; i < ns; i++)
            c->nap_send_rank[nsendtot++] = trd_node_rank(c, send[i].node, send[i].lane);
        c->nap_recv_off[s + 1] = nrecvtot;
        c->nap_send_off[s + 1] = nsendtot;
    }
    rc = MPI_SUCCESS;
out:
    free(recv);
    free(send);
    return rc;
}

static int comm_build(MPI_Comm comm, const trd_machine *m, trd_comm **out)
{
    trd_comm *c = calloc(1, sizeof *c);
    int *nodes = NULL;
    struct rank_node *rn = NULL;
    int rc = MPI_ERR_NO_MEM;
    if (!c)
        return rc;
    c->machine = m;
    c->comm = MPI_COMM_NULL;
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
    int mynode = -1;
    if (host_name(host, sizeof host, c->why, sizeof c->why) == 0) {
        mynode = trd_machine_find_node(m, host);
        if (mynode < 0) {
            /* a fully qualified name may carry the domain the topology omits */
            char *dot = strchr(host, '.');
            if (dot) {
                *dot = '\0';
                mynode = trd_machine_find_node(m, host);
            }
        }
        if (mynode < 0)
            snprintf(c->why, sizeof c->why, "host '%.80s' is not a node of machine '%.80s'", host, m->name);
    }
    nodes = malloc((size_t)c->size * sizeof(int));
    rn = malloc((size_t)c->size * sizeof *rn);
    if (!nodes || !rn)
        goto fail;
    rc = PMPI_Allgather(&mynode, 1, MPI_INT, nodes, 1, MPI_INT, comm);
    if (rc != MPI_SUCCESS)
        goto fail;
    for (int r = 0; r < c->size; r++) {
        if (nodes[r] < 0) {
            c->fallback = 1;
            if (mynode >= 0)
                snprintf(c->why, sizeof c->why,
                         "the host of rank %d is not a node of machine '%.80s'", r, m->name);
            goto done;
        }
        rn[r] = (struct rank_node){nodes[r], r};
    }
    qsort(rn, (size_t)c->size, sizeof *rn, cmp_rank_node);
    c->ring = malloc((size_t)c->size * sizeof(int));
    c->node_first = malloc(((size_t)c->size + 1) * sizeof(int));
    if (!c->ring || !c->node_first)
        goto fail;
    c->nnodes = 0;
    for (int i = 0; i < c->size; i++) {
        c->ring[i] = rn[i].rank;
        if (i == 0 || rn[i].node != rn[i - 1].node)
            c->node_first[c->nnodes++] = i;
        if (rn[i].rank == c->rank) {
            c->pos = i;
            c->node = c->nnodes - 1;
        }
    }
    c->node_first[c->nnodes] = c->size;
    c->ppn_min = c->size;
    c->ppn_max = 0;
    for (int v = 0; v < c->nnodes; v++) {
        int k = c->node_first[v + 1] - c->node_first[v];
        c->ppn_min = k < c->ppn_min ? k : c->ppn_min;
        c->ppn_max = k > c->ppn_max ? k : c->ppn_max;
    }
    {
        int sh = trd_shape_pick(m->shapes, m->nshapes, c->nnodes, c->ppn_max);
        c->choices = sh >= 0 ? m->shapes[sh].choices : NULL;
        c->nchoices = sh >= 0 ? m->shapes[sh].nchoices : 0;
        c->choices_ranks = sh >= 0 ? m->shapes[sh].nnodes * m->shapes[sh].ppn : 0;
    }
    c->local = c->pos - c->node_first[c->node];
    c->ppn = c->node_first[c->node + 1] - c->node_first[c->node];
    /* local ranks spread over the packages in order, socket-major */
    c->npackages = m->node_packages[mynode] < c->ppn ? m->node_packages[mynode] : c->ppn;
    if (!(c->package_first = malloc(((size_t)c->npackages + 1) * sizeof(int))))
        goto fail;
    for (int q = 0; q <= c->npackages; q++)
        c->package_first[q] = (int)((long)q * c->ppn / c->npackages);
    for (int q = 0; q < c->npackages; q++)
        if (c->local >= c->package_first[q])
            c->package = q;
    if ((rc = plan_nap(c)) != MPI_SUCCESS)
        goto fail;
    if ((rc = PMPI_Comm_dup(comm, &c->comm)) != MPI_SUCCESS)
        goto fail;
    if ((rc = trd_shm_create(c)) != MPI_SUCCESS)
        goto fail;
done:
    free(nodes);
    free(rn);
    *out = c;
    return MPI_SUCCESS;
fail:
    free(nodes);
    free(rn);
    comm_free(c);
    return rc;
}

int trd_comm_get(MPI_Comm comm, const trd_machine *m, trd_comm **out)
{
    int rc, flag = 0;
    trd_comm *c = NULL;
    if (comm_keyval == MPI_KEYVAL_INVALID) {
        rc = PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_fn, &comm_keyval, NULL);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    rc = PMPI_Comm_get_attr(comm, comm_keyval, &c, &flag);
    if (rc != MPI_SUCCESS)
        return rc;
    if (flag && c->machine == m) {
        *out = c;
        return MPI_SUCCESS;
    }
    if ((rc = comm_build(comm, m, &c)) != MPI_SUCCESS)
        return rc;
    /* replaces (and frees, through delete_fn) another machine's entry */
    if ((rc = PMPI_Comm_set_attr(comm, comm_keyval, c)) != MPI_SUCCESS) {
        comm_free(c);
        return rc;
    }
    *out = c;
    return MPI_SUCCESS;
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

/* MPICH's prototypes give PMPI_Waitall an access attribute that GCC 12 checks
 * against MPI_STATUSES_IGNORE, a sentinel pointer, and warns; the call is
 * correct, so the warning is silenced here, in one place. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstringop-overflow"
int trd_waitall(int n, MPI_Request *reqs)
{
    return PMPI_Waitall(n, reqs, MPI_STATUSES_IGNORE);
}
#pragma GCC diagnostic pop
