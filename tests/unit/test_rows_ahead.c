/* test_rows_ahead.c — the load's scan read ahead in a thread
 * (model_rows.c, gl_rows_read_ahead) gives the rows the caller's own
 * reading gives, value for value and in order, through the two tables
 * and through a changed view; closed part-way, the thread stops; a small
 * scan is read in the caller's thread. */
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

#include "model_rows.h"
#include "reader.h"
#include "store.h"

#define NEVENTS 6000 /* several batches and a part-filled last one */

static char path[256];

struct ev_buf {
    struct gl_event ev;
    uintptr_t ips[4];
};

/* allocations and frees on 3 threads, 2 streams, some failed */
static void write_db(void)
{
    snprintf(path, sizeof path, "/tmp/gl-rows-ahead-%d.db", (int)getpid());
    unlink(path);
    struct gl_run_info info = {.pid = 1, .ppid = 1, .hostname = "h", .rank = "0", .cmdline = "p",
                               .start_ns = 1000, .start_unix_ns = 5, .stack_depth = 8, .version = "t"};
    char err[256];
    struct gl_store *st = gl_store_open(path, &info, 0, err, sizeof err);
    assert_non_null(st);
    for (int i = 0; i < NEVENTS; i++) {
        struct ev_buf b;
        memset(&b, 0, sizeof b);
        int alloc = (i % 2) == 0;
        b.ev.op = (uint8_t)(alloc ? GL_OP_ALLOC : GL_OP_FREE);
        b.ev.api = GL_API_cudaMalloc;
        b.ev.kind = GL_KIND_DEVICE;
        b.ev.device = 0;
        b.ev.addr = 0x100000 + (uint64_t)(i / 2) * 4096;
        b.ev.size = alloc ? 4096 : 0;
        b.ev.ts_ns = 2000 + (uint64_t)i;
        b.ev.tid = 10 + (uint64_t)(i % 3);
        b.ev.stream = (uint64_t)(i % 5 == 0);
        b.ev.result = (i % 997 == 0 && alloc) ? 2 : 0;
        b.ev.depth = 1;
        b.ev.ips[0] = 0x1000 + (uintptr_t)(i % 7);
        assert_int_equal(gl_store_add(st, &b.ev), 0);
    }
    struct gl_run_counters c = {0};
    assert_int_equal(gl_store_finish(st, &c, 1000000, 0, 0), 0);
    gl_store_close(st);
}

struct rows {
    int64_t (*v)[GL_COL_COUNT];
    int *ref_null;
    size_t n;
    int rc;
};

/* Every row of the scan (read ahead when ahead), or the first stop_at. */
static struct rows read_all(sqlite3 *db, int ahead, size_t stop_at)
{
    struct rows o = {calloc(NEVENTS + 1, sizeof *o.v), calloc(NEVENTS + 1, sizeof *o.ref_null), 0, 0};
    assert_non_null(o.v);
    assert_non_null(o.ref_null);
    struct gl_rows g;
    assert_int_equal(gl_model_rows_open(&g, db, 0), SQLITE_OK);
    if (ahead) {
        assert_int_equal(gl_rows_read_ahead(&g, GL_ROWS_AHEAD_MIN), 0);
        assert_non_null(g.ahead);
    }
    while (o.n < stop_at && (o.rc = gl_rows_next(&g)) == SQLITE_ROW) {
        assert_true(o.n < NEVENTS);
        memcpy(o.v[o.n], g.v, sizeof g.v);
        o.ref_null[o.n++] = g.ref_null;
    }
    if (ahead && o.n == NEVENTS && stop_at > NEVENTS) /* the end is said again */
        assert_int_equal(gl_rows_next(&g), SQLITE_DONE);
    gl_model_rows_close(&g);
    assert_null(g.ahead);
    return o;
}

static void free_rows(struct rows *o)
{
    free(o->v);
    free(o->ref_null);
}

static void expect_same(sqlite3 *db)
{
    struct rows here = read_all(db, 0, SIZE_MAX), ahead = read_all(db, 1, SIZE_MAX);
    assert_int_equal(here.rc, SQLITE_DONE);
    assert_int_equal(ahead.rc, SQLITE_DONE);
    assert_int_equal(here.n, NEVENTS);
    assert_int_equal(ahead.n, NEVENTS);
    assert_memory_equal(here.v, ahead.v, NEVENTS * sizeof *here.v);
    assert_memory_equal(here.ref_null, ahead.ref_null, NEVENTS * sizeof *here.ref_null);
    assert_int_equal(here.v[NEVENTS - 1][GL_COL_SEQ], NEVENTS);
    assert_int_equal(here.v[1][GL_COL_TID], 11); /* the context's columns came with it */
    free_rows(&here);
    free_rows(&ahead);
}

static void test_same_rows(void **state)
{
    (void)state;
    write_db();
    char err[256];
    sqlite3 *db = gl_db_open_read(path, err, sizeof err);
    assert_non_null(db);
    assert_true(gl_rows_direct_ok(db));
    expect_same(db);
    sqlite3_close(db);
    /* through a view that is not the recorder's: the same */
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db,
                                  "DROP VIEW event_log; CREATE VIEW event_log AS SELECT e.seq, e.ts_ns, c.tid, e.op,"
                                  " c.api, e.kind, e.device, c.stream, c.pool, e.addr, e.size, c.result, e.stack_id,"
                                  " e.ref_seq, e.aux, e.range_seq FROM event_rows e LEFT JOIN event_contexts c"
                                  " ON c.id = e.context /* changed */",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    assert_false(gl_rows_direct_ok(db));
    expect_same(db);
    sqlite3_close(db);
    unlink(path);
}

/* Closed after a few rows, before the end, or before any: no hang, nothing
 * leaked (ASan), the rows taken the first ones. */
static void test_closed_early(void **state)
{
    (void)state;
    write_db();
    char err[256];
    sqlite3 *db = gl_db_open_read(path, err, sizeof err);
    assert_non_null(db);
    static const size_t stops[] = {0, 1, 1023, 1024, 1025, 5000};
    for (size_t k = 0; k < sizeof stops / sizeof *stops; k++) {
        struct rows o = read_all(db, 1, stops[k]);
        assert_int_equal(o.n, stops[k]);
        for (size_t i = 0; i < o.n; i++)
            assert_int_equal(o.v[i][GL_COL_SEQ], (int64_t)i + 1);
        free_rows(&o);
    }
    sqlite3_close(db);
    unlink(path);
}

/* Below GL_ROWS_AHEAD_MIN expected rows, no thread. */
static void test_small_scan_here(void **state)
{
    (void)state;
    write_db();
    char err[256];
    sqlite3 *db = gl_db_open_read(path, err, sizeof err);
    assert_non_null(db);
    struct gl_rows g;
    assert_int_equal(gl_model_rows_open(&g, db, 0), SQLITE_OK);
    assert_int_equal(gl_rows_read_ahead(&g, GL_ROWS_AHEAD_MIN - 1), -1);
    assert_null(g.ahead);
    assert_int_equal(gl_rows_next(&g), SQLITE_ROW);
    assert_int_equal(g.v[GL_COL_SEQ], 1);
    gl_model_rows_close(&g);
    sqlite3_close(db);
    unlink(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_same_rows),
        cmocka_unit_test(test_closed_early),
        cmocka_unit_test(test_small_scan_here),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
