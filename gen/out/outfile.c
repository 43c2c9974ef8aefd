/* Output files created exclusively, synced and renamed (outfile.h). */
#define _GNU_SOURCE /* O_CLOEXEC, mkostemp */
#include "outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
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

/* The file without a name that o writes, opened in dir (O_TMPFILE, with
 * the mode a plain creation gets).  Returns 0; -1 where the file system or
 * the kernel has none, or where /proc/self/fd, through which commit names
 * it, is missing; or the errno value of another failure (no such folder). */
static int open_anon(trd_outfile *o, const char *dir)
{
#ifdef O_TMPFILE
    char self[64];
    int fd = open(dir, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0666);
    if (fd < 0)
        return errno == EOPNOTSUPP || errno == EISDIR || errno == EINVAL ? -1 : errno;
    snprintf(self, sizeof self, "/proc/self/fd/%d", fd);
    if (access(self, F_OK) != 0 || !(o->f = fdopen(fd, "w"))) {
        close(fd);
        return -1;
    }
    o->anon = 1;
    return 0;
#else
    (void)o;
    (void)dir;
    return -1;
#endif
}

/* Give o's file without a name the name tmp (dir/.BASE.XXXXXX, its X's
 * replaced at random until a name is free: linkat never replaces one). */
static int name_anon(trd_outfile *o, char *tmp)
{
    static const char digits[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    char self[64];
    size_t n = strlen(tmp);
    snprintf(self, sizeof self, "/proc/self/fd/%d", fileno(o->f));
    for (int attempt = 0; attempt < 100; attempt++) {
        unsigned char r[6];
        if (getrandom(r, sizeof r, 0) != (ssize_t)sizeof r)
            return errno ? errno : EIO;
        for (int i = 0; i < 6; i++)
            tmp[n - 6 + (size_t)i] = digits[r[i] % (sizeof digits - 1)];
        if (linkat(AT_FDCWD, self, AT_FDCWD, tmp, AT_SYMLINK_FOLLOW) == 0)
            return 0;
        if (errno != EEXIST)
            return errno;
    }
    return EEXIST;
}

/* trd_outfile_open, returning 0 or the errno value. */
static int open_errno(trd_outfile *o, const char *path, const char **what)
{
    struct stat lst, st;
    o->tmp = NULL;
    o->f = NULL;
    o->anon = 0;
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
    int anon = open_anon(o, dir);
    free(dir);
    if (anon >= 0) {
        if (anon) { /* o->tmp is still the pattern: nothing to remove */
            free(o->tmp);
            o->tmp = NULL;
            *what = "create a temporary file beside it";
            trd_outfile_discard(o);
        }
        return anon; /* named at commit, from the pattern in o->tmp */
    }
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
    else if (o->anon && (e = name_anon(o, o->tmp)) != 0)
        *what = "name the new file beside it";
    else
        o->anon = 0; /* named: o->tmp is its name */
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
        fclose(o->f); /* a file without a name goes with it */
    if (o->tmp && !o->anon)
        unlink(o->tmp);
    free(o->tmp);
    free(o->path);
    o->f = NULL;
    o->tmp = NULL;
    o->path = NULL;
    o->anon = 0;
}

int trd_outfile_open(trd_outfile *o, const char *path, const char **what)
{
    return trd__errno_status(open_errno(o, path, what));
}

int trd_outfile_commit(trd_outfile *o, const char **what)
{
    return trd__errno_status(commit_errno(o, what));
}
