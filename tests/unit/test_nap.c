/* NAP plan, checked symbolically for every (nodes, ppn) with nodes 1..300 and
 * ppn 1..20: every node's contribution reaches every rank exactly once, every
 * receive is matched by exactly one send, and the number of inter-node steps
 * is ceil(log_k(nodes)) [NAP Alg. 1, §III-A].  No MPI. */
#include <CUnit/Basic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "algo.h"
#include "test_util.h"
#include "trd_nap.h"

#define MAXN 300
#define WORDS ((MAXN + 63) / 64)

typedef struct {
    uint64_t w[WORDS];
} bits;

/* dst |= src; returns 0 if they were disjoint, -1 if some node would be
 * counted twice. */
static int add_disjoint(bits *dst, const bits *src)
{
    int rc = 0;
    for (int i = 0; i < WORDS; i++) {
        if (dst->w[i] & src->w[i])
            rc = -1;
        dst->w[i] |= src->w[i];
    }
    return rc;
}

static int is_full(const bits *b, int n)
{
    for (int v = 0; v < n; v++)
        if (!(b->w[v / 64] >> (v % 64) & 1))
            return 0;
    return 1;
}

typedef struct {
    int src, srclane, dst, dstlane;
} msg;

static int cmp_msg(const void *a, const void *b)
{
    return memcmp(a, b, sizeof(msg));
}

/* Runs the plan for (n, lanes) with radix list rad (NULL: the default);
 * returns NULL on success or a static message. */
static const char *check_shape_list(int n, int lanes, const trd_nap_radices *rad, char *why,
                                    size_t whylen)
{
    static bits cur[MAXN], next[MAXN];
    static trd_nap_xfer recv[MAXN], send[MAXN];
    static msg sends[MAXN * 64], recvs[MAXN * 64];
    int steps = trd_nap_nsteps_list(n, lanes, rad);
    long long span = 1;
    int expect = 0;
    while (span < n)
        span *= trd_nap_radix_at(rad, lanes, expect++);
    if (steps != expect) {
        snprintf(why, whylen, "n=%d lanes=%d: %d steps, expected %d", n, lanes, steps, expect);
        return why;
    }
    memset(cur, 0, sizeof cur);
    for (int v = 0; v < n; v++)
        cur[v].w[v / 64] |= 1ull << (v % 64);
    for (int s = 0; s < steps; s++) {
        int ns = 0, nr = 0;
        for (int v = 0; v < n; v++) {
            memset(&next[v], 0, sizeof(bits));
            trd_nap_stepinfo info;
            for (int l = 0; l < lanes; l++) {
                int nrecv, nsend;
                if (trd_nap_step_list(n, lanes, rad, s, v, l, &info, recv, &nrecv, send, &nsend)) {
                    snprintf(why, whylen, "n=%d lanes=%d: trd_nap_step failed", n, lanes);
                    return why;
                }
                for (int i = 0; i < nsend; i++) {
                    if (ns >= MAXN * 64)
                        return "too many sends";
                    sends[ns++] = (msg){v, l, send[i].node, send[i].lane};
                }
                if (info.spread) { /* past the width: no exchange, the result below */
                    if (nrecv || nsend) {
                        snprintf(why, whylen, "n=%d lanes=%d step %d node %d: in the exchange", n,
                                 lanes, s, v);
                        return why;
                    }
                    continue;
                }
                /* lane l folds subgroups l, l+lanes, ...: own data for its own subgroup */
                bits acc = {{0}};
                int ri = 0;
                for (int r = l; r < info.nsub; r += lanes) {
                    const bits *part;
                    if (r == info.sub) {
                        part = &cur[v];
                    } else {
                        if (ri >= nrecv || recv[ri].sub != r) {
                            snprintf(
                                why, whylen,
                                "n=%d lanes=%d step %d node %d lane %d: no receive for subgroup %d",
                                n, lanes, s, v, l, r);
                            return why;
                        }
                        part = &cur[recv[ri].node];
                        if (nr >= MAXN * 64)
                            return "too many receives";
                        recvs[nr++] = (msg){recv[ri].node, recv[ri].lane, v, l};
                        ri++;
                    }
                    if (add_disjoint(&acc, part)) {
                        snprintf(why, whylen,
                                 "n=%d lanes=%d step %d node %d lane %d: a contribution twice", n,
                                 lanes, s, v, l);
                        return why;
                    }
                }
                if (ri != nrecv) {
                    snprintf(why, whylen,
                             "n=%d lanes=%d step %d node %d lane %d: %d unused receives", n, lanes,
                             s, v, l, nrecv - ri);
                    return why;
                }
                /* the intra-node allreduce over lanes */
                if (add_disjoint(&next[v], &acc)) {
                    snprintf(why, whylen, "n=%d lanes=%d step %d node %d: lanes overlap", n, lanes,
                             s, v);
                    return why;
                }
            }
        }
        /* a step narrower than its subgroups: the others take the result from
         * a node of the width, which sends it to each of them once */
        int nspread = 0;
        for (int v = 0; v < n; v++) {
            trd_nap_xfer from;
            int nto;
            if (trd_nap_spread(n, lanes, rad, s, v, &from, send, &nto))
                return "trd_nap_spread failed";
            for (int i = 0; i < nto; i++) {
                trd_nap_xfer f2;
                int n2;
                static trd_nap_xfer to2[MAXN];
                trd_nap_spread(n, lanes, rad, s, send[i].node, &f2, to2, &n2);
                if (f2.node != v || f2.lane != send[i].lane || send[i].lane >= lanes) {
                    snprintf(why, whylen, "n=%d lanes=%d step %d: %d sends to %d unmatched", n,
                             lanes, s, v, send[i].node);
                    return why;
                }
                nspread++;
            }
            if (from.node >= 0) {
                nspread--;
                if (add_disjoint(&next[v], &next[from.node])) {
                    snprintf(why, whylen, "n=%d lanes=%d step %d node %d: spread onto data", n,
                             lanes, s, v);
                    return why;
                }
            }
        }
        if (ns != nr || nspread != 0) {
            snprintf(why, whylen, "n=%d lanes=%d step %d: %d sends, %d receives, %d spread", n,
                     lanes, s, ns, nr, nspread);
            return why;
        }
        qsort(sends, (size_t)ns, sizeof(msg), cmp_msg);
        qsort(recvs, (size_t)nr, sizeof(msg), cmp_msg);
        for (int i = 0; i < ns; i++) {
            if (cmp_msg(&sends[i], &recvs[i])) {
                snprintf(why, whylen,
                         "n=%d lanes=%d step %d: send %d.%d->%d.%d has no matching receive", n,
                         lanes, s, sends[i].src, sends[i].srclane, sends[i].dst, sends[i].dstlane);
                return why;
            }
            if (i > 0 && !cmp_msg(&sends[i], &sends[i - 1])) {
                snprintf(why, whylen, "n=%d lanes=%d step %d: duplicate message %d.%d->%d.%d", n,
                         lanes, s, sends[i].src, sends[i].srclane, sends[i].dst, sends[i].dstlane);
                return why;
            }
        }
        memcpy(cur, next, sizeof(bits) * (size_t)n);
    }
    for (int v = 0; v < n; v++) {
        if (!is_full(&cur[v], n)) {
            snprintf(why, whylen, "n=%d lanes=%d: node %d misses a contribution", n, lanes, v);
            return why;
        }
    }
    return NULL;
}

static const char *check_shape(int n, int lanes, char *why, size_t whylen)
{
    trd_nap_radices dflt = {1, {trd_nap_radix(lanes)}, {0}};
    const char *err = check_shape_list(n, lanes, NULL, why, whylen);
    /* the default list is the paper's constant radix */
    if (!err && trd_nap_nsteps_list(n, lanes, NULL) != trd_nap_nsteps(n, dflt.k[0]))
        err = "the default list's steps differ from the constant radix's";
    return err;
}

static void test_every_shape(void)
{
    char why[256];
    int failures = 0, shapes = 0;
    for (int n = 1; n <= MAXN; n++) {
        for (int ppn = 1; ppn <= 20; ppn++) {
            const char *err = check_shape(n, ppn, why, sizeof why);
            shapes++;
            if (err && failures++ < 5)
                fprintf(stderr, "%s\n", err);
        }
    }
    CU_ASSERT_EQUAL(shapes, 6000);
    CU_ASSERT_EQUAL(failures, 0);
}

static void test_paper_examples(void)
{
    /* NAP Fig. 6: 4 nodes x 4 ppn, one inter-node step; P9 (node 2, local 1)
     * exchanges with P6 (node 1, local 2). */
    trd_nap_xfer recv[4], send[16];
    int nr, ns;
    trd_nap_stepinfo info;
    CU_ASSERT_EQUAL(trd_nap_nsteps(4, 4), 1);
    CU_ASSERT_EQUAL(trd_nap_step(4, 4, 4, 0, 2, 1, &info, recv, &nr, send, &ns), 0);
    CU_ASSERT_EQUAL(nr, 1);
    CU_ASSERT_EQUAL(recv[0].node, 1);
    CU_ASSERT_EQUAL(recv[0].lane, 2);
    CU_ASSERT_EQUAL(ns, 1);
    CU_ASSERT_EQUAL(send[0].node, 1);
    CU_ASSERT_EQUAL(send[0].lane, 2);
    /* Fig. 7: 16 nodes x 4, second step: P9 (node 2, local 1) with P24 (node 6, local 0). */
    CU_ASSERT_EQUAL(trd_nap_step(16, 4, 4, 1, 2, 1, &info, recv, &nr, send, &ns), 0);
    CU_ASSERT_EQUAL(info.subsize, 4);
    CU_ASSERT_EQUAL(info.sub, 0);
    CU_ASSERT_EQUAL(info.pos, 2);
    CU_ASSERT_EQUAL(nr, 1);
    CU_ASSERT_EQUAL(recv[0].node, 6);
    CU_ASSERT_EQUAL(recv[0].lane, 0);
    /* 4096 nodes x 16 ppn: three inter-node steps [NAP §III]. */
    CU_ASSERT_EQUAL(trd_nap_nsteps(4096, 16), 3);
    CU_ASSERT_EQUAL(trd_nap_nsteps(1, 16), 0);
    /* out-of-range arguments are refused */
    CU_ASSERT_EQUAL(trd_nap_step(4, 4, 4, 0, 4, 0, &info, recv, &nr, send, &ns), TRD_ERR_INPUT);
    CU_ASSERT_EQUAL(trd_nap_step(4, 4, 1, 0, 0, 0, &info, recv, &nr, send, &ns), TRD_ERR_INPUT);
}

/* A radix per step [FLEX §2.1.3, RM §4 on NAP §III]: every list the
 * generator weighs, and lists with radices above the lanes, below them and
 * repeating, over nodes 1..300 and lanes 1, 4, 16. */
static void test_radix_lists(void)
{
    static const char *fixed[] = {"2",     "3",       "4,2",       "16,2,2",   "2,16",
                                  "5,3,2", "7",       "3,3,3,3,2", "3,4/1",    "2/1",
                                  "4,4/2", "5,3/2,2", "16,16/1",   "2,3/4,2/1"};
    char why[256];
    int failures = 0, shapes = 0;
    for (int n = 1; n <= MAXN; n += n < 70 ? 1 : 7) {
        for (int lanes = 1; lanes <= 16; lanes *= 4) {
            trd_nap_radices r[64];
            int nr = trd_nap_radix_lists(n, lanes, r, 64);
            CU_ASSERT(nr >= 1);
            for (int i = 0; i < nr + (int)(sizeof fixed / sizeof *fixed); i++) {
                trd_nap_radices f;
                if (i >= nr)
                    CU_ASSERT_FATAL(trd_nap_radices_parse(fixed[i - nr], &f, NULL, 0) == 0);
                const char *err = check_shape_list(n, lanes, i < nr ? &r[i] : &f, why, sizeof why);
                shapes++;
                if (err && failures++ < 5)
                    fprintf(stderr, "%s (list %d)\n", err, i);
            }
        }
    }
    CU_ASSERT(shapes > 2000);
    CU_ASSERT_EQUAL(failures, 0);
}

/* The lists' text, the steps they give, and the lists the generator weighs. */
static void test_radix_text(void)
{
    trd_nap_radices r;
    char buf[64], err[96];
    CU_ASSERT_EQUAL(trd_nap_radices_parse("16,2,2", &r, err, sizeof err), 0);
    CU_ASSERT_EQUAL(r.n, 3);
    CU_ASSERT_EQUAL(trd_nap_radix_at(&r, 16, 0), 16);
    CU_ASSERT_EQUAL(trd_nap_radix_at(&r, 16, 5), 2); /* the last repeats */
    CU_ASSERT_EQUAL(trd_nap_nsteps_list(64, 16, &r), 3);
    CU_ASSERT_EQUAL(trd_nap_nsteps_list(256, 16, &r), 5);
    trd_nap_radices_format(&r, buf, sizeof buf);
    CU_ASSERT_STRING_EQUAL(buf, "16,2,2");
    CU_ASSERT_EQUAL(trd_nap_radices_parse("", &r, err, sizeof err), 0);
    CU_ASSERT_EQUAL(r.n, 0);
    CU_ASSERT_EQUAL(trd_nap_radix_at(&r, 16, 3), 16);
    CU_ASSERT_EQUAL(trd_nap_radices_parse("16,1", &r, err, sizeof err), TRD_ERR_INPUT);
    CU_ASSERT_STRING_EQUAL(err, "column 4: radix 1 is not in 2..4096");
    CU_ASSERT_EQUAL(trd_nap_radices_parse("4;2", &r, err, sizeof err), TRD_ERR_INPUT);
    CU_ASSERT_STRING_EQUAL(err, "column 2: expected ',' between radices");
    CU_ASSERT_EQUAL(trd_nap_radices_parse("4,", &r, err, sizeof err), TRD_ERR_INPUT);
    CU_ASSERT_STRING_EQUAL(err, "column 3: expected a radix >= 2");
    CU_ASSERT_EQUAL(trd_nap_radices_parse("16,4/0", &r, err, sizeof err), TRD_ERR_INPUT);
    CU_ASSERT_STRING_EQUAL(err, "column 6: width 0 is not in 1..4096");
    CU_ASSERT_EQUAL(trd_nap_radices_parse("16,4/", &r, err, sizeof err), TRD_ERR_INPUT);
    CU_ASSERT_STRING_EQUAL(err, "column 6: expected a width >= 1 after '/'");
    CU_ASSERT_EQUAL(trd_nap_radices_parse("16,4/2", &r, err, sizeof err), 0);
    CU_ASSERT_EQUAL(trd_nap_width_at(&r, 0), 0);
    CU_ASSERT_EQUAL(trd_nap_width_at(&r, 1), 2);
    trd_nap_radices_format(&r, buf, sizeof buf);
    CU_ASSERT_STRING_EQUAL(buf, "16,4/2");
    /* the step of a list: 64 nodes as 16,2,2, the second step pairs leaf
     * switches of 16 nodes: node 3 takes node 19's data on lane 1 */
    trd_nap_xfer recv[16], send[64];
    trd_nap_stepinfo info;
    int nrecv, nsend;
    CU_ASSERT_EQUAL(trd_nap_radices_parse("16,2,2", &r, err, sizeof err), 0);
    CU_ASSERT_EQUAL(trd_nap_step_list(64, 16, &r, 1, 3, 1, &info, recv, &nrecv, send, &nsend), 0);
    CU_ASSERT_EQUAL(info.subsize, 16);
    CU_ASSERT_EQUAL(info.nsub, 2);
    CU_ASSERT_EQUAL(nrecv, 1);
    CU_ASSERT_EQUAL(recv[0].node, 19);
    /* the lists weighed for 64 nodes x 16: the default first, then
     * non-increasing lists, none the same steps as the default (16,4) */
    trd_nap_radices l[64];
    int n = trd_nap_radix_lists(64, 16, l, 64);
    CU_ASSERT_EQUAL(l[0].n, 0);
    CU_ASSERT(n > 4);
    int seen = 0;
    for (int i = 1; i < n; i++) {
        trd_nap_radices_format(&l[i], buf, sizeof buf);
        CU_ASSERT(strcmp(buf, "16,4") != 0);
        seen += !strcmp(buf, "16,2,2");
        for (int k = 1; k < l[i].n; k++)
            CU_ASSERT(l[i].k[k] <= l[i].k[k - 1]);
    }
    CU_ASSERT_EQUAL(seen, 1);
    /* a width on the steps across the leaf switches: on 64 nodes x 16 as
     * 16,4/2 the second step leaves nodes 2..15 of each leaf out, node 5
     * takes the result from node 1 (lane 1 sends), node 1 sends to 3, 5, ...
     * 15 on lanes 0, 1, ... 6 */
    CU_ASSERT_EQUAL(trd_nap_radices_parse("16,4/2", &r, err, sizeof err), 0);
    CU_ASSERT_EQUAL(trd_nap_step_list(64, 16, &r, 1, 5, 0, &info, recv, &nrecv, send, &nsend), 0);
    CU_ASSERT_EQUAL(info.spread, 1);
    CU_ASSERT_EQUAL(nrecv + nsend, 0);
    trd_nap_xfer from;
    CU_ASSERT_EQUAL(trd_nap_spread(64, 16, &r, 1, 5, &from, send, &nsend), 0);
    CU_ASSERT_EQUAL(from.node, 1);
    CU_ASSERT_EQUAL(from.lane, 1);
    CU_ASSERT_EQUAL(trd_nap_spread(64, 16, &r, 1, 17, &from, send, &nsend), 0);
    CU_ASSERT_EQUAL(from.node, -1);
    CU_ASSERT_EQUAL(nsend, 7);
    CU_ASSERT_EQUAL(send[0].node, 19);
    CU_ASSERT_EQUAL(send[6].node, 31);
    CU_ASSERT_EQUAL(send[6].lane, 6);
    int narrow = 0;
    for (int i = 1; i < n; i++)
        narrow += l[i].n == 2 && l[i].k[0] == 16 && l[i].k[1] == 4 && l[i].w[1] == 2;
    CU_ASSERT_EQUAL(narrow, 1); /* 16,4/2 is weighed */
}

/* A machine for the explain hooks: nodes n0.. under leaf switches of 16
 * nodes each (depth 1) under one spine (depth 0). */
static const char *fake_node_name(const void *ctx, int v)
{
    static char names[256][8];
    (void)ctx;
    snprintf(names[v], sizeof names[v], "n%d", v);
    return names[v];
}

static const char *fake_span_switch(const void *ctx, int first, int last, int *depth)
{
    static const char *const leaf[] = {"leaf0", "leaf1", "leaf2", "leaf3"};
    (void)ctx;
    *depth = first / 16 == last / 16 ? 1 : 0;
    return *depth ? leaf[first / 16] : "spine";
}

/* What hook a prints about machine m, into buf. */
static void explain_text(const trd_algo *a, const trd_explain_machine *m, char *buf, size_t len)
{
    FILE *f = tmpfile();
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    CU_ASSERT_EQUAL(a->explain(f, m), 0);
    rewind(f);
    size_t n = fread(buf, 1, len - 1, f);
    buf[n] = '\0';
    fclose(f);
}

/* The registry's explain hooks: every one prints about the machine, NAP its
 * groups per step, the switch each step climbs to for the ranges that chose
 * it, and its line for the generated files' banner. */
static void test_explain_hooks(void)
{
    static char out[1 << 16];
    const trd_algo *nap = trd_algo_find(TRD_COLL_ALLREDUCE, "nap", 3);
    const trd_algo *ring = trd_algo_find(TRD_COLL_ALLREDUCE, "ring", 4);
    trd_explain_range ranges[] = {{0, 1024, nap, "16,2,2"}, {1024, SIZE_MAX, ring, ""}};
    trd_explain_machine m = {.nnodes = 64,
                             .ppn = 16,
                             .node_name = fake_node_name,
                             .span_switch = fake_span_switch,
                             .nranges = 2,
                             .range = ranges};
    int hooks = 0;
    for (int i = 0; trd_algos[i]; i++)
        if (trd_algos[i]->explain) {
            explain_text(trd_algos[i], &m, out, sizeof out);
            CU_ASSERT(strlen(out) > 0);
            hooks++;
        }
    CU_ASSERT(hooks >= 1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(nap);
    CU_ASSERT_PTR_NOT_NULL_FATAL(nap->explain);
    explain_text(nap, &m, out, sizeof out);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "\nNAP over all 64 nodes x 16 ranks [NAP Alg. 1]: 16 lanes, "
                                       "radix 16, 2 inter-node steps\n"));
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "  step 1: subgroups of 1 node, 4 groups of up to 16 "
                                       "subgroups\n    group 0: [n0] [n1] [n2] [n3] [n4] [n5] "
                                       "[n6] [n7] ...\n"));
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "  step 2: subgroups of 16 nodes, 1 group of up to 16 "
                                       "subgroups\n    group 0: [n0..n15] [n16..n31] "
                                       "[n32..n47] [n48..n63]\n"));
    CU_ASSERT_PTR_NOT_NULL(strstr(
        out, "  radix per step from 0 B to 1023 B (nap:16,2,2):\n"
             "    step 1: radix 16 over subgroups of 1 node, up to switch leaf0 (depth 1)\n"
             "    step 2: radix 2 over subgroups of 16 nodes, up to switch spine (depth 0)\n"
             "    step 3: radix 2 over subgroups of 32 nodes, up to switch spine (depth 0)\n"));
    CU_ASSERT_PTR_NULL(strstr(out, "(ring")); /* only the ranges that chose NAP */
    char line[160];
    CU_ASSERT_PTR_NOT_NULL_FATAL(nap->summary);
    nap->summary(line, sizeof line, 64, 16);
    CU_ASSERT_STRING_EQUAL(line, "NAP over all 64 nodes: 16 lanes, radix 16, 2 inter-node steps");
    CU_ASSERT_PTR_NOT_NULL_FATAL(nap->model_params);
}

int main(void)
{
    static const trd_test_case tests[] = {
        {"paper examples (Figs. 6-7)", test_paper_examples},
        {"every (nodes 1..300, ppn 1..20) shape", test_every_shape},
        {"radix lists over nodes 1..300", test_radix_lists},
        {"radix list text and steps", test_radix_text},
        {"explain hooks: NAP's groups, radices and banner line", test_explain_hooks},
    };
    return trd_test_main("nap", tests, TRD_NTESTS(tests));
}
