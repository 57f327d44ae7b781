/* cmd_run.c — `gpuledger run`: put libgpuledger.so in front of a command
 * (LD_PRELOAD, prepended; CUDA_INJECTION64_PATH), run it, pass its exit
 * status through, and print one line per database it wrote. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "commands.h"
#include "config.h"
#include "help.h"
#include "paths.h"
#include "reader.h"
#include "run_python.h"
#include "run_watch.h"

#ifndef GL_LIBDIR
#define GL_LIBDIR "/usr/local/lib"
#endif

static void run_usage(FILE *f)
{
    fputs(gl_usage_run, f);
}

/* libgpuledger.so: GPULEDGER_LIB, the build tree, the installation this
 * executable belongs to (paths.h). */
static int find_library(char *out, size_t sz)
{
    const char *env = getenv("GPULEDGER_LIB");
    if (env && *env) {
        if (access(env, R_OK) != 0) {
            fprintf(stderr, "gpuledger: GPULEDGER_LIB=%s: %s\n", env, strerror(errno));
            return -1;
        }
        snprintf(out, sz, "%s", env);
        return 0;
    }
    char exe[PATH_MAX], cand[PATH_MAX + 32], real[PATH_MAX];
    gl_exe_dir(exe, sizeof exe);
    snprintf(cand, sizeof cand, "%s/../interpose/libgpuledger.so", exe); /* build/report/gpuledger */
    if (access(cand, R_OK) == 0 && realpath(cand, real) && strlen(real) < sz) {
        snprintf(out, sz, "%s", real);
        return 0;
    }
    if (gl_find_installed(GL_LIBDIR, "libgpuledger.so", out, sz) == 0)
        return 0;
    fprintf(stderr,
            "gpuledger: cannot find libgpuledger.so (looked next to %s and in %s); set GPULEDGER_LIB to its path\n",
            exe, GL_LIBDIR);
    return -1;
}

static int set_preload(const char *lib)
{
    const char *old = getenv("LD_PRELOAD");
    if (old && strstr(old, lib))
        return 0;
    size_t len = strlen(lib) + (old ? strlen(old) + 1 : 0) + 1;
    char *v = malloc(len);
    if (!v)
        return -1;
    if (old && *old)
        snprintf(v, len, "%s:%s", lib, old);
    else
        snprintf(v, len, "%s", lib);
    int rc = setenv("LD_PRELOAD", v, 1);
    free(v);
    return rc;
}

static volatile sig_atomic_t child_pid;
static int chld_pipe[2] = {-1, -1};

static void forward_signal(int sig)
{
    if (child_pid > 0)
        kill(child_pid, sig);
}

static void on_sigchld(int sig)
{
    (void)sig;
    int saved = errno;
    if (write(chld_pipe[1], "c", 1) < 0)
        errno = saved; /* the pipe is full: a wake-up is already waiting */
    errno = saved;
}

/* Run the command as the shell would; if it cannot be run, say so as the
 * shell does and end with its status: 127 not found, 126 not runnable.
 * The errno goes up the close-on-exec pipe `report` for the launcher. */
static void exec_command(char **cmd, int report)
{
    execvp(cmd[0], cmd);
    int e = errno;
    if (e == ENOENT && !strchr(cmd[0], '/'))
        fprintf(stderr, "gpuledger run: %s: command not found\n", cmd[0]);
    else
        fprintf(stderr, "gpuledger run: %s: %s\n", cmd[0], strerror(e));
    ssize_t w = write(report, &e, sizeof e);
    (void)w;
    _exit(e == ENOENT || e == ENOTDIR ? 127 : 126);
}

/* Wait for the command's process, taking the facts the recorded processes
 * send meanwhile (their datagrams must not pile up) and reaping the
 * orphans we adopt as subreaper. Returns its wait status. */
static int wait_command(pid_t pid, struct gl_watch *w)
{
    int status = 0;
    for (;;) {
        int st;
        pid_t r;
        while ((r = waitpid(-1, &st, WNOHANG)) > 0)
            if (r == pid) {
                gl_watch_drain(w);
                return st;
            }
        if (r < 0 && errno == ECHILD)
            return status;
        struct pollfd pf[2] = {{.fd = w->sock, .events = POLLIN}, {.fd = chld_pipe[0], .events = POLLIN}};
        if (poll(pf, 2, 1000) > 0) {
            if (pf[0].revents)
                gl_watch_drain(w);
            char buf[64];
            while (read(chld_pipe[0], buf, sizeof buf) > 0)
                ;
        }
    }
}

static void ignore_warning(const char *msg)
{
    (void)msg; /* the command's processes print it themselves */
}

int cmd_run(int argc, char **argv)
{
    static const struct option opts[] = {
        {"output", required_argument, NULL, 'o'}, {"depth", required_argument, NULL, 'd'},
        {"no-cupti", no_argument, NULL, 'C'},     {"torch", required_argument, NULL, 'T'},
        {"quiet", no_argument, NULL, 'q'},        {"help", no_argument, NULL, 'h'},
        {"python", required_argument, NULL, 'P'},
        {NULL, 0, NULL, 0},
    };
    int quiet = 0, c;
    optind = 1;
    /* '+': stop at the first non-option, the command. */
    while ((c = getopt_long(argc, argv, "+o:d:qh", opts, NULL)) != -1) {
        switch (c) {
        case 'o':
            setenv("GPULEDGER_OUTPUT", optarg, 1);
            break;
        case 'd': {
            char *end;
            long d = strtol(optarg, &end, 10);
            if (*end || d < 0 || d > 256) {
                fprintf(stderr, "gpuledger run: --depth wants a number in 0..256, not '%s'\n", optarg);
                return 2;
            }
            setenv("GPULEDGER_STACK_DEPTH", optarg, 1);
            break;
        }
        case 'C':
            setenv("GPULEDGER_CUPTI", "0", 1);
            break;
        case 'T':
            if (gl_run_set_torch_mode(optarg))
                return 2;
            break;
        case 'P':
            if (!strcmp(optarg, "on") || !strcmp(optarg, "off") || !strcmp(optarg, "mixed") ||
                !strcmp(optarg, "only")) {
                setenv("GPULEDGER_PYTHON", !strcmp(optarg, "on") ? "1" : !strcmp(optarg, "off") ? "0" : optarg, 1);
            } else {
                fprintf(stderr, "gpuledger run: --python wants 'on', 'off', 'mixed' or 'only', not '%s'\n",
                        optarg);
                return 2;
            }
            break;
        case 'q':
            quiet = 1;
            break;
        case 'h':
            run_usage(stdout);
            return 0;
        default:
            run_usage(stderr);
            return 2;
        }
    }
    if (optind >= argc) {
        fprintf(stderr, "gpuledger run: no command given\n");
        run_usage(stderr);
        return 2;
    }
    char lib[PATH_MAX];
    if (find_library(lib, sizeof lib))
        return 2;
    /* Python processes: the gpuledger package (PyTorch's allocator, hooks) */
    if ((!getenv("GPULEDGER_TORCH") && gl_run_set_torch_mode("blocks")) || gl_run_set_pythonpath(quiet)) {
        fprintf(stderr, "gpuledger run: out of memory\n");
        return 2;
    }
    if (set_preload(lib)) {
        fprintf(stderr, "gpuledger run: out of memory\n");
        return 2;
    }
    /* The driver loads us again through the injection path and calls
     * InitializeInjection at cuInit: CUPTI callbacks for what no wrapper
     * can see (static cudart). Not when CUPTI is switched off. */
    const char *cupti = getenv("GPULEDGER_CUPTI");
    if (!getenv("CUDA_INJECTION64_PATH") && !(cupti && (!strcmp(cupti, "0") || !strcasecmp(cupti, "no") ||
                                                       !strcasecmp(cupti, "false") || !strcasecmp(cupti, "off"))))
        setenv("CUDA_INJECTION64_PATH", lib, 1);
    /* NVTX ranges and marks (torch.cuda.nvtx, libraries) become annotations */
    if (!getenv("NVTX_INJECTION64_PATH"))
        setenv("NVTX_INJECTION64_PATH", lib, 1);
    struct gl_watch w;
    if (gl_watch_open(&w) == 0)
        setenv("GPULEDGER_MANIFEST", w.name, 1);
    struct gl_config cfg;
    gl_config_load(&cfg, ignore_warning); /* what the command's processes will read */
    /* orphaned descendants come to us, so at the end we know who still runs */
    prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
    if (pipe2(chld_pipe, O_CLOEXEC | O_NONBLOCK) != 0) {
        fprintf(stderr, "gpuledger run: pipe: %s\n", strerror(errno));
        return 2;
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_sigchld;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART | SA_NOCLDSTOP;
    sigaction(SIGCHLD, &sa, NULL);
    int execp[2];
    if (pipe2(execp, O_CLOEXEC) != 0) {
        fprintf(stderr, "gpuledger run: pipe: %s\n", strerror(errno));
        return 2;
    }

    pid_t pid = fork();
    if (pid < 0) {
        fprintf(stderr, "gpuledger run: fork: %s\n", strerror(errno));
        return 2;
    }
    if (pid == 0) {
        signal(SIGCHLD, SIG_DFL);
        exec_command(argv + optind, execp[1]);
    }
    close(execp[1]);
    child_pid = pid;
    sa.sa_handler = forward_signal;
    sa.sa_flags = SA_RESTART;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    int exec_errno = 0;
    ssize_t got;
    while ((got = read(execp[0], &exec_errno, sizeof exec_errno)) < 0 && errno == EINTR)
        ;
    close(execp[0]);
    int status = wait_command(pid, &w);
    if (got == (ssize_t)sizeof exec_errno) { /* said as the shell says it */
        gl_watch_close(&w);
        return WIFEXITED(status) ? WEXITSTATUS(status) : 127;
    }
    if (!quiet) {
        struct gl_run_end end = {argv[optind], cfg.disable, cfg.output ? cfg.output : "gpuledger-%p.db"};
        gl_watch_report(&w, &end);
    }
    gl_watch_close(&w);
    if (WIFEXITED(status))
        return WEXITSTATUS(status);
    if (WIFSIGNALED(status)) {
        if (!quiet)
            fprintf(stderr, "gpuledger: %s was killed by signal %d (%s)\n", argv[optind], WTERMSIG(status),
                    strsignal(WTERMSIG(status)));
        return 128 + WTERMSIG(status);
    }
    return 1;
}
