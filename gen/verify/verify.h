/* The schedule verifier: symbolic execution of a schedule (sched.h) for all
 * ranks, and the proof that it computes its collective [TREE §3.2, FLEX §3.1,
 * MPICH §4].  The generator runs it on every schedule the runtime can run for
 * the machine before it writes anything; the unit tests on many shapes. */
#ifndef TRD_VERIFY_H
#define TRD_VERIFY_H

#include <stddef.h>

#include "trd_sched.h"
#include "topo.h"

typedef struct trd_verify_opts {
    trd_topo_t topo;      /* the switch tree (sh->machine_node set); NULL: no contention check */
    int check_contention; /* check schedules that claim contention freedom [TREE §2] */
    int repeat;           /* 1, or 2: the call twice back to back */
} trd_verify_opts;

/* Execute s (every rank planned) symbolically on shape sh and prove:
 *  - every element of every rank's result holds what the collective gives
 *    (s->call): the right element, reduced over all ranks exactly once, in
 *    rank order unless s->call.commutative; allgather and bcast the right
 *    rank's element; a reduce never combines two different elements;
 *  - sends and receives match one for one (synchronous: both ends reach
 *    them), in posting order per pair, with equal lengths and rounds; a
 *    window of nonblocking ops holds no local op and receives into nothing it
 *    sends from; the ranks never wait on each other in a cycle;
 *  - for s->call.whole (a user-defined op), every reduce covers the whole
 *    vector, count elements, in one op;
 *  - no op reads a cell before it is written, reads or writes beyond a
 *    buffer, writes the send buffer, or reads it in place;
 *  - the memory of the node is race-free: a rank reads another's segment
 *    cell (or user buffer cell, through single copy) only after a signal the
 *    writer gave after writing it, and overwrites a cell only after the
 *    signals of its previous writer and of every rank that read it; the
 *    other ranks are done with a rank's user buffers before it returns;
 *    counters only grow; remote accesses stay on the node;
 *  - with opts->repeat 2, the same for the call run twice back to back (the
 *    slots and counters carried over, fresh user buffers): the reuse of the
 *    segment's two slots across calls [FLEX §3.1];
 *  - for s->contention_free with opts->topo and opts->check_contention, no
 *    two inter-node messages of one round share a directed link of the
 *    switch tree [TREE §2].
 * Returns TRD_OK; TRD_ERR_VERIFY with why naming the rank, its op, the
 * round and the element, e.g. "rank 3, op 7 (round 2): receives 4 elements
 * from rank 2, which sends 5 (its op 3)" or "rank 1: recvbuf[9] holds 3 of
 * the 4 contributions"; TRD_ERR_NOMEM. */
int trd_sched_verify(const trd_sched *s, const trd_shape *sh, const trd_verify_opts *opts,
                     char *why, size_t whylen);

#endif
