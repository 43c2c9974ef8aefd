/* Export of the plan as MPICH CSEL JSON and Open MPI coll/tuned rules: the
 * files parse (a small JSON checker; the Open MPI classic reader's rules),
 * and looking a (communicator, size) up in them the way MPICH's csel.c and
 * Open MPI's coll_tuned_dynamic_rules.c do gives the mapped algorithm of the
 * plan's choice at the start and end of every range; exact bytes for the
 * 4 x 2 testbed. */
#include <CUnit/Basic.h>
#include <ctype.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export.h"
#include "plan.h"
#include "test_util.h"
#include "topo.h"

/* ---- helpers -------------------------------------------------------------------- */

static char *capture(int json, const trd_machine_plan *p, const char *name)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    int rc = json ? trd_export_csel_json(f, p, name) : trd_export_ompi_rules(f, p, name);
    CU_ASSERT_EQUAL(rc, 0);
    fclose(f);
    return buf;
}

static trd_machine_plan *plan_of(const char *rel)
{
    static trd_machine_plan p;
    trd_diag *d = NULL;
    trd_topo_t t = trd_test_load(rel, &d);
    trd_plan_build(t, &p);
    trd_topo_destroy(t);
    trd_diag_destroy(d);
    return &p;
}

static const trd_algo *model(const char *name)
{
    return trd_algo_find(TRD_COLL_ALLREDUCE, name, strlen(name));
}

/* ---- a minimal JSON reader: objects of objects (all CSEL uses) ------------------- */

typedef struct jnode {
    char *key;
    int n;
    struct jnode *kid;
} jnode;

static const char *ws(const char *s)
{
    while (*s == ' ' || *s == '\n' || *s == '\t' || *s == '\r')
        s++;
    return s;
}

/* Parse an object at s into o (its members as o->kid[]); NULL on a syntax
 * error.  Strings without escapes (CSEL keys have none). */
static const char *jobject(const char *s, jnode *o)
{
    s = ws(s);
    if (*s++ != '{')
        return NULL;
    o->n = 0;
    o->kid = NULL;
    s = ws(s);
    if (*s == '}')
        return s + 1;
    for (;;) {
        s = ws(s);
        if (*s++ != '"')
            return NULL;
        const char *e = strchr(s, '"');
        if (!e || memchr(s, '\\', (size_t)(e - s)))
            return NULL;
        o->kid = realloc(o->kid, (size_t)(o->n + 1) * sizeof *o->kid);
        jnode *k = &o->kid[o->n++];
        k->key = strndup(s, (size_t)(e - s));
        s = ws(e + 1);
        if (*s++ != ':')
            return NULL;
        if (!(s = jobject(s, k)))
            return NULL;
        s = ws(s);
        if (*s == ',') {
            s++;
            continue;
        }
        if (*s == '}')
            return s + 1;
        return NULL;
    }
}

static void jfree(jnode *o)
{
    for (int i = 0; i < o->n; i++) {
        jfree(&o->kid[i]);
        free(o->kid[i].key);
    }
    free(o->kid);
}

static const jnode *jget(const jnode *o, const char *key)
{
    for (int i = 0; i < o->n; i++)
        if (!strcmp(o->kid[i].key, key))
            return &o->kid[i];
    return NULL;
}

/* A communicator and a call, as csel.c sees them. */
typedef struct {
    int size, nnodes, hierarchy, commutative, builtin;
    long bytes, count;
} call;

static int starts(const char *s, const char *p, long *v)
{
    size_t n = strlen(p);
    if (strncmp(s, p, n))
        return 0;
    if (v)
        *v = atol(s + n);
    return 1;
}

/* MPIR_Csel_search over the members of o: the first operator that holds is
 * followed; an "algorithm=" member is the result.  NULL: no rule (MPICH
 * would assert), or a key MPICH 4.0 does not know. */
static const char *csel_eval(const jnode *o, const call *c)
{
    for (int i = 0; i < o->n; i++) {
        const char *k = o->kid[i].key;
        long v;
        int pof2 = 1, hold;
        while (pof2 * 2 <= c->size)
            pof2 *= 2;
        if (starts(k, "algorithm=", NULL))
            return k + strlen("algorithm=");
        if (!strcmp(k, "comm_type=intra"))
            hold = 1;
        else if (!strcmp(k, "comm_type=inter"))
            hold = 0;
        else if (!strcmp(k, "is_commutative=yes") || !strcmp(k, "is_commutative=no"))
            hold = c->commutative == !strcmp(k, "is_commutative=yes");
        else if (!strcmp(k, "is_op_built_in=yes") || !strcmp(k, "is_op_built_in=no"))
            hold = c->builtin == !strcmp(k, "is_op_built_in=yes");
        else if (!strcmp(k, "comm_hierarchy=parent"))
            hold = c->hierarchy;
        else if (!strcmp(k, "comm_size=node_comm_size"))
            hold = c->hierarchy && c->nnodes == 1;
        else if (starts(k, "comm_size<=", &v))
            hold = c->size <= v;
        else if (starts(k, "comm_avg_ppn<=", &v))
            hold = c->hierarchy && c->size <= v * c->nnodes;
        else if (starts(k, "avg_msg_size<=", &v))
            hold = c->bytes <= v;
        else if (!strcmp(k, "count<pow2"))
            hold = c->count < pof2;
        else if (!strcmp(k, "avg_msg_size=any") || !strcmp(k, "comm_hierarchy=any") ||
                 !strcmp(k, "comm_size=any") || !strcmp(k, "count=any") ||
                 !strcmp(k, "total_msg_size=any"))
            hold = 1; /* the "=any" keys MPICH 4.0.2 accepts */
        else
            return NULL;
        if (hold)
            return csel_eval(&o->kid[i], c);
    }
    return NULL;
}

/* What MPICH runs for mapped algorithm a, given the guards the file adds. */
static const char *csel_expect(enum trd_export_mpich_alg a, const call *c)
{
    int pof2 = 1;
    while (pof2 * 2 <= c->size)
        pof2 *= 2;
    if (a == TRD_MPICH_RSA && c->count < pof2)
        a = TRD_MPICH_RD;
    if (a == TRD_MPICH_SMP && !c->hierarchy)
        a = TRD_MPICH_RD;
    return trd_export_mpich_name(a);
}

/* Every collective MPICH 4.x selects through the file is present, every
 * value is an object, and the file is well-formed JSON with one newline at
 * the end. */
static void check_csel_complete(const char *text, jnode *root)
{
    static const char *const colls[] = {"allgather",
                                        "allgatherv",
                                        "allreduce",
                                        "alltoall",
                                        "alltoallv",
                                        "alltoallw",
                                        "barrier",
                                        "bcast",
                                        "exscan",
                                        "gather",
                                        "gatherv",
                                        "reduce",
                                        "reduce_scatter",
                                        "reduce_scatter_block",
                                        "scan",
                                        "scatter",
                                        "scatterv",
                                        "neighbor_allgather",
                                        "neighbor_allgatherv",
                                        "neighbor_alltoall",
                                        "neighbor_alltoallv",
                                        "neighbor_alltoallw"};
    const char *end = jobject(text, root);
    CU_ASSERT_PTR_NOT_NULL_FATAL(end);
    CU_ASSERT_STRING_EQUAL(end, "\n");
    CU_ASSERT_EQUAL(root->n, 44);
    char key[64];
    for (size_t i = 0; i < sizeof colls / sizeof colls[0]; i++) {
        snprintf(key, sizeof key, "collective=%s", colls[i]);
        CU_ASSERT_PTR_NOT_NULL(jget(root, key));
        snprintf(key, sizeof key, "collective=i%s", colls[i]);
        CU_ASSERT_PTR_NOT_NULL(jget(root, key));
    }
    /* the first key is allreduce (the exact-bytes test relies on it) */
    CU_ASSERT_STRING_EQUAL(root->kid[0].key, "collective=allreduce");
}

/* Check one shape's ranges in the CSEL file at the start and end of each. */
static void check_csel_shape(const jnode *allreduce, int nnodes, int ppn, const trd_choice *ch,
                             int n)
{
    size_t from = 0;
    for (int i = 0; i < n; i++) {
        size_t to = ch[i].below == SIZE_MAX ? from * 4 + 1024 : ch[i].below - 1;
        size_t at[2] = {from, to};
        for (int e = 0; e < 2; e++) {
            if (at[e] > (size_t)INT_MAX)
                continue; /* MPICH thresholds are ints: not representable */
            call c = {nnodes * ppn, nnodes, 1, 1, 1, (long)at[e], (long)at[e] / 8};
            const char *got = csel_eval(allreduce, &c);
            const char *want = csel_expect(trd_export_mpich_alg(ch[i].alg), &c);
            CU_ASSERT_PTR_NOT_NULL(got);
            if (!got || strcmp(got, want)) {
                printf("\n%d x %d, %zu B: got %s, want %s (%s)\n", nnodes, ppn, at[e],
                       got ? got : "(none)", want, ch[i].alg->name);
                CU_FAIL("CSEL lookup");
            }
            /* a non-commutative op always gets recursive doubling */
            c.commutative = 0;
            got = csel_eval(allreduce, &c);
            CU_ASSERT(got && !strcmp(got, trd_export_mpich_name(TRD_MPICH_RD)));
        }
        from = ch[i].below;
    }
}

/* ---- the Open MPI classic reader ---------------------------------------------------- */

typedef struct {
    long comsize;
    int n;
    long msg[TRD_MAX_CHOICES], alg[TRD_MAX_CHOICES];
} ompi_com;

/* ompi_coll_base_file_getnext_long: numbers, '#' to the end of the line. */
static int next_long(const char **s, long *v)
{
    for (;;) {
        while (**s && isspace((unsigned char)**s))
            (*s)++;
        if (!**s)
            return -1;
        if (**s == '#') {
            while (**s && **s != '\n')
                (*s)++;
            continue;
        }
        char *e;
        *v = strtol(*s, &e, 0);
        if (e == *s)
            return -1;
        *s = e;
        return 0;
    }
}

/* Read the rules for collective 2 (ALLREDUCE); the number of comm rules, -1
 * on a format error (as coll_tuned_dynamic_file.c would reject it). */
static int ompi_read(const char *text, ompi_com *com, int max)
{
    long ncol, id, ncom, nmsg, v[4];
    const char *s = text;
    if (next_long(&s, &ncol) || ncol != 1 || next_long(&s, &id) || id != 2 ||
        next_long(&s, &ncom) || ncom < 1 || ncom > max)
        return -1;
    for (int i = 0; i < ncom; i++) {
        if (next_long(&s, &com[i].comsize) || next_long(&s, &nmsg) || nmsg < 1 ||
            nmsg > TRD_MAX_CHOICES)
            return -1;
        if (i > 0 && com[i].comsize <= com[i - 1].comsize)
            return -1;
        com[i].n = (int)nmsg;
        for (int j = 0; j < nmsg; j++) {
            for (int k = 0; k < 4; k++)
                if (next_long(&s, &v[k]) || v[k] < 0)
                    return -1;
            if ((j == 0 && v[0] != 0) || (j > 0 && v[0] <= com[i].msg[j - 1]))
                return -1; /* first rule from 0, increasing */
            com[i].msg[j] = v[0];
            com[i].alg[j] = v[1];
        }
    }
    long extra;
    return next_long(&s, &extra) == 0 ? -1 : (int)ncom;
}

/* ompi_coll_tuned_get_com_rule_ptr + get_target_method_params (Open MPI 4.x
 * and 5.0: the largest comm size <= the communicator's, else the first; the
 * largest message size <= the message's). */
static long ompi_lookup(const ompi_com *com, int n, long size, long bytes)
{
    const ompi_com *best = &com[0];
    for (int i = 0; i < n && com[i].comsize <= size; i++)
        best = &com[i];
    long alg = best->alg[0];
    for (int j = 0; j < best->n && best->msg[j] <= bytes; j++)
        alg = best->alg[j];
    return alg;
}

static void check_ompi_shape(const ompi_com *com, int ncom, long size, const trd_choice *ch, int n)
{
    size_t from = 0;
    for (int i = 0; i < n; i++) {
        size_t to = ch[i].below == SIZE_MAX ? from * 4 + 1024 : ch[i].below - 1;
        size_t at[2] = {from, to};
        for (int e = 0; e < 2; e++) {
            long got = ompi_lookup(com, ncom, size, (long)at[e]);
            if (got != trd_export_ompi_alg(ch[i].alg)) {
                printf("\n%ld ranks, %zu B: got %ld, want %d (%s)\n", size, at[e], got,
                       trd_export_ompi_alg(ch[i].alg), ch[i].alg->name);
                CU_FAIL("Open MPI lookup");
            }
        }
        from = ch[i].below;
    }
}

/* Both files for the machine rel: complete, and every planned shape (for
 * Open MPI the one with the most ranks per node of each rank count) maps
 * back to the plan. */
static void check_machine(const char *rel)
{
    trd_machine_plan *p = plan_of(rel);
    char *json = capture(1, p, "m"), *rules = capture(0, p, "m");
    char *json2 = capture(1, p, "m"), *rules2 = capture(0, p, "m");
    CU_ASSERT_STRING_EQUAL(json, json2); /* deterministic */
    CU_ASSERT_STRING_EQUAL(rules, rules2);
    jnode root;
    check_csel_complete(json, &root);
    const jnode *ar = jget(&root, "collective=allreduce");
    CU_ASSERT_PTR_NOT_NULL_FATAL(ar);
    ompi_com com[TRD_MAX_SHAPES + 1];
    int ncom = ompi_read(rules, com, TRD_MAX_SHAPES + 1);
    CU_ASSERT_FATAL(ncom > 0);
    /* a one-node machine, or one-node communicators: rd below
     * nap_max_bytes_1node, then ring */
    trd_choice one[2] = {{.below = p->nap_max_bytes_1node, .alg = model("rd")},
                         {.below = SIZE_MAX, .alg = model("ring")}};
    int none = p->nap_max_bytes_1node == SIZE_MAX ? 1 : 2;
    check_csel_shape(ar, 1, p->ppn, one, none);
    if (p->nshapes == 0) {
        CU_ASSERT_EQUAL(ncom, 1);
        check_ompi_shape(com, ncom, p->ppn, one, none);
        check_ompi_shape(com, ncom, 2, one, none);
    }
    int nsizes = 0;
    for (int s = 0; s < p->nshapes; s++) {
        const trd_shape_plan *sp = &p->shape[s];
        check_csel_shape(ar, sp->nnodes, sp->ppn, sp->choice, sp->nchoices);
        /* the Open MPI representative of this rank count */
        long r = (long)sp->nnodes * sp->ppn;
        int rep = s;
        for (int t = 0; t < p->nshapes; t++)
            if ((long)p->shape[t].nnodes * p->shape[t].ppn == r &&
                p->shape[t].ppn > p->shape[rep].ppn)
                rep = t;
        if (rep == s) {
            nsizes++;
            check_ompi_shape(com, ncom, r, sp->choice, sp->nchoices);
        }
    }
    if (p->nshapes > 0)
        CU_ASSERT_EQUAL(ncom, nsizes);
    /* the whole machine is one of the shapes */
    if (p->nnodes > 1)
        check_csel_shape(ar, p->nnodes, p->ppn, p->choice, p->nchoices);
    jfree(&root);
    free(json);
    free(json2);
    free(rules);
    free(rules2);
}

static void test_bluewaters(void)
{
    check_machine("topologies/bluewaters64.topo");
}

static void test_ethernet(void)
{
    check_machine("topologies/ethernet32.topo");
}

static void test_one_node(void)
{
    trd_machine_plan *p = plan_of("tests/data/export_1node.topo");
    CU_ASSERT_EQUAL(p->nshapes, 0);
    check_machine("tests/data/export_1node.topo");
}

/* The mapping table of export.c. */
static void test_mapping(void)
{
    static const struct {
        const char *name;
        enum trd_export_mpich_alg mpich;
        int ompi;
    } want[] = {{"nap", TRD_MPICH_SMP, 3},  {"ring", TRD_MPICH_RSA, 4},
                {"rd", TRD_MPICH_RD, 3},    {"rabenseifner", TRD_MPICH_RSA, 6},
                {"smp", TRD_MPICH_SMP, 3},  {"hring", TRD_MPICH_RSA, 4},
                {"flex", TRD_MPICH_RSA, 6}, {"rm", TRD_MPICH_RD, 3}};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        const trd_algo *a = model(want[i].name);
        CU_ASSERT_PTR_NOT_NULL(a);
        CU_ASSERT_EQUAL(trd_export_mpich_alg(a), want[i].mpich);
        CU_ASSERT_EQUAL(trd_export_ompi_alg(a), want[i].ompi);
    }
    CU_ASSERT_EQUAL(trd_export_mpich_alg(NULL), TRD_MPICH_RD);
    CU_ASSERT_EQUAL(trd_export_ompi_alg(NULL), 3);
    CU_ASSERT_STRING_EQUAL(trd_export_mpich_name(TRD_MPICH_SMP), "MPIR_Allreduce_intra_smp");
}

/* Every Open MPI id the export writes is a registry entry's, named as Open
 * MPI names it, and maps back to that entry. */
static void test_ompi_ids(void)
{
    static const struct {
        enum trd_ompi_allreduce id;
        const char *name;
    } ids[] = {{TRD_OMPI_RECURSIVE_DOUBLING, "recursive_doubling"},
               {TRD_OMPI_RING, "ring"},
               {TRD_OMPI_RABENSEIFNER, "rabenseifner"}};
    for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++) {
        int carried = 0;
        CU_ASSERT_STRING_EQUAL(trd_ompi_allreduce_name(ids[i].id), ids[i].name);
        for (int k = 0; trd_algos[k]; k++)
            if (trd_algos[k]->coll == TRD_COLL_ALLREDUCE && trd_algos[k]->ompi == ids[i].id) {
                CU_ASSERT_EQUAL(trd_export_ompi_alg(trd_algos[k]), ids[i].id);
                carried++;
            }
        CU_ASSERT(carried > 0);
    }
    for (int k = 0; trd_algos[k]; k++)
        if (trd_algos[k]->coll == TRD_COLL_ALLREDUCE && trd_algos[k]->ompi != TRD_OMPI_IGNORE)
            CU_ASSERT_PTR_NOT_NULL(trd_ompi_allreduce_name(trd_algos[k]->ompi));
    CU_ASSERT_PTR_NULL(trd_ompi_allreduce_name(TRD_OMPI_ALLREDUCE_COUNT));
    CU_ASSERT_PTR_NULL(trd_ompi_allreduce_name(-1));
}

/* A write error is reported. */
static void test_write_error(void)
{
    trd_machine_plan *p = plan_of("tests/data/testbed.topo");
    FILE *f = fopen("/dev/full", "w");
    if (!f)
        return; /* no /dev/full here */
    CU_ASSERT_EQUAL(trd_export_csel_json(f, p, "testbed"), TRD_ERR_IO);
    fclose(f);
    f = fopen("/dev/full", "w");
    CU_ASSERT_EQUAL(trd_export_ompi_rules(f, p, "testbed"), TRD_ERR_IO);
    fclose(f);
}

/* ---- exact bytes: tests/data/testbed.topo (4 nodes x 2 cores) ------------------------- */

static void test_testbed_bytes(void)
{
    trd_machine_plan *p = plan_of("tests/data/testbed.topo");
    const trd_algo *rd = model("rd"), *ring = model("ring"), *flex = model("flex"),
                   *rab = model("rabenseifner"), *smp = model("smp"), *hring = model("hring");
    /* the plan this text is written for (the closed forms; the ranks of a node
     * share its link to the switch, and the two leaf switches one uplink
     * each; NAP's steps across them charged for that uplink): 2x1 rd ring;
     * 2x2 rd flex smp hring; 4x1 rd rab ring; 4x2 rd flex smp rab hring */
    CU_ASSERT_EQUAL_FATAL(p->nshapes, 4);
    const trd_shape_plan *s21 = &p->shape[0], *s22 = &p->shape[1], *s41 = &p->shape[2],
                         *s42 = &p->shape[3];
    CU_ASSERT_FATAL(s21->nnodes == 2 && s21->ppn == 1 && s21->nchoices == 2 &&
                    s21->choice[0].alg == rd && s21->choice[1].alg == ring);
    CU_ASSERT_FATAL(s22->nnodes == 2 && s22->ppn == 2 && s22->nchoices == 4 &&
                    s22->choice[0].alg == rd && s22->choice[1].alg == flex &&
                    s22->choice[2].alg == smp && s22->choice[3].alg == hring);
    CU_ASSERT_FATAL(s41->nnodes == 4 && s41->ppn == 1 && s41->nchoices == 3 &&
                    s41->choice[0].alg == rd && s41->choice[1].alg == rab &&
                    s41->choice[2].alg == ring);
    CU_ASSERT_FATAL(s42->nnodes == 4 && s42->ppn == 2 && s42->nchoices == 5 &&
                    s42->choice[0].alg == rd && s42->choice[1].alg == flex &&
                    s42->choice[2].alg == smp && s42->choice[3].alg == rab &&
                    s42->choice[4].alg == hring);
    CU_ASSERT_FATAL(p->nap_max_bytes_1node > 0 && p->nap_max_bytes_1node < SIZE_MAX);

    char want[16384];
    snprintf(
        want, sizeof want,
        "# Open MPI coll/tuned dynamic rules: MPI_Allreduce as treeduce-gen plans it for\n"
        "# machine testbed (4 nodes x 2 cores).  Use with\n"
        "#   --mca coll_tuned_use_dynamic_rules 1 --mca coll_tuned_dynamic_rules_filename FILE\n"
        "# Per communicator size (the rule with the largest size <= the communicator's):\n"
        "# message size in bytes of the whole vector (from), algorithm (3 recursive_doubling,\n"
        "# 4 ring, 6 rabenseifner), fan in/out and segment size (0: defaults).\n"
        "1 # collectives\n"
        "2 # collective id: ALLREDUCE\n"
        "3 # communicator sizes\n"
        "2 # ranks (planned as 2 nodes x 1)\n"
        "2 # message sizes\n"
        "0 3 0 0 # from 0 bytes: recursive_doubling (treeduce rd)\n"
        "%zu 4 0 0 # from %zu bytes: ring (treeduce ring)\n"
        "4 # ranks (planned as 2 nodes x 2)\n"
        "4 # message sizes\n"
        "0 3 0 0 # from 0 bytes: recursive_doubling (treeduce rd)\n"
        "%zu 6 0 0 # from %zu bytes: rabenseifner (treeduce flex)\n"
        "%zu 3 0 0 # from %zu bytes: recursive_doubling (treeduce smp)\n"
        "%zu 4 0 0 # from %zu bytes: ring (treeduce hring)\n"
        "8 # ranks (planned as 4 nodes x 2)\n"
        "5 # message sizes\n"
        "0 3 0 0 # from 0 bytes: recursive_doubling (treeduce rd)\n"
        "%zu 6 0 0 # from %zu bytes: rabenseifner (treeduce flex)\n"
        "%zu 3 0 0 # from %zu bytes: recursive_doubling (treeduce smp)\n"
        "%zu 6 0 0 # from %zu bytes: rabenseifner (treeduce rabenseifner)\n"
        "%zu 4 0 0 # from %zu bytes: ring (treeduce hring)\n",
        s21->choice[0].below, s21->choice[0].below, s22->choice[0].below, s22->choice[0].below,
        s22->choice[1].below, s22->choice[1].below, s22->choice[2].below, s22->choice[2].below,
        s42->choice[0].below, s42->choice[0].below, s42->choice[1].below, s42->choice[1].below,
        s42->choice[2].below, s42->choice[2].below, s42->choice[3].below, s42->choice[3].below);
    char *rules = capture(0, p, "testbed");
    CU_ASSERT_STRING_EQUAL(rules, want);
    if (strcmp(rules, want))
        printf("\ngot:\n%s\nwant:\n%s\n", rules, want);
    free(rules);

    /* MPICH's selection up to the first collective after allreduce */
    snprintf(want, sizeof want,
             "{\n"
             "  \"collective=allreduce\": {\n"
             "    \"comm_type=intra\": {\n"
             "      \"is_commutative=no\": {\n"
             "        \"algorithm=MPIR_Allreduce_intra_recursive_doubling\": {}\n"
             "      },\n"
             "      \"is_commutative=yes\": {\n"
             "        \"comm_size=node_comm_size\": {\n"
             "          \"avg_msg_size<=%zu\": {\n"
             "            \"algorithm=MPIR_Allreduce_intra_recursive_doubling\": {}\n"
             "          },\n"
             "          \"avg_msg_size=any\": {\n"
             "            \"is_op_built_in=yes\": {\n"
             "              \"count<pow2\": {\n"
             "                \"algorithm=MPIR_Allreduce_intra_recursive_doubling\": {}\n"
             "              },\n"
             "              \"count=any\": {\n"
             "                \"algorithm=MPIR_Allreduce_intra_reduce_scatter_allgather\": {}\n"
             "              }\n"
             "            },\n"
             "            \"is_op_built_in=no\": {\n"
             "              \"algorithm=MPIR_Allreduce_intra_recursive_doubling\": {}\n"
             "            }\n"
             "          }\n"
             "        },\n"
             "        \"comm_size<=3\": {\n"
             "          \"avg_msg_size<=%zu\": {\n"
             "            \"algorithm=MPIR_Allreduce_intra_recursive_doubling\": {}\n"
             "          },\n"
             "          \"avg_msg_size=any\": {\n"
             "            \"is_op_built_in=yes\": {\n"
             "              \"count<pow2\": {\n"
             "                \"algorithm=MPIR_Allreduce_intra_recursive_doubling\": {}\n"
             "              },\n"
             "              \"count=any\": {\n"
             "                \"algorithm=MPIR_Allreduce_intra_reduce_scatter_allgather\": {}\n"
             "              }\n"
             "            },\n"
             "            \"is_op_built_in=no\": {\n"
             "              \"algorithm=MPIR_Allreduce_intra_recursive_doubling\": {}\n"
             "            }\n"
             "          }\n"
             "        },\n"
             "        \"comm_size<=7\": {\n"
             "          \"comm_avg_ppn<=1\": {\n"
             "            \"avg_msg_size<=%zu\": {\n"
             "              \"algorithm=MPIR_Allreduce_intra_recursive_doubling\": {}\n"
             "            },\n"
             "            \"avg_msg_size=any\": {\n"
             "              \"is_op_built_in=yes\": {\n"
             "                \"count<pow2\": {\n"
             "                  \"algorithm=MPIR_Allreduce_intra_recursive_doubling\": {}\n"
             "                },\n"
             "                \"count=any\": {\n"
             "                  \"algorithm=MPIR_Allreduce_intra_reduce_scatter_allgather\": {}\n"
             "                }\n"
             "              },\n"
             "              \"is_op_built_in=no\": {\n"
             "                \"algorithm=MPIR_Allreduce_intra_recursive_doubling\": {}\n"
             "              }\n"
             "            }\n"
             "          },\n"
             "          \"comm_hierarchy=any\": {\n"
             "            \"avg_msg_size<=%zu\": {\n"
             "              \"algorithm=MPIR_Allreduce_intra_recursive_doubling\": {}\n"
             "            },\n"
             "            \"avg_msg_size<=%zu\": {\n"
             "              \"is_op_built_in=yes\": {\n"
             "                \"count<pow2\": {\n"
             "                  \"algorithm=MPIR_Allreduce_intra_recursive_doubling\": {}\n"
             "                },\n"
             "                \"count=any\": {\n"
             "                  \"algorithm=MPIR_Allreduce_intra_reduce_scatter_allgather\": {}\n"
             "                }\n"
             "              },\n"
             "              \"is_op_built_in=no\": {\n"
             "                \"algorithm=MPIR_Allreduce_intra_recursive_doubling\": {}\n"
             "              }\n"
             "            },\n"
             "            \"avg_msg_size<=%zu\": {\n"
             "              \"comm_hierarchy=parent\": {\n"
             "                \"algorithm=MPIR_Allreduce_intra_smp\": {}\n"
             "              },\n"
             "              \"comm_hierarchy=any\": {\n"
             "                \"algorithm=MPIR_Allreduce_intra_recursive_doubling\": {}\n"
             "              }\n"
             "            },\n"
             "            \"avg_msg_size=any\": {\n"
             "              \"is_op_built_in=yes\": {\n"
             "                \"count<pow2\": {\n"
             "                  \"algorithm=MPIR_Allreduce_intra_recursive_doubling\": {}\n"
             "                },\n"
             "                \"count=any\": {\n"
             "                  \"algorithm=MPIR_Allreduce_intra_reduce_scatter_allgather\": {}\n"
             "                }\n"
             "              },\n"
             "              \"is_op_built_in=no\": {\n"
             "                \"algorithm=MPIR_Allreduce_intra_recursive_doubling\": {}\n"
             "              }\n"
             "            }\n"
             "          }\n"
             "        },\n"
             "        \"comm_size=any\": {\n"
             "          \"avg_msg_size<=%zu\": {\n"
             "            \"algorithm=MPIR_Allreduce_intra_recursive_doubling\": {}\n"
             "          },\n"
             "          \"avg_msg_size<=%zu\": {\n"
             "            \"is_op_built_in=yes\": {\n"
             "              \"count<pow2\": {\n"
             "                \"algorithm=MPIR_Allreduce_intra_recursive_doubling\": {}\n"
             "              },\n"
             "              \"count=any\": {\n"
             "                \"algorithm=MPIR_Allreduce_intra_reduce_scatter_allgather\": {}\n"
             "              }\n"
             "            },\n"
             "            \"is_op_built_in=no\": {\n"
             "              \"algorithm=MPIR_Allreduce_intra_recursive_doubling\": {}\n"
             "            }\n"
             "          },\n"
             "          \"avg_msg_size<=%zu\": {\n"
             "            \"comm_hierarchy=parent\": {\n"
             "              \"algorithm=MPIR_Allreduce_intra_smp\": {}\n"
             "            },\n"
             "            \"comm_hierarchy=any\": {\n"
             "              \"algorithm=MPIR_Allreduce_intra_recursive_doubling\": {}\n"
             "            }\n"
             "          },\n"
             "          \"avg_msg_size=any\": {\n"
             "            \"is_op_built_in=yes\": {\n"
             "              \"count<pow2\": {\n"
             "                \"algorithm=MPIR_Allreduce_intra_recursive_doubling\": {}\n"
             "              },\n"
             "              \"count=any\": {\n"
             "                \"algorithm=MPIR_Allreduce_intra_reduce_scatter_allgather\": {}\n"
             "              }\n"
             "            },\n"
             "            \"is_op_built_in=no\": {\n"
             "              \"algorithm=MPIR_Allreduce_intra_recursive_doubling\": {}\n"
             "            }\n"
             "          }\n"
             "        }\n"
             "      }\n"
             "    },\n"
             "    \"comm_type=inter\": {\n"
             "      \"algorithm=MPIR_Allreduce_inter_reduce_exchange_bcast\": {}\n"
             "    }\n"
             "  },\n"
             "  \"collective=bcast\": {\n",
             p->nap_max_bytes_1node - 1, s21->choice[0].below - 1, s41->choice[0].below - 1,
             s22->choice[0].below - 1, s22->choice[1].below - 1, s22->choice[2].below - 1,
             s42->choice[0].below - 1, s42->choice[1].below - 1, s42->choice[2].below - 1);
    char *json = capture(1, p, NULL);
    CU_ASSERT_EQUAL(strncmp(json, want, strlen(want)), 0);
    if (strncmp(json, want, strlen(want)))
        printf("\ngot:\n%.*s\nwant:\n%s\n", (int)strlen(want), json, want);
    free(json);
}

int main(void)
{
    static const trd_test_case tests[] = {
        {"mapping table", test_mapping},
        {"Open MPI ids: named and carried by the registry", test_ompi_ids},
        {"bluewaters64: both files map back to the plan", test_bluewaters},
        {"ethernet32: both files map back to the plan", test_ethernet},
        {"one node: a single size rule", test_one_node},
        {"testbed: exact bytes", test_testbed_bytes},
        {"write errors", test_write_error},
    };
    return trd_test_main("export", tests, TRD_NTESTS(tests));
}
