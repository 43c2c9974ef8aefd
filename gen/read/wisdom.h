/* Wisdom: what treeduce-tune measured on a machine, per collective x
 * communicator shape x message-size range, kept as text beside the
 * topology and read by treeduce-gen --wisdom (treeduce-wisdom(5)).
 * Anchor: FFTW's wisdom (plans measured with FFTW_MEASURE, exported and
 * imported as text); Open MPI's coll_tuned dynamic rules files.
 *
 * The file, line by line ('#' starts a comment line; fields are separated
 * by blanks; a string is double-quoted with \\ \" and \xHH escapes, printable
 * UTF-8 otherwise):
 *
 *   treeduce-wisdom 1
 *   machine "NAME"              the machine's name (trd_topo_name)
 *   digest HEX64                trd_topo_digest of the description measured
 *   mpi "LIBRARY"               MPI_Get_library_version's first line
 *   date YYYY-MM-DDTHH:MM:SSZ   when the measurement ended (UTC)
 *   ranks P                     the job's size
 *   hosts "H0" "H1" ...         the host (node) of each rank, P strings
 *   budget SECONDS COMPLETE     the budget given (0: none), and 1 if every
 *                               planned measurement was made, 0 if the
 *                               budget cut it short
 *   range COLL NODES PPN FROM BELOW ALG US RUNNER RUNNER_US
 *                               ... one per measured range, then
 *   end
 *
 * COLL is a collective's name (trd_coll_name: allreduce,
 * reduce_scatter_block, allgather, reduce, bcast); NODES x PPN the
 * communicator's shape; FROM and BELOW bytes, the range [FROM, BELOW), BELOW
 * "-" for no end (the last range of a shape); ALG the winner as
 * TREEDUCE_ALGORITHM spells it ("shm:rx:2,1", "ring", "mpi" for the MPI
 * library's routine); US its median time (microseconds, the slowest rank's)
 * at the size measured inside the range; RUNNER and RUNNER_US the second
 * fastest there ("-" and 0 where only one candidate ran).  A shape's
 * ranges are in order, start at 0 and leave no gap.  A file without its
 * "end" line is refused (a copy cut short).
 */
#ifndef TRD_WISDOM_H
#define TRD_WISDOM_H

#include <stddef.h>
#include <stdio.h>

#include "algo.h"
#include "diag.h"
#include "topo.h"

#define TRD_WISDOM_VERSION 1
#define TRD_WISDOM_MAX_RANGES 4096 /* per file */
#define TRD_WISDOM_STRING_MAX 256  /* machine, mpi and host strings, with the NUL */

/* Verdicts of the check pass (treeduce-tune): which of the measured winner,
 * the model's choice (the untuned library) and the MPI library's routine
 * takes a checked size. */
enum {
    TRD_WISDOM_KEPT = 0, /* the measured winner: not slower than either beyond the noise */
    TRD_WISDOM_TO_MODEL, /* the model's choice was faster beyond the noise */
    TRD_WISDOM_TO_MPI,   /* the MPI library's routine was faster beyond the noise */
    TRD_WISDOM_VERDICT_MAX
};

/* Most check points kept per range. */
#define TRD_WISDOM_MAX_CHECKS 4

/* One size of a range timed again after the choice (the check pass): the
 * measured winner, the model's choice and the MPI library's routine
 * interleaved, and the winner a second time for the pass's noise. */
typedef struct trd_wisdom_point {
    size_t bytes;                    /* the size checked, inside its range */
    char alg[TRD_PARAMS_MAX + 32];   /* the measured winner checked */
    double alg_us;                   /* its median time there, microseconds */
    char model[TRD_PARAMS_MAX + 32]; /* what the model's tables run there ("NAME[:PARAMS]") */
    double model_us;
    double mpi_us;  /* the MPI library's routine */
    double noise;   /* relative: the pass's noise (the winner timed twice) */
    int verdict;    /* TRD_WISDOM_KEPT ... */
    int line;       /* where it was read (0: not read) */
} trd_wisdom_point;

typedef struct trd_wisdom_range {
    int coll; /* enum trd_coll */
    int nnodes, ppn;
    size_t from, below;               /* bytes; below SIZE_MAX: no end */
    char alg[TRD_PARAMS_MAX + 32];    /* "NAME" or "NAME:PARAMS", "mpi", or "model": the
                                       * model's tables choose here (the check found them
                                       * faster than the measured winner) */
    double us;                        /* the winner's median time, microseconds */
    char runner[TRD_PARAMS_MAX + 32]; /* the runner-up, "" none */
    double runner_us;                 /* its time, 0 none */
    int line;                         /* where it was read (0: not read) */
    int src;                          /* which file of a merge (trd_wisdom_merge), 0 the first */
    int ncheck;                       /* the check pass's sizes in this range */
    trd_wisdom_point check[TRD_WISDOM_MAX_CHECKS];
} trd_wisdom_range;

typedef struct trd_wisdom {
    int version;
    char machine[TRD_WISDOM_STRING_MAX];
    char digest[65];
    int digest_line; /* where the digest was read (0: not read), for trd_wisdom_check */
    char mpi[TRD_WISDOM_STRING_MAX];
    char date[32]; /* YYYY-MM-DDTHH:MM:SSZ */
    int nranks;
    char (*hosts)[TRD_WISDOM_STRING_MAX]; /* [nranks] */
    double budget_s;
    int complete; /* 1: every planned measurement was made; 0: the budget cut it short */
    int nranges;
    trd_wisdom_range *range; /* [nranges] */
    const char *file;        /* where it was read (interned in the diag), or NULL */
} trd_wisdom;

/* The digest of a machine's description: SHA-256 (hex) of a canonical text
 * of what a measurement depends on: the switch tree (names, parents), the
 * nodes in ring order (names, switch, node type) and each node type's
 * packages and cores.  Link costs are left out: calibrating a machine does
 * not make its measurements stale.  t finalized. */
void trd_topo_digest(trd_topo_t t, char hex[65]);

/* Read a wisdom file into w (zeroed first).  Returns TRD_OK, or
 * TRD_ERR_INPUT with "file:line:col: error: ..." messages in d (a missing
 * or misspelt keyword, a bad number, an unknown collective or algorithm, a
 * range that leaves a gap, a missing "end", a version other than
 * TRD_WISDOM_VERSION), or TRD_ERR_IO / TRD_ERR_NOMEM; on any error w is left
 * empty (nothing half-read).  An algorithm is checked against the registry
 * (trd_algo_parse for its collective: "mpi", the MPI library's routine, is
 * one of every collective's, flagged TRD_ALGO_LIBRARY). */
int trd_wisdom_read(const char *path, trd_wisdom *w, trd_diag *d);

/* The same from text (len bytes) named file in messages.  Returns as
 * trd_wisdom_read(), except TRD_ERR_IO. */
int trd_wisdom_read_string(const char *file, const char *text, size_t len, trd_wisdom *w,
                           trd_diag *d);

/* Whether w was measured on the machine t describes: TRD_OK, or
 * TRD_ERR_INPUT with an error at the digest line of w's file naming what
 * differs ("wisdom measured on machine 'a' (digest 1234abcd...), this
 * description is 'b' (digest 5678...)"). */
int trd_wisdom_check(const trd_wisdom *w, trd_topo_t t, trd_diag *d);

/* Write w in the format above.  Returns TRD_OK or TRD_ERR_IO. */
int trd_wisdom_write(FILE *f, const trd_wisdom *w);

/* Free w's hosts and ranges and zero it (w itself is the caller's). */
void trd_wisdom_free(trd_wisdom *w);

#endif
