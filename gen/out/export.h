/* Export of the planned MPI_Allreduce selection as tuning files for the MPI
 * libraries themselves, so that a site can use the plan without the generated
 * library:
 *   - an MPICH "CSEL" collective selection file (JSON), read by MPICH 4.x at
 *     MPI_Init from MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE;
 *   - an Open MPI coll/tuned dynamic rules file (the classic text format),
 *     read when coll_tuned_use_dynamic_rules=1 from
 *     coll_tuned_dynamic_rules_filename.
 *
 * Both map each treeduce algorithm to the nearest algorithm the library has
 * (its registry descriptor's mpich and ompi fields, algo.h) and reproduce the plan's message-size
 * ranges per communicator size.  Message sizes are bytes of the whole vector (count x datatype
 * size) in treeduce, in MPICH's avg_msg_size for allreduce and in Open MPI's dsize for allreduce
 * alike.  Output is deterministic: the same plan gives the same bytes.
 *
 * Sources (formats and names checked against):
 *   MPICH  src/mpi/coll/src/csel.c (keys, parse order, lookup),
 *          src/mpi/coll/src/csel_container.c (algorithm names, "k=" params),
 *          maint/tuning/coll/mpir/generic.json (default file structure),
 *          src/mpi/coll/src/coll_impl.c (MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE),
 *          https://github.com/pmodels/mpich ; and the MPICH 4.0.2 library
 *          itself (its embedded default JSON and container names).
 *   Open MPI ompi/mca/coll/tuned/coll_tuned_dynamic_file.c (classic reader),
 *          ompi/mca/coll/tuned/coll_tuned_dynamic_rules.c (lookup),
 *          ompi/mca/coll/tuned/coll_tuned_allreduce_decision.c (algorithm ids),
 *          ompi/mca/coll/tuned/coll_tuned_decision_dynamic.c (dsize),
 *          ompi/mca/coll/base/coll_base_util.c ('#' comments),
 *          https://github.com/open-mpi/ompi */
#ifndef TRD_EXPORT_H
#define TRD_EXPORT_H

#include <stdio.h>

#include "plan.h"

/* MPICH 4.x (4.0 through 4.3) blocking allreduce algorithms the export uses:
 * the subset every 4.x release accepts in a selection file (4.0 has no
 * ring or recexch for MPI_Allreduce; an unknown name aborts MPI_Init). */
enum trd_export_mpich_alg {
    TRD_MPICH_RD,  /* MPIR_Allreduce_intra_recursive_doubling */
    TRD_MPICH_RSA, /* MPIR_Allreduce_intra_reduce_scatter_allgather (builtin ops, count >= pof2) */
    TRD_MPICH_SMP, /* MPIR_Allreduce_intra_smp (commutative ops, hierarchical communicators) */
};

/* The MPICH algorithm for allreduce algorithm a (its descriptor's mpich
 * container); NULL or an unknown container gives TRD_MPICH_RD. */
enum trd_export_mpich_alg trd_export_mpich_alg(const trd_algo *a);

/* Its CSEL container name, "MPIR_Allreduce_intra_..." (static). */
const char *trd_export_mpich_name(enum trd_export_mpich_alg a);

/* The Open MPI coll/tuned allreduce algorithm number for allreduce algorithm
 * a (its descriptor's ompi): 3 recursive_doubling, 4 ring or 6 rabenseifner
 * (valid in Open MPI 4.x and 5.x); NULL or another number gives 3. */
int trd_export_ompi_alg(const trd_algo *a);

/* Write the complete MPICH collective selection file for p to f: every
 * collective MPICH selects through the file, because MPICH replaces its
 * built-in file by this one and aborts on a collective it finds no rule for.
 * MPI_Allreduce follows the plan; the other collectives get fixed,
 * conservative choices valid in every MPICH 4.x.  JSON allows no comments
 * and MPICH rejects unknown keys, so machine_name does not appear in the
 * file (it is accepted for symmetry with trd_export_ompi_rules; may be
 * NULL).  Use with MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE=FILE and, so
 * that the CH4 device does not pick its own composition first,
 * MPIR_CVAR_ALLREDUCE_DEVICE_COLLECTIVE=0 (or MPIR_CVAR_DEVICE_COLLECTIVES=none).
 * Returns TRD_OK, TRD_ERR_IO when writing failed or TRD_ERR_NOMEM. */
int trd_export_csel_json(FILE *f, const trd_machine_plan *p, const char *machine_name);

/* Write the Open MPI coll/tuned dynamic rules file for p to f: one
 * collective (MPI_Allreduce, id 2), one rule set per planned communicator
 * size, '#' comments naming the machine (machine_name, or "machine" when
 * it is NULL or not a C identifier) and the treeduce algorithm of each line.  Use with
 * --mca coll_tuned_use_dynamic_rules 1 --mca coll_tuned_dynamic_rules_filename FILE.
 * Returns TRD_OK, TRD_ERR_IO when writing failed or TRD_ERR_NOMEM. */
int trd_export_ompi_rules(FILE *f, const trd_machine_plan *p, const char *machine_name);

#endif
