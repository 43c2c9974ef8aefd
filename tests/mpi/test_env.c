/* The numeric TREEDUCE_* variables, parsed strictly by one parser
 * (trd_env_number, and the numbers of TREEDUCE_BREAK): the whole value a
 * decimal number in range, else the default, with a report on stderr once
 * per variable and process, at any TREEDUCE_VERBOSE.
 *
 * Run with one rank and TREEDUCE_VERBOSE unset (the test sets it).  Checks
 * the values returned and the exact lines on stderr, captured.  The last line
 * reads "N passed, M failed"; the exit status is non-zero if any check
 * failed.
 */
#include "rt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capture.h"

static long passed, failed;

static void check(int ok, const char *what)
{
    if (ok) {
        passed++;
    } else {
        failed++;
        printf("FAIL %s\n", what);
    }
}

/* TREEDUCE_TEST_<name>=value between 0 and 100 (default 7) gives want, and
 * reports it (bad) or not. */
static void number(const char *name, const char *value, long long want, int bad)
{
    char var[64], line[300], what[400];
    snprintf(var, sizeof var, "TREEDUCE_TEST_%s", name);
    if (value)
        setenv(var, value, 1);
    capture_start();
    long long got = trd_env_number(var, 0, 100, 7);
    long long again = trd_env_number(var, 0, 100, 7);
    char *text = capture_end();
    snprintf(what, sizeof what, "%s='%s' gives %lld (got %lld, then %lld)", var,
             value ? value : "(unset)", want, got, again);
    check(got == want && again == want, what);
    snprintf(line, sizeof line,
             "treeduce: %s='%s' is not a whole number from 0 to 100; using the default\n", var,
             value ? value : "");
    snprintf(what, sizeof what, "%s='%s' reported %s", var, value ? value : "(unset)",
             bad ? "once" : "never");
    check(bad ? strcmp(text, line) == 0 : *text == '\0', what);
    free(text);
}

int main(void)
{
    number("UNSET", NULL, 7, 0);
    number("EMPTY", "", 7, 0);
    number("ZERO", "0", 0, 0);
    number("MAX", "100", 100, 0);
    number("PLAIN", "42", 42, 0);
    number("LEADING_ZEROS", "0042", 42, 0);
    number("WORD", "garbage", 7, 1);
    number("TRAILING", "12x", 7, 1);
    number("UNIT", "12k", 7, 1);
    number("SPACE", " 12", 7, 1);
    number("TRAILING_SPACE", "12 ", 7, 1);
    number("SIGN", "+12", 7, 1);
    number("NEGATIVE", "-1", 7, 1);
    number("HEX", "0x10", 7, 1);
    number("ABOVE", "101", 7, 1);
    number("OVERFLOW", "99999999999999999999999999", 7, 1);

    /* TREEDUCE_VERBOSE: 0 to 2, else 0 and said at once */
    setenv("TREEDUCE_VERBOSE", "yes", 1);
    capture_start();
    int verbose = trd_env_verbose();
    char *text = capture_end();
    check(verbose == 0, "TREEDUCE_VERBOSE=yes gives 0");
    check(strcmp(text, "treeduce: TREEDUCE_VERBOSE='yes' is not a whole number from 0 to 2; "
                       "using the default\n") == 0,
          "TREEDUCE_VERBOSE=yes reported");
    free(text);

    /* TREEDUCE_BREAK=ALG:RANK:OP */
    char alg[64];
    int brank = -1;
    size_t op = 0;
    setenv("TREEDUCE_BREAK", "shm:rx:1:22", 1);
    check(trd_env_break(alg, sizeof alg, &brank, &op) == 1 && strcmp(alg, "shm:rx") == 0 &&
              brank == 1 && op == 22,
          "TREEDUCE_BREAK=shm:rx:1:22");
    const char *const bad_breaks[] = {"rd:1", "rd:1:2x", "rd:-1:2", ":1:2", "rd:1:"};
    for (int i = 0; i < 5; i++) {
        setenv("TREEDUCE_BREAK", bad_breaks[i], 1);
        capture_start();
        int set = trd_env_break(alg, sizeof alg, &brank, &op);
        text = capture_end();
        char what[100];
        snprintf(what, sizeof what, "TREEDUCE_BREAK=%s refused", bad_breaks[i]);
        check(set == 0, what);
        if (i == 0) /* said once per process */
            check(strcmp(text, "treeduce: TREEDUCE_BREAK='rd:1' is not ALG:RANK:OP (RANK and OP "
                               "whole numbers); using the default\n") == 0,
                  "TREEDUCE_BREAK=rd:1 reported");
        else
            check(*text == '\0', "TREEDUCE_BREAK reported once");
        free(text);
    }
    printf("%ld passed, %ld failed\n", passed, failed);
    return failed > 0;
}
