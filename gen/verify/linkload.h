/* The bytes a schedule puts on each directed link of the switch tree in one
 * call: the model's side of a comparison with a network's own counters
 * (tc's per-link bytes on an emulated cluster) [TREE §2, §3.2 Lemma 4]. */
#ifndef TRD_LINKLOAD_H
#define TRD_LINKLOAD_H

#include <stddef.h>
#include <stdint.h>

#include "trd_sched.h"
#include "topo.h"

/* Per directed link of t's switch tree, indexed as trd_topo_path_links
 * (ring.h) numbers them: vertex v's up-link 2v, its down-link 2v + 1, where
 * switch i (DFS order) is vertex i and node i (ring order) vertex
 * nswitches + i.  A node's up-link leads from the node to its switch, a
 * switch's from the switch to its parent; the root switch's two stay 0. */
typedef struct trd_link_loads {
    int nswitches, nnodes; /* of the topology: 2 (nswitches + nnodes) links */
    uint64_t *bytes;       /* [links] bytes of the messages crossing the link */
    uint64_t *messages;    /* [links] messages crossing it */
    uint64_t inter_bytes;  /* messages between nodes: bytes and count */
    uint64_t inter_messages;
    uint64_t intra_bytes; /* messages within a node (no network link) */
    uint64_t intra_messages;
} trd_link_loads;

/* The link loads of one call of s (every rank planned; verify it first,
 * verify.h) on shape sh (sh->machine_node set, the ranks' nodes on t):
 * s is executed as the verifier and the cost model execute it (symexec.h),
 * and each matched point-to-point message between ranks of different nodes
 * adds its bytes -- the send's elements (counts in elements) times
 * s->call.extent bytes -- to every directed link of the tree path between
 * the two nodes: the sender's node's up-link, each switch's up-link up to
 * the lowest common switch, each switch's down-link below it and the
 * receiver's node's down-link.  Messages within a node (MPI or shared
 * memory on the node) and copies and reduces load no link; they are counted
 * in intra_*.  Non-power-of-two folds, chunks and every other message count
 * as they run.  *out is filled (its arrays malloc'd; trd_link_loads_free).
 * Returns TRD_OK; TRD_ERR_VERIFY with why (a shape without machine nodes,
 * a schedule not planned for every rank of sh, or one that does not run:
 * the engine's message); TRD_ERR_NOMEM.  On error *out holds nothing to
 * free. */
int trd_sched_link_loads(const trd_sched *s, const trd_shape *sh, trd_topo_t t, trd_link_loads *out,
                         char *why, size_t whylen);

/* Free the arrays of l (l itself is the caller's); l may be zeroed. */
void trd_link_loads_free(trd_link_loads *l);

#endif
