/* test_clock.c — clock.c: TSC stamps turned into CLOCK_MONOTONIC
 * nanoseconds by the writer's mapping stay close to clock_gettime and
 * never run backwards; GPULEDGER_CLOCK=monotonic is the identity. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include "clock.h"

static void nap_ms(long ms)
{
    struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&t, NULL);
}

static int64_t off_by(void)
{
    uint64_t before = gl_now_ns();
    uint64_t st = gl_stamp();
    uint64_t after = gl_now_ns();
    int64_t mid = (int64_t)(before + (after - before) / 2);
    return (int64_t)gl_stamp_to_ns(st) - mid;
}

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

static void test_tsc_tracks_clock_gettime(void **state)
{
    (void)state;
    gl_clock_init(1);
    if (!gl_clock_tsc) {
        /* no invariant TSC on this machine: stamps are nanoseconds */
        assert_string_equal(gl_clock_name(), "monotonic");
        skip();
    }
    assert_string_equal(gl_clock_name(), "tsc");
    double rate = gl_clock_ns_per_tick();
    assert_true(rate > 0.01 && rate < 10.0); /* 100 MHz .. 100 GHz */
    /* the 500 us calibration: within 50 us right away */
    int64_t d = off_by();
    assert_true(d > -50000 && d < 50000);
    /* a period in stamp units, back to ns */
    uint64_t s0 = gl_stamp();
    uint64_t span = gl_stamp_span(10000000);
    int64_t back = (int64_t)gl_stamp_to_ns(s0 + span) - (int64_t)gl_stamp_to_ns(s0);
    assert_true(back > 9990000 && back < 10010000);
    /* over a second of re-anchoring (every 100 ms, as the writer does):
     * within 20 us of clock_gettime, and converted stamps never go back */
    uint64_t prev_ns = 0, prev_stamp = 0;
    int64_t worst = 0;
    for (int i = 0; i < 12; i++) {
        nap_ms(105);
        uint64_t st = gl_stamp();
        gl_clock_anchor();
        uint64_t ns = gl_stamp_to_ns(st);
        assert_true(st > prev_stamp);
        assert_true(ns > prev_ns);
        prev_stamp = st;
        prev_ns = ns;
        d = off_by();
        if (d < 0)
            d = -d;
        if (d > worst)
            worst = d;
    }
    print_message("worst distance from clock_gettime after re-anchoring: %lld ns\n", (long long)worst);
    assert_true(worst < 20000);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_monotonic_is_identity),
        cmocka_unit_test(test_tsc_tracks_clock_gettime),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
