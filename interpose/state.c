/* state.c — the process-wide recorder state (gl_st) and the one way
 * gpuledger speaks to the user (gl_warn). Uses nothing of the library but
 * the writer's own descriptor table and its relay of lines, so every part
 * can use it without an include loop. */
#include "state.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

#include "errout.h"
#include "fdtable.h"
#include "relay.h"

struct gl_state gl_st = {.exit_code = -1, .fork_lock = PTHREAD_MUTEX_INITIALIZER, .ask_lock = PTHREAD_MUTEX_INITIALIZER};

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
