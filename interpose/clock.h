/* clock.h — event time stamps (see clock.c). The hot path stamps an event
 * with gl_stamp(); the writer turns stamps into CLOCK_MONOTONIC
 * nanoseconds with gl_stamp_to_ns() before it stores them. */
#ifndef GL_CLOCK_H
#define GL_CLOCK_H

#include <stdint.h>

#include "meta.h"

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

/* 1 when stamps are TSC ticks, 0 when they are CLOCK_MONOTONIC ns. Set
 * once by gl_clock_init, before the first event. */
extern int gl_clock_tsc;

uint64_t gl_now_ns(void);

/* Decide the stamp source (GPULEDGER_CLOCK: auto/tsc, monotonic) and, for
 * the TSC, read the first (ticks, ns) pair: no waiting (the rate is
 * measured by the writer, at its first conversion). */
void gl_clock_init(int want_tsc);

/* For tests: other tick and nanosecond sources (NULL: the real ones; a
 * non-NULL tsc counts as invariant), set before gl_clock_init; and how
 * often gl_clock_anchor starts a new segment (0: every 100 ms). */
void gl_clock_set_sources(uint64_t (*tsc)(void), uint64_t (*ns)(void));
void gl_clock_set_check_ns(uint64_t ns);

static inline uint64_t gl_stamp(void)
{
#if defined(__x86_64__)
    if (gl_clock_tsc)
        return __rdtsc();
#endif
    return gl_now_ns();
}

/* Roughly how many stamp units make ns nanoseconds (for periods on the
 * producer side: the sampler). */
uint64_t gl_stamp_span(uint64_t ns);

/* Writer only (one thread): the CLOCK_MONOTONIC time of a stamp; a
 * non-decreasing function of the stamp across re-anchorings. */
uint64_t gl_stamp_to_ns(uint64_t stamp);

/* Writer only: compare the TSC with CLOCK_MONOTONIC again (at most every
 * 100 ms) and steer the mapping toward it, never back (a new segment). */
void gl_clock_anchor(void);

/* "tsc" or "monotonic", and the measured ns per tick (0 for monotonic). */
const char *gl_clock_name(void);
double gl_clock_ns_per_tick(void);
/* meta clock (and tsc_ns_per_tick when the TSC is used). */
void gl_clock_meta(gl_meta_put put, void *ctx);

#endif
