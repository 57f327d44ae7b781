/* bench_process_cost.c — what gpuledger costs processes that make no CUDA
 * memory call, and processes that fork or make many threads: each case run
 * bare and preloaded in alternating rounds, medians compared.
 *
 *   bench_process_cost LIB NOCUDA [ROUNDS]
 *     LIB     build/interpose/libgpuledger.so
 *     NOCUDA  build/tests/nocuda (tests/progs/nocuda.c)
 *
 * Cases: 100 x /bin/true (per-process time and peak RSS), nocuda mem
 * (private dirty memory), nocuda fork 200, nocuda threads 20000, nocuda
 * cuda-threads 20000 (each thread one cudaMalloc/cudaFree pair). Prints
 * one line per case: bare and preloaded medians and their ratio. */
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench_stats.h"

extern char **environ;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Run argv (preloaded with lib, or bare) and wait: seconds, peak RSS in
 * KiB (*rss), and the first number after "private_dirty_kb " on its
 * stdout (*dirty, -1 if none). */
static double run(const char *lib, char *const argv[], long *rss, long *dirty)
{
    char pre[4200], out[] = "/tmp/gl-bench-pcXXXXXX";
    int fd = mkstemp(out);
    snprintf(pre, sizeof pre, "LD_PRELOAD=%s", lib ? lib : "");
    char *env[] = {pre, "GPULEDGER_OUTPUT=/tmp/gl-bench-pc-%p.db", "GPULEDGER_QUIET=1",
                   lib ? NULL : "PATH=/usr/bin:/bin", NULL};
    if (!lib)
        env[0] = "GL_BENCH=bare";
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fd, 1);
    double t0 = now_s();
    pid_t pid;
    if (posix_spawn(&pid, argv[0], &fa, NULL, argv, env) != 0) {
        perror(argv[0]);
        exit(2);
    }
    int st;
    struct rusage ru;
    wait4(pid, &st, 0, &ru);
    double t = now_s() - t0;
    posix_spawn_file_actions_destroy(&fa);
    *rss = ru.ru_maxrss;
    *dirty = -1;
    char buf[256] = "";
    lseek(fd, 0, SEEK_SET);
    ssize_t n = read(fd, buf, sizeof buf - 1);
    buf[n > 0 ? n : 0] = 0;
    char *p = strstr(buf, "private_dirty_kb ");
    if (p)
        *dirty = atol(p + 17);
    close(fd);
    unlink(out);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        fprintf(stderr, "%s exited %d\n", argv[0], st);
        exit(2);
    }
    return t;
}

struct result {
    double t[2], rss[2], dirty[2];
};

static void measure(const char *lib, char *const argv[], int repeat, int rounds, struct result *res)
{
    double t[2][64], rss[2][64], dirty[2][64];
    for (int r = 0; r < rounds; r++)
        for (int k = 0; k < 2; k++) { /* bare, preloaded, bare, ... */
            double sum = 0;
            long maxrss = 0, d = -1;
            for (int i = 0; i < repeat; i++) {
                long rs, dd;
                sum += run(k ? lib : NULL, argv, &rs, &dd);
                if (rs > maxrss)
                    maxrss = rs;
                d = dd;
            }
            t[k][r] = sum / repeat;
            rss[k][r] = (double)maxrss;
            dirty[k][r] = (double)d;
        }
    for (int k = 0; k < 2; k++) {
        res->t[k] = bench_median(t[k], rounds);
        res->rss[k] = bench_median(rss[k], rounds);
        res->dirty[k] = bench_median(dirty[k], rounds);
    }
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: bench_process_cost LIB NOCUDA [ROUNDS]\n");
        return 2;
    }
    const char *lib = argv[1];
    char *nc = argv[2];
    int rounds = argc > 3 ? atoi(argv[3]) : 7;
    if (rounds < 1 || rounds > 64)
        rounds = 7;
    struct result r;
    printf("%d rounds, alternating bare / preloaded, medians\n", rounds);

    measure(lib, (char *const[]){"/bin/true", NULL}, 100, rounds, &r);
    printf("/bin/true            bare %7.3f ms  preloaded %7.3f ms  +%.3f ms a process  ratio %.2f  "
           "peak RSS %.0f -> %.0f KiB (+%.0f)\n",
           r.t[0] * 1e3, r.t[1] * 1e3, (r.t[1] - r.t[0]) * 1e3, r.t[1] / r.t[0], r.rss[0], r.rss[1],
           r.rss[1] - r.rss[0]);
    measure(lib, (char *const[]){nc, "mem", NULL}, 20, rounds, &r);
    printf("no CUDA call         private dirty %.0f -> %.0f KiB (+%.0f)  +%.3f ms a process\n", r.dirty[0],
           r.dirty[1], r.dirty[1] - r.dirty[0], (r.t[1] - r.t[0]) * 1e3);
    measure(lib, (char *const[]){nc, "fork", "200", NULL}, 1, rounds, &r);
    printf("200 fork+_exit       bare %7.1f ms  preloaded %7.1f ms  ratio %.2f\n", r.t[0] * 1e3, r.t[1] * 1e3,
           r.t[1] / r.t[0]);
    measure(lib, (char *const[]){nc, "threads", "20000", NULL}, 1, rounds, &r);
    printf("20000 empty threads  bare %7.1f ms  preloaded %7.1f ms  ratio %.2f\n", r.t[0] * 1e3, r.t[1] * 1e3,
           r.t[1] / r.t[0]);
    measure(lib, (char *const[]){nc, "cuda-threads", "20000", NULL}, 1, rounds, &r);
    printf("20000 threads, 1 pair bare %7.1f ms  preloaded %7.1f ms  ratio %.2f\n", r.t[0] * 1e3, r.t[1] * 1e3,
           r.t[1] / r.t[0]);
    return 0;
}
