/* clock.c — event time stamps.
 *
 * clock_gettime(CLOCK_MONOTONIC) is a quarter of what a stackless event
 * costs (26 ns here, 34 ns on the H200's VM); reading the TSC is 11 ns. So
 * where the TSC is invariant (CPUID 0x80000007 EDX bit 8: constant rate,
 * runs in every C-state) the hot path stores raw ticks and the writer
 * converts them to CLOCK_MONOTONIC nanoseconds:
 *
 *   ns = a_ns + (stamp - a_tsc) * rate
 *
 * The rate is measured for 500 µs at start-up, then the writer compares
 * the two clocks again every 100 ms: the rate becomes the long-run ratio
 * since start-up and the mapping is steered (never stepped, unless off by
 * more than 100 µs) so that converted times stay monotonic and within a
 * few µs of clock_gettime. Elsewhere, or with GPULEDGER_CLOCK=monotonic,
 * stamps are clock_gettime nanoseconds and the mapping is the identity. */
#include "clock.h"

#include <stdio.h>

#include <time.h>

#if defined(__x86_64__)
#include <cpuid.h>
#endif

int gl_clock_tsc;

/* the mapping (set by gl_clock_init, then changed by the writer only) */
static uint64_t a_tsc, a_ns;
static double rate;          /* ns per tick */
static uint64_t base_tsc, base_ns; /* the first measured pair */
static uint64_t last_check_ns;

#define CHECK_NS 100000000ULL  /* compare the clocks every 100 ms */
#define STEP_NS 100000.0       /* further off than this: step, do not steer */
#define CALIBRATE_NS 500000ULL /* the first rate, measured at start-up */

uint64_t gl_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

#if defined(__x86_64__)
static int tsc_invariant(void)
{
    unsigned a, b, c, d;
    if (!__get_cpuid(0x80000000u, &a, &b, &c, &d) || a < 0x80000007u)
        return 0;
    if (!__get_cpuid(0x80000007u, &a, &b, &c, &d))
        return 0;
    return (d >> 8) & 1;
}

/* A (ticks, ns) pair read as close together as this thread can get it:
 * the best of three tries. */
static void pair(uint64_t *tsc, uint64_t *ns)
{
    uint64_t best = UINT64_MAX;
    *tsc = *ns = 0;
    for (int i = 0; i < 3; i++) {
        uint64_t t1 = __rdtsc();
        uint64_t n = gl_now_ns();
        uint64_t t2 = __rdtsc();
        if (t2 - t1 < best) {
            best = t2 - t1;
            *tsc = t1 + (t2 - t1) / 2;
            *ns = n;
        }
    }
}
#endif

void gl_clock_init(int want_tsc)
{
    gl_clock_tsc = 0;
#if defined(__x86_64__)
    if (!want_tsc || !tsc_invariant())
        return;
    uint64_t t0 = 0, n0 = 0, t1 = 0, n1 = 0;
    pair(&t0, &n0);
    do
        pair(&t1, &n1);
    while (n1 - n0 < CALIBRATE_NS);
    if (t1 <= t0)
        return; /* not counting: keep clock_gettime */
    rate = (double)(n1 - n0) / (double)(t1 - t0);
    base_tsc = t0;
    base_ns = n0;
    a_tsc = t1;
    a_ns = n1;
    last_check_ns = n1;
    gl_clock_tsc = 1;
#else
    (void)want_tsc;
#endif
}

uint64_t gl_stamp_span(uint64_t ns)
{
    return gl_clock_tsc ? (uint64_t)((double)ns / rate) : ns;
}

uint64_t gl_stamp_to_ns(uint64_t stamp)
{
    if (!gl_clock_tsc)
        return stamp;
    double d = (double)(int64_t)(stamp - a_tsc) * rate;
    return (uint64_t)((int64_t)a_ns + (int64_t)d);
}

void gl_clock_anchor(void)
{
#if defined(__x86_64__)
    if (!gl_clock_tsc)
        return;
    uint64_t t = 0, n = 0;
    pair(&t, &n);
    if (n - last_check_ns < CHECK_NS || t <= base_tsc)
        return;
    last_check_ns = n;
    double long_rate = (double)(n - base_ns) / (double)(t - base_tsc);
    uint64_t predicted = gl_stamp_to_ns(t);
    double err = (double)(int64_t)(n - predicted); /* > 0: the mapping runs late */
    a_tsc = t;
    if (err > STEP_NS || err < -STEP_NS) {
        a_ns = n;
        rate = long_rate;
        return;
    }
    /* make up the difference over the next interval */
    a_ns = predicted;
    rate = long_rate * (1.0 + err / (double)CHECK_NS);
#endif
}

const char *gl_clock_name(void)
{
    return gl_clock_tsc ? "tsc" : "monotonic";
}

double gl_clock_ns_per_tick(void)
{
    return gl_clock_tsc ? rate : 0.0;
}

void gl_clock_meta(gl_meta_put put, void *ctx)
{
    put(ctx, "clock", gl_clock_name());
    if (gl_clock_tsc) {
        char num[64];
        snprintf(num, sizeof num, "%.9f", gl_clock_ns_per_tick());
        put(ctx, "tsc_ns_per_tick", num);
    }
}
