/* procaddr.c — reaches the driver the ways PyTorch and static cudart do,
 * never through the dynamic linker: cuGetProcAddress from a dlopen()ed
 * libcuda.so.1 (cuMemAlloc_v2 / cuMemFree_v2), and
 * cudaGetDriverEntryPoint for the virtual memory calls (expandable
 * segments: reserve 8 MiB, create two 2 MiB handles, map them, unmap all
 * at once, release, free the range). */
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

typedef CUresult (*getproc_fn)(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *);

__attribute__((noinline)) int driver_alloc_via_procaddr(void)
{
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h)
        return 1;
    getproc_fn gp = (getproc_fn)dlsym(h, "cuGetProcAddress_v2");
    CUresult (*alloc)(CUdeviceptr *, size_t) = NULL;
    CUresult (*release)(CUdeviceptr) = NULL;
    if (!gp || gp("cuMemAlloc", (void **)&alloc, 13000, 0, NULL) || gp("cuMemFree", (void **)&release, 13000, 0, NULL))
        return 2;
    CUdeviceptr d = 0;
    if (alloc(&d, 4096))
        return 3;
    release(d);
    __asm__ volatile("" ::: "memory");
    return 0;
}

#define ENTRY(name, var)                                                                           \
    if (cudaGetDriverEntryPoint(name, (void **)&var, cudaEnableDefault, NULL) != cudaSuccess)      \
        return 10;

__attribute__((noinline)) int expandable_segment(void)
{
    CUresult (*reserve)(CUdeviceptr *, size_t, size_t, CUdeviceptr, unsigned long long);
    CUresult (*create)(CUmemGenericAllocationHandle *, size_t, const CUmemAllocationProp *, unsigned long long);
    CUresult (*map)(CUdeviceptr, size_t, size_t, CUmemGenericAllocationHandle, unsigned long long);
    CUresult (*access)(CUdeviceptr, size_t, const CUmemAccessDesc *, size_t);
    CUresult (*unmap)(CUdeviceptr, size_t);
    CUresult (*release)(CUmemGenericAllocationHandle);
    CUresult (*addr_free)(CUdeviceptr, size_t);
    ENTRY("cuMemAddressReserve", reserve);
    ENTRY("cuMemCreate", create);
    ENTRY("cuMemMap", map);
    ENTRY("cuMemSetAccess", access);
    ENTRY("cuMemUnmap", unmap);
    ENTRY("cuMemRelease", release);
    ENTRY("cuMemAddressFree", addr_free);
    const size_t seg = 2u << 20;
    CUdeviceptr base = 0;
    if (reserve(&base, 4 * seg, 0, 0, 0))
        return 11;
    CUmemAllocationProp prop;
    memset(&prop, 0, sizeof prop);
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = 0;
    CUmemGenericAllocationHandle h[2];
    for (int i = 0; i < 2; i++) {
        if (create(&h[i], seg, &prop, 0) || map(base + i * seg, seg, 0, h[i], 0))
            return 12;
    }
    CUmemAccessDesc d = {{CU_MEM_LOCATION_TYPE_DEVICE, 0}, CU_MEM_ACCESS_FLAGS_PROT_READWRITE};
    if (access(base, 2 * seg, &d, 1))
        return 13;
    memset((void *)(uintptr_t)base, 0xab, 2 * seg); /* it really is memory */
    if (unmap(base, 2 * seg) || release(h[0]) || release(h[1]) || addr_free(base, 4 * seg))
        return 14;
    __asm__ volatile("" ::: "memory");
    return 0;
}

int main(void)
{
    cudaFree(0);
    int a = driver_alloc_via_procaddr();
    int b = expandable_segment();
    printf("procaddr: %d %d\n", a, b);
    return a || b;
}
