/* hooks_driver.c — wrappers of the CUDA driver allocation API: classic
 * allocations, stream-ordered pools, pinned host memory and the virtual
 * memory management calls (cuMemCreate / Map / Unmap / Release / Address*).
 * Reached by symbol interposition and, far more often, through the
 * pointers handed out by hooks_procaddr.c. */
#include "cuda_extra.h"
#include "graph_mem.h"
#include "wrap.h"

#define DRV_FAIL CUDA_ERROR_NOT_INITIALIZED
#define DRV_DEV gl_driver_device()

GL_EXPORT CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize)
{
    GL_AFTER(cuMemAlloc_v2, CUresult, DRV_FAIL, DRV_DEV, real(dptr, bytesize),
             (c.addr = r == CUDA_SUCCESS && dptr ? *dptr : 0, c.size = bytesize));
}

GL_EXPORT CUresult cuMemAllocPitch_v2(CUdeviceptr *dptr, size_t *pPitch, size_t WidthInBytes, size_t Height,
                                      unsigned int ElementSizeBytes)
{
    GL_AFTER(cuMemAllocPitch_v2, CUresult, DRV_FAIL, DRV_DEV, real(dptr, pPitch, WidthInBytes, Height, ElementSizeBytes),
             (c.addr = r == CUDA_SUCCESS && dptr ? *dptr : 0,
              c.size = r == CUDA_SUCCESS && pPitch ? *pPitch * Height : WidthInBytes * Height));
}

GL_EXPORT CUresult cuMemAllocManaged(CUdeviceptr *dptr, size_t bytesize, unsigned int flags)
{
    GL_AFTER(cuMemAllocManaged, CUresult, DRV_FAIL, DRV_DEV, real(dptr, bytesize, flags),
             (c.addr = r == CUDA_SUCCESS && dptr ? *dptr : 0, c.size = bytesize, c.aux = flags));
}

GL_EXPORT CUresult cuMemAllocHost_v2(void **pp, size_t bytesize)
{
    GL_AFTER(cuMemAllocHost_v2, CUresult, DRV_FAIL, DRV_DEV, real(pp, bytesize),
             (c.addr = r == CUDA_SUCCESS && pp ? GL_PTR(*pp) : 0, c.size = bytesize));
}

GL_EXPORT CUresult cuMemHostAlloc(void **pp, size_t bytesize, unsigned int Flags)
{
    GL_AFTER(cuMemHostAlloc, CUresult, DRV_FAIL, DRV_DEV, real(pp, bytesize, Flags),
             (c.addr = r == CUDA_SUCCESS && pp ? GL_PTR(*pp) : 0, c.size = bytesize, c.aux = Flags));
}

/* Stream-ordered calls captured into a graph define its memory nodes
 * (graph_mem.h). per_thread: the _ptsz variant. */
#define DRV_ASYNC_ALLOC(sym, per_thread)                                                           \
    GL_EXPORT CUresult sym(CUdeviceptr *dptr, size_t bytesize, CUstream hStream)                   \
    {                                                                                              \
        GL_AFTER(sym, CUresult, DRV_FAIL, DRV_DEV, real(dptr, bytesize, hStream),                  \
                 (c.addr = r == CUDA_SUCCESS && dptr ? *dptr : 0, c.size = bytesize,               \
                  c.stream = GL_PTR(hStream), gl_capture_mark(&c, per_thread, GL_OP_GRAPH_ALLOC))); \
    }
DRV_ASYNC_ALLOC(cuMemAllocAsync, 0)
DRV_ASYNC_ALLOC(cuMemAllocAsync_ptsz, 1)

#define DRV_POOL_ALLOC(sym, per_thread)                                                            \
    GL_EXPORT CUresult sym(CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool, CUstream hStream) \
    {                                                                                              \
        GL_AFTER(sym, CUresult, DRV_FAIL, DRV_DEV, real(dptr, bytesize, pool, hStream),            \
                 (c.addr = r == CUDA_SUCCESS && dptr ? *dptr : 0, c.size = bytesize,               \
                  c.stream = GL_PTR(hStream), c.pool = GL_PTR(pool),                               \
                  gl_capture_mark(&c, per_thread, GL_OP_GRAPH_ALLOC)));                            \
    }
DRV_POOL_ALLOC(cuMemAllocFromPoolAsync, 0)
DRV_POOL_ALLOC(cuMemAllocFromPoolAsync_ptsz, 1)

GL_EXPORT CUresult cuMemFree_v2(CUdeviceptr dptr)
{
    GL_AROUND_FAILDEV(cuMemFree_v2, CUresult, DRV_FAIL, -1, gl_driver_device(), dptr != 0, real(dptr),
                      (c.addr = dptr));
}

GL_EXPORT CUresult cuMemFreeHost(void *p)
{
    GL_AROUND(cuMemFreeHost, CUresult, DRV_FAIL, -1, p != NULL, real(p), (c.addr = GL_PTR(p)));
}

#define DRV_ASYNC_FREE(sym, per_thread)                                                            \
    GL_EXPORT CUresult sym(CUdeviceptr dptr, CUstream hStream)                                     \
    {                                                                                              \
        GL_AROUND_FAILDEV(sym, CUresult, DRV_FAIL, -1, gl_driver_device(), dptr != 0, real(dptr, hStream), \
                  (c.addr = dptr, c.stream = GL_PTR(hStream),                                      \
                   gl_capture_mark(&c, per_thread, GL_OP_GRAPH_FREE)));                            \
    }
DRV_ASYNC_FREE(cuMemFreeAsync, 0)
DRV_ASYNC_FREE(cuMemFreeAsync_ptsz, 1)

/* ---- virtual memory management ------------------------------------------ */

static int prop_device(const CUmemAllocationProp *prop)
{
    if (prop && prop->location.type == CU_MEM_LOCATION_TYPE_DEVICE)
        return prop->location.id;
    return -1;
}

GL_EXPORT CUresult cuMemCreate(CUmemGenericAllocationHandle *handle, size_t size, const CUmemAllocationProp *prop,
                               unsigned long long flags)
{
    GL_AFTER(cuMemCreate, CUresult, DRV_FAIL, prop_device(prop), real(handle, size, prop, flags),
             (c.addr = r == CUDA_SUCCESS && handle ? *handle : 0, c.size = size, c.aux = flags));
}

GL_EXPORT CUresult cuMemRelease(CUmemGenericAllocationHandle handle)
{
    GL_AROUND(cuMemRelease, CUresult, DRV_FAIL, -1, 1, real(handle), (c.addr = handle));
}

GL_EXPORT CUresult cuMemMap(CUdeviceptr ptr, size_t size, size_t offset, CUmemGenericAllocationHandle handle,
                            unsigned long long flags)
{
    GL_AFTER(cuMemMap, CUresult, DRV_FAIL, -1, real(ptr, size, offset, handle, flags),
             (c.addr = ptr, c.size = size, c.aux = handle));
}

GL_EXPORT CUresult cuMemUnmap(CUdeviceptr ptr, size_t size)
{
    GL_AROUND(cuMemUnmap, CUresult, DRV_FAIL, -1, 1, real(ptr, size), (c.addr = ptr, c.size = size));
}

GL_EXPORT CUresult cuMemAddressReserve(CUdeviceptr *ptr, size_t size, size_t alignment, CUdeviceptr addr,
                                       unsigned long long flags)
{
    GL_AFTER(cuMemAddressReserve, CUresult, DRV_FAIL, -1, real(ptr, size, alignment, addr, flags),
             (c.addr = r == CUDA_SUCCESS && ptr ? *ptr : 0, c.size = size, c.aux = alignment));
}

GL_EXPORT CUresult cuMemAddressFree(CUdeviceptr ptr, size_t size)
{
    GL_AROUND(cuMemAddressFree, CUresult, DRV_FAIL, -1, 1, real(ptr, size), (c.addr = ptr, c.size = size));
}
