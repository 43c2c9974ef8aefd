/* treeduce-tune: measure every candidate algorithm of every collective, and
 * the MPI library's own routine, on this machine, and write the winners per
 * collective x communicator shape x message size as wisdom for
 * treeduce-gen --wisdom (gen/read/wisdom.h).
 *
 * Every rank reads TOPOLOGY as treeduce-gen does, plans it with the model
 * and builds the machine's tables in memory (the ones gen/out/emit.c writes,
 * without tuned ranges); the candidates run through the runtime's *_with
 * routines on that machine, so ranks map to nodes as in an application
 * (host name, or TREEDUCE_HOSTS).  Before anything is measured the ranks
 * check that they agree (options, the description's digest, the MPI
 * library, where TREEDUCE_HOSTS comes from) and that every rank is on a node
 * of the machine.  Shapes formed from the job: one node with 2 .. ppn ranks,
 * and 2, 4, ... and all nodes with 1, 2, 4, ... and the smallest node's
 * ranks each, largest first, so that a budget keeps the whole job's tables;
 * each shape is a communicator of its own (the other ranks wait).  How one
 * table is measured: tune_measure.c.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "outfile.h"
#include "rt.h"
#include "tune.h"
#include "tune_rules.h"
#include "tune_setup.h"
#include "wisdom.h"

#ifndef TRD_VERSION
#define TRD_VERSION "0.1.0"
#endif

#define HELP_OPTS "--help or --version\n"

enum { EXIT_USAGE = 1, EXIT_INPUT = 2, EXIT_WRITE = 3, EXIT_MPI = 4 };

/* What every rank must agree on, and what rank 0 needs of each. */
typedef struct agree {
    char err[512]; /* this rank's command line or TOPOLOGY failed */
    char digest[65];
    char mpi[TRD_WISDOM_STRING_MAX];
    char opts[1024]; /* one option a line */
    char hostsrc[256];
    char host[TRD_WISDOM_STRING_MAX];
    char why[200];
    int node;
} agree;

/* The first line of d's messages into buf. */
static void first_message(const trd_diag *d, char *buf, size_t len)
{
    char *text = NULL;
    size_t tlen = 0;
    FILE *f = open_memstream(&text, &tlen);
    if (f) {
        trd_diag_print(d, f);
        fclose(f);
    }
    snprintf(buf, len, "%.*s", text ? (int)strcspn(text, "\n") : 0, text ? text : "");
    free(text);
}

/* A shape of the job and who is in it. */
typedef struct shape {
    int nnodes, ppn;
} shape;

static int cmp_shape(const void *a, const void *b)
{
    const shape *x = a, *y = b;
    if (x->nnodes * x->ppn != y->nnodes * y->ppn)
        return y->nnodes * y->ppn - x->nnodes * x->ppn;
    return y->nnodes - x->nnodes;
}

/* The step after v in 1, 2, 4, ... and last (then last + 1: the end). */
static int doubling(int v, int last)
{
    return v * 2 < last ? v * 2 : v == last ? last + 1 : last;
}

/* The shapes the job (node[r] of every rank) can form, largest first, into
 * sh; -1 with err where --shapes asks for one it cannot. */
static int job_shapes(const tune_opts *o, const int *node, int np, int nnodes_m, shape *sh,
                      int *nsh, char *err, size_t errlen)
{
    int *cnt = calloc((size_t)nnodes_m, sizeof(int));
    if (!cnt)
        return snprintf(err, errlen, "out of memory"), -1;
    for (int r = 0; r < np; r++)
        cnt[node[r]]++;
    int jobn = 0, least = np;
    for (int k = 0; k < nnodes_m; k++)
        if (cnt[k]) {
            jobn++;
            least = cnt[k] < least ? cnt[k] : least;
        }
    int here = cnt[node[0]], n = 0;
    free(cnt);
    shape all[TUNE_MAX_SHAPES];
    for (int k = 2; k <= here && n < TUNE_MAX_SHAPES; k = here <= 8 ? k + 1 : doubling(k, here))
        all[n++] = (shape){1, k};
    for (int nn = 2; jobn >= 2 && nn <= jobn; nn = doubling(nn, jobn))
        for (int pp = 1; pp <= least && n < TUNE_MAX_SHAPES; pp = doubling(pp, least))
            all[n++] = (shape){nn, pp};
    *nsh = 0;
    for (int i = 0; i < n; i++) {
        int keep = o->nshapes == 0;
        for (int j = 0; j < o->nshapes; j++)
            keep |= o->shape[j][0] == all[i].nnodes && o->shape[j][1] == all[i].ppn;
        if (keep)
            sh[(*nsh)++] = all[i];
    }
    for (int j = 0; j < o->nshapes; j++) {
        int found = 0;
        for (int i = 0; i < *nsh; i++)
            found |= o->shape[j][0] == sh[i].nnodes && o->shape[j][1] == sh[i].ppn;
        if (!found)
            return snprintf(err, errlen,
                            "--shapes: this job cannot form %dx%d (%d node%s, %d rank%s on rank "
                            "0's node, %d on the smallest)",
                            o->shape[j][0], o->shape[j][1], jobn, jobn == 1 ? "" : "s", here,
                            here == 1 ? "" : "s", least),
                   -1;
    }
    qsort(sh, (size_t)*nsh, sizeof *sh, cmp_shape);
    return 0;
}

/* Whether world rank me is in shape s: the first s.nnodes nodes of the job
 * in ring order from rank 0's, wrapping, and the s.ppn lowest ranks of each
 * (rank 0 is in every shape, rank 0 of each communicator). */
static int in_shape(const int *node, int np, int nnodes_m, shape s, int me)
{
    char *used = calloc((size_t)nnodes_m, 1);
    if (!used)
        MPI_Abort(MPI_COMM_WORLD, EXIT_MPI);
    int before = 0, below = 0;
    for (int r = 0; r < np; r++) {
        used[node[r]] = 1;
        below += node[r] == node[me] && r < me;
    }
    if (node[me] != node[0]) /* rank 0's node and the job's nodes after it up to mine */
        for (int k = node[0]; k != node[me]; k = (k + 1) % nnodes_m)
            before += used[k];
    free(used);
    return before < s.nnodes && below < s.ppn;
}

/* *alt: sub's ranks in the second order the MPI library's routine and the
 * rank-order candidates are timed in (tune_shuffled_order; world rank r on
 * node[r], its leaf the switch the node hangs from in t), or MPI_COMM_NULL
 * where that order is sub's own.  Every rank of sub calls it.  Returns
 * MPI_SUCCESS or an MPI error. */
static int second_order(MPI_Comm sub, const int *node, trd_topo_t t, MPI_Comm *alt)
{
    int n, me, w, rc, moved = 0;
    MPI_Comm_size(sub, &n);
    MPI_Comm_rank(sub, &me);
    MPI_Comm_rank(MPI_COMM_WORLD, &w);
    int *nd = malloc((size_t)n * sizeof *nd), *lf = malloc((size_t)n * sizeof *lf),
        *key = malloc((size_t)n * sizeof *key);
    if (!nd || !lf || !key) {
        rc = MPI_ERR_NO_MEM;
        goto out;
    }
    if ((rc = MPI_Allgather(&node[w], 1, MPI_INT, nd, 1, MPI_INT, sub)) != MPI_SUCCESS)
        goto out;
    for (int r = 0; r < n; r++)
        lf[r] = trd_topo_nswitches(t) > 0 ? trd_topo_node_switch(t, nd[r]) : 0;
    if ((moved = tune_shuffled_order(nd, lf, n, key)) < 0)
        rc = MPI_ERR_NO_MEM;
    else
        rc = MPI_Comm_split(sub, 0, key[me], alt);
    if (rc == MPI_SUCCESS && !moved)
        rc = MPI_Comm_free(alt); /* sets MPI_COMM_NULL */
out:
    free(nd);
    free(lf);
    free(key);
    return rc;
}

/* The ranges of a complete table into w. */
static int add_ranges(const tune_table *t, trd_wisdom *w, int cap)
{
    if (w->nranges + t->nranges > cap)
        return -1;
    memcpy(&w->range[w->nranges], t->range, (size_t)t->nranges * sizeof t->range[0]);
    w->nranges += t->nranges;
    return 0;
}

static void print_bound(size_t b)
{
    if (b >= ((size_t)1 << 20) && b % ((size_t)1 << 20) == 0)
        fprintf(stderr, "%zuM", b >> 20);
    else if (b >= 1024 && b % 1024 == 0)
        fprintf(stderr, "%zuK", b >> 10);
    else
        fprintf(stderr, "%zu", b);
}

static void print_table(const tune_table *t, const trd_wisdom *w, int first)
{
    static const char *const verdict[] = {"kept", "to the model", "to MPI"};
    fprintf(stderr, "  %-20s %3dx%-3d %7.1f s:", trd_coll_name(t->coll), t->nnodes, t->ppn,
            t->seconds);
    if (!t->complete) {
        fprintf(stderr, " cut short by the budget, left out\n");
        return;
    }
    if (first < 0) {
        fprintf(stderr, " nothing ran\n");
        return;
    }
    fprintf(stderr, " noise %.1f%%%s\n", 100 * t->noise, t->checked ? "" : ", not checked");
    for (int i = first; i < w->nranges && w->range[i].coll == t->coll &&
                        w->range[i].nnodes == t->nnodes && w->range[i].ppn == t->ppn;
         i++) {
        const trd_wisdom_range *r = &w->range[i];
        fprintf(stderr, "    [");
        print_bound(r->from);
        fprintf(stderr, ", ");
        print_bound(r->below);
        fprintf(stderr, ") %s %.4g us", r->alg, r->us);
        for (int k = 0; k < r->ncheck; k++) {
            const trd_wisdom_point *q = &r->check[k];
            fprintf(stderr, "%s ", k ? ";" : "; checked");
            print_bound(q->bytes);
            fprintf(stderr, ": %s %.4g, model %s %.4g, mpi %.4g: %s", q->alg, q->alg_us, q->model,
                    q->model_us, q->mpi_us, verdict[q->verdict]);
        }
        fputc('\n', stderr);
    }
}

/* Write w into out (opened before measuring, for path) and put it in place. */
static int write_wisdom(trd_outfile *out, const char *path, const trd_wisdom *w)
{
    const char *what = "write";
    int e = 0;
    if (trd_wisdom_write(out->f, w) != TRD_OK) {
        e = errno ? errno : EIO;
        trd_outfile_discard(out);
    } else {
        e = trd_outfile_commit(out, &what) != TRD_OK ? errno : 0;
    }
    if (e)
        fprintf(stderr, "treeduce-tune: %s: cannot %s: %s; nothing written\n", path, what,
                strerror(e));
    return e;
}

/* Rank 0: whether the ranks agree (all[0..np)), each problem printed.
 * Returns 0, -1 where every rank has only --help or --version, or an exit
 * status.  kind: rank 0's command line (-1 bad) or TOPOLOGY (-2 bad). */
static int verdict(const agree *all, int np, int kind, const char *input)
{
    int help = 0, errs = 0;
    for (int r = 0; r < np; r++)
        help += strcmp(all[r].opts, HELP_OPTS) == 0;
    if (help == np)
        return -1;
    if (kind == -1) {
        fprintf(stderr, "treeduce-tune: %s\n\n%s", all[0].err, tune_usage);
        return EXIT_USAGE;
    }
    for (int r = 0; r < np; r++) {
        if (!all[r].err[0] || (r > 0 && strcmp(all[r].err, all[0].err) == 0))
            continue; /* the same error is printed once */
        if (r == 0 && kind == -2)
            fprintf(stderr, "treeduce-tune: cannot read %s\n", input);
        else
            fprintf(stderr, "treeduce-tune: rank %d: %s\n", r, all[r].err);
        errs++;
    }
    if (errs) {
        fprintf(stderr, "treeduce-tune: nothing measured\n");
        return all[0].err[0] ? EXIT_INPUT : EXIT_USAGE;
    }
    if (np < 2) {
        fprintf(stderr, "treeduce-tune: needs 2 or more ranks (mpiexec -n P)\n");
        return EXIT_USAGE;
    }
    for (int r = 1; r < np; r++) {
        char x[256], y[256];
        if (strcmp(all[r].opts, all[0].opts) != 0) {
            tune_first_diff(all[r].opts, all[0].opts, x, y, sizeof x);
            fprintf(stderr,
                    "treeduce-tune: rank %d has other options than rank 0: '%s', rank 0 '%s'\n", r,
                    x, y);
        } else if (strcmp(all[r].digest, all[0].digest) != 0) {
            fprintf(stderr,
                    "treeduce-tune: rank %d read another description of the machine (digest "
                    "%.12s..., rank 0 %.12s...)\n",
                    r, all[r].digest, all[0].digest);
        } else if (strcmp(all[r].mpi, all[0].mpi) != 0) {
            fprintf(stderr, "treeduce-tune: rank %d runs another MPI library: '%s', rank 0 '%s'\n",
                    r, all[r].mpi, all[0].mpi);
        } else if (strcmp(all[r].hostsrc, all[0].hostsrc) != 0) {
            fprintf(stderr, "treeduce-tune: rank %d has TREEDUCE_HOSTS '%s', rank 0 '%s'\n", r,
                    all[r].hostsrc, all[0].hostsrc);
        } else {
            continue;
        }
        errs++;
    }
    for (int r = 0; r < np && !errs; r++)
        if (all[r].node < 0) {
            fprintf(stderr, "treeduce-tune: rank %d: %s\n", r, all[r].why);
            errs++;
        }
    if (errs)
        fprintf(stderr, "treeduce-tune: the ranks do not agree; nothing measured\n");
    return errs ? EXIT_INPUT : 0;
}

int main(int argc, char **argv)
{
    int early = tune_before_mpi(argc, argv);
    if (early >= 0)
        return early;
    MPI_Init(&argc, &argv);
    int me, np;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    static args a;
    agree mine, *all = NULL;
    memset(&mine, 0, sizeof mine);
    mine.node = -1;
    trd_diag *d = NULL;
    trd_topo_t topo = NULL;
    trd_machine_plan *plan = calloc(1, sizeof *plan);
    built b;
    memset(&b, 0, sizeof b);
    int done, code = 0;
    int kind = tune_parse_args(argc, argv, &a, me, &done, mine.err, sizeof mine.err) != TRD_OK ? -1
               : done                                                                          ? 1
                                                                                               : 0;
    tune_canon(&a, mine.opts, sizeof mine.opts);
    if (kind == 1)
        snprintf(mine.opts, sizeof mine.opts, HELP_OPTS);
    char *intext = NULL;
    size_t inlen = 0;
    if (kind == 0 && (trd_diag_create(&d) != TRD_OK || !plan || trd_topo_create(&topo) != TRD_OK)) {
        snprintf(mine.err, sizeof mine.err, "out of memory");
        kind = -2;
    } else if (kind == 0 && trd_load_topology(&a.load, topo, d, &intext, &inlen) != TRD_OK) {
        if (me == 0)
            trd_diag_print(d, stderr);
        first_message(d, mine.err, sizeof mine.err);
        kind = -2;
    } else if (kind == 0 && (trd_plan_machine(topo, plan, NULL, NULL) != TRD_OK ||
                             tune_build_machine(topo, plan, &b) != TRD_OK)) {
        snprintf(mine.err, sizeof mine.err, "out of memory");
        kind = -2;
    }
    free(intext);
    if (kind == 0) {
        trd_topo_digest(topo, mine.digest);
        char host[MPI_MAX_PROCESSOR_NAME + 64] = "";
        mine.node = trd_host_node(&b.m, host, sizeof host, mine.why, sizeof mine.why);
        snprintf(mine.host, sizeof mine.host, "%.*s", (int)sizeof mine.host - 1, host);
    }
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    int vlen = 0;
    MPI_Get_library_version(version, &vlen);
    snprintf(mine.mpi, sizeof mine.mpi, "%.*s", (int)strcspn(version, "\n"), version);
    const char *hs = getenv("TREEDUCE_HOSTS");
    snprintf(mine.hostsrc, sizeof mine.hostsrc, "%s", hs ? hs : "");

    /* every rank agrees, or nothing is measured */
    if (me == 0 && !(all = malloc((size_t)np * sizeof *all)))
        MPI_Abort(MPI_COMM_WORLD, EXIT_MPI);
    MPI_Gather(&mine, sizeof mine, MPI_BYTE, all, sizeof mine, MPI_BYTE, 0, MPI_COMM_WORLD);
    int *node = malloc((size_t)np * sizeof(int));
    if (!node)
        MPI_Abort(MPI_COMM_WORLD, EXIT_MPI);
    /* the wisdom's file is created before anything is measured: a bad -o costs no measurement */
    trd_outfile outf = {NULL, NULL, NULL, 0};
    char defname[TRD_WISDOM_STRING_MAX + 16];
    if (me == 0) {
        for (int r = 0; r < np; r++)
            node[r] = all[r].node;
        code = verdict(all, np, kind, a.load.input);
        const char *path = a.output, *what = "write";
        if (!path) {
            snprintf(defname, sizeof defname, "%s.wisdom", b.m.name);
            path = defname;
        }
        int e = code || trd_outfile_open(&outf, path, &what) == TRD_OK ? 0 : errno;
        if (e) {
            fprintf(stderr, "treeduce-tune: %s: cannot %s: %s; nothing measured\n", path, what,
                    strerror(e));
            code = EXIT_WRITE;
        }
    }
    MPI_Bcast(&code, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (code != 0)
        goto done;
    MPI_Bcast(node, np, MPI_INT, 0, MPI_COMM_WORLD);

    shape sh[TUNE_MAX_SHAPES];
    int nsh = 0;
    char err[512];
    if (job_shapes(&a.o, node, np, b.m.nnodes, sh, &nsh, err, sizeof err) != 0) {
        if (me == 0)
            fprintf(stderr, "treeduce-tune: %s\n", err);
        code = EXIT_USAGE;
        goto done;
    }
    tune_clock clk = {MPI_Wtime(), a.o.budget_s, 0, 0, 0};
    tune_model md = {topo, plan};
    int ntab = 0;
    for (int s = 0; s < nsh; s++)
        for (int i = 0; i < a.o.ncolls; i++) {
            size_t g[TUNE_MAX_POINTS];
            clk.steps += (long)a.o.passes *
                         tune_grid(&a.o, a.o.coll[i], sh[s].nnodes * sh[s].ppn, g, TUNE_MAX_POINTS);
            ntab++;
        }
    tune_table *tab = calloc((size_t)ntab, sizeof *tab);
    if (!tab)
        MPI_Abort(MPI_COMM_WORLD, EXIT_MPI);
    int jobn = 0;
    for (int k = 0; k < b.m.nnodes; k++) /* the nodes with ranks */
        for (int r = 0; r < np; r++)
            if (node[r] == k) {
                jobn++;
                break;
            }
    if (me == 0)
        fprintf(stderr,
                "treeduce-tune %s: machine %s, %d ranks on %d of its %d nodes; %d shape%s x %d "
                "collective%s, %ld sizes%s\n",
                TRD_VERSION, b.m.name, np, jobn, b.m.nnodes, nsh, nsh == 1 ? "" : "s",
                nsh ? ntab / nsh : 0, nsh && ntab / nsh == 1 ? "" : "s", clk.steps,
                a.o.budget_s > 0 ? ", within the budget" : "");
    /* the passes over every table in turn, so that a table's passes lie
     * the whole run apart (treeduce-tune(1), --passes), then each table's
     * winners and their bisection */
    int state[2] = {0, 0}, nt = 0; /* stopped, code; tables rank 0 began */
    for (int k = 0; k <= a.o.passes && !state[1]; k++) {
        int finish = k == a.o.passes, t = 0;
        if (!finish && state[0])
            continue;
        for (int s = 0; s < nsh && !state[1]; s++) {
            MPI_Comm sub, alt = MPI_COMM_NULL;
            int in = in_shape(node, np, b.m.nnodes, sh[s], me);
            MPI_Comm_split(MPI_COMM_WORLD, in ? 0 : MPI_UNDEFINED, me, &sub);
            if (in && second_order(sub, node, topo, &alt) != MPI_SUCCESS)
                MPI_Abort(MPI_COMM_WORLD, EXIT_MPI);
            for (int i = 0; i < a.o.ncolls && in; i++, t++) {
                int c = a.o.coll[i], rc;
                if (k == 0) {
                    tab[t].coll = c;
                    tab[t].nnodes = sh[s].nnodes;
                    tab[t].ppn = sh[s].ppn;
                } else if (!finish && tab[t].passes_done < k) {
                    continue; /* the budget cut an earlier pass of it */
                }
                if (finish)
                    rc = tune_finish(&b.m, &md, &a.o, sub, alt, &tab[t], &clk, !state[0]);
                else if (clk.stopped)
                    continue;
                else if ((rc = tune_measure(&b.m, &md, &a.o, sub, alt, &tab[t], &clk, k)) ==
                             MPI_SUCCESS &&
                         k == 0)
                    nt = t + 1;
                if (rc != MPI_SUCCESS) {
                    if (me == 0)
                        fprintf(stderr,
                                "treeduce-tune: %s %dx%d: the runtime cannot set up the "
                                "communicator\n",
                                trd_coll_name(c), sh[s].nnodes, sh[s].ppn);
                    state[1] = EXIT_MPI;
                    break;
                }
            }
            if (alt != MPI_COMM_NULL)
                MPI_Comm_free(&alt);
            if (sub != MPI_COMM_NULL)
                MPI_Comm_free(&sub);
            state[0] = state[0] || clk.stopped;
            MPI_Bcast(state, 2, MPI_INT, 0, MPI_COMM_WORLD);
        }
    }
    code = state[1];

    /* rank 0 writes what was measured completely */
    if (me == 0 && !code) {
        trd_wisdom w;
        memset(&w, 0, sizeof w);
        w.version = TRD_WISDOM_VERSION;
        snprintf(w.machine, sizeof w.machine, "%s", b.m.name);
        memcpy(w.digest, mine.digest, sizeof w.digest);
        snprintf(w.mpi, sizeof w.mpi, "%s", mine.mpi);
        time_t now = time(NULL);
        strftime(w.date, sizeof w.date, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
        w.nranks = np;
        w.hosts = calloc((size_t)np, sizeof *w.hosts);
        w.range = calloc(TRD_WISDOM_MAX_RANGES, sizeof *w.range);
        w.budget_s = a.o.budget_s;
        w.complete = !clk.stopped;
        if (!w.hosts || !w.range)
            MPI_Abort(MPI_COMM_WORLD, EXIT_MPI);
        for (int r = 0; r < np; r++)
            memcpy(w.hosts[r], all[r].host, sizeof w.hosts[r]);
        fprintf(stderr, "treeduce-tune: measured in %.1f s%s:\n", MPI_Wtime() - clk.start,
                clk.stopped ? " (the budget ran out)" : "");
        int kept = 0, wrong = 0;
        for (int i = 0; i < nt; i++) {
            int first = w.nranges;
            if (tab[i].complete && add_ranges(&tab[i], &w, TRD_WISDOM_MAX_RANGES) != 0) {
                fprintf(stderr, "treeduce-tune: more than %d ranges\n", TRD_WISDOM_MAX_RANGES);
                code = EXIT_WRITE;
                break;
            }
            kept += tab[i].complete && w.nranges > first;
            wrong += tab[i].wrong;
            print_table(&tab[i], &w, w.nranges > first ? first : -1);
        }
        if (!code && write_wisdom(&outf, a.output ? a.output : defname, &w) != 0)
            code = EXIT_WRITE;
        else if (!code)
            fprintf(stderr,
                    "treeduce-tune: wrote %s: %d range%s of %d table%s (%d of %d planned)%s\n",
                    a.output ? a.output : defname, w.nranges, w.nranges == 1 ? "" : "s", kept,
                    kept == 1 ? "" : "s", nt, ntab,
                    wrong ? "; some candidates gave wrong results (above)" : "");
        free(w.hosts);
        free(w.range);
    }
    MPI_Bcast(&code, 1, MPI_INT, 0, MPI_COMM_WORLD);
    free(tab);
done:
    if (outf.f) /* not written: the target stays as it was */
        trd_outfile_discard(&outf);
    free(node);
    free(all);
    tune_free_machine(&b);
    free(plan);
    trd_topo_destroy(topo);
    trd_diag_destroy(d);
    MPI_Finalize();
    return code < 0 ? 0 : code;
}
