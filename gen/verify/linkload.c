/* The bytes of a schedule on the links of the switch tree (linkload.h): the
 * engine of symexec.h, each matched message laid on its tree path. */
#include "linkload.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ring.h"
#include "symexec.h"

typedef struct lctx {
    trd_topo_t t;
    trd_link_loads *l;
    int *path; /* [cap] link ids of one path */
    int cap;
} lctx;

/* The send half of rank a's op i reached rank b: its bytes on every
 * directed link between their nodes [TREE §2]. */
static int h_message(trd_exec *x, int a, size_t i, int b, size_t k)
{
    lctx *c = x->ctx;
    const trd_shape *sh = x->sh;
    uint64_t bytes = (uint64_t)x->s->op[i].len * (uint64_t)x->s->call.extent;
    int na = sh->machine_node[sh->node_of[a]], nb = sh->machine_node[sh->node_of[b]];
    (void)k;
    if (na == nb) {
        c->l->intra_bytes += bytes;
        c->l->intra_messages++;
        return TRD_OK;
    }
    int n = trd_topo_path_links(c->t, na, nb, c->path, c->cap);
    if (n > c->cap) { /* a deeper tree than the first guess: the whole path */
        int *p = realloc(c->path, (size_t)n * sizeof *p);
        if (!p)
            return trd_exec_oom(x);
        c->path = p;
        c->cap = n;
        trd_topo_path_links(c->t, na, nb, c->path, c->cap);
    }
    for (int j = 0; j < n; j++) {
        c->l->bytes[c->path[j]] += bytes;
        c->l->messages[c->path[j]]++;
    }
    c->l->inter_bytes += bytes;
    c->l->inter_messages++;
    return TRD_OK;
}

int trd_sched_link_loads(const trd_sched *s, const trd_shape *sh, trd_topo_t t, trd_link_loads *out,
                         char *why, size_t whylen)
{
    static const trd_exec_hooks hooks = {.message = h_message};
    int S = trd_topo_nswitches(t), N = trd_topo_nnodes(t);
    size_t nl = 2 * ((size_t)S + (size_t)N);
    lctx c = {.t = t, .l = out, .cap = 64};
    trd_exec x;
    memset(&x, 0, sizeof x); /* trd_exec_free frees what an init that failed left */
    memset(out, 0, sizeof *out);
    if (!sh->machine_node || s->nranks != sh->nranks) {
        snprintf(why, whylen, "the link loads need the communicator's nodes on the machine");
        return TRD_ERR_VERIFY;
    }
    for (int v = 0; v < sh->nnodes; v++)
        if (sh->machine_node[v] < 0 || sh->machine_node[v] >= N) {
            snprintf(why, whylen, "node %d of the communicator is not a node of the machine", v);
            return TRD_ERR_VERIFY;
        }
    out->nswitches = S;
    out->nnodes = N;
    out->bytes = calloc(nl, sizeof *out->bytes);
    out->messages = calloc(nl, sizeof *out->messages);
    c.path = malloc((size_t)c.cap * sizeof *c.path);
    int rc = out->bytes && out->messages && c.path ? TRD_OK : TRD_ERR_NOMEM;
    if (rc == TRD_ERR_NOMEM)
        snprintf(why, whylen, "out of memory");
    if (rc == TRD_OK)
        rc = trd_exec_init(&x, s, sh, 1, &hooks, &c, TRD_X_RECORD_NONE, why, whylen);
    if (rc == TRD_OK)
        rc = trd_exec_run(&x);
    trd_exec_free(&x);
    free(c.path);
    if (rc != TRD_OK)
        trd_link_loads_free(out);
    return rc;
}

void trd_link_loads_free(trd_link_loads *l)
{
    free(l->bytes);
    free(l->messages);
    l->bytes = l->messages = NULL;
}
