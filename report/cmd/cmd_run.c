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

#include "cli.h"
#include "commands.h"
#include "config.h"
#include "help.h"
#include "paths.h"
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

/* -o PATH that is there and neither a regular file (a database is one,
 * the recorder then picks PATH.1.db beside it) nor a directory (a database
 * per process in it): /dev/null, a pipe, a socket. Refused: a database
 * cannot be written "as it is" into one, and PATH.1 beside it would be a
 * file in /dev. Said in one line; 0 when fine. */
static int output_unusable(const char *path)
{
    struct stat st;
    if (strchr(path, '%') || stat(path, &st) != 0 || S_ISREG(st.st_mode) || S_ISDIR(st.st_mode))
        return 0;
    fprintf(stderr, "gpuledger run: -o %s: not a regular file or a directory (a database needs one)\n", path);
    return 1;
}

static void ignore_warning(const char *msg)
{
    (void)msg; /* the command's processes print it themselves */
}

/* --python's value as GPULEDGER_PYTHON has it, or NULL. */
static const char *python_mode(const char *arg)
{
    if (!strcmp(arg, "on"))
        return "1";
    if (!strcmp(arg, "off"))
        return "0";
    return !strcmp(arg, "mixed") || !strcmp(arg, "only") ? arg : NULL;
}

/* One option: -1 to go on, else the exit code now. */
static int run_option(int c, const char *arg, int *quiet)
{
    char *end;
    switch (c) {
    case 'o':
        if (output_unusable(arg))
            return 2;
        setenv("GPULEDGER_OUTPUT", arg, 1);
        return -1;
    case 'd': {
        long d = strtol(arg, &end, 10);
        if (*end || d < 0 || d > 256) {
            fprintf(stderr, "gpuledger run: --depth wants a number in 0..256, not '%s'\n", arg);
            return 2;
        }
        setenv("GPULEDGER_STACK_DEPTH", arg, 1);
        return -1;
    }
    case 'C':
        setenv("GPULEDGER_CUPTI", "0", 1);
        return -1;
    case 'B': {
        unsigned long long b;
        if (gl_parse_size(arg, &b) || (b && b < GL_BUDGET_MIN)) {
            fprintf(stderr, "gpuledger run: --budget wants a size of at least 1M (e.g. 512M, 1G, 2GiB), not '%s'\n",
                    arg);
            return 2;
        }
        setenv("GPULEDGER_BUDGET", arg, 1);
        return -1;
    }
    case 'K':
        setenv("GPULEDGER_PACK", "1", 1);
        return -1;
    case 'T':
        return gl_run_set_torch_mode(arg) ? 2 : -1;
    case 'P':
        if (!python_mode(arg)) {
            fprintf(stderr, "gpuledger run: --python wants 'on', 'off', 'mixed' or 'only', not '%s'\n", arg);
            return 2;
        }
        setenv("GPULEDGER_PYTHON", python_mode(arg), 1);
        return -1;
    case 'q': /* and the command's processes: their informational lines (errors still print) */
        *quiet = 1;
        setenv("GPULEDGER_QUIET", "1", 1);
        return -1;
    case 'h':
        run_usage(stdout);
        return 0;
    default:
        run_usage(stderr);
        return 2;
    }
}

/* The options before the command (optind is then the command's): -1 to
 * go on, else the exit code now. */
static int parse_options(int argc, char **argv, int *quiet)
{
    static const struct option opts[] = {
        {"output", required_argument, NULL, 'o'}, {"depth", required_argument, NULL, 'd'},
        {"no-cupti", no_argument, NULL, 'C'},     {"torch", required_argument, NULL, 'T'},
        {"quiet", no_argument, NULL, 'q'},        {"help", no_argument, NULL, 'h'},
        {"python", required_argument, NULL, 'P'}, {"budget", required_argument, NULL, 'B'},
        {"pack", no_argument, NULL, 'K'},         {NULL, 0, NULL, 0},
    };
    int c, rc;
    optind = 1;
    /* '+': stop at the first non-option, the command. */
    while ((c = getopt_long(argc, argv, "+o:d:qh", opts, NULL)) != -1)
        if ((rc = run_option(c, optarg, quiet)) >= 0)
            return rc;
    if (optind >= argc) {
        fprintf(stderr, "gpuledger run: no command given\n");
        run_usage(stderr);
        return 2;
    }
    return -1;
}

static int cupti_off(const char *v)
{
    return v && (!strcmp(v, "0") || !strcasecmp(v, "no") || !strcasecmp(v, "false") || !strcasecmp(v, "off"));
}

/* What the command's processes inherit: the library preloaded and as the
 * driver's and NVTX's injection, the Python package. 0, or 2 said. */
static int prepare_environment(int quiet)
{
    char lib[PATH_MAX];
    if (find_library(lib, sizeof lib))
        return 2;
    /* Python processes: the gpuledger package (PyTorch's allocator, hooks) */
    if ((!getenv("GPULEDGER_TORCH") && gl_run_set_torch_mode("blocks")) || gl_run_set_pythonpath(quiet) ||
        set_preload(lib)) {
        fprintf(stderr, "gpuledger run: out of memory\n");
        return 2;
    }
    /* The driver loads us again through the injection path and calls
     * InitializeInjection at cuInit: CUPTI callbacks for what no wrapper
     * can see (static cudart). Not when CUPTI is switched off. */
    if (!getenv("CUDA_INJECTION64_PATH") && !cupti_off(getenv("GPULEDGER_CUPTI")))
        setenv("CUDA_INJECTION64_PATH", lib, 1);
    /* NVTX ranges and marks (torch.cuda.nvtx, libraries) become annotations */
    if (!getenv("NVTX_INJECTION64_PATH"))
        setenv("NVTX_INJECTION64_PATH", lib, 1);
    return 0;
}

/* Orphaned descendants come to us, so at the end we know who still runs;
 * SIGCHLD wakes the wait. 0, or 2 said. */
static int watch_children(void)
{
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
    return 0;
}

/* Fork and exec the command; SIGINT, SIGTERM and SIGHUP go on to it.
 * *exec_failed: the exec itself failed (the child said so through a
 * pipe). 0 and *pid, or 2 said. */
static int start_command(char **cmd, pid_t *pid, int *exec_failed)
{
    int execp[2];
    if (pipe2(execp, O_CLOEXEC) != 0) {
        fprintf(stderr, "gpuledger run: pipe: %s\n", strerror(errno));
        return 2;
    }
    *pid = fork();
    if (*pid < 0) {
        fprintf(stderr, "gpuledger run: fork: %s\n", strerror(errno));
        return 2;
    }
    if (*pid == 0) {
        signal(SIGCHLD, SIG_DFL);
        exec_command(cmd, execp[1]);
    }
    close(execp[1]);
    child_pid = *pid;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = forward_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    int exec_errno = 0;
    ssize_t got;
    while ((got = read(execp[0], &exec_errno, sizeof exec_errno)) < 0 && errno == EINTR)
        ;
    close(execp[0]);
    *exec_failed = got == (ssize_t)sizeof exec_errno;
    return 0;
}

/* The command's exit status as ours; a death by signal said unless quiet. */
static int exit_code(int status, const char *cmd, int quiet)
{
    if (WIFEXITED(status))
        return WEXITSTATUS(status);
    if (WIFSIGNALED(status)) {
        if (!quiet)
            fprintf(stderr, "gpuledger: %s was killed by signal %d (%s)\n", cmd, WTERMSIG(status),
                    strsignal(WTERMSIG(status)));
        return 128 + WTERMSIG(status);
    }
    return 1;
}

int cmd_run(int argc, char **argv)
{
    int quiet = 0, rc = parse_options(argc, argv, &quiet), exec_failed = 0;
    pid_t pid = 0;
    if (rc >= 0 || (rc = prepare_environment(quiet)))
        return rc;
    struct gl_watch w;
    if (gl_watch_open(&w) == 0)
        setenv("GPULEDGER_MANIFEST", w.name, 1);
    struct gl_config cfg;
    gl_config_load(&cfg, ignore_warning); /* what the command's processes will read */
    if ((rc = watch_children()) || (rc = start_command(argv + optind, &pid, &exec_failed)))
        return rc;
    int status = wait_command(pid, &w);
    if (exec_failed) { /* said as the shell says it */
        gl_watch_close(&w);
        return WIFEXITED(status) ? WEXITSTATUS(status) : 127;
    }
    if (!quiet) {
        struct gl_run_end end = {argv[optind], cfg.disable, cfg.output ? cfg.output : "gpuledger-%p.db",
                                 gl_print_db_summary};
        gl_watch_report(&w, &end);
    }
    gl_watch_close(&w);
    return exit_code(status, argv[optind], quiet);
}
