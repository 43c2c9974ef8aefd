/* What every reader shares (gen/read/reader.c): the whole text of an input
 * file, read with a cap, and the start of each *_string reader of readers.h
 * and of the wisdom (wisdom.h). */
#ifndef TRD_READER_H
#define TRD_READER_H

#include <stddef.h>

#include "diag.h"
#include "topo.h"

/* Largest input a reader takes, in bytes: several times the ibnetdiscover
 * output of a fabric of 100,000 hosts, and below the INT_MAX / 2 that lines
 * and columns count to.  A larger file (or /dev/zero, or a pipe that never ends) is
 * refused before more than this is read. */
#define TRD_MAX_INPUT_BYTES ((size_t)256 << 20)

/* Read the whole file at path, at most TRD_MAX_INPUT_BYTES: a regular file
 * larger than that is refused from its size, anything else once one byte
 * more has been read.  *text gets a malloc'd buffer with its length in *len
 * (one byte more is allocated and holds a NUL, not counted in *len); NULL on
 * an error.  Returns TRD_OK; TRD_ERR_IO with errno set (EFBIG: larger than
 * TRD_MAX_INPUT_BYTES); TRD_ERR_NOMEM. */
int trd_read_text(const char *path, char **text, size_t *len);

/* trd_read_text() that reports a file it cannot read to d at "path: error:
 * file is larger than N bytes" or "path: error: cannot read file: <reason>".
 * Returns as trd_read_text() (errors reported). */
int trd__read_input(trd_diag *d, const char *path, char **text, size_t *len);

/* The start every *_string reader shares: filename interned into d as *file
 * and made t's source, a NULL text taken as empty (*text = ""), a text over
 * TRD_MAX_INPUT_BYTES refused ("file: error: file is larger than N bytes"),
 * and so is a NUL byte anywhere in it ("file:line:col: error: unexpected
 * character '\x00'": every reader stops at it or skips it unseen); the text
 * is registered with trd_diag_add_source() so that messages quote its lines.
 * Returns TRD_OK; TRD_ERR_INPUT (reported to d); TRD_ERR_NOMEM. */
int trd__reader_begin(trd_topo_t t, trd_diag *d, const char *filename, const char **text,
                      size_t len, const char **file);

/* trd__reader_begin() without a topology, for the texts that describe no
 * machine (the wisdom, gen/read/wisdom.c).  Returns as trd__reader_begin(). */
int trd__text_begin(trd_diag *d, const char *filename, const char **text, size_t len,
                    const char **file);

/* Read the whole file at path and pass its text to read_string (one of the
 * *_string readers of readers.h).  A file that cannot be read is reported to d as
 * "path: error: cannot read file: <reason>".
 * Returns what read_string returns, TRD_ERR_IO or TRD_ERR_NOMEM. */
int trd__read_file(trd_topo_t t, trd_diag *d, const char *path,
                   int (*read_string)(trd_topo_t t, trd_diag *d, const char *filename,
                                      const char *text, size_t len));

#endif
