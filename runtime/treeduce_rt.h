/* treeduce runtime interface for generated code.
 *
 * Generated routines (generated/<machine>/trd_<machine>.c) include this header
 * and MPI only.  Applications use treeduce.h and the generated header.
 * Every function returns an MPI error code (MPI_SUCCESS on success) unless it
 * says otherwise.
 */
#ifndef TREEDUCE_RT_H
#define TREEDUCE_RT_H

#include <mpi.h>
#include <stddef.h>

#include "trd_nap.h"
#include "trd_select.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Reduction kernels (runtime/kernels.c) ---------------------------- */

/* inout[i] = in[i] op inout[i] for i in [0, count): the argument order of
 * MPI_Reduce_local, so that for a non-commutative op "in" is the left operand.
 * count in elements. */
typedef void (*trd_kernel_fn)(const void *in, void *inout, size_t count);

/* The kernel for a predefined (named) datatype and predefined op, or NULL if
 * the pair is not one MPI defines (e.g. MPI_BAND on MPI_DOUBLE), the type is
 * not predefined, or op is a user op.  Covers every predefined C and
 * fixed-width integer type, floating types incl. long double and the C complex
 * types (SUM, PROD only), MPI_C_BOOL, MPI_BYTE (bitwise ops), and the
 * MINLOC/MAXLOC pair types (MPI_FLOAT_INT, MPI_DOUBLE_INT, MPI_LONG_INT,
 * MPI_2INT, MPI_SHORT_INT, MPI_LONG_DOUBLE_INT) with MPI's tie rule (the
 * smaller index wins). */
trd_kernel_fn trd_kernel_lookup(MPI_Datatype type, MPI_Op op);

/* A reduction operator resolved once per call: the kernel if there is one,
 * otherwise MPI_Reduce_local with (op, type). */
typedef struct trd_reducer {
    trd_kernel_fn fn; /* NULL: use MPI_Reduce_local */
    MPI_Op op;
    MPI_Datatype type;
    size_t extent; /* bytes per element */
    int commutative;
} trd_reducer;

/* Fill r for (type, op).  Returns MPI_SUCCESS, or MPI_ERR_TYPE if type is not
 * a predefined datatype (the caller then falls back to the PMPI routine). */
int trd_reducer_init(trd_reducer *r, MPI_Datatype type, MPI_Op op);

/* Extent in bytes of a predefined (named) datatype: MPI_SUCCESS, or
 * MPI_ERR_TYPE for a derived type. */
int trd_type_extent(MPI_Datatype type, size_t *extent);

/* Nonzero if op is one of MPI's predefined operations. */
int trd_op_is_predefined(MPI_Op op);

/* inout[0:count) = in[0:count) op inout[0:count); count in elements. */
int trd_reduce(const trd_reducer *r, const void *in, void *inout, size_t count);


/* ---- Machine tables (emitted by treeduce-gen) ------------------------- */

/* What the generated code knows about its machine.  All arrays are static
 * tables of the generated file. */
typedef struct trd_machine {
    const char *name;
    int nnodes;
    const char *const *node_names; /* [nnodes] node names in DFS ring order [TREE §3.2] */
    const int *name_order;         /* [nnodes] ring indices sorted by strcmp of names */
    const int *node_cores;         /* [nnodes] cores of each node */
    const int *node_packages;      /* [nnodes] packages (sockets) of each node */
    size_t nap_max_bytes_1node;    /* one node without shared memory: NAP below, ring from */
    /* communicators over several nodes, commutative ops: per planned shape
     * (nodes x ranks per node), the first range with bytes < below; from the
     * alpha-beta-gamma model of the machine (trd_shape_pick finds a
     * communicator's shape) */
    const trd_shape_choice *shapes;
    int nshapes;
} trd_machine;

/* Ring index of the node called name, or -1 (binary search in name_order). */
int trd_machine_find_node(const trd_machine *m, const char *name);

/* ---- Algorithms and environment (runtime/env.c) ----------------------- */

enum trd_algorithm {
    TRD_ALG_AUTO = 0,     /* chosen by message size and communicator shape */
    TRD_ALG_RING,         /* ring reduce_scatter + ring allgather [TREE §3.2] */
    TRD_ALG_NAP,          /* node-aware parallel [NAP Alg. 1] */
    TRD_ALG_RD,           /* recursive doubling with non-power-of-two fold [MPICH §4] */
    TRD_ALG_SHM,          /* one node, shared memory; params pick the intra-node
                           * algorithm [FLEX §2.1-2.3] */
    TRD_ALG_RM,           /* recursive multiplying; params: schedule string [RM §4] */
    TRD_ALG_RABENSEIFNER, /* recursive halving reduce_scatter + recursive doubling
                           * allgather [MPICH §4, RM §2] */
    TRD_ALG_SMP,          /* node reduce, node leaders allreduce, node bcast [NAP §II-A] */
    TRD_ALG_FLEX,         /* node reduce_scatter, allreduce per lane across nodes,
                           * node allgather; params: the lane algorithm [FLEX §2.1.2] */
    TRD_ALG_HRING,        /* FLEX composite with the DFS ring across nodes [TREE §3.2] */
    TRD_ALG_MAX
};

/* Name of an algorithm ("auto", "ring", "nap", "rd", "shm", "rm",
 * "rabenseifner", "smp", "flex", "hring"). */
const char *trd_algorithm_name(int alg);

/* Parse an algorithm specification "NAME" or "NAME:PARAMS" (NAME as
 * trd_algorithm_name gives it; PARAMS are the algorithm's own, e.g. "rm:a3,a2",
 * "shm:tree:4", "flex:rd").  Returns the algorithm and sets *params to the text
 * after the first ':' ("" when there is none), or returns -1 if NAME is not
 * an algorithm. */
int trd_algorithm_parse(const char *spec, const char **params);

/* TREEDUCE_ALGORITHM, parsed once: TRD_ALG_AUTO when unset or empty.  An
 * unknown name is reported once on stderr and treated as auto. */
int trd_env_algorithm(void);
/* The PARAMS part of TREEDUCE_ALGORITHM ("" when none). */
const char *trd_env_algorithm_params(void);
/* TREEDUCE_DISABLE=1: every call goes to the PMPI routine. */
int trd_env_disabled(void);
/* TREEDUCE_VERBOSE: 0 quiet; 1 say why a call falls back, once per reason;
 * 2 also name each algorithm the first time it runs. */
int trd_env_verbose(void);

/* Record that `routine` on machine m falls back to the MPI library because of
 * why; with TREEDUCE_VERBOSE=1 prints "treeduce[<machine>]: <routine> uses the
 * MPI library's routine: <why>" on stderr, once per distinct why per process. */
void trd_fallback_note(const trd_machine *m, const char *routine, const char *why);

/* With TREEDUCE_VERBOSE=2, print "treeduce[<machine>]: <routine> runs
 * <alg>[:<params>]" the first time routine runs algorithm alg (a name) with
 * params (NULL or "": none) in this process.  Formats nothing otherwise, so
 * it costs one flag test on the hot path. */
void trd_choice_note(const trd_machine *m, const char *routine, const char *alg,
                     const char *params);

/* ---- Communicator cache (runtime/comm.c) ------------------------------ */

/* A communicator as treeduce sees it: its ranks in ring order (nodes in DFS
 * order, ranks of one node consecutive, by rank within the node), and this
 * rank's plan.  Built on first use, cached as an attribute, freed with the
 * communicator. */
typedef struct trd_comm {
    const trd_machine *machine;
    MPI_Comm comm;      /* private duplicate: treeduce traffic never meets the user's */
    int fallback;       /* nonzero: the communicator is not handled (see why) */
    char why[200];
    int size, rank;
    int *ring;          /* [size] ring position -> rank */
    int pos;            /* this rank's ring position */
    int nnodes;         /* machine nodes this communicator uses */
    int *node_first;    /* [nnodes+1] ring position of each node's first rank */
    int node;           /* this rank's node, 0..nnodes-1 (ring order) */
    int local, ppn;     /* this rank's index on its node, ranks on its node */
    int ppn_min, ppn_max;
    /* the size ranges of the machine's planned shape nearest this
     * communicator's (trd_shape_pick with nnodes, ppn_max) */
    const trd_size_choice *choices;
    int nchoices;
    int choices_ranks; /* ranks of that shape (its parameters fit only these) */
    /* packages of this rank's node that hold ranks of the communicator: local
     * ranks are spread over the node's packages in order (socket-major, as the
     * DFS ring numbers cores [TREE Lemma 5]); package q holds local ranks
     * package_first[q] .. package_first[q+1]-1 */
    int npackages, package;
    int *package_first; /* [npackages+1] */
    /* NAP plan of this rank [NAP Alg. 1]; lanes = ppn_min */
    int nap_lanes, nap_radix, nap_steps;
    int *nap_nsub, *nap_sub;  /* [nap_steps] subgroups in the group, own subgroup */
    int *nap_recv_off;        /* [nap_steps+1] offsets into nap_recv_* */
    int *nap_recv_rank, *nap_recv_sub;
    int *nap_send_off;        /* [nap_steps+1] offsets into nap_send_rank */
    int *nap_send_rank;
    /* scratch memory reused across calls */
    void *scratch;
    size_t scratch_bytes;
    /* shared memory among the ranks of this rank's node, or NULL */
    struct trd_shm *shm;
} trd_comm;

/* The cached description of comm for machine m, building it on first use
 * (collective over comm on first use).  *out is never NULL on success; check
 * (*out)->fallback.  Returns MPI_SUCCESS or an MPI error code. */
int trd_comm_get(MPI_Comm comm, const trd_machine *m, trd_comm **out);

/* Scratch buffer of at least bytes bytes owned by c (valid until the next
 * call), or NULL on out-of-memory. */
void *trd_comm_scratch(trd_comm *c, size_t bytes);

/* Comm rank of the rank at ring position pos. */
static inline int trd_ring_rank(const trd_comm *c, int pos)
{
    return c->ring[pos];
}

/* Comm rank of local rank `local` on node `node`. */
static inline int trd_node_rank(const trd_comm *c, int node, int local)
{
    return c->ring[c->node_first[node] + local];
}

/* Wait for n requests (statuses ignored).  Returns an MPI error code. */
int trd_waitall(int n, MPI_Request *reqs);

#define TRD_TAG 0x7e1d

/* ---- Shared memory among the ranks of a node (runtime/shm.c) ------------ */

/* Bytes of one data slot per rank; messages stream through it in chunks. */
#define TRD_SHM_SLOT_BYTES (256 * 1024)

/* Create the node segment for c (collective over c->comm; called once by
 * trd_comm_get).  One window per node from MPI_Win_allocate_shared, so MPI
 * releases it even when a job aborts.  Leaves c->shm NULL, and returns
 * MPI_SUCCESS, where the ranks of one node cannot share memory (virtual
 * placement across real hosts) or TREEDUCE_SHM=0. */
int trd_shm_create(trd_comm *c);

/* Release c->shm (collective over the node). */
void trd_shm_free(trd_comm *c);

/* Allreduce among the ranks of this node through the segment [FLEX §2.1,
 * one step of radix ppn]: ranks 0..ncontrib-1 of the node (local order)
 * contribute count elements from sendbuf (MPI_IN_PLACE: recvbuf), every rank
 * of the node gets the reduction in recvbuf.  Messages stream through the
 * segment in chunks with double buffering; each chunk is reduce-scattered
 * (every rank reduces 1/ppn of it) and then gathered, or, for small chunks,
 * reduced whole by every rank.  The reduction runs in local rank order
 * (x_0 op x_1 op ...), so non-commutative ops are correct when local order is
 * rank order, and every rank gets the same bits.  Synchronisation is by
 * per-rank epoch counters (release/acquire), no barrier calls.
 * Cost = 3 alpha_shm + (2 + 1/ppn) m beta_mem + (ncontrib-1)/ppn m gamma
 * Returns MPI_SUCCESS or MPI_ERR_NO_MEM. */
int trd_shm_allreduce(trd_comm *c, const void *sendbuf, void *recvbuf, int count,
                      const trd_reducer *red, int ncontrib);

/* The pieces on one node, through the same segment and counters; ranks and
 * roots are local ranks (on a one-node communicator: comm ranks).  Reductions
 * run in local rank order, so non-commutative ops are right.  Each returns
 * MPI_SUCCESS or MPI_ERR_TYPE (an element larger than a slot).
 *
 * Reduce to root: count elements from sendbuf (MPI_IN_PLACE at root:
 * recvbuf); recvbuf significant at root only.  [FLEX §2.3, reduce half of
 * the recursive exchange]  Cost = 3 alpha_shm + 2 m beta_mem + (p-1)/p m gamma */
int trd_shm_reduce(trd_comm *c, const void *sendbuf, void *recvbuf, int count,
                   const trd_reducer *red, int root);
/* Reduce_scatter_block: rank i gets block i (recvcount elements) of the
 * reduction of the p*recvcount elements of sendbuf (MPI_IN_PLACE: recvbuf).
 * Cost = 2 alpha_shm + 2 m beta_mem + (p-1)/p m gamma, m = p*recvcount*extent */
int trd_shm_reduce_scatter_block(trd_comm *c, const void *sendbuf, void *recvbuf, int recvcount,
                                 const trd_reducer *red);
/* Allgather of count elements (extent bytes) per rank into recvbuf in rank
 * order; MPI_IN_PLACE: this rank's block is already in recvbuf.
 * Cost = 2 alpha_shm + (1 + p) (m/p) beta_mem, m = p*count*extent */
int trd_shm_allgather(trd_comm *c, const void *sendbuf, void *recvbuf, int count, size_t extent);
/* Bcast of count elements (extent bytes) from root.
 * Cost = 2 alpha_shm + 2 m beta_mem */
int trd_shm_bcast(trd_comm *c, void *buf, int count, size_t extent, int root);

/* Block i of n when count elements of extent bytes are split for n ranks:
 * elements [*lo, *hi).  Blocks are whole cache lines (64 bytes) where the
 * element size allows, so no two ranks write one line and no piece is smaller
 * than a line [FLEX §2.1.3]; with few elements the last blocks are empty. */
void trd_block_range(size_t count, size_t extent, int n, int i, size_t *lo, size_t *hi);
/* Elements in the largest of those n blocks. */
size_t trd_block_max(size_t count, size_t extent, int n);

/* The node phases of the composite allreduces [FLEX §2.1.2]: lanes are local
 * ranks 0..nlanes-1 (1 <= nlanes <= ppn), lane l owns block l of
 * trd_block_range(count, extent, nlanes, l).
 *
 * Reduce_scatter to the lanes: every rank of the node contributes buf[0:count);
 * afterwards lane l holds, in buf at block l's offsets, block l of the
 * reduction over the node's ranks in local order (the rest of buf is
 * unspecified); ranks that are not lanes keep their buf.
 * Cost = 2 alpha_shm + (1 + 1/nlanes) m beta_mem + (ppn-1)/nlanes m gamma */
int trd_shm_reduce_scatter_lanes(trd_comm *c, void *buf, int count, const trd_reducer *red,
                                 int nlanes);
/* Allgather from the lanes: lane l holds block l in buf; afterwards every rank
 * of the node holds buf[0:count).  Cost = 2 alpha_shm + 2 m beta_mem */
int trd_shm_allgather_lanes(trd_comm *c, void *buf, int count, size_t extent, int nlanes);

/* Allreduce on one node with the intra-node algorithm params names
 * (runtime/shm_intra.c) [FLEX §2.1-2.3]:
 *   "rx:F1,F2,..."  multi-radix recursive exchange, factor Fi in step i
 *                   (product = ppn), reduce_scatter then allgather;
 *   "tree:K"        radix-K tree reduce to local rank 0, then tree bcast;
 *   "cyclic"        cyclic shift reduce_scatter + allgather (commutative ops);
 *   "socket"        package-local steps first, then one cross-package step
 *                   on the package's pieces.
 * Same contract as trd_shm_allreduce with ncontrib = ppn.  Parameters that do
 * not fit (unknown text, factors whose product is not ppn, a non-commutative op
 * for cyclic) set *why and return MPI_SUCCESS before anything is touched, so
 * the caller can fall back. */
int trd_shm_allreduce_params(trd_comm *c, const void *sendbuf, void *recvbuf, int count,
                             const trd_reducer *red, const char *params, const char **why);

#ifdef __cplusplus
}
#endif
#endif
