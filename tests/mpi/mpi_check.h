/* mpi_check.h - what test_allreduce.c and test_pieces.c have in common
 * (mpi_check.c).
 *
 * Both check a routine against the MPI library's own (MPI_X against PMPI_X)
 * on random data and agree across ranks on every check.  Shared here:
 *   - the predefined datatypes and ops under test (struct ttype, types[],
 *     struct top, ops[]) and the derived types and user ops both use;
 *   - random data per kind of datatype and category of op (fill);
 *   - the comparison of a result with the reference: exact, or within
 *     rounding for floating SUM and PROD (check_result_ok), gaps of strided
 *     types included, and the hash of the bytes that carry values
 *     (hash_result);
 *   - the standard's answer, the reference where the MPI library's differs
 *     (unsigned MIN/MAX in MPICH 4.0; small unsigned SUM and MPI_OFFSET MIN/MAX
 *     in Open MPI 4.1: standard_answer, standard_reference);
 *   - the probing of accepted (type, op) pairs and the --types/--ops filters;
 *   - the options both take, and their parsing;
 *   - checks pending agreement, batched into one reduction (pend_add,
 *     pend_flush), and the final "N passed, M failed" tally (check_finish).
 *
 * A test calls check_init first.  Counts are in elements of a datatype,
 * sizes and offsets in bytes.
 */
#ifndef MPI_CHECK_H
#define MPI_CHECK_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

/* ---- Datatypes ---------------------------------------------------------- */

/* clang-format off */
enum kind { K_INT, K_FLOAT, K_COMPLEX, K_BOOL, K_BYTE, K_PAIR };
enum scal { S_SINT, S_UINT, S_FLT, S_DBL, S_LDBL };

/* Type groups of the MPI standard's table of predefined reductions; G_TEXT
 * (MPI_CHAR, MPI_WCHAR) is in no group but libraries may accept it. */
enum grp { G_CINT = 1, G_MULTI = 2, G_FLOAT = 4, G_COMPLEX = 8, G_BOOL = 16, G_BYTE = 32, G_PAIR = 64, G_TEXT = 128 };

/* Category of an op: how data is drawn and how results are compared
 * (C_AFFINE: exact, with odd multipliers so that compositions keep their order). */
enum cat { C_EXACT, C_SUM, C_PROD, C_LOGICAL, C_LOC, C_AFFINE };
/* clang-format on */

/* An element is nslots slots of vsize bytes; slot s holds data when
 * s % stride < blocklen (a strided vector), else it is a gap.  Pair types
 * hold a value (scal, vsize) at offset 0 and an int index at ioff. */
struct ttype {
    const char *name; /* for --types and messages */
    MPI_Datatype dt;
    enum kind kind;
    enum scal scal;
    int grp; /* its group (enum grp) */
    size_t vsize;
    size_t extent; /* bytes of an element */
    size_t ioff;
    int nslots, blocklen, stride;
};

/* The predefined datatypes under test, types[0..ntypes). */
extern const struct ttype types[];
extern const int ntypes;

struct top {
    const char *name;
    MPI_Op op;
    enum cat cat;
    int grps; /* type groups the standard defines the op for */
};

/* The predefined ops under test, ops[0..nops). */
extern const struct top ops[];
extern const int nops;

/* ---- Options and tallies ------------------------------------------------ */

/* The options every test takes (see check_parse_args). */
struct check_opts {
    uint64_t seed;       /* --seed (1) */
    int verbose;         /* --verbose: a line per check passed */
    int expect_treeduce; /* --expect-treeduce */
    size_t *counts;      /* [ncounts] counts to check; check_finish frees it */
    int ncounts;
    const char *types; /* comma-separated filters or NULL */
    const char *ops;
};
extern struct check_opts opt;

/* This rank and the number of ranks in MPI_COMM_WORLD (check_init). */
extern int wrank, wsize;

/* malloc of n bytes (at least 1); out of memory, a message on stderr and
 * MPI_Abort with error code 2: never NULL.  The caller frees. */
void *xmalloc(size_t n);

/* A copy of the n bytes at p, from xmalloc. */
void *xdup(const void *p, size_t n);

/* The random state of the next check: from --seed, the world rank and the
 * number of the check (the same on every rank when the ranks make the same
 * checks). */
uint64_t case_rng(void);

/* Whether s is a floating scalar (float, double, long double). */
int is_float(enum scal s);

/* ---- Data ---------------------------------------------------------------- */

/* count elements of t into buf (count * t->extent bytes) for an op of
 * category cat, as rank of nprocs supplies them, drawn from *rng; padding
 * and gaps get random bytes too. */
void fill(const struct ttype *t, enum cat cat, unsigned char *buf, size_t count, uint64_t *rng,
          int rank, int nprocs);

/* |x| of every floating slot of count elements of t at in, into out (both
 * count * t->extent bytes; the other bytes copied), for the SUM tolerance. */
void abs_of(const struct ttype *t, const unsigned char *in, unsigned char *out, size_t count);

/* FNV-1a hash of the bytes that carry values (no padding, no gaps) of count
 * elements of t at buf. */
uint64_t hash_result(const struct ttype *t, const unsigned char *buf, size_t count);

/* ---- The standard's answer where the library's differs ------------------ */

/* Whether the reference for (t, op) is standard_reference rather than the
 * PMPI_ routine, under --expect-treeduce (treeduce gives the standard's
 * answer):
 *  - MIN or MAX on unsigned integers: MPICH 4.0.x compares them as signed
 *    (MAX(0, UINT_MAX) = 0, pmodels/mpich#6083) in its own routines;
 *  - Open MPI 4.1: SUM on 8- and 16-bit unsigned integers, which its AVX op
 *    component adds with saturation (C wraps), and MIN or MAX on MPI_OFFSET,
 *    which it compares as unsigned.
 * Without --expect-treeduce the routine under test may be the MPI library's
 * (a plain build, or every call falling back), whose answer is the PMPI_
 * routine's. */
int standard_answer(const struct ttype *t, MPI_Op op);

/* The standard's MIN, MAX (compared as t's signedness says) or wrapping SUM
 * (op) over the ranks of comm of each rank's nin elements of t at in:
 * elements [first, first + n) of the result into out (n elements; gap slots
 * left alone).  Gathers every rank's input with PMPI_Allgather: a collective,
 * every rank calls it. */
void standard_reference(const struct ttype *t, MPI_Op op, const unsigned char *in, size_t nin,
                        size_t first, size_t n, MPI_Comm comm, unsigned char *out);

/* ---- Reports ------------------------------------------------------------- */

/* Longest description of a check ("comm=... type=... ..."), with its NUL. */
#define CHECK_DESC_LEN 256

/* A failure of the check desc on this rank: "FAIL desc rank=R what" on stdout. */
void check_fail(const char *desc, const char *what);

/* Whether a call of the check desc succeeded (rc, its return, is
 * MPI_SUCCESS); a failure is reported with fn's name and the error's text.
 * Returns 1 or 0. */
int check_call_ok(const char *desc, int rc, const char *fn);

/* Whether count elements of t at act match those at exp: exactly, or for a
 * floating SUM or PROD (cat) within rounding over nprocs ranks (SUM: sabs,
 * the reduced magnitudes of abs_of, else unused); gap slots must equal
 * exp's.  Reports the first mismatch of the check desc.  Returns 1 or 0. */
int check_result_ok(const char *desc, const struct ttype *t, enum cat cat, const unsigned char *act,
                    const unsigned char *exp, const unsigned char *sabs, size_t count, int nprocs);

/* ---- Pending checks ------------------------------------------------------ */

/* Agrees on the pending checks (pend_add) and tallies them on rank 0 of
 * their communicator: a check passed if it passed on every rank and the
 * result hashes match.  A collective on that communicator. */
void pend_flush(void);

/* Queues the verdict ok (1 passed, 0 failed) of the check desc on comm, with
 * hash, the hash of a result every rank must share, else 0 (flushing the
 * checks of another communicator first). */
void pend_add(MPI_Comm comm, const char *desc, uint64_t hash, int ok);

/* ---- Filters and probing -------------------------------------------------- */

/* Whether name is in the comma-separated list (NULL: every name), matched
 * without case, with or without its MPI_ prefix. */
int name_matches(const char *list, const char *name);

/* Whether a type or op name is a predefined one's (derived types and user
 * ops have other names). */
int predefined(const char *name);

/* Whether the predefined type t passes --types and has the C layout the test
 * assumes; a layout that differs is a failed check, counted on rank 0. */
int type_selected(const struct ttype *t);

/* Whether the predefined op o passes --ops and is tested on t: a pair the
 * MPI standard defines, or MPI_CHAR and MPI_WCHAR with an integer op, and in
 * both cases accepted by the MPI library (PMPI_Reduce_local); *nskipped
 * counts the pairs that pass --ops but are not tested. */
int op_selected(const struct ttype *t, const struct top *o, int *nskipped);

/* The entry of types[] for the predefined datatype dt, or NULL. */
const struct ttype *find_type(MPI_Datatype dt);

/* ---- User ops and derived types ------------------------------------------ */

/* User ops (MPI_User_function): *len elements of *dt at in combined into
 * inout.
 * matmul_op: 2x2 matrices of 32-bit integers, row-major, product mod 2^32:
 *   inout = in * inout (contig4_ttype);
 * dsum_op: doubles, inout += in;
 * vsum_op: the doubles a vector element covers summed, gaps untouched;
 * vaffine_op: each block of 2 ints of a vector element an affine map
 *   x -> m x + c mod 2^32; inout = in o inout (composition: associative, not
 *   commutative); gaps untouched;
 * affine64_op: MPI_UINT64_T elements as affine maps x -> a x + b mod 2^32 (a
 *   in the high half, b in the low half); inout = in o inout: associative,
 *   not commutative, on a predefined datatype (the user ops above take
 *   derived types, which treeduce runs on whole elements). */
void matmul_op(void *in, void *inout, int *len, MPI_Datatype *dt);
void dsum_op(void *in, void *inout, int *len, MPI_Datatype *dt);
void vsum_op(void *in, void *inout, int *len, MPI_Datatype *dt);
void vaffine_op(void *in, void *inout, int *len, MPI_Datatype *dt);
void affine64_op(void *in, void *inout, int *len, MPI_Datatype *dt);

/* contig(4,MPI_INT) (committed by the caller as dt), for matmul_op. */
struct ttype contig4_ttype(MPI_Datatype dt);

/* The strided types under test: VEC_N blocks of 2 elements, VEC_STRIDE
 * apart; an element spans VEC_SLOTS elements of its base type. */
#define VEC_N 50
#define VEC_STRIDE 3
#define VEC_SLOTS ((VEC_N - 1) * VEC_STRIDE + 2)

/* Creates and commits the strided types vector(VEC_N,2,VEC_STRIDE) of
 * MPI_DOUBLE and of MPI_INT, for vsum_op and vaffine_op; gaps between the
 * blocks, which calls must not touch.  Free with MPI_Type_free(&v->dt). */
void vector_types_create(struct ttype *vec_dbl, struct ttype *vec_int);

/* Runs suite on communicators created and freed in turn (a later one may
 * reuse a freed one's handle or context id with a different rank order or
 * size), then on the world communicator.  suite must flush its checks before
 * it returns: the communicator is freed after. */
void run_comm_suites(void (*suite)(MPI_Comm comm, const char *where));

/* ---- Options, start and end ---------------------------------------------- */

/* Parses the command line into opt: --quick, --counts (each at most
 * max_count), --types, --ops, --seed, --verbose and --expect-treeduce here,
 * any other option through extra (NULL: none), which gets argv[*i], may take
 * values by advancing *i, and returns 1 if it took the option, 0 if it does
 * not know it, -1 if it is invalid.  Returns 0, or -1 for a bad command line. */
int check_parse_args(int argc, char **argv, unsigned long long max_count,
                     int (*extra)(int argc, char **argv, int *i));

/* MPI_Init, and wrank and wsize set; prog, the program's name (a string that
 * lives as long as the program), begins the messages. */
void check_init(int *argc, char ***argv, const char *prog);

/* Errors come back as codes: a failing call is a failed check, not an abort. */
void check_errors_return(void);

/* Sums the checks of every rank and prints, on rank 0, the (type, op) pairs
 * not tested (nskipped, with --verbose) and "N passed, M failed"; frees what
 * the checks held and finalizes MPI.  Returns the exit status: 1 if a check
 * failed, else 0. */
int check_finish(int nskipped);

#endif /* MPI_CHECK_H */
