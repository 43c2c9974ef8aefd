/* mpi_check.c - what test_allreduce.c and test_pieces.c have in common: the
 * datatypes and ops under test, random data, the comparison with the
 * reference, the standard's answer, filters and probing, the options, and
 * the checks pending agreement (mpi_check.h).
 */
#include "mpi_check.h"

#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <wchar.h>

/* ---- Datatypes ---------------------------------------------------------- */

/* clang-format off */
#define SIGNED_T(T) ((T)-1 < 1)
#define TINT(T, dt, g) {#dt, dt, K_INT, SIGNED_T(T) ? S_SINT : S_UINT, g, sizeof(T), sizeof(T), 0, 1, 1, 1}
#define TFLT(T, dt, s) {#dt, dt, K_FLOAT, s, G_FLOAT, sizeof(T), sizeof(T), 0, 1, 1, 1}
#define TCPX(T, dt, s) {#dt, dt, K_COMPLEX, s, G_COMPLEX, sizeof(T), 2 * sizeof(T), 0, 2, 2, 2}
#define TPAIR(S, dt, s) {#dt, dt, K_PAIR, s, G_PAIR, sizeof(((S *)0)->v), sizeof(S), offsetof(S, i), 1, 1, 1}

struct p_float { float v; int i; };
struct p_double { double v; int i; };
struct p_long { long v; int i; };
struct p_int { int v; int i; };
struct p_short { short v; int i; };
struct p_ldouble { long double v; int i; };

const struct ttype types[] = {
    TINT(char, MPI_CHAR, G_TEXT),
    TINT(signed char, MPI_SIGNED_CHAR, G_CINT),
    TINT(unsigned char, MPI_UNSIGNED_CHAR, G_CINT),
    TINT(wchar_t, MPI_WCHAR, G_TEXT),
    TINT(short, MPI_SHORT, G_CINT),
    TINT(unsigned short, MPI_UNSIGNED_SHORT, G_CINT),
    TINT(int, MPI_INT, G_CINT),
    TINT(unsigned, MPI_UNSIGNED, G_CINT),
    TINT(long, MPI_LONG, G_CINT),
    TINT(unsigned long, MPI_UNSIGNED_LONG, G_CINT),
    TINT(long long, MPI_LONG_LONG, G_CINT),
    TINT(unsigned long long, MPI_UNSIGNED_LONG_LONG, G_CINT),
    TINT(int8_t, MPI_INT8_T, G_CINT),
    TINT(int16_t, MPI_INT16_T, G_CINT),
    TINT(int32_t, MPI_INT32_T, G_CINT),
    TINT(int64_t, MPI_INT64_T, G_CINT),
    TINT(uint8_t, MPI_UINT8_T, G_CINT),
    TINT(uint16_t, MPI_UINT16_T, G_CINT),
    TINT(uint32_t, MPI_UINT32_T, G_CINT),
    TINT(uint64_t, MPI_UINT64_T, G_CINT),
    TINT(MPI_Aint, MPI_AINT, G_MULTI),
    TINT(MPI_Offset, MPI_OFFSET, G_MULTI),
    TINT(MPI_Count, MPI_COUNT, G_MULTI),
    TFLT(float, MPI_FLOAT, S_FLT),
    TFLT(double, MPI_DOUBLE, S_DBL),
    TFLT(long double, MPI_LONG_DOUBLE, S_LDBL),
    TCPX(float, MPI_C_FLOAT_COMPLEX, S_FLT),
    TCPX(double, MPI_C_DOUBLE_COMPLEX, S_DBL),
    TCPX(long double, MPI_C_LONG_DOUBLE_COMPLEX, S_LDBL),
    {"MPI_C_BOOL", MPI_C_BOOL, K_BOOL, S_UINT, G_BOOL, sizeof(bool), sizeof(bool), 0, 1, 1, 1},
    {"MPI_BYTE", MPI_BYTE, K_BYTE, S_UINT, G_BYTE, 1, 1, 0, 1, 1, 1},
    TPAIR(struct p_float, MPI_FLOAT_INT, S_FLT),
    TPAIR(struct p_double, MPI_DOUBLE_INT, S_DBL),
    TPAIR(struct p_long, MPI_LONG_INT, SIGNED_T(long) ? S_SINT : S_UINT),
    TPAIR(struct p_int, MPI_2INT, S_SINT),
    TPAIR(struct p_short, MPI_SHORT_INT, S_SINT),
    TPAIR(struct p_ldouble, MPI_LONG_DOUBLE_INT, S_LDBL),
};
const int ntypes = (int)(sizeof types / sizeof types[0]);

#define G_ARITH (G_CINT | G_MULTI | G_FLOAT)
const struct top ops[] = {
    {"MPI_MAX", MPI_MAX, C_EXACT, G_ARITH},
    {"MPI_MIN", MPI_MIN, C_EXACT, G_ARITH},
    {"MPI_SUM", MPI_SUM, C_SUM, G_ARITH | G_COMPLEX},
    {"MPI_PROD", MPI_PROD, C_PROD, G_ARITH | G_COMPLEX},
    {"MPI_LAND", MPI_LAND, C_LOGICAL, G_CINT | G_BOOL},
    {"MPI_LOR", MPI_LOR, C_LOGICAL, G_CINT | G_BOOL},
    {"MPI_LXOR", MPI_LXOR, C_LOGICAL, G_CINT | G_BOOL},
    {"MPI_BAND", MPI_BAND, C_EXACT, G_CINT | G_MULTI | G_BYTE},
    {"MPI_BOR", MPI_BOR, C_EXACT, G_CINT | G_MULTI | G_BYTE},
    {"MPI_BXOR", MPI_BXOR, C_EXACT, G_CINT | G_MULTI | G_BYTE},
    {"MPI_MINLOC", MPI_MINLOC, C_LOC, G_PAIR},
    {"MPI_MAXLOC", MPI_MAXLOC, C_LOC, G_PAIR},
};
const int nops = (int)(sizeof ops / sizeof ops[0]);
/* clang-format on */

/* ---- Options and tallies ------------------------------------------------ */

static const size_t default_counts[] = {0, 1, 2, 7, 64, 1000, 65539};
static const size_t quick_counts[] = {0, 1, 7, 1000};

struct check_opts opt;

int wrank, wsize;
static uint64_t case_no;                 /* same sequence on every rank */
static long long owned_pass, owned_fail; /* checks this rank reports (rank 0 of their comm) */

/* The program's name, for the messages (check_init). */
static const char *check_prog = "";

void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) {
        fprintf(stderr, "%s: out of memory (%zu bytes)\n", check_prog, n);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    return p;
}

void *xdup(const void *p, size_t n)
{
    return memcpy(xmalloc(n), p, n);
}

/* ---- Random numbers (splitmix64) ---------------------------------------- */

static uint64_t rng_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static uint64_t rng_below(uint64_t *s, uint64_t n)
{
    return rng_next(s) % n;
}

static long double rng_unit(uint64_t *s)
{
    return (long double)(rng_next(s) >> 11) * 0x1.0p-53L;
}

uint64_t case_rng(void)
{
    return opt.seed * 0x9e3779b97f4a7c15ULL ^ ((uint64_t)wrank << 40) ^ ++case_no;
}

/* ---- Scalar access ------------------------------------------------------ */

static void put_int(void *p, size_t size, uint64_t v)
{
    uint8_t a = (uint8_t)v;
    uint16_t b = (uint16_t)v;
    uint32_t c = (uint32_t)v;
    switch (size) {
    case 1:
        memcpy(p, &a, 1);
        break;
    case 2:
        memcpy(p, &b, 2);
        break;
    case 4:
        memcpy(p, &c, 4);
        break;
    default:
        memcpy(p, &v, 8);
        break;
    }
}

static uint64_t get_uint(const void *p, size_t size)
{
    uint8_t a;
    uint16_t b;
    uint32_t c;
    uint64_t d;
    switch (size) {
    case 1:
        memcpy(&a, p, 1);
        return a;
    case 2:
        memcpy(&b, p, 2);
        return b;
    case 4:
        memcpy(&c, p, 4);
        return c;
    default:
        memcpy(&d, p, 8);
        return d;
    }
}

static int64_t get_sint(const void *p, size_t size)
{
    int8_t a;
    int16_t b;
    int32_t c;
    int64_t d;
    switch (size) {
    case 1:
        memcpy(&a, p, 1);
        return a;
    case 2:
        memcpy(&b, p, 2);
        return b;
    case 4:
        memcpy(&c, p, 4);
        return c;
    default:
        memcpy(&d, p, 8);
        return d;
    }
}

int is_float(enum scal s)
{
    return s == S_FLT || s == S_DBL || s == S_LDBL;
}

static void put_flt(void *p, enum scal s, long double v)
{
    float f = (float)v;
    double d = (double)v;
    switch (s) {
    case S_FLT:
        memcpy(p, &f, sizeof f);
        break;
    case S_DBL:
        memcpy(p, &d, sizeof d);
        break;
    default:
        memcpy(p, &v, sizeof v);
        break;
    }
}

static long double get_flt(const void *p, enum scal s)
{
    float f;
    double d;
    long double l;
    switch (s) {
    case S_FLT:
        memcpy(&f, p, sizeof f);
        return f;
    case S_DBL:
        memcpy(&d, p, sizeof d);
        return d;
    default:
        memcpy(&l, p, sizeof l);
        return l;
    }
}

static long double eps_of(enum scal s)
{
    return s == S_FLT ? FLT_EPSILON : s == S_DBL ? DBL_EPSILON : LDBL_EPSILON;
}

/* Bytes that carry the value: x87 long double has 6 bytes of padding. */
static size_t sig_bytes(enum scal s, size_t vsize)
{
    if (s == S_LDBL && LDBL_MANT_DIG == 64)
        return 10;
    return vsize;
}

static void fmt_scalar(char *buf, size_t n, enum scal s, size_t vsize, const void *p)
{
    if (is_float(s))
        snprintf(buf, n, "%.*Lg", s == S_FLT ? 9 : s == S_DBL ? 17 : 21, get_flt(p, s));
    else if (s == S_SINT)
        snprintf(buf, n, "%lld", (long long)get_sint(p, vsize));
    else
        snprintf(buf, n, "%llu", (unsigned long long)get_uint(p, vsize));
}

static int slot_covered(const struct ttype *t, int s)
{
    return s % t->stride < t->blocklen;
}

/* ---- Data ---------------------------------------------------------------- */

static uint64_t mask_of(size_t vsize)
{
    return vsize >= 8 ? ~0ULL : (1ULL << (8 * vsize)) - 1;
}

/* A uniform value in [-m, m], as the low bytes of a two's complement word. */
static uint64_t rng_signed(uint64_t *rng, uint64_t m)
{
    return rng_next(rng) % (2 * m + 1) - m;
}

static long double rng_real(uint64_t *rng)
{
    /* Exponents spread over 2^-8 .. 2^8 so that sums round. */
    long double u = 2 * rng_unit(rng) - 1;
    return ldexpl(u, (int)rng_below(rng, 17) - 8);
}

static void fill_int(const struct ttype *t, enum cat cat, unsigned char *p, uint64_t *rng,
                     size_t elem, int rank, int nprocs)
{
    uint64_t mask = mask_of(t->vsize), maxv = mask >> 1, r = rng_next(rng);

    if (cat == C_LOGICAL) {
        if (rng_below(rng, 3) == 0)
            r = 0;
        else if ((r & mask) == 0)
            r = 1;
    } else if (t->scal == S_UINT) {
        /* Unsigned SUM and PROD wrap; keep most factors odd so products stay nonzero. */
        if (cat == C_PROD && rng_below(rng, 4) != 0)
            r |= 1;
    } else if (cat == C_SUM) {
        r = rng_signed(rng, maxv / (uint64_t)nprocs);
    } else if (cat == C_PROD) {
        /* One rank per element supplies any value, the others +-1 or 0: no signed overflow. */
        if (elem % (size_t)nprocs == (size_t)rank) {
            r = rng_signed(rng, maxv);
        } else {
            uint64_t k = rng_below(rng, 16);
            r = k == 0 ? 0 : (k & 1) ? 1 : (uint64_t)-1;
        }
    }
    if (cat == C_AFFINE)
        r |= 1ULL << 32;
    put_int(p, t->vsize, r);
}

static void fill_real(const struct ttype *t, enum cat cat, unsigned char *p, uint64_t *rng,
                      int slot)
{
    long double v;

    if (cat == C_PROD) {
        /* Factors near 1: no overflow for any number of ranks. */
        long double d = (2 * rng_unit(rng) - 1) / 16;
        if (t->kind == K_COMPLEX)
            v = (slot & 1) ? d : 1 + d;
        else
            v = (rng_next(rng) & 1) ? 1 + d : -(1 + d);
    } else if (cat == C_LOGICAL && rng_below(rng, 3) == 0) {
        v = 0;
    } else {
        v = rng_real(rng);
    }
    put_flt(p, t->scal, v);
}

void fill(const struct ttype *t, enum cat cat, unsigned char *buf, size_t count, uint64_t *rng,
          int rank, int nprocs)
{
    size_t i, k;

    /* Padding gets random bytes too: results must not depend on it. */
    for (k = 0; k < count * t->extent; k++)
        buf[k] = (unsigned char)rng_next(rng);

    for (i = 0; i < count; i++) {
        unsigned char *e = buf + i * t->extent;
        int s;
        if (t->kind == K_PAIR) {
            /* Few distinct values and indices: ties on both. */
            int idx = (int)rng_below(rng, 4);
            int64_t v = (int64_t)rng_below(rng, 5) - 2;
            if (is_float(t->scal))
                put_flt(e, t->scal, (long double)v);
            else
                put_int(e, t->vsize, (uint64_t)v);
            memcpy(e + t->ioff, &idx, sizeof idx);
            continue;
        }
        for (s = 0; s < t->nslots; s++) {
            unsigned char *p = e + (size_t)s * t->vsize;
            if (t->kind == K_BOOL) {
                bool b = rng_next(rng) & 1;
                memcpy(p, &b, sizeof b);
            } else if (t->kind == K_BYTE) {
                *p = (unsigned char)rng_next(rng);
            } else if (is_float(t->scal)) {
                fill_real(t, cat, p, rng, s);
            } else {
                fill_int(t, cat, p, rng, i, rank, nprocs);
            }
        }
    }
}

void abs_of(const struct ttype *t, const unsigned char *in, unsigned char *out, size_t count)
{
    size_t i;
    int s;

    memcpy(out, in, count * t->extent);
    for (i = 0; i < count; i++)
        for (s = 0; s < t->nslots; s++) {
            size_t off = i * t->extent + (size_t)s * t->vsize;
            put_flt(out + off, t->scal, fabsl(get_flt(in + off, t->scal)));
        }
}

static uint64_t hash_bytes(uint64_t h, const unsigned char *p, size_t n)
{
    size_t k;
    for (k = 0; k < n; k++)
        h = (h ^ p[k]) * 0x100000001b3ULL;
    return h;
}

uint64_t hash_result(const struct ttype *t, const unsigned char *buf, size_t count)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    size_t i, sb = sig_bytes(t->scal, t->vsize);
    int s;

    for (i = 0; i < count; i++) {
        const unsigned char *e = buf + i * t->extent;
        if (t->kind == K_PAIR) {
            h = hash_bytes(h, e, sb);
            h = hash_bytes(h, e + t->ioff, sizeof(int));
            continue;
        }
        for (s = 0; s < t->nslots; s++)
            if (slot_covered(t, s))
                h = hash_bytes(h, e + (size_t)s * t->vsize, sb);
    }
    return h;
}

/* ---- Comparison ---------------------------------------------------------- */

static int slot_exact(const struct ttype *t, const unsigned char *a, const unsigned char *e)
{
    if (is_float(t->scal))
        return get_flt(a, t->scal) == get_flt(e, t->scal);
    return get_uint(a, t->vsize) == get_uint(e, t->vsize);
}

/* Index of the first element of act that does not match exp, or count; why
 * describes the mismatch.  sabs: the reduced magnitudes (see abs_of) for a
 * floating SUM, else unused. */
static size_t compare(const struct ttype *t, enum cat cat, const unsigned char *act,
                      const unsigned char *exp, const unsigned char *sabs, size_t count, int nprocs,
                      char *why, size_t whylen)
{
    size_t i;
    char sa[64], se[64];

    for (i = 0; i < count; i++) {
        const unsigned char *a = act + i * t->extent, *e = exp + i * t->extent;
        long double scale_prod = 0;
        int s;

        if (t->kind == K_PAIR) {
            int ia, ie;
            memcpy(&ia, a + t->ioff, sizeof ia);
            memcpy(&ie, e + t->ioff, sizeof ie);
            if (!slot_exact(t, a, e) || ia != ie) {
                fmt_scalar(sa, sizeof sa, t->scal, t->vsize, a);
                fmt_scalar(se, sizeof se, t->scal, t->vsize, e);
                snprintf(why, whylen, "expected=(%s,%d) actual=(%s,%d)", se, ie, sa, ia);
                return i;
            }
            continue;
        }
        if (is_float(t->scal) && cat == C_PROD) {
            if (t->kind == K_COMPLEX)
                scale_prod = hypotl(get_flt(e, t->scal), get_flt(e + t->vsize, t->scal));
            else
                scale_prod = fabsl(get_flt(e, t->scal));
        }
        for (s = 0; s < t->nslots; s++) {
            size_t off = (size_t)s * t->vsize;
            const char *part = t->kind == K_COMPLEX ? (s & 1 ? " (imag)" : " (real)") : "";
            if (!slot_covered(t, s)) {
                if (memcmp(a + off, e + off, t->vsize) != 0) {
                    snprintf(why, whylen, "gap slot %d of the datatype was written", s);
                    return i;
                }
                continue;
            }
            if (is_float(t->scal) && (cat == C_SUM || cat == C_PROD)) {
                long double va = get_flt(a + off, t->scal), ve = get_flt(e + off, t->scal), tol;
                if (cat == C_SUM)
                    tol =
                        2 * nprocs * eps_of(t->scal) * get_flt(sabs + i * t->extent + off, t->scal);
                else
                    tol = 4 * nprocs * eps_of(t->scal) * scale_prod;
                if (!(fabsl(va - ve) <= tol)) {
                    fmt_scalar(sa, sizeof sa, t->scal, t->vsize, a + off);
                    fmt_scalar(se, sizeof se, t->scal, t->vsize, e + off);
                    snprintf(why, whylen, "expected=%s actual=%s%s |diff|=%.3Lg tol=%.3Lg", se, sa,
                             part, fabsl(va - ve), tol);
                    return i;
                }
            } else if (!slot_exact(t, a + off, e + off)) {
                fmt_scalar(sa, sizeof sa, t->scal, t->vsize, a + off);
                fmt_scalar(se, sizeof se, t->scal, t->vsize, e + off);
                snprintf(why, whylen, "expected=%s actual=%s%s", se, sa, part);
                return i;
            }
        }
    }
    return count;
}

/* ---- The standard's answer where the library's differs ------------------ */

int standard_answer(const struct ttype *t, MPI_Op op)
{
    int minmax = op == MPI_MAX || op == MPI_MIN;
    if (!opt.expect_treeduce || t->kind != K_INT)
        return 0;
    if (t->scal == S_UINT && minmax)
        return 1;
#if defined(OPEN_MPI)
    if (t->scal == S_UINT && op == MPI_SUM && t->vsize <= 2)
        return 1;
    if (t->dt == MPI_OFFSET && minmax)
        return 1;
#endif
    return 0;
}

void standard_reference(const struct ttype *t, MPI_Op op, const unsigned char *in, size_t nin,
                        size_t first, size_t n, MPI_Comm comm, unsigned char *out)
{
    size_t bytes = nin * t->extent, i, k;
    unsigned shift = 64 - 8 * (unsigned)t->vsize; /* sign extension of a signed value */
    int nprocs, r, s;
    unsigned char *all;

    MPI_Comm_size(comm, &nprocs);
    all = xmalloc(bytes * (size_t)nprocs);
    PMPI_Allgather(in, (int)bytes, MPI_BYTE, all, (int)bytes, MPI_BYTE, comm);
    for (i = first; i < first + n; i++)
        for (s = 0; s < t->nslots; s++) {
            size_t off = i * t->extent + (size_t)s * t->vsize;
            uint64_t v;
            if (!slot_covered(t, s))
                continue;
            v = get_uint(all + off, t->vsize);
            for (r = 1; r < nprocs; r++) {
                uint64_t x = get_uint(all + (size_t)r * bytes + off, t->vsize);
                int x_first;
                if (op == MPI_SUM) {
                    v += x;
                    continue;
                }
                if (t->scal == S_UINT)
                    x_first = op == MPI_MAX ? x > v : x < v;
                else {
                    int64_t sx = (int64_t)(x << shift) >> shift,
                            sv = (int64_t)(v << shift) >> shift;
                    x_first = op == MPI_MAX ? sx > sv : sx < sv;
                }
                v = x_first ? x : v;
            }
            k = (i - first) * t->extent + (size_t)s * t->vsize;
            put_int(out + k, t->vsize, v);
        }
    free(all);
}

/* ---- Reports ------------------------------------------------------------- */

void check_fail(const char *desc, const char *what)
{
    printf("FAIL %s rank=%d %s\n", desc, wrank, what);
    fflush(stdout);
}

int check_call_ok(const char *desc, int rc, const char *fn)
{
    char errstr[MPI_MAX_ERROR_STRING], why[MPI_MAX_ERROR_STRING + 64];
    int len;

    if (rc == MPI_SUCCESS)
        return 1;
    MPI_Error_string(rc, errstr, &len);
    snprintf(why, sizeof why, "%s failed: %s", fn, errstr);
    check_fail(desc, why);
    return 0;
}

int check_result_ok(const char *desc, const struct ttype *t, enum cat cat, const unsigned char *act,
                    const unsigned char *exp, const unsigned char *sabs, size_t count, int nprocs)
{
    char why[256], msg[320];
    size_t bad = compare(t, cat, act, exp, sabs, count, nprocs, why, sizeof why);

    if (bad == count)
        return 1;
    snprintf(msg, sizeof msg, "index=%zu %s", bad, why);
    check_fail(desc, msg);
    return 0;
}

/* ---- Pending checks ------------------------------------------------------ */

/* Checks waiting for the ranks to agree: one reduction for many checks, as
 * every collective is slow on oversubscribed cores. */
struct pending {
    char desc[CHECK_DESC_LEN];
    int ok;
    uint64_t hash; /* of a result every rank must share, else 0 */
};
static struct pending *pend;
static size_t npend, cap_pend;
static MPI_Comm pend_comm = MPI_COMM_NULL;

void pend_flush(void)
{
    uint64_t *v;
    size_t k;
    int rank;

    if (npend == 0)
        return;
    v = xmalloc(3 * npend * sizeof *v);
    for (k = 0; k < npend; k++) {
        v[3 * k] = pend[k].hash;
        v[3 * k + 1] = ~pend[k].hash;
        v[3 * k + 2] = !pend[k].ok;
    }
    PMPI_Allreduce(MPI_IN_PLACE, v, (int)(3 * npend), MPI_UINT64_T, MPI_MAX, pend_comm);
    MPI_Comm_rank(pend_comm, &rank);
    for (k = 0; rank == 0 && k < npend; k++) {
        int failed_somewhere = v[3 * k + 2] != 0, same = v[3 * k] == ~v[3 * k + 1];
        if (!failed_somewhere && !same)
            printf("FAIL %s result differs between ranks\n", pend[k].desc);
        if (!failed_somewhere && same) {
            owned_pass++;
            if (opt.verbose)
                printf("ok   %s\n", pend[k].desc);
        } else {
            owned_fail++;
        }
    }
    fflush(stdout);
    free(v);
    npend = 0;
}

void pend_add(MPI_Comm comm, const char *desc, uint64_t hash, int ok)
{
    struct pending *p;

    if (comm != pend_comm)
        pend_flush();
    pend_comm = comm;
    if (npend == cap_pend) {
        cap_pend = cap_pend ? 2 * cap_pend : 256;
        pend = realloc(pend, cap_pend * sizeof *pend);
        if (!pend)
            MPI_Abort(MPI_COMM_WORLD, 2);
    }
    p = &pend[npend++];
    snprintf(p->desc, sizeof p->desc, "%s", desc);
    p->ok = ok;
    p->hash = hash;
}

/* ---- Filters and probing -------------------------------------------------- */

int name_matches(const char *list, const char *name)
{
    const char *p = list;

    if (!list)
        return 1;
    while (*p) {
        size_t n = strcspn(p, ",");
        const char *bare = strncasecmp(name, "MPI_", 4) == 0 ? name + 4 : name;
        if ((strlen(name) == n && strncasecmp(p, name, n) == 0) ||
            (strlen(bare) == n && strncasecmp(p, bare, n) == 0))
            return 1;
        p += n;
        if (*p == ',')
            p++;
    }
    return 0;
}

int predefined(const char *name)
{
    return strncmp(name, "MPI_", 4) == 0;
}

/* Whether (type, op) is tested: a pair the MPI standard defines, or MPI_CHAR
 * and MPI_WCHAR with an integer op, and in both cases accepted by the MPI
 * library.  Pairs outside the standard are not probed: some libraries accept
 * them in MPI_Reduce_local and then abort (MPICH 4.0, MPI_LAND on MPI_FLOAT). */
static int pair_tested(const struct ttype *t, const struct top *o)
{
    unsigned char a[64] = {0}, b[64] = {0};
    int grp = t->grp == G_TEXT ? G_CINT : t->grp;

    if (!(o->grps & grp))
        return 0;
    return PMPI_Reduce_local(a, b, 1, t->dt, o->op) == MPI_SUCCESS;
}

static int extent_ok(const struct ttype *t)
{
    MPI_Aint lb, extent;
    MPI_Type_get_extent(t->dt, &lb, &extent);
    return lb == 0 && (size_t)extent == t->extent;
}

int type_selected(const struct ttype *t)
{
    if (!name_matches(opt.types, t->name))
        return 0;
    if (!extent_ok(t)) {
        if (wrank == 0) {
            printf("FAIL type=%s extent differs from the C layout the test assumes\n", t->name);
            owned_fail++;
        }
        return 0;
    }
    return 1;
}

int op_selected(const struct ttype *t, const struct top *o, int *nskipped)
{
    if (!name_matches(opt.ops, o->name))
        return 0;
    if (!pair_tested(t, o)) {
        (*nskipped)++;
        return 0;
    }
    return 1;
}

const struct ttype *find_type(MPI_Datatype dt)
{
    int i;
    for (i = 0; i < ntypes; i++)
        if (types[i].dt == dt)
            return &types[i];
    return NULL;
}

/* ---- User ops and derived types ------------------------------------------ */

void matmul_op(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    const unsigned *a = in;
    unsigned *b = inout;
    int i;

    (void)dt;
    for (i = 0; i < *len; i++, a += 4, b += 4) {
        unsigned c0 = a[0] * b[0] + a[1] * b[2], c1 = a[0] * b[1] + a[1] * b[3];
        unsigned c2 = a[2] * b[0] + a[3] * b[2], c3 = a[2] * b[1] + a[3] * b[3];
        b[0] = c0;
        b[1] = c1;
        b[2] = c2;
        b[3] = c3;
    }
}

void dsum_op(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    const double *a = in;
    double *b = inout;
    int i;

    (void)dt;
    for (i = 0; i < *len; i++)
        b[i] += a[i];
}

void vsum_op(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    const double *a = in;
    double *b = inout;
    MPI_Aint lb, extent;
    int i, k;

    MPI_Type_get_extent(*dt, &lb, &extent);
    for (i = 0; i < *len; i++) {
        const double *ae = (const double *)((const char *)a + i * extent);
        double *be = (double *)((char *)b + i * extent);
        for (k = 0; k < VEC_N; k++) {
            be[k * VEC_STRIDE] += ae[k * VEC_STRIDE];
            be[k * VEC_STRIDE + 1] += ae[k * VEC_STRIDE + 1];
        }
    }
}

void vaffine_op(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    MPI_Aint lb, extent;
    int i, k;

    MPI_Type_get_extent(*dt, &lb, &extent);
    for (i = 0; i < *len; i++) {
        const unsigned *a = (const unsigned *)((const char *)in + i * extent);
        unsigned *b = (unsigned *)((char *)inout + i * extent);
        for (k = 0; k < VEC_N; k++) {
            const unsigned *f = a + k * VEC_STRIDE;
            unsigned *g = b + k * VEC_STRIDE;
            g[1] = f[0] * g[1] + f[1];
            g[0] = f[0] * g[0];
        }
    }
}

void affine64_op(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    const uint64_t *f = in;
    uint64_t *g = inout;
    (void)dt;
    for (int i = 0; i < *len; i++) {
        uint32_t fa = (uint32_t)(f[i] >> 32), fb = (uint32_t)f[i];
        uint32_t ga = (uint32_t)(g[i] >> 32), gb = (uint32_t)g[i];
        g[i] = (uint64_t)(fa * ga) << 32 | (uint32_t)(fa * gb + fb);
    }
}

struct ttype contig4_ttype(MPI_Datatype dt)
{
    return (struct ttype){"contig(4,MPI_INT)", dt, K_INT, S_UINT, G_CINT, sizeof(int),
                          4 * sizeof(int),     0,  4,     4,      4};
}

void vector_types_create(struct ttype *vec_dbl, struct ttype *vec_int)
{
    MPI_Datatype vd, vi;

    MPI_Type_vector(VEC_N, 2, VEC_STRIDE, MPI_DOUBLE, &vd);
    MPI_Type_commit(&vd);
    MPI_Type_vector(VEC_N, 2, VEC_STRIDE, MPI_INT, &vi);
    MPI_Type_commit(&vi);
    *vec_dbl =
        (struct ttype){"vector(50,2,3,MPI_DOUBLE)", vd, K_FLOAT,   S_DBL, G_FLOAT,   sizeof(double),
                       VEC_SLOTS * sizeof(double),  0,  VEC_SLOTS, 2,     VEC_STRIDE};
    *vec_int =
        (struct ttype){"vector(50,2,3,MPI_INT)", vi, K_INT,     S_SINT, G_CINT,    sizeof(int),
                       VEC_SLOTS * sizeof(int),  0,  VEC_SLOTS, 2,      VEC_STRIDE};
}

void run_comm_suites(void (*suite)(MPI_Comm comm, const char *where))
{
    MPI_Comm a, b, c, d, e;

    MPI_Comm_dup(MPI_COMM_WORLD, &a);
    suite(a, "dup");
    MPI_Comm_free(&a);

    MPI_Comm_split(MPI_COMM_WORLD, 0, wsize - 1 - wrank, &b);
    suite(b, "reversed");
    MPI_Comm_free(&b);

    MPI_Comm_split(MPI_COMM_WORLD, wrank % 2, wrank, &c);
    suite(c, wrank % 2 ? "split(odd)" : "split(even)");
    MPI_Comm_free(&c);

    MPI_Comm_dup(MPI_COMM_WORLD, &d);
    suite(d, "dup(after free)");
    MPI_Comm_dup(d, &e);
    suite(e, "dup(of dup)");
    suite(d, "dup(after free)");
    MPI_Comm_free(&e);
    MPI_Comm_free(&d);

    suite(MPI_COMM_WORLD, "world");
}

/* ---- Options ------------------------------------------------------------- */

static int parse_counts(const char *s, unsigned long long max_count)
{
    const char *p = s;
    int n = 1;
    char *end;

    for (; *p; p++)
        n += *p == ',';
    opt.counts = xmalloc((size_t)n * sizeof *opt.counts);
    opt.ncounts = 0;
    p = s;
    while (*p) {
        unsigned long long v = strtoull(p, &end, 10);
        if (end == p || (*end && *end != ',') || v > max_count)
            return -1;
        opt.counts[opt.ncounts++] = (size_t)v;
        p = *end ? end + 1 : end;
    }
    return opt.ncounts > 0 ? 0 : -1;
}

int check_parse_args(int argc, char **argv, unsigned long long max_count,
                     int (*extra)(int argc, char **argv, int *i))
{
    int i, quick = 0;
    const char *counts = NULL;

    opt.seed = 1;
    for (i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--quick"))
            quick = 1;
        else if (!strcmp(a, "--verbose"))
            opt.verbose = 1;
        else if (!strcmp(a, "--expect-treeduce"))
            opt.expect_treeduce = 1;
        else if (!strcmp(a, "--counts") && i + 1 < argc)
            counts = argv[++i];
        else if (!strcmp(a, "--types") && i + 1 < argc)
            opt.types = argv[++i];
        else if (!strcmp(a, "--ops") && i + 1 < argc)
            opt.ops = argv[++i];
        else if (!strcmp(a, "--seed") && i + 1 < argc)
            opt.seed = strtoull(argv[++i], NULL, 0);
        else if (!extra || extra(argc, argv, &i) <= 0)
            return -1;
    }
    if (counts)
        return parse_counts(counts, max_count);
    if (quick) {
        opt.ncounts = (int)(sizeof quick_counts / sizeof quick_counts[0]);
        opt.counts = xdup(quick_counts, sizeof quick_counts);
    } else {
        opt.ncounts = (int)(sizeof default_counts / sizeof default_counts[0]);
        opt.counts = xdup(default_counts, sizeof default_counts);
    }
    return 0;
}

/* ---- Start and end ------------------------------------------------------- */

void check_init(int *argc, char ***argv, const char *prog)
{
    check_prog = prog;
    MPI_Init(argc, argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
}

void check_errors_return(void)
{
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
}

int check_finish(int nskipped)
{
    long long tally[2];

    pend_flush();
    tally[0] = owned_pass;
    tally[1] = owned_fail;
    PMPI_Allreduce(MPI_IN_PLACE, tally, 2, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (wrank == 0) {
        if (opt.verbose)
            printf("%d type/op pairs not tested (undefined, or not accepted by the MPI library)\n",
                   nskipped);
        printf("%lld passed, %lld failed\n", tally[0], tally[1]);
        fflush(stdout);
    }
    free(opt.counts);
    free(pend);
    MPI_Finalize();
    return tally[1] > 0 ? 1 : 0;
}
