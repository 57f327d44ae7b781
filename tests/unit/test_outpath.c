/* test_outpath.c — GPULEDGER_OUTPUT pattern expansion and the
 * never-overwrite file creation. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "outpath.h"

static void test_expand(void **state)
{
    (void)state;
    char out[256];
    assert_int_equal(gl_expand_pattern("run-%h-%r-%p.db", 4242, "node7", "3", out, sizeof out), 0);
    assert_string_equal(out, "run-node7-3-4242.db");
    assert_int_equal(gl_expand_pattern("100%%-%x-%", 1, "h", "0", out, sizeof out), 0);
    assert_string_equal(out, "100%-%x-%");
    assert_int_equal(gl_expand_pattern("%p%p%p", 12345, "h", "0", out, 10), -1); /* does not fit */
    assert_int_equal(gl_expand_pattern("plain.db", 1, "h", "0", out, sizeof out), 0);
    assert_string_equal(out, "plain.db");
}

static void test_in_directory(void **state)
{
    (void)state;
    char p[64] = "/";
    assert_int_equal(gl_in_directory(p, sizeof p, 42), 0);
    assert_string_equal(p, "/gpuledger-42.db");
    snprintf(p, sizeof p, "/tmp");
    assert_int_equal(gl_in_directory(p, sizeof p, 7), 0);
    assert_string_equal(p, "/tmp/gpuledger-7.db");
    snprintf(p, sizeof p, "not-there/");
    assert_int_equal(gl_in_directory(p, sizeof p, 7), 0);
    assert_string_equal(p, "not-there/gpuledger-7.db");
    snprintf(p, sizeof p, "run.db"); /* not a directory: as it is */
    assert_int_equal(gl_in_directory(p, sizeof p, 7), 0);
    assert_string_equal(p, "run.db");
    char small[20] = "/tmp/";
    assert_int_equal(gl_in_directory(small, sizeof small, 123456), -1);
    assert_string_equal(small, "/tmp/");
}

static void test_rank_from_env(void **state)
{
    (void)state;
    unsetenv("RANK");
    unsetenv("LOCAL_RANK");
    assert_string_equal(gl_rank_from_env(), "0");
    setenv("LOCAL_RANK", "5", 1);
    assert_string_equal(gl_rank_from_env(), "5");
    setenv("RANK", "9", 1);
    assert_string_equal(gl_rank_from_env(), "9");
    unsetenv("RANK");
    unsetenv("LOCAL_RANK");
}

static void test_create_exclusive(void **state)
{
    (void)state;
    char dir[] = "/tmp/gl-outpath-XXXXXX", path[512], chosen[512];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/run.db", dir);
    assert_int_equal(gl_create_exclusive(path, chosen, sizeof chosen), 0);
    assert_string_equal(chosen, path);
    assert_int_equal(gl_create_exclusive(path, chosen, sizeof chosen), 0);
    char want[600];
    snprintf(want, sizeof want, "%s/run.1.db", dir);
    assert_string_equal(chosen, want);
    assert_int_equal(gl_create_exclusive(path, chosen, sizeof chosen), 0);
    snprintf(want, sizeof want, "%s/run.2.db", dir);
    assert_string_equal(chosen, want);
    snprintf(path, sizeof path, "%s/trace", dir);
    assert_int_equal(gl_create_exclusive(path, chosen, sizeof chosen), 0);
    assert_int_equal(gl_create_exclusive(path, chosen, sizeof chosen), 0);
    snprintf(want, sizeof want, "%s/trace.1", dir);
    assert_string_equal(chosen, want);
    snprintf(path, sizeof path, "%s/no/such/dir.db", dir);
    assert_int_equal(gl_create_exclusive(path, chosen, sizeof chosen), -1);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_expand),
        cmocka_unit_test(test_in_directory),
        cmocka_unit_test(test_rank_from_env),
        cmocka_unit_test(test_create_exclusive),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
