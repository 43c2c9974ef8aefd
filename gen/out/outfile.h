/* Output files created safely: every file the generator and treeduce-calibrate
 * write goes through here.
 *
 * A new file is created in the target's folder without a name (O_TMPFILE),
 * written, synced, given an unpredictable name (linkat, which never replaces
 * what is planted there) and renamed over the target only when complete: a
 * failure leaves the old file whole and no temporary file behind, and so
 * does a process killed while it writes (SIGKILL, a batch job's time limit),
 * since the kernel removes a file without a name when it is closed.  Where
 * the file system has no O_TMPFILE (or /proc/self/fd is missing), the file is
 * created exclusively under an unpredictable name (mkstemp: O_CREAT|O_EXCL,
 * so nothing planted under that name is ever opened), which a killed process
 * leaves behind.  rename()
 * replaces the target name itself, so a symbolic link there is replaced by the
 * new file and what it pointed to is left untouched.  Two kinds of target are
 * never replaced: a FIFO or character device named directly (/dev/null, a
 * pipe) is written in place, opened without following links; a symbolic link
 * to one (/dev/stdout) is refused, since replacing it would replace a system
 * file when run as root. */
#ifndef TRD_OUTFILE_H
#define TRD_OUTFILE_H

#include <stdio.h>

typedef struct trd_outfile {
    char *path; /* the target, as given */
    char *tmp;  /* the temporary file beside it; NULL when writing in place or done, or
                 * while it has no name (anon) */
    FILE *f;    /* where to write */
    int anon;   /* f is a file without a name in the target's folder (O_TMPFILE) */
} trd_outfile;

/* Open an output for path (see above); the new file gets the mode a plain
 * creation would give (0666 less the umask).  Returns TRD_OK; TRD_ERR_IO
 * (TRD_ERR_NOMEM) with errno set and *what naming the step that failed
 * ("create a temporary file beside", "replace the symbolic link", ...) and
 * nothing created. */
int trd_outfile_open(trd_outfile *o, const char *path, const char **what);

/* Flush, sync and close o, then rename the temporary file over the target
 * and sync its folder.  Returns TRD_OK; TRD_ERR_IO (TRD_ERR_NOMEM) with
 * errno set, *what naming the step ("write", "sync", "rename") and the
 * temporary file removed: the target is as it was. */
int trd_outfile_commit(trd_outfile *o, const char **what);

/* Close o and remove its temporary file: the target is as it was. */
void trd_outfile_discard(trd_outfile *o);

#endif
