/* treeduce-tune's rules without MPI (measure/tune_rules.h), driven by a
 * fake timer over a whole grid as the first pass runs them:
 *   - a candidate 3x behind at small sizes and 2x ahead at large ones wins
 *     every large size, whatever the model predicts for it (right, or
 *     wrong by 10x everywhere);
 *   - a candidate behind on the measurements is skipped only where the
 *     model also puts it out of reach, and is timed again at least once per
 *     factor TUNE_RETIME_FACTOR in size;
 *   - the model's best TUNE_MODEL_TOP are timed at every size;
 *   - the check pass's verdicts, its choices (a tie keeps the choice of the
 *     size before) and the noise of twin timings. */
#include <math.h>

#include "test_util.h"
#include "tune_rules.h"
#include "wisdom.h"

#define CAP 8
#define NGRID 24 /* 8 B .. 64 MiB, factor 2 */

/* The fake machine: per candidate a time in microseconds at bytes. */
typedef double (*fake_fn)(int cand, size_t bytes);

typedef struct run {
    fake_fn truth;
    int ncands;
    int calls;               /* time_fn calls */
    int timed[NGRID][CAP];   /* how often each candidate was timed at each size */
    double best[NGRID][CAP]; /* its last time there (INFINITY: never) */
} run;

static int fake_time(void *arg, int g, const int *idx, int n, double *us)
{
    run *r = arg;
    r->calls++;
    for (int i = 0; i < n; i++) {
        us[i] = r->truth(idx[i], (size_t)8 << g);
        r->timed[g][idx[i]]++;
        r->best[g][idx[i]] = us[i];
    }
    return 0;
}

/* The first pass over 8 B .. 64 MiB with model(c, bytes) as the model. */
static void first_pass(run *r, double (*model)(int, size_t))
{
    size_t grid[NGRID];
    double pred[NGRID * CAP];
    int gidx[NGRID * CAP], gn[NGRID], dead[CAP] = {0}, ndone;
    tune_prune pr;
    for (int g = 0; g < NGRID; g++) {
        grid[g] = (size_t)8 << g;
        for (int c = 0; c < CAP; c++) {
            pred[g * CAP + c] = c < r->ncands ? model(c, grid[g]) : NAN;
            r->best[g][c] = INFINITY;
            r->timed[g][c] = 0;
        }
    }
    r->calls = 0;
    CU_ASSERT_EQUAL_FATAL(tune_prune_init(&pr, r->ncands), 0);
    CU_ASSERT_EQUAL(
        tune_first_pass(&pr, grid, NGRID, pred, dead, gidx, gn, CAP, fake_time, r, &ndone), 0);
    CU_ASSERT_EQUAL(ndone, NGRID);
    for (int g = 0; g < NGRID; g++) /* what was listed is what was timed */
        for (int c = 0; c < r->ncands; c++) {
            int listed = 0;
            for (int k = 0; k < gn[g]; k++)
                listed |= gidx[g * CAP + k] == c;
            CU_ASSERT_EQUAL(listed, r->timed[g][c] > 0);
        }
    tune_prune_free(&pr);
}

/* The fastest candidate timed at size g, -1 none. */
static int winner(const run *r, int g)
{
    int w = -1;
    for (int c = 0; c < r->ncands; c++)
        if (isfinite(r->best[g][c]) && (w < 0 || r->best[g][c] < r->best[g][w]))
            w = c;
    return w;
}

/* 0: the fast small one (1 us + 1 ns/B); 1: 3x behind it below 64 KiB, 2x
 * ahead from 64 KiB; 2: the MPI library's routine, 1.5x behind; 3, 4, 5:
 * 1.1x, 1.2x and 1.3x behind the first everywhere (the model's best three
 * are timed at every size: these keep the second out of them). */
static double truth_cross(int c, size_t b)
{
    double a = 1 + (double)b * 1e-3;
    if (c == 0)
        return a;
    if (c == 1)
        return b < 65536 ? 3 * a : a / 2;
    if (c == 2)
        return 1.5 * a;
    return (1 + 0.1 * (c - 2)) * a;
}

static double model_right(int c, size_t b)
{
    return c == 2 ? NAN : truth_cross(c, b); /* the library's routine has no model */
}

static double model_wrong(int c, size_t b)
{
    return c == 1 ? 10 * truth_cross(0, b) : c == 2 ? NAN : truth_cross(c, b);
}

static void test_late_winner(void)
{
    double (*models[])(int, size_t) = {model_right, model_wrong};
    for (int m = 0; m < 2; m++) {
        run r = {.truth = truth_cross, .ncands = 6};
        first_pass(&r, models[m]);
        for (int g = 0; g < NGRID; g++) {
            size_t b = (size_t)8 << g;
            /* the true winner of every size is the one found */
            CU_ASSERT_EQUAL(winner(&r, g), b < 65536 ? 0 : 1);
            /* the library's routine has no prediction: always timed */
            CU_ASSERT(r.timed[g][2] > 0);
        }
        /* behind at the small sizes: skipped at some of them */
        int skipped = 0;
        for (int g = 0; g < NGRID; g++)
            skipped += r.timed[g][1] == 0;
        CU_ASSERT(skipped > 0);
    }
}

/* A candidate always 3x behind, the model agreeing: timed at least once per
 * factor 8; never skipped where the model puts it within reach.  2 is the
 * MPI library's routine, 3 and 4 are 1.1x and 1.2x behind the first. */
static double truth_behind(int c, size_t b)
{
    double a = 2 + (double)b * 1e-3;
    return c == 1 ? 3 * a : c == 0 ? a : (1 + 0.1 * (c - 2)) * a;
}

static double model_behind(int c, size_t b)
{
    return c == 2 ? NAN : truth_behind(c, b);
}

static double model_close(int c, size_t b)
{
    return c == 1 ? 1.5 * truth_behind(0, b) : c == 2 ? NAN : truth_behind(c, b);
}

static void test_retime(void)
{
    run r = {.truth = truth_behind, .ncands = 5};
    first_pass(&r, model_behind);
    int last = -1, skipped = 0;
    for (int g = 0; g < NGRID; g++) {
        if (r.timed[g][1]) {
            if (last >= 0)
                CU_ASSERT((double)((size_t)8 << g) <=
                          TUNE_RETIME_FACTOR * (double)((size_t)8 << last));
            last = g;
        } else {
            skipped++;
        }
    }
    CU_ASSERT(skipped > 0);       /* the rule does skip */
    CU_ASSERT(last >= NGRID - 3); /* and comes back near the top */
    /* the model puts it within reach: timed everywhere */
    run r2 = {.truth = truth_behind, .ncands = 5};
    first_pass(&r2, model_close);
    for (int g = 0; g < NGRID; g++)
        CU_ASSERT(r2.timed[g][1] > 0);
}

/* Seven candidates, six 3x behind the first: the model's best three are
 * timed at every size, the others not at every one. */
static double truth_many(int c, size_t b)
{
    double a = 1 + (double)b * 1e-4;
    return c == 0 ? a : 3 * a * (1 + 0.01 * c);
}

static double model_many(int c, size_t b)
{
    return c == 0 ? truth_many(0, b) : 10 * truth_many(c, b);
}

static void test_model_top(void)
{
    run r = {.truth = truth_many, .ncands = 7};
    first_pass(&r, model_many);
    for (int g = 0; g < NGRID; g++)
        for (int c = 0; c < 3; c++) /* 0, 1, 2: the model's best three */
            CU_ASSERT(r.timed[g][c] > 0);
    int skipped = 0;
    for (int g = 0; g < NGRID; g++)
        for (int c = 3; c < 7; c++)
            skipped += r.timed[g][c] == 0;
    CU_ASSERT(skipped > 0);
}

static void test_verdict(void)
{
    /* faster than the model's choice beyond the noise, not slower than the
     * library's routine beyond it: kept */
    CU_ASSERT_EQUAL(tune_check_verdict(9, 10, 12, 0.05, 0), TRD_WISDOM_KEPT);
    /* sub-microsecond calls: faster by less than TUNE_TIE_US is a tie
     * (measured: nap 0.79 against shm 0.81 us, noise 1.4%), by more kept */
    CU_ASSERT_EQUAL(tune_check_verdict(0.79, 0.81, 1.7, 0.014, 0), TRD_WISDOM_TO_MODEL);
    CU_ASSERT_EQUAL(tune_check_verdict(0.70, 0.81, 1.7, 0.014, 0), TRD_WISDOM_KEPT);
    /* the MPI library's routine within that margin of the model's choice
     * takes the size, beyond it the model's choice does */
    CU_ASSERT_EQUAL(tune_check_verdict(0.90, 0.81, 0.78, 0.014, 0), TRD_WISDOM_TO_MPI);
    CU_ASSERT_EQUAL(tune_check_verdict(0.90, 0.81, 0.84, 0.014, 0), TRD_WISDOM_TO_MPI);
    CU_ASSERT_EQUAL(tune_check_verdict(0.90, 0.81, 0.88, 0.014, 0), TRD_WISDOM_TO_MODEL);
    CU_ASSERT_EQUAL(tune_check_verdict(10, 10, 10, 0, 1), TRD_WISDOM_KEPT);
    CU_ASSERT_EQUAL(tune_check_verdict(10, INFINITY, 12, 0.05, 0), TRD_WISDOM_KEPT);
    /* faster only within the noise: a tie, which the model's choice takes */
    CU_ASSERT_EQUAL(tune_check_verdict(9.8, 10, 12, 0.05, 0), TRD_WISDOM_TO_MODEL);
    /* the model's choice faster beyond it */
    CU_ASSERT_EQUAL(tune_check_verdict(431.5, 139.6, 160, 0, 0), TRD_WISDOM_TO_MODEL);
    CU_ASSERT_EQUAL(tune_check_verdict(20, 10, 12, 0.05, 0), TRD_WISDOM_TO_MODEL);
    /* the library's routine faster, or within the noise of the model's */
    CU_ASSERT_EQUAL(tune_check_verdict(27.39, 27.0, 26.09, 0, 0), TRD_WISDOM_TO_MPI);
    CU_ASSERT_EQUAL(tune_check_verdict(20, 10, 10.3, 0.05, 0), TRD_WISDOM_TO_MPI);
    CU_ASSERT_EQUAL(tune_check_verdict(10.4, 10, 10.2, 0.05, 0), TRD_WISDOM_TO_MPI);
    CU_ASSERT_EQUAL(tune_check_verdict(20, INFINITY, 12, 0.05, 0), TRD_WISDOM_TO_MPI);
    /* the winner is the model's choice, the library's routine faster beyond the noise */
    CU_ASSERT_EQUAL(tune_check_verdict(10, 10, 8, 0.05, 1), TRD_WISDOM_TO_MPI);
}

/* A checked size: winner alg, model's choice model, their times and the
 * MPI library's, noise; its verdict set as the check pass sets it. */
static trd_wisdom_point checked(size_t bytes, const char *alg, double alg_us, const char *model,
                                double model_us, double mpi_us, double noise)
{
    trd_wisdom_point p = {
        .bytes = bytes, .alg_us = alg_us, .model_us = model_us, .mpi_us = mpi_us, .noise = noise};
    snprintf(p.alg, sizeof p.alg, "%s", alg);
    snprintf(p.model, sizeof p.model, "%s", model);
    p.verdict = tune_check_verdict(alg_us, model_us, mpi_us, noise, !strcmp(alg, model));
    return p;
}

static void test_choices(void)
{
    /* allgather on the emulated 4-node tree, --passes 1, noise 3%: the
     * verdicts alone swap between rd, the MPI routine and the model's
     * choice (rd) at times within 3% of one another, 6 ranges over 8
     * sizes; then bruck 1.3x ahead of both from 32 KiB */
    trd_wisdom_point p[] = {
        checked(8, "rd", 386.9, "rd", 386.9, 379.9, 0.03),
        checked(32, "mpi", 386.9, "rd", 377.5, 386.9, 0.03),
        checked(128, "mpi", 479.2, "rd", 458.6, 479.2, 0.03),
        checked(464, "mpi", 478.2, "rd", 475.0, 478.2, 0.03),
        checked(512, "rd", 499.2, "rd", 499.2, 503.0, 0.03),
        checked(632, "mpi", 501.5, "rd", 454.4, 501.5, 0.03),
        checked(1024, "mpi", 477.6, "rd", 477.0, 477.6, 0.03),
        checked(4096, "rd", 685.8, "rd", 685.8, 655.0, 0.03),
        checked(32768, "bruck", 7702, "rd", 9828, 8857, 0.03),
        checked(65536, "bruck", 14590, "rd", 20980, 19640, 0.03),
        /* the MPI routine ahead of bruck beyond the noise: it takes it */
        checked(131072, "bruck", 40000, "ring", 37760, 35280, 0.03),
    };
    const int n = (int)(sizeof p / sizeof p[0]);
    const char *who[sizeof p / sizeof p[0]];
    int verdicts[TRD_WISDOM_VERDICT_MAX] = {0};
    for (int k = 0; k < n; k++)
        verdicts[p[k].verdict]++;
    /* the verdicts would cut the tie zone: all three kinds among them */
    CU_ASSERT(verdicts[TRD_WISDOM_KEPT] > 0 && verdicts[TRD_WISDOM_TO_MODEL] > 0 &&
              verdicts[TRD_WISDOM_TO_MPI] > 0);
    tune_check_choices(p, n, who);
    /* 8 B: rd, the model's choice, kept; the tie zone stays with rd, even
     * at 632 B, where the model's choice (rd) is 10% ahead of the winner
     * checked (the MPI routine); at 4 KiB rd is 4.7% behind the MPI
     * routine, beyond the noise: cut there */
    for (int k = 0; k < 7; k++)
        CU_ASSERT_STRING_EQUAL(who[k], "rd");
    CU_ASSERT_STRING_EQUAL(who[7], "mpi");
    CU_ASSERT_STRING_EQUAL(who[8], "bruck");
    CU_ASSERT_STRING_EQUAL(who[9], "bruck");
    CU_ASSERT_STRING_EQUAL(who[10], "mpi");
    /* the choice before holds only where it is timed and within the noise */
    trd_wisdom_point q[] = {
        checked(8, "m", 10, "m", 10, 10.2, 0.05),     /* m, the model's choice, kept */
        checked(16, "b", 9.0, "m", 10, 9.5, 0.05),    /* b kept, m 11% behind it */
        checked(32, "b", 9.0, "m", 9.9, 9.6, 0.05),   /* b kept */
        checked(64, "b", 9.0, "m", 9.2, 9.4, 0.05),   /* to MPI, b within the noise of all */
        checked(128, "b", 9.0, "m", 9.2, 9.0, 0.05),  /* the same */
        checked(256, "c", 8.0, "m", 9.0, 12.0, 0.05), /* c kept; b not timed here */
        checked(512, "c", 9.0, "m", 8.0, 12.0, 0.05), /* to the model, c 12% behind it */
        checked(1024, "x", 9.0, "m", 10, 9.5, 0.05),  /* x kept */
        /* to MPI; x within the noise of the MPI routine, but not of the
         * model's choice: not x */
        checked(2048, "x", 10.9, "m", 10, 10.4, 0.05),
    };
    const char *w[sizeof q / sizeof q[0]];
    static const char *const want[] = {"m", "b", "b", "b", "b", "c", TRD_WISDOM_MODEL, "x", "mpi"};
    CU_ASSERT_EQUAL(q[3].verdict, TRD_WISDOM_TO_MPI);
    CU_ASSERT_EQUAL(q[8].verdict, TRD_WISDOM_TO_MPI);
    tune_check_choices(q, 9, w);
    for (int k = 0; k < 9; k++)
        CU_ASSERT_STRING_EQUAL(w[k], want[k]);
    /* the time of each choice at a checked size */
    CU_ASSERT_DOUBLE_EQUAL(tune_check_time(&q[1], "mpi"), 9.5, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(tune_check_time(&q[1], TRD_WISDOM_MODEL), 10, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(tune_check_time(&q[1], "m"), 10, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(tune_check_time(&q[1], "b"), 9.0, 1e-12);
    CU_ASSERT(isinf(tune_check_time(&q[1], "a")));
}

static void test_noise(void)
{
    CU_ASSERT_DOUBLE_EQUAL(tune_twin_noise(10, 11), 0.1, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(tune_twin_noise(11, 10), 0.1, 1e-12);
    CU_ASSERT_EQUAL(tune_twin_noise(10, INFINITY), 0);
    CU_ASSERT_EQUAL(tune_twin_noise(0, 1), 0);
    double v[] = {0.3, 0.1, 0.2, 0.4};
    CU_ASSERT_DOUBLE_EQUAL(tune_median(v, 4), 0.25, 1e-12);
    CU_ASSERT_EQUAL(tune_median(v, 0), 0);
}

/* The order the MPI library's routine is timed in a second time: the
 * shuffled order of bench/cluster.sh, one node of each leaf in turn. */
static void test_shuffled_order(void)
{
    /* 4 nodes x 2 ranks, n0 n1 on leaf 7, n2 n3 on leaf 3: n0 n2 n1 n3 */
    const int node[] = {0, 0, 1, 1, 2, 2, 3, 3}, leaf[] = {7, 7, 7, 7, 3, 3, 3, 3};
    const int want[] = {0, 1, 4, 5, 2, 3, 6, 7};
    int key[8];
    CU_ASSERT_EQUAL(tune_shuffled_order(node, leaf, 8, key), 1);
    for (int r = 0; r < 8; r++)
        CU_ASSERT_EQUAL(key[r], want[r]);

    /* uneven leaves (3 nodes and 1, ranks of a node not consecutive):
     * leaf order fixed by the first node, a node's ranks in their order */
    const int node2[] = {5, 6, 5, 8, 9, 6}, leaf2[] = {0, 0, 0, 0, 1, 0};
    const int want2[] = {0, 3, 1, 5, 2, 4}; /* nodes 5 9 6 8 */
    CU_ASSERT_EQUAL(tune_shuffled_order(node2, leaf2, 6, key), 1);
    for (int r = 0; r < 6; r++)
        CU_ASSERT_EQUAL(key[r], want2[r]);

    /* leaves alternate already: tree order; one leaf in ring order: none */
    const int node3[] = {0, 2, 1, 3}, leaf3[] = {0, 1, 0, 1}, one[] = {4, 4, 4, 4};
    const int want3[] = {0, 2, 1, 3};
    CU_ASSERT_EQUAL(tune_shuffled_order(node3, leaf3, 4, key), 1);
    for (int r = 0; r < 4; r++)
        CU_ASSERT_EQUAL(key[r], want3[r]);
    const int ring[] = {0, 1, 2, 3};
    CU_ASSERT_EQUAL(tune_shuffled_order(ring, one, 4, key), 0);
    for (int r = 0; r < 4; r++)
        CU_ASSERT_EQUAL(key[r], r);
    /* one leaf, nodes out of ring order: tree order sorts them */
    const int node4[] = {3, 3, 1, 2};
    const int want4[] = {2, 3, 0, 1};
    CU_ASSERT_EQUAL(tune_shuffled_order(node4, one, 4, key), 1);
    for (int r = 0; r < 4; r++)
        CU_ASSERT_EQUAL(key[r], want4[r]);
}

int main(void)
{
    static const trd_test_case tests[] = {
        {"a late winner wins the large sizes", test_late_winner},
        {"timed again once per factor 8", test_retime},
        {"the model's best three always timed", test_model_top},
        {"the check pass's verdicts", test_verdict},
        {"the check pass's choices: a tie keeps the choice before", test_choices},
        {"the noise of twin timings", test_noise},
        {"the library's routine's second order", test_shuffled_order},
    };
    return trd_test_main("tune_rules", tests, TRD_NTESTS(tests));
}
