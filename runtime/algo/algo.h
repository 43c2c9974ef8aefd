/* The algorithm registry: every algorithm treeduce can run, one descriptor
 * each, in one table (registry.c).  Environment parsing, the runtime's
 * selection, the generator's selection, verification, --explain, the exports
 * and the emitter all iterate this table; nothing else enumerates algorithms
 * or compares them by index.  Pure C, no MPI.
 *
 * An algorithm is one file of this folder: its planner (the schedule IR of
 * one rank, sched.h), its parameters, when it applies, its closed-form cost,
 * its mapping onto the MPI libraries' own algorithms and what --explain says
 * of its plan.  The file's head comment states the algorithm, its cost in
 * alpha-beta-gamma form and its source.  algos.h declares every descriptor.
 * Citation keys ([NAP §III-A], [TREE §3.2], ...): see REFERENCES.md.
 */
#ifndef TRD_ALGO_H
#define TRD_ALGO_H

#include <stddef.h>
#include <stdio.h>

#include "trd_sched.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Cost of one link class [MPICH §3, NAP Eq. 3]. */
typedef struct trd_link_cost {
    double latency_s;     /* alpha: seconds per message per hop */
    double bandwidth_Bps; /* 1/beta: bytes per second */
    double injection_Bps; /* R_N, max-rate injection bandwidth of a node; 0 = unlimited */
    double alpha_r_s;     /* alpha_r: latency each further message in flight from one rank
                           * adds [RM §3, Eq. 3]; 0 = not given (the model uses the
                           * topology's alpha_r ratio times the latency) */
} trd_link_cost;

/* Steps of a node-distance-doubling exchange the closed forms know the
 * switch tree's sharing for: node distances 1 .. 2^(TRD_LEVELS_MAX_LG-1). */
#define TRD_LEVELS_MAX_LG 32

/* The levels of a machine the closed forms weigh [MPICH §3, NAP Eq. 3-6]. */
typedef struct trd_levels {
    trd_link_cost intra;      /* between two ranks of one node (worst of package/node links) */
    trd_link_cost ring_inter; /* slowest link any ring neighbour pair crosses */
    trd_link_cost far_inter;  /* the most expensive node-to-node path */
    double gamma_s_per_byte;  /* reduction */
    /* Link sharing in the switch tree [TREE §2]: far_load[k] is, when every
     * node v (ring order) sends one message to node v xor 2^k, the most
     * messages one directed link of the tree carries, each weighted by
     * far_inter's bandwidth over that link's (>= 1; 0: not known, taken
     * as 1).  An oversubscribed tree (16 nodes under a leaf switch, one
     * uplink) has 16 for the steps that leave the leaf switches. */
    float far_load[TRD_LEVELS_MAX_LG];
    /* The latency of the dearest path between nodes v and v xor 2^k, the
     * level a step at that distance climbs to (0: not known, far_inter's). */
    float far_latency_s[TRD_LEVELS_MAX_LG];
} trd_levels;

/* ---- Helpers of the closed forms [MPICH §3] ---- */

/* ceil(log2(n)) for n >= 1. */
static inline double trd_lg(int n)
{
    int s = 0;
    while ((1 << s) < n)
        s++;
    return s;
}

/* One message of b bytes over link l: alpha + b beta. */
static inline double trd_msg_s(trd_link_cost l, double b)
{
    return l.latency_s + b / l.bandwidth_Bps;
}

/* Seconds per byte when `concurrent` ranks of a node send over link l at
 * once: the link's own rate or the node's share of injection, whichever is
 * slower (max-rate [NAP Eq. 3]). */
static inline double trd_beta_eff(trd_link_cost l, int concurrent)
{
    double b = 1.0 / l.bandwidth_Bps, inj = l.injection_Bps > 0 ? concurrent / l.injection_Bps : 0;
    return inj > b ? inj : b;
}

/* Seconds per byte of step k of an exchange across nodes at node distance
 * 2^k in which conc ranks of every node send at once over far_inter: the
 * most loaded directed link of the tree carries conc x far_load[k] of those
 * messages, the node's injection bandwidth conc of them, whichever is
 * slower [TREE §2, NAP Eq. 3]. */
static inline double trd_beta_step(const trd_levels *l, int k, int conc)
{
    double load = k >= 0 && k < TRD_LEVELS_MAX_LG && l->far_load[k] > 1 ? l->far_load[k] : 1;
    double link = conc * load / l->far_inter.bandwidth_Bps;
    double inj = l->far_inter.injection_Bps > 0 ? conc / l->far_inter.injection_Bps : 0;
    return link > inj ? link : inj;
}

/* Recursive doubling across nodes: ceil(lg nodes) steps, each of one
 * latency of far_inter and m bytes from each of conc ranks of every node
 * (trd_beta_step), reduced [MPICH §4, TREE §2]. */
static inline double trd_rd_nodes_s(const trd_levels *l, int nodes, int conc, double m)
{
    double t = 0;
    for (int k = 0; k < (int)trd_lg(nodes); k++)
        t += l->far_inter.latency_s + m * trd_beta_step(l, k, conc) + m * l->gamma_s_per_byte;
    return t;
}

/* Recursive halving + doubling across nodes: nsteps steps at node
 * distances 1, 2, 4, ..., their parts halving from m/2, each both ways, with
 * conc ranks of every node at once (trd_beta_step), reduced [MPICH §4.3,
 * TREE §2]. */
static inline double trd_halving_nodes_s(const trd_levels *l, int nsteps, int conc, double m)
{
    double t = 0;
    for (int k = 0; k < nsteps; k++) {
        m /= 2;
        t += 2 * (l->far_inter.latency_s + m * trd_beta_step(l, k, conc)) + m * l->gamma_s_per_byte;
    }
    return t;
}

/* The composites' node phases in shared memory: one step each way. */
static inline double trd_node_phases_s(const trd_levels *l, int ppn, double m)
{
    return ppn > 1 ? 2 * trd_msg_s(l->intra, m) + m * l->gamma_s_per_byte : 0;
}

/* Descriptor flags. */
enum {
    TRD_ALGO_CANDIDATE = 1,       /* weighed by the size selection across nodes (has model) */
    TRD_ALGO_CONTENTION_FREE = 2, /* its schedules claim contention freedom [TREE §2] */
    TRD_ALGO_SPLITS = 4,          /* cuts the vector into a block per rank */
    TRD_ALGO_NODE_PHASES = 8,     /* plans differently with and without shared memory */
    TRD_ALGO_QUADRATIC = 16,      /* its schedule has p^2 messages over p ranks (the ring): the
                                   * generator times and verifies it on fewer ranks */
    TRD_ALGO_WHOLE = 32,          /* plans calls with trd_call.whole (user-defined ops): every
                                   * reduce covers the whole vector, or the planner refuses */
    TRD_ALGO_LIBRARY = 64,        /* "mpi": the MPI library's own routine (PMPI_*); no schedule,
                                   * trd_plan refuses it, the runtime calls the library */
    TRD_ALGO_RANK_ORDER = 128,    /* its messages follow the ranks' numbers, not the ring order
                                   * (MPICH's pieces, repro): what it costs depends on how the
                                   * ranks are placed, and the tuner times it in a second rank
                                   * order too, as it does the library's routine */
};

/* Open MPI's coll_tuned_allreduce_algorithm ids, the numbers of its dynamic
 * rules file (coll_tuned_allreduce_decision.c); trd_algo.ompi holds one. */
enum trd_ompi_allreduce {
    TRD_OMPI_IGNORE = 0, /* Open MPI's own decision; a descriptor that names none */
    TRD_OMPI_BASIC_LINEAR = 1,
    TRD_OMPI_NONOVERLAPPING = 2,
    TRD_OMPI_RECURSIVE_DOUBLING = 3,
    TRD_OMPI_RING = 4,
    TRD_OMPI_SEGMENTED_RING = 5,
    TRD_OMPI_RABENSEIFNER = 6,
    TRD_OMPI_ALLGATHER_REDUCE = 7, /* Open MPI 5.x only */
    TRD_OMPI_ALLREDUCE_COUNT
};

/* Open MPI's name of id ("recursive_doubling"), or NULL for no such id. */
const char *trd_ompi_allreduce_name(int id);

/* The message fmt, ... written into err (errlen bytes, truncated, always
 * terminated; nothing where err is NULL or errlen is 0): the one way the
 * planners, their parameter parsers and the generator's tools compose an
 * error for their caller to place. */
void trd_errf(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Largest parameter text a descriptor accepts. */
#define TRD_PARAMS_MAX 48

struct trd_algo;

/* One size range of the selection over the whole machine: [from, below)
 * bytes (below SIZE_MAX: no end), algorithm alg with parameters params. */
typedef struct trd_explain_range {
    size_t from, below;
    const struct trd_algo *alg;
    const char *params;
} trd_explain_range;

/* The machine as an algorithm's explain hook sees it: the generator's
 * topology, nodes 0..nnodes-1 in ring order, through callbacks (no
 * algorithm reads a topology), and the plan's ranges over it. */
typedef struct trd_explain_machine {
    int nnodes, ppn; /* ppn: cores of the smallest node */
    const void *ctx; /* the callbacks' first argument */
    const char *(*node_name)(const void *ctx, int v);
    /* The lowest common switch of nodes first..last: its name, its depth
     * (0 the root) into *depth. */
    const char *(*span_switch)(const void *ctx, int first, int last, int *depth);
    int nranges;
    const trd_explain_range *range;
} trd_explain_machine;

typedef struct trd_algo {
    const char *name; /* as TREEDUCE_ALGORITHM and the tables spell it: "ring", "shm:rx" */
    int coll;         /* enum trd_coll */
    unsigned flags;
    const char *source; /* the paper and section, e.g. "[TREE §3.2]" */
    const char *levels; /* one line for --explain: what runs on a node, what across nodes */
    size_t params_size; /* bytes of the parsed parameters (0: none) */
    /* Parse text ("" the default) for shape sh into out (params_size bytes):
     * TRD_OK, or TRD_ERR_INPUT with why ("rm schedule 'a5' for 6 ranks:
     * ...").  NULL: the algorithm takes no parameters. */
    int (*parse)(const char *text, const trd_shape *sh, void *out, char *why, size_t whylen);
    /* NULL if the algorithm runs call on sh with the parsed params, else why
     * not, e.g. "needs a commutative operation" (static text).  NULL: any. */
    const char *(*refuse)(const trd_shape *sh, const trd_call *call, const void *params);
    /* Append the ops of rank b->rank to b->s.  Returns TRD_OK,
     * TRD_ERR_INPUT with b->fail saying why, or TRD_ERR_NOMEM. */
    int (*plan)(trd_sb *b, const void *params);
    /* Allreduce over a rank list, in place on recvbuf[base, base+count), for
     * the composites (NULL: not usable so): ranks[0..n), me this rank's index;
     * rounds from round on.  TRD_OK, TRD_ERR_INPUT (b->fail) or
     * TRD_ERR_NOMEM. */
    int (*list)(trd_sb *b, int round, const int *ranks, int n, int me, size_t base, size_t count);
    /* Closed form: predicted seconds for bytes bytes over nodes x ppn ranks
     * [MPICH §3]; candidates only. */
    double (*model)(const trd_levels *l, int nodes, int ppn, double bytes);
    /* The parameters whose closed form is the lowest at bytes over nodes x ppn
     * ranks (those model weighs), as text into params (TRD_PARAMS_MAX bytes):
     * the generator cuts the algorithm's ranges where they change (NAP's
     * radix list).  NULL: one closed form for every parameter. */
    void (*model_params)(const trd_levels *l, int nodes, int ppn, double bytes, char *params);
    /* The parameter strings worth searching on shape sh (at most cap), for the
     * generator [RM §4.1, FLEX §2.1.3]; NULL: none. */
    int (*candidates)(const trd_shape *sh, char (*cand)[TRD_PARAMS_MAX], int cap);
    /* The nearest algorithm of the MPI libraries: an MPICH 4.x CSEL container
     * ("recursive_doubling", "reduce_scatter_allgather", "smp") and Open MPI's
     * coll_tuned_allreduce_algorithm id (recursive doubling, ring or
     * Rabenseifner's); allreduce only. */
    const char *mpich;
    enum trd_ompi_allreduce ompi;
    /* For --explain: the algorithm's own lines about its plan over machine m
     * (NAP's groups per step).  TRD_OK or TRD_ERR_NOMEM.  NULL: none. */
    int (*explain)(FILE *f, const trd_explain_machine *m);
    /* One line for the generated files' banner about its plan over nodes x
     * ppn ranks (no final period), as snprintf.  NULL: none. */
    int (*summary)(char *buf, size_t len, int nodes, int ppn);
} trd_algo;

/* Every algorithm, NULL-terminated, in a fixed order: the candidates across
 * nodes first, in the order the size selection lists them; the MPI
 * library's routines (TRD_ALGO_LIBRARY, one per collective) last. */
extern const trd_algo *const trd_algos[];

/* The algorithm of collective coll called name (len bytes of it), or NULL. */
const trd_algo *trd_algo_find(int coll, const char *name, size_t len);

/* "NAME" or "NAME:PARAMS" for collective coll: the algorithm whose name is
 * the longest that spec starts with (followed by ':' or the end), *params the
 * text after that ':' ("" none); NULL if no name matches. */
const trd_algo *trd_algo_parse(int coll, const char *spec, const char **params);

/* The names of coll's algorithms joined by ", " into buf (for messages). */
void trd_algo_names(int coll, char *buf, size_t len);

/* Plan algorithm a with parameter text params for call on shape sh: every
 * rank's ops (rank -1) or rank's only (the runtime).  Refuses, before
 * planning, what a->refuse or a->parse refuse.  Returns TRD_OK;
 * TRD_ERR_INPUT with why (refused, or the planner's b->fail, or "cannot
 * plan this call" where a planner fails without TRD_ERR_NOMEM or a word);
 * TRD_ERR_NOMEM with why "out of memory".  s is empty on an error. */
int trd_plan(trd_sched *s, const trd_algo *a, const char *params, const trd_shape *sh,
             const trd_call *call, int rank, char *why, size_t whylen);

/* A refuse for the algorithms that need a commutative operation. */
const char *trd_refuse_noncommutative(const trd_shape *sh, const trd_call *call,
                                      const void *params);

/* For the planners: allreduce's start, recvbuf = sendbuf unless in place. */
void trd_sb_input_to_recv(trd_sb *b);

#ifdef __cplusplus
}
#endif
#endif
