/* The cost model on the schedules: the verifier's execution (symexec.h) timed
 * per rank [MPICH §3, TREE §2, NAP Eq. 3, RM Eq. 3]. */
#ifndef TRD_COST_H
#define TRD_COST_H

#include <stddef.h>

#include "trd_sched.h"
#include "topo.h"

/* The time from a rank's signal on its node's segment to a waiting rank of
 * the same node seeing it: one cache line moved between two cores.  The
 * links' latencies are those of messages (MPI's), several times more.
 * Measured: bench_allreduce's xfer_us at 8 B, one flag exchange between the
 * two cores of an AMD EPYC (Zen 4) VM after a barrier, is 0.19-0.21 us;
 * half of it for one way. */
#define TRD_COST_HANDSHAKE_S 0.1e-6

/* The fixed cost of one copy from or into another rank's memory with a
 * system call (process_vm_readv/writev: the pages pinned, then copied).
 * Taken from the runtime's measured threshold for allreduce's single-copy
 * path (TRD_CMA_MIN_DEFAULTS, 32 KiB on a 2-rank node): there its two calls
 * cost what the copies through the segment it saves cost, 32 KiB at the
 * node's 20 GB/s and the handshakes, in this model. */
#define TRD_COST_SINGLE_COPY_S 1.1e-6

/* On one node a copy or reduce costs by where the call's data lies (the
 * message of m bytes of each rank, its input, output and segment areas):
 * up to TRD_COST_L1_BYTES in the private L1 caches, at TRD_COST_L1_SPEEDUP
 * times the link's bandwidth; up to TRD_COST_CACHE_BYTES in the L2 and L3
 * caches, at the link's bandwidth; beyond, from memory, at
 * 1/TRD_COST_MEM_SLOWDOWN of it.  gamma is a reduction's rate from memory;
 * in the caches it runs as fast as a copy there.  Measured on the 2-core
 * AMD EPYC (Zen 4) VM (32 KiB L1d, 1 MiB L2 per core, 32 MiB L3) with
 * memcpy and a loop of a[i] += b[i] over doubles, best of 5: 16 KiB
 * arrays 100 and 95 GB/s, 64 KiB .. 4 MiB 13-21 GB/s and 19-30 GB/s (the
 * default intra-node link: 20 GB/s), 16 and 64 MiB 3.6-4.6 GB/s and 3.9-4.7
 * GB/s (gamma's default 0.25 ns/byte); a system call's copy (single copy)
 * measured 3-4 GB/s from 32 KiB: no faster than the caches' rate. */
#define TRD_COST_L1_BYTES (16.0 * 1024)
#define TRD_COST_L1_SPEEDUP 5.0
#define TRD_COST_CACHE_BYTES (4.0 * 1024 * 1024)
#define TRD_COST_MEM_SLOWDOWN 4.5

typedef struct trd_cost_model {
    trd_topo_t topo;         /* link classes, injection bandwidths, the switch tree */
    double gamma_s_per_byte; /* reduction cost [MPICH §3] */
    double alpha_r_ratio;    /* where a link gives no alpha_r: each further message in flight
                              * from one rank costs this fraction of its latency [RM Eq. 3] */
} trd_cost_model;

/* Predicted seconds of schedule s (every rank planned, verified) on shape sh
 * (sh->machine_node set), elements of s->call.extent bytes: the latest
 * rank's clock after executing every rank as the verifier does, where
 *   - a message starts when both ranks have posted it and takes alpha +
 *     bytes beta of its link (package link, node link between packages, or
 *     the switch-tree path between nodes: latencies summed, slowest
 *     bandwidth) [MPICH §3, TREE §2];
 *   - beta is multiplied by the most messages of its round that share a
 *     directed link of its path, or by the messages of its round leaving its
 *     node times the path bandwidth over the node's injection bandwidth,
 *     whichever is larger (max-rate [NAP Eq. 3]);
 *   - k messages posted together cost one latency plus (k-1) alpha_r, the
 *     largest of their links' (a link's alpha_r_s, or alpha_r_ratio times its
 *     latency) [RM Eq. 3];
 *   - a copy or reduce costs bytes beta of the link to the owner of the
 *     memory it reads or writes (the package link for the rank's own) plus
 *     bytes gamma for a reduce, on one node both by where the data lies
 *     (TRD_COST_L1_BYTES ...); one that reads or writes another rank's user
 *     buffer (single copy, a system call) one latency of that link more, at
 *     least TRD_COST_SINGLE_COPY_S;
 *   - a signal costs nothing; a wait ends at the later of the rank's clock
 *     and, for each rank waited for, the time of the signal that satisfied
 *     it plus the latency of the link between the two (on one node at most
 *     TRD_COST_HANDSHAKE_S); a done wait the runtime skips (symexec.h) costs
 *     nothing [FLEX §3.1].
 * *seconds gets the time.  Returns TRD_OK, TRD_ERR_VERIFY with why (a
 * schedule that does not run, a shape without machine nodes) or
 * TRD_ERR_NOMEM. */
int trd_sched_cost(const trd_sched *s, const trd_shape *sh, const trd_cost_model *cm,
                   double *seconds, char *why, size_t whylen);

#endif
