/* Erroneous collective calls under MPI_ERRORS_RETURN: the error class the MPI
 * library gives for the same call, on every rank, and every rank returns.
 *
 * Each call is made twice with the same arguments: through MPI_X (treeduce's
 * where its library is linked or preloaded) and through PMPI_X (the MPI
 * library's own), and the two error classes are compared on each rank.  Run
 * without treeduce both are the library's, and the test checks itself.
 *   - argument errors of every collective (Allreduce, Iallreduce,
 *     Reduce_scatter_block, Reduce_scatter, Allgather, Reduce, Bcast): NULL
 *     buffers with a positive count, negative counts, MPI_DATATYPE_NULL, an
 *     uncommitted derived datatype, a count whose bytes overflow,
 *     MPI_OP_NULL, invalid roots,
 *     MPI_COMM_NULL, aliased buffers, MPI_IN_PLACE for both buffers; a valid
 *     call on an intercommunicator.  Where MPICH 4.0 crashes (negative
 *     counts), the class the standard names, and only where treeduce is in;
 *   - mismatched counts (--mismatch): rank 0 gives COUNT doubles, the others
 *     half as many.  The library may report MPI_ERR_TRUNCATE on some ranks
 *     only; treeduce must report an error at least on those, and no rank may
 *     hang (the test runs under a timeout); correct calls on the same
 *     communicator work after it.
 * Every error returned must have been raised once through the communicator's
 * error handler (a nonblocking call's in MPI_Wait), and none where the call
 * succeeded.
 * --expect-treeduce fails the run unless MPI_Allreduce is treeduce's.
 * Every case runs on its own duplicate of MPI_COMM_WORLD, freed after it.
 * The last line reads "N passed, M failed"; the exit status is non-zero if
 * any check failed.
 */
#include <dlfcn.h>
#include <limits.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size;
static long passed, failed;
static int verbose;
static int interposed; /* MPI_Allreduce is not the library's own */

/* The same call through MPI_f (treeduce where present) or PMPI_f (the library). */
#define CALL(lib, f, ...) ((lib) ? P##f(__VA_ARGS__) : f(__VA_ARGS__))

static int class_of(int rc)
{
    int cls = rc;
    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &cls);
    return cls;
}

static const char *class_name(int cls)
{
    static char buf[MPI_MAX_ERROR_STRING];
    int len;
    if (cls == MPI_SUCCESS)
        return "MPI_SUCCESS";
    MPI_Error_string(cls, buf, &len);
    return buf;
}

/* The arguments of one case. */
typedef struct args {
    const void *sendbuf;
    void *recvbuf;
    int count; /* Reduce_scatter: every rank's count */
    MPI_Datatype type;
    MPI_Op op;
    int root;
    MPI_Comm comm; /* MPI_COMM_WORLD: a fresh duplicate */
} args;

enum coll { ALLREDUCE, IALLREDUCE, RSB, RS, ALLGATHER, REDUCE, BCAST, NCOLL };
static const char *const coll_names[NCOLL] = {
    "MPI_Allreduce",      "MPI_Iallreduce", "MPI_Reduce_scatter_block",
    "MPI_Reduce_scatter", "MPI_Allgather",  "MPI_Reduce",
    "MPI_Bcast"};

static int run(int lib, enum coll coll, const args *a, MPI_Comm comm)
{
    int rc;
    MPI_Request req;
    switch (coll) {
    case ALLREDUCE:
        return CALL(lib, MPI_Allreduce, a->sendbuf, a->recvbuf, a->count, a->type, a->op, comm);
    case IALLREDUCE:
        rc =
            CALL(lib, MPI_Iallreduce, a->sendbuf, a->recvbuf, a->count, a->type, a->op, comm, &req);
        return rc == MPI_SUCCESS ? MPI_Wait(&req, MPI_STATUS_IGNORE) : rc;
    case RSB:
        return CALL(lib, MPI_Reduce_scatter_block, a->sendbuf, a->recvbuf, a->count, a->type, a->op,
                    comm);
    case RS: {
        int counts[64];
        for (int r = 0; r < size && r < 64; r++)
            counts[r] = a->count;
        return CALL(lib, MPI_Reduce_scatter, a->sendbuf, a->recvbuf, counts, a->type, a->op, comm);
    }
    case ALLGATHER:
        return CALL(lib, MPI_Allgather, a->sendbuf, a->count, a->type, a->recvbuf, a->count,
                    a->type, comm);
    case REDUCE:
        return CALL(lib, MPI_Reduce, a->sendbuf, a->recvbuf, a->count, a->type, a->op, a->root,
                    comm);
    default:
        return CALL(lib, MPI_Bcast, a->recvbuf, a->count, a->type, a->root, comm);
    }
}

/* Whether a correct allreduce on comm still succeeds, with the right sums. */
static int still_works(MPI_Comm comm)
{
    double in[10], out[10];
    int ok = 1;
    for (int i = 0; i < 10; i++)
        in[i] = rank + i;
    ok = MPI_Allreduce(in, out, 10, MPI_DOUBLE, MPI_SUM, comm) == MPI_SUCCESS;
    for (int i = 0; ok && i < 10; i++)
        ok = out[i] == (double)size * (size - 1) / 2 + (double)size * i;
    return ok;
}

/* The class of the call through lib, on its own duplicate of a->comm where
 * that is MPI_COMM_WORLD (a failed collective may leave messages behind).
 * then: after it, treeduce's correct calls on the same communicator must
 * still work (the MPI library's may not: its messages of the failed call
 * may still be there). */
/* The communicator's handler: counts the errors raised through it, and
 * returns, as MPI_ERRORS_RETURN does. */
static int raised, raised_code;

static void counting_handler(MPI_Comm *comm, int *code, ...)
{
    (void)comm;
    raised++;
    raised_code = *code;
}

static int class_through(int lib, enum coll coll, const args *a, int then)
{
    static MPI_Errhandler counting = MPI_ERRHANDLER_NULL;
    MPI_Comm comm = a->comm;
    if (counting == MPI_ERRHANDLER_NULL)
        MPI_Comm_create_errhandler(counting_handler, &counting);
    if (comm == MPI_COMM_WORLD) {
        MPI_Comm_dup(MPI_COMM_WORLD, &comm);
        MPI_Comm_set_errhandler(comm, counting);
    }
    raised = 0;
    int rc = run(lib, coll, a, comm);
    int cls = class_of(rc);
    /* an error returned was raised through the communicator's handler, once
     * (MPI_Wait raises a nonblocking call's) */
    if (comm != a->comm && (rc == MPI_SUCCESS ? raised != 0 : raised != 1 || raised_code != rc)) {
        failed++;
        fprintf(stderr,
                "rank %d: FAIL %s through %s returned %s, raised %d times through the handler\n",
                rank, coll_names[coll], lib ? "the MPI library" : "treeduce", class_name(cls),
                raised);
    }
    if (then && !lib) {
        int ok = still_works(comm) && still_works(comm);
        passed += ok;
        failed += !ok;
        if (!ok)
            fprintf(stderr, "rank %d: FAIL a correct MPI_Allreduce after %s\n", rank,
                    coll_names[coll]);
    }
    if (comm != a->comm)
        MPI_Comm_free(&comm);
    return cls;
}

/* Same class through treeduce as through the library, on this rank; or,
 * where the library crashes on the call (MPICH 4.0 on negative counts), the
 * class expect that the standard names. */
static void expect_class(const char *what, enum coll coll, const args *a, int expect)
{
    if (expect >= 0 && !interposed)
        return; /* the library's routine would crash */
    if (verbose)
        fprintf(stderr, "rank %d: %s %s\n", rank, coll_names[coll], what);
    int lib = expect >= 0 ? expect : class_through(1, coll, a, 0);
    int mine = class_through(0, coll, a, 0);
    if (verbose)
        fprintf(stderr, "rank %d:   %s\n", rank, class_name(lib));
    if (mine == lib) {
        passed++;
        return;
    }
    failed++;
    fprintf(stderr, "rank %d: FAIL %s %s: %s", rank, coll_names[coll], what, class_name(mine));
    fprintf(stderr, ", the MPI library: %s\n", class_name(lib));
}

static void same_class(const char *what, enum coll coll, const args *a)
{
    expect_class(what, coll, a, -1);
}

static void argument_errors(void)
{
    enum { N = 64 };
    double *a = calloc((size_t)N * (size_t)size, sizeof(double));
    double *b = calloc((size_t)N * (size_t)size, sizeof(double));
    MPI_Datatype uncommitted, huge;
    MPI_Type_contiguous(2, MPI_DOUBLE, &uncommitted);
    MPI_Type_contiguous(1 << 30, MPI_DOUBLE, &huge); /* 8 GiB: INT_MAX of them overflow */
    MPI_Type_commit(&huge);
    for (int c = 0; c < NCOLL; c++) {
        const args ok = {a, b, 10, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD};
        args x;
        int rooted = c == REDUCE || c == BCAST, reduces = c != ALLGATHER && c != BCAST;
        /* a correct call first: both succeed */
        same_class("with valid arguments", (enum coll)c, &ok);
        x = ok, x.sendbuf = NULL, x.recvbuf = NULL;
        same_class("with NULL buffers", (enum coll)c, &x);
        if (c != BCAST) {
            x = ok, x.sendbuf = NULL;
            same_class("with a NULL sendbuf", (enum coll)c, &x);
        }
        x = ok, x.recvbuf = NULL;
        if (c != REDUCE)
            same_class("with a NULL recvbuf", (enum coll)c, &x);
        if (c != BCAST) {
            /* (MPICH refuses an allgather's aliased buffers on rank 0 only,
             * and the other ranks wait for it: treeduce refuses on all) */
            x = ok, x.sendbuf = b;
            if (c != ALLGATHER)
                same_class("with aliased buffers", (enum coll)c, &x);
            /* (MPICH 4.0 crashes on MPI_IN_PLACE at a reduce's other ranks) */
            x = ok, x.sendbuf = MPI_IN_PLACE, x.recvbuf = MPI_IN_PLACE;
            if (c != REDUCE)
                same_class("with MPI_IN_PLACE for both buffers", (enum coll)c, &x);
        }
        x = ok, x.count = -1;
        expect_class("with count -1", (enum coll)c, &x, MPI_ERR_COUNT);
        x = ok, x.type = MPI_DATATYPE_NULL;
        same_class("with MPI_DATATYPE_NULL", (enum coll)c, &x);
        x = ok, x.type = uncommitted, x.count = 5;
        same_class("with an uncommitted datatype", (enum coll)c, &x);
        /* (MPICH 4.0 crashes on an allgather or a bcast of it) */
        x = ok, x.type = huge, x.count = INT_MAX;
        if (reduces)
            same_class("with INT_MAX elements of 8 GiB", (enum coll)c, &x);
        if (reduces) {
            x = ok, x.op = MPI_OP_NULL;
            same_class("with MPI_OP_NULL", (enum coll)c, &x);
        }
        if (rooted) {
            x = ok, x.root = size;
            same_class("with root = size", (enum coll)c, &x);
            x = ok, x.root = -1;
            same_class("with root -1", (enum coll)c, &x);
        }
        x = ok, x.comm = MPI_COMM_NULL;
        same_class("on MPI_COMM_NULL", (enum coll)c, &x);
    }
    if (size > 1) {
        /* an intercommunicator between the even and the odd ranks: valid */
        MPI_Comm half, inter;
        MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
        MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, 1 - rank % 2, 7, &inter);
        MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN);
        args x = {a, b, 10, MPI_DOUBLE, MPI_SUM, 0, inter};
        same_class("on an intercommunicator", ALLREDUCE, &x);
        MPI_Comm_free(&inter);
        MPI_Comm_free(&half);
    }
    MPI_Type_free(&uncommitted);
    MPI_Type_free(&huge);
    free(a);
    free(b);
}

/* Rank 0 gives count doubles, the others count / 2: where the library errs,
 * treeduce errs; and every rank returns. */
static void mismatch(int count, int nonblocking)
{
    int mine = rank == 0 ? count : count / 2;
    double *in = malloc((size_t)count * sizeof(double));
    double *out = malloc((size_t)count * sizeof(double));
    for (int i = 0; i < count; i++)
        in[i] = 1.0;
    args x = {in, out, mine, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD};
    enum coll c = nonblocking ? IALLREDUCE : ALLREDUCE;
    int lib = class_through(1, c, &x, 0);
    for (int i = 0; i < count; i++)
        out[i] = -1.0;
    int tr = class_through(0, c, &x, 1);
    /* where treeduce says success, the result must be right: every rank's 1 */
    int stale = 0;
    for (int i = 0; tr == MPI_SUCCESS && i < mine && !stale; i++)
        stale = out[i] != (double)size;
    if ((lib != MPI_SUCCESS && tr == MPI_SUCCESS) || stale) {
        failed++;
        fprintf(stderr, "rank %d: FAIL %s of %d doubles (rank 0: %d): %s%s", rank, coll_names[c],
                mine, count, class_name(tr), stale ? " with stale data" : "");
        fprintf(stderr, ", the MPI library: %s\n", class_name(lib));
    } else {
        passed++;
    }
    printf("rank %d: %s of %d doubles (rank 0: %d): %s", rank, coll_names[c], mine, count,
           class_name(tr));
    printf(", the MPI library: %s\n", class_name(lib));
    free(in);
    free(out);
}

int main(int argc, char **argv)
{
    int count = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    /* errors on MPI_COMM_NULL are raised on MPI_COMM_WORLD */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    /* an interposed MPI_Allreduce is a different function from PMPI_Allreduce */
    interposed = dlsym(RTLD_DEFAULT, "MPI_Allreduce") != dlsym(RTLD_DEFAULT, "PMPI_Allreduce");
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--verbose") == 0) {
            verbose = 1;
        } else if (strcmp(argv[i], "--mismatch") == 0 && i + 1 < argc) {
            count = atoi(argv[++i]);
        } else if (strcmp(argv[i], "--expect-treeduce") == 0 && !interposed) {
            if (rank == 0)
                fprintf(stderr, "FAIL: MPI_Allreduce is the MPI library's own\n");
            failed++;
        }
    }
    if (count > 0) {
        mismatch(count, 0);
        mismatch(count, 1);
    } else {
        argument_errors();
    }
    long t[2] = {passed, failed}, all[2];
    PMPI_Allreduce(t, all, 2, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("%ld passed, %ld failed\n", all[0], all[1]);
    MPI_Finalize();
    return all[1] != 0;
}
