/* Emitter: expands templates/ into generated C for one machine. */
#ifndef TRD_EMIT_H
#define TRD_EMIT_H

#include "plan.h"
#include "topo.h"
#include "wisdom.h"

/* What the banner and file names need. */
typedef struct trd_emit_opts {
    const char *name;                 /* C identifier: files trd_<name>.{h,c}, trd_<name>_mpi.c */
    const char *input;                /* input path as given, shown in the banner */
    const char *input_sha256;         /* 64 hex digits of the input file's SHA-256 */
    const char *command;              /* the command line that regenerates the files */
    const trd_wisdom *wisdom;         /* the measured ranges (--wisdom, the files merged:
                                       * trd_wisdom_merge), or NULL */
    const char *const *wisdom_input;  /* [nwisdom] each file's path as given, in the banner */
    const char *const *wisdom_sha256; /* [nwisdom] 64 hex digits of each one's SHA-256 */
    int nwisdom;                      /* wisdom files, in command-line order */
} trd_emit_opts;

/* Embedded template text by file name ("trd_machine.c.in"), or NULL
 * (templates.c, made from templates/ at build time). */
const char *trd_template(const char *name);

/* Nonzero if name is usable in C identifiers and file names
 * ([A-Za-z_][A-Za-z0-9_]*), else 0. */
int trd_emit_valid_name(const char *name);

/* Write trd_<name>.h, trd_<name>.c and trd_<name>_mpi.c into outdir (created
 * if missing).  Files are written under temporary names and renamed only when
 * all three are complete, so a failure leaves no half-written output.  Same
 * topology and options give byte-identical files.  A collective and shape
 * of the wisdom becomes one table: its ranges, and entries without an
 * algorithm (the model's) for the sizes no range covers and the ranges of
 * TRD_WISDOM_MODEL.  Returns TRD_OK, or TRD_ERR_INPUT where such a table
 * needs more than TRD_MAX_RANGES entries (at the file and line of the
 * shape's first range), or TRD_ERR_IO / TRD_ERR_NOMEM / TRD_ERR_STATE,
 * with a message in d. */
int trd_emit(trd_topo_t t, const trd_machine_plan *p, const trd_emit_opts *o, const char *outdir,
             trd_diag *d);

/* Append the expansion of template tmpl to out, replacing each @KEY@ by the
 * value of KEY in keys/vals (nkeys pairs).  An unknown @KEY@ is an error.
 * *out is a malloc'd, NUL-terminated string of *len bytes grown as needed
 * (*out may be NULL to start), the caller's to free.  Returns TRD_OK, or
 * TRD_ERR_STATE or TRD_ERR_NOMEM with the message in err and *out freed and
 * NULL. */
int trd_expand(const char *tmpl, const char *const *keys, const char *const *vals, int nkeys,
               char **out, size_t *len, char *err, size_t errlen);

#endif
