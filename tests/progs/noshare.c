/* noshare.c — run a command on a kernel that, as far as it can tell, has no
 * close_range (ENOSYS, as before Linux 5.9) and, with -u, may not unshare
 * (EPERM, as Docker's default seccomp profile answers without
 * CAP_SYS_ADMIN): a seccomp filter, inherited by everything the command
 * runs.
 *   noshare [-u] CMD [ARGS...] */
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "close_range.h"

int main(int argc, char **argv)
{
    int deny_unshare = argc > 1 && !strcmp(argv[1], "-u");
    char **cmd = argv + 1 + deny_unshare;
    if (!*cmd) {
        fprintf(stderr, "usage: noshare [-u] CMD [ARGS...]\n");
        return 2;
    }
    struct sock_filter f[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_close_range, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_unshare, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, deny_unshare ? SECCOMP_RET_ERRNO | EPERM : SECCOMP_RET_ALLOW),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog prog = {.len = sizeof f / sizeof f[0], .filter = f};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog)) {
        fprintf(stderr, "noshare: seccomp: %s\n", strerror(errno));
        return 77;
    }
    execvp(cmd[0], cmd);
    fprintf(stderr, "noshare: %s: %s\n", cmd[0], strerror(errno));
    return 127;
}
