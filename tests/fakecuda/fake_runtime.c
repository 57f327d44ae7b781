/* fake_runtime.c — the fake libcudart.so.13. Built the way the real
 * runtime works: on first use it dlopen()s libcuda.so.1, dlsym()s
 * "cuGetProcAddress_v2", asks that for "cuGetProcAddress" itself, and
 * fetches every driver function through it. So a profiler that only
 * interposes symbols sees the runtime calls but none of the driver calls
 * behind them, exactly as with the real runtime. */
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef CUresult (*getproc_fn)(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *);

static struct {
    getproc_fn getproc;
    CUresult (*init)(unsigned);
    CUresult (*driver_version)(int *);
    CUresult (*device_count)(int *);
    CUresult (*ctx_retain)(CUcontext *, CUdevice);
    CUresult (*ctx_reset)(CUdevice);
    CUresult (*ctx_set)(CUcontext);
    CUresult (*ctx_get_device)(CUdevice *);
    CUresult (*ctx_sync)(void);
    CUresult (*stream_sync)(CUstream);
    CUresult (*exchange_mode)(CUstreamCaptureMode *);
    CUresult (*mem_info)(size_t *, size_t *);
    CUresult (*alloc)(CUdeviceptr *, size_t);
    CUresult (*alloc_pitch)(CUdeviceptr *, size_t *, size_t, size_t, unsigned);
    CUresult (*free)(CUdeviceptr);
    CUresult (*alloc_managed)(CUdeviceptr *, size_t, unsigned);
    CUresult (*alloc_host)(void **, size_t);
    CUresult (*host_alloc)(void **, size_t, unsigned);
    CUresult (*free_host)(void *);
    CUresult (*alloc_async)(CUdeviceptr *, size_t, CUstream);
    CUresult (*alloc_async_ptsz)(CUdeviceptr *, size_t, CUstream);
    CUresult (*free_async)(CUdeviceptr, CUstream);
    CUresult (*free_async_ptsz)(CUdeviceptr, CUstream);
    CUresult (*alloc_pool)(CUdeviceptr *, size_t, CUmemoryPool, CUstream);
    CUresult (*alloc_pool_ptsz)(CUdeviceptr *, size_t, CUmemoryPool, CUstream);
    CUresult (*pool_create)(CUmemoryPool *, const CUmemPoolProps *);
    CUresult (*pool_destroy)(CUmemoryPool);
    CUresult (*pool_trim)(CUmemoryPool, size_t);
    CUresult (*pool_get)(CUmemoryPool, CUmemPool_attribute, void *);
    CUresult (*pool_set)(CUmemoryPool, CUmemPool_attribute, void *);
    CUresult (*default_pool)(CUmemoryPool *, CUdevice);
    CUresult (*get_pool)(CUmemoryPool *, CUdevice);
    CUresult (*set_pool)(CUdevice, CUmemoryPool);
    CUresult (*array3d_create)(CUarray *, const CUDA_ARRAY3D_DESCRIPTOR *);
    CUresult (*mipmap_create)(CUmipmappedArray *, const CUDA_ARRAY3D_DESCRIPTOR *, unsigned);
    CUresult (*array_destroy)(CUarray);
    CUresult (*mipmap_destroy)(CUmipmappedArray);
    CUresult (*array_reqs)(CUDA_ARRAY_MEMORY_REQUIREMENTS *, CUarray, CUdevice);
    CUresult (*begin_capture)(CUstream, CUstreamCaptureMode);
    CUresult (*end_capture)(CUstream, CUgraph *);
    CUresult (*is_capturing)(CUstream, CUstreamCaptureStatus *);
    CUresult (*graph_create)(CUgraph *, unsigned);
    CUresult (*graph_destroy)(CUgraph);
    CUresult (*add_empty)(CUgraphNode *, CUgraph, const CUgraphNode *, size_t);
    CUresult (*add_alloc_node)(CUgraphNode *, CUgraph, const CUgraphNode *, size_t, CUDA_MEM_ALLOC_NODE_PARAMS *);
    CUresult (*add_free_node)(CUgraphNode *, CUgraph, const CUgraphNode *, size_t, CUdeviceptr);
    CUresult (*instantiate)(CUgraphExec *, CUgraph, unsigned long long);
    CUresult (*exec_destroy)(CUgraphExec);
    CUresult (*graph_launch)(CUgraphExec, CUstream);
    CUresult (*graph_trim)(CUdevice);
    CUresult (*graph_attr)(CUdevice, CUgraphMem_attribute, void *);
    CUresult (*launch_kernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                              CUstream, void **, void **);
} drv;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static cudaError_t init_error = cudaSuccess;
static __thread int tls_device;

#define RESOLVE(field, name, flags)                                                                \
    do {                                                                                           \
        if (drv.getproc(name, (void **)&drv.field, 13000, flags, NULL) != CUDA_SUCCESS) {         \
            if (getenv("FAKECUDA_DEBUG"))                                                          \
                fprintf(stderr, "fakecudart: cannot resolve %s\n", name);                          \
            init_error = cudaErrorInitializationError;                                            \
        }                                                                                          \
    } while (0)

static void init_once(void)
{
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        init_error = cudaErrorInsufficientDriver;
        return;
    }
    getproc_fn gp = (getproc_fn)dlsym(h, "cuGetProcAddress_v2");
    if (!gp || gp("cuGetProcAddress", (void **)&drv.getproc, 12000, 0, NULL) != CUDA_SUCCESS) {
        init_error = cudaErrorInsufficientDriver;
        return;
    }
    RESOLVE(init, "cuInit", 0);
    RESOLVE(driver_version, "cuDriverGetVersion", 0);
    RESOLVE(device_count, "cuDeviceGetCount", 0);
    RESOLVE(ctx_retain, "cuDevicePrimaryCtxRetain", 0);
    RESOLVE(ctx_reset, "cuDevicePrimaryCtxReset", 0);
    RESOLVE(ctx_set, "cuCtxSetCurrent", 0);
    RESOLVE(ctx_get_device, "cuCtxGetDevice", 0);
    RESOLVE(ctx_sync, "cuCtxSynchronize", 0);
    RESOLVE(stream_sync, "cuStreamSynchronize", 0);
    RESOLVE(exchange_mode, "cuThreadExchangeStreamCaptureMode", 0);
    RESOLVE(mem_info, "cuMemGetInfo", 0);
    RESOLVE(alloc, "cuMemAlloc", 0);
    RESOLVE(alloc_pitch, "cuMemAllocPitch", 0);
    RESOLVE(free, "cuMemFree", 0);
    RESOLVE(alloc_managed, "cuMemAllocManaged", 0);
    RESOLVE(alloc_host, "cuMemAllocHost", 0);
    RESOLVE(host_alloc, "cuMemHostAlloc", 0);
    RESOLVE(free_host, "cuMemFreeHost", 0);
    RESOLVE(alloc_async, "cuMemAllocAsync", 0);
    RESOLVE(alloc_async_ptsz, "cuMemAllocAsync", CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM);
    RESOLVE(free_async, "cuMemFreeAsync", 0);
    RESOLVE(free_async_ptsz, "cuMemFreeAsync", CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM);
    RESOLVE(alloc_pool, "cuMemAllocFromPoolAsync", 0);
    RESOLVE(alloc_pool_ptsz, "cuMemAllocFromPoolAsync", CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM);
    RESOLVE(pool_create, "cuMemPoolCreate", 0);
    RESOLVE(pool_destroy, "cuMemPoolDestroy", 0);
    RESOLVE(pool_trim, "cuMemPoolTrimTo", 0);
    RESOLVE(pool_get, "cuMemPoolGetAttribute", 0);
    RESOLVE(pool_set, "cuMemPoolSetAttribute", 0);
    RESOLVE(default_pool, "cuDeviceGetDefaultMemPool", 0);
    RESOLVE(get_pool, "cuDeviceGetMemPool", 0);
    RESOLVE(set_pool, "cuDeviceSetMemPool", 0);
    RESOLVE(array3d_create, "cuArray3DCreate", 0);
    RESOLVE(mipmap_create, "cuMipmappedArrayCreate", 0);
    RESOLVE(array_destroy, "cuArrayDestroy", 0);
    RESOLVE(mipmap_destroy, "cuMipmappedArrayDestroy", 0);
    RESOLVE(array_reqs, "cuArrayGetMemoryRequirements", 0);
    RESOLVE(begin_capture, "cuStreamBeginCapture", 0);
    RESOLVE(end_capture, "cuStreamEndCapture", 0);
    RESOLVE(is_capturing, "cuStreamIsCapturing", 0);
    RESOLVE(graph_create, "cuGraphCreate", 0);
    RESOLVE(graph_destroy, "cuGraphDestroy", 0);
    RESOLVE(add_empty, "cuGraphAddEmptyNode", 0);
    RESOLVE(add_alloc_node, "cuGraphAddMemAllocNode", 0);
    RESOLVE(add_free_node, "cuGraphAddMemFreeNode", 0);
    RESOLVE(instantiate, "cuGraphInstantiate", 0);
    RESOLVE(exec_destroy, "cuGraphExecDestroy", 0);
    RESOLVE(graph_launch, "cuGraphLaunch", 0);
    RESOLVE(graph_trim, "cuDeviceGraphMemTrim", 0);
    RESOLVE(graph_attr, "cuDeviceGetGraphMemAttribute", 0);
    RESOLVE(launch_kernel, "cuLaunchKernel", 0);
    if (init_error == cudaSuccess)
        drv.init(0);
}

/* Make sure the driver is loaded and this thread's device is current. */
static cudaError_t ready(void)
{
    pthread_once(&once, init_once);
    if (init_error != cudaSuccess)
        return init_error;
    CUcontext ctx;
    drv.ctx_retain(&ctx, tls_device);
    drv.ctx_set(ctx);
    return cudaSuccess;
}

#define READY()                                                                                    \
    do {                                                                                           \
        cudaError_t e_ = ready();                                                                  \
        if (e_ != cudaSuccess)                                                                     \
            return e_;                                                                             \
    } while (0)

#define RT(x) ((cudaError_t)(x))

cudaError_t cudaRuntimeGetVersion(int *v)
{
    *v = 13000;
    return cudaSuccess;
}

cudaError_t cudaDriverGetVersion(int *v)
{
    READY();
    return RT(drv.driver_version(v));
}

cudaError_t cudaGetDeviceCount(int *count)
{
    READY();
    return RT(drv.device_count(count));
}

cudaError_t cudaSetDevice(int device)
{
    int n = 0;
    READY();
    drv.device_count(&n);
    if (device < 0 || device >= n)
        return cudaErrorInvalidDevice;
    tls_device = device;
    return ready();
}

cudaError_t cudaGetDevice(int *device)
{
    READY();
    CUdevice d;
    CUresult r = drv.ctx_get_device(&d);
    if (r == CUDA_SUCCESS)
        *device = d;
    return RT(r);
}

cudaError_t cudaDeviceSynchronize(void)
{
    READY();
    return RT(drv.ctx_sync());
}

cudaError_t cudaStreamSynchronize(cudaStream_t s)
{
    READY();
    return RT(drv.stream_sync((CUstream)s));
}

cudaError_t cudaStreamCreate(cudaStream_t *s)
{
    READY();
    *s = (cudaStream_t)malloc(64);
    return *s ? cudaSuccess : cudaErrorMemoryAllocation;
}

cudaError_t cudaStreamDestroy(cudaStream_t s)
{
    free(s);
    return cudaSuccess;
}

cudaError_t cudaDeviceReset(void)
{
    READY();
    return RT(drv.ctx_reset(tls_device));
}

cudaError_t cudaMemGetInfo(size_t *f, size_t *t)
{
    READY();
    return RT(drv.mem_info(f, t));
}

cudaError_t cudaGetLastError(void)
{
    return cudaSuccess;
}

const char *cudaGetErrorString(cudaError_t e)
{
    switch (e) {
    case cudaSuccess:
        return "no error";
    case cudaErrorMemoryAllocation:
        return "out of memory";
    case cudaErrorInvalidValue:
        return "invalid argument";
    default:
        return "unknown error";
    }
}

const char *cudaGetErrorName(cudaError_t e)
{
    switch (e) {
    case cudaSuccess:
        return "cudaSuccess";
    case cudaErrorMemoryAllocation:
        return "cudaErrorMemoryAllocation";
    case cudaErrorStreamCaptureUnsupported:
        return "cudaErrorStreamCaptureUnsupported";
    case cudaErrorStreamCaptureInvalidated:
        return "cudaErrorStreamCaptureInvalidated";
    case cudaErrorStreamCaptureWrongThread:
        return "cudaErrorStreamCaptureWrongThread";
    case cudaErrorStreamCaptureImplicit:
        return "cudaErrorStreamCaptureImplicit";
    default:
        return "cudaError";
    }
}

cudaError_t cudaMemcpy(void *dst, const void *src, size_t n, enum cudaMemcpyKind kind)
{
    (void)kind;
    memmove(dst, src, n);
    return cudaSuccess;
}

cudaError_t cudaMemset(void *dst, int v, size_t n)
{
    memset(dst, v, n);
    return cudaSuccess;
}

/* ---- allocation ---------------------------------------------------------- */

cudaError_t cudaMalloc(void **p, size_t size)
{
    READY();
    if (!p)
        return cudaErrorInvalidValue;
    CUdeviceptr d = 0;
    CUresult r = drv.alloc(&d, size);
    *p = r == CUDA_SUCCESS ? (void *)(uintptr_t)d : NULL;
    return RT(r);
}

cudaError_t cudaFree(void *p)
{
    READY();
    return p ? RT(drv.free((CUdeviceptr)(uintptr_t)p)) : cudaSuccess;
}

cudaError_t cudaMallocPitch(void **p, size_t *pitch, size_t w, size_t h)
{
    READY();
    CUdeviceptr d = 0;
    CUresult r = drv.alloc_pitch(&d, pitch, w, h, 4);
    *p = (void *)(uintptr_t)d;
    return RT(r);
}

cudaError_t cudaMallocManaged(void **p, size_t size, unsigned int flags)
{
    READY();
    CUdeviceptr d = 0;
    CUresult r = drv.alloc_managed(&d, size, flags);
    *p = (void *)(uintptr_t)d;
    return RT(r);
}

cudaError_t cudaMallocHost(void **p, size_t size)
{
    READY();
    return RT(drv.alloc_host(p, size));
}

cudaError_t cudaHostAlloc(void **p, size_t size, unsigned int flags)
{
    READY();
    return RT(drv.host_alloc(p, size, flags));
}

cudaError_t cudaFreeHost(void *p)
{
    READY();
    return RT(drv.free_host(p));
}

#define ASYNC_PAIR(malloc_name, free_name, afield, ffield)                                         \
    cudaError_t malloc_name(void **p, size_t size, cudaStream_t s)                                 \
    {                                                                                              \
        READY();                                                                                   \
        CUdeviceptr d = 0;                                                                         \
        CUresult r = drv.afield(&d, size, (CUstream)s);                                            \
        *p = r == CUDA_SUCCESS ? (void *)(uintptr_t)d : NULL;                                      \
        return RT(r);                                                                              \
    }                                                                                              \
    cudaError_t free_name(void *p, cudaStream_t s)                                                 \
    {                                                                                              \
        READY();                                                                                   \
        return RT(drv.ffield((CUdeviceptr)(uintptr_t)p, (CUstream)s));                             \
    }
ASYNC_PAIR(cudaMallocAsync, cudaFreeAsync, alloc_async, free_async)
ASYNC_PAIR(cudaMallocAsync_ptsz, cudaFreeAsync_ptsz, alloc_async_ptsz, free_async_ptsz)

#define POOL_ALLOC(name, field)                                                                    \
    cudaError_t name(void **p, size_t size, cudaMemPool_t pool, cudaStream_t s)                     \
    {                                                                                              \
        READY();                                                                                   \
        CUdeviceptr d = 0;                                                                         \
        CUresult r = drv.field(&d, size, (CUmemoryPool)pool, (CUstream)s);                         \
        *p = r == CUDA_SUCCESS ? (void *)(uintptr_t)d : NULL;                                      \
        return RT(r);                                                                              \
    }
POOL_ALLOC(cudaMallocFromPoolAsync, alloc_pool)
POOL_ALLOC(cudaMallocFromPoolAsync_ptsz, alloc_pool_ptsz)

cudaError_t cudaMemPoolCreate(cudaMemPool_t *pool, const struct cudaMemPoolProps *props)
{
    READY();
    CUmemPoolProps p;
    memset(&p, 0, sizeof p);
    p.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
    p.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    p.location.id = props ? props->location.id : tls_device;
    return RT(drv.pool_create((CUmemoryPool *)pool, &p));
}

cudaError_t cudaMemPoolDestroy(cudaMemPool_t pool)
{
    READY();
    return RT(drv.pool_destroy((CUmemoryPool)pool));
}

cudaError_t cudaMemPoolTrimTo(cudaMemPool_t pool, size_t keep)
{
    READY();
    return RT(drv.pool_trim((CUmemoryPool)pool, keep));
}

cudaError_t cudaMemPoolGetAttribute(cudaMemPool_t pool, enum cudaMemPoolAttr attr, void *value)
{
    READY();
    return RT(drv.pool_get((CUmemoryPool)pool, (CUmemPool_attribute)attr, value));
}

cudaError_t cudaMemPoolSetAttribute(cudaMemPool_t pool, enum cudaMemPoolAttr attr, void *value)
{
    READY();
    return RT(drv.pool_set((CUmemoryPool)pool, (CUmemPool_attribute)attr, value));
}

cudaError_t cudaDeviceGetDefaultMemPool(cudaMemPool_t *pool, int device)
{
    READY();
    return RT(drv.default_pool((CUmemoryPool *)pool, device));
}

cudaError_t cudaDeviceGetMemPool(cudaMemPool_t *pool, int device)
{
    READY();
    return RT(drv.get_pool((CUmemoryPool *)pool, device));
}

cudaError_t cudaDeviceSetMemPool(int device, cudaMemPool_t pool)
{
    READY();
    return RT(drv.set_pool(device, (CUmemoryPool)pool));
}

/* ---- driver entry points ---------------------------------------------------- */

static cudaError_t entry(const char *symbol, void **fn, int version, unsigned long long flags,
                         enum cudaDriverEntryPointQueryResult *status)
{
    READY();
    CUdriverProcAddressQueryResult st;
    CUresult r = drv.getproc(symbol, fn, version, flags, &st);
    if (status)
        *status = st == CU_GET_PROC_ADDRESS_SUCCESS ? cudaDriverEntryPointSuccess
                                                    : cudaDriverEntryPointSymbolNotFound;
    return r == CUDA_SUCCESS ? cudaSuccess : cudaErrorSymbolNotFound;
}

cudaError_t cudaGetDriverEntryPoint(const char *symbol, void **fn, unsigned long long flags,
                                    enum cudaDriverEntryPointQueryResult *status)
{
    return entry(symbol, fn, 13000, flags, status);
}

cudaError_t cudaGetDriverEntryPointByVersion(const char *symbol, void **fn, unsigned int version,
                                             unsigned long long flags, enum cudaDriverEntryPointQueryResult *status)
{
    return entry(symbol, fn, (int)version, flags, status);
}

/* ---- CUDA arrays ------------------------------------------------------------ */

/* The driver format of a channel description (the plain kinds only). */
static int to_format(const struct cudaChannelFormatDesc *d, CUDA_ARRAY3D_DESCRIPTOR *out)
{
    if (!d)
        return -1;
    int bits = d->x, n = (d->x > 0) + (d->y > 0) + (d->z > 0) + (d->w > 0);
    if (!n)
        return -1;
    out->NumChannels = (unsigned)n;
    if (d->f == cudaChannelFormatKindFloat)
        out->Format = bits == 32 ? CU_AD_FORMAT_FLOAT : bits == 16 ? CU_AD_FORMAT_HALF : (CUarray_format)0;
    else if (d->f == cudaChannelFormatKindSigned)
        out->Format = bits == 8 ? CU_AD_FORMAT_SIGNED_INT8 : bits == 16 ? CU_AD_FORMAT_SIGNED_INT16
                                                                        : CU_AD_FORMAT_SIGNED_INT32;
    else
        out->Format = bits == 8 ? CU_AD_FORMAT_UNSIGNED_INT8 : bits == 16 ? CU_AD_FORMAT_UNSIGNED_INT16
                                                                          : CU_AD_FORMAT_UNSIGNED_INT32;
    return out->Format ? 0 : -1;
}

cudaError_t cudaMallocArray(cudaArray_t *array, const struct cudaChannelFormatDesc *desc, size_t width,
                            size_t height, unsigned int flags)
{
    READY();
    CUDA_ARRAY3D_DESCRIPTOR d = {.Width = width, .Height = height, .Depth = 0, .Flags = flags};
    if (to_format(desc, &d))
        return cudaErrorInvalidChannelDescriptor;
    return RT(drv.array3d_create((CUarray *)array, &d));
}

cudaError_t cudaMalloc3DArray(cudaArray_t *array, const struct cudaChannelFormatDesc *desc, struct cudaExtent e,
                              unsigned int flags)
{
    READY();
    CUDA_ARRAY3D_DESCRIPTOR d = {.Width = e.width, .Height = e.height, .Depth = e.depth, .Flags = flags};
    if (to_format(desc, &d))
        return cudaErrorInvalidChannelDescriptor;
    return RT(drv.array3d_create((CUarray *)array, &d));
}

cudaError_t cudaMallocMipmappedArray(cudaMipmappedArray_t *mip, const struct cudaChannelFormatDesc *desc,
                                     struct cudaExtent e, unsigned int levels, unsigned int flags)
{
    READY();
    CUDA_ARRAY3D_DESCRIPTOR d = {.Width = e.width, .Height = e.height, .Depth = e.depth, .Flags = flags};
    if (to_format(desc, &d))
        return cudaErrorInvalidChannelDescriptor;
    return RT(drv.mipmap_create((CUmipmappedArray *)mip, &d, levels));
}

cudaError_t cudaFreeArray(cudaArray_t array)
{
    READY();
    return array ? RT(drv.array_destroy((CUarray)array)) : cudaSuccess;
}

cudaError_t cudaFreeMipmappedArray(cudaMipmappedArray_t mip)
{
    READY();
    return mip ? RT(drv.mipmap_destroy((CUmipmappedArray)mip)) : cudaSuccess;
}

cudaError_t cudaArrayGetMemoryRequirements(struct cudaArrayMemoryRequirements *req, cudaArray_t array, int device)
{
    READY();
    CUDA_ARRAY_MEMORY_REQUIREMENTS r;
    CUresult e = drv.array_reqs(&r, (CUarray)array, device);
    if (e == CUDA_SUCCESS && req) {
        memset(req, 0, sizeof *req);
        req->size = r.size;
        req->alignment = r.alignment;
    }
    return RT(e);
}

/* ---- stream capture and graphs ------------------------------------------------ */

cudaError_t cudaStreamBeginCapture(cudaStream_t s, enum cudaStreamCaptureMode mode)
{
    READY();
    return RT(drv.begin_capture((CUstream)s, (CUstreamCaptureMode)mode));
}

cudaError_t cudaStreamEndCapture(cudaStream_t s, cudaGraph_t *graph)
{
    READY();
    return RT(drv.end_capture((CUstream)s, (CUgraph *)graph));
}

cudaError_t cudaStreamIsCapturing(cudaStream_t s, enum cudaStreamCaptureStatus *st)
{
    READY();
    return RT(drv.is_capturing((CUstream)s, (CUstreamCaptureStatus *)st));
}

cudaError_t cudaThreadExchangeStreamCaptureMode(enum cudaStreamCaptureMode *mode)
{
    READY();
    return RT(drv.exchange_mode((CUstreamCaptureMode *)mode));
}

cudaError_t cudaGraphCreate(cudaGraph_t *g, unsigned int flags)
{
    READY();
    return RT(drv.graph_create((CUgraph *)g, flags));
}

cudaError_t cudaGraphDestroy(cudaGraph_t g)
{
    READY();
    return RT(drv.graph_destroy((CUgraph)g));
}

cudaError_t cudaGraphAddEmptyNode(cudaGraphNode_t *node, cudaGraph_t g, const cudaGraphNode_t *deps, size_t n)
{
    READY();
    return RT(drv.add_empty((CUgraphNode *)node, (CUgraph)g, (const CUgraphNode *)deps, n));
}

cudaError_t cudaGraphAddMemAllocNode(cudaGraphNode_t *node, cudaGraph_t g, const cudaGraphNode_t *deps, size_t n,
                                     struct cudaMemAllocNodeParams *p)
{
    READY();
    if (!p)
        return cudaErrorInvalidValue;
    CUDA_MEM_ALLOC_NODE_PARAMS dp;
    memset(&dp, 0, sizeof dp);
    dp.poolProps.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
    dp.poolProps.location.type = (CUmemLocationType)p->poolProps.location.type;
    dp.poolProps.location.id = p->poolProps.location.id;
    dp.bytesize = p->bytesize;
    CUresult r = drv.add_alloc_node((CUgraphNode *)node, (CUgraph)g, (const CUgraphNode *)deps, n, &dp);
    if (r == CUDA_SUCCESS)
        p->dptr = (void *)(uintptr_t)dp.dptr;
    return RT(r);
}

cudaError_t cudaGraphAddMemFreeNode(cudaGraphNode_t *node, cudaGraph_t g, const cudaGraphNode_t *deps, size_t n,
                                    void *dptr)
{
    READY();
    return RT(drv.add_free_node((CUgraphNode *)node, (CUgraph)g, (const CUgraphNode *)deps, n,
                                (CUdeviceptr)(uintptr_t)dptr));
}

cudaError_t cudaGraphInstantiate(cudaGraphExec_t *exec, cudaGraph_t g, unsigned long long flags)
{
    READY();
    return RT(drv.instantiate((CUgraphExec *)exec, (CUgraph)g, flags));
}

cudaError_t cudaGraphInstantiateWithFlags(cudaGraphExec_t *exec, cudaGraph_t g, unsigned long long flags)
{
    return cudaGraphInstantiate(exec, g, flags);
}

cudaError_t cudaGraphExecDestroy(cudaGraphExec_t exec)
{
    READY();
    return RT(drv.exec_destroy((CUgraphExec)exec));
}

cudaError_t cudaGraphLaunch(cudaGraphExec_t exec, cudaStream_t s)
{
    READY();
    return RT(drv.graph_launch((CUgraphExec)exec, (CUstream)s));
}

cudaError_t cudaDeviceGraphMemTrim(int device)
{
    READY();
    return RT(drv.graph_trim(device));
}

cudaError_t cudaDeviceGetGraphMemAttribute(int device, enum cudaGraphMemAttributeType attr, void *value)
{
    READY();
    return RT(drv.graph_attr(device, (CUgraphMem_attribute)attr, value));
}

cudaError_t cudaLaunchKernel(const void *func, dim3 grid, dim3 block, void **args, size_t shmem, cudaStream_t s)
{
    READY();
    return RT(drv.launch_kernel((CUfunction)(uintptr_t)func, grid.x, grid.y, grid.z, block.x, block.y, block.z,
                                (unsigned)shmem, (CUstream)s, args, NULL));
}
