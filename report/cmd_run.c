/* cmd_run.c — `gpuledger run`: put libgpuledger.so in front of a command
 * (LD_PRELOAD, prepended; CUDA_INJECTION64_PATH), run it, pass its exit
 * status through, and print one line per database it wrote. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "commands.h"
#include "help.h"
#include "paths.h"
#include "render.h"
#include "reader.h"
#include "run_python.h"

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

static void forward_signal(int sig)
{
    if (child_pid > 0)
        kill(child_pid, sig);
}

static void print_summaries(const char *manifest, int quiet)
{
    FILE *f = fopen(manifest, "r");
    if (!f)
        return;
    char line[PATH_MAX + 2];
    static char seen[64][PATH_MAX + 2];
    int nseen = 0, total = 0;
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = 0;
        if (!*line)
            continue;
        int dup = 0;
        for (int i = 0; i < nseen; i++)
            if (!strcmp(seen[i], line))
                dup = 1;
        if (dup)
            continue;
        if (nseen < 64)
            memcpy(seen[nseen++], line, sizeof line);
        total++;
        if (!quiet)
            gl_print_db_summary(stderr, line);
    }
    fclose(f);
    if (!quiet && total == 0)
        fprintf(stderr, "gpuledger: no database written: the program made no CUDA memory calls that were seen "
                        "(is it a CUDA program? for static cudart see README, CUDA_INJECTION64_PATH)\n");
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
    char manifest[] = "/tmp/gpuledger-run-XXXXXX";
    int mfd = mkstemp(manifest);
    if (mfd >= 0) {
        close(mfd);
        setenv("GPULEDGER_MANIFEST", manifest, 1);
    }

    pid_t pid = fork();
    if (pid < 0) {
        fprintf(stderr, "gpuledger run: fork: %s\n", strerror(errno));
        return 2;
    }
    if (pid == 0) {
        execvp(argv[optind], argv + optind);
        fprintf(stderr, "gpuledger run: cannot run '%s': %s\n", argv[optind], strerror(errno));
        _exit(127);
    }
    child_pid = pid;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = forward_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (mfd >= 0) {
        print_summaries(manifest, quiet);
        unlink(manifest);
    }
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
