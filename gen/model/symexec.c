/* The execution engine of the verifier and the cost model (symexec.h). */
#include "symexec.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topo.h"
#include "util.h"

static const char *const ctr_names[TRD_CTR_MAX] = {"in", "red", "done"};

static int vfail(trd_exec *x, int code, const char *prefix, const char *fmt, va_list ap)
{
    if (x->failed)
        return x->failed; /* the first error is the one reported */
    x->failed = code;
    if (x->why && x->whylen) {
        int n = snprintf(x->why, x->whylen, "%s", prefix);
        if (n >= 0 && (size_t)n < x->whylen)
            vsnprintf(x->why + n, x->whylen - (size_t)n, fmt, ap);
    }
    return x->failed;
}

int trd_exec_failf(trd_exec *x, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = vfail(x, TRD_ERR_VERIFY, "", fmt, ap);
    va_end(ap);
    return rc;
}

static int oom_va(trd_exec *x, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = vfail(x, TRD_ERR_NOMEM, "", fmt, ap);
    va_end(ap);
    return rc;
}

int trd_exec_oom(trd_exec *x)
{
    return oom_va(x, "out of memory");
}

int trd_exec_fail(trd_exec *x, int r, size_t k, const char *fmt, ...)
{
    char where[96], callname[24] = "";
    va_list ap;
    int c = x->call[r] < x->ncalls ? x->call[r] : x->ncalls - 1;
    if (c == 1)
        snprintf(callname, sizeof callname, ", second call");
    else if (c > 1)
        snprintf(callname, sizeof callname, ", call %d", c + 1);
    snprintf(where, sizeof where, "rank %d, op %zu (round %d%s): ", r, k - x->s->first[r],
             x->s->op[k].round, callname);
    va_start(ap, fmt);
    int rc = vfail(x, TRD_ERR_VERIFY, where, fmt, ap);
    va_end(ap);
    return rc;
}

int trd_exec_init(trd_exec *x, const trd_sched *s, const trd_shape *sh, int ncalls,
                  const trd_exec_hooks *h, void *ctx, int record, char *why, size_t whylen)
{
    int p = s->nranks;
    memset(x, 0, sizeof *x);
    x->s = s;
    x->sh = sh;
    x->h = h;
    x->ctx = ctx;
    x->ncalls = ncalls < 1 ? 1 : ncalls;
    x->p = p;
    x->record = record;
    x->why = why;
    x->whylen = whylen;
    if (p != sh->nranks)
        return trd_exec_failf(x, "the schedule has %d ranks, the communicator %d", p, sh->nranks);
    if (s->rank0 != 0 || s->nplanned != p)
        return trd_exec_failf(x, "the schedule holds the ops of ranks %d..%d of %d, not all",
                              s->rank0, s->rank0 + s->nplanned - 1, p);
    size_t np = (size_t)p + 1, nc = np * TRD_CTR_MAX;
    x->pc = malloc(np * sizeof *x->pc);
    x->call = calloc(np, sizeof *x->call);
    x->wend = calloc(np, sizeof *x->wend);
    x->done = calloc(s->nops + 1, 1);
    x->local = malloc(np * sizeof *x->local);
    x->npn = malloc(np * sizeof *x->npn);
    x->epochs = calloc((size_t)sh->nnodes + 1, sizeof *x->epochs);
    x->ctr = calloc(nc, sizeof *x->ctr);
    x->all_in = calloc(np, sizeof *x->all_in);
    x->hist = calloc(nc, sizeof *x->hist);
    x->queue = malloc(np * sizeof *x->queue);
    x->queued = calloc(np, 1);
    if (!x->pc || !x->call || !x->wend || !x->done || !x->local || !x->npn || !x->epochs ||
        !x->ctr || !x->all_in || !x->hist || !x->queue || !x->queued)
        return trd_exec_oom(x);
    for (int v = 0; v < sh->nnodes; v++) {
        int first = sh->node_first[v], n = sh->node_first[v + 1] - first;
        for (int l = 0; l < n; l++) {
            int r = sh->ring[first + l];
            x->local[r] = l;
            x->npn[r] = n;
            /* the ranks of a node take the same epochs: they share the slots */
            if (s->nepochs[r] != s->nepochs[sh->ring[first]])
                return trd_exec_failf(x,
                                      "rank %d takes %d epochs of its node's segment, rank %d "
                                      "of the same node %d",
                                      r, s->nepochs[r], sh->ring[first],
                                      s->nepochs[sh->ring[first]]);
        }
        x->epochs[v] = n ? s->nepochs[sh->ring[first]] : 0;
    }
    for (int r = 0; r < p; r++)
        x->pc[r] = s->first[r];
    return TRD_OK;
}

void trd_exec_free(trd_exec *x)
{
    if (x->hist)
        for (size_t i = 0; i < ((size_t)x->p + 1) * TRD_CTR_MAX; i++)
            free(x->hist[i].id);
    free(x->pc);
    free(x->call);
    free(x->wend);
    free(x->done);
    free(x->local);
    free(x->npn);
    free(x->epochs);
    free(x->ctr);
    free(x->all_in);
    free(x->hist);
    free(x->sig);
    free(x->msgs);
    free(x->queue);
    free(x->queued);
    memset(x, 0, sizeof *x);
}

/* ---- Ops ------------------------------------------------------------------------ */

static int has_send(const trd_sstep *o)
{
    return o->op == TRD_S_SEND || o->op == TRD_S_SENDRECV;
}

static int has_recv(const trd_sstep *o)
{
    return o->op == TRD_S_RECV || o->op == TRD_S_SENDRECV;
}

static int recv_peer(const trd_sstep *o)
{
    return o->op == TRD_S_RECV ? o->peer : o->peer2;
}

static size_t recv_len(const trd_sstep *o)
{
    return o->op == TRD_S_SENDRECV ? o->rlen : o->len;
}

static int is_comm(const trd_sstep *o)
{
    return has_send(o) || has_recv(o);
}

static int op_done(const trd_exec *x, size_t k)
{
    const trd_sstep *o = &x->s->op[k];
    return (!has_send(o) || (x->done[k] & 1)) && (!has_recv(o) || (x->done[k] & 2));
}

static void wake(trd_exec *x, int r)
{
    if (!x->queued[r]) {
        x->queued[r] = 1;
        x->queue[x->qtail++ % ((size_t)x->p + 1)] = r;
    }
}

int trd_exec_signal_at(const trd_exec *x, int t, int c, int e)
{
    const struct trd_xhist *hs = &x->hist[(size_t)t * TRD_CTR_MAX + (size_t)c];
    size_t lo = 0, hi = hs->n; /* values are non-decreasing: the first >= e */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (x->sig[hs->id[mid]].value >= e)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo < hs->n ? hs->id[lo] : -1;
}

/* Rank r's signal s->op[k]. */
static int do_signal(trd_exec *x, int r, size_t k)
{
    const trd_sstep *o = &x->s->op[k];
    int v = x->sh->node_of[r];
    if (o->ctr >= TRD_CTR_MAX)
        return trd_exec_fail(x, r, k, "signals counter %d, which does not exist", o->ctr);
    if (o->epoch > x->epochs[v])
        return trd_exec_fail(x, r, k, "signals its %s counter at epoch %d of a call of %d epochs",
                             ctr_names[o->ctr], o->epoch, x->epochs[v]);
    int e = trd_exec_epoch(x, r, k), *cur = &x->ctr[(size_t)r * TRD_CTR_MAX + o->ctr];
    if (e < *cur)
        return trd_exec_fail(x, r, k, "signals its %s counter at epoch %d after epoch %d",
                             ctr_names[o->ctr], o->epoch, *cur - (e - o->epoch));
    struct trd_xhist *hs = &x->hist[(size_t)r * TRD_CTR_MAX + o->ctr];
    if (trd__grow_n((void **)&hs->id, &hs->cap, hs->n + 1, sizeof *hs->id) ||
        trd__grow_n((void **)&x->sig, &x->sigcap, x->nsig + 1, sizeof *x->sig))
        return trd_exec_oom(x);
    int id = (int)x->nsig++;
    x->sig[id] = (struct trd_xsig){e, r};
    hs->id[hs->n++] = id;
    *cur = e;
    if (x->h->signal && x->h->signal(x, r, k, id))
        return -1;
    /* the ranks of the node waiting may go on */
    for (int i = x->sh->node_first[v]; i < x->sh->node_first[v + 1]; i++) {
        int q = x->sh->ring[i];
        if (x->call[q] < x->ncalls && x->pc[q] < x->s->first[q + 1] &&
            x->s->op[x->pc[q]].op == TRD_S_WAIT)
            wake(x, q);
    }
    return 0;
}

/* The ranks rank r's wait s->op[k] waits for: *n of them from *first in
 * the node's ring order, or the one rank *one (*n = 1, *first -1). */
static int wait_targets(trd_exec *x, int r, size_t k, int *first, int *n, int *one)
{
    const trd_sstep *o = &x->s->op[k];
    int v = x->sh->node_of[r];
    if (o->ctr >= TRD_CTR_MAX)
        return trd_exec_fail(x, r, k, "waits for counter %d, which does not exist", o->ctr);
    if (o->peer == TRD_PEER_LOCALS) {
        if (o->nwait < 1 || o->nwait > x->npn[r])
            return trd_exec_fail(x, r, k, "waits for local ranks 0..%d of a node of %d",
                                 o->nwait - 1, x->npn[r]);
        *first = x->sh->node_first[v];
        *n = o->nwait;
        *one = -1;
        return 0;
    }
    if (o->peer < 0 || o->peer >= x->p)
        return trd_exec_fail(x, r, k, "waits for rank %d", o->peer);
    if (x->sh->node_of[o->peer] != v)
        return trd_exec_fail(x, r, k, "waits for rank %d, not on its node", o->peer);
    *first = -1;
    *n = 1;
    *one = o->peer;
    return 0;
}

/* Rank r's wait s->op[k]: 1 done, 0 blocked, -1 error. */
static int do_wait(trd_exec *x, int r, size_t k)
{
    const trd_sstep *o = &x->s->op[k];
    int first = -1, n = 0, one = -1;
    if (wait_targets(x, r, k, &first, &n, &one))
        return -1;
    int e = trd_exec_epoch(x, r, k), all = one < 0 && n == x->npn[r];
    if (e <= 0)
        return 1; /* an epoch of the calls before the first */
    /* every local rank was seen at in x+1: its done of x is implied [FLEX §3.1] */
    if (all && o->ctr == TRD_CTR_DONE && x->all_in[r] >= e + 1)
        return 1;
    for (int i = 0; i < n; i++) {
        int t = one >= 0 ? one : x->sh->ring[first + i];
        if (x->ctr[(size_t)t * TRD_CTR_MAX + o->ctr] < e)
            return 0;
    }
    for (int i = 0; i < n; i++) {
        int t = one >= 0 ? one : x->sh->ring[first + i];
        if (x->h->waited && x->h->waited(x, r, k, t, trd_exec_signal_at(x, t, o->ctr, e)))
            return -1;
    }
    if (all && o->ctr == TRD_CTR_IN && e > x->all_in[r])
        x->all_in[r] = e;
    return 1;
}

/* Try to match the send halves of rank a's posted window; returns progress. */
static int try_sends(trd_exec *x, int a)
{
    const trd_sched *s = x->s;
    size_t k0 = x->pc[a], end = x->wend[a];
    int progress = 0;
    for (size_t i = k0; i < end && !x->failed; i++) {
        const trd_sstep *o = &s->op[i];
        if (!has_send(o) || (x->done[i] & 1))
            continue;
        int b = o->peer, earlier = 0;
        /* messages between two ranks match in the order they are posted */
        for (size_t j = k0; j < i && !earlier; j++)
            earlier = has_send(&s->op[j]) && s->op[j].peer == b && !(x->done[j] & 1);
        if (earlier || x->call[b] != x->call[a] || !x->wend[b])
            continue;
        for (size_t k = x->pc[b]; k < x->wend[b]; k++) {
            const trd_sstep *q = &s->op[k];
            if (!has_recv(q) || recv_peer(q) != a || (x->done[k] & 2))
                continue;
            if (recv_len(q) != o->len) {
                trd_exec_fail(x, b, k,
                              "receives %zu elements from rank %d, which sends %zu (its op %zu)",
                              recv_len(q), a, o->len, i - s->first[a]);
                return progress;
            }
            if (o->round != q->round) {
                trd_exec_fail(x, b, k, "receives from rank %d the message of its round %d", a,
                              o->round);
                return progress;
            }
            if (x->h->message && x->h->message(x, a, i, b, k))
                return progress;
            x->done[i] |= 1;
            x->done[k] |= 2;
            x->nmatched++;
            if (x->record == TRD_X_RECORD_ALL ||
                (x->record == TRD_X_RECORD_INTER && x->sh->node_of[a] != x->sh->node_of[b])) {
                if (trd__grow_n((void **)&x->msgs, &x->msgcap, x->nmsgs + 1, sizeof *x->msgs)) {
                    trd_exec_oom(x);
                    return progress;
                }
                x->msgs[x->nmsgs++] = (trd_xmsg){x->call[a], o->round, a, b};
            }
            wake(x, b);
            progress = 1;
            break;
        }
    }
    return progress;
}

/* Post rank r's window at s->op[k]. */
static int post(trd_exec *x, int r, size_t k)
{
    const trd_sched *s = x->s;
    size_t end = k, re = s->first[r + 1];
    while (end < re && s->op[end].nb)
        end++;
    if (end < re)
        end++;
    for (size_t j = k; j < end; j++) {
        const trd_sstep *o = &s->op[j];
        if (!is_comm(o))
            return trd_exec_fail(x, r, j, "a local op cannot be posted with a send or receive");
        if (has_send(o) && (o->peer < 0 || o->peer >= x->p || o->peer == r))
            return trd_exec_fail(x, r, j, "sends to rank %d", o->peer);
        if (has_recv(o) && (recv_peer(o) < 0 || recv_peer(o) >= x->p || recv_peer(o) == r))
            return trd_exec_fail(x, r, j, "receives from rank %d", recv_peer(o));
    }
    if (x->h->posted && x->h->posted(x, r, k, end))
        return -1;
    x->wend[r] = end;
    /* the ranks sending to this window may match it now */
    for (size_t j = k; j < end; j++)
        if (has_recv(&s->op[j]))
            wake(x, recv_peer(&s->op[j]));
    return 0;
}

/* Run rank r as far as it goes; returns progress. */
static int run_rank(trd_exec *x, int r)
{
    const trd_sched *s = x->s;
    int progress = 0;
    while (!x->failed && x->call[r] < x->ncalls) {
        size_t k = x->pc[r];
        if (k == s->first[r + 1]) { /* the call returns */
            if (x->h->leave && x->h->leave(x, r, x->call[r]))
                break;
            x->call[r]++;
            x->pc[r] = s->first[r];
            if (x->call[r] < x->ncalls && x->h->enter && x->h->enter(x, r, x->call[r]))
                break;
            progress = 1;
            continue;
        }
        const trd_sstep *o = &s->op[k];
        if (!is_comm(o) && o->nb) {
            trd_exec_fail(x, r, k, "a local op cannot be posted with the next");
            break;
        }
        if (o->op == TRD_S_REDUCE || o->op == TRD_S_COPY) {
            if (x->h->local && x->h->local(x, r, k))
                break;
            x->pc[r]++;
            progress = 1;
            continue;
        }
        if (o->op == TRD_S_SIGNAL) {
            if (do_signal(x, r, k))
                break;
            x->pc[r]++;
            progress = 1;
            continue;
        }
        if (o->op == TRD_S_WAIT) {
            int w = do_wait(x, r, k);
            if (w <= 0)
                break;
            x->pc[r]++;
            progress = 1;
            continue;
        }
        if (!is_comm(o)) {
            trd_exec_fail(x, r, k, "op %d does not exist", o->op);
            break;
        }
        if (!x->wend[r]) {
            if (post(x, r, k))
                break;
            progress = 1;
        }
        progress |= try_sends(x, r);
        if (x->failed)
            break;
        size_t end = x->wend[r];
        for (size_t j = k; j < end; j++)
            if (!op_done(x, j))
                return progress;
        if (x->h->completed && x->h->completed(x, r, k, end))
            break;
        memset(x->done + k, 0, end - k);
        x->pc[r] = end;
        x->wend[r] = 0;
        progress = 1;
    }
    return progress;
}

/* What rank r's op s->op[k] waits for, for the deadlock message. */
static void describe(const trd_exec *x, int r, size_t k, char *buf, size_t n)
{
    const trd_sstep *o = &x->s->op[k];
    int sd = has_send(o) && !(x->done[k] & 1), rv = has_recv(o) && !(x->done[k] & 2);
    if (o->op == TRD_S_WAIT) {
        int first = -1, cnt = 1, t = o->peer;
        if (o->peer == TRD_PEER_LOCALS) {
            first = x->sh->node_first[x->sh->node_of[r]];
            cnt = o->nwait;
        }
        int e = trd_exec_epoch(x, r, k);
        for (int i = 0; i < cnt; i++) {
            t = first >= 0 ? x->sh->ring[first + i] : o->peer;
            if (x->ctr[(size_t)t * TRD_CTR_MAX + o->ctr] < e)
                break;
        }
        snprintf(buf, n, "waits for rank %d's %s counter to reach epoch %d; it stays at %d", t,
                 ctr_names[o->ctr], o->epoch,
                 x->ctr[(size_t)t * TRD_CTR_MAX + o->ctr] - (e - o->epoch));
    } else if (sd && rv) {
        snprintf(buf, n, "waits to send to %d and receive from %d, which no rank matches", o->peer,
                 o->peer2);
    } else if (sd) {
        snprintf(buf, n, "waits to send to %d, which no rank matches", o->peer);
    } else {
        snprintf(buf, n, "waits to receive from %d, which no rank matches", recv_peer(o));
    }
}

int trd_exec_run(trd_exec *x)
{
    const trd_sched *s = x->s;
    int p = x->p;
    if (x->failed)
        return x->failed;
    for (int r = 0; r < p && !x->failed; r++)
        if (x->h->enter)
            x->h->enter(x, r, 0);
    /* every rank once, then those woken by a match, a posted window or a
     * signal, until none is left */
    for (int r = 0; r < p; r++)
        wake(x, r);
    while (!x->failed && x->qhead != x->qtail) {
        int r = x->queue[x->qhead++ % ((size_t)p + 1)];
        x->queued[r] = 0;
        run_rank(x, r);
    }
    for (int progress = 1; !x->failed && progress;) {
        progress = 0;
        for (int r = 0; r < p && !x->failed; r++)
            progress |= run_rank(x, r);
    }
    for (int r = 0; r < p && !x->failed; r++)
        if (x->call[r] < x->ncalls) {
            char d[160];
            size_t k = x->pc[r];
            /* the first op of the window not done */
            for (size_t j = k; x->wend[r] && j < x->wend[r]; j++)
                if (!op_done(x, j)) {
                    k = j;
                    break;
                }
            describe(x, r, k, d, sizeof d);
            trd_exec_fail(x, r, k, "deadlock: %s", d);
        }
    (void)s;
    return x->failed;
}

/* ---- Messages by round --------------------------------------------------------- */

static const trd_xmsg *sort_msgs;

static int cmp_round(const void *a, const void *b)
{
    size_t i = *(const size_t *)a, j = *(const size_t *)b;
    const trd_xmsg *x = &sort_msgs[i], *y = &sort_msgs[j];
    if (x->call != y->call)
        return (x->call > y->call) - (x->call < y->call);
    if (x->round != y->round)
        return (x->round > y->round) - (x->round < y->round);
    return (i > j) - (i < j);
}

size_t *trd_exec_round_order(const trd_exec *x, size_t *n)
{
    size_t *order = malloc((x->nmsgs + 1) * sizeof *order);
    *n = x->nmsgs;
    if (!order)
        return NULL;
    for (size_t k = 0; k < x->nmsgs; k++)
        order[k] = k;
    sort_msgs = x->msgs;
    qsort(order, x->nmsgs, sizeof *order, cmp_round);
    return order;
}

size_t trd_exec_round_end(const trd_exec *x, const size_t *order, size_t n, size_t g0)
{
    const trd_xmsg *a = &x->msgs[order[g0]];
    size_t g1 = g0;
    while (g1 < n && x->msgs[order[g1]].round == a->round && x->msgs[order[g1]].call == a->call)
        g1++;
    return g1;
}
