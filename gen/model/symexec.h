/* The execution engine shared by the verifier (verify.c) and the cost model
 * (cost.c): every rank of a schedule (sched.h) runs its ops until it blocks,
 * as the runtime's executor would, and the two clients watch through hooks.
 * Internal to the generator.
 *
 * The engine owns the control flow and nothing else: which op each rank is
 * at, which sends and receives have matched, the counters and the order of
 * their signals.  Its rules [FLEX §2.1.2, §3.1]:
 *   - copies and reduces run at once (the client executes them);
 *   - a run of sends and receives with nb set, and the op after it, is one
 *     window: posted together, done when all of it has matched; a send
 *     matches the receiver's oldest receive from the sender in the window it
 *     has posted (synchronous: both ends must have reached the op), in
 *     posting order per pair, between ranks in the same call;
 *   - a signal sets the rank's counter to the op's epoch, shifted by the
 *     node's epochs per call in repeated calls; a wait blocks until the
 *     counter of the rank waited for (or of each of local ranks 0..nwait-1)
 *     is at least the epoch; epochs <= 0 are satisfied at once;
 *   - a wait on every local rank's done counter at epoch x returns at once
 *     where the rank has completed a wait on every local rank's in counter
 *     at x + 1 or later, in this call or one before (the runtime's skip);
 *   - when no rank can move and one has ops left, the schedule deadlocks.
 * The order in which ranks run is fixed (a queue of ranks woken by what may
 * let them go on, then sweeps), so two runs of one schedule make the same
 * matches in the same order. */
#ifndef TRD_SYMEXEC_H
#define TRD_SYMEXEC_H

#include <stddef.h>

#include "trd_sched.h"

typedef struct trd_exec trd_exec;

/* What a client does at each event; every hook returns TRD_OK, or the error
 * of trd_exec_fail / trd_exec_oom (which stops the run).  NULL hooks are
 * skipped. */
typedef struct trd_exec_hooks {
    /* rank r enters call c (before its first op) and leaves it (after its
     * last: it returns to the user) */
    int (*enter)(trd_exec *x, int r, int call);
    int (*leave)(trd_exec *x, int r, int call);
    /* rank r runs its copy or reduce s->op[k] */
    int (*local)(trd_exec *x, int r, size_t k);
    /* rank r posts its window s->op[k..end), and completes it */
    int (*posted)(trd_exec *x, int r, size_t k, size_t end);
    int (*completed)(trd_exec *x, int r, size_t k, size_t end);
    /* the send half of rank a's s->op[i] matches the receive half of rank
     * b's s->op[k] (lengths and rounds already agree) */
    int (*message)(trd_exec *x, int a, size_t i, int b, size_t k);
    /* rank r's s->op[k] issues signal id (trd_exec.sig) */
    int (*signal)(trd_exec *x, int r, size_t k, int id);
    /* rank r's wait s->op[k] is satisfied by rank t's signal id (once per
     * rank waited for; t may be r) */
    int (*waited)(trd_exec *x, int r, size_t k, int t, int id);
} trd_exec_hooks;

/* A matched message, in match order. */
typedef struct trd_xmsg {
    int call, round, from, to; /* ranks */
} trd_xmsg;

/* Which messages trd_exec records in msgs. */
enum { TRD_X_RECORD_NONE = 0, TRD_X_RECORD_INTER, TRD_X_RECORD_ALL };

struct trd_exec {
    const trd_sched *s;
    const trd_shape *sh;
    const trd_exec_hooks *h;
    void *ctx;  /* the client's */
    int ncalls; /* the calls run back to back (1 or 2) */
    int p;
    size_t *pc;          /* [p] next op of each rank, an index into s->op */
    int *call;           /* [p] the call it runs; ncalls once it has returned from the last */
    size_t *wend;        /* [p] end of the window posted at pc, 0 if none */
    unsigned char *done; /* [nops] bit 0: send half matched, bit 1: receive half */
    int *local;          /* [p] index of the rank on its node (ring order) */
    int *npn;            /* [p] ranks on its node */
    int *epochs;         /* [nnodes] epochs per call of each node */
    int *ctr;            /* [p * TRD_CTR_MAX] counter values */
    int *all_in;         /* [p] largest epoch of a completed wait on every local in */
    struct trd_xhist {
        int *id;
        size_t n, cap;
    } * hist; /* [p * TRD_CTR_MAX] ids of the signals of each counter */
    struct trd_xsig {
        int value, rank; /* the epoch it set, the rank that signalled */
    } * sig;             /* [nsig] every signal, in the order they happened */
    size_t nsig, sigcap;
    int record; /* TRD_X_RECORD_* */
    trd_xmsg *msgs;
    size_t nmsgs, msgcap;
    size_t nmatched; /* messages matched so far */
    int *queue;
    unsigned char *queued;
    size_t qhead, qtail;
    char *why;
    size_t whylen;
    int failed; /* TRD_OK, or the first error */
};

/* Set x up to run s on sh for ncalls calls (s holds every rank, its ranks
 * of a node agree on their epochs).  Returns TRD_OK, or TRD_ERR_VERIFY
 * (why says what does not hold) or TRD_ERR_NOMEM. */
int trd_exec_init(trd_exec *x, const trd_sched *s, const trd_shape *sh, int ncalls,
                  const trd_exec_hooks *h, void *ctx, int record, char *why, size_t whylen);

/* Run every rank until none can move.  Returns TRD_OK when every rank
 * returned from its last call, or the first error with why: TRD_ERR_VERIFY
 * (a hook's finding, a deadlock, a malformed op) or TRD_ERR_NOMEM. */
int trd_exec_run(trd_exec *x);

/* Free what trd_exec_init() allocated in x (not x itself, nor s, sh, ctx). */
void trd_exec_free(trd_exec *x);

/* The absolute epoch of rank r's s->op[k] in its current call. */
static inline int trd_exec_epoch(const trd_exec *x, int r, size_t k)
{
    return x->s->op[k].epoch + x->call[r] * x->epochs[x->sh->node_of[r]];
}

/* Record the error "rank R, op K (round N[, second call]): <fmt>" for rank
 * r's s->op[k]; returns TRD_ERR_VERIFY (or the error recorded before). */
int trd_exec_fail(trd_exec *x, int r, size_t k, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Record an error without a place; returns TRD_ERR_VERIFY. */
int trd_exec_failf(trd_exec *x, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Record running out of memory; returns TRD_ERR_NOMEM. */
int trd_exec_oom(trd_exec *x);

/* The first signal of rank t's counter c (TRD_CTR_*) that set an epoch of
 * at least e, or -1 if none has. */
int trd_exec_signal_at(const trd_exec *x, int t, int c, int e);

/* Indices of x->msgs in round order ((call, round), then match order), n of
 * them, in a malloc'd array the caller frees; NULL out of memory.  Rounds
 * are numbered per phase, so they are sparse. */
size_t *trd_exec_round_order(const trd_exec *x, size_t *n);
/* The end of the round that starts at order[g0]: the index into order[0..n)
 * one past its last message. */
size_t trd_exec_round_end(const trd_exec *x, const size_t *order, size_t n, size_t g0);

#endif
