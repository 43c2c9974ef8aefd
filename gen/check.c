/* The schedules a machine's plan uses, verified before anything is written
 * (check.h). */
#include "check.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "trd_select.h"

/* Largest communicator a schedule is verified on at generation time; the
 * ring, whose schedule grows as p^2 messages, up to TRD_CHECK_MAX_RING. */
#define TRD_CHECK_MAX_RANKS 4096
#define TRD_CHECK_MAX_RING 1024

/* --break-schedule ALG:RANK:OP, parsed once: drop that op (alg "" none). */
typedef struct breaker {
    char alg[32];
    int rank;
    long op;
} breaker;

static int parse_break(const char *spec, breaker *b)
{
    const char *a = strchr(spec, ':'), *c = a ? strchr(a + 1, ':') : NULL;
    if (!a || !c || (size_t)(a - spec) >= sizeof b->alg)
        return -1;
    memcpy(b->alg, spec, (size_t)(a - spec));
    b->alg[a - spec] = '\0';
    char *end;
    b->rank = (int)strtol(a + 1, &end, 10);
    if (end != c)
        return -1;
    b->op = strtol(c + 1, &end, 10);
    return *end || b->rank < 0 || b->op < 0 ? -1 : 0;
}

/* Drop rank r's op k (testing the refusal). */
static void drop_op(trd_sched *s, int r, long k)
{
    if (r < s->nranks && (size_t)k < s->first[r + 1] - s->first[r])
        trd_sched_drop(s, s->first[r] + (size_t)k);
}

int trd_machine_shape(trd_topo_t t, int nnodes, int ppn, trd_shape_store *st, int **machine)
{
    int n = nnodes ? nnodes : trd_topo_nnodes(t);
    int *p = malloc((size_t)n * sizeof *p);
    *machine = malloc((size_t)n * sizeof **machine);
    if (!p || !*machine) {
        free(p);
        free(*machine);
        return -1;
    }
    for (int v = 0; v < n; v++) {
        p[v] = ppn ? ppn : trd_topo_nodetype_ncores(t, trd_topo_node_type(t, v));
        (*machine)[v] = v;
    }
    int rc = trd_shape_init(st, n, p, 0);
    free(p);
    if (rc) {
        free(*machine);
        return -1;
    }
    st->s.machine_node = *machine;
    return 0;
}

/* Plan and verify alg over st for the variants the runtime runs; 0 or -1
 * with the diagnostic reported to d. */
static int check_alg(trd_topo_t t, const trd_check_opts *o, const breaker *brk, trd_diag *d,
                     const trd_shape_store *st, const char *alg, const char *params,
                     int commutative, trd_check_stats *stats)
{
    /* a few elements (most blocks empty), and enough for a block per rank:
     * blocks are split on 64-byte lines, 8 doubles; algorithms that move
     * whole vectors split blocks only on the node */
    int ppn_min, ppn_max;
    trd_shape_ppn(&st->s, &ppn_min, &ppn_max);
    int split = !strcmp(alg, "ring") || !strcmp(alg, "rabenseifner");
    size_t counts[2] = {3, (size_t)(split ? st->s.nranks : ppn_max) * 8 + 5};
    char why[512];
    /* only the algorithms with node phases differ with shared memory */
    int phases = !strcmp(alg, "nap") || !strcmp(alg, "smp") || !strcmp(alg, "flex") ||
                 !strcmp(alg, "hring");
    int shm_last = phases ? 0 : 1;
    for (int k = 0; k < 2; k++)
        for (int shm = 1; shm >= shm_last; shm--) {
            trd_sched s;
            if (trd_sched_plan(&s, alg, params, &st->s, counts[k], 8, 0, commutative, shm, why,
                               sizeof why)) {
                trd_diag_error(d, (trd_loc){o->input, 0, 0}, "cannot plan %s%s%s: %s", alg,
                               *params ? ":" : "", params, why);
                return -1;
            }
            if (!strcmp(brk->alg, alg))
                drop_op(&s, brk->rank, brk->op);
            trd_verify_opts vo = {t, 1};
            int rc = trd_sched_verify(&s, &st->s, &vo, why, sizeof why);
            stats->ops += s.nops;
            trd_sched_free(&s);
            stats->nverified++;
            if (st->s.nranks > stats->largest)
                stats->largest = st->s.nranks;
            if (rc) {
                trd_diag_error(d, (trd_loc){o->input, 0, 0},
                               "the %s%s%s schedule for %d nodes x %d ranks (%zu elements, %s%s) fails "
                               "verification: %s; nothing written",
                               alg, *params ? ":" : "", params, st->s.nnodes, st->s.nranks / (st->s.nnodes ? st->s.nnodes : 1),
                               counts[k], shm ? "shared memory" : "point to point",
                               commutative ? "" : ", rank order", why);
                return -1;
            }
        }
    return 0;
}

static int planned(const char *alg)
{
    for (int i = 0; trd_sched_planners[i]; i++)
        if (!strcmp(trd_sched_planners[i], alg))
            return 1;
    return 0;
}

/* Verify over nnodes x ppn (0, 0: the whole machine, each node's cores)
 * every algorithm of choice[0..n) with its default parameters and, where
 * with_params, with the range's searched ones (the runtime uses those on
 * communicators of the planned rank count), each pair once. */
static int check_shape(trd_topo_t t, const trd_check_opts *o, const breaker *brk, trd_diag *d,
                       int nnodes, int ppn, const struct trd_choice *choice, int n, int with_params,
                       trd_check_stats *stats)
{
    trd_shape_store st;
    int *machine, rc = 0;
    if (trd_machine_shape(t, nnodes, ppn, &st, &machine)) {
        trd_diag_error(d, (trd_loc){o->input, 0, 0}, "out of memory");
        return -1;
    }
    if (st.s.nranks > TRD_CHECK_MAX_RANKS) {
        stats->skipped++;
    } else {
        /* non-commutative operations run recursive doubling in rank order */
        rc = check_alg(t, o, brk, d, &st, "rd", "", 0, stats);
        /* each (algorithm, parameters) pair once: the defaults, then the
         * searched parameters where they apply */
        struct {
            int alg;
            const char *params;
        } pair[2 * TRD_MAX_CHOICES];
        int np = 0;
        for (int i = 0; i < 2 * n; i++) {
            const char *params = i < n ? "" : choice[i - n].params;
            int alg = choice[i % n].alg, seen = i >= n && (!with_params || !*params);
            for (int k = 0; k < np && !seen; k++)
                seen = pair[k].alg == alg && !strcmp(pair[k].params, params);
            if (!seen)
                pair[np].alg = alg, pair[np++].params = params;
        }
        for (int k = 0; k < np && !rc; k++) {
            const char *alg = trd_model_name(pair[k].alg);
            if (!planned(alg) || (!strcmp(alg, "ring") && st.s.nranks > TRD_CHECK_MAX_RING)) {
                stats->skipped++;
                continue;
            }
            rc = check_alg(t, o, brk, d, &st, alg, pair[k].params, 1, stats);
        }
    }
    trd_shape_free(&st);
    free(machine);
    return rc;
}

int trd_check_schedules(trd_topo_t t, const trd_plan *p, const trd_check_opts *o, trd_diag *d,
                        trd_check_stats *stats)
{
    clock_t t0 = clock();
    memset(stats, 0, sizeof *stats);
    int rc = 0;
    breaker brk = {"", -1, -1};
    if (o->break_spec && parse_break(o->break_spec, &brk)) {
        trd_diag_error(d, (trd_loc){o->input, 0, 0}, "--break-schedule: expected ALG:RANK:OP, not '%s'",
                       o->break_spec);
        return -1;
    }
    if (p->nnodes == 1) {
        /* one node without shared memory: NAP (recursive doubling), then ring */
        struct trd_choice one[2] = {{.alg = 0}, {.alg = 1}};
        rc = check_shape(t, o, &brk, d, 1, 0, one, 2, 0, stats);
    }
    for (int s = 0; s < p->nshapes && !rc; s++)
        rc = check_shape(t, o, &brk, d, p->shape[s].nnodes, p->shape[s].ppn, p->shape[s].choice,
                         p->shape[s].nchoices, 1, stats);
    /* the whole machine with every node's own core count: the searched
     * parameters apply where that is the planned rank count */
    if (!rc && p->nnodes > 1) {
        int ranks = 0;
        for (int v = 0; v < p->nnodes; v++)
            ranks += trd_topo_nodetype_ncores(t, trd_topo_node_type(t, v));
        rc = check_shape(t, o, &brk, d, 0, 0, p->choice, p->nchoices, ranks == p->nnodes * p->ppn,
                         stats);
    }
    stats->seconds = (double)(clock() - t0) / CLOCKS_PER_SEC;
    return rc;
}

/* ---- The ranges on their schedules (--explain) ---------------------------- */

/* Predicted microseconds of the schedule of algorithm name (with params)
 * over sh for bytes bytes of doubles (at least one): -1 where it cannot be
 * planned for sh, -2 where it cannot be timed. */
static double sched_us(trd_topo_t t, const trd_plan *p, const trd_shape *sh, const char *name,
                       const char *params, double bytes)
{
    trd_sched s;
    char why[256];
    size_t count = (size_t)(bytes / 8) ? (size_t)(bytes / 8) : 1;
    if (trd_sched_plan(&s, name, params, sh, count, 8, 0, 1, 1, why, sizeof why))
        return -1;
    trd_cost_model cm = {t, p->gamma_s_per_byte, TRD_ALPHA_R_RATIO};
    double c = trd_sched_cost(&s, sh, &cm, 8, why, sizeof why);
    trd_sched_free(&s);
    return c < 0 ? -2 : c * 1e6;
}

/* The same for candidate alg of the plan, or -1 where it is not planned as a
 * schedule. */
static double ir_us(trd_topo_t t, const trd_plan *p, const trd_shape *sh, int alg, double bytes)
{
    const char *name = trd_model_name(alg);
    double us = planned(name) ? sched_us(t, p, sh, name, "", bytes) : -1;
    return us < 0 ? -1 : us;
}

void trd_explain_schedules(FILE *f, trd_topo_t t, const trd_plan *p)
{
    trd_shape_store st;
    int *machine;
    if (p->nnodes < 2 || trd_machine_shape(t, 0, 0, &st, &machine))
        return;
    if (st.s.nranks > TRD_CHECK_MAX_RING) {
        fprintf(f, "\nthe schedules over the whole machine: not timed above %d ranks\n", TRD_CHECK_MAX_RING);
    } else {
        fprintf(f, "\nthe schedules over the whole machine (%d ranks, each node's cores), timed,\n"
                   "  microseconds:\n  %10s", st.s.nranks, "bytes");
        for (int a = 0; a < TRD_NMODELS; a++)
            fprintf(f, " %12s", trd_model_name(a));
        fprintf(f, "\n");
        for (double sz = 8; sz <= 64.0 * 1024 * 1024; sz *= 16) {
            fprintf(f, "  %10.0f", sz);
            for (int a = 0; a < TRD_NMODELS; a++) {
                double us = ir_us(t, p, &st.s, a, sz);
                if (us < 0)
                    fprintf(f, " %12s", "-");
                else
                    fprintf(f, " %12.2f", us);
            }
            fprintf(f, "\n");
        }
    }
    trd_shape_free(&st);
    free(machine);
}

int trd_predict_csv(FILE *f, trd_topo_t t, const trd_plan *p, double max_bytes)
{
    trd_shape_store st;
    int *machine, rc = 0;
    if (trd_machine_shape(t, 0, 0, &st, &machine))
        return -1;
    fprintf(f, "algorithm,bytes,predicted_us\n");
    for (int a = 0; trd_sched_planners[a] && !rc; a++) {
        for (double b = 8; b <= max_bytes && !rc; b *= 2) {
            double us = sched_us(t, p, &st.s, trd_sched_planners[a], "", b);
            if (us == -1)
                break; /* not for this machine (e.g. a planner needing several nodes) */
            if (us < 0)
                rc = -1;
            else
                fprintf(f, "%s,%.0f,%.4f\n", trd_sched_planners[a], b, us);
        }
    }
    trd_shape_free(&st);
    free(machine);
    return rc;
}

/* ---- Size ranges drawn on the schedules ------------------------------------- */

/* The ranges are drawn up to this message size; the last one goes on from
 * there.  Crossovers are bisected to 1/TRD_SELECT_PRECISION of the size. */
#define TRD_SELECT_TOP_BYTES 1073741824.0
#define TRD_SELECT_PRECISION 64

/* One shape's timed candidates, memoised by (algorithm, element count). */
typedef struct ir_sel {
    trd_topo_t t;
    const trd_plan *p;
    const trd_shape *sh;
    struct memo {
        size_t count;
        int alg;
        double us; /* INFINITY: not available for the shape */
    } *memo;
    size_t nmemo, capmemo;
    int failed; /* a schedule could not be timed */
    trd_select_stats *stats;
} ir_sel;

static double memo_get(ir_sel *x, int alg, size_t count, int *hit)
{
    for (size_t i = x->nmemo; i-- > 0;)
        if (x->memo[i].alg == alg && x->memo[i].count == count) {
            *hit = 1;
            return x->memo[i].us;
        }
    *hit = 0;
    return 0;
}

static void memo_put(ir_sel *x, int alg, size_t count, double us)
{
    if (x->nmemo == x->capmemo) {
        size_t cap = x->capmemo ? 2 * x->capmemo : 256;
        struct memo *m = realloc(x->memo, cap * sizeof *m);
        if (!m)
            return; /* not memoised: timed again */
        x->memo = m;
        x->capmemo = cap;
    }
    x->memo[x->nmemo++] = (struct memo){count, alg, us};
}

/* The cheapest link between ranks a and b of the shape: the switch-tree
 * path between their nodes, or the cheaper of the package and node links. */
static trd_link_cost cheapest_pair(const trd_topo_t t, const trd_shape *sh, int a, int b)
{
    int va = sh->node_of[a], vb = sh->node_of[b];
    if (va != vb)
        return trd_topo_path_cost(t, sh->machine_node[va], sh->machine_node[vb]);
    int ty = trd_topo_node_type(t, sh->machine_node[va]);
    trd_link_cost l = trd_topo_nodetype_package_link(t, ty), n = trd_topo_nodetype_node_link(t, ty);
    l.latency_s = fmin(l.latency_s, n.latency_s);
    l.bandwidth_Bps = fmax(l.bandwidth_Bps, n.bandwidth_Bps);
    return l;
}

double trd_ring_bound(trd_topo_t t, const trd_shape *sh, size_t count, size_t extent,
                      double gamma_s_per_byte)
{
    int p = sh->nranks;
    size_t lo, hi, big = 0;
    if (p < 2)
        return 0;
    for (int i = 0; i < p; i++) {
        trd_block_split(count, extent, p, i, &lo, &hi);
        big = hi - lo > big ? hi - lo : big;
    }
    double bytes = (double)(count - big) * (double)extent, worst = 0;
    for (int i = 0; i < p; i++) {
        trd_link_cost l = cheapest_pair(t, sh, sh->ring[i], sh->ring[(i + 1) % p]);
        trd_link_cost own = trd_topo_nodetype_package_link(
            t, trd_topo_node_type(t, sh->machine_node[sh->node_of[sh->ring[i]]]));
        double s = 2.0 * (p - 1) * l.latency_s;
        if (l.bandwidth_Bps > 0)
            s += 2 * bytes / l.bandwidth_Bps;
        s += bytes * gamma_s_per_byte; /* the blocks it reduces */
        if (own.bandwidth_Bps > 0)
            s += bytes / own.bandwidth_Bps;
        worst = s > worst ? s : worst;
    }
    return worst;
}

/* Predicted microseconds of candidate alg over the shape for count doubles;
 * INFINITY where it is not planned for the shape. */
static double cand_us(ir_sel *x, int alg, size_t count)
{
    int hit;
    double us = memo_get(x, alg, count, &hit);
    if (hit)
        return us;
    us = ir_us(x->t, x->p, x->sh, alg, (double)count * 8);
    if (us == -2)
        x->failed = 1;
    us = us < 0 ? INFINITY : us;
    x->stats->timed++;
    memo_put(x, alg, count, us);
    return us;
}

/* The best and second best candidates at count doubles.  The ring, whose
 * schedule grows as p^2, is timed only where its bound is below the best of
 * the others (with need_second, the second best: then the runner-up is
 * exact too; otherwise it is the runner-up among those timed). */
static int ir_best(ir_sel *x, size_t count, int need_second, int *second, double *tbest,
                   double *tsecond)
{
    double t[TRD_NMODELS] = {0}, ts_other = INFINITY, tb_other = INFINITY;
    int ring = -1;
    for (int a = 0; a < TRD_NMODELS; a++) {
        if (!strcmp(trd_model_name(a), "ring")) {
            ring = a;
            continue;
        }
        t[a] = cand_us(x, a, count);
        if (t[a] < tb_other)
            ts_other = tb_other, tb_other = t[a];
        else if (t[a] < ts_other)
            ts_other = t[a];
    }
    if (ring >= 0) {
        int hit;
        double memo = memo_get(x, ring, count, &hit);
        double above = need_second ? ts_other : tb_other;
        if (!hit && trd_ring_bound(x->t, x->sh, count, 8, x->p->gamma_s_per_byte) * 1e6 >
                        above * (1 + TRD_MODEL_TIE)) {
            t[ring] = INFINITY;
            x->stats->pruned++;
        } else {
            t[ring] = hit ? memo : cand_us(x, ring, count);
        }
    }
    int s, b = trd_model_pick(t, TRD_NMODELS, &s);
    *second = s;
    *tbest = t[b];
    *tsecond = s >= 0 ? t[s] : INFINITY;
    return b;
}

/* The probes, in doubles: 1, 2, 4, ... up to 4 MiB, where the schedules
 * change shape (a node phase folding whole or block-wise at
 * TRD_SHM_WHOLE_BYTES, a FLEX lane's algorithm at TRD_ALPHA_BETA_BYTES per
 * lane), then every factor of 4. */
static size_t next_probe(size_t b)
{
    return b < (size_t)4 * 1024 * 1024 / 8 ? 2 * b : 4 * b;
}

/* The ranges of one shape, as select.c draws them on the closed forms but
 * probing element counts at next_probe and bisecting each change to
 * 1/TRD_SELECT_PRECISION. */
static int draw_ranges(ir_sel *x, struct trd_choice *choice, int *nchoices)
{
    const size_t top = (size_t)(TRD_SELECT_TOP_BYTES / 8);
    int second, nc = 0;
    double tb, ts;
    size_t lo = 1;
    int cur = ir_best(x, lo, 0, &second, &tb, &ts);
    if (tb == INFINITY)
        return -1;
    while (nc < TRD_MAX_CHOICES - 1) {
        size_t good = lo, b = 1;
        while (b <= lo)
            b = next_probe(b);
        while (b <= top && ir_best(x, b, 0, &second, &tb, &ts) == cur) {
            good = b;
            b = next_probe(b);
        }
        if (b > top)
            break;
        size_t l = good, h = b;
        while (h - l > (l / TRD_SELECT_PRECISION > 1 ? l / TRD_SELECT_PRECISION : 1)) {
            size_t mid = l + (h - l) / 2;
            if (ir_best(x, mid, 0, &second, &tb, &ts) == cur)
                l = mid;
            else
                h = mid;
        }
        choice[nc++] = (struct trd_choice){.below = h * 8, .alg = cur};
        cur = ir_best(x, h, 0, &second, &tb, &ts);
        lo = h;
    }
    choice[nc++] = (struct trd_choice){.below = SIZE_MAX, .alg = cur};
    size_t from = 0;
    for (int i = 0; i < nc; i++) {
        struct trd_choice *ch = &choice[i];
        ch->typical = trd_range_typical(from, ch->below);
        size_t count = ch->typical / 8 ? ch->typical / 8 : 1;
        int b = ir_best(x, count, 1, &ch->runner_up, &tb, &ts);
        ch->us = cand_us(x, ch->alg, count);
        if (b != ch->alg) { /* the bisection's neighbourhood: the range's own is runner-up */
            ch->runner_up = b;
            ch->runner_us = tb;
        } else {
            ch->runner_us = ch->runner_up >= 0 ? ts : 0;
        }
        from = ch->below;
    }
    *nchoices = nc;
    return x->failed ? -1 : 0;
}

void trd_select_on_schedules(trd_topo_t t, trd_plan *p, trd_select_stats *stats)
{
    clock_t t0 = clock();
    memset(stats, 0, sizeof *stats);
    for (int s = 0; s < p->nshapes; s++) {
        struct trd_shape_plan *sp = &p->shape[s];
        trd_shape_store st;
        int *machine;
        if (sp->nnodes * sp->ppn > TRD_SELECT_MAX_RANKS ||
            trd_machine_shape(t, sp->nnodes, sp->ppn, &st, &machine)) {
            stats->closed++;
            continue;
        }
        ir_sel x = {t, p, &st.s, NULL, 0, 0, 0, stats};
        struct trd_choice choice[TRD_MAX_CHOICES];
        int n;
        if (draw_ranges(&x, choice, &n) == 0) {
            memcpy(sp->choice, choice, sizeof choice);
            sp->nchoices = n;
            sp->on_schedules = 1;
            stats->drawn++;
            if (sp->nnodes == p->nnodes && sp->ppn == p->ppn) {
                memcpy(p->choice, choice, sizeof choice);
                p->nchoices = n;
                p->on_schedules = 1;
            }
        } else {
            stats->closed++;
        }
        free(x.memo);
        trd_shape_free(&st);
        free(machine);
    }
    stats->seconds = (double)(clock() - t0) / CLOCKS_PER_SEC;
}

/* ---- Parameters searched on the schedules ------------------------------------ */

/* The multisets of bases 2..8 whose product is n, each in increasing and in
 * decreasing order, as schedule strings: at most cap of them [RM §4.1]. */
static int rm_candidates(int n, int minb, int *stack, int depth, char (*out)[48], int cap, int k)
{
    if (n == 1 && depth > 0) {
        for (int dir = 0; dir < 2 && k < cap; dir++) {
            size_t o = 0;
            out[k][0] = '\0';
            for (int i = 0; i < depth && o < 40; i++) {
                int b = dir ? stack[depth - 1 - i] : stack[i];
                o += (size_t)snprintf(out[k] + o, 48 - o, "%sa%d", i ? "," : "", b);
            }
            if (dir == 1 && depth > 1 && !strcmp(out[k], out[k - 1]))
                continue;
            if (o < 40)
                k++;
        }
        return k;
    }
    for (int b = minb; b <= 8 && b <= n && k < cap; b++)
        if (n % b == 0) {
            stack[depth] = b;
            k = rm_candidates(n / b, b, stack, depth + 1, out, cap, k);
        }
    return k;
}

/* The parameter strings searched for algorithm name over sh into cand
 * (at most cap); 0 for an algorithm without parameters.  rm: the bases;
 * smp and flex: the algorithm among the leaders / per lane [NAP §II-A,
 * FLEX §2.1.3]. */
static int param_candidates(const char *name, const trd_shape *sh, char (*cand)[48], int cap)
{
    if (!strcmp(name, "rm")) {
        int stack[32];
        return rm_candidates(sh->nranks, 2, stack, 0, cand, cap, 0);
    }
    if (!strcmp(name, "smp") || !strcmp(name, "flex")) {
        static const char *const inter[] = {"rd", "rabenseifner", "ring"};
        int k = 0;
        /* the ring among the nodes grows as nodes^2, as the ring over ranks */
        for (int i = 0; i < 3 && k < cap; i++)
            if (strcmp(inter[i], "ring") || sh->nnodes <= TRD_CHECK_MAX_RING)
                snprintf(cand[k++], 48, "%s", inter[i]);
        return k;
    }
    return 0;
}

/* For each range of choice[0..n) over shape sh whose algorithm has
 * parameters: the schedule with the lowest predicted time at the range's
 * typical size among the default and the candidates; its string goes to
 * params when it beats the default. */
static void search_ranges(trd_topo_t t, const trd_plan *p, const trd_shape *sh,
                          struct trd_choice *choice, int n, int on_schedules,
                          trd_search_stats *stats)
{
    char cand[64][48];
    for (int i = 0; i < n; i++) {
        struct trd_choice *ch = &choice[i];
        const char *name = trd_model_name(ch->alg);
        int nc = param_candidates(name, sh, cand, 64);
        if (!nc)
            continue;
        double best = -1;
        ch->params[0] = '\0';
        for (int c = -1; c < nc; c++) {
            const char *params = c < 0 ? "" : cand[c];
            double us = sched_us(t, p, sh, name, params, (double)ch->typical);
            if (us == -1)
                continue;
            stats->evaluated++;
            if (us >= 0 && (best < 0 || us < best * (1 - 1e-9))) {
                best = us;
                snprintf(ch->params, sizeof ch->params, "%s", params);
            }
        }
        if (on_schedules && best >= 0)
            ch->us = best; /* the range's prediction is the chosen parameters' */
        stats->searched++;
    }
}

void trd_search_params(trd_topo_t t, trd_plan *p, trd_search_stats *stats)
{
    clock_t t0 = clock();
    memset(stats, 0, sizeof *stats);
    for (int s = 0; s < p->nshapes; s++) {
        trd_shape_store st;
        int *machine;
        struct trd_shape_plan *sp = &p->shape[s];
        if (sp->nnodes * sp->ppn > TRD_CHECK_MAX_RANKS ||
            trd_machine_shape(t, sp->nnodes, sp->ppn, &st, &machine))
            continue;
        search_ranges(t, p, &st.s, sp->choice, sp->nchoices, sp->on_schedules, stats);
        /* the whole machine's ranges are the shape nnodes x ppn's */
        if (sp->nnodes == p->nnodes && sp->ppn == p->ppn)
            for (int i = 0; i < p->nchoices && i < sp->nchoices; i++) {
                memcpy(p->choice[i].params, sp->choice[i].params, sizeof p->choice[i].params);
                p->choice[i].us = sp->choice[i].us;
            }
        trd_shape_free(&st);
        free(machine);
    }
    stats->seconds = (double)(clock() - t0) / CLOCKS_PER_SEC;
}
