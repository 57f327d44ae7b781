/* wrap.h — the shape every wrapper shares, as macros, so that each wrapper
 * is a few lines that say what it records. errno is preserved around
 * everything gpuledger does; the real call's result and errno reach the
 * caller untouched. */
#ifndef GL_WRAP_H
#define GL_WRAP_H

#include <errno.h>
#include <stdint.h>

#include "hooks.h"
#include "recorder.h"

/* `real`: the real function of hook `sym`, typed like our wrapper. */
#define GL_REAL(sym) __typeof__(&sym) real = (__typeof__(&sym))gl_hook_real(GL_HOOK_##sym)

/* Record after the real call (allocation-like). CALL is the real call
 * expression; FILL sets fields of `c` (a struct gl_call) from its results. */
#define GL_AFTER(sym, rtype, failval, device_expr, CALL, FILL)                                     \
    GL_REAL(sym);                                                                                  \
    if (!real)                                                                                     \
        return failval;                                                                            \
    rtype r;                                                                                       \
    if (gl_enter()) {                                                                              \
        r = CALL;                                                                                  \
        int saved_errno_ = errno;                                                                  \
        struct gl_call c = {.api = GL_API_##sym, .result = (int)r};                                \
        c.device = (device_expr);                                                                  \
        FILL;                                                                                      \
        uint64_t ts_ = gl_record(&c);                                                              \
        if (r == 0)                                                                                \
            gl_sample_after(gl_api_is_stream_ordered(GL_API_##sym) || c.pool != 0, c.device, c.pool,   \
                            ts_);                                                                  \
        errno = saved_errno_;                                                                      \
    } else {                                                                                       \
        r = CALL;                                                                                  \
    }                                                                                              \
    gl_leave();                                                                                    \
    gl_after_segment(GL_API_##sym);                                                                \
    return r

/* Claim before the real call (free-like), publish after. WHEN is a
 * condition for recording at all (e.g. the pointer is not NULL). */
#define GL_AROUND(sym, rtype, failval, device_expr, WHEN, CALL, FILL)                              \
    GL_AROUND_FAILDEV(sym, rtype, failval, device_expr, -1, WHEN, CALL, FILL)

/* The same; when the call fails, the event takes the device fail_device
 * gives (>= 0): a free that failed frees nothing, so the writer cannot
 * take its device from the allocation it would have ended. Evaluated only
 * on failure. */
#define GL_AROUND_FAILDEV(sym, rtype, failval, device_expr, fail_device, WHEN, CALL, FILL)        \
    GL_REAL(sym);                                                                                  \
    if (!real)                                                                                     \
        return failval;                                                                            \
    rtype r;                                                                                       \
    if (gl_enter() && (WHEN)) {                                                                    \
        int saved_errno_ = errno;                                                                  \
        struct gl_call c = {.api = GL_API_##sym};                                                  \
        c.device = (device_expr);                                                                  \
        FILL;                                                                                      \
        struct gl_claim cl;                                                                        \
        gl_claim(&cl, &c);                                                                         \
        errno = saved_errno_;                                                                      \
        r = CALL;                                                                                  \
        saved_errno_ = errno;                                                                      \
        if (r != 0 && cl.ev) {                                                                     \
            int fail_dev_ = (fail_device);                                                         \
            if (fail_dev_ >= 0)                                                                    \
                cl.ev->device = fail_dev_;                                                         \
        }                                                                                          \
        gl_publish(&cl, (int)r);                                                                   \
        errno = saved_errno_;                                                                      \
    } else {                                                                                       \
        r = CALL;                                                                                  \
    }                                                                                              \
    gl_leave();                                                                                    \
    return r

#define GL_PTR(p) ((uint64_t)(uintptr_t)(p))

#endif
