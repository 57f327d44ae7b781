// alloc_leak.cu — real-GPU check program: 10 cudaMalloc and 20
// cudaMallocAsync, everything freed except one 12,345-byte cudaMalloc and
// one 1,000-byte cudaMallocAsync (13,345 bytes leaked), a kernel touching
// a module global, and a deliberate out-of-memory cudaMalloc.
#include <cstdio>
#include <cuda_runtime.h>

__device__ int module_global[4096];

__global__ void touch(int *p, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        p[i] = i;
        module_global[i % 4096] += 1;
    }
}

__attribute__((noinline)) void *leaky_cudaMalloc(size_t n)
{
    void *p = nullptr;
    cudaMalloc(&p, n);
    return p;
}

__attribute__((noinline)) void *leaky_cudaMallocAsync(size_t n, cudaStream_t s)
{
    void *p = nullptr;
    cudaMallocAsync(&p, n, s);
    return p;
}

int main()
{
    cudaStream_t s;
    cudaStreamCreate(&s);
    void *d[10], *a[20];
    for (int i = 0; i < 10; i++)
        cudaMalloc(&d[i], (size_t)(i + 1) << 20);
    for (int i = 0; i < 20; i++)
        cudaMallocAsync(&a[i], (size_t)(i + 1) << 16, s);
    touch<<<16, 256, 0, s>>>((int *)d[9], 4096);
    void *leak1 = leaky_cudaMalloc(12345);
    void *leak2 = leaky_cudaMallocAsync(1000, s);
    for (int i = 0; i < 20; i++)
        cudaFreeAsync(a[i], s);
    cudaStreamSynchronize(s);
    for (int i = 0; i < 10; i++)
        cudaFree(d[i]);
    void *huge = nullptr;
    cudaError_t e = cudaMalloc(&huge, (size_t)1 << 50);
    printf("alloc_leak: leaked %p and %p; 1 PiB cudaMalloc -> %s\n", leak1, leak2, cudaGetErrorName(e));
    cudaStreamSynchronize(s);
    return 0;
}
