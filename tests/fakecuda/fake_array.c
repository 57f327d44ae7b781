/* fake_array.c — CUDA arrays in the fake driver (cuArrayCreate_v2,
 * cuArray3DCreate_v2, cuMipmappedArrayCreate and their destroys), by fixed
 * rules so that tests can predict every byte:
 *  - an array's bytes are width x max(height,1) x max(depth,1) x element
 *    bytes (format bytes x channels), summed over the levels of a
 *    mipmapped array (each level halves width, height and, unless the
 *    array is layered or a cubemap, depth), rounded up to 2 MiB: what the
 *    device is charged and what cuArrayGetMemoryRequirements answers;
 *  - an array made with CUDA_ARRAY3D_DEFERRED_MAPPING or _SPARSE takes no
 *    memory until mapped (it is charged nothing);
 *  - cuArrayGetMemoryRequirements answers only for deferred-mapping arrays,
 *    as CUDA documents, unless FAKECUDA_ARRAY_REQS=all (then for every
 *    array): both of gpuledger's ways of sizing an array are testable.
 * The handle is a heap block of ours, as the real driver's is. */
#include <cupti_callbacks.h>
#include <cupti_driver_cbid.h>
#include <stdlib.h>
#include <string.h>

#include "fake_internal.h"

#define ARRAY_GRAN ((size_t)2 << 20)
#define ARRAY_MAGIC 0x41525259u /* "ARRY" */

struct farray {
    unsigned magic;
    int mipmapped, dev;
    unsigned flags;
    size_t bytes; /* rounded; charged unless deferred */
};

static size_t format_bytes(CUarray_format f)
{
    switch (f) {
    case CU_AD_FORMAT_UNSIGNED_INT8:
    case CU_AD_FORMAT_SIGNED_INT8:
        return 1;
    case CU_AD_FORMAT_UNSIGNED_INT16:
    case CU_AD_FORMAT_SIGNED_INT16:
    case CU_AD_FORMAT_HALF:
        return 2;
    case CU_AD_FORMAT_UNSIGNED_INT32:
    case CU_AD_FORMAT_SIGNED_INT32:
    case CU_AD_FORMAT_FLOAT:
        return 4;
    default:
        return 0; /* the fake knows the plain formats only */
    }
}

static size_t levels_bytes(const CUDA_ARRAY3D_DESCRIPTOR *d, unsigned levels)
{
    size_t elem = format_bytes(d->Format) * d->NumChannels, total = 0;
    int keep_depth = (d->Flags & (CUDA_ARRAY3D_LAYERED | CUDA_ARRAY3D_CUBEMAP)) != 0;
    for (unsigned l = 0; l < (levels ? levels : 1); l++) {
        size_t w = d->Width >> l, h = d->Height >> l, z = keep_depth ? d->Depth : d->Depth >> l;
        total += (w ? w : 1) * (h ? h : 1) * (z ? z : 1) * elem;
    }
    return (total + ARRAY_GRAN - 1) / ARRAY_GRAN * ARRAY_GRAN;
}

static CUresult make(void **out, const CUDA_ARRAY3D_DESCRIPTOR *d, unsigned levels, int mipmapped)
{
    if (!out || !d || !d->Width || !format_bytes(d->Format) || !d->NumChannels)
        return CUDA_ERROR_INVALID_VALUE;
    struct farray *a = calloc(1, sizeof *a);
    if (!a)
        return CUDA_ERROR_OUT_OF_MEMORY;
    a->magic = ARRAY_MAGIC;
    a->mipmapped = mipmapped;
    a->dev = fake_current_device();
    a->flags = d->Flags;
    a->bytes = levels_bytes(d, levels);
    if (!(d->Flags & (CUDA_ARRAY3D_DEFERRED_MAPPING | CUDA_ARRAY3D_SPARSE))) {
        CUresult r = fake_charge(a->dev, a->bytes);
        if (r != CUDA_SUCCESS) {
            free(a);
            return r;
        }
    }
    *out = a;
    return CUDA_SUCCESS;
}

static struct farray *array_of(const void *h, int mipmapped)
{
    const struct farray *a = h;
    return a && a->magic == ARRAY_MAGIC && a->mipmapped == mipmapped ? (struct farray *)a : NULL;
}

static CUresult destroy(void *h, int mipmapped)
{
    struct farray *a = array_of(h, mipmapped);
    if (!a)
        return CUDA_ERROR_INVALID_HANDLE;
    if (!(a->flags & (CUDA_ARRAY3D_DEFERRED_MAPPING | CUDA_ARRAY3D_SPARSE)))
        fake_uncharge(a->dev, a->bytes);
    a->magic = 0;
    free(a);
    return CUDA_SUCCESS;
}

#define SITE(cbid, params, site, r) FAKE_CUPTI_SITE(CUPTI_DRIVER_TRACE_CBID_##cbid, #cbid, params, site, r)

CUresult cuArrayCreate_v2(CUarray *pHandle, const CUDA_ARRAY_DESCRIPTOR *desc)
{
    struct {
        CUarray *pHandle;
        const CUDA_ARRAY_DESCRIPTOR *desc;
    } params = {pHandle, desc};
    CUresult r = CUDA_SUCCESS;
    SITE(cuArrayCreate_v2, &params, CUPTI_API_ENTER, &r);
    r = fake_capture_unsafe("cuArrayCreate");
    if (r == CUDA_SUCCESS && !desc)
        r = CUDA_ERROR_INVALID_VALUE;
    if (r == CUDA_SUCCESS) {
        CUDA_ARRAY3D_DESCRIPTOR d3 = {.Width = desc->Width, .Height = desc->Height, .Depth = 0,
                                      .Format = desc->Format, .NumChannels = desc->NumChannels, .Flags = 0};
        r = make((void **)pHandle, &d3, 1, 0);
    }
    SITE(cuArrayCreate_v2, &params, CUPTI_API_EXIT, &r);
    return r;
}

CUresult cuArray3DCreate_v2(CUarray *pHandle, const CUDA_ARRAY3D_DESCRIPTOR *desc)
{
    struct {
        CUarray *pHandle;
        const CUDA_ARRAY3D_DESCRIPTOR *desc;
    } params = {pHandle, desc};
    CUresult r = CUDA_SUCCESS;
    SITE(cuArray3DCreate_v2, &params, CUPTI_API_ENTER, &r);
    r = fake_capture_unsafe("cuArray3DCreate");
    if (r == CUDA_SUCCESS)
        r = make((void **)pHandle, desc, 1, 0);
    SITE(cuArray3DCreate_v2, &params, CUPTI_API_EXIT, &r);
    return r;
}

CUresult cuMipmappedArrayCreate(CUmipmappedArray *pHandle, const CUDA_ARRAY3D_DESCRIPTOR *desc, unsigned int levels)
{
    struct {
        CUmipmappedArray *pHandle;
        const CUDA_ARRAY3D_DESCRIPTOR *desc;
        unsigned int levels;
    } params = {pHandle, desc, levels};
    CUresult r = CUDA_SUCCESS;
    SITE(cuMipmappedArrayCreate, &params, CUPTI_API_ENTER, &r);
    r = fake_capture_unsafe("cuMipmappedArrayCreate");
    if (r == CUDA_SUCCESS)
        r = levels ? make((void **)pHandle, desc, levels, 1) : CUDA_ERROR_INVALID_VALUE;
    SITE(cuMipmappedArrayCreate, &params, CUPTI_API_EXIT, &r);
    return r;
}

CUresult cuArrayDestroy(CUarray hArray)
{
    struct {
        CUarray hArray;
    } params = {hArray};
    CUresult r = CUDA_SUCCESS;
    SITE(cuArrayDestroy, &params, CUPTI_API_ENTER, &r);
    r = fake_capture_unsafe("cuArrayDestroy");
    if (r == CUDA_SUCCESS)
        r = destroy(hArray, 0);
    SITE(cuArrayDestroy, &params, CUPTI_API_EXIT, &r);
    return r;
}

CUresult cuMipmappedArrayDestroy(CUmipmappedArray hMipmappedArray)
{
    struct {
        CUmipmappedArray h;
    } params = {hMipmappedArray};
    CUresult r = CUDA_SUCCESS;
    SITE(cuMipmappedArrayDestroy, &params, CUPTI_API_ENTER, &r);
    r = fake_capture_unsafe("cuMipmappedArrayDestroy");
    if (r == CUDA_SUCCESS)
        r = destroy(hMipmappedArray, 1);
    SITE(cuMipmappedArrayDestroy, &params, CUPTI_API_EXIT, &r);
    return r;
}

static CUresult requirements(CUDA_ARRAY_MEMORY_REQUIREMENTS *req, const void *h, int mipmapped, CUdevice dev)
{
    const struct farray *a = array_of(h, mipmapped);
    if (!req || !a || dev != a->dev)
        return CUDA_ERROR_INVALID_VALUE;
    const char *mode = getenv("FAKECUDA_ARRAY_REQS");
    int all = mode && !strcmp(mode, "all");
    if (!all && !(a->flags & CUDA_ARRAY3D_DEFERRED_MAPPING))
        return CUDA_ERROR_INVALID_VALUE; /* as documented */
    memset(req, 0, sizeof *req);
    req->size = a->bytes;
    req->alignment = ARRAY_GRAN;
    return CUDA_SUCCESS;
}

CUresult cuArrayGetMemoryRequirements(CUDA_ARRAY_MEMORY_REQUIREMENTS *req, CUarray array, CUdevice device)
{
    return requirements(req, array, 0, device);
}

CUresult cuMipmappedArrayGetMemoryRequirements(CUDA_ARRAY_MEMORY_REQUIREMENTS *req, CUmipmappedArray mipmap,
                                               CUdevice device)
{
    return requirements(req, mipmap, 1, device);
}

/* What a statically linked runtime reaches: the same functions under names
 * no interposer knows (cupti_static.c). */
CUresult fakecuda_private_cuArray3DCreate(CUarray *pHandle, const CUDA_ARRAY3D_DESCRIPTOR *desc)
{
    return cuArray3DCreate_v2(pHandle, desc);
}

CUresult fakecuda_private_cuArrayDestroy(CUarray hArray)
{
    return cuArrayDestroy(hArray);
}
