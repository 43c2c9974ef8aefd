/* Algorithm: the MPI library's own routine (PMPI_Allreduce, PMPI_Bcast, ...)
 * for each collective, under the name "mpi".  treeduce plans no schedule
 * for it: the runtime hands a call that selects or forces it to the library
 * as the call was made, and trd_plan refuses it.  Measured tables choose it
 * where the library is fastest (DESIGN: measured tuning).
 * Cost: the library's, known by measurement only.
 */
#include "phases.h"

static const char *refuse(const trd_shape *sh, const trd_call *call, const void *params)
{
    (void)sh;
    (void)call;
    (void)params;
    return "is the MPI library's own routine: treeduce plans no schedule for it";
}

static int plan(trd_sb *b, const void *params)
{
    (void)params;
    b->fail = "the MPI library's own routine has no schedule";
    return TRD_ERR_INPUT;
}

#define TRD_LIBRARY_ALGO(var, c)                                                                   \
    const trd_algo var = {                                                                         \
        .name = "mpi",                                                                             \
        .coll = c,                                                                                 \
        .flags = TRD_ALGO_LIBRARY | TRD_ALGO_WHOLE,                                                \
        .source = "[MPI library]",                                                                 \
        .levels = "the MPI library's own routine (PMPI_*), as the call was made",                  \
        .refuse = refuse,                                                                          \
        .plan = plan,                                                                              \
    }

TRD_LIBRARY_ALGO(trd_allreduce_mpi, TRD_COLL_ALLREDUCE);
TRD_LIBRARY_ALGO(trd_rsb_mpi, TRD_COLL_REDUCE_SCATTER_BLOCK);
TRD_LIBRARY_ALGO(trd_allgather_mpi, TRD_COLL_ALLGATHER);
TRD_LIBRARY_ALGO(trd_reduce_mpi, TRD_COLL_REDUCE);
TRD_LIBRARY_ALGO(trd_bcast_mpi, TRD_COLL_BCAST);
