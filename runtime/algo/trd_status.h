/* The status codes, and the one error convention of each side.
 *
 * The generator's side (gen/, the tools of measure/) and the planners it
 * proves (runtime/algo/: the registry, every algorithm's parse, plan and
 * list, the selection's tables, the parameter parsers): every function that
 * can fail returns an int status, TRD_OK or one of the codes below, and
 * gives its results through out-parameters; on an error they are left as
 * the function says (a schedule empty, an out-pointer NULL).  The message
 * goes where the caller points:
 *   - at a position of an input file (the readers, the wisdom, the
 *     checks before anything is written), to the caller's trd_diag,
 *     "file:line:col: error: ..." (gen/model/diag.h);
 *   - anywhere else, into the caller's buffer err[0..errlen) (why, whylen
 *     where it says why a planner refuses), written with trd_errf (algo.h):
 *     the callee composes the message, the caller places it.
 * A function that cannot fail returns void; a query returns its value and
 * says what stands for none (-1, NULL, SIZE_MAX).  A file's static helpers
 * may answer their caller in the file otherwise (-1, a count); what leaves
 * the file is a status.
 *
 * The runtime's side (runtime/, rt.h and treeduce.h): every function
 * returns an MPI error code, MPI_SUCCESS or an error class, unless it says
 * it is a query.  The two meet once, where the runtime plans a call
 * (runtime/exec.c, trd_plan_get): TRD_ERR_NOMEM becomes MPI_ERR_NO_MEM,
 * any other code makes the call fall back to the MPI library's own
 * routine, never fail.  (The benchmarks of bench/ are programs of their
 * own, on neither side: they return 0 or -1 from their option parsing and
 * exit non-zero.) */
#ifndef TRD_STATUS_H
#define TRD_STATUS_H

#ifdef __cplusplus
extern "C" {
#endif

enum trd_status {
    TRD_OK = 0,
    TRD_ERR_NOMEM = 1,  /* out of memory */
    TRD_ERR_INPUT = 2,  /* bad input: a file, a parameter text, a call the algorithm refuses */
    TRD_ERR_IO = 3,     /* file cannot be read or written */
    TRD_ERR_STATE = 4,  /* call not allowed in this state (e.g. query before finalize) */
    TRD_ERR_VERIFY = 5, /* a schedule failed verification */
    TRD_ERR_MAX
};

#ifdef __cplusplus
}
#endif

#endif
