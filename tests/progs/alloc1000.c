/* alloc1000.c — 1,000 cudaMalloc of sizes 1000+i bytes from one function;
 * frees all but three (i = 100, 500, 900). Used by the integration tests. */
#include <cuda_runtime_api.h>
#include <stdio.h>

static void *ptrs[1000];

__attribute__((noinline)) void allocate_buffers(void)
{
    for (int i = 0; i < 1000; i++)
        if (cudaMalloc(&ptrs[i], 1000 + (size_t)i) != cudaSuccess)
            fprintf(stderr, "cudaMalloc %d failed\n", i);
    __asm__ volatile("" ::: "memory"); /* no tail call: keep this frame */
}

__attribute__((noinline)) void release_buffers(void)
{
    for (int i = 0; i < 1000; i++)
        if (i != 100 && i != 500 && i != 900)
            cudaFree(ptrs[i]);
    __asm__ volatile("" ::: "memory");
}

int main(void)
{
    allocate_buffers();
    release_buffers();
    return 0;
}
