/* treeduce-gen: topology in, planned allreduce routines out. */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "emit.h"
#include "export.h"
#include "plan.h"
#include "readers.h"
#include "report.h"
#include "sha256.h"
#include "topo.h"

#ifndef TRD_VERSION
#define TRD_VERSION "0.0.0"
#endif

static const char usage[] =
    "usage: treeduce-gen [options] TOPOLOGY\n"
    "\n"
    "Plan allreduce for the machine described by TOPOLOGY and emit C routines.\n"
    "\n"
    "TOPOLOGY is one of\n"
    "  FILE.topo        the treeduce topology language\n"
    "  FILE.xml         a treeduce XML topology, or an hwloc XML dump (lstopo --of xml) of one node\n"
    "  FILE.conf        a Slurm topology.conf (node type and link from --nodetype, --latency, --bandwidth)\n"
    "  local            this machine, one node, read with hwloc\n"
    "\n"
    "options:\n"
    "  -o, --output DIR     write trd_NAME.h, trd_NAME.c and trd_NAME_mpi.c into DIR\n"
    "  -n, --name NAME      name for files and symbols (default: the machine's name)\n"
    "  -f, --format FMT     dsl, xml, slurm or hwloc (default: from the file)\n"
    "      --explain        print the plan: ring order, NAP groups, thresholds, predictions\n"
    "      --schedule RANK  print RANK's schedule over the whole machine (each node's cores),\n"
    "                       for the algorithm chosen at --bytes (default 64KiB) or --algorithm\n"
    "      --algorithm A    with --schedule: ring, rd, rabenseifner, rm[:SCHEDULE], nap, smp[:ALG]\n"
    "      --bytes N        with --schedule: message size in bytes (doubles)\n"
    "      --predict MAX    CSV of every planned algorithm's predicted time over the whole\n"
    "                       machine, 8 B .. MAX (the schedules' cost model)\n"
    "      --break-schedule ALG:RANK:OP  testing: drop that op from every ALG schedule before\n"
    "                       it is verified, to see the refusal\n"
    "      --dot FILE       write the switch tree with the ring as Graphviz ('-': stdout)\n"
    "      --export-mpich FILE  write an MPICH 4.x collective selection file (JSON) with this plan for\n"
    "                       MPI_Allreduce (MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE)\n"
    "      --export-ompi FILE   write an Open MPI coll/tuned dynamic rules file for MPI_Allreduce\n"
    "                       (coll_tuned_dynamic_rules_filename)\n"
    "      --nodetype SPEC  node type where the input gives none, as an hwloc synthetic\n"
    "                       description (default \"package:1 core:1\")\n"
    "      --latency TIME   link latency where the input gives none (default 2us)\n"
    "      --bandwidth BW   link bandwidth where the input gives none (default 10GB/s)\n"
    "  -h, --help           this text\n"
    "  -V, --version        the version\n";

enum { OPT_EXPLAIN = 256, OPT_DOT, OPT_NODETYPE, OPT_LATENCY, OPT_BANDWIDTH, OPT_SCHEDULE,
       OPT_ALGORITHM, OPT_BYTES, OPT_BREAK, OPT_PREDICT, OPT_EXPORT_MPICH, OPT_EXPORT_OMPI };

static int has_suffix(const char *s, const char *suf)
{
    size_t a = strlen(s), b = strlen(suf);
    return a >= b && strcmp(s + a - b, suf) == 0;
}

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

/* Write an export through a temporary name, renamed when complete. */
static int write_export(const char *path, int (*fn)(FILE *, const trd_plan *, const char *),
                        const trd_plan *p, const char *name)
{
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp%ld", path, (long)getpid());
    FILE *f = fopen(tmp, "w");
    int ok = f && fn(f, p, name) == 0;
    if (f && fclose(f) != 0)
        ok = 0;
    if (ok && rename(tmp, path) != 0)
        ok = 0;
    if (!ok) {
        unlink(tmp);
        fprintf(stderr, "%s: error: cannot write: %s\n", path, strerror(errno));
    }
    return ok ? 0 : -1;
}

/* "65536", "64K", "64KiB", "1M", "1MiB": bytes (powers of 1024). */
static int parse_bytes(const char *s, double *bytes)
{
    char *end;
    double v = strtod(s, &end);
    static const char *const units[][2] = {{"K", "KiB"}, {"M", "MiB"}, {"G", "GiB"}};
    if (end == s || v < 1)
        return -1;
    if (*end) {
        int u = -1;
        for (int i = 0; i < 3; i++)
            if (!strcmp(end, units[i][0]) || !strcmp(end, units[i][1]))
                u = i;
        if (u < 0)
            return -1;
        for (int i = 0; i <= u; i++)
            v *= 1024;
    }
    *bytes = v;
    return 0;
}

/* --schedule RANK: the schedule of rank over the whole machine, for the
 * algorithm chosen at bytes (or algorithm), with its verification. */
static int print_schedule(trd_topo_t t, const trd_plan *p, const char *rank_arg, const char *algorithm,
                          const char *bytes_arg)
{
    char *end, alg[64], why[512];
    long rank = strtol(rank_arg, &end, 10);
    double bytes = 65536;
    if (*end || rank < 0) {
        fprintf(stderr, "treeduce-gen: --schedule '%s': expected a rank number\n", rank_arg);
        return -1;
    }
    if (bytes_arg && parse_bytes(bytes_arg, &bytes) != 0) {
        fprintf(stderr, "treeduce-gen: --bytes '%s': expected a size such as 64KiB\n", bytes_arg);
        return -1;
    }
    const char *params = "";
    if (algorithm) {
        snprintf(alg, sizeof alg, "%s", algorithm);
        char *colon = strchr(alg, ':');
        if (colon) {
            *colon = '\0';
            params = algorithm + (colon - alg) + 1;
        }
    } else {
        int i = 0;
        while (i + 1 < p->nchoices && (size_t)bytes >= p->choice[i].below)
            i++;
        snprintf(alg, sizeof alg, "%s", p->nnodes > 1 ? trd_model_name(p->choice[i].alg) : "nap");
    }
    trd_shape_store st;
    int *machine;
    if (trd_machine_shape(t, 0, 0, &st, &machine)) {
        fprintf(stderr, "treeduce-gen: out of memory\n");
        return -1;
    }
    int rc = -1;
    trd_sched s;
    size_t count = (size_t)bytes / 8 ? (size_t)bytes / 8 : 1;
    if (rank >= st.s.nranks)
        fprintf(stderr, "treeduce-gen: --schedule %ld: the machine has ranks 0..%d\n", rank,
                st.s.nranks - 1);
    else if (trd_sched_plan(&s, alg, params, &st.s, count, 8, 0, 1, 1, why, sizeof why))
        fprintf(stderr, "treeduce-gen: --schedule: %s\n", why);
    else {
        trd_verify_opts vo = {t, 1};
        trd_sched_print(stdout, &s, (int)rank);
        rc = trd_sched_verify(&s, &st.s, &vo, why, sizeof why);
        printf("# verified over all %d ranks: %s\n", st.s.nranks, rc ? why : "ok");
        trd_sched_free(&s);
    }
    trd_shape_free(&st);
    free(machine);
    return rc;
}

int main(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"output", required_argument, NULL, 'o'},     {"name", required_argument, NULL, 'n'},
        {"format", required_argument, NULL, 'f'},     {"explain", no_argument, NULL, OPT_EXPLAIN},
        {"dot", required_argument, NULL, OPT_DOT},    {"nodetype", required_argument, NULL, OPT_NODETYPE},
        {"latency", required_argument, NULL, OPT_LATENCY},
        {"bandwidth", required_argument, NULL, OPT_BANDWIDTH},
        {"schedule", required_argument, NULL, OPT_SCHEDULE},
        {"algorithm", required_argument, NULL, OPT_ALGORITHM},
        {"bytes", required_argument, NULL, OPT_BYTES},
        {"break-schedule", required_argument, NULL, OPT_BREAK},
        {"predict", required_argument, NULL, OPT_PREDICT},
        {"export-mpich", required_argument, NULL, OPT_EXPORT_MPICH},
        {"export-ompi", required_argument, NULL, OPT_EXPORT_OMPI},
        {"help", no_argument, NULL, 'h'},             {"version", no_argument, NULL, 'V'},
        {NULL, 0, NULL, 0}};
    const char *outdir = NULL, *name = NULL, *format = NULL, *dot = NULL;
    const char *nodetype = "package:1 core:1", *latency = "2us", *bandwidth = "10GB/s";
    const char *schedule = NULL, *algorithm = NULL, *bytes_arg = NULL, *break_spec = NULL;
    const char *predict = NULL, *export_mpich = NULL, *export_ompi = NULL;
    int explain = 0, c;
    /* the command line for the banner, before getopt reorders argv */
    char cmd[4096] = "treeduce-gen";
    for (int i = 1; i < argc; i++)
        append_quoted(cmd, sizeof cmd, argv[i]);
    while ((c = getopt_long(argc, argv, "o:n:f:hV", longopts, NULL)) != -1) {
        switch (c) {
        case 'o': outdir = optarg; break;
        case 'n': name = optarg; break;
        case 'f': format = optarg; break;
        case OPT_EXPLAIN: explain = 1; break;
        case OPT_DOT: dot = optarg; break;
        case OPT_NODETYPE: nodetype = optarg; break;
        case OPT_LATENCY: latency = optarg; break;
        case OPT_BANDWIDTH: bandwidth = optarg; break;
        case OPT_SCHEDULE: schedule = optarg; break;
        case OPT_ALGORITHM: algorithm = optarg; break;
        case OPT_BYTES: bytes_arg = optarg; break;
        case OPT_BREAK: break_spec = optarg; break;
        case OPT_PREDICT: predict = optarg; break;
        case OPT_EXPORT_MPICH: export_mpich = optarg; break;
        case OPT_EXPORT_OMPI: export_ompi = optarg; break;
        case 'h': fputs(usage, stdout); return 0;
        case 'V': printf("treeduce-gen %s\n", TRD_VERSION); return 0;
        default: fputs(usage, stderr); return 2;
        }
    }
    if (optind + 1 != argc) {
        fprintf(stderr, "treeduce-gen: expected one TOPOLOGY argument\n\n%s", usage);
        return 2;
    }
    if (!outdir && !explain && !dot && !schedule && !predict && !export_mpich && !export_ompi) {
        fprintf(stderr, "treeduce-gen: nothing to do: give -o DIR, --explain, --dot FILE, --schedule RANK,\n"
                        "  --predict MAX, --export-mpich FILE or --export-ompi FILE\n");
        return 2;
    }
    const char *input = argv[optind];
    if (name && !trd_emit_valid_name(name)) {
        fprintf(stderr, "treeduce-gen: --name '%s': expected a C identifier ([A-Za-z_][A-Za-z0-9_]*)\n", name);
        return 2;
    }

    trd_diag *d = trd_diag_create();
    trd_topo_t t = NULL;
    if (!d || trd_topo_create(&t) != TRD_OK) {
        fprintf(stderr, "treeduce-gen: out of memory\n");
        return 1;
    }
    trd_loc cli = {"treeduce-gen", 0, 0};
    /* defaults for inputs that carry no costs or node types (Slurm) */
    trd_link_cost dl = {0, 0, 0, 0};
    if (trd_parse_time(latency, &dl.latency_s) != 0)
        trd_diag_error(d, cli, "--latency '%s': expected a time such as 2us", latency);
    if (trd_parse_bandwidth(bandwidth, &dl.bandwidth_Bps) != 0)
        trd_diag_error(d, cli, "--bandwidth '%s': expected a bandwidth such as 10GB/s", bandwidth);
    trd_topo_set_default_link(t, dl);
    int npk, cores[TRD_MAX_PACKAGES];
    char err[512];
    if (trd_hwloc_node_shape("synthetic", nodetype, &npk, cores, NULL, err, sizeof err) != 0)
        trd_diag_error(d, cli, "--nodetype: %s", err);
    else {
        char src[600];
        snprintf(src, sizeof src, "--nodetype \"%s\"", nodetype);
        trd_topo_set_default_nodetype(t, npk, cores, src);
    }

    if (!format) {
        if (strcmp(input, "local") == 0)
            format = "local";
        else if (has_suffix(input, ".topo"))
            format = "dsl";
        else if (has_suffix(input, ".conf"))
            format = "slurm";
        else if (has_suffix(input, ".xml")) {
            char root[64] = "";
            if (trd_xml_root_name(input, root, sizeof root) == 0 && strcmp(root, "topology") == 0)
                format = "hwloc";
            else
                format = "xml";
        } else
            format = "dsl";
    }
    size_t inlen = 0;
    char *intext = NULL;
    int rc = TRD_OK;
    if (trd_diag_count(d) == 0) {
        if (strcmp(format, "local") == 0)
            rc = trd_read_hwloc_machine(t, d, "local", NULL);
        else if (!(intext = trd_read_text(input, &inlen)))
            trd_diag_error(d, (trd_loc){input, 0, 0}, "cannot read file: %s", strerror(errno));
        else if (strcmp(format, "dsl") == 0)
            rc = trd_read_dsl_string(t, d, input, intext, inlen);
        else if (strcmp(format, "slurm") == 0)
            rc = trd_read_slurm_string(t, d, input, intext, inlen);
        else if (strcmp(format, "xml") == 0)
            rc = trd_read_xml_string(t, d, input, intext, inlen);
        else if (strcmp(format, "hwloc") == 0)
            rc = trd_read_hwloc_machine(t, d, "xml", input);
        else
            trd_diag_error(d, cli, "--format '%s': expected dsl, xml, slurm or hwloc", format);
    }
    if (rc == TRD_OK && trd_diag_count(d) == 0)
        rc = trd_topo_finalize(t, d);
    if (rc != TRD_OK || trd_diag_count(d) > 0) {
        trd_diag_print(d, stderr);
        fprintf(stderr, "treeduce-gen: %d error%s; nothing written\n", trd_diag_count(d),
                trd_diag_count(d) == 1 ? "" : "s");
        free(intext);
        trd_topo_destroy(t);
        trd_diag_destroy(d);
        return 1;
    }

    static trd_plan plan;
    trd_plan_build(t, &plan);
    trd_select_stats selstats;
    trd_select_on_schedules(t, &plan, &selstats);
    trd_search_stats sstats;
    trd_search_params(t, &plan, &sstats);
    char machine_name[80];
    sanitize(name ? name : trd_topo_name(t), machine_name, sizeof machine_name);
    char hash[65];
    if (intext)
        trd_sha256_hex(intext, inlen, hash);
    else
        trd_sha256_hex(input, strlen(input), hash);

    /* every schedule the plan uses is verified before anything is written */
    trd_check_opts co = {input, break_spec};
    trd_check_stats stats;
    if (trd_check_schedules(t, &plan, &co, d, &stats) != 0) {
        trd_diag_print(d, stderr);
        free(intext);
        trd_topo_destroy(t);
        trd_diag_destroy(d);
        return 1;
    }
    int status = 0;
    if (schedule && print_schedule(t, &plan, schedule, algorithm, bytes_arg) != 0)
        status = 1;
    if (!status && predict) {
        double maxb;
        if (parse_bytes(predict, &maxb) != 0) {
            fprintf(stderr, "treeduce-gen: --predict '%s': expected a size such as 4MiB\n", predict);
            status = 1;
        } else if (trd_predict_csv(stdout, t, &plan, maxb) != 0) {
            fprintf(stderr, "treeduce-gen: --predict: a schedule could not be timed\n");
            status = 1;
        }
    }
    if (!status && outdir) {
        trd_emit_opts eo = {machine_name, input, hash, cmd};
        if (trd_emit(t, &plan, &eo, outdir, d) != TRD_OK) {
            trd_diag_print(d, stderr);
            status = 1;
        }
    }
    if (!status && dot) {
        if (strcmp(dot, "-") == 0) {
            trd_dot(stdout, t);
        } else {
            char tmp[4200];
            snprintf(tmp, sizeof tmp, "%s.tmp%ld", dot, (long)getpid());
            FILE *f = fopen(tmp, "w");
            if (f) {
                trd_dot(f, t);
                if (fclose(f) != 0 || rename(tmp, dot) != 0) {
                    unlink(tmp);
                    f = NULL;
                }
            }
            if (!f) {
                fprintf(stderr, "%s: error: cannot write: %s\n", dot, strerror(errno));
                status = 1;
            }
        }
    }
    if (!status && export_mpich &&
        write_export(export_mpich, trd_export_csel_json, &plan, machine_name) != 0)
        status = 1;
    if (!status && export_ompi &&
        write_export(export_ompi, trd_export_ompi_rules, &plan, machine_name) != 0)
        status = 1;
    if (!status && explain) {
        trd_explain(stdout, t, &plan, input);
        trd_explain_schedules(stdout, t, &plan);
        printf("\nschedules verified before writing (symbolic execution of every rank: each element\n"
               "  reduced over all ranks once, sends and receives matched, no read before a write,\n"
               "  ring contention on the switch tree): %d, on up to %d ranks, %zu ops, %.2f s\n",
               stats.nverified, stats.largest, stats.ops, stats.seconds);
        if (stats.skipped)
            printf("  %d (shape, algorithm) pairs above the rank limit not verified\n", stats.skipped);
        if (selstats.drawn)
            printf("size ranges drawn on the schedules for %d shape%s: %d schedules timed, %d ring\n"
                   "  timings skipped on its bound, %.2f s\n",
                   selstats.drawn, selstats.drawn == 1 ? "" : "s", selstats.timed, selstats.pruned,
                   selstats.seconds);
        if (selstats.closed)
            printf("  %d shape%s above %d ranks drawn on the closed forms\n", selstats.closed,
                   selstats.closed == 1 ? "" : "s", TRD_SELECT_MAX_RANKS);
        if (sstats.searched)
            printf("parameters (rm bases, smp/flex inter-node algorithm) searched for %d range%s:\n"
                   "  %d schedules timed, %.2f s\n", sstats.searched,
                   sstats.searched == 1 ? "" : "s", sstats.evaluated, sstats.seconds);
    }
    free(intext);
    trd_topo_destroy(t);
    trd_diag_destroy(d);
    return status;
}
