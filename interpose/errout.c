/* errout.c — the stderr the process started with: gpuledger's lines go
 * there, or nowhere (errout.h). */
#include "errout.h"

#include <errno.h>
#include <sys/stat.h>
#include <unistd.h>

/* What fd 2 was when the library loaded: gpuledger writes there only
 * while fd 2 is still that file (a program that closed its stderr and
 * opened a data file gets no line of ours in it). No descriptor is kept:
 * the program's table stays as it is. */
static struct {
    int known; /* 1: fd 2 was open at load */
    dev_t dev;
    ino_t ino;
    dev_t rdev;
} first_stderr;

void gl_stderr_remember(void)
{
    struct stat st;
    first_stderr.known = fstat(STDERR_FILENO, &st) == 0;
    if (first_stderr.known) {
        first_stderr.dev = st.st_dev;
        first_stderr.ino = st.st_ino;
        first_stderr.rdev = st.st_rdev;
    }
}

int gl_stderr_write(const char *s, size_t n)
{
    struct stat st;
    int saved = errno;
    if (!first_stderr.known || fstat(STDERR_FILENO, &st) != 0 || st.st_dev != first_stderr.dev ||
        st.st_ino != first_stderr.ino || st.st_rdev != first_stderr.rdev) {
        errno = saved;
        return -1; /* not the stderr the process started with: nowhere */
    }
    while (n > 0) {
        ssize_t w = write(STDERR_FILENO, s, n);
        if (w <= 0 && errno != EINTR)
            break;
        if (w > 0) {
            s += w;
            n -= (size_t)w;
        }
    }
    errno = saved;
    return n ? -1 : 0;
}
