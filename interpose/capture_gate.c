/* capture_gate.c — see capture_gate.h. Two counters: captures in progress
 * and own queries under way. Each side raises its own counter, then reads
 * the other's (sequentially consistent), so a query and a capture never
 * both proceed. */
#include "capture_gate.h"

#include <errno.h>
#include <sched.h>
#include <time.h>

#include "state.h"

_Atomic int gl_captures;
static _Atomic int own_calls; /* own queries past the gate, not finished */

/* An own query takes microseconds; one that has not finished after this
 * long is stuck somewhere gpuledger cannot help, and the capture goes on
 * (said once). */
#define WAIT_NS 1000000000LL

void gl_capture_opening(void)
{
    atomic_fetch_add(&gl_captures, 1);
    if (!atomic_load(&own_calls))
        return;
    int saved = errno;
    struct timespec t0, now;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    while (atomic_load(&own_calls)) {
        sched_yield();
        clock_gettime(CLOCK_MONOTONIC, &now);
        if ((now.tv_sec - t0.tv_sec) * 1000000000LL + (now.tv_nsec - t0.tv_nsec) > WAIT_NS) {
            static _Atomic int warned;
            if (!atomic_exchange(&warned, 1))
                gl_warn("a sample of gpuledger's own did not finish within 1 s of a stream capture's start; "
                        "the capture begins anyway");
            break;
        }
    }
    errno = saved;
}

void gl_capture_closed(void)
{
    int n = atomic_load(&gl_captures);
    while (n > 0 && !atomic_compare_exchange_weak(&gl_captures, &n, n - 1))
        ;
}

int gl_own_call_begin(void)
{
    if (atomic_load_explicit(&gl_captures, memory_order_relaxed))
        return 0;
    atomic_fetch_add(&own_calls, 1);
    if (atomic_load(&gl_captures)) {
        atomic_fetch_sub(&own_calls, 1);
        return 0;
    }
    return 1;
}

void gl_own_call_end(void)
{
    atomic_fetch_sub(&own_calls, 1);
}

void gl_capture_gate_after_fork(void)
{
    /* the child has only the forking thread, and CUDA's state is not
     * usable there: no capture goes on in it */
    atomic_store(&own_calls, 0);
    atomic_store(&gl_captures, 0);
}
