/* test_clock.c — clock.c: TSC stamps turned into CLOCK_MONOTONIC
 * nanoseconds by the writer's mapping stay close to the clock and never
 * run backwards, however often it re-anchors (a simulated TSC and clock:
 * no dependence on this machine's timing); GPULEDGER_CLOCK=monotonic is
 * the identity. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include "clock.h"

static void test_monotonic_is_identity(void **state)
{
    (void)state;
    gl_clock_init(0);
    assert_int_equal(gl_clock_tsc, 0);
    assert_string_equal(gl_clock_name(), "monotonic");
    uint64_t a = gl_now_ns(), s = gl_stamp(), b = gl_now_ns();
    assert_true(a <= s && s <= b);
    assert_int_equal(gl_stamp_to_ns(s), s);
    assert_int_equal(gl_stamp_span(10000000), 10000000);
    assert_true(gl_clock_ns_per_tick() == 0.0);
}

/* The real TSC, where invariant: a plausible rate, and converted stamps
 * in the order of the stamps across re-anchorings (no timing bounds: the
 * machine may be loaded). */
static void test_tsc_real(void **state)
{
    (void)state;
    gl_clock_set_sources(NULL, NULL);
    gl_clock_set_check_ns(1000); /* a new segment at nearly every anchor */
    gl_clock_init(1);
    if (!gl_clock_tsc) {
        assert_string_equal(gl_clock_name(), "monotonic");
        skip();
    }
    assert_string_equal(gl_clock_name(), "tsc");
    double rate = gl_clock_ns_per_tick();
    assert_true(rate > 0.01 && rate < 10.0); /* 100 MHz .. 100 GHz */
    uint64_t prev_ns = 0, prev_stamp = 0;
    for (int i = 0; i < 200; i++) {
        uint64_t st = gl_stamp();
        gl_clock_anchor();
        uint64_t ns = gl_stamp_to_ns(st);
        assert_true(st > prev_stamp);
        assert_true(ns >= prev_ns);
        prev_stamp = st;
        prev_ns = ns;
    }
    gl_clock_set_check_ns(0);
}

/* A simulated machine: CLOCK_MONOTONIC is fake_ns, the TSC runs at 3 ticks
 * per ns with a drift that changes its rate by up to 300 ppm (so every
 * re-anchoring steers, and some step); a nanosecond read may come up to
 * 400 ns late. Each read moves time 7 ns on. */
static uint64_t fake_ns = 1000000000ULL;
static double fake_ticks = 5e9;
static double fake_ppm;
static unsigned jitter_seed = 7;
static uint64_t fake_read_ns(void)
{
    fake_ns += 7;
    fake_ticks += 7 * 3.0 * (1.0 + fake_ppm * 1e-6);
    /* clock_gettime read from a VM, preempted now and then: up to 400 ns
     * late against the ticks read around it */
    jitter_seed = jitter_seed * 1103515245u + 12345u;
    return fake_ns + (jitter_seed >> 16) % 400;
}
static uint64_t fake_read_tsc(void)
{
    fake_ns += 7;
    fake_ticks += 7 * 3.0 * (1.0 + fake_ppm * 1e-6);
    return (uint64_t)fake_ticks;
}
static void fake_advance(uint64_t ns)
{
    fake_ns += ns;
    fake_ticks += (double)ns * 3.0 * (1.0 + fake_ppm * 1e-6);
}

/* What the writer does: events stamped, then a re-anchoring, then the
 * events converted. Converted times must follow the stamps (one thread's
 * events never go backwards: tests/threads' free before its allocation),
 * whatever the re-anchoring did in between, and stay near the clock. */
static void test_reanchoring_never_reorders(void **state)
{
    (void)state;
    gl_clock_set_sources(fake_read_tsc, fake_read_ns);
    gl_clock_set_check_ns(20000); /* re-anchor every 20 us: as often as a test can */
    gl_clock_init(1);
    assert_int_equal(gl_clock_tsc, 1);
    uint64_t prev = 0, prev_stamp = 0, backwards = 0, anchors = 0;
    int64_t worst = 0;
    unsigned seed = 1;
    for (int batch = 0; batch < 5000; batch++) {
        /* the drift changes: a thermal wander, in steps */
        seed = seed * 1103515245u + 12345u;
        if (batch % 50 == 0)
            fake_ppm = (double)((int)(seed >> 16) % 600 - 300);
        uint64_t stamps[16];
        for (int i = 0; i < 16; i++) {
            stamps[i] = fake_read_tsc(); /* what gl_stamp reads on the machine simulated */
            fake_advance(100 + (seed >> 20) % 300); /* an allocation, then its free */
        }
        /* the writer comes later (the ring holds thousands of events),
         * sometimes much later (a loaded machine) */
        fake_advance(batch % 97 == 0 ? 3000000 : 200000);
        /* it converts what it has room for (the writer's batches of 16384),
         * re-anchors, then converts the rest: stamped before the re-anchoring */
        for (int i = 0; i < 16; i++) {
            if (i == 8) {
                gl_clock_anchor();
                anchors++;
            }
            uint64_t ns = gl_stamp_to_ns(stamps[i]);
            assert_true(stamps[i] > prev_stamp);
            if (ns < prev)
                backwards++;
            prev = ns;
            prev_stamp = stamps[i];
        }
        uint64_t st = fake_read_tsc();
        int64_t d = (int64_t)gl_stamp_to_ns(st) - (int64_t)fake_ns;
        if (d < 0)
            d = -d;
        if (batch > 100 && d > worst)
            worst = d;
    }
    print_message("%llu anchors, worst distance from the clock %lld ns\n", (unsigned long long)anchors,
                  (long long)worst);
    assert_int_equal(backwards, 0);
    assert_true(worst < 200000); /* steered back within the step limit, plus a check period */
    gl_clock_set_sources(NULL, NULL);
    gl_clock_set_check_ns(0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_monotonic_is_identity),
        cmocka_unit_test(test_tsc_real),
        cmocka_unit_test(test_reanchoring_never_reorders),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
