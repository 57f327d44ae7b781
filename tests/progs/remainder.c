/* remainder.c — memory no allocation API shows, with figures the fake
 * driver makes exact: its context (300 MiB, at the first call) and the
 * local memory its first kernel launch reserves (64 MiB). gpuledger_mark
 * (looked up at run time) makes gpuledger take the process's own figure:
 *   cudaMalloc 4 MiB, mark "start"            outside the ledger: the context
 *   a kernel launch, 11 ms, mark "launched"   + the local memory
 *   cudaMalloc 8 MiB (never freed), exit
 * `remainder marks [MS]`: a mark samples a device at most every
 * GPULEDGER_MARK_SAMPLE_MS (its figure and its pools): cudaMallocAsync
 * 1 MiB, marks m1 m2 m3, MS ms (default 11), mark m4, exit.
 * `remainder highwater`: the samples the writer asks for as the ledger
 * grows, without marks. Each call is followed by gpuledger_checkpoint (the
 * writer has seen it and asked for a sample, or not) and 11 ms (past the
 * 10 ms a device's samples are apart at least):
 *   ten cudaMalloc of 1 MiB      a sample at every second one
 *   the last five freed, five 1 MiB again: under the high-water mark, none
 *   cudaMalloc 512 KiB           under the last mark + 2 MiB: none asked
 *   cudaMalloc 2 MiB             past it: asked for, taken at the next
 *   the 512 KiB freed            allocation (a free takes none; it cannot
 *   cudaMalloc 256 KiB           raise the high-water mark): here
 *   the 2 MiB freed, exit        the sample at exit */
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static uint64_t (*checkpoint)(void);

static int step(int failed)
{
    if (checkpoint)
        checkpoint();
    struct timespec d = {0, 11000000L};
    nanosleep(&d, NULL);
    return failed;
}

static int highwater(void)
{
    checkpoint = (uint64_t(*)(void))dlsym(RTLD_DEFAULT, "gpuledger_checkpoint");
    void *p[10] = {0}, *q = NULL, *r = NULL, *t = NULL;
    int bad = 0;
    for (int i = 0; i < 10; i++)
        bad |= step(cudaMalloc(&p[i], 1 << 20) != cudaSuccess);
    for (int i = 5; i < 10; i++)
        bad |= step(cudaFree(p[i]) != cudaSuccess);
    for (int i = 5; i < 10; i++)
        bad |= step(cudaMalloc(&p[i], 1 << 20) != cudaSuccess);
    bad |= step(cudaMalloc(&q, 512 << 10) != cudaSuccess);
    bad |= step(cudaMalloc(&r, 2 << 20) != cudaSuccess);
    bad |= step(cudaFree(q) != cudaSuccess);
    bad |= step(cudaMalloc(&t, 256 << 10) != cudaSuccess);
    bad |= step(cudaFree(r) != cudaSuccess);
    printf("remainder highwater: %s\n", bad ? "failed" : "ok");
    return bad;
}

static int marks(long pause_ms)
{
    void (*mark)(const char *) = (void (*)(const char *))dlsym(RTLD_DEFAULT, "gpuledger_mark");
    void *p = NULL;
    int bad = cudaMallocAsync(&p, 1 << 20, 0) != cudaSuccess;
    const char *labels[] = {"m1", "m2", "m3", "m4"};
    for (int i = 0; i < 4; i++) {
        if (i == 3) {
            struct timespec d = {pause_ms / 1000, pause_ms % 1000 * 1000000L};
            nanosleep(&d, NULL);
        }
        if (mark)
            mark(labels[i]);
    }
    bad |= cudaFreeAsync(p, 0) != cudaSuccess;
    bad |= cudaStreamSynchronize(0) != cudaSuccess;
    printf("remainder marks: %s\n", bad ? "failed" : "ok");
    return bad;
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "highwater"))
        return highwater();
    if (argc > 1 && !strcmp(argv[1], "marks"))
        return marks(argc > 2 ? atol(argv[2]) : 11);
    void (*mark)(const char *) = (void (*)(const char *))dlsym(RTLD_DEFAULT, "gpuledger_mark");
    void *a = NULL, *b = NULL;
    int bad = cudaMalloc(&a, 4 << 20) != cudaSuccess;
    if (mark)
        mark("start");
    dim3 one = {1, 1, 1};
    bad |= cudaLaunchKernel((const void *)main, one, one, NULL, 0, 0) != cudaSuccess;
    /* a mark samples a device at most every 10 ms */
    struct timespec d = {0, 11000000L};
    nanosleep(&d, NULL);
    if (mark)
        mark("launched");
    bad |= cudaMalloc(&b, 8 << 20) != cudaSuccess;
    printf("remainder: %s (%p kept)\n", bad ? "failed" : "ok", b);
    return bad;
}
