/* fake_driver.c — the fake libcuda.so.1: context/device basics, classic
 * allocations, pinned host memory, managed memory, failure injection and
 * cuGetProcAddress handing out these functions (the way cudart and
 * PyTorch reach the driver). Pools: fake_pool.c. VMM: fake_vmm.c. */
#include <cupti_callbacks.h>
#include <cupti_driver_cbid.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fake_internal.h"

static __thread int current_dev;
static __thread int current_set;
static _Atomic size_t used_bytes[FAKE_MAX_DEVICES];
static _Atomic size_t context_bytes[FAKE_MAX_DEVICES], localmem_bytes[FAKE_MAX_DEVICES];
static _Atomic unsigned long alloc_calls;
static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;

/* fork: the registry lock is held across fork (see fake_pool.c) */
static void reg_lock_take(void)
{
    pthread_mutex_lock(&reg_lock);
}

static void reg_lock_give(void)
{
    pthread_mutex_unlock(&reg_lock);
}

__attribute__((constructor)) static void reg_fork_handlers(void)
{
    pthread_atfork(reg_lock_take, reg_lock_give, reg_lock_give);
}

int fake_device_count(void)
{
    const char *s = getenv("FAKECUDA_DEVICES");
    int n = s ? atoi(s) : 2;
    return n < 1 ? 1 : n > FAKE_MAX_DEVICES ? FAKE_MAX_DEVICES : n;
}

int fake_current_device(void)
{
    return current_set ? current_dev : 0;
}

size_t fake_total(void)
{
    const char *s = getenv("FAKECUDA_MEM_BYTES");
    return s ? (size_t)strtoull(s, NULL, 10) : (size_t)16 << 30;
}

size_t fake_used(int dev)
{
    return atomic_load(&used_bytes[dev]);
}

static size_t env_bytes(const char *name, size_t dflt)
{
    const char *s = getenv(name);
    return s && *s ? (size_t)strtoull(s, NULL, 10) : dflt;
}

size_t fake_overhead(int dev)
{
    return atomic_load(&context_bytes[dev]) + atomic_load(&localmem_bytes[dev]);
}

void fake_first_launch(int dev)
{
    size_t none = 0;
    if (dev >= 0 && dev < FAKE_MAX_DEVICES && !atomic_load_explicit(&localmem_bytes[dev], memory_order_relaxed))
        atomic_compare_exchange_strong(&localmem_bytes[dev], &none, env_bytes("FAKECUDA_LOCALMEM_BYTES", 64u << 20));
}

/* What the process holds on dev: its allocations plus the overhead (the
 * fake NVML's per-process figure). */
size_t fakecuda_process_used(int dev)
{
    return dev >= 0 && dev < FAKE_MAX_DEVICES ? fake_used(dev) + fake_overhead(dev) : 0;
}

/* Is this (1-based) allocation call one the test wants to fail? */
static int injected_failure(unsigned long n)
{
    const char *s = getenv("FAKECUDA_FAIL_ALLOC");
    while (s && *s) {
        char *end;
        unsigned long v = strtoul(s, &end, 10);
        if (end == s)
            break;
        if (v == n)
            return 1;
        s = *end == ',' ? end + 1 : end;
    }
    return 0;
}

CUresult fake_charge(int dev, size_t size)
{
    unsigned long n = atomic_fetch_add(&alloc_calls, 1) + 1;
    if (injected_failure(n)) {
        const char *code = getenv("FAKECUDA_FAIL_CODE");
        return code ? (CUresult)atoi(code) : CUDA_ERROR_OUT_OF_MEMORY;
    }
    if (dev < 0 || dev >= FAKE_MAX_DEVICES)
        return CUDA_ERROR_INVALID_DEVICE;
    size_t prev = atomic_fetch_add(&used_bytes[dev], size);
    if (prev + size > fake_total()) {
        atomic_fetch_sub(&used_bytes[dev], size);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    return CUDA_SUCCESS;
}

void fake_uncharge(int dev, size_t size)
{
    if (dev >= 0 && dev < FAKE_MAX_DEVICES)
        atomic_fetch_sub(&used_bytes[dev], size);
}

/* ---- registry (a simple chained hash table) ---------------------------- */

struct reg {
    uintptr_t addr;
    size_t size;
    int dev, kind;
    void *base;
    struct reg *next;
};
#define NBUCKETS 4096
static struct reg *buckets[NBUCKETS];

static size_t bucket(uintptr_t a)
{
    return (a >> 8) % NBUCKETS;
}

void fake_registry_add(uintptr_t addr, size_t size, int dev, int kind, void *base)
{
    struct reg *r = malloc(sizeof *r);
    if (!r)
        abort();
    *r = (struct reg){addr, size, dev, kind, base, NULL};
    pthread_mutex_lock(&reg_lock);
    r->next = buckets[bucket(addr)];
    buckets[bucket(addr)] = r;
    pthread_mutex_unlock(&reg_lock);
}

int fake_registry_take(uintptr_t addr, int kind, size_t *size, int *dev, void **base)
{
    pthread_mutex_lock(&reg_lock);
    for (struct reg **p = &buckets[bucket(addr)]; *p; p = &(*p)->next) {
        struct reg *r = *p;
        if (r->addr == addr && r->kind == kind) {
            *p = r->next;
            pthread_mutex_unlock(&reg_lock);
            *size = r->size;
            *dev = r->dev;
            *base = r->base;
            free(r);
            return 1;
        }
    }
    pthread_mutex_unlock(&reg_lock);
    return 0;
}

int fake_registry_reset(int dev)
{
    int n = 0;
    pthread_mutex_lock(&reg_lock);
    for (size_t b = 0; b < NBUCKETS; b++) {
        for (struct reg **p = &buckets[b]; *p;) {
            struct reg *r = *p;
            if (r->dev == dev && r->kind != FAKE_HOST) {
                *p = r->next;
                fake_uncharge(r->dev, r->size);
                free(r->base);
                free(r);
                n++;
            } else {
                p = &r->next;
            }
        }
    }
    pthread_mutex_unlock(&reg_lock);
    return n;
}

/* ---- CUPTI and injection -------------------------------------------------- */

typedef void (*cupti_dispatch_fn)(int domain, uint32_t cbid, int site, const char *name, void *params, void *ret);
static cupti_dispatch_fn cupti_dispatch;

/* Called by the fake libcupti when a tool subscribes. */
void fakecuda_set_cupti_dispatch(void *fn)
{
    cupti_dispatch = (cupti_dispatch_fn)fn;
}

void fake_cupti_site(uint32_t cbid, const char *name, void *params, int site, void *ret)
{
    if (cupti_dispatch)
        cupti_dispatch(CUPTI_CB_DOMAIN_DRIVER_API, cbid, site, name, params, ret);
}

#define CUPTI_SITE(cbid, name, params, site, ret) fake_cupti_site(cbid, name, params, site, ret)

/* Like the real driver: at cuInit, load CUDA_INJECTION64_PATH and call
 * its InitializeInjection once. */
CUresult cuInit(unsigned int flags)
{
    (void)flags;
    static int injected;
    const char *inj = getenv("CUDA_INJECTION64_PATH");
    if (!injected && inj && *inj) {
        injected = 1;
        void *h = dlopen(inj, RTLD_NOW);
        int (*init)(void) = h ? (int (*)(void))dlsym(h, "InitializeInjection") : NULL;
        if (init)
            init();
    }
    return CUDA_SUCCESS;
}

/* ---- init, devices, contexts --------------------------------------------- */

CUresult cuDriverGetVersion(int *v)
{
    if (!v)
        return CUDA_ERROR_INVALID_VALUE;
    *v = 13000;
    return CUDA_SUCCESS;
}

CUresult cuDeviceGetCount(int *count)
{
    if (!count)
        return CUDA_ERROR_INVALID_VALUE;
    *count = fake_device_count();
    return CUDA_SUCCESS;
}

CUresult cuDeviceGet(CUdevice *device, int ordinal)
{
    if (!device || ordinal < 0 || ordinal >= fake_device_count())
        return CUDA_ERROR_INVALID_DEVICE;
    *device = ordinal;
    return CUDA_SUCCESS;
}

CUresult cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev)
{
    if (!pctx || dev < 0 || dev >= fake_device_count())
        return CUDA_ERROR_INVALID_DEVICE;
    *pctx = (CUcontext)(uintptr_t)(dev + 1);
    size_t none = 0;
    if (!atomic_load_explicit(&context_bytes[dev], memory_order_relaxed)) /* the first retain makes it */
        atomic_compare_exchange_strong(&context_bytes[dev], &none, env_bytes("FAKECUDA_CONTEXT_BYTES", 300u << 20));
    return CUDA_SUCCESS;
}

CUresult cuDevicePrimaryCtxReset_v2(CUdevice dev)
{
    if (dev < 0 || dev >= fake_device_count())
        return CUDA_ERROR_INVALID_DEVICE;
    fake_registry_reset(dev);
    atomic_store(&context_bytes[dev], 0); /* the context is gone; the next use makes another */
    atomic_store(&localmem_bytes[dev], 0);
    return CUDA_SUCCESS;
}

CUresult cuCtxSetCurrent(CUcontext ctx)
{
    int dev = (int)(uintptr_t)ctx - 1;
    if (dev < 0 || dev >= fake_device_count())
        return CUDA_ERROR_INVALID_CONTEXT;
    current_dev = dev;
    current_set = 1;
    return CUDA_SUCCESS;
}

CUresult cuCtxGetCurrent(CUcontext *ctx)
{
    if (!ctx)
        return CUDA_ERROR_INVALID_VALUE;
    *ctx = current_set ? (CUcontext)(uintptr_t)(current_dev + 1) : NULL;
    return CUDA_SUCCESS;
}

CUresult cuCtxGetDevice(CUdevice *device)
{
    if (!device)
        return CUDA_ERROR_INVALID_VALUE;
    *device = fake_current_device();
    return CUDA_SUCCESS;
}

CUresult cuCtxSynchronize(void)
{
    FAKE_UNSAFE("cuCtxSynchronize");
    return fake_pool_sync_all();
}

CUresult cuStreamSynchronize(CUstream s)
{
    CUresult r;
    if (fake_capture_sync(s, &r))
        return r;
    return fake_pool_sync_all();
}

CUresult cuMemGetInfo_v2(size_t *free_b, size_t *total)
{
    FAKE_UNSAFE("cuMemGetInfo");
    int d = fake_current_device();
    if (total)
        *total = fake_total();
    size_t held = fake_used(d) + fake_overhead(d);
    if (free_b)
        *free_b = held < fake_total() ? fake_total() - held : 0;
    return CUDA_SUCCESS;
}

/* Bus ids 0000:1N:00.0 for device N (the fake NVML lists them in the
 * opposite order, as a real machine may). */
CUresult cuDeviceGetPCIBusId(char *bus, int len, CUdevice dev)
{
    if (!bus || len < 13 || dev < 0 || dev >= fake_device_count())
        return CUDA_ERROR_INVALID_VALUE;
    snprintf(bus, (size_t)len, "0000:%02x:00.0", 0x10 + dev);
    return CUDA_SUCCESS;
}

CUresult cuGetErrorString(CUresult error, const char **str)
{
    if (!str)
        return CUDA_ERROR_INVALID_VALUE;
    switch (error) {
    case CUDA_SUCCESS:
        *str = "no error";
        break;
    case CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED:
        *str = "operation not permitted when stream is capturing";
        break;
    case CUDA_ERROR_STREAM_CAPTURE_INVALIDATED:
        *str = "operation failed due to a previous error during capture";
        break;
    case CUDA_ERROR_OUT_OF_MEMORY:
        *str = "out of memory";
        break;
    case CUDA_ERROR_INVALID_VALUE:
        *str = "invalid argument";
        break;
    default:
        *str = "unknown error";
        break;
    }
    return CUDA_SUCCESS;
}

/* ---- classic allocations ------------------------------------------------- */

static CUresult alloc_kind(void **out, size_t size, int dev, int kind)
{
    if (!out)
        return CUDA_ERROR_INVALID_VALUE;
    if (size == 0)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = kind == FAKE_HOST ? CUDA_SUCCESS : fake_charge(dev, size);
    if (kind == FAKE_HOST) {
        unsigned long n = atomic_fetch_add(&alloc_calls, 1) + 1;
        if (injected_failure(n))
            r = CUDA_ERROR_OUT_OF_MEMORY;
    }
    if (r != CUDA_SUCCESS)
        return r;
    size_t rounded = (size + FAKE_ALIGN - 1) & ~(size_t)(FAKE_ALIGN - 1);
    void *p = aligned_alloc(FAKE_ALIGN, rounded);
    if (!p) {
        if (kind != FAKE_HOST)
            fake_uncharge(dev, size);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    fake_registry_add((uintptr_t)p, size, dev, kind, p);
    *out = p;
    return CUDA_SUCCESS;
}

static CUresult free_kind(uintptr_t addr, int kind)
{
    size_t size;
    int dev;
    void *base;
    if (!addr)
        return CUDA_SUCCESS;
    if (!fake_registry_take(addr, kind, &size, &dev, &base))
        return CUDA_ERROR_INVALID_VALUE;
    if (kind != FAKE_HOST)
        fake_uncharge(dev, size);
    free(base);
    return CUDA_SUCCESS;
}

CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize)
{
    struct {
        CUdeviceptr *dptr;
        size_t bytesize;
    } params = {dptr, bytesize};
    CUresult r = CUDA_SUCCESS;
    CUPTI_SITE(CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2, "cuMemAlloc_v2", &params, CUPTI_API_ENTER, &r);
    void *p = NULL;
    r = fake_capture_unsafe("cuMemAlloc");
    if (r == CUDA_SUCCESS)
        r = alloc_kind(&p, bytesize, fake_current_device(), FAKE_DEVICE);
    if (r == CUDA_SUCCESS)
        *dptr = (CUdeviceptr)(uintptr_t)p;
    CUPTI_SITE(CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2, "cuMemAlloc_v2", &params, CUPTI_API_EXIT, &r);
    return r;
}

/* The same entry points under names no interposer knows: what a program
 * with a statically linked runtime reaches the driver through. */
CUresult fakecuda_private_cuMemAlloc(CUdeviceptr *dptr, size_t bytesize)
{
    return cuMemAlloc_v2(dptr, bytesize);
}

CUresult fakecuda_private_cuMemFree(CUdeviceptr dptr)
{
    return cuMemFree_v2(dptr);
}

CUresult cuMemAllocPitch_v2(CUdeviceptr *dptr, size_t *pPitch, size_t width, size_t height, unsigned int elem)
{
    (void)elem;
    if (!pPitch)
        return CUDA_ERROR_INVALID_VALUE;
    size_t pitch = (width + 511) & ~(size_t)511;
    CUresult r = cuMemAlloc_v2(dptr, pitch * height);
    if (r == CUDA_SUCCESS)
        *pPitch = pitch;
    return r;
}

CUresult cuMemFree_v2(CUdeviceptr dptr)
{
    struct {
        CUdeviceptr dptr;
    } params = {dptr};
    CUresult r = CUDA_SUCCESS;
    CUPTI_SITE(CUPTI_DRIVER_TRACE_CBID_cuMemFree_v2, "cuMemFree_v2", &params, CUPTI_API_ENTER, &r);
    r = fake_capture_unsafe("cuMemFree");
    if (r == CUDA_SUCCESS)
        r = free_kind((uintptr_t)dptr, FAKE_DEVICE);
    if (r == CUDA_ERROR_INVALID_VALUE)
        r = free_kind((uintptr_t)dptr, FAKE_MANAGED);
    if (r == CUDA_ERROR_INVALID_VALUE && fake_graph_free(dptr))
        r = CUDA_SUCCESS; /* a graph allocation: back to the graph pool */
    CUPTI_SITE(CUPTI_DRIVER_TRACE_CBID_cuMemFree_v2, "cuMemFree_v2", &params, CUPTI_API_EXIT, &r);
    return r;
}

CUresult cuMemAllocManaged(CUdeviceptr *dptr, size_t bytesize, unsigned int flags)
{
    (void)flags;
    FAKE_UNSAFE("cuMemAllocManaged");
    void *p = NULL;
    CUresult r = alloc_kind(&p, bytesize, fake_current_device(), FAKE_MANAGED);
    if (r == CUDA_SUCCESS)
        *dptr = (CUdeviceptr)(uintptr_t)p;
    return r;
}

CUresult cuMemAllocHost_v2(void **pp, size_t bytesize)
{
    FAKE_UNSAFE("cuMemAllocHost");
    return alloc_kind(pp, bytesize, -1, FAKE_HOST);
}

CUresult cuMemHostAlloc(void **pp, size_t bytesize, unsigned int flags)
{
    (void)flags;
    FAKE_UNSAFE("cuMemHostAlloc");
    return alloc_kind(pp, bytesize, -1, FAKE_HOST);
}

CUresult cuMemFreeHost(void *p)
{
    FAKE_UNSAFE("cuMemFreeHost");
    return free_kind((uintptr_t)p, FAKE_HOST);
}

CUresult cuMemcpy(CUdeviceptr dst, CUdeviceptr src, size_t n)
{
    memmove((void *)(uintptr_t)dst, (const void *)(uintptr_t)src, n);
    return CUDA_SUCCESS;
}

CUresult cuMemsetD8_v2(CUdeviceptr dst, unsigned char v, size_t n)
{
    memset((void *)(uintptr_t)dst, v, n);
    return CUDA_SUCCESS;
}
