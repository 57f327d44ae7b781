/* array_size.c — see array_size.h. Element sizes of every CUarray_format
 * (block-compressed and YUV formats as bits per pixel), and the driver's
 * own answer: for the array, or for its deferred-mapping twin. */
#include "array_size.h"

#include "capture_gate.h"
#include "real.h"

unsigned gl_array_format_bits(CUarray_format f, unsigned channels)
{
    switch ((int)f) {
    case CU_AD_FORMAT_UNSIGNED_INT8:
    case CU_AD_FORMAT_SIGNED_INT8:
        return 8 * channels;
    case CU_AD_FORMAT_UNSIGNED_INT16:
    case CU_AD_FORMAT_SIGNED_INT16:
    case CU_AD_FORMAT_HALF:
        return 16 * channels;
    case CU_AD_FORMAT_UNSIGNED_INT32:
    case CU_AD_FORMAT_SIGNED_INT32:
    case CU_AD_FORMAT_FLOAT:
        return 32 * channels;
    /* one format, one size: the channel count is part of the format */
    case CU_AD_FORMAT_UNORM_INT8X1:
    case CU_AD_FORMAT_SNORM_INT8X1:
        return 8;
    case CU_AD_FORMAT_UNORM_INT8X2:
    case CU_AD_FORMAT_SNORM_INT8X2:
    case CU_AD_FORMAT_UNORM_INT16X1:
    case CU_AD_FORMAT_SNORM_INT16X1:
    case CU_AD_FORMAT_NV16:
    case CU_AD_FORMAT_YUY2:
        return 16;
    case CU_AD_FORMAT_UNORM_INT8X4:
    case CU_AD_FORMAT_SNORM_INT8X4:
    case CU_AD_FORMAT_UNORM_INT16X2:
    case CU_AD_FORMAT_SNORM_INT16X2:
    case CU_AD_FORMAT_UNORM_INT_101010_2:
    case CU_AD_FORMAT_P210:
    case CU_AD_FORMAT_P216:
    case CU_AD_FORMAT_Y210:
    case CU_AD_FORMAT_Y216:
    case CU_AD_FORMAT_AYUV:
    case CU_AD_FORMAT_Y410:
        return 32;
    case CU_AD_FORMAT_UNORM_INT16X4:
    case CU_AD_FORMAT_SNORM_INT16X4:
    case CU_AD_FORMAT_Y416:
        return 64;
    case CU_AD_FORMAT_NV12:
        return 12;
    case CU_AD_FORMAT_P010:
    case CU_AD_FORMAT_P016:
    case CU_AD_FORMAT_Y444_PLANAR8:
    case CU_AD_FORMAT_YUV444_8bit_SemiPlanar:
        return 24;
    case CU_AD_FORMAT_Y444_PLANAR10:
    case CU_AD_FORMAT_YUV444_16bit_SemiPlanar:
        return 48;
    case CU_AD_FORMAT_BC1_UNORM: /* 8 bytes per 4x4 block */
    case CU_AD_FORMAT_BC1_UNORM_SRGB:
    case CU_AD_FORMAT_BC4_UNORM:
    case CU_AD_FORMAT_BC4_SNORM:
        return 4;
    case CU_AD_FORMAT_BC2_UNORM: /* 16 bytes per 4x4 block */
    case CU_AD_FORMAT_BC2_UNORM_SRGB:
    case CU_AD_FORMAT_BC3_UNORM:
    case CU_AD_FORMAT_BC3_UNORM_SRGB:
    case CU_AD_FORMAT_BC5_UNORM:
    case CU_AD_FORMAT_BC5_SNORM:
    case CU_AD_FORMAT_BC6H_UF16:
    case CU_AD_FORMAT_BC6H_SF16:
    case CU_AD_FORMAT_BC7_UNORM:
    case CU_AD_FORMAT_BC7_UNORM_SRGB:
        return 8;
    default:
        return 0;
    }
}

unsigned gl_array_channel_bits(const struct cudaChannelFormatDesc *d)
{
    if (!d)
        return 0;
    switch (d->f) {
    case cudaChannelFormatKindNV12:
        return 12;
    case cudaChannelFormatKindUnsignedBlockCompressed1:
    case cudaChannelFormatKindUnsignedBlockCompressed1SRGB:
    case cudaChannelFormatKindUnsignedBlockCompressed4:
    case cudaChannelFormatKindSignedBlockCompressed4:
        return 4;
    case cudaChannelFormatKindUnsignedBlockCompressed2:
    case cudaChannelFormatKindUnsignedBlockCompressed2SRGB:
    case cudaChannelFormatKindUnsignedBlockCompressed3:
    case cudaChannelFormatKindUnsignedBlockCompressed3SRGB:
    case cudaChannelFormatKindUnsignedBlockCompressed5:
    case cudaChannelFormatKindSignedBlockCompressed5:
    case cudaChannelFormatKindUnsignedBlockCompressed6H:
    case cudaChannelFormatKindSignedBlockCompressed6H:
    case cudaChannelFormatKindUnsignedBlockCompressed7:
    case cudaChannelFormatKindUnsignedBlockCompressed7SRGB:
        return 8;
    default: { /* the channels' own widths, in bits */
        int bits = (d->x > 0 ? d->x : 0) + (d->y > 0 ? d->y : 0) + (d->z > 0 ? d->z : 0) + (d->w > 0 ? d->w : 0);
        return (unsigned)bits;
    }
    }
}

uint64_t gl_array_requested(unsigned bits, uint64_t width, uint64_t height, uint64_t depth, unsigned flags,
                            unsigned levels)
{
    int keep_depth = (flags & (CUDA_ARRAY3D_LAYERED | CUDA_ARRAY3D_CUBEMAP)) != 0;
    uint64_t total_bits = 0;
    if (levels == 0)
        levels = 1;
    for (unsigned l = 0; l < levels && l < 64; l++) {
        uint64_t w = width >> l, h = height >> l, z = keep_depth ? depth : depth >> l;
        total_bits += (w ? w : 1) * (h ? h : 1) * (z ? z : 1) * bits;
    }
    return (total_bits + 7) / 8;
}

int gl_array_unbacked(unsigned flags)
{
    return (flags & (CUDA_ARRAY3D_DEFERRED_MAPPING | CUDA_ARRAY3D_SPARSE)) != 0;
}

typedef CUresult (*reqs_fn)(CUDA_ARRAY_MEMORY_REQUIREMENTS *, void *, CUdevice);
typedef CUresult (*get_desc_fn)(CUDA_ARRAY3D_DESCRIPTOR *, CUarray);
typedef CUresult (*get_level_fn)(CUarray *, CUmipmappedArray, unsigned int);
typedef CUresult (*create_fn)(CUarray *, const CUDA_ARRAY3D_DESCRIPTOR *);
typedef CUresult (*create_mip_fn)(CUmipmappedArray *, const CUDA_ARRAY3D_DESCRIPTOR *, unsigned int);
typedef CUresult (*destroy_fn)(void *);

/* The driver functions used here (the real ones: our wrappers of the
 * create and destroy calls are not reached, and a probe is not recorded). */
enum { F_REQS, F_MIP_REQS, F_GET_DESC, F_GET_LEVEL, F_CREATE, F_CREATE_MIP, F_DESTROY, F_DESTROY_MIP, NF };
static const char *const names[NF] = {
    "cuArrayGetMemoryRequirements", "cuMipmappedArrayGetMemoryRequirements", "cuArray3DGetDescriptor_v2",
    "cuMipmappedArrayGetLevel", "cuArray3DCreate_v2", "cuMipmappedArrayCreate", "cuArrayDestroy",
    "cuMipmappedArrayDestroy"};

static void *sym(int i)
{
    static void *fns[NF];
    static int tried[NF];
    void *f = __atomic_load_n(&fns[i], __ATOMIC_ACQUIRE);
    if (!f && !__atomic_load_n(&tried[i], __ATOMIC_RELAXED)) {
        f = gl_driver_sym(names[i]);
        if (f)
            __atomic_store_n(&fns[i], f, __ATOMIC_RELEASE);
        else
            __atomic_store_n(&tried[i], 1, __ATOMIC_RELAXED); /* e.g. a driver before 11.6 */
    }
    return f;
}

/* What the driver answers for the array itself (deferred-mapping arrays). */
static uint64_t asked(uint64_t handle, int mipmapped, int device)
{
    reqs_fn f = (reqs_fn)sym(mipmapped ? F_MIP_REQS : F_REQS);
    CUDA_ARRAY_MEMORY_REQUIREMENTS r;
    if (!f || f(&r, (void *)(uintptr_t)handle, device) != CUDA_SUCCESS)
        return 0;
    return r.size;
}

/* What the driver answers for a deferred-mapping twin of the array: the
 * same descriptor (read back from the array) with CUDA_ARRAY3D_DEFERRED_MAPPING
 * added, which takes no memory, made, asked and destroyed at once. */
static uint64_t probed(uint64_t handle, int mipmapped, int device, unsigned levels)
{
    get_desc_fn get_desc = (get_desc_fn)sym(F_GET_DESC);
    get_level_fn get_level = (get_level_fn)sym(F_GET_LEVEL);
    create_fn create = (create_fn)sym(F_CREATE);
    create_mip_fn create_mip = (create_mip_fn)sym(F_CREATE_MIP);
    destroy_fn destroy = (destroy_fn)sym(mipmapped ? F_DESTROY_MIP : F_DESTROY);
    if (!get_desc || !destroy || !(mipmapped ? get_level && create_mip : create != NULL))
        return 0;
    CUarray level0 = (CUarray)(uintptr_t)handle;
    if (mipmapped && get_level(&level0, (CUmipmappedArray)(uintptr_t)handle, 0) != CUDA_SUCCESS)
        return 0;
    CUDA_ARRAY3D_DESCRIPTOR d;
    if (get_desc(&d, level0) != CUDA_SUCCESS || (d.Flags & CUDA_ARRAY3D_DEFERRED_MAPPING))
        return 0;
    d.Flags |= CUDA_ARRAY3D_DEFERRED_MAPPING;
    void *twin = NULL;
    CUresult made = mipmapped ? create_mip((CUmipmappedArray *)&twin, &d, levels ? levels : 1)
                              : create((CUarray *)&twin, &d);
    if (made != CUDA_SUCCESS || !twin)
        return 0;
    uint64_t size = asked((uint64_t)(uintptr_t)twin, mipmapped, device);
    destroy(twin);
    return size;
}

uint64_t gl_array_reserved(uint64_t handle, int mipmapped, int device, unsigned levels)
{
    if (!handle || device < 0 || !gl_own_call_begin()) /* not while a stream captures */
        return 0;
    uint64_t size = asked(handle, mipmapped, device);
    if (!size)
        size = probed(handle, mipmapped, device, levels);
    gl_own_call_end();
    return size;
}

void gl_array_fill(uint64_t handle, int mipmapped, int device, uint64_t requested, unsigned flags, unsigned levels,
                   uint64_t *size, uint64_t *aux)
{
    *aux = requested;
    if (gl_array_unbacked(flags)) {
        *size = 0;
        return;
    }
    uint64_t reserved = gl_array_reserved(handle, mipmapped, device, levels);
    *size = reserved ? reserved : requested;
}
