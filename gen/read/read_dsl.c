/* Topology DSL reader: entry points and the helpers that the grammar's
 * actions (grammar/topo.y) call to build the model.
 *
 * Syntax errors are first held as "pending": the error production that
 * recovers from one may replace the generic "expected A or B, got 'x'" with
 * a statement-specific text ("expected ';' after bandwidth value") at the
 * place the missing token belongs.  All of one file's messages are sorted by
 * position before they reach the trd_diag, since the scanner and the error
 * productions find them slightly out of order.
 *
 * On request the reader also keeps a source map (readers.h): the clean
 * productions report each statement's token positions and each block's
 * keyword and '}', so that an editor of the file needs no lexer of its own.
 */
#include "reader.h"
#include "readers.h"
#include "util.h"

#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topo.tab.h"

/* ---- small utilities ----------------------------------------------------- */

char *trd__dsl_strndup(trd_dsl_ctx *ctx, const char *s, size_t len)
{
    char *c = malloc(len + 1);
    if (!c) {
        ctx->nomem = 1;
        return NULL;
    }
    memcpy(c, s, len);
    c[len] = '\0';
    return c;
}

static char *dup_or_null(trd_dsl_ctx *ctx, const char *s)
{
    return s ? trd__dsl_strndup(ctx, s, strlen(s)) : NULL;
}

trd_loc trd__dsl_loc(const trd_dsl_ctx *ctx, const TRD_YYLTYPE *loc)
{
    return (trd_loc){ctx->file, loc->first_line, loc->first_column};
}

static trd_loc end_loc(const trd_dsl_ctx *ctx, const TRD_YYLTYPE *loc)
{
    return (trd_loc){ctx->file, loc->last_line, loc->last_column};
}

/* ---- messages ------------------------------------------------------------- */

static void record(trd_dsl_ctx *ctx, trd_loc loc, const char *text)
{
    if (ctx->nrecorded >= TRD_DSL_MAX_ERRORS)
        return;
    if (++ctx->nrecorded == TRD_DSL_MAX_ERRORS)
        text = "too many errors; the rest of the file is not read";
    char *c = dup_or_null(ctx, text);
    if (!c || trd__grow((void **)&ctx->msgs, &ctx->capmsgs, ctx->nmsgs + 1, sizeof(trd_dsl_msg))) {
        free(c);
        ctx->nomem = 1;
        return;
    }
    ctx->msgs[ctx->nmsgs++] = (trd_dsl_msg){loc, c};
}

static void commit_pending(trd_dsl_ctx *ctx)
{
    if (!ctx->pend)
        return;
    ctx->pend = 0;
    if (!ctx->pend_quiet)
        record(ctx, ctx->pend_loc, ctx->pend_text);
}

void trd__dsl_error(trd_dsl_ctx *ctx, trd_loc loc, const char *fmt, ...)
{
    char text[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    ctx->nerrs++;
    record(ctx, loc, text);
}

static int cmp_msg(const void *a, const void *b)
{
    const trd_dsl_msg *x = a, *y = b;
    if (x->loc.line != y->loc.line)
        return x->loc.line < y->loc.line ? -1 : 1;
    if (x->loc.col != y->loc.col)
        return x->loc.col < y->loc.col ? -1 : 1;
    return 0;
}

/* Stable sort by position: equal positions keep the order they were found in. */
static void sort_msgs(trd_dsl_ctx *ctx)
{
    for (int i = 1; i < ctx->nmsgs; i++) {
        trd_dsl_msg m = ctx->msgs[i];
        int j = i;
        while (j > 0 && cmp_msg(&ctx->msgs[j - 1], &m) > 0) {
            ctx->msgs[j] = ctx->msgs[j - 1];
            j--;
        }
        ctx->msgs[j] = m;
    }
}

/* Hand every message found so far to the trd_diag, in file order.  Called
 * before each model constructor, which reports into the trd_diag itself. */
static void emit_msgs(trd_dsl_ctx *ctx)
{
    commit_pending(ctx);
    sort_msgs(ctx);
    for (int i = 0; i < ctx->nmsgs; i++) {
        trd_diag_error(ctx->d, ctx->msgs[i].loc, "%s", ctx->msgs[i].text);
        free(ctx->msgs[i].text);
    }
    ctx->nmsgs = 0;
}

/* ---- tokens and syntax errors --------------------------------------------- */

static const char *blk_what(const trd_dsl_ctx *ctx, char *buf, size_t len);

int trd__dsl_token(trd_dsl_ctx *ctx, int kind, const char *text, size_t len, const TRD_YYLTYPE *loc)
{
    ctx->ntokens++;
    ctx->prev_end = ctx->tok_end;
    ctx->tok_eof = kind == TRD_TOK_YYEOF;
    ctx->tok_loc = trd__dsl_loc(ctx, loc);
    if (!ctx->tok_eof)
        ctx->tok_end = end_loc(ctx, loc);
    if (len < sizeof ctx->tok)
        snprintf(ctx->tok, sizeof ctx->tok, "%.*s", (int)len, text);
    else
        snprintf(ctx->tok, sizeof ctx->tok, "%.*s...", (int)(sizeof ctx->tok - 4), text);
    return kind;
}

void trd__dsl_syntax_error(trd_dsl_ctx *ctx, const char *expected)
{
    commit_pending(ctx);
    ctx->nerrs++;
    ctx->pend = 1;
    ctx->pend_ntokens = ctx->ntokens;
    /* Right after an unexpected character or an unterminated string, the
     * grammar mostly trips over what the scanner already reported. */
    ctx->pend_quiet = ctx->ntokens >= ctx->quiet_lo && ctx->ntokens <= ctx->quiet_hi;
    /* At the end of the file, point just after the last token. */
    ctx->pend_loc = ctx->tok_eof ? ctx->prev_end : ctx->tok_loc;
    ctx->pend_prev_end = ctx->prev_end;
    if (ctx->tok_eof)
        snprintf(ctx->pend_got, sizeof ctx->pend_got, "end of file");
    else
        snprintf(ctx->pend_got, sizeof ctx->pend_got, "'%s'", ctx->tok);
    if (*expected)
        snprintf(ctx->pend_text, sizeof ctx->pend_text, "expected %s, got %s", expected,
                 ctx->pend_got);
    else
        snprintf(ctx->pend_text, sizeof ctx->pend_text, "unexpected %s", ctx->pend_got);
}

/* The pending error was found at the token read last: no token was skipped
 * since, so the error production that reduced is about that very place. */
static int pending_is_fresh(const trd_dsl_ctx *ctx)
{
    return ctx->pend && ctx->pend_ntokens == ctx->ntokens;
}

void trd__dsl_expect_after(trd_dsl_ctx *ctx, const char *what)
{
    ctx->nerrs++;
    if (pending_is_fresh(ctx)) {
        ctx->pend_loc = ctx->pend_prev_end;
        snprintf(ctx->pend_text, sizeof ctx->pend_text, "expected %s", what);
    }
    commit_pending(ctx);
}

void trd__dsl_expect_got(trd_dsl_ctx *ctx, const char *what)
{
    ctx->nerrs++;
    /* "KEYWORD error ';'" only recovers an error found right after KEYWORD,
     * even when tokens were skipped since, so the lookahead is the one to name. */
    if (ctx->pend)
        snprintf(ctx->pend_text, sizeof ctx->pend_text, "expected %s, got %s", what, ctx->pend_got);
    commit_pending(ctx);
}

void trd__dsl_expect_close(trd_dsl_ctx *ctx)
{
    ctx->nerrs++;
    if (pending_is_fresh(ctx) && ctx->blk_kind) {
        char what[300];
        snprintf(ctx->pend_text, sizeof ctx->pend_text, "expected '}' to close %s",
                 blk_what(ctx, what, sizeof what));
    }
    commit_pending(ctx);
}

void trd__dsl_recovered(trd_dsl_ctx *ctx)
{
    ctx->nerrs++;
    commit_pending(ctx);
}

/* ---- blocks ------------------------------------------------------------- */

static const char *kw_name(int kw)
{
    switch (kw) {
    case TRD_TOK_LATENCY:
        return "latency";
    case TRD_TOK_BANDWIDTH:
        return "bandwidth";
    case TRD_TOK_INJECTION:
        return "injection";
    case TRD_TOK_ALPHA_R:
        return "alpha_r";
    case TRD_TOK_SYNTHETIC:
        return "synthetic";
    case TRD_TOK_HWLOC:
        return "hwloc";
    case TRD_TOK_LOCAL:
        return "local";
    case TRD_TOK_PACKAGES:
        return "packages";
    case TRD_TOK_CORES:
        return "cores";
    case TRD_TOK_PACKAGE:
        return "package";
    case TRD_TOK_NODE:
        return "node";
    case TRD_TOK_LINK:
        return "link";
    case TRD_TOK_NODES:
        return "nodes";
    case TRD_TOK_SWITCHES:
        return "switches";
    default:
        return "?";
    }
}

/* "switch 's0'", or "switch" when the name was missing. */
static const char *blk_what(const trd_dsl_ctx *ctx, char *buf, size_t len)
{
    if (ctx->blk_name)
        snprintf(buf, len, "%s '%s'", ctx->blk_kind, ctx->blk_name);
    else
        snprintf(buf, len, "%s", ctx->blk_kind);
    return buf;
}

/* 1 the first time statement kw appears in the block; else reports it. */
static int once(trd_dsl_ctx *ctx, int kw, const TRD_YYLTYPE *kwloc)
{
    trd_loc *first = &ctx->seen[kw - TRD_TOK_MACHINE];
    if (first->line) {
        char what[300];
        trd__dsl_error(ctx, trd__dsl_loc(ctx, kwloc), "duplicate '%s' in %s", kw_name(kw),
                       blk_what(ctx, what, sizeof what));
        return 0;
    }
    *first = trd__dsl_loc(ctx, kwloc);
    return 1;
}

static int seen(const trd_dsl_ctx *ctx, int kw)
{
    return ctx->seen[kw - TRD_TOK_MACHINE].line != 0;
}

static void clear_block(trd_dsl_ctx *ctx)
{
    free(ctx->blk_name);
    free(ctx->source);
    free(ctx->package_link);
    free(ctx->node_link);
    free(ctx->sw_link);
    free(ctx->hw_arg);
    for (int i = 0; i < ctx->nitems; i++) {
        free(ctx->items[i].name);
        free(ctx->items[i].nodetype);
    }
    ctx->blk_kind = NULL;
    ctx->blk_name = ctx->source = ctx->package_link = ctx->node_link = ctx->sw_link = NULL;
    ctx->hw_kind = NULL;
    ctx->hw_arg = NULL;
    memset(ctx->seen, 0, sizeof ctx->seen);
    memset(&ctx->cost, 0, sizeof ctx->cost);
    ctx->shape = ctx->npackages = ctx->ncores = ctx->ncounts = ctx->counts_bad = 0;
    ctx->nitems = 0; /* the array itself serves the next switch */
}

void trd__dsl_begin(trd_dsl_ctx *ctx, const char *kind, const char *name, const TRD_YYLTYPE *loc)
{
    clear_block(ctx);
    ctx->blk_kind = kind;
    ctx->blk_name = dup_or_null(ctx, name);
    ctx->blk_loc = trd__dsl_loc(ctx, loc);
    ctx->blk_nerrs = ctx->nerrs;
    if (ctx->map)
        ctx->map->nstmts = ctx->stmts_kept;
}

void trd__dsl_machine(trd_dsl_ctx *ctx, const char *name, const TRD_YYLTYPE *loc)
{
    if (!name)
        return;
    if (ctx->have_machine) {
        trd__dsl_error(ctx, trd__dsl_loc(ctx, loc), "duplicate 'machine' statement");
        return;
    }
    ctx->have_machine = 1;
    if (trd_topo_set_name(ctx->t, name) != TRD_OK)
        ctx->nomem = 1;
}

/* ---- link blocks ---------------------------------------------------------- */

/* Keywords whose value is a time (latency, alpha_r); the others take a bandwidth. */
static int is_time_kw(int kw)
{
    return kw == TRD_TOK_LATENCY || kw == TRD_TOK_ALPHA_R;
}

/* Why text is not a valid time (kw latency, alpha_r) or bandwidth: the unit,
 * the number, or not a value at all. */
static void bad_value(trd_dsl_ctx *ctx, int kw, const char *text, trd_loc loc)
{
    const char *what = is_time_kw(kw) ? "time" : "bandwidth";
    const char *example = kw == TRD_TOK_LATENCY     ? "a time such as 50us"
                          : kw == TRD_TOK_ALPHA_R   ? "a time such as 0.5us"
                          : kw == TRD_TOK_BANDWIDTH ? "a bandwidth such as 125MB/s"
                                                    : "a bandwidth such as 10GB/s";
    char *end;
    double v;
    (void)strtod(text, &end);
    while (*end == ' ' || *end == '\t')
        end++;
    if (end == text || !*end) {
        trd__dsl_error(ctx, loc, "expected %s, got '%s'", example, text);
        return;
    }
    /* Is it the unit or the number?  Try the unit on a number known to be good. */
    char probe[64];
    snprintf(probe, sizeof probe, "1%s", end);
    int unit_ok =
        is_time_kw(kw) ? trd_parse_time(probe, &v) == 0 : trd_parse_bandwidth(probe, &v) == 0;
    if (!unit_ok)
        trd__dsl_error(ctx, loc, "unknown unit '%s' in %s '%s'", end, what, text);
    else if (is_time_kw(kw))
        trd__dsl_error(ctx, loc, "expected a time from 0 to 1 hour, got '%s'", text);
    else
        trd__dsl_error(ctx, loc, "expected a bandwidth from 1 B/s to 1 PB/s, got '%s'", text);
}

void trd__dsl_link_value(trd_dsl_ctx *ctx, int kw, const TRD_YYLTYPE *kwloc, const char *text,
                         const TRD_YYLTYPE *loc)
{
    if (!once(ctx, kw, kwloc) || !text)
        return;
    double v = 0;
    char *end;
    int rc;
    if (is_time_kw(kw))
        rc = trd_parse_time(text, &v);
    else
        rc = trd_parse_bandwidth(text, &v);
    /* "injection 0" (with or without a unit) means unlimited. */
    if (rc != 0 && kw == TRD_TOK_INJECTION && strtod(text, &end) == 0 && end != text) {
        char probe[64];
        snprintf(probe, sizeof probe, "1%s", end);
        rc = trd_parse_bandwidth(probe, &v);
        v = 0;
    }
    if (rc != 0) {
        bad_value(ctx, kw, text, trd__dsl_loc(ctx, loc));
        return;
    }
    if (kw == TRD_TOK_LATENCY)
        ctx->cost.latency_s = v;
    else if (kw == TRD_TOK_BANDWIDTH)
        ctx->cost.bandwidth_Bps = v;
    else if (kw == TRD_TOK_ALPHA_R)
        ctx->cost.alpha_r_s = v; /* 0: not given; checked against latency by the model */
    else
        ctx->cost.injection_Bps = v;
}

static void end_link(trd_dsl_ctx *ctx, trd_loc close)
{
    char what[300];
    if (!seen(ctx, TRD_TOK_LATENCY))
        trd__dsl_error(ctx, close, "expected 'latency' in %s", blk_what(ctx, what, sizeof what));
    if (!seen(ctx, TRD_TOK_BANDWIDTH))
        trd__dsl_error(ctx, close, "expected 'bandwidth' in %s", blk_what(ctx, what, sizeof what));
    /* The model checks this too, at the link's name; here it is located at
     * the alpha_r statement [RM §3, Eq. 3]. */
    if (ctx->nerrs == ctx->blk_nerrs && seen(ctx, TRD_TOK_ALPHA_R) && !TRD_ALPHA_R_OK(ctx->cost))
        trd__dsl_error(ctx, ctx->seen[TRD_TOK_ALPHA_R - TRD_TOK_MACHINE],
                       "%s: alpha_r must be >= 0 and at most the latency",
                       blk_what(ctx, what, sizeof what));
    if (ctx->nerrs != ctx->blk_nerrs)
        return;
    emit_msgs(ctx);
    if (trd_topo_add_link(ctx->t, ctx->d, ctx->blk_loc, ctx->blk_name, ctx->cost) == TRD_ERR_NOMEM)
        ctx->nomem = 1;
}

/* ---- nodetype blocks ------------------------------------------------------ */

/* 1 if the block has no shape of another kind yet (1: hwloc, 2: counts). */
static int shape_ok(trd_dsl_ctx *ctx, int shape, const TRD_YYLTYPE *kwloc)
{
    if (ctx->shape == 0 || (ctx->shape == 2 && shape == 2)) {
        ctx->shape = shape;
        return 1;
    }
    char what[300];
    trd__dsl_error(ctx, trd__dsl_loc(ctx, kwloc),
                   "expected only one shape (synthetic, hwloc, local or packages/cores) in %s",
                   blk_what(ctx, what, sizeof what));
    return 0;
}

/* Relative hwloc XML paths are relative to the directory of the .topo file. */
static char *resolve_path(trd_dsl_ctx *ctx, const char *path)
{
    if (path[0] == '/' || !ctx->dir)
        return dup_or_null(ctx, path);
    size_t dl = strlen(ctx->dir), pl = strlen(path);
    char *full = malloc(dl + pl + 1);
    if (!full) {
        ctx->nomem = 1;
        return NULL;
    }
    memcpy(full, ctx->dir, dl);
    memcpy(full + dl, path, pl + 1);
    return full;
}

void trd__dsl_nt_hwloc(trd_dsl_ctx *ctx, int kw, const TRD_YYLTYPE *kwloc, const char *arg,
                       const TRD_YYLTYPE *loc)
{
    if (!shape_ok(ctx, 1, kwloc) || (kw != TRD_TOK_LOCAL && !arg))
        return;
    char source[600];
    /* hwloc builds the shape when a node first uses the type (the model) */
    ctx->hw_kind = kw == TRD_TOK_SYNTHETIC ? "synthetic" : kw == TRD_TOK_HWLOC ? "xml" : "local";
    ctx->hw_arg = kw == TRD_TOK_HWLOC ? resolve_path(ctx, arg) : dup_or_null(ctx, arg);
    ctx->hw_loc = trd__dsl_loc(ctx, loc);
    if (kw == TRD_TOK_SYNTHETIC)
        snprintf(source, sizeof source, "synthetic \"%s\"", arg);
    else if (kw == TRD_TOK_HWLOC)
        snprintf(source, sizeof source, "hwloc %s", arg);
    else
        snprintf(source, sizeof source, "local");
    ctx->source = dup_or_null(ctx, source);
}

/* A positive decimal integer, or -1. */
static long parse_count(const char *text)
{
    long v = 0;
    if (!text || !*text)
        return -1;
    for (const char *p = text; *p; p++) {
        if (*p < '0' || *p > '9' || v > 1000000)
            return -1;
        v = v * 10 + (*p - '0');
    }
    return v > 0 ? v : -1;
}

void trd__dsl_nt_packages(trd_dsl_ctx *ctx, const TRD_YYLTYPE *kwloc, const char *text,
                          const TRD_YYLTYPE *loc)
{
    if (!shape_ok(ctx, 2, kwloc) || !once(ctx, TRD_TOK_PACKAGES, kwloc) || !text)
        return;
    long n = parse_count(text);
    if (n < 1 || n > TRD_MAX_PACKAGES) {
        trd__dsl_error(ctx, trd__dsl_loc(ctx, loc),
                       "expected a package count from 1 to %d, got '%s'", TRD_MAX_PACKAGES, text);
        return;
    }
    ctx->npackages = (int)n;
}

void trd__dsl_nt_count(trd_dsl_ctx *ctx, int first, const char *text, const TRD_YYLTYPE *loc)
{
    if (first)
        ctx->ncounts = ctx->counts_bad = 0;
    if (!text || ctx->counts_bad)
        return;
    long n = parse_count(text);
    if (n < 1 || n > INT_MAX) {
        trd__dsl_error(ctx, trd__dsl_loc(ctx, loc), "expected a core count such as 8, got '%s'",
                       text);
        ctx->counts_bad = 1;
    } else if (ctx->ncounts == TRD_MAX_PACKAGES) {
        trd__dsl_error(ctx, trd__dsl_loc(ctx, loc),
                       "expected at most %d core counts, one per package", TRD_MAX_PACKAGES);
        ctx->counts_bad = 1;
    } else {
        ctx->counts[ctx->ncounts++] = (int)n;
    }
}

void trd__dsl_nt_cores(trd_dsl_ctx *ctx, const TRD_YYLTYPE *kwloc)
{
    if (!shape_ok(ctx, 2, kwloc) || !once(ctx, TRD_TOK_CORES, kwloc) || ctx->counts_bad)
        return;
    ctx->ncores = ctx->ncounts;
    memcpy(ctx->cores, ctx->counts, (size_t)ctx->ncounts * sizeof(int));
}

void trd__dsl_nt_link(trd_dsl_ctx *ctx, int kw, const TRD_YYLTYPE *kwloc, const char *name)
{
    if (!once(ctx, kw, kwloc))
        return;
    if (kw == TRD_TOK_PACKAGE)
        ctx->package_link = dup_or_null(ctx, name);
    else
        ctx->node_link = dup_or_null(ctx, name);
}

/* The shape from "packages N; cores A B ...;" with its source text, or an error. */
static int counts_shape(trd_dsl_ctx *ctx, trd_loc close)
{
    char what[300], source[600];
    size_t used;
    if (!seen(ctx, TRD_TOK_CORES)) {
        trd__dsl_error(ctx, close, "expected 'cores' with 'packages' in %s",
                       blk_what(ctx, what, sizeof what));
        return -1;
    }
    if (!seen(ctx, TRD_TOK_PACKAGES)) {
        ctx->npackages = ctx->ncores;
        used = (size_t)snprintf(source, sizeof source, "cores");
    } else if (ctx->ncores == 1) {
        for (int p = 1; p < ctx->npackages; p++)
            ctx->cores[p] = ctx->cores[0];
        used = (size_t)snprintf(source, sizeof source, "packages %d cores", ctx->npackages);
    } else if (ctx->ncores == ctx->npackages) {
        used = (size_t)snprintf(source, sizeof source, "packages %d cores", ctx->npackages);
    } else {
        trd__dsl_error(ctx, ctx->seen[TRD_TOK_CORES - TRD_TOK_MACHINE],
                       "expected 1 or %d core counts for %d packages, got %d", ctx->npackages,
                       ctx->npackages, ctx->ncores);
        return -1;
    }
    for (int p = 0; p < ctx->ncores && used < sizeof source; p++)
        used += (size_t)snprintf(source + used, sizeof source - used, " %d", ctx->cores[p]);
    ctx->source = dup_or_null(ctx, source);
    return 0;
}

static void end_nodetype(trd_dsl_ctx *ctx, trd_loc close)
{
    char what[300];
    if (ctx->shape == 0)
        trd__dsl_error(ctx, close, "expected synthetic, hwloc, local or cores in %s",
                       blk_what(ctx, what, sizeof what));
    else if (ctx->shape == 2 && ctx->nerrs == ctx->blk_nerrs)
        counts_shape(ctx, close);
    if (ctx->nerrs != ctx->blk_nerrs || !ctx->source)
        return;
    emit_msgs(ctx);
    int rc;
    if (ctx->shape == 1)
        rc = trd_topo_add_nodetype_hwloc(
            ctx->t, ctx->d, ctx->blk_loc, ctx->blk_name, &trd_hwloc_nodetype_hook, ctx->hw_kind,
            ctx->hw_arg, ctx->hw_loc, ctx->package_link, ctx->node_link, ctx->source);
    else
        rc = trd_topo_add_nodetype(ctx->t, ctx->d, ctx->blk_loc, ctx->blk_name, ctx->npackages,
                                   ctx->cores, ctx->package_link, ctx->node_link, ctx->source);
    if (rc == TRD_ERR_NOMEM)
        ctx->nomem = 1;
}

/* ---- switch blocks -------------------------------------------------------- */

void trd__dsl_sw_link(trd_dsl_ctx *ctx, const TRD_YYLTYPE *kwloc, const char *name)
{
    if (once(ctx, TRD_TOK_LINK, kwloc))
        ctx->sw_link = dup_or_null(ctx, name);
}

/* Expand a host list token ("n[0-3]", "a, b") into *names; errors are
 * placed on the character they are about.  0 or -1. */
static int expand(trd_dsl_ctx *ctx, const char *text, const TRD_YYLTYPE *loc, char ***names, int *n)
{
    size_t len = strlen(text);
    char *packed = malloc(len + 1);
    int *col = malloc((len + 1) * sizeof(int));
    char err[256];
    int errpos = 0, rc = -1;
    if (!packed || !col) {
        ctx->nomem = 1;
        goto out;
    }
    /* The scanner allows blanks after commas only; drop them, keep the columns. */
    size_t k = 0;
    for (size_t i = 0; i < len; i++) {
        if (text[i] == ' ' || text[i] == '\t')
            continue;
        col[k] = loc->first_column + (int)i;
        packed[k++] = text[i];
    }
    packed[k] = '\0';
    col[k] = loc->first_column + (int)len;
    if (trd_hostlist_expand(packed, names, n, err, sizeof err, &errpos) != 0) {
        if (errpos < 0 || (size_t)errpos > k)
            errpos = 0;
        trd__dsl_error(ctx, (trd_loc){ctx->file, loc->first_line, col[errpos]}, "%s", err);
        goto out;
    }
    rc = 0;
out:
    free(packed);
    free(col);
    return rc;
}

static void add_items(trd_dsl_ctx *ctx, const char *hosts, const TRD_YYLTYPE *loc,
                      const char *nodetype, int is_child)
{
    char **names;
    int n;
    if (!hosts || expand(ctx, hosts, loc, &names, &n) != 0)
        return;
    if (trd__grow((void **)&ctx->items, &ctx->capitems, ctx->nitems + n, sizeof(trd_dsl_item))) {
        ctx->nomem = 1;
        trd_hostlist_free(names, n);
        return;
    }
    for (int i = 0; i < n; i++) {
        /* The item takes the name; the array itself is freed below. */
        ctx->items[ctx->nitems++] =
            (trd_dsl_item){names[i], dup_or_null(ctx, nodetype), is_child, trd__dsl_loc(ctx, loc)};
    }
    free(names);
}

void trd__dsl_sw_nodes(trd_dsl_ctx *ctx, const char *hosts, const TRD_YYLTYPE *loc,
                       const char *nodetype)
{
    add_items(ctx, hosts, loc, nodetype, 0);
}

void trd__dsl_sw_child(trd_dsl_ctx *ctx, const char *names, const TRD_YYLTYPE *loc)
{
    add_items(ctx, names, loc, NULL, 1);
}

static void end_switch(trd_dsl_ctx *ctx)
{
    int sw;
    emit_msgs(ctx);
    int rc = trd_topo_add_switch(ctx->t, ctx->d, ctx->blk_loc, ctx->blk_name, ctx->sw_link, &sw);
    for (int i = 0; rc == TRD_OK && i < ctx->nitems; i++) {
        const trd_dsl_item *it = &ctx->items[i];
        if (it->is_child)
            rc = trd_topo_switch_add_child(ctx->t, ctx->d, it->loc, sw, it->name);
        else
            rc = trd_topo_switch_add_node(ctx->t, ctx->d, it->loc, sw, it->name, it->nodetype);
        if (rc == TRD_ERR_INPUT)
            rc = TRD_OK; /* reported; the other nodes may have errors of their own */
    }
    if (rc == TRD_ERR_NOMEM)
        ctx->nomem = 1;
}

/* ---- source map ------------------------------------------------------------ */

/* A statement for the map: keyword kw at kwloc, its arguments from the token
 * at first to the one at last (both NULL: it has none), semi its ';'.  Several
 * tokens ("nodes a[0-3] : t", "cores 8 4") are one range, so a caller can
 * replace the whole argument without knowing how the scanner split it. */
void trd__dsl_stmt(trd_dsl_ctx *ctx, int kw, const TRD_YYLTYPE *kwloc, const TRD_YYLTYPE *first,
                   const TRD_YYLTYPE *last, const TRD_YYLTYPE *semi)
{
    trd_dsl_map *m = ctx->map;
    if (!m)
        return;
    if (trd__grow((void **)&m->stmts, &ctx->capstmts, m->nstmts + 1, sizeof(trd_dsl_stmt))) {
        ctx->nomem = 1;
        return;
    }
    m->stmts[m->nstmts++] = (trd_dsl_stmt){
        .kw = kw_name(kw),
        .kw_off = kwloc->first_byte,
        .arg_off = first ? first->first_byte : semi->first_byte,
        .arg_end = last ? last->last_byte : semi->first_byte,
        .end = semi->last_byte,
    };
}

/* The block just closed, with the statements recorded since its head.  A
 * block without its '}' (an error) gives its statements up. */
static void map_block(trd_dsl_ctx *ctx, const TRD_YYLTYPE *head, const TRD_YYLTYPE *close)
{
    trd_dsl_map *m = ctx->map;
    if (!m)
        return;
    if (!close || !ctx->blk_kind || !ctx->blk_name) {
        m->nstmts = ctx->stmts_kept;
        return;
    }
    char *name = dup_or_null(ctx, ctx->blk_name);
    if (!name ||
        trd__grow((void **)&m->blocks, &ctx->capblocks, m->nblocks + 1, sizeof(trd_dsl_block))) {
        free(name);
        ctx->nomem = 1;
        return;
    }
    /* stmts point into m->stmts once it has stopped growing (map_finish) */
    m->blocks[m->nblocks++] = (trd_dsl_block){
        .kind = ctx->blk_kind,
        .name = name,
        .kw_off = head->first_byte,
        .close = close->first_byte,
        .nstmts = m->nstmts - ctx->stmts_kept,
    };
    ctx->stmts_kept = m->nstmts;
}

/* Point every block at its statements; statements outside a block are dropped. */
static void map_finish(trd_dsl_ctx *ctx)
{
    trd_dsl_map *m = ctx->map;
    m->nstmts = ctx->stmts_kept;
    const trd_dsl_stmt *p = m->stmts;
    for (int i = 0; i < m->nblocks; i++) {
        m->blocks[i].stmts = p;
        if (p) /* NULL when no block has a statement: NULL + 0 is undefined */
            p += m->blocks[i].nstmts;
    }
}

void trd_dsl_map_free(trd_dsl_map *map)
{
    if (!map)
        return;
    for (int i = 0; i < map->nblocks; i++)
        free(map->blocks[i].name);
    free(map->blocks);
    free(map->stmts);
    free(map);
}

void trd__dsl_end(trd_dsl_ctx *ctx, const TRD_YYLTYPE *head, const TRD_YYLTYPE *close)
{
    map_block(ctx, head, close);
    /* A block with an error anywhere is left out of the model; close is NULL
     * when the '}' itself is missing. */
    if (ctx->blk_kind && ctx->blk_name && close && ctx->nerrs == ctx->blk_nerrs) {
        trd_loc at = trd__dsl_loc(ctx, close);
        if (strcmp(ctx->blk_kind, "link") == 0)
            end_link(ctx, at);
        else if (strcmp(ctx->blk_kind, "nodetype") == 0)
            end_nodetype(ctx, at);
        else
            end_switch(ctx);
    }
    clear_block(ctx);
}

/* ---- entry points --------------------------------------------------------- */

/* "dir/" of a file name, or NULL if it has no directory part. */
static char *dir_of(trd_dsl_ctx *ctx, const char *file)
{
    const char *slash = strrchr(file, '/');
    return slash ? trd__dsl_strndup(ctx, file, (size_t)(slash - file) + 1) : NULL;
}

int trd_read_dsl_string(trd_topo_t t, trd_diag *d, const char *filename, const char *text,
                        size_t len)
{
    return trd_read_dsl_string_map(t, d, filename, text, len, NULL);
}

int trd_read_dsl_string_map(trd_topo_t t, trd_diag *d, const char *filename, const char *text,
                            size_t len, trd_dsl_map **map)
{
    if (map)
        *map = NULL;
    trd_dsl_ctx ctx;
    memset(&ctx, 0, sizeof ctx);
    ctx.t = t;
    ctx.d = d;
    int before = trd_diag_count(d);
    int rc = trd__reader_begin(t, d, filename, &text, len, &ctx.file);
    if (rc != TRD_OK)
        return rc;
    ctx.tok_end = (trd_loc){ctx.file, 1, 1};
    if (map && !(ctx.map = calloc(1, sizeof *ctx.map)))
        return TRD_ERR_NOMEM;
    ctx.dir = dir_of(&ctx, filename);

    rc = trd__dsl_parse_text(&ctx, text, len);
    emit_msgs(&ctx);
    clear_block(&ctx);
    free(ctx.items);
    free(ctx.msgs);
    free(ctx.dir);
    if (rc == TRD_OK && ctx.nomem)
        rc = TRD_ERR_NOMEM;
    if (rc == TRD_OK && (ctx.nerrs > 0 || trd_diag_count(d) > before))
        rc = TRD_ERR_INPUT;
    if (rc == TRD_OK && ctx.map) {
        map_finish(&ctx);
        *map = ctx.map;
    } else {
        trd_dsl_map_free(ctx.map);
    }
    return rc;
}

int trd_read_dsl(trd_topo_t t, trd_diag *d, const char *path)
{
    return trd__read_file(t, d, path, trd_read_dsl_string);
}
