/* The RM schedule language [RM §4.2]: the lexer and checker of the schedule
 * strings, their formatter, and the default factoriser (trd_rm_default,
 * trd_rm_default_first) [RM §4.1, MPICH §4].  The grammar and the meaning of
 * every token are in trd_rm.h; allreduce_rm.c gives each rank its steps and
 * plans them.  Pure C, no MPI.
 */
#include "algo.h"
#include "trd_rm.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

/* Numbers in the text saturate here (far above any count of ranks). */
#define NUM_CAP 1000000000LL
/* Products of bases saturate here; a product this large is "more than n". */
#define PROD_CAP (1LL << 40)

/* ---- Messages -------------------------------------------------------------- */

/* "s" after a count other than 1 */
static const char *plural(long long x)
{
    return x == 1 ? "" : "s";
}

/* The text of one token, e.g. "c2m2". */
static int token_text(const trd_rm_token *t, char *buf, size_t len)
{
    switch (t->kind) {
    case TRD_RM_A:
        return snprintf(buf, len, "a%d", t->base);
    case TRD_RM_C:
    case TRD_RM_E:
        return snprintf(buf, len, "%c%dm%d", t->kind == TRD_RM_C ? 'c' : 'e', t->arg, t->base);
    default:
        return snprintf(buf, len, "%c%dg%da%d", t->kind == TRD_RM_M ? 'm' : 'n', t->arg, t->group,
                        t->base);
    }
}

/* ---- Tokens ------------------------------------------------------------------ */

/* A decimal number at t[*pos] (saturating at NUM_CAP); 0 if there is no digit. */
static int number(const char *t, size_t *pos, long long *val)
{
    size_t p = *pos;
    long long v = 0;
    if (t[p] < '0' || t[p] > '9')
        return 0;
    for (; t[p] >= '0' && t[p] <= '9'; p++)
        if (v < NUM_CAP)
            v = v * 10 + (t[p] - '0');
    *val = v < NUM_CAP ? v : NUM_CAP;
    *pos = p;
    return 1;
}

/* The base after the letter `after`: 2..TRD_RM_MAX_BASE. */
static int lex_base(const char *t, size_t *pos, char after, int *base, char *err, size_t errlen)
{
    size_t col = *pos + 1;
    long long v;
    if (!number(t, pos, &v) || v < 2) {
        trd_errf(err, errlen, "column %zu: expected a base >= 2 after '%c'", col, after);
        return -1;
    }
    if (v > TRD_RM_MAX_BASE) {
        trd_errf(err, errlen, "column %zu: base %lld is above %d", col, v, TRD_RM_MAX_BASE);
        return -1;
    }
    *base = (int)v;
    return 0;
}

/* One token starting at t[*pos] (not a separator, not the end). */
static int lex_token(const char *t, size_t *pos, trd_rm_token *tok, char *err, size_t errlen)
{
    size_t p = *pos, col;
    unsigned char ch = (unsigned char)t[p++];
    long long v;
    memset(tok, 0, sizeof *tok);
    switch (ch) {
    case 'a':
        tok->kind = TRD_RM_A;
        if (lex_base(t, &p, 'a', &tok->base, err, errlen))
            return -1;
        break;
    case 'c':
    case 'e':
        tok->kind = ch == 'c' ? TRD_RM_C : TRD_RM_E;
        col = p + 1;
        if (!number(t, &p, &v) || v < 1) {
            trd_errf(err, errlen, "column %zu: expected a threshold >= 1 after '%c'", col, ch);
            return -1;
        }
        if (v >= NUM_CAP) {
            trd_errf(err, errlen, "column %zu: threshold above %lld", col, NUM_CAP - 1);
            return -1;
        }
        tok->arg = (int)v;
        if (t[p] != 'm') {
            trd_errf(err, errlen, "column %zu: expected 'm' after the threshold of '%c'", p + 1,
                     ch);
            return -1;
        }
        p++;
        if (lex_base(t, &p, 'm', &tok->base, err, errlen))
            return -1;
        break;
    case 'm':
    case 'n':
        tok->kind = ch == 'm' ? TRD_RM_M : TRD_RM_N;
        col = p + 1;
        if (!number(t, &p, &v) || v < 1) {
            trd_errf(err, errlen,
                     "column %zu: expected a number of remaining ranks >= 1 after '%c'", col, ch);
            return -1;
        }
        if (v > TRD_RM_MAX_REMAIN) {
            trd_errf(err, errlen, "column %zu: %lld remaining ranks are more than %d", col, v,
                     TRD_RM_MAX_REMAIN);
            return -1;
        }
        tok->arg = (int)v;
        if (t[p] != 'g') {
            trd_errf(err, errlen, "column %zu: expected 'g' after the remaining ranks of '%c'",
                     p + 1, ch);
            return -1;
        }
        col = ++p + 1;
        if (!number(t, &p, &v)) {
            trd_errf(err, errlen, "column %zu: expected a group index after 'g'", col);
            return -1;
        }
        if (v >= NUM_CAP) {
            trd_errf(err, errlen, "column %zu: group index above %lld", col, NUM_CAP - 1);
            return -1;
        }
        tok->group = (int)v;
        if (t[p] != 'a') {
            trd_errf(err, errlen, "column %zu: expected 'a' after the group index", p + 1);
            return -1;
        }
        p++;
        if (lex_base(t, &p, 'a', &tok->base, err, errlen))
            return -1;
        break;
    default:
        if (isprint(ch))
            trd_errf(err, errlen,
                     "column %zu: expected a stage 'a', 'c', 'e', 'm' or 'n', found '%c'", *pos + 1,
                     ch);
        else
            trd_errf(err, errlen,
                     "column %zu: expected a stage 'a', 'c', 'e', 'm' or 'n', found byte 0x%02x",
                     *pos + 1, ch);
        return -1;
    }
    *pos = p;
    return 0;
}

/* ---- Structure ------------------------------------------------------------------ */

/* Checks the tokens of a schedule against the grammar for s->n ranks and
 * fills the derived fields. */
typedef struct checker {
    trd_rm_schedule *s;
    const int *col; /* 1-based column of each token, or NULL (built, not parsed) */
    int end;        /* column just past the text */
    int i;          /* next token */
    char *err;
    size_t errlen;
} checker;

static int column(const checker *k, int i)
{
    if (!k->col)
        return 0;
    return i < k->s->ntokens ? k->col[i] : k->end;
}

static void derive(trd_rm_token *t, int ranks, long long stride, int remain, int outer)
{
    t->ranks = ranks;
    t->stride = (int)stride;
    t->remain = remain;
    t->outer = outer;
}

static long long times(long long prod, int base)
{
    prod *= base;
    return prod < PROD_CAP ? prod : PROD_CAP;
}

/* "multiply to P, not N ranks" with P saturated */
static void product_text(long long prod, int n, char *buf, size_t len)
{
    if (prod >= PROD_CAP)
        snprintf(buf, len, "more than %lld, not %d rank%s", PROD_CAP, n, plural(n));
    else
        snprintf(buf, len, "%lld, not %d rank%s", prod, n, plural(n));
}

static int check_level(checker *k, int n, int outer);

/* cTmB level(n - T + T/B) eTmB */
static int check_collapse(checker *k, int n, int outer)
{
    trd_rm_schedule *s = k->s;
    int ci = k->i++;
    trd_rm_token *c = &s->tok[ci];
    int T = c->arg, B = c->base;
    char ct[48], et[48], ft[48];
    token_text(c, ct, sizeof ct);
    if (T % B) {
        trd_errf(k->err, k->errlen,
                 "column %d: threshold %d of '%s' is not a multiple of its base %d", column(k, ci),
                 T, ct, B);
        return -1;
    }
    if (T > n) {
        trd_errf(k->err, k->errlen,
                 "column %d: threshold %d of '%s' is above the %d rank%s of its level",
                 column(k, ci), T, ct, n, plural(n));
        return -1;
    }
    derive(c, n, 0, 0, outer);
    if (check_level(k, n - T + T / B, ci))
        return -1;
    snprintf(et, sizeof et, "e%dm%d", T, B);
    if (k->i >= s->ntokens) {
        trd_errf(k->err, k->errlen, "column %d: expected '%s' to close '%s'", column(k, k->i), et,
                 ct);
        return -1;
    }
    trd_rm_token *e = &s->tok[k->i];
    token_text(e, ft, sizeof ft);
    if (e->kind != TRD_RM_E) {
        trd_errf(k->err, k->errlen, "column %d: expected '%s' to close '%s', found '%s'",
                 column(k, k->i), et, ct, ft);
        return -1;
    }
    if (e->arg != T || e->base != B) {
        trd_errf(k->err, k->errlen, "column %d: '%s' does not close '%s'", column(k, k->i), ft, ct);
        return -1;
    }
    derive(e, n, 0, 0, outer);
    k->i++;
    return 0;
}

/* mRgGaB a-stages nRgGaB */
static int check_merge(checker *k, int n, int outer)
{
    trd_rm_schedule *s = k->s;
    int mi = k->i++;
    trd_rm_token *m = &s->tok[mi];
    int R = m->arg, H = n - R;
    char mt[48], nt[48], pt[64];
    token_text(m, mt, sizeof mt);
    if (H < 2) {
        trd_errf(k->err, k->errlen,
                 "column %d: '%s' leaves fewer than 2 of the %d rank%s of its level "
                 "to merge into",
                 column(k, mi), mt, n, plural(n));
        return -1;
    }
    derive(m, n, 1, R, outer);
    long long prod = m->base;
    while (k->i < s->ntokens && s->tok[k->i].kind == TRD_RM_A) {
        trd_rm_token *a = &s->tok[k->i++];
        derive(a, n, prod < NUM_CAP ? prod : 0, R, outer);
        prod = times(prod, a->base);
    }
    if (k->i >= s->ntokens) {
        trd_errf(k->err, k->errlen, "column %d: expected an 'n' stage to close '%s'",
                 column(k, k->i), mt);
        return -1;
    }
    trd_rm_token *t = &s->tok[k->i];
    token_text(t, nt, sizeof nt);
    if (t->kind != TRD_RM_N) {
        trd_errf(k->err, k->errlen, "column %d: expected an 'n' stage to close '%s', found '%s'",
                 column(k, k->i), mt, nt);
        return -1;
    }
    if (t->arg != R) {
        trd_errf(k->err, k->errlen, "column %d: '%s' does not close '%s'", column(k, k->i), nt, mt);
        return -1;
    }
    derive(t, n, prod < NUM_CAP ? prod : 0, R, outer);
    prod = times(prod, t->base);
    k->i++;
    if (prod != H) {
        product_text(prod, H, pt, sizeof pt);
        trd_errf(k->err, k->errlen, "column %d: the bases from '%s' to '%s' multiply to %s",
                 column(k, mi), mt, nt, pt);
        return -1;
    }
    if (m->group >= H / m->base) {
        trd_errf(k->err, k->errlen,
                 "column %d: group %d of '%s' is out of range: its stage has %d group%s",
                 column(k, mi), m->group, mt, H / m->base, plural(H / m->base));
        return -1;
    }
    if (t->group >= H / t->base) {
        trd_errf(k->err, k->errlen,
                 "column %d: group %d of '%s' is out of range: its stage has %d group%s",
                 column(k, k->i - 1), t->group, nt, H / t->base, plural(H / t->base));
        return -1;
    }
    return 0;
}

/* level(n); outer is the cTmB around it or -1 for the whole schedule */
static int check_level(checker *k, int n, int outer)
{
    trd_rm_schedule *s = k->s;
    trd_rm_token *t = k->i < s->ntokens ? &s->tok[k->i] : NULL;
    char tt[48], ct[48], pt[64];
    if (t && t->kind == TRD_RM_C)
        return check_collapse(k, n, outer);
    if (t && t->kind == TRD_RM_M)
        return check_merge(k, n, outer);
    int first = k->i;
    long long prod = 1;
    while (k->i < s->ntokens && s->tok[k->i].kind == TRD_RM_A) {
        trd_rm_token *a = &s->tok[k->i++];
        derive(a, n, prod < NUM_CAP ? prod : 0, 0, outer);
        prod = times(prod, a->base);
    }
    if (prod == n)
        return 0;
    if (t)
        token_text(t, tt, sizeof tt);
    if (outer >= 0)
        token_text(&s->tok[outer], ct, sizeof ct);
    if (k->i == first && outer < 0) { /* nothing for the whole schedule */
        if (!t)
            trd_errf(k->err, k->errlen, "empty schedule for %d ranks", n);
        else
            trd_errf(k->err, k->errlen, "column %d: '%s' closes no '%c' stage", column(k, first),
                     tt, t->kind == TRD_RM_E ? 'c' : 'm');
    } else if (k->i == first) {
        if (!t)
            trd_errf(k->err, k->errlen, "column %d: expected stages for the %d ranks inside '%s'",
                     column(k, first), n, ct);
        else
            trd_errf(k->err, k->errlen,
                     "column %d: expected stages for the %d ranks inside '%s', found '%s'",
                     column(k, first), n, ct, tt);
    } else {
        product_text(prod, n, pt, sizeof pt);
        if (outer < 0)
            trd_errf(k->err, k->errlen, "the bases multiply to %s", pt);
        else
            trd_errf(k->err, k->errlen, "column %d: the bases inside '%s' multiply to %s",
                     column(k, first), ct, pt);
    }
    return -1;
}

/* The whole schedule: level(s->n) and nothing after it. */
static int check(trd_rm_schedule *s, const int *col, int end, char *err, size_t errlen)
{
    checker k = {s, col, end, 0, err, errlen};
    char tt[48];
    if (check_level(&k, s->n, -1))
        return -1;
    if (k.i < s->ntokens) {
        const trd_rm_token *t = &s->tok[k.i];
        token_text(t, tt, sizeof tt);
        if (t->kind == TRD_RM_E || t->kind == TRD_RM_N)
            trd_errf(err, errlen, "column %d: '%s' closes no '%c' stage", column(&k, k.i), tt,
                     t->kind == TRD_RM_E ? 'c' : 'm');
        else
            trd_errf(err, errlen, "column %d: '%s' follows a complete schedule for %d rank%s",
                     column(&k, k.i), tt, s->n, plural(s->n));
        return -1;
    }
    return 0;
}

int trd_rm_parse(const char *text, int n, trd_rm_schedule *out, char *err, size_t errlen)
{
    int col[TRD_RM_MAX_TOKENS];
    size_t p = 0;
    memset(out, 0, sizeof *out);
    if (err && errlen)
        err[0] = '\0';
    if (!text)
        text = "";
    if (n < 1) {
        trd_errf(err, errlen, "a schedule needs at least 1 rank, not %d", n);
        return TRD_ERR_INPUT;
    }
    out->n = n;
    for (;;) {
        while (text[p] == ',' || text[p] == ' ' || text[p] == '\t')
            p++;
        if (!text[p])
            break;
        if (out->ntokens == TRD_RM_MAX_TOKENS) {
            trd_errf(err, errlen, "column %zu: more than %d stages", p + 1, TRD_RM_MAX_TOKENS);
            goto bad;
        }
        col[out->ntokens] = (int)(p + 1);
        if (lex_token(text, &p, &out->tok[out->ntokens], err, errlen))
            goto bad;
        out->ntokens++;
    }
    if (check(out, col, (int)(p + 1), err, errlen) == 0)
        return 0;
bad:
    memset(out, 0, sizeof *out);
    return TRD_ERR_INPUT;
}

/* ---- Format ---------------------------------------------------------------------- */

int trd_rm_format(const trd_rm_schedule *s, char *buf, size_t len)
{
    size_t total = 0;
    char one[48];
    if (buf && len)
        buf[0] = '\0';
    for (int i = 0; i < s->ntokens; i++) {
        int w = token_text(&s->tok[i], one, sizeof one);
        if (i > 0) {
            if (buf && total + 1 < len)
                buf[total] = ',', buf[total + 1] = '\0';
            total++;
        }
        if (buf && total < len)
            snprintf(buf + total, len - total, "%s", one);
        total += (size_t)w;
    }
    return (int)total;
}

int trd_rm_keeps_order(const trd_rm_schedule *s)
{
    for (int i = 0; i < s->ntokens; i++)
        if (s->tok[i].kind == TRD_RM_M || s->tok[i].kind == TRD_RM_N)
            return 0;
    return 1;
}

int trd_rm_nsteps(const trd_rm_schedule *s)
{
    return s->ntokens;
}

int trd_rm_max_recv(const trd_rm_schedule *s)
{
    int most = 0;
    for (int i = 0; i < s->ntokens; i++) {
        const trd_rm_token *t = &s->tok[i];
        int r = t->kind == TRD_RM_E   ? 1
                : t->kind == TRD_RM_M ? t->base - 1 + t->arg
                : t->kind == TRD_RM_N ? t->base
                                      : t->base - 1;
        if (r > most)
            most = r;
    }
    return most;
}

/* ---- Default schedule -------------------------------------------------------------- */

static int clamp_base(int maxbase)
{
    return maxbase < 2 ? 2 : maxbase > TRD_RM_MAX_BASE ? TRD_RM_MAX_BASE : maxbase;
}

/* Nonzero if x >= 1 has no prime factor above maxbase. */
static int smooth(long long x, int maxbase)
{
    for (int p = 2; p <= maxbase && x > 1; p++)
        while (x % p == 0)
            x /= p;
    return x == 1;
}

static int is_prime(int p)
{
    for (int q = 2; q * q <= p; q++)
        if (p % q == 0)
            return 0;
    return p >= 2;
}

/* The bases for x (smooth for maxbase): its primes, largest first, packed
 * first-fit into bins of product <= maxbase; bins in decreasing order. */
static int pack(int x, int maxbase, int *bases)
{
    int primes[32], np = 0, nb = 0;
    for (int p = maxbase; p >= 2; p--)
        while (is_prime(p) && x % p == 0) {
            primes[np++] = p;
            x /= p;
        }
    for (int i = 0; i < np; i++) {
        int b = 0;
        while (b < nb && bases[b] * primes[i] > maxbase)
            b++;
        if (b == nb)
            bases[nb++] = 1;
        bases[b] *= primes[i];
    }
    for (int i = 1; i < nb; i++) /* insertion sort, decreasing */
        for (int j = i; j > 0 && bases[j] > bases[j - 1]; j--) {
            int t = bases[j];
            bases[j] = bases[j - 1];
            bases[j - 1] = t;
        }
    return nb;
}

/* The largest x * (product of primes from pr[pi..np-1]) below lim, into *best. */
static void smooth_below(long long x, int pi, const int *pr, int np, long long lim, long long *best)
{
    if (x > *best)
        *best = x;
    for (int i = pi; i < np; i++)
        if (x * pr[i] < lim)
            smooth_below(x * pr[i], i, pr, np, lim, best);
}

/* The largest m < n with no prime factor above maxbase (n >= 2); m >= n/2
 * since a power of two lies in [n/2, n). */
static int largest_smooth_below(int n, int maxbase)
{
    static const int small[] = {2, 3, 5, 7};
    int np = 0;
    long long best = 1;
    while (np < 4 && small[np] <= maxbase)
        np++;
    /* the 7-smooth numbers are few: enumerate them; larger primes make smooth
     * numbers dense, so a scan down to that candidate is short */
    smooth_below(1, 0, small, np, n, &best);
    for (long long x = n - 1; maxbase > 7 && x > best; x--)
        if (smooth(x, maxbase))
            return (int)x;
    return (int)best;
}

static void add_token(trd_rm_schedule *s, int kind, int base, int arg)
{
    trd_rm_token *t = &s->tok[s->ntokens++];
    memset(t, 0, sizeof *t);
    t->kind = kind;
    t->base = base;
    t->arg = arg;
}

/* Tokens built here are valid by construction; derive their fields. */
static void finish(trd_rm_schedule *s)
{
    if (check(s, NULL, 0, NULL, 0)) /* cannot happen; never hand out a bad schedule */
        s->ntokens = 0;
}

void trd_rm_default(int n, int maxbase, trd_rm_schedule *out)
{
    int bases[32], nb, T = 0;
    maxbase = clamp_base(maxbase);
    if (n < 1)
        n = 1;
    memset(out, 0, sizeof *out);
    out->n = n;
    if (n == 1)
        return;
    int m = n;
    if (!smooth(n, maxbase)) {
        m = largest_smooth_below(n, maxbase);
        T = 2 * (n - m);
        add_token(out, TRD_RM_C, 2, T);
    }
    nb = pack(m, maxbase, bases);
    for (int i = 0; i < nb; i++)
        add_token(out, TRD_RM_A, bases[i], 0);
    if (T)
        add_token(out, TRD_RM_E, 2, T);
    finish(out);
}

void trd_rm_default_first(int n, int first, int maxbase, trd_rm_schedule *out)
{
    int bases[32], nb;
    maxbase = clamp_base(maxbase);
    if (n < 2 || first < 2 || first > TRD_RM_MAX_BASE || n % first != 0 ||
        !smooth(n / first, maxbase)) {
        trd_rm_default(n, maxbase, out);
        return;
    }
    memset(out, 0, sizeof *out);
    out->n = n;
    add_token(out, TRD_RM_A, first, 0);
    nb = pack(n / first, maxbase, bases);
    for (int i = 0; i < nb; i++)
        add_token(out, TRD_RM_A, bases[i], 0);
    finish(out);
}
