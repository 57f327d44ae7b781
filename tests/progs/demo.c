/* demo.c — the README's example: a tiny "training loop" against the CUDA
 * runtime. Weights with cudaMalloc, per-step activations from the
 * stream-ordered pool, a workspace that is forgotten every few steps (the
 * leak gpuledger should point at), and an out-of-memory attempt. */
#include <cuda_runtime_api.h>
#include <stdio.h>

#define STEPS 8

__attribute__((noinline)) static void *load_weights(size_t bytes)
{
    void *w = NULL;
    if (cudaMalloc(&w, bytes) != cudaSuccess)
        return NULL;
    cudaMemset(w, 0, bytes);
    return w;
}

__attribute__((noinline)) static void *forward_activations(cudaStream_t s, size_t bytes)
{
    void *a = NULL;
    cudaMallocAsync(&a, bytes, s);
    return a;
}

__attribute__((noinline)) static void *scratch_workspace(size_t bytes)
{
    void *w = NULL;
    cudaMalloc(&w, bytes);
    return w; /* the caller forgets some of these: a leak */
}

__attribute__((noinline)) static int try_huge_buffer(void)
{
    void *p = NULL;
    cudaError_t e = cudaMalloc(&p, (size_t)1 << 50); /* 1 PiB: out of memory */
    if (e == cudaSuccess)
        cudaFree(p);
    return (int)e;
}

int main(void)
{
    cudaStream_t s;
    cudaStreamCreate(&s);
    void *weights = load_weights(64u << 20);
    for (int step = 0; step < STEPS; step++) {
        void *act = forward_activations(s, (size_t)(8 + step) << 20);
        void *ws = scratch_workspace(1u << 20);
        if (step % 3 != 2)
            cudaFree(ws); /* every third step the workspace is leaked */
        cudaFreeAsync(act, s);
    }
    cudaStreamSynchronize(s);
    int e = try_huge_buffer();
    printf("demo: %d steps done, weights at %p, huge allocation returned %s\n", STEPS, weights,
           cudaGetErrorString((cudaError_t)e));
    cudaFree(weights);
    cudaStreamDestroy(s);
    return 0;
}
