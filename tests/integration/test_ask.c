/* test_ask.c — the questions of gpuledger.h (gpuledger_checkpoint, _usage,
 * _live_stacks, _stack_text) answered from what was recorded: exact figures
 * of tests/progs/ask.c under gpuledger run, and the program without it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "harness.h"

static void test_answers(void **state)
{
    (void)state;
    struct run_result r;
    h_run(&r, NULL, ARGV(GL, "run", "-q", "-o", "ask.db", PROG("ask")));
    assert_int_equal(r.status, 0);
    assert_string_equal(r.out, "checkpoints 1 2\n"
                               "since 1: layer 1, live 6553600, start 4194304, peak 8388608, new live 2359296 in 4, "
                               "allocated 6553600 in 6, 2 frees\n"
                               "since 2: layer 1, live 6553600, start 6291456, peak 6553600, new live 262144 in 1, "
                               "allocated 262144 in 1, 0 frees\n"
                               "since 99: no answer\n"
                               "3 stacks since 1 live now\n"
                               "  1048576 bytes in 2: leak_twice (ask)\n"
                               "  1048576 bytes in 1: leak_once (ask)\n"
                               "  262144 bytes in 1: main (ask)\n"
                               "2 stacks since 1 live at the peak\n"
                               "  3145728 bytes in 1: main (ask)\n"
                               "  1048576 bytes in 1: main (ask)\n"
                               "top 1 at the peak since 2: 1\n"
                               "text in 8 bytes: 0 ''\n");
}

static void test_without_gpuledger(void **state)
{
    (void)state;
    struct run_result r;
    h_run(&r, NULL, ARGV(PROG("ask")));
    assert_int_equal(r.status, 0);
    assert_string_equal(r.out, "ask: no gpuledger\n");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_answers),
        cmocka_unit_test(test_without_gpuledger),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
