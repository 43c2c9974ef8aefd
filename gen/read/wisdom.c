/* Wisdom files (wisdom.h, treeduce-wisdom(5)): the digest of a machine's
 * description, the reader, the check against a description, the merge of
 * several files, the writer.  The reader takes a line at a time, the
 * header's keywords in their fixed order, then the ranges with their check
 * lines and "end"; it stops at the first error, so that nothing is ever
 * half-read. */
#include "wisdom.h"

#include <errno.h>
#include <stdarg.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "reader.h"
#include "sha256.h"
#include "trd_select.h"
#include "util.h"

/* ---- Digest ------------------------------------------------------------------ */

/* Append to the growing text *buf (*len bytes, *cap allocated). */
typedef struct dbuf {
    char *s;
    size_t len, cap;
    int nomem;
} dbuf;

static void dput(dbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void dput(dbuf *b, const char *fmt, ...)
{
    va_list ap;
    for (;;) {
        size_t room = b->cap - b->len;
        va_start(ap, fmt);
        int n = vsnprintf(b->s ? b->s + b->len : NULL, room, fmt, ap);
        va_end(ap);
        if (n < 0 || b->nomem)
            return;
        if ((size_t)n < room) {
            b->len += (size_t)n;
            return;
        }
        size_t ncap = b->cap ? b->cap * 2 : 4096;
        while (ncap - b->len <= (size_t)n)
            ncap *= 2;
        char *ns = realloc(b->s, ncap);
        if (!ns) {
            b->nomem = 1;
            return;
        }
        b->s = ns;
        b->cap = ncap;
    }
}

/* Names are written with their length first, so that no name can look like
 * two fields. */
void trd_topo_digest(trd_topo_t t, char hex[65])
{
    dbuf b = {0};
    dput(&b, "treeduce-digest 1\n");
    for (int i = 0; i < trd_topo_nswitches(t); i++) {
        const char *n = trd_topo_switch_name(t, i);
        int up = trd_topo_switch_parent(t, i);
        const char *pn = up >= 0 ? trd_topo_switch_name(t, up) : "";
        dput(&b, "switch %zu:%s %zu:%s\n", strlen(n), n, strlen(pn), pn);
    }
    for (int i = 0; i < trd_topo_nnodes(t); i++) {
        const char *n = trd_topo_node_name(t, i);
        const char *sw = trd_topo_switch_name(t, trd_topo_node_switch(t, i));
        const char *ty = trd_topo_nodetype_name(t, trd_topo_node_type(t, i));
        dput(&b, "node %zu:%s %zu:%s %zu:%s\n", strlen(n), n, strlen(sw), sw, strlen(ty), ty);
    }
    for (int ty = 0; ty < trd_topo_nnodetypes(t); ty++) {
        const char *n = trd_topo_nodetype_name(t, ty);
        dput(&b, "nodetype %zu:%s %d", strlen(n), n, trd_topo_nodetype_npackages(t, ty));
        for (int p = 0; p < trd_topo_nodetype_npackages(t, ty); p++)
            dput(&b, " %d", trd_topo_nodetype_cores(t, ty, p));
        dput(&b, "\n");
    }
    if (b.nomem) /* no digest matches this one: the check refuses it */
        snprintf(hex, 65, "%064d", 0);
    else
        trd_sha256_hex(b.s, b.len, hex);
    free(b.s);
}

/* ---- Reader ------------------------------------------------------------------ */

typedef struct wctx {
    trd_diag *d;
    const char *file;
    const char *bol, *p, *eol; /* the line being read, the cursor */
    int line;
    int cap; /* of the ranges */
    int failed;
    int nomem;
} wctx;

typedef struct tok {
    const char *s; /* in the text */
    size_t len;    /* 0: none (the end of the line) */
    int col;
} tok;

static void err(wctx *c, int col, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void err(wctx *c, int col, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (!c->failed)
        trd_diag_verror(c->d, (trd_loc){c->file, c->line, col}, fmt, ap);
    va_end(ap);
    c->failed = 1;
}

static int is_blank(char ch)
{
    return ch == ' ' || ch == '\t' || ch == '\r';
}

/* The next blank-separated token (a quoted string whole, blanks and all). */
static tok next(wctx *c)
{
    while (c->p < c->eol && is_blank(*c->p))
        c->p++;
    tok k = {c->p, 0, (int)(c->p - c->bol) + 1};
    if (c->p < c->eol && *c->p == '"') {
        const char *q = c->p + 1;
        while (q < c->eol && *q != '"')
            q += *q == '\\' && q + 1 < c->eol ? 2 : 1;
        c->p = q < c->eol ? q + 1 : q;
    } else {
        while (c->p < c->eol && !is_blank(*c->p))
            c->p++;
    }
    k.len = (size_t)(c->p - k.s);
    return k;
}

/* "got 'TOKEN'" or "got the end of the line", for messages. */
static const char *got(const tok *k, char *buf, size_t len)
{
    if (!k->len)
        return "got the end of the line";
    snprintf(buf, len, "got '%.*s%s'", k->len > 60 ? 60 : (int)k->len, k->s,
             k->len > 60 ? "..." : "");
    return buf;
}

static void expected(wctx *c, const tok *k, const char *what)
{
    char g[96];
    err(c, k->col, "expected %s, %s", what, got(k, g, sizeof g));
}

static int tok_is(const tok *k, const char *word)
{
    return k->len == strlen(word) && memcmp(k->s, word, k->len) == 0;
}

/* The line's last field was read: nothing may follow. */
static void line_end(wctx *c)
{
    tok k = next(c);
    if (k.len)
        expected(c, &k, "the end of the line");
}

/* An unsigned integer of digits only, at most max. */
static int read_uint(wctx *c, const char *what, uintmax_t max, uintmax_t *out)
{
    tok k = next(c);
    uintmax_t v = 0;
    size_t i = 0;
    for (; i < k.len && k.s[i] >= '0' && k.s[i] <= '9'; i++) {
        unsigned dgt = (unsigned)(k.s[i] - '0');
        if (v > (max - dgt) / 10)
            break;
        v = v * 10 + dgt;
    }
    if (!k.len || i < k.len) {
        expected(c, &k, what);
        return -1;
    }
    *out = v;
    return 0;
}

static int read_int(wctx *c, const char *what, int min, int max, int *out)
{
    uintmax_t v;
    const char *at = c->p;
    if (read_uint(c, what, (uintmax_t)max, &v))
        return -1;
    if (v < (uintmax_t)min) {
        c->p = at;
        tok k = next(c);
        expected(c, &k, what);
        return -1;
    }
    *out = (int)v;
    return 0;
}

/* A finite number >= 0 (a time). */
static int read_time(wctx *c, const char *what, double *out)
{
    tok k = next(c);
    char buf[64];
    char *end = NULL;
    double v = 0;
    /* decimal only: strtod would also take hex, inf and nan */
    int ok = k.len > 0 && k.len < sizeof buf && ((k.s[0] >= '0' && k.s[0] <= '9') || k.s[0] == '.');
    for (size_t i = 0; ok && i < k.len; i++)
        ok = (k.s[i] >= '0' && k.s[i] <= '9') || strchr(".eE+-", k.s[i]);
    if (ok) {
        memcpy(buf, k.s, k.len);
        buf[k.len] = '\0';
        errno = 0;
        v = strtod(buf, &end);
        ok = *end == '\0' && isfinite(v) && v >= 0 && errno != ERANGE;
    }
    if (!ok) {
        expected(c, &k, what);
        return -1;
    }
    *out = v;
    return 0;
}

static int hexval(char ch)
{
    if (ch >= '0' && ch <= '9')
        return ch - '0';
    if (ch >= 'a' && ch <= 'f')
        return ch - 'a' + 10;
    if (ch >= 'A' && ch <= 'F')
        return ch - 'A' + 10;
    return -1;
}

/* A quoted string into out (TRD_WISDOM_STRING_MAX bytes), checked as
 * trd_topo_check_name checks a name: "WHAT name ...". */
static int read_string(wctx *c, const char *what, int tabs_ok, char out[TRD_WISDOM_STRING_MAX])
{
    tok k = next(c);
    if (!k.len || k.s[0] != '"') {
        char w[80];
        snprintf(w, sizeof w, "a quoted %s name", what);
        expected(c, &k, w);
        return -1;
    }
    size_t n = 0;
    const char *s = k.s + 1, *end = k.s + k.len;
    for (; s < end && *s != '"'; s++) {
        int ch = (unsigned char)*s;
        if (*s == '\\') {
            int col = (int)(s - c->bol) + 1;
            if (s + 1 < end && (s[1] == '\\' || s[1] == '"')) {
                ch = (unsigned char)*++s;
            } else if (s + 3 < end && s[1] == 'x' && hexval(s[2]) >= 0 && hexval(s[3]) >= 0) {
                ch = hexval(s[2]) * 16 + hexval(s[3]);
                s += 3;
            } else {
                err(c, col, "expected \\\\, \\\" or \\xHH after '\\' in a string");
                return -1;
            }
        }
        if (n + 1 >= TRD_WISDOM_STRING_MAX) {
            err(c, k.col, "%s name is longer than %d bytes", what, TRD_WISDOM_STRING_MAX - 1);
            return -1;
        }
        out[n++] = (char)ch;
    }
    if (s >= end) {
        err(c, (int)(end - c->bol) + 1, "expected '\"' to end the string");
        return -1;
    }
    out[n] = '\0';
    /* MPI_Get_library_version's line has tabs (MPICH's "Version:\t4.1"): an
     * escape may carry them there */
    char checked[TRD_WISDOM_STRING_MAX];
    memcpy(checked, out, n + 1);
    for (size_t i = 0; tabs_ok && i < n; i++)
        if (checked[i] == '\t')
            checked[i] = ' ';
    if (trd_topo_check_name(c->d, (trd_loc){c->file, c->line, k.col}, what, checked) != TRD_OK) {
        c->failed = 1;
        return -1;
    }
    return 0;
}

/* An algorithm of collective coll ("NAME", "NAME:PARAMS" or "mpi"); "-" for
 * none where none is allowed, "model" where the model is. */
static int read_alg(wctx *c, int coll, int none_ok, int model_ok, char *out, size_t cap)
{
    tok k = next(c);
    const char *params = NULL;
    char spec[TRD_PARAMS_MAX + 32];
    int ok = k.len > 0 && k.len < sizeof spec && k.len < cap;
    if (ok) {
        memcpy(spec, k.s, k.len);
        spec[k.len] = '\0';
        if (none_ok && strcmp(spec, "-") == 0) {
            out[0] = '\0';
            return 0;
        }
        if (model_ok && strcmp(spec, TRD_WISDOM_MODEL) == 0) {
            memcpy(out, spec, k.len + 1);
            return 0;
        }
        ok = trd_algo_parse(coll, spec, &params) && strlen(params) < TRD_PARAMS_MAX;
    }
    if (!ok) {
        char names[512], w[600];
        trd_algo_names(coll, names, sizeof names);
        snprintf(w, sizeof w, "an algorithm of %s (%s)%s", trd_coll_name(coll), names,
                 none_ok    ? " or '-'"
                 : model_ok ? " or '" TRD_WISDOM_MODEL "'"
                            : "");
        expected(c, &k, w);
        return -1;
    }
    memcpy(out, spec, k.len + 1);
    return 0;
}

/* Whether every character of k is in set (a digit for '9'). */
static int fits(const tok *k, const char *pattern)
{
    if (k->len != strlen(pattern))
        return 0;
    for (size_t i = 0; i < k->len; i++)
        if (pattern[i] == '9' ? !(k->s[i] >= '0' && k->s[i] <= '9') : k->s[i] != pattern[i])
            return 0;
    return 1;
}

/* "[FROM, BELOW)" for messages, BELOW "-" for no end. */
static const char *range_text(size_t from, size_t below, char *buf, size_t len)
{
    if (below == SIZE_MAX)
        snprintf(buf, len, "[%zu, -)", from);
    else
        snprintf(buf, len, "[%zu, %zu)", from, below);
    return buf;
}

static int read_range(wctx *c, trd_wisdom *w, const trd_wisdom_range *prev)
{
    trd_wisdom_range r = {0};
    r.line = c->line;
    tok k = next(c);
    r.coll = -1;
    for (int i = 0; i < TRD_COLL_MAX; i++)
        if (tok_is(&k, trd_coll_name(i)))
            r.coll = i;
    if (r.coll < 0) {
        char w2[256] = "";
        size_t at = 0;
        for (int i = 0; i < TRD_COLL_MAX; i++)
            at += (size_t)snprintf(w2 + at, sizeof w2 - at, "%s%s", i ? ", " : "a collective (",
                                   trd_coll_name(i));
        snprintf(w2 + at, sizeof w2 - at, ")");
        expected(c, &k, w2);
        return -1;
    }
    uintmax_t from, below = SIZE_MAX;
    if (read_int(c, "a node count (1 or more)", 1, TRD_MAX_NODES, &r.nnodes) ||
        read_int(c, "a count of ranks per node (1 or more)", 1, 1 << 20, &r.ppn))
        return -1;
    const char *at = c->p;
    int from_col = next(c).col;
    c->p = at;
    if (read_uint(c, "a size in bytes", SIZE_MAX - 1, &from))
        return -1;
    tok b = next(c);
    if (!tok_is(&b, "-")) {
        c->p = b.s; /* read it again as a number */
        if (read_uint(c, "a size in bytes or '-'", SIZE_MAX - 1, &below))
            return -1;
        if (below <= from) {
            err(c, b.col, "expected a size above %ju (where the range starts), got %ju", from,
                below);
            return -1;
        }
    }
    r.from = (size_t)from;
    r.below = (size_t)below;
    if (read_alg(c, r.coll, 0, w->version >= 2, r.alg, sizeof r.alg) ||
        read_time(c, "a time in microseconds", &r.us) ||
        read_alg(c, r.coll, 1, 0, r.runner, sizeof r.runner) ||
        read_time(c, "a time in microseconds", &r.runner_us))
        return -1;
    line_end(c);
    if (c->failed)
        return -1;

    /* A shape's ranges: together, in order, not overlapping; in version 1
     * also from 0, no gap, the last without end. */
    int same = prev && prev->coll == r.coll && prev->nnodes == r.nnodes && prev->ppn == r.ppn;
    if (same && w->version >= 2) {
        if (r.from < prev->below) {
            char a[64], b2[64];
            err(c, from_col, "%s %dx%d range %s overlaps %s of line %d", trd_coll_name(r.coll),
                r.nnodes, r.ppn, range_text(r.from, r.below, a, sizeof a),
                range_text(prev->from, prev->below, b2, sizeof b2), prev->line);
            return -1;
        }
    } else if (same && prev->below != SIZE_MAX) {
        if (r.from != prev->below) {
            err(c, from_col,
                "expected %s %dx%d to go on from %zu (where its range before ends), got %zu",
                trd_coll_name(r.coll), r.nnodes, r.ppn, prev->below, r.from);
            return -1;
        }
    } else {
        if (prev && !same && prev->below != SIZE_MAX && w->version < 2) {
            err(c, k.col, "expected a range of %s %dx%d from %zu (its last range ends with '-')",
                trd_coll_name(prev->coll), prev->nnodes, prev->ppn, prev->below);
            return -1;
        }
        for (int i = 0; i < w->nranges; i++) {
            const trd_wisdom_range *o = &w->range[i];
            if (o->coll == r.coll && o->nnodes == r.nnodes && o->ppn == r.ppn) {
                err(c, k.col, "%s %dx%d was measured already (line %d)", trd_coll_name(r.coll),
                    r.nnodes, r.ppn, o->line);
                return -1;
            }
        }
        if (r.from != 0 && w->version < 2) {
            err(c, from_col, "expected %s %dx%d to start from 0 (its first range), got %zu",
                trd_coll_name(r.coll), r.nnodes, r.ppn, r.from);
            return -1;
        }
    }
    if ((uintmax_t)r.nnodes * (uintmax_t)r.ppn > (uintmax_t)w->nranks) {
        err(c, k.col, "%s %dx%d has more ranks than the job's %d", trd_coll_name(r.coll), r.nnodes,
            r.ppn, w->nranks);
        return -1;
    }
    int nshape = 1;
    for (int i = w->nranges - 1; i >= 0 && w->range[i].coll == r.coll &&
                                 w->range[i].nnodes == r.nnodes && w->range[i].ppn == r.ppn;
         i--)
        nshape++;
    if (nshape > TRD_MAX_RANGES) {
        err(c, k.col, "%s %dx%d has more than %d ranges", trd_coll_name(r.coll), r.nnodes, r.ppn,
            TRD_MAX_RANGES);
        return -1;
    }
    if (w->nranges >= TRD_WISDOM_MAX_RANGES) {
        err(c, k.col, "more than %d ranges", TRD_WISDOM_MAX_RANGES);
        return -1;
    }
    if (trd__grow((void **)&w->range, &c->cap, w->nranges + 1, sizeof *w->range)) {
        c->nomem = 1;
        return -1;
    }
    w->range[w->nranges++] = r;
    return 0;
}

static const char *const verdicts[TRD_WISDOM_VERDICT_MAX] = {"kept", "model", "mpi"};

/* A check line (keyword k read): one size of the last range timed again. */
static int read_check(wctx *c, trd_wisdom *w, const tok *k)
{
    if (w->version < 2) {
        err(c, k->col, "check lines need wisdom version 2, this file is version %d", w->version);
        return -1;
    }
    if (!w->nranges) {
        err(c, k->col, "expected a 'range' line before its 'check' lines");
        return -1;
    }
    trd_wisdom_range *r = &w->range[w->nranges - 1];
    char rt[64];
    range_text(r->from, r->below, rt, sizeof rt);
    if (r->ncheck >= TRD_WISDOM_MAX_CHECKS) {
        err(c, k->col, "%s %dx%d range %s of line %d has more than %d check lines",
            trd_coll_name(r->coll), r->nnodes, r->ppn, rt, r->line, TRD_WISDOM_MAX_CHECKS);
        return -1;
    }
    trd_wisdom_point pt = {0};
    pt.line = c->line;
    const char *at = c->p;
    int col = next(c).col;
    c->p = at;
    uintmax_t bytes;
    if (read_uint(c, "a size in bytes", SIZE_MAX - 1, &bytes))
        return -1;
    if (bytes < r->from || bytes >= r->below) {
        err(c, col, "check at %ju B lies outside its range %s of line %d", bytes, rt, r->line);
        return -1;
    }
    pt.bytes = (size_t)bytes;
    if (read_alg(c, r->coll, 0, 0, pt.alg, sizeof pt.alg) ||
        read_time(c, "a time in microseconds", &pt.alg_us) ||
        read_alg(c, r->coll, 0, 0, pt.model, sizeof pt.model) ||
        read_time(c, "a time in microseconds", &pt.model_us) ||
        read_time(c, "a time in microseconds", &pt.mpi_us) ||
        read_time(c, "a relative noise (0 or more)", &pt.noise))
        return -1;
    tok v = next(c);
    pt.verdict = -1;
    for (int i = 0; i < TRD_WISDOM_VERDICT_MAX; i++)
        if (tok_is(&v, verdicts[i]))
            pt.verdict = i;
    if (pt.verdict < 0) {
        expected(c, &v, "a verdict (kept, model or mpi)");
        return -1;
    }
    line_end(c);
    if (c->failed)
        return -1;
    r->check[r->ncheck++] = pt;
    return 0;
}

/* The header's keywords, in order. */
enum { H_MAGIC, H_MACHINE, H_DIGEST, H_MPI, H_DATE, H_RANKS, H_HOSTS, H_BUDGET, H_BODY };
static const char *const header[] = {"treeduce-wisdom", "machine", "digest", "mpi", "date",
                                     "ranks",           "hosts",   "budget"};

static void read_line(wctx *c, trd_wisdom *w, int *state)
{
    tok k = next(c);
    if (*state < H_BODY && !tok_is(&k, header[*state])) {
        char what[40];
        snprintf(what, sizeof what, "'%s'", header[*state]);
        expected(c, &k, what);
        return;
    }
    if (*state > H_BODY) {
        expected(c, &k, "nothing after 'end'");
        return;
    }
    switch (*state) {
    case H_MAGIC: {
        tok v = next(c);
        c->p = v.s;
        uintmax_t ver;
        if (read_uint(c, "a version number", INT32_MAX, &ver))
            return;
        if (ver < 1 || ver > TRD_WISDOM_VERSION) {
            err(c, v.col, "expected wisdom version 1 or %d, got version %ju", TRD_WISDOM_VERSION,
                ver);
            return;
        }
        w->version = (int)ver;
        break;
    }
    case H_MACHINE:
        if (read_string(c, "machine", 0, w->machine))
            return;
        break;
    case H_DIGEST: {
        tok v = next(c);
        int ok = v.len == 64;
        for (size_t i = 0; ok && i < 64; i++)
            ok = (v.s[i] >= '0' && v.s[i] <= '9') || (v.s[i] >= 'a' && v.s[i] <= 'f');
        if (!ok) {
            expected(c, &v, "64 lowercase hex digits");
            return;
        }
        memcpy(w->digest, v.s, 64);
        w->digest[64] = '\0';
        w->digest_line = c->line;
        break;
    }
    case H_MPI:
        if (read_string(c, "MPI library", 1, w->mpi))
            return;
        w->mpi_line = c->line;
        break;
    case H_DATE: {
        tok v = next(c);
        if (!fits(&v, "9999-99-99T99:99:99Z")) {
            expected(c, &v, "a date YYYY-MM-DDTHH:MM:SSZ");
            return;
        }
        memcpy(w->date, v.s, v.len);
        w->date[v.len] = '\0';
        break;
    }
    case H_RANKS:
        if (read_int(c, "a rank count (1 or more)", 1, 1 << 24, &w->nranks))
            return;
        break;
    case H_HOSTS: {
        /* grown as the strings come: a large count alone allocates nothing */
        int cap = 0;
        for (int i = 0; i < w->nranks; i++) {
            if (trd__grow((void **)&w->hosts, &cap, i + 1, sizeof *w->hosts)) {
                c->nomem = 1;
                return;
            }
            if (read_string(c, "host", 0, w->hosts[i]))
                return;
        }
        break;
    }
    case H_BUDGET: {
        int complete;
        if (read_time(c, "a budget in seconds", &w->budget_s) ||
            read_int(c, "1 (complete) or 0 (cut short)", 0, 1, &complete))
            return;
        w->complete = complete;
        break;
    }
    default:
        if (tok_is(&k, "end")) {
            if (w->version < 2 && w->nranges && w->range[w->nranges - 1].below != SIZE_MAX) {
                const trd_wisdom_range *p = &w->range[w->nranges - 1];
                err(c, k.col,
                    "expected a range of %s %dx%d from %zu (its last range ends with '-')",
                    trd_coll_name(p->coll), p->nnodes, p->ppn, p->below);
                return;
            }
            line_end(c);
            if (!c->failed)
                *state = H_BODY + 1;
            return;
        }
        if (tok_is(&k, "check")) {
            read_check(c, w, &k);
            return;
        }
        if (!tok_is(&k, "range")) {
            expected(c, &k, w->version >= 2 ? "'range', 'check' or 'end'" : "'range' or 'end'");
            return;
        }
        read_range(c, w, w->nranges ? &w->range[w->nranges - 1] : NULL);
        return;
    }
    line_end(c);
    if (!c->failed)
        (*state)++;
}

int trd_wisdom_read_string(const char *file, const char *text, size_t len, trd_wisdom *w,
                           trd_diag *d)
{
    memset(w, 0, sizeof *w);
    wctx c = {.d = d, .line = 0};
    int rc = trd__text_begin(d, file, &text, len, &c.file);
    if (rc != TRD_OK)
        return rc;
    int state = H_MAGIC;
    const char *end = text + len;
    for (const char *bol = text; bol < end && !c.failed && !c.nomem;) {
        const char *eol = memchr(bol, '\n', (size_t)(end - bol));
        if (!eol)
            eol = end;
        c.line++;
        c.bol = c.p = bol;
        c.eol = eol;
        while (c.p < eol && is_blank(*c.p))
            c.p++;
        if (c.p < eol && *c.p != '#')
            read_line(&c, w, &state);
        bol = eol + 1;
    }
    if (!c.failed && !c.nomem && state != H_BODY + 1) {
        /* after the last line (a file cut short): past its end */
        const char *bol = end;
        while (bol > text && bol[-1] != '\n')
            bol--;
        c.line = 1;
        for (const char *q = text; q < end; q++)
            c.line += *q == '\n';
        c.bol = c.p = c.eol = end;
        tok none = {end, 0, (int)(end - bol) + 1};
        char what[40];
        snprintf(what, sizeof what, "'%s'", state < H_BODY ? header[state] : "end");
        expected(&c, &none, what);
    }
    w->file = c.file;
    if (c.failed || c.nomem) {
        trd_wisdom_free(w);
        return c.nomem ? TRD_ERR_NOMEM : TRD_ERR_INPUT;
    }
    return TRD_OK;
}

int trd_wisdom_read(const char *path, trd_wisdom *w, trd_diag *d)
{
    memset(w, 0, sizeof *w);
    size_t len = 0;
    char *text;
    int rc = trd__read_input(d, path, &text, &len);
    if (rc != TRD_OK)
        return rc;
    rc = trd_wisdom_read_string(path, text, len, w, d);
    free(text);
    return rc;
}

/* ---- Check ------------------------------------------------------------------- */

int trd_wisdom_check(const trd_wisdom *w, trd_topo_t t, trd_diag *d)
{
    char hex[65];
    trd_topo_digest(t, hex);
    if (strcmp(hex, w->digest) == 0)
        return TRD_OK;
    trd_loc loc = {w->file ? w->file : trd_diag_intern(d, "wisdom"), w->digest_line,
                   w->digest_line ? 8 : 0};
    trd_diag_error(d, loc,
                   "wisdom measured on machine '%s' (digest %.8s...), this description is '%s' "
                   "(digest %.8s...)",
                   w->machine, w->digest, trd_topo_name(t) ? trd_topo_name(t) : "", hex);
    return TRD_ERR_INPUT;
}

const char *trd_wisdom_range_file(const trd_wisdom *w, const trd_wisdom_range *r)
{
    if (r->src >= 0 && r->src < w->nsources)
        return w->source[r->src].file;
    return w->file;
}

int trd_wisdom_is_model(const trd_wisdom_range *r)
{
    return strcmp(r->alg, TRD_WISDOM_MODEL) == 0;
}

const char *trd_wisdom_verdict_name(int verdict)
{
    return verdict >= 0 && verdict < TRD_WISDOM_VERDICT_MAX ? verdicts[verdict] : NULL;
}

/* ---- Merge ------------------------------------------------------------------- */

/* Text from a file's header on one line of a message: control characters
 * (the tab of an MPI library's line) as blanks. */
static const char *plain(const char *s, char *buf, size_t len)
{
    size_t i = 0;
    for (; s[i] && i + 1 < len; i++)
        buf[i] = (unsigned char)s[i] < 0x20 || s[i] == 0x7f ? ' ' : s[i];
    buf[i] = '\0';
    return buf;
}

static int same_shape(const trd_wisdom_range *a, const trd_wisdom_range *b)
{
    return a->coll == b->coll && a->nnodes == b->nnodes && a->ppn == b->ppn;
}

static int cmp_size(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return x < y ? -1 : x > y;
}

/* One range of a merge's input: its file and the file's rank by age. */
typedef struct mrange {
    const trd_wisdom_range *r;
    int src, prio; /* prio: higher is newer */
} mrange;

typedef struct merger {
    trd_wisdom *out;
    int cap;
    trd_wisdom_conflict *conf;
    int nconf, confcap;
} merger;

/* The conflicts of the range used, r clipped to [from, below), with the
 * other files' ranges of its shape m[0..nm). */
static int conflicts_of(merger *g, const mrange *use, size_t from, size_t below, const mrange *m,
                        int nm)
{
    for (int i = 0; i < nm; i++) {
        const trd_wisdom_range *o = m[i].r;
        size_t lo = o->from > from ? o->from : from, hi = o->below < below ? o->below : below;
        if (m[i].src == use->src || lo >= hi || !strcmp(o->alg, use->r->alg))
            continue;
        if (trd__grow((void **)&g->conf, &g->confcap, g->nconf + 1, sizeof *g->conf))
            return TRD_ERR_NOMEM;
        trd_wisdom_conflict *c = &g->conf[g->nconf++];
        memset(c, 0, sizeof *c);
        c->coll = o->coll;
        c->nnodes = o->nnodes;
        c->ppn = o->ppn;
        c->from = lo;
        c->below = hi;
        c->newer_src = use->src;
        c->newer_line = use->r->line;
        c->older_src = m[i].src;
        c->older_line = o->line;
        snprintf(c->newer_alg, sizeof c->newer_alg, "%s", use->r->alg);
        snprintf(c->older_alg, sizeof c->older_alg, "%s", o->alg);
    }
    return TRD_OK;
}

/* One shape's ranges m[0..nm) into g->out: at each size the newest range
 * that covers it, a range's run of sizes as one range (clipped, or split
 * where a newer one lies inside it). */
static int merge_shape(merger *g, const mrange *m, int nm)
{
    size_t *at = malloc((size_t)nm * 2 * sizeof *at);
    if (!at)
        return TRD_ERR_NOMEM;
    int nat = 0, rc = TRD_OK;
    for (int i = 0; i < nm; i++) {
        at[nat++] = m[i].r->from;
        at[nat++] = m[i].r->below;
    }
    qsort(at, (size_t)nat, sizeof *at, cmp_size);
    const mrange *cur = NULL;
    size_t cur_from = 0;
    for (int j = 0; j < nat && rc == TRD_OK; j++) {
        if (j + 1 < nat && at[j + 1] == at[j])
            continue; /* the elementary pieces: [at[j], next boundary) */
        const mrange *best = NULL;
        for (int i = 0; i < nm && at[j] != SIZE_MAX; i++)
            if (m[i].r->from <= at[j] && at[j] < m[i].r->below && (!best || m[i].prio > best->prio))
                best = &m[i];
        if (best == cur)
            continue;
        if (cur) { /* cur's run ends at at[j] */
            if (trd__grow((void **)&g->out->range, &g->cap, g->out->nranges + 1,
                          sizeof *g->out->range)) {
                rc = TRD_ERR_NOMEM;
                break;
            }
            trd_wisdom_range *r = &g->out->range[g->out->nranges++];
            *r = *cur->r;
            r->from = cur_from;
            r->below = at[j];
            r->src = cur->src;
            r->ncheck = 0;
            for (int k = 0; k < cur->r->ncheck; k++)
                if (cur->r->check[k].bytes >= r->from && cur->r->check[k].bytes < r->below)
                    r->check[r->ncheck++] = cur->r->check[k];
            rc = conflicts_of(g, cur, r->from, r->below, m, nm);
        }
        cur = best;
        cur_from = at[j];
    }
    free(at);
    return rc;
}

int trd_wisdom_merge(const trd_wisdom *in, int n, trd_wisdom *out, trd_wisdom_conflict **conflicts,
                     int *nconflicts, trd_diag *d)
{
    memset(out, 0, sizeof *out);
    *conflicts = NULL;
    *nconflicts = 0;
    out->version = TRD_WISDOM_VERSION;
    if (n < 1)
        return TRD_OK;
    int bad = 0;
    for (int i = 1; i < n; i++) {
        const trd_wisdom *a = &in[0], *b = &in[i];
        const char *fa = a->file ? a->file : "wisdom", *fb = b->file ? b->file : "wisdom";
        char x[TRD_WISDOM_STRING_MAX], y[TRD_WISDOM_STRING_MAX];
        if (strcmp(a->digest, b->digest)) {
            trd_diag_error(d, (trd_loc){fb, b->digest_line, b->digest_line ? 8 : 0},
                           "wisdom measured on machine '%s' (digest %.8s...), %s on machine '%s' "
                           "(digest %.8s...)",
                           plain(b->machine, x, sizeof x), b->digest, fa,
                           plain(a->machine, y, sizeof y), a->digest);
            bad = 1;
        } else if (strcmp(a->mpi, b->mpi)) {
            trd_diag_error(d, (trd_loc){fb, b->mpi_line, b->mpi_line ? 5 : 0},
                           "wisdom measured under '%s', %s under '%s'", plain(b->mpi, x, sizeof x),
                           fa, plain(a->mpi, y, sizeof y));
            bad = 1;
        }
    }
    if (bad)
        return TRD_ERR_INPUT;

    merger g = {out, 0, NULL, 0, 0};
    int rc = TRD_OK, most = 0, total = 0, nm = 0;
    mrange *m = NULL;
    out->source = calloc((size_t)n, sizeof *out->source);
    if (!out->source)
        goto nomem;
    out->nsources = n;
    memcpy(out->machine, in[0].machine, sizeof out->machine);
    memcpy(out->digest, in[0].digest, sizeof out->digest);
    memcpy(out->mpi, in[0].mpi, sizeof out->mpi);
    out->digest_line = in[0].digest_line;
    out->mpi_line = in[0].mpi_line;
    out->file = n == 1 ? in[0].file : NULL;
    out->complete = 1;
    for (int i = 0; i < n; i++) {
        out->source[i].file = in[i].file;
        memcpy(out->source[i].date, in[i].date, sizeof in[i].date);
        out->source[i].nranks = in[i].nranks;
        out->source[i].complete = in[i].complete;
        if (strcmp(in[i].date, out->date) > 0)
            memcpy(out->date, in[i].date, sizeof out->date);
        if (in[i].nranks > in[most].nranks)
            most = i;
        out->budget_s += in[i].budget_s;
        out->complete &= in[i].complete != 0;
        total += in[i].nranges;
    }
    out->nranks = in[most].nranks;
    if (out->nranks > 0) {
        out->hosts = malloc((size_t)out->nranks * sizeof *out->hosts);
        if (!out->hosts)
            goto nomem;
        memcpy(out->hosts, in[most].hosts, (size_t)out->nranks * sizeof *out->hosts);
    }
    m = malloc((size_t)(total ? total : 1) * sizeof *m);
    if (!m)
        goto nomem;
    /* the shapes in the order they first appear, file by file */
    for (int i = 0; i < n && rc == TRD_OK; i++) {
        for (int k = 0; k < in[i].nranges && rc == TRD_OK; k++) {
            const trd_wisdom_range *r = &in[i].range[k];
            int seen = k > 0 && same_shape(&in[i].range[k - 1], r); /* a file keeps them together */
            for (int i2 = 0; i2 <= i && !seen; i2++)
                for (int k2 = 0; k2 < (i2 < i ? in[i2].nranges : k) && !seen; k2++)
                    seen = same_shape(&in[i2].range[k2], r);
            if (seen)
                continue;
            nm = 0;
            for (int i2 = i; i2 < n; i2++) {
                int prio = 0;
                for (int j = 0; j < n; j++) {
                    int c = strcmp(in[j].date, in[i2].date);
                    prio += c < 0 || (c == 0 && j < i2);
                }
                for (int k2 = 0; k2 < in[i2].nranges; k2++)
                    if (same_shape(&in[i2].range[k2], r))
                        m[nm++] = (mrange){&in[i2].range[k2], i2, prio};
            }
            rc = merge_shape(&g, m, nm);
        }
    }
    free(m);
    if (rc != TRD_OK)
        goto nomem;
    *conflicts = g.conf;
    *nconflicts = g.nconf;
    return TRD_OK;
nomem:
    free(g.conf);
    trd_wisdom_free(out);
    trd_diag_error(d, (trd_loc){in[0].file ? in[0].file : "wisdom", 0, 0}, "out of memory");
    return TRD_ERR_NOMEM;
}

/* ---- Writer ------------------------------------------------------------------ */

static void put_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\')
            fprintf(f, "\\%c", *p);
        else if (*p < 0x20 || *p == 0x7f)
            fprintf(f, "\\x%02x", *p);
        else
            fputc(*p, f);
    }
    fputc('"', f);
}

int trd_wisdom_write(FILE *f, const trd_wisdom *w)
{
    fprintf(f, "treeduce-wisdom %d\nmachine ", TRD_WISDOM_VERSION);
    put_string(f, w->machine);
    fprintf(f, "\ndigest %s\nmpi ", w->digest);
    put_string(f, w->mpi);
    fprintf(f, "\ndate %s\nranks %d\nhosts", w->date, w->nranks);
    for (int i = 0; i < w->nranks; i++) {
        fputc(' ', f);
        put_string(f, w->hosts[i]);
    }
    fprintf(f, "\nbudget %.17g %d\n", w->budget_s, w->complete ? 1 : 0);
    fprintf(f, "# range COLL NODES PPN FROM BELOW ALG US RUNNER RUNNER_US\n"
               "# check BYTES ALG ALG_US MODEL MODEL_US MPI_US NOISE VERDICT\n");
    for (int i = 0; i < w->nranges; i++) {
        const trd_wisdom_range *r = &w->range[i];
        fprintf(f, "range %s %d %d %zu ", trd_coll_name(r->coll), r->nnodes, r->ppn, r->from);
        if (r->below == SIZE_MAX)
            fputs("-", f);
        else
            fprintf(f, "%zu", r->below);
        fprintf(f, " %s %.17g %s %.17g\n", r->alg, r->us, r->runner[0] ? r->runner : "-",
                r->runner[0] ? r->runner_us : 0.0);
        for (int k = 0; k < r->ncheck && k < TRD_WISDOM_MAX_CHECKS; k++) {
            const trd_wisdom_point *q = &r->check[k];
            const char *v = trd_wisdom_verdict_name(q->verdict);
            fprintf(f, "check %zu %s %.17g %s %.17g %.17g %.17g %s\n", q->bytes, q->alg, q->alg_us,
                    q->model, q->model_us, q->mpi_us, q->noise, v ? v : "kept");
        }
    }
    fputs("end\n", f);
    return ferror(f) ? TRD_ERR_IO : TRD_OK;
}

void trd_wisdom_free(trd_wisdom *w)
{
    free(w->hosts);
    free(w->range);
    free(w->source);
    memset(w, 0, sizeof *w);
}
