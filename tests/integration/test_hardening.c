/* test_hardening.c — the report verbs on input they must not trust and
 * files they must not touch, and the small promises of their command
 * lines. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

static struct run_result r;

static int teardown(void **state)
{
    (void)state;
    h_cleanup();
    return 0;
}

/* `summary` answers on stdout; `gpuledger run`'s closing line stays on
 * stderr. */
static void test_summary_on_stdout(void **state)
{
    (void)state;
    h_run(&r, NULL, ARGV(GL, "run", "-o", "demo.db", PROG("demo")));
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.err, "gpuledger: "));
    assert_non_null(strstr(r.err, "demo.db: 33 events, peak 82.00 MiB on device 0"));
    assert_null(strstr(r.out, "gpuledger: "));
    h_run(&r, NULL, ARGV(GL, "summary", "demo.db"));
    assert_int_equal(r.status, 0);
    assert_string_equal(r.err, "");
    assert_string_equal(r.out, "gpuledger: demo.db: 33 events, peak 82.00 MiB on device 0, 2 allocations (2.00 MiB) "
                               "never freed, 1 out-of-memory failures\n");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_summary_on_stdout, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
