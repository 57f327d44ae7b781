/* state.c — the process-wide recorder state (gl_st) and the one way
 * gpuledger speaks to the user (gl_warn). Uses nothing of the library but
 * the writer's own descriptor table and its relay of lines, so every part
 * can use it without an include loop. */
#include "state.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fdtable.h"
#include "relay.h"

struct gl_state gl_st = {.exit_code = -1, .fork_lock = PTHREAD_MUTEX_INITIALIZER, .ask_lock = PTHREAD_MUTEX_INITIALIZER};

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

void gl_warn(const char *fmt, ...)
{
    char buf[1024];
    int n = snprintf(buf, sizeof buf, "gpuledger: ");
    va_list ap;
    va_start(ap, fmt);
    int m = vsnprintf(buf + n, sizeof buf - (size_t)n - 1, fmt, ap);
    va_end(ap);
    size_t len = (size_t)n + (m > 0 ? (size_t)m : 0);
    if (len > sizeof buf - 2)
        len = sizeof buf - 2;
    buf[len++] = '\n';
    int saved = errno;
    if (gl_fd_private()) { /* the writer: its fd 2 is not the program's stderr */
        gl_relay_put(buf, len);
        errno = saved;
        return;
    }
    gl_stderr_write(buf, len);
    errno = saved;
}
