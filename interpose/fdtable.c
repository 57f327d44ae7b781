/* fdtable.c — the writer thread's own descriptor table.
 *
 * A program may close every descriptor from 3 up, call close_range or
 * closefrom, dup2 over any number, or do so with raw system calls, and then
 * open its own files: a descriptor number the writer still holds would then
 * name the program's file, and SQLite would write pages into it. So the
 * writer does not keep its files in the process's table at all: before it
 * opens anything it takes a table of its own, and the database, its -wal
 * and -shm, and every file the writer reads live there, out of the
 * program's reach and sight (/proc/self/fd does not list them). The
 * program's descriptors are never duplicated there (a pipe the program
 * closes still reaches EOF), and nothing in the program's table changes.
 *
 *   close_range(0, ~0U, CLOSE_RANGE_UNSHARE)  Linux 5.9+: a new, empty table
 *   unshare(CLONE_FILES)                      older kernels: a copy, whose
 *                                             entries are then closed (only
 *                                             the copies: POSIX locks belong
 *                                             to the table that took them)
 * A seccomp profile may refuse both (Docker's refuses unshare without
 * CAP_SYS_ADMIN, and refused close_range before 2021): then the writer
 * records nothing, and says so. */
#include "fdtable.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "close_range.h"

static __thread int tls_private __attribute__((tls_model("initial-exec")));

int gl_fd_private(void)
{
    return tls_private;
}

/* After unshare(CLONE_FILES): close this thread's copy of every descriptor. */
static void close_copies(void)
{
    if (syscall(__NR_close_range, 0U, ~0U, 0U) == 0)
        return;
    int dir = open("/proc/thread-self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir < 0) {
        struct rlimit rl;
        unsigned long top = getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < (1UL << 20) ? rl.rlim_cur : 1UL << 20;
        for (unsigned long fd = 0; fd < top; fd++)
            close((int)fd);
        return;
    }
    /* entries move as they are closed: read again until a pass finds
     * nothing but the directory itself */
    char buf[4096] __attribute__((aligned(8)));
    for (int closed = 1; closed;) {
        closed = 0;
        lseek(dir, 0, SEEK_SET);
        long n;
        while ((n = syscall(SYS_getdents64, dir, buf, sizeof buf)) > 0) {
            for (long off = 0; off < n;) {
                const struct dirent64 *d = (const struct dirent64 *)(void *)(buf + off);
                off += d->d_reclen;
                if (d->d_name[0] < '0' || d->d_name[0] > '9')
                    continue;
                int fd = atoi(d->d_name);
                if (fd != dir) {
                    close(fd);
                    closed = 1;
                }
            }
        }
    }
    close(dir);
}

int gl_fd_leave_shared(char *why, size_t whysz)
{
    if (syscall(__NR_close_range, 0U, ~0U, CLOSE_RANGE_UNSHARE) != 0) {
        int e = errno;
        if (unshare(CLONE_FILES) != 0) {
            snprintf(why, whysz, "close_range: %s; unshare: %s", strerror(e), strerror(errno));
            return -1;
        }
        close_copies();
    }
    tls_private = 1;
    /* 0, 1 and 2 are taken by placeholders: SQLite opens nothing there, and
     * a stray write to "stderr" from this thread goes nowhere */
    for (;;) {
        int fd = open("/dev/null", O_RDWR | O_CLOEXEC);
        if (fd < 0)
            fd = open("/", O_PATH | O_CLOEXEC);
        if (fd < 0 || fd > 2) {
            if (fd > 2)
                close(fd);
            break;
        }
    }
    return 0;
}
