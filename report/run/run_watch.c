/* run_watch.c — what `gpuledger run` learns while its command runs, and
 * what it says at the end.
 *
 * Every recorded process tells the launcher which database it writes, or
 * why it writes none, through an abstract AF_UNIX datagram socket
 * (launcher_link.h): no file in /tmp that a killed launcher or a process
 * outliving it could leave behind, and nothing in the command's
 * descriptor table. The launcher is the subreaper of the command's
 * processes (cmd_run.c), so at the end it knows which of them still run. */
#include "run_watch.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "close_range.h"
#include "launcher_link.h"

int gl_watch_open(struct gl_watch *w)
{
    memset(w, 0, sizeof *w);
    w->sock = -1;
    for (int tries = 0; tries < 8; tries++) {
        unsigned long long rnd = 0;
        if (getrandom(&rnd, sizeof rnd, GRND_NONBLOCK) != (ssize_t)sizeof rnd)
            rnd = (unsigned long long)getpid() * 2654435761ULL + (unsigned long long)tries;
        snprintf(w->name, sizeof w->name, "@gpuledger-run-%ld-%016llx", (long)getpid(), rnd);
        struct sockaddr_un a;
        socklen_t alen;
        if (gl_link_addr(w->name, &a, &alen) != 0)
            return -1;
        int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd < 0)
            return -1;
        int on = 1;
        if (setsockopt(fd, SOL_SOCKET, SO_PASSCRED, &on, sizeof on) == 0 &&
            bind(fd, (struct sockaddr *)&a, alen) == 0) {
            w->sock = fd;
            return 0;
        }
        int e = errno;
        close(fd);
        if (e != EADDRINUSE)
            return -1;
    }
    return -1;
}

static void add_fact(struct gl_watch *w, char kind, pid_t pid, const char *text, size_t len)
{
    if (w->nfacts == w->cap) {
        size_t cap = w->cap ? 2 * w->cap : 16;
        struct gl_fact *f = realloc(w->facts, cap * sizeof *f);
        if (!f)
            return;
        w->facts = f;
        w->cap = cap;
    }
    char *t = malloc(len + 1);
    if (!t)
        return;
    memcpy(t, text, len);
    t[len] = 0;
    struct gl_fact *f = &w->facts[w->nfacts++];
    f->kind = kind;
    f->pid = pid;
    f->text = t;
}

void gl_watch_drain(struct gl_watch *w)
{
    if (w->sock < 0)
        return;
    for (;;) {
        char buf[GL_LINK_MAX];
        union {
            char space[CMSG_SPACE(sizeof(struct ucred))];
            struct cmsghdr align;
        } ctl;
        struct iovec iov = {buf, sizeof buf};
        struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.space,
                           .msg_controllen = sizeof ctl.space};
        ssize_t n = recvmsg(w->sock, &m, MSG_DONTWAIT);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return;
        struct ucred cred = {0, (uid_t)-1, (gid_t)-1};
        for (struct cmsghdr *c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c))
            if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_CREDENTIALS)
                memcpy(&cred, CMSG_DATA(c), sizeof cred);
        /* only our own user's processes; anyone can send to an abstract name */
        if (n < 1 || cred.uid != getuid() || (buf[0] != GL_LINK_DB && buf[0] != GL_LINK_FAIL))
            continue;
        add_fact(w, buf[0], cred.pid, buf + 1, (size_t)n - 1);
    }
}

void gl_watch_close(struct gl_watch *w)
{
    if (w->sock >= 0)
        close(w->sock);
    for (size_t i = 0; i < w->nfacts; i++)
        free(w->facts[i].text);
    free(w->facts);
    memset(w, 0, sizeof *w);
    w->sock = -1;
}

/* Our children (the command's orphaned descendants, reparented to us)
 * still running; zombies among them are reaped first. */
static size_t survivors(pid_t *pids, size_t max)
{
    int st;
    while (waitpid(-1, &st, WNOHANG) > 0)
        ;
    size_t n = 0;
    DIR *d = opendir("/proc");
    if (!d)
        return 0;
    struct dirent *e;
    pid_t self = getpid();
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] < '1' || e->d_name[0] > '9')
            continue;
        char path[300], stat[512];
        snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            continue;
        ssize_t k = read(fd, stat, sizeof stat - 1);
        close(fd);
        if (k <= 0)
            continue;
        stat[k] = 0;
        const char *p = strrchr(stat, ')'); /* the name may hold anything */
        char state;
        long ppid;
        if (p && sscanf(p + 1, " %c %ld", &state, &ppid) == 2 && ppid == self && state != 'Z') {
            if (n < max)
                pids[n] = (pid_t)atol(e->d_name);
            n++;
        }
    }
    closedir(d);
    return n;
}

/* Can a thread here take a descriptor table of its own (what the library
 * needs before it records: interpose/fdtable.c)? Asked in a child. */
static int private_table_refused(void)
{
    pid_t p = fork();
    if (p == 0) {
        if (syscall(__NR_close_range, 0U, ~0U, CLOSE_RANGE_UNSHARE) == 0 || syscall(SYS_unshare, 0x400) == 0)
            _exit(0);
        _exit(1);
    }
    int st = 0;
    if (p < 0 || waitpid(p, &st, 0) != p)
        return 0;
    return WIFEXITED(st) && WEXITSTATUS(st) == 1;
}

static int alive(pid_t pid)
{
    return pid > 0 && (kill(pid, 0) == 0 || errno == EPERM);
}

void gl_watch_report(struct gl_watch *w, const struct gl_run_end *end)
{
    size_t dbs = 0, fails = 0;
    for (size_t i = 0; i < w->nfacts; i++) {
        const struct gl_fact *f = &w->facts[i];
        int dup = 0;
        for (size_t j = 0; j < i; j++)
            dup |= w->facts[j].kind == f->kind && !strcmp(w->facts[j].text, f->text);
        if (dup)
            continue;
        if (f->kind == GL_LINK_DB) {
            dbs++;
            end->summary(stderr, f->text);
            if (alive(f->pid))
                fprintf(stderr, "gpuledger: %s: pid %ld still runs (in the background): its database is not "
                                "finished\n",
                        f->text, (long)f->pid);
        } else {
            fails++;
            fprintf(stderr, "gpuledger: no database for pid %ld: %s\n", (long)f->pid, f->text);
        }
    }
    /* the others: those with a database were named above */
    pid_t all[256], shown[4];
    size_t nall = survivors(all, 256), left = 0, nshown = 0;
    for (size_t i = 0; i < nall; i++) {
        pid_t p = i < 256 ? all[i] : 0;
        int named = 0;
        for (size_t j = 0; p && j < w->nfacts; j++)
            named |= w->facts[j].kind == GL_LINK_DB && w->facts[j].pid == p;
        if (named)
            continue;
        if (p && nshown < 4)
            shown[nshown++] = p;
        left++;
    }
    if (left) {
        char list[128] = "";
        for (size_t i = 0; i < nshown; i++)
            snprintf(list + strlen(list), sizeof list - strlen(list), "%s%ld", i ? ", " : "", (long)shown[i]);
        fprintf(stderr,
                "gpuledger: %zu background process%s of %s still run%s (pid %s%s): each writes its own "
                "database (%s) if it makes CUDA memory calls; gpuledger run does not wait for them\n",
                left, left == 1 ? "" : "es", end->cmd, left == 1 ? "s" : "", list, left > nshown ? ", …" : "",
                end->pattern);
    }
    if (dbs || fails || left)
        return;
    if (end->disabled)
        fprintf(stderr, "gpuledger: no database written: recording is disabled (GPULEDGER_DISABLE)\n");
    else if (w->sock < 0)
        fprintf(stderr, "gpuledger: the databases written cannot be listed (no socket to hear of them); look for "
                        "%s\n",
                end->pattern);
    else if (private_table_refused())
        fprintf(stderr, "gpuledger: no database written: this kernel or its seccomp profile refuses close_range "
                        "and unshare, which gpuledger needs to keep its files out of the program's reach\n");
    else
        fprintf(stderr, "gpuledger: no database written: the program made no CUDA memory calls that were seen "
                        "(is it a CUDA program? for static cudart see README, CUDA_INJECTION64_PATH)\n");
}
