/* NAP allreduce plan: pure C, no MPI.  allreduce_nap.c plans with it; the
 * generator's --explain prints its groups. */
#ifndef TRD_NAP_H
#define TRD_NAP_H

#ifdef __cplusplus
extern "C" {
#endif

/* ---- NAP plan (allreduce_nap.c; pure C, also linked by the generator) ---- */

/* One inter-node transfer of a NAP step: a node index (0..n-1 among the
 * communicator's nodes, in ring order) and a lane (local rank on that node,
 * 0..lanes-1).  For a receive, `sub` is the subgroup whose data arrives. */
typedef struct trd_nap_xfer {
    int node;
    int lane;
    int sub;
} trd_nap_xfer;

/* Shape of one NAP step for one node. */
typedef struct trd_nap_stepinfo {
    int subsize; /* S: nodes per subgroup (the product of earlier radices) */
    int nsub;    /* g: subgroups in this node's group (1 = nothing to do) */
    int sub;     /* j: this node's subgroup */
    int pos;     /* p: this node's position in its subgroup */
} trd_nap_stepinfo;

/* Number of inter-node steps of NAP over n nodes with radix k >= 2:
 * ceil(log_k(n)), 0 for n <= 1 [NAP §III]. */
int trd_nap_nsteps(int n, int radix);

/* The radix NAP uses with `lanes` ranks per node: max(2, lanes). */
int trd_nap_radix(int lanes);

/* Plan of step `step` (0-based) for lane `lane` of node `node` among n nodes
 * with `lanes` active ranks per node and radix k [NAP Alg. 1, §III-A].
 *
 * Nodes form groups of S*k consecutive nodes, each of up to k subgroups of S
 * nodes (S = k^step); every node of a subgroup holds the same partial result.
 * Node (j, p) -- subgroup j, position p -- receives the data of every other
 * subgroup r of its group on lane r mod lanes, from node (r, p mod size_r):
 * the paper's partner when subgroup r is full, its "extra node" rule when it is
 * not.  The sender uses lane (j + p / size_r) mod lanes, which is the paper's
 * pairing (lane j) for full subgroups and spreads the extra sends.  Lane l then
 * folds, in increasing r, the data of subgroups r = l, l+lanes, ... < g (its
 * own node's data for r == j), and lanes 0..min(g, lanes)-1 allreduce those
 * partials: every node of the group ends with each subgroup's data exactly once.
 *
 * recv[] (capacity ceil(k/lanes)) gets the receives in increasing sub, send[]
 * (capacity n) the sends; counts in *nrecv, *nsend.  info may be NULL.
 * Returns 0, or -1 for arguments out of range. */
int trd_nap_step(int n, int lanes, int radix, int step, int node, int lane, trd_nap_stepinfo *info,
                 trd_nap_xfer *recv, int *nrecv, trd_nap_xfer *send, int *nsend);

#ifdef __cplusplus
}
#endif
#endif
