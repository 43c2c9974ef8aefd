/* The machine as a shape of the schedule IR (shape.h). */
#include "shape.h"

#include <stdlib.h>

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
