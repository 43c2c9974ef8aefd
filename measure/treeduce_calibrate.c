/* treeduce-calibrate: measure the link costs of this machine, per level, and
 * write them into a topology file for treeduce-gen (measured wisdom).
 *
 * Levels: two cores of one package, two packages of one node, two nodes.
 * Nodes are the MPI_COMM_TYPE_SHARED groups; the package of a rank is the
 * hwloc package of the cores it is bound to.  A rank that is not bound (its
 * binding is the whole machine or spans packages) takes the package of the
 * CPU it runs on (hwloc_get_last_cpu_location) and is bound to that package
 * for the run, so that it cannot migrate to another one; this is reported.
 * For each level the first pair of ranks (in rank order) at that level is
 * measured; the others wait.
 *
 * Method:
 *  - Ping-pong, 8 B .. 4 MiB (powers of two): one sample is the time of a
 *    batch of round trips over 2x the batch size (half round trip); two
 *    warm-up batches, then the median of --reps samples.  Model
 *    T(m) = alpha + m beta [MPICH §3].  alpha is the least-squares intercept
 *    over 8 B .. 1 KiB; beta is the median over 256 KiB .. 4 MiB of
 *    (T(m) - alpha) / m (a least-squares slope there follows the one size
 *    that other load on the machine disturbed).  MPI switches protocol
 *    (eager -> rendezvous) in between, so one line over all sizes fits
 *    neither end; that line (least squares on relative error) is printed
 *    too, for comparison.  Bandwidth = 1/beta.
 *  - Messages in flight: k = 1, 2, 4, 8 messages of 8 B posted at once
 *    (MPI_Isend / MPI_Irecv, MPI_Waitall), then an 8 B reply; the reply's
 *    half round trip is subtracted.  Pipelined postal model [RM §3]:
 *    T(k) = alpha_p + k alpha_r + k m beta; alpha_p and alpha_r are the
 *    least-squares intercept and slope over k.  Where the fit is meaningful
 *    (alpha_p > 0 and alpha_r > 0), alpha_r, clamped to at most the measured
 *    latency, is written as the link class's alpha_r; alpha_p has no place in
 *    the file (link classes carry latency, bandwidth, injection, alpha_r):
 *    printed only.
 *  - Injection (other-node level, only with several ranks per node): every
 *    rank of the sending node sends 1 MiB messages to a rank of the receiving
 *    node at once; bytes over the slowest sender's time is the node's
 *    max-rate injection bandwidth R_N [NAP Eq. 3].  Median of the samples.
 *
 * Write-back (--write FILE) is measure/calib_edit.c; rank 0 reads and plans
 * it before measuring, so that a bad file costs no measurement.
 */
#include <hwloc.h>

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "calib_edit.h"
#include "load.h"

#ifndef TRD_VERSION
#define TRD_VERSION "0.1.0"
#endif

#define MIN_BYTES 8
#define MAX_BYTES (4 << 20)
#define NSIZES 20 /* 8 B .. 4 MiB */
#define MAX_SAMPLES 101
#define INJ_BYTES (1 << 20)

static const char *const level_name[CAL_NLEVELS] = {"same package", "other package", "other node"};
static const char *const level_needs[CAL_NLEVELS] = {"needs two ranks on one package",
                                                     "needs ranks on two packages of one node",
                                                     "needs ranks on two nodes"};

typedef struct rank_info {
    int node;    /* world rank of the node's first rank */
    int package; /* hwloc logical index of the package, 0 without packages */
    int bound;   /* 1 bound by the launcher, 0 bound here to its package */
    int cpu;     /* OS index of the PU it ran on */
    char host[MPI_MAX_PROCESSOR_NAME];
} rank_info;

typedef struct level_result {
    int a, b; /* the pair, -1 if none */
    double t[NSIZES];
    double alpha, beta;         /* split fit */
    double alpha_all, beta_all; /* one line, relative least squares */
    double tk[4];               /* k = 1, 2, 4, 8 */
    double alpha_p, alpha_r;
    double injection; /* B/s, 0: not measured */
    int inj_senders;
    char inj_note[256];
} level_result;

static int g_reps = 21;

static void usage(FILE *out)
{
    char formats[128]; /* the files of the readers' table that take costs (load.h) */
    trd_reader_write_back_list(formats, sizeof formats);
    fprintf(
        out,
        "usage: treeduce-calibrate [options]   (run under mpiexec, 2 or more ranks)\n"
        "Measures link costs per level (same package, other package, other node): ping-pong\n"
        "latency and bandwidth, messages in flight (alpha_p, alpha_r), node injection bandwidth.\n"
        "  -w, --write FILE       write the costs into FILE (%s) in place:\n"
        "                         the link classes of the levels measured, with a comment line\n"
        "                         (latency, bandwidth, injection, and alpha_r where its fit is\n"
        "                         meaningful; alpha_p is printed only)\n"
        "      --nodetype NAME    node type whose package/node links get the intra-node levels\n"
        "                         (default: the type of this host's node in FILE, or the only "
        "one)\n"
        "      --switch-link NAME link class that gets the other-node level (default: the one on\n"
        "                         the path between the two hosts, or the only switch link class)\n"
        "  -r, --reps N           samples per point, median taken (default 21)\n"
        "  -h, --help / -V, --version\n"
        "Bind ranks to place them (mpiexec.mpich -bind-to core); unbound ranks are bound to the\n"
        "package they run on.  Levels without a pair of ranks are not measured and not written.\n"
        "Exit: 0 ok; 1 usage; 2 FILE unreadable, not a topology or ambiguous (nothing measured);\n"
        "3 FILE could not be written (left untouched); 4 MPI or hwloc failure.\n",
        formats);
}

/* ---- placement ---------------------------------------------------------------- */

static int find_placement(rank_info *me, char *note, size_t notelen)
{
    hwloc_topology_t topo;
    if (hwloc_topology_init(&topo) != 0 || hwloc_topology_load(topo) != 0)
        return -1;
    hwloc_bitmap_t set = hwloc_bitmap_alloc(), cur = hwloc_bitmap_alloc();
    int npk = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PACKAGE);
    hwloc_const_bitmap_t all = hwloc_topology_get_allowed_cpuset(topo);
    hwloc_obj_t pkg = NULL;
    me->bound = 0;
    if (hwloc_get_cpubind(topo, set, HWLOC_CPUBIND_PROCESS) == 0 && !hwloc_bitmap_iszero(set) &&
        !hwloc_bitmap_isincluded(all, set)) {
        hwloc_obj_t o = hwloc_get_obj_covering_cpuset(topo, set);
        while (o && o->type != HWLOC_OBJ_PACKAGE)
            o = o->parent;
        if (o || npk <= 1) {
            me->bound = 1;
            pkg = o;
        }
    }
    me->cpu = -1;
    if (hwloc_get_last_cpu_location(topo, cur, HWLOC_CPUBIND_THREAD) == 0)
        me->cpu = hwloc_bitmap_first(cur);
    if (!me->bound) {
        hwloc_obj_t pu =
            me->cpu >= 0 ? hwloc_get_pu_obj_by_os_index(topo, (unsigned)me->cpu) : NULL;
        pkg = pu;
        while (pkg && pkg->type != HWLOC_OBJ_PACKAGE)
            pkg = pkg->parent;
        if (pkg && npk > 1) {
            if (hwloc_set_cpubind(topo, pkg->cpuset, HWLOC_CPUBIND_PROCESS) == 0)
                snprintf(note, notelen, "not bound: bound to package %u, where it ran (CPU %d)",
                         pkg->logical_index, me->cpu);
            else
                snprintf(note, notelen,
                         "not bound: package %u from the CPU it ran on (%d); "
                         "binding failed, it may migrate",
                         pkg->logical_index, me->cpu);
        } else
            snprintf(note, notelen, "not bound: package from the CPU it ran on (%d)", me->cpu);
    } else
        snprintf(note, notelen, "bound (running on CPU %d)", me->cpu);
    me->package = pkg ? (int)pkg->logical_index : 0;
    hwloc_bitmap_free(set);
    hwloc_bitmap_free(cur);
    hwloc_topology_destroy(topo);
    return 0;
}

/* ---- statistics --------------------------------------------------------------- */

static int dcmp(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return a < b ? -1 : a > b;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, dcmp);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Weighted least squares y = c0 + c1 x. */
static void fit(const double *x, const double *y, const double *w, int n, double *c0, double *c1)
{
    double sw = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
    for (int i = 0; i < n; i++) {
        double wi = w ? w[i] : 1;
        sw += wi;
        sx += wi * x[i];
        sy += wi * y[i];
        sxx += wi * x[i] * x[i];
        sxy += wi * x[i] * y[i];
    }
    double den = sw * sxx - sx * sx;
    *c1 = den != 0 ? (sw * sxy - sx * sy) / den : 0;
    *c0 = (sy - *c1 * sx) / sw;
}

/* ---- measurements (every rank calls; a and b work, the others wait) ---------- */

/* MPICH's prototypes give MPI_Waitall an access attribute that GCC 12 checks
 * against MPI_STATUSES_IGNORE, a sentinel pointer, and warns; the call is
 * correct (as runtime/comm.c trd_waitall). */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstringop-overflow"
static void waitall(int n, MPI_Request *reqs)
{
    MPI_Waitall(n, reqs, MPI_STATUSES_IGNORE);
}
#pragma GCC diagnostic pop

static int batch_iters(size_t m)
{
    size_t it = (8u << 20) / m; /* about 8 MiB per batch */
    return it < 2 ? 2 : it > 200 ? 200 : (int)it;
}

/* Median half round trip of m bytes between a and b, on a (0 elsewhere). */
static double pingpong(int me, int a, int b, char *buf, size_t m)
{
    double s[MAX_SAMPLES];
    int iters = batch_iters(m), n = 0;
    if (me != a && me != b)
        return 0;
    int peer = me == a ? b : a;
    for (int r = -2; r < g_reps; r++) {
        double t0 = MPI_Wtime();
        for (int i = 0; i < iters; i++) {
            if (me == a) {
                MPI_Send(buf, (int)m, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
                MPI_Recv(buf, (int)m, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            } else {
                MPI_Recv(buf, (int)m, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Send(buf, (int)m, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
            }
        }
        if (r >= 0)
            s[n++] = (MPI_Wtime() - t0) / (2.0 * iters);
    }
    return me == a ? median(s, n) : 0;
}

/* Median time of k 8-byte messages in flight a -> b plus an 8 B reply, on a. */
static double inflight(int me, int a, int b, char *buf, int k)
{
    double s[MAX_SAMPLES];
    MPI_Request req[8];
    const int iters = 100;
    int n = 0;
    if (me != a && me != b)
        return 0;
    int peer = me == a ? b : a;
    for (int r = -2; r < g_reps; r++) {
        double t0 = MPI_Wtime();
        for (int i = 0; i < iters; i++) {
            for (int j = 0; j < k; j++) {
                if (me == a)
                    MPI_Isend(buf + 64 * j, MIN_BYTES, MPI_BYTE, peer, 2, MPI_COMM_WORLD, &req[j]);
                else
                    MPI_Irecv(buf + 64 * j, MIN_BYTES, MPI_BYTE, peer, 2, MPI_COMM_WORLD, &req[j]);
            }
            waitall(k, req);
            if (me == a)
                MPI_Recv(buf + 1024, MIN_BYTES, MPI_BYTE, peer, 3, MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE);
            else
                MPI_Send(buf + 1024, MIN_BYTES, MPI_BYTE, peer, 3, MPI_COMM_WORLD);
        }
        if (r >= 0)
            s[n++] = (MPI_Wtime() - t0) / iters;
    }
    return me == a ? median(s, n) : 0;
}

/* Max-rate injection from node na into node nb with every rank of na sending
 * at once; the result (B/s) on every rank, 0 when na has one rank. */
static double injection(int me, int np, const rank_info *ri, int na, int nb, char *buf, char **rbuf,
                        int *senders)
{
    int sa = 0, snb = 0, target = -1;
    int srcs[256], nsrc = 0;
    for (int r = 0; r < np; r++) {
        sa += ri[r].node == na;
        snb += ri[r].node == nb;
    }
    *senders = sa;
    if (sa < 2 || snb < 1)
        return 0;
    /* sender i -> the (i mod snb)-th rank of nb */
    int i = 0;
    for (int r = 0; r < np; r++) {
        if (ri[r].node != na)
            continue;
        int k = i++ % snb, t = -1;
        for (int q = 0; q < np && k >= 0; q++)
            if (ri[q].node == nb && k-- == 0)
                t = q;
        if (r == me)
            target = t;
        if (t == me && nsrc < 256)
            srcs[nsrc++] = r;
    }
    const int iters = 4;
    double s[MAX_SAMPLES];
    int n = 0;
    MPI_Request req[256];
    for (int r = -1; r < g_reps; r++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime(), el = 0;
        if (target >= 0) {
            for (int it = 0; it < iters; it++)
                MPI_Send(buf, INJ_BYTES, MPI_BYTE, target, 4, MPI_COMM_WORLD);
            MPI_Recv(NULL, 0, MPI_BYTE, target, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            el = MPI_Wtime() - t0;
        }
        if (nsrc > 0) {
            for (int it = 0; it < iters; it++) {
                for (int j = 0; j < nsrc; j++)
                    MPI_Irecv(rbuf[j], INJ_BYTES, MPI_BYTE, srcs[j], 4, MPI_COMM_WORLD, &req[j]);
                waitall(nsrc, req);
            }
            for (int j = 0; j < nsrc; j++)
                MPI_Send(NULL, 0, MPI_BYTE, srcs[j], 5, MPI_COMM_WORLD);
        }
        double mx;
        MPI_Allreduce(&el, &mx, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        if (r >= 0)
            s[n++] = (double)sa * iters * INJ_BYTES / mx;
    }
    return median(s, n);
}

static void measure_level(int me, int np, const rank_info *ri, level_result *res, char *buf,
                          char **rbuf, int level)
{
    int a = res->a, b = res->b;
    size_t m = MIN_BYTES;
    for (int i = 0; i < NSIZES; i++, m *= 2) {
        res->t[i] = pingpong(me, a, b, buf, m);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    static const int ks[4] = {1, 2, 4, 8};
    for (int i = 0; i < 4; i++) {
        res->tk[i] = inflight(me, a, b, buf, ks[i]);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    /* results live on a; bring them to rank 0 */
    if (a != 0) {
        if (me == a) {
            MPI_Send(res->t, NSIZES, MPI_DOUBLE, 0, 6, MPI_COMM_WORLD);
            MPI_Send(res->tk, 4, MPI_DOUBLE, 0, 6, MPI_COMM_WORLD);
        } else if (me == 0) {
            MPI_Recv(res->t, NSIZES, MPI_DOUBLE, a, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Recv(res->tk, 4, MPI_DOUBLE, a, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
    }
    res->injection = 0;
    res->inj_note[0] = '\0';
    if (level == CAL_NETWORK) {
        res->injection =
            injection(me, np, ri, ri[a].node, ri[b].node, buf, rbuf, &res->inj_senders);
        if (res->injection == 0)
            snprintf(res->inj_note, sizeof res->inj_note,
                     "not measured (needs several ranks on node '%.160s')", ri[a].host);
    } else
        snprintf(res->inj_note, sizeof res->inj_note, "measured at the other-node level only");
    if (me != 0)
        return;

    double x[NSIZES], y[NSIZES], w[NSIZES], c0, c1;
    int n = 0;
    m = MIN_BYTES;
    for (int i = 0; i < NSIZES; i++, m *= 2)
        if (m <= 1024) {
            x[n] = (double)m;
            y[n++] = res->t[i];
        }
    fit(x, y, NULL, n, &c0, &c1);
    res->alpha = c0 > 0 ? c0 : res->t[0];
    /* beta: median of (T(m) - alpha) / m over the large sizes, robust to the odd
     * sample disturbed by other load (a least-squares slope is not) */
    n = 0;
    m = MIN_BYTES;
    for (int i = 0; i < NSIZES; i++, m *= 2)
        if (m >= (256u << 10) && res->t[i] > res->alpha)
            y[n++] = (res->t[i] - res->alpha) / (double)m;
    res->beta = n > 0 ? median(y, n) : res->t[NSIZES - 1] / (double)MAX_BYTES;
    m = MIN_BYTES;
    for (int i = 0; i < NSIZES; i++, m *= 2) {
        x[i] = (double)m;
        y[i] = res->t[i];
        w[i] = 1.0 / (res->t[i] * res->t[i]);
    }
    fit(x, y, w, NSIZES, &res->alpha_all, &res->beta_all);
    /* T(k) = alpha_p + k alpha_r + k m beta, after the reply's half round trip */
    double kx[4], ky[4];
    for (int i = 0; i < 4; i++) {
        kx[i] = ks[i];
        ky[i] = res->tk[i] - res->t[0] - ks[i] * MIN_BYTES * res->beta;
        res->tk[i] -= res->t[0];
    }
    fit(kx, ky, NULL, 4, &res->alpha_p, &res->alpha_r);
}

/* ---- report -------------------------------------------------------------------- */

static const char *fmt_t(double s, char *buf)
{
    cal_format_time(s, buf, 32);
    return buf;
}

static const char *fmt_b(double b, char *buf)
{
    cal_format_bandwidth(b, buf, 32);
    return buf;
}

/* The pipelined postal fit [RM §3] means something only where messages in
 * flight overlap: alpha_p > 0 and alpha_r > 0. */
static int postal_fit_ok(const level_result *res)
{
    return res->alpha_p > 0 && res->alpha_r > 0 && isfinite(res->alpha_p) && isfinite(res->alpha_r);
}

static void print_level(int l, const level_result *res, const rank_info *ri, const cal_target *tg)
{
    char b1[32], b2[32], b3[32];
    printf("\n== %s: ranks %d and %d (host %s, package %d / host %s, package %d)\n", level_name[l],
           res->a, res->b, ri[res->a].host, ri[res->a].package, ri[res->b].host,
           ri[res->b].package);
    if (tg && tg->wanted)
        printf("   writes link class '%s'%s (%s)\n", tg->link, tg->create ? " (new)" : "", tg->why);
    printf("   %10s  %12s  %12s  %12s\n", "bytes", "half RTT", "bandwidth", "model");
    size_t m = MIN_BYTES;
    for (int i = 0; i < NSIZES; i++, m *= 2)
        printf("   %10zu  %12s  %12s  %12s\n", m, fmt_t(res->t[i], b1),
               fmt_b((double)m / res->t[i], b2), fmt_t(res->alpha + (double)m * res->beta, b3));
    printf("   alpha %s (least squares over 8 B..1 KiB), bandwidth %s (1/beta, median over "
           "256 KiB..4 MiB) [MPICH §3]\n",
           fmt_t(res->alpha, b1), fmt_b(1.0 / res->beta, b2));
    printf("   one line over all sizes (relative least squares): alpha %s, bandwidth %s\n",
           res->alpha_all > 0 ? fmt_t(res->alpha_all, b1) : "<= 0",
           res->beta_all > 0 ? fmt_b(1.0 / res->beta_all, b2) : "inf");
    printf("   in flight, 8 B each: k=1 %s  k=2 %s  k=4 %s  k=8 %s\n", fmt_t(res->tk[0], b1),
           fmt_t(res->tk[1], b2), fmt_t(res->tk[2], b3), fmt_t(res->tk[3], (char[32]){0}));
    if (postal_fit_ok(res))
        printf("   pipelined postal model [RM §3]: alpha_p %s, alpha_r %s (overlap ratio "
               "%.1f)%s\n",
               fmt_t(res->alpha_p, b1), fmt_t(res->alpha_r, b2), res->alpha_p / res->alpha_r,
               res->alpha_r > res->alpha ? "; alpha_r above the latency: clamped to it" : "");
    else
        printf("   pipelined postal model [RM §3]: alpha_p %.3g s, alpha_r %.3g s (no overlap "
               "seen: fit not meaningful)\n",
               res->alpha_p, res->alpha_r);
    if (res->injection > 0)
        printf("   injection [NAP Eq. 3]: %s with %d ranks of node '%s' sending at once\n",
               fmt_b(res->injection, b1), res->inj_senders, ri[res->a].host);
    else
        printf("   injection: %s\n", res->inj_note);
}

/* ---- main ----------------------------------------------------------------------- */

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int me, np;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);

    static const struct option opts[] = {{"write", required_argument, NULL, 'w'},
                                         {"nodetype", required_argument, NULL, 'n'},
                                         {"switch-link", required_argument, NULL, 's'},
                                         {"reps", required_argument, NULL, 'r'},
                                         {"help", no_argument, NULL, 'h'},
                                         {"version", no_argument, NULL, 'V'},
                                         {NULL, 0, NULL, 0}};
    const char *file = NULL, *nodetype = NULL, *switch_link = NULL;
    int c, code = -1;
    opterr = me == 0;
    while (code < 0 && (c = getopt_long(argc, argv, "w:r:hV", opts, NULL)) != -1) {
        switch (c) {
        case 'w':
            file = optarg;
            break;
        case 'n':
            nodetype = optarg;
            break;
        case 's':
            switch_link = optarg;
            break;
        case 'r': {
            char *end;
            long v = strtol(optarg, &end, 10);
            if (*end || v < 1 || v > MAX_SAMPLES) {
                if (me == 0)
                    fprintf(stderr, "treeduce-calibrate: --reps '%s': expected 1..%d\n", optarg,
                            MAX_SAMPLES);
                code = CAL_EXIT_USAGE;
            }
            g_reps = (int)v;
            break;
        }
        case 'h':
            if (me == 0)
                usage(stdout);
            code = CAL_EXIT_OK;
            break;
        case 'V':
            if (me == 0)
                printf("treeduce-calibrate %s\n", TRD_VERSION);
            code = CAL_EXIT_OK;
            break;
        default:
            if (me == 0)
                usage(stderr);
            code = CAL_EXIT_USAGE;
        }
    }
    if (code < 0 && optind < argc) {
        if (me == 0)
            fprintf(stderr, "treeduce-calibrate: unexpected argument '%s' (try --help)\n",
                    argv[optind]);
        code = CAL_EXIT_USAGE;
    }
    if (code >= 0) {
        MPI_Finalize();
        return code;
    }

    /* where every rank is */
    rank_info mine, *ri = calloc((size_t)np, sizeof *ri);
    char note[200] = "";
    memset(&mine, 0, sizeof mine);
    int len = 0, ok = 1;
    MPI_Get_processor_name(mine.host, &len);
    MPI_Comm nodecomm;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, me, MPI_INFO_NULL, &nodecomm);
    MPI_Allreduce(&me, &mine.node, 1, MPI_INT, MPI_MIN, nodecomm);
    MPI_Comm_free(&nodecomm);
    if (find_placement(&mine, note, sizeof note) != 0)
        ok = 0;
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!ok || !ri) {
        if (me == 0)
            fprintf(stderr, "treeduce-calibrate: hwloc cannot read this machine's topology\n");
        MPI_Finalize();
        return CAL_EXIT_MEASURE;
    }
    MPI_Allgather(&mine, (int)sizeof mine, MPI_BYTE, ri, (int)sizeof mine, MPI_BYTE,
                  MPI_COMM_WORLD);
    char *notes = me == 0 ? malloc((size_t)np * sizeof note) : NULL;
    MPI_Gather(note, (int)sizeof note, MPI_CHAR, notes, (int)sizeof note, MPI_CHAR, 0,
               MPI_COMM_WORLD);

    /* the first pair of each level */
    level_result res[CAL_NLEVELS];
    int want[CAL_NLEVELS];
    for (int l = 0; l < CAL_NLEVELS; l++) {
        res[l].a = res[l].b = -1;
        for (int i = 0; i < np && res[l].a < 0; i++)
            for (int j = i + 1; j < np && res[l].a < 0; j++) {
                int same_node = ri[i].node == ri[j].node, same_pkg = ri[i].package == ri[j].package;
                if ((l == CAL_PACKAGE && same_node && same_pkg) ||
                    (l == CAL_NODE && same_node && !same_pkg) || (l == CAL_NETWORK && !same_node)) {
                    res[l].a = i;
                    res[l].b = j;
                }
            }
        want[l] = res[l].a >= 0;
    }

    /* read and plan the write-back before measuring */
    cal_file *cf = NULL;
    cal_target tg[CAL_NLEVELS];
    memset(tg, 0, sizeof tg);
    char err[8192];
    code = -1;
    if (me == 0 && file) {
        const char *h1[CAL_NLEVELS], *h2[CAL_NLEVELS];
        for (int l = 0; l < CAL_NLEVELS; l++) {
            h1[l] = want[l] ? ri[res[l].a].host : NULL;
            h2[l] = want[l] ? ri[res[l].b].host : NULL;
        }
        if (cal_open(&cf, file, err, sizeof err) != TRD_OK ||
            cal_plan(cf, want, h1, h2, nodetype, switch_link, tg, err, sizeof err) != TRD_OK) {
            fprintf(stderr, "treeduce-calibrate: %s\n", err);
            code = CAL_EXIT_INPUT;
        }
    }
    MPI_Bcast(&code, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (code >= 0) {
        cal_close(cf);
        MPI_Finalize();
        return code;
    }

    if (me == 0) {
        printf("treeduce-calibrate %s: %d ranks, %d samples per point (median), 2 warm-up\n",
               TRD_VERSION, np, g_reps);
        for (int r = 0; r < np; r++)
            printf("  rank %d: host %s, package %d, %s\n", r, ri[r].host, ri[r].package,
                   notes + (size_t)r * sizeof note);
        fflush(stdout);
    }

    char *buf = malloc(MAX_BYTES);
    char *rbuf[256] = {NULL};
    int nrb = np < 256 ? np : 256;
    int mem_ok = buf != NULL;
    if (want[CAL_NETWORK])
        for (int i = 0; i < nrb; i++)
            mem_ok &= (rbuf[i] = malloc(INJ_BYTES)) != NULL;
    MPI_Allreduce(MPI_IN_PLACE, &mem_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!mem_ok) {
        if (me == 0)
            fprintf(stderr, "treeduce-calibrate: out of memory\n");
        MPI_Finalize();
        return CAL_EXIT_MEASURE;
    }
    memset(buf, 1, MAX_BYTES);

    double t0 = MPI_Wtime();
    cal_values vals[CAL_NLEVELS];
    memset(vals, 0, sizeof vals);
    for (int l = 0; l < CAL_NLEVELS; l++) {
        if (!want[l]) {
            if (me == 0)
                printf("\n== %s: not measured (%s)%s\n", level_name[l], level_needs[l],
                       file ? "; left unchanged in the file" : "");
            continue;
        }
        measure_level(me, np, ri, &res[l], buf, rbuf, l);
        if (me == 0) {
            print_level(l, &res[l], ri, file ? &tg[l] : NULL);
            fflush(stdout);
            vals[l].measured = 1;
            vals[l].latency_s = res[l].alpha;
            vals[l].bandwidth_Bps = 1.0 / res[l].beta;
            vals[l].injection_Bps = res[l].injection;
            /* alpha_r only from a meaningful fit, never above the latency */
            vals[l].alpha_r_s = postal_fit_ok(&res[l]) ? fmin(res[l].alpha_r, res[l].alpha) : 0;
        }
    }
    if (me == 0)
        printf("\nmeasured in %.1f s\n", MPI_Wtime() - t0);

    code = CAL_EXIT_OK;
    if (me == 0 && file) {
        char date[64], summary[2048];
        time_t now = time(NULL);
        strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", gmtime(&now));
        int written;
        int rc =
            cal_write(cf, tg, vals, date, np, summary, sizeof summary, &written, err, sizeof err);
        if (rc == TRD_OK && written)
            printf("wrote %s:\n%s", file, summary);
        else if (rc == TRD_OK)
            printf("%s\n", err);
        else {
            fprintf(stderr, "treeduce-calibrate: %s\n", err);
            code = CAL_EXIT_WRITE;
        }
    }
    cal_close(cf);
    MPI_Bcast(&code, 1, MPI_INT, 0, MPI_COMM_WORLD);
    for (int i = 0; i < nrb; i++)
        free(rbuf[i]);
    free(buf);
    free(notes);
    free(ri);
    MPI_Finalize();
    return code;
}
