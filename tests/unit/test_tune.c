/* The parameters searched on the schedules (gen/plan/tune.h,
 * trd_search_params), without MPI, over the ranges drawn on the schedules
 * of two machines (test_select checks those):
 *   - at each range's typical size its searched parameter string times no
 *     slower than the default and than every candidate its algorithm
 *     offers for the shape;
 *   - the range's prediction is the time of the chosen parameters;
 *   - the search counts every range checked here, and those of the shapes
 *     left on the closed forms besides. */
#include <CUnit/Basic.h>
#include <stddef.h>

#include "plan.h"
#include "test_util.h"
#include "tune.h"

/* ---- Parameters searched on the schedules ---------------------------------------- */

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

/* The parameters searched over the ranges drawn on the schedules of every
 * planned shape of two machines are the fastest of their candidates; some
 * ranges offer candidates, and the search counted them all. */
static void test_search(void)
{
    for (int k = 0; k < TRD_TEST_SCHED_MACHINES; k++) {
        trd_diag *d;
        static trd_machine_plan p;
        trd_select_stats stats;
        trd_topo_t t = trd_test_on_schedules(trd_test_sched_machine(k), &d, &p, &stats);
        trd_search_stats sstats;
        CU_ASSERT_EQUAL(trd_search_params(t, &p, &sstats), TRD_OK);
        int searched = 0;
        for (int i = 0; i < p.nshapes; i++) {
            const trd_shape_plan *sp = &p.shape[i];
            if (!sp->on_schedules)
                continue;
            trd_test_timed x;
            trd_test_timed_open(&x, t, &p, sp->nnodes, sp->ppn);
            searched += check_params(x.tm, &x.st.s, sp);
            trd_test_timed_release(&x);
        }
        CU_ASSERT(searched <= sstats.searched); /* also searched: shapes on the closed forms */
        CU_ASSERT(searched > 0);
        trd_topo_destroy(t);
        trd_diag_destroy(d);
    }
}

int main(void)
{
    static const trd_test_case tests[] = {
        {"parameters searched on the schedules are the fastest of their candidates", test_search},
    };
    return trd_test_main("tune", tests, TRD_NTESTS(tests));
}
