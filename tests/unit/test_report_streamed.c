/* test_report_streamed.c — the report from a live-only load that keeps
 * only the records live at the moments its ledgers are taken (model.h,
 * GL_LOAD_MOMENTS; model_moments.h) against the report of a full load: on
 * every database of tests/golden/db the same text and JSON, byte for
 * byte; a peak passed by a higher one gives up the records kept for it
 * while a failure's are kept to the end (the load's records: those two,
 * of thousands made); and a block never reusable, freed before the
 * requested peak, loads in full with the same answer. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis.h"
#include "dossier.h"
#include "golden_dbs.h"
#include "json.h"
#include "model.h"

static const struct gl_load full_load = {.parts = GL_LOAD_HEAPS};
static const struct gl_load report_load = {.parts = GL_LOAD_HEAPS | GL_LOAD_LIVE_ONLY | GL_LOAD_MOMENTS |
                                                    GL_LOAD_HOLES};
static struct gl_rules rules;
static size_t streamed, fewer;

/* The report of r as `report` writes it (text, or JSON), in memory. */
static char *render(struct gl_run *r, int json)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    struct gl_dossier d;
    struct gl_dossier_opts o = {-2, &rules, NULL};
    struct gl_report_totals t = {0, 0, 0};
    (void)gl_dossier_build(&d, r, &o);
    if (json) {
        struct gl_json j = {0};
        gl_render_json_begin(&j, f);
        gl_render_json_process(&j, &d, 100);
        gl_report_totals_add(&t, &d);
        gl_render_json_end(&j, &t);
    } else {
        gl_render_text_process(f, &d, 0, 100);
    }
    gl_dossier_free(&d);
    fclose(f);
    return buf;
}

/* The two loads of path give the same report; returns the live-only
 * load's records (SIZE_MAX: it was a full load). */
static size_t compare(const char *path)
{
    char err[1024];
    struct gl_run *f = gl_run_load_with(path, &full_load, err, sizeof err);
    if (!f)
        fail_msg("%s: %s", path, err);
    struct gl_run *l = gl_run_load_with(path, &report_load, err, sizeof err);
    if (!l)
        fail_msg("%s (moments): %s", path, err);
    assert_int_equal(l->live_only, l->moments != NULL); /* the moments kept, or a full load */
    assert_int_equal(l->allocs_made, f->nallocs);
    for (int json = 0; json < 2; json++) {
        char *a = render(f, json), *b = render(l, json);
        if (strcmp(a, b))
            fail_msg("%s: the %s reports differ:\n%s\n----\n%s", path, json ? "JSON" : "text", a, b);
        free(a);
        free(b);
    }
    size_t kept = l->moments ? l->nallocs : SIZE_MAX;
    fewer += kept < f->nallocs;
    gl_run_free(f);
    gl_run_free(l);
    return kept;
}

static void compare_golden(const char *path)
{
    streamed += compare(path) != SIZE_MAX;
}

static void test_golden_databases_agree(void **state)
{
    (void)state;
    assert_non_null(getenv("GL_SOURCE_ROOT"));
    size_t n = gl_each_golden_db(compare_golden);
    printf("%zu databases, %zu read live-only, %zu of them with fewer records\n", n, streamed, fewer);
    assert_true(n >= 20);
    assert_int_equal(streamed, n); /* none of the golden set needs a full load */
    assert_true(fewer >= 10);
}

#define EVENTS "INSERT INTO event_log(seq, ts_ns, tid, op, api, kind, device, size, addr, ref_seq, result) "
#define T0 "(SELECT start_ns FROM run)"

/* 3,000 cudaMalloc/cudaFree pairs, each bigger than the last: each one a
 * new peak, kept at its free and given up at the next; then Y, live at an
 * out-of-memory and freed after it. The load keeps the last pair's record
 * (live at the peak) and Y's. */
static void test_passed_peaks_give_records_up(void **state)
{
    (void)state;
    char path[4096];
    gl_golden_changed_copy(
        "report", "alloc1000.db",
        "DELETE FROM event_log;"
        "WITH RECURSIVE i(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM i WHERE n < 3000) " EVENTS
        "SELECT 2 * n - 1, " T0 " + 2 * n - 1, 1, 1, 1, 1, 0, n * 256, 4096 * n, NULL, 0 FROM i UNION ALL "
        "SELECT 2 * n, " T0 " + 2 * n, 1, 2, 2, 1, 0, 0, 4096 * n, 2 * n - 1, 0 FROM i;" EVENTS
        "VALUES (7000, " T0 " + 7000, 1, 1, 1, 1, 0, 10, 268435456, NULL, 0),"
        "(7001, " T0 " + 7001, 1, 11, 1, 1, 0, 1099511627776, 0, NULL, 2),"
        "(7002, " T0 " + 7002, 1, 2, 2, 1, 0, 0, 268435456, 7000, 0);",
        path, sizeof path);
    assert_int_equal(compare(path), 2);
    unlink(path);
}

/* A PyTorch block freed (free_requested) and never reusable, then a
 * bigger one asked: its requested bytes leave the sum at its free in a
 * full load, and the scan knows that only at the end: a full load. */
static void test_block_never_reusable_loads_in_full(void **state)
{
    (void)state;
    char path[4096];
    gl_golden_changed_copy("report", "alloc1000.db",
                           EVENTS "VALUES (2000, " T0 " + 2000, 1, 1, 60, 11, 0, 512, 1048576, NULL, 0),"
                                  "(2001, " T0 " + 2001, 1, 20, 60, 11, 0, 0, 1048576, 2000, 0),"
                                  "(2002, " T0 " + 2002, 1, 1, 60, 11, 0, 1024, 2097152, NULL, 0);",
                           path, sizeof path);
    assert_int_equal(compare(path), SIZE_MAX);
    unlink(path);
}

static int setup(void **state)
{
    (void)state;
    return gl_rules_default(&rules);
}

static int teardown(void **state)
{
    (void)state;
    gl_rules_free(&rules);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_golden_databases_agree),
        cmocka_unit_test(test_passed_peaks_give_records_up),
        cmocka_unit_test(test_block_never_reusable_loads_in_full),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
