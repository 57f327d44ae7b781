/* fake_procaddr.c — cuGetProcAddress of the fake driver: hands out its own
 * functions by base name, honouring the API version (cuMemAlloc is
 * cuMemAlloc_v2 from 3.2 on, cuGetProcAddress is _v2 from 12.0) and the
 * per-thread-default-stream flag, like the real one. */
#include <string.h>

#include "fake_internal.h"

#undef cuGetProcAddress
CUresult cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags);
CUresult cuMemAllocAsync_ptsz(CUdeviceptr *, size_t, CUstream);
CUresult cuMemFreeAsync_ptsz(CUdeviceptr, CUstream);
CUresult cuMemAllocFromPoolAsync_ptsz(CUdeviceptr *, size_t, CUmemoryPool, CUstream);
CUresult cuStreamBeginCapture_v2_ptsz(CUstream, CUstreamCaptureMode);
CUresult cuStreamBeginCaptureToGraph_ptsz(CUstream, CUgraph, const CUgraphNode *, const CUgraphEdgeData *, size_t,
                                          CUstreamCaptureMode);
CUresult cuStreamEndCapture_ptsz(CUstream, CUgraph *);
CUresult cuStreamIsCapturing_ptsz(CUstream, CUstreamCaptureStatus *);
CUresult cuStreamGetCaptureInfo_v3(CUstream, CUstreamCaptureStatus *, cuuint64_t *, CUgraph *, const CUgraphNode **,
                                   const CUgraphEdgeData **, size_t *);
CUresult cuStreamGetCaptureInfo_v3_ptsz(CUstream, CUstreamCaptureStatus *, cuuint64_t *, CUgraph *,
                                        const CUgraphNode **, const CUgraphEdgeData **, size_t *);
CUresult cuGraphInstantiateWithParams_ptsz(CUgraphExec *, CUgraph, CUDA_GRAPH_INSTANTIATE_PARAMS *);
CUresult cuGraphLaunch_ptsz(CUgraphExec, CUstream);

/* 32-bit-size relics that a version below 3.2 would get. */
static CUresult legacy_unsupported(void)
{
    return CUDA_ERROR_NOT_SUPPORTED;
}

struct entry {
    const char *name;
    void *fn, *fn_v2, *fn_ptsz;
    int v2_from;
};

#define E(n) {#n, (void *)&n, NULL, NULL, 0}
#define EV(n, v2, from) {#n, (void *)&legacy_unsupported, (void *)&v2, NULL, from}
#define EP(n, ptsz) {#n, (void *)&n, NULL, (void *)&ptsz, 0}

static const struct entry table[] = {
    E(cuInit),
    E(cuDriverGetVersion),
    E(cuDeviceGetCount),
    E(cuDeviceGet),
    E(cuDevicePrimaryCtxRetain),
    EV(cuDevicePrimaryCtxReset, cuDevicePrimaryCtxReset_v2, 11000),
    E(cuCtxSetCurrent),
    E(cuCtxGetDevice),
    E(cuCtxGetCurrent),
    E(cuCtxSynchronize),
    E(cuStreamSynchronize),
    EV(cuMemGetInfo, cuMemGetInfo_v2, 3020),
    E(cuGetErrorString),
    EV(cuMemAlloc, cuMemAlloc_v2, 3020),
    EV(cuMemAllocPitch, cuMemAllocPitch_v2, 3020),
    EV(cuMemFree, cuMemFree_v2, 3020),
    E(cuMemAllocManaged),
    EV(cuMemAllocHost, cuMemAllocHost_v2, 3020),
    E(cuMemHostAlloc),
    E(cuMemFreeHost),
    E(cuMemcpy),
    EV(cuMemsetD8, cuMemsetD8_v2, 3020),
    EP(cuMemAllocAsync, cuMemAllocAsync_ptsz),
    EP(cuMemFreeAsync, cuMemFreeAsync_ptsz),
    EP(cuMemAllocFromPoolAsync, cuMemAllocFromPoolAsync_ptsz),
    E(cuMemPoolCreate),
    E(cuMemPoolDestroy),
    E(cuMemPoolTrimTo),
    E(cuMemPoolGetAttribute),
    E(cuMemPoolSetAttribute),
    E(cuDeviceGetDefaultMemPool),
    E(cuDeviceGetMemPool),
    E(cuDeviceSetMemPool),
    E(cuMemGetAllocationGranularity),
    E(cuMemCreate),
    E(cuMemRelease),
    E(cuMemAddressReserve),
    E(cuMemAddressFree),
    E(cuMemMap),
    E(cuMemUnmap),
    E(cuMemSetAccess),
    E(cuDeviceGetPCIBusId),
    EV(cuArrayCreate, cuArrayCreate_v2, 3020),
    EV(cuArray3DCreate, cuArray3DCreate_v2, 3020),
    E(cuMipmappedArrayCreate),
    E(cuArrayDestroy),
    E(cuMipmappedArrayDestroy),
    E(cuArrayGetMemoryRequirements),
    E(cuMipmappedArrayGetMemoryRequirements),
    EV(cuArray3DGetDescriptor, cuArray3DGetDescriptor_v2, 3020),
    E(cuMipmappedArrayGetLevel),
    E(cuThreadExchangeStreamCaptureMode),
    {"cuStreamBeginCapture", (void *)&legacy_unsupported, (void *)&cuStreamBeginCapture_v2,
     (void *)&cuStreamBeginCapture_v2_ptsz, 10010},
    EP(cuStreamBeginCaptureToGraph, cuStreamBeginCaptureToGraph_ptsz),
    EP(cuStreamEndCapture, cuStreamEndCapture_ptsz),
    EP(cuStreamIsCapturing, cuStreamIsCapturing_ptsz),
    {"cuStreamGetCaptureInfo", (void *)&legacy_unsupported, (void *)&cuStreamGetCaptureInfo_v3,
     (void *)&cuStreamGetCaptureInfo_v3_ptsz, 12030},
    E(cuGraphCreate),
    E(cuGraphDestroy),
    E(cuGraphAddEmptyNode),
    E(cuGraphAddMemAllocNode),
    E(cuGraphAddMemFreeNode),
    E(cuGraphGetNodes),
    E(cuGraphNodeGetType),
    E(cuGraphMemAllocNodeGetParams),
    E(cuGraphMemFreeNodeGetParams),
    {"cuGraphInstantiate", (void *)&legacy_unsupported, (void *)&cuGraphInstantiateWithFlags, NULL, 12000},
    E(cuGraphInstantiateWithFlags),
    EP(cuGraphInstantiateWithParams, cuGraphInstantiateWithParams_ptsz),
    E(cuGraphExecDestroy),
    EP(cuGraphLaunch, cuGraphLaunch_ptsz),
    E(cuDeviceGraphMemTrim),
    E(cuDeviceGetGraphMemAttribute),
    E(cuDeviceSetGraphMemAttribute),
    E(cuLaunchKernel),
    {"cuGetProcAddress", (void *)&cuGetProcAddress, (void *)&cuGetProcAddress_v2, NULL, 12000},
};

static CUresult lookup(const char *symbol, void **pfn, int version, cuuint64_t flags,
                       CUdriverProcAddressQueryResult *status)
{
    if (!symbol || !pfn)
        return CUDA_ERROR_INVALID_VALUE;
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        const struct entry *e = &table[i];
        if (strcmp(e->name, symbol))
            continue;
        void *f = e->fn;
        if (e->fn_v2 && version >= e->v2_from)
            f = e->fn_v2;
        if (e->fn_ptsz && (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM))
            f = e->fn_ptsz;
        *pfn = f;
        if (status)
            *status = CU_GET_PROC_ADDRESS_SUCCESS;
        return CUDA_SUCCESS;
    }
    *pfn = NULL;
    if (status)
        *status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    return CUDA_ERROR_NOT_FOUND;
}

CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags,
                             CUdriverProcAddressQueryResult *symbolStatus)
{
    return lookup(symbol, pfn, cudaVersion, flags, symbolStatus);
}

CUresult cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags)
{
    return lookup(symbol, pfn, cudaVersion, flags, NULL);
}
