/* treeduce-tune: the command line and the machine's tables in memory
 * (tune_setup.c). */
#ifndef TUNE_SETUP_H
#define TUNE_SETUP_H

#include "load.h"
#include "plan.h"
#include "tune_run.h"

extern const char tune_usage[];

typedef struct args {
    trd_load_opts load;
    const char *output;
    tune_opts o;
    char colls[128], shapes[256];
} args;

/* The command line into a; *done 1 where it asked for --help or --version
 * (printed by rank me 0), and nothing is to be run.  Returns TRD_OK, or
 * TRD_ERR_INPUT with a message in err. */
int tune_parse_args(int argc, char **argv, args *a, int me, int *done, char *err, size_t errlen);

/* Before MPI_Init: -1 to go on, or the exit status of an SMPI build run
 * directly, not by smpirun, where MPI_Init has no simulation to join: its
 * --help, --version or command-line error printed as under MPI, or, for a
 * good command line, that it runs under smpirun (1). */
int tune_before_mpi(int argc, char **argv);

/* The options a measurement depends on, one a line, for the ranks to compare. */
void tune_canon(const args *a, char *buf, size_t len);

/* The first line where a and b differ, into da and db. */
void tune_first_diff(const char *a, const char *b, char *da, char *db, size_t len);

/* The machine's tables in memory, as gen/out/emit.c writes them, no tuned ranges. */
typedef struct built {
    trd_machine m;
    const char **names;
    int *order, *cores, *packages;
    trd_size_choice *choices;
    trd_shape_choice *shapes;
} built;

/* b's tables for topology t planned as p (t must outlive b).  Returns
 * TRD_OK or TRD_ERR_NOMEM. */
int tune_build_machine(trd_topo_t t, const trd_machine_plan *p, built *b);
/* Free the arrays of b (not b itself). */
void tune_free_machine(built *b);

#endif
