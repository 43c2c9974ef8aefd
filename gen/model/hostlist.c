/* Slurm-style host lists: "n[0-3,7],gpu[00-02],login". */
#include "topo.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct list {
    char **v;
    int n, cap;
};

static int push(struct list *l, const char *prefix, size_t plen, const char *num,
                const char *suffix)
{
    if (l->n == l->cap) {
        int ncap = l->cap ? 2 * l->cap : 16;
        char **nv = realloc(l->v, (size_t)ncap * sizeof(char *));
        if (!nv)
            return TRD_ERR_NOMEM;
        l->v = nv;
        l->cap = ncap;
    }
    size_t len = plen + strlen(num) + strlen(suffix) + 1;
    char *s = malloc(len);
    if (!s)
        return TRD_ERR_NOMEM;
    snprintf(s, len, "%.*s%s%s", (int)plen, prefix, num, suffix);
    l->v[l->n++] = s;
    return TRD_OK;
}

/* An error at byte pos of the expression: TRD_ERR_INPUT with msg. */
static int hostlist_error(char *err, size_t errlen, int *errpos, int pos, const char *msg)
{
    trd_errf(err, errlen, "%s", msg);
    if (errpos)
        *errpos = pos;
    return TRD_ERR_INPUT;
}

/* Out of memory: TRD_ERR_NOMEM, said as such. */
static int hostlist_nomem(char *err, size_t errlen, int *errpos)
{
    hostlist_error(err, errlen, errpos, 0, "out of memory");
    return TRD_ERR_NOMEM;
}

/* The host number of digits a..a+len: 0, or -1 when it does not fit a long. */
static int host_number(const char *a, size_t len, long *v)
{
    char buf[32];
    if (len >= sizeof buf)
        return -1;
    memcpy(buf, a, len);
    buf[len] = '\0';
    errno = 0;
    *v = strtol(buf, NULL, 10);
    return errno == ERANGE ? -1 : 0;
}

static int is_name_char(int c)
{
    return isalnum(c) || c == '_' || c == '-' || c == '.';
}

int trd_hostlist_expand(const char *expr, char ***names, int *n, char *err, size_t errlen,
                        int *errpos)
{
    struct list l = {0};
    const char *p = expr;
    int rc = TRD_OK;
    while (*p) {
        const char *start = p;
        while (is_name_char((unsigned char)*p))
            p++;
        size_t plen = (size_t)(p - start);
        if (*p == '[') {
            const char *open = p++;
            const char *close = strchr(p, ']');
            if (!close) {
                rc = hostlist_error(err, errlen, errpos, (int)(open - expr),
                                    "expected ']' in host range");
                goto out;
            }
            /* Suffix after ']' up to the next ',' (no nested ranges). */
            const char *sfx = close + 1, *se = sfx;
            while (is_name_char((unsigned char)*se))
                se++;
            char suffix[256];
            snprintf(suffix, sizeof suffix, "%.*s", (int)(se - sfx), sfx);
            while (p < close) {
                const char *a = p;
                while (p < close && isdigit((unsigned char)*p))
                    p++;
                if (p == a) {
                    rc = hostlist_error(err, errlen, errpos, (int)(p - expr),
                                        "expected a number in host range");
                    goto out;
                }
                int width = (int)(p - a);
                long lo, hi;
                if (host_number(a, (size_t)(p - a), &lo)) {
                    rc = hostlist_error(err, errlen, errpos, (int)(a - expr),
                                        "host number too large");
                    goto out;
                }
                hi = lo;
                if (*p == '-') {
                    const char *b = ++p;
                    while (p < close && isdigit((unsigned char)*p))
                        p++;
                    if (p == b) {
                        rc = hostlist_error(err, errlen, errpos, (int)(p - expr),
                                            "expected a number after '-' in host range");
                        goto out;
                    }
                    if (host_number(b, (size_t)(p - b), &hi)) {
                        rc = hostlist_error(err, errlen, errpos, (int)(b - expr),
                                            "host number too large");
                        goto out;
                    }
                    if (hi < lo) {
                        rc = hostlist_error(err, errlen, errpos, (int)(a - expr),
                                            "host range goes downwards");
                        goto out;
                    }
                    if (hi - lo >= TRD_MAX_NODES) {
                        rc = hostlist_error(err, errlen, errpos, (int)(a - expr),
                                            "host range too large");
                        goto out;
                    }
                }
                if (p < close && *p != ',') {
                    rc = hostlist_error(err, errlen, errpos, (int)(p - expr),
                                        "expected ',', '-' or ']' in host range");
                    goto out;
                }
                if (*p == ',')
                    p++;
                if (hi - lo >= TRD_MAX_NODES - l.n) {
                    rc = hostlist_error(err, errlen, errpos, (int)(a - expr), "host list too long");
                    goto out;
                }
                /* lo..hi inclusive without stepping past hi (hi may be LONG_MAX) */
                for (long i = lo;; i++) {
                    char num[32];
                    snprintf(num, sizeof num, "%0*ld", width, i);
                    if (push(&l, start, plen, num, suffix)) {
                        rc = hostlist_nomem(err, errlen, errpos);
                        goto out;
                    }
                    if (i == hi)
                        break;
                }
            }
            p = se;
        } else {
            if (plen == 0) {
                rc = hostlist_error(err, errlen, errpos, (int)(p - expr), "expected a host name");
                goto out;
            }
            if (l.n >= TRD_MAX_NODES) {
                rc = hostlist_error(err, errlen, errpos, (int)(start - expr), "host list too long");
                goto out;
            }
            if (push(&l, start, plen, "", "")) {
                rc = hostlist_nomem(err, errlen, errpos);
                goto out;
            }
        }
        if (*p == ',') {
            p++;
            if (!*p) {
                rc = hostlist_error(err, errlen, errpos, (int)(p - expr),
                                    "expected a host name after ','");
                goto out;
            }
        } else if (*p) {
            rc = hostlist_error(err, errlen, errpos, (int)(p - expr),
                                "unexpected character in host list");
            goto out;
        }
    }
    if (l.n == 0)
        rc = hostlist_error(err, errlen, errpos, 0, "expected a host name");
out:
    if (rc) {
        trd_hostlist_free(l.v, l.n);
        return rc;
    }
    *names = l.v;
    *n = l.n;
    return TRD_OK;
}

void trd_hostlist_free(char **names, int n)
{
    for (int i = 0; i < n; i++)
        free(names[i]);
    free(names);
}
