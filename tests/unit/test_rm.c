/* Recursive multiplying schedules [RM §4]: parse errors with their exact
 * messages, format/parse round trips, the default schedule, and a symbolic
 * simulator that runs the per-rank plan of trd_rm_plan_step() for all ranks
 * in lockstep.  Each rank holds the ordered list of the contributions (rank
 * ids) its vector combines; a step's sends use the lists from before the
 * step, every send must meet its receive in the same step and vice versa,
 * and at the end every rank must hold every contribution exactly once, in
 * rank order when the schedule keeps it.  No MPI. */
#include <CUnit/Basic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"
#include "trd_rm.h"

#define MAXN 4096

typedef int (*plan_fn)(const trd_rm_schedule *s, int me, int step, trd_rm_step *out);

/* Nonzero if v is one of list[0..n-1]. */
static int holds(const int *list, int n, int v)
{
    for (int i = 0; i < n; i++)
        if (list[i] == v)
            return 1;
    return 0;
}

/* Buffers of the simulator, for up to MAXN ranks. */
static struct {
    uint16_t *cur, *next; /* [n * n]: rank v's list at v * n */
    int *len, *nlen;      /* [n] */
    int *stamp;           /* [n] for the final check */
    trd_rm_step *steps;   /* [n] */
    int cap;              /* ranks the buffers hold */
} sim;

static int sim_reserve(int n)
{
    if (n <= sim.cap)
        return 0;
    if (n < 2 * sim.cap) /* grow geometrically: the sweeps raise n by one */
        n = 2 * sim.cap < MAXN ? 2 * sim.cap : MAXN;
    free(sim.cur), free(sim.next), free(sim.len), free(sim.nlen), free(sim.stamp);
    free(sim.steps);
    size_t nn = (size_t)n * (size_t)n;
    sim.cur = malloc(nn * sizeof *sim.cur);
    sim.next = malloc(nn * sizeof *sim.next);
    sim.len = malloc((size_t)n * sizeof(int));
    sim.nlen = malloc((size_t)n * sizeof(int));
    sim.stamp = malloc((size_t)n * sizeof(int));
    sim.steps = malloc((size_t)n * sizeof(trd_rm_step));
    sim.cap = n;
    if (!sim.cur || !sim.next || !sim.len || !sim.nlen || !sim.stamp || !sim.steps) {
        sim.cap = 0;
        return -1;
    }
    return 0;
}

/* One rank's step, checked on its own: counts, peers and fold sources in
 * range, no peer twice in a list, every receive folded exactly once, the own
 * vector at most once. */
static const char *check_step(const trd_rm_step *st, int n, int v, int k, char *why, size_t len)
{
    int used[TRD_RM_MAX_PEERS] = {0}, self = 0;
    if (st->nsend < 0 || st->nsend > TRD_RM_MAX_PEERS || st->nrecv < 0 ||
        st->nrecv > TRD_RM_MAX_PEERS || st->nfold < 0 || st->nfold > TRD_RM_MAX_PEERS) {
        snprintf(why, len, "step %d rank %d: counts out of range", k, v);
        return why;
    }
    for (int i = 0; i < st->nsend; i++)
        if (st->send[i] < 0 || st->send[i] >= n || st->send[i] == v ||
            holds(st->send, i, st->send[i])) {
            snprintf(why, len, "step %d rank %d: sends to %d", k, v, st->send[i]);
            return why;
        }
    for (int i = 0; i < st->nrecv; i++)
        if (st->recv[i] < 0 || st->recv[i] >= n || st->recv[i] == v ||
            holds(st->recv, i, st->recv[i])) {
            snprintf(why, len, "step %d rank %d: receives from %d", k, v, st->recv[i]);
            return why;
        }
    for (int i = 0; i < st->nfold; i++) {
        int f = st->fold[i];
        if (f == TRD_RM_SELF ? self++ : (f < 0 || f >= st->nrecv || used[f]++)) {
            snprintf(why, len, "step %d rank %d: fold source %d twice or out of range", k, v, f);
            return why;
        }
    }
    for (int i = 0; i < st->nrecv; i++)
        if (!used[i]) {
            snprintf(why, len, "step %d rank %d: the vector from %d is not folded", k, v,
                     st->recv[i]);
            return why;
        }
    return NULL;
}

/* Runs schedule s with plan for all ranks; NULL if it is a correct
 * allreduce, else why (a message in why[0..len)). */
static const char *simulate(const trd_rm_schedule *s, plan_fn plan, char *why, size_t len)
{
    int n = s->n, steps = trd_rm_nsteps(s);
    trd_rm_step extra;
    if (n < 1 || n > MAXN || sim_reserve(n))
        return "no room to simulate";
    for (int v = 0; v < n; v++) {
        sim.cur[(size_t)v * n] = (uint16_t)v;
        sim.len[v] = 1;
    }
    for (int k = 0; k < steps; k++) {
        for (int v = 0; v < n; v++) {
            trd_rm_step *st = &sim.steps[v];
            if (plan(s, v, k, st)) {
                snprintf(why, len, "step %d rank %d: no plan", k, v);
                return why;
            }
            if (check_step(st, n, v, k, why, len))
                return why;
        }
        /* every send meets its receive in this step and vice versa (no list
         * holds a peer twice, so this pairs them one to one) */
        for (int v = 0; v < n; v++) {
            const trd_rm_step *st = &sim.steps[v];
            for (int i = 0; i < st->nsend; i++) {
                const trd_rm_step *to = &sim.steps[st->send[i]];
                if (!holds(to->recv, to->nrecv, v)) {
                    snprintf(why, len, "step %d: %d sends to %d, which does not receive it", k, v,
                             st->send[i]);
                    return why;
                }
            }
            for (int i = 0; i < st->nrecv; i++) {
                const trd_rm_step *from = &sim.steps[st->recv[i]];
                if (!holds(from->send, from->nsend, v)) {
                    snprintf(why, len, "step %d: %d receives from %d, which does not send", k, v,
                             st->recv[i]);
                    return why;
                }
            }
        }
        /* the folds, on the lists from before the step */
        for (int v = 0; v < n; v++) {
            const trd_rm_step *st = &sim.steps[v];
            uint16_t *out = sim.next + (size_t)v * n;
            int total = 0;
            if (st->nfold == 0) {
                memcpy(out, sim.cur + (size_t)v * n, (size_t)sim.len[v] * sizeof *out);
                sim.nlen[v] = sim.len[v];
                continue;
            }
            for (int i = 0; i < st->nfold; i++) {
                int from = st->fold[i] == TRD_RM_SELF ? v : st->recv[st->fold[i]];
                if (total + sim.len[from] > n) {
                    snprintf(why, len, "step %d rank %d: a contribution twice", k, v);
                    return why;
                }
                memcpy(out + total, sim.cur + (size_t)from * n,
                       (size_t)sim.len[from] * sizeof *out);
                total += sim.len[from];
            }
            sim.nlen[v] = total;
        }
        uint16_t *t = sim.cur;
        sim.cur = sim.next, sim.next = t;
        int *l = sim.len;
        sim.len = sim.nlen, sim.nlen = l;
    }
    if (plan(s, 0, steps, &extra) != TRD_ERR_INPUT) {
        snprintf(why, len, "a step %d past the last", steps);
        return why;
    }
    int order = trd_rm_keeps_order(s);
    memset(sim.stamp, 0, (size_t)n * sizeof(int));
    for (int v = 0; v < n; v++) {
        const uint16_t *list = sim.cur + (size_t)v * n;
        if (sim.len[v] != n) {
            snprintf(why, len, "rank %d ends with %d contributions, not %d", v, sim.len[v], n);
            return why;
        }
        for (int i = 0; i < n; i++) {
            if (order && list[i] != i) { /* rank order: then each rank once, too */
                snprintf(why, len, "rank %d holds %d at place %d: not rank order", v, list[i], i);
                return why;
            }
            if (!order && sim.stamp[list[i]] == v + 1) {
                snprintf(why, len, "rank %d holds %d twice", v, list[i]);
                return why;
            }
            sim.stamp[list[i]] = v + 1;
        }
    }
    return NULL;
}

/* Parse text for n ranks and simulate it; counts a failure (printed). */
static int run_text(const char *text, int n)
{
    trd_rm_schedule s;
    char err[200], why[200];
    if (trd_rm_parse(text, n, &s, err, sizeof err)) {
        printf("\n'%s' for %d ranks: %s\n", text, n, err);
        return 1;
    }
    const char *bad = simulate(&s, trd_rm_plan_step, why, sizeof why);
    if (bad)
        printf("\n'%s' for %d ranks: %s\n", text, n, bad);
    return bad != NULL;
}

/* format(s) parses back to s (byte for byte). */
static int round_trip(const trd_rm_schedule *s)
{
    char text[1024], err[200];
    trd_rm_schedule back;
    int w = trd_rm_format(s, text, sizeof text);
    if (w < 0 || (size_t)w >= sizeof text || (int)strlen(text) != w)
        return 0;
    if (trd_rm_parse(text, s->n, &back, err, sizeof err)) {
        printf("\n'%s' does not parse back: %s\n", text, err);
        return 0;
    }
    return memcmp(&back, s, sizeof back) == 0;
}

/* ---- Tests -------------------------------------------------------------------- */

static void test_examples(void)
{
    static const struct {
        const char *text;
        int n;
    } cases[] = {
        {"a2", 2},
        {"", 1},
        {"a2,a3", 6},
        {"a3a2", 6},
        {"a6", 6},
        {"m1g0a3,n1g0a2", 7}, /* RM Fig. 7 */
        {"m1g1a3,n1g2a2", 7},
        {"c2m2,a2,a3,e2m2", 7},
        {"c2m2,a2,a2,e2m2", 5}, /* MPICH's fix */
        {"a4,a3", 12},
        {"a3", 3},
        {"c2m2,a2,e2m2", 3},
        {"a2,a2", 4},
        {"a4", 4},
        {"m2g1a3,n2g2a2", 8},     /* two remaining ranks */
        {"m1g2a3,a2,n1g3a2", 13}, /* merge over three stages, last at stride 6 */
        {"m3g0a2,n3g1a2", 7},
        {"c6m3,a2,a3,e6m3", 10},            /* collapse with base 3 */
        {"c6m2,a3,e6m2", 6},                /* T = n */
        {"c2m2,e2m2", 2},                   /* inner level of one rank */
        {"c2m2,c4m2,a2,a4,e4m2,e2m2", 11},  /* collapse inside collapse */
        {"c2m2,m1g0a3,a2,n1g1a2,e2m2", 14}, /* merge inside collapse */
        {"c4m2,m1g1a2,n1g0a2,e4m2", 7},     /* merge on the representatives */
        {"c3m3,c2m2,a2,a2,e2m2,e3m3", 7},
        {" a2 , a2 ,a2", 8},
        {"a64", 64},
        {"a2,a32", 64},
        {"m64g0a2,n64g0a2", 68},
    };
    int failures = 0, runs = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        failures += run_text(cases[i].text, cases[i].n);
        runs++;
    }
    CU_ASSERT_EQUAL(runs, 28);
    CU_ASSERT_EQUAL(failures, 0);
}

static void test_order(void)
{
    trd_rm_schedule s;
    CU_ASSERT_EQUAL(trd_rm_parse("c2m2,a2,a3,e2m2", 7, &s, NULL, 0), 0);
    CU_ASSERT(trd_rm_keeps_order(&s));
    CU_ASSERT_EQUAL(trd_rm_parse("m1g0a3,n1g0a2", 7, &s, NULL, 0), 0);
    CU_ASSERT(!trd_rm_keeps_order(&s));
    CU_ASSERT_EQUAL(trd_rm_parse("c2m2,m1g0a3,a2,n1g1a2,e2m2", 14, &s, NULL, 0), 0);
    CU_ASSERT(!trd_rm_keeps_order(&s));
}

/* The plan of RM Fig. 7 (7 ranks, "m1g0a3,n1g0a2"), spelled out. */
static void test_merge_plan(void)
{
    trd_rm_schedule s;
    trd_rm_step st;
    CU_ASSERT_EQUAL(trd_rm_parse("m1g0a3,n1g0a2", 7, &s, NULL, 0), 0);
    CU_ASSERT_EQUAL(trd_rm_nsteps(&s), 2);
    CU_ASSERT_EQUAL(trd_rm_max_recv(&s), 3);
    /* step 0: rank 6 sends to group 0 = {0, 1, 2} */
    CU_ASSERT_EQUAL(trd_rm_plan_step(&s, 6, 0, &st), 0);
    CU_ASSERT_EQUAL(st.nsend, 3);
    CU_ASSERT_EQUAL(st.nrecv, 0);
    CU_ASSERT_EQUAL(st.nfold, 0);
    CU_ASSERT(st.send[0] == 0 && st.send[1] == 1 && st.send[2] == 2);
    /* rank 1 folds p0 op p1 op p2 op x6 */
    CU_ASSERT_EQUAL(trd_rm_plan_step(&s, 1, 0, &st), 0);
    CU_ASSERT_EQUAL(st.nsend, 2);
    CU_ASSERT_EQUAL(st.nrecv, 3);
    CU_ASSERT_EQUAL(st.nfold, 4);
    CU_ASSERT(st.recv[0] == 0 && st.recv[1] == 2 && st.recv[2] == 6);
    CU_ASSERT(st.fold[0] == 0 && st.fold[1] == TRD_RM_SELF && st.fold[2] == 1 && st.fold[3] == 2);
    /* step 1 (stride 3): group 0 = {0, 3} also sends to 6, which folds p0 op p3 */
    CU_ASSERT_EQUAL(trd_rm_plan_step(&s, 3, 1, &st), 0);
    CU_ASSERT(st.nsend == 2 && st.send[0] == 0 && st.send[1] == 6);
    CU_ASSERT_EQUAL(trd_rm_plan_step(&s, 6, 1, &st), 0);
    CU_ASSERT(st.nsend == 0 && st.nrecv == 2 && st.recv[0] == 0 && st.recv[1] == 3);
    CU_ASSERT(st.nfold == 2 && st.fold[0] == 0 && st.fold[1] == 1);
    /* out of range */
    CU_ASSERT_EQUAL(trd_rm_plan_step(&s, 7, 0, &st), TRD_ERR_INPUT);
    CU_ASSERT_EQUAL(trd_rm_plan_step(&s, 0, 2, &st), TRD_ERR_INPUT);
}

/* Collapse: representatives and idle ranks. */
static void test_collapse_plan(void)
{
    trd_rm_schedule s;
    trd_rm_step st;
    CU_ASSERT_EQUAL(trd_rm_parse("c2m2,a2,a2,e2m2", 5, &s, NULL, 0), 0);
    CU_ASSERT_EQUAL(trd_rm_plan_step(&s, 1, 0, &st), 0); /* sends to its representative */
    CU_ASSERT(st.nsend == 1 && st.send[0] == 0 && st.nrecv == 0 && st.nfold == 0);
    CU_ASSERT_EQUAL(trd_rm_plan_step(&s, 1, 1, &st), 0); /* idle */
    CU_ASSERT(st.nsend == 0 && st.nrecv == 0 && st.nfold == 0);
    CU_ASSERT_EQUAL(trd_rm_plan_step(&s, 2, 1, &st), 0); /* inner rank 1, pairs with 0 */
    CU_ASSERT(st.nsend == 1 && st.send[0] == 0);
    CU_ASSERT_EQUAL(trd_rm_plan_step(&s, 4, 2, &st), 0); /* inner 3 pairs with inner 1 = 2 */
    CU_ASSERT(st.nsend == 1 && st.send[0] == 2);
    CU_ASSERT_EQUAL(trd_rm_plan_step(&s, 1, 3, &st), 0); /* gets the result */
    CU_ASSERT(st.nrecv == 1 && st.recv[0] == 0 && st.nfold == 1 && st.fold[0] == 0);
}

/* The default schedule of every n in 1..1024 with maxbase 2, 3, 4, 8, and the
 * node-first variant with 4 ranks per node. */
static void test_defaults(void)
{
    static const int maxbases[] = {2, 3, 4, 8, 0};
    char why[200], text[1024];
    trd_rm_schedule s;
    int failures = 0, runs = 0;
    for (int mb = 0; mb < 5; mb++) {
        for (int n = 1; n <= 1024; n++) {
            int maxbase = maxbases[mb] ? maxbases[mb] : 4;
            const char *bad;
            if (maxbases[mb])
                trd_rm_default(n, maxbase, &s);
            else
                trd_rm_default_first(n, 4, maxbase, &s);
            runs++;
            bad = s.n != n ? "wrong n" : simulate(&s, trd_rm_plan_step, why, sizeof why);
            if (!bad && !trd_rm_keeps_order(&s))
                bad = "does not keep rank order";
            if (!bad && !round_trip(&s))
                bad = "no round trip";
            for (int i = 0; !bad && i < s.ntokens; i++) {
                const trd_rm_token *t = &s.tok[i];
                int first = !maxbases[mb] && i == 0 && n % 4 == 0;
                if (t->kind == TRD_RM_A && t->base > maxbase && !(first && t->base == 4))
                    bad = "a base above maxbase";
                if (t->kind == TRD_RM_C && (t->arg > n || 2 * (n - t->arg / 2) < n))
                    bad = "collapse below n/2";
            }
            if (bad && failures++ < 5) {
                trd_rm_format(&s, text, sizeof text);
                printf("\ndefault n=%d maxbase=%d%s '%s': %s\n", n, maxbase,
                       maxbases[mb] ? "" : " first=4", text, bad);
            }
        }
    }
    CU_ASSERT_EQUAL(runs, 5 * 1024);
    CU_ASSERT_EQUAL(failures, 0);
}

static void expect_default(int n, int first, int maxbase, const char *text)
{
    trd_rm_schedule s;
    char got[1024];
    if (first)
        trd_rm_default_first(n, first, maxbase, &s);
    else
        trd_rm_default(n, maxbase, &s);
    trd_rm_format(&s, got, sizeof got);
    if (strcmp(got, text))
        printf("\ndefault n=%d first=%d maxbase=%d: '%s', expected '%s'\n", n, first, maxbase, got,
               text);
    CU_ASSERT_STRING_EQUAL(got, text);
}

static void test_default_shapes(void)
{
    expect_default(1, 0, 4, "");
    expect_default(2, 0, 4, "a2");
    expect_default(12, 0, 4, "a4,a3");
    expect_default(6, 0, 8, "a6");
    expect_default(1024, 0, 8, "a8,a8,a8,a2");
    expect_default(1024, 0, 4, "a4,a4,a4,a4,a4");
    expect_default(5, 0, 2, "c2m2,a2,a2,e2m2");
    expect_default(7, 0, 4, "c2m2,a3,a2,e2m2");          /* 6 = 3 x 2 */
    expect_default(11, 0, 8, "c2m2,a5,a2,e2m2");         /* 10 */
    expect_default(97, 0, 4, "c2m2,a4,a4,a3,a2,e2m2");   /* 96 */
    expect_default(97, 0, 16, "c2m2,a12,a8,e2m2");       /* 96 = 12 x 8 */
    expect_default(23, 0, 2, "c14m2,a2,a2,a2,a2,e14m2"); /* 16 */
    expect_default(24, 8, 4, "a8,a3");
    expect_default(26, 2, 4, "c4m2,a4,a3,a2,e4m2"); /* 13 not 4-smooth: no node stage */
    expect_default(12, 5, 4, "a4,a3");              /* 5 does not divide 12 */
    expect_default(4, 4, 2, "a4");
    expect_default(130, 65, 4, "c4m2,a4,a4,a4,a2,e4m2"); /* 65 > 64 */
}

static void test_round_trip(void)
{
    static const struct {
        const char *text;
        int n;
        const char *canonical;
    } cases[] = {
        {"a3a2", 6, "a3,a2"},
        {" c2m2 a2\ta3,,e2m2 ", 7, "c2m2,a2,a3,e2m2"},
        {"m1g0a3n1g0a2", 7, "m1g0a3,n1g0a2"},
        {"c02m2,a02,e2m002", 3, "c2m2,a2,e2m2"},
        {"", 1, ""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        trd_rm_schedule s;
        char text[256], err[200];
        CU_ASSERT_EQUAL(trd_rm_parse(cases[i].text, cases[i].n, &s, err, sizeof err), 0);
        CU_ASSERT_EQUAL(trd_rm_format(&s, text, sizeof text), (int)strlen(cases[i].canonical));
        CU_ASSERT_STRING_EQUAL(text, cases[i].canonical);
        CU_ASSERT(round_trip(&s));
    }
    /* truncation as snprintf */
    trd_rm_schedule s;
    char small[6];
    CU_ASSERT_EQUAL(trd_rm_parse("c2m2,a2,a3,e2m2", 7, &s, NULL, 0), 0);
    CU_ASSERT_EQUAL(trd_rm_format(&s, small, sizeof small), 15);
    CU_ASSERT_STRING_EQUAL(small, "c2m2,");
}

static void expect_error_at(int line, const char *text, int n, const char *expect)
{
    trd_rm_schedule s;
    char err[200];
    int rc = trd_rm_parse(text, n, &s, err, sizeof err);
    if (rc != TRD_ERR_INPUT || strcmp(err, expect))
        printf("\ntest_rm.c:%d: '%s' for %d ranks: rc %d, '%s', expected '%s'\n", line, text, n, rc,
               err, expect);
    CU_ASSERT_EQUAL(rc, TRD_ERR_INPUT);
    CU_ASSERT_STRING_EQUAL(err, expect);
    CU_ASSERT_EQUAL(s.ntokens, 0);
}
#define EXPECT_ERROR(text, n, msg) expect_error_at(__LINE__, text, n, msg)

static void test_errors(void)
{
    char many[512] = "";
    EXPECT_ERROR("a2a", 4, "column 4: expected a base >= 2 after 'a'");
    EXPECT_ERROR("a2,a1", 4, "column 5: expected a base >= 2 after 'a'");
    EXPECT_ERROR("a2,a3", 7, "the bases multiply to 6, not 7 ranks");
    EXPECT_ERROR("a4,a4", 7, "the bases multiply to 16, not 7 ranks");
    EXPECT_ERROR("c2m2,a2,e4m2", 3, "column 9: 'e4m2' does not close 'c2m2'");
    EXPECT_ERROR("c2m2,a2", 3, "column 8: expected 'e2m2' to close 'c2m2'");
    EXPECT_ERROR("c2m2,a2,a2", 5, "column 11: expected 'e2m2' to close 'c2m2'");
    EXPECT_ERROR("c2m2,a2,e2m2", 5, "column 6: the bases inside 'c2m2' multiply to 2, not 4 ranks");
    EXPECT_ERROR("c3m2,a2,e3m2", 5,
                 "column 1: threshold 3 of 'c3m2' is not a multiple of its base 2");
    EXPECT_ERROR("c8m2,a4,e8m2", 7,
                 "column 1: threshold 8 of 'c8m2' is above the 7 ranks of its level");
    EXPECT_ERROR("c2x2", 3, "column 3: expected 'm' after the threshold of 'c'");
    EXPECT_ERROR("c0m2", 3, "column 2: expected a threshold >= 1 after 'c'");
    EXPECT_ERROR("x2", 2, "column 1: expected a stage 'a', 'c', 'e', 'm' or 'n', found 'x'");
    EXPECT_ERROR("a2;a2", 4, "column 3: expected a stage 'a', 'c', 'e', 'm' or 'n', found ';'");
    EXPECT_ERROR("a65", 65, "column 2: base 65 is above 64");
    EXPECT_ERROR("m1g2a3,n1g0a2", 7,
                 "column 1: group 2 of 'm1g2a3' is out of range: its stage has 2 groups");
    EXPECT_ERROR("m1g0a3,n1g3a2", 7,
                 "column 8: group 3 of 'n1g3a2' is out of range: its stage has 3 groups");
    EXPECT_ERROR("m1g0a3,n2g0a2", 7, "column 8: 'n2g0a2' does not close 'm1g0a3'");
    EXPECT_ERROR("m1g0a3,a2", 7, "column 10: expected an 'n' stage to close 'm1g0a3'");
    EXPECT_ERROR("m1g0a3,n1g0a3", 7,
                 "column 1: the bases from 'm1g0a3' to 'n1g0a3' multiply to 9, not 6 ranks");
    EXPECT_ERROR(
        "m2g0a2,n2g0a2", 3,
        "column 1: 'm2g0a2' leaves fewer than 2 of the 3 ranks of its level to merge into");
    EXPECT_ERROR("m65g0a2,n65g0a2", 69, "column 2: 65 remaining ranks are more than 64");
    EXPECT_ERROR("m1x0a3", 7, "column 3: expected 'g' after the remaining ranks of 'm'");
    EXPECT_ERROR("m1g0b3", 7, "column 5: expected 'a' after the group index");
    EXPECT_ERROR("m1ga3", 7, "column 4: expected a group index after 'g'");
    EXPECT_ERROR("e2m2", 2, "column 1: 'e2m2' closes no 'c' stage");
    EXPECT_ERROR("a2,n1g0a2", 2, "column 4: 'n1g0a2' closes no 'm' stage");
    EXPECT_ERROR("a2,a3,c2m2,e2m2", 6, "column 7: 'c2m2' follows a complete schedule for 6 ranks");
    EXPECT_ERROR("c2m2,a2,e2m2,a2", 3, "column 14: 'a2' follows a complete schedule for 3 ranks");
    EXPECT_ERROR("", 7, "empty schedule for 7 ranks");
    EXPECT_ERROR("c4m2,e4m2", 5,
                 "column 6: expected stages for the 3 ranks inside 'c4m2', found 'e4m2'");
    EXPECT_ERROR("a2", 0, "a schedule needs at least 1 rank, not 0");
    EXPECT_ERROR("c4000000000m2,a2,e4000000000m2", 1 << 30, "column 2: threshold above 999999999");
    EXPECT_ERROR("m1g99999999999a2,n1g0a2", 5, "column 4: group index above 999999999");
    EXPECT_ERROR("a2", 1, "the bases multiply to 2, not 1 rank");
    EXPECT_ERROR("c2m2,e2m2", 1,
                 "column 1: threshold 2 of 'c2m2' is above the 1 rank of its level");
    EXPECT_ERROR("m1g2a2,n1g0a2", 5,
                 "column 1: group 2 of 'm1g2a2' is out of range: its stage has 2 groups");
    EXPECT_ERROR("m1g0a2,a2,n1g4a2", 9,
                 "column 11: group 4 of 'n1g4a2' is out of range: its stage has 4 groups");
    for (int i = 0; i < 65; i++)
        strcat(many, "a2,");
    EXPECT_ERROR(many, 1 << 30, "column 193: more than 64 stages");
}

/* ---- Mutants: corrupted plans must be caught -------------------------------------- */

static int mutant_kind, mutant_done;

/* The real plan, with one corruption at the first place it applies. */
static int mutant_plan(const trd_rm_schedule *s, int me, int step, trd_rm_step *out)
{
    int rc = trd_rm_plan_step(s, me, step, out);
    if (rc || mutant_done)
        return rc;
    switch (mutant_kind) {
    case 0: /* drop the last fold source and its receive */
        if (out->nfold >= 2 && out->fold[out->nfold - 1] == out->nrecv - 1) {
            out->nfold--;
            out->nrecv--;
            mutant_done = 1;
        }
        break;
    case 1: /* drop a send */
        if (out->nsend >= 1) {
            out->nsend--;
            mutant_done = 1;
        }
        break;
    case 2: /* swap two fold sources */
        if (out->nfold >= 2) {
            int t = out->fold[0];
            out->fold[0] = out->fold[1];
            out->fold[1] = t;
            mutant_done = 1;
        }
        break;
    case 3: /* fold the own vector twice */
        if (out->nfold >= 1 && out->nfold < TRD_RM_MAX_PEERS) {
            out->fold[out->nfold++] = TRD_RM_SELF;
            mutant_done = 1;
        }
        break;
    case 4: /* receive from the wrong peer */
        if (out->nrecv >= 1) {
            out->recv[0] = (out->recv[0] + 1) % s->n == me ? (out->recv[0] + 2) % s->n
                                                           : (out->recv[0] + 1) % s->n;
            mutant_done = 1;
        }
        break;
    case 5: /* the last step forgets to replace a vector (an expand's receive) */
        if (step == s->ntokens - 1 && out->nfold == 1 && out->fold[0] >= 0) {
            out->nfold = 0;
            out->nrecv = 0;
            mutant_done = 1;
        }
        break;
    }
    return rc;
}

static void test_mutants(void)
{
    static const struct {
        const char *text;
        int n;
    } cases[] = {
        {"a2,a3", 6},
        {"m1g0a3,n1g0a2", 7},
        {"c2m2,a2,a3,e2m2", 7},
        {"c2m2,c4m2,a2,a4,e4m2,e2m2", 11},
    };
    char why[200];
    int caught = 0, tried = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        trd_rm_schedule s;
        CU_ASSERT_EQUAL_FATAL(trd_rm_parse(cases[i].text, cases[i].n, &s, NULL, 0), 0);
        CU_ASSERT_PTR_NULL(simulate(&s, trd_rm_plan_step, why, sizeof why));
        for (mutant_kind = 0; mutant_kind < 6; mutant_kind++) {
            /* swapped operands only show where the order is kept */
            if (mutant_kind == 2 && !trd_rm_keeps_order(&s))
                continue;
            mutant_done = 0;
            const char *bad = simulate(&s, mutant_plan, why, sizeof why);
            if (!mutant_done)
                continue;
            tried++;
            if (bad)
                caught++;
            else
                printf("\nmutant %d of '%s' not caught\n", mutant_kind, cases[i].text);
        }
    }
    CU_ASSERT(tried >= 18);
    CU_ASSERT_EQUAL(caught, tried);
}

int main(void)
{
    static const trd_test_case tests[] = {
        {"schedule examples (RM §4, Fig. 7)", test_examples},
        {"rank order", test_order},
        {"merge plan (RM Fig. 7)", test_merge_plan},
        {"collapse plan", test_collapse_plan},
        {"parse errors", test_errors},
        {"format and parse round trip", test_round_trip},
        {"default schedule shapes", test_default_shapes},
        {"default schedule of every n in 1..1024", test_defaults},
        {"corrupted plans are caught", test_mutants},
    };
    int rc = trd_test_main("rm", tests, TRD_NTESTS(tests));
    free(sim.cur), free(sim.next), free(sim.len), free(sim.nlen), free(sim.stamp);
    free(sim.steps);
    return rc;
}
