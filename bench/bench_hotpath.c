/* bench_hotpath.c — what one recorded event costs the calling thread,
 * measured inside one process: rounds of cudaMallocAsync/cudaFreeAsync
 * pairs alternate with recording off and on (gpuledger_set_recording), so
 * machine drift between processes does not enter. Runs against whatever
 * CUDA runtime it is linked to: the fake one here, the real one on a GPU
 * machine (scripts/gpu-hotpath.sh builds it there).
 *
 *   gpuledger run -q [-d N] -- bench_hotpath [--pairs N] [--rounds R] [--deep D]
 *
 * Prints one line per call depth (the loop run D frames down, so that a
 * stack of that many frames is really walked), then the cost of the pieces
 * an event is made of that do not depend on gpuledger: the clock, the
 * runtime's device query, the pair itself. Without gpuledger it prints
 * only those. */
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_stats.h"
#if defined(__x86_64__)
#include <x86intrin.h>
#endif

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static long pairs = 20000;
static cudaStream_t stream;

/* ns per pair over `pairs` pairs, timed in bursts of 2,048 pairs (4,096
 * events, a quarter of the default ring) with a pause for the writer
 * between them: the figure is what the calling thread pays per call, not
 * the writer's throughput (bench_overhead's sustained-rate table is that). */
static double pairs_round(void)
{
    const long burst = 2048;
    double dt = 0;
    for (long done = 0; done < pairs; done += burst) {
        long m = pairs - done < burst ? pairs - done : burst;
        struct timespec nap = {0, 5 * 1000 * 1000};
        nanosleep(&nap, NULL);
        double t0 = now_ns();
        for (long i = 0; i < m; i++) {
            void *p;
            if (cudaMallocAsync(&p, 4096, stream) != cudaSuccess) {
                fprintf(stderr, "bench_hotpath: cudaMallocAsync failed\n");
                exit(1);
            }
            cudaFreeAsync(p, stream);
        }
        dt += now_ns() - t0;
    }
    return dt / (double)pairs;
}

static void (*set_recording)(int);
static int rounds = 9;
static double res_off, res_on;

static void ab(void)
{
    double off[64], on[64];
    for (int w = 0; w < 2; w++) { /* warm-up in both states: rules cached, pool grown */
        set_recording(0);
        pairs_round();
        set_recording(1);
        pairs_round();
    }
    for (int r = 0; r < rounds; r++) {
        set_recording(0);
        off[r] = pairs_round();
        set_recording(1);
        on[r] = pairs_round();
    }
    res_off = bench_median(off, rounds);
    res_on = bench_median(on, rounds);
}

__attribute__((noinline)) static void deep(int levels)
{
    if (levels <= 0) {
        ab();
        return;
    }
    deep(levels - 1);
    __asm__ volatile("" ::: "memory"); /* a real frame per level */
}

typedef int (*ctx_fn)(void **);

int main(int argc, char **argv)
{
    int depths[8] = {0, 20, 60}, nd = 3;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--pairs") && i + 1 < argc)
            pairs = atol(argv[++i]);
        else if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
            rounds = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--deep") && i + 1 < argc) {
            nd = bench_parse_depths(argv[++i], depths, 8);
        } else {
            fprintf(stderr, "usage: [gpuledger run -q [-d N] --] bench_hotpath [--pairs N] [--rounds R (<=64)] "
                            "[--deep D1,D2,...]\n");
            return 2;
        }
    }
    if (pairs < 1 || rounds < 1 || rounds > 64) {
        fprintf(stderr, "bench_hotpath: --pairs must be >= 1 and --rounds 1..64\n");
        return 2;
    }
    if (cudaStreamCreate(&stream) != cudaSuccess) {
        fprintf(stderr, "bench_hotpath: no CUDA device\n");
        return 1;
    }
    set_recording = (void (*)(int))dlsym(RTLD_DEFAULT, "gpuledger_set_recording");
    if (set_recording) {
        printf("| frames below the loop | off ns/pair | on ns/pair | added ns/event |\n|---|---|---|---|\n");
        for (int i = 0; i < nd; i++) {
            deep(depths[i]);
            printf("| %d | %.0f | %.0f | %.0f |\n", depths[i], res_off, res_on, (res_on - res_off) / 2);
            fflush(stdout);
        }
        set_recording(0);
    }
    /* the pieces, unprofiled */
    double v[64];
    const long n = 200000;
    for (int r = 0; r < rounds; r++) {
        double t0 = now_ns();
        for (long i = 0; i < n; i++) {
            struct timespec ts;
            clock_gettime(CLOCK_MONOTONIC, &ts);
            __asm__ volatile("" ::"r"(ts.tv_nsec));
        }
        v[r] = (now_ns() - t0) / (double)n;
    }
    printf("clock_gettime(CLOCK_MONOTONIC): %.1f ns\n", bench_median(v, rounds));
#if defined(__x86_64__)
    for (int r = 0; r < rounds; r++) { /* what an event stamp costs (interpose/clock.c) */
        double t0 = now_ns();
        for (long i = 0; i < n; i++) {
            unsigned long long t = __rdtsc();
            __asm__ volatile("" ::"r"(t));
        }
        v[r] = (now_ns() - t0) / (double)n;
    }
    printf("rdtsc: %.1f ns\n", bench_median(v, rounds));
#endif
    for (int r = 0; r < rounds; r++) {
        double t0 = now_ns();
        for (long i = 0; i < n; i++) {
            int d;
            cudaGetDevice(&d);
        }
        v[r] = (now_ns() - t0) / (double)n;
    }
    printf("cudaGetDevice: %.1f ns\n", bench_median(v, rounds));
    ctx_fn ctx = NULL;
    enum cudaDriverEntryPointQueryResult qr;
    if (cudaGetDriverEntryPointByVersion("cuCtxGetCurrent", (void **)&ctx, 12000, cudaEnableDefault, &qr) !=
            cudaSuccess ||
        qr != cudaDriverEntryPointSuccess)
        ctx = NULL;
    if (ctx) {
        for (int r = 0; r < rounds; r++) {
            double t0 = now_ns();
            for (long i = 0; i < n; i++) {
                void *c;
                ctx(&c);
            }
            v[r] = (now_ns() - t0) / (double)n;
        }
        printf("cuCtxGetCurrent: %.1f ns\n", bench_median(v, rounds));
    }
    for (int r = 0; r < rounds; r++)
        v[r] = pairs_round();
    printf("cudaMallocAsync+cudaFreeAsync (recording %s): %.0f ns/pair\n", set_recording ? "off" : "absent",
           bench_median(v, rounds));
    if (set_recording)
        set_recording(1);
    return 0;
}
