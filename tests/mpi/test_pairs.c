/* test_pairs.c - which (datatype, op) pairs are errors is the MPI library's
 * word, whichever MPI treeduce is built with.
 *
 * For every predefined C datatype x predefined op (MPI_LXOR on MPI_DOUBLE,
 * which MPICH accepts and Open MPI rejects, MPI_BAND on MPI_DOUBLE, MPI_SUM on
 * MPI_2INT, MPI_MAX on a complex type, ...), and for the same ops on a
 * contiguous derived type of MPI_DOUBLE and of MPI_INT: with MPI_ERRORS_RETURN
 * on the communicator, treeduce's MPI_Allreduce must succeed exactly where
 * MPI_Reduce_local accepts the pair (on the base type for a derived type: a
 * predefined op applies to the base elements), and on a pair the library
 * rejects it must hand the call to the library, which returns its own error
 * (the error class of PMPI_Allreduce's), leaving recvbuf as it was.  Where
 * the pair is accepted, the result must equal PMPI_Allreduce's byte for
 * byte (zeros in, which every type holds; PMPI is skipped for derived types,
 * which MPICH rejects with predefined ops).  Pairs MPICH accepts and then
 * aborts on are skipped.
 *
 * Run at TREEDUCE_VERBOSE=1: the rejected pairs leave the note "the MPI
 * library rejects this operation on this datatype".  Prints "N passed, M
 * failed" on rank 0; exits non-zero if a check failed.
 */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#define COUNT 5
#define MAX_EXTENT 64

#define T(t)                                                                                       \
    {                                                                                              \
        t, #t                                                                                      \
    }
static const struct {
    MPI_Datatype type;
    const char *name;
} types[] = {
    T(MPI_CHAR),
    T(MPI_SIGNED_CHAR),
    T(MPI_UNSIGNED_CHAR),
    T(MPI_SHORT),
    T(MPI_INT),
    T(MPI_UNSIGNED),
    T(MPI_LONG),
    T(MPI_LONG_LONG),
    T(MPI_INT8_T),
    T(MPI_UINT64_T),
    T(MPI_AINT),
    T(MPI_OFFSET),
    T(MPI_COUNT),
    T(MPI_FLOAT),
    T(MPI_DOUBLE),
    T(MPI_LONG_DOUBLE),
    T(MPI_C_BOOL),
    T(MPI_BYTE),
    T(MPI_C_DOUBLE_COMPLEX),
    T(MPI_FLOAT_INT),
    T(MPI_DOUBLE_INT),
    T(MPI_2INT),
    T(MPI_LONG_DOUBLE_INT),
    T(MPI_WCHAR),
};
static const struct {
    MPI_Op op;
    const char *name;
} ops[] = {
    T(MPI_MAX), T(MPI_MIN), T(MPI_SUM),  T(MPI_PROD), T(MPI_LAND),   T(MPI_BAND),
    T(MPI_LOR), T(MPI_BOR), T(MPI_LXOR), T(MPI_BXOR), T(MPI_MINLOC), T(MPI_MAXLOC),
};
#define NTYPES (sizeof types / sizeof types[0])
#define NOPS (sizeof ops / sizeof ops[0])

static int rank, passed, failed;

static void check(int ok, const char *type, const char *op, const char *what)
{
    if (ok) {
        passed++;
    } else {
        failed++;
        printf("FAIL rank %d %s %s: %s\n", rank, type, op, what);
    }
}

/* MPICH 4.0.2 accepts these pairs and then aborts inside the op, in its own
 * routines too (see runtime/kernels.c): not callable. */
static int aborts(MPI_Datatype type, MPI_Op op)
{
#if defined(MPICH_NUMVERSION)
    return (type == MPI_FLOAT || type == MPI_DOUBLE || type == MPI_LONG_DOUBLE) &&
           (op == MPI_LAND || op == MPI_LOR);
#else
    (void)type;
    (void)op;
    return 0;
#endif
}

/* Whether COUNT elements of type at a and b hold the same values: their
 * packed bytes (padding, e.g. of MPI_DOUBLE_INT, is no value). */
static int same_typemap_bytes(const void *a, const void *b, MPI_Datatype type)
{
    unsigned char pa[COUNT * MAX_EXTENT], pb[COUNT * MAX_EXTENT];
    int na = 0, nb = 0;
    MPI_Pack(a, COUNT, type, pa, sizeof pa, &na, MPI_COMM_SELF);
    MPI_Pack(b, COUNT, type, pb, sizeof pb, &nb, MPI_COMM_SELF);
    return na == nb && memcmp(pa, pb, (size_t)na) == 0;
}

/* One call of (type, op), base the type MPI_Reduce_local is asked about. */
static void check_pair(MPI_Datatype type, MPI_Datatype base, const char *tname, MPI_Op op,
                       const char *oname, int derived)
{
    unsigned char in[COUNT * MAX_EXTENT], out[COUNT * MAX_EXTENT], ref[COUNT * MAX_EXTENT];
    unsigned char scratch[MAX_EXTENT] = {0}, scratch2[MAX_EXTENT] = {0};
    MPI_Aint lb, extent;
    MPI_Type_get_extent(type, &lb, &extent);
    if (extent <= 0 || extent > MAX_EXTENT) /* a type this MPI was built without */
        return;
    if (aborts(base, op))
        return;
    size_t bytes = COUNT * (size_t)extent;
    memset(in, 0, bytes); /* zero is a value of every type */
    memset(out, 0x5a, bytes);
    memset(ref, 0x5a, bytes);

    int accepted = MPI_Reduce_local(scratch, scratch2, 0, base, op) == MPI_SUCCESS;
    int rc = MPI_Allreduce(in, out, COUNT, type, op, MPI_COMM_WORLD);
    if (!accepted) {
        int lib = PMPI_Allreduce(in, ref, COUNT, type, op, MPI_COMM_WORLD), cls = 0, lib_cls = 0;
        MPI_Error_class(rc, &cls);
        MPI_Error_class(lib, &lib_cls);
        check(rc != MPI_SUCCESS && cls == lib_cls, tname, oname,
              "a pair the library rejects: not the library's error");
        memset(ref, 0x5a, bytes);
        check(memcmp(out, ref, bytes) == 0, tname, oname, "recvbuf written on an error");
        return;
    }
    check(rc == MPI_SUCCESS, tname, oname, "a pair the library accepts failed");
    if (rc != MPI_SUCCESS || derived)
        return;
    check(PMPI_Allreduce(in, ref, COUNT, type, op, MPI_COMM_WORLD) == MPI_SUCCESS &&
              same_typemap_bytes(out, ref, type),
          tname, oname, "result differs from PMPI_Allreduce");
}

int main(int argc, char **argv)
{
    MPI_Datatype dbl4, int4;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    MPI_Type_contiguous(2, MPI_DOUBLE, &dbl4);
    MPI_Type_contiguous(2, MPI_INT, &int4);
    MPI_Type_commit(&dbl4);
    MPI_Type_commit(&int4);

    for (size_t t = 0; t < NTYPES; t++)
        for (size_t o = 0; o < NOPS; o++)
            check_pair(types[t].type, types[t].type, types[t].name, ops[o].op, ops[o].name, 0);
    for (size_t o = 0; o < NOPS; o++) {
        check_pair(dbl4, MPI_DOUBLE, "contiguous(2, MPI_DOUBLE)", ops[o].op, ops[o].name, 1);
        check_pair(int4, MPI_INT, "contiguous(2, MPI_INT)", ops[o].op, ops[o].name, 1);
    }

    MPI_Type_free(&dbl4);
    MPI_Type_free(&int4);
    int tally[2] = {passed, failed};
    PMPI_Allreduce(MPI_IN_PLACE, tally, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        fprintf(stderr, "%d passed, %d failed\n", tally[0], tally[1]);
    MPI_Finalize();
    return tally[1] != 0;
}
