/* hooks.h — the table of wrapped symbols: for each, our exported wrapper
 * and the real function behind it. The real pointer is found lazily with
 * dlsym(RTLD_NEXT), or captured when the program (or cudart) fetches the
 * function through dlsym, cuGetProcAddress or cudaGetDriverEntryPoint. */
#ifndef GL_HOOKS_H
#define GL_HOOKS_H

#include <stdint.h>

/* X(symbol): every exported wrapper. */
#define GL_HOOK_LIST(X)                                                                           \
    X(cudaMalloc) X(cudaFree) X(cudaMallocAsync) X(cudaFreeAsync) X(cudaMallocFromPoolAsync)      \
    X(cudaMallocAsync_ptsz) X(cudaFreeAsync_ptsz) X(cudaMallocFromPoolAsync_ptsz)                 \
    X(cudaMallocManaged) X(cudaMallocPitch) X(cudaMallocHost) X(cudaHostAlloc) X(cudaFreeHost)    \
    X(cudaMemPoolTrimTo) X(cudaDeviceReset)                                                       \
    X(cuMemAlloc_v2) X(cuMemAllocPitch_v2) X(cuMemFree_v2) X(cuMemAllocAsync) X(cuMemFreeAsync)  \
    X(cuMemAllocFromPoolAsync) X(cuMemAllocAsync_ptsz) X(cuMemFreeAsync_ptsz)                     \
    X(cuMemAllocFromPoolAsync_ptsz) X(cuMemAllocManaged) X(cuMemAllocHost_v2) X(cuMemHostAlloc)  \
    X(cuMemFreeHost) X(cuMemCreate) X(cuMemRelease) X(cuMemMap) X(cuMemUnmap)                     \
    X(cuMemAddressReserve) X(cuMemAddressFree)                                                    \
    X(cudaMallocArray) X(cudaMalloc3DArray) X(cudaMallocMipmappedArray) X(cudaFreeArray)          \
    X(cudaFreeMipmappedArray) X(cuArrayCreate_v2) X(cuArray3DCreate_v2) X(cuMipmappedArrayCreate) \
    X(cuArrayDestroy) X(cuMipmappedArrayDestroy)                                                  \
    X(cuStreamBeginCapture_v2) X(cuStreamBeginCapture_v2_ptsz) X(cuStreamBeginCaptureToGraph)     \
    X(cuStreamBeginCaptureToGraph_ptsz) X(cuStreamEndCapture) X(cuStreamEndCapture_ptsz)          \
    X(cuGraphAddMemAllocNode) X(cuGraphAddMemFreeNode) X(cuGraphInstantiateWithFlags)             \
    X(cuGraphInstantiateWithParams) X(cuGraphInstantiateWithParams_ptsz) X(cuGraphExecDestroy)    \
    X(cuGraphLaunch) X(cuGraphLaunch_ptsz) X(cuDeviceGraphMemTrim)                                \
    X(cuGetProcAddress) X(cuGetProcAddress_v2)                                                    \
    X(cudaGetDriverEntryPoint) X(cudaGetDriverEntryPointByVersion)                                \
    X(cudaGetDriverEntryPoint_ptsz) X(cudaGetDriverEntryPointByVersion_ptsz)

enum gl_hook_id {
#define GL_X(sym) GL_HOOK_##sym,
    GL_HOOK_LIST(GL_X)
#undef GL_X
    GL_HOOK_COUNT
};

struct gl_hook {
    const char *name;
    void *wrapper;
    void *_Atomic real;
};

extern struct gl_hook gl_hooks[GL_HOOK_COUNT];

/* The real function for hook `id` (NULL if none can be found). */
void *gl_hook_real(int id);
/* If *pfn is the real function of `id` (or `id` has none yet), replace it
 * with our wrapper, remembering the real one. */
void gl_hook_substitute(int id, void **pfn);
/* Hook id for an exported symbol name, or -1. */
int gl_hook_find(const char *name);

/* Cheap device queries used by wrappers (-1 when unknown). */
int gl_runtime_device(void);
int gl_driver_device(void);
/* cudaDeviceReset: forget every thread's remembered context -> device. */
void gl_device_cache_reset(void);

#endif
