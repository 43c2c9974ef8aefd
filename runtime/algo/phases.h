/* Building blocks that one algorithm's file plans and others compose with
 * [STYLE: compose, don't copy]: the node phases through the shared segment
 * and the single-copy fold.  Internal to runtime/algo. */
#ifndef TRD_PHASES_H
#define TRD_PHASES_H

#include "algo.h"
#include "algos.h" /* the allreduce algorithms the composites run over rank lists */

/* Parameters naming the allreduce the composites run among leaders or lanes
 * (smp, flex): "" the default, or the name of an algorithm with a list form. */
typedef struct trd_list_params {
    const trd_algo *list; /* NULL: the default */
} trd_list_params;
/* Parse text ("" the default) into out, what naming the parameter in the
 * message ("smp: the leader algorithm").  Returns TRD_OK, or TRD_ERR_INPUT
 * with why listing the algorithms that have a list form. */
int trd_parse_list_params(const char *text, const char *what, trd_list_params *out, char *why,
                          size_t whylen);
/* Those names as candidates for the generator's search: the ring, whose
 * schedule grows as nodes^2, only up to TRD_LIST_QUADRATIC_MAX_NODES. */
int trd_list_candidates(const trd_shape *sh, char (*cand)[TRD_PARAMS_MAX], int cap);
#define TRD_LIST_QUADRATIC_MAX_NODES 1024

/* The multisets of factors 2..8 whose product is n, each in increasing and
 * in decreasing order, as parameter strings of comma-separated factors, each
 * after prefix ("a2,a4"; rm's bases, shm:rx's factors): at most cap of them;
 * returns how many [RM §4.1, FLEX §2.1.3]. */
int trd_factor_lists(int n, const char *prefix, char (*out)[TRD_PARAMS_MAX], int cap);

/* allreduce_flex.c: the FLEX composite with lane algorithm lane (NULL: by
 * block size) [FLEX §2.1.2]. */
int trd_plan_flex(trd_sb *b, const trd_algo *lane);

/* allreduce_shm_rx.c: the multi-radix recursive exchange with factors
 * [FLEX §2.1] (their product the ranks on the node). */
int trd_plan_rx(trd_sb *b, const int *factors, int nfactors);

/* allreduce_rm.c: recursive multiplying over recvbuf[base, base + count) of
 * ranks[0..n) (NULL: comm ranks 0..n-1), me this rank's index, in rank
 * order, bases at most maxbase (trd_rm_default) [RM §4]; steps use rounds
 * round .. round + TRD_RM_MAX_TOKENS. */
int trd_plan_rm_list(trd_sb *b, int round, const int *ranks, int n, int me, int maxbase,
                     size_t base, size_t count);

/* Rounds (trd_op.round, the step --schedule and the contention check show).
 * Phase k of a composite numbers its rounds from k * TRD_PHASE.  Within one
 * phase, an algorithm's closing step takes a fixed offset from the phase's
 * first round, past the most steps its body can take (a round numbers the
 * same step on every rank): */
#define TRD_PHASE (1 << 20)
enum trd_round_offset {
    /* recursive doubling (at most 32 steps): the result back to the ranks
     * folded out of the power of two [MPICH §4] */
    TRD_ROUND_RD_UNFOLD = 40,
    /* the binomial reduce (at most 32 steps): the result to a root that is
     * not the tree's top */
    TRD_ROUND_TO_ROOT = 40,
    /* halving + doubling (at most 2 x 32 + 1 steps): the result back to the
     * ranks folded out [MPICH §4.3] */
    TRD_ROUND_HALVING_UNFOLD = 80,
    /* after a node allreduce among k ranks of a node (recursive doubling,
     * or recursive multiplying's at most TRD_RM_MAX_TOKENS steps): the
     * result on to the node's other ranks */
    TRD_ROUND_NODE_HANDON = 100,
};

/* Pieces of the single-copy path: bytes read from another rank per op. */
#define TRD_CMA_PIECE_BYTES (512 * 1024)

/* segment.c: the node segment's counter protocol [FLEX §3.1].
 * The next epoch of a node phase, after the wait that frees its slot: every
 * rank of the node has finished the epoch two before, which used the same
 * memory (the wait returns at once where the DONE-skip rule of trd_sched.h
 * applies). */
int trd_seg_next(trd_sb *b, int round);
/* Where a rank puts the cnt elements it contributes in epoch e (*at): the
 * line of its IN counter (TRD_B_INL, returned) when they fit there, else its
 * input area (TRD_B_SEG). */
int trd_seg_contrib(const trd_sb *b, int e, size_t cnt, size_t *at);
/* The epoch in which the node's ranks read each other's user buffers (single
 * copy): trd_seg_next, then IN signalled; marks the schedule direct, so that
 * the ranks publish their buffers' addresses at the call's start.  trd_seg_direct_end: DONE
 * signalled, then a wait for every rank's, so that nobody reads this rank's buffers once it
 * returns. */
int trd_seg_direct_begin(trd_sb *b, int round);
void trd_seg_direct_end(trd_sb *b, int round, int e);

/* Owner of local rank l's memory as the ops name it: -1 for this rank. */
static inline int trd_sb_owner(const trd_sb *b, int l)
{
    return l == b->local ? -1 : b->local_ranks[l];
}

/* Local index of comm rank r on this rank's node, or -1. */
static inline int trd_sb_local_of(const trd_sb *b, int r)
{
    for (int l = 0; l < b->ppn; l++)
        if (b->local_ranks[l] == r)
            return l;
    return -1;
}

/* Why an algorithm on one node's segment cannot run on sh (NULL: it can):
 * all ranks on one node sharing a segment, local order = rank order (as the
 * runtime's ring orders a node's ranks), and for a user-defined op
 * (call->whole) a vector that fits one chunk (trd_refuse_whole_chunk). */
const char *trd_refuse_one_node(const trd_shape *sh, const trd_call *call, const void *params);
/* Node phases stream a vector through the segment's slots in chunks: why a
 * call of a user-defined op, called on whole vectors, cannot run so on sh
 * (larger than a slot, on a node of several ranks with a segment), or NULL. */
const char *trd_refuse_whole_chunk(const trd_shape *sh, const trd_call *call);

/* allreduce_shm.c: the reduction of local ranks 0..k-1's contributions
 * (in_buf[0, count) of each: TRD_B_SEND or TRD_B_RECV) to every rank of the
 * node (root -1) or to local rank root, into recvbuf[0, count), streamed
 * through the segment in chunks [FLEX §2.1]; with every rank contributing
 * to all (k = ppn) and the single-copy path available from cma_min, read
 * straight from the others' buffers.  Every rank of the node calls it; on
 * a node of one rank it is a copy into recvbuf (no epoch).  TRD_OK, or
 * TRD_ERR_INPUT with b->fail. */
int trd_plan_shm_fold(trd_sb *b, int round, int k, int root, int in_buf, size_t count);

/* allreduce_shm.c: out = x_0 op x_1 op ... op x_{n-1} over elements [a,
 * a+len) of the node's ranks' vectors, each in buffer in_buf of its rank
 * (TRD_B_SEND: their inputs; TRD_B_RECV: their recvbufs, where a composite's
 * later phase keeps the partial results; the others' read from their
 * memory), out = recvbuf[out_off, out_off+len) [FLEX §2.1, single copy].
 * tmp: 2 TRD_CMA_PIECE_BYTES of the temporary. */
void trd_plan_cma_fold(trd_sb *b, int round, int in_buf, size_t out_off, size_t a, size_t len,
                       size_t tmp);
/* The same folded in rank order for a commutative op too, so that every rank
 * that folds the same elements gets the same bits (shm:direct). */
void trd_plan_cma_fold_ordered(trd_sb *b, int round, int in_buf, size_t out_off, size_t a,
                               size_t len, size_t tmp);

/* bcast_shm.c: recvbuf[0, count) of local rank root to every rank of the
 * node, through the segment or, from cma_min, read from the root's buffer.
 * Every rank of the node calls it; a node of one rank has nothing to do. */
int trd_plan_shm_bcast(trd_sb *b, int round, int root, size_t count);

/* reduce_binomial.c: binomial reduce over ranks[0..n) (NULL: comm ranks
 * 0..n-1) to list index root of in_buf[in_off, in_off+count), into
 * recvbuf[0, count) at the root; rank order for any op [MPICH §4.4]. */
int trd_plan_reduce_binomial(trd_sb *b, int round, const int *ranks, int n, int me, int root,
                             int in_buf, size_t in_off, size_t count);

/* bcast_binomial.c: binomial bcast over ranks[0..n) (NULL: 0..n-1) from list
 * index root of recvbuf[0, count); with scatter, only each subtree's blocks
 * of the even split travel, so list index j ends with block j (the first
 * half of van de Geijn's bcast) [MPICH §4.2]. */
int trd_plan_bcast_binomial(trd_sb *b, int round, const int *ranks, int n, int me, int root,
                            size_t count, int scatter);

/* allgather_rd.c, allgather_ring.c: in place on recvbuf[0, n) cut into p
 * even blocks (trd_even_at): relative rank j = (rank - root) mod p starts
 * with block j, every rank ends with all [MPICH §4.1]. */
void trd_plan_gather_doubling(trd_sb *b, int round, size_t n, int root);
void trd_plan_gather_ring(trd_sb *b, int round, size_t n, int root);

/* rsb_halving.c: MPICH's non-power-of-two fold and recursive halving
 * [MPICH §4.3], shared with Rabenseifner's reduce. */
int trd_pof2_floor(int p);
/* Comm rank of new rank i after the fold of the first 2 rem ranks: the odd
 * rank of a pair, or keep (a root, or -1) when keep is in the pair. */
int trd_fold_rank(int i, int rem, int keep);
/* Offset of new block i of q after the fold, n elements in nb blocks. */
size_t trd_fold_off(size_t n, int nb, int q, int i);
/* The fold of in_buf[in_off, +n) into work (TMP at work, n elements):
 * survivors get the pair's vector combined in rank order and their new
 * rank (returned), the others send theirs and get -1; tmp holds n
 * elements. */
int trd_plan_fold(trd_sb *b, int round, int rem, int keep, int in_buf, size_t in_off, int work_buf,
                  size_t work, size_t tmp, size_t n);
/* Recursive halving among the q survivors: new rank me starts with the
 * work vector and ends with new block me reduced over all ranks; tmp holds
 * trd_fold_off(n, nb, q, q/2) elements.  Commutative ops. */
void trd_plan_halving(trd_sb *b, int round, int q, int me, int rem, int keep, int nb, int work_buf,
                      size_t work, size_t tmp, size_t n);

/* rsb_halving.c: after the fold the survivor of pair i returns block 2i to
 * rank 2i, and every rank copies its block of the work vector (TMP at work)
 * into recvbuf. */
void trd_plan_rsb_unfold(trd_sb *b, int round, int rem, size_t work, size_t count);

#endif
