/* The checked-in generated machines hold only what is specific to a machine:
 * every generated/<m>/trd_<m>.c is under 400 lines, and no two machines'
 * generated files share a run of more than 30 identical lines (the
 * algorithms live in runtime/algo, not in generated code). */
#include <CUnit/Basic.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "test_util.h"

#define MAX_MACHINES 16
#define MAX_LINES 4096

typedef struct text {
    char name[64];
    char *buf;
    char *line[MAX_LINES];
    int nlines;
} text;

static int read_lines(const char *path, text *t)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return -1;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    rewind(f);
    t->buf = malloc((size_t)n + 1);
    if (!t->buf || fread(t->buf, 1, (size_t)n, f) != (size_t)n) {
        fclose(f);
        return -1;
    }
    fclose(f);
    t->buf[n] = '\0';
    t->nlines = 0;
    for (char *p = t->buf; *p && t->nlines < MAX_LINES;) {
        t->line[t->nlines++] = p;
        char *e = strchr(p, '\n');
        if (!e)
            break;
        *e = '\0';
        p = e + 1;
    }
    return 0;
}

/* The longest run of identical consecutive lines that a and b share. */
static int longest_common_run(const text *a, const text *b)
{
    int *prev = calloc((size_t)b->nlines + 1, sizeof *prev);
    int *cur = calloc((size_t)b->nlines + 1, sizeof *cur), best = 0;
    for (int i = 1; prev && cur && i <= a->nlines; i++) {
        for (int j = 1; j <= b->nlines; j++) {
            cur[j] = strcmp(a->line[i - 1], b->line[j - 1]) == 0 ? prev[j - 1] + 1 : 0;
            best = cur[j] > best ? cur[j] : best;
        }
        int *t = prev;
        prev = cur;
        cur = t;
    }
    free(prev);
    free(cur);
    return best;
}

static void test_machine_specific(void)
{
    static text m[MAX_MACHINES];
    int n = 0;
    char dir[TRD_TEST_PATH_MAX];
    snprintf(dir, sizeof dir, "%s", trd_test_path("generated"));
    DIR *d = opendir(dir);
    CU_ASSERT_PTR_NOT_NULL_FATAL(d);
    struct dirent *e;
    while ((e = readdir(d)) && n < MAX_MACHINES) {
        char path[2 * TRD_TEST_PATH_MAX];
        struct stat st;
        if (e->d_name[0] == '.' || strlen(e->d_name) >= sizeof m[n].name)
            continue;
        snprintf(path, sizeof path, "%s/%s/trd_%s.c", dir, e->d_name, e->d_name);
        if (stat(path, &st) != 0)
            continue;
        memcpy(m[n].name, e->d_name, strlen(e->d_name) + 1); /* shorter than name, above */
        CU_ASSERT_EQUAL_FATAL(read_lines(path, &m[n]), 0);
        if (m[n].nlines >= 400)
            fprintf(stderr, "\n  generated/%s/trd_%s.c has %d lines\n", m[n].name, m[n].name,
                    m[n].nlines);
        CU_ASSERT(m[n].nlines < 400);
        n++;
    }
    closedir(d);
    CU_ASSERT(n >= 2);
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++) {
            int run = longest_common_run(&m[i], &m[j]);
            fprintf(stderr, "\n  %s / %s: longest shared run %d lines", m[i].name, m[j].name, run);
            CU_ASSERT(run <= 30);
        }
    for (int i = 0; i < n; i++)
        free(m[i].buf);
}

int main(void)
{
    static const trd_test_case tests[] = {{"machine_specific", test_machine_specific}};
    return trd_test_main("generated", tests, TRD_NTESTS(tests));
}
