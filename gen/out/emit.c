/* Emitter: a machine's tables into the templates -> generated C.  No
 * algorithm is emitted: the algorithms are the runtime's (runtime/algo). */
#define _GNU_SOURCE /* asprintf */
#include "emit.h"
#include "outfile.h"
#include "trd_select.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef TRD_VERSION
#define TRD_VERSION "0.0.0"
#endif

/* ---- growing strings ------------------------------------------------------ */

typedef struct {
    char *s;
    size_t len, cap;
    int oom;
} sbuf;

static void sb_add(sbuf *b, const char *s, size_t n)
{
    if (b->oom)
        return;
    if (b->len + n + 1 > b->cap) {
        size_t ncap = b->cap ? b->cap : 4096;
        while (ncap < b->len + n + 1)
            ncap *= 2;
        char *ns = realloc(b->s, ncap);
        if (!ns) {
            b->oom = 1;
            return;
        }
        b->s = ns;
        b->cap = ncap;
    }
    memcpy(b->s + b->len, s, n);
    b->len += n;
    b->s[b->len] = '\0';
}

static void sb_printf(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_printf(sbuf *b, const char *fmt, ...)
{
    char tmp[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n < sizeof tmp) {
        sb_add(b, tmp, (size_t)n);
        return;
    }
    char *big = malloc((size_t)n + 1);
    if (!big) {
        b->oom = 1;
        return;
    }
    va_start(ap, fmt);
    vsnprintf(big, (size_t)n + 1, fmt, ap);
    va_end(ap);
    sb_add(b, big, (size_t)n);
    free(big);
}

/* ---- templates ------------------------------------------------------------ */

int trd_expand(const char *tmpl, const char *const *keys, const char *const *vals, int nkeys,
               char **out, size_t *len, char *err, size_t errlen)
{
    sbuf b = {*out, *len, *out ? *len + 1 : 0, 0};
    const char *p = tmpl;
    while (*p) {
        const char *at = strchr(p, '@');
        if (!at) {
            sb_add(&b, p, strlen(p));
            break;
        }
        sb_add(&b, p, (size_t)(at - p));
        const char *e = at + 1;
        while (isupper((unsigned char)*e) || isdigit((unsigned char)*e) || *e == '_')
            e++;
        if (*e != '@' || e == at + 1) { /* a lone '@' is text */
            sb_add(&b, "@", 1);
            p = at + 1;
            continue;
        }
        size_t klen = (size_t)(e - at - 1);
        int k;
        for (k = 0; k < nkeys; k++)
            if (strlen(keys[k]) == klen && strncmp(keys[k], at + 1, klen) == 0)
                break;
        if (k == nkeys) {
            snprintf(err, errlen, "template placeholder @%.*s@ has no value", (int)klen, at + 1);
            free(b.s);
            *out = NULL;
            return TRD_ERR_STATE;
        }
        sb_add(&b, vals[k], strlen(vals[k]));
        p = e + 1;
    }
    if (b.oom) {
        free(b.s);
        *out = NULL;
        snprintf(err, errlen, "out of memory");
        return TRD_ERR_NOMEM;
    }
    if (!b.s)
        sb_add(&b, "", 0);
    *out = b.s;
    *len = b.len;
    return TRD_OK;
}

int trd_emit_valid_name(const char *name)
{
    if (!name || !(isalpha((unsigned char)name[0]) || name[0] == '_'))
        return 0;
    for (const char *p = name; *p; p++)
        if (!(isalnum((unsigned char)*p) || *p == '_'))
            return 0;
    return strlen(name) <= 64;
}

/* ---- tables ----------------------------------------------------------------- */

/* The one way text from the input reaches generated C (names, the input
 * path and the command line): printable ASCII is kept, but the quote and the
 * backslash are escaped, and '?' (no trigraph can form), '*' (no comment can
 * end or start) and every other byte are octal escapes.  The result is the
 * same text inside a string literal and inert inside a comment. */
static void c_text(sbuf *b, const char *s)
{
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            sb_printf(b, "\\%c", c);
        else if (c >= 0x20 && c < 0x7f && c != '?' && c != '*')
            sb_add(b, s, 1);
        else
            sb_printf(b, "\\%03o", c);
    }
}

static void c_string(sbuf *b, const char *s)
{
    sb_add(b, "\"", 1);
    c_text(b, s);
    sb_add(b, "\"", 1);
}

static const trd_topo_t *sort_topo;
static int cmp_name(const void *a, const void *b)
{
    return strcmp(trd_topo_node_name(*sort_topo, *(const int *)a),
                  trd_topo_node_name(*sort_topo, *(const int *)b));
}

static void int_table(sbuf *b, const char *decl, const int *v, int n)
{
    sb_printf(b, "%s[%d] = {", decl, n);
    for (int i = 0; i < n; i++)
        sb_printf(b, "%s%d%s", i % 12 == 0 ? "\n    " : " ", v[i], i + 1 < n ? "," : "");
    sb_add(b, "\n};\n", 4);
}

static void size_value(sbuf *b, size_t v)
{
    if (v == SIZE_MAX)
        sb_printf(b, "SIZE_MAX");
    else
        sb_printf(b, "%zu", v);
}

/* A time for the comments: microseconds, four digits. */
static void us_text(sbuf *b, double us)
{
    sb_printf(b, "%.4g us", us);
}

/* How many ranges from w->range[i] on belong to range i's collective and
 * shape (the reader and the merge keep a shape's ranges together, in
 * order). */
static int shape_ranges(const trd_wisdom *w, int i)
{
    const trd_wisdom_range *r = &w->range[i];
    int n = 1;
    while (i + n < w->nranges && w->range[i + n].coll == r->coll &&
           w->range[i + n].nnodes == r->nnodes && w->range[i + n].ppn == r->ppn)
        n++;
    return n;
}

/* A size range of a tuned table before adjacent model entries merge: a
 * range of the wisdom, or sizes none covers (r NULL). */
typedef struct tpiece {
    size_t from, below;
    const trd_wisdom_range *r;
} tpiece;

static int model_piece(const tpiece *p)
{
    return !p->r || trd_wisdom_is_model(p->r);
}

/* The pieces of ranges w->range[i..i+n) from 0 to SIZE_MAX, the gaps
 * included, into pc (2n+1 of them at most); returns how many. */
static int shape_pieces(const trd_wisdom *w, int i, int n, tpiece *pc)
{
    int np = 0;
    size_t at = 0;
    for (int k = i; k < i + n; k++) {
        const trd_wisdom_range *r = &w->range[k];
        if (r->from > at)
            pc[np++] = (tpiece){at, r->from, NULL};
        pc[np++] = (tpiece){r->from, r->below, r};
        at = r->below;
    }
    if (at != SIZE_MAX)
        pc[np++] = (tpiece){at, SIZE_MAX, NULL};
    return np;
}

/* The table's entries: a run of the model's pieces is one. */
static int table_entries(const tpiece *pc, int np)
{
    int ne = 0;
    for (int k = 0; k < np; k++)
        ne += !(k > 0 && model_piece(&pc[k]) && model_piece(&pc[k - 1]));
    return ne;
}

/* Every tuned table fits what the runtime reads (TRD_MAX_RANGES entries):
 * TRD_OK, or TRD_ERR_INPUT at the first range of a shape that does not,
 * TRD_ERR_NOMEM. */
static int tuned_fit(const trd_wisdom *w, const char *input, trd_diag *d)
{
    tpiece *pc = malloc(((size_t)w->nranges * 2 + 1) * sizeof *pc);
    int rc = pc ? TRD_OK : TRD_ERR_NOMEM;
    for (int i = 0; i < w->nranges && rc == TRD_OK;) {
        const trd_wisdom_range *r = &w->range[i];
        int n = shape_ranges(w, i), ne = table_entries(pc, shape_pieces(w, i, n, pc));
        if (ne > TRD_MAX_RANGES) {
            const char *file = trd_wisdom_range_file(w, r);
            trd_diag_error(d, (trd_loc){trd_diag_intern(d, file ? file : input), r->line, 1},
                           "%s %dx%d: the wisdom's ranges and the model's sizes between them "
                           "make %d size ranges, the runtime reads at most %d",
                           trd_coll_name(r->coll), r->nnodes, r->ppn, ne, TRD_MAX_RANGES);
            rc = TRD_ERR_INPUT;
        }
        i += n;
    }
    free(pc);
    return rc;
}

/* "FILE:LINE" of range r, for the comments. */
static void range_origin(sbuf *b, const trd_wisdom *w, const trd_wisdom_range *r)
{
    const char *file = trd_wisdom_range_file(w, r);
    c_text(b, file ? file : "wisdom");
    sb_printf(b, ":%d", r->line);
}

/* The ranges of w, one table per collective and shape in the order the
 * files give them, each with what was measured and where in its comment,
 * the sizes no range covers as the model's entries; then the tuned shapes. */
static void tuned_tables(sbuf *b, const trd_wisdom *w, const trd_emit_opts *o)
{
    int nt = 0;
    tpiece *pc = malloc(((size_t)w->nranges * 2 + 1) * sizeof *pc);
    if (!pc) {
        b->oom = 1;
        return;
    }
    sb_printf(b, "\n/* Measured on the machine, under\n *   ");
    c_text(b, w->mpi);
    sb_printf(b, "\n * by wisdom");
    for (int f = 0; f < o->nwisdom; f++) {
        sb_printf(b, "\n *   ");
        c_text(b, o->wisdom_input[f]);
        if (f < w->nsources)
            sb_printf(b, " of %s", w->source[f].date);
    }
    sb_printf(b, "\n * (where two overlap, the newer).  Per collective and communicator shape,\n"
                 " * the fastest of every candidate and the MPI library's routine in each size\n"
                 " * range, with its median time and the runner-up's; an entry without an\n"
                 " * algorithm is the model's (the sizes no range covers, or where the check\n"
                 " * found the model's choice faster), and the model above fills the shapes\n"
                 " * and collectives not measured. */\n");
    for (int i = 0; i < w->nranges; nt++) {
        const trd_wisdom_range *r = &w->range[i];
        int n = shape_ranges(w, i), np = shape_pieces(w, i, n, pc);
        sb_printf(b, "/* %s, %d node%s x %d:\n", trd_coll_name(r->coll), r->nnodes,
                  r->nnodes == 1 ? "" : "s", r->ppn);
        for (int k = 0; k < np; k++) {
            const tpiece *q = &pc[k];
            if (k > 0 && model_piece(q) && model_piece(&pc[k - 1]))
                continue; /* the model's entry goes on */
            sb_printf(b, " *   from %zu B: ", q->from);
            if (model_piece(q)) {
                sb_printf(b, "the model");
                const char *sep = " (";
                for (int m = k; m < np && model_piece(&pc[m]); m++)
                    if (pc[m].r) {
                        sb_printf(b, "%s", sep);
                        range_origin(b, w, pc[m].r);
                        sep = ", ";
                    }
                if (strcmp(sep, " (") != 0)
                    sb_printf(b, ": faster in the check)");
                sb_add(b, "\n", 1);
                continue;
            }
            c_text(b, q->r->alg);
            sb_add(b, " ", 1);
            us_text(b, q->r->us);
            if (q->r->runner[0]) {
                sb_printf(b, ", runner-up ");
                c_text(b, q->r->runner);
                sb_add(b, " ", 1);
                us_text(b, q->r->runner_us);
            }
            sb_printf(b, " (");
            range_origin(b, w, q->r);
            sb_printf(b, ")\n");
        }
        sb_printf(b, " */\nstatic const trd_size_choice tuned_%d[%d] = {\n", nt,
                  table_entries(pc, np));
        for (int k = 0; k < np; k++) {
            const tpiece *q = &pc[k];
            if (model_piece(q) && k + 1 < np && model_piece(&pc[k + 1]))
                continue; /* the model's entry ends further on */
            sb_printf(b, "    {.below = ");
            size_value(b, q->below);
            if (model_piece(q)) {
                sb_printf(b, ", .alg = NULL, .params = NULL},\n");
                continue;
            }
            const char *params = "";
            const trd_algo *a = trd_algo_parse(q->r->coll, q->r->alg, &params);
            sb_printf(b, ", .alg = ");
            c_string(b, a ? a->name : q->r->alg);
            sb_printf(b, ", .params = ");
            c_string(b, params);
            sb_printf(b, "},\n");
        }
        sb_printf(b, "};\n");
        i += n;
    }
    sb_printf(b, "static const trd_tuned_shape tuned[%d] = {\n", nt);
    nt = 0;
    for (int i = 0; i < w->nranges; nt++) {
        const trd_wisdom_range *r = &w->range[i];
        int n = shape_ranges(w, i);
        char coll[40];
        size_t k = 0;
        for (const char *q = trd_coll_name(r->coll); *q && k + 1 < sizeof coll; q++)
            coll[k++] = (char)toupper((unsigned char)*q);
        coll[k] = '\0';
        sb_printf(b,
                  "    {.coll = TRD_COLL_%s, .nnodes = %d, .ppn = %d, .choices = tuned_%d, "
                  ".nchoices = %d},\n",
                  coll, r->nnodes, r->ppn, nt, table_entries(pc, shape_pieces(w, i, n, pc)));
        i += n;
    }
    sb_printf(b, "};\n");
    free(pc);
}

static int tables(trd_topo_t t, const trd_machine_plan *p, const trd_emit_opts *o, sbuf *b)
{
    const char *name = o->name;
    const trd_wisdom *w = o->wisdom && o->wisdom->nranges ? o->wisdom : NULL;
    int n = trd_topo_nnodes(t);
    int *order = malloc((size_t)n * sizeof(int)), *cores = malloc((size_t)n * sizeof(int));
    int *packages = malloc((size_t)n * sizeof(int));
    if (!order || !cores || !packages) {
        free(order);
        free(cores);
        free(packages);
        return TRD_ERR_NOMEM;
    }
    sb_printf(b, "/* Nodes in DFS ring order [TREE §3.2, Lemma 4], with their switch. */\n");
    sb_printf(b, "static const char *const node_names[%d] = {\n", n);
    for (int i = 0; i < n; i++) {
        sb_add(b, "    ", 4);
        c_string(b, trd_topo_node_name(t, i));
        sb_printf(b, ", /* %d: ", i);
        c_text(b, trd_topo_switch_name(t, trd_topo_node_switch(t, i)));
        sb_add(b, " */\n", 4);
        order[i] = i;
        cores[i] = trd_topo_nodetype_ncores(t, trd_topo_node_type(t, i));
        packages[i] = trd_topo_nodetype_npackages(t, trd_topo_node_type(t, i));
    }
    sb_add(b, "};\n\n", 4);
    sort_topo = &t;
    qsort(order, (size_t)n, sizeof(int), cmp_name);
    sb_printf(b, "/* Ring indices sorted by node name, for the host lookup. */\n");
    int_table(b, "static const int name_order", order, n);
    sb_printf(b, "\n/* Cores per node. */\n");
    int_table(b, "static const int node_cores", cores, n);
    sb_printf(b, "\n/* Packages (sockets) per node. */\n");
    int_table(b, "static const int node_packages", packages, n);
    int drawn = 0;
    for (int s = 0; s < p->nshapes; s++)
        drawn += p->shape[s].on_schedules;
    sb_printf(b,
              "\n/* Selection for communicators over several nodes (commutative ops), per\n"
              " * planned shape (nodes x ranks per node), from the alpha-beta-gamma\n"
              " * model [MPICH §3, NAP Eq. 3-6, TREE §3.2, RM Eq. 4], %d of %d shapes timed\n"
              " * on their verified schedules (link sharing, max-rate injection, alpha_r\n"
              " * [TREE §2, NAP Eq. 3, RM Eq. 3]), the others on closed forms:\n"
              " * intra-node link %.3g us, %.3g GB/s; ring link %.3g us, %.3g GB/s",
              drawn, p->nshapes, p->levels.intra.latency_s * 1e6,
              p->levels.intra.bandwidth_Bps / 1e9, p->levels.ring_inter.latency_s * 1e6,
              p->levels.ring_inter.bandwidth_Bps / 1e9);
    for (int i = 0; trd_algos[i]; i++) { /* each algorithm's own line about its plan */
        char line[160];
        if (trd_algos[i]->summary && trd_algos[i]->summary(line, sizeof line, n, p->ppn) >= 0)
            sb_printf(b, ";\n * %s", line);
    }
    sb_printf(b, ". */\n");
    int nsh = p->nshapes;
    if (nsh == 0) { /* one node: the table is never consulted */
        sb_printf(b, "static const trd_size_choice choices_0[1] = {{");
        size_value(b, SIZE_MAX);
        sb_printf(b, ", \"ring\", \"\"}};\n");
    }
    for (int s = 0; s < nsh; s++) {
        const trd_shape_plan *sp = &p->shape[s];
        sb_printf(b, "static const trd_size_choice choices_%d[%d] = { /* %d nodes x %d */\n", s,
                  sp->nchoices, sp->nnodes, sp->ppn);
        for (int i = 0; i < sp->nchoices; i++) {
            sb_printf(b, "    {");
            size_value(b, sp->choice[i].below);
            sb_printf(b, ", ");
            c_string(b, sp->choice[i].alg->name);
            sb_printf(b, ", ");
            c_string(b, sp->choice[i].params);
            sb_printf(b, "},\n");
        }
        sb_printf(b, "};\n");
    }
    sb_printf(b, "static const trd_shape_choice shapes[%d] = {\n", nsh ? nsh : 1);
    if (nsh == 0)
        sb_printf(b, "    {%d, %d, choices_0, 1},\n", n > 1 ? n : 2, p->ppn);
    for (int s = 0; s < nsh; s++)
        sb_printf(b, "    {%d, %d, choices_%d, %d},\n", p->shape[s].nnodes, p->shape[s].ppn, s,
                  p->shape[s].nchoices);
    sb_printf(b, "};\n");
    if (w)
        tuned_tables(b, w, o);
    sb_printf(b, "\n");
    sb_printf(b, "static const trd_machine machine = {\n");
    sb_printf(b, "    .name = ");
    c_string(b, name);
    sb_printf(b, ",\n    .nnodes = %d,\n", n);
    sb_printf(b, "    .node_names = node_names,\n    .name_order = name_order,\n"
                 "    .node_cores = node_cores,\n    .node_packages = node_packages,\n");
    sb_printf(b, "    .nap_max_bytes_1node = ");
    size_value(b, p->nap_max_bytes_1node);
    sb_printf(b, ",\n    .shapes = shapes,\n    .nshapes = %d,\n", nsh ? nsh : 1);
    if (w) {
        int nt = 1;
        for (int i = 1; i < w->nranges; i++)
            nt += w->range[i].coll != w->range[i - 1].coll ||
                  w->range[i].nnodes != w->range[i - 1].nnodes ||
                  w->range[i].ppn != w->range[i - 1].ppn;
        sb_printf(b, "    .tuned = tuned,\n    .ntuned = %d,\n    .tuned_mpi = ", nt);
        c_string(b, w->mpi);
        sb_printf(b, ",\n");
    }
    sb_printf(b, "};");
    free(order);
    free(cores);
    free(packages);
    return b->oom ? TRD_ERR_NOMEM : TRD_OK;
}

/* ---- files ----------------------------------------------------------------- */

static int mkdirs(const char *dir)
{
    char path[4096];
    if (strlen(dir) >= sizeof path) {
        errno = ENAMETOOLONG;
        return -1;
    }
    snprintf(path, sizeof path, "%s", dir);
    for (char *q = path + 1; *q; q++) {
        if (*q != '/')
            continue;
        *q = '\0';
        if (mkdir(path, 0777) != 0 && errno != EEXIST)
            return -1;
        *q = '/';
    }
    if (mkdir(path, 0777) != 0 && errno != EEXIST)
        return -1;
    return 0;
}

int trd_emit(trd_topo_t t, const trd_machine_plan *p, const trd_emit_opts *o, const char *outdir,
             trd_diag *d)
{
    trd_loc here = {trd_diag_intern(d, outdir), 0, 0};
    if (!trd_emit_valid_name(o->name)) {
        trd_diag_error(d, here, "machine name '%s' is not a C identifier; use --name", o->name);
        return TRD_ERR_STATE;
    }
    char uname[80];
    size_t i;
    for (i = 0; o->name[i] && i + 1 < sizeof uname; i++)
        uname[i] = (char)toupper((unsigned char)o->name[i]);
    uname[i] = '\0';

    sbuf banner = {0}, tab = {0};
    sb_printf(&banner,
              "/* Generated by treeduce-gen %s -- do not edit; regenerate instead.\n"
              " *\n"
              " * input:   ",
              TRD_VERSION);
    c_text(&banner, o->input);
    sb_printf(&banner, "\n * sha256:  %s\n * command: ", o->input_sha256);
    c_text(&banner, o->command);
    for (int f = 0; o->wisdom && f < o->nwisdom; f++) {
        sb_printf(&banner, "\n * wisdom:  ");
        c_text(&banner, o->wisdom_input[f]);
        sb_printf(&banner, "\n * sha256:  %s", o->wisdom_sha256[f]);
    }
    sb_add(&banner, "\n */", 4);
    int rc = o->wisdom ? tuned_fit(o->wisdom, o->input, d) : TRD_OK;
    if (rc == TRD_OK)
        rc = tables(t, p, o, &tab);
    char nnodes[32], nsw[32];
    snprintf(nnodes, sizeof nnodes, "%d", trd_topo_nnodes(t));
    snprintf(nsw, sizeof nsw, "%d", trd_topo_nswitches(t));
    const char *keys[] = {"BANNER", "NAME", "UNAME", "TABLES", "NNODES", "NSWITCHES"};
    const char *vals[] = {banner.s ? banner.s : "", o->name, uname,
                          tab.s ? tab.s : "",       nnodes,  nsw};
    struct {
        const char *tmpl, *suffix;
        char *text;
        size_t len;
    } files[] = {{"trd_machine.h.in", ".h", NULL, 0},
                 {"trd_machine.c.in", ".c", NULL, 0},
                 {"trd_machine_mpi.c.in", "_mpi.c", NULL, 0}};
    enum { NF = 3 };
    char err[256];
    for (int f = 0; f < NF && rc == TRD_OK; f++) {
        const char *txt = trd_template(files[f].tmpl);
        if (!txt) {
            trd_diag_error(d, here, "template %s is missing from this build", files[f].tmpl);
            rc = TRD_ERR_STATE;
            break;
        }
        rc = trd_expand(txt, keys, vals, 6, &files[f].text, &files[f].len, err, sizeof err);
        if (rc)
            trd_diag_error(d, here, "%s: %s", files[f].tmpl, err);
    }
    if (rc == TRD_OK && (banner.oom || tab.oom))
        rc = TRD_ERR_NOMEM;
    if (rc == TRD_OK && mkdirs(outdir) != 0) {
        trd_diag_error(d, here, "cannot create directory: %s", strerror(errno));
        rc = TRD_ERR_IO;
    }
    /* all three complete before any replaces the old one */
    trd_outfile out[NF];
    char *final = NULL;
    const char *what = "write";
    int opened = 0, e = 0;
    for (int f = 0; f < NF && rc == TRD_OK; f++) {
        free(final);
        if (asprintf(&final, "%s/trd_%s%s", outdir, o->name, files[f].suffix) < 0) {
            final = NULL;
            rc = TRD_ERR_NOMEM;
            break;
        }
        if (trd_outfile_open(&out[f], final, &what) != TRD_OK) {
            e = errno;
            break;
        }
        opened++;
        if (fwrite(files[f].text, 1, files[f].len, out[f].f) != files[f].len) {
            e = errno ? errno : EIO;
            what = "write";
            break;
        }
    }
    for (int f = 0; f < opened; f++) {
        if (rc == TRD_OK && !e) {
            free(final);
            final = strdup(out[f].path);
            e = trd_outfile_commit(&out[f], &what) != TRD_OK ? errno : 0;
        } else {
            trd_outfile_discard(&out[f]);
        }
    }
    if (e && rc == TRD_OK) {
        trd_diag_error(d, (trd_loc){trd_diag_intern(d, final ? final : outdir), 0, 0},
                       "cannot %s: %s", what, strerror(e));
        rc = TRD_ERR_IO;
    }
    free(final);
    for (int f = 0; f < NF; f++)
        free(files[f].text);
    free(banner.s);
    free(tab.s);
    return rc;
}
