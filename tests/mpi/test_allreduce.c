/* test_allreduce.c - checks MPI_Allreduce against the MPI library's own.
 *
 * Linked with treeduce, MPI_Allreduce is treeduce's and PMPI_Allreduce is the
 * reference; linked with plain MPI both are the same routine and every check
 * passes.  Every (predefined datatype, predefined op) pair the MPI standard
 * defines, plus MPI_CHAR and MPI_WCHAR with the integer ops, is run where the
 * MPI library accepts it (probed with PMPI_Reduce_local), for a list of
 * counts, out of place and in place; then user ops (commutative and not),
 * contiguous and strided derived datatypes, repeated calls, and calls on
 * split, duplicated, reversed and freed communicators.
 *
 * Data is drawn per rank from --seed: floating values spread over 2^-8..2^8
 * so that sums round, PROD factors near 1, few distinct MINLOC/MAXLOC values
 * and indices so that ties occur; signed integer SUM and PROD stay in range
 * (C leaves signed overflow undefined), unsigned ones wrap.
 *
 * A check passes when, on every rank of its communicator:
 *   - both calls return MPI_SUCCESS and the send buffer is unchanged;
 *   - integer, bool, byte, pair and MAX/MIN/logical results equal the
 *     reference exactly (where the library's answer is not the standard's,
 *     under --expect-treeduce the standard's answer computed here from every
 *     rank's input, not PMPI_Allreduce's: unsigned MIN/MAX, which MPICH 4.0.x
 *     compares as signed, pmodels/mpich#6083; in Open MPI 4.1 8/16-bit
 *     unsigned SUM, which saturates, and MPI_OFFSET MIN/MAX, compared as
 *     unsigned: standard_answer in mpi_check.h);
 *   - floating SUM components satisfy |a - e| <= 2 p eps * sum_r |x_r| and
 *     PROD components |a - e| <= 4 p eps * |e| (|e| the complex modulus for
 *     complex types), p the number of ranks, eps the type's epsilon;
 *   - gaps of a strided datatype are left as they were;
 *   - the result is bitwise identical on every rank.
 *
 * Usage: test_allreduce [--quick] [--counts a,b,c] [--types t1,t2]
 *                       [--ops o1,o2] [--seed N] [--verbose]
 * Prints one line per failed check and, on rank 0, "N passed, M failed".
 * Exits non-zero on every rank when a check failed.
 */
#define _GNU_SOURCE /* RTLD_DEFAULT */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_check.h"

/* ---- One check ------------------------------------------------------------ */

/* Runs one (comm, type, op, count, in-place) check; the verdict comes with
 * the next pend_flush(). */
static void run_case(MPI_Comm comm, const char *where, const struct ttype *t, MPI_Op op,
                     const char *opname, enum cat cat, size_t count, int inplace)
{
    int rank, nprocs, ok = 1;
    size_t bytes = count * t->extent;
    unsigned char *data = xmalloc(bytes), *orig = xmalloc(bytes), *exp = xmalloc(bytes),
                  *act = xmalloc(bytes);
    unsigned char *absb = NULL, *sabs = NULL;
    uint64_t rng = case_rng();
    char desc[CHECK_DESC_LEN];

    snprintf(desc, sizeof desc, "comm=%s type=%s op=%s count=%zu in_place=%s", where, t->name,
             opname, count, inplace ? "yes" : "no");
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &nprocs);
    fill(t, cat, data, count, &rng, rank, nprocs);
    memcpy(orig, data, bytes);
    if (inplace) {
        memcpy(exp, data, bytes);
        memcpy(act, data, bytes);
    } else {
        memset(exp, 0x5a, bytes);
        memset(act, 0x5a, bytes);
    }

    if (standard_answer(t, op)) /* the standard's answer, not the library's */
        standard_reference(t, op, data, count, 0, count, comm, exp);
    else
        ok &= check_call_ok(
            desc, PMPI_Allreduce(inplace ? MPI_IN_PLACE : data, exp, (int)count, t->dt, op, comm),
            "reference PMPI_Allreduce");
    ok &= check_call_ok(
        desc, MPI_Allreduce(inplace ? MPI_IN_PLACE : data, act, (int)count, t->dt, op, comm),
        "MPI_Allreduce");
    if (ok && !inplace && memcmp(data, orig, bytes) != 0) {
        check_fail(desc, "send buffer was modified");
        ok = 0;
    }
    if (cat == C_SUM && is_float(t->scal)) { /* a collective: every rank, failed or not */
        absb = xmalloc(bytes);
        sabs = xmalloc(bytes);
        abs_of(t, orig, absb, count);
        /* op is a sum (predefined or user): it also adds up the magnitudes. */
        PMPI_Allreduce(absb, sabs, (int)count, t->dt, op, comm);
    }
    ok = ok && check_result_ok(desc, t, cat, act, exp, sabs, count, nprocs);

    pend_add(comm, desc, hash_result(t, act, count), ok);
    free(data);
    free(orig);
    free(exp);
    free(act);
    free(absb);
    free(sabs);
}

/* ---- User ops and derived types ------------------------------------------ */

static struct {
    MPI_Op matmul, dsum, vsum, vaffine, affine64;
    struct ttype mat, dbl, vec_dbl, vec_int;
    const struct ttype *t_int, *t_double, *t_double_int, *t_uint8, *t_cdouble, *t_uint64;
} extra;

static void extra_init(void)
{
    MPI_Datatype mat;

    MPI_Op_create(matmul_op, 0, &extra.matmul);
    MPI_Op_create(dsum_op, 1, &extra.dsum);
    MPI_Op_create(vsum_op, 1, &extra.vsum);
    MPI_Op_create(vaffine_op, 0, &extra.vaffine);
    MPI_Op_create(affine64_op, 0, &extra.affine64);
    MPI_Type_contiguous(4, MPI_INT, &mat);
    MPI_Type_commit(&mat);
    vector_types_create(&extra.vec_dbl, &extra.vec_int);
    extra.mat = contig4_ttype(mat);
    extra.dbl = (struct ttype){"MPI_DOUBLE",   MPI_DOUBLE, K_FLOAT, S_DBL, G_FLOAT, sizeof(double),
                               sizeof(double), 0,          1,       1,     1};
    extra.t_int = find_type(MPI_INT);
    extra.t_double = find_type(MPI_DOUBLE);
    extra.t_double_int = find_type(MPI_DOUBLE_INT);
    extra.t_uint8 = find_type(MPI_UINT8_T);
    extra.t_cdouble = find_type(MPI_C_DOUBLE_COMPLEX);
    extra.t_uint64 = find_type(MPI_UINT64_T);
}

static void extra_free(void)
{
    MPI_Op_free(&extra.matmul);
    MPI_Op_free(&extra.dsum);
    MPI_Op_free(&extra.vsum);
    MPI_Op_free(&extra.vaffine);
    MPI_Op_free(&extra.affine64);
    MPI_Type_free(&extra.mat.dt);
    MPI_Type_free(&extra.vec_dbl.dt);
    MPI_Type_free(&extra.vec_int.dt);
}

/* ---- Suites -------------------------------------------------------------- */

/* A check of a type and op if both pass the filters; --types selects among
 * the predefined datatypes only, so derived types and user ops always run. */
static void filtered_case(MPI_Comm comm, const char *where, const struct ttype *t, MPI_Op op,
                          const char *opname, enum cat cat, size_t count, int inplace)
{
    if ((!predefined(t->name) || name_matches(opt.types, t->name)) && name_matches(opt.ops, opname))
        run_case(comm, where, t, op, opname, cat, count, inplace);
}

/* Every predefined (type, op) pair on the world communicator; returns the
 * number of pairs not tested. */
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
                for (ip = 0; ip < 2; ip++)
                    run_case(MPI_COMM_WORLD, "world", t, o->op, o->name, o->cat, opt.counts[k], ip);
        }
        pend_flush();
    }
    return nskipped;
}

/* A mixed set of checks, run on each communicator under test. */
static void comm_suite(MPI_Comm comm, const char *where)
{
    static const size_t counts[] = {1, 7, 1000};
    int c, ip;

    for (c = 0; c < 3; c++)
        for (ip = 0; ip < 2; ip++) {
            size_t n = counts[c];
            filtered_case(comm, where, extra.t_int, MPI_SUM, "MPI_SUM", C_SUM, n, ip);
            filtered_case(comm, where, extra.t_double, MPI_SUM, "MPI_SUM", C_SUM, n, ip);
            filtered_case(comm, where, extra.t_double, MPI_MAX, "MPI_MAX", C_EXACT, n, ip);
            filtered_case(comm, where, extra.t_cdouble, MPI_PROD, "MPI_PROD", C_PROD, n, ip);
            filtered_case(comm, where, extra.t_double_int, MPI_MINLOC, "MPI_MINLOC", C_LOC, n, ip);
            filtered_case(comm, where, extra.t_uint8, MPI_BXOR, "MPI_BXOR", C_EXACT, n, ip);
            filtered_case(comm, where, &extra.mat, extra.matmul, "matmul(non-commutative)", C_EXACT,
                          n, ip);
            /* a user op always runs, whatever --types selects */
            run_case(comm, where, extra.t_uint64, extra.affine64, "affine64(non-commutative)",
                     C_EXACT, n, ip);
        }
    pend_flush(); /* before the caller frees comm */
}

static void run_extras(void)
{
    int k, ip, vec_sum_ok, vec_max_ok;
    double vbuf[2 * VEC_SLOTS] = {0};

    /* User ops and a strided datatype on the world communicator. */
    for (k = 0; k < opt.ncounts; k++)
        for (ip = 0; ip < 2; ip++) {
            filtered_case(MPI_COMM_WORLD, "world", &extra.mat, extra.matmul,
                          "matmul(non-commutative)", C_EXACT, opt.counts[k], ip);
            filtered_case(MPI_COMM_WORLD, "world", &extra.dbl, extra.dsum, "dsum(commutative)",
                          C_SUM, opt.counts[k], ip);
            if (name_matches(opt.ops, "affine64(non-commutative)"))
                run_case(MPI_COMM_WORLD, "world", extra.t_uint64, extra.affine64,
                         "affine64(non-commutative)", C_EXACT, opt.counts[k], ip);
        }
    /* A strided datatype, with user ops, and with predefined ops where the
     * library accepts them on derived types (the standard does not require it). */
    vec_sum_ok =
        PMPI_Reduce_local(vbuf, vbuf + VEC_SLOTS, 1, extra.vec_dbl.dt, MPI_SUM) == MPI_SUCCESS;
    vec_max_ok =
        PMPI_Reduce_local(vbuf, vbuf + VEC_SLOTS, 1, extra.vec_int.dt, MPI_MAX) == MPI_SUCCESS;
    for (k = 0; k < 4; k++)
        for (ip = 0; ip < 2; ip++) {
            static const size_t vcounts[] = {0, 1, 3, 40};
            filtered_case(MPI_COMM_WORLD, "world", &extra.vec_dbl, extra.vsum, "vsum(commutative)",
                          C_SUM, vcounts[k], ip);
            filtered_case(MPI_COMM_WORLD, "world", &extra.vec_int, extra.vaffine,
                          "affine(non-commutative)", C_EXACT, vcounts[k], ip);
            if (vec_sum_ok)
                filtered_case(MPI_COMM_WORLD, "world", &extra.vec_dbl, MPI_SUM, "MPI_SUM", C_SUM,
                              vcounts[k], ip);
            if (vec_max_ok)
                filtered_case(MPI_COMM_WORLD, "world", &extra.vec_int, MPI_MAX, "MPI_MAX", C_EXACT,
                              vcounts[k], ip);
        }

    /* Repeated calls on one communicator, sizes alternating: cached state reused. */
    for (k = 0; k < 20; k++) {
        filtered_case(MPI_COMM_WORLD, "world(repeat)", extra.t_double, MPI_SUM, "MPI_SUM", C_SUM,
                      k % 2 ? 65539 : 1000, k % 3 == 0);
        filtered_case(MPI_COMM_WORLD, "world(repeat)", extra.t_int, MPI_SUM, "MPI_SUM", C_SUM,
                      k % 2 ? 7 : 1, k % 3 == 1);
    }

    /* Communicators created and freed in turn, then the world's. */
    run_comm_suites(comm_suite);
}

/* ---- Main --------------------------------------------------------------- */

static void usage(void)
{
    if (wrank == 0)
        fprintf(
            stderr,
            "usage: test_allreduce [--quick] [--counts a,b,c] [--types t1,t2] [--ops o1,o2]\n"
            "                      [--seed N] [--verbose] [--expect-treeduce]\n"
            "  --expect-treeduce  fail unless MPI_Allreduce is not the MPI library's own\n"
            "                     (i.e. a treeduce library is linked in or preloaded)\n"
            "  types and ops by MPI name, with or without the MPI_ prefix (int, double_int, sum);\n"
            "  --types filters the predefined datatypes (derived types and user ops always run)\n");
}

int main(int argc, char **argv)
{
    int nskipped;

    check_init(&argc, &argv, "test_allreduce");
    if (check_parse_args(argc, argv, 1u << 30, NULL) != 0) {
        usage();
        MPI_Finalize();
        return 2;
    }
    if (opt.expect_treeduce) {
        /* an interposed MPI_Allreduce is a different function from PMPI_Allreduce */
        void *mpi = dlsym(RTLD_DEFAULT, "MPI_Allreduce"),
             *pmpi = dlsym(RTLD_DEFAULT, "PMPI_Allreduce");
        if (!mpi || mpi == pmpi) {
            if (wrank == 0)
                fprintf(stderr,
                        "MPI_Allreduce is the MPI library's own: treeduce is not linked in\n"
                        "0 passed, 1 failed\n");
            MPI_Finalize();
            return 1;
        }
    }
    check_errors_return();
    extra_init();

    nskipped = run_predefined();
    run_extras();
    extra_free();
    return check_finish(nskipped);
}
