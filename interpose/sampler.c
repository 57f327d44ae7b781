/* sampler.c — pool and device state at a bounded rate: after a recorded
 * call, at most every 10 ms per device, the reserved and used bytes of the
 * stream-ordered pool the call used (cudaMemPoolGetAttribute, ~0.2 µs), and
 * at most every 100 ms the device's free/total memory (cudaMemGetInfo,
 * ~5 µs). Stored in pool_samples / device_samples; they give `holes` the
 * true reservation where address ranges only give a lower bound. */
#include <cuda_runtime_api.h>
#include <stdatomic.h>

#include "clock.h"
#include "real.h"
#include "recorder.h"
#include "state.h"
#include "usage.h"

#define POOL_PERIOD_NS 10000000ULL
#define DEVICE_PERIOD_NS 100000000ULL

static _Atomic uint64_t next_pool[GL_MAX_DEVICES], next_device[GL_MAX_DEVICES];

typedef cudaError_t (*get_pool_fn)(cudaMemPool_t *, int);
typedef cudaError_t (*pool_attr_fn)(cudaMemPool_t, enum cudaMemPoolAttr, void *);
typedef cudaError_t (*mem_info_fn)(size_t *, size_t *);

static void *_Atomic fns[3];

static void *fn(int i, const char *name)
{
    void *p = atomic_load_explicit(&fns[i], memory_order_relaxed);
    if (!p) {
        p = gl_real_next(name);
        atomic_store(&fns[i], p);
    }
    return p;
}

/* Is it this caller's turn (claims the slot for the next period)? */
static int due(_Atomic uint64_t *slot, uint64_t now, uint64_t period)
{
    uint64_t next = atomic_load_explicit(slot, memory_order_relaxed);
    return now >= next && atomic_compare_exchange_strong(slot, &next, now + period);
}

void gl_sample_after(int stream_ordered, int device, uint64_t pool, uint64_t now)
{
    if (device < 0 || device >= GL_MAX_DEVICES)
        return;
    if (!now)
        now = gl_stamp();
    gl_usage_after_call(device, now);
    /* now is a clock.c stamp: the periods in the same unit */
    static _Atomic uint64_t pool_span, device_span;
    uint64_t pool_period = atomic_load_explicit(&pool_span, memory_order_relaxed);
    uint64_t device_period = atomic_load_explicit(&device_span, memory_order_relaxed);
    if (!pool_period || !device_period) {
        pool_period = gl_stamp_span(POOL_PERIOD_NS);
        device_period = gl_stamp_span(DEVICE_PERIOD_NS);
        atomic_store_explicit(&pool_span, pool_period, memory_order_relaxed);
        atomic_store_explicit(&device_span, device_period, memory_order_relaxed);
    }
    if (stream_ordered && due(&next_pool[device], now, pool_period)) {
        get_pool_fn get = (get_pool_fn)fn(0, "cudaDeviceGetMemPool");
        pool_attr_fn attr = (pool_attr_fn)fn(1, "cudaMemPoolGetAttribute");
        cudaMemPool_t p = (cudaMemPool_t)(uintptr_t)pool;
        if (!p && get && get(&p, device) != cudaSuccess)
            p = NULL;
        unsigned long long reserved = 0, used = 0;
        if (p && attr && attr(p, cudaMemPoolAttrReservedMemCurrent, &reserved) == cudaSuccess &&
            attr(p, cudaMemPoolAttrUsedMemCurrent, &used) == cudaSuccess) {
            struct gl_call c = {.api = GL_API_pool_sample, .device = device, .pool = (uint64_t)(uintptr_t)p,
                                .size = reserved, .aux = used};
            gl_record_state(&c, now);
        }
    }
    if (due(&next_device[device], now, device_period)) {
        mem_info_fn info = (mem_info_fn)fn(2, "cudaMemGetInfo");
        size_t free_b = 0, total = 0;
        if (info && info(&free_b, &total) == cudaSuccess) {
            struct gl_call c = {.api = GL_API_device_sample, .device = device, .size = free_b, .aux = total};
            gl_record_state(&c, now);
        }
    }
}
