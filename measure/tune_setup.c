/* treeduce-tune: the command line and the machine's tables in memory. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tune_setup.h"

#ifdef TRD_SMPI_INTERP
#include <simgrid/actor.h>
/* The SMPI build's program is a shared object that smpirun loads; this
 * section and the start code it is linked with (trd_smpi_runnable,
 * cmake/TreeduceSmpi.cmake) let it be run directly as well. */
__attribute__((used, section(".interp"))) const char tune_interp[] = TRD_SMPI_INTERP;
#endif

#ifndef TRD_VERSION
#define TRD_VERSION "0.1.0"
#endif

const char tune_usage[] =
    "usage: mpiexec -n P treeduce-tune TOPOLOGY [options]   (or under smpirun)\n"
    "Times every candidate algorithm of each collective and the MPI library's own routine\n"
    "on the communicator shapes this job can form, per message size, and writes the winners\n"
    "as wisdom for treeduce-gen --wisdom.\n"
    "  -o, --output FILE       the wisdom file (default: MACHINE.wisdom here)\n"
    "      --budget DURATION   stop after this long (90s, 10m, 1h, plain seconds); tables not\n"
    "                          measured completely are left out (the model covers them)\n"
    "      --min-bytes N       smallest size (default 8; K, M, G: powers of 1024)\n"
    "      --max-bytes N       largest size (default 64M)\n"
    "      --factor F          ratio of neighbouring sizes (default 2)\n"
    "      --colls LIST        collectives, comma-separated, measured in this order (default:\n"
    "                          allreduce,reduce_scatter_block,allgather,reduce,bcast)\n"
    "      --shapes LIST       only these shapes, NODESxPPN comma-separated (1x2,2x1)\n"
    "      --candidates [COLL=]SPEC  only these candidates (of COLL only, with COLL=): NAME\n"
    "                          keeps all of the algorithm's, NAME:PARAMS one, mpi the MPI\n"
    "                          library's routine; repeatable\n"
    "      --size-time SECONDS time spent per size of a table, candidates together (default\n"
    "                          0.2; less where a budget asks)\n"
    "      --passes N          times over each table's sizes, a few seconds apart; the winner\n"
    "                          is the candidate least behind the fastest in any pass (default 3;\n"
    "                          1 under SMPI, whose simulated times do not vary)\n"
    "      --verbose           every candidate's median time at every size, on stderr\n"
    "      --format FMT, --nodetype DESC, --latency TIME, --bandwidth BW, --alpha-r-ratio R\n"
    "                          read TOPOLOGY as treeduce-gen does (same defaults)\n"
    "  -h, --help / -V, --version\n"
    "Exit: 0 written; 1 usage; 2 TOPOLOGY unreadable or the ranks disagree (nothing\n"
    "measured); 3 the wisdom could not be written; 4 MPI failure.\n";

/* "64", "64K", "64KiB", "1M", "1G": bytes, whole doubles from 8 to 1 GiB. */
static int parse_bytes(const char *s, size_t *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    static const char *const suf[][2] = {{"", ""}, {"K", "KiB"}, {"M", "MiB"}, {"G", "GiB"}};
    for (int k = 0; k < 4; k++)
        if (end != s && !errno && (strcmp(end, suf[k][0]) == 0 || strcmp(end, suf[k][1]) == 0)) {
            v *= (double)((size_t)1 << (10 * k));
            if (!(v >= 8 && v <= (double)((size_t)1 << 30)) || fmod(v, 8) != 0)
                return -1;
            *out = (size_t)v;
            return 0;
        }
    return -1;
}

/* "90", "90s", "10m", "1.5h": seconds, more than 0. */
static int parse_duration(const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    double scale = !*end || strcmp(end, "s") == 0 ? 1
                   : strcmp(end, "m") == 0        ? 60
                   : strcmp(end, "h") == 0        ? 3600
                                                  : 0;
    if (end == s || errno || scale == 0 || !(v > 0) || !isfinite(v * scale))
        return -1;
    *out = v * scale;
    return 0;
}

static int coll_of(const char *name, size_t len)
{
    for (int c = 0; c < TRD_NCOLLS; c++)
        if (strlen(trd_coll_name(c)) == len && strncmp(trd_coll_name(c), name, len) == 0)
            return c;
    return -1;
}

/* The command line into a; 0, 1 for --help/--version (printed by rank 0),
 * or -1 with a message in err. */
int tune_parse_args(int argc, char **argv, args *a, int me, int *done, char *err, size_t errlen)
{
    *done = 0;
    enum {
        O_BUDGET = 256,
        O_MIN,
        O_MAX,
        O_FACTOR,
        O_COLLS,
        O_SHAPES,
        O_CANDS,
        O_SIZE_TIME,
        O_PASSES,
        O_FORMAT,
        O_NODETYPE,
        O_LATENCY,
        O_BANDWIDTH,
        O_ALPHA_R,
        O_VERBOSE
    };
    static const struct option lopts[] = {{"output", required_argument, NULL, 'o'},
                                          {"budget", required_argument, NULL, O_BUDGET},
                                          {"min-bytes", required_argument, NULL, O_MIN},
                                          {"max-bytes", required_argument, NULL, O_MAX},
                                          {"factor", required_argument, NULL, O_FACTOR},
                                          {"colls", required_argument, NULL, O_COLLS},
                                          {"shapes", required_argument, NULL, O_SHAPES},
                                          {"candidates", required_argument, NULL, O_CANDS},
                                          {"size-time", required_argument, NULL, O_SIZE_TIME},
                                          {"passes", required_argument, NULL, O_PASSES},
                                          {"format", required_argument, NULL, O_FORMAT},
                                          {"nodetype", required_argument, NULL, O_NODETYPE},
                                          {"latency", required_argument, NULL, O_LATENCY},
                                          {"bandwidth", required_argument, NULL, O_BANDWIDTH},
                                          {"alpha-r-ratio", required_argument, NULL, O_ALPHA_R},
                                          {"verbose", no_argument, NULL, O_VERBOSE},
                                          {"help", no_argument, NULL, 'h'},
                                          {"version", no_argument, NULL, 'V'},
                                          {NULL, 0, NULL, 0}};
    a->load = trd_load_opts_default(NULL, "treeduce-tune");
    a->o.min_bytes = 8;
    a->o.max_bytes = (size_t)64 << 20;
    a->o.factor = 2;
    a->o.size_s = 0.2;
    a->o.passes = TUNE_DEFAULT_PASSES;
    for (int k = 0; k < TRD_NCOLLS; k++)
        a->o.coll[a->o.ncolls++] = k;
    snprintf(a->colls, sizeof a->colls, "all");
    opterr = 0;
    int c;
    char *end;
    while ((c = getopt_long(argc, argv, ":o:hV", lopts, NULL)) != -1) {
        switch (c) {
        case 'o':
            a->output = optarg;
            break;
        case O_BUDGET:
            if (parse_duration(optarg, &a->o.budget_s) != 0)
                return snprintf(err, errlen,
                                "--budget '%s': expected a duration such as 90s, "
                                "10m, 1h or plain seconds",
                                optarg),
                       TRD_ERR_INPUT;
            break;
        case O_MIN:
        case O_MAX:
            if (parse_bytes(optarg, c == O_MIN ? &a->o.min_bytes : &a->o.max_bytes) != 0)
                return snprintf(err, errlen,
                                "--%s '%s': expected bytes, a multiple of 8 from 8 "
                                "to 1G (64K, 1M)",
                                c == O_MIN ? "min-bytes" : "max-bytes", optarg),
                       TRD_ERR_INPUT;
            break;
        case O_FACTOR:
            errno = 0;
            a->o.factor = strtod(optarg, &end);
            if (end == optarg || *end || errno || !(a->o.factor >= 1.05 && a->o.factor <= 1024))
                return snprintf(err, errlen, "--factor '%s': expected a number from 1.05 to 1024",
                                optarg),
                       TRD_ERR_INPUT;
            break;
        case O_SIZE_TIME:
            if (parse_duration(optarg, &a->o.size_s) != 0)
                return snprintf(err, errlen, "--size-time '%s': expected seconds", optarg),
                       TRD_ERR_INPUT;
            break;
        case O_PASSES: {
            char *stop;
            long v = strtol(optarg, &stop, 10);
            if (stop == optarg || *stop || v < 1 || v > TUNE_MAX_PASSES)
                return snprintf(err, errlen, "--passes '%s': expected a whole number from 1 to %d",
                                optarg, TUNE_MAX_PASSES),
                       TRD_ERR_INPUT;
            a->o.passes = (int)v;
            break;
        }
        case O_COLLS:
            snprintf(a->colls, sizeof a->colls, "%s", optarg);
            a->o.ncolls = 0;
            for (const char *p = optarg; *p;) {
                size_t n = strcspn(p, ",");
                int k = coll_of(p, n);
                if (k < 0)
                    return snprintf(err, errlen,
                                    "--colls: '%.*s' is not a collective (allreduce, "
                                    "reduce_scatter_block, allgather, reduce, bcast)",
                                    (int)n, p),
                           TRD_ERR_INPUT;
                int dup = 0;
                for (int i = 0; i < a->o.ncolls; i++)
                    dup |= a->o.coll[i] == k;
                if (!dup)
                    a->o.coll[a->o.ncolls++] = k;
                p += n + (p[n] == ',');
            }
            break;
        case O_SHAPES:
            snprintf(a->shapes, sizeof a->shapes, "%s", optarg);
            for (const char *p = optarg; *p;) {
                int nn, pp, used = 0;
                if (sscanf(p, "%dx%d%n", &nn, &pp, &used) != 2 || (p[used] && p[used] != ',') ||
                    nn < 1 || pp < 1 || nn * pp < 2 || a->o.nshapes == TUNE_MAX_SHAPES)
                    return snprintf(err, errlen,
                                    "--shapes '%s': expected NODESxPPN of 2 or more "
                                    "ranks, comma-separated (1x2,2x1)",
                                    optarg),
                           TRD_ERR_INPUT;
                a->o.shape[a->o.nshapes][0] = nn;
                a->o.shape[a->o.nshapes++][1] = pp;
                p += used + (p[used] == ',');
            }
            break;
        case O_CANDS: {
            const char *eq = strchr(optarg, '='), *spec = eq ? eq + 1 : optarg;
            int k = eq ? coll_of(optarg, (size_t)(eq - optarg)) : -1;
            if ((eq && k < 0) || !*spec || strlen(spec) >= TRD_CANDIDATE_MAX ||
                a->o.nspecs == TUNE_MAX_SPECS)
                return snprintf(err, errlen, "--candidates '%s': expected [COLL=]NAME[:PARAMS]",
                                optarg),
                       TRD_ERR_INPUT;
            int found = 0; /* "mpi" is one of every collective's */
            for (int cc = 0; cc < TRD_NCOLLS && !found; cc++)
                found = (k < 0 || k == cc) && trd_algo_parse(cc, spec, &(const char *){NULL});
            if (!found)
                return snprintf(err, errlen, "--candidates '%s': no such algorithm", optarg),
                       TRD_ERR_INPUT;
            a->o.spec[a->o.nspecs].coll = k;
            snprintf(a->o.spec[a->o.nspecs++].spec, TRD_CANDIDATE_MAX, "%s", spec);
            break;
        }
        case O_FORMAT:
            a->load.format = optarg;
            break;
        case O_NODETYPE:
            a->load.nodetype = optarg;
            break;
        case O_LATENCY:
            a->load.latency = optarg;
            break;
        case O_BANDWIDTH:
            a->load.bandwidth = optarg;
            break;
        case O_ALPHA_R:
            a->load.alpha_r_ratio = optarg;
            break;
        case O_VERBOSE:
            a->o.verbose = 1;
            break;
        case 'h':
            if (me == 0)
                fputs(tune_usage, stdout);
            *done = 1;
            return TRD_OK;
        case 'V':
            if (me == 0)
                printf("treeduce-tune %s\n", TRD_VERSION);
            *done = 1;
            return TRD_OK;
        case ':':
            return snprintf(err, errlen, "%s needs a value", argv[optind - 1]), TRD_ERR_INPUT;
        default:
            return snprintf(err, errlen, "unknown option '%s'", argv[optind - 1]), TRD_ERR_INPUT;
        }
    }
    if (optind + 1 != argc)
        return snprintf(err, errlen, "expected one TOPOLOGY argument"), TRD_ERR_INPUT;
    if (a->o.min_bytes > a->o.max_bytes)
        return snprintf(err, errlen, "--min-bytes is above --max-bytes"), TRD_ERR_INPUT;
    a->load.input = argv[optind];
    return TRD_OK;
}

int tune_before_mpi(int argc, char **argv)
{
#ifdef TRD_SMPI_INTERP
    if (sg_actor_self()) /* a rank of smpirun's simulation */
        return -1;
    static args a;
    char err[512];
    int done;
    if (tune_parse_args(argc, argv, &a, 0, &done, err, sizeof err) != TRD_OK) {
        fprintf(stderr, "treeduce-tune: %s\n\n%s", err, tune_usage);
        return 1;
    }
    if (!done)
        fprintf(stderr, "treeduce-tune: this is an SMPI build: run it under smpirun -platform "
                        "PLATFORM.xml -np P\n");
    return done ? 0 : 1;
#else
    (void)argc;
    (void)argv;
    return -1;
#endif
}

/* The options a measurement depends on, one a line, for the ranks to compare. */
void tune_canon(const args *a, char *buf, size_t len)
{
    int n = snprintf(buf, len,
                     "--min-bytes %zu\n--max-bytes %zu\n--factor %.17g\n--budget %.17g\n"
                     "--size-time %.17g\n--passes %d\n--colls %s\n--shapes %s\n",
                     a->o.min_bytes, a->o.max_bytes, a->o.factor, a->o.budget_s, a->o.size_s,
                     a->o.passes, a->colls, a->shapes);
    for (int i = 0; i < a->o.nspecs && n > 0 && (size_t)n < len; i++)
        n += snprintf(buf + n, len - (size_t)n, "--candidates %s%s%s\n",
                      a->o.spec[i].coll >= 0 ? trd_coll_name(a->o.spec[i].coll) : "",
                      a->o.spec[i].coll >= 0 ? "=" : "", a->o.spec[i].spec);
}

/* The first line where a and b differ, into the two buffers. */
void tune_first_diff(const char *a, const char *b, char *da, char *db, size_t len)
{
    while (*a || *b) {
        size_t na = strcspn(a, "\n"), nb = strcspn(b, "\n");
        if (na != nb || strncmp(a, b, na) != 0) {
            snprintf(da, len, "%.*s", (int)na, a);
            snprintf(db, len, "%.*s", (int)nb, b);
            return;
        }
        a += na + (a[na] == '\n');
        b += nb + (b[nb] == '\n');
    }
}

static const trd_topo_t *sort_topo;
static int cmp_name(const void *a, const void *b)
{
    return strcmp(trd_topo_node_name(*sort_topo, *(const int *)a),
                  trd_topo_node_name(*sort_topo, *(const int *)b));
}

int tune_build_machine(trd_topo_t t, const trd_machine_plan *p, built *b)
{
    int n = trd_topo_nnodes(t), nsh = p->nshapes ? p->nshapes : 1;
    b->names = calloc((size_t)n, sizeof *b->names);
    b->order = calloc((size_t)n, sizeof(int));
    b->cores = calloc((size_t)n, sizeof(int));
    b->packages = calloc((size_t)n, sizeof(int));
    b->choices = calloc((size_t)nsh * TRD_MAX_CHOICES, sizeof *b->choices);
    b->shapes = calloc((size_t)nsh, sizeof *b->shapes);
    if (!b->names || !b->order || !b->cores || !b->packages || !b->choices || !b->shapes)
        return TRD_ERR_NOMEM;
    for (int i = 0; i < n; i++) {
        b->names[i] = trd_topo_node_name(t, i);
        b->order[i] = i;
        b->cores[i] = trd_topo_nodetype_ncores(t, trd_topo_node_type(t, i));
        b->packages[i] = trd_topo_nodetype_npackages(t, trd_topo_node_type(t, i));
    }
    sort_topo = &t;
    qsort(b->order, (size_t)n, sizeof(int), cmp_name);
    if (p->nshapes == 0) { /* one node: the table is never consulted */
        b->choices[0] = (trd_size_choice){SIZE_MAX, "ring", ""};
        b->shapes[0] = (trd_shape_choice){n > 1 ? n : 2, p->ppn, b->choices, 1};
    }
    for (int s = 0; s < p->nshapes; s++) {
        const trd_shape_plan *sp = &p->shape[s];
        trd_size_choice *ch = b->choices + (size_t)s * TRD_MAX_CHOICES;
        for (int i = 0; i < sp->nchoices; i++)
            ch[i] = (trd_size_choice){sp->choice[i].below, sp->choice[i].alg->name,
                                      sp->choice[i].params};
        b->shapes[s] = (trd_shape_choice){sp->nnodes, sp->ppn, ch, sp->nchoices};
    }
    b->m = (trd_machine){.name = trd_topo_name(t),
                         .nnodes = n,
                         .node_names = b->names,
                         .name_order = b->order,
                         .node_cores = b->cores,
                         .node_packages = b->packages,
                         .nap_max_bytes_1node = p->nap_max_bytes_1node,
                         .shapes = b->shapes,
                         .nshapes = nsh};
    return 0;
}

void tune_free_machine(built *b)
{
    free(b->names);
    free(b->order);
    free(b->cores);
    free(b->packages);
    free(b->choices);
    free(b->shapes);
}
