/* Derived datatypes in the reductions: what a datatype is made of, and the
 * copies between the user's buffers and the plan's.
 *
 * A datatype's type map is read from its constructors (MPI_Type_get_envelope
 * and MPI_Type_get_contents, recursively): the one predefined base type of
 * its elements (several: the call goes to the MPI library), k base elements
 * per element, and the element's bytes in type-map order as blocks, merged
 * where they are adjacent.  The analysis is checked against MPI's own sizes
 * and extents and cached on the type with an attribute (freed with the type;
 * handles are reused after a free, so a table keyed by handle would not do).
 *
 * Two ways to run a reduction on count elements:
 *  - a predefined op applies to base elements one by one (MPI's rule for
 *    MPI_Accumulate, MPI-4.0 §12.3.4; its reductions do not define predefined
 *    ops on derived types and MPICH rejects them, so here it is an extension):
 *    the elements are flattened into count*k base elements, the plan runs on
 *    the base type with treeduce's kernels, and the result is copied back
 *    block by block;
 *  - a user op must see elements of its own type (MPI-4.0 §6.9.5): the plan
 *    runs on whole elements, extent bytes each (true lb honoured, so that
 *    every element's data lies in its extent), sent as contiguous(extent,
 *    MPI_BYTE), reduced by MPI_Reduce_local with the user's type and op.
 *    Ranks must pass the same datatype, as MPI's reductions require: the
 *    plan's element is the type's extent.
 * Types whose data already has the plan's layout (no holes) run on the user's
 * buffers; others are copied into buffers kept for the next call, and only
 * the bytes of the type map are copied back: holes in recvbuf are never
 * written.
 * Cost = the plan's, + 2 m of copies for types with holes.
 */
#include "rt.h"

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Appends of blocks the analysis of one type may make, and blocks it may
 * keep; a type beyond either is copied through MPI_Pack instead. */
#define TRD_DTYPE_MAX_WORK ((size_t)1 << 22)
#define TRD_DTYPE_MAX_BLOCKS ((size_t)1 << 16)
/* Bytes packed at a time when copies go through MPI_Pack. */
#define TRD_DTYPE_PACK_BYTES ((size_t)1 << 20)

#define CHECK(call)                                                                                \
    do {                                                                                           \
        rc = (call);                                                                               \
        if (rc != MPI_SUCCESS)                                                                     \
            goto fn_exit;                                                                          \
    } while (0)

/* ---- Predefined pair types: their value and index bytes ---------------------- */

struct pair_float {
    float v;
    int i;
};
struct pair_double {
    double v;
    int i;
};
struct pair_long {
    long v;
    int i;
};
struct pair_int {
    int v;
    int i;
};
struct pair_short {
    short v;
    int i;
};
struct pair_long_double {
    long double v;
    int i;
};
#define PAIR(dt, S)                                                                                \
    {                                                                                              \
        dt, sizeof(((struct S *)0)->v), offsetof(struct S, i)                                      \
    }

static const struct pair_layout {
    MPI_Datatype type;
    size_t vsize, ioff;
} pairs[] = {PAIR(MPI_FLOAT_INT, pair_float), PAIR(MPI_DOUBLE_INT, pair_double),
             PAIR(MPI_LONG_INT, pair_long),   PAIR(MPI_2INT, pair_int),
             PAIR(MPI_SHORT_INT, pair_short), PAIR(MPI_LONG_DOUBLE_INT, pair_long_double)};

static const struct pair_layout *pair_of(MPI_Datatype type)
{
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++)
        if (pairs[i].type == type)
            return &pairs[i];
    return NULL;
}

/* ---- Analysis ---------------------------------------------------------------- */

/* One constructor level of a type while it is analysed. */
typedef struct level {
    MPI_Datatype base; /* MPI_DATATYPE_NULL: none yet */
    int several;       /* base elements of more than one type */
    int unsupported;   /* a constructor this file does not read */
    size_t k, base_extent;
    MPI_Aint extent;
    trd_dtype_block *b; /* NULL with nob: no blocks */
    size_t n, cap;
    int nob;
} level;

static void drop_blocks(level *o)
{
    free(o->b);
    o->b = NULL;
    o->n = o->cap = 0;
    o->nob = 1;
}

/* Append a block, merged with the last where both layouts continue it;
 * *work counts appends. */
static void append(level *o, MPI_Aint disp, size_t flat, size_t len, size_t *work)
{
    if (o->nob || len == 0)
        return;
    if (++*work > TRD_DTYPE_MAX_WORK) {
        drop_blocks(o);
        return;
    }
    if (o->n) {
        trd_dtype_block *l = &o->b[o->n - 1];
        if (l->disp + (MPI_Aint)l->len == disp && l->flat + l->len == flat) {
            l->len += len;
            return;
        }
    }
    if (o->n == o->cap) {
        size_t cap = o->cap ? 2 * o->cap : 8;
        trd_dtype_block *b = cap > TRD_DTYPE_MAX_BLOCKS ? NULL : realloc(o->b, cap * sizeof *b);
        if (!b) {
            drop_blocks(o);
            return;
        }
        o->b = b;
        o->cap = cap;
    }
    o->b[o->n++] = (trd_dtype_block){disp, flat, len};
}

/* Append n instances of child c, instance i at user offset d0 + i dstep and
 * flat offset f0 + i fstep; c's base elements join o's. */
static void repeat(level *o, const level *c, size_t n, MPI_Aint d0, MPI_Aint dstep, size_t f0,
                   size_t fstep, size_t *work)
{
    o->unsupported |= c->unsupported;
    if (n == 0 || c->k == 0)
        return;
    o->k += n * c->k;
    o->several |= c->several;
    if (o->base == MPI_DATATYPE_NULL) {
        o->base = c->base;
        o->base_extent = c->base_extent;
    } else if (c->base != o->base) {
        o->several = 1;
    }
    if (c->nob) {
        drop_blocks(o);
        return;
    }
    /* instances that follow each other in both layouts: one block */
    if (c->n == 1 && dstep > 0 && c->b[0].len == (size_t)dstep && c->b[0].len == fstep) {
        append(o, d0 + c->b[0].disp, f0 + c->b[0].flat, n * fstep, work);
        return;
    }
    for (size_t i = 0; i < n && !o->nob; i++)
        for (size_t j = 0; j < c->n; j++)
            append(o, d0 + (MPI_Aint)i * dstep + c->b[j].disp, f0 + i * fstep + c->b[j].flat,
                   c->b[j].len, work);
}

static int analyse(MPI_Datatype t, level *o, size_t *work);

/* A predefined type (or one MPI builds like one: the Fortran parameterised
 * types): its own base. */
static int leaf(MPI_Datatype t, level *o, size_t *work)
{
    MPI_Aint lb, extent;
    MPI_Count size;
    int rc;
    CHECK(MPI_Type_get_extent(t, &lb, &extent));
    CHECK(MPI_Type_size_x(t, &size));
    o->base = t;
    o->k = 1;
    o->base_extent = (size_t)extent;
    o->extent = extent;
    const struct pair_layout *p = pair_of(t);
    if (p) {
        append(o, 0, 0, p->vsize, work);
        append(o, (MPI_Aint)p->ioff, p->ioff, sizeof(int), work);
    } else {
        append(o, 0, 0, (size_t)size, work);
    }
fn_exit:
    return rc;
}

/* The flat size of one instance of c. */
static size_t flat_of(const level *c)
{
    return c->k * c->base_extent;
}

/* Blocks of the subarray constructor: MPI's type map runs through the
 * subarray in array order, the fastest dimension innermost [MPI-4.0 §5.1.3]. */
static void subarray(level *o, const level *c, const int *ints, size_t *work)
{
    enum { MAXD = 32 };
    int nd = ints[0];
    if (nd < 1 || nd > MAXD) {
        o->unsupported = 1;
        return;
    }
    const int *sizes = ints + 1, *subs = ints + 1 + nd, *starts = ints + 1 + 2 * nd;
    int order = ints[1 + 3 * nd], idx[MAXD];
    int fast = order == MPI_ORDER_C ? nd - 1 : 0, step = order == MPI_ORDER_C ? -1 : 1;
    MPI_Aint stride[MAXD], s = c->extent;
    for (int i = 0, d = fast; i < nd; i++, d += step) {
        stride[d] = s;
        s *= sizes[d];
        idx[d] = 0;
        if (subs[d] == 0)
            return;
    }
    size_t f = 0, fstep = flat_of(c);
    for (;;) {
        MPI_Aint disp = 0;
        for (int d = 0; d < nd; d++)
            disp += (MPI_Aint)(starts[d] + idx[d]) * stride[d];
        repeat(o, c, (size_t)subs[fast], disp, c->extent, f, fstep, work);
        f += (size_t)subs[fast] * fstep;
        /* the next row: the slower dimensions count like an odometer */
        int i = 1, d = fast + step;
        for (; i < nd; i++, d += step) {
            if (++idx[d] < subs[d])
                break;
            idx[d] = 0;
        }
        if (i == nd || o->nob)
            return;
    }
}

/* Analyse t into o (zeroed by the caller, base MPI_DATATYPE_NULL). */
static int analyse(MPI_Datatype t, level *o, size_t *work)
{
    int ni, na, nt, comb, rc, got = 0, *ints = NULL;
    MPI_Aint *addrs = NULL, lb;
    MPI_Datatype *types = NULL;
    level *kids = NULL;
    CHECK(MPI_Type_get_envelope(t, &ni, &na, &nt, &comb));
    switch (comb) {
    case MPI_COMBINER_NAMED:
    case MPI_COMBINER_F90_REAL:
    case MPI_COMBINER_F90_COMPLEX:
    case MPI_COMBINER_F90_INTEGER:
        return leaf(t, o, work);
    default:
        break;
    }
    CHECK(MPI_Type_get_extent(t, &lb, &o->extent));
    ints = malloc((size_t)(ni + 1) * sizeof *ints);
    addrs = malloc((size_t)(na + 1) * sizeof *addrs);
    types = malloc((size_t)(nt + 1) * sizeof *types);
    kids = calloc((size_t)(nt + 1), sizeof *kids);
    if (!ints || !addrs || !types || !kids) {
        rc = MPI_ERR_NO_MEM;
        goto fn_exit;
    }
    CHECK(MPI_Type_get_contents(t, ni, na, nt, ints, addrs, types));
    got = 1;
    for (int i = 0; i < nt; i++) {
        kids[i].base = MPI_DATATYPE_NULL;
        CHECK(analyse(types[i], &kids[i], work));
    }
    const level *c = &kids[0];
    MPI_Aint ce = nt ? c->extent : 0;
    size_t cf = nt ? flat_of(c) : 0, f = 0;
    switch (comb) {
    case MPI_COMBINER_DUP:
    case MPI_COMBINER_RESIZED: /* the type map is the child's */
        repeat(o, c, 1, 0, ce, 0, cf, work);
        break;
    case MPI_COMBINER_CONTIGUOUS:
        repeat(o, c, (size_t)ints[0], 0, ce, 0, cf, work);
        break;
    case MPI_COMBINER_VECTOR:
    case MPI_COMBINER_HVECTOR:
        for (int i = 0; i < ints[0]; i++) {
            MPI_Aint stride = comb == MPI_COMBINER_VECTOR ? (MPI_Aint)ints[2] * ce : addrs[0];
            repeat(o, c, (size_t)ints[1], i * stride, ce, f, cf, work);
            f += (size_t)ints[1] * cf;
        }
        break;
    case MPI_COMBINER_INDEXED:
    case MPI_COMBINER_HINDEXED:
    case MPI_COMBINER_INDEXED_BLOCK:
    case MPI_COMBINER_HINDEXED_BLOCK:
        for (int i = 0; i < ints[0]; i++) {
            int var = comb == MPI_COMBINER_INDEXED || comb == MPI_COMBINER_HINDEXED;
            int bl = var ? ints[1 + i] : ints[1];
            MPI_Aint d;
            if (comb == MPI_COMBINER_INDEXED)
                d = (MPI_Aint)ints[1 + ints[0] + i] * ce;
            else if (comb == MPI_COMBINER_INDEXED_BLOCK)
                d = (MPI_Aint)ints[2 + i] * ce;
            else
                d = addrs[i];
            repeat(o, c, (size_t)bl, d, ce, f, cf, work);
            f += (size_t)bl * cf;
        }
        break;
    case MPI_COMBINER_STRUCT:
        for (int i = 0; i < ints[0]; i++) {
            repeat(o, &kids[i], (size_t)ints[1 + i], addrs[i], kids[i].extent, f, flat_of(&kids[i]),
                   work);
            f += (size_t)ints[1 + i] * flat_of(&kids[i]);
        }
        break;
    case MPI_COMBINER_SUBARRAY:
        subarray(o, c, ints, work);
        break;
    case MPI_COMBINER_DARRAY: {
        /* the child's base elements; where they lie is left to MPI_Pack */
        MPI_Count size, csize;
        CHECK(MPI_Type_size_x(t, &size));
        CHECK(MPI_Type_size_x(types[0], &csize));
        drop_blocks(&kids[0]);
        repeat(o, c, csize ? (size_t)(size / csize) : 0, 0, ce, 0, cf, work);
        break;
    }
    default:
        o->unsupported = 1;
        break;
    }
fn_exit:
    for (int i = 0; got && i < nt; i++) {
        int kni, kna, knt, kcomb;
        free(kids[i].b);
        /* get_contents returns derived types as new references */
        if (MPI_Type_get_envelope(types[i], &kni, &kna, &knt, &kcomb) == MPI_SUCCESS &&
            kcomb != MPI_COMBINER_NAMED)
            MPI_Type_free(&types[i]);
    }
    free(ints);
    free(addrs);
    free(types);
    free(kids);
    return rc;
}

/* The cached analysis of a derived type. */
typedef struct cached {
    trd_dtype_info info;
    trd_dtype_block *blocks;
} cached;

static int dtype_keyval = MPI_KEYVAL_INVALID;

static int delete_fn(MPI_Datatype type, int keyval, void *attr, void *extra)
{
    cached *e = attr;
    (void)type;
    (void)keyval;
    (void)extra;
    if (e->info.whole != MPI_DATATYPE_NULL)
        MPI_Type_free(&e->info.whole);
    free(e->blocks);
    free(e);
    return MPI_SUCCESS;
}

/* Whether the blocks are the data of [true_lb, true_lb + extent), once each,
 * in order. */
static int covers(const trd_dtype_info *d)
{
    MPI_Aint at = d->true_lb;
    if (!d->blocks || d->extent != d->true_extent)
        return 0;
    for (size_t i = 0; i < d->nblocks; i++) {
        if (d->blocks[i].disp != at)
            return 0;
        at += (MPI_Aint)d->blocks[i].len;
    }
    return at == d->true_lb + d->extent;
}

/* Where an element's data starts in the whole layout: as in the user's
 * buffer if it fits the extent there, else at the same alignment modulo 16,
 * else at the start. */
static size_t lead_of(const trd_dtype_info *d)
{
    MPI_Aint room = d->extent - d->true_extent, mod = ((d->true_lb % 16) + 16) % 16;
    if (room < 0)
        return 0;
    if (d->true_lb >= 0 && d->true_lb <= room)
        return (size_t)d->true_lb;
    return mod <= room ? (size_t)mod : 0;
}

/* Fill d from the analysis o of type. */
static int describe(MPI_Datatype type, level *o, trd_dtype_info *d)
{
    int rc;
    MPI_Count bsize = 0;
    memset(d, 0, sizeof *d);
    d->whole = MPI_DATATYPE_NULL;
    CHECK(MPI_Type_get_extent(type, &d->lb, &d->extent));
    CHECK(MPI_Type_get_true_extent(type, &d->true_lb, &d->true_extent));
    CHECK(MPI_Type_size_x(type, &d->size));
    d->base = o->several ? MPI_DATATYPE_NULL : o->base;
    d->k = o->k;
    d->base_extent = o->base_extent;
    if (o->unsupported) {
        d->why = "derived datatype of a constructor treeduce does not read";
        return MPI_SUCCESS;
    }
    if (o->several) {
        d->why = "derived datatype of several base types";
        return MPI_SUCCESS;
    }
    if (d->size == 0 || d->k == 0) {
        d->why = "derived datatype without data";
        return MPI_SUCCESS;
    }
    CHECK(MPI_Type_size_x(o->base, &bsize));
    if ((MPI_Count)d->k * bsize != d->size) {
        d->why = "derived datatype treeduce does not understand";
        return MPI_SUCCESS;
    }
    if (!o->nob) {
        /* the blocks must agree with MPI's sizes and bounds, else MPI_Pack copies */
        MPI_Count sum = 0;
        MPI_Aint lo = o->n ? o->b[0].disp : 0, hi = lo;
        for (size_t i = 0; i < o->n; i++) {
            sum += (MPI_Count)o->b[i].len;
            lo = o->b[i].disp < lo ? o->b[i].disp : lo;
            if (o->b[i].disp + (MPI_Aint)o->b[i].len > hi)
                hi = o->b[i].disp + (MPI_Aint)o->b[i].len;
        }
        if (sum == d->size && lo == d->true_lb && hi - lo == d->true_extent) {
            d->blocks = o->b;
            d->nblocks = o->n;
            o->b = NULL;
        }
    }
    d->contiguous = covers(d);
    d->lead = lead_of(d);
    if (d->extent > 0 && d->extent <= INT_MAX) {
        CHECK(MPI_Type_contiguous((int)d->extent, MPI_BYTE, &d->whole));
        CHECK(MPI_Type_commit(&d->whole));
    }
fn_exit:
    return rc;
}

int trd_dtype_analyze(MPI_Datatype type, trd_dtype_info *out)
{
    int ni, na, nt, comb, flag, rc;
    cached *e = NULL;
    size_t work = 0;
    level o = {0};
    o.base = MPI_DATATYPE_NULL;
    CHECK(MPI_Type_get_envelope(type, &ni, &na, &nt, &comb));
    if (comb == MPI_COMBINER_NAMED) {
        memset(out, 0, sizeof *out);
        out->predefined = 1;
        out->base = type;
        out->k = 1;
        out->whole = MPI_DATATYPE_NULL;
        CHECK(MPI_Type_get_extent(type, &out->lb, &out->extent));
        CHECK(MPI_Type_get_true_extent(type, &out->true_lb, &out->true_extent));
        CHECK(MPI_Type_size_x(type, &out->size));
        out->base_extent = (size_t)out->extent;
        out->contiguous = out->size == out->extent;
        return MPI_SUCCESS;
    }
    if (dtype_keyval == MPI_KEYVAL_INVALID)
        CHECK(MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, delete_fn, &dtype_keyval, NULL));
    CHECK(MPI_Type_get_attr(type, dtype_keyval, &e, &flag));
    if (flag) {
        *out = e->info;
        return MPI_SUCCESS;
    }
    if (!(e = calloc(1, sizeof *e)))
        return MPI_ERR_NO_MEM;
    CHECK(analyse(type, &o, &work));
    CHECK(describe(type, &o, &e->info));
    e->blocks = (trd_dtype_block *)e->info.blocks;
    CHECK(MPI_Type_set_attr(type, dtype_keyval, e));
    *out = e->info;
    e = NULL;
fn_exit:
    if (e) {
        if (e->info.whole != MPI_DATATYPE_NULL)
            MPI_Type_free(&e->info.whole);
        free(e->blocks);
        free(e);
    }
    free(o.b);
    return rc;
}

/* ---- Copies ------------------------------------------------------------------ */

/* Copy count elements between the user's buffer and the plan's (to_plan: into
 * the plan's), whole elements laid out at the extent with the user type's
 * origin at shift from each element's start, or flat (whole NULL). */
typedef struct layout {
    int whole;
    MPI_Aint shift;
    size_t stride;
} layout;

/* ... through MPI_Pack, some elements at a time (types without blocks). */
static int copy_packed(const trd_dtype_info *d, MPI_Datatype type, const layout *l, char *user,
                       char *plan, size_t count, int to_plan)
{
    size_t per = (size_t)d->size, chunk = TRD_DTYPE_PACK_BYTES / per;
    const struct pair_layout *p = l->whole ? NULL : pair_of(d->base);
    int padded = !l->whole && d->base_extent * d->k != per;
    int rc = MPI_SUCCESS;
    if (per > INT_MAX)
        return MPI_ERR_TYPE;
    chunk = chunk ? chunk : 1;
    chunk = chunk * per > INT_MAX ? INT_MAX / per : chunk;
    char *tmp = NULL;
    if ((l->whole || padded) && !(tmp = malloc(chunk * per)))
        return MPI_ERR_NO_MEM;
    if (padded && !p) {
        rc = MPI_ERR_TYPE;
        goto fn_exit;
    }
    for (size_t i = 0; i < count; i += chunk) {
        int n = (int)(count - i < chunk ? count - i : chunk), pos = 0,
            bytes = (int)((size_t)n * per);
        char *u = user + (MPI_Aint)i * d->extent, *q = plan + i * l->stride;
        char *packed = tmp ? tmp : q; /* flat without padding: the packed bytes are the plan's */
        if (to_plan) {
            CHECK(MPI_Pack(u, n, type, packed, bytes, &pos, MPI_COMM_SELF));
            if (l->whole) {
                pos = 0;
                CHECK(MPI_Unpack(tmp, bytes, &pos, q + l->shift, n, type, MPI_COMM_SELF));
            } else if (padded) {
                size_t ps = p->vsize + sizeof(int);
                for (size_t j = 0; j < (size_t)n * d->k; j++) {
                    memcpy(q + j * d->base_extent, tmp + j * ps, p->vsize);
                    memcpy(q + j * d->base_extent + p->ioff, tmp + j * ps + p->vsize, sizeof(int));
                }
            }
        } else {
            if (l->whole) {
                CHECK(MPI_Pack(q + l->shift, n, type, tmp, bytes, &pos, MPI_COMM_SELF));
            } else if (padded) {
                size_t ps = p->vsize + sizeof(int);
                for (size_t j = 0; j < (size_t)n * d->k; j++) {
                    memcpy(tmp + j * ps, q + j * d->base_extent, p->vsize);
                    memcpy(tmp + j * ps + p->vsize, q + j * d->base_extent + p->ioff, sizeof(int));
                }
            }
            pos = 0;
            CHECK(MPI_Unpack(packed, bytes, &pos, u, n, type, MPI_COMM_SELF));
        }
    }
fn_exit:
    free(tmp);
    return rc;
}

/* memcpy of a block: inline for the sizes of a few base elements, where a
 * call per block would cost more than the copy. */
static inline void copy_block(char *dst, const char *src, size_t len)
{
    switch (len) {
    case 4:
        memcpy(dst, src, 4);
        return;
    case 8:
        memcpy(dst, src, 8);
        return;
    case 12:
        memcpy(dst, src, 12);
        return;
    case 16:
        memcpy(dst, src, 16);
        return;
    default:
        if (len <= 64 && len % 8 == 0) {
            for (size_t i = 0; i < len; i += 8)
                memcpy(dst + i, src + i, 8);
            return;
        }
        memcpy(dst, src, len);
    }
}

static int copy_elements(const trd_dtype_info *d, MPI_Datatype type, const layout *l, char *user,
                         char *plan, size_t count, int to_plan)
{
    if (!d->blocks)
        return copy_packed(d, type, l, user, plan, count, to_plan);
    for (size_t i = 0; i < count; i++) {
        char *u = user + (MPI_Aint)i * d->extent, *q = plan + i * l->stride;
        for (size_t j = 0; j < d->nblocks; j++) {
            const trd_dtype_block *b = &d->blocks[j];
            char *at = q + (l->whole ? (size_t)(b->disp + l->shift) : b->flat);
            if (to_plan)
                copy_block(at, u + b->disp, b->len);
            else
                copy_block(u + b->disp, at, b->len);
        }
    }
    return MPI_SUCCESS;
}

int trd_dtype_copy(const trd_dtype_call *dc, void *dst, const void *src, size_t count)
{
    const trd_dtype_info *d = &dc->d;
    char *to = dst, *tmp;
    const char *from = src;
    size_t per = (size_t)d->size, chunk = TRD_DTYPE_PACK_BYTES / per;
    int rc = MPI_SUCCESS;
    if (d->blocks) {
        for (size_t i = 0; i < count; i++)
            for (size_t j = 0; j < d->nblocks; j++) {
                MPI_Aint at = (MPI_Aint)i * d->extent + d->blocks[j].disp;
                copy_block(to + at, from + at, d->blocks[j].len);
            }
        return MPI_SUCCESS;
    }
    if (per > INT_MAX)
        return MPI_ERR_TYPE;
    chunk = chunk ? chunk : 1;
    if (!(tmp = malloc(chunk * per)))
        return MPI_ERR_NO_MEM;
    for (size_t i = 0; i < count; i += chunk) {
        int n = (int)(count - i < chunk ? count - i : chunk), pos = 0,
            bytes = (int)((size_t)n * per);
        MPI_Aint at = (MPI_Aint)i * d->extent;
        CHECK(MPI_Pack(from + at, n, dc->utype, tmp, bytes, &pos, MPI_COMM_SELF));
        pos = 0;
        CHECK(MPI_Unpack(tmp, bytes, &pos, to + at, n, dc->utype, MPI_COMM_SELF));
    }
fn_exit:
    free(tmp);
    return rc;
}

/* ---- Reductions --------------------------------------------------------------- */

const char *trd_dtype_reduction(trd_dtype_call *dc, MPI_Datatype type, MPI_Op op, size_t count,
                                trd_reducer *red)
{
    trd_dtype_info *d = &dc->d;
    int commutative;
    memset(dc, 0, sizeof *dc);
    if (type == MPI_DATATYPE_NULL || op == MPI_OP_NULL)
        return "invalid arguments";
    if (trd_dtype_analyze(type, d) != MPI_SUCCESS)
        return "derived datatype treeduce cannot read";
    if (d->predefined)
        return "unknown datatype";
    if (d->why)
        return d->why;
    dc->utype = type;
    dc->op = op;
    if (trd_op_is_predefined(op)) {
        /* elementwise on the base elements: the base type's kernel, or
         * MPI_Reduce_local on the base type (coll.c asks whether MPI accepts it) */
        if (trd_reducer_init(red, d->base, op) != MPI_SUCCESS)
            return "invalid arguments";
        if (count > (size_t)INT_MAX / d->k)
            return "more than INT_MAX base elements in a derived datatype";
        dc->per = d->k;
        dc->type = d->base;
        dc->stride = d->k * d->base_extent;
        dc->direct = d->contiguous && d->nblocks == 1 && d->blocks[0].flat == 0 &&
                     (size_t)d->extent == dc->stride;
    } else {
        if (d->true_extent > d->extent)
            return "derived datatype whose elements overlap (extent below true extent)";
        if (d->whole == MPI_DATATYPE_NULL)
            return "derived datatype of more than INT_MAX bytes per element";
        if (MPI_Op_commutative(op, &commutative) != MPI_SUCCESS)
            return "invalid arguments";
        dc->whole = 1;
        dc->per = 1;
        dc->type = d->whole;
        dc->stride = (size_t)d->extent;
        dc->direct = d->contiguous;
        dc->shift = dc->direct ? -d->true_lb : (MPI_Aint)d->lead - d->true_lb;
        red->fn = NULL;
        red->shift = dc->shift; /* the executor reduces at element starts */
        red->op = op;
        red->type = type;
        red->extent = (size_t)d->extent;
        red->commutative = commutative;
    }
    dc->derived = 1;
    return NULL;
}

/* The plan's buffers of this thread's calls, kept for the next call up to
 * TRD_DTYPE_KEEP_BYTES: fresh pages would cost a fault each, every call. */
#define TRD_DTYPE_KEEP_BYTES ((size_t)64 << 20)
static _Thread_local struct {
    char *mem;
    size_t bytes;
    int busy;
} kept;

static char *buffers_get(size_t bytes)
{
    if (bytes > TRD_DTYPE_KEEP_BYTES || kept.busy)
        return malloc(bytes);
    if (kept.bytes < bytes) {
        free(kept.mem);
        kept.bytes = 0;
        if (!(kept.mem = malloc(bytes)))
            return NULL;
        kept.bytes = bytes;
    }
    kept.busy = 1;
    return kept.mem;
}

static void buffers_put(char *mem)
{
    if (mem && mem == kept.mem)
        kept.busy = 0;
    else
        free(mem);
}

int trd_dtype_enter(trd_dtype_call *dc, const void **sendbuf, void **recvbuf, size_t nin,
                    size_t nout)
{
    const trd_dtype_info *d = &dc->d;
    layout l = {dc->whole, dc->shift, dc->stride};
    const void *in = *sendbuf ? *sendbuf : *recvbuf;
    int rc;
    dc->mem = dc->out = NULL;
    dc->user_out = NULL;
    dc->nout = nout;
    if (dc->direct) {
        if (*sendbuf)
            *sendbuf = (const char *)*sendbuf + d->true_lb;
        *recvbuf = nout ? (char *)*recvbuf + d->true_lb : NULL;
        return MPI_SUCCESS;
    }
    /* the input, then (not in place) the result, each on a cache line */
    if (nin > SIZE_MAX / 4 / dc->stride || nout > SIZE_MAX / 4 / dc->stride)
        return MPI_ERR_NO_MEM;
    size_t in_bytes = (nin * dc->stride + TRD_CACHE_LINE - 1) / TRD_CACHE_LINE * TRD_CACHE_LINE;
    size_t out_bytes = *sendbuf ? nout * dc->stride : 0;
    if (!(dc->mem = buffers_get(in_bytes + out_bytes + 1)))
        return MPI_ERR_NO_MEM;
    if ((rc = copy_elements(d, dc->utype, &l, (char *)in, dc->mem, nin, 1)) != MPI_SUCCESS) {
        buffers_put(dc->mem);
        dc->mem = NULL;
        return rc;
    }
    dc->user_out = nout ? *recvbuf : NULL;
    if (*sendbuf) {
        *sendbuf = dc->mem;
        dc->out = nout ? dc->mem + in_bytes : NULL;
    } else {
        dc->out = dc->mem;
    }
    *recvbuf = dc->out;
    return MPI_SUCCESS;
}

int trd_dtype_leave(trd_dtype_call *dc, int ran, int rc)
{
    layout l = {dc->whole, dc->shift, dc->stride};
    if (ran && rc == MPI_SUCCESS && dc->out && dc->user_out)
        rc = copy_elements(&dc->d, dc->utype, &l, dc->user_out, dc->out, dc->nout, 0);
    buffers_put(dc->mem);
    dc->mem = dc->out = NULL;
    return rc;
}
