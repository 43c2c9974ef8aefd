/* Located error messages with a quoted source line and a caret (see diag.h). */
#include "diag.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

struct trd_source {
    char *file;
    char *text;
    size_t len;
};

struct trd_msg {
    char *text;
    trd_loc loc;
};

struct trd_diag {
    struct trd_msg *msgs;
    int nmsgs, capmsgs;
    char **names;
    int nnames, capnames;
    struct trd_source *srcs;
    int nsrcs, capsrcs;
};

int trd_diag_create(trd_diag **d)
{
    *d = calloc(1, sizeof(trd_diag));
    return *d ? TRD_OK : TRD_ERR_NOMEM;
}

void trd_diag_destroy(trd_diag *d)
{
    if (!d)
        return;
    for (int i = 0; i < d->nmsgs; i++)
        free(d->msgs[i].text);
    for (int i = 0; i < d->nnames; i++)
        free(d->names[i]);
    for (int i = 0; i < d->nsrcs; i++) {
        free(d->srcs[i].file);
        free(d->srcs[i].text);
    }
    free(d->msgs);
    free(d->names);
    free(d->srcs);
    free(d);
}

const char *trd_diag_intern(trd_diag *d, const char *file)
{
    for (int i = 0; i < d->nnames; i++)
        if (strcmp(d->names[i], file) == 0)
            return d->names[i];
    char *c = strdup(file);
    if (!c || trd__grow((void **)&d->names, &d->capnames, d->nnames + 1, sizeof(char *))) {
        free(c);
        return "<oom>";
    }
    d->names[d->nnames++] = c;
    return c;
}

void trd_diag_add_source(trd_diag *d, const char *file, const char *text, size_t len)
{
    if (trd__grow((void **)&d->srcs, &d->capsrcs, d->nsrcs + 1, sizeof(struct trd_source)))
        return;
    struct trd_source *s = &d->srcs[d->nsrcs];
    s->file = strdup(file);
    s->text = malloc(len + 1);
    if (!s->file || !s->text) {
        free(s->file);
        free(s->text);
        return;
    }
    memcpy(s->text, text, len);
    s->text[len] = '\0';
    s->len = len;
    d->nsrcs++;
}

void trd_diag_verror(trd_diag *d, trd_loc loc, const char *fmt, va_list ap)
{
    char body[1024];
    vsnprintf(body, sizeof body, fmt, ap);
    /* a name quoted from the input never moves a terminal's cursor */
    for (char *c = body; *c; c++)
        if ((unsigned char)*c < 0x20 || *c == 0x7f)
            *c = '?';
    char head[1200];
    const char *file = loc.file ? loc.file : "<input>";
    if (loc.line > 0)
        snprintf(head, sizeof head, "%s:%d:%d: error: %s", file, loc.line,
                 loc.col > 0 ? loc.col : 1, body);
    else
        snprintf(head, sizeof head, "%s: error: %s", file, body);
    char *m = strdup(head);
    if (!m || trd__grow((void **)&d->msgs, &d->capmsgs, d->nmsgs + 1, sizeof(struct trd_msg))) {
        free(m);
        return;
    }
    d->msgs[d->nmsgs++] = (struct trd_msg){m, loc};
}

void trd_diag_error(trd_diag *d, trd_loc loc, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    trd_diag_verror(d, loc, fmt, ap);
    va_end(ap);
}

int trd_diag_count(const trd_diag *d)
{
    return d->nmsgs;
}

const char *trd_diag_message(const trd_diag *d, int i)
{
    return (i >= 0 && i < d->nmsgs) ? d->msgs[i].text : NULL;
}

/* Offsets of the lines of source s, one past the last line's end at the
 * end (*n lines); NULL when out of memory.  Built once per print, so that
 * quoting many messages of a large file stays linear. */
static size_t *line_starts(const struct trd_source *s, int *n)
{
    int lines = 1;
    for (const char *p = s->text; (p = memchr(p, '\n', s->len - (size_t)(p - s->text))); p++)
        lines++;
    size_t *at = malloc(((size_t)lines + 1) * sizeof *at);
    if (!at)
        return NULL;
    int k = 0;
    at[k++] = 0;
    for (size_t i = 0; i < s->len; i++)
        if (s->text[i] == '\n')
            at[k++] = i + 1;
    at[k] = s->len + 1;
    *n = lines;
    return at;
}

/* The text of line `line` (1-based) of file, or NULL; *len gets its length.
 * starts and nlines cache line_starts() per source. */
static const char *source_line(const trd_diag *d, size_t **starts, int *nlines, const char *file,
                               int line, size_t *len)
{
    for (int i = 0; i < d->nsrcs; i++) {
        if (strcmp(d->srcs[i].file, file) != 0)
            continue;
        if (!starts[i] && !(starts[i] = line_starts(&d->srcs[i], &nlines[i])))
            return NULL;
        if (line > nlines[i])
            return NULL;
        size_t from = starts[i][line - 1], to = starts[i][line] - 1;
        if (from >= d->srcs[i].len && line > 1)
            return NULL;
        *len = to - from;
        return d->srcs[i].text + from;
    }
    return NULL;
}

void trd_diag_print(const trd_diag *d, FILE *f)
{
    size_t **starts = calloc((size_t)d->nsrcs + 1, sizeof *starts);
    int *nlines = calloc((size_t)d->nsrcs + 1, sizeof *nlines);
    for (int i = 0; i < d->nmsgs; i++) {
        fprintf(f, "%s\n", d->msgs[i].text);
        trd_loc l = d->msgs[i].loc;
        size_t len;
        const char *src = starts && nlines && l.file && l.line > 0
                              ? source_line(d, starts, nlines, l.file, l.line, &len)
                              : NULL;
        if (!src)
            continue;
        /* the line, a control character shown as '?' (one byte, one column, as
         * the caret counts), then the caret under the column, tabs kept; in few
         * writes (stderr has no buffer) */
        char buf[256];
        size_t w = 0, k = l.col > 1 ? (size_t)l.col - 1 : 0;
        if (len > 0 && src[len - 1] == '\r')
            len--;
        fputs("  ", f);
        for (size_t c = 0; c < len; c++) {
            unsigned char b = (unsigned char)src[c];
            buf[w++] = (char)((b < 0x20 && b != '\t') || b == 0x7f ? '?' : b);
            if (w == sizeof buf || c + 1 == len) {
                fwrite(buf, 1, w, f);
                w = 0;
            }
        }
        fputs("\n  ", f);
        for (size_t c = 0; c < k && c < len; c++) {
            buf[w++] = src[c] == '\t' ? '\t' : ' ';
            if (w == sizeof buf) {
                fwrite(buf, 1, w, f);
                w = 0;
            }
        }
        fprintf(f, "%.*s^\n", (int)w, buf);
    }
    for (int i = 0; starts && i < d->nsrcs; i++)
        free(starts[i]);
    free(starts);
    free(nlines);
}
