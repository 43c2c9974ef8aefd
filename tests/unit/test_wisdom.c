/* Wisdom files (gen/read/wisdom.c): the digest, a file written and read back
 * unchanged (version 2, check lines and a range of the model), version 1
 * still read, a file measured on another machine refused by the check, the
 * exact message of each malformed file, and several files merged: disjoint
 * ones combined, the newer overriding the older (clipped or split), the
 * conflicts recorded, another MPI library refused. */
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

/* A wisdom of three shapes for the duo machine: a range with two check
 * points, one the check gave to the model, a gap before the last. */
static void sample(trd_wisdom *w, const char *digest)
{
    static char hosts[2][TRD_WISDOM_STRING_MAX] = {"n0", "n\xc3\xa9 \"1\"\\"};
    static trd_wisdom_range range[5];
    memset(w, 0, sizeof *w);
    w->version = 2;
    snprintf(w->machine, sizeof w->machine, "duo");
    snprintf(w->digest, sizeof w->digest, "%s", digest);
    snprintf(w->mpi, sizeof w->mpi, "MPICH Version:\t4.1.2 \"x\"");
    snprintf(w->date, sizeof w->date, "2026-11-27T00:30:00Z");
    w->nranks = 2;
    w->hosts = hosts;
    w->budget_s = 120.5;
    w->complete = 1;
    range[0] = (trd_wisdom_range){.coll = TRD_COLL_ALLREDUCE,
                                  .nnodes = 1,
                                  .ppn = 2,
                                  .from = 0,
                                  .below = 4096,
                                  .alg = "shm:rx:2",
                                  .us = 1.25,
                                  .runner = "mpi",
                                  .runner_us = 0.1 + 0.2,
                                  .ncheck = 2};
    range[0].check[0] = (trd_wisdom_point){.bytes = 0,
                                           .alg = "shm:rx:2",
                                           .alg_us = 1.5,
                                           .model = "shm",
                                           .model_us = 1.75,
                                           .mpi_us = 2,
                                           .noise = 0.01,
                                           .verdict = TRD_WISDOM_KEPT};
    range[0].check[1] = (trd_wisdom_point){.bytes = 4095,
                                           .alg = "shm:rx:2",
                                           .alg_us = 9,
                                           .model = "mpi",
                                           .model_us = 8.5,
                                           .mpi_us = 8.5,
                                           .noise = 0,
                                           .verdict = TRD_WISDOM_TO_MPI};
    range[1] = (trd_wisdom_range){.coll = TRD_COLL_ALLREDUCE,
                                  .nnodes = 1,
                                  .ppn = 2,
                                  .from = 4096,
                                  .below = 65536,
                                  .alg = "model",
                                  .us = 1234.5678901234567,
                                  .runner = "shm",
                                  .runner_us = 1300,
                                  .ncheck = 1};
    range[1].check[0] = (trd_wisdom_point){.bytes = 16384,
                                           .alg = "shm:tree:2",
                                           .alg_us = 40.5,
                                           .model = "shm:rx:2",
                                           .model_us = 0.1 + 0.2,
                                           .mpi_us = 45,
                                           .noise = 0.125,
                                           .verdict = TRD_WISDOM_TO_MODEL};
    range[2] = (trd_wisdom_range){.coll = TRD_COLL_ALLREDUCE,
                                  .nnodes = 1,
                                  .ppn = 2,
                                  .from = 1048576,
                                  .below = SIZE_MAX,
                                  .alg = "mpi",
                                  .us = 900};
    range[3] = (trd_wisdom_range){.coll = TRD_COLL_BCAST,
                                  .nnodes = 2,
                                  .ppn = 1,
                                  .from = 0,
                                  .below = SIZE_MAX,
                                  .alg = "binomial",
                                  .us = 3e-3};
    range[4] = (trd_wisdom_range){.coll = TRD_COLL_REDUCE_SCATTER_BLOCK,
                                  .nnodes = 1,
                                  .ppn = 1,
                                  .from = 0,
                                  .below = SIZE_MAX,
                                  .alg = "mpi",
                                  .us = 0.5};
    w->nranges = 5;
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
    CU_ASSERT_EQUAL(r.version, 2);
    CU_ASSERT_EQUAL(r.mpi_line, 4);
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
    /* after the header and its two comment lines, each range's check lines */
    static const int lines[] = {11, 14, 16, 17, 18};
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
        CU_ASSERT_EQUAL(b->line, lines[i]);
        CU_ASSERT_EQUAL_FATAL(a->ncheck, b->ncheck);
        for (int k = 0; k < a->ncheck; k++) {
            const trd_wisdom_point *p = &a->check[k], *q = &b->check[k];
            CU_ASSERT_EQUAL(p->bytes, q->bytes);
            CU_ASSERT_STRING_EQUAL(p->alg, q->alg);
            CU_ASSERT_EQUAL(p->alg_us, q->alg_us);
            CU_ASSERT_STRING_EQUAL(p->model, q->model);
            CU_ASSERT_EQUAL(p->model_us, q->model_us);
            CU_ASSERT_EQUAL(p->mpi_us, q->mpi_us);
            CU_ASSERT_EQUAL(p->noise, q->noise);
            CU_ASSERT_EQUAL(p->verdict, q->verdict);
            CU_ASSERT_EQUAL(q->line, lines[i] + 1 + k);
        }
    }
    CU_ASSERT(trd_wisdom_is_model(&r.range[1]));
    CU_ASSERT(!trd_wisdom_is_model(&r.range[0]));
    CU_ASSERT(strstr(text, "treeduce-wisdom 2\n") == text);
    CU_ASSERT(strstr(text, "\nrange allreduce 1 2 4096 65536 model 1234.5678901234567 shm 1300\n"
                           "check 16384 shm:tree:2 40.5 shm:rx:2 0.30000000000000004 45 0.125 "
                           "model\nrange allreduce 1 2 1048576 - mpi 900 - 0\n") != NULL);
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

#define HEAD_AT(version, mpi, date)                                                                \
    "treeduce-wisdom " version "\nmachine \"duo\"\n"                                               \
    "digest 0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\n"                    \
    "mpi \"" mpi "\"\ndate " date "\nranks 2\nhosts \"n0\" \"n1\"\nbudget 0 1\n"
#define HEAD HEAD_AT("1", "MPICH", "2026-11-27T00:30:00Z")
#define HEAD2 HEAD_AT("2", "MPICH", "2026-11-27T00:30:00Z")

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
    REFUSED("treeduce-wisdom 3\n",
            "bad.wisdom:1:17: error: expected wisdom version 1 or 2, got version 3");
    REFUSED("treeduce-wisdom 0\n",
            "bad.wisdom:1:17: error: expected wisdom version 1 or 2, got version 0");
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

/* text read as file into w: TRD_OK and no message, or the test fails. */
static void read_ok(const char *file, const char *text, trd_wisdom *w, trd_diag *d)
{
    int rc = trd_wisdom_read_string(file, text, strlen(text), w, d);
    if (rc != TRD_OK)
        printf("\n%s: %s\n", file, trd_diag_count(d) ? trd_diag_message(d, 0) : "(none)");
    CU_ASSERT_EQUAL_FATAL(rc, TRD_OK);
}

static void test_wisdom_version1(void)
{
    /* today's files: no check line, ranges from 0 to '-' without gaps */
    static const char text[] = HEAD "range allreduce 1 2 0 64 shm:rx:2 1.5 mpi 2\n"
                                    "range allreduce 1 2 64 - shm 3e2 - 0\n"
                                    "range bcast 2 1 0 - binomial 1 - 0\nend\n";
    trd_wisdom w;
    trd_diag *d = NULL;
    CU_ASSERT_EQUAL_FATAL(trd_diag_create(&d), TRD_OK);
    read_ok("v1.wisdom", text, &w, d);
    CU_ASSERT_EQUAL(w.version, 1);
    CU_ASSERT_EQUAL(w.mpi_line, 4);
    CU_ASSERT_EQUAL_FATAL(w.nranges, 3);
    CU_ASSERT_EQUAL(w.range[1].from, 64);
    CU_ASSERT_EQUAL(w.range[1].below, SIZE_MAX);
    CU_ASSERT_EQUAL(w.range[2].line, 11);
    CU_ASSERT_EQUAL(w.range[0].ncheck, 0);
    trd_wisdom_free(&w);
    trd_diag_destroy(d);
}

static void test_wisdom_gaps(void)
{
    /* version 2: a shape's ranges may start above 0, leave gaps and end */
    static const char text[] = HEAD2 "range allreduce 1 2 100 200 ring 1 - 0\n"
                                     "range allreduce 1 2 4096 8192 model 2 rd 3\n"
                                     "check 4096 rd 2.5 ring 2 3 0 model\n"
                                     "range allreduce 1 2 8192 65536 rd 4 - 0\n"
                                     "range bcast 2 1 1024 - mpi 1 - 0\nend\n";
    trd_wisdom w;
    trd_diag *d = NULL;
    CU_ASSERT_EQUAL_FATAL(trd_diag_create(&d), TRD_OK);
    read_ok("gaps.wisdom", text, &w, d);
    CU_ASSERT_EQUAL(w.version, 2);
    CU_ASSERT_EQUAL_FATAL(w.nranges, 4);
    CU_ASSERT_EQUAL(w.range[0].from, 100);
    CU_ASSERT_EQUAL(w.range[0].below, 200);
    CU_ASSERT_STRING_EQUAL(w.range[1].alg, "model");
    CU_ASSERT_EQUAL_FATAL(w.range[1].ncheck, 1);
    CU_ASSERT_EQUAL(w.range[1].check[0].verdict, TRD_WISDOM_TO_MODEL);
    CU_ASSERT_EQUAL(w.range[1].check[0].line, 11);
    CU_ASSERT_EQUAL(w.range[2].below, 65536);
    CU_ASSERT_EQUAL(w.range[3].from, 1024);
    CU_ASSERT_STRING_EQUAL(trd_wisdom_range_file(&w, &w.range[3]), "gaps.wisdom");
    trd_wisdom_free(&w);
    trd_diag_destroy(d);
}

static void test_wisdom_malformed2(void)
{
    REFUSED(HEAD2 "range allreduce 1 2 0 8192 ring 1 - 0\n"
                  "range allreduce 1 2 4096 65536 rd 1 - 0\nend\n",
            "bad.wisdom:10:21: error: allreduce 1x2 range [4096, 65536) overlaps [0, 8192) of "
            "line 9");
    REFUSED(HEAD2
            "range allreduce 1 2 4096 - ring 1 - 0\nrange allreduce 1 2 0 100 rd 1 - 0\nend\n",
            "bad.wisdom:10:21: error: allreduce 1x2 range [0, 100) overlaps [4096, -) of line 9");
    REFUSED(HEAD2 "range allreduce 1 2 0 64 ring 1 - 0\nrange bcast 1 2 0 - mpi 1 - 0\n"
                  "range allreduce 1 2 128 - rd 1 - 0\nend\n",
            "bad.wisdom:11:7: error: allreduce 1x2 was measured already (line 9)");
    REFUSED(HEAD2 "range allreduce 1 2 0 4096 ring 1 - 0\ncheck 4096 ring 1 rd 2 3 0 kept\nend\n",
            "bad.wisdom:10:7: error: check at 4096 B lies outside its range [0, 4096) of line 9");
    REFUSED(HEAD2 "range allreduce 1 2 64 - ring 1 - 0\ncheck 8 ring 1 rd 2 3 0 kept\nend\n",
            "bad.wisdom:10:7: error: check at 8 B lies outside its range [64, -) of line 9");
    REFUSED(HEAD2 "range allreduce 1 2 0 4096 ring 1 - 0\ncheck 100 ring 1 rd 2 3 0 better\nend\n",
            "bad.wisdom:10:27: error: expected a verdict (kept, model or mpi), got 'better'");
    REFUSED(HEAD2 "range allreduce 1 2 0 4096 ring 1 - 0\ncheck 100 ring 1 rd 2 3 -1 kept\nend\n",
            "bad.wisdom:10:25: error: expected a relative noise (0 or more), got '-1'");
    REFUSED(HEAD2 "range allreduce 1 2 0 4096 ring 1 - 0\ncheck 100 model 1 rd 2 3 0 kept\nend\n",
            "bad.wisdom:10:11: error: expected an algorithm of allreduce (nap, ring, rd, "
            "rabenseifner, smp, hring, flex, rm, shm, shm:rx, shm:tree, shm:cyclic, shm:socket, "
            "shm:direct, repro, mpi), got 'model'");
    REFUSED(HEAD2 "range allreduce 1 2 0 4096 ring 1 - 0\ncheck 100 ring 1 rd 2 3 0 kept x\nend\n",
            "bad.wisdom:10:32: error: expected the end of the line, got 'x'");
    REFUSED(HEAD2 "check 100 ring 1 rd 2 3 0 kept\nend\n",
            "bad.wisdom:9:1: error: expected a 'range' line before its 'check' lines");
    REFUSED(HEAD "range allreduce 1 2 0 - ring 1 - 0\ncheck 100 ring 1 rd 2 3 0 kept\nend\n",
            "bad.wisdom:10:1: error: check lines need wisdom version 2, this file is version 1");
    REFUSED(HEAD2 "range allreduce 1 2 0 4096 ring 1 - 0\n"
                  "check 1 ring 1 rd 2 3 0 kept\ncheck 2 ring 1 rd 2 3 0 kept\n"
                  "check 3 ring 1 rd 2 3 0 kept\ncheck 4 ring 1 rd 2 3 0 kept\n"
                  "check 5 ring 1 rd 2 3 0 kept\nend\n",
            "bad.wisdom:14:1: error: allreduce 1x2 range [0, 4096) of line 9 has more than 4 "
            "check lines");
    /* "model" is a range's algorithm of version 2 only, and no runner-up */
    REFUSED(HEAD "range allreduce 1 2 0 - model 1 - 0\nend\n",
            "bad.wisdom:9:25: error: expected an algorithm of allreduce (nap, ring, rd, "
            "rabenseifner, smp, hring, flex, rm, shm, shm:rx, shm:tree, shm:cyclic, shm:socket, "
            "shm:direct, repro, mpi), got 'model'");
    REFUSED(HEAD2 "range allreduce 1 2 0 - mpi 1 model 0\nend\n",
            "bad.wisdom:9:31: error: expected an algorithm of allreduce (nap, ring, rd, "
            "rabenseifner, smp, hring, flex, rm, shm, shm:rx, shm:tree, shm:cyclic, shm:socket, "
            "shm:direct, repro, mpi) or '-', got 'model'");
    REFUSED(HEAD2 "range bcast 1 2 0 - rabenseifner 1 - 0\nend\n",
            "bad.wisdom:9:21: error: expected an algorithm of bcast (shm, binomial, "
            "scatter_allgather, mpi) or 'model', got 'rabenseifner'");
    REFUSED(HEAD2 "rnage allreduce 1 2 0 - ring 1 - 0\nend\n",
            "bad.wisdom:9:1: error: expected 'range', 'check' or 'end', got 'rnage'");
}

/* ---- Merge ------------------------------------------------------------------- */

/* The files texts[0..n) (named names[i]) read and merged into out. */
static int merge_texts(const char *const *names, const char *const *texts, int n, trd_wisdom *out,
                       trd_wisdom_conflict **conf, int *nconf, trd_diag *d)
{
    trd_wisdom in[4];
    CU_ASSERT_FATAL(n <= 4);
    for (int i = 0; i < n; i++)
        read_ok(names[i], texts[i], &in[i], d);
    int rc = trd_wisdom_merge(in, n, out, conf, nconf, d);
    for (int i = 0; i < n; i++)
        trd_wisdom_free(&in[i]);
    return rc;
}

/* Range i of w is [from, below) of alg from file src, line. */
static void range_is(int at, const trd_wisdom *w, int i, int coll, size_t from, size_t below,
                     const char *alg, int src, int line)
{
    CU_ASSERT_FATAL(i < w->nranges);
    const trd_wisdom_range *r = &w->range[i];
    int ok = r->coll == coll && r->from == from && r->below == below && !strcmp(r->alg, alg) &&
             r->src == src && r->line == line;
    if (!ok)
        printf("\ntest_wisdom.c:%d: range %d is %s [%zu, %zu) %s from %d:%d\n", at, i,
               trd_coll_name(r->coll), r->from, r->below, r->alg, r->src, r->line);
    CU_ASSERT(ok);
}

#define RANGE_IS(...) range_is(__LINE__, __VA_ARGS__)

static void test_wisdom_merge_disjoint(void)
{
    static const char *const names[] = {"a.wisdom", "b.wisdom"};
    static const char *const texts[] = {
        HEAD "range allreduce 1 2 0 - ring 1 - 0\nend\n",
        HEAD_AT("2", "MPICH", "2026-11-28T00:00:00Z") "range allreduce 2 1 4096 - rd 1 - 0\n"
                                                      "range bcast 2 1 0 - binomial 2 - 0\nend\n"};
    trd_wisdom w;
    trd_wisdom_conflict *conf;
    int nconf;
    trd_diag *d = NULL;
    CU_ASSERT_EQUAL_FATAL(trd_diag_create(&d), TRD_OK);
    CU_ASSERT_EQUAL_FATAL(merge_texts(names, texts, 2, &w, &conf, &nconf, d), TRD_OK);
    CU_ASSERT_EQUAL(trd_diag_count(d), 0);
    CU_ASSERT_EQUAL(w.version, 2);
    CU_ASSERT_EQUAL_FATAL(w.nranges, 3);
    RANGE_IS(&w, 0, TRD_COLL_ALLREDUCE, 0, SIZE_MAX, "ring", 0, 9);
    RANGE_IS(&w, 1, TRD_COLL_ALLREDUCE, 4096, SIZE_MAX, "rd", 1, 9);
    CU_ASSERT_EQUAL(w.range[1].nnodes, 2);
    RANGE_IS(&w, 2, TRD_COLL_BCAST, 0, SIZE_MAX, "binomial", 1, 10);
    CU_ASSERT_EQUAL(nconf, 0);
    CU_ASSERT_PTR_NULL(conf);
    CU_ASSERT_EQUAL(w.nsources, 2);
    CU_ASSERT_STRING_EQUAL(trd_wisdom_range_file(&w, &w.range[2]), "b.wisdom");
    CU_ASSERT_STRING_EQUAL(w.source[0].date, "2026-11-27T00:30:00Z");
    CU_ASSERT_STRING_EQUAL(w.date, "2026-11-28T00:00:00Z");
    trd_wisdom_free(&w);

    /* one file alone: itself */
    CU_ASSERT_EQUAL_FATAL(merge_texts(names + 1, texts + 1, 1, &w, &conf, &nconf, d), TRD_OK);
    CU_ASSERT_EQUAL_FATAL(w.nranges, 2);
    RANGE_IS(&w, 0, TRD_COLL_ALLREDUCE, 4096, SIZE_MAX, "rd", 0, 9);
    RANGE_IS(&w, 1, TRD_COLL_BCAST, 0, SIZE_MAX, "binomial", 0, 10);
    CU_ASSERT_STRING_EQUAL(w.file, "b.wisdom");
    CU_ASSERT_EQUAL(nconf, 0);
    trd_wisdom_free(&w);
    trd_diag_destroy(d);
}

static void test_wisdom_merge_newer(void)
{
    /* the newer file (given first) inside the older one's first range:
     * the older range split in two around it, its check points kept on
     * their side; the older one's second range clipped from below */
    static const char *const names[] = {"new.wisdom", "old.wisdom"};
    static const char *const texts[] = {
        HEAD_AT("2", "MPICH",
                "2026-11-29T10:00:00Z") "range allreduce 1 2 4096 131072 rm:a2 2 - 0\n"
                                        "check 8192 rm:a2 2 ring 3 4 0 kept\nend\n",
        HEAD_AT("2", "MPICH", "2026-11-28T09:00:00Z") "range allreduce 1 2 0 65536 ring 1 - 0\n"
                                                      "check 1000 ring 1 rd 2 3 0 kept\n"
                                                      "check 5000 ring 1 rd 2 3 0 kept\n"
                                                      "check 40000 ring 1 rd 2 3 0 kept\n"
                                                      "range allreduce 1 2 65536 - rd 5 - 0\n"
                                                      "end\n"};
    trd_wisdom w;
    trd_wisdom_conflict *conf;
    int nconf;
    trd_diag *d = NULL;
    CU_ASSERT_EQUAL_FATAL(trd_diag_create(&d), TRD_OK);
    CU_ASSERT_EQUAL_FATAL(merge_texts(names, texts, 2, &w, &conf, &nconf, d), TRD_OK);
    CU_ASSERT_EQUAL_FATAL(w.nranges, 3);
    RANGE_IS(&w, 0, TRD_COLL_ALLREDUCE, 0, 4096, "ring", 1, 9);
    RANGE_IS(&w, 1, TRD_COLL_ALLREDUCE, 4096, 131072, "rm:a2", 0, 9);
    RANGE_IS(&w, 2, TRD_COLL_ALLREDUCE, 131072, SIZE_MAX, "rd", 1, 13);
    CU_ASSERT_EQUAL_FATAL(w.range[0].ncheck, 1);
    CU_ASSERT_EQUAL(w.range[0].check[0].bytes, 1000);
    CU_ASSERT_EQUAL_FATAL(w.range[1].ncheck, 1);
    CU_ASSERT_EQUAL(w.range[1].check[0].bytes, 8192);
    CU_ASSERT_EQUAL(w.range[2].ncheck, 0);
    /* ring and rd against rm:a2, where rm:a2 is used */
    CU_ASSERT_EQUAL_FATAL(nconf, 2);
    CU_ASSERT_EQUAL(conf[0].coll, TRD_COLL_ALLREDUCE);
    CU_ASSERT_EQUAL(conf[0].nnodes, 1);
    CU_ASSERT_EQUAL(conf[0].ppn, 2);
    CU_ASSERT_EQUAL(conf[0].from, 4096);
    CU_ASSERT_EQUAL(conf[0].below, 65536);
    CU_ASSERT_EQUAL(conf[0].newer_src, 0);
    CU_ASSERT_EQUAL(conf[0].newer_line, 9);
    CU_ASSERT_STRING_EQUAL(conf[0].newer_alg, "rm:a2");
    CU_ASSERT_EQUAL(conf[0].older_src, 1);
    CU_ASSERT_EQUAL(conf[0].older_line, 9);
    CU_ASSERT_STRING_EQUAL(conf[0].older_alg, "ring");
    CU_ASSERT_EQUAL(conf[1].from, 65536);
    CU_ASSERT_EQUAL(conf[1].below, 131072);
    CU_ASSERT_EQUAL(conf[1].older_line, 13);
    CU_ASSERT_STRING_EQUAL(conf[1].older_alg, "rd");
    free(conf);
    trd_wisdom_free(&w);

    /* the newer one wholly inside: the older range split in two */
    static const char *const texts2[] = {
        HEAD_AT("2", "MPICH", "2026-11-28T09:00:00Z") "range allreduce 1 2 0 - ring 1 - 0\nend\n",
        HEAD_AT("2", "MPICH", "2026-11-29T10:00:00Z") "range allreduce 1 2 4096 8192 rd 2 - 0\n"
                                                      "end\n"};
    CU_ASSERT_EQUAL_FATAL(merge_texts(names, texts2, 2, &w, &conf, &nconf, d), TRD_OK);
    CU_ASSERT_EQUAL_FATAL(w.nranges, 3);
    RANGE_IS(&w, 0, TRD_COLL_ALLREDUCE, 0, 4096, "ring", 0, 9);
    RANGE_IS(&w, 1, TRD_COLL_ALLREDUCE, 4096, 8192, "rd", 1, 9);
    RANGE_IS(&w, 2, TRD_COLL_ALLREDUCE, 8192, SIZE_MAX, "ring", 0, 9);
    CU_ASSERT_EQUAL_FATAL(nconf, 1);
    CU_ASSERT_EQUAL(conf[0].from, 4096);
    CU_ASSERT_EQUAL(conf[0].below, 8192);
    CU_ASSERT_EQUAL(conf[0].newer_src, 1);
    CU_ASSERT_EQUAL(conf[0].older_src, 0);
    free(conf);
    trd_wisdom_free(&w);

    /* equal dates: the file given later is used */
    static const char *const texts3[] = {HEAD2 "range allreduce 1 2 0 8192 rd 1 - 0\nend\n",
                                         HEAD2 "range allreduce 1 2 4096 - ring 1 - 0\nend\n"};
    CU_ASSERT_EQUAL_FATAL(merge_texts(names, texts3, 2, &w, &conf, &nconf, d), TRD_OK);
    CU_ASSERT_EQUAL_FATAL(w.nranges, 2);
    RANGE_IS(&w, 0, TRD_COLL_ALLREDUCE, 0, 4096, "rd", 0, 9);
    RANGE_IS(&w, 1, TRD_COLL_ALLREDUCE, 4096, SIZE_MAX, "ring", 1, 9);
    CU_ASSERT_EQUAL_FATAL(nconf, 1);
    CU_ASSERT_EQUAL(conf[0].newer_src, 1);
    CU_ASSERT_STRING_EQUAL(conf[0].newer_alg, "ring");
    free(conf);
    trd_wisdom_free(&w);
    CU_ASSERT_EQUAL(trd_diag_count(d), 0);
    trd_diag_destroy(d);
}

static void test_wisdom_merge_same_alg(void)
{
    /* the same algorithm measured again on part of a range: no conflict */
    static const char *const names[] = {"a.wisdom", "b.wisdom"};
    static const char *const texts[] = {
        HEAD2 "range allreduce 1 2 0 - ring 1 - 0\nend\n",
        HEAD_AT("2", "MPICH", "2026-11-28T00:00:00Z") "range allreduce 1 2 100 200 ring 2 - 0\n"
                                                      "range allreduce 1 2 200 300 rd 3 - 0\n"
                                                      "end\n"};
    trd_wisdom w;
    trd_wisdom_conflict *conf;
    int nconf;
    trd_diag *d = NULL;
    CU_ASSERT_EQUAL_FATAL(trd_diag_create(&d), TRD_OK);
    CU_ASSERT_EQUAL_FATAL(merge_texts(names, texts, 2, &w, &conf, &nconf, d), TRD_OK);
    CU_ASSERT_EQUAL_FATAL(w.nranges, 4);
    RANGE_IS(&w, 0, TRD_COLL_ALLREDUCE, 0, 100, "ring", 0, 9);
    RANGE_IS(&w, 1, TRD_COLL_ALLREDUCE, 100, 200, "ring", 1, 9);
    RANGE_IS(&w, 2, TRD_COLL_ALLREDUCE, 200, 300, "rd", 1, 10);
    RANGE_IS(&w, 3, TRD_COLL_ALLREDUCE, 300, SIZE_MAX, "ring", 0, 9);
    CU_ASSERT_EQUAL(w.range[1].us, 2);
    CU_ASSERT_EQUAL_FATAL(nconf, 1); /* rd only */
    CU_ASSERT_EQUAL(conf[0].from, 200);
    CU_ASSERT_EQUAL(conf[0].below, 300);
    CU_ASSERT_STRING_EQUAL(conf[0].newer_alg, "rd");
    CU_ASSERT_STRING_EQUAL(conf[0].older_alg, "ring");
    free(conf);
    trd_wisdom_free(&w);
    trd_diag_destroy(d);
}

static void test_wisdom_merge_mpi(void)
{
    static const char *const names[] = {"a.wisdom", "b.wisdom"};
    static const char *const texts[] = {
        HEAD2 "range allreduce 1 2 0 - ring 1 - 0\nend\n",
        HEAD_AT("2", "Open MPI v5.0.3\\x09x", "2026-11-28T00:00:00Z") "end\n"};
    trd_wisdom w;
    trd_wisdom_conflict *conf;
    int nconf;
    trd_diag *d = NULL;
    CU_ASSERT_EQUAL_FATAL(trd_diag_create(&d), TRD_OK);
    CU_ASSERT_EQUAL(merge_texts(names, texts, 2, &w, &conf, &nconf, d), TRD_ERR_INPUT);
    CU_ASSERT_EQUAL_FATAL(trd_diag_count(d), 1);
    CU_ASSERT_STRING_EQUAL(trd_diag_message(d, 0),
                           "b.wisdom:4:5: error: wisdom measured under 'Open MPI v5.0.3 x', "
                           "a.wisdom under 'MPICH'");
    CU_ASSERT_EQUAL(w.nranges, 0);
    CU_ASSERT_PTR_NULL(w.range);
    CU_ASSERT_PTR_NULL(conf);
    CU_ASSERT_EQUAL(nconf, 0);
    trd_diag_destroy(d);
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
        {"digest", test_wisdom_digest},
        {"round_trip", test_wisdom_round_trip},
        {"stale", test_wisdom_stale},
        {"good_minimal", test_wisdom_good_minimal},
        {"malformed", test_wisdom_malformed},
        {"robust", test_wisdom_robust},
        {"read_file", test_wisdom_read_file},
        {"version1", test_wisdom_version1},
        {"gaps", test_wisdom_gaps},
        {"malformed2", test_wisdom_malformed2},
        {"merge_disjoint", test_wisdom_merge_disjoint},
        {"merge_newer", test_wisdom_merge_newer},
        {"merge_same_alg", test_wisdom_merge_same_alg},
        {"merge_mpi", test_wisdom_merge_mpi},
    };
    return trd_test_main("wisdom", tests, TRD_NTESTS(tests));
}
