/* Wisdom files (gen/read/wisdom.c): the digest, a file written and read back
 * unchanged, a file measured on another machine refused by the check, and
 * the exact message of each malformed file. */
#include <CUnit/Basic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diag.h"
#include "readers.h"
#include "test_util.h"
#include "topo.h"
#include "wisdom.h"

static const trd_test_format dsl = {trd_read_dsl_string, NULL, "m.topo"};

#define DUO_NODETYPE "nodetype duo { synthetic \"package:1 core:2\"; }\n"

static const char duo[] = "machine duo;\n"
                          "link eth { latency 50us; bandwidth 125MB/s; }\n" DUO_NODETYPE
                          "switch top { link eth; nodes n[0-1] : duo; }\n";

static void digest_of(const char *text, char hex[65])
{
    trd_test_result r = trd_test_read_as(&dsl, "m.topo", text);
    CU_ASSERT_EQUAL_FATAL(r.rc, TRD_OK);
    trd_topo_digest(r.t, hex);
    trd_test_release(&r);
}

static void test_wisdom_digest(void)
{
    char a[65], b[65], c[65], e[65];
    digest_of(duo, a);
    CU_ASSERT_EQUAL(strlen(a), 64);
    /* calibrated link costs: the same machine */
    digest_of("machine duo;\nlink eth { latency 9us; bandwidth 1GB/s; }\n" DUO_NODETYPE
              "switch top { link eth; nodes n[0-1] : duo; }\n",
              b);
    CU_ASSERT_STRING_EQUAL(a, b);
    /* another node, another core count: another machine */
    digest_of("machine duo;\nlink eth { latency 50us; bandwidth 125MB/s; }\n" DUO_NODETYPE
              "switch top { link eth; nodes n0, n2 : duo; }\n",
              c);
    CU_ASSERT_STRING_NOT_EQUAL(a, c);
    digest_of("machine duo;\nlink eth { latency 50us; bandwidth 125MB/s; }\n"
              "nodetype duo { synthetic \"package:1 core:4\"; }\n"
              "switch top { link eth; nodes n[0-1] : duo; }\n",
              e);
    CU_ASSERT_STRING_NOT_EQUAL(a, e);
}

/* A wisdom of two shapes for the duo machine. */
static void sample(trd_wisdom *w, const char *digest)
{
    static char hosts[2][TRD_WISDOM_STRING_MAX] = {"n0", "n\xc3\xa9 \"1\"\\"};
    static trd_wisdom_range range[4];
    memset(w, 0, sizeof *w);
    w->version = 1;
    snprintf(w->machine, sizeof w->machine, "duo");
    snprintf(w->digest, sizeof w->digest, "%s", digest);
    snprintf(w->mpi, sizeof w->mpi, "MPICH Version:\t4.1.2 \"x\"");
    snprintf(w->date, sizeof w->date, "2026-11-27T00:30:00Z");
    w->nranks = 2;
    w->hosts = hosts;
    w->budget_s = 120.5;
    w->complete = 1;
    range[0] = (trd_wisdom_range){.coll = TRD_COLL_ALLREDUCE, .nnodes = 1, .ppn = 2, .from = 0,
                                  .below = 4096, .alg = "shm:rx:2", .us = 1.25, .runner = "mpi",
                                  .runner_us = 0.1 + 0.2};
    range[1] = (trd_wisdom_range){.coll = TRD_COLL_ALLREDUCE, .nnodes = 1, .ppn = 2, .from = 4096,
                                  .below = SIZE_MAX, .alg = "mpi", .us = 1234.5678901234567,
                                  .runner = "shm", .runner_us = 1300};
    range[2] = (trd_wisdom_range){.coll = TRD_COLL_BCAST, .nnodes = 2, .ppn = 1, .from = 0,
                                  .below = SIZE_MAX, .alg = "binomial", .us = 3e-3};
    range[3] = (trd_wisdom_range){.coll = TRD_COLL_REDUCE_SCATTER_BLOCK, .nnodes = 1, .ppn = 1,
                                  .from = 0, .below = SIZE_MAX, .alg = "mpi", .us = 0.5};
    w->nranges = 4;
    w->range = range;
}

static char *write_text(const trd_wisdom *w, size_t *len)
{
    char *text = NULL;
    FILE *f = open_memstream(&text, len);
    CU_ASSERT_FATAL(f != NULL);
    CU_ASSERT_EQUAL(trd_wisdom_write(f, w), TRD_OK);
    fclose(f);
    return text;
}

static void test_wisdom_round_trip(void)
{
    char hex[65];
    digest_of(duo, hex);
    trd_wisdom w, r;
    sample(&w, hex);
    size_t len;
    char *text = write_text(&w, &len);
    trd_diag *d = NULL;
    CU_ASSERT_EQUAL_FATAL(trd_diag_create(&d), TRD_OK);
    int rc = trd_wisdom_read_string("duo.wisdom", text, len, &r, d);
    if (rc != TRD_OK)
        printf("\n%s\n%s\n", text, trd_diag_message(d, 0));
    CU_ASSERT_EQUAL_FATAL(rc, TRD_OK);
    CU_ASSERT_EQUAL(r.version, 1);
    CU_ASSERT_STRING_EQUAL(r.machine, w.machine);
    CU_ASSERT_STRING_EQUAL(r.digest, w.digest);
    CU_ASSERT_EQUAL(r.digest_line, 3);
    CU_ASSERT_STRING_EQUAL(r.mpi, w.mpi);
    CU_ASSERT_STRING_EQUAL(r.date, w.date);
    CU_ASSERT_EQUAL(r.nranks, 2);
    CU_ASSERT_STRING_EQUAL(r.hosts[0], w.hosts[0]);
    CU_ASSERT_STRING_EQUAL(r.hosts[1], w.hosts[1]);
    CU_ASSERT_EQUAL(r.budget_s, w.budget_s);
    CU_ASSERT_EQUAL(r.complete, 1);
    CU_ASSERT_STRING_EQUAL(r.file, "duo.wisdom");
    CU_ASSERT_EQUAL_FATAL(r.nranges, w.nranges);
    for (int i = 0; i < r.nranges; i++) {
        const trd_wisdom_range *a = &w.range[i], *b = &r.range[i];
        CU_ASSERT_EQUAL(a->coll, b->coll);
        CU_ASSERT_EQUAL(a->nnodes, b->nnodes);
        CU_ASSERT_EQUAL(a->ppn, b->ppn);
        CU_ASSERT_EQUAL(a->from, b->from);
        CU_ASSERT_EQUAL(a->below, b->below);
        CU_ASSERT_STRING_EQUAL(a->alg, b->alg);
        CU_ASSERT_EQUAL(a->us, b->us); /* exactly: %.17g round-trips */
        CU_ASSERT_STRING_EQUAL(a->runner, b->runner);
        CU_ASSERT_EQUAL(a->runner_us, b->runner_us);
        CU_ASSERT_EQUAL(b->line, 10 + i); /* after the header and its comment line */
    }
    /* written again: the same bytes */
    size_t len2;
    char *again = write_text(&r, &len2);
    CU_ASSERT_EQUAL(len, len2);
    CU_ASSERT_STRING_EQUAL(text, again);

    /* the check takes it for the machine it was measured on */
    trd_test_result m = trd_test_read_as(&dsl, "m.topo", duo);
    CU_ASSERT_EQUAL(trd_wisdom_check(&r, m.t, d), TRD_OK);
    CU_ASSERT_EQUAL(trd_diag_count(d), 0);
    trd_test_release(&m);
    free(again);
    free(text);
    trd_wisdom_free(&r);
    CU_ASSERT_PTR_NULL(r.range);
    trd_diag_destroy(d);
}

static void test_wisdom_stale(void)
{
    char hex[65];
    digest_of(duo, hex);
    trd_wisdom w, r;
    sample(&w, hex);
    size_t len;
    char *text = write_text(&w, &len);
    trd_diag *d = NULL;
    CU_ASSERT_EQUAL_FATAL(trd_diag_create(&d), TRD_OK);
    CU_ASSERT_EQUAL_FATAL(trd_wisdom_read_string("duo.wisdom", text, len, &r, d), TRD_OK);
    trd_test_result m = trd_test_read_as(
        &dsl, "m.topo",
        "machine trio;\nlink eth { latency 50us; bandwidth 125MB/s; }\n" DUO_NODETYPE
        "switch top { link eth; nodes n[0-2] : duo; }\n");
    char other[65], msg[512];
    trd_topo_digest(m.t, other);
    CU_ASSERT_EQUAL(trd_wisdom_check(&r, m.t, d), TRD_ERR_INPUT);
    snprintf(msg, sizeof msg,
             "duo.wisdom:3:8: error: wisdom measured on machine 'duo' (digest %.8s...), this "
             "description is 'trio' (digest %.8s...)",
             hex, other);
    CU_ASSERT_EQUAL(trd_diag_count(d), 1);
    CU_ASSERT_STRING_EQUAL(trd_diag_message(d, 0), msg);
    trd_test_release(&m);
    trd_wisdom_free(&r);
    free(text);
    trd_diag_destroy(d);
}

#define HEAD                                                                                       \
    "treeduce-wisdom 1\nmachine \"duo\"\n"                                                         \
    "digest 0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\n"                    \
    "mpi \"MPICH\"\ndate 2026-11-27T00:30:00Z\nranks 2\nhosts \"n0\" \"n1\"\nbudget 0 1\n"

/* text (len bytes) must be refused with exactly msg, and leave w empty. */
static void refused_at(int line, const char *text, size_t len, const char *msg)
{
    trd_wisdom w;
    trd_diag *d = NULL;
    CU_ASSERT_EQUAL_FATAL(trd_diag_create(&d), TRD_OK);
    int rc = trd_wisdom_read_string("bad.wisdom", text, len, &w, d);
    const char *got = trd_diag_count(d) ? trd_diag_message(d, 0) : "(none)";
    if (rc != TRD_ERR_INPUT || trd_diag_count(d) != 1 || strcmp(got, msg) != 0)
        printf("\ntest_wisdom.c:%d: expected\n  %s\ngot (rc %d, %d message(s))\n  %s\n", line, msg,
               rc, trd_diag_count(d), got);
    CU_ASSERT_EQUAL(rc, TRD_ERR_INPUT);
    CU_ASSERT_EQUAL(trd_diag_count(d), 1);
    CU_ASSERT_STRING_EQUAL(got, msg);
    CU_ASSERT_EQUAL(w.nranges, 0);
    CU_ASSERT_PTR_NULL(w.range);
    CU_ASSERT_PTR_NULL(w.hosts);
    CU_ASSERT_EQUAL(w.machine[0], '\0');
    trd_diag_destroy(d);
}

#define REFUSED(text, msg) refused_at(__LINE__, text, strlen(text), msg)

static void test_wisdom_good_minimal(void)
{
    /* comments, blank lines, no range at all */
    static const char text[] = "# measured\n\n" HEAD "  # nothing measured\nend\n\n# after\n";
    trd_wisdom w;
    trd_diag *d = NULL;
    CU_ASSERT_EQUAL_FATAL(trd_diag_create(&d), TRD_OK);
    CU_ASSERT_EQUAL(trd_wisdom_read_string("ok.wisdom", text, strlen(text), &w, d), TRD_OK);
    CU_ASSERT_EQUAL(trd_diag_count(d), 0);
    CU_ASSERT_EQUAL(w.digest_line, 5);
    CU_ASSERT_EQUAL(w.nranges, 0);
    trd_wisdom_free(&w);
    trd_diag_destroy(d);
}

static void test_wisdom_malformed(void)
{
    REFUSED("treeduce-wisdom 2\n",
            "bad.wisdom:1:17: error: expected wisdom version 1, got version 2");
    REFUSED("treeduce-wisdom x\n", "bad.wisdom:1:17: error: expected a version number, got 'x'");
    REFUSED("treeduce-wizdom 1\n",
            "bad.wisdom:1:1: error: expected 'treeduce-wisdom', got 'treeduce-wizdom'");
    REFUSED(HEAD "rnage allreduce 1 2 0 - ring 1 - 0\nend\n",
            "bad.wisdom:9:1: error: expected 'range' or 'end', got 'rnage'");
    REFUSED(HEAD "range allreduce 1 2 0 - ring 1.5us - 0\nend\n",
            "bad.wisdom:9:30: error: expected a time in microseconds, got '1.5us'");
    REFUSED(HEAD "range allreduce 1 2 0 - ring 0x1p3 - 0\nend\n",
            "bad.wisdom:9:30: error: expected a time in microseconds, got '0x1p3'");
    REFUSED(HEAD "range allreduce 1 2 0x10 - ring 1 - 0\nend\n",
            "bad.wisdom:9:21: error: expected a size in bytes, got '0x10'");
    REFUSED(HEAD "range allreduce 0 2 0 - ring 1 - 0\nend\n",
            "bad.wisdom:9:17: error: expected a node count (1 or more), got '0'");
    REFUSED(HEAD "range alltoall 1 2 0 - ring 1 - 0\nend\n",
            "bad.wisdom:9:7: error: expected a collective (allreduce, reduce_scatter_block, "
            "allgather, reduce, bcast), got 'alltoall'");
    REFUSED(HEAD "range bcast 1 2 0 - rabenseifner 1 - 0\nend\n",
            "bad.wisdom:9:21: error: expected an algorithm of bcast (shm, binomial, "
            "scatter_allgather, mpi), got 'rabenseifner'");
    REFUSED(HEAD "range allreduce 1 2 0 - mpi 1 nope 0\nend\n",
            "bad.wisdom:9:31: error: expected an algorithm of allreduce (nap, ring, rd, "
            "rabenseifner, smp, hring, flex, rm, shm, shm:rx, shm:tree, shm:cyclic, shm:socket, "
            "shm:direct, "
            "repro, mpi) or '-', got 'nope'");
    REFUSED(HEAD "range allreduce 1 2 0 64 ring 1 - 0\nrange allreduce 1 2 128 - rd 1 - 0\nend\n",
            "bad.wisdom:10:21: error: expected allreduce 1x2 to go on from 64 (where its range "
            "before ends), got 128");
    REFUSED(HEAD "range allreduce 1 2 8 - ring 1 - 0\nend\n",
            "bad.wisdom:9:21: error: expected allreduce 1x2 to start from 0 (its first range), got "
            "8");
    REFUSED(HEAD "range allreduce 1 2 0 64 ring 1 - 0\nend\n",
            "bad.wisdom:10:1: error: expected a range of allreduce 1x2 from 64 (its last range "
            "ends with '-')");
    REFUSED(HEAD "range allreduce 1 2 0 - ring 1 - 0\n",
            "bad.wisdom:10:1: error: expected 'end', got the end of the line");
    REFUSED(HEAD "range allreduce 1 2 0 - ring 1 - 0",
            "bad.wisdom:9:35: error: expected 'end', got the end of the line");
    REFUSED("", "bad.wisdom:1:1: error: expected 'treeduce-wisdom', got the end of the line");
    REFUSED(HEAD "end\nrange allreduce 1 2 0 - ring 1 - 0\n",
            "bad.wisdom:10:1: error: expected nothing after 'end', got 'range'");
    REFUSED("treeduce-wisdom 1\nmachine \"du\\x01o\"\n",
            "bad.wisdom:2:9: error: machine name: control character U+0001 (byte 3) is not "
            "allowed");
    REFUSED("treeduce-wisdom 1\nmachine \"duo\n",
            "bad.wisdom:2:13: error: expected '\"' to end the string");
    REFUSED("treeduce-wisdom 1\nmachine duo\n",
            "bad.wisdom:2:9: error: expected a quoted machine name, got 'duo'");
    REFUSED(HEAD "range allreduce 1 2 0 - ring 1 - 0 extra\nend\n",
            "bad.wisdom:9:36: error: expected the end of the line, got 'extra'");
    REFUSED(HEAD "range allreduce 2 2 0 - ring 1 - 0\nend\n",
            "bad.wisdom:9:7: error: allreduce 2x2 has more ranks than the job's 2");
    REFUSED(HEAD "range allreduce 1 2 0 - ring 1 - 0\nrange allreduce 1 2 0 - rd 1 - 0\nend\n",
            "bad.wisdom:10:7: error: allreduce 1x2 was measured already (line 9)");
    static const char nul[] = HEAD "range allreduce 1 2 0 - ri\0ng 1 - 0\nend\n";
    refused_at(__LINE__, nul, sizeof nul - 1,
               "bad.wisdom:9:27: error: unexpected character '\\x00'");
}

/* Every prefix of a good file, and the file with each byte replaced in turn
 * by each of a few damaging ones: the reader returns TRD_OK with no message
 * or TRD_ERR_INPUT with exactly one, and leaves nothing on error. */
static void test_wisdom_robust(void)
{
    static const char good[] = HEAD "range allreduce 1 2 0 64 shm:rx:2 1.5 mpi 2\n"
                                    "range allreduce 1 2 64 - shm 3e2 - 0\nend\n";
    static const char damage[] = "\"\\ \n#-9x\xff";
    size_t len = sizeof good - 1, nd = sizeof damage - 1;
    char buf[sizeof good];
    int bad = 0, accepted = 0;
    for (size_t k = 0; k <= (nd + 1) * len; k++) {
        size_t n = k <= len ? k : len;
        memcpy(buf, good, len);
        if (k > len)
            buf[(k - len - 1) / nd] = damage[(k - len - 1) % nd];
        trd_wisdom w;
        trd_diag *d = NULL;
        CU_ASSERT_EQUAL_FATAL(trd_diag_create(&d), TRD_OK);
        int rc = trd_wisdom_read_string("r.wisdom", buf, n, &w, d);
        int ok = (rc == TRD_OK && trd_diag_count(d) == 0) ||
                 (rc == TRD_ERR_INPUT && trd_diag_count(d) == 1 && !w.range && !w.hosts);
        accepted += rc == TRD_OK;
        if (!ok && bad++ < 5)
            printf("\n  input %zu: rc %d, %d message(s)\n", k, rc, trd_diag_count(d));
        trd_wisdom_free(&w);
        trd_diag_destroy(d);
    }
    CU_ASSERT_EQUAL(bad, 0);
    CU_ASSERT(accepted > 0); /* the good file whole, and harmless damage (a blank) */
}

static void test_wisdom_read_file(void)
{
    trd_wisdom w;
    trd_diag *d = NULL;
    CU_ASSERT_EQUAL_FATAL(trd_diag_create(&d), TRD_OK);
    CU_ASSERT_EQUAL(trd_wisdom_read("/nonexistent/x.wisdom", &w, d), TRD_ERR_IO);
    CU_ASSERT_STRING_EQUAL(trd_diag_message(d, 0),
                           "/nonexistent/x.wisdom: error: cannot read file: No such file or "
                           "directory");
    trd_diag_destroy(d);
}

int main(void)
{
    static const trd_test_case tests[] = {
        {"digest", test_wisdom_digest},       {"round_trip", test_wisdom_round_trip},
        {"stale", test_wisdom_stale},         {"good_minimal", test_wisdom_good_minimal},
        {"malformed", test_wisdom_malformed}, {"robust", test_wisdom_robust},
        {"read_file", test_wisdom_read_file},
    };
    return trd_test_main("wisdom", tests, TRD_NTESTS(tests));
}
