/* test_mixed_waits.c - treeduce's nonblocking collectives beside the MPI
 * library's, completed by whatever call each rank happens to choose.
 *
 * A window of operations stays outstanding on five communicators over the
 * same ranks (a duplicate of the world, the world reversed, a rotation of it,
 * a duplicate of the reversed one and one of the rotation, which is first
 * used a quarter of the way in: its setup happens with operations of the
 * others outstanding).  Every rank posts the same sequence
 * of operations (one seed for all): treeduce's MPI_Iallreduce (out of place
 * and in place, integer SUM and double MAX), MPI_Ireduce_scatter_block,
 * MPI_Iallgather, MPI_Ireduce and MPI_Ibcast (roots moving), the MPI
 * library's MPI_Ialltoall, MPI_Iscan, MPI_Iexscan and MPI_Ibarrier, a ring of
 * MPI_Isend/MPI_Irecv, and now and then a blocking MPI_Allreduce between
 * them.  Each rank completes them with calls drawn from a seed of its own:
 * MPI_Wait, MPI_Test once or in a loop, MPI_Waitall and MPI_Testall on the
 * whole window or on a part of it, MPI_Waitall on the library's requests
 * only or on treeduce's only, MPI_Waitany, MPI_Testany, MPI_Waitsome
 * and MPI_Testsome, and it sleeps a little now and then: so one rank blocks
 * in a wait on the library's requests while another spins on treeduce's,
 * and each needs the other's progress.  A completed slot is checked against
 * the values computed locally (every input is a function of the operation,
 * the rank and the index; the sums fit an int), received messages against
 * their status too, and posted again.
 *
 * Usage: test_mixed_waits [--ops N] [--window N] [--seed N] [--quick]
 *                         [--thread-multiple]
 * (--quick: 1500 operations instead of 4000; --thread-multiple: MPI
 * initialized with MPI_THREAD_MULTIPLE, which TREEDUCE_ASYNC_PROGRESS=1's
 * thread needs: it then advances treeduce's runs beside every wait).  Rank 0 prints "N passed,
 * M failed"; the exit status is 1 when a check failed.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NCOMMS 5
#define MAX_WINDOW 64
#define SENTINEL (-0x5a5a5a5a)

enum kind {
    /* treeduce's */
    K_ALLREDUCE,
    K_ALLREDUCE_IN_PLACE,
    K_ALLREDUCE_MAX,
    K_REDUCE_SCATTER_BLOCK,
    K_ALLGATHER,
    K_REDUCE,
    K_BCAST,
    /* the MPI library's */
    K_ALLTOALL,
    K_SCAN,
    K_EXSCAN,
    K_BARRIER,
    K_RING,
    /* blocking, between the others */
    K_BLOCKING_ALLREDUCE,
    K_MAX
};

struct slot {
    int active;
    long id; /* the operation's number in the sequence */
    enum kind kind;
    int comm, count, root;
    int *send, *recv;
    double *dsend, *drecv;
    MPI_Status status; /* of the receive (K_RING) */
};

static int wrank, wsize;
static long passed, failed;
static MPI_Comm comms[NCOMMS];

static void check(int ok, const struct slot *s, const char *what)
{
    if (ok) {
        passed++;
    } else if (failed++ < 20) {
        fprintf(stderr, "rank %d: FAIL op %ld (kind %d, comm %d, count %d): %s\n", wrank, s->id,
                s->kind, s->comm, s->count, what);
    }
}

/* xorshift64 */
static uint64_t next(uint64_t *x)
{
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    return *x;
}

/* Input element i of rank r (in the operation's communicator) in op id. */
static int val(long id, int r, long i)
{
    return (int)(((uint64_t)id * 2654435761u + (uint64_t)r * 40503u + (uint64_t)i * 97u) % 2001) -
           1000;
}

/* The sum of val over ranks [lo, hi). */
static int sum(long id, int lo, int hi, long i)
{
    int t = 0;
    for (int r = lo; r < hi; r++)
        t += val(id, r, i);
    return t;
}

static void *alloc(size_t n, size_t size)
{
    void *p = malloc(n * size);
    if (!p) {
        fprintf(stderr, "rank %d: out of memory\n", wrank);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    return p;
}

static int *ints(size_t n)
{
    int *p = alloc(n, sizeof *p);
    for (size_t i = 0; i < n; i++)
        p[i] = SENTINEL;
    return p;
}

/* The next operation of the sequence (the same on every rank); the last
 * communicator only from op fresh on, its first use with operations of the
 * others outstanding. */
static void draw(uint64_t *seq, long id, long fresh, struct slot *s)
{
    static const int counts[] = {1, 2, 7, 64, 300, 2000};
    memset(s, 0, sizeof *s);
    s->id = id;
    s->kind = (enum kind)(next(seq) % K_MAX);
    s->comm = (int)(next(seq) % (id < fresh ? NCOMMS - 1 : NCOMMS));
    s->count = counts[next(seq) % (sizeof counts / sizeof counts[0])];
    s->root = (int)(next(seq) % (uint64_t)wsize);
}

/* Start s (reqs: its two requests, the second MPI_REQUEST_NULL unless used). */
static void post(struct slot *s, MPI_Request reqs[2])
{
    MPI_Comm comm = comms[s->comm];
    int me, n = s->count;
    MPI_Comm_rank(comm, &me);
    reqs[0] = reqs[1] = MPI_REQUEST_NULL;
    s->active = 1;
    switch (s->kind) {
    case K_ALLREDUCE:
    case K_BLOCKING_ALLREDUCE:
    case K_SCAN:
    case K_EXSCAN:
    case K_REDUCE:
        s->send = ints((size_t)n);
        s->recv = ints((size_t)n);
        for (int i = 0; i < n; i++)
            s->send[i] = val(s->id, me, i);
        if (s->kind == K_ALLREDUCE)
            MPI_Iallreduce(s->send, s->recv, n, MPI_INT, MPI_SUM, comm, &reqs[0]);
        else if (s->kind == K_BLOCKING_ALLREDUCE)
            MPI_Allreduce(s->send, s->recv, n, MPI_INT, MPI_SUM, comm);
        else if (s->kind == K_SCAN)
            MPI_Iscan(s->send, s->recv, n, MPI_INT, MPI_SUM, comm, &reqs[0]);
        else if (s->kind == K_EXSCAN)
            MPI_Iexscan(s->send, s->recv, n, MPI_INT, MPI_SUM, comm, &reqs[0]);
        else
            MPI_Ireduce(s->send, s->recv, n, MPI_INT, MPI_SUM, s->root, comm, &reqs[0]);
        break;
    case K_ALLREDUCE_IN_PLACE:
    case K_BCAST:
        s->recv = ints((size_t)n);
        for (int i = 0; i < n; i++)
            if (s->kind == K_ALLREDUCE_IN_PLACE || me == s->root)
                s->recv[i] = val(s->id, me, i);
        if (s->kind == K_BCAST)
            MPI_Ibcast(s->recv, n, MPI_INT, s->root, comm, &reqs[0]);
        else
            MPI_Iallreduce(MPI_IN_PLACE, s->recv, n, MPI_INT, MPI_SUM, comm, &reqs[0]);
        break;
    case K_ALLREDUCE_MAX:
        s->dsend = alloc((size_t)n, sizeof(double));
        s->drecv = alloc((size_t)n, sizeof(double));
        for (int i = 0; i < n; i++) {
            s->dsend[i] = val(s->id, me, i);
            s->drecv[i] = -1e300;
        }
        MPI_Iallreduce(s->dsend, s->drecv, n, MPI_DOUBLE, MPI_MAX, comm, &reqs[0]);
        break;
    case K_REDUCE_SCATTER_BLOCK:
    case K_ALLTOALL:
        s->send = ints((size_t)n * (size_t)wsize);
        s->recv = ints((size_t)n * (size_t)wsize);
        for (long i = 0; i < (long)n * wsize; i++)
            s->send[i] = val(s->id, me, i);
        if (s->kind == K_ALLTOALL)
            MPI_Ialltoall(s->send, n, MPI_INT, s->recv, n, MPI_INT, comm, &reqs[0]);
        else
            MPI_Ireduce_scatter_block(s->send, s->recv, n, MPI_INT, MPI_SUM, comm, &reqs[0]);
        break;
    case K_ALLGATHER:
        s->send = ints((size_t)n);
        s->recv = ints((size_t)n * (size_t)wsize);
        for (int i = 0; i < n; i++)
            s->send[i] = val(s->id, me, i);
        MPI_Iallgather(s->send, n, MPI_INT, s->recv, n, MPI_INT, comm, &reqs[0]);
        break;
    case K_BARRIER:
        MPI_Ibarrier(comm, &reqs[0]);
        break;
    case K_RING:
        s->send = ints((size_t)n);
        s->recv = ints((size_t)n);
        for (int i = 0; i < n; i++)
            s->send[i] = val(s->id, me, i);
        MPI_Irecv(s->recv, n, MPI_INT, (me + wsize - 1) % wsize, (int)(s->id % 30000), comm,
                  &reqs[0]);
        MPI_Isend(s->send, n, MPI_INT, (me + 1) % wsize, (int)(s->id % 30000), comm, &reqs[1]);
        break;
    case K_MAX:
        break;
    }
}

/* Check a completed s against the values computed here, and free it. */
static void finish(struct slot *s)
{
    MPI_Comm comm = comms[s->comm];
    int me, n = s->count, ok = 1;
    MPI_Comm_rank(comm, &me);
    switch (s->kind) {
    case K_ALLREDUCE:
    case K_ALLREDUCE_IN_PLACE:
    case K_BLOCKING_ALLREDUCE:
        for (int i = 0; i < n && ok; i++)
            ok = s->recv[i] == sum(s->id, 0, wsize, i);
        check(ok, s, "allreduce sum");
        break;
    case K_ALLREDUCE_MAX:
        for (int i = 0; i < n && ok; i++) {
            int m = val(s->id, 0, i);
            for (int r = 1; r < wsize; r++)
                m = val(s->id, r, i) > m ? val(s->id, r, i) : m;
            ok = s->drecv[i] == (double)m;
        }
        check(ok, s, "allreduce max");
        break;
    case K_REDUCE_SCATTER_BLOCK:
        for (int i = 0; i < n && ok; i++)
            ok = s->recv[i] == sum(s->id, 0, wsize, (long)me * n + i);
        check(ok, s, "reduce_scatter_block");
        break;
    case K_ALLGATHER:
        for (long i = 0; i < (long)n * wsize && ok; i++)
            ok = s->recv[i] == val(s->id, (int)(i / n), i % n);
        check(ok, s, "allgather");
        break;
    case K_REDUCE:
        for (int i = 0; i < n && ok && me == s->root; i++)
            ok = s->recv[i] == sum(s->id, 0, wsize, i);
        check(ok, s, "reduce");
        break;
    case K_BCAST:
        for (int i = 0; i < n && ok; i++)
            ok = s->recv[i] == val(s->id, s->root, i);
        check(ok, s, "bcast");
        break;
    case K_ALLTOALL:
        for (long i = 0; i < (long)n * wsize && ok; i++)
            ok = s->recv[i] == val(s->id, (int)(i / n), (long)me * n + i % n);
        check(ok, s, "alltoall");
        break;
    case K_SCAN:
    case K_EXSCAN:
        for (int i = 0; i < n && ok && (s->kind == K_SCAN || me > 0); i++)
            ok = s->recv[i] == sum(s->id, 0, s->kind == K_SCAN ? me + 1 : me, i);
        check(ok, s, "scan");
        break;
    case K_BARRIER:
        passed++;
        break;
    case K_RING: {
        int got = -1, from = (me + wsize - 1) % wsize;
        MPI_Get_count(&s->status, MPI_INT, &got);
        check(s->status.MPI_SOURCE == from && s->status.MPI_TAG == (int)(s->id % 30000) && got == n,
              s, "the receive's status");
        for (int i = 0; i < n && ok; i++)
            ok = s->recv[i] == val(s->id, from, i);
        check(ok, s, "received message");
        break;
    }
    case K_MAX:
        break;
    }
    free(s->send);
    free(s->recv);
    free(s->dsend);
    free(s->drecv);
    s->send = s->recv = NULL;
    s->dsend = s->drecv = NULL;
    s->active = 0;
}

/* The requests not null before the call that completes some */
static int was_active[2 * MAX_WINDOW];

/* The status of request i, completed by the last call, to the slot that
 * holds a receive there (a request null before the call has an empty one). */
static void keep_status(struct slot *slots, int i, const MPI_Status *st)
{
    if (i % 2 == 0 && was_active[i] && slots[i / 2].kind == K_RING)
        slots[i / 2].status = *st;
}

/* A request of reqs[0, n) that is not null, drawn with *x, or -1. */
static int some_active(uint64_t *x, const MPI_Request *reqs, int n)
{
    int at = (int)(next(x) % (uint64_t)n);
    for (int k = 0; k < n; k++)
        if (reqs[(at + k) % n] != MPI_REQUEST_NULL)
            return (at + k) % n;
    return -1;
}

/* Complete some of reqs[0, n) (two per slot) with a call drawn with *x. */
static void complete_some(uint64_t *x, struct slot *slots, MPI_Request *reqs, int n)
{
    MPI_Status st[2 * MAX_WINDOW], one;
    int idx[2 * MAX_WINDOW], flag = 0, out = 0, i, lo, hi;
    for (i = 0; i < n; i++)
        was_active[i] = reqs[i] != MPI_REQUEST_NULL;
    switch (next(x) % 11) {
    case 0: /* MPI_Waitall or MPI_Testall on all of them, or on a part */
    case 1:
        lo = 0;
        hi = n;
        if (next(x) % 2) {
            lo = (int)(next(x) % (uint64_t)n);
            hi = lo + 1 + (int)(next(x) % (uint64_t)(n - lo));
        }
        if (next(x) % 2) {
            MPI_Waitall(hi - lo, reqs + lo, st);
            flag = 1;
        } else {
            MPI_Testall(hi - lo, reqs + lo, &flag, st);
        }
        for (i = lo; flag && i < hi; i++)
            keep_status(slots, i, &st[i - lo]);
        break;
    case 2:
        MPI_Waitany(n, reqs, &i, &one);
        if (i != MPI_UNDEFINED)
            keep_status(slots, i, &one);
        break;
    case 3:
        MPI_Testany(n, reqs, &i, &flag, &one);
        if (flag && i != MPI_UNDEFINED)
            keep_status(slots, i, &one);
        break;
    case 4:
    case 5:
        if (next(x) % 2)
            MPI_Waitsome(n, reqs, &out, idx, st);
        else
            MPI_Testsome(n, reqs, &out, idx, st);
        for (int k = 0; out != MPI_UNDEFINED && k < out; k++)
            keep_status(slots, idx[k], &st[k]);
        break;
    case 6:
        if ((i = some_active(x, reqs, n)) >= 0) {
            MPI_Wait(&reqs[i], &one);
            keep_status(slots, i, &one);
        }
        break;
    case 7:
        if ((i = some_active(x, reqs, n)) >= 0) {
            MPI_Test(&reqs[i], &flag, &one);
            if (flag)
                keep_status(slots, i, &one);
        }
        break;
    case 8: /* MPI_Waitall on the library's requests only, or on treeduce's only */
        flag = (int)(next(x) % 2);
        for (i = 0; i < n; i++)
            if ((slots[i / 2].kind < K_ALLTOALL) == flag)
                idx[out++] = i;
        {
            MPI_Request sub[2 * MAX_WINDOW];
            for (int k = 0; k < out; k++)
                sub[k] = reqs[idx[k]];
            MPI_Waitall(out, sub, st);
            for (int k = 0; k < out; k++) {
                reqs[idx[k]] = sub[k];
                keep_status(slots, idx[k], &st[k]);
            }
        }
        break;
    default: /* MPI_Test in a loop until it completes */
        if ((i = some_active(x, reqs, n)) >= 0) {
            do
                MPI_Test(&reqs[i], &flag, &one);
            while (!flag);
            keep_status(slots, i, &one);
        }
        break;
    }
}

int main(int argc, char **argv)
{
    long ops = 4000, posted = 0, completed = 0;
    int window = 16, multiple = 0, provided;
    uint64_t seed = 20261126;
    for (int a = 1; a < argc; a++) {
        if (!strcmp(argv[a], "--ops") && a + 1 < argc)
            ops = atol(argv[++a]);
        else if (!strcmp(argv[a], "--window") && a + 1 < argc)
            window = atoi(argv[++a]);
        else if (!strcmp(argv[a], "--seed") && a + 1 < argc)
            seed = strtoull(argv[++a], NULL, 10);
        else if (!strcmp(argv[a], "--quick"))
            ops = 1500;
        else if (!strcmp(argv[a], "--thread-multiple"))
            multiple = 1;
    }
    window = window < 1 ? 1 : window > MAX_WINDOW ? MAX_WINDOW : window;
    if (multiple)
        MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    else
        MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    MPI_Comm reversed;
    MPI_Comm_dup(MPI_COMM_WORLD, &comms[0]);
    MPI_Comm_split(MPI_COMM_WORLD, 0, wsize - 1 - wrank, &reversed);
    comms[1] = reversed;
    MPI_Comm_split(MPI_COMM_WORLD, 0, (wrank + 1) % wsize, &comms[2]);
    MPI_Comm_dup(reversed, &comms[3]);
    MPI_Comm_dup(comms[2], &comms[4]);

    struct slot slots[MAX_WINDOW];
    MPI_Request reqs[2 * MAX_WINDOW];
    uint64_t seq = 2 * seed + 1, mine = (seq ^ (0x9e3779b97f4a7c15ull * (uint64_t)(wrank + 1))) | 1;
    for (int k = 0; k < window; k++) {
        slots[k].active = 0;
        reqs[2 * k] = reqs[2 * k + 1] = MPI_REQUEST_NULL;
    }
    double t0 = MPI_Wtime();
    while (completed < ops) {
        /* post into every free slot, in slot order: the sequence is the same
         * on every rank, the slots it lands in are not */
        for (int k = 0; k < window && posted < ops; k++) {
            if (slots[k].active)
                continue;
            draw(&seq, posted++, ops / 4, &slots[k]);
            post(&slots[k], &reqs[2 * k]);
            if (slots[k].kind == K_BLOCKING_ALLREDUCE) {
                finish(&slots[k]);
                completed++;
            }
        }
        complete_some(&mine, slots, reqs, 2 * window);
        for (int k = 0; k < window; k++)
            if (slots[k].active && reqs[2 * k] == MPI_REQUEST_NULL &&
                reqs[2 * k + 1] == MPI_REQUEST_NULL) {
                finish(&slots[k]);
                completed++;
            }
        if (next(&mine) % 300 == 0)
            usleep(200);
    }
    double secs = MPI_Wtime() - t0;
    for (int k = 0; k < NCOMMS; k++)
        MPI_Comm_free(&comms[k]);

    long mine_t[2] = {passed, failed}, all[2] = {0, 0};
    PMPI_Reduce(mine_t, all, 2, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (wrank == 0) {
        printf("%ld operations on %d ranks in %.2f s\n", ops, wsize, secs);
        printf("%ld passed, %ld failed\n", all[0], all[1]);
    }
    MPI_Finalize();
    return wrank == 0 && all[1] ? 1 : 0;
}
