/* usage.c — see usage.h. NVML is loaded with dlopen (never linked: a
 * machine without it, or a container without its pids, falls back to the
 * next source). Its functions are called from application threads only at
 * start-up, when the writer asks (a new high-water mark) and at exit; they
 * need no CUDA context, and make no CUDA call: they are asked while a
 * stream captures too, the driver queries are not (capture_gate.h). */
#include "usage.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "capture_gate.h"
#include "clock.h"
#include "cuda_extra.h"
#include "gl_event.h"
#include "real.h"
#include "recorder.h"
#include "state.h"

/* The few NVML declarations used (nvml.h is not part of the toolkit). */
typedef int nvmlReturn_t;
typedef struct nvmlDevice_st *nvmlDevice_t;
typedef struct {
    unsigned long long total, free, used;
} nvmlMemory_t;
typedef struct {
    unsigned int pid;
    unsigned long long usedGpuMemory;
    unsigned int gpuInstanceId, computeInstanceId;
} nvmlProcessInfo_t;
#define NVML_VALUE_NOT_AVAILABLE (~0ULL)

static struct {
    nvmlReturn_t (*init)(void);
    nvmlReturn_t (*count)(unsigned int *);
    nvmlReturn_t (*by_index)(unsigned int, nvmlDevice_t *);
    nvmlReturn_t (*by_bus)(const char *, nvmlDevice_t *);
    nvmlReturn_t (*memory)(nvmlDevice_t, nvmlMemory_t *);
    nvmlReturn_t (*processes)(nvmlDevice_t, unsigned int *, nvmlProcessInfo_t *);
} nv;

enum { NV_UNTRIED, NV_STARTING, NV_READY, NV_NONE };
static _Atomic int nv_state;

#define SAMPLE_PERIOD_NS 10000000ULL

/* NVML devices and their used bytes before the first CUDA call. */
static nvmlDevice_t base_dev[GL_MAX_DEVICES];
static uint64_t base_used[GL_MAX_DEVICES];
static unsigned nbase;

/* CUDA device -> NVML device (by PCI bus id), found at its first sample. */
static nvmlDevice_t handle_of[GL_MAX_DEVICES];
static _Atomic int handle_state[GL_MAX_DEVICES]; /* 0 not looked up, 1 found, 2 none */

_Atomic unsigned char gl_usage_state[GL_MAX_DEVICES]; /* GL_USAGE_SEEN | GL_USAGE_WANTED */
static _Atomic uint64_t next_allowed[GL_MAX_DEVICES];
static _Atomic uint64_t next_at_mark[GL_MAX_DEVICES]; /* a mark's next sample, at the earliest */

static void *nvml_sym(void *h, const char *name)
{
    return gl_real_dlsym ? gl_real_dlsym(h, name) : NULL;
}

void gl_usage_start(void)
{
    int expect = NV_UNTRIED;
    if (atomic_load_explicit(&nv_state, memory_order_acquire) != NV_UNTRIED ||
        atomic_load(&gl_st.phase) != GL_PHASE_RECORDING ||
        !atomic_compare_exchange_strong(&nv_state, &expect, NV_STARTING))
        return;
    int saved = errno;
    int state = NV_NONE;
    void *h = gl_st.cfg.nvml ? dlopen(gl_st.cfg.nvml_lib ? gl_st.cfg.nvml_lib : "libnvidia-ml.so.1",
                                      RTLD_NOW | RTLD_LOCAL)
                             : NULL;
    if (h) {
        *(void **)&nv.init = nvml_sym(h, "nvmlInit_v2");
        *(void **)&nv.count = nvml_sym(h, "nvmlDeviceGetCount_v2");
        *(void **)&nv.by_index = nvml_sym(h, "nvmlDeviceGetHandleByIndex_v2");
        *(void **)&nv.by_bus = nvml_sym(h, "nvmlDeviceGetHandleByPciBusId_v2");
        *(void **)&nv.memory = nvml_sym(h, "nvmlDeviceGetMemoryInfo");
        *(void **)&nv.processes = nvml_sym(h, "nvmlDeviceGetComputeRunningProcesses_v3");
        unsigned n = 0;
        if (nv.init && nv.count && nv.by_index && nv.by_bus && nv.memory && nv.init() == 0 && nv.count(&n) == 0) {
            for (unsigned i = 0; i < n && nbase < GL_MAX_DEVICES; i++) {
                nvmlMemory_t m;
                if (nv.by_index(i, &base_dev[nbase]) == 0 && nv.memory(base_dev[nbase], &m) == 0)
                    base_used[nbase++] = m.used;
            }
            state = NV_READY;
        }
        /* the library stays loaded either way: a second dlopen/dlclose at
         * every start is not worth the bytes */
    }
    atomic_store_explicit(&nv_state, state, memory_order_release);
    errno = saved;
}

void gl_usage_request(int device)
{
    if (device < 0 || device >= GL_MAX_DEVICES)
        return;
    atomic_fetch_or_explicit(&gl_usage_state[device], GL_USAGE_SEEN | GL_USAGE_WANTED, memory_order_release);
}

typedef CUresult (*bus_id_fn)(char *, int, CUdevice);
typedef CUresult (*ctx_device_fn)(CUdevice *);

/* The device of the context current on this thread (-1: none). While the
 * driver is not loaded, it is looked for again at most every 10 ms: the
 * look-up searches the library path (~10 us), and a program that marks its
 * steps before it uses CUDA, or never does, must not pay that at each mark. */
static int current_device(void)
{
    static void *fn;
    static _Atomic uint64_t retry_at;
    ctx_device_fn f = (ctx_device_fn)__atomic_load_n(&fn, __ATOMIC_ACQUIRE);
    if (!f) {
        uint64_t now = gl_stamp();
        if (now < atomic_load_explicit(&retry_at, memory_order_relaxed))
            return -1;
        f = (ctx_device_fn)gl_driver_sym("cuCtxGetDevice");
        if (!f) {
            atomic_store_explicit(&retry_at, now + gl_stamp_span(SAMPLE_PERIOD_NS), memory_order_relaxed);
            return -1;
        }
        __atomic_store_n(&fn, (void *)f, __ATOMIC_RELEASE);
    }
    CUdevice d = -1;
    return f(&d) == CUDA_SUCCESS ? (int)d : -1;
}
typedef CUresult (*mem_info_fn)(size_t *, size_t *);

/* NVML's handle of a CUDA device; *deferred: it must be looked up (a
 * driver query) while a stream captures, which waits for the next sample. */
static nvmlDevice_t nvml_device(int device, int *deferred)
{
    int st = atomic_load_explicit(&handle_state[device], memory_order_acquire);
    if (st)
        return st == 1 ? handle_of[device] : NULL;
    if (!gl_own_call_begin()) {
        *deferred = 1;
        return NULL;
    }
    bus_id_fn bus_id = (bus_id_fn)gl_driver_sym("cuDeviceGetPCIBusId");
    char bus[64];
    nvmlDevice_t h = NULL;
    if (bus_id && bus_id(bus, (int)sizeof bus, device) == CUDA_SUCCESS && nv.by_bus(bus, &h) != 0)
        h = NULL;
    gl_own_call_end();
    handle_of[device] = h;
    atomic_store_explicit(&handle_state[device], h ? 1 : 2, memory_order_release);
    return h;
}

#define DEFERRED (-1)

/* The process's figure on `device` and where it comes from (0: none;
 * DEFERRED: only a driver query could tell, and a stream captures). NVML
 * is no CUDA call: it is asked during captures too. */
static int figure(int device, uint64_t *bytes)
{
    int deferred = 0;
    nvmlDevice_t h = atomic_load_explicit(&nv_state, memory_order_acquire) == NV_READY
                         ? nvml_device(device, &deferred)
                         : NULL;
    if (deferred)
        return DEFERRED;
    if (h && nv.processes) {
        nvmlProcessInfo_t infos[64];
        unsigned n = 64;
        unsigned pid = (unsigned)getpid();
        if (nv.processes(h, &n, infos) == 0)
            for (unsigned i = 0; i < n && i < 64; i++)
                if (infos[i].pid == pid && infos[i].usedGpuMemory != NVML_VALUE_NOT_AVAILABLE) {
                    *bytes = infos[i].usedGpuMemory;
                    return GL_USAGE_NVML_PROCESS;
                }
    }
    nvmlMemory_t m;
    if (h && nv.memory(h, &m) == 0)
        for (unsigned i = 0; i < nbase; i++)
            if (base_dev[i] == h) {
                *bytes = m.used > base_used[i] ? m.used - base_used[i] : 0;
                return GL_USAGE_NVML_DEVICE;
            }
    /* the device of the context current here, if it is this one */
    if (current_device() != device)
        return 0;
    if (!gl_own_call_begin())
        return DEFERRED;
    mem_info_fn info = (mem_info_fn)gl_driver_mem_info();
    size_t free_b = 0, total = 0;
    int source = 0;
    if (info && info(&free_b, &total) == CUDA_SUCCESS && total >= free_b) {
        *bytes = total - free_b;
        source = GL_USAGE_MEMINFO;
    }
    gl_own_call_end();
    return source;
}

/* Returns 0, or DEFERRED. */
static int sample(int device, uint64_t stamp)
{
    uint64_t bytes = 0;
    int source = figure(device, &bytes);
    if (source <= 0)
        return source;
    struct gl_call c = {.api = GL_API_usage_sample, .device = device, .size = bytes, .aux = (uint64_t)source};
    gl_record_state(&c, stamp);
    return 0;
}

void gl_usage_after_call_slow(int device, uint64_t stamp)
{
    unsigned char st = atomic_fetch_or_explicit(&gl_usage_state[device], GL_USAGE_SEEN, memory_order_relaxed);
    if (!(st & GL_USAGE_WANTED))
        return; /* the first call on the device: now seen (sampled at marks and exit) */
    static _Atomic uint64_t span;
    uint64_t period = atomic_load_explicit(&span, memory_order_relaxed);
    if (!period) {
        period = gl_stamp_span(SAMPLE_PERIOD_NS);
        atomic_store_explicit(&span, period, memory_order_relaxed);
    }
    if (stamp < atomic_load_explicit(&next_allowed[device], memory_order_relaxed) ||
        !(atomic_fetch_and(&gl_usage_state[device], (unsigned char)~GL_USAGE_WANTED) & GL_USAGE_WANTED))
        return;
    atomic_store_explicit(&next_allowed[device], stamp + period, memory_order_relaxed);
    int saved = errno;
    if (sample(device, stamp) == DEFERRED) /* still wanted: after the capture */
        atomic_fetch_or_explicit(&gl_usage_state[device], GL_USAGE_WANTED, memory_order_relaxed);
    errno = saved;
}

/* A sample of every device a recorded call was made on. */
static void sample_all(void)
{
    int saved = errno;
    for (int d = 0; d < GL_MAX_DEVICES; d++)
        if (atomic_load_explicit(&gl_usage_state[d], memory_order_relaxed) & GL_USAGE_SEEN)
            sample(d, gl_stamp());
    errno = saved;
}

uint64_t gl_mark_sample_span(void)
{
    static _Atomic uint64_t span;
    static _Atomic int known;
    if (atomic_load_explicit(&known, memory_order_acquire))
        return atomic_load_explicit(&span, memory_order_relaxed);
    uint64_t s = gl_stamp_span((uint64_t)gl_st.cfg.mark_sample_ms * 1000000ULL);
    atomic_store_explicit(&span, s, memory_order_relaxed);
    atomic_store_explicit(&known, 1, memory_order_release);
    return s;
}

void gl_usage_at_mark(void)
{
    if (atomic_load(&gl_st.phase) != GL_PHASE_RECORDING || atomic_load(&gl_st.paused))
        return;
    /* no recorded call yet: the device this thread works on */
    int any = 0;
    for (int d = 0; d < GL_MAX_DEVICES && !any; d++)
        any = atomic_load_explicit(&gl_usage_state[d], memory_order_relaxed) & GL_USAGE_SEEN;
    if (!any) {
        int dev = current_device();
        if (dev < 0 || dev >= GL_MAX_DEVICES)
            return; /* no device: nothing to sample */
        atomic_fetch_or_explicit(&gl_usage_state[dev], GL_USAGE_SEEN, memory_order_relaxed);
    }
    /* at most every GPULEDGER_MARK_SAMPLE_MS per device: the figure is a
     * driver or NVML query of microseconds (cuMemGetInfo ~5 us), a mark may
     * take 1 us */
    uint64_t period = gl_mark_sample_span();
    int saved = errno;
    uint64_t now = gl_stamp();
    for (int d = 0; d < GL_MAX_DEVICES; d++) {
        if (!(atomic_load_explicit(&gl_usage_state[d], memory_order_relaxed) & GL_USAGE_SEEN))
            continue;
        uint64_t next = atomic_load_explicit(&next_at_mark[d], memory_order_relaxed);
        if (now < next || !atomic_compare_exchange_strong(&next_at_mark[d], &next, now + period))
            continue;
        if (sample(d, now) == DEFERRED) /* a stream captures: the next mark samples */
            atomic_store_explicit(&next_at_mark[d], 0, memory_order_relaxed);
    }
    errno = saved;
}

void gl_usage_at_exit(void)
{
    static _Atomic int done;
    if (atomic_load(&gl_st.phase) != GL_PHASE_RECORDING || atomic_exchange(&done, 1))
        return;
    sample_all();
}
