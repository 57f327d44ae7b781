/* remainder.c — memory no allocation API shows, with figures the fake
 * driver makes exact: its context (300 MiB, at the first call) and the
 * local memory its first kernel launch reserves (64 MiB). gpuledger_mark
 * (looked up at run time) makes gpuledger take the process's own figure:
 *   cudaMalloc 4 MiB, mark "start"       outside the ledger: the context
 *   a kernel launch, mark "launched"     + the local memory
 *   cudaMalloc 8 MiB (never freed), exit */
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <stdio.h>

int main(void)
{
    void (*mark)(const char *) = (void (*)(const char *))dlsym(RTLD_DEFAULT, "gpuledger_mark");
    void *a = NULL, *b = NULL;
    int bad = cudaMalloc(&a, 4 << 20) != cudaSuccess;
    if (mark)
        mark("start");
    dim3 one = {1, 1, 1};
    bad |= cudaLaunchKernel((const void *)main, one, one, NULL, 0, 0) != cudaSuccess;
    if (mark)
        mark("launched");
    bad |= cudaMalloc(&b, 8 << 20) != cudaSuccess;
    printf("remainder: %s (%p kept)\n", bad ? "failed" : "ok", b);
    return bad;
}
