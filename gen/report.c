/* --explain and --dot. */
#include "report.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "trd_nap.h"

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

    fprintf(f,
            "\nNAP over all %d nodes x %d ranks [NAP Alg. 1]: %d lane%s, radix %d, %d inter-node "
            "step%s\n",
            n, p->ppn, p->nap_lanes, p->nap_lanes == 1 ? "" : "s", p->nap_radix, p->nap_steps,
            p->nap_steps == 1 ? "" : "s");
    for (int s = 0; s < p->nap_steps; s++) {
        trd_nap_stepinfo info;
        trd_nap_xfer rbuf[64], *sbuf = malloc((size_t)n * sizeof *sbuf);
        int nr, ns;
        if (!sbuf)
            return TRD_ERR_NOMEM;
        trd_nap_step(n, p->nap_lanes, p->nap_radix, s, 0, 0, &info, rbuf, &nr, sbuf, &ns);
        long long span = (long long)info.subsize * p->nap_radix;
        int groups = (int)((n + span - 1) / span);
        fprintf(f, "  step %d: subgroups of %d node%s, %d group%s of up to %d subgroups\n", s + 1,
                info.subsize, info.subsize == 1 ? "" : "s", groups, groups == 1 ? "" : "s",
                p->nap_radix);
        for (int gi = 0; gi < groups && gi < 4; gi++) {
            int base = (int)(gi * span), end = (int)(base + span < n ? base + span : n);
            fprintf(f, "    group %d:", gi);
            for (int sb = base, k = 0; sb < end && k < 8; sb += info.subsize, k++) {
                int last = sb + info.subsize - 1 < end - 1 ? sb + info.subsize - 1 : end - 1;
                fprintf(f, " [");
                print_span(f, t, sb, last);
                fprintf(f, "]");
                if (k == 7 && sb + info.subsize < end)
                    fprintf(f, " ...");
            }
            fprintf(f, "\n");
        }
        if (groups > 4)
            fprintf(f, "    ... %d more groups\n", groups - 4);
        /* the last node is the one most likely to face a short subgroup */
        int v = n - 1;
        trd_nap_step(n, p->nap_lanes, p->nap_radix, s, v, 0, &info, rbuf, &nr, sbuf, &ns);
        fprintf(f, "    e.g. node %s (subgroup %d, position %d) lane 0 receives from",
                trd_topo_node_name(t, v), info.sub, info.pos);
        if (!nr)
            fprintf(f, " nobody (its own subgroup)");
        for (int i = 0; i < nr; i++)
            fprintf(f, " %s lane %d", trd_topo_node_name(t, rbuf[i].node), rbuf[i].lane);
        fprintf(f, "\n");
        free(sbuf);
    }

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
