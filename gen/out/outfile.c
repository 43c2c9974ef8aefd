/* Output files created exclusively, synced and renamed (outfile.h). */
#define _GNU_SOURCE /* O_CLOEXEC, mkostemp */
#include "outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util.h"

/* The folder of path ("." for a bare name), malloc'd, or NULL. */
static char *folder_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        return strdup(".");
    return strndup(path, slash == path ? 1 : (size_t)(slash - path));
}

static int in_place(trd_outfile *o, const char **what)
{
    struct stat st;
    int fd = open(o->path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        *what = "open";
        return errno;
    }
    /* the name may have been replaced since it was looked at: never write
     * into a regular file without the temporary file */
    if (fstat(fd, &st) != 0 || !(S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode))) {
        close(fd);
        *what = "open (it changed while opening)";
        return EAGAIN;
    }
    if (!(o->f = fdopen(fd, "w"))) {
        int e = errno;
        close(fd);
        *what = "open";
        return e;
    }
    return 0;
}

/* trd_outfile_open, returning 0 or the errno value. */
static int open_errno(trd_outfile *o, const char *path, const char **what)
{
    struct stat lst, st;
    o->tmp = NULL;
    o->f = NULL;
    *what = "create";
    if (!(o->path = strdup(path)))
        return ENOMEM;
    if (lstat(path, &lst) == 0) {
        if (S_ISFIFO(lst.st_mode) || S_ISCHR(lst.st_mode)) {
            int e = in_place(o, what);
            if (e)
                trd_outfile_discard(o);
            return e;
        }
        if (S_ISLNK(lst.st_mode) && stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
            *what = "replace a symbolic link to something that is not a regular file";
            trd_outfile_discard(o);
            return EPERM;
        }
        if (S_ISDIR(lst.st_mode) || !(S_ISREG(lst.st_mode) || S_ISLNK(lst.st_mode))) {
            *what = "replace it (not a regular file, FIFO or character device)";
            trd_outfile_discard(o);
            return S_ISDIR(lst.st_mode) ? EISDIR : EPERM;
        }
    }
    const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    char *dir = folder_of(path);
    if (!*base || !dir || asprintf(&o->tmp, "%s/.%.200s.XXXXXX", dir, base) < 0) {
        o->tmp = NULL;
        free(dir);
        trd_outfile_discard(o);
        return *base ? ENOMEM : EISDIR;
    }
    free(dir);
    /* O_CREAT|O_EXCL: never an existing name (base cut to stay under NAME_MAX) */
    int fd = mkostemp(o->tmp, O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        free(o->tmp);
        o->tmp = NULL;
        *what = "create a temporary file beside it";
        trd_outfile_discard(o);
        return e;
    }
    mode_t mask = umask(0);
    umask(mask);
    if (fchmod(fd, 0666 & ~mask) != 0 || !(o->f = fdopen(fd, "w"))) {
        int e = errno;
        close(fd);
        *what = "create a temporary file beside it";
        trd_outfile_discard(o);
        return e;
    }
    return 0;
}

/* trd_outfile_commit, returning 0 or the errno value. */
static int commit_errno(trd_outfile *o, const char **what)
{
    int e = 0;
    *what = "write";
    if (fflush(o->f) != 0 || ferror(o->f))
        e = errno ? errno : EIO;
    else if (o->tmp && fsync(fileno(o->f)) != 0)
        e = errno, *what = "sync";
    if (fclose(o->f) != 0 && !e)
        e = errno;
    o->f = NULL;
    if (!e && o->tmp && rename(o->tmp, o->path) != 0)
        e = errno, *what = "rename the new file into place";
    if (!e && o->tmp) {
        char *dir = folder_of(o->path);
        int dfd = dir ? open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
        if (dfd >= 0) {
            (void)fsync(dfd); /* the rename itself: best effort */
            close(dfd);
        }
        free(dir);
        free(o->tmp);
        o->tmp = NULL;
    }
    trd_outfile_discard(o);
    return e;
}

void trd_outfile_discard(trd_outfile *o)
{
    if (o->f)
        fclose(o->f);
    if (o->tmp)
        unlink(o->tmp);
    free(o->tmp);
    free(o->path);
    o->f = NULL;
    o->tmp = NULL;
    o->path = NULL;
}

int trd_outfile_open(trd_outfile *o, const char *path, const char **what)
{
    return trd__errno_status(open_errno(o, path, what));
}

int trd_outfile_commit(trd_outfile *o, const char **what)
{
    return trd__errno_status(commit_errno(o, what));
}
