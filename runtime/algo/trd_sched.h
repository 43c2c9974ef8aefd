/* Schedule IR: what every rank of a communicator does in one collective call,
 * op by op, over element ranges of named buffers -- the step script of
 * [FLEX §2.1.2] (STEP / SENDTO / RECVFROM / REDUCEFROM) made explicit.  The
 * planners (one file per algorithm in this folder) write it; the generator
 * verifies and times it; the runtime executes the same ops (runtime/exec.c).
 * Pure C, no MPI.
 *
 * A schedule is planned for one communicator shape (its ranks, their nodes,
 * the ring order and what the nodes can share) and one call (collective,
 * element count and extent, root, in place, commutativity).  Each rank runs
 * its ops in order:
 *
 *   send      [peer] src[soff, soff+len)                   point to point
 *   recv      [peer] dst[off, off+len)
 *   sendrecv  both at once: send to peer, receive rlen elements from peer2
 *   reduce    dst[off..off+len) = src[soff..) op dst[off..)  (src the left operand,
 *             as MPI_Reduce_local's inout = in op inout)
 *   copy      dst[off..off+len) = src[soff..)
 *   signal    publish counter ctr of this rank at the call's epoch `epoch`
 *   wait      until rank peer (or every one of the node's local ranks
 *             0..nwait-1, peer -1) has published counter ctr at epoch >= `epoch`
 *
 * Sends and receives of one run of ops with nb set, and the op after it, are
 * posted together (nonblocking) and complete in any order, as a sendrecv's two
 * halves do.  Messages between two ranks match in the order they are posted.
 *
 * Buffers (enum trd_buf): the user's send and receive buffers, a private
 * temporary, and the rank's part of its node's shared segment: data slots
 * (SEG) and the small payload area in the cache line of the counters (INL).
 * A copy or reduce may read another rank of the same node's SEG or INL (a
 * load from shared memory, after a wait on that rank's signal); a copy may
 * also read its user buffers (single copy, Linux process_vm_readv): another
 * rank's SEND is its input (its sendbuf, or where MPI_IN_PLACE keeps it: its
 * recvbuf, or its block of it for allgather), its RECV its recvbuf; and write
 * another rank's receive buffer (process_vm_writev).  peer names the owner of
 * the source, peer2 of the destination (-1: this rank).  Offsets and lengths
 * count elements.
 *
 * Segment addresses are virtual: SEG offset v of epoch e is e * 2S + a, where
 * S = slot elements (trd_sched.seg_slot), a < S the input area and S <= a < 2S
 * the output area of that epoch's slot; INL offset e * I + a, I = inl_slot.
 * Two physical slots alternate: epoch e uses slot (base + e) mod 2, base the
 * node's epoch count before the call, so epochs e and e + 2 share memory and
 * the counters tell when it may be reused [FLEX §3.1].  A wait on every local
 * rank's DONE counter at epoch x returns at once where the rank has already
 * seen every local rank's IN counter at x + 1 or later (in this call or the
 * ones before): back-to-back small calls then read one line per rank, not two.
 */
#ifndef TRD_SCHED_H
#define TRD_SCHED_H

#include <stddef.h>
#include <stdio.h>

#include "trd_status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The collectives treeduce plans. */
enum trd_coll {
    TRD_COLL_ALLREDUCE = 0,
    TRD_COLL_REDUCE_SCATTER_BLOCK,
    TRD_COLL_ALLGATHER,
    TRD_COLL_REDUCE,
    TRD_COLL_BCAST,
    TRD_COLL_MAX
};

/* Name of a collective ("allreduce", "reduce_scatter_block", ...). */
const char *trd_coll_name(int coll);

enum trd_buf { TRD_B_SEND = 0, TRD_B_RECV, TRD_B_TMP, TRD_B_SEG, TRD_B_INL, TRD_B_MAX };

enum trd_sop {
    TRD_S_SEND = 0,
    TRD_S_RECV,
    TRD_S_SENDRECV,
    TRD_S_REDUCE,
    TRD_S_COPY,
    TRD_S_SIGNAL,
    TRD_S_WAIT,
    TRD_S_MAX
};

/* The counters of a rank in its segment's control lines [FLEX §3.1]. */
enum trd_ctr {
    TRD_CTR_IN = 0, /* its input area (or user buffers) of the epoch are ready */
    TRD_CTR_RED,    /* its output area of the epoch is ready */
    TRD_CTR_DONE,   /* it has finished reading the others' areas of the epoch */
    TRD_CTR_MAX
};

typedef struct trd_sstep {
    unsigned char op;      /* enum trd_sop */
    unsigned char dst;     /* enum trd_buf written: recv, sendrecv, reduce, copy */
    unsigned char src;     /* enum trd_buf read: send, sendrecv, reduce, copy */
    unsigned char nb;      /* send/recv/sendrecv posted together with the next op */
    unsigned char ctr;     /* signal, wait: enum trd_ctr */
    int peer;              /* send, sendrecv: destination; recv: source; reduce, copy:
                            * owner of src (-1 this rank); wait: the rank waited for, or -1
                            * for local ranks 0..nwait-1 */
    int peer2;             /* sendrecv: source; reduce, copy: owner of dst (-1 this rank) */
    int nwait;             /* wait with peer -1: how many local ranks */
    int round;             /* the algorithm's step (--schedule, the contention check) */
    int epoch;             /* signal, wait: epoch of the call, 1, 2, ...; 0 and below are the
                            * epochs of the calls before */
    size_t off, soff, len; /* dst [off, off+len), src [soff, soff+len) */
    size_t rlen;           /* sendrecv: elements received into dst at off */
} trd_sstep;

/* A wait on every one of the node's local ranks 0..nwait-1. */
#define TRD_PEER_LOCALS (-1)

/* Payload bytes of the INL area per slot (in the counter's cache line). */
#define TRD_INLINE_BYTES 24

/* ---- Communicator shapes ---------------------------------------------------- */

/* Single-copy capabilities of the nodes (Linux cross-memory attach). */
#define TRD_CMA_READ 1  /* process_vm_readv between every pair of a node's ranks */
#define TRD_CMA_WRITE 2 /* process_vm_writev too */

/* Routines with a single-copy path: index into trd_shape.cma_min. */
enum { TRD_CMA_ALLREDUCE, TRD_CMA_RSB, TRD_CMA_ALLGATHER, TRD_CMA_BCAST, TRD_CMA_MAX };

/* The communicator a schedule is planned for.  Ranks 0..nranks-1 are comm
 * ranks; ring[i] is the rank at ring position i (nodes in DFS order, a
 * node's ranks contiguous), node_first[v] the ring position of node v's first
 * rank; a node's local order is its ring order. */
typedef struct trd_shape {
    int nranks, nnodes;
    const int *ring;          /* [nranks] */
    const int *node_first;    /* [nnodes+1] */
    const int *node_of;       /* [nranks] node of each rank */
    const int *machine_node;  /* [nnodes] the machine's ring index of each node, or NULL */
    const int *node_packages; /* [nnodes] packages (sockets) of each node, or NULL: 1 */
    /* what the ranks of a node share (the same on every node of the communicator) */
    int shm;                     /* a shared segment per node */
    int cma;                     /* TRD_CMA_READ [| TRD_CMA_WRITE], 0 without shm */
    size_t slot_bytes;           /* bytes of one data area of the segment (TRD_SEG_SLOT_BYTES) */
    size_t cma_min[TRD_CMA_MAX]; /* message bytes from which each routine reads directly */
} trd_shape;

/* The runtime's segment: a data area of 256 KiB (input, output; two slots). */
#define TRD_SEG_SLOT_BYTES (256 * 1024)
/* Default message sizes from which the single-copy path is taken, measured on
 * a 2-rank node: allreduce 32 KiB, reduce_scatter_block and allgather 16 KiB,
 * bcast 16 KiB (below, the segment's pipelined copies beat the system call and
 * the pinning of pages that a single copy costs: 1.3 us against 2.9 us at 8 KiB). */
#define TRD_CMA_MIN_DEFAULTS                                                                       \
    {                                                                                              \
        32 * 1024, 16 * 1024, 16 * 1024, 16 * 1024                                                 \
    }

/* Storage for a shape: block placement of the given ranks per node (rank r
 * at ring position r, or shuffled by a seed when seed != 0), shared memory on,
 * no single copy, the runtime's slot size. */
typedef struct trd_shape_store {
    trd_shape s;
    int *ring, *node_first, *node_of;
} trd_shape_store;

/* Fill st for nnodes nodes with ppn[v] ranks each (all >= 1).  seed 0 keeps
 * rank order = ring order; another seed permutes the ranks (a placement that
 * is not block-wise).  Returns TRD_OK or TRD_ERR_NOMEM. */
int trd_shape_init(trd_shape_store *st, int nnodes, const int *ppn, unsigned seed);
void trd_shape_free(trd_shape_store *st);

/* The fewest and the most ranks on one node of sh. */
void trd_shape_ppn(const trd_shape *sh, int *min, int *max);

/* ---- Calls -------------------------------------------------------------------- */

/* One collective call as the planners see it.  Buffer sizes in elements:
 *   allreduce             send, recv: count
 *   reduce_scatter_block  send: nranks * count, recv: count (in place: the
 *                         input in recv, nranks * count)
 *   allgather             send: count, recv: nranks * count (in place: the
 *                         rank's block already in recv at rank * count)
 *   reduce                send: count, recv: count at root (none elsewhere; in
 *                         place: the root's input in recv)
 *   bcast                 recv: count (the buffer; the root's holds the data) */
typedef struct trd_call {
    int coll;        /* enum trd_coll */
    size_t count;    /* elements, as above */
    size_t extent;   /* bytes per element */
    int root;        /* reduce, bcast: comm rank of the root */
    int in_place;    /* MPI_IN_PLACE (allreduce, reduce_scatter_block, allgather, reduce) */
    int commutative; /* reductions: the op is commutative */
    int whole;       /* reductions: a user-defined op, which every reduce of the schedule
                      * must apply to the whole vector [0, count) in one call, as MPICH's
                      * own algorithms do (codes read a list's length from the buffer) */
} trd_call;

/* Elements of rank r's send and receive buffers for call c on n ranks (see
 * trd_call). */
void trd_call_sizes(const trd_call *c, int nranks, int r, size_t *send, size_t *recv);

/* ---- Schedules ------------------------------------------------------------------ */

typedef struct trd_sched {
    const char *alg; /* the algorithm's name (static) */
    char params[64]; /* its parameters as given ("" none) */
    trd_call call;
    int nranks;          /* of the communicator */
    int rank0, nplanned; /* ops are kept for ranks rank0 .. rank0+nplanned-1 */
    size_t seg_slot;     /* S: elements of one segment area (slot_bytes / extent) */
    size_t inl_slot;     /* I: elements of one INL area (TRD_INLINE_BYTES / extent) */
    size_t tmp_count;    /* most elements of the temporary any planned rank uses */
    int *nepochs;        /* [nplanned] epochs each planned rank's node advances by */
    int direct;          /* a rank's ops read or write other ranks' user buffers (single
                          * copy): the ranks publish their buffers' addresses */
    int contention_free; /* claims that no two inter-node messages of one round share a
                          * directed link of the switch tree [TREE §2] */
    int nrounds;
    size_t *first; /* [nplanned+1] rank rank0+i's ops are op[first[i] .. first[i+1]) */
    trd_sstep *op;
    size_t nops, cap;
    int oom;
} trd_sched;

/* Rank r's ops: *n of them (0 if r is not planned). */
const trd_sstep *trd_sched_ops(const trd_sched *s, int r, size_t *n);
/* Index of rank r's first op in s->op (r planned). */
size_t trd_sched_first(const trd_sched *s, int r);

/* Free what trd_plan allocated in s (s itself is the caller's); s may be
 * empty or zeroed. */
void trd_sched_free(trd_sched *s);

/* Remove rank r's k-th op (testing: a schedule broken on purpose); nothing
 * if there is none. */
void trd_sched_drop(trd_sched *s, int r, size_t k);

/* Print rank r's ops in the readable step-script form. */
void trd_sched_print(FILE *f, const trd_sched *s, int r);

/* ---- Building (for the planners) ------------------------------------------------- */

/* The rank being planned and the builder's state. */
typedef struct trd_sb {
    trd_sched *s;
    const trd_shape *sh;
    const trd_call *call;
    int rank;               /* comm rank being planned */
    int pos;                /* its ring position */
    int node, local, ppn;   /* its node, index on the node, ranks on the node */
    const int *local_ranks; /* [ppn] the node's ranks in local order */
    int epoch;              /* epochs the node has used so far in this call */
    size_t tmp_top;         /* temporary elements in use (trd_sb_tmp) */
    const char *fail;       /* why a planner gave up (static text), or NULL */
} trd_sb;

/* Elements of the temporary for a planner: [returned, returned + n); keep
 * them until trd_sb_tmp_release(b, the returned offset). */
size_t trd_sb_tmp(trd_sb *b, size_t n);
void trd_sb_tmp_release(trd_sb *b, size_t mark);

/* The next epoch of the node (every rank of the node takes the same ones,
 * in the same order). */
int trd_sb_epoch(trd_sb *b);

/* Virtual SEG offsets of epoch e: its input area and its output area. */
size_t trd_sb_seg_in(const trd_sb *b, int e);
size_t trd_sb_seg_out(const trd_sb *b, int e);
/* Virtual INL offset of epoch e; the INL area holds b->s->inl_slot elements. */
size_t trd_sb_inl(const trd_sb *b, int e);

/* Comm rank of local rank l of this rank's node. */
static inline int trd_sb_local_rank(const trd_sb *b, int l)
{
    return b->local_ranks[l];
}

/* Append an op to the planned rank's ops. */
void trd_sb_add(trd_sb *b, trd_sstep st);
/* Mark the last op as posted together with the next one (or clear it). */
void trd_sb_nb(trd_sb *b, int nb);

/* The messages of the planned rank, len elements: send src[soff..) to comm
 * rank peer; receive from peer into dst[off..); both in one op (to, from),
 * posted together.  The ops of one round run in order. */
void trd_s_send(trd_sb *b, int round, int peer, int src, size_t soff, size_t len);
void trd_s_recv(trd_sb *b, int round, int peer, int dst, size_t off, size_t len);
void trd_s_sendrecv(trd_sb *b, int round, int to, int src, size_t soff, size_t len, int from,
                    int dst, size_t off, size_t rlen);
/* dst[off..) = src(of owner)[soff..) op dst[off..); owner -1: this rank.
 * Reductions and copies of no elements, and copies onto themselves, are
 * left out. */
void trd_s_reduce(trd_sb *b, int round, int dst, size_t off, int src, int owner, size_t soff,
                  size_t len);
/* dst(of downer)[off..) = src(of owner)[soff..); -1: this rank. */
void trd_s_copy(trd_sb *b, int round, int dst, int downer, size_t off, int src, int owner,
                size_t soff, size_t len);
void trd_s_signal(trd_sb *b, int round, int ctr, int epoch);
/* Wait for rank peer's counter; peer TRD_PEER_LOCALS: local ranks 0..nwait-1. */
void trd_s_wait(trd_sb *b, int round, int peer, int nwait, int ctr, int epoch);

/* ---- Blocks ----------------------------------------------------------------------- */

/* Block i of count elements of extent bytes split n ways on cache-line (64
 * byte) boundaries: elements [*lo, *hi).  Blocks are whole cache lines where
 * the element size allows, so no two ranks write one line and no piece is
 * smaller than a line [FLEX §2.1.3]; with few elements the last blocks are
 * empty. */
static inline void trd_block_split(size_t count, size_t extent, int n, int i, size_t *lo,
                                   size_t *hi)
{
    size_t unit = extent < 64 ? 64 / extent : 1;
    size_t units = (count + unit - 1) / unit;
    size_t a = units * (size_t)i / (size_t)n, b = units * (size_t)(i + 1) / (size_t)n;
    *lo = a * unit < count ? a * unit : count;
    *hi = b * unit < count ? b * unit : count;
}

/* Offset of block i of n in that split (i = n: count). */
static inline size_t trd_block_at(size_t count, size_t extent, int n, int i)
{
    size_t lo, hi;
    trd_block_split(count, extent, n, i < n ? i : n - 1, &lo, &hi);
    return i < n ? lo : hi;
}

/* Elements in the largest of the n blocks. */
size_t trd_block_max(size_t count, size_t extent, int n);

/* Offset of block i when n elements are cut into p blocks whose sizes differ
 * by at most one (the first n % p are larger), as MPICH's pieces cut them. */
static inline size_t trd_even_at(size_t n, int p, int i)
{
    size_t base = n / (size_t)p, extra = n % (size_t)p;
    return (size_t)i * base + ((size_t)i < extra ? (size_t)i : extra);
}

#ifdef __cplusplus
}
#endif
#endif
