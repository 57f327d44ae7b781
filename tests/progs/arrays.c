/* arrays.c — CUDA arrays through the runtime and the driver, with sizes the
 * fake driver's rules make exact (tests/fakecuda/fake_array.c):
 *   load_texture      cudaMallocArray 1000 x 1000 float      4,000,000 B, never freed
 *   volume            cudaMalloc3DArray 256 x 256 x 64 uchar4  16 MiB, freed
 *   mipmaps           cudaMallocMipmappedArray 1024^2 float, 3 levels
 *                                                  5,505,024 B, freed
 *   driver_array      cuArrayCreate 3000 x 1000 uint8 x 2      6,000,000 B, freed
 *   deferred_array    cuArray3DCreate 512 x 512 float, deferred mapping:
 *                                                  1 MiB asked, none taken, freed
 *   driver_mipmaps    cuMipmappedArrayCreate 512 x 512 x 4 layers half x 4, 2 levels
 *                                                  10 MiB, freed
 * The fake driver charges each its size rounded up to 2 MiB. */
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

static int failures;
#define CK(x) (failures += (x) != 0)

__attribute__((noinline)) static cudaArray_t load_texture(void)
{
    struct cudaChannelFormatDesc f = {32, 0, 0, 0, cudaChannelFormatKindFloat};
    cudaArray_t a = NULL;
    CK(cudaMallocArray(&a, &f, 1000, 1000, 0));
    return a;
}

__attribute__((noinline)) static void volume(void)
{
    struct cudaChannelFormatDesc f = {8, 8, 8, 8, cudaChannelFormatKindUnsigned};
    cudaArray_t a = NULL;
    CK(cudaMalloc3DArray(&a, &f, (struct cudaExtent){256, 256, 64}, 0));
    CK(cudaFreeArray(a));
}

__attribute__((noinline)) static void mipmaps(void)
{
    struct cudaChannelFormatDesc f = {32, 0, 0, 0, cudaChannelFormatKindFloat};
    cudaMipmappedArray_t m = NULL;
    CK(cudaMallocMipmappedArray(&m, &f, (struct cudaExtent){1024, 1024, 0}, 3, 0));
    CK(cudaFreeMipmappedArray(m));
}

__attribute__((noinline)) static void driver_array(void)
{
    CUDA_ARRAY_DESCRIPTOR d = {.Width = 3000, .Height = 1000, .Format = CU_AD_FORMAT_UNSIGNED_INT8, .NumChannels = 2};
    CUarray a = NULL;
    CK(cuArrayCreate(&a, &d));
    CK(cuArrayDestroy(a));
}

__attribute__((noinline)) static void deferred_array(void)
{
    CUDA_ARRAY3D_DESCRIPTOR d = {.Width = 512, .Height = 512, .Format = CU_AD_FORMAT_FLOAT, .NumChannels = 1,
                                 .Flags = CUDA_ARRAY3D_DEFERRED_MAPPING};
    CUarray a = NULL;
    CK(cuArray3DCreate(&a, &d));
    CK(cuArrayDestroy(a));
}

__attribute__((noinline)) static void driver_mipmaps(void)
{
    CUDA_ARRAY3D_DESCRIPTOR d = {.Width = 512, .Height = 512, .Depth = 4, .Format = CU_AD_FORMAT_HALF,
                                 .NumChannels = 4, .Flags = CUDA_ARRAY3D_LAYERED};
    CUmipmappedArray m = NULL;
    CK(cuMipmappedArrayCreate(&m, &d, 2));
    CK(cuMipmappedArrayDestroy(m));
}

/* A 3D array through entry points no interposer knows (what a statically
 * linked runtime calls): 2 MiB asked, left live; only CUPTI sees it. */
typedef CUresult (*array3d_fn)(CUarray *, const CUDA_ARRAY3D_DESCRIPTOR *);
__attribute__((noinline)) static int private_array(void)
{
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    array3d_fn create = h ? (array3d_fn)dlsym(h, "fakecuda_private_cuArray3DCreate") : NULL;
    if (!create)
        return 1;
    CUDA_ARRAY3D_DESCRIPTOR d = {.Width = 1024, .Height = 512, .Format = CU_AD_FORMAT_FLOAT, .NumChannels = 1};
    CUarray a = NULL;
    return create(&a, &d) != CUDA_SUCCESS;
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "--private")) {
        void *p = NULL;
        CK(cudaMalloc(&p, 1 << 20));
        CK(private_array());
        CK(cudaFree(p));
        printf("arrays --private: %s\n", failures ? "failed" : "ok");
        return failures != 0;
    }
    void *p = NULL;
    CK(cudaMalloc(&p, 1 << 20)); /* the context, through the runtime */
    cudaArray_t kept = load_texture();
    volume();
    mipmaps();
    driver_array();
    deferred_array();
    driver_mipmaps();
    CK(cudaFree(p));
    printf("arrays: %s, texture at %p\n", failures ? "failed" : "ok", (void *)kept);
    return failures != 0;
}
