/* oom.c — five allocations; run with FAKECUDA_FAIL_ALLOC=3 the third
 * (a 3 MiB cudaMalloc from grow_cache) fails with out-of-memory. */
#include <cuda_runtime_api.h>
#include <stdio.h>

__attribute__((noinline)) cudaError_t grow_cache(void **p, size_t bytes)
{
    cudaError_t e = cudaMalloc(p, bytes);
    __asm__ volatile("" ::: "memory");
    return e;
}

int main(void)
{
    void *p[5] = {0};
    int failed = 0;
    for (int i = 0; i < 5; i++)
        if (grow_cache(&p[i], (size_t)(i + 1) << 20) != cudaSuccess)
            failed++;
    for (int i = 0; i < 5; i++)
        cudaFree(p[i]);
    printf("oom: %d allocation(s) failed\n", failed);
    return failed ? 1 : 0;
}
