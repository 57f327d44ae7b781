/* fake_vmm.c — the fake virtual memory management API, backed by real
 * mappings: cuMemCreate makes a memfd, cuMemAddressReserve an inaccessible
 * range, cuMemMap maps the memfd into it, cuMemSetAccess makes it usable. */
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fake_internal.h"

#define GRANULE (2u << 20)

struct phys {
    int fd;
    size_t size;
    int dev;
};

CUresult cuMemGetAllocationGranularity(size_t *g, const CUmemAllocationProp *prop, CUmemAllocationGranularity_flags o)
{
    (void)prop;
    (void)o;
    if (!g)
        return CUDA_ERROR_INVALID_VALUE;
    *g = GRANULE;
    return CUDA_SUCCESS;
}

CUresult cuMemCreate(CUmemGenericAllocationHandle *handle, size_t size, const CUmemAllocationProp *prop,
                     unsigned long long flags)
{
    (void)flags;
    if (!handle || !prop || size == 0 || size % GRANULE)
        return CUDA_ERROR_INVALID_VALUE;
    int dev = prop->location.id;
    CUresult r = fake_charge(dev, size);
    if (r != CUDA_SUCCESS)
        return r;
    int fd = memfd_create("fakecuda-phys", MFD_CLOEXEC);
    if (fd < 0 || ftruncate(fd, (off_t)size) != 0) {
        if (fd >= 0)
            close(fd);
        fake_uncharge(dev, size);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    struct phys *p = malloc(sizeof *p);
    if (!p)
        abort();
    p->fd = fd;
    p->size = size;
    p->dev = dev;
    *handle = (CUmemGenericAllocationHandle)(uintptr_t)p;
    return CUDA_SUCCESS;
}

CUresult cuMemRelease(CUmemGenericAllocationHandle handle)
{
    struct phys *p = (struct phys *)(uintptr_t)handle;
    if (!p)
        return CUDA_ERROR_INVALID_VALUE;
    close(p->fd); /* existing mappings keep the memory alive, as in CUDA */
    fake_uncharge(p->dev, p->size);
    free(p);
    return CUDA_SUCCESS;
}

CUresult cuMemAddressReserve(CUdeviceptr *ptr, size_t size, size_t alignment, CUdeviceptr addr,
                             unsigned long long flags)
{
    (void)addr;
    (void)flags;
    if (!ptr || size == 0)
        return CUDA_ERROR_INVALID_VALUE;
    size_t align = alignment > GRANULE ? alignment : GRANULE;
    size_t span = size + align;
    char *base = mmap(NULL, span, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (base == MAP_FAILED)
        return CUDA_ERROR_OUT_OF_MEMORY;
    uintptr_t start = ((uintptr_t)base + align - 1) & ~(uintptr_t)(align - 1);
    if (start > (uintptr_t)base)
        munmap(base, start - (uintptr_t)base);
    size_t tail = (uintptr_t)base + span - (start + size);
    if (tail)
        munmap((void *)(start + size), tail);
    *ptr = (CUdeviceptr)start;
    return CUDA_SUCCESS;
}

CUresult cuMemAddressFree(CUdeviceptr ptr, size_t size)
{
    if (!ptr || munmap((void *)(uintptr_t)ptr, size) != 0)
        return CUDA_ERROR_INVALID_VALUE;
    return CUDA_SUCCESS;
}

CUresult cuMemMap(CUdeviceptr ptr, size_t size, size_t offset, CUmemGenericAllocationHandle handle,
                  unsigned long long flags)
{
    (void)flags;
    struct phys *p = (struct phys *)(uintptr_t)handle;
    if (!p || offset + size > p->size)
        return CUDA_ERROR_INVALID_VALUE;
    void *m = mmap((void *)(uintptr_t)ptr, size, PROT_NONE, MAP_SHARED | MAP_FIXED, p->fd, (off_t)offset);
    return m == MAP_FAILED ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
}

CUresult cuMemUnmap(CUdeviceptr ptr, size_t size)
{
    void *m = mmap((void *)(uintptr_t)ptr, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE,
                   -1, 0);
    return m == MAP_FAILED ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
}

CUresult cuMemSetAccess(CUdeviceptr ptr, size_t size, const CUmemAccessDesc *desc, size_t count)
{
    (void)desc;
    (void)count;
    return mprotect((void *)(uintptr_t)ptr, size, PROT_READ | PROT_WRITE) ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
}
