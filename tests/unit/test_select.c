/* The selection on the schedules and on the closed forms (gen/plan/tune.h,
 * gen/plan/plan.h), without MPI; the parameters searched on the schedules
 * are test_tune's:
 *   - the size ranges drawn on the schedules: inside each range the chosen
 *     schedule is timed fastest of all the candidates;
 *   - the ranges on the closed forms change exactly where the fastest
 *     does. */
#include <CUnit/Basic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "plan.h"
#include "test_util.h"
#include "trd_select.h"
#include "tune.h"

/* ---- Selection on the schedules ------------------------------------------------- */

/* The ranges drawn on the schedules, for every planned shape of two
 * machines: contiguous, ending at SIZE_MAX, a different algorithm each; at
 * sizes doubling from 8 B inside each range (1/32 away from its ends, where
 * the bisection stops) the chosen algorithm's schedule is timed no slower
 * than any candidate's; the whole machine's ranges are its shape's. */
static void test_select(void)
{
    const trd_algo *cand[TRD_MAX_CANDIDATES];
    int ncand = trd_model_candidates(cand, TRD_MAX_CANDIDATES);
    for (int k = 0; k < TRD_TEST_SCHED_MACHINES; k++) {
        const char *topo = trd_test_sched_machine(k);
        trd_diag *d;
        static trd_machine_plan p;
        trd_select_stats stats;
        trd_topo_t t = trd_test_on_schedules(topo, &d, &p, &stats);
        int within = 0; /* shapes drawn on the schedules; the others on the closed forms */
        for (int i = 0; i < p.nshapes; i++)
            within += p.shape[i].nnodes * p.shape[i].ppn <= TRD_SELECT_MAX_RANKS;
        CU_ASSERT(within > 0 && stats.drawn == within && stats.timed > 0);
        CU_ASSERT(stats.drawn + stats.closed == p.nshapes);
        int checked = 0;
        for (int i = 0; i < p.nshapes; i++) {
            const trd_shape_plan *sp = &p.shape[i];
            CU_ASSERT_EQUAL(sp->on_schedules, sp->nnodes * sp->ppn <= TRD_SELECT_MAX_RANKS);
            if (!sp->on_schedules)
                continue;
            CU_ASSERT_FATAL(sp->nchoices >= 1);
            CU_ASSERT_EQUAL(sp->choice[sp->nchoices - 1].below, SIZE_MAX);
            trd_test_timed x;
            trd_test_timed_open(&x, t, &p, sp->nnodes, sp->ppn);
            double from = 0;
            for (int c = 0; c < sp->nchoices; c++) {
                const trd_choice *ch = &sp->choice[c];
                if (c > 0) {
                    CU_ASSERT(ch->below > sp->choice[c - 1].below);
                    CU_ASSERT_PTR_NOT_EQUAL(ch->alg, sp->choice[c - 1].alg);
                }
                double end = ch->below == SIZE_MAX ? 1073741824.0 : (double)ch->below;
                for (double b = 8; b < end * (1 - 1.0 / 32); b *= 2) {
                    if (b < from * (1 + 1.0 / 32))
                        continue;
                    double mine, other;
                    CU_ASSERT_EQUAL(trd_timer_us(x.tm, ch->alg, "", (size_t)(b / 8), &mine),
                                    TRD_OK);
                    for (int a = 0; a < ncand; a++) {
                        CU_ASSERT_EQUAL(trd_timer_us(x.tm, cand[a], "", (size_t)(b / 8), &other),
                                        TRD_OK);
                        CU_ASSERT(mine <= other * (1 + 1e-9));
                        if (mine > other * (1 + 1e-9))
                            fprintf(stderr, "\n    %s %d x %d at %.0f B: %s %.3f us, %s %.3f us",
                                    topo, sp->nnodes, sp->ppn, b, ch->alg->name, mine,
                                    cand[a]->name, other);
                    }
                    checked++;
                }
                from = (double)ch->below;
            }
            if (sp->nnodes == p.nnodes && sp->ppn == p.ppn) {
                CU_ASSERT_EQUAL(p.nchoices, sp->nchoices);
                for (int c = 0; c < sp->nchoices && c < p.nchoices; c++)
                    CU_ASSERT(p.choice[c].below == sp->choice[c].below &&
                              p.choice[c].alg == sp->choice[c].alg);
            }
            trd_test_timed_release(&x);
        }
        CU_ASSERT(checked > 10 * within);
        trd_topo_destroy(t);
        trd_diag_destroy(d);
    }
}

/* One range drawing serves the closed forms: on them, the ranges are those
 * of a plain scan of every power of two with each change bisected to the
 * byte (trd_plan_build's). */
static void test_closed_ranges(void)
{
    trd_diag *d;
    trd_topo_t t = trd_test_load("topologies/bluewaters64.topo", &d);
    static trd_machine_plan p;
    CU_ASSERT_EQUAL(trd_plan_build(t, &p), TRD_OK);
    const trd_algo *cand[TRD_MAX_CANDIDATES];
    int nc = trd_model_candidates(cand, TRD_MAX_CANDIDATES);
    for (int s = 0; s < p.nshapes; s++) {
        const trd_shape_plan *sp = &p.shape[s];
        for (int c = 0; c + 1 < sp->nchoices; c++) {
            /* the fastest changes exactly at the boundary */
            size_t at = sp->choice[c].below;
            double t1[TRD_MAX_CANDIDATES], t0[TRD_MAX_CANDIDATES];
            int s1, s0;
            for (int a = 0; a < nc; a++) {
                t0[a] = trd_model_time(&p, cand[a], sp->nnodes, sp->ppn, (double)(at - 1));
                t1[a] = trd_model_time(&p, cand[a], sp->nnodes, sp->ppn, (double)at);
            }
            CU_ASSERT_PTR_EQUAL(cand[trd_model_pick(t0, nc, &s0)], sp->choice[c].alg);
            CU_ASSERT_PTR_EQUAL(cand[trd_model_pick(t1, nc, &s1)], sp->choice[c + 1].alg);
        }
    }
    trd_topo_destroy(t);
    trd_diag_destroy(d);
}

/* A measured table with entries without an algorithm (the model's sizes):
 * the measured algorithm inside its ranges, the model's ranges (allreduce)
 * and MPICH's rules (the pieces) in the others. */
static void test_tuned_model(void)
{
    static const trd_size_choice planned[] = {{1024, "nap", ""}, {SIZE_MAX, "ring", ""}};
    static const trd_shape_choice shapes[] = {{4, 1, planned, 2}};
    static const trd_size_choice ar[] = {{.below = 512, .alg = "rd", .params = ""},
                                         {.below = 8192, .alg = NULL, .params = NULL},
                                         {.below = SIZE_MAX, .alg = "rabenseifner", .params = ""}};
    static const trd_size_choice ag[] = {{.below = 4096, .alg = NULL, .params = NULL},
                                         {.below = SIZE_MAX, .alg = "bruck", .params = ""}};
    static const trd_tuned_shape tuned[] = {{TRD_COLL_ALLREDUCE, 4, 1, ar, 3},
                                            {TRD_COLL_ALLGATHER, 4, 1, ag, 2}};
    trd_selection sel;
    char why[256] = "";
    CU_ASSERT_EQUAL_FATAL(trd_selection_init(&sel, shapes, 1, 0, 4, 1, 4, why, sizeof why), 0);
    CU_ASSERT_EQUAL_FATAL(trd_selection_tune(&sel, tuned, 2, 4, 1, why, sizeof why), 0);
    CU_ASSERT_EQUAL(sel.ntuned[TRD_COLL_ALLREDUCE], 3);
    CU_ASSERT_PTR_NULL(sel.tuned[TRD_COLL_ALLREDUCE][1].alg);
    CU_ASSERT_STRING_EQUAL(sel.tuned[TRD_COLL_ALLREDUCE][1].params, "");
    trd_shape sh = {.nranks = 4, .nnodes = 4};
    static const struct {
        int coll;
        size_t bytes;
        const char *alg;
    } want[] = {
        {TRD_COLL_ALLREDUCE, 8, "rd"},                 /* measured */
        {TRD_COLL_ALLREDUCE, 600, "nap"},              /* the model's range below 1024 */
        {TRD_COLL_ALLREDUCE, 4096, "ring"},            /* the model's range from 1024 */
        {TRD_COLL_ALLREDUCE, 1 << 20, "rabenseifner"}, /* measured */
        {TRD_COLL_ALLGATHER, 64, "rd"},                /* MPICH's rule: 4 ranks, short */
        {TRD_COLL_ALLGATHER, 1 << 20, "bruck"},        /* measured */
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        trd_call call = {want[i].coll, want[i].bytes / 8, 8, 0, 0, 1, 0};
        const char *params = NULL;
        const trd_algo *a = trd_select(&sel, &sh, &call, &params);
        CU_ASSERT_PTR_NOT_NULL_FATAL(a);
        if (strcmp(a->name, want[i].alg) != 0)
            printf("\n  %s at %zu B: %s, expected %s\n", trd_coll_name(want[i].coll), want[i].bytes,
                   a->name, want[i].alg);
        CU_ASSERT_STRING_EQUAL(a->name, want[i].alg);
        CU_ASSERT_EQUAL(a->coll, want[i].coll);
        CU_ASSERT_PTR_NOT_NULL(params);
    }
    /* an unknown algorithm is still refused, NULL is not */
    static const trd_size_choice bad[] = {{.below = SIZE_MAX, .alg = "nope", .params = ""}};
    static const trd_tuned_shape tbad[] = {{TRD_COLL_ALLREDUCE, 4, 1, bad, 1}};
    CU_ASSERT_EQUAL(trd_selection_tune(&sel, tbad, 1, 4, 1, why, sizeof why), TRD_ERR_INPUT);
    CU_ASSERT_EQUAL(sel.ntuned[TRD_COLL_ALLREDUCE], 0);
}

int main(void)
{
    static const trd_test_case tests[] = {
        {"size ranges drawn on the schedules are the fastest inside", test_select},
        {"size ranges on the closed forms change where the fastest does", test_closed_ranges},
        {"a measured table's model entries select as without it", test_tuned_model},
    };
    return trd_test_main("select", tests, TRD_NTESTS(tests));
}
