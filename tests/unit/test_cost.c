/* The cost model (gen/plan/cost.h) and the timer on it (gen/plan/tune.h),
 * without MPI:
 *   - schedules timed against sums by hand: link sharing, a message starting
 *     when both ends have posted it, a wait on a signal, a single-copy read,
 *     a copy by where its data lies, alpha_r;
 *   - one node timed with the single-copy path, as the runtime runs it;
 *   - NAP's closed form ranking a width as the timed schedules do;
 *   - the ring's bound below its timed cost, and within 1.5x of it. */
#include <CUnit/Basic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "algo.h"
#include "cost.h"
#include "plan.h"
#include "shape.h"
#include "test_util.h"
#include "trd_nap.h"
#include "tune.h"

/* ---- The cost model by hand ---------------------------------------------------- */

/* Timed cost of recursive doubling (point to point) over the first nnodes
 * nodes of t, one rank each, n doubles, gamma 0.25 ns/B, alpha_r ratio 1/4. */
static double rd_cost(trd_topo_t t, int nnodes, size_t n)
{
    int ones[4] = {1, 1, 1, 1}, machine[4] = {0, 1, 2, 3};
    trd_shape_store st;
    trd_sched s;
    char why[256];
    double sec = -1;
    CU_ASSERT_FATAL(nnodes <= 4 && trd_shape_init(&st, nnodes, ones, 0) == 0);
    st.s.machine_node = machine;
    trd_call call = {TRD_COLL_ALLREDUCE, n, 8, 0, 0, 1, 0};
    CU_ASSERT_FATAL(trd_plan(&s, trd_algo_find(TRD_COLL_ALLREDUCE, "rd", 2), "", &st.s, &call, -1,
                             why, sizeof why) == 0);
    trd_cost_model cm = {t, 0.25e-9, 0.25};
    CU_ASSERT_EQUAL(trd_sched_cost(&s, &st.s, &cm, &sec, why, sizeof why), TRD_OK);
    trd_sched_free(&s);
    trd_shape_free(&st);
    return sec;
}

/* Recursive doubling over the four nodes of tests/data/testbed.topo (two
 * leaf switches): the first exchange stays under a leaf, the second crosses
 * the root, where the two pairs' messages share each leaf's up- and
 * down-link, so each gets half the bandwidth [TREE §2]. */
static void test_cost(void)
{
    trd_diag *d;
    trd_topo_t t = trd_test_load("tests/data/testbed.topo", &d);
    size_t n = 1000;
    double m = 8.0 * (double)n, gamma = 0.25e-9;
    trd_link_cost pk = trd_topo_nodetype_package_link(t, trd_topo_node_type(t, 0));
    trd_link_cost near = trd_topo_path_cost(t, 0, 1), far = trd_topo_path_cost(t, 0, 2);
    CU_ASSERT(far.latency_s > near.latency_s);
    double local = m / pk.bandwidth_Bps;
    double want = local                                                                /* copy in */
                  + 1.25 * near.latency_s + m / near.bandwidth_Bps + local + m * gamma /* step 1 */
                  + 1.25 * far.latency_s + 2 * m / far.bandwidth_Bps + local + m * gamma; /* 2 */
    CU_ASSERT_DOUBLE_EQUAL(rd_cost(t, 4, n), want, want * 1e-9);
    /* without the root crossing (two nodes under one leaf) nothing is shared */
    want = local + 1.25 * near.latency_s + m / near.bandwidth_Bps + local + m * gamma;
    CU_ASSERT_DOUBLE_EQUAL(rd_cost(t, 2, n), want, want * 1e-9);
    trd_topo_destroy(t);
    trd_diag_destroy(d);
}

/* A link's measured alpha_r replaces the default alpha_r_ratio x latency:
 * recursive doubling over two nodes of one switch whose link gives alpha_r
 * 3 us pays it once per exchange (a sendrecv is two messages in flight). */
static void test_cost_alpha_r(void)
{
    trd_diag *d;
    trd_topo_t t = trd_test_load_text("ar.topo",
                                      "machine ar;\n"
                                      "link eth { latency 20us; bandwidth 1GB/s; alpha_r 3us; }\n"
                                      "nodetype one { synthetic \"package:1 core:1\"; }\n"
                                      "switch top { link eth; nodes a,b : one; }\n",
                                      &d);
    size_t n = 1000;
    double m = 8.0 * (double)n, gamma = 0.25e-9;
    trd_link_cost pk = trd_topo_nodetype_package_link(t, trd_topo_node_type(t, 0));
    trd_link_cost path = trd_topo_path_cost(t, 0, 1);
    CU_ASSERT_DOUBLE_EQUAL(path.alpha_r_s, 3e-6, 1e-15);
    double local = m / pk.bandwidth_Bps;
    double want = local + path.latency_s + 3e-6 + m / path.bandwidth_Bps + local + m * gamma;
    CU_ASSERT_DOUBLE_EQUAL(rd_cost(t, 2, n), want, want * 1e-9);
    trd_topo_destroy(t);
    trd_diag_destroy(d);
}

/* A schedule written by hand, rank by rank in rank order. */
typedef struct hand {
    trd_sched s;
    trd_sb b;
    const trd_shape *sh;
} hand;

static void hand_init(hand *h, const trd_shape *sh, trd_call call)
{
    memset(h, 0, sizeof *h);
    h->sh = sh;
    h->s.alg = "hand";
    h->s.call = call;
    h->s.nranks = h->s.nplanned = sh->nranks;
    h->s.seg_slot = sh->slot_bytes / call.extent;
    h->s.inl_slot = TRD_INLINE_BYTES / call.extent;
    h->s.first = calloc((size_t)sh->nranks + 1, sizeof *h->s.first);
    h->s.nepochs = calloc((size_t)sh->nranks + 1, sizeof *h->s.nepochs);
    CU_ASSERT_FATAL(h->s.first && h->s.nepochs);
}

/* The builder for rank r, whose node takes epochs epochs. */
static trd_sb *hand_rank(hand *h, int r, int epochs)
{
    h->s.first[r] = h->s.nops;
    h->s.nepochs[r] = epochs;
    h->b = (trd_sb){.s = &h->s, .sh = h->sh, .call = &h->s.call, .rank = r};
    return &h->b;
}

static void hand_end(hand *h)
{
    h->s.first[h->s.nranks] = h->s.nops;
    h->s.tmp_count = 1 << 20;
    CU_ASSERT_FATAL(!h->s.oom);
}

/* A message starts when both ends have posted it; a wait ends one latency
 * of the link after the signal it sees, on a node at most a cache-line
 * handshake [FLEX §3.1].  On two nodes of two ranks, rank 3 copies a long
 * vector and signals; rank 2 waits for that signal, then receives n
 * elements from rank 0, which sent at once.  The message starts one
 * handshake after rank 3's copy, not when rank 0 posted it. */
static void test_cost_posted(void)
{
    trd_diag *d;
    trd_topo_t t = trd_test_load("tests/data/testbed.topo", &d);
    int twos[2] = {2, 2}, machine[2] = {0, 1};
    trd_shape_store st;
    CU_ASSERT_FATAL(trd_shape_init(&st, 2, twos, 0) == 0);
    st.s.machine_node = machine;
    trd_cost_model cm = {t, 0.25e-9, 0.25};
    trd_link_cost pk = trd_topo_nodetype_package_link(t, trd_topo_node_type(t, 0));
    trd_link_cost near = trd_topo_path_cost(t, 0, 1);
    size_t big = 1 << 20, n = 100;
    double copy = 8.0 * (double)big / pk.bandwidth_Bps;
    double seen = pk.latency_s < TRD_COST_HANDSHAKE_S ? pk.latency_s : TRD_COST_HANDSHAKE_S;
    CU_ASSERT(seen < pk.latency_s); /* the package link's latency is a message's */
    double want = copy + seen + near.latency_s + 8.0 * (double)n / near.bandwidth_Bps;
    hand h;
    char why[256];
    double got = -1;
    hand_init(&h, &st.s, (trd_call){TRD_COLL_ALLREDUCE, big, 8, 0, 0, 1, 0});
    trd_s_send(hand_rank(&h, 0, 0), 2, 2, TRD_B_SEND, 0, n);
    hand_rank(&h, 1, 0);
    trd_sb *b = hand_rank(&h, 2, 1);
    trd_s_wait(b, 1, 3, 0, TRD_CTR_IN, 1);
    trd_s_recv(b, 2, 0, TRD_B_TMP, 0, n);
    b = hand_rank(&h, 3, 1);
    trd_s_copy(b, 1, TRD_B_RECV, -1, 0, TRD_B_SEND, -1, 0, big);
    trd_s_signal(b, 1, TRD_CTR_IN, 1);
    hand_end(&h);
    CU_ASSERT_EQUAL(trd_sched_cost(&h.s, &st.s, &cm, &got, why, sizeof why), TRD_OK);
    CU_ASSERT_DOUBLE_EQUAL(got, want, want * 1e-9);
    trd_sched_free(&h.s);
    trd_shape_free(&st);
    trd_topo_destroy(t);
    trd_diag_destroy(d);
}

/* A one-node shape is timed as the runtime runs it: shm reads the other
 * rank's buffer directly from TRD_CMA_MIN_DEFAULTS (32 KiB) up, and beats
 * the variants through the segment from 256 KiB; below 32 KiB it runs
 * through the segment.  (The one-step fold of every rank's input is
 * shm:direct, a candidate of its own; shm keeps two steps at every size.)
 * Multi-node shapes keep no single copy. */
static void test_cost_one_node_single_copy(void)
{
    trd_diag *d;
    trd_topo_t t = trd_test_load_text("one.topo",
                                      "machine one;\nlink eth { latency 2us; bandwidth 10GB/s; }\n"
                                      "nodetype duo { synthetic \"package:1 core:2\"; }\n"
                                      "switch top { link eth; nodes a : duo; }\n",
                                      &d);
    static trd_machine_plan p;
    trd_plan_build(t, &p);
    const trd_algo *shm = trd_algo_find(TRD_COLL_ALLREDUCE, "shm", 3);
    const trd_algo *cyc = trd_algo_find(TRD_COLL_ALLREDUCE, "shm:cyclic", 10);
    trd_shape_store st;
    int *aux;
    trd_timer *tm;
    CU_ASSERT_FATAL(trd_machine_shape(t, 1, 2, &st, &aux) == TRD_OK);
    CU_ASSERT_EQUAL(st.s.cma, 0);
    CU_ASSERT_FATAL(trd_timer_create(&tm, t, &p, &st.s) == TRD_OK);
    double a, b;
    for (size_t bytes = 256 << 10; bytes <= (4u << 20); bytes *= 4) {
        CU_ASSERT_EQUAL(trd_timer_us(tm, shm, "", bytes / 8, &a), TRD_OK);
        CU_ASSERT_EQUAL(trd_timer_us(tm, cyc, "", bytes / 8, &b), TRD_OK);
        CU_ASSERT(a < b * 0.97);
    }
    /* below the threshold through the segment, which costs less there than
     * single copy from 0 B (a shape that already has it is kept) */
    trd_timer_destroy(tm);
    st.s.cma = TRD_CMA_READ;
    memset(st.s.cma_min, 0, sizeof st.s.cma_min);
    CU_ASSERT_FATAL(trd_timer_create(&tm, t, &p, &st.s) == TRD_OK);
    CU_ASSERT_EQUAL(trd_timer_us(tm, shm, "", 2048, &b), TRD_OK);
    trd_timer_destroy(tm);
    st.s.cma = 0;
    CU_ASSERT_FATAL(trd_timer_create(&tm, t, &p, &st.s) == TRD_OK);
    CU_ASSERT_EQUAL(trd_timer_us(tm, shm, "", 2048, &a), TRD_OK);
    CU_ASSERT(a < b);
    trd_timer_destroy(tm);
    trd_shape_free(&st);
    free(aux);
    trd_topo_destroy(t);
    trd_diag_destroy(d);
}

/* NAP with a width on bluewaters64 (64 nodes x 16, alpha_r 0 as SimGrid):
 * its closed form ranks 16,4/2 against the default 16,4 as the timed
 * schedules do, plain NAP at 512 B and 16,4/2 at 1 KiB (SimGrid: 25.10 us
 * against 27.15 us).  The nodes past the width take the result on lane 0
 * and hand it to their ranks in one step through the segment, as the lanes'
 * result is handed on after every step, not in ceil(log2 ppn) steps. */
static void test_nap_width_closed_form(void)
{
    trd_diag *d;
    trd_topo_t t = trd_test_load("topologies/bluewaters64.topo", &d);
    CU_ASSERT_FATAL(trd_topo_set_alpha_r_ratio(t, 0) == TRD_OK);
    static trd_machine_plan p;
    trd_plan_build(t, &p);
    const trd_algo *nap = trd_algo_find(TRD_COLL_ALLREDUCE, "nap", 3);
    trd_nap_radices plain, wide;
    char err[128];
    CU_ASSERT_FATAL(trd_nap_radices_parse("16,4", &plain, err, sizeof err) == 0);
    CU_ASSERT_FATAL(trd_nap_radices_parse("16,4/2", &wide, err, sizeof err) == 0);
    trd_shape_store st;
    int *aux;
    trd_timer *tm;
    CU_ASSERT_FATAL(trd_machine_shape(t, 64, 16, &st, &aux) == TRD_OK);
    CU_ASSERT_FATAL(trd_timer_create(&tm, t, &p, &st.s) == TRD_OK);
    for (size_t bytes = 512; bytes <= 1024; bytes *= 2) {
        double a, b;
        CU_ASSERT_EQUAL(trd_timer_us(tm, nap, "", bytes / 8, &a), TRD_OK);
        CU_ASSERT_EQUAL(trd_timer_us(tm, nap, "16,4/2", bytes / 8, &b), TRD_OK);
        int timed = b < a;
        double ca = trd_nap_model_list(&p.levels, 64, 16, (double)bytes, &plain);
        double cb = trd_nap_model_list(&p.levels, 64, 16, (double)bytes, &wide);
        CU_ASSERT_EQUAL(timed, bytes == 1024);
        CU_ASSERT_EQUAL(cb < ca, timed);
    }
    trd_timer_destroy(tm);
    trd_shape_free(&st);
    free(aux);
    trd_topo_destroy(t);
    trd_diag_destroy(d);
}

/* On one node a copy costs by where the call's data lies: in the L1 caches
 * (16 KiB) TRD_COST_L1_SPEEDUP times faster than in the L2/L3 caches (the
 * link's bandwidth), from memory (beyond 4 MiB) TRD_COST_MEM_SLOWDOWN times
 * slower; a reduction's gamma is memory's rate, a copy's in the caches.
 * Across nodes the links' costs stay as given. */
static void test_cost_cache_levels(void)
{
    trd_diag *d;
    trd_topo_t t =
        trd_test_load_text("lvl.topo",
                           "machine lvl;\nlink eth { latency 2us; bandwidth 10GB/s; }\n"
                           "link pkg { latency 100ns; bandwidth 20GB/s; }\n"
                           "nodetype duo { synthetic \"package:1 core:2\"; package pkg; }\n"
                           "switch top { link eth; nodes n[0-1] : duo; }\n",
                           &d);
    static const size_t counts[3] = {1024, 65536, 1 << 20}; /* 8 KiB, 512 KiB, 8 MiB */
    const double lvl[3] = {1 / TRD_COST_L1_SPEEDUP, 1, TRD_COST_MEM_SLOWDOWN};
    double gamma = 0.25e-9, piece = 512;
    trd_cost_model cm = {t, gamma, 0.25};
    for (int nodes = 1; nodes <= 2; nodes++)
        for (int k = 0; k < 3; k++) {
            int twos[2] = {2, 2}, machine[2] = {0, 1};
            trd_shape_store st;
            CU_ASSERT_FATAL(trd_shape_init(&st, nodes, twos, 0) == 0);
            st.s.machine_node = machine;
            hand h;
            char why[256];
            double got = -1, f = nodes == 1 ? lvl[k] : 1, g = nodes == 1 ? lvl[k] / 4.5 : 1;
            hand_init(&h, &st.s, (trd_call){TRD_COLL_ALLREDUCE, counts[k], 8, 0, 0, 1, 0});
            trd_sb *b = hand_rank(&h, 0, 0);
            trd_s_copy(b, 0, TRD_B_RECV, -1, 0, TRD_B_SEND, -1, 0, (size_t)piece);
            trd_s_reduce(b, 0, TRD_B_RECV, 0, TRD_B_SEND, -1, 0, (size_t)piece);
            for (int r = 1; r < 2 * nodes; r++)
                hand_rank(&h, r, 0);
            hand_end(&h);
            double want = 8 * piece * (2 * f / 20e9 + g * gamma);
            CU_ASSERT_EQUAL(trd_sched_cost(&h.s, &st.s, &cm, &got, why, sizeof why), TRD_OK);
            CU_ASSERT_DOUBLE_EQUAL(got, want, want * 1e-9);
            trd_sched_free(&h.s);
            trd_shape_free(&st);
        }
    CU_ASSERT_DOUBLE_EQUAL(TRD_COST_MEM_SLOWDOWN, 4.5, 1e-12);
    trd_topo_destroy(t);
    trd_diag_destroy(d);
}

/* Single copy: on one node of two packages, rank 0 waits for rank 1's
 * signal (a cache-line handshake, less than the link's latency), then
 * reads rank 1's sendbuf (a system call: TRD_COST_SINGLE_COPY_S, more than
 * the node link's latency, and the link's bandwidth) and reduces a piece of
 * rank 1's segment into it (that link's bandwidth, gamma at the rate of the
 * caches, where 32 KiB lie).  Rank 1 copies into its segment first. */
static void test_cost_single_copy(void)
{
    trd_diag *d;
    trd_topo_t t = trd_test_load_text(
        "cma.topo",
        "machine cma;\nlink eth { latency 2us; bandwidth 10GB/s; }\n"
        "link pkg { latency 100ns; bandwidth 20GB/s; }\n"
        "link qpi { latency 400ns; bandwidth 8GB/s; }\n"
        "nodetype two { synthetic \"package:2 core:1\"; package pkg; node qpi; }\n"
        "switch top { link eth; nodes a : two; }\n",
        &d);
    int twos[1] = {2}, machine[1] = {0};
    trd_shape_store st;
    CU_ASSERT_FATAL(trd_shape_init(&st, 1, twos, 0) == 0);
    st.s.machine_node = machine;
    st.s.cma = TRD_CMA_READ;
    trd_link_cost pk = trd_topo_nodetype_package_link(t, trd_topo_node_type(t, 0));
    trd_link_cost qpi = trd_topo_nodetype_node_link(t, trd_topo_node_type(t, 0));
    CU_ASSERT_DOUBLE_EQUAL(qpi.latency_s, 400e-9, 1e-15);
    size_t n = 4096, piece = 64;
    double gamma = 0.25e-9;
    double in = 8.0 * (double)piece / pk.bandwidth_Bps; /* rank 1's copy into its segment */
    CU_ASSERT(TRD_COST_HANDSHAKE_S < qpi.latency_s && TRD_COST_SINGLE_COPY_S > qpi.latency_s);
    double want = in + TRD_COST_HANDSHAKE_S /* the wait */
                  + TRD_COST_SINGLE_COPY_S +
                  8.0 * (double)n / qpi.bandwidth_Bps /* the single copy */
                  + 8.0 * (double)piece *
                        (1 / qpi.bandwidth_Bps + gamma / TRD_COST_MEM_SLOWDOWN); /* the reduce */
    hand h;
    char why[256];
    double got = -1;
    trd_cost_model cm = {t, gamma, 0.25};
    hand_init(&h, &st.s, (trd_call){TRD_COLL_ALLREDUCE, n, 8, 0, 0, 1, 0});
    trd_sb *b = hand_rank(&h, 0, 1);
    trd_s_wait(b, 0, 1, 0, TRD_CTR_IN, 1);
    trd_s_copy(b, 0, TRD_B_RECV, -1, 0, TRD_B_SEND, 1, 0, n);
    trd_s_reduce(b, 0, TRD_B_RECV, 0, TRD_B_SEG, 1, 0, piece);
    b = hand_rank(&h, 1, 1);
    trd_s_copy(b, 0, TRD_B_SEG, -1, 0, TRD_B_SEND, -1, 0, piece);
    trd_s_signal(b, 0, TRD_CTR_IN, 1);
    hand_end(&h);
    CU_ASSERT_EQUAL(trd_sched_cost(&h.s, &st.s, &cm, &got, why, sizeof why), TRD_OK);
    CU_ASSERT_DOUBLE_EQUAL(got, want, want * 1e-9);
    trd_sched_free(&h.s);
    trd_shape_free(&st);
    trd_topo_destroy(t);
    trd_diag_destroy(d);
}

/* trd_ring_bound stays below the ring's timed cost, over shapes of two
 * machines (one with two packages per node), counts with empty and uneven
 * blocks; and it is not vacuous: within 1.5x of the cost. */
static void test_ring_bound(void)
{
    static const char *topos[] = {"tests/data/select-16x8.topo", "tests/data/two-level.topo"};
    const trd_algo *ring = trd_algo_find(TRD_COLL_ALLREDUCE, "ring", 4);
    for (int k = 0; k < 2; k++) {
        trd_diag *d;
        trd_topo_t t = trd_test_load(topos[k], &d);
        static trd_machine_plan p;
        trd_plan_build(t, &p);
        trd_cost_model cm = {t, p.levels.gamma_s_per_byte, TRD_ALPHA_R_RATIO};
        static const int shapes[][2] = {{2, 1}, {2, 2}, {4, 2}, {8, 1}, {8, 2}, {16, 8}, {3, 2}};
        for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
            trd_shape_store st;
            int *aux;
            if (shapes[i][0] > p.nnodes || shapes[i][1] > p.ppn)
                continue;
            CU_ASSERT_FATAL(trd_machine_shape(t, shapes[i][0], shapes[i][1], &st, &aux) == TRD_OK);
            static const size_t counts[] = {1, 7, 100, 1001, 65536, 1000003};
            for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++) {
                trd_sched s;
                char why[256];
                double cost = -1;
                trd_call call = {TRD_COLL_ALLREDUCE, counts[c], 8, 0, 0, 1, 0};
                CU_ASSERT_FATAL(trd_plan(&s, ring, "", &st.s, &call, -1, why, sizeof why) == 0);
                CU_ASSERT_EQUAL(trd_sched_cost(&s, &st.s, &cm, &cost, why, sizeof why), TRD_OK);
                double bound = trd_ring_bound(t, &st.s, counts[c], 8, p.levels.gamma_s_per_byte);
                CU_ASSERT(cost > 0);
                CU_ASSERT(bound <= cost * (1 + 1e-12));
                CU_ASSERT(bound >= cost / 1.5);
                if (bound > cost * (1 + 1e-12) || bound < cost / 1.5)
                    fprintf(stderr, "\n    %s %d x %d, %zu elements: bound %g s, cost %g s",
                            topos[k], shapes[i][0], shapes[i][1], counts[c], bound, cost);
                trd_sched_free(&s);
            }
            trd_shape_free(&st);
            free(aux);
        }
        trd_topo_destroy(t);
        trd_diag_destroy(d);
    }
}

int main(void)
{
    static const trd_test_case tests[] = {
        {"cost model: link sharing added up by hand", test_cost},
        {"cost model: a message starts when both ends have posted it", test_cost_posted},
        {"cost model: a single-copy read and a remote segment", test_cost_single_copy},
        {"cost model: one node timed with the single-copy path", test_cost_one_node_single_copy},
        {"NAP's closed form weighs a width as the schedules do", test_nap_width_closed_form},
        {"cost model: one node's copies by where the data lies", test_cost_cache_levels},
        {"cost model: a link's measured alpha_r", test_cost_alpha_r},
        {"the ring's bound stays below its timed cost", test_ring_bound},
    };
    return trd_test_main("cost", tests, TRD_NTESTS(tests));
}
