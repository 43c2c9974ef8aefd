/* Intra-node allreduce algorithms in shared memory [FLEX §2.1-2.3]. */
#include "shm_impl.h"

int trd_shm_allreduce_params(trd_comm *c, const void *sendbuf, void *recvbuf, int count,
                             const trd_reducer *red, const char *params, const char **why)
{
    (void)c, (void)sendbuf, (void)recvbuf, (void)count, (void)red, (void)params;
    *why = "intra-node algorithm parameters are not built yet";
    return MPI_SUCCESS;
}
