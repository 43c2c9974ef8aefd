/* The machine as a shape of the schedule IR (shape.h). */
#include "shape.h"

#include <stdlib.h>
#include <string.h>

int trd_machine_shape(trd_topo_t t, int nnodes, int ppn, trd_shape_store *st, int **aux)
{
    int n = nnodes ? nnodes : trd_topo_nnodes(t);
    int *p = malloc((size_t)n * sizeof *p);
    *aux = malloc(2 * (size_t)n * sizeof **aux);
    if (!p || !*aux) {
        free(p);
        free(*aux);
        return TRD_ERR_NOMEM;
    }
    for (int v = 0; v < n; v++) {
        int ty = trd_topo_node_type(t, v);
        p[v] = ppn ? ppn : trd_topo_nodetype_ncores(t, ty);
        (*aux)[v] = v;
        (*aux)[n + v] = trd_topo_nodetype_npackages(t, ty);
    }
    int rc = trd_shape_init(st, n, p, 0);
    free(p);
    if (rc) {
        free(*aux);
        return TRD_ERR_NOMEM;
    }
    st->s.machine_node = *aux;
    st->s.node_packages = *aux + n;
    return TRD_OK;
}

int trd_placement_shape(trd_topo_t t, const int *node_of_rank, int nranks, trd_shape_store *st,
                        int **aux)
{
    int N = trd_topo_nnodes(t), n = 0, rc = TRD_ERR_NOMEM;
    int *cnt, *ppn = NULL, *pos = NULL;
    *aux = NULL;
    memset(st, 0, sizeof *st);
    if (nranks < 1)
        return TRD_ERR_INPUT;
    for (int r = 0; r < nranks; r++)
        if (node_of_rank[r] < 0 || node_of_rank[r] >= N)
            return TRD_ERR_INPUT;
    cnt = calloc((size_t)N, sizeof *cnt);
    if (!cnt)
        return TRD_ERR_NOMEM;
    for (int r = 0; r < nranks; r++)
        cnt[node_of_rank[r]]++;
    for (int v = 0; v < N; v++)
        n += cnt[v] > 0;
    ppn = malloc((size_t)n * sizeof *ppn);
    pos = malloc((size_t)N * sizeof *pos); /* next ring position of each machine node */
    *aux = malloc(2 * (size_t)n * sizeof **aux);
    if (!ppn || !pos || !*aux)
        goto out;
    for (int v = 0, k = 0, at = 0; v < N; v++)
        if (cnt[v] > 0) {
            int ty = trd_topo_node_type(t, v);
            ppn[k] = cnt[v];
            (*aux)[k] = v;
            (*aux)[n + k] = trd_topo_nodetype_npackages(t, ty);
            pos[v] = at;
            at += cnt[v];
            k++;
        }
    if ((rc = trd_shape_init(st, n, ppn, 0)) != TRD_OK)
        goto out;
    /* (node, rank) order: ranks visited in rank order fill their nodes' runs */
    for (int r = 0; r < nranks; r++)
        st->ring[pos[node_of_rank[r]]++] = r;
    for (int k = 0; k < n; k++)
        for (int i = st->node_first[k]; i < st->node_first[k + 1]; i++)
            st->node_of[st->ring[i]] = k;
    st->s.machine_node = *aux;
    st->s.node_packages = *aux + n;
out:
    if (rc != TRD_OK) {
        free(*aux);
        *aux = NULL;
    }
    free(cnt);
    free(ppn);
    free(pos);
    return rc;
}

int trd_topo_leaf_alternating(trd_topo_t t, int *order)
{
    int N = trd_topo_nnodes(t), S = trd_topo_nswitches(t), k = 0;
    /* nodes of a switch are consecutive in ring order: first[s], count[s] */
    int *first = malloc(((size_t)S + 1) * sizeof *first);
    int *count = calloc((size_t)S + 1, sizeof *count);
    int *seq = malloc(((size_t)S + 1) * sizeof *seq); /* the groups, in DFS order */
    int ngroups = 0, most = 0;
    if (!first || !count || !seq) {
        free(first);
        free(count);
        free(seq);
        return TRD_ERR_NOMEM;
    }
    for (int v = 0; v < N; v++) {
        int sw = trd_topo_node_switch(t, v);
        if (count[sw]++ == 0) {
            first[sw] = v;
            seq[ngroups++] = sw;
        }
        most = count[sw] > most ? count[sw] : most;
    }
    for (int j = 0; j < most; j++)
        for (int g = 0; g < ngroups; g++)
            if (j < count[seq[g]])
                order[k++] = first[seq[g]] + j;
    free(first);
    free(count);
    free(seq);
    return TRD_OK;
}
