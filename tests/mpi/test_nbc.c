/* Nonblocking and persistent collectives, MPI_Reduce_scatter and the
 * large-count entry points, against the MPI library's blocking routines.
 *
 * Every result is compared with the PMPI_ routine's on the same random data
 * (integers, and doubles holding small integers, so that every order of
 * reduction gives the same bits; a non-commutative user op checks rank
 * order).  What it exercises:
 *  - several outstanding nonblocking collectives on two communicators,
 *    interleaved with point-to-point traffic, completed by MPI_Waitall,
 *    MPI_Waitany and MPI_Testsome on arrays that mix them with the point-to-
 *    point requests, in shuffled order;
 *  - persistent requests of every collective, started again and again on new
 *    data (MPI_Start, MPI_Startall), completed by MPI_Wait and MPI_Test loops,
 *    and freed;
 *  - progress where the application blocks elsewhere: rank 0 waits for a
 *    collective that rank 1 completes only after a blocking MPI_Recv of a
 *    message rank 0 sends after its wait; a blocking collective on one
 *    communicator while a nonblocking one is outstanding on the other;
 *  - MPI_Request_free of a running request;
 *  - MPI_Sendrecv whose send fails (a rank out of range) while a collective
 *    is outstanding: the error class, and no receive left behind to take the
 *    next message from its source;
 *  - MPI_Reduce_scatter with per-rank counts (zeros included, in place), and
 *    MPI_Allreduce_c.
 * The persistent collectives and MPI_Allreduce_c are MPI 4.0 routines: an MPI
 * 3.1 library (Open MPI 4) runs the rest.
 * The last line reads "N passed, M failed"; the exit status is non-zero if
 * any check failed.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size;
static long passed, failed;
static uint64_t rng = 88172645463325252ull;

static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static void check(int ok, const char *what, int n)
{
    if (ok) {
        passed++;
    } else {
        failed++;
        fprintf(stderr, "rank %d: FAIL %s (count %d)\n", rank, what, n);
    }
}

static void fill_int(int *v, int n)
{
    for (int i = 0; i < n; i++)
        v[i] = (int)(next() % 2001) - 1000;
}

static void fill_dbl(double *v, int n)
{
    for (int i = 0; i < n; i++)
        v[i] = (double)((int)(next() % 2001) - 1000);
}

/* A non-commutative operation: 2x2 integer matrix products (mod 2^32),
 * inout = in * inout. */
static void matmul(void *in_, void *inout_, int *len, MPI_Datatype *dt)
{
    const unsigned *a = in_;
    unsigned *b = inout_;
    (void)dt;
    for (int i = 0; i < *len; i += 4, a += 4, b += 4) {
        unsigned r0 = a[0] * b[0] + a[1] * b[2], r1 = a[0] * b[1] + a[1] * b[3];
        unsigned r2 = a[2] * b[0] + a[3] * b[2], r3 = a[2] * b[1] + a[3] * b[3];
        b[0] = r0;
        b[1] = r1;
        b[2] = r2;
        b[3] = r3;
    }
}

static void xor_op(void *in_, void *inout_, int *len, MPI_Datatype *dt)
{
    const unsigned *a = in_;
    unsigned *b = inout_;
    (void)dt;
    for (int i = 0; i < *len; i++)
        b[i] ^= a[i];
}

/* MPI lets the application free an operation while a call that uses it is
 * pending [MPI-4.1 §6.9.5]: the second call queues behind the first, and its
 * operation is freed before either is waited for. */
static void op_freed_early(MPI_Comm a, int n)
{
    int *x = malloc(n * sizeof(int)), *r0 = malloc(n * sizeof(int)), *e0 = malloc(n * sizeof(int));
    unsigned *m = malloc(4 * (size_t)n * sizeof(unsigned)),
             *mr = malloc(4 * (size_t)n * sizeof(unsigned)),
             *em = malloc(4 * (size_t)n * sizeof(unsigned));
    MPI_Op op, ref, other;
    MPI_Request q[2];
    MPI_Status st[2];
    fill_int(x, n);
    for (int i = 0; i < 4 * n; i++)
        m[i] = (unsigned)next();
    MPI_Op_create(matmul, 0, &op);
    MPI_Iallreduce(x, r0, n, MPI_INT, MPI_SUM, a, &q[0]);
    MPI_Iallreduce(m, mr, 4 * n, MPI_UNSIGNED, op, a, &q[1]);
    MPI_Op_free(&op);
    check(op == MPI_OP_NULL, "MPI_Op_free sets the handle to MPI_OP_NULL", n);
    MPI_Op_create(xor_op, 1, &other); /* a library may give it the freed one's handle */
    MPI_Waitall(2, q, st);
    MPI_Op_free(&other);
    MPI_Op_create(matmul, 0, &ref);
    PMPI_Allreduce(x, e0, n, MPI_INT, MPI_SUM, a);
    PMPI_Allreduce(m, em, 4 * n, MPI_UNSIGNED, ref, a);
    MPI_Op_free(&ref);
    check(!memcmp(e0, r0, n * sizeof(int)), "MPI_Iallreduce before the freed operation's", n);
    check(!memcmp(em, mr, 4 * (size_t)n * sizeof(unsigned)),
          "MPI_Iallreduce whose user-defined operation was freed before the wait", n);
    free(x), free(r0), free(e0), free(m), free(mr), free(em);
}

/* Counts that cover the inline payload, the segment's slots and messages. */
static const int counts[] = {1, 7, 1000, 70001};
#define NCOUNTS (int)(sizeof counts / sizeof counts[0])

/* Several nonblocking collectives on two communicators with point-to-point
 * traffic, completed in a mixed, shuffled array. */
static void interleaved(MPI_Comm a, MPI_Comm b, int n, int how)
{
    int *x1 = malloc(n * sizeof(int)), *r1 = malloc(n * sizeof(int));
    double *x2 = malloc(n * sizeof(double)), *r2 = malloc(n * sizeof(double));
    int *g = malloc((size_t)n * size * sizeof(int)), *gin = malloc(n * sizeof(int));
    int *bc = malloc(n * sizeof(int)), *red = malloc(n * sizeof(int));
    unsigned *m = malloc(4 * (size_t)n * sizeof(unsigned)),
             *mr = malloc(4 * (size_t)n * sizeof(unsigned));
    int *rsin = malloc((size_t)(n + 1) * size * sizeof(int)),
        *rsout = malloc((n + 1) * sizeof(int));
    int *rscounts = malloc(size * sizeof(int));
    int sendv = rank * 1000 + n, recvl = -1, recvr = -1;
    MPI_Op mop;
    MPI_Request q[11];
    int root = n % size;

    MPI_Op_create(matmul, 0, &mop);
    fill_int(x1, n);
    fill_dbl(x2, n);
    fill_int(gin, n);
    fill_int(bc, n);
    fill_int(rsin, (n + 1) * size);
    for (int i = 0; i < 4 * n; i++)
        m[i] = (unsigned)next();
    int total = 0;
    for (int r = 0; r < size; r++) {
        rscounts[r] = (r + n) % 3 == 0 ? 0 : n / (r + 1) + 1; /* uneven, zeros */
        total += rscounts[r];
    }
    (void)total;

    int left = (rank + size - 1) % size, right = (rank + 1) % size;
    MPI_Iallreduce(x1, r1, n, MPI_INT, MPI_SUM, a, &q[0]);
    MPI_Irecv(&recvl, 1, MPI_INT, left, 7, MPI_COMM_WORLD, &q[1]);
    MPI_Iallreduce(x2, r2, n, MPI_DOUBLE, MPI_MAX, b, &q[2]);
    MPI_Iallgather(gin, n, MPI_INT, g, n, MPI_INT, a, &q[3]);
    MPI_Isend(&sendv, 1, MPI_INT, right, 7, MPI_COMM_WORLD, &q[4]);
    MPI_Ibcast(bc, n, MPI_INT, root, b, &q[5]);
    MPI_Ireduce(x1, red, n, MPI_INT, MPI_BXOR, root, a, &q[6]);
    MPI_Iallreduce(m, mr, 4 * n, MPI_UNSIGNED, mop, b, &q[7]);
    MPI_Ireduce_scatter(rsin, rsout, rscounts, MPI_INT, MPI_SUM, a, &q[8]);
    MPI_Irecv(&recvr, 1, MPI_INT, right, 8, MPI_COMM_WORLD, &q[9]);
    MPI_Isend(&sendv, 1, MPI_INT, left, 8, MPI_COMM_WORLD, &q[10]);

    if (how == 0) {
        MPI_Status st[11];
        MPI_Waitall(11, q, st);
    } else if (how == 1) {
        for (int k = 0; k < 11; k++) {
            int idx;
            MPI_Waitany(11, q, &idx, MPI_STATUS_IGNORE);
            check(idx != MPI_UNDEFINED && q[idx] == MPI_REQUEST_NULL, "MPI_Waitany index", n);
        }
        int idx;
        MPI_Waitany(11, q, &idx, MPI_STATUS_IGNORE);
        check(idx == MPI_UNDEFINED, "MPI_Waitany on null requests", n);
    } else {
        int left_ = 11, out, idx[11];
        while (left_ > 0) {
            MPI_Status st[11];
            MPI_Testsome(11, q, &out, idx, st);
            if (out == MPI_UNDEFINED)
                break;
            left_ -= out;
        }
        check(left_ == 0, "MPI_Testsome completes each request once", n);
    }
    for (int k = 0; k < 11; k++)
        check(q[k] == MPI_REQUEST_NULL, "request freed at completion", n);

    /* the references */
    int *e1 = malloc(n * sizeof(int)), *eg = malloc((size_t)n * size * sizeof(int));
    double *e2 = malloc(n * sizeof(double));
    unsigned *em = malloc(4 * (size_t)n * sizeof(unsigned));
    int *ers = malloc(n * sizeof(int) + sizeof(int)), *ebc = malloc(n * sizeof(int));
    PMPI_Allreduce(x1, e1, n, MPI_INT, MPI_SUM, a);
    check(!memcmp(e1, r1, n * sizeof(int)), "MPI_Iallreduce int SUM", n);
    PMPI_Allreduce(x2, e2, n, MPI_DOUBLE, MPI_MAX, b);
    check(!memcmp(e2, r2, n * sizeof(double)), "MPI_Iallreduce double MAX", n);
    PMPI_Allgather(gin, n, MPI_INT, eg, n, MPI_INT, a);
    check(!memcmp(eg, g, (size_t)n * size * sizeof(int)), "MPI_Iallgather", n);
    memcpy(ebc, bc, n * sizeof(int));
    PMPI_Bcast(ebc, n, MPI_INT, root, b); /* everyone now holds root's: unchanged */
    check(!memcmp(ebc, bc, n * sizeof(int)), "MPI_Ibcast", n);
    PMPI_Reduce(x1, e1, n, MPI_INT, MPI_BXOR, root, a);
    if (rank == root)
        check(!memcmp(e1, red, n * sizeof(int)), "MPI_Ireduce BXOR", n);
    PMPI_Allreduce(m, em, 4 * n, MPI_UNSIGNED, mop, b);
    check(!memcmp(em, mr, 4 * (size_t)n * sizeof(unsigned)), "MPI_Iallreduce user op", n);
    PMPI_Reduce_scatter(rsin, ers, rscounts, MPI_INT, MPI_SUM, a);
    check(!memcmp(ers, rsout, rscounts[rank] * sizeof(int)), "MPI_Ireduce_scatter", n);
    check(recvl == left * 1000 + n && recvr == right * 1000 + n, "point-to-point beside", n);

    MPI_Op_free(&mop);
    free(x1), free(r1), free(x2), free(r2), free(g), free(gin), free(bc), free(red), free(m);
    free(mr), free(rsin), free(rsout), free(rscounts), free(e1), free(eg), free(e2), free(em);
    free(ers), free(ebc);
}

#if MPI_VERSION >= 4
/* Persistent requests of every collective, started many times. */
static void persistent(MPI_Comm a, int n)
{
    int *x = malloc(n * sizeof(int)), *r = malloc(n * sizeof(int)), *e = malloc(n * sizeof(int));
    int *rsb = malloc(n * sizeof(int)), *rsbin = malloc((size_t)n * size * sizeof(int));
    int *g = malloc((size_t)n * size * sizeof(int)), *bc = malloc(n * sizeof(int));
    int *red = malloc(n * sizeof(int)), *rs = malloc(n * sizeof(int) + sizeof(int));
    int *rscounts = malloc(size * sizeof(int)), *eg = malloc((size_t)n * size * sizeof(int));
    int root = size - 1;
    MPI_Request q[6];
    for (int k = 0; k < size; k++)
        rscounts[k] = k == 0 ? 0 : n / k;
    /* the MPI library's own persistent allreduce beside treeduce's, freed after
     * them: with a PMPI_Send_init handle, MPICH 4.0.2 hung in the next one */
    int *mr = malloc(n * sizeof(int));
    MPI_Request mq;
    PMPI_Allreduce_init(x, mr, n, MPI_INT, MPI_SUM, a, MPI_INFO_NULL, &mq);
    MPI_Allreduce_init(x, r, n, MPI_INT, MPI_SUM, a, MPI_INFO_NULL, &q[0]);
    MPI_Reduce_scatter_block_init(rsbin, rsb, n, MPI_INT, MPI_MAX, a, MPI_INFO_NULL, &q[1]);
    MPI_Allgather_init(x, n, MPI_INT, g, n, MPI_INT, a, MPI_INFO_NULL, &q[2]);
    MPI_Bcast_init(bc, n, MPI_INT, root, a, MPI_INFO_NULL, &q[3]);
    MPI_Reduce_init(x, red, n, MPI_INT, MPI_MIN, root, a, MPI_INFO_NULL, &q[4]);
    MPI_Reduce_scatter_init(rsbin, rs, rscounts, MPI_INT, MPI_SUM, a, MPI_INFO_NULL, &q[5]);
    for (int it = 0; it < 4; it++) {
        fill_int(x, n);
        fill_int(rsbin, n * size);
        fill_int(bc, n);
        int bcroot[1] = {bc[0]};
        PMPI_Bcast(bcroot, 1, MPI_INT, root, a);
        if (it % 2 == 0) {
            MPI_Start(&q[0]);
            int flag = 0;
            while (!flag)
                MPI_Test(&q[0], &flag, MPI_STATUS_IGNORE);
            MPI_Startall(5, &q[1]);
            MPI_Status st[5];
            MPI_Waitall(5, &q[1], st);
        } else {
            MPI_Startall(6, q);
            for (int k = 0; k < 6; k++)
                MPI_Wait(&q[k], MPI_STATUS_IGNORE);
        }
        for (int k = 0; k < 6; k++)
            check(q[k] != MPI_REQUEST_NULL, "persistent request kept", n);
        PMPI_Allreduce(x, e, n, MPI_INT, MPI_SUM, a);
        check(!memcmp(e, r, n * sizeof(int)), "MPI_Allreduce_init", n);
        PMPI_Start(&mq);
        PMPI_Wait(&mq, MPI_STATUS_IGNORE);
        check(!memcmp(e, mr, n * sizeof(int)), "PMPI_Allreduce_init beside treeduce's", n);
        PMPI_Reduce_scatter_block(rsbin, e, n, MPI_INT, MPI_MAX, a);
        check(!memcmp(e, rsb, n * sizeof(int)), "MPI_Reduce_scatter_block_init", n);
        PMPI_Allgather(x, n, MPI_INT, eg, n, MPI_INT, a);
        check(!memcmp(eg, g, (size_t)n * size * sizeof(int)), "MPI_Allgather_init", n);
        check(bc[0] == bcroot[0], "MPI_Bcast_init", n);
        PMPI_Reduce(x, e, n, MPI_INT, MPI_MIN, root, a);
        if (rank == root)
            check(!memcmp(e, red, n * sizeof(int)), "MPI_Reduce_init", n);
        PMPI_Reduce_scatter(rsbin, e, rscounts, MPI_INT, MPI_SUM, a);
        check(!memcmp(e, rs, rscounts[rank] * sizeof(int)), "MPI_Reduce_scatter_init", n);
    }
    for (int k = 0; k < 6; k++) {
        MPI_Request_free(&q[k]);
        check(q[k] == MPI_REQUEST_NULL, "MPI_Request_free", n);
    }
    PMPI_Request_free(&mq);
    free(mr);
    free(x), free(r), free(e), free(rsb), free(rsbin), free(g), free(bc), free(red), free(rs);
    free(rscounts), free(eg);
}
#endif

/* Rank 0 waits for a collective that rank 1 can only finish after a blocking
 * receive of what rank 0 sends once its wait returns; then a blocking
 * collective on a while one on b is outstanding, and a freed running request. */
static void progress_elsewhere(MPI_Comm a, MPI_Comm b, int n)
{
    int *x = malloc(n * sizeof(int)), *r = malloc(n * sizeof(int)), *e = malloc(n * sizeof(int));
    int *y = malloc(n * sizeof(int)), *ry = malloc(n * sizeof(int));
    int token = 0;
    MPI_Request q;
    fill_int(x, n);
    fill_int(y, n);
    MPI_Iallreduce(x, r, n, MPI_INT, MPI_SUM, a, &q);
    if (rank == 0) {
        MPI_Wait(&q, MPI_STATUS_IGNORE);
        token = 42;
        MPI_Send(&token, 1, MPI_INT, 1, 3, MPI_COMM_WORLD);
    } else if (rank == 1) {
        MPI_Recv(&token, 1, MPI_INT, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Wait(&q, MPI_STATUS_IGNORE);
    } else {
        MPI_Wait(&q, MPI_STATUS_IGNORE);
        token = 42;
    }
    check(token == 42, "MPI_Recv while a collective is outstanding", n);
    PMPI_Allreduce(x, e, n, MPI_INT, MPI_SUM, a);
    check(!memcmp(e, r, n * sizeof(int)), "MPI_Iallreduce completed across MPI_Recv", n);

    MPI_Iallreduce(y, ry, n, MPI_INT, MPI_SUM, b, &q);
    MPI_Allreduce(x, r, n, MPI_INT, MPI_SUM, a); /* blocking, with b's outstanding */
    MPI_Wait(&q, MPI_STATUS_IGNORE);
    check(!memcmp(e, r, n * sizeof(int)), "MPI_Allreduce behind an outstanding one", n);
    PMPI_Allreduce(y, e, n, MPI_INT, MPI_SUM, b);
    check(!memcmp(e, ry, n * sizeof(int)), "MPI_Iallreduce across a blocking one", n);

    MPI_Iallreduce(y, ry, n, MPI_INT, MPI_BXOR, a, &q);
    MPI_Request_free(&q);
    MPI_Allreduce(x, r, n, MPI_INT, MPI_SUM, a); /* queues behind the freed one */
    PMPI_Allreduce(y, e, n, MPI_INT, MPI_BXOR, a);
    check(q == MPI_REQUEST_NULL && !memcmp(e, ry, n * sizeof(int)),
          "MPI_Request_free of a running request", n);
    free(x), free(r), free(e), free(y), free(ry);
}

/* Blocking MPI_Reduce_scatter (zeros, in place, very uneven) and MPI_Allreduce_c. */
static void blocking_extras(MPI_Comm a, int n)
{
    int *in = malloc((size_t)n * size * sizeof(int)), *out = malloc((size_t)n * size * sizeof(int));
    int *e = malloc((size_t)n * size * sizeof(int)), *counts = malloc(size * sizeof(int));
    int me;
    MPI_Comm_rank(a, &me);
    for (int shape = 0; shape < 3; shape++) {
        int total = 0;
        for (int r = 0; r < size; r++) {
            counts[r] = shape == 0 ? (r % 2 ? n : 0) : shape == 1 ? n - r % 2 : (r == 0 ? n : 1);
            total += counts[r];
        }
        fill_int(in, total);
        PMPI_Reduce_scatter(in, e, counts, MPI_INT, MPI_SUM, a);
        MPI_Reduce_scatter(in, out, counts, MPI_INT, MPI_SUM, a);
        check(!memcmp(e, out, counts[me] * sizeof(int)), "MPI_Reduce_scatter", n);
        memcpy(out, in, total * sizeof(int));
        MPI_Reduce_scatter(MPI_IN_PLACE, out, counts, MPI_INT, MPI_SUM, a);
        check(!memcmp(e, out, counts[me] * sizeof(int)), "MPI_Reduce_scatter in place", n);
    }
#if MPI_VERSION >= 4
    fill_int(in, n);
    MPI_Allreduce_c(in, out, (MPI_Count)n, MPI_INT, MPI_SUM, a);
    PMPI_Allreduce(in, e, n, MPI_INT, MPI_SUM, a);
    check(!memcmp(e, out, n * sizeof(int)), "MPI_Allreduce_c", n);
#endif
    free(in), free(out), free(e), free(counts);
}

/* While rank 0's MPI_Iallreduce on a waits for rank 1, rank 0's
 * MPI_Sendrecv to a rank out of range fails with MPI_ERR_RANK; the receive
 * it posted must not stay behind: the message rank 1 sends with its tag
 * afterwards (once rank 0 says go) reaches rank 0's MPI_Iprobe. */
static void sendrecv_error(MPI_Comm a)
{
    int x = rank + 1, r = 0, got = 0, go = 1, flag = 0;
    MPI_Comm w;
    MPI_Request q;
    MPI_Comm_dup(MPI_COMM_WORLD, &w);
    MPI_Comm_set_errhandler(w, MPI_ERRORS_RETURN);
    if (rank == 0) {
        MPI_Iallreduce(&x, &r, 1, MPI_INT, MPI_SUM, a, &q);
        int rc = MPI_Sendrecv(&x, 1, MPI_INT, size + 3, 7, &got, 1, MPI_INT, 1, 7, w,
                              MPI_STATUS_IGNORE),
            cls = MPI_SUCCESS;
        MPI_Error_class(rc, &cls);
        check(cls == MPI_ERR_RANK, "MPI_Sendrecv to a rank out of range: MPI_ERR_RANK", cls);
        MPI_Send(&go, 1, MPI_INT, 1, 8, w);
        double t0 = MPI_Wtime();
        while (!flag && MPI_Wtime() - t0 < 10)
            MPI_Iprobe(1, 7, w, &flag, MPI_STATUS_IGNORE);
        check(flag, "the message after a failed MPI_Sendrecv reaches MPI_Iprobe", 1);
        if (flag)
            MPI_Recv(&got, 1, MPI_INT, 1, 7, w, MPI_STATUS_IGNORE);
        check(got == 2, "the message after a failed MPI_Sendrecv", got);
        MPI_Wait(&q, MPI_STATUS_IGNORE);
    } else {
        if (rank == 1) {
            int two = 2;
            MPI_Recv(&go, 1, MPI_INT, 0, 8, w, MPI_STATUS_IGNORE);
            MPI_Send(&two, 1, MPI_INT, 0, 7, w);
        }
        MPI_Iallreduce(&x, &r, 1, MPI_INT, MPI_SUM, a, &q);
        MPI_Wait(&q, MPI_STATUS_IGNORE);
    }
    check(r == size * (size + 1) / 2, "MPI_Iallreduce across a failed MPI_Sendrecv", r);
    MPI_Comm_free(&w);
}

int main(int argc, char **argv)
{
    MPI_Comm a, b;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    rng += (uint64_t)rank * 0x9e3779b97f4a7c15ull;
    MPI_Comm_dup(MPI_COMM_WORLD, &a);
    MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &b); /* reversed rank order */
    for (int i = 0; i < NCOUNTS; i++) {
        for (int how = 0; how < 3; how++)
            interleaved(a, b, counts[i], how);
#if MPI_VERSION >= 4
        persistent(a, counts[i]);
#endif
        progress_elsewhere(a, b, counts[i]);
        blocking_extras(b, counts[i]);
        op_freed_early(a, counts[i]);
    }
    if (size >= 2)
        sendrecv_error(a);
    MPI_Comm_free(&a);
    MPI_Comm_free(&b);
    long tot[2] = {passed, failed};
    PMPI_Allreduce(MPI_IN_PLACE, tot, 2, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("%ld passed, %ld failed\n", tot[0], tot[1]);
    MPI_Finalize();
    return tot[1] != 0;
}
