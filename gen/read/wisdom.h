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
 *   treeduce-wisdom 2
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
 *   check BYTES ALG ALG_US MODEL MODEL_US MPI_US NOISE VERDICT
 *                               ... one range line per measured range, each
 *                               followed by its check lines, then
 *   end
 *
 * COLL is a collective's name (trd_coll_name: allreduce,
 * reduce_scatter_block, allgather, reduce, bcast); NODES x PPN the
 * communicator's shape; FROM and BELOW bytes, the range [FROM, BELOW), BELOW
 * "-" for no end; ALG the winner as TREEDUCE_ALGORITHM spells it
 * ("shm:rx:2,1", "ring", "mpi" for the MPI library's routine), or "model":
 * the model's tables choose there (the check found them faster); US its
 * median time (microseconds, the slowest rank's) at the size measured
 * inside the range; RUNNER and RUNNER_US the second fastest there ("-" and
 * 0 where only one candidate ran).  A shape's ranges are consecutive lines
 * in increasing order that do not overlap; the model fills what they leave
 * (below the first, between two, above the last).
 *
 * A check line (0 to TRD_WISDOM_MAX_CHECKS after its range) is one size
 * BYTES inside the range timed again: ALG, the measured winner, ALG_US its
 * time; MODEL what the model's tables run there (any algorithm of the
 * collective, "mpi" included) and MODEL_US; MPI_US the MPI library's
 * routine; NOISE the pass's relative noise (0 or more); VERDICT kept, model
 * or mpi (TRD_WISDOM_KEPT, _TO_MODEL, _TO_MPI).
 *
 * Version 1 (still read) has no check lines and no "model" ranges, and a
 * shape's ranges start at 0, leave no gap and the last ends with "-".  A
 * file without its "end" line is refused (a copy cut short).
 */
#ifndef TRD_WISDOM_H
#define TRD_WISDOM_H

#include <stddef.h>
#include <stdio.h>

#include "algo.h"
#include "diag.h"
#include "topo.h"

#define TRD_WISDOM_VERSION 2       /* written; 1 and 2 are read */
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

/* A range's algorithm in version 2 that hands the range to the model's
 * tables; it is no algorithm of the registry. */
#define TRD_WISDOM_MODEL "model"

/* One size of a range timed again after the choice (the check pass): the
 * measured winner, the model's choice and the MPI library's routine
 * interleaved, and the winner a second time for the pass's noise. */
typedef struct trd_wisdom_point {
    size_t bytes;                    /* the size checked, inside its range */
    char alg[TRD_PARAMS_MAX + 32];   /* the measured winner checked */
    double alg_us;                   /* its median time there, microseconds */
    char model[TRD_PARAMS_MAX + 32]; /* what the model's tables run there ("NAME[:PARAMS]") */
    double model_us;
    double mpi_us; /* the MPI library's routine */
    double noise;  /* relative: the pass's noise (the winner timed twice) */
    int verdict;   /* TRD_WISDOM_KEPT ... */
    int line;      /* where it was read (0: not read) */
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
    int src;                          /* which file of a merge (trd_wisdom_merge), 0 the first;
                                       * the index into trd_wisdom.source where it has any */
    int ncheck;                       /* the check pass's sizes in this range */
    trd_wisdom_point check[TRD_WISDOM_MAX_CHECKS];
} trd_wisdom_range;

/* One input file of a merge (trd_wisdom_merge). */
typedef struct trd_wisdom_source {
    const char *file; /* as read (interned in the diag), or NULL */
    char date[32];    /* its date line */
    int nranks;       /* its ranks line */
    int complete;     /* its budget line's COMPLETE */
} trd_wisdom_source;

/* Where two files of a merge measured the same sizes of a shape with
 * different algorithms: the newer range is used there, the older one is
 * clipped.  Overlaps with the same algorithm are no conflict. */
typedef struct trd_wisdom_conflict {
    int coll; /* enum trd_coll */
    int nnodes, ppn;
    size_t from, below;        /* bytes: the overlap [from, below); below SIZE_MAX: no end */
    int newer_src, newer_line; /* the range used: its file (index of the merge's input) and line */
    int older_src, older_line; /* the range it overrides there */
    char newer_alg[TRD_PARAMS_MAX + 32], older_alg[TRD_PARAMS_MAX + 32];
} trd_wisdom_conflict;

typedef struct trd_wisdom {
    int version;
    char machine[TRD_WISDOM_STRING_MAX];
    char digest[65];
    int digest_line; /* where the digest was read (0: not read), for trd_wisdom_check */
    char mpi[TRD_WISDOM_STRING_MAX];
    int mpi_line;  /* where the mpi line was read (0: not read), for trd_wisdom_merge */
    char date[32]; /* YYYY-MM-DDTHH:MM:SSZ */
    int nranks;
    char (*hosts)[TRD_WISDOM_STRING_MAX]; /* [nranks] */
    double budget_s;
    int complete; /* 1: every planned measurement was made; 0: the budget cut it short */
    int nranges;
    trd_wisdom_range *range;   /* [nranges] */
    const char *file;          /* where it was read (interned in the diag), or NULL */
    int nsources;              /* a merge's input files (trd_wisdom_merge); 0: read, not merged */
    trd_wisdom_source *source; /* [nsources], by range.src */
} trd_wisdom;

/* The digest of a machine's description: SHA-256 (hex) of a canonical text
 * of what a measurement depends on: the switch tree (names, parents), the
 * nodes in ring order (names, switch, node type) and each node type's
 * packages and cores.  Link costs are left out: calibrating a machine does
 * not make its measurements stale.  t finalized. */
void trd_topo_digest(trd_topo_t t, char hex[65]);

/* Read a wisdom file of version 1 or 2 into w (zeroed first).  Returns
 * TRD_OK, or TRD_ERR_INPUT with "file:line:col: error: ..." messages in d (a
 * missing or misspelt keyword, a bad number, an unknown collective or
 * algorithm, ranges of a shape that overlap ("allreduce 4x1 range [4096,
 * 65536) overlaps [0, 8192) of line 12", at FROM) or, in version 1, leave
 * a gap, a check line outside its range or before any range or in version
 * 1, a missing "end", another version), or TRD_ERR_IO / TRD_ERR_NOMEM; on
 * any error w is left empty (nothing half-read).  An algorithm is checked
 * against the registry (trd_algo_parse for its collective: "mpi", the MPI
 * library's routine, is one of every collective's, flagged
 * TRD_ALGO_LIBRARY); "model" only as a range's ALG in version 2. */
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

/* Combine the n wisdom files in[0..n) (each read, in command-line order)
 * into out (zeroed first; n 1: in[0] itself).  All must name the same
 * machine digest and MPI library: otherwise TRD_ERR_INPUT with an error at
 * the later file's line ("wisdom measured under 'X', a.wisdom under 'Y'",
 * control characters as blanks).  Per collective and shape, in the order
 * they first appear, the ranges of every file combine; where two overlap
 * the newer measurement (the later date, on equal dates the later file)
 * keeps its range whole and the older one is clipped to what the newer
 * does not cover (split in two where the newer lies inside it), keeping
 * its check points inside what remains.  Each range of out keeps its line
 * and names its file in src (out->source[src], n of them).  Where the
 * range used overlaps another file's range of another algorithm, a
 * conflict is recorded: *conflicts (malloc'd, the caller frees it, NULL
 * if none) gets *nconflicts of them in the order of out's ranges.  out's
 * machine, digest and MPI library are in[0]'s, its date the newest, its
 * ranks and hosts those of the first file with the most ranks, its budget
 * the sum, complete if every file is; out->version is TRD_WISDOM_VERSION.
 * Returns TRD_OK, TRD_ERR_INPUT or TRD_ERR_NOMEM (out empty, no
 * conflicts). */
int trd_wisdom_merge(const trd_wisdom *in, int n, trd_wisdom *out, trd_wisdom_conflict **conflicts,
                     int *nconflicts, trd_diag *d);

/* The file range r of w was read from: w->source[r->src]'s after a merge,
 * else w->file (NULL if none). */
const char *trd_wisdom_range_file(const trd_wisdom *w, const trd_wisdom_range *r);

/* Whether r's algorithm is TRD_WISDOM_MODEL (the model's tables choose). */
int trd_wisdom_is_model(const trd_wisdom_range *r);

/* A verdict's word in the file: "kept", "model", "mpi"; NULL for another
 * value. */
const char *trd_wisdom_verdict_name(int verdict);

/* Write w in the format above, version TRD_WISDOM_VERSION, with each
 * range's check lines.  Returns TRD_OK or TRD_ERR_IO. */
int trd_wisdom_write(FILE *f, const trd_wisdom *w);

/* Free w's hosts, ranges and sources and zero it (w itself is the
 * caller's). */
void trd_wisdom_free(trd_wisdom *w);

#endif
