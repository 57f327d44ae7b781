/* bench_overhead.c — what gpuledger costs an application thread, measured
 * against the fake CUDA runtime (the GPU run is scripts/gpu-check.sh).
 *
 *   bench_overhead [--pairs N] [--repeats R] [--threads-seconds S]
 *
 * Part 1, per-event overhead: the same bursts of allocation/free pairs run in
 * child processes bare and with libgpuledger.so preloaded at stack depths
 * 0, 16 and 48 (also from 60 frames down, so that 48 frames are walked); medians of R repeats; ns added per event = (profiled -
 * bare) / 2. Part 2, sustained rate: 1, 2, 4 and 8 threads allocating as
 * fast as they can for S seconds each; events written per second, events
 * dropped, with the default bounded wait and with no wait (drops instead).
 * Prints Markdown tables. */
#include <cuda_runtime_api.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ---- child: the measured loops ------------------------------------------- */

static int pairs_loop(const char *api, long n);

/* The "deep" case: the same loop called 60 frames down, so that a depth-48
 * stack really has 48 frames to walk (the plain loop's stack is ~8 deep). */
__attribute__((noinline)) static int deep(int levels, long n)
{
    if (levels == 0)
        return pairs_loop("async", n);
    int r = deep(levels - 1, n);
    __asm__ volatile("" ::: "memory"); /* not a tail call: a real frame per level */
    return r;
}

static int child_pairs(const char *api, long n)
{
    if (!strcmp(api, "deep"))
        return deep(60, n);
    return pairs_loop(api, n);
}

static int pairs_loop(const char *api, long n)
{
    cudaStream_t s;
    cudaStreamCreate(&s);
    int async = !strcmp(api, "async");
    for (int w = 0; w < 2000; w++) { /* warm-up: pool chunk, first stacks, writer start */
        void *p;
        if (async) {
            cudaMallocAsync(&p, 4096, s);
            cudaFreeAsync(p, s);
        } else {
            cudaMalloc(&p, 4096);
            cudaFree(p);
        }
    }
    /* Bursts of 2,048 pairs (4,096 events, a quarter of the default ring)
     * with a pause between them for the writer: what is timed is what the
     * application thread pays per call, not the writer's throughput (the
     * sustained-rate table measures that). */
    const long burst = 2048;
    double dt = 0;
    struct timespec pause = {0, 20 * 1000 * 1000};
    for (long done = 0; done < n; done += burst) {
        nanosleep(&pause, NULL);
        double t0 = now_s();
        for (long i = 0; i < burst; i++) {
            void *p;
            if (async) {
                cudaMallocAsync(&p, 4096, s);
                cudaFreeAsync(p, s);
            } else {
                cudaMalloc(&p, 4096);
                cudaFree(p);
            }
        }
        dt += now_s() - t0;
    }
    n = (n + burst - 1) / burst * burst;
    printf("%.3f\n", dt * 1e9 / (double)n);
    return 0;
}

static volatile int stop_flag;
static long counts[64];

static void *spin(void *arg)
{
    long idx = (long)(intptr_t)arg, k = 0;
    cudaStream_t s;
    cudaStreamCreate(&s);
    while (!stop_flag) {
        void *p;
        cudaMallocAsync(&p, 512, s);
        cudaFreeAsync(p, s);
        k++;
    }
    counts[idx] = k;
    return NULL;
}

static int child_rate(int threads, double seconds)
{
    pthread_t t[64];
    cudaFree(0);
    double t0 = now_s();
    for (long i = 0; i < threads; i++)
        pthread_create(&t[i], NULL, spin, (void *)(intptr_t)i);
    struct timespec d = {(time_t)seconds, (long)((seconds - (double)(time_t)seconds) * 1e9)};
    nanosleep(&d, NULL);
    stop_flag = 1;
    long total = 0;
    for (int i = 0; i < threads; i++) {
        pthread_join(t[i], NULL);
        total += counts[i];
    }
    printf("%ld %.6f\n", 2 * total, now_s() - t0);
    return 0;
}

/* ---- parent: run children, take medians ----------------------------------- */

static char self[4096], lib[4096];

static int run_child(char *const argv[], char *const env[], char *out, size_t outsz)
{
    int pipefd[2];
    if (pipe(pipefd))
        return -1;
    pid_t pid = fork();
    if (pid == 0) {
        dup2(pipefd[1], 1);
        close(pipefd[0]);
        for (char *const *e = env; e && *e; e++)
            putenv(*e);
        execv(self, argv);
        _exit(127);
    }
    close(pipefd[1]);
    size_t n = 0;
    ssize_t k;
    while (n < outsz - 1 && (k = read(pipefd[0], out + n, outsz - 1 - n)) > 0)
        n += (size_t)k;
    out[n] = 0;
    close(pipefd[0]);
    int st;
    waitpid(pid, &st, 0);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median_ns(const char *api, long pairs, int repeats, const char *depth)
{
    double v[64];
    char out[256], np[32], preload[4200], dep[64], outp[128];
    snprintf(np, sizeof np, "%ld", pairs);
    for (int r = 0; r < repeats; r++) {
        char *argv[] = {self, "--child-pairs", (char *)api, np, NULL};
        snprintf(preload, sizeof preload, "LD_PRELOAD=%s", lib);
        snprintf(dep, sizeof dep, "GPULEDGER_STACK_DEPTH=%s", depth ? depth : "0");
        snprintf(outp, sizeof outp, "GPULEDGER_OUTPUT=/tmp/gl-bench-%d-%%p.db", (int)getpid());
        char *env[] = {preload, dep, outp, "GPULEDGER_QUIET=1", NULL};
        run_child(argv, depth ? env : NULL, out, sizeof out);
        v[r] = atof(out);
    }
    qsort(v, (size_t)repeats, sizeof v[0], cmp_d);
    return v[repeats / 2];
}

static void rate(int threads, double seconds, const char *wait)
{
    char out[256], nt[16], sec[32], preload[4200], w[64], outp[160];
    snprintf(nt, sizeof nt, "%d", threads);
    snprintf(sec, sizeof sec, "%.3f", seconds);
    snprintf(preload, sizeof preload, "LD_PRELOAD=%s", lib);
    snprintf(w, sizeof w, "GPULEDGER_FULL_WAIT_MS=%s", wait);
    snprintf(outp, sizeof outp, "GPULEDGER_OUTPUT=/tmp/gl-bench-rate-%d.db", (int)getpid());
    char *argv[] = {self, "--child-rate", nt, sec, NULL};
    char *env[] = {preload, w, outp, "GPULEDGER_QUIET=1", "GPULEDGER_STACK_DEPTH=16", NULL};
    double t0 = now_s();
    run_child(argv, env, out, sizeof out);
    double wall = now_s() - t0; /* includes the writer finishing at exit */
    long made = 0;
    double secs = 0;
    sscanf(out, "%ld %lf", &made, &secs);
    char path[160];
    snprintf(path, sizeof path, "/tmp/gl-bench-rate-%d.db", (int)getpid());
    sqlite3 *db;
    long written = 0, dropped = 0;
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK) {
        sqlite3_stmt *st;
        if (sqlite3_prepare_v2(db, "SELECT event_count, dropped_events FROM run", -1, &st, NULL) == SQLITE_OK &&
            sqlite3_step(st) == SQLITE_ROW) {
            written = sqlite3_column_int64(st, 0);
            dropped = sqlite3_column_int64(st, 1);
        }
        sqlite3_finalize(st);
    }
    sqlite3_close(db);
    unlink(path);
    printf("| %d | %s ms | %.0f | %.0f | %ld | %.1f%% |\n", threads, wait, (double)made / secs,
           (double)written / wall, dropped, made ? 100.0 * (double)dropped / (double)made : 0.0);
    fflush(stdout);
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "--child-pairs"))
        return child_pairs(argv[2], atol(argv[3]));
    if (argc > 1 && !strcmp(argv[1], "--child-rate"))
        return child_rate(atoi(argv[2]), atof(argv[3]));
    long pairs = 100000;
    int repeats = 5;
    double seconds = 3;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--pairs") && i + 1 < argc)
            pairs = atol(argv[++i]);
        else if (!strcmp(argv[i], "--repeats") && i + 1 < argc)
            repeats = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--threads-seconds") && i + 1 < argc)
            seconds = atof(argv[++i]);
        else {
            printf("usage: %s [--pairs N] [--repeats R (odd, <= 63)] [--threads-seconds S]\n", argv[0]);
            return strcmp(argv[i], "--help") ? 2 : 0;
        }
    }
    if (repeats < 1 || repeats > 63)
        repeats = 5;
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    self[n > 0 ? n : 0] = 0;
    const char *l = getenv("GPULEDGER_LIB");
    if (l)
        snprintf(lib, sizeof lib, "%s", l);
    else {
        snprintf(lib, sizeof lib, "%s", self);
        char *slash = strrchr(lib, '/');
        snprintf(slash ? slash : lib, sizeof lib - (size_t)(slash ? slash - lib : 0), "/../interpose/libgpuledger.so");
    }
    printf("## per-event overhead (fake runtime, %ld pairs, median of %d)\n\n", pairs, repeats);
    printf("| API pair | bare ns/pair | depth | profiled ns/pair | added ns/event |\n|---|---|---|---|---|\n");
    const char *apis[] = {"async", "malloc", "deep"};
    const char *names[] = {"cudaMallocAsync+cudaFreeAsync", "cudaMalloc+cudaFree",
                           "cudaMallocAsync+cudaFreeAsync, 60 frames deep"};
    for (int a = 0; a < 3; a++) {
        double bare = median_ns(apis[a], pairs, repeats, NULL);
        const char *depths[] = {"0", "16", "48"};
        for (int d = 0; d < 3; d++) {
            double prof = median_ns(apis[a], pairs, repeats, depths[d]);
            printf("| %s | %.0f | %s | %.0f | %.0f |\n", names[a], bare, depths[d], prof, (prof - bare) / 2);
            fflush(stdout);
        }
    }
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -f /tmp/gl-bench-%d-*", (int)getpid());
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove the temporary databases\n");
    printf("\n## sustained rate (%.0f s per row, stack depth 16)\n\n", seconds);
    printf("| threads | full-queue wait | events/s made | events/s written | dropped | dropped share |\n"
           "|---|---|---|---|---|---|\n");
    int th[] = {1, 2, 4, 8};
    for (int i = 0; i < 4; i++)
        rate(th[i], seconds, "100");
    for (int i = 0; i < 4; i++)
        rate(th[i], seconds, "0");
    return 0;
}
