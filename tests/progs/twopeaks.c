/* twopeaks.c — two devices whose peaks come in different steps, for a
 * bounded recording (tests/budget/check_budget.py, docs/bounded-recording.md):
 * 40 steps ended by gpuledger_mark("step N"); each step makes and frees
 * four 64 KiB temporaries on each device; device 0 keeps 1 MiB from the
 * start, device 1 2 MiB; step 10 adds an 8 MiB temporary on device 0 (its
 * peak: 9 MiB live), step 25 a 12 MiB one on device 1 (its peak: 14 MiB).
 * A budget that dropped step 10's window when device 1's peak rose would
 * lose device 0's peak and its ledger. */
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <stdio.h>

typedef void (*label_fn)(const char *);

__attribute__((noinline)) static void temporaries(void)
{
    void *t[4] = {NULL, NULL, NULL, NULL};
    for (int i = 0; i < 4; i++)
        cudaMalloc(&t[i], 64u << 10);
    for (int i = 0; i < 4; i++)
        cudaFree(t[i]);
}

__attribute__((noinline)) static void big_temporary(size_t bytes)
{
    void *p = NULL;
    cudaMalloc(&p, bytes);
    __asm__ volatile("" ::: "memory");
    cudaFree(p);
}

int main(void)
{
    label_fn mark = (label_fn)dlsym(RTLD_DEFAULT, "gpuledger_mark");
    void *keep0 = NULL, *keep1 = NULL;
    cudaSetDevice(0);
    cudaMalloc(&keep0, 1u << 20);
    cudaSetDevice(1);
    cudaMalloc(&keep1, 2u << 20);
    for (int s = 0; s < 40; s++) {
        for (int d = 0; d < 2; d++) {
            cudaSetDevice(d);
            temporaries();
            if ((d == 0 && s == 10) || (d == 1 && s == 25))
                big_temporary(d == 0 ? 8u << 20 : 12u << 20);
        }
        char label[32];
        snprintf(label, sizeof label, "step %d", s);
        if (mark)
            mark(label);
    }
    cudaSetDevice(0);
    cudaFree(keep0);
    cudaSetDevice(1);
    cudaFree(keep1);
    return 0;
}
