/* What every reader shares: the whole text of an input file, read with a
 * cap, and the start of each *_string reader (reader.h). */
#include "reader.h"

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "util.h"

_Static_assert(TRD_MAX_INPUT_BYTES <= INT_MAX / 2, "lines and columns are ints");

int trd_read_text(const char *path, char **out, size_t *len)
{
    FILE *f = fopen(path, "rb");
    char *text = NULL;
    size_t n = 0, cap = 0;
    struct stat st;
    int err = 0;
    *out = NULL;
    if (!f)
        return trd__errno_status(errno ? errno : EIO);
    if (fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode) &&
        (uintmax_t)st.st_size > TRD_MAX_INPUT_BYTES) {
        fclose(f);
        return trd__errno_status(EFBIG);
    }
    /* Read up to one byte past the cap (anything but a regular file says its
     * size only by ending), plus room for the NUL after the text. */
    for (;;) {
        if (n + 1 >= cap) {
            size_t ncap = cap ? 2 * cap : 65536;
            if (ncap > TRD_MAX_INPUT_BYTES + 2)
                ncap = TRD_MAX_INPUT_BYTES + 2;
            char *nt = realloc(text, ncap);
            if (!nt) {
                err = ENOMEM;
                break;
            }
            text = nt;
            cap = ncap;
        }
        size_t got = fread(text + n, 1, cap - 1 - n, f);
        n += got;
        if (n > TRD_MAX_INPUT_BYTES) {
            err = EFBIG;
            break;
        }
        if (got == 0) {
            if (ferror(f))
                err = errno ? errno : EIO;
            break;
        }
    }
    fclose(f);
    if (err) {
        free(text);
        return trd__errno_status(err);
    }
    text[n] = '\0';
    *len = n;
    *out = text;
    return TRD_OK;
}

int trd__read_input(trd_diag *d, const char *path, char **text, size_t *len)
{
    int rc = trd_read_text(path, text, len);
    if (rc != TRD_OK) {
        int err = errno;
        trd_loc loc = {trd_diag_intern(d, path), 0, 0};
        if (err == EFBIG)
            trd_diag_error(d, loc, "file is larger than %zu bytes", TRD_MAX_INPUT_BYTES);
        else
            trd_diag_error(d, loc, "cannot read file: %s", strerror(err));
        errno = err;
    }
    return rc;
}

int trd__reader_begin(trd_topo_t t, trd_diag *d, const char *filename, const char **text,
                      size_t len, const char **file)
{
    *file = trd_diag_intern(d, filename);
    if (trd_topo_set_source(t, *file) != TRD_OK)
        return TRD_ERR_NOMEM;
    return trd__text_begin(d, filename, text, len, file);
}

int trd__text_begin(trd_diag *d, const char *filename, const char **text, size_t len,
                    const char **file)
{
    *file = trd_diag_intern(d, filename);
    if (*text == NULL)
        *text = "";
    if (len > TRD_MAX_INPUT_BYTES) {
        trd_diag_error(d, (trd_loc){*file, 0, 0}, "file is larger than %zu bytes",
                       TRD_MAX_INPUT_BYTES);
        return TRD_ERR_INPUT;
    }
    trd_diag_add_source(d, *file, *text, len);
    const char *nul = memchr(*text, '\0', len);
    if (nul) {
        int line = 1;
        const char *bol = *text;
        for (const char *p = *text; p < nul; p++)
            if (*p == '\n') {
                line++;
                bol = p + 1;
            }
        trd_diag_error(d, (trd_loc){*file, line, (int)(nul - bol) + 1},
                       "unexpected character '\\x00'");
        return TRD_ERR_INPUT;
    }
    return TRD_OK;
}

int trd__read_file(trd_topo_t t, trd_diag *d, const char *path,
                   int (*read_string)(trd_topo_t, trd_diag *, const char *, const char *, size_t))
{
    size_t len = 0;
    char *text;
    int rc = trd__read_input(d, path, &text, &len);
    if (rc != TRD_OK)
        return rc;
    rc = read_string(t, d, path, text, len);
    free(text);
    return rc;
}
