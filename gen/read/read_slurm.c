/* Slurm topology.conf reader, in the format of one of three plugins:
 *
 *   topology/tree:   SwitchName=s0 Nodes=tux[0-3] LinkSpeed=100
 *                    SwitchName=s2 Switches=s[0-1]
 *   topology/block:  BlockName=b1 Nodes=n[1-32]
 *                    BlockName=b2 Nodes=n[33-64]
 *                    BlockSizes=32,64
 *   topology/ring:   RingName=r0 Nodes=n[01-08]
 *
 * One switch, block or ring per line, or the BlockSizes line; one plugin per
 * file (Slurm reads the file with the plugin slurm.conf names); keys are
 * case-insensitive; '#' starts a comment; a trailing backslash continues the
 * line ("Nodes=a[0-3],\" and an indented "b[0-3]" on the next line make one
 * host list).  Slurm's file carries no costs and no node shapes: switches get
 * the default link and nodes the default node type; LinkSpeed has no unit in
 * Slurm and is ignored.  Switches may be named in Switches= before their own
 * line.  Blocks and rings become switch trees as gen/read/slurm_plugins.c says,
 * once the whole file is read.
 */
#include "reader.h"
#include "readers.h"
#include "util.h"

#include <ctype.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Lines are read until this many messages; a file of garbage stops there. */
#define TRD_SLURM_MAX_ERRORS 100

/* One logical line with the file position of every byte. */
struct lline {
    char *s;
    int *line, *col;
    size_t n, cap;
};

static int push(struct lline *l, char c, int line, int col)
{
    if (l->n + 1 >= l->cap) {
        size_t ncap = l->cap ? 2 * l->cap : 256;
        char *s = realloc(l->s, ncap);
        if (s)
            l->s = s;
        int *ln = s ? realloc(l->line, ncap * sizeof(int)) : NULL;
        if (ln)
            l->line = ln;
        int *cl = ln ? realloc(l->col, ncap * sizeof(int)) : NULL;
        if (!cl)
            return -1;
        l->col = cl;
        l->cap = ncap;
    }
    l->s[l->n] = c;
    l->line[l->n] = line;
    l->col[l->n] = col;
    l->n++;
    l->s[l->n] = '\0';
    return 0;
}

/* Read the logical line starting at text[*pos] (physical line *lineno) into l,
 * without comments, and advance both past it.  A continued line is joined on
 * without its leading blanks, directly after a ',' or '=' (a list or value
 * goes on) and after one blank otherwise.  0 or -1 (out of memory). */
static int next_line(const char *text, size_t len, size_t *pos, int *lineno, struct lline *l)
{
    int cont = 0, cont_line = 0, cont_col = 0;
    l->n = 0;
    while (*pos < len) {
        size_t start = *pos, eol = start;
        while (eol < len && text[eol] != '\n')
            eol++;
        size_t end = start;
        while (end < eol && text[end] != '#')
            end++;
        int line = (*lineno)++;
        *pos = eol < len ? eol + 1 : eol;
        while (end > start &&
               (text[end - 1] == ' ' || text[end - 1] == '\t' || text[end - 1] == '\r'))
            end--;
        int more = end > start && text[end - 1] == '\\';
        if (more)
            end--;
        size_t i = start;
        if (cont) {
            while (i < end && (text[i] == ' ' || text[i] == '\t'))
                i++;
            if (l->n > 0 && i < end && l->s[l->n - 1] != ',' && l->s[l->n - 1] != '=' &&
                push(l, ' ', cont_line, cont_col))
                return -1;
        }
        for (; i < end; i++)
            if (push(l, text[i], line, (int)(i - start) + 1))
                return -1;
        if (!more)
            break;
        cont = 1;
        cont_line = line;
        cont_col = (int)(end - start) + 1;
    }
    return 0;
}

struct field {
    const char *key;
    size_t at, valat; /* offsets of the key and the value in the line */
    char *value;
    char **names; /* Nodes and Switches: the expanded host list */
    int n;
};

enum {
    F_SWITCHNAME,
    F_SWITCHES,
    F_NODES,
    F_LINKSPEED,
    F_BLOCKNAME,
    F_BLOCKSIZES,
    F_RINGNAME,
    F_MAX
};

static const char *const keys[F_MAX] = {"SwitchName", "Switches",   "Nodes",   "LinkSpeed",
                                        "BlockName",  "BlockSizes", "RingName"};

/* The plugin a file is written for, set by its first line. */
enum { K_NONE, K_TREE, K_BLOCK, K_RING };
static const char *const plugin[] = {"", "topology/tree", "topology/block", "topology/ring"};

/* What a file has told so far beyond its switches: blocks or rings (names
 * and node lists owned) and BlockSizes. */
struct state {
    int kind, kind_line;
    trd_slurm_group *groups;
    int ngroups, capgroups;
    long *sizes;
    trd_loc *size_locs;
    int nsizes, sizes_line;
};

/* Keys are case-insensitive, as in every Slurm configuration file. */
static int same_key(const char *key, const char *s, size_t len)
{
    if (strlen(key) != len)
        return 0;
    for (size_t i = 0; i < len; i++)
        if (tolower((unsigned char)key[i]) != tolower((unsigned char)s[i]))
            return 0;
    return 1;
}

static trd_loc at(const char *file, const struct lline *l, size_t i)
{
    if (i >= l->n) /* just past the end of the line */
        return (trd_loc){file, l->line[l->n - 1], l->col[l->n - 1] + 1};
    return (trd_loc){file, l->line[i], l->col[i]};
}

/* Expand the host list in field f; errors point at the offending character. */
static void expand(trd_diag *d, const char *file, const struct lline *l, struct field *f)
{
    char err[256];
    int errpos = 0;
    if (trd_hostlist_expand(f->value, &f->names, &f->n, err, sizeof err, &errpos) == 0)
        return;
    if (errpos < 0 || (size_t)errpos > strlen(f->value))
        errpos = 0;
    trd_diag_error(d, at(file, l, f->valat + (size_t)errpos), "%s", err);
}

/* Split the line into Key=Value fields f[]; *first gets the offset of the
 * first word (SIZE_MAX on a blank line).  Errors go to d.  0 or -1 (memory). */
static int split(trd_diag *d, const char *file, const struct lline *l, struct field *f,
                 size_t *first)
{
    *first = SIZE_MAX;
    for (size_t i = 0; i < l->n;) {
        if (l->s[i] == ' ' || l->s[i] == '\t' || l->s[i] == '\r') {
            i++;
            continue;
        }
        size_t tok = i, eq = SIZE_MAX;
        while (i < l->n && l->s[i] != ' ' && l->s[i] != '\t' && l->s[i] != '\r') {
            if (l->s[i] == '=' && eq == SIZE_MAX)
                eq = i;
            i++;
        }
        if (*first == SIZE_MAX)
            *first = tok;
        if (eq == SIZE_MAX) {
            trd_diag_error(d, at(file, l, tok), "expected Key=Value, got '%.*s'", (int)(i - tok),
                           l->s + tok);
            continue;
        }
        int klen = (int)(eq - tok), k = 0;
        while (k < F_MAX && !same_key(keys[k], l->s + tok, (size_t)klen))
            k++;
        if (k == F_MAX) {
            trd_diag_error(d, at(file, l, tok),
                           "unknown key '%.*s', expected SwitchName, Switches, Nodes, LinkSpeed, "
                           "BlockName, BlockSizes or RingName",
                           klen, l->s + tok);
        } else if (f[k].key) {
            trd_diag_error(d, at(file, l, tok), "duplicate key '%.*s'", klen, l->s + tok);
        } else if (eq + 1 == i) {
            trd_diag_error(d, at(file, l, eq + 1), "expected a value after '%.*s='", klen,
                           l->s + tok);
        } else {
            f[k].key = keys[k];
            f[k].at = tok;
            f[k].valat = eq + 1;
            f[k].value = malloc(i - eq);
            if (!f[k].value)
                return -1;
            memcpy(f[k].value, l->s + eq + 1, i - eq - 1);
            f[k].value[i - eq - 1] = '\0';
            if (k == F_NODES || k == F_SWITCHES)
                expand(d, file, l, &f[k]);
        }
    }
    return 0;
}

/* BlockSizes=30,120: the sizes into st.  TRD_OK or TRD_ERR_NOMEM. */
static int block_sizes(trd_diag *d, const char *file, const struct lline *l, const struct field *f,
                       struct state *st)
{
    const char *v = f->value;
    int n = 1;
    for (const char *p = v; *p; p++)
        n += *p == ',';
    if (!(st->sizes = calloc((size_t)n, sizeof *st->sizes)) ||
        !(st->size_locs = calloc((size_t)n, sizeof *st->size_locs)))
        return TRD_ERR_NOMEM;
    st->sizes_line = l->line[f->at];
    for (size_t i = 0;;) {
        const char *end;
        long x;
        trd__slurm_block_size(v + i, &x, &end);
        size_t j = (size_t)(end - v);
        trd_loc loc = at(file, l, f->valat + i);
        if (j == i || x == 0 || (v[j] != ',' && v[j] != '\0')) {
            size_t e = i;
            while (v[e] && v[e] != ',')
                e++;
            trd_diag_error(d, loc,
                           "expected a positive whole number of nodes in BlockSizes, got '%.*s'",
                           (int)(e - i), v + i);
            return TRD_OK;
        }
        st->size_locs[st->nsizes] = loc;
        st->sizes[st->nsizes++] = x;
        if (v[j] == '\0')
            return TRD_OK;
        i = j + 1;
    }
}

/* Keep the block or ring of a line (lead: F_BLOCKNAME or F_RINGNAME) in st.
 * TRD_OK or TRD_ERR_NOMEM. */
static int add_group(trd_diag *d, const char *file, const struct lline *l, struct field *f,
                     int lead, struct state *st)
{
    const char *what = lead == F_BLOCKNAME ? "block" : "ring";
    if (strpbrk(f[lead].value, "[],")) {
        trd_diag_error(d, at(file, l, f[lead].valat), "expected one %s name, got '%s'", what,
                       f[lead].value);
        return TRD_OK;
    }
    if (!f[F_NODES].key) {
        trd_diag_error(d, at(file, l, f[lead].at), "expected Nodes on a %s line", keys[lead]);
        return TRD_OK;
    }
    if (trd__grow((void **)&st->groups, &st->capgroups, st->ngroups + 1, sizeof *st->groups))
        return TRD_ERR_NOMEM;
    trd_slurm_group *g = &st->groups[st->ngroups];
    if (!(g->name = strdup(f[lead].value)))
        return TRD_ERR_NOMEM;
    g->loc = at(file, l, f[lead].valat);
    g->nodes_loc = at(file, l, f[F_NODES].valat);
    g->nodes = f[F_NODES].names; /* the state takes the list */
    g->n = f[F_NODES].n;
    f[F_NODES].names = NULL;
    st->ngroups++;
    return TRD_OK;
}

/* The leading key of a line and the keys that may go with it. */
static const struct {
    int lead, kind;
    unsigned allowed; /* bit k: key k */
} leads[] = {
    {F_SWITCHNAME, K_TREE, 1u << F_SWITCHES | 1u << F_NODES | 1u << F_LINKSPEED},
    {F_BLOCKNAME, K_BLOCK, 1u << F_NODES},
    {F_RINGNAME, K_RING, 1u << F_NODES},
    {F_BLOCKSIZES, K_BLOCK, 0},
};

/* Add the switch of one line with its nodes and child switches, or keep its
 * block, ring or BlockSizes in st.  A line with an error (errs: the message
 * count before split) adds nothing.  TRD_OK or TRD_ERR_NOMEM. */
static int add_line(trd_topo_t t, trd_diag *d, const char *file, const struct lline *l,
                    struct field *f, size_t first, int errs, struct state *st)
{
    int rc, sw, li = -1;
    for (int i = 0; i < (int)(sizeof leads / sizeof leads[0]); i++) {
        if (!f[leads[i].lead].key)
            continue;
        if (li < 0) {
            li = i;
            continue;
        }
        const struct field *a = &f[leads[li].lead], *b = &f[leads[i].lead];
        if (a->at > b->at) {
            const struct field *c = a;
            a = b;
            b = c;
        }
        trd_diag_error(d, at(file, l, b->at), "'%s' cannot share a line with '%s'", b->key, a->key);
        return TRD_OK;
    }
    if (li < 0) {
        /* A bad word may well have been meant as the SwitchName: said already. */
        if (trd_diag_count(d) == errs)
            trd_diag_error(d, at(file, l, first),
                           "expected SwitchName, BlockName, RingName or BlockSizes on the line");
        return TRD_OK;
    }
    int lead = leads[li].lead, kind = leads[li].kind;
    for (int k = 0; k < F_MAX; k++)
        if (f[k].key && k != lead && !(leads[li].allowed & (1u << k)))
            trd_diag_error(d, at(file, l, f[k].at), "'%s' does not belong on a %s line", f[k].key,
                           keys[lead]);
    if (st->kind != K_NONE && st->kind != kind)
        trd_diag_error(d, at(file, l, f[lead].at), "%s is %s, but line %d made this a %s file",
                       keys[lead], plugin[kind], st->kind_line, plugin[st->kind]);
    if (st->kind == K_NONE) {
        st->kind = kind;
        st->kind_line = l->line[f[lead].at];
    }
    if (trd_diag_count(d) != errs)
        return TRD_OK;
    if (lead == F_BLOCKSIZES) {
        if (st->sizes) {
            trd_diag_error(d, at(file, l, f[lead].at), "BlockSizes is already given at line %d",
                           st->sizes_line);
            return TRD_OK;
        }
        return block_sizes(d, file, l, &f[lead], st);
    }
    if (lead != F_SWITCHNAME)
        return add_group(d, file, l, f, lead, st);
    const char *name = f[F_SWITCHNAME].value;
    if (strpbrk(name, "[],")) {
        trd_diag_error(d, at(file, l, f[F_SWITCHNAME].valat), "expected one switch name, got '%s'",
                       name);
        return TRD_OK;
    }
    if (trd_diag_count(d) != errs)
        return TRD_OK;
    rc = trd_topo_add_switch(t, d, at(file, l, f[F_SWITCHNAME].valat), name, NULL, &sw);
    if (rc != TRD_OK)
        return rc == TRD_ERR_NOMEM ? rc : TRD_OK;
    /* A node attached twice is reported and the others still added. */
    const struct field *fn = &f[F_NODES], *fs = &f[F_SWITCHES];
    for (int i = 0; rc != TRD_ERR_NOMEM && i < fn->n; i++)
        rc = trd_topo_switch_add_node(t, d, at(file, l, fn->valat), sw, fn->names[i], NULL);
    for (int i = 0; rc != TRD_ERR_NOMEM && i < fs->n; i++)
        rc = trd_topo_switch_add_child(t, d, at(file, l, fs->valat), sw, fs->names[i]);
    return rc == TRD_ERR_NOMEM ? rc : TRD_OK;
}

static int parse_line(trd_topo_t t, trd_diag *d, const char *file, const struct lline *l,
                      struct state *st)
{
    struct field f[F_MAX];
    size_t first;
    int rc = TRD_ERR_NOMEM, errs = trd_diag_count(d);
    memset(f, 0, sizeof f);
    if (split(d, file, l, f, &first) == 0)
        rc = first == SIZE_MAX ? TRD_OK : add_line(t, d, file, l, f, first, errs, st);
    for (int k = 0; k < F_MAX; k++) {
        free(f[k].value);
        if (f[k].names)
            trd_hostlist_free(f[k].names, f[k].n);
    }
    return rc;
}

int trd_read_slurm_string(trd_topo_t t, trd_diag *d, const char *filename, const char *text,
                          size_t len)
{
    const char *file;
    int before = trd_diag_count(d), lineno = 1;
    int rc = trd__reader_begin(t, d, filename, &text, len, &file);
    if (rc != TRD_OK)
        return rc;
    struct lline l = {0};
    struct state st = {0};
    size_t pos = 0;
    while (pos < len && rc == TRD_OK) {
        if (trd_diag_count(d) - before >= TRD_SLURM_MAX_ERRORS) {
            trd_diag_error(d, (trd_loc){file, lineno, 1},
                           "too many errors; the rest of the file is not read");
            break;
        }
        if (next_line(text, len, &pos, &lineno, &l))
            rc = TRD_ERR_NOMEM;
        else if (l.n > 0)
            rc = parse_line(t, d, file, &l, &st);
    }
    if (rc == TRD_OK && trd_diag_count(d) == before && st.kind == K_BLOCK)
        rc = trd__slurm_blocks(t, d, st.groups, st.ngroups, st.sizes, st.size_locs, st.nsizes);
    else if (rc == TRD_OK && trd_diag_count(d) == before && st.kind == K_RING)
        rc = trd__slurm_rings(t, d, st.groups, st.ngroups);
    for (int i = 0; i < st.ngroups; i++) {
        free((char *)st.groups[i].name);
        trd_hostlist_free(st.groups[i].nodes, st.groups[i].n);
    }
    free(st.groups);
    free(st.sizes);
    free(st.size_locs);
    if (rc == TRD_ERR_INPUT)
        rc = TRD_OK; /* counted below */
    free(l.s);
    free(l.line);
    free(l.col);
    if (rc == TRD_OK && trd_diag_count(d) > before)
        rc = TRD_ERR_INPUT;
    return rc;
}

int trd_read_slurm(trd_topo_t t, trd_diag *d, const char *path)
{
    return trd__read_file(t, d, path, trd_read_slurm_string);
}
