/* Wisdom files (wisdom.h, treeduce-wisdom(5)): the digest of a machine's
 * description, the reader, the check against a description, the writer.
 * The reader takes a line at a time, the header's keywords in their fixed
 * order, then the ranges and "end"; it stops at the first error, so that
 * nothing is ever half-read. */
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
 * none where none is allowed. */
static int read_alg(wctx *c, int coll, int none_ok, char *out, size_t cap)
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
        ok = trd_algo_parse(coll, spec, &params) && strlen(params) < TRD_PARAMS_MAX;
    }
    if (!ok) {
        char names[512], w[600];
        trd_algo_names(coll, names, sizeof names);
        snprintf(w, sizeof w, "an algorithm of %s (%s)%s", trd_coll_name(coll), names,
                 none_ok ? " or '-'" : "");
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
    if (read_alg(c, r.coll, 0, r.alg, sizeof r.alg) ||
        read_time(c, "a time in microseconds", &r.us) ||
        read_alg(c, r.coll, 1, r.runner, sizeof r.runner) ||
        read_time(c, "a time in microseconds", &r.runner_us))
        return -1;
    line_end(c);
    if (c->failed)
        return -1;

    /* A shape's ranges: together, in order, from 0, no gap, the last without end. */
    int same = prev && prev->coll == r.coll && prev->nnodes == r.nnodes && prev->ppn == r.ppn;
    if (same && prev->below != SIZE_MAX) {
        if (r.from != prev->below) {
            err(c, from_col,
                "expected %s %dx%d to go on from %zu (where its range before ends), got %zu",
                trd_coll_name(r.coll), r.nnodes, r.ppn, prev->below, r.from);
            return -1;
        }
    } else {
        if (prev && !same && prev->below != SIZE_MAX) {
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
        if (r.from != 0) {
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
        if (ver != TRD_WISDOM_VERSION) {
            err(c, v.col, "expected wisdom version %d, got version %ju", TRD_WISDOM_VERSION, ver);
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
            if (w->nranges && w->range[w->nranges - 1].below != SIZE_MAX) {
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
        if (!tok_is(&k, "range")) {
            expected(c, &k, "'range' or 'end'");
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
    fprintf(f, "# range COLL NODES PPN FROM BELOW ALG US RUNNER RUNNER_US\n");
    for (int i = 0; i < w->nranges; i++) {
        const trd_wisdom_range *r = &w->range[i];
        fprintf(f, "range %s %d %d %zu ", trd_coll_name(r->coll), r->nnodes, r->ppn, r->from);
        if (r->below == SIZE_MAX)
            fputs("-", f);
        else
            fprintf(f, "%zu", r->below);
        fprintf(f, " %s %.17g %s %.17g\n", r->alg, r->us, r->runner[0] ? r->runner : "-",
                r->runner[0] ? r->runner_us : 0.0);
    }
    fputs("end\n", f);
    return ferror(f) ? TRD_ERR_IO : TRD_OK;
}

void trd_wisdom_free(trd_wisdom *w)
{
    free(w->hosts);
    free(w->range);
    memset(w, 0, sizeof *w);
}
