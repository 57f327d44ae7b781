/* recorder.c — the hot path (see recorder.h). No malloc, no locks: a
 * thread-local guard, a time stamp (clock.c), the stack into the claimed
 * queue slot, one atomic publish. */
#include "recorder.h"

#include <errno.h>
#include <sched.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "pyframes.h"
#include "relay.h"
#include "stack.h"
#include "state.h"

#define GL_TLS __attribute__((tls_model("initial-exec")))

static __thread int tls_depth GL_TLS;
static __thread int tls_tid GL_TLS;
static __thread int tls_outer_api GL_TLS; /* set by a CUPTI runtime callback */

void gl_set_outer_api(int api)
{
    tls_outer_api = api;
}

/* The event this thread published held (gl_publish_held), if any: its
 * slot, the event, and the queue generation it belongs to (a fork child's
 * reset queue has none of its parent's). */
static __thread int tls_held GL_TLS;
static __thread uint64_t tls_held_pos GL_TLS;
static __thread uint32_t tls_held_gen GL_TLS;
static __thread struct gl_event *tls_held_ev GL_TLS;

/* Called in a fork child (the only thread there) and by the writer. */
void gl_thread_reset(int depth)
{
    tls_tid = 0;
    tls_depth = depth;
    tls_held = 0;
}

/* Forget this thread's held event; 1 if it is still in this queue
 * generation (then its slot is settled by the caller). A signal handler's
 * event in between may settle it first: the slot's own compare-and-swap
 * decides, so either order is safe. */
static inline int drop_held(uint64_t *pos)
{
    if (!tls_held)
        return 0;
    *pos = tls_held_pos;
    atomic_signal_fence(memory_order_seq_cst);
    tls_held = 0;
    return tls_held_gen == atomic_load_explicit(&gl_st.queue.gen, memory_order_relaxed);
}

static inline void release_held(void)
{
    uint64_t pos;
    if (drop_held(&pos))
        gl_queue_publish_held(&gl_st.queue, pos);
}

int gl_enter(void)
{
    if (tls_depth++ > 0)
        return 0;
    int ph = atomic_load_explicit(&gl_st.phase, memory_order_acquire);
    if (ph == GL_PHASE_RECORDING)
        return !atomic_load_explicit(&gl_st.paused, memory_order_relaxed);
    if (ph == GL_PHASE_OFF) {
        int saved = errno;
        gl_init();
        errno = saved;
        return atomic_load_explicit(&gl_st.phase, memory_order_acquire) == GL_PHASE_RECORDING;
    }
    if (ph == GL_PHASE_STOPPED)
        atomic_fetch_add_explicit(&gl_st.late, 1, memory_order_relaxed);
    if (gl_relay_pending()) /* e.g. why the writer stopped */
        gl_relay_flush();
    return 0;
}

void gl_leave(void)
{
    tls_depth--;
}

static struct gl_event *claim_slot(uint64_t *pos)
{
    struct gl_queue *q = &gl_st.queue;
    struct gl_event *ev = gl_queue_try_claim(q, pos);
    if (ev) {
        if (atomic_load_explicit(&gl_st.congested, memory_order_relaxed))
            atomic_store_explicit(&gl_st.congested, 0, memory_order_relaxed);
        /* the ring is three quarters full: the writer is falling behind,
         * most likely for want of CPU. Let it run before this thread makes
         * more (a full ring would stop this thread anyway). */
        if (gl_queue_crowded(q, *pos))
            sched_yield();
        return ev;
    }
    /* Full. Wait (bounded) for the writer, unless it was found stuck at
     * this very point (no slot consumed since a wait timed out) or is gone;
     * then give up and count the event as dropped. The bound is on the
     * writer's progress, not on this thread's luck: while slots are being
     * consumed the wait goes on, however many threads take them first (4
     * spinning threads on 2 cores timed out one unlucky waiter, and every
     * full claim after it then dropped at once: a million drops). */
    uint64_t stuck_at = atomic_load_explicit(&gl_st.congested, memory_order_relaxed);
    if ((!stuck_at || stuck_at != gl_queue_consumed(q) + 1) &&
        atomic_load_explicit(&gl_st.writer_state, memory_order_acquire) == GL_WRITER_RUNNING) {
        const uint64_t wait_ns = (uint64_t)gl_st.cfg.full_wait_ms * 1000000ULL;
        uint64_t consumed = gl_queue_consumed(q), deadline = gl_now_ns() + wait_ns;
        /* back off from 20 us to 1 ms: many waiting threads must not take
         * the CPU the writer needs to make room */
        struct timespec nap = {0, 20000};
        for (;;) {
            uint64_t now = gl_now_ns();
            uint64_t c = gl_queue_consumed(q);
            if (c != consumed) { /* the writer moves: wait on */
                consumed = c;
                deadline = now + wait_ns;
            }
            if (now >= deadline)
                break;
            nanosleep(&nap, NULL);
            ev = gl_queue_try_claim(q, pos);
            if (ev)
                return ev;
            if (nap.tv_nsec < 1000000)
                nap.tv_nsec *= 2;
        }
        atomic_store_explicit(&gl_st.congested, consumed + 1, memory_order_relaxed);
    }
    atomic_fetch_add_explicit(&q->dropped, 1, memory_order_relaxed);
    return NULL;
}

/* Inlined into gl_claim and gl_record: each frame of ours is one more for
 * every stack walk to step through. */
static inline __attribute__((always_inline)) void gl_claim_depth(struct gl_claim *cl, const struct gl_call *c,
                                                                 unsigned depth, unsigned native)
{
    cl->ev = NULL;
    if (tls_held) /* this thread's next event: what it held goes as it is */
        release_held();
    int saved = errno;
    if (atomic_load_explicit(&gl_st.writer_state, memory_order_acquire) == GL_WRITER_NONE && gl_writer_start() != 0) {
        errno = saved;
        return;
    }
    struct gl_event *ev = claim_slot(&cl->pos);
    if (!ev) {
        errno = saved;
        return;
    }
    if (!tls_tid)
        tls_tid = (int)syscall(SYS_gettid);
    ev->stamp = gl_stamp(); /* the writer makes it ts_ns */
    ev->addr = c->addr;
    ev->size = c->size;
    ev->stream = c->stream;
    ev->pool = c->pool;
    ev->aux = c->aux;
    ev->tid = tls_tid;
    ev->device = c->device;
    ev->result = c->result;
    int api = c->api;
    if (tls_outer_api && gl_api_op(tls_outer_api) == gl_api_op(api)) {
        api = tls_outer_api; /* a static cudart call, seen by CUPTI: name it as called */
        tls_outer_api = 0;
    }
    ev->api = (uint16_t)api;
    ev->op = (uint8_t)(c->op ? c->op : gl_api_op(api));
    ev->kind = (uint8_t)(c->kind ? c->kind : gl_api_kind(api));
    ev->flags = 0;
    ev->reserved = 0;
    int truncated;
    unsigned n = depth && gl_st.cfg.python
                     ? gl_py_stack(ev->ips, depth, native, gl_st.queue.slot_words, gl_st.cfg.python, &truncated)
                     : gl_stack_capture(ev->ips, depth, &truncated);
    ev->depth = (uint16_t)n;
    if (truncated) {
        ev->flags |= GL_EVF_TRUNCATED;
        atomic_fetch_add_explicit(&gl_st.truncated, 1, memory_order_relaxed);
    }
    cl->ev = ev;
    errno = saved;
}

static inline __attribute__((always_inline)) void claim_inline(struct gl_claim *cl, const struct gl_call *c)
{
    /* GPULEDGER_FREE_STACKS=0: frees and unmaps carry no stack (half the
     * unwinding in an alloc/free loop; the allocation's stack remains) */
    int release = gl_op_is_free(gl_api_op(c->api));
    unsigned depth = release && !gl_st.cfg.free_stacks ? 0 : gl_st.cfg.stack_depth;
    gl_claim_depth(cl, c, depth, depth);
}

void gl_claim(struct gl_claim *cl, const struct gl_call *c)
{
    claim_inline(cl, c);
}

void gl_claim_nostack(struct gl_claim *cl, const struct gl_call *c)
{
    gl_claim_depth(cl, c, 0, 0);
}

void gl_claim_with_depth(struct gl_claim *cl, const struct gl_call *c, unsigned depth, unsigned native)
{
    gl_claim_depth(cl, c, depth, native);
}

void gl_claim_label(struct gl_claim *cl, const struct gl_call *c, const char *label)
{
    gl_claim_depth(cl, c, 0, 0);
    if (!cl->ev)
        return;
    /* the label travels where the stack would: slot_words words */
    size_t cap = (size_t)gl_st.queue.slot_words * sizeof(uintptr_t);
    size_t n = strnlen(label, cap ? cap - 1 : 0);
    memcpy(cl->ev->ips, label, n);
    ((char *)cl->ev->ips)[n] = 0;
    cl->ev->depth = 0;
    cl->ev->flags |= GL_EVF_LABEL;
    cl->ev->aux = n;
}

static inline void set_result(struct gl_event *ev, int result)
{
    ev->result = result;
    if (result != 0 && gl_op_is_alloc(ev->op))
        ev->op = result == 2 /* cudaErrorMemoryAllocation == CUDA_ERROR_OUT_OF_MEMORY */ ? GL_OP_OOM
                                                                                        : GL_OP_ERROR;
}

void gl_publish(struct gl_claim *cl, int result)
{
    struct gl_event *ev = cl->ev;
    if (!ev)
        return;
    set_result(ev, result);
    gl_queue_publish(&gl_st.queue, cl->pos);
    gl_queue_prefetch(&gl_st.queue, cl->pos + 1);
    cl->ev = NULL;
}

void gl_publish_held(struct gl_claim *cl, int result)
{
    struct gl_event *ev = cl->ev;
    if (!ev)
        return;
    set_result(ev, result);
    tls_held_pos = cl->pos;
    tls_held_ev = ev;
    tls_held_gen = atomic_load_explicit(&gl_st.queue.gen, memory_order_relaxed);
    gl_queue_hold(&gl_st.queue, cl->pos);
    atomic_signal_fence(memory_order_seq_cst);
    tls_held = 1;
    gl_queue_prefetch(&gl_st.queue, cl->pos + 1);
    cl->ev = NULL;
}

struct gl_event *gl_take_held(struct gl_claim *cl)
{
    cl->ev = NULL;
    struct gl_event *ev = tls_held_ev;
    if (!drop_held(&cl->pos) || !gl_queue_reclaim(&gl_st.queue, cl->pos))
        return NULL;
    cl->ev = ev;
    return ev;
}

int gl_wrap_depth(void)
{
    return tls_depth;
}

void gl_record_at(const struct gl_call *c, uint64_t ts_ns)
{
    struct gl_claim cl;
    gl_claim_depth(&cl, c, 0, 0);
    if (cl.ev) {
        cl.ev->ts_ns = ts_ns;
        cl.ev->flags |= GL_EVF_TS_NS;
    }
    gl_publish(&cl, c->result);
}

void gl_record_state(const struct gl_call *c, uint64_t stamp)
{
    /* A periodic snapshot, not an operation: never waits for room, and a
     * snapshot skipped on a full ring is not counted as a dropped event
     * (the next one supersedes it). */
    uint64_t pos;
    if (atomic_load_explicit(&gl_st.writer_state, memory_order_acquire) != GL_WRITER_RUNNING)
        return;
    struct gl_event *ev = gl_queue_try_claim(&gl_st.queue, &pos);
    if (!ev)
        return;
    if (!tls_tid)
        tls_tid = (int)syscall(SYS_gettid);
    memset(ev, 0, sizeof *ev);
    ev->stamp = stamp;
    ev->tid = tls_tid;
    ev->device = c->device;
    ev->api = (uint16_t)c->api;
    ev->op = (uint8_t)gl_api_op(c->api);
    ev->kind = (uint8_t)gl_api_kind(c->api);
    ev->addr = c->addr;
    ev->size = c->size;
    ev->pool = c->pool;
    ev->aux = c->aux;
    gl_queue_publish(&gl_st.queue, pos);
}

uint64_t gl_record(const struct gl_call *c)
{
    struct gl_claim cl;
    claim_inline(&cl, c);
    uint64_t ts = cl.ev ? cl.ev->stamp : 0;
    gl_publish(&cl, c->result);
    return ts;
}
