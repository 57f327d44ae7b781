/* hooks_runtime.c — wrappers of the CUDA runtime allocation API (dynamic
 * libcudart). Each records one event; driver calls made inside them are
 * not recorded again (recorder.c's guard). */
#include "cuda_extra.h"
#include "graph_mem.h"
#include "wrap.h"

#define RT_FAIL cudaErrorInitializationError
#define RT_DEV gl_runtime_device()

GL_EXPORT cudaError_t cudaMalloc(void **devPtr, size_t size)
{
    GL_AFTER(cudaMalloc, cudaError_t, RT_FAIL, RT_DEV, real(devPtr, size),
             (c.addr = r == cudaSuccess && devPtr ? GL_PTR(*devPtr) : 0, c.size = size));
}

GL_EXPORT cudaError_t cudaMallocManaged(void **devPtr, size_t size, unsigned int flags)
{
    GL_AFTER(cudaMallocManaged, cudaError_t, RT_FAIL, RT_DEV, real(devPtr, size, flags),
             (c.addr = r == cudaSuccess && devPtr ? GL_PTR(*devPtr) : 0, c.size = size, c.aux = flags));
}

GL_EXPORT cudaError_t cudaMallocPitch(void **devPtr, size_t *pitch, size_t width, size_t height)
{
    GL_AFTER(cudaMallocPitch, cudaError_t, RT_FAIL, RT_DEV, real(devPtr, pitch, width, height),
             (c.addr = r == cudaSuccess && devPtr ? GL_PTR(*devPtr) : 0,
              c.size = r == cudaSuccess && pitch ? *pitch * height : width * height));
}

GL_EXPORT cudaError_t cudaMallocHost(void **ptr, size_t size)
{
    GL_AFTER(cudaMallocHost, cudaError_t, RT_FAIL, RT_DEV, real(ptr, size),
             (c.addr = r == cudaSuccess && ptr ? GL_PTR(*ptr) : 0, c.size = size));
}

GL_EXPORT cudaError_t cudaHostAlloc(void **pHost, size_t size, unsigned int flags)
{
    GL_AFTER(cudaHostAlloc, cudaError_t, RT_FAIL, RT_DEV, real(pHost, size, flags),
             (c.addr = r == cudaSuccess && pHost ? GL_PTR(*pHost) : 0, c.size = size, c.aux = flags));
}

/* Stream-ordered calls captured into a graph define its memory nodes
 * (graph_mem.h). per_thread: the _ptsz variant. */
#define RT_ASYNC_ALLOC(sym, per_thread)                                                            \
    GL_EXPORT cudaError_t sym(void **devPtr, size_t size, cudaStream_t stream)                     \
    {                                                                                              \
        GL_AFTER(sym, cudaError_t, RT_FAIL, RT_DEV, real(devPtr, size, stream),                    \
                 (c.addr = r == cudaSuccess && devPtr ? GL_PTR(*devPtr) : 0, c.size = size,        \
                  c.stream = GL_PTR(stream), gl_capture_mark(&c, per_thread, GL_OP_GRAPH_ALLOC)));  \
    }
RT_ASYNC_ALLOC(cudaMallocAsync, 0)
RT_ASYNC_ALLOC(cudaMallocAsync_ptsz, 1)

#define RT_POOL_ALLOC(sym, per_thread)                                                             \
    GL_EXPORT cudaError_t sym(void **ptr, size_t size, cudaMemPool_t pool, cudaStream_t stream)    \
    {                                                                                              \
        GL_AFTER(sym, cudaError_t, RT_FAIL, RT_DEV, real(ptr, size, pool, stream),                 \
                 (c.addr = r == cudaSuccess && ptr ? GL_PTR(*ptr) : 0, c.size = size,              \
                  c.stream = GL_PTR(stream), c.pool = GL_PTR(pool),                                \
                  gl_capture_mark(&c, per_thread, GL_OP_GRAPH_ALLOC)));                            \
    }
RT_POOL_ALLOC(cudaMallocFromPoolAsync, 0)
RT_POOL_ALLOC(cudaMallocFromPoolAsync_ptsz, 1)

/* Frees take no device query: the writer gives a free the device of the
 * allocation it ends (a failed one, which ends none, the current device). cudaFree(NULL) only initialises the context: not an
 * event. */
GL_EXPORT cudaError_t cudaFree(void *devPtr)
{
    GL_AROUND_FAILDEV(cudaFree, cudaError_t, RT_FAIL, -1, RT_DEV, devPtr != NULL, real(devPtr),
                      (c.addr = GL_PTR(devPtr)));
}

GL_EXPORT cudaError_t cudaFreeHost(void *ptr)
{
    GL_AROUND(cudaFreeHost, cudaError_t, RT_FAIL, -1, ptr != NULL, real(ptr), (c.addr = GL_PTR(ptr)));
}

#define RT_ASYNC_FREE(sym, per_thread)                                                             \
    GL_EXPORT cudaError_t sym(void *devPtr, cudaStream_t stream)                                   \
    {                                                                                              \
        GL_AROUND_FAILDEV(sym, cudaError_t, RT_FAIL, -1, RT_DEV, devPtr != NULL, real(devPtr, stream), \
                  (c.addr = GL_PTR(devPtr), c.stream = GL_PTR(stream),                             \
                   gl_capture_mark(&c, per_thread, GL_OP_GRAPH_FREE)));                            \
    }
RT_ASYNC_FREE(cudaFreeAsync, 0)
RT_ASYNC_FREE(cudaFreeAsync_ptsz, 1)

GL_EXPORT cudaError_t cudaMemPoolTrimTo(cudaMemPool_t memPool, size_t minBytesToKeep)
{
    GL_AFTER(cudaMemPoolTrimTo, cudaError_t, RT_FAIL, RT_DEV, real(memPool, minBytesToKeep),
             (c.pool = GL_PTR(memPool), c.aux = minBytesToKeep));
}

GL_EXPORT cudaError_t cudaDeviceReset(void)
{
    gl_device_cache_reset(); /* also when not recording: the cache outlives a pause */
    GL_AROUND(cudaDeviceReset, cudaError_t, RT_FAIL, RT_DEV, 1, real(), (void)0);
}
