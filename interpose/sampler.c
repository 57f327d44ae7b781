/* sampler.c — pool and device state at a bounded rate: after a recorded
 * call, at most every 10 ms per device, the reserved and used bytes of the
 * stream-ordered pool the call used (cuMemPoolGetAttribute, ~0.2 µs), and
 * at most every 100 ms the device's free/total memory (cuMemGetInfo,
 * ~5 µs); at a gpuledger_mark, the pools of each device a stream-ordered
 * call was made on (at most every GPULEDGER_MARK_SAMPLE_MS, 10 ms, per
 * device: a driver query per pool per mark would cost marks made faster
 * than that more than the 1 us they may take). Stored in pool_samples /
 * device_samples; they give `holes` the true reservation where address
 * ranges only give a lower bound, and the remainder its pools' share.
 * Driver calls, so that a static runtime gets samples too; none while a
 * stream captures (capture_gate.h). */
#include <stdatomic.h>

#include "capture_gate.h"
#include "clock.h"
#include "cuda_extra.h"
#include "real.h"
#include "recorder.h"
#include "state.h"
#include "usage.h"

#define POOL_PERIOD_NS 10000000ULL
#define DEVICE_PERIOD_NS 100000000ULL

static _Atomic uint64_t next_pool[GL_MAX_DEVICES], next_device[GL_MAX_DEVICES];
/* at marks: a device's pools at most every GPULEDGER_MARK_SAMPLE_MS (a mark
 * sooner after the last one sampled takes none) */
static _Atomic uint64_t next_mark_pool[GL_MAX_DEVICES];
/* per device: a stream-ordered call was seen; the last explicit pool used */
static _Atomic unsigned char pool_seen[GL_MAX_DEVICES];
static _Atomic int any_pool_seen; /* some pool_seen[] is set: a mark has pools to sample */
static _Atomic uint64_t last_pool[GL_MAX_DEVICES];

typedef CUresult (*get_pool_fn)(CUmemoryPool *, CUdevice);
typedef CUresult (*pool_attr_fn)(CUmemoryPool, CUmemPool_attribute, void *);
typedef CUresult (*mem_info_fn)(size_t *, size_t *);

enum { FN_GET_POOL, FN_POOL_ATTR, FN_MEM_INFO, NFN };
static const char *const fn_names[NFN] = {"cuDeviceGetMemPool", "cuMemPoolGetAttribute", "cuMemGetInfo_v2"};
static void *_Atomic fns[NFN];

static void *fn(int i)
{
    void *p = atomic_load_explicit(&fns[i], memory_order_relaxed);
    if (!p) {
        p = gl_driver_sym(fn_names[i]); /* NULL until the driver is loaded: asked again */
        if (p)
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

/* One pool's reserved and used bytes (pool 0: the device's current pool). */
static void pool_sample(int device, uint64_t pool, uint64_t now)
{
    get_pool_fn get = (get_pool_fn)fn(FN_GET_POOL);
    pool_attr_fn attr = (pool_attr_fn)fn(FN_POOL_ATTR);
    CUmemoryPool p = (CUmemoryPool)(uintptr_t)pool;
    if (!attr || (!p && (!get || get(&p, device) != CUDA_SUCCESS || !p)))
        return;
    cuuint64_t reserved = 0, used = 0;
    if (attr(p, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT, &reserved) == CUDA_SUCCESS &&
        attr(p, CU_MEMPOOL_ATTR_USED_MEM_CURRENT, &used) == CUDA_SUCCESS) {
        struct gl_call c = {.api = GL_API_pool_sample, .device = device, .pool = (uint64_t)(uintptr_t)p,
                            .size = reserved, .aux = used};
        gl_record_state(&c, now);
    }
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
    if (stream_ordered) {
        if (!atomic_load_explicit(&pool_seen[device], memory_order_relaxed)) {
            atomic_store(&pool_seen[device], 1);
            atomic_store(&any_pool_seen, 1);
        }
        if (pool && atomic_load_explicit(&last_pool[device], memory_order_relaxed) != pool)
            atomic_store(&last_pool[device], pool);
    }
    int pool_due = stream_ordered && due(&next_pool[device], now, pool_period);
    int device_due = due(&next_device[device], now, device_period);
    if ((!pool_due && !device_due) || !gl_own_call_begin())
        return; /* a stream captures: the next call after it samples */
    if (pool_due)
        pool_sample(device, pool, now);
    mem_info_fn info = device_due ? (mem_info_fn)fn(FN_MEM_INFO) : NULL;
    size_t free_b = 0, total = 0;
    if (info && info(&free_b, &total) == CUDA_SUCCESS) {
        struct gl_call c = {.api = GL_API_device_sample, .device = device, .size = free_b, .aux = total};
        gl_record_state(&c, now);
    }
    gl_own_call_end();
}

void gl_sample_pools_at_mark(void)
{
    if (!atomic_load_explicit(&any_pool_seen, memory_order_relaxed) ||
        atomic_load(&gl_st.phase) != GL_PHASE_RECORDING || atomic_load(&gl_st.paused) || !gl_own_call_begin())
        return;
    uint64_t now = gl_stamp(), period = gl_mark_sample_span();
    for (int d = 0; d < GL_MAX_DEVICES; d++) {
        if (!atomic_load_explicit(&pool_seen[d], memory_order_relaxed) || !due(&next_mark_pool[d], now, period))
            continue;
        pool_sample(d, 0, now);
        uint64_t p = atomic_load_explicit(&last_pool[d], memory_order_relaxed);
        if (p)
            pool_sample(d, p, now);
    }
    gl_own_call_end();
}
