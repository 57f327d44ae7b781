/* cupti_callbacks.c — CUPTI driver and runtime API callbacks, in the
 * calling thread. A driver call that our wrappers already record (the
 * guard depth is > 0) is skipped: one event per real operation. A call no
 * wrapper saw (a static cudart reaching the driver by a pointer we never
 * handed out) is recorded here, named after the runtime call it is in. */
#include <stdint.h>

#include "array_size.h"
#include "cupti_internal.h"
#include "graph_mem.h"
#include "hooks.h"
#include "recorder.h"

#define GL_TLS __attribute__((tls_model("initial-exec")))

const CUpti_CallbackId gl_cupti_driver_cbids[] = {
    CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2,
    CUPTI_DRIVER_TRACE_CBID_cuMemAllocPitch_v2,
    CUPTI_DRIVER_TRACE_CBID_cuMemFree_v2,
    CUPTI_DRIVER_TRACE_CBID_cuMemAllocHost_v2,
    CUPTI_DRIVER_TRACE_CBID_cuMemHostAlloc,
    CUPTI_DRIVER_TRACE_CBID_cuMemFreeHost,
    CUPTI_DRIVER_TRACE_CBID_cuMemAllocManaged,
    CUPTI_DRIVER_TRACE_CBID_cuMemAllocAsync,
    CUPTI_DRIVER_TRACE_CBID_cuMemAllocAsync_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuMemFreeAsync,
    CUPTI_DRIVER_TRACE_CBID_cuMemFreeAsync_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuMemAllocFromPoolAsync,
    CUPTI_DRIVER_TRACE_CBID_cuMemAllocFromPoolAsync_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuMemCreate,
    CUPTI_DRIVER_TRACE_CBID_cuMemRelease,
    CUPTI_DRIVER_TRACE_CBID_cuMemMap,
    CUPTI_DRIVER_TRACE_CBID_cuMemUnmap,
    CUPTI_DRIVER_TRACE_CBID_cuMemAddressReserve,
    CUPTI_DRIVER_TRACE_CBID_cuMemAddressFree,
    CUPTI_DRIVER_TRACE_CBID_cuArrayCreate_v2,
    CUPTI_DRIVER_TRACE_CBID_cuArray3DCreate_v2,
    CUPTI_DRIVER_TRACE_CBID_cuMipmappedArrayCreate,
    CUPTI_DRIVER_TRACE_CBID_cuArrayDestroy,
    CUPTI_DRIVER_TRACE_CBID_cuMipmappedArrayDestroy,
    0,
};

static const struct {
    CUpti_CallbackId cbid;
    int api;
} runtime_map[] = {
    {CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020, GL_API_cudaMalloc},
    {CUPTI_RUNTIME_TRACE_CBID_cudaMallocPitch_v3020, GL_API_cudaMallocPitch},
    {CUPTI_RUNTIME_TRACE_CBID_cudaFree_v3020, GL_API_cudaFree},
    {CUPTI_RUNTIME_TRACE_CBID_cudaMallocHost_v3020, GL_API_cudaMallocHost},
    {CUPTI_RUNTIME_TRACE_CBID_cudaFreeHost_v3020, GL_API_cudaFreeHost},
    {CUPTI_RUNTIME_TRACE_CBID_cudaHostAlloc_v3020, GL_API_cudaHostAlloc},
    {CUPTI_RUNTIME_TRACE_CBID_cudaMallocManaged_v6000, GL_API_cudaMallocManaged},
    {CUPTI_RUNTIME_TRACE_CBID_cudaMallocAsync_v11020, GL_API_cudaMallocAsync},
    {CUPTI_RUNTIME_TRACE_CBID_cudaMallocAsync_ptsz_v11020, GL_API_cudaMallocAsync_ptsz},
    {CUPTI_RUNTIME_TRACE_CBID_cudaFreeAsync_v11020, GL_API_cudaFreeAsync},
    {CUPTI_RUNTIME_TRACE_CBID_cudaFreeAsync_ptsz_v11020, GL_API_cudaFreeAsync_ptsz},
    {CUPTI_RUNTIME_TRACE_CBID_cudaMallocFromPoolAsync_v11020, GL_API_cudaMallocFromPoolAsync},
    {CUPTI_RUNTIME_TRACE_CBID_cudaMallocFromPoolAsync_ptsz_v11020, GL_API_cudaMallocFromPoolAsync_ptsz},
    {CUPTI_RUNTIME_TRACE_CBID_cudaMemPoolTrimTo_v11020, GL_API_cudaMemPoolTrimTo},
    {CUPTI_RUNTIME_TRACE_CBID_cudaMallocArray_v3020, GL_API_cudaMallocArray},
    {CUPTI_RUNTIME_TRACE_CBID_cudaMalloc3DArray_v3020, GL_API_cudaMalloc3DArray},
    {CUPTI_RUNTIME_TRACE_CBID_cudaMallocMipmappedArray_v5000, GL_API_cudaMallocMipmappedArray},
    {CUPTI_RUNTIME_TRACE_CBID_cudaFreeArray_v3020, GL_API_cudaFreeArray},
    {CUPTI_RUNTIME_TRACE_CBID_cudaFreeMipmappedArray_v5000, GL_API_cudaFreeMipmappedArray},
};

const CUpti_CallbackId gl_cupti_runtime_cbids[] = {
    CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaMallocPitch_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaFree_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaMallocHost_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaFreeHost_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaHostAlloc_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaMallocManaged_v6000,
    CUPTI_RUNTIME_TRACE_CBID_cudaMallocAsync_v11020,
    CUPTI_RUNTIME_TRACE_CBID_cudaMallocAsync_ptsz_v11020,
    CUPTI_RUNTIME_TRACE_CBID_cudaFreeAsync_v11020,
    CUPTI_RUNTIME_TRACE_CBID_cudaFreeAsync_ptsz_v11020,
    CUPTI_RUNTIME_TRACE_CBID_cudaMallocFromPoolAsync_v11020,
    CUPTI_RUNTIME_TRACE_CBID_cudaMallocFromPoolAsync_ptsz_v11020,
    CUPTI_RUNTIME_TRACE_CBID_cudaMemPoolTrimTo_v11020,
    CUPTI_RUNTIME_TRACE_CBID_cudaMallocArray_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaMalloc3DArray_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaMallocMipmappedArray_v5000,
    CUPTI_RUNTIME_TRACE_CBID_cudaFreeArray_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaFreeMipmappedArray_v5000,
    0,
};

/* One driver call in flight on this thread, between its enter and exit. */
static __thread struct {
    uint32_t correlation;
    int entered, recording, free_like;
    struct gl_claim cl;
} pending GL_TLS;

#define P(type) ((const type *)cb->functionParams)
#define OUT(ptr) (ok && (ptr) ? (uint64_t)(uintptr_t) * (ptr) : 0)

/* Fill the event for a driver call from its parameters; returns 0 if the
 * callback id is not one we record. ok: the call succeeded (exit only). */
static int describe(CUpti_CallbackId id, const CUpti_CallbackData *cb, int ok, struct gl_call *c)
{
    switch (id) {
    case CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2:
        c->api = GL_API_cuMemAlloc_v2;
        c->addr = OUT(P(cuMemAlloc_v2_params)->dptr);
        c->size = P(cuMemAlloc_v2_params)->bytesize;
        return 1;
    case CUPTI_DRIVER_TRACE_CBID_cuMemAllocPitch_v2: {
        const cuMemAllocPitch_v2_params *p = P(cuMemAllocPitch_v2_params);
        c->api = GL_API_cuMemAllocPitch_v2;
        c->addr = OUT(p->dptr);
        c->size = ok && p->pPitch ? *p->pPitch * p->Height : p->WidthInBytes * p->Height;
        return 1;
    }
    case CUPTI_DRIVER_TRACE_CBID_cuMemFree_v2:
        c->api = GL_API_cuMemFree_v2;
        c->addr = P(cuMemFree_v2_params)->dptr;
        return c->addr != 0; /* cuMemFree(0): context set-up, not an event */
    case CUPTI_DRIVER_TRACE_CBID_cuMemAllocHost_v2:
        c->api = GL_API_cuMemAllocHost_v2;
        c->addr = OUT(P(cuMemAllocHost_v2_params)->pp);
        c->size = P(cuMemAllocHost_v2_params)->bytesize;
        return 1;
    case CUPTI_DRIVER_TRACE_CBID_cuMemHostAlloc:
        c->api = GL_API_cuMemHostAlloc;
        c->addr = OUT(P(cuMemHostAlloc_params)->pp);
        c->size = P(cuMemHostAlloc_params)->bytesize;
        return 1;
    case CUPTI_DRIVER_TRACE_CBID_cuMemFreeHost:
        c->api = GL_API_cuMemFreeHost;
        c->addr = (uint64_t)(uintptr_t)P(cuMemFreeHost_params)->p;
        return c->addr != 0;
    case CUPTI_DRIVER_TRACE_CBID_cuMemAllocManaged:
        c->api = GL_API_cuMemAllocManaged;
        c->addr = OUT(P(cuMemAllocManaged_params)->dptr);
        c->size = P(cuMemAllocManaged_params)->bytesize;
        return 1;
    case CUPTI_DRIVER_TRACE_CBID_cuMemAllocAsync:
    case CUPTI_DRIVER_TRACE_CBID_cuMemAllocAsync_ptsz:
        c->api = id == CUPTI_DRIVER_TRACE_CBID_cuMemAllocAsync ? GL_API_cuMemAllocAsync : GL_API_cuMemAllocAsync_ptsz;
        c->addr = OUT(P(cuMemAllocAsync_params)->dptr);
        c->size = P(cuMemAllocAsync_params)->bytesize;
        c->stream = (uint64_t)(uintptr_t)P(cuMemAllocAsync_params)->hStream;
        gl_capture_mark(c, id == CUPTI_DRIVER_TRACE_CBID_cuMemAllocAsync_ptsz, GL_OP_GRAPH_ALLOC);
        return 1;
    case CUPTI_DRIVER_TRACE_CBID_cuMemFreeAsync:
    case CUPTI_DRIVER_TRACE_CBID_cuMemFreeAsync_ptsz:
        c->api = id == CUPTI_DRIVER_TRACE_CBID_cuMemFreeAsync ? GL_API_cuMemFreeAsync : GL_API_cuMemFreeAsync_ptsz;
        c->addr = P(cuMemFreeAsync_params)->dptr;
        c->stream = (uint64_t)(uintptr_t)P(cuMemFreeAsync_params)->hStream;
        gl_capture_mark(c, id == CUPTI_DRIVER_TRACE_CBID_cuMemFreeAsync_ptsz, GL_OP_GRAPH_FREE);
        return c->addr != 0;
    case CUPTI_DRIVER_TRACE_CBID_cuMemAllocFromPoolAsync:
    case CUPTI_DRIVER_TRACE_CBID_cuMemAllocFromPoolAsync_ptsz: {
        const cuMemAllocFromPoolAsync_params *p = P(cuMemAllocFromPoolAsync_params);
        c->api = id == CUPTI_DRIVER_TRACE_CBID_cuMemAllocFromPoolAsync ? GL_API_cuMemAllocFromPoolAsync
                                                                       : GL_API_cuMemAllocFromPoolAsync_ptsz;
        c->addr = OUT(p->dptr);
        c->size = p->bytesize;
        c->pool = (uint64_t)(uintptr_t)p->pool;
        c->stream = (uint64_t)(uintptr_t)p->hStream;
        gl_capture_mark(c, id == CUPTI_DRIVER_TRACE_CBID_cuMemAllocFromPoolAsync_ptsz, GL_OP_GRAPH_ALLOC);
        return 1;
    }
    case CUPTI_DRIVER_TRACE_CBID_cuMemCreate: {
        const cuMemCreate_params *p = P(cuMemCreate_params);
        c->api = GL_API_cuMemCreate;
        c->addr = OUT(p->handle);
        c->size = p->size;
        if (p->prop && p->prop->location.type == CU_MEM_LOCATION_TYPE_DEVICE)
            c->device = p->prop->location.id;
        return 1;
    }
    case CUPTI_DRIVER_TRACE_CBID_cuMemRelease:
        c->api = GL_API_cuMemRelease;
        c->addr = P(cuMemRelease_params)->handle;
        return 1;
    case CUPTI_DRIVER_TRACE_CBID_cuMemMap:
        c->api = GL_API_cuMemMap;
        c->addr = P(cuMemMap_params)->ptr;
        c->size = P(cuMemMap_params)->size;
        c->aux = P(cuMemMap_params)->handle;
        return 1;
    case CUPTI_DRIVER_TRACE_CBID_cuMemUnmap:
        c->api = GL_API_cuMemUnmap;
        c->addr = P(cuMemUnmap_params)->ptr;
        c->size = P(cuMemUnmap_params)->size;
        return 1;
    case CUPTI_DRIVER_TRACE_CBID_cuMemAddressReserve:
        c->api = GL_API_cuMemAddressReserve;
        c->addr = OUT(P(cuMemAddressReserve_params)->ptr);
        c->size = P(cuMemAddressReserve_params)->size;
        return 1;
    case CUPTI_DRIVER_TRACE_CBID_cuMemAddressFree:
        c->api = GL_API_cuMemAddressFree;
        c->addr = P(cuMemAddressFree_params)->ptr;
        c->size = P(cuMemAddressFree_params)->size;
        return 1;
    case CUPTI_DRIVER_TRACE_CBID_cuArrayCreate_v2: {
        const CUDA_ARRAY_DESCRIPTOR *d = P(cuArrayCreate_v2_params)->pAllocateArray;
        c->api = GL_API_cuArrayCreate_v2;
        c->addr = OUT(P(cuArrayCreate_v2_params)->pHandle);
        if (ok && d)
            gl_array_fill(c->addr, 0, c->device,
                          gl_array_requested(gl_array_format_bits(d->Format, d->NumChannels), d->Width, d->Height,
                                             0, 0, 1),
                          0, 1, &c->size, &c->aux);
        return 1;
    }
    case CUPTI_DRIVER_TRACE_CBID_cuArray3DCreate_v2:
    case CUPTI_DRIVER_TRACE_CBID_cuMipmappedArrayCreate: {
        int mip = id == CUPTI_DRIVER_TRACE_CBID_cuMipmappedArrayCreate;
        const CUDA_ARRAY3D_DESCRIPTOR *d = mip ? P(cuMipmappedArrayCreate_params)->pMipmappedArrayDesc
                                               : P(cuArray3DCreate_v2_params)->pAllocateArray;
        unsigned levels = mip ? P(cuMipmappedArrayCreate_params)->numMipmapLevels : 1;
        c->api = mip ? GL_API_cuMipmappedArrayCreate : GL_API_cuArray3DCreate_v2;
        c->addr = mip ? OUT(P(cuMipmappedArrayCreate_params)->pHandle) : OUT(P(cuArray3DCreate_v2_params)->pHandle);
        if (ok && d)
            gl_array_fill(c->addr, mip, c->device,
                          gl_array_requested(gl_array_format_bits(d->Format, d->NumChannels), d->Width, d->Height,
                                             d->Depth, d->Flags, levels),
                          d->Flags, levels, &c->size, &c->aux);
        return 1;
    }
    case CUPTI_DRIVER_TRACE_CBID_cuArrayDestroy:
        c->api = GL_API_cuArrayDestroy;
        c->addr = (uint64_t)(uintptr_t)P(cuArrayDestroy_params)->hArray;
        return c->addr != 0;
    case CUPTI_DRIVER_TRACE_CBID_cuMipmappedArrayDestroy:
        c->api = GL_API_cuMipmappedArrayDestroy;
        c->addr = (uint64_t)(uintptr_t)P(cuMipmappedArrayDestroy_params)->hMipmappedArray;
        return c->addr != 0;
    default:
        return 0;
    }
}

static void driver(CUpti_CallbackId id, const CUpti_CallbackData *cb)
{
    if (cb->callbackSite == CUPTI_API_ENTER) {
        if (gl_wrap_depth() > 0)
            return; /* our wrapper is recording this call */
        pending.entered = 1;
        pending.correlation = cb->correlationId;
        pending.recording = gl_enter();
        pending.cl.ev = NULL;
        struct gl_call c = {.device = gl_driver_device()};
        pending.free_like = 0;
        if (pending.recording && describe(id, cb, 0, &c)) {
            pending.free_like = gl_op_is_free(gl_api_op(c.api));
            if (pending.free_like)
                gl_claim(&pending.cl, &c); /* before the free: ordered before any reuse */
        }
        return;
    }
    if (!pending.entered || pending.correlation != cb->correlationId)
        return;
    pending.entered = 0;
    CUresult res = cb->functionReturnValue ? *(const CUresult *)cb->functionReturnValue : CUDA_SUCCESS;
    if (pending.recording) {
        if (pending.free_like) {
            gl_publish(&pending.cl, (int)res);
        } else {
            struct gl_call c = {.device = gl_driver_device()};
            if (describe(id, cb, res == CUDA_SUCCESS, &c)) {
                c.result = (int)res;
                gl_record(&c);
            }
        }
    }
    gl_leave();
}

static void runtime(CUpti_CallbackId id, const CUpti_CallbackData *cb)
{
    if (gl_wrap_depth() > 0)
        return;
    for (size_t i = 0; i < sizeof runtime_map / sizeof runtime_map[0]; i++)
        if (runtime_map[i].cbid == id) {
            gl_set_outer_api(cb->callbackSite == CUPTI_API_ENTER ? runtime_map[i].api : 0);
            return;
        }
}

void CUPTIAPI gl_cupti_callback(void *userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                                const void *cbdata)
{
    (void)userdata;
    if (domain == CUPTI_CB_DOMAIN_DRIVER_API)
        driver(cbid, cbdata);
    else if (domain == CUPTI_CB_DOMAIN_RUNTIME_API)
        runtime(cbid, cbdata);
}
