/* NAP allreduce plan: pure C, no MPI.  allreduce_nap.c plans with it; the
 * generator's --explain prints its groups. */
#ifndef TRD_NAP_H
#define TRD_NAP_H

#include <stddef.h>

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
    int spread;  /* 1: a node past the step's width: no exchange, it takes the result
                  * from a node of its subgroup (trd_nap_spread) */
} trd_nap_stepinfo;

/* Per-step radices of NAP [NAP §III, FLEX §2.1.3, RM §4]: step i combines
 * k[i] subgroups (k[n-1] for every step past the list); n == 0 is the
 * paper's constant radix max(2, lanes).  Steps over consecutive nodes in
 * ring order stay under one switch first, so a list like 16,2,2 runs its
 * first step within 16-node leaf switches and the steps across their
 * oversubscribed uplinks with fewer partners: (k-1) of each node's whole
 * vectors cross the uplink per step, not lanes-1. */
#define TRD_NAP_MAX_RADICES 16
#define TRD_NAP_MAX_RADIX 4096
typedef struct trd_nap_radices {
    int n;                      /* entries of k; 0: the default */
    int k[TRD_NAP_MAX_RADICES]; /* 2..TRD_NAP_MAX_RADIX each */
    int w[TRD_NAP_MAX_RADICES]; /* width: 0 every node of a subgroup takes part in the
                                 * exchange; W >= 1 only its first W nodes ("K/W"), which
                                 * then pass the result on to the others of the subgroup */
} trd_nap_radices;

/* The radix of step `step` (0-based) of list r with `lanes` lanes. */
int trd_nap_radix_at(const trd_nap_radices *r, int lanes, int step);

/* The width of step `step` of list r (0: every node; the last repeats). */
int trd_nap_width_at(const trd_nap_radices *r, int step);

/* Number of inter-node steps over n nodes with list r: the steps until the
 * radices' product reaches n (0 for n <= 1). */
int trd_nap_nsteps_list(int n, int lanes, const trd_nap_radices *r);

/* Parse "K1,K2,..." (decimal radices 2..TRD_NAP_MAX_RADIX, at most
 * TRD_NAP_MAX_RADICES of them, separated by ','; a radix may carry a width,
 * "K/W", W >= 1); "" is the default.
 * Returns TRD_OK, or TRD_ERR_INPUT with a message in err (errlen bytes,
 * may be NULL) that
 * names the 1-based column, e.g. "column 3: expected a radix >= 2". */
int trd_nap_radices_parse(const char *text, trd_nap_radices *out, char *err, size_t errlen);

/* The canonical text of r ("" for the default), as snprintf. */
int trd_nap_radices_format(const trd_nap_radices *r, char *buf, size_t len);

/* The radix lists worth weighing over n nodes with `lanes` lanes, at most
 * cap into out: the default first, then every non-increasing list of
 * radices from {2, 4, 8, ..., lanes} and lanes, cut to the steps n needs
 * (the last radix no larger than the subgroups left), so that the large
 * radices run under the leaf switches and the small ones across
 * [FLEX §2.1.3: a factor per step; NAP §III].  Returns the count. */
int trd_nap_radix_lists(int n, int lanes, trd_nap_radices *out, int cap);

struct trd_levels;
/* Closed form of NAP with list r over nodes x ppn ranks for bytes, in
 * seconds [NAP Eq. 3, 6; TREE §2]: per step of radix k over subgroups of S
 * nodes, one latency of the farthest pair, the bytes of the k-1 partners'
 * messages at the rate of the most loaded link (the sum over partners d of
 * the tree's sharing at node distance d S, l->far_load) or of the node's
 * injection, whichever is slower, the reductions, and the node allreduce
 * over the lanes with a part; a step narrower than its subgroups (width W)
 * loads the links with W of every S nodes and adds passing the result on
 * under the subgroup's switch (l->far_latency_s) and within the node. */
double trd_nap_model_list(const struct trd_levels *l, int nodes, int ppn, double bytes,
                          const trd_nap_radices *r);

/* The lowest trd_nap_model_list over trd_nap_radix_lists (ties to the
 * earlier, the default first); the list into *best where not NULL. */
double trd_nap_model_best(const struct trd_levels *l, int nodes, int ppn, double bytes,
                          trd_nap_radices *best);

/* Number of inter-node steps of NAP over n nodes with radix k >= 2:
 * ceil(log_k(n)), 0 for n <= 1 [NAP §III]. */
int trd_nap_nsteps(int n, int radix);

/* The radix NAP uses with `lanes` ranks per node: max(2, lanes). */
int trd_nap_radix(int lanes);

/* As trd_nap_step, with the radix of each step from list r: the subgroups
 * of step i are the groups of step i-1 (S = k[0] ... k[i-1] nodes), so the
 * same rules hold with a radix per step; recv[] needs capacity
 * ceil(k[step]/lanes). */
int trd_nap_step_list(int n, int lanes, const trd_nap_radices *rad, int step, int node, int lane,
                      trd_nap_stepinfo *info, trd_nap_xfer *recv, int *nrecv, trd_nap_xfer *send,
                      int *nsend);

/* A step of width W (list r) leaves nodes at positions p >= W of their
 * subgroup out of the exchange, so that across an oversubscribed uplink W
 * nodes per subgroup receive, not all S; after the exchange and its node
 * allreduce, node p >= W' (W' = min(W, its subgroup's size)) receives the
 * result on lane 0 from node p mod W' of its subgroup, sent by that node's
 * lane (p / W' - 1) mod lanes, and hands it on within the node.  For node
 * `node`: *from the node and lane it receives from (node -1: none), to[]
 * (capacity n) the nodes it sends to, each with the lane that sends it in
 * .lane; count in *nto.  A full step (width 0 or >= S) has none.  Returns TRD_OK,
 * or TRD_ERR_INPUT for arguments out of range. */
int trd_nap_spread(int n, int lanes, const trd_nap_radices *rad, int step, int node,
                   trd_nap_xfer *from, trd_nap_xfer *to, int *nto);

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
 * (capacity n) the sends; counts in *nrecv, *nsend.  info may be NULL; with
 * recv or send NULL only info is written (counts 0).
 * Returns TRD_OK, or TRD_ERR_INPUT for arguments out of range. */
int trd_nap_step(int n, int lanes, int radix, int step, int node, int lane, trd_nap_stepinfo *info,
                 trd_nap_xfer *recv, int *nrecv, trd_nap_xfer *send, int *nsend);

#ifdef __cplusplus
}
#endif
#endif
