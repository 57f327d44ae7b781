/* recorder.h — the hot path shared by every wrapper: re-entrancy guard,
 * timestamp, thread id, stack capture and the hand-off to the queue.
 *
 * Usage in a wrapper:
 *     if (!gl_enter()) return real(...);          // nested or disabled
 *     r = real(...);
 *     gl_record(&(struct gl_call){...});          // alloc-like: after
 *     gl_leave();
 * Free-like calls claim their slot before the real call (gl_claim /
 * gl_publish) so that a free always precedes, in the queue, any reuse of
 * the same address by another thread. */
#ifndef GL_RECORDER_H
#define GL_RECORDER_H

#include <stdint.h>

#include "gl_event.h"

/* The library is built with hidden visibility; wrappers are exported. */
#define GL_EXPORT __attribute__((visibility("default")))

/* One wrapped call. The operation and memory kind follow from the API
 * (GL_APIS in gl_event.h), unless op / kind say otherwise (a
 * cudaMallocAsync captured into a graph defines a graph allocation). */
struct gl_call {
    int api;
    int result;
    int device;
    uint64_t addr, size, stream, pool, aux;
    int op, kind; /* 0: the API's own */
};

struct gl_claim {
    struct gl_event *ev; /* NULL: nothing claimed (dropped or disabled) */
    uint64_t pos;
};

/* 1 if this is an outermost wrapped call that should be recorded. Always
 * pair with gl_leave (also when it returns 0). */
int gl_enter(void);
void gl_leave(void);

/* Returns the event's time stamp (clock.h's gl_stamp units; 0 if it was
 * not recorded). */
uint64_t gl_record(const struct gl_call *c);
/* An event seen after the fact (a CUPTI activity record): given time in
 * CLOCK_MONOTONIC ns, no stack. Call between gl_enter/gl_leave. */
void gl_record_at(const struct gl_call *c, uint64_t ts_ns);
/* Pool / device state samples at a bounded rate (sampler.c); called
 * inside a wrapped call after it succeeded. now: the call's event
 * stamp (gl_stamp units; 0: read the clock). */
void gl_sample_after(int stream_ordered, int device, uint64_t pool, uint64_t now);
/* At a gpuledger_mark: a sample of the pools of every device a
 * stream-ordered call was made on (the step's pool cache). */
void gl_sample_pools_at_mark(void);

/* The runtime API this thread is inside (0: none), from a CUPTI runtime
 * callback: the next event of the same operation is named after it. */
void gl_set_outer_api(int api);
/* A state snapshot (pool / device sample): no stack, no wait, not an event. */
void gl_record_state(const struct gl_call *c, uint64_t stamp);
/* Nesting depth of wrapped calls on this thread (0: not inside one). */
int gl_wrap_depth(void);
/* This thread's recorder state afresh, at nesting depth `depth` (1: nothing
 * it does is recorded): in a fork child (the only thread there) and on the
 * writer thread. */
void gl_thread_reset(int depth);
void gl_claim(struct gl_claim *cl, const struct gl_call *c);
/* Claim without a stack (an effect of a call whose stack another event
 * carries). */
void gl_claim_nostack(struct gl_claim *cl, const struct gl_call *c);
/* Claim with a stack of `depth` native frames (0: no stack at all), of
 * which at most `native` above the Python frames on a thread running
 * Python (pyframes.h), for callers that decide it themselves
 * (torch_trace.c). */
void gl_claim_with_depth(struct gl_claim *cl, const struct gl_call *c, unsigned depth, unsigned native);
/* Claim for an annotation: the label is carried instead of a stack. */
void gl_claim_label(struct gl_claim *cl, const struct gl_call *c, const char *label);
/* Fill in the result (and anything else known after the call) and publish. */
void gl_publish(struct gl_claim *cl, int result);
/* Publish, but hold: until this thread's next event (or until the writer,
 * having waited a while for it, takes it as it is) the event may still be
 * taken back and amended with gl_take_held. One held event per thread. */
void gl_publish_held(struct gl_claim *cl, int result);
/* This thread's held event, taken back to be amended and then published
 * with gl_publish(cl, ...); NULL if there is none or the writer took it.
 * Either way nothing stays held. */
struct gl_event *gl_take_held(struct gl_claim *cl);

/* torch_trace.c: attach PyTorch's allocator shim if one is registered and
 * not attached yet. Called after a segment allocation, outside wrapped calls
 * (gl_after_segment). */
void gl_torch_poll(void);
static inline void gl_after_segment(int api)
{
    if (api == GL_API_cudaMalloc || api == GL_API_cuMemAlloc_v2 || api == GL_API_cuMemCreate ||
        api == GL_API_cuMemAddressReserve)
        gl_torch_poll();
}

/* Start-up, fork and shutdown (lifecycle.c). */
void gl_init(void);
/* Ask the writer to commit everything queued so far; wait up to timeout_ms.
 * Async-signal-safe. Returns 0 if done in time. */
int gl_flush_sync(unsigned timeout_ms);
/* Stop recording, write the final run row, close the database. */
void gl_shutdown(void);
uint64_t gl_now_ns(void);

#endif
