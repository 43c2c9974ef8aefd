/* test_tuned.c - measured tuning at run time: the machine's measured ranges
 * (trd_machine.tuned), the algorithm "mpi" (the MPI library's routine), the
 * pieces' *_with routines and trd_candidates, against the MPI library's own
 * routines on random doubles.
 *
 * The machine is written here as treeduce-gen would emit it: nodes n0 and
 * n1 (TREEDUCE_HOSTS places the ranks), the model's ranges for 2 nodes x 1
 * rank, and measured ranges for 1 node x 2 ranks and 2 nodes x 1 rank for
 * each of the five collectives, whose ranges pick distinct algorithms,
 * "mpi" among them.  Linked with the runtime alone: the trd_* routines are
 * called directly, PMPI_* is the reference.
 *
 *   test_tuned tables N    (2 ranks on N nodes, 1 or 2) at a size inside every
 *                          measured range of the communicator's shape: the
 *                          result equals the library's (exact for bcast and
 *                          allgather, within rounding for reductions),
 *                          TREEDUCE_VERBOSE=2 names the range's algorithm,
 *                          trd_fell_back says whether the library ran it
 *                          (nonblocking and persistent calls too, where "mpi"
 *                          is chosen); a user-defined op (commutative, and
 *                          non-commutative) at a size measured as "mpi" runs
 *                          today's choice; measured tables of another MPI
 *                          library, or naming an algorithm the runtime lacks,
 *                          are not used, and the note says why.
 *   test_tuned candidates  every candidate trd_candidates lists for every
 *                          collective, forced through the *_with routine at
 *                          several counts, equals the library's result and
 *                          runs (its note names it, and trd_fell_back is 0
 *                          at one count at least; 1 for "mpi"); the list is
 *                          the same on every rank and ends in "mpi";
 *                          "mpi", "auto" and a name that is no algorithm's.
 *   test_tuned hold N [forced]
 *                          (2 ranks on N nodes) a blocking allreduce the
 *                          tables give to "mpi" (forced: that
 *                          TREEDUCE_ALGORITHM=mpi forces) while a
 *                          nonblocking collective of treeduce's that the
 *                          peer waits for first is outstanding: completes,
 *                          results right.
 *   test_tuned env-mpi     (TREEDUCE_ALGORITHM=mpi) trd_allreduce is the
 *                          library's, with its notes.
 *
 * Prints one line per failed check and, on rank 0, "N passed, M failed";
 * exits non-zero when a check failed.
 */
#include <float.h>
#include <math.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capture.h"
#include "treeduce_rt.h"

/* ---- The machine ------------------------------------------------------------ */

static const char *const node_names[] = {"n0", "n1"};
static const int name_order[] = {0, 1}, node_cores[] = {4, 4}, node_packages[] = {1, 1};
static const trd_size_choice model_2x1[] = {{SIZE_MAX, "ring", ""}};
static const trd_shape_choice shapes[] = {{2, 1, model_2x1, 1}};

/* 1 node x 2 ranks: bytes [0, 256), [256, 4096), [4096, ...) */
static const trd_size_choice ar_1x2[] = {
    {256, "rd", ""}, {4096, "mpi", ""}, {SIZE_MAX, "ring", ""}};
static const trd_size_choice rsb_1x2[] = {
    {256, "halving", ""}, {4096, "mpi", ""}, {SIZE_MAX, "pairwise", ""}};
static const trd_size_choice ag_1x2[] = {
    {256, "rd", ""}, {4096, "mpi", ""}, {SIZE_MAX, "ring", ""}};
static const trd_size_choice red_1x2[] = {
    {256, "binomial", ""}, {4096, "mpi", ""}, {SIZE_MAX, "rabenseifner", ""}};
static const trd_size_choice bc_1x2[] = {
    {256, "binomial", ""}, {4096, "mpi", ""}, {SIZE_MAX, "scatter_allgather", "ring"}};
/* 2 nodes x 1 rank */
static const trd_size_choice ar_2x1[] = {
    {256, "mpi", ""}, {4096, "rd", ""}, {SIZE_MAX, "rabenseifner", ""}};
static const trd_size_choice rsb_2x1[] = {
    {256, "mpi", ""}, {4096, "doubling", ""}, {SIZE_MAX, "halving", ""}};
static const trd_size_choice ag_2x1[] = {
    {256, "mpi", ""}, {4096, "bruck", ""}, {SIZE_MAX, "rd", ""}};
static const trd_size_choice red_2x1[] = {
    {256, "mpi", ""}, {4096, "rabenseifner", ""}, {SIZE_MAX, "binomial", ""}};
static const trd_size_choice bc_2x1[] = {
    {256, "mpi", ""}, {4096, "scatter_allgather", "rd"}, {SIZE_MAX, "binomial", ""}};

static const trd_tuned_shape tuned[] = {
    {TRD_ALLREDUCE, 1, 2, ar_1x2, 3},
    {TRD_REDUCE_SCATTER_BLOCK, 1, 2, rsb_1x2, 3},
    {TRD_ALLGATHER, 1, 2, ag_1x2, 3},
    {TRD_REDUCE, 1, 2, red_1x2, 3},
    {TRD_BCAST, 1, 2, bc_1x2, 3},
    {TRD_ALLREDUCE, 2, 1, ar_2x1, 3},
    {TRD_REDUCE_SCATTER_BLOCK, 2, 1, rsb_2x1, 3},
    {TRD_ALLGATHER, 2, 1, ag_2x1, 3},
    {TRD_REDUCE, 2, 1, red_2x1, 3},
    {TRD_BCAST, 2, 1, bc_2x1, 3},
};

static const trd_size_choice bad_1x2[] = {{SIZE_MAX, "nosuch", ""}};
static const trd_tuned_shape tuned_bad[] = {
    {TRD_ALLREDUCE, 1, 2, bad_1x2, 1},
    {TRD_ALLREDUCE, 2, 1, bad_1x2, 1},
};

#define MACHINE(nm, t, nt, lib)                                                                    \
    {                                                                                              \
        .name = nm, .nnodes = 2, .node_names = node_names, .name_order = name_order,               \
        .node_cores = node_cores, .node_packages = node_packages, .nap_max_bytes_1node = 4096,     \
        .shapes = shapes, .nshapes = 1, .tuned = t, .ntuned = nt, .tuned_mpi = lib                 \
    }

/* tuned_mpi filled in from the library's version in main */
static trd_machine machine = MACHINE("tuned", tuned, 10, NULL);
static trd_machine other_mpi = MACHINE("othermpi", tuned, 10, "Another MPI Library 0.1");
static trd_machine bad_table = MACHINE("badtable", tuned_bad, 2, NULL);

/* ---- Checks ----------------------------------------------------------------- */

static int rank, size, passed, failed;

static void check(int ok, const char *what)
{
    int all;
    PMPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    if (all)
        passed++;
    else {
        failed++;
        if (!ok)
            printf("FAIL rank %d: %s\n", rank, what);
    }
}

/* Random doubles in [-4, 4), drawn from seed. */
static void fill(double *x, size_t n, unsigned seed)
{
    uint64_t s = seed * 0x9e3779b97f4a7c15ull + 1;
    for (size_t i = 0; i < n; i++) {
        s ^= s << 13, s ^= s >> 7, s ^= s << 17;
        x[i] = (double)(s >> 11) / (double)(1ull << 53) * 8 - 4;
    }
}

/* a equals the reference e within a sum's rounding over size ranks (inputs
 * at most 4 in magnitude), or exactly where exact. */
static int same(const double *a, const double *e, size_t n, int exact)
{
    for (size_t i = 0; i < n; i++)
        if (exact ? memcmp(&a[i], &e[i], sizeof *a) != 0
                  : fabs(a[i] - e[i]) > 2.0 * size * DBL_EPSILON * 4 * size)
            return 0;
    return 1;
}

enum { RUN_BLOCKING, RUN_NONBLOCKING, RUN_PERSISTENT };

/* Run collective coll on m over comm with count elements (the block of one
 * rank for rsb and allgather), op, forced algorithm alg (NULL: the
 * machine's choice; nonblocking and persistent: only NULL), as mode says;
 * check against the library and return whether treeduce fell back. */
static int run(const trd_machine *m, MPI_Comm comm, int coll, size_t count, MPI_Op op,
               const char *alg, int mode, const char *what)
{
    int p, me, root, fell = -1, rc = MPI_SUCCESS, rc2;
    MPI_Comm_size(comm, &p);
    MPI_Comm_rank(comm, &me);
    root = (int)(count % (size_t)p);
    size_t nin = coll == TRD_REDUCE_SCATTER_BLOCK ? count * (size_t)p : count;
    size_t nout = coll == TRD_ALLGATHER ? count * (size_t)p : count;
    double *in = malloc(nin * sizeof *in), *out = calloc(nout, sizeof *out),
           *ref = calloc(nout, sizeof *ref);
    MPI_Request req = MPI_REQUEST_NULL;
    fill(in, nin, (unsigned)(count * 131 + (size_t)me * 7 + (size_t)coll));
    int exact = coll == TRD_ALLGATHER || coll == TRD_BCAST || op != MPI_SUM;
    switch (coll) {
    case TRD_ALLREDUCE:
        if (mode == RUN_NONBLOCKING)
            rc = trd_iallreduce(m, in, out, (MPI_Count)count, MPI_DOUBLE, op, comm, &req);
        else if (mode == RUN_PERSISTENT &&
                 (rc = trd_allreduce_init(m, in, out, (MPI_Count)count, MPI_DOUBLE, op, comm,
                                          MPI_INFO_NULL, &req)) == MPI_SUCCESS)
            rc = MPI_Start(&req);
        else if (mode == RUN_BLOCKING)
            rc = trd_allreduce_with(m, in, out, (int)count, MPI_DOUBLE, op, comm, alg);
        fell = trd_fell_back();
        rc2 = PMPI_Allreduce(in, ref, (int)count, MPI_DOUBLE, op, comm);
        break;
    case TRD_REDUCE_SCATTER_BLOCK:
        rc = trd_reduce_scatter_block_with(m, in, out, (int)count, MPI_DOUBLE, op, comm, alg);
        fell = trd_fell_back();
        rc2 = PMPI_Reduce_scatter_block(in, ref, (int)count, MPI_DOUBLE, op, comm);
        break;
    case TRD_ALLGATHER:
        rc = trd_allgather_with(m, in, (int)count, MPI_DOUBLE, out, (int)count, MPI_DOUBLE, comm,
                                alg);
        fell = trd_fell_back();
        rc2 = PMPI_Allgather(in, (int)count, MPI_DOUBLE, ref, (int)count, MPI_DOUBLE, comm);
        break;
    case TRD_REDUCE:
        rc = trd_reduce_with(m, in, out, (int)count, MPI_DOUBLE, op, root, comm, alg);
        fell = trd_fell_back();
        rc2 = PMPI_Reduce(in, ref, (int)count, MPI_DOUBLE, op, root, comm);
        break;
    default:
        memcpy(out, in, count * sizeof *in);
        memcpy(ref, in, count * sizeof *in);
        if (mode == RUN_NONBLOCKING)
            rc = trd_ibcast(m, out, (MPI_Count)count, MPI_DOUBLE, root, comm, &req);
        else
            rc = trd_bcast_with(m, out, (int)count, MPI_DOUBLE, root, comm, alg);
        fell = trd_fell_back();
        rc2 = PMPI_Bcast(ref, (int)count, MPI_DOUBLE, root, comm);
        break;
    }
    if (rc == MPI_SUCCESS && req != MPI_REQUEST_NULL) {
        rc = MPI_Wait(&req, MPI_STATUS_IGNORE);
        if (mode == RUN_PERSISTENT)
            MPI_Request_free(&req);
    }
    char msg[256];
    snprintf(msg, sizeof msg, "%s: %s of %zu doubles (%s): rc %d/%d, result %s", m->name,
             trd_coll_name(coll), count, what, rc, rc2,
             coll == TRD_REDUCE && me != root ? "(not the root)" : "differs");
    check(rc == MPI_SUCCESS && rc2 == MPI_SUCCESS &&
              (coll == TRD_REDUCE && me != root ? 1 : same(out, ref, nout, exact)),
          msg);
    free(in);
    free(out);
    free(ref);
    return fell;
}

static const char *const routines[TRD_NCOLLS] = {"MPI_Allreduce", "MPI_Reduce_scatter_block",
                                                 "MPI_Allgather", "MPI_Reduce", "MPI_Bcast"};

/* Run coll and check that the note names alg and that the library ran the
 * call exactly where alg is "mpi". */
static void run_noted(const trd_machine *m, MPI_Comm comm, int coll, size_t count, const char *alg,
                      int mode)
{
    char line[200], msg[300];
    const char *r = routines[coll];
    if (mode == RUN_NONBLOCKING)
        r = coll == TRD_ALLREDUCE ? "MPI_Iallreduce" : "MPI_Ibcast";
    else if (mode == RUN_PERSISTENT)
        r = "MPI_Allreduce_init";
    capture_start();
    int fell = run(m, comm, coll, count, MPI_SUM, NULL, mode, alg);
    char *text = capture_end();
    snprintf(line, sizeof line, "treeduce[%s]: %s runs %s", m->name, r, alg);
    snprintf(msg, sizeof msg, "%s of %zu doubles: no line '%s'", r, count, line);
    check(capture_count(text, line) == 1, msg);
    if (!strcmp(alg, "mpi")) {
        snprintf(line, sizeof line,
                 "treeduce[%s]: %s uses the MPI library's routine: the machine's tables choose it "
                 "at this size",
                 m->name, r);
        snprintf(msg, sizeof msg, "%s of %zu doubles: no line '%s'", r, count, line);
        check(capture_count(text, line) == 1, msg);
    }
    snprintf(msg, sizeof msg, "%s of %zu doubles (%s): trd_fell_back() %d", r, count, alg, fell);
    check(fell == !strcmp(alg, "mpi"), msg);
    free(text);
}

/* inout = in: the leftmost operand wins (associative, not commutative). */
static void left(void *in, void *inout, int *len, MPI_Datatype *type)
{
    (void)type;
    memcpy(inout, in, (size_t)*len * sizeof(double));
}

static void sum(void *in, void *inout, int *len, MPI_Datatype *type)
{
    (void)type;
    for (int i = 0; i < *len; i++)
        ((double *)inout)[i] += ((double *)in)[i];
}

static void test_tables(int nodes)
{
    MPI_Comm comm, other, bad;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_dup(MPI_COMM_WORLD, &other);
    MPI_Comm_dup(MPI_COMM_WORLD, &bad);
    const trd_tuned_shape *t = nodes == 1 ? tuned : tuned + 5;
    /* a size inside every range: 64, 1024 and 16384 bytes */
    static const size_t counts[3] = {8, 128, 2048};
    for (int coll = 0; coll < TRD_NCOLLS; coll++)
        for (int k = 0; k < 3; k++) {
            const trd_size_choice *c = &t[coll].choices[k];
            char alg[64];
            snprintf(alg, sizeof alg, "%s%s%s", c->alg, *c->params ? ":" : "", c->params);
            run_noted(&machine, comm, coll, counts[k], alg, RUN_BLOCKING);
        }
    /* the library's nonblocking and persistent routines where "mpi" is chosen */
    int mk = nodes == 1 ? 1 : 0;
    run_noted(&machine, comm, TRD_ALLREDUCE, counts[mk], "mpi", RUN_NONBLOCKING);
#if MPI_VERSION >= 4 /* below, the library has no persistent collectives for mpi to call */
    run_noted(&machine, comm, TRD_ALLREDUCE, counts[mk], "mpi", RUN_PERSISTENT);
#endif
    run_noted(&machine, comm, TRD_BCAST, counts[mk], "mpi", RUN_NONBLOCKING);

    /* user-defined ops at the size measured as "mpi": today's rules */
    MPI_Op usum, uleft;
    MPI_Op_create(sum, 1, &usum);
    MPI_Op_create(left, 0, &uleft);
    static const int reductions[] = {TRD_ALLREDUCE, TRD_REDUCE_SCATTER_BLOCK, TRD_REDUCE};
    for (int i = 0; i < 3; i++) {
        char msg[200];
        int fell = run(&machine, comm, reductions[i], counts[mk], usum, NULL, RUN_BLOCKING,
                       "commutative user op");
        snprintf(msg, sizeof msg, "%s with a commutative user-defined op ran the measured mpi",
                 trd_coll_name(reductions[i]));
        check(fell == 0, msg);
        fell = run(&machine, comm, reductions[i], counts[mk], uleft, NULL, RUN_BLOCKING,
                   "non-commutative user op");
        snprintf(msg, sizeof msg, "%s with a non-commutative user-defined op ran the measured mpi",
                 trd_coll_name(reductions[i]));
        check(fell == 0, msg);
    }
    MPI_Op_free(&usum);
    MPI_Op_free(&uleft);

    /* measured under another MPI library, or naming no algorithm: the model's */
    char line[400], msg[500], version[MPI_MAX_LIBRARY_VERSION_STRING];
    int len;
    MPI_Get_library_version(version, &len);
    version[strcspn(version, "\r\n")] = '\0';
    capture_start();
    int fell = run(&other_mpi, other, TRD_ALLREDUCE, counts[mk], MPI_SUM, NULL, RUN_BLOCKING,
                   "another library's tables");
    int fell_bad = run(&bad_table, bad, TRD_ALLREDUCE, counts[mk], MPI_SUM, NULL, RUN_BLOCKING,
                       "a table naming no algorithm");
    char *text = capture_end();
    check(fell == 0, "tables of another MPI library chose mpi");
    check(fell_bad == 0, "tables naming no algorithm chose mpi");
    snprintf(line, sizeof line,
             "treeduce[othermpi]: the machine's measured tables are for the MPI library 'Another "
             "MPI Library 0.1', not '%.120s': the model's ranges are used",
             version);
    snprintf(msg, sizeof msg, "no line '%s'", line);
    check(capture_count(text, line) == 1, msg);
    snprintf(line, sizeof line,
             "treeduce[badtable]: the machine's measured tables name an algorithm 'nosuch' of "
             "allreduce that this runtime does not have: the model's ranges are used");
    snprintf(msg, sizeof msg, "no line '%s'", line);
    check(capture_count(text, line) == 1, msg);
    free(text);
    MPI_Comm_free(&comm);
    MPI_Comm_free(&other);
    MPI_Comm_free(&bad);
}

static void test_candidates(void)
{
    static char cand[128][TRD_CANDIDATE_MAX];
    static const size_t counts[] = {1, 7, 300, 4099};
    char msg[400];
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    for (int coll = 0; coll < TRD_NCOLLS; coll++) {
        int n = trd_candidates(&machine, comm, coll, cand, 128);
        snprintf(msg, sizeof msg, "%s: %d candidates", trd_coll_name(coll), n);
        check(n >= 3 && n <= 128 && !strcmp(cand[n - 1], "mpi"), msg);
        if (n < 1 || n > 128)
            continue;
        /* the same list on every rank */
        static char root_list[128][TRD_CANDIDATE_MAX];
        int rn = n;
        memcpy(root_list, cand, sizeof cand);
        PMPI_Bcast(&rn, 1, MPI_INT, 0, comm);
        PMPI_Bcast(root_list, (int)sizeof root_list, MPI_CHAR, 0, comm);
        snprintf(msg, sizeof msg, "%s: the candidates differ from rank 0's", trd_coll_name(coll));
        check(rn == n && !memcmp(root_list, cand, (size_t)n * TRD_CANDIDATE_MAX), msg);
        for (int i = 0; i < n; i++) {
            if (rank == 0)
                printf("%s candidate %s\n", trd_coll_name(coll), cand[i]);
            /* the candidate runs (its note) at one count at least */
            int ran = 0;
            capture_start();
            for (size_t k = 0; k < sizeof counts / sizeof *counts; k++) {
                int fell =
                    run(&machine, comm, coll, counts[k], MPI_SUM, cand[i], RUN_BLOCKING, cand[i]);
                ran |= !fell;
                if (!strcmp(cand[i], "mpi")) {
                    snprintf(msg, sizeof msg, "%s forced mpi: trd_fell_back() %d",
                             trd_coll_name(coll), fell);
                    check(fell == 1, msg);
                }
            }
            char *text = capture_end(), line[200];
            snprintf(line, sizeof line, "treeduce[tuned]: %s runs %.63s", routines[coll], cand[i]);
            snprintf(msg, sizeof msg, "%.63s: no line '%s'%s", cand[i], line,
                     ran || !strcmp(cand[i], "mpi") ? "" : ", and no count ran its schedule");
            check(capture_count(text, line) == 1 && ran == !!strcmp(cand[i], "mpi"), msg);
            free(text);
        }
        run(&machine, comm, coll, 100, MPI_SUM, "auto", RUN_BLOCKING, "auto");
        /* a name that is no algorithm of the collective: the note, the library */
        char line[300];
        capture_start();
        int fell = run(&machine, comm, coll, 100, MPI_SUM, "nosuch:3", RUN_BLOCKING, "nosuch");
        char *text = capture_end();
        snprintf(line, sizeof line,
                 "treeduce[tuned]: the forced algorithm nosuch:3 cannot run %s (not an "
                 "algorithm's name): the MPI library's %s is called instead",
                 routines[coll], routines[coll]);
        snprintf(msg, sizeof msg, "no line '%s'", line);
        check(capture_count(text, line) == 1 && fell == 1, msg);
        free(text);
    }
    /* the allreduce candidates hold the ones every shape plans */
    int n = trd_candidates(&machine, comm, TRD_ALLREDUCE, cand, 128), rd = 0, ring = 0;
    for (int i = 0; i < n && i < 128; i++)
        rd |= !strcmp(cand[i], "rd"), ring |= !strcmp(cand[i], "ring");
    check(rd && ring, "allreduce candidates without rd or ring");
    /* an intercommunicator: none */
    if (size >= 2) {
        MPI_Comm half, inter;
        MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
        MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, rank % 2 ? 0 : 1, 7, &inter);
        check(trd_candidates(&machine, inter, TRD_ALLREDUCE, cand, 128) == -1,
              "candidates on an intercommunicator");
        MPI_Comm_free(&inter);
        MPI_Comm_free(&half);
    }
    check(trd_candidates(&machine, comm, TRD_NCOLLS, cand, 128) == -1,
          "candidates of no collective");
    MPI_Comm_free(&comm);
}

/* A blocking allreduce that goes to the MPI library's routine while this
 * rank holds a nonblocking collective of treeduce's that its peer waits for
 * first: rank 0 starts it, makes the blocking call, then waits; rank 1
 * starts it, waits, then makes the blocking call.  A legal program (the MPI
 * library progresses a nonblocking collective inside any MPI call).  The
 * blocking call goes to the library because the tables choose "mpi" at its
 * size (forced 0; the nonblocking call an allreduce of treeduce's: ring or
 * Rabenseifner), or because TREEDUCE_ALGORITHM=mpi forces it (forced 1,
 * set by the test's environment; the nonblocking call a bcast, which that
 * does not force).  It hung while the blocking call went to the library's
 * blocking routine, where rank 0 cannot advance treeduce's run: after a
 * nonblocking call on a communicator, its blocking calls that go to the
 * library take the library's nonblocking form, waited for while treeduce's
 * runs advance.  Rounds of it on one communicator, each result checked. */
static void test_hold(int nodes, int forced)
{
    /* 16 KiB: allreduce ring (1 node) or rabenseifner (2 nodes), bcast
     * scatter_allgather:ring or binomial; 1 KiB (1 node) or 64 B (2 nodes):
     * "mpi" (the tables above) */
    const size_t big = 2048, small = nodes == 1 ? 128 : 8;
    double *in = malloc(big * sizeof *in), *out = malloc(big * sizeof *out),
           *ref = malloc(big * sizeof *ref), sin[128], sout[128], sref[128];
    const char *nb_note =
        forced ? (nodes == 1 ? "treeduce[tuned]: MPI_Ibcast runs scatter_allgather:ring"
                             : "treeduce[tuned]: MPI_Ibcast runs binomial")
               : (nodes == 1 ? "treeduce[tuned]: MPI_Iallreduce runs ring"
                             : "treeduce[tuned]: MPI_Iallreduce runs rabenseifner");
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    for (int round = 0; round < 20; round++) {
        MPI_Request req;
        int rc, rc2 = MPI_SUCCESS, fell = -1, root = round % 2;
        fill(in, big, (unsigned)(round * 16 + rank + 1));
        fill(sin, small, (unsigned)(round * 16 + rank + 9));
        capture_start();
        if (forced) {
            memcpy(out, in, big * sizeof *in);
            rc = trd_ibcast(&machine, out, (MPI_Count)big, MPI_DOUBLE, root, comm, &req);
        } else {
            rc = trd_iallreduce(&machine, in, out, (MPI_Count)big, MPI_DOUBLE, MPI_SUM, comm, &req);
        }
        if (rank == 0) {
            rc2 = trd_allreduce(&machine, sin, sout, (int)small, MPI_DOUBLE, MPI_SUM, comm);
            fell = trd_fell_back();
        }
        if (rc == MPI_SUCCESS)
            rc = MPI_Wait(&req, MPI_STATUS_IGNORE);
        if (rank != 0) {
            rc2 = trd_allreduce(&machine, sin, sout, (int)small, MPI_DOUBLE, MPI_SUM, comm);
            fell = trd_fell_back();
        }
        char *text = capture_end();
        if (forced) {
            memcpy(ref, in, big * sizeof *in);
            PMPI_Bcast(ref, (int)big, MPI_DOUBLE, root, comm);
        } else {
            PMPI_Allreduce(in, ref, (int)big, MPI_DOUBLE, MPI_SUM, comm);
        }
        PMPI_Allreduce(sin, sref, (int)small, MPI_DOUBLE, MPI_SUM, comm);
        char msg[200];
        snprintf(msg, sizeof msg, "round %d: rc %d/%d, results %s/%s, the blocking call %s", round,
                 rc, rc2, same(out, ref, big, forced) ? "right" : "wrong",
                 same(sout, sref, small, 0) ? "right" : "wrong",
                 fell == 1 ? "the library's" : "treeduce's");
        check(rc == MPI_SUCCESS && rc2 == MPI_SUCCESS && same(out, ref, big, forced) &&
                  same(sout, sref, small, 0) && fell == 1,
              msg);
        if (round == 0) {
            snprintf(msg, sizeof msg, "no line '%s'", nb_note);
            check(capture_count(text, nb_note) == 1, msg);
        }
        free(text);
    }
    MPI_Comm_free(&comm);
    free(in);
    free(out);
    free(ref);
}

/* TREEDUCE_ALGORITHM=mpi: MPI_Allreduce is the library's, with its note and
 * no forced algorithm's complaint. */
static void test_env_mpi(void)
{
    double in[64], out[64], ref[64];
    char line[200];
    fill(in, 64, (unsigned)rank + 1);
    capture_start();
    int rc = trd_allreduce(&machine, in, out, 64, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    int fell = trd_fell_back();
    char *text = capture_end();
    PMPI_Allreduce(in, ref, 64, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    check(rc == MPI_SUCCESS && same(out, ref, 64, 0) && fell == 1,
          "TREEDUCE_ALGORITHM=mpi: result or trd_fell_back");
    check(capture_count(text, "treeduce[tuned]: MPI_Allreduce runs mpi") == 1,
          "TREEDUCE_ALGORITHM=mpi: no note naming mpi");
    snprintf(line, sizeof line,
             "treeduce[tuned]: MPI_Allreduce uses the MPI library's routine: it is forced (mpi)");
    check(capture_count(text, line) == 1, "TREEDUCE_ALGORITHM=mpi: no note that it is forced");
    check(!strstr(text, "cannot run"), "TREEDUCE_ALGORITHM=mpi: a forced algorithm's complaint");
    free(text);
}

int main(int argc, char **argv)
{
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    int len;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Get_library_version(version, &len);
    version[strcspn(version, "\r\n")] = '\0';
    machine.tuned_mpi = version;
    if (argc > 2 && !strcmp(argv[1], "tables") && (!strcmp(argv[2], "1") || !strcmp(argv[2], "2")))
        test_tables(atoi(argv[2]));
    else if (argc > 1 && !strcmp(argv[1], "candidates"))
        test_candidates();
    else if (argc > 2 && !strcmp(argv[1], "hold") &&
             (!strcmp(argv[2], "1") || !strcmp(argv[2], "2")))
        test_hold(atoi(argv[2]), argc > 3 && !strcmp(argv[3], "forced"));
    else if (argc > 1 && !strcmp(argv[1], "env-mpi"))
        test_env_mpi();
    else
        check(0, "usage: test_tuned tables NODES | hold NODES [forced] | candidates | env-mpi");
    if (rank == 0)
        printf("%d passed, %d failed\n", passed, failed);
    MPI_Finalize();
    return failed ? 1 : 0;
}
