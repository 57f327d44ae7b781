/* test_store.c — the writing side of the schema, fed synthetic events:
 * stack deduplication, frame symbolization, free/alloc pairing, range
 * unmaps, device reset, per-device peaks, and the documented views. */
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

#include "reader.h"
#include "store.h"

struct ev_buf {
    struct gl_event ev;
    uintptr_t ips[8];
};

__attribute__((noinline)) void planted_allocator(void)
{
    __asm__ volatile("");
}

__attribute__((noinline)) void planted_caller(void)
{
    __asm__ volatile("");
}

static char path[256];
static struct gl_store *st;

static void add(int op, int api, int kind, int dev, uint64_t addr, uint64_t size, uint64_t ts, int depth)
{
    struct ev_buf b;
    memset(&b, 0, sizeof b);
    b.ev.op = (uint8_t)op;
    b.ev.api = (uint16_t)api;
    b.ev.kind = (uint8_t)kind;
    b.ev.device = dev;
    b.ev.addr = addr;
    b.ev.size = size;
    b.ev.ts_ns = ts;
    b.ev.tid = 77;
    b.ev.depth = (uint16_t)depth;
    /* return addresses just inside the two planted functions */
    b.ev.ips[0] = (uintptr_t)&planted_allocator + 1;
    b.ev.ips[1] = (uintptr_t)&planted_caller + 1;
    assert_int_equal(gl_store_add(st, &b.ev), 0);
}

/* Finishes the store (counters c, the run's end, exit code, signal) and
 * opens its file for reading. */
static sqlite3 *finish_and_open(const struct gl_run_counters *c, uint64_t end_ns, int exit_code, int sig)
{
    assert_int_equal(gl_store_finish(st, c, end_ns, exit_code, sig), 0);
    char err[256];
    sqlite3 *db = gl_db_open_read(path, err, sizeof err);
    assert_non_null(db);
    return db;
}

static int setup(void **state)
{
    (void)state;
    snprintf(path, sizeof path, "/tmp/gl-store-test-%d.db", (int)getpid());
    unlink(path);
    struct gl_run_info info = {.pid = 1234, .ppid = 1, .hostname = "host", .rank = "0", .cmdline = "prog a b",
                               .start_ns = 1000, .start_unix_ns = 5, .stack_depth = 48, .version = "t"};
    char err[256];
    st = gl_store_open(path, &info, 1, err, sizeof err);
    assert_non_null(st);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    gl_store_close(st);
    char wal[300];
    unlink(path);
    snprintf(wal, sizeof wal, "%s-wal", path);
    unlink(wal);
    snprintf(wal, sizeof wal, "%s-shm", path);
    unlink(wal);
    return 0;
}

static void test_views_and_pairing(void **state)
{
    (void)state;
    add(GL_OP_ALLOC, GL_API_cudaMalloc, GL_KIND_DEVICE, 0, 0x1000, 100, 10, 2);  /* seq 1 */
    add(GL_OP_ALLOC, GL_API_cudaMalloc, GL_KIND_DEVICE, 0, 0x2000, 200, 11, 2);  /* seq 2, same stack */
    add(GL_OP_FREE, GL_API_cudaFree, GL_KIND_NONE, 0, 0x1000, 0, 12, 1);         /* seq 3 -> 1 */
    add(GL_OP_ALLOC, GL_API_cudaMallocAsync, GL_KIND_ASYNC, 1, 0x1000, 300, 13, 0); /* reuse, dev 1 */
    add(GL_OP_FREE, GL_API_cudaFree, GL_KIND_NONE, 0, 0x9999, 0, 14, 0);         /* unmatched */
    add(GL_OP_OOM, GL_API_cudaMalloc, GL_KIND_DEVICE, 0, 0, 1 << 30, 15, 2);
    /* VMM: reserve, two handles mapped, one unmap over both, release, free */
    add(GL_OP_RESERVE, GL_API_cuMemAddressReserve, GL_KIND_VA, -1, 0x100000, 0x400000, 20, 0);
    add(GL_OP_CREATE, GL_API_cuMemCreate, GL_KIND_PHYSICAL, 0, 0xa, 0x200000, 21, 0);
    add(GL_OP_MAP, GL_API_cuMemMap, GL_KIND_MAPPING, -1, 0x100000, 0x200000, 22, 0);
    add(GL_OP_CREATE, GL_API_cuMemCreate, GL_KIND_PHYSICAL, 0, 0xb, 0x200000, 23, 0);
    add(GL_OP_MAP, GL_API_cuMemMap, GL_KIND_MAPPING, -1, 0x300000, 0x200000, 24, 0);
    add(GL_OP_UNMAP, GL_API_cuMemUnmap, GL_KIND_MAPPING, -1, 0x100000, 0x400000, 25, 0); /* two rows */
    add(GL_OP_RELEASE, GL_API_cuMemRelease, GL_KIND_PHYSICAL, -1, 0xa, 0, 26, 0);
    struct gl_run_counters c = {3, 4};
    assert_int_equal(gl_store_commit(st, &c), 0);
    /* reset device 0: 0x2000 (200 B) and handle 0xb are still live there */
    add(GL_OP_RESET, GL_API_cudaDeviceReset, GL_KIND_NONE, 0, 0, 0, 30, 0);
    sqlite3 *db = finish_and_open(&c, 99, 0, 0);
    assert_int_equal(gl_db_int(db, "SELECT count(*) FROM events", -1), 17);
    assert_int_equal(gl_db_int(db, "SELECT max(seq) FROM events", -1), 17); /* numbered 1..17 */
    /* the ref_seq index, built when the run ended */
    assert_int_equal(gl_db_int(db, "SELECT count(*) FROM sqlite_master WHERE name = 'event_log_ref'", -1), 1);
    assert_int_equal(gl_db_int(db, "SELECT event_count FROM run", -1), 17);
    assert_int_equal(gl_db_int(db, "SELECT dropped_events FROM run", -1), 3);
    assert_int_equal(gl_db_int(db, "SELECT truncated_stacks FROM run", -1), 4);
    assert_int_equal(gl_db_int(db, "SELECT unmatched_frees FROM run", -1), 1);
    assert_int_equal(gl_db_int(db, "SELECT end_ns FROM run", -1), 99);
    /* same stack, one id; depth 0 is "no stack" */
    assert_int_equal(gl_db_int(db, "SELECT count(*) FROM stacks", -1), 2);
    assert_int_equal(gl_db_int(db, "SELECT count(DISTINCT stack_id) FROM event_log WHERE seq IN (1,2)", -1), 1);
    assert_int_equal(gl_db_int(db, "SELECT count(*) FROM event_log WHERE seq = 4 AND stack_id IS NULL", -1), 1);
    sqlite3_stmt *s;
    assert_int_equal(sqlite3_prepare_v2(db, "SELECT symbol FROM stack_frames WHERE stack_id = 1 ORDER BY depth", -1,
                                        &s, NULL),
                     SQLITE_OK);
    assert_int_equal(sqlite3_step(s), SQLITE_ROW);
    assert_string_equal((const char *)sqlite3_column_text(s, 0), "planted_allocator");
    assert_int_equal(sqlite3_step(s), SQLITE_ROW);
    assert_string_equal((const char *)sqlite3_column_text(s, 0), "planted_caller");
    assert_int_equal(sqlite3_step(s), SQLITE_DONE);
    sqlite3_finalize(s);
    /* pairing */
    assert_int_equal(gl_db_int(db, "SELECT ref_seq FROM event_log WHERE seq = 3", -1), 1);
    assert_int_equal(gl_db_int(db, "SELECT size FROM event_log WHERE seq = 3", -1), 100);
    assert_int_equal(gl_db_int(db, "SELECT count(*) FROM allocations", -1), 5); /* 3 alloc + 2 create */
    assert_int_equal(gl_db_int(db, "SELECT free_ns FROM allocations WHERE id = 1", -1), 12);
    assert_int_equal(gl_db_int(db, "SELECT count(*) FROM allocations WHERE free_ns IS NULL", -1), 1);
    assert_int_equal(gl_db_int(db, "SELECT id FROM allocations WHERE free_ns IS NULL", -1), 4); /* dev 1 */
    assert_int_equal(gl_db_int(db, "SELECT count(*) FROM allocations WHERE free_api = 'cudaDeviceReset'", -1), 2);
    assert_int_equal(gl_db_int(db, "SELECT count(*) FROM events WHERE op = 'oom' AND size = 1073741824 AND "
                                   "api = 'cudaMalloc'",
                               -1),
                     1);
    /* one cuMemUnmap over two mappings ends both */
    assert_int_equal(gl_db_int(db, "SELECT count(*) FROM events WHERE op = 'unmap'", -1), 2);
    assert_int_equal(gl_db_int(db, "SELECT count(*) FROM mappings WHERE end_ns = 25", -1), 2);
    assert_int_equal(gl_db_int(db, "SELECT count(*) FROM mappings WHERE end_ns IS NULL", -1), 1); /* the VA */
    /* peaks: dev 0 = 100 + 200 + 2 MiB + 2 MiB at seq of the second create */
    assert_int_equal(gl_db_int(db, "SELECT peak_bytes FROM device_stats WHERE device = 0", -1), 300 + 0x400000 - 100);
    assert_int_equal(gl_db_int(db, "SELECT live_bytes FROM device_stats WHERE device = 0", -1), 0);
    assert_int_equal(gl_db_int(db, "SELECT peak_bytes FROM device_stats WHERE device = 1", -1), 300);
    sqlite3_close(db);
}

/* A run ending on a fatal signal is not indexed on its way down; the
 * views pair its rows all the same. */
static void test_no_index_after_signal(void **state)
{
    (void)state;
    add(GL_OP_ALLOC, GL_API_cudaMalloc, GL_KIND_DEVICE, 0, 0x1000, 100, 10, 2); /* seq 1 */
    add(GL_OP_ALLOC, GL_API_cudaMalloc, GL_KIND_DEVICE, 0, 0x2000, 200, 11, 2); /* seq 2 */
    add(GL_OP_FREE, GL_API_cudaFree, GL_KIND_NONE, 0, 0x2000, 0, 12, 1);        /* seq 3 -> 2 */
    struct gl_run_counters c = {0, 0};
    sqlite3 *db = finish_and_open(&c, 99, -1, 9);
    assert_int_equal(gl_db_int(db, "SELECT count(*) FROM sqlite_master WHERE name = 'event_log_ref'", -1), 0);
    /* the views' one-by-one lookups have indexes of their own, kept while recording */
    assert_int_equal(gl_db_int(db, "SELECT count(*) FROM sqlite_master WHERE name IN ('event_log_tags', "
                                   "'event_log_resizes', 'event_log_sets', 'names_ref')",
                               -1),
                     4);
    assert_int_equal(gl_db_int(db, "SELECT free_ns FROM allocations WHERE id = 2", -1), 12);
    assert_int_equal(gl_db_int(db, "SELECT id FROM allocations WHERE free_ns IS NULL", -1), 1);
    sqlite3_close(db);
}

/* The ref_seq index is given up past its budget (the program's exit waits
 * for it): with none, at SQLite's first progress callback; the run is
 * whole without it. */
static void test_index_given_up_past_budget(void **state)
{
    (void)state;
    for (int i = 0; i < 2000; i++) {
        add(GL_OP_ALLOC, GL_API_cudaMalloc, GL_KIND_DEVICE, 0, 0x1000, 100, 10 + 2 * (uint64_t)i, 2);
        add(GL_OP_FREE, GL_API_cudaFree, GL_KIND_NONE, 0, 0x1000, 0, 11 + 2 * (uint64_t)i, 1);
    }
    gl_store_set_index_budget(st, 0);
    struct gl_run_counters c = {0, 0};
    sqlite3 *db = finish_and_open(&c, 99999, 0, 0);
    assert_int_equal(gl_db_int(db, "SELECT count(*) FROM sqlite_master WHERE name = 'event_log_ref'", -1), 0);
    assert_int_equal(gl_db_int(db, "SELECT count(*) FROM allocations WHERE free_ns = alloc_ns + 1", -1), 2000);
    assert_int_equal(gl_db_int(db, "SELECT end_ns FROM run", -1), 99999);
    sqlite3_close(db);
}

/* A new stack's entries go GL_STACK_ENTRY_BATCH to a statement, the rest
 * one by one: 37 frames (two batches and five) are all there, in order. */
static void test_deep_stack_entries(void **state)
{
    (void)state;
    struct {
        struct gl_event ev;
        uintptr_t ips[40];
    } b;
    memset(&b, 0, sizeof b);
    b.ev.op = GL_OP_ALLOC;
    b.ev.api = GL_API_cudaMalloc;
    b.ev.kind = GL_KIND_DEVICE;
    b.ev.addr = 0x1000;
    b.ev.size = 64;
    b.ev.ts_ns = 5;
    b.ev.depth = 37;
    for (int i = 0; i < 37; i++)
        b.ev.ips[i] = 0x500000 + (uintptr_t)(i % 30) * 16; /* frames 30..36 repeat 0..6 */
    assert_int_equal(gl_store_add(st, &b.ev), 0);
    struct gl_run_counters c = {0, 0};
    sqlite3 *db = finish_and_open(&c, 99, 0, 0);
    assert_int_equal(gl_db_int(db, "SELECT count(*) FROM stack_entries WHERE stack_id = 1", -1), 37);
    assert_int_equal(gl_db_int(db, "SELECT count(*) FROM frames", -1), 30);
    assert_int_equal(gl_db_int(db, "SELECT count(*) FROM stack_frames WHERE stack_id = 1 AND ip = 0x500000 + "
                                   "(depth % 30) * 16",
                               -1),
                     37);
    assert_int_equal(gl_db_int(db, "SELECT depth FROM stacks WHERE id = 1", -1), 37);
    sqlite3_close(db);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_views_and_pairing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_no_index_after_signal, setup, teardown),
        cmocka_unit_test_setup_teardown(test_index_given_up_past_budget, setup, teardown),
        cmocka_unit_test_setup_teardown(test_deep_stack_entries, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
