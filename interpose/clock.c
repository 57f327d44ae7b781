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
 * At start-up only one (ticks, ns) pair is read: the rate is measured by
 * the writer when it starts (the first event), over at least 500 µs from
 * that pair, so a process that records nothing pays no calibration. The
 * writer then compares the two clocks again every 100 ms: the rate becomes
 * the long-run ratio since start-up and the mapping is steered (stepped
 * only forward, when more than 100 µs late) so that converted times stay
 * within a few µs of clock_gettime.
 *
 * Each re-anchoring starts a new segment of the mapping, continuous with
 * the last one at its first tick; a stamp is converted by the segment it
 * falls in (the last 64 are kept, 6.4 s), not by the newest one, so an
 * event stamped before a re-anchoring and converted after it gets the time
 * it would have got before: converted times are a non-decreasing function
 * of the stamp, and one thread's events never go backwards.
 *
 * Elsewhere, or with GPULEDGER_CLOCK=monotonic, stamps are clock_gettime
 * nanoseconds and the mapping is the identity. */
#include "clock.h"

#include <stdatomic.h>
#include <stdio.h>

#include <time.h>

#if defined(__x86_64__)
#include <cpuid.h>
#endif

int gl_clock_tsc;

static uint64_t source_ns(void);
#if defined(__x86_64__)
static uint64_t source_tsc(void)
{
    return __rdtsc();
}
#else
static uint64_t source_tsc(void)
{
    return 0;
}
#endif
static uint64_t (*read_tsc)(void) = source_tsc;
static uint64_t (*read_ns)(void) = source_ns;

/* the mapping: segments, set by the writer only (gl_clock_anchor) */
struct segment {
    uint64_t tsc, ns; /* where it starts */
    double rate;      /* ns per tick */
};
#define SEGMENTS 64
static struct segment seg[SEGMENTS];
static unsigned nseg;              /* segments made so far (the newest: seg[(nseg - 1) % SEGMENTS]) */
static _Atomic double rate_now;    /* the newest rate, for gl_stamp_span on any thread (0: not yet) */
static uint64_t base_tsc, base_ns; /* the pair read at start-up */
static uint64_t last_check_ns;
static uint64_t check_ns = 100000000ULL; /* compare the clocks every 100 ms */

#define STEP_NS 100000.0       /* later than this: step forward, do not steer */
#define CALIBRATE_NS 500000ULL /* the first rate, measured over at least this */

static uint64_t source_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

uint64_t gl_now_ns(void)
{
    return read_ns();
}

void gl_clock_set_sources(uint64_t (*tsc)(void), uint64_t (*ns)(void))
{
    read_tsc = tsc ? tsc : source_tsc;
    read_ns = ns ? ns : source_ns;
}

void gl_clock_set_check_ns(uint64_t ns)
{
    check_ns = ns ? ns : 100000000ULL;
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
#endif

/* A (ticks, ns) pair read as close together as this thread can get it:
 * the best of three tries. */
static void pair(uint64_t *tsc, uint64_t *ns)
{
    uint64_t best = UINT64_MAX;
    *tsc = *ns = 0;
    for (int i = 0; i < 3; i++) {
        uint64_t t1 = read_tsc();
        uint64_t n = read_ns();
        uint64_t t2 = read_tsc();
        if (t2 - t1 < best) {
            best = t2 - t1;
            *tsc = t1 + (t2 - t1) / 2;
            *ns = n;
        }
    }
}

void gl_clock_init(int want_tsc)
{
    gl_clock_tsc = 0;
    nseg = 0;
    atomic_store(&rate_now, 0.0);
#if defined(__x86_64__)
    if (!want_tsc || (read_tsc == source_tsc && !tsc_invariant()))
        return;
    pair(&base_tsc, &base_ns);
    gl_clock_tsc = 1;
#else
    (void)want_tsc;
#endif
}

/* The first segment: the rate over at least CALIBRATE_NS since start-up
 * (waited for here, in the writer, if the first event came sooner). */
static void calibrate(void)
{
    uint64_t t = 0, n = 0;
    do
        pair(&t, &n);
    while (n - base_ns < CALIBRATE_NS);
    double r = t > base_tsc ? (double)(n - base_ns) / (double)(t - base_tsc) : 1.0;
    seg[0] = (struct segment){t, n, r};
    nseg = 1;
    last_check_ns = n;
    atomic_store(&rate_now, r);
}

uint64_t gl_stamp_span(uint64_t ns)
{
    if (!gl_clock_tsc)
        return ns;
    double r = atomic_load_explicit(&rate_now, memory_order_relaxed);
    if (r == 0.0) { /* not calibrated yet: the rate since start-up, roughly */
        uint64_t t = read_tsc(), n = read_ns();
        r = t > base_tsc && n > base_ns ? (double)(n - base_ns) / (double)(t - base_tsc) : 1.0;
    }
    return (uint64_t)((double)ns / r);
}

static uint64_t convert(const struct segment *g, uint64_t stamp)
{
    double d = (double)(int64_t)(stamp - g->tsc) * g->rate;
    return (uint64_t)((int64_t)g->ns + (int64_t)d);
}

uint64_t gl_stamp_to_ns(uint64_t stamp)
{
    if (!gl_clock_tsc)
        return stamp;
    if (!nseg)
        calibrate();
    /* the newest segment that starts at or before the stamp: nearly always
     * the newest or the one before it */
    unsigned kept = nseg < SEGMENTS ? nseg : SEGMENTS;
    const struct segment *g = &seg[(nseg - 1) % SEGMENTS];
    for (unsigned k = 0; k < kept; k++) {
        g = &seg[(nseg - 1 - k) % SEGMENTS];
        if ((int64_t)(stamp - g->tsc) >= 0)
            break;
    }
    return convert(g, stamp);
}

void gl_clock_anchor(void)
{
    if (!gl_clock_tsc)
        return;
    if (!nseg) {
        calibrate();
        return;
    }
    uint64_t t = 0, n = 0;
    pair(&t, &n);
    const struct segment *last = &seg[(nseg - 1) % SEGMENTS];
    if (n - last_check_ns < check_ns || t <= last->tsc || t <= base_tsc)
        return;
    double interval = (double)(n - last_check_ns);
    last_check_ns = n;
    double long_rate = (double)(n - base_ns) / (double)(t - base_tsc);
    uint64_t predicted = convert(last, t);
    double err = (double)(int64_t)(n - predicted); /* > 0: the mapping runs late */
    struct segment next = {t, predicted, long_rate};
    if (err > STEP_NS) {
        next.ns = n; /* a step forward: still never backwards */
    } else {
        /* make up the difference over the next interval (as long as the
         * last one was); slower, never stopped or reversed, when the
         * mapping runs ahead */
        double f = 1.0 + err / interval;
        next.rate = long_rate * (f < 0.5 ? 0.5 : f > 2.0 ? 2.0 : f);
    }
    seg[nseg % SEGMENTS] = next;
    nseg++;
    atomic_store_explicit(&rate_now, next.rate, memory_order_relaxed);
}

const char *gl_clock_name(void)
{
    return gl_clock_tsc ? "tsc" : "monotonic";
}

double gl_clock_ns_per_tick(void)
{
    if (!gl_clock_tsc)
        return 0.0;
    if (!nseg)
        calibrate();
    return seg[(nseg - 1) % SEGMENTS].rate;
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
