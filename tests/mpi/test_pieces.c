/* test_pieces.c - checks MPI_Reduce_scatter_block, MPI_Allgather, MPI_Reduce
 * and MPI_Bcast against the MPI library's own.
 *
 * Linked with treeduce, MPI_X is treeduce's and PMPI_X is the reference;
 * linked with plain MPI both are the same routine and every check passes.
 * Each check calls both on the same random data and compares the results:
 *   - rsb (MPI_Reduce_scatter_block) and reduce (MPI_Reduce): every
 *     (predefined datatype, predefined op) pair that test_allreduce runs
 *     (defined by the standard and accepted by PMPI_Reduce_local), out of
 *     place and with MPI_IN_PLACE (at the root for reduce); user ops on
 *     predefined types (a non-commutative composition of affine maps packed
 *     in MPI_LONG_LONG, a commutative double sum) and on derived types;
 *     reduce at every root: with --all-roots for every case, else the root
 *     moves from count to count (each pair meets every root when there are
 *     at least as many counts as ranks) and the derived-type, user-op and
 *     communicator checks run at every root.  The reference reduce runs out
 *     of place, and MPI_IN_PLACE at a non-zero root is tested only where
 *     MPI_Reduce is not the MPI library's own: MPICH 4.0 crashes there for
 *     messages over 2 KiB (pmodels/mpich#6540);
 *   - allgather (MPI_Allgather, sendcount = recvcount, sendtype = recvtype):
 *     every predefined datatype, out of place and with MPI_IN_PLACE;
 *     contiguous and strided derived types; one case whose send side is
 *     contig(4,MPI_INT) and receive side MPI_INT (same type signature);
 *   - bcast (MPI_Bcast): every predefined datatype at every root; derived
 *     types; one case whose root describes the data as contig(4,MPI_INT) and
 *     the other ranks as MPI_INT;
 * for a list of counts, then repeated calls and calls on split, duplicated,
 * reversed and freed communicators.  The count is recvcount for rsb (the
 * input holds p blocks of it), sendcount = recvcount for allgather (the
 * output holds p blocks), and the buffer's count for reduce and bcast.
 *
 * Data is drawn as in test_allreduce: floating values spread over
 * 2^-8..2^8, PROD factors near 1, few distinct MINLOC/MAXLOC values and
 * indices, signed integer SUM and PROD in range, unsigned ones wrapping.
 *
 * A check passes when, on every rank of its communicator:
 *   - both calls return MPI_SUCCESS and a send buffer is unchanged;
 *   - reductions: integer, bool, byte, pair and MAX/MIN/logical results
 *     equal the reference exactly (where the library's answer is not the
 *     standard's, under --expect-treeduce the standard's answer computed here
 *     from every rank's input: standard_answer in mpi_check.h); floating SUM components
 * satisfy |a - e| <= 2 p eps * sum_r |x_r| and PROD components |a - e| <= 4 p eps * |e| (|e| the
 * complex modulus for complex types), p the number of ranks, eps the type's epsilon;
 *   - reduce: the receive buffer of a non-root rank is not written;
 *   - allgather and bcast: the result equals the reference exactly and is
 *     identical on every rank;
 *   - gaps of a strided datatype are left as they were.
 *
 * Usage: test_pieces [--quick] [--counts a,b,c] [--types t1,t2] [--ops o1,o2]
 *                    [--pieces rsb,allgather,reduce,bcast] [--all-roots]
 *                    [--seed N] [--verbose] [--expect-treeduce]
 * Prints one line per failed check and, on rank 0, "N passed, M failed".
 * Exits non-zero on every rank when a check failed.
 */
#define _GNU_SOURCE /* RTLD_DEFAULT */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "mpi_check.h"

/* ---- Pieces and their options ------------------------------------------- */

enum piece { P_RSB, P_ALLGATHER, P_REDUCE, P_BCAST, P_MAX };

static const struct {
    const char *name;      /* for --pieces and messages */
    const char *mpi, *ref; /* the routine under test and the reference */
} pieces[P_MAX] = {
    {"rsb", "MPI_Reduce_scatter_block", "PMPI_Reduce_scatter_block"},
    {"allgather", "MPI_Allgather", "PMPI_Allgather"},
    {"reduce", "MPI_Reduce", "PMPI_Reduce"},
    {"bcast", "MPI_Bcast", "PMPI_Bcast"},
};

/* Options of this test only (the others are opt's). */
static int opt_all_roots;      /* --all-roots */
static const char *opt_pieces; /* --pieces: comma-separated filter or NULL */
static int reduce_interposed;  /* MPI_Reduce is not PMPI_Reduce */

/* ---- Checks ---------------------------------------------------------------- */

/* One check: a piece called on comm with these arguments. */
struct chk {
    enum piece piece;
    MPI_Comm comm;
    const char *where;
    const struct ttype *t; /* describes the data in the buffers compared */
    MPI_Op op;             /* rsb and reduce */
    const char *opname;
    enum cat cat;
    size_t count;
    int inplace;
    int root;  /* reduce and bcast, else -1 */
    int mixed; /* the send side (allgather) or the root (bcast) describes the
                * count MPI_INTs of t as count/4 elements of contig(4,MPI_INT) */
};

static MPI_Datatype contig4; /* contig(4,MPI_INT), for the mixed cases */

static void describe(const struct chk *c, char *buf, size_t n)
{
    int k = snprintf(buf, n, "piece=%s comm=%s type=%s%s", pieces[c->piece].name, c->where,
                     c->mixed ? "contig(4,MPI_INT)/" : "", c->t->name);
    if (c->piece == P_RSB || c->piece == P_REDUCE)
        k += snprintf(buf + k, n - (size_t)k, " op=%s", c->opname);
    k += snprintf(buf + k, n - (size_t)k, " count=%zu", c->count);
    if (c->piece != P_BCAST)
        k += snprintf(buf + k, n - (size_t)k, " in_place=%s", c->inplace ? "yes" : "no");
    if (c->root >= 0)
        snprintf(buf + k, n - (size_t)k, " root=%d", c->root);
}

static void fail_line(const struct chk *c, const char *what)
{
    char d[CHECK_DESC_LEN];
    describe(c, d, sizeof d);
    check_fail(d, what);
}

/* Whether a call succeeded; a failure is reported with fn's name. */
static int call_ok(const struct chk *c, int rc, const char *fn)
{
    char d[CHECK_DESC_LEN];

    if (rc == MPI_SUCCESS)
        return 1;
    describe(c, d, sizeof d);
    return check_call_ok(d, rc, fn);
}

/* Whether count elements of act match exp (check_result_ok); reports the first
 * mismatch. */
static int result_ok(const struct chk *c, const unsigned char *act, const unsigned char *exp,
                     const unsigned char *sabs, size_t count, int nprocs)
{
    char d[CHECK_DESC_LEN];

    describe(c, d, sizeof d);
    return check_result_ok(d, c->t, c->cat, act, exp, sabs, count, nprocs);
}

#define PATTERN 0x5a /* what a buffer holds before a call writes it */

static unsigned char *pattern(size_t n)
{
    unsigned char *p = xmalloc(n);
    memset(p, PATTERN, n);
    return p;
}

static int is_pattern(const unsigned char *p, size_t n)
{
    size_t k;
    for (k = 0; k < n; k++)
        if (p[k] != PATTERN)
            return 0;
    return 1;
}

/* Magnitudes reduced like the data, for the floating SUM tolerance; NULL
 * for other checks.  A collective: every rank calls it, failed or not. */
static unsigned char *sum_of_abs(const struct chk *c, const unsigned char *in, size_t nin,
                                 size_t nout)
{
    const struct ttype *t = c->t;
    unsigned char *absb, *sabs;

    if (c->cat != C_SUM || !is_float(t->scal))
        return NULL;
    absb = xmalloc(nin * t->extent);
    sabs = xmalloc(nout * t->extent);
    abs_of(t, in, absb, nin);
    /* op is a sum (predefined or user): it also adds up the magnitudes. */
    if (c->piece == P_RSB)
        PMPI_Reduce_scatter_block(absb, sabs, (int)nout, t->dt, c->op, c->comm);
    else
        PMPI_Reduce(absb, sabs, (int)nout, t->dt, c->op, c->root, c->comm);
    free(absb);
    return sabs;
}

/* rsb: the input is p blocks of count elements, the result one block (the
 * first block of the receive buffer in place, whose other blocks are scratch). */
static int check_rsb(const struct chk *c, int rank, int nprocs, uint64_t *rng)
{
    const struct ttype *t = c->t;
    size_t n = c->count, total = n * (size_t)nprocs, ibytes = total * t->extent;
    size_t obytes = (c->inplace ? total : n) * t->extent;
    unsigned char *data = xmalloc(ibytes), *orig, *exp, *act, *sabs;
    const void *send = c->inplace ? MPI_IN_PLACE : data;
    int ok = 1;

    fill(t, c->cat, data, total, rng, rank, nprocs);
    orig = xdup(data, ibytes);
    exp = c->inplace ? xdup(data, ibytes) : pattern(obytes);
    act = c->inplace ? xdup(data, ibytes) : pattern(obytes);
    if (standard_answer(t, c->op)) /* the standard's answer, not the library's */
        standard_reference(t, c->op, data, total, (size_t)rank * n, n, c->comm, exp);
    else
        ok &= call_ok(c, PMPI_Reduce_scatter_block(send, exp, (int)n, t->dt, c->op, c->comm),
                      "reference PMPI_Reduce_scatter_block");
    ok &= call_ok(c, MPI_Reduce_scatter_block(send, act, (int)n, t->dt, c->op, c->comm),
                  "MPI_Reduce_scatter_block");
    if (ok && !c->inplace && memcmp(data, orig, ibytes) != 0) {
        fail_line(c, "send buffer was modified");
        ok = 0;
    }
    sabs = sum_of_abs(c, orig, total, n);
    ok = ok && result_ok(c, act, exp, sabs, n, nprocs);
    free(data);
    free(orig);
    free(exp);
    free(act);
    free(sabs);
    return ok;
}

/* reduce: the result at the root; the receive buffers of other ranks hold
 * PATTERN and must keep it. */
static int check_reduce(const struct chk *c, int rank, int nprocs, uint64_t *rng)
{
    const struct ttype *t = c->t;
    size_t n = c->count, bytes = n * t->extent;
    int at_root = rank == c->root, inplace = c->inplace && at_root, ok = 1;
    unsigned char *data = xmalloc(bytes), *orig, *exp, *act, *sabs;
    const void *send = inplace ? MPI_IN_PLACE : data;

    fill(t, c->cat, data, n, rng, rank, nprocs);
    orig = xdup(data, bytes);
    exp = inplace ? xdup(data, bytes) : pattern(bytes);
    act = inplace ? xdup(data, bytes) : pattern(bytes);
    /* the reference out of place: MPICH 4.0 crashes on MPI_IN_PLACE at a
     * non-zero root (pmodels/mpich#6540) */
    if (standard_answer(t, c->op)) /* every rank computes it; only the root's is compared */
        standard_reference(t, c->op, data, n, 0, n, c->comm, exp);
    else
        ok &= call_ok(c, PMPI_Reduce(data, exp, (int)n, t->dt, c->op, c->root, c->comm),
                      "reference PMPI_Reduce");
    ok &= call_ok(c, MPI_Reduce(send, act, (int)n, t->dt, c->op, c->root, c->comm), "MPI_Reduce");
    if (ok && !inplace && memcmp(data, orig, bytes) != 0) {
        fail_line(c, "send buffer was modified");
        ok = 0;
    }
    sabs = sum_of_abs(c, orig, n, n);
    if (ok && !at_root && !is_pattern(act, bytes)) {
        fail_line(c, "receive buffer written at a non-root rank");
        ok = 0;
    }
    ok = ok && (!at_root || result_ok(c, act, exp, sabs, n, nprocs));
    free(data);
    free(orig);
    free(exp);
    free(act);
    free(sabs);
    return ok;
}

/* allgather: p blocks of count elements; in place, this rank's block of the
 * receive buffer holds its input and the others hold PATTERN. */
static int check_allgather(const struct chk *c, int rank, int nprocs, uint64_t *rng, uint64_t *hash)
{
    const struct ttype *t = c->t;
    size_t n = c->count, sbytes = n * t->extent, total = n * (size_t)nprocs;
    size_t rbytes = total * t->extent;
    unsigned char *data = xmalloc(sbytes), *orig, *exp = pattern(rbytes), *act = pattern(rbytes);
    const void *send = c->inplace ? MPI_IN_PLACE : data;
    /* with MPI_IN_PLACE the send count and type are ignored */
    int scount = c->inplace ? 0 : c->mixed ? (int)n / 4 : (int)n, ok = 1;
    MPI_Datatype stype = c->inplace ? MPI_DATATYPE_NULL : c->mixed ? contig4 : t->dt;

    fill(t, C_EXACT, data, n, rng, rank, nprocs);
    orig = xdup(data, sbytes);
    if (c->inplace) {
        memcpy(exp + (size_t)rank * sbytes, data, sbytes);
        memcpy(act + (size_t)rank * sbytes, data, sbytes);
    }
    ok &= call_ok(c, PMPI_Allgather(send, scount, stype, exp, (int)n, t->dt, c->comm),
                  "reference PMPI_Allgather");
    ok &= call_ok(c, MPI_Allgather(send, scount, stype, act, (int)n, t->dt, c->comm),
                  "MPI_Allgather");
    if (ok && !c->inplace && memcmp(data, orig, sbytes) != 0) {
        fail_line(c, "send buffer was modified");
        ok = 0;
    }
    ok = ok && result_ok(c, act, exp, NULL, total, nprocs);
    *hash = hash_result(t, act, total);
    free(data);
    free(orig);
    free(exp);
    free(act);
    return ok;
}

/* bcast: every rank starts from its own random data (gaps included). */
static int check_bcast(const struct chk *c, int rank, int nprocs, uint64_t *rng, uint64_t *hash)
{
    const struct ttype *t = c->t;
    size_t n = c->count, bytes = n * t->extent;
    unsigned char *data = xmalloc(bytes), *exp, *act;
    int mixed = c->mixed && rank == c->root, ok = 1;
    int count = mixed ? (int)n / 4 : (int)n;
    MPI_Datatype dt = mixed ? contig4 : t->dt;

    fill(t, C_EXACT, data, n, rng, rank, nprocs);
    exp = xdup(data, bytes);
    act = xdup(data, bytes);
    ok &= call_ok(c, PMPI_Bcast(exp, count, dt, c->root, c->comm), "reference PMPI_Bcast");
    ok &= call_ok(c, MPI_Bcast(act, count, dt, c->root, c->comm), "MPI_Bcast");
    ok = ok && result_ok(c, act, exp, NULL, n, nprocs);
    *hash = hash_result(t, act, n);
    free(data);
    free(exp);
    free(act);
    return ok;
}

/* Runs one check; the verdict comes with the next pend_flush(). */
static void run_check(const struct chk *c)
{
    uint64_t rng = case_rng();
    uint64_t hash = 0;
    int rank, nprocs, ok = 0;
    char d[CHECK_DESC_LEN];

    MPI_Comm_rank(c->comm, &rank);
    MPI_Comm_size(c->comm, &nprocs);
    switch (c->piece) {
    case P_RSB:
        ok = check_rsb(c, rank, nprocs, &rng);
        break;
    case P_REDUCE:
        ok = check_reduce(c, rank, nprocs, &rng);
        break;
    case P_ALLGATHER:
        ok = check_allgather(c, rank, nprocs, &rng, &hash);
        break;
    default:
        ok = check_bcast(c, rank, nprocs, &rng, &hash);
        break;
    }
    describe(c, d, sizeof d);
    pend_add(c->comm, d, hash, ok);
}

/* ---- Filters --------------------------------------------------------------- */

static int piece_on(enum piece p)
{
    return name_matches(opt_pieces, pieces[p].name);
}

/* A reduction check (rsb or reduce) if it passes the filters; --types selects
 * among the predefined datatypes with predefined ops only, so derived types
 * and user ops always run.  root < 0: every root (reduce). */
static void reduction_case(enum piece piece, MPI_Comm comm, const char *where,
                           const struct ttype *t, MPI_Op op, const char *opname, enum cat cat,
                           size_t count, int inplace, int root)
{
    struct chk c = {piece, comm, where, t, op, opname, cat, count, inplace, -1, 0};
    int nprocs;

    if (!piece_on(piece) || !name_matches(opt.ops, opname) ||
        (predefined(t->name) && predefined(opname) && !name_matches(opt.types, t->name)))
        return;
    if (piece == P_RSB) {
        run_check(&c);
        return;
    }
    /* MPI_IN_PLACE at a non-zero root only where MPI_Reduce is not the MPI
     * library's own (see check_reduce) */
    MPI_Comm_size(comm, &nprocs);
    if (inplace && !reduce_interposed)
        nprocs = 1;
    for (c.root = root < 0 ? 0 : root % nprocs; c.root < nprocs; c.root++) {
        run_check(&c);
        if (root >= 0)
            break;
    }
}

/* An allgather or bcast check if it passes the filters (--types: predefined
 * datatypes only).  root < 0: every root (bcast). */
static void data_case(enum piece piece, MPI_Comm comm, const char *where, const struct ttype *t,
                      size_t count, int inplace, int root, int mixed)
{
    struct chk c = {piece, comm, where, t, MPI_OP_NULL, "-", C_EXACT, count, inplace, -1, mixed};
    int nprocs;

    if (!piece_on(piece) || (predefined(t->name) && !mixed && !name_matches(opt.types, t->name)))
        return;
    if (piece == P_ALLGATHER) {
        run_check(&c);
        return;
    }
    MPI_Comm_size(comm, &nprocs);
    for (c.root = root < 0 ? 0 : root; c.root < nprocs; c.root++) {
        run_check(&c);
        if (root >= 0)
            break;
    }
}

/* ---- User ops and derived types ------------------------------------------ */

static struct {
    MPI_Op affine64, matmul, dsum, vsum, vaffine;
    struct ttype ll, mat, dbl, vec_dbl, vec_int;
    const struct ttype *t_int, *t_double, *t_double_int, *t_cdouble;
} extra;

static void extra_init(void)
{
    MPI_Op_create(affine64_op, 0, &extra.affine64);
    MPI_Op_create(matmul_op, 0, &extra.matmul);
    MPI_Op_create(dsum_op, 1, &extra.dsum);
    MPI_Op_create(vsum_op, 1, &extra.vsum);
    MPI_Op_create(vaffine_op, 0, &extra.vaffine);
    MPI_Type_contiguous(4, MPI_INT, &contig4);
    MPI_Type_commit(&contig4);
    vector_types_create(&extra.vec_dbl, &extra.vec_int);
    /* user ops on predefined types: named apart so that --types leaves them on */
    extra.ll = *find_type(MPI_LONG_LONG);
    extra.dbl = *find_type(MPI_DOUBLE);
    extra.mat = contig4_ttype(contig4);
    extra.t_int = find_type(MPI_INT);
    extra.t_double = find_type(MPI_DOUBLE);
    extra.t_double_int = find_type(MPI_DOUBLE_INT);
    extra.t_cdouble = find_type(MPI_C_DOUBLE_COMPLEX);
}

static void extra_free(void)
{
    MPI_Op_free(&extra.affine64);
    MPI_Op_free(&extra.matmul);
    MPI_Op_free(&extra.dsum);
    MPI_Op_free(&extra.vsum);
    MPI_Op_free(&extra.vaffine);
    MPI_Type_free(&contig4);
    MPI_Type_free(&extra.vec_dbl.dt);
    MPI_Type_free(&extra.vec_int.dt);
}

/* ---- Suites -------------------------------------------------------------- */

/* Every predefined (type, op) pair for rsb and reduce, every predefined type
 * for allgather and bcast, on the world communicator.  Reduce runs at every
 * root with --all-roots; otherwise the root moves with the count, so that each
 * pair meets every root when there are at least as many counts as ranks. */
static int run_predefined(void)
{
    int ti, oi, k, ip, nskipped = 0;

    for (ti = 0; ti < ntypes; ti++) {
        const struct ttype *t = &types[ti];
        if (!type_selected(t))
            continue;
        for (oi = 0; oi < nops; oi++) {
            const struct top *o = &ops[oi];
            if (!op_selected(t, o, &nskipped))
                continue;
            for (k = 0; k < opt.ncounts; k++)
                for (ip = 0; ip < 2; ip++) {
                    size_t n = opt.counts[k];
                    reduction_case(P_RSB, MPI_COMM_WORLD, "world", t, o->op, o->name, o->cat, n, ip,
                                   -1);
                    reduction_case(P_REDUCE, MPI_COMM_WORLD, "world", t, o->op, o->name, o->cat, n,
                                   ip, opt_all_roots ? -1 : (k + ip) % wsize);
                }
        }
        for (k = 0; k < opt.ncounts; k++) {
            for (ip = 0; ip < 2; ip++)
                data_case(P_ALLGATHER, MPI_COMM_WORLD, "world", t, opt.counts[k], ip, -1, 0);
            data_case(P_BCAST, MPI_COMM_WORLD, "world", t, opt.counts[k], 0, -1, 0);
        }
        pend_flush();
    }
    return nskipped;
}

/* A mixed set of checks, run on each communicator under test; reduce and
 * bcast at every root. */
static void comm_suite(MPI_Comm comm, const char *where)
{
    static const size_t counts[] = {1, 7, 1000};
    int c, ip;

    for (c = 0; c < 3; c++)
        for (ip = 0; ip < 2; ip++) {
            size_t n = counts[c];
            reduction_case(P_RSB, comm, where, extra.t_int, MPI_SUM, "MPI_SUM", C_SUM, n, ip, -1);
            reduction_case(P_RSB, comm, where, extra.t_double, MPI_SUM, "MPI_SUM", C_SUM, n, ip,
                           -1);
            reduction_case(P_RSB, comm, where, extra.t_cdouble, MPI_PROD, "MPI_PROD", C_PROD, n, ip,
                           -1);
            reduction_case(P_RSB, comm, where, extra.t_double_int, MPI_MINLOC, "MPI_MINLOC", C_LOC,
                           n, ip, -1);
            reduction_case(P_RSB, comm, where, &extra.ll, extra.affine64,
                           "affine64(non-commutative)", C_AFFINE, n, ip, -1);
            reduction_case(P_RSB, comm, where, &extra.mat, extra.matmul, "matmul(non-commutative)",
                           C_EXACT, n, ip, -1);
            reduction_case(P_REDUCE, comm, where, extra.t_int, MPI_SUM, "MPI_SUM", C_SUM, n, ip,
                           -1);
            reduction_case(P_REDUCE, comm, where, extra.t_double, MPI_SUM, "MPI_SUM", C_SUM, n, ip,
                           -1);
            reduction_case(P_REDUCE, comm, where, extra.t_double_int, MPI_MAXLOC, "MPI_MAXLOC",
                           C_LOC, n, ip, -1);
            reduction_case(P_REDUCE, comm, where, &extra.ll, extra.affine64,
                           "affine64(non-commutative)", C_AFFINE, n, ip, -1);
            data_case(P_ALLGATHER, comm, where, extra.t_int, n, ip, -1, 0);
            data_case(P_ALLGATHER, comm, where, extra.t_double_int, n, ip, -1, 0);
            data_case(P_ALLGATHER, comm, where, &extra.vec_dbl, n, ip, -1, 0);
        }
    for (c = 0; c < 3; c++) {
        data_case(P_BCAST, comm, where, extra.t_int, counts[c], 0, -1, 0);
        data_case(P_BCAST, comm, where, extra.t_double, counts[c], 0, -1, 0);
        data_case(P_BCAST, comm, where, &extra.vec_int, counts[c], 0, -1, 0);
    }
    pend_flush(); /* before the caller frees comm */
}

static void run_extras(void)
{
    static const size_t vcounts[] = {0, 1, 3, 40};
    int k, ip;

    /* User ops on predefined types, at every count. */
    for (k = 0; k < opt.ncounts; k++)
        for (ip = 0; ip < 2; ip++) {
            size_t n = opt.counts[k];
            int root = opt_all_roots ? -1 : (k + ip) % wsize;
            reduction_case(P_RSB, MPI_COMM_WORLD, "world", &extra.ll, extra.affine64,
                           "affine64(non-commutative)", C_AFFINE, n, ip, -1);
            reduction_case(P_REDUCE, MPI_COMM_WORLD, "world", &extra.ll, extra.affine64,
                           "affine64(non-commutative)", C_AFFINE, n, ip, root);
            reduction_case(P_RSB, MPI_COMM_WORLD, "world", &extra.dbl, extra.dsum,
                           "dsum(commutative)", C_SUM, n, ip, -1);
            reduction_case(P_REDUCE, MPI_COMM_WORLD, "world", &extra.dbl, extra.dsum,
                           "dsum(commutative)", C_SUM, n, ip, root);
        }
    pend_flush();

    /* Derived types: contiguous and strided (gaps must stay as they were). */
    for (k = 0; k < 4; k++) {
        size_t n = vcounts[k];
        for (ip = 0; ip < 2; ip++) {
            reduction_case(P_RSB, MPI_COMM_WORLD, "world", &extra.mat, extra.matmul,
                           "matmul(non-commutative)", C_EXACT, n, ip, -1);
            reduction_case(P_RSB, MPI_COMM_WORLD, "world", &extra.vec_dbl, extra.vsum,
                           "vsum(commutative)", C_SUM, n, ip, -1);
            reduction_case(P_RSB, MPI_COMM_WORLD, "world", &extra.vec_int, extra.vaffine,
                           "affine(non-commutative)", C_EXACT, n, ip, -1);
            reduction_case(P_REDUCE, MPI_COMM_WORLD, "world", &extra.mat, extra.matmul,
                           "matmul(non-commutative)", C_EXACT, n, ip, -1);
            reduction_case(P_REDUCE, MPI_COMM_WORLD, "world", &extra.vec_dbl, extra.vsum,
                           "vsum(commutative)", C_SUM, n, ip, -1);
            reduction_case(P_REDUCE, MPI_COMM_WORLD, "world", &extra.vec_int, extra.vaffine,
                           "affine(non-commutative)", C_EXACT, n, ip, -1);
            data_case(P_ALLGATHER, MPI_COMM_WORLD, "world", &extra.mat, n, ip, -1, 0);
            data_case(P_ALLGATHER, MPI_COMM_WORLD, "world", &extra.vec_dbl, n, ip, -1, 0);
            data_case(P_ALLGATHER, MPI_COMM_WORLD, "world", &extra.vec_int, n, ip, -1, 0);
        }
        data_case(P_BCAST, MPI_COMM_WORLD, "world", &extra.mat, n, 0, -1, 0);
        data_case(P_BCAST, MPI_COMM_WORLD, "world", &extra.vec_dbl, n, 0, -1, 0);
        data_case(P_BCAST, MPI_COMM_WORLD, "world", &extra.vec_int, n, 0, -1, 0);
        /* same type signature, different datatypes on the two sides */
        data_case(P_ALLGATHER, MPI_COMM_WORLD, "world", extra.t_int, 4 * n, 0, -1, 1);
        data_case(P_BCAST, MPI_COMM_WORLD, "world", extra.t_int, 4 * n, 0, -1, 1);
    }
    pend_flush();

    /* Repeated calls on one communicator, sizes alternating: cached state reused. */
    for (k = 0; k < 12; k++) {
        size_t n = k % 2 ? 65539 : 1000;
        reduction_case(P_RSB, MPI_COMM_WORLD, "world(repeat)", extra.t_double, MPI_SUM, "MPI_SUM",
                       C_SUM, n, k % 3 == 0, -1);
        reduction_case(P_REDUCE, MPI_COMM_WORLD, "world(repeat)", extra.t_double, MPI_SUM,
                       "MPI_SUM", C_SUM, n, k % 3 == 1, k % wsize);
        data_case(P_ALLGATHER, MPI_COMM_WORLD, "world(repeat)", extra.t_double, n, k % 3 == 2, -1,
                  0);
        data_case(P_BCAST, MPI_COMM_WORLD, "world(repeat)", extra.t_int, k % 2 ? 7 : 1, 0,
                  k % wsize, 0);
    }

    /* Communicators created and freed in turn, then the world's. */
    run_comm_suites(comm_suite);
}

/* ---- Main --------------------------------------------------------------- */

static void usage(void)
{
    if (wrank == 0)
        fprintf(stderr,
                "usage: test_pieces [--quick] [--counts a,b,c] [--types t1,t2] [--ops o1,o2]\n"
                "                   [--pieces rsb,allgather,reduce,bcast] [--all-roots]\n"
                "                   [--seed N] [--verbose] [--expect-treeduce]\n"
                "  --quick            counts 0,1,7,1000 (default 0,1,2,7,64,1000,65539)\n"
                "  --pieces           the routines to check (default all four)\n"
                "  --all-roots        reduce every predefined type/op pair at every root\n"
                "                     (default: the root moves from count to count)\n"
                "  --expect-treeduce  fail unless the routines of --pieces are not the MPI\n"
                "                     library's own (treeduce is linked in or preloaded)\n"
                "  types and ops by MPI name, with or without the MPI_ prefix (int, double_int, "
                "sum);\n"
                "  --types filters the predefined datatypes (derived types and user ops always "
                "run)\n");
}

static int parse_pieces(const char *s)
{
    const char *p = s;

    while (*p) {
        size_t n = strcspn(p, ",");
        int k, known = 0;
        for (k = 0; k < P_MAX; k++)
            known |= strlen(pieces[k].name) == n && strncasecmp(p, pieces[k].name, n) == 0;
        if (!known)
            return -1;
        p += n;
        if (*p == ',')
            p++;
    }
    opt_pieces = s;
    return 0;
}

/* The options of check_parse_args that only this test takes. */
static int parse_arg(int argc, char **argv, int *i)
{
    const char *a = argv[*i];

    if (!strcmp(a, "--all-roots")) {
        opt_all_roots = 1;
        return 1;
    }
    if (!strcmp(a, "--pieces") && *i + 1 < argc)
        return parse_pieces(argv[++*i]) == 0 ? 1 : -1;
    return 0;
}

/* Routines of --pieces that are the MPI library's own: an interposed MPI_X is
 * a different function from PMPI_X. */
static int not_interposed(void)
{
    int p, n = 0;

    for (p = 0; p < P_MAX; p++) {
        void *mine, *ref;
        if (!piece_on(p))
            continue;
        mine = dlsym(RTLD_DEFAULT, pieces[p].mpi);
        ref = dlsym(RTLD_DEFAULT, pieces[p].ref);
        if (!mine || mine == ref) {
            if (wrank == 0)
                fprintf(stderr, "%s is the MPI library's own: treeduce is not linked in\n",
                        pieces[p].mpi);
            n++;
        }
    }
    return n;
}

int main(int argc, char **argv)
{
    int nskipped, nbad;

    check_init(&argc, &argv, "test_pieces");
    if (check_parse_args(argc, argv, 1u << 24, parse_arg) != 0) {
        usage();
        MPI_Finalize();
        return 2;
    }
    if (opt.expect_treeduce && (nbad = not_interposed()) > 0) {
        if (wrank == 0)
            printf("0 passed, %d failed\n", nbad);
        free(opt.counts);
        MPI_Finalize();
        return 1;
    }
    reduce_interposed = dlsym(RTLD_DEFAULT, "MPI_Reduce") != dlsym(RTLD_DEFAULT, "PMPI_Reduce");
    check_errors_return();
    extra_init();

    nskipped = run_predefined();
    run_extras();
    extra_free();
    return check_finish(nskipped);
}
