/* Environment switches and fallback notes.  Safe under MPI_THREAD_MULTIPLE:
 * switches are read once however many threads make their first call at once,
 * and each note is printed once per process, whole. */
#include "rt.h"

#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int env_flag(const char *name)
{
    const char *v = getenv(name);
    return v && *v && strcmp(v, "0") != 0 && strcmp(v, "no") != 0;
}

/* Distinct notes remembered: notes are once per routine and reason, and
 * reports once per variable. */
#define TRD_MAX_NOTES 256

/* Notes are printed under one lock: two threads neither both print a note
 * nor interleave their lines. */
static pthread_mutex_t notes_lock = PTHREAD_MUTEX_INITIALIZER;
static char *notes_seen[TRD_MAX_NOTES];
static int notes_nseen;

/* Print line on stderr, in one write, the first time this process sees key
 * (up to TRD_MAX_NOTES distinct keys; after that, every time). */
static void note_once(const char *key, const char *line)
{
    pthread_mutex_lock(&notes_lock);
    int i = 0;
    while (i < notes_nseen && strcmp(notes_seen[i], key) != 0)
        i++;
    if (i == notes_nseen) {
        if (notes_nseen < TRD_MAX_NOTES && (notes_seen[notes_nseen] = strdup(key)))
            notes_nseen++;
        fputs(line, stderr);
    }
    pthread_mutex_unlock(&notes_lock);
}

/* snprintf that keeps the final newline when the text is cut. */
static void note_format(char *line, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void note_format(char *line, size_t len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, len, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= len)
        snprintf(line + len - 5, 5, "...\n");
}

/* x = the whole of text as a decimal number from min to max (no sign, space
 * or suffix).  Returns 0, or -1 where text is anything else. */
static int number(const char *text, long long min, long long max, long long *x)
{
    const char *t = text;
    long long v = 0;
    for (; *t >= '0' && *t <= '9' && v <= max; t++)
        v = v > (LLONG_MAX - (*t - '0')) / 10 ? LLONG_MAX : v * 10 + (*t - '0');
    if (t == text || *t || v < min || v > max)
        return -1;
    *x = v;
    return 0;
}

/* A bad value of variable name, said once per process on stderr whatever
 * TREEDUCE_VERBOSE says: a misconfiguration must be seen. */
static void env_bad(const char *name, const char *value, const char *expected)
{
    char key[64], line[512];
    snprintf(key, sizeof key, "env %s", name);
    note_format(line, sizeof line, "treeduce: %s='%.200s' is not %s; using the default\n", name,
                value, expected);
    note_once(key, line);
}

long long trd_env_number(const char *name, long long min, long long max, long long def)
{
    const char *v = getenv(name);
    long long x;
    char expected[80];
    if (!v || !*v)
        return def;
    if (number(v, min, max, &x) == 0)
        return x;
    snprintf(expected, sizeof expected, "a whole number from %lld to %lld", min, max);
    env_bad(name, v, expected);
    return def;
}

/* TREEDUCE_ALGORITHM, parsed by the first call of any thread: the others
 * wait for it, so that no thread sees the algorithm half set. */
static pthread_once_t env_algorithm_once = PTHREAD_ONCE_INIT;
static const trd_algo *env_algorithm_alg;
static const char *env_algorithm_params = "";
static atomic_int env_algorithm_ready; /* set once read: every later call, one load */

static void env_algorithm_read(void)
{
    const char *v = getenv("TREEDUCE_ALGORITHM");
    if (v && *v && strcmp(v, "auto") != 0 &&
        !(env_algorithm_alg = trd_algo_parse(TRD_COLL_ALLREDUCE, v, &env_algorithm_params))) {
        char names[512];
        trd_algo_names(TRD_COLL_ALLREDUCE, names, sizeof names);
        fprintf(stderr,
                "treeduce: TREEDUCE_ALGORITHM='%s' is not one of auto, %s (optionally followed "
                "by :PARAMS); using auto\n",
                v, names);
        env_algorithm_params = "";
    }
    atomic_store_explicit(&env_algorithm_ready, 1, memory_order_release);
}

const trd_algo *trd_env_algorithm(const char **params)
{
    if (!atomic_load_explicit(&env_algorithm_ready, memory_order_acquire))
        pthread_once(&env_algorithm_once, env_algorithm_read);
    *params = env_algorithm_params;
    return env_algorithm_alg;
}

/* A yes/no switch read on first use into *v (-1: not read yet); threads that
 * race on it compute the same value, so a relaxed atomic is all they need. */
static int env_flag_once(atomic_int *v, const char *name)
{
    int x = atomic_load_explicit(v, memory_order_relaxed);
    if (x < 0) {
        x = env_flag(name);
        atomic_store_explicit(v, x, memory_order_relaxed);
    }
    return x;
}

int trd_env_disabled(void)
{
    static atomic_int v = -1;
    return env_flag_once(&v, "TREEDUCE_DISABLE");
}

int trd_env_reproducible(void)
{
    static atomic_int v = -1;
    return env_flag_once(&v, "TREEDUCE_REPRODUCIBLE");
}

int trd_env_async_progress(void)
{
    static atomic_int v = -1;
    return env_flag_once(&v, "TREEDUCE_ASYNC_PROGRESS");
}

/* A whole number from 0 to max read on first use into *v (-1: not read
 * yet), as trd_env_number reads it; racing threads compute the same value. */
static long long env_number_once(_Atomic long long *v, const char *name, long long max,
                                 long long def)
{
    long long x = atomic_load_explicit(v, memory_order_relaxed);
    if (x < 0) {
        x = trd_env_number(name, 0, max, def);
        atomic_store_explicit(v, x, memory_order_relaxed);
    }
    return x;
}

int trd_env_verbose(void)
{
    static _Atomic long long v = -1;
    return (int)env_number_once(&v, "TREEDUCE_VERBOSE", 2, 0);
}

long long trd_env_segment_calls(void)
{
    static _Atomic long long v = -1;
    return env_number_once(&v, "TREEDUCE_SEGMENT_CALLS", 1000000000, TRD_SEGMENT_CALLS);
}

long long trd_env_segment_bytes(void)
{
    static _Atomic long long v = -1;
    return env_number_once(&v, "TREEDUCE_SEGMENT_BYTES", 1LL << 62, TRD_SEGMENT_BYTES);
}

int trd_env_break(char *alg, size_t alglen, int *rank, size_t *op)
{
    const char *v = getenv("TREEDUCE_BREAK");
    char text[256], *c1 = NULL, *c2 = NULL;
    long long r, o;
    if (!v || !*v)
        return 0;
    if (strlen(v) < sizeof text) {
        strcpy(text, v);
        if ((c2 = strrchr(text, ':'))) {
            *c2 = '\0';
            c1 = strrchr(text, ':');
        }
    }
    int ok = c1 && c1 > text && (size_t)(c1 - text) < alglen;
    if (ok) {
        *c1 = '\0';
        ok = number(c1 + 1, 0, INT_MAX, &r) == 0 && number(c2 + 1, 0, LLONG_MAX, &o) == 0;
    }
    if (!ok) {
        env_bad("TREEDUCE_BREAK", v, "ALG:RANK:OP (RANK and OP whole numbers)");
        return 0;
    }
    snprintf(alg, alglen, "%s", text);
    *rank = (int)r;
    *op = (size_t)o;
    return 1;
}

int trd_env_inject(char *alg, size_t alglen)
{
    static const struct {
        const char *name;
        int kind;
    } kinds[] = {{"nomem", TRD_INJECT_NOMEM},
                 {"refuse", TRD_INJECT_REFUSE},
                 {"lower_nomem", TRD_INJECT_LOWER_NOMEM}};
    const char *v = getenv("TREEDUCE_INJECT"), *colon = v ? strrchr(v, ':') : NULL;
    if (!v || !*v)
        return 0;
    if (colon && colon > v && (size_t)(colon - v) < alglen)
        for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
            if (!strcmp(colon + 1, kinds[i].name)) {
                snprintf(alg, alglen, "%.*s", (int)(colon - v), v);
                return kinds[i].kind;
            }
    env_bad("TREEDUCE_INJECT", v, "ALG:nomem, ALG:refuse or ALG:lower_nomem");
    return 0;
}

void trd_fallback_note(const trd_machine *m, const char *routine, const char *why)
{
    char line[640];
    if (!trd_env_verbose())
        return;
    note_format(line, sizeof line, "treeduce[%s]: %s uses the MPI library's routine: %s\n", m->name,
                routine, why);
    note_once(line, line);
}

void trd_forced_note(const trd_machine *m, const char *routine, const char *alg, const char *params,
                     const char *why)
{
    char line[640];
    note_format(line, sizeof line,
                "treeduce[%s]: the forced algorithm %s%s%.80s cannot run %s (%s): the MPI "
                "library's %s is called instead\n",
                m->name, alg, params && *params ? ":" : "", params ? params : "", routine, why,
                routine);
    note_once(line, line);
}

void trd_note(const trd_machine *m, const char *msg)
{
    char line[640];
    if (!trd_env_verbose())
        return;
    note_format(line, sizeof line, "treeduce[%s]: %s\n", m->name, msg);
    note_once(msg, line);
}

void trd_choice_note(const trd_machine *m, const char *routine, const char *alg, const char *params)
{
    char key[160], line[320];
    if (trd_env_verbose() < 2)
        return;
    snprintf(key, sizeof key, "%s runs %s%s%.80s", routine, alg, params && *params ? ":" : "",
             params ? params : "");
    note_format(line, sizeof line, "treeduce[%s]: %s\n", m->name, key);
    note_once(key, line);
}

int trd_op_is_predefined(MPI_Op op)
{
    static const MPI_Op ops[] = {MPI_MAX,    MPI_MIN,    MPI_SUM,     MPI_PROD, MPI_LAND,
                                 MPI_BAND,   MPI_LOR,    MPI_BOR,     MPI_LXOR, MPI_BXOR,
                                 MPI_MINLOC, MPI_MAXLOC, MPI_REPLACE, MPI_NO_OP};
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        if (op == ops[i])
            return 1;
    return 0;
}

int trd_type_extent(MPI_Datatype type, size_t *extent)
{
    /* the last type this thread asked for: most programs repeat one, and a
     * predefined type's extent never changes */
    static _Thread_local MPI_Datatype last = MPI_DATATYPE_NULL;
    static _Thread_local size_t last_ext;
    int ni, na, nt, combiner;
    MPI_Aint lb, ext;
    if (type != MPI_DATATYPE_NULL && type == last) {
        *extent = last_ext;
        return MPI_SUCCESS;
    }
    if (type == MPI_DATATYPE_NULL ||
        PMPI_Type_get_envelope(type, &ni, &na, &nt, &combiner) != MPI_SUCCESS ||
        combiner != MPI_COMBINER_NAMED || PMPI_Type_get_extent(type, &lb, &ext) != MPI_SUCCESS ||
        ext <= 0)
        return MPI_ERR_TYPE;
    *extent = last_ext = (size_t)ext;
    last = type;
    return MPI_SUCCESS;
}
