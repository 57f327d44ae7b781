/* cupti_static.c — what only CUPTI can see. A cudaMalloc/cudaFree pair
 * through the runtime (the wrappers see it; CUPTI's callbacks fire too and
 * must not double it), then driver calls through entry points no
 * interposer knows (as a statically linked cudart makes them): 2 MiB
 * leaked by static_path_alloc, 4 KiB allocated and freed; and a 64 KiB
 * module global reported by (fake) CUPTI activity records. */
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <stdio.h>

typedef CUresult (*alloc_fn)(CUdeviceptr *, size_t);
typedef CUresult (*free_fn)(CUdeviceptr);

__attribute__((noinline)) int static_path_alloc(alloc_fn a, free_fn f)
{
    CUdeviceptr big = 0, small = 0;
    int rc = a(&big, 2u << 20) != CUDA_SUCCESS;
    rc |= a(&small, 4096) != CUDA_SUCCESS;
    rc |= f(small) != CUDA_SUCCESS;
    __asm__ volatile("" ::: "memory");
    return rc;
}

int main(void)
{
    void *p = NULL;
    cudaMalloc(&p, 1u << 20);
    cudaFree(p);
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    alloc_fn a = h ? (alloc_fn)dlsym(h, "fakecuda_private_cuMemAlloc") : NULL;
    free_fn f = h ? (free_fn)dlsym(h, "fakecuda_private_cuMemFree") : NULL;
    if (!a || !f)
        return 3;
    int rc = static_path_alloc(a, f);
    void *cupti = dlopen("libcupti.so.13", RTLD_NOW | RTLD_NOLOAD);
    void (*add_static)(unsigned long long, unsigned long long, int) =
        cupti ? (void (*)(unsigned long long, unsigned long long, int))dlsym(cupti, "fakecupti_add_static") : NULL;
    if (add_static)
        add_static(0x7f0000000000ULL, 65536, 0);
    printf("cupti_static: %s\n", rc ? "failed" : "ok");
    return rc;
}
