/* Shared code of the CUnit unit tests, header only (static inline functions
 * and macros; every test is built from its one .c file):
 *   - trd_test_main(): one CUnit suite from a table of tests, run verbosely;
 *   - trd_test_path(): files of the source tree (tests/data, topologies);
 *   - trd_test_load() and trd_test_load_text(): a finalized machine from a
 *     topology file or text;
 *   - trd_test_read_as() and TRD_EXPECT_ERRORS(): read a text with one of the
 *     readers of readers.h, finalize, and compare the exact messages;
 *   - trd_test_on_schedules() and trd_test_timed_open(): the machines whose
 *     size ranges are drawn on the schedules (tune.h), and a timer for one
 *     of their shapes. */
#ifndef TRD_TEST_UTIL_H
#define TRD_TEST_UTIL_H

#include <CUnit/Basic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diag.h"
#include "plan.h"
#include "reader.h"
#include "readers.h"
#include "shape.h"
#include "topo.h"
#include "tune.h"

/* ---- main() ------------------------------------------------------------------ */

/* One test of a suite: its name as CUnit prints it, and the function. */
typedef struct trd_test_case {
    const char *name;
    CU_TestFunc fn;
} trd_test_case;

/* Number of entries of an array of trd_test_case. */
#define TRD_NTESTS(tests) ((int)(sizeof(tests) / sizeof((tests)[0])))

/* Run the n tests in one suite named suite, in order, with verbose output.
 * Returns 0 when every assertion passed, 1 on a failure, 2 when CUnit could
 * not set the suite up. */
static inline int trd_test_main(const char *suite, const trd_test_case *tests, int n)
{
    CU_pSuite s;
    unsigned fails;

    if (CU_initialize_registry() != CUE_SUCCESS)
        return 2;
    s = CU_add_suite(suite, NULL, NULL);
    if (s == NULL) {
        CU_cleanup_registry();
        return 2;
    }
    for (int i = 0; i < n; i++)
        if (CU_add_test(s, tests[i].name, tests[i].fn) == NULL) {
            CU_cleanup_registry();
            return 2;
        }
    CU_basic_set_mode(CU_BRM_VERBOSE);
    CU_basic_run_tests();
    fails = CU_get_number_of_failures();
    CU_cleanup_registry();
    return fails ? 1 : 0;
}

/* ---- Files of the source tree ---------------------------------------------------- */

/* Size of the buffer of trd_test_path(), terminating '\0' included. */
#define TRD_TEST_PATH_MAX 4200

/* Path of rel, a path relative to the root of the source tree, such as
 * "tests/data/two-level.topo" or "topologies/epyc-2s.xml".
 *   - Under tests/data/: $TRD_TEST_DATA/<rest> when TRD_TEST_DATA is set.
 *   - Otherwise the source root is $TRD_SOURCE_DIR, else two levels above
 *     $TRD_TEST_DATA (tests/data), else ".." (CTest runs unit tests in
 *     tests/).
 * The result lives in a static buffer, valid until the next call. */
static inline const char *trd_test_path(const char *rel)
{
    static const char data_dir[] = "tests/data/";
    static char buf[TRD_TEST_PATH_MAX];
    const char *root = getenv("TRD_SOURCE_DIR"), *data = getenv("TRD_TEST_DATA");

    if (data != NULL && strncmp(rel, data_dir, sizeof data_dir - 1) == 0)
        snprintf(buf, sizeof buf, "%s/%s", data, rel + sizeof data_dir - 1);
    else if (root != NULL)
        snprintf(buf, sizeof buf, "%s/%s", root, rel);
    else if (data != NULL)
        snprintf(buf, sizeof buf, "%s/../../%s", data, rel);
    else
        snprintf(buf, sizeof buf, "../%s", rel);
    return buf;
}

/* ---- A machine from the topology language ---------------------------------------- */

/* The machine of rel (a .topo file, as trd_test_path() takes it), read and
 * finalized (fatal assertions); *d receives its messages.  The caller
 * destroys both. */
static inline trd_topo_t trd_test_load(const char *rel, trd_diag **d)
{
    trd_topo_t t = NULL;
    CU_ASSERT_EQUAL_FATAL(trd_diag_create(d), TRD_OK);
    CU_ASSERT_EQUAL_FATAL(trd_topo_create(&t), TRD_OK);
    CU_ASSERT_EQUAL_FATAL(trd_read_dsl(t, *d, trd_test_path(rel)), TRD_OK);
    CU_ASSERT_EQUAL_FATAL(trd_topo_finalize(t, *d), TRD_OK);
    return t;
}

/* trd_test_load() of text read as file name. */
static inline trd_topo_t trd_test_load_text(const char *name, const char *text, trd_diag **d)
{
    trd_topo_t t = NULL;
    CU_ASSERT_EQUAL_FATAL(trd_diag_create(d), TRD_OK);
    CU_ASSERT_EQUAL_FATAL(trd_topo_create(&t), TRD_OK);
    CU_ASSERT_EQUAL_FATAL(trd_read_dsl_string(t, *d, name, text, strlen(text)), TRD_OK);
    CU_ASSERT_EQUAL_FATAL(trd_topo_finalize(t, *d), TRD_OK);
    return t;
}

/* ---- Reading a text with a reader ------------------------------------------------ */

/* An input format: a string reader of readers.h (trd_read_dsl_string, ...),
 * an optional hook that sets defaults on the fresh topology before reading
 * (NULL for none), and the file name under which TRD_EXPECT_ERRORS reads. */
typedef struct trd_test_format {
    int (*read)(trd_topo_t t, trd_diag *d, const char *name, const char *text, size_t len);
    void (*setup)(trd_topo_t t);
    const char *name;
} trd_test_format;

/* A topology, its messages, and the status of reading (and finalizing). */
typedef struct trd_test_result {
    trd_topo_t t;
    trd_diag *d;
    int rc;
} trd_test_result;

/* A new topology with fmt's defaults set, and an empty trd_diag (asserted
 * created, the diag fatally); rc is 0. */
static inline trd_test_result trd_test_fresh(const trd_test_format *fmt)
{
    trd_test_result r = {NULL, NULL, 0};
    CU_ASSERT_EQUAL(trd_topo_create(&r.t), TRD_OK);
    CU_ASSERT_EQUAL_FATAL(trd_diag_create(&r.d), TRD_OK);
    if (fmt->setup != NULL)
        fmt->setup(r.t);
    return r;
}

/* Read text as file name into trd_test_fresh(fmt), then finalize if the
 * reader found no error. */
static inline trd_test_result trd_test_read_as(const trd_test_format *fmt, const char *name,
                                               const char *text)
{
    trd_test_result r = trd_test_fresh(fmt);
    r.rc = fmt->read(r.t, r.d, name, text, strlen(text));
    if (r.rc == TRD_OK)
        r.rc = trd_topo_finalize(r.t, r.d);
    return r;
}

static inline void trd_test_release(trd_test_result *r)
{
    trd_topo_destroy(r->t);
    trd_diag_destroy(r->d);
}

/* text read as fmt->name must fail with TRD_ERR_INPUT and exactly the
 * messages in msgs (NULL terminated), in order; otherwise both lists are
 * printed with the file and line of the case.  Asserts the status and the
 * messages (two assertions). */
static inline void trd_test_expect_errors_at(const trd_test_format *fmt, const char *file, int line,
                                             const char *text, const char *const *msgs)
{
    trd_test_result r = trd_test_read_as(fmt, fmt->name, text);
    const char *base = strrchr(file, '/');
    int n = 0, same = 1;

    while (msgs[n] != NULL)
        n++;
    CU_ASSERT_EQUAL(r.rc, TRD_ERR_INPUT);
    if (trd_diag_count(r.d) != n)
        same = 0;
    for (int i = 0; i < n && same; i++)
        same = trd_diag_message(r.d, i) && strcmp(trd_diag_message(r.d, i), msgs[i]) == 0;
    if (!same) {
        printf("\n%s:%d: expected %d message(s):\n", base ? base + 1 : file, line, n);
        for (int i = 0; i < n; i++)
            printf("  %s\n", msgs[i]);
        printf("got %d:\n", trd_diag_count(r.d));
        for (int i = 0; i < trd_diag_count(r.d); i++)
            printf("  %s\n", trd_diag_message(r.d, i));
    }
    CU_ASSERT(same);
    trd_test_release(&r);
}

/* TRD_EXPECT_ERRORS(&fmt, text, "message", ...): trd_test_expect_errors_at()
 * at this line, with the messages as arguments. */
#define TRD_EXPECT_ERRORS(fmt, text, ...)                                                          \
    trd_test_expect_errors_at(fmt, __FILE__, __LINE__, text,                                       \
                              (const char *const[]){__VA_ARGS__, NULL})

/* The switches of t in DFS order as "name<parent" joined by spaces into buf
 * (len bytes; a root has nothing after its '<'). */
static inline void trd_test_tree_shape(trd_topo_t t, char *buf, size_t len)
{
    size_t o = 0;
    buf[0] = '\0';
    for (int i = 0; i < trd_topo_nswitches(t) && o < len; i++) {
        int p = trd_topo_switch_parent(t, i);
        o += (size_t)snprintf(buf + o, len - o, "%s%s<%s", i ? " " : "", trd_topo_switch_name(t, i),
                              p < 0 ? "" : trd_topo_switch_name(t, p));
    }
}

/* Every prefix of the good text, then the text with one byte replaced by
 * each byte of damage in turn, at every position from the start: the reader
 * must return TRD_OK or TRD_ERR_INPUT, the latter exactly when it reported
 * a message, and never crash.  Returns the number of inputs that broke the
 * rule (0 is a pass). */
static inline int trd_test_robust(const trd_test_format *fmt, const char *text, const char *damage)
{
    size_t len = strlen(text), nd = strlen(damage);
    char *buf = malloc(len + 1);
    int bad = 0;
    CU_ASSERT_FATAL(buf != NULL);
    for (size_t k = 0; k <= (nd + 1) * len; k++) {
        size_t n = k <= len ? k : len;
        memcpy(buf, text, len);
        if (k > len)
            buf[(k - len - 1) / nd] = damage[(k - len - 1) % nd];
        trd_test_result r = trd_test_fresh(fmt);
        int rc = fmt->read(r.t, r.d, fmt->name, buf, n);
        if ((rc != TRD_OK && rc != TRD_ERR_INPUT) ||
            (rc == TRD_ERR_INPUT) != (trd_diag_count(r.d) > 0))
            bad++;
        trd_test_release(&r);
    }
    free(buf);
    return bad;
}

/* ---- Plans drawn on the schedules -------------------------------------------------- */

/* Number of machines of trd_test_sched_machine(). */
#define TRD_TEST_SCHED_MACHINES 2

/* Machine k (0 .. TRD_TEST_SCHED_MACHINES - 1) of those whose size ranges
 * and parameters are checked on the schedules, as trd_test_path() takes it:
 * 16 nodes x 8 cores, and ethernet32. */
static inline const char *trd_test_sched_machine(int k)
{
    static const char *const topos[TRD_TEST_SCHED_MACHINES] = {"tests/data/select-16x8.topo",
                                                               "topologies/ethernet32.topo"};
    return topos[k];
}

/* The machine of rel (trd_test_load()), planned into *p with its size
 * ranges drawn on the schedules (one assertion more: the status of
 * trd_select_on_schedules(), whose counts go to *stats).  The caller
 * destroys the machine and *d. */
static inline trd_topo_t trd_test_on_schedules(const char *rel, trd_diag **d, trd_machine_plan *p,
                                               trd_select_stats *stats)
{
    trd_topo_t t = trd_test_load(rel, d);
    trd_plan_build(t, p);
    CU_ASSERT_EQUAL(trd_select_on_schedules(t, p, stats), TRD_OK);
    return t;
}

/* The nnodes x ppn shape of a machine and a timer for it. */
typedef struct trd_test_timed {
    trd_shape_store st;
    int *aux;
    trd_timer *tm;
} trd_test_timed;

/* The nnodes x ppn shape of t into *x and a timer of it with p's gamma (two
 * fatal assertions); *x stays where it is until trd_test_timed_release(). */
static inline void trd_test_timed_open(trd_test_timed *x, trd_topo_t t, const trd_machine_plan *p,
                                       int nnodes, int ppn)
{
    CU_ASSERT_FATAL(trd_machine_shape(t, nnodes, ppn, &x->st, &x->aux) == TRD_OK);
    CU_ASSERT_FATAL(trd_timer_create(&x->tm, t, p, &x->st.s) == TRD_OK);
}

static inline void trd_test_timed_release(trd_test_timed *x)
{
    trd_timer_destroy(x->tm);
    trd_shape_free(&x->st);
    free(x->aux);
}

#endif /* TRD_TEST_UTIL_H */
