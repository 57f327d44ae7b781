/* test_config.c — GPULEDGER_* parsing: defaults, good values, bad values
 * (warned about, default kept). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"

static int warnings;
static char last_warning[512];

static void warn(const char *msg)
{
    warnings++;
    strncpy(last_warning, msg, sizeof last_warning - 1);
}

static void test_parsers(void **state)
{
    (void)state;
    unsigned long v;
    int b;
    assert_int_equal(gl_parse_uint("48", 0, 256, &v), 0);
    assert_int_equal(v, 48);
    assert_int_equal(gl_parse_uint("257", 0, 256, &v), -1);
    assert_int_equal(gl_parse_uint("-1", 0, 256, &v), -1);
    assert_int_equal(gl_parse_uint("12x", 0, 256, &v), -1);
    assert_int_equal(gl_parse_uint("", 0, 256, &v), -1);
    assert_int_equal(gl_parse_bool("Yes", &b), 0);
    assert_int_equal(b, 1);
    assert_int_equal(gl_parse_bool("off", &b), 0);
    assert_int_equal(b, 0);
    assert_int_equal(gl_parse_bool("maybe", &b), -1);
}

/* Sizes (GPULEDGER_BUDGET, run --budget, the report's size options) */
static void test_sizes_and_budget(void **state)
{
    (void)state;
    unsigned long long v;
    assert_int_equal(gl_parse_size("512M", &v), 0);
    assert_int_equal(v, 512ULL << 20);
    assert_int_equal(gl_parse_size("1G", &v), 0);
    assert_int_equal(v, 1ULL << 30);
    assert_int_equal(gl_parse_size("2GiB", &v), 0);
    assert_int_equal(v, 2ULL << 30);
    assert_int_equal(gl_parse_size("1.5k", &v), 0);
    assert_int_equal(v, 1536);
    assert_int_equal(gl_parse_size("0", &v), 0);
    assert_int_equal(v, 0);
    assert_int_equal(gl_parse_size("1X", &v), -1);
    assert_int_equal(gl_parse_size("-1G", &v), -1);
    assert_int_equal(gl_parse_size("G", &v), -1);
    assert_int_equal(gl_parse_size("", &v), -1);
    assert_int_equal(gl_parse_size("9999999999T", &v), -1);
    struct gl_config c;
    warnings = 0;
    unsetenv("GPULEDGER_BUDGET");
    gl_config_load(&c, warn);
    assert_int_equal(c.budget, 0);
    setenv("GPULEDGER_BUDGET", "1G", 1);
    gl_config_load(&c, warn);
    assert_int_equal(warnings, 0);
    assert_int_equal(c.budget, 1ULL << 30);
    setenv("GPULEDGER_BUDGET", "lots", 1); /* said once, recorded in full */
    gl_config_load(&c, warn);
    assert_int_equal(warnings, 1);
    assert_non_null(strstr(last_warning, "GPULEDGER_BUDGET='lots' is not a size"));
    assert_int_equal(c.budget, 0);
    setenv("GPULEDGER_BUDGET", "1000", 1); /* below the smallest budget, 1M */
    gl_config_load(&c, warn);
    assert_int_equal(warnings, 2);
    assert_int_equal(c.budget, 0);
    unsetenv("GPULEDGER_BUDGET");
}

static void test_defaults_and_bad_values(void **state)
{
    (void)state;
    struct gl_config c;
    unsetenv("GPULEDGER_OUTPUT");
    unsetenv("GPULEDGER_STACK_DEPTH");
    unsetenv("GPULEDGER_CUPTI");
    warnings = 0;
    gl_config_load(&c, warn);
    assert_int_equal(warnings, 0);
    assert_false(c.disable);
    assert_string_equal(c.output, "gpuledger-%p.db");
    assert_int_equal(c.stack_depth, 48);
    assert_int_equal(c.queue_slots, 16384);
    assert_int_equal(c.commit_ms, 50);
    assert_int_equal(c.cupti, GL_CUPTI_AUTO);

    setenv("GPULEDGER_STACK_DEPTH", "banana", 1);
    setenv("GPULEDGER_COMMIT_MS", "500", 1);
    setenv("GPULEDGER_CUPTI", "0", 1);
    setenv("GPULEDGER_OUTPUT", "x-%p.db", 1);
    gl_config_load(&c, warn);
    assert_int_equal(warnings, 2);
    assert_non_null(strstr(last_warning, "GPULEDGER_COMMIT_MS='500'"));
    assert_int_equal(c.stack_depth, 48);
    assert_int_equal(c.commit_ms, 50);
    assert_int_equal(c.cupti, GL_CUPTI_OFF);
    assert_string_equal(c.output, "x-%p.db");
    unsetenv("GPULEDGER_STACK_DEPTH");
    unsetenv("GPULEDGER_COMMIT_MS");
    unsetenv("GPULEDGER_CUPTI");
    unsetenv("GPULEDGER_OUTPUT");
}

static void test_unwind_modes(void **state)
{
    (void)state;
    struct gl_config c;
    static const struct {
        const char *value;
        int mode, warned;
    } cases[] = {{NULL, 1, 0}, {"fast", 1, 0}, {"LIBUNWIND", 0, 0}, {"nomemo", 2, 0}, {"frame-pointers", 1, 1}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        if (cases[i].value)
            setenv("GPULEDGER_UNWIND", cases[i].value, 1);
        else
            unsetenv("GPULEDGER_UNWIND");
        warnings = 0;
        gl_config_load(&c, warn);
        assert_int_equal(c.unwind, cases[i].mode);
        assert_int_equal(warnings, cases[i].warned);
    }
    assert_non_null(strstr(last_warning, "GPULEDGER_UNWIND='frame-pointers' is not fast/nomemo/libunwind"));
    unsetenv("GPULEDGER_UNWIND");
}

/* GPULEDGER_PYTHON and GPULEDGER_CLOCK: every word each one takes. */
static void test_python_and_clock_modes(void **state)
{
    (void)state;
    struct gl_config c;
    static const struct {
        const char *var, *value;
        int python, clock, warned;
    } cases[] = {
        {"GPULEDGER_PYTHON", NULL, 1, 1, 0},         {"GPULEDGER_PYTHON", "0", 0, 1, 0},
        {"GPULEDGER_PYTHON", "on", 1, 1, 0},         {"GPULEDGER_PYTHON", "MIXED", 2, 1, 0},
        {"GPULEDGER_PYTHON", "only", 3, 1, 0},       {"GPULEDGER_PYTHON", "some", 1, 1, 1},
        {"GPULEDGER_CLOCK", "auto", 1, 1, 0},        {"GPULEDGER_CLOCK", "tsc", 1, 1, 0},
        {"GPULEDGER_CLOCK", "Monotonic", 1, 0, 0},   {"GPULEDGER_CLOCK", "hpet", 1, 1, 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        unsetenv("GPULEDGER_PYTHON");
        unsetenv("GPULEDGER_CLOCK");
        if (cases[i].value)
            setenv(cases[i].var, cases[i].value, 1);
        warnings = 0;
        gl_config_load(&c, warn);
        assert_int_equal(c.python, cases[i].python);
        assert_int_equal(c.clock_tsc, cases[i].clock);
        assert_int_equal(warnings, cases[i].warned);
        if (i == 5)
            assert_string_equal(last_warning, "GPULEDGER_PYTHON='some' is not 0/1/mixed/only; using 1");
    }
    assert_string_equal(last_warning, "GPULEDGER_CLOCK='hpet' is not auto/tsc/monotonic; using auto");
    unsetenv("GPULEDGER_PYTHON");
    unsetenv("GPULEDGER_CLOCK");
}

/* GPULEDGER_FREE_STACKS: auto (default: not PyTorch blocks' frees), the
 * boolean words, and all. */
static void test_free_stacks(void **state)
{
    (void)state;
    struct gl_config c;
    static const struct {
        const char *value;
        int mode, warned;
    } cases[] = {{NULL, GL_FREE_STACKS_AUTO, 0}, {"auto", GL_FREE_STACKS_AUTO, 0}, {"1", GL_FREE_STACKS_ALL, 0},
                 {"ALL", GL_FREE_STACKS_ALL, 0},  {"yes", GL_FREE_STACKS_ALL, 0},   {"0", GL_FREE_STACKS_NONE, 0},
                 {"off", GL_FREE_STACKS_NONE, 0}, {"some", GL_FREE_STACKS_AUTO, 1}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        if (cases[i].value)
            setenv("GPULEDGER_FREE_STACKS", cases[i].value, 1);
        else
            unsetenv("GPULEDGER_FREE_STACKS");
        warnings = 0;
        gl_config_load(&c, warn);
        assert_int_equal(c.free_stacks, cases[i].mode);
        assert_int_equal(warnings, cases[i].warned);
    }
    assert_string_equal(last_warning,
                        "GPULEDGER_FREE_STACKS='some' is not auto/0/1/all/yes/no/on/off; using auto");
    unsetenv("GPULEDGER_FREE_STACKS");
}

/* The README's variable table and the code's table agree: the same
 * variables in the same order, each with the same default (the rows the
 * library does not read, GL_CFG_ELSEWHERE, too). */
static void test_readme_table_matches_code(void **state)
{
    (void)state;
    const char *root = getenv("GL_SOURCE_ROOT");
    if (!root)
        fail_msg("GL_SOURCE_ROOT is not set (run through meson test)");
    char path[1024], line[4096];
    snprintf(path, sizeof path, "%s/README.md", root);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    size_t next = 0, rows = 0;
    while (fgets(line, sizeof line, f)) {
        char name[128], def[128];
        if (sscanf(line, "| `%127[A-Z_]` | %127[^|]|", name, def) != 2 || strncmp(name, "GPULEDGER_", 10))
            continue;
        size_t n = strlen(def);
        while (n && def[n - 1] == ' ')
            def[--n] = 0;
        if (n >= 2 && def[0] == '`' && def[n - 1] == '`') {
            memmove(def, def + 1, n - 2);
            def[n - 2] = 0;
        }
        while (next < gl_config_nvars && !gl_config_vars[next].help)
            next++; /* internal: set by the launcher, not documented */
        if (next == gl_config_nvars)
            fail_msg("README.md documents %s, which the code does not read", name);
        const struct gl_config_var *v = &gl_config_vars[next++];
        if (strcmp(name, v->name))
            fail_msg("README.md lists %s where the code's table has %s (same variables, same order)", name, v->name);
        const char *want = v->shown ? v->shown : "—";
        if (strcmp(def, want))
            fail_msg("%s: README.md says the default is '%s', the code '%s'", name, def, want);
        rows++;
    }
    fclose(f);
    while (next < gl_config_nvars && !gl_config_vars[next].help)
        next++;
    if (next < gl_config_nvars)
        fail_msg("%s is not in README.md's variable table", gl_config_vars[next].name);
    assert_true(rows >= 17);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parsers),
        cmocka_unit_test(test_defaults_and_bad_values),
        cmocka_unit_test(test_sizes_and_budget),
        cmocka_unit_test(test_unwind_modes),
        cmocka_unit_test(test_python_and_clock_modes),
        cmocka_unit_test(test_free_stacks),
        cmocka_unit_test(test_readme_table_matches_code),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
