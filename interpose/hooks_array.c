/* hooks_array.c — CUDA arrays (textures, surfaces): the runtime's
 * cudaMallocArray / cudaMalloc3DArray / cudaMallocMipmappedArray and their
 * frees, the driver's cuArrayCreate_v2 / cuArray3DCreate_v2 /
 * cuMipmappedArrayCreate and their destroys. Kind `array`; the event's
 * address is the array handle; its size what the driver reserves where it
 * says (array_size.h), else what the descriptor asks for (aux: the
 * requested bytes). The
 * runtime's calls reach the driver's nested (not recorded twice). */
#include "array_size.h"
#include "cuda_extra.h"
#include "wrap.h"

#define RT_FAIL cudaErrorInitializationError
#define DRV_FAIL CUDA_ERROR_NOT_INITIALIZED

static uint64_t rt_requested(const struct cudaChannelFormatDesc *desc, struct cudaExtent e, unsigned flags,
                             unsigned levels)
{
    return gl_array_requested(gl_array_channel_bits(desc), e.width, e.height, e.depth, flags, levels);
}

static uint64_t drv_requested(const CUDA_ARRAY3D_DESCRIPTOR *d, unsigned levels)
{
    if (!d)
        return 0;
    return gl_array_requested(gl_array_format_bits(d->Format, d->NumChannels), d->Width, d->Height, d->Depth,
                              d->Flags, levels);
}

/* FILL for an array allocation: handle, device, sizes. */
#define ARRAY_FILL(handle_ptr, mip, requested, flags, levels)                                              \
    (c.addr = r == 0 && (handle_ptr) ? GL_PTR(*(handle_ptr)) : 0,                                        \
     gl_array_fill(c.addr, mip, c.device, requested, flags, levels, &c.size, &c.aux))

GL_EXPORT cudaError_t cudaMallocArray(cudaArray_t *array, const struct cudaChannelFormatDesc *desc, size_t width,
                                      size_t height, unsigned int flags)
{
    GL_AFTER(cudaMallocArray, cudaError_t, RT_FAIL, gl_runtime_device(), real(array, desc, width, height, flags),
             ARRAY_FILL(array, 0, rt_requested(desc, (struct cudaExtent){width, height, 0}, flags, 1), flags, 1));
}

GL_EXPORT cudaError_t cudaMalloc3DArray(cudaArray_t *array, const struct cudaChannelFormatDesc *desc,
                                        struct cudaExtent extent, unsigned int flags)
{
    GL_AFTER(cudaMalloc3DArray, cudaError_t, RT_FAIL, gl_runtime_device(), real(array, desc, extent, flags),
             ARRAY_FILL(array, 0, rt_requested(desc, extent, flags, 1), flags, 1));
}

GL_EXPORT cudaError_t cudaMallocMipmappedArray(cudaMipmappedArray_t *mip, const struct cudaChannelFormatDesc *desc,
                                               struct cudaExtent extent, unsigned int levels, unsigned int flags)
{
    GL_AFTER(cudaMallocMipmappedArray, cudaError_t, RT_FAIL, gl_runtime_device(),
             real(mip, desc, extent, levels, flags),
             ARRAY_FILL(mip, 1, rt_requested(desc, extent, flags, levels), flags, levels));
}

GL_EXPORT cudaError_t cudaFreeArray(cudaArray_t array)
{
    GL_AROUND(cudaFreeArray, cudaError_t, RT_FAIL, -1, array != NULL, real(array), (c.addr = GL_PTR(array)));
}

GL_EXPORT cudaError_t cudaFreeMipmappedArray(cudaMipmappedArray_t mip)
{
    GL_AROUND(cudaFreeMipmappedArray, cudaError_t, RT_FAIL, -1, mip != NULL, real(mip), (c.addr = GL_PTR(mip)));
}

GL_EXPORT CUresult cuArrayCreate_v2(CUarray *pHandle, const CUDA_ARRAY_DESCRIPTOR *desc)
{
    GL_AFTER(cuArrayCreate_v2, CUresult, DRV_FAIL, gl_driver_device(), real(pHandle, desc),
             ARRAY_FILL(pHandle, 0,
                        desc ? gl_array_requested(gl_array_format_bits(desc->Format, desc->NumChannels), desc->Width,
                                                  desc->Height, 0, 0, 1)
                             : 0,
                        0, 1));
}

GL_EXPORT CUresult cuArray3DCreate_v2(CUarray *pHandle, const CUDA_ARRAY3D_DESCRIPTOR *desc)
{
    GL_AFTER(cuArray3DCreate_v2, CUresult, DRV_FAIL, gl_driver_device(), real(pHandle, desc),
             ARRAY_FILL(pHandle, 0, drv_requested(desc, 1), desc ? desc->Flags : 0, 1));
}

GL_EXPORT CUresult cuMipmappedArrayCreate(CUmipmappedArray *pHandle, const CUDA_ARRAY3D_DESCRIPTOR *desc,
                                          unsigned int levels)
{
    GL_AFTER(cuMipmappedArrayCreate, CUresult, DRV_FAIL, gl_driver_device(), real(pHandle, desc, levels),
             ARRAY_FILL(pHandle, 1, drv_requested(desc, levels), desc ? desc->Flags : 0, levels));
}

GL_EXPORT CUresult cuArrayDestroy(CUarray hArray)
{
    GL_AROUND(cuArrayDestroy, CUresult, DRV_FAIL, -1, hArray != NULL, real(hArray), (c.addr = GL_PTR(hArray)));
}

GL_EXPORT CUresult cuMipmappedArrayDestroy(CUmipmappedArray h)
{
    GL_AROUND(cuMipmappedArrayDestroy, CUresult, DRV_FAIL, -1, h != NULL, real(h), (c.addr = GL_PTR(h)));
}
