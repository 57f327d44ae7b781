/* test_usage.c — the process's own figure at the peak
 * (report/model/model_usage.c) on usage_samples written by hand: the
 * sample nearest the peak's time, before or after it (it was the first at
 * or after the peak's event, which under load comes after the pool grew),
 * a tie going to the later, with its signed distance and its text. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "model_usage.h"

#define MS 1000000LL

static sqlite3 *db;
static struct gl_run run;
static struct gl_device dev;

/* usage_samples with rows "ts_ms seq used ledger", the peak at peak_ms
 * (event peak_seq); dev.usage read from them. */
static void read_usage(const char *rows, int64_t peak_ms, int64_t peak_seq)
{
    assert_int_equal(sqlite3_open(":memory:", &db), SQLITE_OK);
    char sql[2048];
    snprintf(sql, sizeof sql,
             "CREATE TABLE usage_samples (ts_ns INTEGER, seq INTEGER, device INTEGER, used INTEGER, ledger INTEGER,"
             " source TEXT); %s",
             rows);
    assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
    memset(&run, 0, sizeof run);
    memset(&dev, 0, sizeof dev);
    run.db = db;
    dev.peak_ns = peak_ms * MS;
    dev.peak_seq = peak_seq;
    gl_usage_read(&run, &dev);
    sqlite3_close(db);
}

#define ROW(ms, seq, used, ledger)                                                                                   \
    "INSERT INTO usage_samples VALUES (" #ms "000000, " #seq ", 0, " #used ", " #ledger ", 'nvml_process');"

/* The sample 163 ms before the peak is nearer than the one 400 ms after
 * its event (taken once the pool had grown): it is the peak's. */
static void test_nearest_before(void **state)
{
    (void)state;
    read_usage(ROW(1000, 10, 300, 20) ROW(1563, 90, 500, 200) ROW(2000, 99, 310, 10), 1163, 50);
    assert_true(dev.usage.peak.found);
    assert_int_equal(dev.usage.peak.seq, 10);
    assert_int_equal(dev.usage.peak.from_peak_ns, -163 * MS);
    assert_int_equal(dev.usage.peak.process, 300);
    assert_int_equal(dev.usage.peak.ledger, 20);
    assert_int_equal(dev.usage.end.seq, 99);
    char t[64];
    assert_string_equal(gl_usage_from_peak_text(dev.usage.peak.from_peak_ns, "the peak", t, sizeof t),
                        "sampled 163 ms before the peak");
}

/* After the peak and nearer: that one, a positive distance. */
static void test_nearest_after(void **state)
{
    (void)state;
    read_usage(ROW(1000, 10, 300, 20) ROW(1205, 51, 400, 100) ROW(2000, 99, 310, 10), 1200, 50);
    assert_int_equal(dev.usage.peak.seq, 51);
    assert_int_equal(dev.usage.peak.from_peak_ns, 5 * MS);
    char t[64];
    assert_string_equal(gl_usage_from_peak_text(dev.usage.peak.from_peak_ns, "it", t, sizeof t),
                        "sampled 5.0 ms after it");
}

/* Equally near before and after: the later. At the peak's own time: 0. */
static void test_tie_and_exact(void **state)
{
    (void)state;
    read_usage(ROW(1190, 40, 300, 20) ROW(1210, 60, 400, 100), 1200, 50);
    assert_int_equal(dev.usage.peak.seq, 60);
    assert_int_equal(dev.usage.peak.from_peak_ns, 10 * MS);
    read_usage(ROW(1190, 40, 300, 20) ROW(1200, 50, 400, 100), 1200, 50);
    assert_int_equal(dev.usage.peak.seq, 50);
    assert_int_equal(dev.usage.peak.from_peak_ns, 0);
    char t[64];
    assert_string_equal(gl_usage_from_peak_text(0, "the peak", t, sizeof t), "sampled at the peak");
    assert_string_equal(gl_usage_from_peak_text(-40000, "the peak", t, sizeof t), "sampled 40 \u00b5s before the peak");
    assert_string_equal(gl_usage_from_peak_text(-1500 * MS, "the peak", t, sizeof t),
                        "sampled 1500 ms before the peak");
}

/* No samples (an older database's empty table): nothing found. */
static void test_none(void **state)
{
    (void)state;
    read_usage("", 1200, 50);
    assert_false(dev.usage.peak.found);
    assert_int_equal(dev.usage.source[0], 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nearest_before),
        cmocka_unit_test(test_nearest_after),
        cmocka_unit_test(test_tie_and_exact),
        cmocka_unit_test(test_none),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
