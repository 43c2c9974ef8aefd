/* The status codes of the generator, below everything else of it (topo.h
 * and util.h include them). */
#ifndef TRD_STATUS_H
#define TRD_STATUS_H

/* Errors in the generator: every function that can fail returns an int
 * status, TRD_OK or one of the codes below, and gives its results through
 * out-parameters; a void function cannot fail, and queries return their
 * value.  The detail goes to the caller's trd_diag where it is about the
 * user's input or the generator's output (readers, verification before
 * writing, the emitter: "file:line:col: error: ..."), or into the caller's
 * why/err buffer where the callee composes a message the caller places
 * (the verifier, the cost model, the parse helpers of topo.h).  Constructors
 * that allocate (trd_diag_create, trd_read_text) return the object or NULL.
 * Planning through the registry (algo.h, shared with the runtime) keeps its
 * own 0 / -1. */
enum {
    TRD_OK = 0,
    TRD_ERR_NOMEM = 1,  /* out of memory */
    TRD_ERR_INPUT = 2,  /* bad input; details are in the trd_diag */
    TRD_ERR_IO = 3,     /* file cannot be read or written */
    TRD_ERR_STATE = 4,  /* call not allowed in this state (e.g. query before finalize) */
    TRD_ERR_VERIFY = 5, /* a schedule failed verification */
    TRD_ERR_MAX
};

#endif
