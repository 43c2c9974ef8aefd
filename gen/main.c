/* treeduce-gen: topology in, planned allreduce routines out. */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "load.h"
#include "emit.h"
#include "emulate.h"
#include "export.h"
#include "linkload.h"
#include "outfile.h"
#include "plan.h"
#include "reader.h"
#include "report.h"
#include "sha256.h"
#include "shape.h"
#include "simgrid.h"
#include "topo.h"
#include "trd_select.h"
#include "tune.h"
#include "verify.h"
#include "wisdom.h"

#ifndef TRD_VERSION
#define TRD_VERSION "0.0.0"
#endif

#define MAX_WISDOM 64 /* --wisdom files */

/* --help, around the formats of the readers' table (load.h) */
static const char usage_head[] =
    "usage: treeduce-gen [options] TOPOLOGY\n"
    "\n"
    "Plan allreduce for the machine described by TOPOLOGY and emit C routines.\n"
    "\n"
    "TOPOLOGY is one of\n";
static const char usage_options[] =
    "\n"
    "options:\n"
    "  -o, --output DIR     write trd_NAME.h, trd_NAME.c and trd_NAME_mpi.c into DIR\n"
    "  -n, --name NAME      name for files and symbols (default: the machine's name)\n"
    "  -f, --format FMT     ";
static const char usage_rest[] =
    "\n"
    "                       (default: from the file)\n"
    "      --explain        print the plan: ring order, NAP groups, thresholds, predictions\n"
    "      --schedule RANK  print RANK's schedule over the whole machine (each node's cores),\n"
    "                       for the algorithm chosen at --bytes (default 64KiB) or --algorithm\n"
    "      --algorithm A    with --schedule: any allreduce algorithm, NAME[:PARAMS], as\n"
    "                       TREEDUCE_ALGORITHM names it (the list: --explain)\n"
    "      --bytes N        with --schedule: message size in bytes (doubles)\n"
    "      --predict MAX    CSV of every allreduce algorithm's predicted time over the whole\n"
    "                       machine, 8 B .. MAX (the schedules' cost model)\n"
    "      --link-loads N   the bytes one allreduce of N bytes (doubles, sum) puts on each\n"
    "                       directed link of the switch tree: a line 'link NAME up|down BYTES'\n"
    "                       per link, a node's to its switch and each switch's uplink; the\n"
    "                       algorithm the library selects at N, or --algorithm\n"
    "      --order ORDER    with --link-loads: where the ranks are: tree (nodes in ring order,\n"
    "                       a node's ranks consecutive; the default), shuffled (the nodes taking\n"
    "                       the leaf switches in turn) or FILE (one host name per rank)\n"
    "      --ppn K          with --link-loads, --order tree or shuffled: K ranks per node\n"
    "                       (default: each node's cores)\n"
    "      --break-schedule ALG:RANK:OP  testing: drop that op from every schedule of an\n"
    "                       algorithm named ALG (any collective) before it is verified\n"
    "      --dot FILE       write the switch tree with the ring as Graphviz ('-': stdout)\n"
    "      --export-mpich FILE  write an MPICH 4.x collective selection file (JSON) with this plan "
    "for\n"
    "                       MPI_Allreduce (MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE)\n"
    "      --simgrid FILE   write the machine as a SimGrid platform (XML, DTD 4.1) to FILE and an\n"
    "                       smpirun hostfile (node:cores, ring order) to FILE.hosts ('.xml' "
    "dropped)\n"
    "      --emulate FILE   write the cluster that bench/cluster.sh emulates (switches, nodes as\n"
    "                       host names, link rates) as text to FILE\n"
    "      --export-ompi FILE   write an Open MPI coll/tuned dynamic rules file for MPI_Allreduce\n"
    "                       (coll_tuned_dynamic_rules_filename)\n"
    "      --wisdom FILE    use the size ranges treeduce-tune measured on this machine\n"
    "                       (treeduce-wisdom(5)) where it measured them, the model elsewhere;\n"
    "                       refused unless measured on this description (--digest); given\n"
    "                       several times, the files combine (one MPI library), the newer\n"
    "                       measurement where two overlap\n"
    "      --digest         print the digest of the machine that a wisdom file must carry\n"
    "      --nodetype SPEC  node type where the input gives none, as an hwloc synthetic\n"
    "                       description (default \"" TRD_DEFAULT_NODETYPE "\")\n"
    "      --latency TIME   link latency where the input gives none "
    "(default " TRD_DEFAULT_LATENCY ")\n"
    "      --bandwidth BW   link bandwidth where the input gives none "
    "(default " TRD_DEFAULT_BANDWIDTH ")\n"
    "      --alpha-r-ratio R  alpha_r of a link that gives none, as a fraction of its latency:\n"
    "                       what each further message a rank posts together costs (default\n"
    "                       0.25; 0 for a SimGrid platform, which overlaps them for free)\n"
    "  -h, --help           this text\n"
    "  -V, --version        the version\n";

static void usage(FILE *out)
{
    char formats[256];
    trd_reader_list(formats, sizeof formats);
    fputs(usage_head, out);
    trd_reader_usage(out);
    fputs(usage_options, out);
    fputs(formats, out);
    fputs(usage_rest, out);
}

enum {
    OPT_EXPLAIN = 256,
    OPT_DOT,
    OPT_NODETYPE,
    OPT_LATENCY,
    OPT_ALPHA_R_RATIO,
    OPT_BANDWIDTH,
    OPT_SCHEDULE,
    OPT_ALGORITHM,
    OPT_BYTES,
    OPT_BREAK,
    OPT_PREDICT,
    OPT_EXPORT_MPICH,
    OPT_EXPORT_OMPI,
    OPT_SIMGRID,
    OPT_EMULATE,
    OPT_WISDOM,
    OPT_DIGEST,
    OPT_LINK_LOADS,
    OPT_ORDER,
    OPT_PPN
};

/* Machine name turned into a C identifier. */
static void sanitize(const char *in, char *out, size_t len)
{
    size_t o = 0;
    if (!isalpha((unsigned char)in[0]) && in[0] != '_' && o + 1 < len)
        out[o++] = 'm';
    for (; *in && o + 1 < len && o < 64; in++)
        out[o++] = isalnum((unsigned char)*in) ? *in : '_';
    out[o] = '\0';
}

static void append_quoted(char *cmd, size_t len, const char *arg)
{
    size_t n = strlen(cmd);
    int plain = *arg != '\0';
    for (const char *p = arg; *p; p++)
        if (!(isalnum((unsigned char)*p) || strchr("-_./=:,+@%", *p)))
            plain = 0;
    snprintf(cmd + n, len - n, plain ? " %s" : " '%s'", arg);
}

/* Largest size --bytes and --predict take: 1 TiB. */
#define TRD_CLI_MAX_BYTES 1099511627776.0

/* "65536", "64K", "64KiB", "1M", "1MiB", "1T": bytes (powers of 1024), 1 B
 * to 1 TiB; 0, or -1 for anything else (nan, inf, 1e19). */
static int parse_bytes(const char *s, double *bytes)
{
    char *end;
    double v = strtod(s, &end);
    static const char *const units[][2] = {{"K", "KiB"}, {"M", "MiB"}, {"G", "GiB"}, {"T", "TiB"}};
    if (end == s || !isfinite(v) || v < 1)
        return -1;
    if (*end) {
        int u = -1;
        for (int i = 0; i < 4; i++)
            if (!strcmp(end, units[i][0]) || !strcmp(end, units[i][1]))
                u = i;
        if (u < 0)
            return -1;
        for (int i = 0; i <= u; i++)
            v *= 1024;
    }
    if (v > TRD_CLI_MAX_BYTES)
        return -1;
    *bytes = v;
    return 0;
}

/* --schedule RANK: rank's schedule over the whole machine (each node's
 * cores) for the algorithm the runtime selects at bytes (default 64 KiB) or
 * the one forced with --algorithm NAME[:PARAMS], as trd_sched_print writes
 * it, and its verification over all ranks.  Returns TRD_OK, TRD_ERR_INPUT
 * for a bad argument or a schedule that does not plan, TRD_ERR_VERIFY. */
static int print_schedule(trd_topo_t t, const trd_machine_plan *p, const char *rank_arg,
                          const char *algorithm, const char *bytes_arg)
{
    char *end, why[512];
    long rank = strtol(rank_arg, &end, 10);
    double bytes = 65536;
    const trd_algo *a = NULL;
    const char *params = "";
    trd_shape_store st;
    trd_sched s;
    int *aux, rc;
    if (*end || rank < 0) {
        fprintf(stderr, "treeduce-gen: --schedule '%s': expected a rank number\n", rank_arg);
        return TRD_ERR_INPUT;
    }
    if (bytes_arg && parse_bytes(bytes_arg, &bytes) != 0) {
        fprintf(stderr,
                "treeduce-gen: --bytes '%s': expected a size from 1 B to 1 TiB such as 64KiB\n",
                bytes_arg);
        return TRD_ERR_INPUT;
    }
    if ((rc = trd_machine_shape(t, 0, 0, &st, &aux)) != TRD_OK) {
        fprintf(stderr, "treeduce-gen: out of memory\n");
        return rc;
    }
    trd_call call = {TRD_COLL_ALLREDUCE, (size_t)bytes / 8 ? (size_t)bytes / 8 : 1, 8, 0, 0, 1, 0};
    if (algorithm) {
        if (!(a = trd_algo_parse(TRD_COLL_ALLREDUCE, algorithm, &params))) {
            char names[512];
            trd_algo_names(TRD_COLL_ALLREDUCE, names, sizeof names);
            fprintf(stderr, "treeduce-gen: --algorithm '%s': expected one of %s\n", algorithm,
                    names);
            rc = TRD_ERR_INPUT;
        }
    } else if (p->nnodes > 1) {
        /* the whole machine's ranges; their parameters where it has the
         * planned rank count, as the runtime uses them */
        int i = 0;
        while (i + 1 < p->nchoices && (size_t)bytes >= p->choice[i].below)
            i++;
        a = p->choice[i].alg;
        params = st.s.nranks == p->nnodes * p->ppn ? p->choice[i].params : "";
    } else {
        trd_selection sel = {.nap_max_bytes_1node = p->nap_max_bytes_1node};
        a = trd_select(&sel, &st.s, &call, &params);
    }
    if (rc == TRD_OK && rank >= st.s.nranks) {
        fprintf(stderr, "treeduce-gen: --schedule %ld: the machine has ranks 0..%d\n", rank,
                st.s.nranks - 1);
        rc = TRD_ERR_INPUT;
    }
    if (rc == TRD_OK && trd_plan(&s, a, params, &st.s, &call, -1, why, sizeof why)) {
        fprintf(stderr, "treeduce-gen: --schedule: %s\n", why);
        rc = TRD_ERR_INPUT;
    }
    if (rc == TRD_OK) {
        trd_verify_opts vo = {t, 1, 2};
        trd_sched_print(stdout, &s, (int)rank);
        rc = trd_sched_verify(&s, &st.s, &vo, why, sizeof why);
        printf("# verified over all %d ranks: %s\n", st.s.nranks, rc ? why : "ok");
        trd_sched_free(&s);
    }
    trd_shape_free(&st);
    free(aux);
    return rc;
}

/* Write a file through trd_outfile (outfile.h): complete or not at all,
 * never through a link planted under its name or a temporary one. */
static int write_file(const char *path, int (*fn)(FILE *, const void *, const char *),
                      const void *arg, const char *name)
{
    trd_outfile o;
    const char *what;
    int e = trd_outfile_open(&o, path, &what) != TRD_OK ? errno : 0;
    errno = 0;
    if (!e && fn(o.f, arg, name) != TRD_OK) {
        e = errno ? errno : EIO;
        what = "write";
        trd_outfile_discard(&o);
    } else if (!e) {
        e = trd_outfile_commit(&o, &what) != TRD_OK ? errno : 0;
    }
    if (e)
        fprintf(stderr, "%s: error: cannot %s: %s\n", path, what, strerror(e));
    return e ? TRD_ERR_IO : TRD_OK;
}

static int csel_json(FILE *f, const void *p, const char *name)
{
    return trd_export_csel_json(f, p, name);
}

static int ompi_rules(FILE *f, const void *p, const char *name)
{
    return trd_export_ompi_rules(f, p, name);
}

static int simgrid_platform(FILE *f, const void *t, const char *name)
{
    (void)name;
    return trd_simgrid_platform(f, (trd_topo_t)t);
}

static int simgrid_hostfile(FILE *f, const void *t, const char *name)
{
    (void)name;
    return trd_simgrid_hostfile(f, (trd_topo_t)t);
}

/* The SimGrid platform and its hostfile (simgrid.h). */
static int write_simgrid(const char *path, trd_topo_t t)
{
    char hosts[4096], err[600];
    if (trd_simgrid_hostfile_path(path, hosts, sizeof hosts) != TRD_OK) {
        fprintf(stderr, "%s: error: path too long\n", path);
        return TRD_ERR_IO;
    }
    if (trd_simgrid_check_names(t, err, sizeof err) != TRD_OK) {
        fprintf(stderr, "%s: error: %s\n", hosts, err);
        return TRD_ERR_INPUT;
    }
    int rc = write_file(hosts, simgrid_hostfile, t, NULL);
    return rc == TRD_OK ? write_file(path, simgrid_platform, t, NULL) : rc;
}

static int emulate_cluster(FILE *f, const void *t, const char *name)
{
    (void)name;
    return trd_emulate_cluster(f, (trd_topo_t)t);
}

/* --emulate's node names, checked as host names before anything is
 * written (emulate.h): a name refused leaves no output at all. */
static int check_emulate(const char *path, trd_topo_t t)
{
    char err[600];
    if (trd_emulate_check_names(t, err, sizeof err) != TRD_OK) {
        fprintf(stderr, "%s: error: %s\n", path, err);
        return TRD_ERR_INPUT;
    }
    return TRD_OK;
}

static int dot_file(FILE *f, const void *t, const char *name)
{
    (void)name;
    return trd_dot(f, (trd_topo_t)t);
}

/* What main reads from the command line. */
typedef struct args {
    const char *input, *outdir, *name, *format, *dot;
    const char *nodetype, *latency, *bandwidth, *alpha_r_ratio;
    const char *schedule, *algorithm, *bytes, *break_spec, *predict;
    const char *export_mpich, *export_ompi, *simgrid, *emulate;
    const char *link_loads, *order, *ppn; /* --link-loads BYTES, its placement */
    const char *wisdom[MAX_WISDOM];       /* --wisdom, in command-line order */
    int nwisdom;
    int explain, digest;
    char cmd[4096]; /* the command line for the banner */
} args;

/* What the generator chose and how long it took. */
typedef struct planned {
    trd_machine_plan plan;
    trd_select_stats sel;
    trd_search_stats search;
    trd_check_stats check;
    trd_wisdom in[MAX_WISDOM];          /* each --wisdom file, read and checked */
    char wisdom_sha256[MAX_WISDOM][65]; /* of each one's text */
    trd_wisdom wisdom;                  /* the files merged (nranges 0: none) */
    trd_wisdom_conflict *conflicts;     /* [nconflicts] where they disagree */
    int nconflicts;
    trd_check_stats wisdom_check; /* the merged algorithms verified */
} planned;

/* Most ranks per node --ppn takes: the most cores a node type may have. */
#define TRD_CLI_MAX_PPN 4096

/* A name of the input in the lines of --link-loads: a space, a backslash, a
 * ':' or a '=' (the separators of those lines) written as \xHH, so that
 * every line splits on white space; the readers refuse control characters. */
static void put_name(FILE *f, const char *name)
{
    for (const char *c = name; *c; c++)
        if (strchr(" \\:=", *c))
            fprintf(f, "\\x%02x", (unsigned char)*c);
        else
            putc(*c, f);
}

/* --order tree|shuffled with --ppn: every node of t in that order, K ranks
 * (or its cores) each, into a malloc'd *node_of_rank of *nranks.  Returns
 * TRD_OK, TRD_ERR_INPUT (reported) or TRD_ERR_NOMEM. */
static int order_placement(trd_topo_t t, const args *a, int shuffled, int **node_of_rank,
                           int *nranks)
{
    int N = trd_topo_nnodes(t), ppn = 0, n = 0;
    int *order = malloc((size_t)N * sizeof *order);
    *node_of_rank = NULL;
    if (a->ppn) {
        char *end;
        long v = strtol(a->ppn, &end, 10);
        if (*end || end == a->ppn || v < 1 || v > TRD_CLI_MAX_PPN) {
            fprintf(stderr, "treeduce-gen: --ppn '%s': expected a number of ranks from 1 to %d\n",
                    a->ppn, TRD_CLI_MAX_PPN);
            free(order);
            return TRD_ERR_INPUT;
        }
        ppn = (int)v;
    }
    if (!order)
        return TRD_ERR_NOMEM;
    for (int v = 0; v < N; v++)
        order[v] = v;
    if (shuffled && trd_topo_leaf_alternating(t, order) != TRD_OK) {
        free(order);
        return TRD_ERR_NOMEM;
    }
    for (int v = 0; v < N; v++)
        n += ppn ? ppn : trd_topo_nodetype_ncores(t, trd_topo_node_type(t, v));
    if (!(*node_of_rank = malloc((size_t)n * sizeof **node_of_rank))) {
        free(order);
        return TRD_ERR_NOMEM;
    }
    *nranks = 0;
    for (int k = 0; k < N; k++) {
        int v = order[k], c = ppn ? ppn : trd_topo_nodetype_ncores(t, trd_topo_node_type(t, v));
        for (int j = 0; j < c; j++)
            (*node_of_rank)[(*nranks)++] = v;
    }
    free(order);
    return TRD_OK;
}

/* --link-loads BYTES: plan the allreduce of BYTES (doubles, sum) that the
 * runtime selects for the placement of --order and --ppn (or the one of
 * --algorithm), verify it, and print the bytes one call puts on each
 * directed link of the switch tree (linkload.h): a header comment, then
 * 'link NAME up|down BYTES' for every node (ring order) and every switch
 * but the root (DFS order), then a comment with the totals.  Returns TRD_OK,
 * TRD_ERR_INPUT (a bad argument, a schedule that does not plan),
 * TRD_ERR_VERIFY or TRD_ERR_NOMEM. */
static int print_link_loads(trd_topo_t t, const trd_machine_plan *p, const args *a, trd_diag *d)
{
    char why[512];
    double bytes;
    const char *params = "", *order = a->order ? a->order : "tree";
    const char *kind = strcmp(order, "tree") == 0       ? "tree"
                       : strcmp(order, "shuffled") == 0 ? "shuffled"
                                                        : "file";
    const trd_algo *alg = NULL;
    int *node_of_rank = NULL, *aux = NULL, nranks = 0, rc;
    trd_shape_store st = {0};
    trd_sched s = {0};
    trd_link_loads ll = {0};
    if (parse_bytes(a->link_loads, &bytes) != 0) {
        fprintf(stderr,
                "treeduce-gen: --link-loads '%s': expected a size from 1 B to 1 TiB such as 8MiB\n",
                a->link_loads);
        return TRD_ERR_INPUT;
    }
    if (a->algorithm && !(alg = trd_algo_parse(TRD_COLL_ALLREDUCE, a->algorithm, &params))) {
        char names[512];
        trd_algo_names(TRD_COLL_ALLREDUCE, names, sizeof names);
        fprintf(stderr, "treeduce-gen: --algorithm '%s': expected one of %s\n", a->algorithm,
                names);
        return TRD_ERR_INPUT;
    }
    if (!alg && a->nwisdom) {
        fprintf(stderr, "treeduce-gen: --link-loads: selects as the model does, not from "
                        "--wisdom; name the measured choice with --algorithm\n");
        return TRD_ERR_INPUT;
    }
    if (strcmp(kind, "file") != 0) {
        rc = order_placement(t, a, strcmp(kind, "shuffled") == 0, &node_of_rank, &nranks);
    } else if (a->ppn) {
        fprintf(stderr, "treeduce-gen: --ppn: the file of --order places every rank; give one "
                        "or the other\n");
        rc = TRD_ERR_INPUT;
    } else if ((rc = trd_read_hosts(d, order, t, &node_of_rank, &nranks)) != TRD_OK) {
        trd_diag_print(d, stderr);
    }
    if (rc == TRD_OK && nranks < 2) {
        fprintf(stderr,
                "treeduce-gen: --link-loads: the placement has %d rank; an allreduce "
                "between ranks needs 2 or more\n",
                nranks);
        rc = TRD_ERR_INPUT;
    }
    if (rc == TRD_OK)
        rc = trd_placement_shape(t, node_of_rank, nranks, &st, &aux);
    trd_call call = {TRD_COLL_ALLREDUCE, (size_t)bytes / 8 ? (size_t)bytes / 8 : 1, 8, 0, 0, 1, 0};
    if (rc == TRD_OK && !alg &&
        !(alg = trd_plan_select(p, &st.s, &call, &params, why, sizeof why))) {
        fprintf(stderr, "treeduce-gen: --link-loads: %s\n", why);
        rc = TRD_ERR_INPUT;
    }
    if (rc == TRD_OK && trd_plan(&s, alg, params, &st.s, &call, -1, why, sizeof why)) {
        fprintf(stderr, "treeduce-gen: --link-loads: %s\n", why);
        rc = TRD_ERR_INPUT;
    }
    if (rc == TRD_OK) {
        trd_verify_opts vo = {t, 1, 1};
        if ((rc = trd_sched_verify(&s, &st.s, &vo, why, sizeof why)) != TRD_OK)
            fprintf(stderr, "treeduce-gen: --link-loads: %s%s%s does not verify: %s\n", alg->name,
                    *params ? ":" : "", params, why);
    }
    if (rc == TRD_OK && (rc = trd_sched_link_loads(&s, &st.s, t, &ll, why, sizeof why)) != TRD_OK)
        fprintf(stderr, "treeduce-gen: --link-loads: %s\n", why);
    if (rc == TRD_OK) {
        int ppn_min, ppn_max, S = ll.nswitches;
        trd_shape_ppn(&st.s, &ppn_min, &ppn_max);
        printf("# link loads of one allreduce: bytes=%zu count=%zu extent=8 algorithm=%s%s%s "
               "chosen=%s nodes=%d ppn=%d",
               call.count * call.extent, call.count, alg->name, *params ? ":" : "", params,
               a->algorithm ? "forced" : "selected", st.s.nnodes, ppn_min);
        if (ppn_max != ppn_min)
            printf("..%d", ppn_max);
        printf(" ranks=%d order=%s\n# nodes in rank order (node:ranks):", nranks, kind);
        for (int r = 0, run; r < nranks; r += run) {
            for (run = 1; r + run < nranks && node_of_rank[r + run] == node_of_rank[r]; run++)
                ;
            putchar(' ');
            put_name(stdout, trd_topo_node_name(t, node_of_rank[r]));
            printf(":%d", run);
        }
        putchar('\n');
        for (int v = 0; v < S + ll.nnodes; v++) {
            int x = v < ll.nnodes ? S + v : v - ll.nnodes; /* nodes first, then switches */
            if (x < S && trd_topo_switch_parent(t, x) < 0)
                continue; /* the root has no uplink */
            for (int down = 0; down < 2; down++) {
                fputs("link ", stdout);
                put_name(stdout, x < S ? trd_topo_switch_name(t, x) : trd_topo_node_name(t, x - S));
                printf(" %s %llu\n", down ? "down" : "up",
                       (unsigned long long)ll.bytes[2 * x + down]);
            }
        }
        printf("# between nodes: %llu messages, %llu bytes; within nodes: %llu messages, %llu "
               "bytes\n",
               (unsigned long long)ll.inter_messages, (unsigned long long)ll.inter_bytes,
               (unsigned long long)ll.intra_messages, (unsigned long long)ll.intra_bytes);
    }
    if (rc == TRD_ERR_NOMEM)
        fprintf(stderr, "treeduce-gen: out of memory\n");
    trd_link_loads_free(&ll);
    trd_sched_free(&s);
    trd_shape_free(&st);
    free(aux);
    free(node_of_rank);
    return rc;
}

/* Plan: the closed forms, the ranges and parameters on the schedules. */
static int plan_machine(trd_topo_t t, planned *pl)
{
    int rc = trd_plan_machine(t, &pl->plan, &pl->sel, &pl->search);
    if (rc != TRD_OK)
        fprintf(stderr, "treeduce-gen: out of memory\n");
    return rc;
}

/* --wisdom: each file read and measured on this description, the files
 * merged, and every algorithm the merge keeps planned and verified on its
 * shape, before anything is written. */
static int read_wisdom(const args *a, trd_topo_t t, trd_diag *d, planned *pl)
{
    int rc = TRD_OK;
    for (int i = 0; i < a->nwisdom; i++) { /* every file's errors, not only the first's */
        size_t len = 0;
        char *text;
        int r = trd__read_input(d, a->wisdom[i], &text, &len);
        if (r == TRD_OK) {
            r = trd_wisdom_read_string(a->wisdom[i], text, len, &pl->in[i], d);
            if (r == TRD_OK)
                trd_sha256_hex(text, len, pl->wisdom_sha256[i]);
            free(text);
        }
        if (r == TRD_OK)
            r = trd_wisdom_check(&pl->in[i], t, d);
        if (rc == TRD_OK)
            rc = r;
        if (r == TRD_ERR_NOMEM)
            return r;
    }
    if (rc == TRD_OK)
        rc = trd_wisdom_merge(pl->in, a->nwisdom, &pl->wisdom, &pl->conflicts, &pl->nconflicts, d);
    if (rc == TRD_OK) {
        trd_check_opts co = {a->input, a->break_spec};
        rc = trd_check_wisdom(t, &pl->wisdom, &co, d, &pl->wisdom_check);
    }
    return rc;
}

/* Write what the command line asks for: every output or none but those
 * before a failure. */
/* The outputs that need the topology only, not a plan: --dot, --simgrid,
 * --emulate. */
static int topology_outputs(const args *a, trd_topo_t t)
{
    int rc = TRD_OK;
    if (a->dot)
        rc = strcmp(a->dot, "-") == 0 ? trd_dot(stdout, t) : write_file(a->dot, dot_file, t, NULL);
    if (rc == TRD_OK && a->simgrid)
        rc = write_simgrid(a->simgrid, t);
    if (rc == TRD_OK && a->emulate)
        rc = write_file(a->emulate, emulate_cluster, t, NULL);
    return rc;
}

static int write_outputs(const args *a, trd_topo_t t, trd_diag *d, const planned *pl,
                         const char *intext, size_t inlen)
{
    const trd_machine_plan *p = &pl->plan;
    char machine_name[80], hash[65];
    int rc = TRD_OK;
    sanitize(a->name ? a->name : trd_topo_name(t), machine_name, sizeof machine_name);
    if (intext)
        trd_sha256_hex(intext, inlen, hash);
    else
        trd_sha256_hex(a->input, strlen(a->input), hash);
    if (a->schedule)
        rc = print_schedule(t, p, a->schedule, a->algorithm, a->bytes);
    if (rc == TRD_OK && a->predict) {
        double maxb;
        if (parse_bytes(a->predict, &maxb) != 0) {
            fprintf(
                stderr,
                "treeduce-gen: --predict '%s': expected a size from 1 B to 1 TiB such as 4MiB\n",
                a->predict);
            rc = TRD_ERR_INPUT;
        } else if ((rc = trd_predict_csv(stdout, t, p, maxb)) != TRD_OK) {
            fprintf(stderr, "treeduce-gen: --predict: a schedule could not be timed\n");
        }
    }
    if (rc == TRD_OK && a->link_loads)
        rc = print_link_loads(t, p, a, d);
    if (rc == TRD_OK && a->outdir) {
        const char *sha[MAX_WISDOM];
        for (int i = 0; i < a->nwisdom; i++)
            sha[i] = pl->wisdom_sha256[i];
        trd_emit_opts eo = {.name = machine_name,
                            .input = a->input,
                            .input_sha256 = hash,
                            .command = a->cmd,
                            .wisdom = a->nwisdom ? &pl->wisdom : NULL,
                            .wisdom_input = a->wisdom,
                            .wisdom_sha256 = sha,
                            .nwisdom = a->nwisdom};
        if ((rc = trd_emit(t, p, &eo, a->outdir, d)) != TRD_OK)
            trd_diag_print(d, stderr);
    }
    if (rc == TRD_OK)
        rc = topology_outputs(a, t);
    if (rc == TRD_OK && a->export_mpich)
        rc = write_file(a->export_mpich, csel_json, p, machine_name);
    if (rc == TRD_OK && a->export_ompi)
        rc = write_file(a->export_ompi, ompi_rules, p, machine_name);
    if (rc == TRD_OK && a->explain) {
        const trd_check_stats *c = &pl->check;
        const trd_select_stats *sel = &pl->sel;
        const trd_search_stats *srch = &pl->search;
        rc = trd_explain(stdout, t, p, a->input);
        if (rc == TRD_OK)
            rc = trd_explain_schedules(stdout, t, p);
        if (rc == TRD_OK)
            rc = trd_check_report(stdout, c);
        if (sel->drawn)
            printf("size ranges drawn on the schedules for %d shape%s: %d schedules timed, %d\n"
                   "  extrapolated, %d ring timings skipped on its bound, %.2f s\n",
                   sel->drawn, sel->drawn == 1 ? "" : "s", sel->timed, sel->extrapolated,
                   sel->pruned, sel->seconds);
        if (sel->closed)
            printf("  %d shape%s above %d ranks drawn on the closed forms\n", sel->closed,
                   sel->closed == 1 ? "" : "s", TRD_SELECT_MAX_RANKS);
        if (srch->searched)
            printf("parameters (rm bases, smp/flex inter-node algorithm) searched for %d range%s:\n"
                   "  %d schedules timed, %.2f s\n",
                   srch->searched, srch->searched == 1 ? "" : "s", srch->evaluated, srch->seconds);
        if (rc == TRD_OK && a->nwisdom) {
            const trd_check_stats *wc = &pl->wisdom_check;
            rc = trd_explain_wisdom(stdout, t, p, &pl->wisdom, pl->conflicts, pl->nconflicts);
            printf("  the wisdom's algorithms verified on their shapes: %d schedules, %.2f s\n",
                   wc->nverified, wc->seconds);
            if (wc->covered || wc->skipped)
                printf("  (%d on a shape of 2 or 3 nodes that covers theirs, %d above every limit "
                       "not executed)\n",
                       wc->covered, wc->skipped);
        }
    }
    return rc;
}

int main(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"output", required_argument, NULL, 'o'},
        {"name", required_argument, NULL, 'n'},
        {"format", required_argument, NULL, 'f'},
        {"explain", no_argument, NULL, OPT_EXPLAIN},
        {"dot", required_argument, NULL, OPT_DOT},
        {"nodetype", required_argument, NULL, OPT_NODETYPE},
        {"latency", required_argument, NULL, OPT_LATENCY},
        {"bandwidth", required_argument, NULL, OPT_BANDWIDTH},
        {"alpha-r-ratio", required_argument, NULL, OPT_ALPHA_R_RATIO},
        {"schedule", required_argument, NULL, OPT_SCHEDULE},
        {"algorithm", required_argument, NULL, OPT_ALGORITHM},
        {"bytes", required_argument, NULL, OPT_BYTES},
        {"break-schedule", required_argument, NULL, OPT_BREAK},
        {"predict", required_argument, NULL, OPT_PREDICT},
        {"export-mpich", required_argument, NULL, OPT_EXPORT_MPICH},
        {"export-ompi", required_argument, NULL, OPT_EXPORT_OMPI},
        {"simgrid", required_argument, NULL, OPT_SIMGRID},
        {"emulate", required_argument, NULL, OPT_EMULATE},
        {"wisdom", required_argument, NULL, OPT_WISDOM},
        {"digest", no_argument, NULL, OPT_DIGEST},
        {"link-loads", required_argument, NULL, OPT_LINK_LOADS},
        {"order", required_argument, NULL, OPT_ORDER},
        {"ppn", required_argument, NULL, OPT_PPN},
        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, 'V'},
        {NULL, 0, NULL, 0}};
    static args a = {.nodetype = TRD_DEFAULT_NODETYPE,
                     .latency = TRD_DEFAULT_LATENCY,
                     .bandwidth = TRD_DEFAULT_BANDWIDTH,
                     .cmd = "treeduce-gen"};
    static planned pl; /* large: its plan holds every shape's ranges */
    int c;
    /* the command line for the banner, before getopt reorders argv */
    for (int i = 1; i < argc; i++)
        append_quoted(a.cmd, sizeof a.cmd, argv[i]);
    while ((c = getopt_long(argc, argv, "o:n:f:hV", longopts, NULL)) != -1) {
        switch (c) {
        case 'o':
            a.outdir = optarg;
            break;
        case 'n':
            a.name = optarg;
            break;
        case 'f':
            a.format = optarg;
            break;
        case OPT_EXPLAIN:
            a.explain = 1;
            break;
        case OPT_DOT:
            a.dot = optarg;
            break;
        case OPT_NODETYPE:
            a.nodetype = optarg;
            break;
        case OPT_LATENCY:
            a.latency = optarg;
            break;
        case OPT_BANDWIDTH:
            a.bandwidth = optarg;
            break;
        case OPT_ALPHA_R_RATIO:
            a.alpha_r_ratio = optarg;
            break;
        case OPT_SCHEDULE:
            a.schedule = optarg;
            break;
        case OPT_ALGORITHM:
            a.algorithm = optarg;
            break;
        case OPT_BYTES:
            a.bytes = optarg;
            break;
        case OPT_BREAK:
            a.break_spec = optarg;
            break;
        case OPT_PREDICT:
            a.predict = optarg;
            break;
        case OPT_EXPORT_MPICH:
            a.export_mpich = optarg;
            break;
        case OPT_EXPORT_OMPI:
            a.export_ompi = optarg;
            break;
        case OPT_SIMGRID:
            a.simgrid = optarg;
            break;
        case OPT_EMULATE:
            a.emulate = optarg;
            break;
        case OPT_WISDOM:
            if (a.nwisdom == MAX_WISDOM) {
                fprintf(stderr, "treeduce-gen: --wisdom: at most %d files\n", MAX_WISDOM);
                return 2;
            }
            a.wisdom[a.nwisdom++] = optarg;
            break;
        case OPT_DIGEST:
            a.digest = 1;
            break;
        case OPT_LINK_LOADS:
            a.link_loads = optarg;
            break;
        case OPT_ORDER:
            a.order = optarg;
            break;
        case OPT_PPN:
            a.ppn = optarg;
            break;
        case 'h':
            usage(stdout);
            return 0;
        case 'V':
            printf("treeduce-gen %s\n", TRD_VERSION);
            return 0;
        default:
            usage(stderr);
            return 2;
        }
    }
    if (optind + 1 != argc) {
        fputs("treeduce-gen: expected one TOPOLOGY argument\n\n", stderr);
        usage(stderr);
        return 2;
    }
    if (!a.outdir && !a.explain && !a.dot && !a.schedule && !a.predict && !a.export_mpich &&
        !a.export_ompi && !a.simgrid && !a.emulate && !a.digest && !a.link_loads) {
        fprintf(
            stderr,
            "treeduce-gen: nothing to do: give -o DIR, --explain, --dot FILE, --schedule RANK,\n"
            "  --predict MAX, --link-loads N, --export-mpich FILE, --export-ompi FILE,\n"
            "  --simgrid FILE, --emulate FILE or --digest\n");
        return 2;
    }
    if ((a.order || a.ppn) && !a.link_loads) {
        fprintf(stderr, "treeduce-gen: --%s: goes with --link-loads N\n",
                a.order ? "order" : "ppn");
        return 2;
    }
    a.input = argv[optind];
    if (a.name && !trd_emit_valid_name(a.name)) {
        fprintf(stderr,
                "treeduce-gen: --name '%s': expected a C identifier ([A-Za-z_][A-Za-z0-9_]*)\n",
                a.name);
        return 2;
    }

    /* input -> plan -> verify -> write */
    trd_diag *d = NULL;
    trd_topo_t t = NULL;
    char *intext = NULL;
    size_t inlen = 0;
    int rc = trd_diag_create(&d);
    if (rc == TRD_OK)
        rc = trd_topo_create(&t);
    if (rc != TRD_OK) {
        fprintf(stderr, "treeduce-gen: out of memory\n");
        goto out;
    }
    trd_load_opts lo = {a.input,     a.format,        a.nodetype,    a.latency,
                        a.bandwidth, a.alpha_r_ratio, "treeduce-gen"};
    if ((rc = trd_load_topology(&lo, t, d, &intext, &inlen)) != TRD_OK) {
        trd_diag_print(d, stderr);
        fprintf(stderr, "treeduce-gen: %d error%s; nothing written\n", trd_diag_count(d),
                trd_diag_count(d) == 1 ? "" : "s");
        goto out;
    }
    if (a.emulate && (rc = check_emulate(a.emulate, t)) != TRD_OK)
        goto out;
    if (a.digest) {
        char hex[65];
        trd_topo_digest(t, hex);
        printf("%s\n", hex);
    }
    if (a.nwisdom && (rc = read_wisdom(&a, t, d, &pl)) != TRD_OK) {
        trd_diag_print(d, stderr);
        fprintf(stderr, "treeduce-gen: %d error%s; nothing written\n", trd_diag_count(d),
                trd_diag_count(d) == 1 ? "" : "s");
        goto out;
    }
    if (!a.outdir && !a.explain && !a.schedule && !a.predict && !a.link_loads && !a.export_mpich &&
        !a.export_ompi) {
        rc = topology_outputs(&a, t);
        goto out;
    }
    if ((rc = plan_machine(t, &pl)) != TRD_OK)
        goto out;
    /* every schedule the runtime can run is verified before anything is written */
    trd_check_opts co = {a.input, a.break_spec};
    if ((rc = trd_check_schedules(t, &pl.plan, &co, d, &pl.check)) != TRD_OK) {
        trd_diag_print(d, stderr);
        goto out;
    }
    rc = write_outputs(&a, t, d, &pl, intext, inlen);
out:
    trd_wisdom_free(&pl.wisdom);
    for (int i = 0; i < a.nwisdom; i++)
        trd_wisdom_free(&pl.in[i]);
    free(pl.conflicts);
    free(intext);
    trd_topo_destroy(t);
    trd_diag_destroy(d);
    return rc == TRD_OK ? 0 : 1;
}
