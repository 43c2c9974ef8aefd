/* Rings on the switch tree (ring.c): the links a message between two
 * nodes uses, and whether a ring through the nodes sends two neighbour
 * messages over one directed link [TREE §2, §3.2 Lemma 4]. */
#ifndef TRD_RING_H
#define TRD_RING_H

#include <stddef.h>

#include "topo.h"

/* Directed link ids of the path from machine node a to b on the switch tree
 * (ring.c): vertex v's up-link is 2v, its down-link 2v+1, switches 0..S-1,
 * node i at S+i.  Writes at most cap ids; returns how many the path has. */
int trd_topo_path_links(trd_topo_t t, int a, int b, int *links, int cap);

/* Check that the ring through nodes[0..n-1] (ring indices of t, in ring order,
 * wrapping around; repeated consecutive nodes are one node) sends no two
 * neighbour messages over the same directed link of the switch tree
 * [TREE §2, Lemma 4]: *dups gets 0 if contention-free, else the number of
 * directed links used more than once, with the first one described in why.
 * Returns TRD_OK or TRD_ERR_NOMEM. */
int trd_ring_contention(trd_topo_t t, const int *nodes, int n, int *dups, char *why, size_t whylen);

/* The same verdict, proved structurally in O(n depth + switches) with no
 * walk of paths against each other: a ring uses a directed link of the
 * switch tree twice in one step exactly when some subtree (a switch's, or
 * a node's ranks) is not one contiguous run of the cyclic ring, since every
 * run is entered once and left once; a DFS order of the tree has every
 * subtree contiguous, and so has any subsequence of one [TREE §3.2,
 * Lemma 4].  nodes[0..n) as for trd_ring_contention.  *runs gets 0 where
 * every subtree is one run (contention-free), else the number of subtrees
 * entered more than once, the first described in why.  Returns TRD_OK or
 * TRD_ERR_NOMEM. */
int trd_ring_dfs_proof(trd_topo_t t, const int *nodes, int n, int *runs, char *why, size_t whylen);

#endif
