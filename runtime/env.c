/* Environment switches and fallback notes. */
#include "rt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int env_flag(const char *name)
{
    const char *v = getenv(name);
    return v && *v && strcmp(v, "0") != 0 && strcmp(v, "no") != 0;
}

const trd_algo *trd_env_algorithm(const char **params)
{
    static int read;
    static const trd_algo *alg;
    static const char *alg_params = "";
    if (!read) {
        const char *v = getenv("TREEDUCE_ALGORITHM");
        read = 1;
        if (v && *v && strcmp(v, "auto") != 0 &&
            !(alg = trd_algo_parse(TRD_COLL_ALLREDUCE, v, &alg_params))) {
            char names[512];
            trd_algo_names(TRD_COLL_ALLREDUCE, names, sizeof names);
            fprintf(stderr,
                    "treeduce: TREEDUCE_ALGORITHM='%s' is not one of auto, %s (optionally followed "
                    "by :PARAMS); using auto\n",
                    v, names);
            alg_params = "";
        }
    }
    *params = alg_params;
    return alg;
}

int trd_env_disabled(void)
{
    static int v = -1;
    if (v < 0)
        v = env_flag("TREEDUCE_DISABLE");
    return v;
}

int trd_env_reproducible(void)
{
    static int v = -1;
    if (v < 0)
        v = env_flag("TREEDUCE_REPRODUCIBLE");
    return v;
}

int trd_env_verbose(void)
{
    static int v = -1;
    if (v < 0) {
        const char *e = getenv("TREEDUCE_VERBOSE");
        v = env_flag("TREEDUCE_VERBOSE") ? (atoi(e) >= 2 ? 2 : 1) : 0;
    }
    return v;
}

const char *trd_env_break(void)
{
    const char *v = getenv("TREEDUCE_BREAK");
    return v && *v ? v : NULL;
}

#define TRD_MAX_NOTES 64

/* Nonzero the first time key is seen (up to TRD_MAX_NOTES distinct keys). */
static int first_time(const char *key)
{
    static char *seen[TRD_MAX_NOTES];
    static int nseen;
    for (int i = 0; i < nseen; i++)
        if (strcmp(seen[i], key) == 0)
            return 0;
    if (nseen < TRD_MAX_NOTES)
        seen[nseen++] = strdup(key);
    return 1;
}

void trd_fallback_note(const trd_machine *m, const char *routine, const char *why)
{
    if (trd_env_verbose() && first_time(why))
        fprintf(stderr, "treeduce[%s]: %s uses the MPI library's routine: %s\n", m->name, routine,
                why);
}

void trd_note(const trd_machine *m, const char *msg)
{
    if (trd_env_verbose() && first_time(msg))
        fprintf(stderr, "treeduce[%s]: %s\n", m->name, msg);
}

void trd_choice_note(const trd_machine *m, const char *routine, const char *alg, const char *params)
{
    char key[160];
    if (trd_env_verbose() < 2)
        return;
    snprintf(key, sizeof key, "%s runs %s%s%.80s", routine, alg, params && *params ? ":" : "",
             params ? params : "");
    if (first_time(key))
        fprintf(stderr, "treeduce[%s]: %s\n", m->name, key);
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
    int ni, na, nt, combiner;
    MPI_Aint lb, ext;
    if (type == MPI_DATATYPE_NULL ||
        PMPI_Type_get_envelope(type, &ni, &na, &nt, &combiner) != MPI_SUCCESS ||
        combiner != MPI_COMBINER_NAMED || PMPI_Type_get_extent(type, &lb, &ext) != MPI_SUCCESS ||
        ext <= 0)
        return MPI_ERR_TYPE;
    *extent = (size_t)ext;
    return MPI_SUCCESS;
}
