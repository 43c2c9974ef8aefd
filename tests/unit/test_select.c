/* The selection on the schedules and on the closed forms (gen/plan/tune.h,
 * gen/plan/plan.h), without MPI:
 *   - the size ranges drawn on the schedules: inside each range the chosen
 *     schedule is timed fastest of all the candidates, the searched
 *     parameters beat their candidates;
 *   - the ranges on the closed forms change exactly where the fastest
 *     does. */
#include <CUnit/Basic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "plan.h"
#include "shape.h"
#include "test_util.h"
#include "tune.h"

/* ---- Selection on the schedules ------------------------------------------------- */

/* The searched parameters of each range of the shape: at the range's
 * typical size the chosen string times no slower than the default and than
 * every candidate the descriptor offers; the range's prediction is the
 * chosen one's.  Returns how many ranges had parameters to search. */
static int check_params(trd_timer *tm, const trd_shape *sh, const trd_shape_plan *sp)
{
    char cand[64][TRD_PARAMS_MAX];
    int searched = 0;
    for (int c = 0; c < sp->nchoices; c++) {
        const trd_choice *ch = &sp->choice[c];
        int nc = ch->alg->candidates ? ch->alg->candidates(sh, cand, 64) : 0;
        if (!nc)
            continue;
        searched++;
        size_t count = ch->typical / 8 ? ch->typical / 8 : 1;
        double mine, other;
        CU_ASSERT_EQUAL(trd_timer_us(tm, ch->alg, ch->params, count, &mine), TRD_OK);
        CU_ASSERT_DOUBLE_EQUAL(ch->us, mine, mine * 1e-9);
        for (int k = -1; k < nc; k++) {
            CU_ASSERT_EQUAL(trd_timer_us(tm, ch->alg, k < 0 ? "" : cand[k], count, &other), TRD_OK);
            CU_ASSERT(mine <= other * (1 + 1e-9));
        }
    }
    return searched;
}

/* The ranges drawn on the schedules, for every planned shape of two
 * machines: contiguous, ending at SIZE_MAX, a different algorithm each; at
 * sizes doubling from 8 B inside each range (1/32 away from its ends, where
 * the bisection stops) the chosen algorithm's schedule is timed no slower
 * than any candidate's; the whole machine's ranges are its shape's; the
 * searched parameters are the fastest of their candidates. */
static void test_select(void)
{
    static const char *topos[] = {"tests/data/select-16x8.topo", "topologies/ethernet32.topo"};
    const trd_algo *cand[TRD_MAX_CANDIDATES];
    int ncand = trd_model_candidates(cand, TRD_MAX_CANDIDATES);
    for (int k = 0; k < 2; k++) {
        trd_diag *d;
        trd_topo_t t = trd_test_load(topos[k], &d);
        static trd_machine_plan p;
        trd_plan_build(t, &p);
        trd_select_stats stats;
        CU_ASSERT_EQUAL(trd_select_on_schedules(t, &p, &stats), TRD_OK);
        int within = 0; /* shapes drawn on the schedules; the others on the closed forms */
        for (int i = 0; i < p.nshapes; i++)
            within += p.shape[i].nnodes * p.shape[i].ppn <= TRD_SELECT_MAX_RANKS;
        CU_ASSERT(within > 0 && stats.drawn == within && stats.timed > 0);
        CU_ASSERT(stats.drawn + stats.closed == p.nshapes);
        trd_search_stats sstats;
        CU_ASSERT_EQUAL(trd_search_params(t, &p, &sstats), TRD_OK);
        int checked = 0, searched = 0;
        for (int i = 0; i < p.nshapes; i++) {
            const trd_shape_plan *sp = &p.shape[i];
            CU_ASSERT_EQUAL(sp->on_schedules, sp->nnodes * sp->ppn <= TRD_SELECT_MAX_RANKS);
            if (!sp->on_schedules)
                continue;
            CU_ASSERT_FATAL(sp->nchoices >= 1);
            CU_ASSERT_EQUAL(sp->choice[sp->nchoices - 1].below, SIZE_MAX);
            trd_shape_store st;
            int *aux;
            trd_timer *tm;
            CU_ASSERT_FATAL(trd_machine_shape(t, sp->nnodes, sp->ppn, &st, &aux) == TRD_OK);
            CU_ASSERT_FATAL(trd_timer_create(&tm, t, &p, &st.s) == TRD_OK);
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
                    CU_ASSERT_EQUAL(trd_timer_us(tm, ch->alg, "", (size_t)(b / 8), &mine), TRD_OK);
                    for (int a = 0; a < ncand; a++) {
                        CU_ASSERT_EQUAL(trd_timer_us(tm, cand[a], "", (size_t)(b / 8), &other),
                                        TRD_OK);
                        CU_ASSERT(mine <= other * (1 + 1e-9));
                        if (mine > other * (1 + 1e-9))
                            fprintf(stderr, "\n    %s %d x %d at %.0f B: %s %.3f us, %s %.3f us",
                                    topos[k], sp->nnodes, sp->ppn, b, ch->alg->name, mine,
                                    cand[a]->name, other);
                    }
                    checked++;
                }
                from = (double)ch->below;
            }
            searched += check_params(tm, &st.s, sp);
            if (sp->nnodes == p.nnodes && sp->ppn == p.ppn) {
                CU_ASSERT_EQUAL(p.nchoices, sp->nchoices);
                for (int c = 0; c < sp->nchoices && c < p.nchoices; c++)
                    CU_ASSERT(p.choice[c].below == sp->choice[c].below &&
                              p.choice[c].alg == sp->choice[c].alg);
            }
            trd_timer_destroy(tm);
            trd_shape_free(&st);
            free(aux);
        }
        CU_ASSERT(checked > 10 * within);
        CU_ASSERT(searched <= sstats.searched); /* also searched: shapes on the closed forms */
        CU_ASSERT(searched > 0);
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

int main(void)
{
    static const trd_test_case tests[] = {
        {"size ranges drawn on the schedules are the fastest inside", test_select},
        {"size ranges on the closed forms change where the fastest does", test_closed_ranges},
    };
    return trd_test_main("select", tests, TRD_NTESTS(tests));
}
