/* execself.c — allocates 1 MiB (leaked), then execs itself with "again",
 * which allocates 2 MiB and exits. The first image's event must reach its
 * database (the .db file itself, not only its WAL) before exec replaces
 * it. argv[1] picks the exec: execv (the default), execl, execle, execlp,
 * execvp, execve, fexecve, execveat; posix_spawn and posix_spawnp run
 * "again" as a child instead and wait for it. */
#include <cuda_runtime_api.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

int main(int argc, char **argv)
{
    void *p = NULL;
    if (argc > 1 && !strcmp(argv[1], "again")) {
        cudaMalloc(&p, 2u << 20);
        return 0;
    }
    cudaMalloc(&p, 1u << 20);
    const char *how = argc > 1 ? argv[1] : "execv";
    const char *self = "/proc/self/exe";
    char *const args[] = {argv[0], "again", NULL};
    if (!strcmp(how, "execv"))
        execv(self, args);
    else if (!strcmp(how, "execl"))
        execl(self, argv[0], "again", (char *)NULL);
    else if (!strcmp(how, "execle"))
        execle(self, argv[0], "again", (char *)NULL, environ);
    else if (!strcmp(how, "execlp"))
        execlp(self, argv[0], "again", (char *)NULL);
    else if (!strcmp(how, "execvp"))
        execvp(self, args);
    else if (!strcmp(how, "execve"))
        execve(self, args, environ);
    else if (!strcmp(how, "fexecve")) {
        int fd = open(self, O_RDONLY);
        fexecve(fd, args, environ);
    } else if (!strcmp(how, "execveat"))
        execveat(AT_FDCWD, self, args, environ, 0);
    else if (!strcmp(how, "posix_spawn") || !strcmp(how, "posix_spawnp")) {
        char exe[4096];
        ssize_t n = readlink(self, exe, sizeof exe - 1);
        if (n <= 0)
            return 1;
        exe[n] = 0;
        pid_t pid;
        int rc = how[11] == 'p' ? posix_spawnp(&pid, exe, NULL, NULL, args, environ)
                                : posix_spawn(&pid, exe, NULL, NULL, args, environ);
        int st = 0;
        if (rc != 0 || waitpid(pid, &st, 0) != pid)
            return 1;
        return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
    }
    perror(how);
    return 1;
}
