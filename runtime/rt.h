/* Internal to the runtime: reduction kernels, environment switches,
 * communicator descriptions, the node segment and the executor of schedules.
 * Every function returns an MPI error code unless it says otherwise. */
#ifndef TRD_RT_H
#define TRD_RT_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <mpi.h>
#include <sched.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "algo.h"
#include "treeduce_rt.h"
#include "trd_select.h"

/* ---- Waiting ------------------------------------------------------------------------ */

/* spins before a wait starts yielding the core */
#define TRD_SPINS 2000

#if defined(SMPI_H)
/* Under SimGrid's SMPI every simulated rank runs in one OS thread, scheduled
 * cooperatively: a rank that spins never lets the writer it waits for run.
 * A wait round sleeps in simulated time instead (smpi_nanosleep: SMPI's
 * sleep, the benchmark timer paused), each round an eighth of the time
 * waited so far (10 ns at least, 100 us at most): a wait ends at most 1/8
 * late, and costs the simulation some 100 events, not one per fixed tick
 * (thousands of ranks polling every microsecond cost minutes of wall time).
 * *spins holds the nanoseconds waited so far. */
#define TRD_SMPI_POLL_MIN_NS 10u
#define TRD_SMPI_POLL_MAX_NS 100000u
/* SMPI's sleep in simulated time, with nanosleep's arguments and result. */
int smpi_nanosleep(const struct timespec *tp, struct timespec *t);
static inline void trd_relax(unsigned *spins)
{
    unsigned ns = *spins / 8;
    ns = ns < TRD_SMPI_POLL_MIN_NS   ? TRD_SMPI_POLL_MIN_NS
         : ns > TRD_SMPI_POLL_MAX_NS ? TRD_SMPI_POLL_MAX_NS
                                     : ns;
    struct timespec ts = {0, (long)ns};
    smpi_nanosleep(&ts, NULL);
    *spins = *spins < 4000000000u - ns ? *spins + ns : *spins;
}
#else
/* One round of a wait loop: spin, then yield after TRD_SPINS rounds (ranks
 * may outnumber cores).  *spins starts at 0 for each wait. */
static inline void trd_relax(unsigned *spins)
{
    if (++*spins < TRD_SPINS) {
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#elif defined(__aarch64__)
        __asm__ volatile("yield");
#endif
    } else {
        sched_yield();
    }
}
#endif

/* The tags on treeduce's private duplicates: TRD_TAG the runs' messages
 * and the setup's (comm.c); TRD_PROGRESS_TAG none (trd_library_progress). */
#define TRD_TAG 0x7e1d
#define TRD_PROGRESS_TAG (TRD_TAG + 1)

/* The MPI library advances its own requests (the application's nonblocking
 * calls) only inside MPI calls: a treeduce wait that makes none may stall a
 * peer blocked in the library on a request that needs this rank's progress,
 * while the peer's own progress is what the wait needs.  A probe that finds
 * nothing lets the library progress (comm: one of treeduce's duplicates).
 * It probes for a tag that no message carries: MPICH progresses only where
 * a probe finds nothing (MPID_Iprobe), and a probe for any tag found, again
 * and again, a message of treeduce's own that had come early (a peer's part
 * of a later run): the rank then never let the library progress, and a peer
 * blocked in MPI_Waitall on the library's collectives waited for ever
 * (MPICH's nonblocking3 at 4 ranks with message-based allreduces forced).
 * Under SMPI the simulated network delivers the library's messages without
 * it, and a probe would cost simulated time. */
static inline void trd_library_progress(MPI_Comm comm)
{
#if defined(SMPI_H)
    (void)comm;
#else
    int flag;
    PMPI_Iprobe(MPI_ANY_SOURCE, TRD_PROGRESS_TAG, comm, &flag, MPI_STATUS_IGNORE);
#endif
}

/* Rounds of a wait between two calls of trd_library_progress: the wait for
 * a peer that arrives at once costs no call into the library. */
#define TRD_PROGRESS_SPINS 64

/* ---- Reduction kernels (kernels.c) ------------------------------------------ */

/* inout[i] = in[i] op inout[i] for i in [0, count): the argument order of
 * MPI_Reduce_local, so that for a non-commutative op "in" is the left operand.
 * count in elements. */
typedef void (*trd_kernel_fn)(const void *in, void *inout, size_t count);

/* The kernel for a predefined (named) datatype and predefined op, or NULL if
 * the MPI library's MPI_Reduce_local rejects the pair (e.g. MPI_BAND on
 * MPI_DOUBLE; asked once per pair), the type is not predefined, op is a user
 * op, or treeduce has no kernel for the pair.  Works with any MPI library
 * (handles compared with ==, looked up in a table built at the first call,
 * which must come after MPI_Init); thread-safe.  Covers every predefined C and
 * fixed-width integer type (unsigned MIN/MAX compared as unsigned), floating
 * types incl. long double and the C complex types (SUM, PROD only),
 * MPI_C_BOOL, MPI_BYTE (bitwise ops), the MINLOC/MAXLOC pair types with MPI's
 * tie rule (the smaller index wins), and the Fortran types MPICH computes as a
 * C type of their MPI_Type_size (INTEGER*, REAL, DOUBLE PRECISION, REAL4/8,
 * COMPLEX*, LOGICAL, CHARACTER, 2INTEGER, 2REAL, 2DOUBLE_PRECISION). */
trd_kernel_fn trd_kernel_lookup(MPI_Datatype type, MPI_Op op);

/* Whether MPI_Reduce_local accepts the predefined op on the predefined type:
 * the pairs without a kernel that a plan can still run through
 * MPI_Reduce_local.  Asked once per pair with count 0, with the error
 * handlers of MPI_COMM_WORLD and MPI_COMM_SELF set to return codes meanwhile,
 * and remembered; thread-safe.  MPI_REPLACE and MPI_NO_OP: never.  Returns 1
 * or 0. */
int trd_reduce_local_accepts(MPI_Datatype type, MPI_Op op);

/* A reduction operator resolved once per call: the kernel if there is one,
 * otherwise MPI_Reduce_local with (op, type). */
typedef struct trd_reducer {
    trd_kernel_fn fn; /* NULL: use MPI_Reduce_local */
    MPI_Op op;
    MPI_Datatype type;
    size_t extent; /* bytes per element */
    int commutative;
    MPI_Aint shift; /* MPI_Reduce_local: the type's origin is this far from an element's start */
} trd_reducer;

/* Fill r for (type, op).  Returns MPI_SUCCESS, or MPI_ERR_TYPE if type is not
 * a predefined datatype (the caller then falls back to the PMPI routine). */
int trd_reducer_init(trd_reducer *r, MPI_Datatype type, MPI_Op op);

/* Extent in bytes of a predefined (named) datatype: MPI_SUCCESS, or
 * MPI_ERR_TYPE for a derived type. */
int trd_type_extent(MPI_Datatype type, size_t *extent);

/* 1 if op is one of MPI's predefined operations (MPI_REPLACE and MPI_NO_OP
 * included), else 0. */
int trd_op_is_predefined(MPI_Op op);

/* inout[0:count) = in[0:count) op inout[0:count); count in elements. */
int trd_reduce_local(const trd_reducer *r, const void *in, void *inout, size_t count);

/* ---- Environment and notes (env.c) ---------------------------------------------- */

/* TREEDUCE_ALGORITHM, parsed once through the registry: the allreduce
 * algorithm and its parameters (*params), or NULL for auto (unset, empty,
 * "auto", or a name that is not an algorithm: reported once on stderr). */
const trd_algo *trd_env_algorithm(const char **params);
/* TREEDUCE_DISABLE=1: every call goes to the PMPI routine.  Returns 1 where
 * it is set, else 0 (read once per process, as the flags below). */
int trd_env_disabled(void);
/* TREEDUCE_REPRODUCIBLE=1: every allreduce runs the algorithm whose order
 * of reduction depends only on the communicator's size ("repro"), whatever
 * the selection or TREEDUCE_ALGORITHM would run.  Returns 1 or 0. */
int trd_env_reproducible(void);
/* TREEDUCE_VERBOSE: 0 quiet; 1 say why a call falls back, once per routine
 * and reason; 2 also name each algorithm the first time it runs.  Returns
 * the level, 0 where unset or not from 0 to 2. */
int trd_env_verbose(void);
/* TREEDUCE_SEGMENT_CALLS=N: a communicator's first N - 1 collective calls
 * go to the MPI library's routine; its N-th sets it up (its private
 * duplicate, one exchange), and a blocking call from then on makes its node
 * segment once TREEDUCE_SEGMENT_BYTES says (0 to 10^9; default
 * TRD_SEGMENT_CALLS; 1: set up at the first call; 0: set up and segment at
 * the first call of any kind), read once: every collective call asks. */
long long trd_env_segment_calls(void);
/* TREEDUCE_SEGMENT_BYTES=B: a communicator set up makes its node segment once
 * its calls have moved B bytes, each call counted as its bytes plus
 * TRD_SEGMENT_CALL_BYTES (0 to 2^62; default TRD_SEGMENT_BYTES; 0: at its
 * first blocking call), read once: every collective call asks. */
long long trd_env_segment_bytes(void);
/* TREEDUCE_ASYNC_PROGRESS=1: a thread advances treeduce's outstanding runs
 * (progress.c).  Returns 1 or 0, read once. */
int trd_env_async_progress(void);
/* TREEDUCE_BREAK=ALG:RANK:OP, for testing only: the planner's op OP of rank
 * RANK (of the communicator) is dropped from every plan of algorithm ALG, as
 * treeduce-gen --break-schedule drops it before verifying: the same broken
 * schedule that the generator refuses, run.  Returns 1 with ALG in alg (of
 * alglen bytes), 0 when unset or malformed (said once, as trd_env_number). */
int trd_env_break(char *alg, size_t alglen, int *rank, size_t *op);
/* The failures TREEDUCE_INJECT asks for (trd_env_inject). */
enum { TRD_INJECT_NOMEM = 1, TRD_INJECT_REFUSE, TRD_INJECT_LOWER_NOMEM };

/* TREEDUCE_INJECT=ALG:KIND, for testing only: every plan of algorithm ALG
 * fails as KIND says, through the paths a real failure takes: its planner
 * runs out of memory (TRD_INJECT_NOMEM: the call returns MPI_ERR_NO_MEM),
 * refuses the call without saying why (TRD_INJECT_REFUSE: the call falls
 * back), or the executor's allocation for it fails (TRD_INJECT_LOWER_NOMEM:
 * MPI_ERR_NO_MEM).  Returns KIND with ALG in alg (of alglen bytes), 0 when
 * unset or malformed (said once, as trd_env_number).  Read at each plan. */
int trd_env_inject(char *alg, size_t alglen);
/* The numeric variable name: its value where the whole text is a decimal
 * number from min to max, def where unset or empty.  Anything else is said
 * once per process on stderr at any TREEDUCE_VERBOSE, and def returned. */
long long trd_env_number(const char *name, long long min, long long max, long long def);

/* With TREEDUCE_VERBOSE=1 prints "treeduce[<machine>]: <routine> uses the MPI
 * library's routine: <why>" on stderr, once per routine and why per process. */
void trd_fallback_note(const trd_machine *m, const char *routine, const char *why);
/* At any TREEDUCE_VERBOSE, once per process and line: "treeduce[<machine>]:
 * the forced algorithm <alg>[:<params>] cannot run <routine> (<why>): the MPI
 * library's <routine> is called instead". */
void trd_forced_note(const trd_machine *m, const char *routine, const char *alg, const char *params,
                     const char *why);
/* With TREEDUCE_VERBOSE=1, print "treeduce[<machine>]: <msg>" on stderr,
 * once per distinct msg per process. */
void trd_note(const trd_machine *m, const char *msg);
/* With TREEDUCE_VERBOSE=2, print "treeduce[<machine>]: <routine> runs
 * <alg>[:<params>]" the first time routine runs alg with params in this
 * process.  One flag test otherwise. */
void trd_choice_note(const trd_machine *m, const char *routine, const char *alg,
                     const char *params);

/* ---- The node segment (shm.c) ------------------------------------------------------ */

#define TRD_CACHE_LINE 64

/* The head of every rank's segment: one cache line per counter, each written
 * only by its owner [FLEX §3.1]. */
struct trd_shm_ctrl {
    /* payloads of at most TRD_INLINE_BYTES travel in the line of the
     * counter that announces them, one cache miss instead of two (INL):
     * slot b at byte 32 b, aligned for any element (long double too) */
    _Alignas(TRD_CACHE_LINE) unsigned char inline_data[32 + TRD_INLINE_BYTES];
    _Atomic uint64_t ctr_in;                            /* TRD_CTR_IN */
    _Alignas(TRD_CACHE_LINE) _Atomic uint64_t ctr_red;  /* TRD_CTR_RED */
    _Alignas(TRD_CACHE_LINE) _Atomic uint64_t ctr_done; /* TRD_CTR_DONE */
    /* single-copy path: the process and the user buffers of this rank's
     * current call (its input, its recvbuf) */
    _Alignas(TRD_CACHE_LINE) int64_t pid;
    uint64_t src, dst;
    /* the call this rank runs: its first epoch base (low 32 bits) over its
     * bytes and collective (hashed), compared by the peers that wait on it */
    _Atomic uint64_t call;
};
/* Both inline slots (byte 0 and byte 32) hold any element aligned: a slot
 * at byte 8 misaligned long double (16-byte alignment), which UBSan reported. */
_Static_assert(offsetof(struct trd_shm_ctrl, inline_data) % _Alignof(max_align_t) == 0 &&
                   32 % _Alignof(max_align_t) == 0 && _Alignof(long double) <= 32,
               "inline payload slots must be aligned for every element type");

/* The segment of a node: one window from MPI_Win_allocate_shared, so MPI
 * releases it even when a job is killed. */
typedef struct trd_shm {
    MPI_Comm comm; /* the ranks of this node, local order */
    MPI_Win win;
    int n, me;       /* ranks of the node, this rank's index among them */
    int owner;       /* MPI_COMM_WORLD rank of the process that made it (SMPI: see trd_shm_free) */
    char **seg;      /* [n] each rank's segment: ctrl, then 2 slots of input + output areas */
    size_t slot;     /* bytes of one area (TRD_SEG_SLOT_BYTES) */
    uint64_t epoch;  /* epochs this node has used */
    uint64_t all_in; /* latest epoch whose IN this rank saw from every local rank */
} trd_shm;

/* The control head of local rank r's segment (0 <= r < s->n). */
static inline struct trd_shm_ctrl *trd_shm_ctrl(const trd_shm *s, int r)
{
    return (struct trd_shm_ctrl *)s->seg[r];
}

/* Single copy with local rank r's process: read bytes at its address remote
 * into local (process_vm_readv), or write local there (process_vm_writev).
 * MPI_SUCCESS, or MPI_ERR_OTHER if the kernel refuses. */
int trd_cma_read(const trd_shm *s, int r, uint64_t remote, void *local, size_t bytes);
int trd_cma_write(const trd_shm *s, int r, const void *local, uint64_t remote, size_t bytes);

/* ---- Communicators (comm.c) --------------------------------------------------------- */

typedef struct trd_plan_entry trd_plan_entry;
typedef struct trd_req trd_req;

/* Plans kept per communicator (least recently used replaced): enough for
 * every candidate of a one-node communicator timed interleaved
 * (treeduce-tune, bench --also all) without planning anew per call. */
#define TRD_PLAN_CACHE 32

/* A communicator as treeduce sees it: its shape (ranks in ring order: nodes
 * in DFS order, ranks of one node consecutive, by rank within the node), its
 * selection, its segment and its plans.  Built on first use, cached as an
 * attribute, freed with the communicator. */
typedef struct trd_comm {
    const trd_machine *machine;
    MPI_Comm comm; /* private duplicate: treeduce traffic never meets the user's */
    MPI_Comm user; /* the application's, where a request's error is raised; MPI_COMM_NULL once
                    * it is freed */
    int fallback;  /* nonzero: the communicator is not handled (see why) */
    char why[200];
    int size, rank;
    trd_shape shape; /* ring, node_first, node_of, machine_node, node_packages below */
    int *ring, *node_first, *node_of, *machine_node, *node_packages;
    int pos, node, local, ppn; /* this rank's ring position, node, index on it, its ranks */
    trd_selection sel;
    trd_shm *shm;        /* this rank's node segment, or NULL */
    unsigned long ncoll; /* collective calls so far, counted up to TREEDUCE_SEGMENT_CALLS */
    /* from its setup until its segment is made (trd_comm_get): the bytes its
     * calls have moved, each call also counted as TRD_SEGMENT_CALL_BYTES;
     * the calls counted; the count at which the ranks next compare them */
    uint64_t seg_bytes;
    unsigned long seg_calls, seg_check;
    int unbuilt;      /* its first calls, which go to the MPI library (fallback set): nothing
                       * built yet but the count (trd_comm_get) */
    int segment_made; /* the segment was made (or found impossible): not tried again */
    /* a nonblocking or persistent call on it since its setup (the same on
     * every rank at the same call): its blocking calls that go to the MPI
     * library take the library's nonblocking form (coll.c, library_form) */
    int nonblocking;
    trd_plan_entry *plans[TRD_PLAN_CACHE];
    int mru;             /* the plan used last */
    unsigned long calls; /* plan look-ups so far: the plan cache's clock (least recently used) */
    void *scratch;       /* the plans' temporaries, reused across calls */
    size_t scratch_bytes;
    _Atomic int refs;       /* the attribute and every request that holds it */
    trd_req *qhead, *qtail; /* runs of this communicator not yet completed, in call order */
    struct trd_comm *busy;  /* next communicator with queued runs (nbc.c) */
    int in_busy;
    /* every description alive, for the teardown when MPI_Finalize begins
     * (comm.c), in an order all ranks agree on: rank 0's world rank, then
     * the count of descriptions that process had built before */
    int order[2];
    struct trd_comm *live_next, **live_pnext; /* live_pnext NULL: not listed */
} trd_comm;

/* When trd_comm_get makes a communicator's node segment: a call of a kind
 * that needs it at once (a forced algorithm, a persistent request, the
 * tuner's candidates), a blocking call (from the TREEDUCE_SEGMENT_CALLS-th
 * call on), or another call (counted only).  TRD_SETUP_NOW or'ed into
 * TRD_SEGMENT_BLOCKING or TRD_SEGMENT_LATER: the call sets the communicator
 * up even among its first calls (the reproducible mode, whose results the
 * MPI library's routine would not give); TRD_SEGMENT_NOW implies it. */
enum { TRD_SEGMENT_NOW, TRD_SEGMENT_BLOCKING, TRD_SEGMENT_LATER, TRD_SETUP_NOW = 4 };

/* The count of a communicator's collective calls from which treeduce runs
 * them (TREEDUCE_SEGMENT_CALLS's default): the calls before go to the MPI
 * library's routine, and the one that reaches it sets the communicator up
 * (its node segment comes with TRD_SEGMENT_BYTES).  MPICH's node
 * collectives start their shared memory after as many calls
 * (MPIR_CVAR_POSIX_NUM_COLLS_THRESHOLD). */
#if defined(SMPI_H)
/* Under SMPI every call runs treeduce's schedule from the first: simulated
 * runs are scale studies and benchmarks that time a call after one warm-up,
 * and the MPI library there is SimGrid's model of one (docs/mpi-libraries.md). */
#define TRD_SEGMENT_CALLS 1
#else
#define TRD_SEGMENT_CALLS 5
#endif

/* The bytes a communicator's calls move, once it is set up, before it makes
 * its node segment (TREEDUCE_SEGMENT_BYTES's default), and what each call
 * counts for besides its bytes: the segment pays for itself about there.
 * Measured on 2 ranks of one node under MPICH 4.0.2 (docs/runtime.md): the
 * segment costs about 150 us and saves a blocking allreduce 0.36 us plus
 * 0.135 ns a byte, so 1 MiB is about its cost in bytes and 2 KiB a call's
 * fixed gain.  The ranks compare what they have counted (the largest
 * count decides, so that calls whose counts differ between ranks, which
 * are erroneous, cannot split them) at the blocking calls that double the
 * count since setup: one small allreduce a doubling, and at most twice the
 * calls that reached the bytes before the segment.  Under SMPI,
 * 0: every communicator has its segment from its first blocking call, as
 * its default of TRD_SEGMENT_CALLS has it set up at its first call. */
#if defined(SMPI_H)
#define TRD_SEGMENT_BYTES 0
#else
#define TRD_SEGMENT_BYTES (1 << 20)
#endif
#define TRD_SEGMENT_CALL_BYTES 2048

/* The cached description of comm for machine m, counting a call of kind
 * `when` (TRD_SEGMENT_* and TRD_SETUP_NOW): among the communicator's first
 * calls a description with only the count (unbuilt and fallback set: the
 * call goes to the MPI library's routine); at the call that sets it up the
 * description built, collective over comm; the node segment made where it
 * is due, collective over comm too (docs/runtime.md).  count elements of
 * type: what the call moves, counted towards the segment
 * (TREEDUCE_SEGMENT_BYTES).  *out is never NULL on success; check
 * (*out)->fallback.  Threads may call it at once for different
 * communicators (MPI_THREAD_MULTIPLE); calls for one communicator come
 * from one thread at a time, as MPI requires of its collectives. */
int trd_comm_get(MPI_Comm comm, const trd_machine *m, int when, MPI_Count count, MPI_Datatype type,
                 trd_comm **out);

/* comm's cached description if it has one (of any machine), else NULL;
 * nothing counted, built or made, not collective.  For a call that goes
 * to the MPI library before its setup but must know whether comm has had
 * nonblocking calls (coll.c, library_form). */
const trd_comm *trd_comm_peek(MPI_Comm comm);

/* A request holds c (trd_comm_ref) until it is freed (trd_comm_unref); the
 * last reference frees it, the attribute's included. */
void trd_comm_ref(trd_comm *c);
void trd_comm_unref(trd_comm *c);

/* When MPI_Finalize begins (comm.c): stop the progress thread, free every
 * request whose run is not under way, its plan and its hold on its
 * communicator (nbc.c). */
void trd_nbc_finalize(void);

/* One pass of progress over every outstanding run, as a wait makes it, for
 * the progress thread: 1 where some run advanced (an op completed, a run
 * ended); 0 where none could, or an application's thread makes a pass now;
 * 2, and no pass, where an application's thread made one since the last
 * poll (it is in a call or a wait that advances them: the thread leaves it
 * the core); -1 where none is outstanding (nbc.c).  Where it made a pass,
 * *on_node is 1 if every communicator with runs outstanding lies within one
 * node (the MPI library moves their messages through shared memory, a piece
 * per pass of its progress), else 0. */
int trd_nbc_poll(int *on_node);

/* ---- The progress thread (progress.c) ------------------------------------------- */

/* At a nonblocking or persistent call (m: its machine, for the notes): the
 * first such call of the process starts the progress thread where
 * TREEDUCE_ASYNC_PROGRESS=1 and MPI was initialized with
 * MPI_THREAD_MULTIPLE, and otherwise says why not once (TREEDUCE_VERBOSE=1).
 * Thread-safe. */
void trd_progress_start(const trd_machine *m);
/* 1 while the progress thread runs, else 0. */
int trd_progress_on(void);
/* A run was queued where none was outstanding: wake the sleeping thread. */
void trd_progress_wake(void);
/* Stop and join the thread (MPI_Finalize begins); nothing where none runs. */
void trd_progress_stop(void);

/* Scratch of at least bytes bytes owned by c, valid until the next call, or
 * NULL out of memory. */
void *trd_comm_scratch(trd_comm *c, size_t bytes);

/* Create the node segment for c (collective over c->comm; called once by
 * trd_comm_get, where it is due).  Leaves c->shm NULL and c->shape.shm 0 where the ranks of one
 * node cannot share memory (virtual placement across real hosts) or
 * TREEDUCE_SHM=0; probes the single-copy path (c->shape.cma).
 * trd_shm_free() releases c->shm (collective over the node's ranks; nothing
 * where c->shm is NULL).  trd_shm_none() gives c's shape no segment (local). */
int trd_shm_create(trd_comm *c);
void trd_shm_none(trd_comm *c);
void trd_shm_free(trd_comm *c);

/* Ring index of the node called name, or -1 where m has none (binary
 * search in name_order).  Not an MPI error code. */
int trd_machine_find_node(const trd_machine *m, const char *name);

/* This rank's node of m: ring index of the node named by entry world rank of
 * TREEDUCE_HOSTS, else by MPI_Get_processor_name (less a domain the topology
 * omits); host (hostlen bytes) gets the name.  Returns the index, or -1 with
 * why (whylen bytes) where the name cannot be read or is not a node of m. */
int trd_host_node(const trd_machine *m, char *host, size_t hostlen, char *why, size_t whylen);

/* ---- Plans and their execution (exec.c) ------------------------------------------- */

/* This rank's plan of algorithm a (parameter text params; a NULL: the one
 * trd_select chooses, without the measured ranges where no_tuned or while c
 * waits for its segment) for call on c: cached per communicator, planned
 * with the same planner the generator verified (registry.c: trd_plan with
 * this rank only) on the first call of its kind.  Returns MPI_SUCCESS with
 * *out, or with *out NULL and *why set (the algorithm refuses the call: the
 * caller falls back), or an error with *why untouched (MPI_ERR_NO_MEM where
 * the planner or the lowering ran out of memory: the call raises it). */
int trd_plan_get(trd_comm *c, const trd_algo *a, const char *params, const trd_call *call,
                 int no_tuned, trd_plan_entry **out, const char **why);

/* trd_plan_get's *why where the algorithm is "mpi" (TRD_ALGO_LIBRARY), chosen
 * by the selection or forced: no plan, the caller calls the MPI library's
 * routine without a forced note.  Compared by address. */
extern const char trd_why_library_chosen[], trd_why_library_forced[];

/* Why a communicator's first calls go to the MPI library's routine
 * (trd_comm_get's unbuilt description): said as a choice, at
 * TREEDUCE_VERBOSE=2, not as a refusal.  Compared by address. */
extern const char trd_why_first_calls[];

/* A request holds plan p across calls (trd_plan_pin) so that the cache does
 * not free it; trd_plan_release lets it go (freed if no longer cached). */
void trd_plan_pin(trd_plan_entry *p);
void trd_plan_release(trd_plan_entry *p);
/* Empty c's plan cache (plans still held by requests live on). */
void trd_plan_cache_free(trd_comm *c);
/* Bytes of the temporary p needs. */
size_t trd_plan_tmp_bytes(const trd_plan_entry *p);

/* A plan's algorithm; *params gets its parameter text. */
const trd_algo *trd_plan_algo(const trd_plan_entry *p, const char **params);

/* One execution of a plan, advanced op by op: resumable, so that it can be
 * run to the end at once (blocking calls) or advanced whenever it can move
 * (persistent and nonblocking collectives). */
typedef struct trd_run {
    trd_comm *c;
    trd_plan_entry *p;
    trd_shm *s;
    char *b[TRD_B_SEG];     /* the user's send and receive buffers, the plan's temporary */
    MPI_Datatype type;      /* of one element */
    const trd_reducer *red; /* reductions; NULL for bcast and allgather */
    uint64_t base;          /* the node's epochs before this call */
    size_t pc;              /* next op */
    int posted, nreq;       /* the window of messages at pc is posted: nreq requests */
    int err;                /* the first error: the schedule's messages still run */
    int astray;             /* the node's ranks run different calls: node ops skipped */
} trd_run;

/* Start plan p on the user's buffers (sendbuf NULL where the call has none),
 * the MPI datatype of one element and the reducer, with the temporary tmp
 * (trd_plan_tmp_bytes; NULL: the communicator's scratch): takes the call's
 * epochs of the node and publishes the buffers' addresses.  Calls on one node
 * must start in the same order on all its ranks. */
int trd_run_start(trd_run *r, trd_comm *c, trd_plan_entry *p, const void *sendbuf, void *recvbuf,
                  MPI_Datatype type, const trd_reducer *red, void *tmp);

/* Advance r: blocking, to the end; otherwise as far as it goes without
 * waiting (a counter not yet there, messages not yet arrived).  *done when
 * every op has completed.  A plan's requests are its own: one run of a plan
 * at a time.  An error (a message of another size than the plan's, as from
 * mismatched counts: MPI_ERR_TRUNCATE) is kept and returned when done: the
 * rest of the schedule's messages still run, so that no peer waits forever. */
int trd_run_progress(trd_run *r, int blocking, int *done);

/* trd_run_start (the communicator's scratch as the temporary) and
 * trd_run_progress to the end, blocking, on a run of its own. */
int trd_exec(trd_comm *c, trd_plan_entry *p, const void *sendbuf, void *recvbuf, MPI_Datatype type,
             const trd_reducer *red);

/* Free a plan. */
void trd_plan_free(trd_plan_entry *p);

/* ---- Derived datatypes in reductions (dtype.c) ------------------------------------ */

/* len bytes of an element: at disp from the element's origin in the user's
 * layout, and at flat from its start in the flat layout (its k base elements
 * one after the other, each at the base type's extent). */
typedef struct trd_dtype_block {
    MPI_Aint disp;
    size_t flat, len;
} trd_dtype_block;

/* What the reductions need of a datatype.  A derived type is analysed once
 * and the analysis cached on the type (an attribute, freed with it). */
typedef struct trd_dtype_info {
    int predefined;    /* a named type: it is its own base, k = 1 */
    MPI_Datatype base; /* the predefined type of every base element; MPI_DATATYPE_NULL if several */
    size_t k;          /* base elements per element */
    size_t base_extent;                        /* bytes */
    MPI_Aint lb, extent, true_lb, true_extent; /* bytes */
    MPI_Count size;                            /* bytes of data per element */
    int contiguous;     /* data covers [true_lb, true_lb + extent) once: no holes, no overlap */
    size_t lead;        /* whole layout: bytes from an element's start to its first data byte */
    MPI_Datatype whole; /* contiguous(extent, MPI_BYTE): a whole element as a message */
    const char *why;    /* why reductions on it go to the MPI library, or NULL */
    const trd_dtype_block *blocks; /* the element's bytes in typemap order, or NULL: copies
                                    * go through MPI_Pack (too many pieces, or darray) */
    size_t nblocks;
} trd_dtype_info;

/* Analyse type (any committed datatype).  Returns MPI_SUCCESS with *out
 * filled (out->why set where the reductions cannot use it), or an MPI error. */
int trd_dtype_analyze(MPI_Datatype type, trd_dtype_info *out);

/* A reduction as the plan runs it.  A predefined op applies to base elements
 * one by one, so a derived type's elements are flattened into count*k base
 * elements; a user op gets whole elements of the user's type, laid out at
 * its extent in the plan's buffers and sent as bytes. */
typedef struct trd_dtype_call {
    int derived;       /* 0: the call runs as made (type and buffers the user's) */
    int whole;         /* a user op on whole elements; else a predefined op on base elements */
    size_t per;        /* plan elements per element of the call */
    MPI_Datatype type; /* MPI datatype of one plan element (messages) */
    /* private to dtype.c */
    trd_dtype_info d;
    MPI_Datatype utype; /* the user's */
    MPI_Op op;
    size_t stride;   /* bytes of one element in the plan's buffers */
    MPI_Aint shift;  /* whole: the user type's origin is at this offset from an element's start */
    int direct;      /* the user's buffers are the plan's, at offset true_lb: no copies */
    char *mem, *out; /* the plan's buffers (allocated per call), its result */
    void *user_out;  /* where the result goes */
    size_t nout;     /* elements of it */
} trd_dtype_call;

/* Turn a reduction of count elements of derived type with op into the plan's
 * call: fills dc and red (the reducer of one plan element).  Returns why the
 * call goes to the MPI library, or NULL.  The answer depends only on what
 * MPI requires to be the same on all ranks (the datatype, count and op). */
const char *trd_dtype_reduction(trd_dtype_call *dc, MPI_Datatype type, MPI_Op op, size_t count,
                                trd_reducer *red);

/* Before the plan runs: *sendbuf (NULL: in place, the input in *recvbuf)
 * holds nin elements of the call, *recvbuf receives nout (0: none on this
 * rank, *recvbuf ignored); both become the plan's buffers, the input copied
 * in.  MPI_SUCCESS or MPI_ERR_NO_MEM. */
int trd_dtype_enter(trd_dtype_call *dc, const void **sendbuf, void **recvbuf, size_t nin,
                    size_t nout);

/* After the plan: the result copied out to the user's recvbuf if ran and rc
 * is MPI_SUCCESS (bytes outside the type map never written), the buffers
 * freed.  Returns rc, or the error of a user op. */
int trd_dtype_leave(trd_dtype_call *dc, int ran, int rc);

/* Copy count elements of the call's datatype from src to dst, both in the
 * user's layout: only the bytes of the type map. */
int trd_dtype_copy(const trd_dtype_call *dc, void *dst, const void *src, size_t count);

/* ---- Persistent and nonblocking calls (nbc.c) ------------------------------------- */

/* How a collective was called. */
enum { TRD_BLOCKING, TRD_NONBLOCKING, TRD_PERSISTENT };

/* Work around a plan: pre copies the user's data into the plan's buffers
 * before every start, post the result out after the run; free releases the
 * stage.  Each may be NULL.  Embedded first in the owner's structure. */
typedef struct trd_stage {
    int (*pre)(struct trd_stage *);
    int (*post)(struct trd_stage *);
    void (*free)(struct trd_stage *);
} trd_stage;

/* A call turned into the plan's terms: what trd_launch runs, starts or keeps. */
typedef struct trd_job {
    trd_comm *c;
    const char *routine; /* "MPI_Allreduce", for the notes */
    const trd_algo *a;   /* NULL: the selection's */
    const char *params;
    trd_call call;
    const void *sendbuf; /* NULL where the call has none (in place) */
    void *recvbuf;
    MPI_Datatype type;      /* of one element */
    const trd_reducer *red; /* NULL for bcast and allgather */
    trd_stage *stage;       /* NULL, or taken by trd_launch unless it refuses the job */
    int untuned;            /* the measured ranges do not choose: a user-defined op (they are
                             * for MPI's ops; allreduce and reduce also know it from
                             * call.whole), a persistent call where the MPI library has no
                             * persistent collectives (MPI < 4.0) for "mpi" to call */
} trd_job;

/* Queue job j as a call of kind mode (TRD_NONBLOCKING: started, *req its
 * request; TRD_PERSISTENT: planned, *req a persistent request that MPI_Start
 * runs; TRD_BLOCKING: behind the outstanding runs, waited for).  Returns
 * MPI_SUCCESS with *why set and nothing done where the plan cannot run the
 * call (the caller falls back before anything was sent, and still owns
 * j->stage); otherwise j->stage is taken, and freed with the request or on
 * an error returned.  Runs of one
 * communicator execute in call order, one at a time; outstanding runs
 * advance in every treeduce call and in MPI_Test and MPI_Wait calls.  A
 * blocking call with nothing outstanding runs directly (coll.c), not
 * through here. */
int trd_launch(const trd_job *j, int mode, MPI_Request *req, const char **why);

/* Runs of nonblocking and persistent calls queued or running in the process. */
extern _Atomic int trd_nbc_runs;

/* Nonzero while any run is outstanding: then blocking calls wait through the
 * progress loop too.  One atomic load. */
static inline int trd_nbc_outstanding(void)
{
    return atomic_load_explicit(&trd_nbc_runs, memory_order_acquire) != 0;
}

/* PMPI_Comm_dup(comm, dup), collective over comm, made without blocking
 * (PMPI_Comm_idup) while treeduce's outstanding runs advance: a rank that
 * arrives first does not stall the runs that a rank not yet there waits for.
 * Blocking under SMPI, which has no MPI_Comm_idup. */
int trd_nbc_comm_dup(MPI_Comm comm, MPI_Comm *dup);

/* PMPI_Wait(q, status) on a request of the MPI library's, made the same
 * way: treeduce's outstanding runs advance until q completes. */
int trd_nbc_wait_library(MPI_Request *q, MPI_Status *status);

/* PMPI_Barrier(comm) made the same way (PMPI_Ibarrier while treeduce's
 * outstanding runs advance). */
int trd_nbc_barrier(MPI_Comm comm);

/* With TREEDUCE_VERBOSE=2, the algorithm of plan p names itself for j's
 * routine. */
void trd_note_choice(const trd_job *j, const trd_plan_entry *p);

#endif
