/* --explain and --dot. */
#include "report.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <math.h>

#include "check.h"
#include "cost.h"
#include "ring.h"
#include "shape.h"
#include "tune.h"

static void print_size(FILE *f, size_t b)
{
    if (b == SIZE_MAX)
        fprintf(f, "never");
    else if (b >= 1 << 20 && b % (1 << 20) == 0)
        fprintf(f, "%zu MiB", b >> 20);
    else if (b >= 1024 && b % 1024 == 0)
        fprintf(f, "%zu KiB", b >> 10);
    else
        fprintf(f, "%zu B", b);
}

/* The sizes [from, below) as "4 KiB .. 64 KiB", or "4 KiB and up" where
 * below is SIZE_MAX. */
static void print_sizes(FILE *f, size_t from, size_t below)
{
    print_size(f, from);
    if (below == SIZE_MAX) {
        fprintf(f, " and up");
    } else {
        fprintf(f, " .. ");
        print_size(f, below);
    }
}

static void print_link(FILE *f, trd_link_cost l)
{
    fprintf(f, "%.3g us, %.4g GB/s", l.latency_s * 1e6, l.bandwidth_Bps / 1e9);
    if (l.injection_Bps > 0)
        fprintf(f, ", injection %.4g GB/s", l.injection_Bps / 1e9);
    if (l.alpha_r_s > 0)
        fprintf(f, ", alpha_r %.3g us", l.alpha_r_s * 1e6);
}

/* Node names first..last (ring indices) as "a .. b" or "a". */
static void print_span(FILE *f, trd_topo_t t, int first, int last)
{
    if (first == last)
        fprintf(f, "%s", trd_topo_node_name(t, first));
    else
        fprintf(f, "%s..%s", trd_topo_node_name(t, first), trd_topo_node_name(t, last));
}

/* The machine as the registry's explain hooks see it (algo.h). */
static const char *explain_node_name(const void *ctx, int v)
{
    return trd_topo_node_name((trd_topo_t)ctx, v);
}

static const char *explain_span_switch(const void *ctx, int first, int last, int *depth)
{
    trd_topo_t t = (trd_topo_t)ctx;
    int x = trd_topo_node_switch(t, first), y = trd_topo_node_switch(t, last);
    while (x != y) {
        if (trd_topo_switch_depth(t, x) >= trd_topo_switch_depth(t, y))
            x = trd_topo_switch_parent(t, x);
        else
            y = trd_topo_switch_parent(t, y);
    }
    *depth = trd_topo_switch_depth(t, x);
    return trd_topo_switch_name(t, x);
}

static void print_tree(FILE *f, trd_topo_t t, int sw, int depth)
{
    int n = trd_topo_nnodes(t), S = trd_topo_nswitches(t);
    fprintf(f, "  %*s%s  [link %s: ", 2 * depth, "", trd_topo_switch_name(t, sw),
            trd_topo_switch_link_name(t, sw));
    print_link(f, trd_topo_switch_link(t, sw));
    fprintf(f, "]");
    int first = -1, count = 0;
    for (int v = 0; v < n; v++) {
        if (trd_topo_node_switch(t, v) != sw)
            continue;
        if (first < 0)
            first = v;
        count++;
    }
    if (count)
        fprintf(f, "  %d node%s: ", count, count == 1 ? "" : "s"),
            print_span(f, t, first, first + count - 1);
    fprintf(f, "\n");
    for (int c = 0; c < S; c++)
        if (trd_topo_switch_parent(t, c) == sw)
            print_tree(f, t, c, depth + 1);
}

int trd_explain(FILE *f, trd_topo_t t, const trd_machine_plan *p, const char *input)
{
    const trd_levels *lv = &p->levels;
    int n = trd_topo_nnodes(t), S = trd_topo_nswitches(t);
    fprintf(f, "machine %s (from %s): %d node%s, %d switch%s\n\n", trd_topo_name(t), input, n,
            n == 1 ? "" : "s", S, S == 1 ? "" : "es");
    fprintf(f, "node types:\n");
    int *used = calloc((size_t)trd_topo_nnodetypes(t) + 1, sizeof *used);
    if (!used)
        return TRD_ERR_NOMEM;
    for (int v = 0; v < n; v++)
        used[trd_topo_node_type(t, v)]++;
    for (int ty = 0; ty < trd_topo_nnodetypes(t); ty++) {
        if (trd_topo_nodetype_npackages(t, ty) == 0) { /* hwloc builds only the types used */
            fprintf(f, "  %-12s 0 nodes, not built, from %s\n", trd_topo_nodetype_name(t, ty),
                    trd_topo_nodetype_source(t, ty));
            continue;
        }
        fprintf(f, "  %-12s %d node%s, %d package%s (", trd_topo_nodetype_name(t, ty), used[ty],
                used[ty] == 1 ? "" : "s", trd_topo_nodetype_npackages(t, ty),
                trd_topo_nodetype_npackages(t, ty) == 1 ? "" : "s");
        for (int k = 0; k < trd_topo_nodetype_npackages(t, ty); k++)
            fprintf(f, "%s%d", k ? "+" : "", trd_topo_nodetype_cores(t, ty, k));
        fprintf(f, " cores) from %s\n", trd_topo_nodetype_source(t, ty));
    }
    free(used);
    fprintf(f, "\nswitch tree (DFS order):\n");
    print_tree(f, t, 0, 0);

    int *all = malloc((size_t)n * sizeof(int));
    char why[256] = "";
    int dups = 0;
    if (!all)
        return TRD_ERR_NOMEM;
    for (int v = 0; v < n; v++)
        all[v] = v;
    int rc = trd_ring_dfs_proof(t, all, n, &dups, why, sizeof why);
    free(all);
    if (rc)
        return rc;
    fprintf(f, "\nring order [TREE §3.2, Lemma 4]: %s\n",
            dups == 0 ? "contention-free (proved structurally: every switch's subtree is one "
                        "contiguous run of the ring, so every directed link carries one message "
                        "of a step; so is every job's subsequence)"
                      : why);
    for (int v = 0; v < n; v++)
        fprintf(f, "%s%s", v % 10 == 0 ? (v ? "\n  " : "  ") : " ", trd_topo_node_name(t, v));
    fprintf(f, "\n\ncosts per level:\n  intra-node:     ");
    print_link(f, lv->intra);
    fprintf(f, "\n  ring neighbour: ");
    print_link(f, lv->ring_inter);
    fprintf(f, "\n  farthest pair:  ");
    print_link(f, lv->far_inter);
    fprintf(f, "\n  reduction:      %.3g ns/byte (gamma)\n", lv->gamma_s_per_byte * 1e9);
    fprintf(f, "  alpha_r where a link gives none: %.3g x its latency [RM Eq. 3]\n",
            trd_topo_alpha_r_ratio(t));

    trd_explain_range ranges[TRD_MAX_CHOICES];
    for (int i = 0; i < p->nchoices; i++)
        ranges[i] = (trd_explain_range){i ? p->choice[i - 1].below : 0, p->choice[i].below,
                                        p->choice[i].alg, p->choice[i].params};
    trd_explain_machine m = {.nnodes = n,
                             .ppn = p->ppn,
                             .ctx = t,
                             .node_name = explain_node_name,
                             .span_switch = explain_span_switch,
                             .nranges = p->nchoices,
                             .range = ranges};
    for (int i = 0; trd_algos[i]; i++)
        if (trd_algos[i]->explain && trd_algos[i]->explain(f, &m))
            return TRD_ERR_NOMEM;

    fprintf(f,
            "\nselection (alpha-beta-gamma model [MPICH §3, NAP Eq. 3-6, TREE §3.2, RM Eq. 4]):\n");
    if (n > 1) {
        fprintf(f,
                "  several nodes, commutative operations (predicted for all %d x %d ranks, ranges "
                "drawn\n"
                "  %s):\n",
                n, p->ppn,
                p->on_schedules
                    ? "on the schedules' timed execution: link sharing on the switch tree,\n"
                      "  max-rate injection, alpha_r [TREE §2, NAP Eq. 3, RM Eq. 3]"
                    : "on the closed forms");
        fprintf(f, "    %-26s %-22s %10s %-13s %10s %10s  %s\n", "message size", "chosen", "us at",
                "runner-up", "us at", "closed us", "levels (node; across nodes) [source]");
        size_t lo = 0;
        for (int i = 0; i < p->nchoices; i++) {
            const trd_choice *ch = &p->choice[i];
            char range[64];
            double at = (double)ch->typical;
            if (ch->below == SIZE_MAX)
                snprintf(range, sizeof range, "%zu B and up", lo);
            else
                snprintf(range, sizeof range, "%zu B .. %zu B", lo, ch->below - 1);
            char chosen[64];
            snprintf(chosen, sizeof chosen, "%s%s%s", ch->alg->name, ch->params[0] ? ":" : "",
                     ch->params);
            fprintf(f, "    %-26s %-22s %10.2f %-13s %10.2f %10.2f  %s %s\n", range, chosen, ch->us,
                    ch->runner_up ? ch->runner_up->name : "-", ch->runner_up ? ch->runner_us : 0,
                    trd_model_time(p, ch->alg, n, p->ppn, at) * 1e6, ch->alg->levels,
                    ch->alg->source);
            lo = ch->below;
        }
        fprintf(f, "    (\"us at\": predicted microseconds at a size in the middle of the range; "
                   "\"closed us\":\n"
                   "    the chosen algorithm's closed form there)\n");
        fprintf(
            f,
            "  smaller communicators, by planned shape (a communicator takes the largest planned\n"
            "  node count <= its own, then the largest ranks per node <= its most on one node):\n");
        for (int sh = 0; sh < p->nshapes; sh++) {
            const trd_shape_plan *sp = &p->shape[sh];
            fprintf(f, "    %5d x %-4d%s", sp->nnodes, sp->ppn,
                    sp->on_schedules ? "" : " (closed forms)");
            for (int i = 0; i < sp->nchoices; i++) {
                fprintf(f, " %s%s%s", sp->choice[i].alg->name, sp->choice[i].params[0] ? ":" : "",
                        sp->choice[i].params);
                if (sp->choice[i].below != SIZE_MAX) {
                    fprintf(f, " < ");
                    print_size(f, sp->choice[i].below);
                    fprintf(f, " <=");
                }
            }
            fprintf(f, "\n");
        }
    }
    fprintf(f, "  one node: shared memory, every size and operation: one-step reduce_scatter +\n"
               "    allgather through the segment, read directly from the other ranks' buffers\n"
               "    (process_vm_readv) from 32 KiB; without shared memory NAP (recursive\n"
               "    doubling) below ");
    print_size(f, p->nap_max_bytes_1node);
    fprintf(f, ", ring from there\n  non-commutative operations across nodes: recursive doubling "
               "in rank order\n");
    if (n > 1) {
        const trd_algo *cand[TRD_MAX_CANDIDATES];
        int nc = trd_model_candidates(cand, TRD_MAX_CANDIDATES);
        fprintf(f, "\nclosed forms over the whole machine (%d x %d ranks), microseconds:\n  %10s",
                n, p->ppn, "bytes");
        for (int a2 = 0; a2 < nc; a2++)
            fprintf(f, " %12s", cand[a2]->name);
        fprintf(f, "\n");
        for (double sz = 8; sz <= 64.0 * 1024 * 1024; sz *= 16) {
            fprintf(f, "  %10.0f", sz);
            for (int a2 = 0; a2 < nc; a2++)
                fprintf(f, " %12.2f", trd_model_time(p, cand[a2], n, p->ppn, sz) * 1e6);
            fprintf(f, "\n");
        }
    }
    /* every algorithm of the registry, as TREEDUCE_ALGORITHM and --algorithm name them */
    fprintf(f,
            "\nalgorithms (allreduce: any can be forced with TREEDUCE_ALGORITHM=NAME[:PARAMS]):\n");
    for (int coll = 0; coll < TRD_COLL_MAX; coll++) {
        fprintf(f, "  %s:\n", trd_coll_name(coll));
        for (int i = 0; trd_algos[i]; i++)
            if (trd_algos[i]->coll == coll)
                fprintf(f, "    %-18s %s %s\n", trd_algos[i]->name, trd_algos[i]->levels,
                        trd_algos[i]->source);
    }
    return ferror(f) ? TRD_ERR_IO : TRD_OK;
}

/* A DOT quoted string: prefix (plain text) then name with the quote and the
 * backslash escaped, the one rule for every name in --dot (names hold no
 * control characters and are UTF-8, trd_topo_check_name); a label shows the
 * name as it is, an id stays the same wherever it is used. */
static void dot_str(FILE *f, const char *prefix, const char *name, const char *suffix)
{
    fprintf(f, "\"%s", prefix);
    for (; *name; name++) {
        if (*name == '"' || *name == '\\')
            fputc('\\', f);
        fputc(*name, f);
    }
    fprintf(f, "%s\"", suffix);
}

int trd_dot(FILE *f, trd_topo_t t)
{
    int n = trd_topo_nnodes(t), S = trd_topo_nswitches(t);
    fputs("digraph ", f);
    dot_str(f, "", trd_topo_name(t), "");
    fputs(" {\n  graph [rankdir=TB, label=", f);
    dot_str(f, "", trd_topo_name(t), ": switch tree and DFS ring");
    fputs("];\n  node [fontname=\"Helvetica\"];\n", f);
    for (int s = 0; s < S; s++) {
        fputs("  ", f);
        dot_str(f, "sw:", trd_topo_switch_name(t, s), "");
        fputs(" [shape=box, label=", f);
        dot_str(f, "", trd_topo_switch_name(t, s), "");
        fputs("];\n", f);
    }
    for (int v = 0; v < n; v++) {
        char num[32];
        snprintf(num, sizeof num, "\\n#%d", v);
        fputs("  ", f);
        dot_str(f, "node:", trd_topo_node_name(t, v), "");
        fputs(" [shape=ellipse, label=", f);
        dot_str(f, "", trd_topo_node_name(t, v), num);
        fputs("];\n", f);
    }
    for (int s = 1; s < S; s++) {
        fputs("  ", f);
        dot_str(f, "sw:", trd_topo_switch_name(t, trd_topo_switch_parent(t, s)), "");
        fputs(" -> ", f);
        dot_str(f, "sw:", trd_topo_switch_name(t, s), "");
        fputs(" [dir=none, label=", f);
        dot_str(f, "", trd_topo_switch_link_name(t, s), "");
        fputs("];\n", f);
    }
    for (int v = 0; v < n; v++) {
        fputs("  ", f);
        dot_str(f, "sw:", trd_topo_switch_name(t, trd_topo_node_switch(t, v)), "");
        fputs(" -> ", f);
        dot_str(f, "node:", trd_topo_node_name(t, v), "");
        fputs(" [dir=none];\n", f);
    }
    for (int v = 0; n > 1 && v < n; v++) {
        fputs("  ", f);
        dot_str(f, "node:", trd_topo_node_name(t, v), "");
        fputs(" -> ", f);
        dot_str(f, "node:", trd_topo_node_name(t, (v + 1) % n), "");
        fputs(" [color=red, style=dashed, constraint=false];\n", f);
    }
    fputs("}\n", f);
    return ferror(f) ? TRD_ERR_IO : TRD_OK;
}

/* ---- --explain with --wisdom -------------------------------------------------- */

/* Text from the wisdom on one line: a control character (a tab of the MPI
 * library's line) as a blank. */
static void print_plain(FILE *f, const char *s)
{
    for (; *s; s++)
        fputc((unsigned char)*s < 0x20 ? ' ' : *s, f);
}

/* The model's time of a with params for bytes of collective a->coll on sh:
 * allreduce on the timer (trd_timer_us), the pieces planned and timed
 * exactly (trd_sched_cost) up to TRD_TIME_SAFE_COUNT elements of
 * TRD_TIME_MAX_OPS ops; INFINITY where a does not plan, NAN where the model
 * has no time (too large, or not timed). */
static double model_us(trd_timer *tm, const trd_cost_model *cm, const trd_shape *sh,
                       const trd_algo *a, const char *params, size_t bytes)
{
    size_t count = bytes / 8 ? bytes / 8 : 1;
    double us = NAN, sec;
    char why[256];
    trd_sched s;
    if (a->coll == TRD_COLL_ALLREDUCE)
        return trd_timer_us(tm, a, params, count, &us) == TRD_OK ? us : NAN;
    if (count > TRD_TIME_SAFE_COUNT)
        return NAN;
    trd_call call = {a->coll, count, 8, 0, 0, 1, 0};
    if (trd_plan(&s, a, params, sh, &call, -1, why, sizeof why))
        return INFINITY;
    if (s.nops <= TRD_TIME_MAX_OPS && trd_sched_cost(&s, sh, cm, &sec, why, sizeof why) == TRD_OK)
        us = sec * 1e6;
    trd_sched_free(&s);
    return us;
}

/* "FILE:LINE" of range r of w. */
static void print_origin(FILE *f, const trd_wisdom *w, const trd_wisdom_range *r)
{
    const char *file = trd_wisdom_range_file(w, r);
    fprintf(f, "%s:%d", file ? file : "wisdom", r->line);
}

/* "[FROM, BELOW)" in bytes, "-" for no end. */
static void print_bytes_range(FILE *f, size_t from, size_t below)
{
    if (below == SIZE_MAX)
        fprintf(f, "[%zu, -)", from);
    else
        fprintf(f, "[%zu, %zu)", from, below);
}

/* The check points of range q: the three times and the verdict. */
static void explain_checks(FILE *f, const trd_wisdom_range *q)
{
    static const char *const to[TRD_WISDOM_VERDICT_MAX] = {"kept", "to the model", "to MPI"};
    for (int k = 0; k < q->ncheck && k < TRD_WISDOM_MAX_CHECKS; k++) {
        const trd_wisdom_point *c = &q->check[k];
        int v = c->verdict >= 0 && c->verdict < TRD_WISDOM_VERDICT_MAX ? c->verdict : 0;
        fprintf(f,
                "      checked at %zu B: tuned %s %.4g us, untuned (%s) %.4g us, MPI %.4g us, "
                "noise %.1f%%: %s\n",
                c->bytes, c->alg, c->alg_us, c->model, c->model_us, c->mpi_us, c->noise * 100,
                to[v]);
    }
}

/* One shape's ranges r[0..n) of w: each with where it was measured and
 * what, the model's time for the winner and the model's own pick at the
 * range's typical size, and its check points. */
static int explain_wisdom_shape(FILE *f, trd_topo_t t, const trd_machine_plan *p,
                                const trd_wisdom *w, const trd_wisdom_range *r, int n)
{
    trd_shape_store st;
    trd_timer *tm = NULL;
    int *aux, agree = 0, judged = 0, models = 0, rc;
    fprintf(f, "  %s, %d node%s x %d rank%s:\n", trd_coll_name(r->coll), r->nnodes,
            r->nnodes == 1 ? "" : "s", r->ppn, r->ppn == 1 ? "" : "s");
    if (r->nnodes > trd_topo_nnodes(t) || (long)r->nnodes * r->ppn > TRD_SEARCH_MAX_RANKS) {
        fprintf(f, "    no model above %d ranks\n", TRD_SEARCH_MAX_RANKS);
        return TRD_OK;
    }
    if (trd_machine_shape(t, r->nnodes, r->ppn, &st, &aux) != TRD_OK)
        return TRD_ERR_NOMEM;
    if ((rc = trd_timer_create(&tm, t, p, &st.s)) != TRD_OK)
        goto out;
    trd_cost_model cm = {t, p->levels.gamma_s_per_byte, trd_topo_alpha_r_ratio(t)};
    for (int i = 0; i < n; i++) {
        const trd_wisdom_range *q = &r[i];
        size_t at = trd_range_typical(q->from, q->below);
        fprintf(f, "    ");
        print_origin(f, w, q);
        fprintf(f, ": ");
        print_sizes(f, q->from, q->below);
        fprintf(f, " (at ");
        print_size(f, at);
        if (trd_wisdom_is_model(q)) {
            /* no winner of its own: what the model's tables run there */
            models++;
            fprintf(f, "): the model's tables, the measured winner not faster in the check\n");
            explain_checks(f, q);
            continue;
        }
        fprintf(f, "): measured %s %.4g us", q->alg, q->us);
        if (q->runner[0])
            fprintf(f, ", runner-up %s %.4g us", q->runner, q->runner_us);
        fprintf(f, "\n      model: ");
        /* the winner as the model times it */
        const char *params = "";
        const trd_algo *win = trd_algo_parse(q->coll, q->alg, &params);
        if (win && (win->flags & TRD_ALGO_LIBRARY))
            win = NULL; /* no schedule to time */
        double wus = win ? model_us(tm, &cm, &st.s, win, params, at) : NAN;
        if (!win)
            fprintf(f, "none for the MPI library");
        else if (isnan(wus))
            fprintf(f, "none at this size");
        else if (isinf(wus))
            fprintf(f, "%s does not plan at this size", q->alg);
        else
            fprintf(f, "%s %.4g us (%.2f x measured)", q->alg, wus, wus / q->us);
        /* the model's pick: the collective's algorithms, default parameters */
        double tt[TRD_MAX_CANDIDATES];
        const trd_algo *cand[TRD_MAX_CANDIDATES];
        int nc = 0, timed = 1, second;
        for (int k = 0; trd_algos[k] && nc < TRD_MAX_CANDIDATES; k++)
            if (trd_algos[k]->coll == q->coll) {
                cand[nc] = trd_algos[k];
                tt[nc] = model_us(tm, &cm, &st.s, cand[nc], "", at);
                timed &= !isnan(tt[nc]);
                nc++;
            }
        int best = timed ? trd_model_pick(tt, nc, &second) : -1;
        if (best < 0 || isinf(tt[best])) {
            fprintf(f, "; picks none here");
        } else {
            int same = win && win == cand[best];
            judged++;
            agree += same;
            fprintf(f, "; picks %s: %s", cand[best]->name, same ? "agrees" : "differs");
        }
        /* what the model's tables would run there without the wisdom */
        for (int k = 0; k < p->nshapes && q->coll == TRD_COLL_ALLREDUCE; k++) {
            const trd_shape_plan *sp = &p->shape[k];
            if (sp->nnodes != q->nnodes || sp->ppn != q->ppn)
                continue;
            int c = 0;
            while (c + 1 < sp->nchoices && at >= sp->choice[c].below)
                c++;
            fprintf(f, "\n      without the wisdom: %s%s%s", sp->choice[c].alg->name,
                    sp->choice[c].params[0] ? ":" : "", sp->choice[c].params);
        }
        fprintf(f, "\n");
        explain_checks(f, q);
    }
    fprintf(f, "    the model's pick agrees with the measured winner on %d of %d range%s\n", agree,
            n - models, n - models == 1 ? "" : "s");
    if (judged < n - models)
        fprintf(f, "    (%d without a model pick)\n", n - models - judged);
out:
    trd_timer_destroy(tm);
    trd_shape_free(&st);
    free(aux);
    return rc;
}

/* What the model fills of a measured shape, w->range[i..i+n): the sizes
 * below the first range, between two and above the last, and the ranges
 * the check gave to the model. */
static void explain_fills(FILE *f, const trd_wisdom *w, int i, int n)
{
    const trd_wisdom_range *r = &w->range[i];
    const char *sep = " ";
    size_t at = 0;
    fprintf(f, "    %s %dx%d:", trd_coll_name(r->coll), r->nnodes, r->ppn);
    for (int k = i; k <= i + n; k++) {
        const trd_wisdom_range *q = k < i + n ? &w->range[k] : NULL;
        size_t end = q ? q->from : SIZE_MAX;
        if (end > at && at != SIZE_MAX) {
            fprintf(f, "%s", sep);
            print_sizes(f, at, end);
            sep = ", ";
        }
        if (q && trd_wisdom_is_model(q)) {
            fprintf(f, "%s", sep);
            print_sizes(f, q->from, q->below);
            fprintf(f, " (");
            print_origin(f, w, q);
            fprintf(f, ", by its check)");
            sep = ", ";
        }
        if (q)
            at = q->below;
    }
    fprintf(f, "%s\n", strcmp(sep, " ") == 0 ? " none" : "");
}

int trd_explain_wisdom(FILE *f, trd_topo_t t, const trd_machine_plan *p, const trd_wisdom *w,
                       const trd_wisdom_conflict *conflicts, int nconflicts)
{
    fprintf(f, "\nmeasured size ranges, used in place of the model's (machine %s,\n  MPI ",
            w->machine);
    print_plain(f, w->mpi);
    fprintf(f, "):\n");
    for (int s = 0; s < w->nsources; s++) {
        const trd_wisdom_source *src = &w->source[s];
        fprintf(f, "  wisdom %s: %s, %d rank%s%s\n", src->file ? src->file : "", src->date,
                src->nranks, src->nranks == 1 ? "" : "s",
                src->complete ? "" : ", cut short by its budget");
    }
    if (!w->nsources)
        fprintf(f, "  wisdom %s: %s, %d rank%s%s\n", w->file ? w->file : "", w->date, w->nranks,
                w->nranks == 1 ? "" : "s", w->complete ? "" : ", cut short by its budget");
    fprintf(f, "  each range's file and line, its winner and runner-up as measured, the\n"
               "  model's time for the winner and the model's own pick (the collective's\n"
               "  algorithms that plan for the shape, default parameters, timed on the\n"
               "  schedules' cost model) at the range's typical size, and the sizes that the\n"
               "  check pass timed again:\n");
    for (int i = 0; i < w->nranges;) {
        const trd_wisdom_range *r = &w->range[i];
        int n = 1;
        while (i + n < w->nranges && w->range[i + n].coll == r->coll &&
               w->range[i + n].nnodes == r->nnodes && w->range[i + n].ppn == r->ppn)
            n++;
        int rc = explain_wisdom_shape(f, t, p, w, r, n);
        if (rc)
            return rc;
        i += n;
    }
    for (int k = 0; k < nconflicts; k++) {
        const trd_wisdom_conflict *c = &conflicts[k];
        const char *nf = "", *of = "", *nd = "", *od = "";
        if (c->newer_src >= 0 && c->newer_src < w->nsources) {
            nf = w->source[c->newer_src].file ? w->source[c->newer_src].file : "";
            nd = w->source[c->newer_src].date;
        }
        if (c->older_src >= 0 && c->older_src < w->nsources) {
            of = w->source[c->older_src].file ? w->source[c->older_src].file : "";
            od = w->source[c->older_src].date;
        }
        fprintf(f, "  conflict: %s %dx%d ", trd_coll_name(c->coll), c->nnodes, c->ppn);
        print_bytes_range(f, c->from, c->below);
        fprintf(f, ": %s:%d (%s) measured %s, %s:%d (%s) measured %s; ", nf, c->newer_line, nd,
                c->newer_alg, of, c->older_line, od, c->older_alg);
        if (strcmp(nd, od) == 0)
            fprintf(f, "the one given later (%s) is used\n", nf);
        else
            fprintf(f, "the newer (%s) is used\n", nf);
    }
    fprintf(f, "  the model fills the sizes no range covers (and those the check gave it):\n");
    for (int i = 0; i < w->nranges;) {
        int n = 1;
        while (i + n < w->nranges && w->range[i + n].coll == w->range[i].coll &&
               w->range[i + n].nnodes == w->range[i].nnodes &&
               w->range[i + n].ppn == w->range[i].ppn)
            n++;
        explain_fills(f, w, i, n);
        i += n;
    }
    for (int c = 0; c < TRD_COLL_MAX; c++) {
        int shapes = 0;
        for (int i = 0; i < w->nranges; i++)
            shapes += w->range[i].coll == c;
        fprintf(f, "    %s: every %sshape\n", trd_coll_name(c), shapes ? "other " : "");
    }
    return ferror(f) ? TRD_ERR_IO : TRD_OK;
}
