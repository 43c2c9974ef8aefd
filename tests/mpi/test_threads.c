/* test_threads.c - treeduce under MPI_THREAD_MULTIPLE.
 *
 * The main thread duplicates MPI_COMM_WORLD once per thread, in order; then
 * the threads start together behind a barrier, so that their first calls --
 * each on its own communicator -- race on everything treeduce sets up once
 * per process (the attribute's keyval, the environment switches, the notes)
 * and once per communicator (its description, segment and plans).  Each
 * thread then runs MPI_Allreduce (out of place and in place),
 * MPI_Reduce_scatter_block, MPI_Allgather, MPI_Reduce and MPI_Bcast on random
 * data, counts from a few elements (inline, node segment) to more than a
 * segment area (single copy, chunks), roots moving, and checks every result
 * against the PMPI_ routine called by the same thread on the same
 * communicator and data.  Datatypes and ops are exact ones (integer SUM and
 * BXOR, floating MAX, floating SUM of small integers), so results must be
 * bitwise equal.
 *
 * Each rank also catches its own stderr while the threads run: with
 * TREEDUCE_VERBOSE=2 every note must be whole (a line that starts with
 * "treeduce[" and says "runs" or "uses the MPI library's routine") and
 * printed once per process, and "MPI_Allreduce runs" must be among them
 * (treeduce ran, not the MPI library); with --algorithm NAME (the value of
 * TREEDUCE_ALGORITHM), every MPI_Allreduce note must name NAME: no thread saw
 * the switch unset while another parsed it.  The caught text is echoed on
 * stdout.
 *
 * With --keep the duplicates are left to MPI_Finalize, which must release
 * their descriptions and windows (built in whatever order the threads came
 * on each rank) without a hang or a crash.
 *
 * Usage: test_threads [--threads N] [--iters N] [--seed N] [--algorithm NAME] [--keep]
 * Prints one line per failed check and, on rank 0, "N passed, M failed";
 * exits 1 when a check failed, 77 (skipped) when the MPI library does not
 * provide MPI_THREAD_MULTIPLE.
 */
#define _GNU_SOURCE
#include <mpi.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SKIPPED 77
#define MAX_THREADS 16

/* Element counts: inline (<= 24 bytes), the node segment, single copy, more
 * than one segment area (256 KiB). */
static const size_t counts[] = {1, 3, 100, 1500, 6000, 50000, 100000};
#define NCOUNTS (sizeof counts / sizeof counts[0])
#define MAX_COUNT 100000

enum fill { F_BITS, F_INT40, F_REAL, F_SMALL_REAL };

static const struct pair {
    const char *name;
    MPI_Datatype dt;
    MPI_Op op;
    size_t size;
    enum fill fill;
} pairs[] = {
    {"MPI_LONG_LONG/MPI_SUM", MPI_LONG_LONG, MPI_SUM, sizeof(long long), F_INT40},
    {"MPI_INT/MPI_BXOR", MPI_INT, MPI_BXOR, sizeof(int), F_BITS},
    {"MPI_DOUBLE/MPI_MAX", MPI_DOUBLE, MPI_MAX, sizeof(double), F_REAL},
    {"MPI_DOUBLE/MPI_SUM", MPI_DOUBLE, MPI_SUM, sizeof(double), F_SMALL_REAL},
};
#define NPAIRS (sizeof pairs / sizeof pairs[0])

static int wrank;
static const char *opt_algorithm; /* --algorithm: every MPI_Allreduce note names it */
static pthread_barrier_t start;

static uint64_t rng_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* count elements of p: sums of integers (and of small integral doubles) are
 * exact in any order, so results must equal the reference bit for bit. */
static void fill(const struct pair *p, unsigned char *buf, size_t count, uint64_t *rng)
{
    for (size_t i = 0; i < count; i++) {
        unsigned char *e = buf + i * p->size;
        uint64_t r = rng_next(rng);
        long long ll;
        int in;
        double d;
        switch (p->fill) {
        case F_BITS:
            in = (int)(uint32_t)r;
            memcpy(e, &in, sizeof in);
            break;
        case F_INT40:
            ll = (long long)(r % (1ULL << 41)) - (1LL << 40);
            memcpy(e, &ll, sizeof ll);
            break;
        case F_REAL:
            d = ((double)(r >> 11) * 0x1.0p-53 * 2 - 1) * (double)(1 << (r & 15));
            memcpy(e, &d, sizeof d);
            break;
        case F_SMALL_REAL:
            d = (double)((long long)(r % (1ULL << 21)) - (1LL << 20));
            memcpy(e, &d, sizeof d);
            break;
        }
    }
}

struct worker {
    int t, iters;
    uint64_t seed;
    MPI_Comm comm;
    pthread_t tid;
    long long pass, fail;
};

/* One verdict: counted, and described on a failure. */
static void verdict(struct worker *w, int ok, int iter, const char *routine, const struct pair *p,
                    size_t count, int root, int in_place, const char *what)
{
    if (ok) {
        w->pass++;
        return;
    }
    w->fail++;
    printf("FAIL rank=%d thread=%d iter=%d %s type/op=%s count=%zu root=%d in_place=%s: %s\n",
           wrank, w->t, iter, routine, p->name, count, root, in_place ? "yes" : "no", what);
    fflush(stdout);
}

#define CHECK(ok, routine, what) verdict(w, (ok), i, routine, p, count, root, in_place, what)

static void *work(void *arg)
{
    struct worker *w = arg;
    int rank, size;
    MPI_Comm_rank(w->comm, &rank);
    MPI_Comm_size(w->comm, &size);
    size_t cap = (size_t)size * MAX_COUNT * sizeof(double);
    unsigned char *send = malloc(cap), *orig = malloc(cap), *act = malloc(cap), *exp = malloc(cap);
    if (!send || !orig || !act || !exp) {
        fprintf(stderr, "test_threads: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    pthread_barrier_wait(&start);
    for (int i = 0; i < w->iters; i++) {
        /* the same on every rank: the call's shape */
        uint64_t shared = w->seed ^ (uint64_t)w->t << 48 ^ (uint64_t)i << 32;
        size_t count = counts[(size_t)(i + w->t) % NCOUNTS];
        const struct pair *p = &pairs[rng_next(&shared) % NPAIRS];
        int root = (int)(rng_next(&shared) % (uint64_t)size);
        int in_place = rng_next(&shared) & 1;
        /* this rank's data */
        uint64_t rng = shared ^ (uint64_t)(rank + 1) * 0x5851f42d4c957f2dULL;
        size_t bytes = count * p->size, all = bytes * (size_t)size;
        int rc, rc2;

        /* allreduce, first: the threads' first calls race on setup */
        fill(p, send, count, &rng);
        memcpy(orig, send, bytes);
        if (in_place) {
            memcpy(act, send, bytes);
            rc = MPI_Allreduce(MPI_IN_PLACE, act, (int)count, p->dt, p->op, w->comm);
        } else {
            rc = MPI_Allreduce(send, act, (int)count, p->dt, p->op, w->comm);
        }
        rc2 = PMPI_Allreduce(orig, exp, (int)count, p->dt, p->op, w->comm);
        CHECK(rc == MPI_SUCCESS && rc2 == MPI_SUCCESS, "MPI_Allreduce", "error returned");
        CHECK(!memcmp(act, exp, bytes), "MPI_Allreduce", "result differs from PMPI_Allreduce");
        CHECK(in_place || !memcmp(send, orig, bytes), "MPI_Allreduce", "send buffer changed");

        /* reduce_scatter_block: count elements per rank */
        fill(p, send, count * (size_t)size, &rng);
        memcpy(orig, send, all);
        if (in_place) {
            memcpy(act, send, all);
            rc = MPI_Reduce_scatter_block(MPI_IN_PLACE, act, (int)count, p->dt, p->op, w->comm);
        } else {
            rc = MPI_Reduce_scatter_block(send, act, (int)count, p->dt, p->op, w->comm);
        }
        rc2 = PMPI_Reduce_scatter_block(orig, exp, (int)count, p->dt, p->op, w->comm);
        CHECK(rc == MPI_SUCCESS && rc2 == MPI_SUCCESS, "MPI_Reduce_scatter_block",
              "error returned");
        CHECK(!memcmp(act, exp, bytes), "MPI_Reduce_scatter_block",
              "result differs from PMPI_Reduce_scatter_block");

        /* allgather: count elements from every rank */
        fill(p, send, count, &rng);
        if (in_place) {
            memset(act, 0x5a, all);
            memcpy(act + (size_t)rank * bytes, send, bytes);
            rc = MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, act, (int)count, p->dt, w->comm);
        } else {
            rc = MPI_Allgather(send, (int)count, p->dt, act, (int)count, p->dt, w->comm);
        }
        rc2 = PMPI_Allgather(send, (int)count, p->dt, exp, (int)count, p->dt, w->comm);
        CHECK(rc == MPI_SUCCESS && rc2 == MPI_SUCCESS, "MPI_Allgather", "error returned");
        CHECK(!memcmp(act, exp, all), "MPI_Allgather", "result differs from PMPI_Allgather");

        /* reduce: the receive buffer of a non-root rank is not written */
        fill(p, send, count, &rng);
        memcpy(orig, send, bytes);
        memset(act, 0xa5, bytes);
        memset(exp, 0xa5, bytes);
        if (in_place && rank == root) {
            memcpy(act, send, bytes);
            rc = MPI_Reduce(MPI_IN_PLACE, act, (int)count, p->dt, p->op, root, w->comm);
        } else {
            rc = MPI_Reduce(send, act, (int)count, p->dt, p->op, root, w->comm);
        }
        rc2 = PMPI_Reduce(orig, exp, (int)count, p->dt, p->op, root, w->comm);
        CHECK(rc == MPI_SUCCESS && rc2 == MPI_SUCCESS, "MPI_Reduce", "error returned");
        CHECK(!memcmp(act, exp, bytes), "MPI_Reduce",
              rank == root ? "result differs from PMPI_Reduce" : "non-root buffer written");

        /* bcast: the root's data, random elsewhere */
        fill(p, act, count, &rng);
        if (rank == root)
            memcpy(exp, act, bytes);
        else
            fill(p, exp, count, &rng);
        rc = MPI_Bcast(act, (int)count, p->dt, root, w->comm);
        rc2 = PMPI_Bcast(exp, (int)count, p->dt, root, w->comm);
        CHECK(rc == MPI_SUCCESS && rc2 == MPI_SUCCESS, "MPI_Bcast", "error returned");
        CHECK(!memcmp(act, exp, bytes), "MPI_Bcast", "result differs from PMPI_Bcast");
    }
    free(send);
    free(orig);
    free(act);
    free(exp);
    return NULL;
}

/* Whether line is a whole treeduce note. */
static int whole_note(const char *line)
{
    const char *end = strstr(line, "]: ");
    return !strncmp(line, "treeduce[", 9) && end &&
           (strstr(end, " runs ") || strstr(end, " uses the MPI library's routine: ")) &&
           !strstr(end + 3, "treeduce");
}

/* Checks the notes this rank printed while the threads ran (text, a copy of
 * its stderr): whole lines, none twice, MPI_Allreduce run by treeduce.
 * Echoes the text on stdout.  Adds the verdicts to *pass, *fail. */
static void check_notes(char *text, long long *pass, long long *fail)
{
    char *lines[256];
    int n = 0, torn = 0, twice = 0, ran = 0, other = 0;
    fputs(text, stdout);
    for (char *save = NULL, *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
        if (!strstr(l, "treeduce"))
            continue;
        if (!whole_note(l)) {
            printf("FAIL rank=%d: a note is not whole: '%s'\n", wrank, l);
            torn++;
            continue;
        }
        for (int k = 0; k < n; k++)
            if (!strcmp(lines[k], l)) {
                printf("FAIL rank=%d: a note is printed twice: '%s'\n", wrank, l);
                twice++;
                break;
            }
        if (n < 256)
            lines[n++] = l;
        const char *runs = strstr(l, "]: MPI_Allreduce runs ");
        ran |= runs != NULL;
        if (runs && opt_algorithm && strcmp(runs + 22, opt_algorithm)) {
            printf("FAIL rank=%d: TREEDUCE_ALGORITHM=%s, but '%s'\n", wrank, opt_algorithm, l);
            other++;
        }
    }
    if (!ran)
        printf("FAIL rank=%d: no note 'MPI_Allreduce runs' (is TREEDUCE_VERBOSE=2 set, and "
               "treeduce linked in?)\n",
               wrank);
    *pass += !torn + !twice + ran + (opt_algorithm && !other);
    *fail += !!torn + !!twice + !ran + !!other;
    fflush(stdout);
}

/* The text of f, from its start (NUL-terminated; caller frees). */
static char *slurp(FILE *f)
{
    long len;
    char *text;
    if (fseek(f, 0, SEEK_END) || (len = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) ||
        !(text = malloc((size_t)len + 1)))
        return NULL;
    text[fread(text, 1, (size_t)len, f)] = '\0';
    return text;
}

int main(int argc, char **argv)
{
    int provided, nthreads = 4, iters = 20, keep = 0;
    uint64_t seed = 1;
    struct worker w[MAX_THREADS];
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--threads") && i + 1 < argc)
            nthreads = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--iters") && i + 1 < argc)
            iters = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--seed") && i + 1 < argc)
            seed = strtoull(argv[++i], NULL, 0);
        else if (!strcmp(argv[i], "--algorithm") && i + 1 < argc)
            opt_algorithm = argv[++i];
        else if (!strcmp(argv[i], "--keep"))
            keep = 1;
        else {
            fprintf(stderr, "usage: test_threads [--threads N] [--iters N] [--seed N] "
                            "[--algorithm NAME] [--keep]\n");
            return 2;
        }
    }
    if (nthreads < 1 || nthreads > MAX_THREADS || iters < 1) {
        fprintf(stderr, "test_threads: --threads 1..%d, --iters 1 or more\n", MAX_THREADS);
        return 2;
    }
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    if (provided < MPI_THREAD_MULTIPLE) {
        if (wrank == 0)
            printf("test_threads: skipped: the MPI library provides thread level %d, not "
                   "MPI_THREAD_MULTIPLE (%d)\n",
                   provided, MPI_THREAD_MULTIPLE);
        MPI_Finalize();
        return SKIPPED;
    }
    /* errors come back as codes, counted as failed checks; duplicates inherit it */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    for (int t = 0; t < nthreads; t++) {
        w[t] = (struct worker){.t = t, .iters = iters, .seed = seed * 0x9e3779b97f4a7c15ULL};
        MPI_Comm_dup(MPI_COMM_WORLD, &w[t].comm);
    }

    /* catch this rank's stderr while the threads run */
    FILE *caught = tmpfile();
    int saved = dup(2);
    if (!caught || saved < 0) {
        perror("test_threads: tmpfile/dup");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    fflush(stderr);
    dup2(fileno(caught), 2);

    pthread_barrier_init(&start, NULL, (unsigned)nthreads);
    for (int t = 0; t < nthreads; t++)
        if (pthread_create(&w[t].tid, NULL, work, &w[t])) {
            perror("test_threads: pthread_create");
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    long long tally[2] = {0, 0};
    for (int t = 0; t < nthreads; t++) {
        pthread_join(w[t].tid, NULL);
        tally[0] += w[t].pass;
        tally[1] += w[t].fail;
    }
    pthread_barrier_destroy(&start);

    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    char *text = slurp(caught);
    fclose(caught);
    if (!text) {
        perror("test_threads: reading the caught stderr");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    check_notes(text, &tally[0], &tally[1]);
    free(text);

    for (int t = 0; t < nthreads && !keep; t++)
        MPI_Comm_free(&w[t].comm);
    PMPI_Allreduce(MPI_IN_PLACE, tally, 2, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (wrank == 0) {
        printf("%lld passed, %lld failed\n", tally[0], tally[1]);
        fflush(stdout);
    }
    MPI_Finalize();
    return tally[1] > 0;
}
