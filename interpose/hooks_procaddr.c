/* hooks_procaddr.c — the hook table, and the three ways programs fetch
 * CUDA functions without the dynamic linker: dlsym, cuGetProcAddress (which
 * cudart uses for every driver call, static cudart included) and
 * cudaGetDriverEntryPoint* (PyTorch's expandable segments). Each hands back
 * our wrapper for the functions we record. */
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
#include <dlfcn.h>
#include <stdatomic.h>
#include <string.h>

#include "cuda_extra.h"
#include "hooks.h"
#include "real.h"
#include "recorder.h"
#include "usage.h"

struct gl_hook gl_hooks[GL_HOOK_COUNT] = {
#define GL_X(sym) [GL_HOOK_##sym] = {#sym, (void *)&sym, NULL},
    GL_HOOK_LIST(GL_X)
#undef GL_X
};

/* The dlsym hook runs before anything else is ready, e.g. while a
 * sanitizer runtime initialises itself by calling dlsym: this path uses no
 * libc call and no instrumentation. */
#define GL_EARLY __attribute__((no_sanitize("address", "undefined", "thread")))

GL_EARLY static int same_name(const char *a, const char *b)
{
    while (*a && *a == *b) {
        a++;
        b++;
    }
    return *a == *b;
}

GL_EARLY int gl_hook_find(const char *name)
{
    if (!name || name[0] != 'c' || name[1] != 'u')
        return -1;
    for (int i = 0; i < GL_HOOK_COUNT; i++)
        if (same_name(gl_hooks[i].name, name))
            return i;
    return -1;
}

void *gl_hook_real(int id)
{
    void *p = atomic_load_explicit(&gl_hooks[id].real, memory_order_acquire);
    if (p)
        return p;
    p = gl_real_next(gl_hooks[id].name);
    if (!p && strncmp(gl_hooks[id].name, "cuda", 4)) {
        /* cudart loads the driver RTLD_LOCAL, out of RTLD_NEXT's reach. */
        void *h = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
        if (h) {
            p = gl_real_dlsym(h, gl_hooks[id].name);
            dlclose(h);
        }
    }
    if (p == gl_hooks[id].wrapper)
        p = NULL;
    if (p) {
        void *expect = NULL;
        if (!atomic_compare_exchange_strong(&gl_hooks[id].real, &expect, p))
            p = expect;
    }
    return p;
}

static int is_wrapper(void *p)
{
    for (int i = 0; i < GL_HOOK_COUNT; i++)
        if (gl_hooks[i].wrapper == p)
            return 1;
    return 0;
}

void gl_hook_substitute(int id, void **pfn)
{
    void *real = *pfn;
    if (!real || is_wrapper(real))
        return;
    void *expect = NULL;
    if (atomic_compare_exchange_strong(&gl_hooks[id].real, &expect, real) || expect == real) {
        *pfn = gl_hooks[id].wrapper;
        return;
    }
    /* The library we took it from was unloaded (dlclose) and is back,
     * perhaps elsewhere: take the new one. */
    Dl_info info;
    if (!dladdr(expect, &info) && atomic_compare_exchange_strong(&gl_hooks[id].real, &expect, real)) {
        *pfn = gl_hooks[id].wrapper;
        return;
    }
    /* A different function of the same name is already wrapped. For the
     * driver there is one libcuda per process: the two are the same entry
     * point reached two ways, so wrap. For the runtime there may be two
     * copies of cudart with separate state: leave this one alone. */
    if (gl_hooks[id].name[2] != 'd')
        *pfn = gl_hooks[id].wrapper;
}

/* ---- dlsym (called from dlsym_tramp.S) ---------------------------------- */

GL_EARLY __attribute__((visibility("hidden"))) int gl_dlsym_is_hooked(const char *name)
{
    gl_real_init();
    return gl_hook_find(name) >= 0;
}

/* Not for RTLD_NEXT (the trampoline hands that straight to the real
 * dlsym, relative to its caller). */
__attribute__((visibility("hidden"))) void *gl_dlsym_hooked(void *handle, const char *name)
{
    gl_usage_start(); /* a CUDA library looks up the driver: before its first call */
    void *p = gl_real_dlsym(handle, name);
    if (!p)
        return p;
    /* What a plain call of `name` reaches (RTLD_DEFAULT, the program's own
     * handle): our wrapper, or another interposer in front of us that
     * forwards to us by itself. Either way the caller keeps it. */
    if (p == gl_real_dlsym(RTLD_DEFAULT, name))
        return p;
    /* Where our wrapper forwards is fixed by the chain behind us (which
     * may go through another interposer), never by a lookup in some
     * library's own handle: resolve it before substituting. */
    int id = gl_hook_find(name);
    gl_hook_real(id);
    gl_hook_substitute(id, &p);
    return p;
}

/* ---- cuGetProcAddress ---------------------------------------------------- */

/* The hook for a driver symbol requested by base name, as cuGetProcAddress
 * resolves it for a given API version and stream flags. */
static int procaddr_hook(const char *symbol, int version, cuuint64_t flags)
{
    /* id: the entry point before version v2_from (-1: one we do not wrap),
     * v2_id from it on; _ptsz: what the per-thread-default-stream flag
     * selects. Names not listed are handed out as themselves. */
    static const struct {
        const char *name;
        int id, ptsz_id, v2_id, v2_ptsz_id, v2_from;
    } map[] = {
        {"cuMemAlloc", -1, -1, GL_HOOK_cuMemAlloc_v2, -1, 3020},
        {"cuMemAllocPitch", -1, -1, GL_HOOK_cuMemAllocPitch_v2, -1, 3020},
        {"cuMemFree", -1, -1, GL_HOOK_cuMemFree_v2, -1, 3020},
        {"cuMemAllocHost", -1, -1, GL_HOOK_cuMemAllocHost_v2, -1, 3020},
        {"cuArrayCreate", -1, -1, GL_HOOK_cuArrayCreate_v2, -1, 3020},
        {"cuArray3DCreate", -1, -1, GL_HOOK_cuArray3DCreate_v2, -1, 3020},
        {"cuGetProcAddress", GL_HOOK_cuGetProcAddress, -1, GL_HOOK_cuGetProcAddress_v2, -1, 12000},
        {"cuMemAllocAsync", GL_HOOK_cuMemAllocAsync, GL_HOOK_cuMemAllocAsync_ptsz, -1, -1, 0},
        {"cuMemFreeAsync", GL_HOOK_cuMemFreeAsync, GL_HOOK_cuMemFreeAsync_ptsz, -1, -1, 0},
        {"cuMemAllocFromPoolAsync", GL_HOOK_cuMemAllocFromPoolAsync, GL_HOOK_cuMemAllocFromPoolAsync_ptsz, -1, -1,
         0},
        {"cuStreamBeginCapture", -1, -1, GL_HOOK_cuStreamBeginCapture_v2, GL_HOOK_cuStreamBeginCapture_v2_ptsz,
         10010},
        {"cuStreamBeginCaptureToGraph", GL_HOOK_cuStreamBeginCaptureToGraph, GL_HOOK_cuStreamBeginCaptureToGraph_ptsz,
         -1, -1, 0},
        {"cuStreamEndCapture", GL_HOOK_cuStreamEndCapture, GL_HOOK_cuStreamEndCapture_ptsz, -1, -1, 0},
        {"cuGraphInstantiate", -1, -1, GL_HOOK_cuGraphInstantiateWithFlags, -1, 12000},
        {"cuGraphInstantiateWithParams", GL_HOOK_cuGraphInstantiateWithParams,
         GL_HOOK_cuGraphInstantiateWithParams_ptsz, -1, -1, 0},
        {"cuGraphLaunch", GL_HOOK_cuGraphLaunch, GL_HOOK_cuGraphLaunch_ptsz, -1, -1, 0},
    };
    if (!symbol || symbol[0] != 'c' || symbol[1] != 'u')
        return -1;
    int ptsz = (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) != 0;
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++) {
        if (strcmp(symbol, map[i].name))
            continue;
        if (map[i].v2_id >= 0 && version >= map[i].v2_from)
            return ptsz && map[i].v2_ptsz_id >= 0 ? map[i].v2_ptsz_id : map[i].v2_id;
        return ptsz && map[i].ptsz_id >= 0 ? map[i].ptsz_id : map[i].id;
    }
    int id = gl_hook_find(symbol);
    /* Only driver entry points are handed out here. */
    return id >= 0 && symbol[2] != 'd' ? id : -1;
}

static void procaddr_substitute(const char *symbol, int version, cuuint64_t flags, void **pfn)
{
    if (!pfn || !*pfn)
        return;
    int id = procaddr_hook(symbol, version, flags);
    if (id >= 0)
        gl_hook_substitute(id, pfn);
}

typedef CUresult (*cuGetProcAddress_v2_fn)(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *);
typedef CUresult (*cuGetProcAddress_v1_fn)(const char *, void **, int, cuuint64_t);
typedef CUresult (*cuCtxGetDevice_fn)(CUdevice *);
typedef cudaError_t (*cudaGetDevice_fn)(int *);

static void *_Atomic real_cuCtxGetDevice;

static void capture_ctx_get_device(cuGetProcAddress_v2_fn real)
{
    if (atomic_load_explicit(&real_cuCtxGetDevice, memory_order_relaxed))
        return;
    void *p = NULL;
    if (real("cuCtxGetDevice", &p, 12000, 0, NULL) == CUDA_SUCCESS && p)
        atomic_store(&real_cuCtxGetDevice, p);
}

GL_EXPORT CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags,
                                       CUdriverProcAddressQueryResult *symbolStatus)
{
    cuGetProcAddress_v2_fn real = (cuGetProcAddress_v2_fn)gl_hook_real(GL_HOOK_cuGetProcAddress_v2);
    if (!real)
        return CUDA_ERROR_NOT_FOUND;
    gl_usage_start();
    CUresult r = real(symbol, pfn, cudaVersion, flags, symbolStatus);
    if (r == CUDA_SUCCESS) {
        capture_ctx_get_device(real);
        procaddr_substitute(symbol, cudaVersion, flags, pfn);
    }
    return r;
}

GL_EXPORT CUresult cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags)
{
    cuGetProcAddress_v1_fn real = (cuGetProcAddress_v1_fn)gl_hook_real(GL_HOOK_cuGetProcAddress);
    if (!real)
        return CUDA_ERROR_NOT_FOUND;
    gl_usage_start();
    CUresult r = real(symbol, pfn, cudaVersion, flags);
    if (r == CUDA_SUCCESS)
        procaddr_substitute(symbol, cudaVersion, flags, pfn);
    return r;
}

/* ---- cudaGetDriverEntryPoint* ---------------------------------------------- */

typedef cudaError_t (*entry_fn)(const char *, void **, unsigned long long, enum cudaDriverEntryPointQueryResult *);
typedef cudaError_t (*entry_ver_fn)(const char *, void **, unsigned int, unsigned long long,
                                    enum cudaDriverEntryPointQueryResult *);

static cudaError_t entry_point(int id, const char *symbol, void **funcPtr, unsigned long long flags,
                               enum cudaDriverEntryPointQueryResult *st)
{
    entry_fn real = (entry_fn)gl_hook_real(id);
    if (!real)
        return cudaErrorSymbolNotFound;
    cudaError_t r = real(symbol, funcPtr, flags, st);
    if (r == cudaSuccess)
        procaddr_substitute(symbol, CUDART_VERSION, flags, funcPtr);
    return r;
}

static cudaError_t entry_point_ver(int id, const char *symbol, void **funcPtr, unsigned int version,
                                   unsigned long long flags, enum cudaDriverEntryPointQueryResult *st)
{
    entry_ver_fn real = (entry_ver_fn)gl_hook_real(id);
    if (!real)
        return cudaErrorSymbolNotFound;
    cudaError_t r = real(symbol, funcPtr, version, flags, st);
    if (r == cudaSuccess)
        procaddr_substitute(symbol, (int)version, flags, funcPtr);
    return r;
}

GL_EXPORT cudaError_t cudaGetDriverEntryPoint(const char *symbol, void **funcPtr, unsigned long long flags,
                                              enum cudaDriverEntryPointQueryResult *driverStatus)
{
    return entry_point(GL_HOOK_cudaGetDriverEntryPoint, symbol, funcPtr, flags, driverStatus);
}

GL_EXPORT cudaError_t cudaGetDriverEntryPoint_ptsz(const char *symbol, void **funcPtr, unsigned long long flags,
                                                   enum cudaDriverEntryPointQueryResult *driverStatus)
{
    return entry_point(GL_HOOK_cudaGetDriverEntryPoint_ptsz, symbol, funcPtr, flags, driverStatus);
}

GL_EXPORT cudaError_t cudaGetDriverEntryPointByVersion(const char *symbol, void **funcPtr, unsigned int cudaVersion,
                                                       unsigned long long flags,
                                                       enum cudaDriverEntryPointQueryResult *driverStatus)
{
    return entry_point_ver(GL_HOOK_cudaGetDriverEntryPointByVersion, symbol, funcPtr, cudaVersion, flags,
                           driverStatus);
}

GL_EXPORT cudaError_t cudaGetDriverEntryPointByVersion_ptsz(const char *symbol, void **funcPtr,
                                                            unsigned int cudaVersion, unsigned long long flags,
                                                            enum cudaDriverEntryPointQueryResult *driverStatus)
{
    return entry_point_ver(GL_HOOK_cudaGetDriverEntryPointByVersion_ptsz, symbol, funcPtr, cudaVersion, flags,
                           driverStatus);
}

/* ---- device queries ------------------------------------------------------ */

int gl_driver_device(void)
{
    cuCtxGetDevice_fn f = (cuCtxGetDevice_fn)atomic_load_explicit(&real_cuCtxGetDevice, memory_order_relaxed);
    if (!f) {
        f = (cuCtxGetDevice_fn)gl_real_next("cuCtxGetDevice");
        if (!f)
            return -1;
        atomic_store(&real_cuCtxGetDevice, (void *)f);
    }
    CUdevice d = -1;
    return f(&d) == CUDA_SUCCESS ? (int)d : -1;
}

/* The runtime's current device costs a cudaGetDevice (~57 ns on the H200);
 * the driver's current context, a cuCtxGetCurrent (~11 ns). A context
 * belongs to one device for its life, so each thread remembers the device
 * of the last context it saw. A context destroyed and another made at the
 * same address could fool that: cudaDeviceReset (wrapped) starts a new
 * epoch that forgets every thread's entry. */
typedef CUresult (*cuCtxGetCurrent_fn)(CUcontext *);
static _Atomic unsigned device_epoch = 1;
static __thread struct {
    CUcontext ctx;
    unsigned epoch;
    int device;
} tls_dev __attribute__((tls_model("initial-exec")));

void gl_device_cache_reset(void)
{
    atomic_fetch_add(&device_epoch, 1);
}

static cuCtxGetCurrent_fn ctx_getter(void)
{
    static void *_Atomic fn;
    static _Atomic int tried;
    void *f = atomic_load_explicit(&fn, memory_order_acquire);
    if (f || atomic_load_explicit(&tried, memory_order_relaxed))
        return (cuCtxGetCurrent_fn)f;
    f = gl_real_next("cuCtxGetCurrent");
    if (!f) {
        /* cudart loads the driver RTLD_LOCAL; keep the reference: the
         * pointer is then valid for the rest of the run */
        void *h = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
        if (h)
            f = gl_real_dlsym(h, "cuCtxGetCurrent");
    }
    if (f)
        atomic_store_explicit(&fn, f, memory_order_release);
    else
        atomic_store_explicit(&tried, 1, memory_order_relaxed);
    return (cuCtxGetCurrent_fn)f;
}

int gl_runtime_device(void)
{
    static void *_Atomic real_get;
    cuCtxGetCurrent_fn cur = ctx_getter();
    CUcontext ctx = NULL;
    unsigned epoch = atomic_load_explicit(&device_epoch, memory_order_relaxed);
    if (cur && cur(&ctx) == CUDA_SUCCESS && ctx && ctx == tls_dev.ctx && epoch == tls_dev.epoch)
        return tls_dev.device;
    cudaGetDevice_fn f = (cudaGetDevice_fn)atomic_load_explicit(&real_get, memory_order_relaxed);
    if (!f) {
        f = (cudaGetDevice_fn)gl_real_next("cudaGetDevice");
        if (!f)
            return gl_driver_device();
        atomic_store(&real_get, (void *)f);
    }
    int d = -1;
    if (f(&d) != cudaSuccess)
        return -1;
    /* the context current now: cudaGetDevice may have made one current */
    if (cur && cur(&ctx) == CUDA_SUCCESS && ctx) {
        tls_dev.ctx = ctx;
        tls_dev.epoch = epoch;
        tls_dev.device = d;
    }
    return d;
}
