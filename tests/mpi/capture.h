/* capture.h - what this process writes on stderr, read back, for the tests
 * that check treeduce's notes and reports line by line (test_env.c,
 * test_notes.c): each process checks its own lines, whatever order the
 * launcher merges the ranks' output in.
 *
 * Header-only: everything is static.
 */
#ifndef CAPTURE_H
#define CAPTURE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static FILE *capture_file;
static int capture_saved = -1;

/* From here on, stderr goes to a temporary file. */
static inline void capture_start(void)
{
    fflush(stderr);
    capture_file = tmpfile();
    capture_saved = dup(2);
    if (!capture_file || capture_saved < 0 || dup2(fileno(capture_file), 2) < 0) {
        perror("capture_start");
        exit(2);
    }
}

/* stderr back where it was; what went to the file since capture_start, also
 * copied to stderr for the log.  The caller frees it. */
static inline char *capture_end(void)
{
    fflush(stderr);
    dup2(capture_saved, 2);
    close(capture_saved);
    long n = ftell(capture_file);
    char *text = malloc(n > 0 ? (size_t)n + 1 : 1);
    rewind(capture_file);
    size_t got = text && n > 0 ? fread(text, 1, (size_t)n, capture_file) : 0;
    fclose(capture_file);
    if (!text)
        exit(2);
    text[got] = '\0';
    fputs(text, stderr);
    return text;
}

/* How many lines of text are exactly line. */
static inline int capture_count(const char *text, const char *line)
{
    size_t n = strlen(line);
    int k = 0;
    for (const char *p = text; *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : p + strlen(p))
        if (strncmp(p, line, n) == 0 && (p[n] == '\n' || p[n] == '\0'))
            k++;
    return k;
}

#endif /* CAPTURE_H */
