/* Schedule IR: what every rank of a communicator does in an allreduce, step
 * by step, over element ranges of named buffers -- the step script of
 * [FLEX §2.1.2] (STEP / SENDTO / RECVFROM / REDUCEFROM) made explicit.
 *
 * A schedule is planned for one communicator shape (ranks, their nodes, the
 * ring order) and one element count.  Each rank runs its ops in order:
 *
 *   send     [peer] src[soff, soff+len)             blocking, synchronous
 *   recv     [peer] dst[off, off+len)               blocking
 *   sendrecv send to peer, receive from peer2 at once (MPI_Sendrecv)
 *   reduce   dst[off..) = src[soff..) op dst[off..)   (left: src is the left
 *            operand) or dst = dst op src (right)
 *   copy     dst[off..) = src[soff..)
 *   barrier  all ranks of the node (shared-memory phases)
 *
 * Sends and receives of one run of "nb" ops are posted at once and complete
 * in any order (nonblocking, then a wait), as a sendrecv's two halves do.
 *
 * Buffers: the user's send and receive buffers, a private temporary, and
 * the rank's area of the node's shared segment, which other ranks of the
 * node read (copy/reduce with src = TRD_B_SHM and peer = the owner) after a
 * barrier.  Offsets and lengths count elements.
 *
 * The verifier (verify.c) executes a schedule symbolically for all ranks;
 * the cost model evaluates the same ops.  Pure C, no MPI.
 */
#ifndef TRD_SCHED_H
#define TRD_SCHED_H

#include <stddef.h>
#include <stdio.h>

#include "topo.h"

enum trd_sbuf { TRD_B_SEND = 0, TRD_B_RECV, TRD_B_TMP, TRD_B_SHM, TRD_B_MAX };
enum trd_sop {
    TRD_S_SEND = 0,
    TRD_S_RECV,
    TRD_S_SENDRECV,
    TRD_S_REDUCE,
    TRD_S_COPY,
    TRD_S_BARRIER,
    TRD_S_MAX
};

typedef struct trd_sstep {
    unsigned char op;         /* enum trd_sop */
    unsigned char dst, src;   /* enum trd_sbuf: written (recv, reduce, copy), read (send, reduce, copy) */
    unsigned char left;       /* reduce: src is the left operand */
    unsigned char nb;         /* send/recv posted together with the next op (MPI_Isend /
                               * MPI_Irecv then MPI_Waitall): a run of ops with nb set, and
                               * the op after it, complete in any order */
    int peer;                 /* send/sendrecv: destination; recv: source; copy/reduce
                               * from TRD_B_SHM: the segment's owner (-1: own) */
    int peer2;                /* sendrecv: the source */
    size_t off, soff, len;    /* dst range [off, off+len), src range [soff, soff+len) */
    size_t rlen;              /* sendrecv: elements received (into dst at off) */
    int round;                /* the algorithm's step number (for --schedule and contention) */
} trd_sstep;

/* The communicator a schedule is planned for.  Ranks 0..nranks-1 are comm
 * ranks; ring[i] is the rank at ring position i (DFS order, nodes
 * contiguous), node_first[v] the ring position of node v's first rank. */
typedef struct trd_shape {
    int nranks, nnodes;
    const int *ring;       /* [nranks] */
    const int *node_first; /* [nnodes+1] */
    const int *node_of;    /* [nranks] node of each rank; filled by trd_shape_init */
    const int *machine_node; /* [nnodes] the machine's ring index of each node, or NULL */
} trd_shape;

/* Storage for a shape: block placement of the given ranks per node (rank r
 * at ring position r, or shuffled by a seed when seed != 0). */
typedef struct trd_shape_store {
    trd_shape s;
    int *ring, *node_first, *node_of;
} trd_shape_store;

/* Fill st for nnodes nodes with ppn[v] ranks each (all >= 1).  seed 0 keeps
 * rank order = ring order; another seed permutes the ranks (a placement that
 * is not block-wise).  Returns 0, or -1 out of memory. */
int trd_shape_init(trd_shape_store *st, int nnodes, const int *ppn, unsigned seed);
void trd_shape_free(trd_shape_store *st);

/* The fewest and the most ranks on one node of sh. */
void trd_shape_ppn(const trd_shape *sh, int *min, int *max);

typedef struct trd_sched {
    const char *alg;      /* planner name: "ring", "rd", ... */
    char params[64];      /* its parameters ("" none) */
    int nranks;
    size_t count;         /* elements of the vector */
    size_t tmp_count;     /* elements of the temporary (count unless a planner says) */
    int in_place;         /* starts from the receive buffer (MPI_IN_PLACE) */
    int commutative;      /* needs a commutative operation */
    int contention_free;  /* claims that no two inter-node messages of one round share a
                           * directed link of the switch tree [TREE §2] */
    int nrounds;
    size_t *first;        /* [nranks+1] rank r's ops are op[first[r] .. first[r+1]) */
    trd_sstep *op;
    size_t nops, cap;
    int building;         /* rank whose ops are being appended */
    int oom;
} trd_sched;

/* Start an empty schedule (alg a static string). */
int trd_sched_init(trd_sched *s, const char *alg, int nranks, size_t count, int in_place);
void trd_sched_free(trd_sched *s);
/* Append to rank r's ops; ranks must be built in order 0, 1, ... */
void trd_sched_rank(trd_sched *s, int r);
void trd_sched_add(trd_sched *s, trd_sstep st);
/* Close the last rank.  Returns 0, or -1 out of memory. */
int trd_sched_end(trd_sched *s);

/* Remove op i (testing: a schedule broken on purpose). */
void trd_sched_drop(trd_sched *s, size_t i);

/* Shorthands for the builders. */
void trd_s_send(trd_sched *s, int round, int peer, int src, size_t soff, size_t len);
void trd_s_recv(trd_sched *s, int round, int peer, int dst, size_t off, size_t len);
void trd_s_sendrecv(trd_sched *s, int round, int to, int src, size_t soff, size_t len, int from,
                    int dst, size_t off, size_t rlen);
void trd_s_reduce(trd_sched *s, int round, int dst, size_t off, int src, int owner, size_t soff,
                  size_t len, int left);
void trd_s_copy(trd_sched *s, int round, int dst, size_t off, int src, int owner, size_t soff,
                size_t len);
void trd_s_barrier(trd_sched *s, int round);
/* Mark the last op as posted together with the next one. */
void trd_s_nb(trd_sched *s);

/* Print rank r's ops in the readable step-script form. */
void trd_sched_print(FILE *f, const trd_sched *s, int r);

/* ---- Planners (sched_plan.c) -------------------------------------------- */

/* The allreduce algorithms the runtime runs, as schedules for shape sh and
 * count elements of extent bytes (blocks are split on cache lines as the
 * runtime's trd_block_range does), out of place unless in_place.  Each follows its template
 * step for step (same peers, ranges, operand order); the node phases run
 * through the shared segment when shm, else point to point.
 *   alg: "ring", "rd", "rabenseifner", "rm" (params: an RM schedule or ""),
 *        "nap", "smp" (inter-node: "rd", "rabenseifner" or "ring"), "flex"
 *        (lane algorithm: "", "rd", "rabenseifner" or "ring"), "hring".
 * commutative selects the orders the runtime uses for commutative ops (ring
 * order) or not (rank order; algorithms that need commutativity refuse).
 * Returns 0, or -1 with why (e.g. "unknown algorithm 'x'"). */
int trd_sched_plan(trd_sched *s, const char *alg, const char *params, const trd_shape *sh,
                   size_t count, size_t extent, int in_place, int commutative, int shm, char *why,
                   size_t whylen);

/* The planners trd_sched_plan knows, NULL-terminated. */
extern const char *const trd_sched_planners[];

/* ---- Verifier (verify.c) -------------------------------------------------- */

/* Path of a message from machine node a to node b on the switch tree as
 * directed link ids (see trd_topo_path_links); used for contention. */
typedef struct trd_verify_opts {
    trd_topo_t topo;          /* NULL: no contention check */
    int check_contention;     /* check schedules that claim contention freedom */
} trd_verify_opts;

/* Execute s symbolically on shape sh and prove that
 *  - every rank ends with every element of its receive buffer reduced over
 *    all ranks exactly once (in rank order when !s->commutative);
 *  - sends and receives match one for one with equal lengths, and the ranks
 *    never wait on each other in a cycle (no deadlock, no truncation);
 *  - no op reads a range of a temporary, segment or receive buffer before it
 *    is written, and no rank reads another's segment range that the owner
 *    has not written before a barrier both passed, or overwrites one that
 *    another reads between the same barriers;
 *  - for s->contention_free with opts->topo, no two inter-node messages of
 *    one round use the same directed link [TREE §2].
 * Returns 0, or -1 with why naming the rank, its op index, the round and the
 * element, e.g. "rank 3, op 7 (round 2): recv from 2 of 5 elements, but rank
 * 2 sends 4". */
int trd_sched_verify(const trd_sched *s, const trd_shape *sh, const trd_verify_opts *opts,
                     char *why, size_t whylen);

/* ---- Cost model (verify.c, the same execution) ------------------------------ */

typedef struct trd_cost_model {
    trd_topo_t topo;          /* link classes, injection bandwidths, the switch tree */
    double gamma_s_per_byte;  /* reduction cost [MPICH §3] */
    double alpha_r_ratio;     /* where a link gives no alpha_r: each further message in flight
                               * from one rank costs this fraction of its latency [RM Eq. 3];
                               * 0.25 */
} trd_cost_model;

/* Predicted seconds of schedule s on shape sh (sh->machine_node set) for
 * elements of extent bytes: the latest rank's clock after executing every
 * rank as the verifier does, where
 *   - a message starts when both ranks have posted it and takes alpha +
 *     bytes beta of its link (package link, node link between packages, or
 *     the switch-tree path between nodes: latencies summed, slowest
 *     bandwidth) [MPICH §3, TREE §2];
 *   - beta is multiplied by the most messages of its round that share a
 *     directed link of its path, or by the messages of its round leaving its
 *     node times the path bandwidth over the node's injection bandwidth,
 *     whichever is larger (max-rate [NAP Eq. 3]);
 *   - k messages posted together cost one latency plus (k-1) alpha_r,
 *     the largest of their links' (a link's alpha_r_s, or alpha_r_ratio
 *     times its latency) [RM Eq. 3];
 *   - a copy or reduce costs bytes beta of the link to the buffer's owner
 *     (the package link for the rank's own) plus bytes gamma for a reduce;
 *   - a barrier releases the node one package latency after the last
 *     arrival [FLEX §3.1].
 * Returns the time, or -1 with why (a schedule that does not run). */
double trd_sched_cost(const trd_sched *s, const trd_shape *sh, const trd_cost_model *cm,
                      size_t extent, char *why, size_t whylen);

/* Directed link ids of the path from machine node a to b (see ring.c):
 * writes at most cap ids to links; returns how many the path has. */
int trd_topo_path_links(trd_topo_t t, int a, int b, int *links, int cap);

#endif
