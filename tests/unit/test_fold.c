/* test_fold.c — a bounded recording's writer (store/fold.c): which steps
 * are written in full and which folded, what a folded step leaves (the
 * allocation that outlives it, the marks, one step_stacks row per stack
 * with exact counts and bytes, seq gaps where its pairs were), an old
 * peak's window dropped when the peak rises again (per device: only once
 * every peak it holds rose again), and the decision table
 * itself (gl_fold_full). */
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

#include "fold.h"
#include "reader.h"
#include "store.h"

struct ev_buf {
    struct gl_event ev;
    uintptr_t ips[8];
};

static char path[256];
static struct gl_store *st;
static uint64_t now = 10;
static int32_t device; /* of the events add() makes */

static void add(int op, int api, int kind, uint64_t addr, uint64_t size, uintptr_t caller)
{
    struct ev_buf b;
    memset(&b, 0, sizeof b);
    b.ev.op = (uint8_t)op;
    b.ev.api = (uint16_t)api;
    b.ev.kind = (uint8_t)kind;
    b.ev.addr = addr;
    b.ev.size = size;
    b.ev.ts_ns = now++;
    b.ev.tid = 7;
    b.ev.device = device;
    b.ev.depth = caller ? 1 : 0;
    b.ev.ips[0] = caller;
    if (op == GL_OP_OOM)
        b.ev.result = 2;
    assert_int_equal(gl_store_add(st, &b.ev), 0);
}

static void mark(void)
{
    struct ev_buf b;
    memset(&b, 0, sizeof b);
    b.ev.op = GL_OP_MARK;
    b.ev.api = GL_API_gpuledger_mark;
    b.ev.flags = GL_EVF_LABEL;
    b.ev.ts_ns = now++;
    b.ev.tid = 7;
    memcpy(b.ev.ips, "step", 4);
    b.ev.aux = 4;
    assert_int_equal(gl_store_add(st, &b.ev), 0);
}

static void pair(uint64_t addr, uint64_t size, uintptr_t caller)
{
    add(GL_OP_ALLOC, GL_API_cudaMallocAsync, GL_KIND_ASYNC, addr, size, caller);
    add(GL_OP_FREE, GL_API_cudaFreeAsync, GL_KIND_NONE, addr, 0, caller + 64);
}

static int setup(void **state)
{
    (void)state;
    device = 0;
    snprintf(path, sizeof path, "/tmp/gl-fold-test-%d.db", (int)getpid());
    unlink(path);
    struct gl_run_info info = {.pid = 1, .ppid = 1, .hostname = "h", .rank = "0", .cmdline = "p",
                               .start_ns = 1, .start_unix_ns = 1, .stack_depth = 8, .version = "t"};
    char err[256];
    st = gl_store_open(path, &info, 0, err, sizeof err);
    assert_non_null(st);
    assert_int_equal(gl_store_set_budget(st, 64ULL << 20), 0);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    gl_store_close(st);
    char p2[300];
    unlink(path);
    snprintf(p2, sizeof p2, "%s-wal", path);
    unlink(p2);
    snprintf(p2, sizeof p2, "%s-shm", path);
    unlink(p2);
    return 0;
}

static int64_t q(sqlite3 *db, const char *sql)
{
    sqlite3_stmt *s;
    assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &s, NULL), SQLITE_OK);
    int64_t v = sqlite3_step(s) == SQLITE_ROW ? sqlite3_column_int64(s, 0) : -1;
    sqlite3_finalize(s);
    return v;
}

static sqlite3 *finish(void)
{
    struct gl_run_counters c = {0, 0};
    assert_int_equal(gl_store_finish(st, &c, now, 0, 0), 0);
    char err[256];
    sqlite3 *db = gl_db_open_read(path, err, sizeof err);
    assert_non_null(db);
    return db;
}

/* Steps 0-1 full (the first), 2 raises the peak, 3 has an OOM, 4 is where
 * live bytes start to grow (an allocation outlives it), 5-7 are folded;
 * the last (8, after the last mark) has no rows. */
static void test_steps(void **state)
{
    (void)state;
    const uintptr_t A = 0x400000, B = 0x500000;
    for (int s = 0; s < 8; s++) {
        uint64_t base = 0x10000000ULL * (uint64_t)(s + 1);
        pair(base, 1000, A);         /* 2 rows */
        pair(base + 0x1000, 3000, A); /* 2 rows */
        pair(base + 0x2000, 500, B); /* 2 rows */
        if (s == 2)
            pair(base + 0x3000, 1 << 20, B); /* the peak rises */
        if (s == 3)
            add(GL_OP_OOM, GL_API_cudaMalloc, GL_KIND_DEVICE, 0, 1ULL << 40, A);
        if (s == 4)
            add(GL_OP_ALLOC, GL_API_cudaMallocAsync, GL_KIND_ASYNC, base + 0x4000, 77, A); /* outlives it */
        mark();
    }
    sqlite3 *db = finish();
    /* the folded steps (5, 6, 7): 3 pairs each, by stack and contexts */
    assert_int_equal(q(db, "SELECT count(*) FROM step_windows"), 6);
    assert_int_equal(q(db, "SELECT count(*) FROM step_windows WHERE step = 4 AND why = 'growth'"), 1);
    assert_int_equal(q(db, "SELECT count(*) FROM step_windows WHERE step = 2 AND why = 'peak'"), 1);
    assert_int_equal(q(db, "SELECT count(*) FROM step_windows WHERE step IN (5, 6, 7)"), 0);
    assert_int_equal(q(db, "SELECT sum(pairs) FROM step_stacks"), 9);
    assert_int_equal(q(db, "SELECT sum(bytes) FROM step_stacks"), 3 * 4500);
    assert_int_equal(q(db, "SELECT count(*) FROM step_stacks WHERE step_lo = 6 AND step_hi = 6"), 2);
    assert_int_equal(q(db, "SELECT pairs FROM step_stacks WHERE step_lo = 5 AND bytes = 4000"), 2);
    assert_int_equal(q(db, "SELECT pairs FROM step_stacks WHERE step_lo = 5 AND bytes = 500"), 1);
    assert_int_equal(q(db, "SELECT count(*) FROM step_aggregates WHERE api = 'cudaMallocAsync'"
                           " AND free_api = 'cudaFreeAsync' AND kind = 'async'"),
                     6);
    /* rows: 8 steps of 6 (+2 at step 2, +1 OOM at 3, +1 kept at 4) + 8 marks = 60 events; the 18 of the
     * folded pairs are not rows, and the rest keep their numbers (gaps) */
    assert_int_equal(q(db, "SELECT event_count FROM run"), 60);
    assert_int_equal(q(db, "SELECT count(*) FROM event_rows"), 42);
    assert_int_equal(q(db, "SELECT max(seq) FROM event_rows"), 60);
    assert_int_equal(q(db, "SELECT count(*) FROM event_log WHERE op = 13"), 8);
    /* the allocation that outlived step 4 is a row, live at the end */
    assert_int_equal(q(db, "SELECT size FROM allocations WHERE free_ns IS NULL AND kind = 'async'"), 77);
    assert_int_equal(q(db, "SELECT value FROM meta WHERE key = 'budget_steps_folded'"), 3);
    assert_int_equal(q(db, "SELECT value FROM meta WHERE key = 'budget_pairs_folded'"), 9);
    assert_int_equal(q(db, "SELECT count(*) FROM step_windows WHERE step = 3 AND why = 'failure'"), 1);
    assert_int_equal(q(db, "SELECT count(*) FROM step_windows WHERE step = 8 AND why = 'last'"), 1);
    /* every step's end, folded or not: its mark's seq and time (event k is stamped 9 + k); the last
     * step ends at the run's end (70) after the last row (60) */
    assert_int_equal(q(db, "SELECT count(*) FROM step_ends"), 9);
    const int64_t end_seq[9] = {7, 14, 23, 31, 39, 46, 53, 60, 60};
    for (int s = 0; s < 9; s++) {
        char sql[96];
        snprintf(sql, sizeof sql, "SELECT seq FROM step_ends WHERE step = %d", s);
        assert_int_equal(q(db, sql), end_seq[s]);
        snprintf(sql, sizeof sql, "SELECT ts_ns FROM step_ends WHERE step = %d", s);
        assert_int_equal(q(db, sql), s < 8 ? 9 + end_seq[s] : 70);
    }
    /* a mark's end is the mark's own row */
    assert_int_equal(q(db, "SELECT count(*) FROM step_ends e JOIN event_log l ON l.seq = e.seq"
                           " AND l.ts_ns = e.ts_ns AND l.op = 13"),
                     8);
    sqlite3_close(db);
}

/* A step kept only for its peak is held one step more: folded when the
 * next step raises the peak again (3 by 4, 4 by 5), written when it does
 * not (5). */
static void test_old_peak_dropped(void **state)
{
    (void)state;
    for (int s = 0; s < 6; s++) {
        uint64_t base = 0x10000000ULL * (uint64_t)(s + 1);
        pair(base, 100, 0x400000);
        if (s >= 3) /* 3, 4 and 5 each raise the peak */
            pair(base + 0x1000, (uint64_t)s << 20, 0x500000);
        mark();
    }
    pair(0x90000000ULL, 100, 0x400000); /* the last, partial step */
    sqlite3 *db = finish();
    /* full: 0, 1 (first), 5 (the peak now), 6 (last); 3 and 4's windows dropped */
    assert_int_equal(q(db, "SELECT count(*) FROM step_windows"), 4);
    assert_int_equal(q(db, "SELECT count(*) FROM step_windows WHERE step = 5 AND why = 'peak'"), 1);
    assert_int_equal(q(db, "SELECT value FROM meta WHERE key = 'budget_windows_dropped'"), 2);
    assert_int_equal(q(db, "SELECT sum(pairs) FROM step_stacks WHERE step_lo = 3"), 2);
    assert_int_equal(q(db, "SELECT sum(bytes) FROM step_stacks WHERE step_lo = 4"), 100 + (4 << 20));
    assert_int_equal(q(db, "SELECT count(*) FROM event_log WHERE size = 5 << 20"), 2); /* the peak's pair stays */
    assert_int_equal(q(db, "SELECT count(*) FROM event_log WHERE size = 4 << 20"), 0);
    assert_int_equal(q(db, "SELECT peak_bytes FROM device_stats WHERE device = 0"), 5 << 20);
    sqlite3_close(db);
}

/* Peaks of two devices, each on its own: step 3 raises both (held), step
 * 4 device 0's only, so 3 is written holding device 1's; step 6 raises
 * device 1's: 3 holds none and is dropped, 4 (device 0's) stays. */
static void test_peaks_per_device(void **state)
{
    (void)state;
    for (int s = 0; s < 9; s++) {
        uint64_t base = 0x10000000ULL * (uint64_t)(s + 1);
        for (device = 0; device < 2; device++) {
            pair(base + (uint64_t)device * 0x8000000, 100, 0x400000);
            if ((s == 3) || (s == 4 && device == 0) || (s == 6 && device == 1))
                pair(base + (uint64_t)device * 0x8000000 + 0x1000, (uint64_t)(s + device) << 20, 0x500000);
        }
        device = 0;
        mark();
    }
    sqlite3 *db = finish();
    /* full: 0, 1 (first), 4 (device 0's peak), 6 (device 1's), 9 (last); 3 dropped when 6 rose */
    assert_int_equal(q(db, "SELECT count(*) FROM step_windows"), 5);
    assert_int_equal(q(db, "SELECT count(*) FROM step_windows WHERE step = 4 AND why = 'peak'"), 1);
    assert_int_equal(q(db, "SELECT count(*) FROM step_windows WHERE step = 6 AND why = 'peak'"), 1);
    assert_int_equal(q(db, "SELECT count(*) FROM step_windows WHERE step = 3"), 0);
    assert_int_equal(q(db, "SELECT value FROM meta WHERE key = 'budget_windows_dropped'"), 1);
    /* step 3's pairs (100 B and 3 MiB on device 0, 100 B and 4 MiB on device 1) counted under step 3 */
    assert_int_equal(q(db, "SELECT sum(pairs) FROM step_stacks WHERE step_lo = 3"), 4);
    assert_int_equal(q(db, "SELECT sum(bytes) FROM step_stacks WHERE step_lo = 3"), 200 + (7 << 20));
    assert_int_equal(q(db, "SELECT count(*) FROM event_log WHERE size = 4 << 20"), 2); /* step 4's, device 0 */
    assert_int_equal(q(db, "SELECT count(*) FROM event_log WHERE size = 4 << 20 AND device = 0"), 2);
    assert_int_equal(q(db, "SELECT count(*) FROM event_log WHERE size = 7 << 20 AND device = 1"), 2);
    assert_int_equal(q(db, "SELECT count(*) FROM event_log WHERE size IN (3 << 20)"), 0);
    assert_int_equal(q(db, "SELECT peak_bytes FROM device_stats WHERE device = 0"), 4 << 20);
    assert_int_equal(q(db, "SELECT peak_bytes FROM device_stats WHERE device = 1"), 7 << 20);
    sqlite3_close(db);
}

/* The decision: failures and peaks always; first, growth and last steps
 * only below 80 % of the budget. */
static void test_decision(void **state)
{
    (void)state;
    struct gl_fold f;
    memset(&f, 0, sizeof f);
    f.step = 10;
    assert_int_equal(gl_fold_full(&f, 0, 0, 0), 0);
    assert_int_equal(gl_fold_full(&f, 1, 0, 0), 1);
    assert_int_equal(gl_fold_full(&f, 0, 1, 0), 1);
    assert_int_equal(gl_fold_full(&f, 0, 0, 1), 1);
    f.keep = 1;
    assert_int_equal(gl_fold_full(&f, 0, 0, 0), 1);
    f.keep = 0;
    f.step = 1;
    assert_int_equal(gl_fold_full(&f, 0, 0, 0), 1);
    f.level = 1; /* near the budget */
    assert_int_equal(gl_fold_full(&f, 0, 1, 1), 0);
    assert_int_equal(gl_fold_full(&f, 1, 0, 0), 1);
    f.level = 2; /* past it */
    f.keep = 1;
    assert_int_equal(gl_fold_full(&f, 0, 0, 0), 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_steps, setup, teardown),
        cmocka_unit_test_setup_teardown(test_old_peak_dropped, setup, teardown),
        cmocka_unit_test_setup_teardown(test_peaks_per_device, setup, teardown),
        cmocka_unit_test(test_decision),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
