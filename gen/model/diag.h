/* Diagnostics: located error messages for every topology reader.
 *
 * Every reader reports through one trd_diag so that all input errors look the
 * same: "file:line:col: error: expected ...", followed by the offending source
 * line and a caret under the column (jq src/locfile.c style).  Readers keep
 * going where they can recover; the CLI prints everything collected and exits
 * non-zero without writing any output when trd_diag_count() > 0.
 */
#ifndef TRD_DIAG_H
#define TRD_DIAG_H

#include <stdarg.h>
#include <stdio.h>

#include "trd_status.h"

/* A position in an input file.  line and col are 1-based; line 0 means "the
 * file as a whole" (e.g. it cannot be opened) and prints as "file: ...". */
typedef struct trd_loc {
    const char *file; /* borrowed; must outlive the diag (use trd_diag_intern) */
    int line;
    int col;
} trd_loc;

typedef struct trd_diag trd_diag;

/* Create an empty diagnostic sink into *d; trd_diag_destroy() frees it with
 * every message, name and source text it holds (NULL is ignored).  Returns
 * TRD_OK, or TRD_ERR_NOMEM with *d NULL. */
int trd_diag_create(trd_diag **d);
void trd_diag_destroy(trd_diag *d);

/* Keep a copy of a file name for the lifetime of d; returns the copy (or
 * "<oom>").  Use it for trd_loc.file. */
const char *trd_diag_intern(trd_diag *d, const char *file);

/* Register the full text of a file so that messages about it can quote the
 * offending line with a caret.  The text is copied.  Optional. */
void trd_diag_add_source(trd_diag *d, const char *file, const char *text, size_t len);

/* Record one error at loc; message in printf style, no trailing newline or
 * period, e.g. trd_diag_error(d, loc, "expected ';' after bandwidth value").
 * The formatted message is "file:line:col: error: <msg>".  trd_diag_verror
 * takes the arguments as a va_list. */
void trd_diag_error(trd_diag *d, trd_loc loc, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void trd_diag_verror(trd_diag *d, trd_loc loc, const char *fmt, va_list ap);

/* Number of errors recorded so far. */
int trd_diag_count(const trd_diag *d);

/* The i-th message (0-based), "file:line:col: error: msg" without the quoted
 * source line; NULL if out of range.  Tests compare these exactly. */
const char *trd_diag_message(const trd_diag *d, int i);

/* Print every message to f, each followed by its source line and a caret when
 * the source text is known. */
void trd_diag_print(const trd_diag *d, FILE *f);

#endif
