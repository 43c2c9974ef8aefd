/* User-defined operations on whole vectors (trd_call.whole), without MPI:
 *   - every allreduce and reduce algorithm of the registry, planned for a
 *     call with a user-defined op over shapes (1..5 nodes of 1..3 ranks,
 *     shuffled placements), counts (fewer elements than ranks, more than a
 *     small segment slot), in place or not, commutative or not, with and
 *     without shared memory: it refuses, or the verifier proves its
 *     schedule with every reduce on the whole vector; a refusal is the same
 *     for every rank planned alone (ranks fall back together); the
 *     algorithms that keep whole vectors (rd, rm, nap, repro, smp, shm,
 *     shm:tree, binomial and shm reduce) do plan, the others never do;
 *   - the selection picks, for every such call, an algorithm that plans it;
 *   - the verifier refuses a schedule that splits the vector of a user op. */
#include <CUnit/Basic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "algo.h"
#include "test_util.h"
#include "trd_select.h"
#include "verify.h"

/* Registry entries planned (and verified) and refused. */
static int planned[64], refused[64];

static int index_of(const trd_algo *a)
{
    int i = 0;
    while (trd_algos[i] && trd_algos[i] != a)
        i++;
    return i;
}

static const char *params_of(const trd_algo *a)
{
    return strcmp(a->name, "shm:tree") == 0 || strcmp(a->name, "shm:rx") == 0 ? "2" : "";
}

/* Plan a for call on sh: every rank at once, verified, and each rank alone;
 * both must agree on whether it runs.  Returns 1 planned, 0 refused. */
static int check(const trd_algo *a, const trd_shape *sh, const trd_call *call)
{
    trd_sched s;
    char why[512];
    const char *params = params_of(a);
    int all = trd_plan(&s, a, params, sh, call, -1, why, sizeof why) == 0;
    if (all) {
        int rc = trd_sched_verify(&s, sh, NULL, why, sizeof why);
        if (rc != TRD_OK)
            fprintf(stderr, "\n  %s %s, %d nodes, %d ranks, count %zu, %s, %s: %s",
                    trd_coll_name(a->coll), a->name, sh->nnodes, sh->nranks, call->count,
                    call->in_place ? "in place" : "out of place",
                    call->commutative ? "commutative" : "rank order", why);
        CU_ASSERT_EQUAL(rc, TRD_OK);
        trd_sched_free(&s);
    }
    for (int r = 0; r < sh->nranks; r++) {
        int one = trd_plan(&s, a, params, sh, call, r, why, sizeof why) == 0;
        if (one != all)
            fprintf(stderr, "\n  %s %s, rank %d of %d alone: %s", trd_coll_name(a->coll), a->name,
                    r, sh->nranks, one ? "planned" : why);
        CU_ASSERT_EQUAL(one, all);
        if (one)
            trd_sched_free(&s);
    }
    (all ? planned : refused)[index_of(a)]++;
    return all;
}

static void test_algorithms(void)
{
    static const size_t slots[] = {0, 256}; /* the runtime's, and 32 elements */
    int runs = 0;
    for (int nnodes = 1; nnodes <= 5; nnodes++)
        for (int ppn1 = 1; ppn1 <= 3; ppn1++)
            for (unsigned seed = 0; seed < 2; seed++)
                for (int shm = 0; shm < 2; shm++) {
                    int ppn[5];
                    for (int v = 0; v < nnodes; v++)
                        ppn[v] = v == 1 && seed ? 1 : ppn1; /* uneven nodes too */
                    trd_shape_store st;
                    CU_ASSERT_FATAL(trd_shape_init(&st, nnodes, ppn, seed * 7919) == 0);
                    st.s.shm = shm;
                    st.s.slot_bytes = slots[seed];
                    if (!st.s.slot_bytes)
                        st.s.slot_bytes = TRD_SEG_SLOT_BYTES;
                    int p = st.s.nranks;
                    size_t counts[] = {1, (size_t)p * 3 + 5, 40};
                    for (int k = 0; k < 3; k++)
                        for (int v = 0; v < 4; v++) {
                            int in_place = v & 1, comm = v >> 1;
                            for (int i = 0; trd_algos[i]; i++) {
                                const trd_algo *a = trd_algos[i];
                                if (a->coll != TRD_COLL_ALLREDUCE && a->coll != TRD_COLL_REDUCE)
                                    continue;
                                int root = a->coll == TRD_COLL_REDUCE && k % 2 ? p - 1 : 0;
                                trd_call call = {a->coll, counts[k], 8, root, in_place, comm, 1};
                                check(a, &st.s, &call);
                                runs++;
                            }
                            /* auto: what the selection picks plans the call (the
                             * runtime orders one node's ranks by rank) */
                            for (int coll = TRD_COLL_ALLREDUCE; coll <= TRD_COLL_REDUCE;
                                 coll += TRD_COLL_REDUCE - TRD_COLL_ALLREDUCE) {
                                trd_selection sel;
                                const char *params;
                                trd_call call = {coll, counts[k], 8, 0, in_place, comm, 1};
                                memset(&sel, 0, sizeof sel);
                                if (p < 2 || (nnodes == 1 && seed))
                                    continue;
                                const trd_algo *a = trd_select(&sel, &st.s, &call, &params);
                                if (!check(a, &st.s, &call)) {
                                    fprintf(stderr, "\n  the selection's %s %s refuses",
                                            trd_coll_name(coll), a->name);
                                    CU_FAIL("the selection's algorithm refuses");
                                }
                            }
                        }
                    trd_shape_free(&st);
                }
    static const char *const whole[] = {"rd", "rm", "nap", "repro", "smp", "shm", "shm:tree"};
    for (size_t i = 0; i < sizeof whole / sizeof *whole; i++) {
        const trd_algo *a = trd_algo_find(TRD_COLL_ALLREDUCE, whole[i], strlen(whole[i]));
        CU_ASSERT_FATAL(a != NULL);
        CU_ASSERT(planned[index_of(a)] > 0);
    }
    CU_ASSERT(planned[index_of(trd_algo_find(TRD_COLL_REDUCE, "binomial", 8))] > 0);
    CU_ASSERT(planned[index_of(trd_algo_find(TRD_COLL_REDUCE, "shm", 3))] > 0);
    for (int i = 0; trd_algos[i]; i++)
        if ((trd_algos[i]->coll == TRD_COLL_ALLREDUCE || trd_algos[i]->coll == TRD_COLL_REDUCE) &&
            !(trd_algos[i]->flags & TRD_ALGO_WHOLE)) {
            CU_ASSERT_EQUAL(planned[i], 0);
            CU_ASSERT(refused[i] > 0);
        }
    fprintf(stderr, "\n    %d plans of user-defined operations", runs);
}

/* The ring's schedule, planned for a predefined op, given as one of a
 * user-defined op: the verifier names the split reduce. */
static void test_verifier_refuses_split(void)
{
    int ppn[2] = {1, 1};
    trd_shape_store st;
    trd_sched s;
    char why[512];
    trd_call call = {TRD_COLL_ALLREDUCE, 10, 8, 0, 0, 1, 0};
    const trd_algo *ring = trd_algo_find(TRD_COLL_ALLREDUCE, "ring", 4);
    CU_ASSERT_FATAL(trd_shape_init(&st, 2, ppn, 0) == 0);
    CU_ASSERT_FATAL(trd_plan(&s, ring, "", &st.s, &call, -1, why, sizeof why) == 0);
    CU_ASSERT_EQUAL(trd_sched_verify(&s, &st.s, NULL, why, sizeof why), TRD_OK);
    s.call.whole = 1;
    CU_ASSERT_EQUAL(trd_sched_verify(&s, &st.s, NULL, why, sizeof why), TRD_ERR_VERIFY);
    fprintf(stderr, "\n    %s", why);
    CU_ASSERT_PTR_NOT_NULL(strstr(why, "of the 10 elements: a user-defined operation is called "
                                       "on the whole vector"));
    trd_sched_free(&s);
    call.whole = 1;
    CU_ASSERT_EQUAL(trd_plan(&s, ring, "", &st.s, &call, -1, why, sizeof why), TRD_ERR_INPUT);
    CU_ASSERT_STRING_EQUAL(why, "ring splits the vector, and a user-defined operation is called "
                                "on whole vectors");
    trd_shape_free(&st);
}

int main(void)
{
    static const trd_test_case tests[] = {
        {"whole vectors for user ops: planned and proved, or refused on every rank",
         test_algorithms},
        {"the verifier refuses a split reduce of a user op", test_verifier_refuses_split},
    };
    return trd_test_main("whole", tests, TRD_NTESTS(tests));
}
