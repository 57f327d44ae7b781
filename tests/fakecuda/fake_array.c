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
 *    array) or =none (for none: a driver before CUDA 11.6): each of
 *    gpuledger's ways of sizing an array is testable;
 *  - cuArray3DGetDescriptor_v2 gives back the descriptor an array was made
 *    with (a 2D array's Depth 0), and cuMipmappedArrayGetLevel level l's
 *    array (width, height and, unless layered or a cubemap, depth halved l
 *    times; owned by the mipmapped array, charged nothing of its own);
 *  - the live arrays (levels not counted) are counted; with
 *    FAKECUDA_REPORT=1 the count left at exit is printed on stderr.
 * The handle is a heap block of ours, as the real driver's is. */
#include <cupti_callbacks.h>
#include <cupti_driver_cbid.h>
#include <stdatomic.h>
#include <stdio.h>
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
    CUDA_ARRAY3D_DESCRIPTOR desc;
    unsigned nlevels;       /* a mipmapped array's */
    struct farray **levels; /* a mipmapped array's level arrays, made when first asked for */
    int is_level;           /* one of those */
};

static _Atomic long live_arrays;

static const char *reqs_mode(void)
{
    const char *m = getenv("FAKECUDA_ARRAY_REQS");
    return m ? m : "";
}

__attribute__((destructor)) static void report_arrays(void)
{
    const char *r = getenv("FAKECUDA_REPORT");
    if (r && !strcmp(r, "1"))
        fprintf(stderr, "fakecuda: %ld arrays live at exit\n", (long)live_arrays);
}

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
    a->desc = *d;
    a->nlevels = mipmapped ? levels : 1;
    if (!(d->Flags & (CUDA_ARRAY3D_DEFERRED_MAPPING | CUDA_ARRAY3D_SPARSE))) {
        CUresult r = fake_charge(a->dev, a->bytes);
        if (r != CUDA_SUCCESS) {
            free(a);
            return r;
        }
    }
    atomic_fetch_add(&live_arrays, 1);
    *out = a;
    return CUDA_SUCCESS;
}

static struct farray *array_of(const void *h, int mipmapped)
{
    const struct farray *a = h;
    return a && a->magic == ARRAY_MAGIC && a->mipmapped == mipmapped ? (struct farray *)a : NULL;
}

CUresult cuArray3DGetDescriptor_v2(CUDA_ARRAY3D_DESCRIPTOR *desc, CUarray array)
{
    const struct farray *a = array_of(array, 0);
    if (!desc || !a)
        return CUDA_ERROR_INVALID_HANDLE;
    *desc = a->desc;
    return CUDA_SUCCESS;
}

CUresult cuMipmappedArrayGetLevel(CUarray *level, CUmipmappedArray mip, unsigned int l)
{
    struct farray *m = array_of(mip, 1);
    if (!level || !m || l >= m->nlevels)
        return CUDA_ERROR_INVALID_VALUE;
    if (!m->levels && !(m->levels = calloc(m->nlevels, sizeof *m->levels)))
        return CUDA_ERROR_OUT_OF_MEMORY;
    if (!m->levels[l]) {
        struct farray *a = calloc(1, sizeof *a);
        if (!a)
            return CUDA_ERROR_OUT_OF_MEMORY;
        int keep_depth = (m->flags & (CUDA_ARRAY3D_LAYERED | CUDA_ARRAY3D_CUBEMAP)) != 0;
        a->magic = ARRAY_MAGIC;
        a->dev = m->dev;
        a->flags = m->flags;
        a->is_level = 1;
        a->nlevels = 1;
        a->desc = m->desc;
        a->desc.Width = m->desc.Width >> l ? m->desc.Width >> l : 1;
        a->desc.Height = m->desc.Height ? (m->desc.Height >> l ? m->desc.Height >> l : 1) : 0;
        a->desc.Depth = m->desc.Depth && !keep_depth ? (m->desc.Depth >> l ? m->desc.Depth >> l : 1) : m->desc.Depth;
        m->levels[l] = a;
    }
    *level = (CUarray)m->levels[l];
    return CUDA_SUCCESS;
}

static CUresult destroy(void *h, int mipmapped)
{
    struct farray *a = array_of(h, mipmapped);
    if (!a || a->is_level)
        return CUDA_ERROR_INVALID_HANDLE;
    if (!(a->flags & (CUDA_ARRAY3D_DEFERRED_MAPPING | CUDA_ARRAY3D_SPARSE)))
        fake_uncharge(a->dev, a->bytes);
    for (unsigned l = 0; a->levels && l < a->nlevels; l++)
        if (a->levels[l]) {
            a->levels[l]->magic = 0;
            free(a->levels[l]);
        }
    free(a->levels);
    a->magic = 0;
    free(a);
    atomic_fetch_sub(&live_arrays, 1);
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
    if (!req || !a || a->is_level || dev != a->dev)
        return CUDA_ERROR_INVALID_VALUE;
    int all = !strcmp(reqs_mode(), "all");
    if (!strcmp(reqs_mode(), "none"))
        return CUDA_ERROR_NOT_SUPPORTED;
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
