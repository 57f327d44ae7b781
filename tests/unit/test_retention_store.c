/* test_retention_store.c — retention events through the store: a path as
 * interpose/retention.c packs it becomes one retention row (every column,
 * seq = the last event_log row before it, never an event_log row); an event
 * that is not well formed is no row and is counted in
 * meta.retention_malformed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "reader.h"
#include "retention.h"
#include "store.h"

struct ev_buf {
    struct gl_event ev;
    uintptr_t ips[32];
};

static char path[256];

static void retention_event(struct ev_buf *b, const char *text, size_t len, const struct gl_retention_rec *r)
{
    memset(b, 0, sizeof *b);
    b->ev.op = GL_OP_RETAIN;
    b->ev.api = GL_API_gpuledger_retention;
    b->ev.ts_ns = 50;
    b->ev.tid = 77;
    memcpy(b->ev.ips, text, len);
    b->ev.aux = len;
    gl_retention_pack(&b->ev, r);
}

static void test_rows(void **state)
{
    (void)state;
    snprintf(path, sizeof path, "/tmp/gl-retention-store-%d.db", (int)getpid());
    unlink(path);
    struct gl_run_info info = {.pid = 4321, .ppid = 1, .hostname = "h", .rank = "0", .cmdline = "p",
                               .start_ns = 10, .stack_depth = 8, .version = "t"};
    char err[256];
    struct gl_store *st = gl_store_open(path, &info, 0, err, sizeof err);
    assert_non_null(st);
    struct ev_buf b;
    memset(&b, 0, sizeof b);
    b.ev.op = GL_OP_ALLOC;
    b.ev.api = GL_API_cudaMalloc;
    b.ev.kind = GL_KIND_DEVICE;
    b.ev.addr = 0x1000;
    b.ev.size = 64;
    b.ev.ts_ns = 20;
    assert_int_equal(gl_store_add(st, &b.ev), 0); /* seq 1 */
    static const char good[] = "t.py: global kept (list, 1 item) \xe2\x86\x92 [0] \xe2\x86\x92 Tensor 64 B\0/w/t.py";
    struct gl_retention_rec r = {.moment = GL_RETENTION_STEP, .root_line = 9, .complete = 0, .cut = 1, .step = 3,
                                 .ptr = 0x1000, .bytes = 64, .elapsed_us = 1234};
    retention_event(&b, good, sizeof good, &r);
    assert_int_equal(gl_store_add(st, &b.ev), 0);
    r.step = -1;
    r.moment = GL_RETENTION_EXIT;
    r.complete = 1;
    r.cut = 0;
    r.root_line = 0;
    retention_event(&b, "p\0", 3, &r); /* no root file */
    assert_int_equal(gl_store_add(st, &b.ev), 0);
    retention_event(&b, "no second string", 16, &r); /* malformed: one string, no NUL */
    assert_int_equal(gl_store_add(st, &b.ev), 0);
    r.moment = 7; /* not a moment */
    retention_event(&b, "p\0f", 4, &r);
    assert_int_equal(gl_store_add(st, &b.ev), 0);
    struct gl_run_counters c = {0, 0};
    assert_int_equal(gl_store_finish(st, &c, 99, 0, 0), 0);
    gl_store_close(st);

    sqlite3 *db = gl_db_open_read(path, err, sizeof err);
    assert_non_null(db);
    assert_int_equal(gl_db_int(db, "PRAGMA user_version", -1), 5);
    assert_int_equal(gl_db_int(db, "SELECT count(*) FROM retention", -1), 2);
    assert_int_equal(gl_db_int(db, "SELECT count(*) FROM event_log", -1), 1);
    assert_int_equal(gl_db_int(db,
                               "SELECT count(*) FROM retention WHERE rowid = 1 AND seq = 1 AND ts_ns = 50 AND"
                               " pid = 4321 AND tid = 77 AND moment = 'step' AND step = 3 AND ptr = 4096 AND"
                               " bytes = 64 AND path = 't.py: global kept (list, 1 item) \xe2\x86\x92 [0] "
                               "\xe2\x86\x92 Tensor 64 B' AND root_file = '/w/t.py' AND root_line = 9 AND"
                               " elapsed_us = 1234 AND complete = 0 AND cut = 1",
                               -1),
                     1);
    assert_int_equal(gl_db_int(db,
                               "SELECT count(*) FROM retention WHERE rowid = 2 AND moment = 'exit' AND step IS NULL"
                               " AND path = 'p' AND root_file IS NULL AND root_line IS NULL AND complete = 1 AND"
                               " cut = 0",
                               -1),
                     1);
    assert_int_equal(gl_db_int(db, "SELECT value FROM meta WHERE key = 'retention_malformed'", -1), 2);
    sqlite3_close(db);
    unlink(path);
    char aux[300];
    snprintf(aux, sizeof aux, "%s-wal", path);
    unlink(aux);
    snprintf(aux, sizeof aux, "%s-shm", path);
    unlink(aux);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_rows)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
