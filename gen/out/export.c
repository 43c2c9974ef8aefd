/* Export of the planned MPI_Allreduce selection as MPICH and Open MPI tuning
 * files (see export.h for the formats' sources).
 *
 * Algorithm mapping: every allreduce descriptor of the registry (algo.h)
 * names the nearest MPICH 4.x CSEL container (trd_algo.mpich) and Open MPI
 * coll_tuned_allreduce_algorithm (trd_algo.ompi): the node-aware ones map to
 * smp or recursive doubling, the rings to reduce_scatter_allgather / 4 ring,
 * Rabenseifner's and the FLEX composite to reduce_scatter_allgather /
 * 6 rabenseifner, recursive doubling and multiplying to recursive_doubling.
 *
 * MPICH: only recursive_doubling, reduce_scatter_allgather and smp are
 * accepted by every 4.x release (MPICH 4.0.2's container parser knows no
 * MPIR_Allreduce_intra_ring or _recexch, and an unknown name is an assertion
 * in MPII_Create_container); reduce_scatter_allgather is the
 * bandwidth-optimal one of them (2(p-1)/p n bytes like a ring).  The
 * algorithms' restrictions (coll_algorithms.txt: smp needs a commutative op
 * and a hierarchical "parent" communicator, reduce_scatter_allgather a
 * builtin op and count >= pof2) are not checked by CSEL selection, so the
 * file guards them itself and falls back to recursive doubling, as MPICH's
 * own generic.json does.  Non-commutative operations run recursive doubling,
 * which keeps rank order (treeduce does the same).
 *
 * Open MPI: ids from coll_tuned_allreduce_decision.c (enum trd_ompi_allreduce,
 * algo.h); only recursive_doubling, ring and rabenseifner are used.
 * coll/tuned has no node-aware allreduce, so the node-aware small-message
 * algorithms map to recursive doubling.
 *
 * Communicator shapes: treeduce plans nodes x ranks-per-node shapes; the
 * libraries select by communicator size (ranks).  Shapes are grouped by rank
 * count.  MPICH can tell shapes of one rank count apart by their average
 * ranks per node (comm_avg_ppn<=K: size <= K x nodes, hierarchical
 * communicators only), so every planned shape gets its own ranges there
 * (the one with the most ranks per node under "comm_hierarchy=any", an "=any"
 * key MPICH 4.0 accepts; it knows no "comm_avg_ppn=any").
 * Open MPI cannot, and where the placement is unknown (Open MPI; MPICH's
 * fallback branch) the shape with the most ranks per node is used: ranks
 * packed onto as few nodes as possible, the block placement mpiexec and
 * srun give a job or a contiguous sub-communicator of that size.  A
 * communicator whose rank count was not planned takes the largest planned
 * count below it (the smallest if none is), like the runtime's
 * trd_shape_pick and Open MPI's own lookup.
 *
 * One node: treeduce uses shared memory; the nearest the libraries have is
 * treeduce's own choice without shared memory: NAP (recursive doubling on
 * one node) below nap_max_bytes_1node, ring from there.  A one-node machine
 * (no planned shapes) gets that as its only rule; on several nodes MPICH
 * applies it to communicators inside one node (comm_size=node_comm_size). */
#include "export.h"
#include "emit.h"

#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ---- mapping ------------------------------------------------------------------ */

enum trd_export_mpich_alg trd_export_mpich_alg(const trd_algo *a)
{
    if (a && a->mpich && !strcmp(a->mpich, "reduce_scatter_allgather"))
        return TRD_MPICH_RSA;
    if (a && a->mpich && !strcmp(a->mpich, "smp"))
        return TRD_MPICH_SMP;
    return TRD_MPICH_RD;
}

const char *trd_export_mpich_name(enum trd_export_mpich_alg a)
{
    switch (a) {
    case TRD_MPICH_RSA:
        return "MPIR_Allreduce_intra_reduce_scatter_allgather";
    case TRD_MPICH_SMP:
        return "MPIR_Allreduce_intra_smp";
    default:
        return "MPIR_Allreduce_intra_recursive_doubling";
    }
}

int trd_export_ompi_alg(const trd_algo *a)
{
    return a && (a->ompi == TRD_OMPI_RECURSIVE_DOUBLING || a->ompi == TRD_OMPI_RING ||
                 a->ompi == TRD_OMPI_RABENSEIFNER)
               ? (int)a->ompi
               : TRD_OMPI_RECURSIVE_DOUBLING;
}

/* ---- the shapes as the export sees them ----------------------------------------- */

typedef struct {
    int nnodes, ppn, nchoices;
    const trd_choice *choice;
} shape_view;

typedef struct {
    int nshapes;
    shape_view *s;     /* sorted by ranks, then ranks per node */
    trd_choice one[2]; /* the one-node rule */
    int none;
} shapes;

static int by_ranks_ppn(const void *a, const void *b)
{
    const shape_view *x = a, *y = b;
    long rx = (long)x->nnodes * x->ppn, ry = (long)y->nnodes * y->ppn;
    if (rx != ry)
        return rx < ry ? -1 : 1;
    return (x->ppn > y->ppn) - (x->ppn < y->ppn);
}

/* The planned shapes of p (the whole machine's choice[] if p has several
 * nodes but no shape list), and the one-node rule.  TRD_OK or TRD_ERR_NOMEM. */
static int shapes_of(const trd_machine_plan *p, shapes *sh)
{
    int n = p->nshapes > 0 ? p->nshapes : p->nnodes > 1 ? 1 : 0;
    sh->nshapes = n;
    sh->s = calloc(n ? (size_t)n : 1, sizeof *sh->s);
    if (!sh->s)
        return TRD_ERR_NOMEM;
    for (int i = 0; i < p->nshapes; i++)
        sh->s[i] = (shape_view){p->shape[i].nnodes, p->shape[i].ppn, p->shape[i].nchoices,
                                p->shape[i].choice};
    if (p->nshapes <= 0 && n == 1)
        sh->s[0] = (shape_view){p->nnodes, p->ppn, p->nchoices, p->choice};
    qsort(sh->s, (size_t)n, sizeof *sh->s, by_ranks_ppn);
    /* NAP on one node is recursive doubling among its ranks */
    const trd_algo *rd = trd_algo_find(TRD_COLL_ALLREDUCE, "rd", 2);
    const trd_algo *ring = trd_algo_find(TRD_COLL_ALLREDUCE, "ring", 4);
    memset(sh->one, 0, sizeof sh->one);
    sh->none = 0;
    int split = p->nap_max_bytes_1node > 0 && p->nap_max_bytes_1node != SIZE_MAX;
    if (split)
        sh->one[sh->none++] = (trd_choice){.below = p->nap_max_bytes_1node, .alg = rd};
    sh->one[sh->none++] = (trd_choice){.below = SIZE_MAX, .alg = split ? ring : rd};
    return TRD_OK;
}

static long ranks(const shape_view *v)
{
    return (long)v->nnodes * v->ppn;
}

/* ---- growing strings -------------------------------------------------------------- */

typedef struct {
    char *s;
    size_t len, cap;
    int oom;
} sbuf;

static void sb_printf(sbuf *b, const char *fmt, ...)
{
    va_list ap;
    if (b->oom)
        return;
    for (;;) {
        va_start(ap, fmt);
        int n = vsnprintf(b->s ? b->s + b->len : NULL, b->s ? b->cap - b->len : 0, fmt, ap);
        va_end(ap);
        if (n < 0) {
            b->oom = 1;
            return;
        }
        if (b->s && b->len + (size_t)n < b->cap) {
            b->len += (size_t)n;
            return;
        }
        size_t cap = b->cap ? b->cap : 4096;
        while (cap <= b->len + (size_t)n)
            cap *= 2;
        char *s = realloc(b->s, cap);
        if (!s) {
            b->oom = 1;
            return;
        }
        b->s = s;
        b->cap = cap;
    }
}

/* ---- MPICH ------------------------------------------------------------------------ */

/* Ranges of choice[0..n) merged where the mapped MPICH algorithm repeats:
 * starts of the merged ranges' ends (below) and algorithms into out. */
typedef struct {
    size_t below;
    int alg; /* mapped (MPICH enum or Open MPI id) */
    const trd_algo *model;
} merged;

static int merge(const trd_choice *c, int n, int ompi, merged *out)
{
    int m = 0;
    for (int i = 0; i < n; i++) {
        int a = ompi ? trd_export_ompi_alg(c[i].alg) : (int)trd_export_mpich_alg(c[i].alg);
        size_t below = i == n - 1 ? SIZE_MAX : c[i].below;
        if (m > 0 && out[m - 1].alg == a)
            out[m - 1].below = below;
        else
            out[m++] = (merged){below, a, c[i].alg};
    }
    return m;
}

static void csel_leaf(sbuf *b, enum trd_export_mpich_alg a)
{
    const char *rd = trd_export_mpich_name(TRD_MPICH_RD);
    if (a == TRD_MPICH_RSA)
        sb_printf(
            b,
            "\"is_op_built_in=yes\":{\"count<pow2\":{\"algorithm=%s\":{}},"
            "\"count=any\":{\"algorithm=%s\":{}}},\"is_op_built_in=no\":{\"algorithm=%s\":{}}",
            rd, trd_export_mpich_name(a), rd);
    else if (a == TRD_MPICH_SMP)
        sb_printf(b,
                  "\"comm_hierarchy=parent\":{\"algorithm=%s\":{}},"
                  "\"comm_hierarchy=any\":{\"algorithm=%s\":{}}",
                  trd_export_mpich_name(a), rd);
    else
        sb_printf(b, "\"algorithm=%s\":{}", rd);
}

/* The avg_msg_size chain for one shape.  MPICH reads thresholds with atoi()
 * into an int, so a range ending above INT_MAX bytes becomes the last
 * ("=any") one and later ranges are dropped. */
static void csel_sizes(sbuf *b, const trd_choice *c, int n)
{
    merged m[TRD_MAX_CHOICES];
    int nm = merge(c, n, 0, m);
    for (int i = 0; i < nm; i++) {
        int last = i == nm - 1 || m[i].below - 1 > (size_t)INT_MAX;
        if (last)
            sb_printf(b, "\"avg_msg_size=any\":{");
        else
            sb_printf(b, "\"avg_msg_size<=%zu\":{", m[i].below - 1);
        csel_leaf(b, (enum trd_export_mpich_alg)m[i].alg);
        sb_printf(b, "}%s", last ? "" : ",");
        if (last)
            break;
    }
}

/* The fixed choices for every other collective, in MPICH's own key order
 * (all names exist in MPICH 4.0.2 and in later 4.x; MPIR_Barrier_intra_
 * dissemination was renamed k_dissemination, so barrier goes through the
 * nonblocking one).  Compact JSON, indented by csel_pretty(). */
/* a table of JSON texts, one collective per entry, kept as written */
// clang-format off
#define ALG(x) "\"algorithm=MPIR_" x "\":{}"
#define INTRA_INTER(intra, inter) "{\"comm_type=intra\":{" intra "},\"comm_type=inter\":{" inter "}}"
static const char *const csel_others[][2] = {
    {"bcast", INTRA_INTER("\"avg_msg_size<=12287\":{" ALG("Bcast_intra_binomial") "},"
                          "\"avg_msg_size=any\":{\"comm_size<=7\":{" ALG("Bcast_intra_binomial") "},"
                          "\"comm_size=any\":{" ALG("Bcast_intra_scatter_ring_allgather") "}}",
                          ALG("Bcast_inter_remote_send_local_bcast"))},
    {"allgather", INTRA_INTER("\"total_msg_size<=81919\":{" ALG("Allgather_intra_brucks") "},"
                              "\"total_msg_size=any\":{" ALG("Allgather_intra_ring") "}",
                              ALG("Allgather_inter_local_gather_remote_bcast"))},
    {"allgatherv", INTRA_INTER("\"total_msg_size<=81919\":{" ALG("Allgatherv_intra_brucks") "},"
                               "\"total_msg_size=any\":{" ALG("Allgatherv_intra_ring") "}",
                               ALG("Allgatherv_inter_remote_gather_local_bcast"))},
    {"reduce", INTRA_INTER("\"avg_msg_size<=2048\":{" ALG("Reduce_intra_binomial") "},"
                           "\"avg_msg_size=any\":{\"is_op_built_in=yes\":{\"count<pow2\":{"
                           ALG("Reduce_intra_binomial") "},\"count=any\":{"
                           ALG("Reduce_intra_reduce_scatter_gather") "}},\"is_op_built_in=no\":{"
                           ALG("Reduce_intra_binomial") "}}",
                           ALG("Reduce_inter_local_reduce_remote_send"))},
    {"reduce_scatter",
     INTRA_INTER("\"is_commutative=yes\":{\"total_msg_size<=524287\":{"
                 ALG("Reduce_scatter_intra_recursive_halving") "},\"total_msg_size=any\":{"
                 ALG("Reduce_scatter_intra_pairwise") "}},\"is_commutative=no\":{"
                 ALG("Reduce_scatter_intra_recursive_doubling") "}",
                 ALG("Reduce_scatter_inter_remote_reduce_local_scatter"))},
    {"reduce_scatter_block",
     INTRA_INTER("\"is_commutative=yes\":{\"total_msg_size<=524287\":{"
                 ALG("Reduce_scatter_block_intra_recursive_halving") "},\"total_msg_size=any\":{"
                 ALG("Reduce_scatter_block_intra_pairwise") "}},\"is_commutative=no\":{"
                 ALG("Reduce_scatter_block_intra_recursive_doubling") "}",
                 ALG("Reduce_scatter_block_inter_remote_reduce_local_scatter"))},
    {"gather", INTRA_INTER(ALG("Gather_intra_binomial"),
                           "\"total_msg_size<=2047\":{" ALG("Gather_inter_local_gather_remote_send") "},"
                           "\"total_msg_size=any\":{" ALG("Gather_inter_linear") "}")},
    {"scatter", INTRA_INTER(ALG("Scatter_intra_binomial"),
                            "\"total_msg_size<=2047\":{" ALG("Scatter_inter_remote_send_local_scatter") "},"
                            "\"total_msg_size=any\":{" ALG("Scatter_inter_linear") "}")},
    {"gatherv", "{" ALG("Gatherv_allcomm_linear") "}"},
    {"scatterv", "{" ALG("Scatterv_allcomm_linear") "}"},
    {"scan", "{" ALG("Scan_intra_recursive_doubling") "}"},
    {"exscan", "{" ALG("Exscan_intra_recursive_doubling") "}"},
    {"barrier", INTRA_INTER("\"comm_hierarchy=parent\":{" ALG("Barrier_intra_smp") "},"
                            "\"comm_hierarchy=any\":{" ALG("Barrier_allcomm_nb") "}",
                            ALG("Barrier_inter_bcast"))},
    {"alltoall", INTRA_INTER("\"is_sendbuf_inplace=yes\":{" ALG("Alltoall_intra_pairwise_sendrecv_replace") "},"
                             "\"is_sendbuf_inplace=no\":{\"avg_msg_size<=256\":{" ALG("Alltoall_intra_brucks") "},"
                             "\"avg_msg_size<=32768\":{" ALG("Alltoall_intra_scattered") "},"
                             "\"avg_msg_size=any\":{" ALG("Alltoall_intra_pairwise") "}}",
                             ALG("Alltoall_inter_pairwise_exchange"))},
    {"alltoallv", INTRA_INTER("\"is_sendbuf_inplace=yes\":{" ALG("Alltoallv_intra_pairwise_sendrecv_replace") "},"
                              "\"is_sendbuf_inplace=no\":{" ALG("Alltoallv_intra_scattered") "}",
                              ALG("Alltoallv_inter_pairwise_exchange"))},
    {"alltoallw", INTRA_INTER("\"is_sendbuf_inplace=yes\":{" ALG("Alltoallw_intra_pairwise_sendrecv_replace") "},"
                              "\"is_sendbuf_inplace=no\":{" ALG("Alltoallw_intra_scattered") "}",
                              ALG("Alltoallw_inter_pairwise_exchange"))},
    {"neighbor_allgather", "{" ALG("Neighbor_allgather_allcomm_nb") "}"},
    {"neighbor_allgatherv", "{" ALG("Neighbor_allgatherv_allcomm_nb") "}"},
    {"neighbor_alltoall", "{" ALG("Neighbor_alltoall_allcomm_nb") "}"},
    {"neighbor_alltoallv", "{" ALG("Neighbor_alltoallv_allcomm_nb") "}"},
    {"neighbor_alltoallw", "{" ALG("Neighbor_alltoallw_allcomm_nb") "}"},
    {"ibarrier", INTRA_INTER(ALG("Ibarrier_intra_sched_recursive_doubling"), ALG("Ibarrier_inter_sched_bcast"))},
    {"iallreduce",
     INTRA_INTER("\"avg_msg_size<=2048\":{" ALG("Iallreduce_intra_sched_recursive_doubling") "},"
                 "\"avg_msg_size=any\":{\"is_op_built_in=yes\":{\"count<pow2\":{"
                 ALG("Iallreduce_intra_sched_recursive_doubling") "},\"count=any\":{"
                 ALG("Iallreduce_intra_sched_reduce_scatter_allgather") "}},\"is_op_built_in=no\":{"
                 ALG("Iallreduce_intra_sched_recursive_doubling") "}}",
                 ALG("Iallreduce_inter_sched_remote_reduce_local_bcast"))},
    {"iallgather", INTRA_INTER("\"total_msg_size<=81919\":{" ALG("Iallgather_intra_sched_brucks") "},"
                               "\"total_msg_size=any\":{" ALG("Iallgather_intra_sched_ring") "}",
                               ALG("Iallgather_inter_sched_local_gather_remote_bcast"))},
    {"iallgatherv", INTRA_INTER("\"total_msg_size<=81919\":{" ALG("Iallgatherv_intra_sched_brucks") "},"
                                "\"total_msg_size=any\":{" ALG("Iallgatherv_intra_sched_ring") "}",
                                ALG("Iallgatherv_inter_sched_remote_gather_local_bcast"))},
    {"ibcast", INTRA_INTER("\"avg_msg_size<=12287\":{" ALG("Ibcast_intra_sched_binomial") "},"
                           "\"avg_msg_size=any\":{\"comm_size<=7\":{" ALG("Ibcast_intra_sched_binomial") "},"
                           "\"comm_size=any\":{" ALG("Ibcast_intra_sched_scatter_ring_allgather") "}}",
                           ALG("Ibcast_inter_sched_flat"))},
    {"ireduce", INTRA_INTER(ALG("Ireduce_intra_sched_binomial"), ALG("Ireduce_inter_sched_local_reduce_remote_send"))},
    {"ireduce_scatter",
     INTRA_INTER("\"is_commutative=yes\":{\"total_msg_size<=524287\":{"
                 ALG("Ireduce_scatter_intra_sched_recursive_halving") "},\"total_msg_size=any\":{"
                 ALG("Ireduce_scatter_intra_sched_pairwise") "}},\"is_commutative=no\":{"
                 ALG("Ireduce_scatter_intra_sched_recursive_doubling") "}",
                 ALG("Ireduce_scatter_inter_sched_remote_reduce_local_scatterv"))},
    {"ireduce_scatter_block",
     INTRA_INTER("\"is_commutative=yes\":{\"total_msg_size<=524287\":{"
                 ALG("Ireduce_scatter_block_intra_sched_recursive_halving") "},\"total_msg_size=any\":{"
                 ALG("Ireduce_scatter_block_intra_sched_pairwise") "}},\"is_commutative=no\":{"
                 ALG("Ireduce_scatter_block_intra_sched_recursive_doubling") "}",
                 ALG("Ireduce_scatter_block_inter_sched_remote_reduce_local_scatterv"))},
    {"igather", INTRA_INTER(ALG("Igather_intra_sched_binomial"),
                            "\"total_msg_size<=2047\":{" ALG("Igather_inter_sched_short") "},"
                            "\"total_msg_size=any\":{" ALG("Igather_inter_sched_long") "}")},
    {"iscatter", INTRA_INTER(ALG("Iscatter_intra_sched_binomial"),
                             "\"total_msg_size<=2047\":{" ALG("Iscatter_inter_sched_remote_send_local_scatter") "},"
                             "\"total_msg_size=any\":{" ALG("Iscatter_inter_sched_linear") "}")},
    {"igatherv", "{" ALG("Igatherv_allcomm_sched_linear") "}"},
    {"iscatterv", "{" ALG("Iscatterv_allcomm_sched_linear") "}"},
    {"iscan", "{" ALG("Iscan_intra_sched_recursive_doubling") "}"},
    {"iexscan", "{" ALG("Iexscan_intra_sched_recursive_doubling") "}"},
    {"ialltoall", INTRA_INTER("\"is_sendbuf_inplace=yes\":{" ALG("Ialltoall_intra_sched_inplace") "},"
                              "\"is_sendbuf_inplace=no\":{\"avg_msg_size<=256\":{" ALG("Ialltoall_intra_sched_brucks") "},"
                              "\"avg_msg_size<=32768\":{" ALG("Ialltoall_intra_sched_permuted_sendrecv") "},"
                              "\"avg_msg_size=any\":{" ALG("Ialltoall_intra_sched_pairwise") "}}",
                              ALG("Ialltoall_inter_sched_pairwise_exchange"))},
    {"ialltoallv", INTRA_INTER("\"is_sendbuf_inplace=yes\":{" ALG("Ialltoallv_intra_sched_inplace") "},"
                               "\"is_sendbuf_inplace=no\":{" ALG("Ialltoallv_intra_sched_blocked") "}",
                               ALG("Ialltoallv_inter_sched_pairwise_exchange"))},
    {"ialltoallw", INTRA_INTER("\"is_sendbuf_inplace=yes\":{" ALG("Ialltoallw_intra_sched_inplace") "},"
                               "\"is_sendbuf_inplace=no\":{" ALG("Ialltoallw_intra_sched_blocked") "}",
                               ALG("Ialltoallw_inter_sched_pairwise_exchange"))},
    {"ineighbor_allgather", "{" ALG("Ineighbor_allgather_allcomm_sched_linear") "}"},
    {"ineighbor_allgatherv", "{" ALG("Ineighbor_allgatherv_allcomm_sched_linear") "}"},
    {"ineighbor_alltoall", "{" ALG("Ineighbor_alltoall_allcomm_sched_linear") "}"},
    {"ineighbor_alltoallv", "{" ALG("Ineighbor_alltoallv_allcomm_sched_linear") "}"},
    {"ineighbor_alltoallw", "{" ALG("Ineighbor_alltoallw_allcomm_sched_linear") "}"},
};
#undef ALG
#undef INTRA_INTER
// clang-format on

/* Compact JSON (no whitespace outside strings) to f, two spaces per level,
 * "{}" kept on one line, a final newline. */
static int csel_pretty(FILE *f, const char *s)
{
    int depth = 0, in_str = 0;
    for (; *s; s++) {
        char c = *s;
        if (in_str) {
            if (putc(c, f) == EOF)
                return TRD_ERR_IO;
            if (c == '\\' && s[1]) {
                if (putc(*++s, f) == EOF)
                    return TRD_ERR_IO;
            } else if (c == '"')
                in_str = 0;
            continue;
        }
        int rc = 0;
        if (c == '"') {
            in_str = 1;
            rc = putc(c, f) == EOF;
        } else if (c == '{' && s[1] == '}') {
            rc = fputs("{}", f) == EOF;
            s++;
        } else if (c == '{') {
            depth++;
            rc = fprintf(f, "{\n%*s", 2 * depth, "") < 0;
        } else if (c == '}') {
            depth--;
            rc = fprintf(f, "\n%*s}", 2 * depth, "") < 0;
        } else if (c == ',') {
            rc = fprintf(f, ",\n%*s", 2 * depth, "") < 0;
        } else if (c == ':') {
            rc = fputs(": ", f) == EOF;
        } else {
            rc = putc(c, f) == EOF;
        }
        if (rc)
            return TRD_ERR_IO;
    }
    return putc('\n', f) == EOF ? TRD_ERR_IO : TRD_OK;
}

int trd_export_csel_json(FILE *f, const trd_machine_plan *p, const char *machine_name)
{
    (void)machine_name; /* JSON has no comments and CSEL rejects unknown keys */
    shapes sh;
    sbuf b = {NULL, 0, 0, 0};
    if (shapes_of(p, &sh) != TRD_OK)
        return TRD_ERR_NOMEM;
    const char *rd = trd_export_mpich_name(TRD_MPICH_RD);
    sb_printf(&b,
              "{\"collective=allreduce\":{\"comm_type=intra\":{"
              "\"is_commutative=no\":{\"algorithm=%s\":{}},\"is_commutative=yes\":{",
              rd);
    if (sh.nshapes > 0) {
        sb_printf(&b, "\"comm_size=node_comm_size\":{");
        csel_sizes(&b, sh.one, sh.none);
        sb_printf(&b, "},");
        for (int i = 0; i < sh.nshapes;) {
            int j = i; /* shapes i..j-1 have the same rank count */
            while (j < sh.nshapes && ranks(&sh.s[j]) == ranks(&sh.s[i]))
                j++;
            if (j == sh.nshapes)
                sb_printf(&b, "\"comm_size=any\":{");
            else
                sb_printf(&b, "\"comm_size<=%ld\":{", ranks(&sh.s[j]) - 1);
            for (int k = i; k < j; k++) {
                if (j - i > 1 && k < j - 1)
                    sb_printf(&b, "\"comm_avg_ppn<=%d\":{", sh.s[k].ppn);
                else if (j - i > 1) /* MPICH 4.0 knows no "comm_avg_ppn=any" */
                    sb_printf(&b, "\"comm_hierarchy=any\":{");
                csel_sizes(&b, sh.s[k].choice, sh.s[k].nchoices);
                if (j - i > 1)
                    sb_printf(&b, "}%s", k < j - 1 ? "," : "");
            }
            sb_printf(&b, "}%s", j < sh.nshapes ? "," : "");
            i = j;
        }
    } else {
        sb_printf(&b, "\"comm_size=any\":{");
        csel_sizes(&b, sh.one, sh.none);
        sb_printf(&b, "}");
    }
    sb_printf(
        &b,
        "}},\"comm_type=inter\":{\"algorithm=MPIR_Allreduce_inter_reduce_exchange_bcast\":{}}}");
    for (size_t i = 0; i < sizeof csel_others / sizeof csel_others[0]; i++)
        sb_printf(&b, ",\"collective=%s\":%s", csel_others[i][0], csel_others[i][1]);
    sb_printf(&b, "}");
    int rc = b.oom ? TRD_ERR_NOMEM : csel_pretty(f, b.s) ? TRD_ERR_IO : TRD_OK;
    free(b.s);
    free(sh.s);
    if (!rc && (fflush(f) != 0 || ferror(f)))
        rc = TRD_ERR_IO;
    return rc;
}

/* ---- Open MPI --------------------------------------------------------------------- */

/* One rule set: "comment" lines then "MSGSIZE ALG FANINOUT SEGSIZE" lines. */
static int ompi_rules(FILE *f, const trd_choice *c, int n)
{
    merged m[TRD_MAX_CHOICES];
    int nm = merge(c, n, 1, m), rc = 0;
    rc |= fprintf(f, "%d # message sizes\n", nm) < 0;
    size_t from = 0;
    for (int i = 0; i < nm; i++) {
        rc |= fprintf(f, "%zu %d 0 0 # from %zu bytes: %s (treeduce %s)\n", from, m[i].alg, from,
                      trd_ompi_allreduce_name(m[i].alg), m[i].model->name) < 0;
        from = m[i].below;
    }
    return rc ? TRD_ERR_IO : TRD_OK;
}

int trd_export_ompi_rules(FILE *f, const trd_machine_plan *p, const char *machine_name)
{
    shapes sh;
    if (shapes_of(p, &sh))
        return TRD_ERR_NOMEM;
    /* a comment runs to the end of its line: a name that is not an
     * identifier (a newline would start a rule) is not written */
    const char *name = machine_name && trd_emit_valid_name(machine_name) ? machine_name : "machine";
    int rc = 0, nsizes = 0;
    for (int i = 0; i < sh.nshapes; i++)
        if (i == 0 || ranks(&sh.s[i]) != ranks(&sh.s[i - 1]))
            nsizes++;
    rc |=
        fprintf(
            f,
            "# Open MPI coll/tuned dynamic rules: MPI_Allreduce as treeduce-gen plans it for\n"
            "# machine %s (%d node%s x %d cores).  Use with\n"
            "#   --mca coll_tuned_use_dynamic_rules 1 --mca coll_tuned_dynamic_rules_filename "
            "FILE\n"
            "# Per communicator size (the rule with the largest size <= the communicator's):\n"
            "# message size in bytes of the whole vector (from), algorithm (3 recursive_doubling,\n"
            "# 4 ring, 6 rabenseifner), fan in/out and segment size (0: defaults).\n",
            name, p->nnodes, p->nnodes == 1 ? "" : "s", p->ppn) < 0;
    rc |= fprintf(f, "1 # collectives\n2 # collective id: ALLREDUCE\n%d # communicator sizes\n",
                  sh.nshapes ? nsizes : 1) < 0;
    if (sh.nshapes == 0) {
        rc |= fprintf(f, "0 # ranks: every communicator (one node, without shared memory)\n") < 0;
        rc |= ompi_rules(f, sh.one, sh.none);
    }
    for (int i = 0; i < sh.nshapes; i++) {
        /* the last shape of a rank count: the most ranks per node */
        if (i + 1 < sh.nshapes && ranks(&sh.s[i + 1]) == ranks(&sh.s[i]))
            continue;
        rc |= fprintf(f, "%ld # ranks (planned as %d nodes x %d)\n", ranks(&sh.s[i]),
                      sh.s[i].nnodes, sh.s[i].ppn) < 0;
        rc |= ompi_rules(f, sh.s[i].choice, sh.s[i].nchoices);
    }
    free(sh.s);
    if (!rc && (fflush(f) != 0 || ferror(f)))
        rc = -1;
    return rc ? TRD_ERR_IO : TRD_OK;
}
