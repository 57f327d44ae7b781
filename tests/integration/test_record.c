/* test_record.c — end to end: real programs against the fake CUDA runtime
 * and driver, under `gpuledger run`, with exact expectations on the
 * database: counts, sizes, which allocations are unfreed, the function at
 * stack depth 0, OOM records, driver entry points, threads, exit status. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"


static void test_alloc1000_exact(void **state)
{
    (void)state;
    static struct run_result r;
    h_run(&r, NULL, ARGV(GL, "run", "-q", "-o", "a.db", "--", PROG("alloc1000")));
    assert_int_equal(r.status, 0);
    sqlite3 *db = h_open("a.db");
    assert_int_equal(h_int(db, "SELECT count(*) FROM allocations"), 1000);
    assert_int_equal(h_int(db, "SELECT count(*) FROM allocations WHERE free_ns IS NULL"), 3);
    assert_string_equal(h_text(db, "SELECT group_concat(size) FROM (SELECT size FROM allocations WHERE free_ns IS "
                                   "NULL ORDER BY size)"),
                        "1100,1500,1900");
    assert_int_equal(h_int(db, "SELECT sum(size) FROM allocations"), 1000 * 1000 + 999 * 1000 / 2);
    assert_int_equal(h_int(db, "SELECT count(*) FROM events WHERE op = 'free'"), 997);
    /* depth 0 of every allocation is the program's own allocating function */
    assert_int_equal(h_int(db, "SELECT count(*) FROM allocations a JOIN stack_frames f ON f.stack_id = a.stack_id "
                               "AND f.depth = 0 WHERE f.symbol = 'allocate_buffers' AND f.module LIKE '%/alloc1000'"),
                     1000);
    assert_int_equal(h_int(db, "SELECT count(*) FROM events e JOIN stack_frames f ON f.stack_id = e.stack_id AND "
                               "f.depth = 0 WHERE e.op = 'free' AND f.symbol = 'release_buffers'"),
                     997);
    assert_string_equal(h_text(db, "SELECT symbol FROM stack_frames WHERE stack_id = (SELECT stack_id FROM "
                                   "allocations LIMIT 1) AND depth = 1"),
                        "main");
    /* none of gpuledger's own frames anywhere */
    assert_int_equal(h_int(db, "SELECT count(*) FROM stack_frames WHERE module LIKE '%libgpuledger%'"), 0);
    assert_int_equal(h_int(db, "SELECT exit_code FROM run"), 0);
    assert_int_equal(h_int(db, "SELECT dropped_events FROM run"), 0);
    assert_int_equal(h_int(db, "SELECT unmatched_frees FROM run"), 0);
    assert_int_equal(h_int(db, "SELECT count(*) FROM run WHERE pid > 0 AND cmdline LIKE '%alloc1000%' AND "
                               "end_ns >= start_ns AND schema_version = 5"),
                     1);
    assert_int_equal(h_int(db, "SELECT count(*) FROM modules WHERE path LIKE '%/alloc1000' AND "
                               "length(build_id) = 40"),
                     1);
    /* time stamps (TSC ticks where the TSC is invariant, turned into
     * CLOCK_MONOTONIC ns by the writer): inside the run, in the order of
     * the one thread's calls */
    assert_int_equal(h_int(db, "SELECT count(*) FROM event_log e, run r WHERE e.ts_ns < r.start_ns OR "
                               "e.ts_ns > r.end_ns"),
                     0);
    assert_int_equal(h_int(db, "SELECT count(*) FROM event_log a JOIN event_log b ON b.seq = a.seq + 1 "
                               "WHERE b.ts_ns < a.ts_ns AND a.op IN (1, 2) AND b.op IN (1, 2)"),
                     0);
    const char *clock = h_text(db, "SELECT value FROM meta WHERE key = 'clock'");
    assert_true(!strcmp(clock, "tsc") || !strcmp(clock, "monotonic"));
    sqlite3_close(db);
    h_run(&r, ENV("GPULEDGER_CLOCK=monotonic"), ARGV(GL, "run", "-q", "-o", "mono.db", "--", PROG("alloc1000")));
    assert_int_equal(r.status, 0);
    db = h_open("mono.db");
    assert_string_equal(h_text(db, "SELECT value FROM meta WHERE key = 'clock'"), "monotonic");
    assert_int_equal(h_int(db, "SELECT count(*) FROM meta WHERE key = 'tsc_ns_per_tick'"), 0);
    assert_int_equal(h_int(db, "SELECT count(*) FROM allocations"), 1000);
    sqlite3_close(db);
}

/* The fast unwinder and libunwind give the same stacks, frame for frame;
 * the run says how its stacks were walked (meta unwind_*). */
static void test_fast_unwind_matches_libunwind(void **state)
{
    (void)state;
    static struct run_result r;
    h_run(&r, ENV("GPULEDGER_UNWIND=libunwind"), ARGV(GL, "run", "-q", "-o", "slow.db", "--", PROG("alloc1000")));
    assert_int_equal(r.status, 0);
    h_run(&r, NULL, ARGV(GL, "run", "-q", "-o", "fast.db", "--", PROG("alloc1000")));
    assert_int_equal(r.status, 0);
    sqlite3 *slow = h_open("slow.db"), *fast = h_open("fast.db");
    char attach[4200];
    snprintf(attach, sizeof attach, "ATTACH '%s/slow.db' AS slow", h_dir());
    assert_int_equal(sqlite3_exec(fast, attach, NULL, NULL, NULL), SQLITE_OK);
#define STACK_OF(db) "(SELECT group_concat(coalesce(f.symbol, '?') || '@' || f.offset, ',') FROM (SELECT * FROM " db \
                     "stack_frames WHERE stack_id = e.stack_id ORDER BY depth) f)"
    assert_int_equal(h_int(fast, "SELECT count(*) FROM main.events e WHERE e.stack_id IS NOT NULL"), 2000 - 3);
    assert_int_equal(h_int(fast, "SELECT count(*) FROM main.events e JOIN slow.events s ON s.seq = e.seq WHERE "
                                 "length(" STACK_OF("main.") ") > 20 AND " STACK_OF("main.") " = (SELECT "
                                 "group_concat(coalesce(f.symbol, '?') || '@' || f.offset, ',') FROM (SELECT * FROM "
                                 "slow.stack_frames WHERE stack_id = s.stack_id ORDER BY depth) f)"),
                     2000 - 3);
#undef STACK_OF
    assert_int_equal(h_int(fast, "SELECT value FROM main.meta WHERE key = 'unwind_libunwind'"), 0);
    assert_int_equal(h_int(fast, "SELECT count(*) FROM meta WHERE key = 'unwind_first_giveup'"), 0);
    assert_true(h_int(fast, "SELECT value FROM meta WHERE key = 'unwind_walks'") > 1900);
    assert_true(h_int(fast, "SELECT value FROM meta WHERE key = 'unwind_memo_hits'") > 1000);
    assert_int_equal(h_int(slow, "SELECT value FROM meta WHERE key = 'unwind_walks'"), 0);
    sqlite3_close(slow);
    sqlite3_close(fast);
}

static void test_oom_recorded_with_size_and_stack(void **state)
{
    (void)state;
    static struct run_result r;
    h_run(&r, ENV("FAKECUDA_FAIL_ALLOC=3"), ARGV(GL, "run", "-q", "-o", "o.db", PROG("oom")));
    assert_int_equal(r.status, 1); /* the program's own status passes through */
    assert_non_null(strstr(r.out, "oom: 1 allocation(s) failed"));
    sqlite3 *db = h_open("o.db");
    assert_int_equal(h_int(db, "SELECT count(*) FROM events WHERE op = 'oom'"), 1);
    assert_int_equal(h_int(db, "SELECT size FROM events WHERE op = 'oom'"), 3 << 20);
    assert_int_equal(h_int(db, "SELECT result FROM events WHERE op = 'oom'"), 2);
    assert_string_equal(h_text(db, "SELECT f.symbol FROM events e JOIN stack_frames f ON f.stack_id = e.stack_id "
                                   "AND f.depth = 0 WHERE e.op = 'oom'"),
                        "grow_cache");
    assert_int_equal(h_int(db, "SELECT count(*) FROM allocations"), 4);
    assert_int_equal(h_int(db, "SELECT count(*) FROM allocations WHERE free_ns IS NULL"), 0);
    assert_int_equal(h_int(db, "SELECT exit_code FROM run"), 1);
    sqlite3_close(db);
}

static void test_driver_entry_points_and_vmm(void **state)
{
    (void)state;
    static struct run_result r;
    h_run(&r, NULL, ARGV(GL, "run", "-q", "-o", "p.db", PROG("procaddr")));
    assert_int_equal(r.status, 0);
    sqlite3 *db = h_open("p.db");
    assert_string_equal(h_text(db, "SELECT group_concat(op || ':' || api, ' ') FROM (SELECT op, api FROM events "
                                   "ORDER BY seq)"),
                        "alloc:cuMemAlloc_v2 free:cuMemFree_v2 reserve:cuMemAddressReserve create:cuMemCreate "
                        "map:cuMemMap create:cuMemCreate map:cuMemMap unmap:cuMemUnmap unmap:cuMemUnmap "
                        "release:cuMemRelease release:cuMemRelease unreserve:cuMemAddressFree");
    assert_string_equal(h_text(db, "SELECT f.symbol FROM events e JOIN stack_frames f ON f.stack_id = e.stack_id "
                                   "AND f.depth = 0 WHERE e.api = 'cuMemAlloc_v2'"),
                        "driver_alloc_via_procaddr");
    assert_string_equal(h_text(db, "SELECT f.symbol FROM events e JOIN stack_frames f ON f.stack_id = e.stack_id "
                                   "AND f.depth = 0 WHERE e.api = 'cuMemCreate'"),
                        "expandable_segment");
    assert_int_equal(h_int(db, "SELECT count(*) FROM allocations WHERE kind = 'physical' AND size = 2097152 AND "
                               "free_ns IS NOT NULL"),
                     2);
    assert_int_equal(h_int(db, "SELECT count(*) FROM mappings WHERE end_ns IS NOT NULL"), 3);
    assert_int_equal(h_int(db, "SELECT size FROM mappings WHERE kind = 'va'"), 8 << 20);
    assert_int_equal(h_int(db, "SELECT peak_bytes FROM device_stats WHERE device = 0"), 4 << 20);
    sqlite3_close(db);
}

static void test_eight_threads_lose_nothing(void **state)
{
    (void)state;
    static struct run_result r;
    h_run(&r, ENV("GPULEDGER_FULL_WAIT_MS=5000"), ARGV(GL, "run", "-q", "-o", "t.db", PROG("threads"), "8", "2000"));
    assert_int_equal(r.status, 0);
    sqlite3 *db = h_open("t.db");
    assert_int_equal(h_int(db, "SELECT count(*) FROM events"), 32000);
    assert_int_equal(h_int(db, "SELECT count(*) FROM allocations WHERE api = 'cudaMallocAsync' AND size = 512 "
                               "AND free_api = 'cudaFreeAsync'"),
                     16000);
    assert_int_equal(h_int(db, "SELECT count(DISTINCT tid) FROM events"), 8);
    assert_int_equal(h_int(db, "SELECT dropped_events + unmatched_frees FROM run"), 0);
    assert_int_equal(h_int(db, "SELECT live_bytes FROM device_stats WHERE device = 0"), 0);
    /* stacks are deduplicated: a handful, not thousands */
    assert_true(h_int(db, "SELECT count(*) FROM stacks") <= 8);
    sqlite3_close(db);
}

static long allocator_calls(const char *out)
{
    const char *p = strstr(out, "pairs: ");
    return p ? atol(p + 7) : -1;
}

static void test_hot_path_never_mallocs(void **state)
{
    (void)state;
    if (getenv("GL_SANITIZED")) /* the sanitizer owns malloc: the count means nothing */
        skip();
    static struct run_result bare, prof;
    h_run(&bare, NULL, ARGV(PROG("nomalloc")));
    h_run(&prof, NULL, ARGV(GL, "run", "-q", "-o", "n.db", PROG("nomalloc")));
    assert_int_equal(bare.status, 0);
    assert_int_equal(prof.status, 0);
    long b = allocator_calls(bare.out), p = allocator_calls(prof.out);
    assert_true(b >= 0);
    assert_int_equal(p, b); /* gpuledger added no malloc/free on the application thread */
    sqlite3 *db = h_open("n.db");
    assert_int_equal(h_int(db, "SELECT count(*) FROM events"), 22000);
    sqlite3_close(db);
}

static void test_exit_status_and_crash(void **state)
{
    (void)state;
    static struct run_result r;
    h_run(&r, NULL, ARGV(GL, "run", "-q", "-o", "e.db", PROG("misc"), "exit", "7"));
    assert_int_equal(r.status, 7);
    sqlite3 *db = h_open("e.db");
    assert_int_equal(h_int(db, "SELECT exit_code FROM run"), 7);
    assert_int_equal(h_int(db, "SELECT count(*) FROM allocations WHERE free_ns IS NULL AND size = 4096"), 1);
    sqlite3_close(db);
    h_run(&r, NULL, ARGV(GL, "run", "-q", "-o", "r.db", PROG("misc"), "return", "5"));
    assert_int_equal(r.status, 5);
    db = h_open("r.db");
    assert_int_equal(h_int(db, "SELECT exit_code FROM run"), 5);
    sqlite3_close(db);
    if (getenv("GL_SANITIZED")) /* the sanitizer turns SIGSEGV into its own report and exit(1) */
        return;
    h_run(&r, NULL, ARGV(GL, "run", "-q", "-o", "c.db", PROG("misc"), "crash"));
    assert_int_equal(r.status, 128 + 11);
    db = h_open("c.db");
    assert_int_equal(h_int(db, "SELECT exit_signal FROM run"), 11);
    assert_int_equal(h_int(db, "SELECT count(*) FROM events"), 1);
    assert_true(h_int(db, "SELECT end_ns FROM run") > 0);
    sqlite3_close(db);
}

static void test_fork_gives_child_its_own_db(void **state)
{
    (void)state;
    static struct run_result r;
    h_run(&r, NULL, ARGV(GL, "run", "-q", "-o", "f-%p.db", PROG("misc"), "fork"));
    assert_int_equal(r.status, 0);
    char cmd[512];
    snprintf(cmd, sizeof cmd, "ls %s/f-*.db | wc -l > %s/.n", h_dir(), h_dir());
    assert_int_equal(system(cmd), 0);
    snprintf(cmd, sizeof cmd, "%s/.n", h_dir());
    FILE *f = fopen(cmd, "r");
    int n = 0;
    assert_int_equal(fscanf(f, "%d", &n), 1);
    fclose(f);
    assert_int_equal(n, 2);
    /* each has its own 1 MiB alloc+free; the child's ppid is the parent's pid */
    snprintf(cmd, sizeof cmd,
             "for d in %s/f-*.db; do sqlite3 $d 'SELECT pid, ppid, (SELECT count(*) FROM events) FROM run'; done > "
             "%s/.rows",
             h_dir(), h_dir());
    assert_int_equal(system(cmd), 0);
    snprintf(cmd, sizeof cmd, "%s/.rows", h_dir());
    f = fopen(cmd, "r");
    long pid[2], ppid[2], ev[2];
    for (int i = 0; i < 2; i++)
        assert_int_equal(fscanf(f, "%ld|%ld|%ld", &pid[i], &ppid[i], &ev[i]), 3);
    fclose(f);
    assert_int_equal(ev[0], 2);
    assert_int_equal(ev[1], 2);
    assert_true(ppid[0] == pid[1] || ppid[1] == pid[0]);
}

static void test_reset_frees_everything(void **state)
{
    (void)state;
    static struct run_result r;
    h_run(&r, NULL, ARGV(GL, "run", "-q", "-o", "x.db", PROG("misc"), "reset"));
    assert_int_equal(r.status, 0);
    sqlite3 *db = h_open("x.db");
    assert_int_equal(h_int(db, "SELECT count(*) FROM allocations"), 3);
    assert_int_equal(h_int(db, "SELECT count(*) FROM allocations WHERE free_api = 'cudaDeviceReset'"), 3);
    assert_int_equal(h_int(db, "SELECT count(*) FROM events WHERE op = 'reset'"), 1);
    sqlite3_close(db);
}

static void test_pools_managed_host_devices(void **state)
{
    (void)state;
    static struct run_result r;
    h_run(&r, NULL, ARGV(GL, "run", "-q", "-o", "pool.db", PROG("misc"), "pool"));
    assert_int_equal(r.status, 0);
    sqlite3 *db = h_open("pool.db");
    assert_int_equal(h_int(db, "SELECT count(*) FROM allocations WHERE api = 'cudaMallocFromPoolAsync' AND "
                               "size = 1048576 AND pool != 0 AND free_ns IS NOT NULL"),
                     3);
    assert_int_equal(h_int(db, "SELECT count(DISTINCT pool) FROM allocations"), 1);
    assert_int_equal(h_int(db, "SELECT count(*) FROM events WHERE op = 'trim' AND aux IS NULL AND pool = "
                               "(SELECT pool FROM allocations LIMIT 1)"),
                     1);
    sqlite3_close(db);

    h_run(&r, NULL, ARGV(GL, "run", "-q", "-o", "m.db", PROG("misc"), "managed"));
    assert_int_equal(r.status, 0);
    db = h_open("m.db");
    assert_string_equal(h_text(db, "SELECT group_concat(kind || ':' || size, ' ') FROM (SELECT kind, size FROM "
                                   "allocations ORDER BY id)"),
                        "managed:1048576 host:8192 device:10240");
    /* pinned host memory is not device memory */
    assert_int_equal(h_int(db, "SELECT peak_bytes FROM device_stats WHERE device = 0"), 1048576 + 10240);
    sqlite3_close(db);

    h_run(&r, NULL, ARGV(GL, "run", "-q", "-o", "d.db", PROG("misc"), "devices"));
    assert_int_equal(r.status, 0);
    db = h_open("d.db");
    assert_int_equal(h_int(db, "SELECT peak_bytes FROM device_stats WHERE device = 0"), 4 << 20);
    assert_int_equal(h_int(db, "SELECT peak_bytes FROM device_stats WHERE device = 1"), 4 << 20);
    assert_string_equal(h_text(db, "SELECT group_concat(device || ':' || (size >> 20), ' ') FROM (SELECT device, "
                                   "size FROM allocations ORDER BY id)"),
                        "0:1 0:1 1:2 0:1 0:1 1:2");
    sqlite3_close(db);

    /* a stream-ordered call on stream 0 through its _ptsz entry point is
     * stream-ordered too: the pool it used is sampled */
    h_run(&r, NULL, ARGV(GL, "run", "-q", "-o", "ptsz.db", PROG("misc"), "ptsz"));
    assert_int_equal(r.status, 0);
    db = h_open("ptsz.db");
    assert_string_equal(h_text(db, "SELECT group_concat(op || ':' || api || ':' || kind || ':' || stream, ' ') FROM "
                                   "(SELECT * FROM events ORDER BY seq)"),
                        "alloc:cudaMallocAsync_ptsz:async:0 free:cudaFreeAsync_ptsz:async:0");
    assert_string_equal(h_text(db, "SELECT group_concat(device || ':' || used, ' ') FROM pool_samples"), "0:1048576");
    sqlite3_close(db);
}

static void test_hostile_output_paths(void **state)
{
    (void)state;
    static struct run_result r;
    /* unwritable: the program runs on, one clear line */
    h_run(&r, NULL, ARGV(GL, "run", "-q", "-o", "/nonexistent-dir/x.db", PROG("alloc1000")));
    assert_int_equal(r.status, 0);
    assert_int_equal(h_count_lines(r.err, "gpuledger:"), 1);
    assert_non_null(strstr(r.err, "cannot create /nonexistent-dir/x.db"));
    assert_non_null(strstr(r.err, "runs on unprofiled"));
    /* an existing file is never destroyed */
    char p[512];
    snprintf(p, sizeof p, "%s/keep.db", h_dir());
    FILE *f = fopen(p, "w");
    fputs("precious", f);
    fclose(f);
    h_run(&r, NULL, ARGV(GL, "run", "-o", "keep.db", PROG("misc"), "exit", "0")); /* -q: not said */
    assert_int_equal(r.status, 0);
    f = fopen(p, "r");
    char buf[32] = "";
    assert_non_null(fgets(buf, sizeof buf, f));
    fclose(f);
    assert_string_equal(buf, "precious");
    assert_non_null(strstr(r.err, "keep.1.db instead"));
    sqlite3 *db = h_open("keep.1.db");
    assert_int_equal(h_int(db, "SELECT count(*) FROM events"), 1);
    sqlite3_close(db);
}

static void test_bad_env_and_disable(void **state)
{
    (void)state;
    static struct run_result r;
    h_run(&r, ENV("GPULEDGER_STACK_DEPTH=banana"), ARGV(GL, "run", "-q", "-o", "b.db", PROG("misc"), "exit", "0"));
    assert_int_equal(r.status, 0);
    assert_int_equal(h_count_lines(r.err, "GPULEDGER_STACK_DEPTH='banana'"), 1);
    sqlite3 *db = h_open("b.db");
    assert_int_equal(h_int(db, "SELECT stack_depth FROM run"), 48);
    sqlite3_close(db);
    h_run(&r, ENV("GPULEDGER_DISABLE=1"), ARGV(GL, "run", "-q", "-o", "off.db", PROG("misc"), "exit", "0"));
    assert_int_equal(r.status, 0);
    char p[512];
    snprintf(p, sizeof p, "%s/off.db", h_dir());
    assert_int_not_equal(access(p, F_OK), 0);
    /* depth 0: no stacks at all */
    h_run(&r, NULL, ARGV(GL, "run", "-q", "-d", "0", "-o", "z.db", PROG("alloc1000")));
    db = h_open("z.db");
    assert_int_equal(h_int(db, "SELECT count(*) FROM events WHERE stack_id IS NOT NULL"), 0);
    assert_int_equal(h_int(db, "SELECT count(*) FROM events"), 1997);
    sqlite3_close(db);
    /* GPULEDGER_FREE_STACKS=0: allocations keep their stacks, frees have none */
    h_run(&r, ENV("GPULEDGER_FREE_STACKS=0"), ARGV(GL, "run", "-q", "-o", "f.db", PROG("alloc1000")));
    assert_int_equal(r.status, 0);
    db = h_open("f.db");
    assert_int_equal(h_int(db, "SELECT count(*) FROM events WHERE op = 'free' AND stack_id IS NOT NULL"), 0);
    assert_int_equal(h_int(db, "SELECT count(*) FROM events WHERE op = 'free'"),
                     h_int(db, "SELECT count(*) FROM allocations WHERE free_ns IS NOT NULL"));
    assert_int_equal(h_int(db, "SELECT count(*) FROM events WHERE op = 'alloc' AND stack_id IS NULL"), 0);
    sqlite3_close(db);
    h_run(&r, ENV("GPULEDGER_PYTHON=sometimes"), ARGV(GL, "run", "-q", "-o", "p.db", PROG("misc"), "exit", "0"));
    assert_int_equal(r.status, 0);
    assert_int_equal(h_count_lines(r.err, "GPULEDGER_PYTHON='sometimes' is not 0/1/mixed"), 1);
}

static void test_launcher_usage_and_summary(void **state)
{
    (void)state;
    static struct run_result r;
    h_run(&r, NULL, ARGV(GL, "run"));
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.err, "no command given"));
    h_run(&r, NULL, ARGV(GL, "run", "--", "/no/such/program"));
    assert_int_equal(r.status, 127);
    assert_string_equal(r.err, "gpuledger run: /no/such/program: No such file or directory\n");
    h_run(&r, NULL, ARGV(GL, "frobnicate"));
    assert_int_equal(r.status, 2);
    h_run(&r, NULL, ARGV(GL, "--help"));
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "usage: gpuledger"));
    h_run(&r, NULL, ARGV(GL, "run", "--help"));
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "%p pid"));
    h_run(&r, NULL, ARGV(GL, "run", "-o", "demo.db", PROG("demo")));
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "demo: 8 steps done"));
    assert_non_null(strstr(r.err, "demo.db: 33 events, peak 82.00 MiB on device 0, 2 allocations (2.00 MiB) never "
                                  "freed, 1 out-of-memory failure"));
    h_run(&r, NULL, ARGV(GL, "summary", "/no/such.db"));
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.err, "/no/such.db: No such file or directory"));
}

static void test_cupti_sees_what_no_wrapper_can(void **state)
{
    (void)state;
    static struct run_result r;
    char lib[600], inj[600], out[600];
    snprintf(lib, sizeof lib, "GPULEDGER_CUPTI_LIB=%s", h_build("tests/fakecupti/libcupti.so.13"));
    /* GPULEDGER_CUPTI=1: callbacks on next to the wrappers */
    h_run(&r, ENV(lib, "GPULEDGER_CUPTI=1", "GPULEDGER_CUPTI_ACTIVITY=1", "FAKECUPTI_DROPPED=5"),
          ARGV(GL, "run", "-q", "-o", "cs.db", PROG("cupti_static")));
    assert_int_equal(r.status, 0);
    sqlite3 *db = h_open("cs.db");
    /* the runtime pair once (wrappers + CUPTI callbacks de-duplicated), the
     * driver calls only CUPTI saw, and the module global */
    assert_string_equal(h_text(db, "SELECT group_concat(op || ':' || api || ':' || size, ' ') FROM (SELECT * FROM "
                                   "events ORDER BY seq)"),
                        "alloc:cudaMalloc:1048576 free:cudaFree:1048576 alloc:cuMemAlloc_v2:2097152 "
                        "alloc:cuMemAlloc_v2:4096 free:cuMemFree_v2:4096 alloc:module_static:65536");
    assert_string_equal(h_text(db, "SELECT f.symbol FROM events e JOIN stack_frames f ON f.stack_id = e.stack_id AND "
                                   "f.depth = 0 WHERE e.size = 2097152"),
                        "static_path_alloc");
    assert_int_equal(h_int(db, "SELECT count(*) FROM allocations WHERE kind = 'static' AND free_ns IS NULL"), 1);
    assert_int_equal(h_int(db, "SELECT dropped_events FROM run"), 5);
    sqlite3_close(db);
    /* default (auto) under the launcher: the hooks are live, so no CUPTI
     * subscriber is taken (a busy CUPTI is not even noticed); activity
     * records still bring the module global */
    h_run(&r, ENV(lib, "FAKECUPTI_BUSY=1", "GPULEDGER_CUPTI_ACTIVITY=1"),
          ARGV(GL, "run", "-q", "-o", "auto.db", PROG("cupti_static")));
    assert_int_equal(r.status, 0);
    assert_int_equal(h_count_lines(r.err, "CUPTI"), 0);
    db = h_open("auto.db");
    assert_string_equal(h_text(db, "SELECT group_concat(api, ' ') FROM (SELECT api FROM events ORDER BY seq)"),
                        "cudaMalloc cudaFree module_static");
    sqlite3_close(db);
    /* callbacks asked for, but someone else holds CUPTI: one line, on we go */
    h_run(&r, ENV(lib, "GPULEDGER_CUPTI=1", "FAKECUPTI_BUSY=1"), ARGV(GL, "run", "-q", "-o", "busy.db", PROG("cupti_static")));
    assert_int_equal(r.status, 0);
    assert_int_equal(h_count_lines(r.err, "another tool already uses CUPTI"), 1);
    db = h_open("busy.db");
    assert_int_equal(h_int(db, "SELECT count(*) FROM events"), 2);
    sqlite3_close(db);
    /* --no-cupti: CUPTI is never touched, not even for activity */
    h_run(&r, ENV(lib, "GPULEDGER_CUPTI_ACTIVITY=1"), ARGV(GL, "run", "-q", "--no-cupti", "-o", "off.db", PROG("cupti_static")));
    assert_int_equal(r.status, 0);
    db = h_open("off.db");
    assert_int_equal(h_int(db, "SELECT count(*) FROM events"), 2);
    sqlite3_close(db);
    /* injection alone (no LD_PRELOAD), as for a static binary one cannot
     * preload: the driver loads us at cuInit and CUPTI callbacks see all */
    snprintf(inj, sizeof inj, "CUDA_INJECTION64_PATH=%s", h_build("interpose/libgpuledger.so"));
    snprintf(out, sizeof out, "GPULEDGER_OUTPUT=%s/inj.db", h_dir());
    h_run(&r, ENV(lib, inj, out, "GPULEDGER_QUIET=1"), ARGV(PROG("cupti_static")));
    assert_int_equal(r.status, 0);
    db = h_open("inj.db");
    assert_string_equal(h_text(db, "SELECT group_concat(op || ':' || api || ':' || size, ' ') FROM (SELECT * FROM "
                                   "events ORDER BY seq)"),
                        "alloc:cuMemAlloc_v2:1048576 free:cuMemFree_v2:1048576 alloc:cuMemAlloc_v2:2097152 "
                        "alloc:cuMemAlloc_v2:4096 free:cuMemFree_v2:4096");
    sqlite3_close(db);
}

static void test_annotations(void **state)
{
    (void)state;
    static struct run_result r;
    h_run(&r, NULL, ARGV(GL, "run", "-q", "-o", "m.db", PROG("marks")));
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "marks: annotated, recording was 1 then 0"));
    sqlite3 *db = h_open("m.db");
    /* gpuledger_set_recording(0) ... (1): the 777 bytes in between are not recorded */
    assert_int_equal(h_int(db, "SELECT count(*) FROM allocations WHERE size IN (777, 888)"), 1);
    assert_int_equal(h_int(db, "SELECT count(*) FROM allocations WHERE size = 888"), 1);
    assert_int_equal(h_int(db, "SELECT count(*) FROM annotations WHERE op = 'mark'"), 6);
    assert_int_equal(h_int(db, "SELECT count(*) FROM annotations WHERE op = 'range_push' AND label = 'step'"), 6);
    assert_int_equal(h_int(db, "SELECT count(*) FROM annotations WHERE op = 'range_pop'"), 6);
    assert_string_equal(h_text(db, "SELECT group_concat(label, ',') FROM annotations WHERE op = 'mark'"),
                        "step 1,step 2,step 3,step 4,step 5,step 6");
    /* every allocation is tagged with the range it was made in */
    assert_int_equal(h_int(db, "SELECT count(*) FROM events e JOIN annotations a ON a.seq = e.range_seq WHERE "
                               "e.op IN ('alloc', 'free') AND a.op = 'range_push'"),
                     30);
    sqlite3_close(db);
    h_run(&r, NULL, ARGV(GL, "leaks", "--steps", "m.db"));
    assert_non_null(strstr(r.out, "growing step after step (6 steps ended by the program's marks): 1 stack"));
    assert_non_null(strstr(r.out, "live per step: 1.00 MiB 2.00 MiB 3.00 MiB 4.00 MiB 5.00 MiB 6.00 MiB"));
    /* NVTX v3 (header-only) ranges and marks, through NVTX_INJECTION64_PATH */
    h_run(&r, NULL, ARGV(GL, "run", "-q", "-o", "nv.db", PROG("nvtx")));
    assert_int_equal(r.status, 0);
    db = h_open("nv.db");
    assert_string_equal(h_text(db, "SELECT group_concat(op || ':' || coalesce(label, '') || ':' || "
                                   "coalesce(parent_seq, 0), ' ') FROM (SELECT * FROM annotations WHERE seq < 8 ORDER BY seq)"),
                        "range_push:step:0 range_push:forward:1 range_pop::2 range_pop::1 mark:step 1:0");
    /* Ex (ASCII attributes) and wide variants */
    assert_string_equal(h_text(db, "SELECT group_concat(op || ':' || coalesce(label, ''), ' ') FROM (SELECT * FROM "
                                   "annotations WHERE seq > (SELECT seq FROM annotations WHERE label = 'step 3') "
                                   "ORDER BY seq)"),
                        "range_push:ex range range_pop: mark:ex mark mark:wide mark \xc3\xa9 range_push:wide range "
                        "range_pop:");
    assert_string_equal(h_text(db, "SELECT a.label FROM events e JOIN annotations a ON a.seq = e.range_seq "
                                   "WHERE e.op = 'alloc' AND e.size = 2097152"),
                        "ex range");
    /* the allocation is tagged with the inner range, its free with the outer */
    assert_string_equal(h_text(db, "SELECT group_concat(e.op || ':' || a.label, ' ') FROM (SELECT * FROM events "
                                   "WHERE op IN ('alloc', 'free') AND seq < 8 ORDER BY seq) e JOIN annotations a ON "
                                   "a.seq = e.range_seq"),
                        "alloc:forward free:step");
    sqlite3_close(db);
    h_run(&r, NULL, ARGV(GL, "leaks", "--steps", "nv.db"));
    assert_non_null(strstr(r.out, "(5 steps ended by the program's marks): none"));
    /* without gpuledger the program runs as well */
    h_run(&r, NULL, ARGV(PROG("marks")));
    assert_non_null(strstr(r.out, "marks: no gpuledger"));
    /* from Python with ctypes */
    if (system("command -v python3 >/dev/null 2>&1") != 0 || !getenv("GL_SOURCE_ROOT"))
        skip();
    char py[1200];
    snprintf(py, sizeof py, "cd %s && %s run -q -o py.db -- python3 %s/tests/progs/py_marks.py %s > py.out 2>&1",
             h_dir(), GL, getenv("GL_SOURCE_ROOT"), h_build("tests/fakecuda/libcudart.so.13"));
    assert_int_equal(system(py), 0);
    db = h_open("py.db");
    assert_string_equal(h_text(db, "SELECT group_concat(op || ':' || coalesce(label, api), ' ') FROM (SELECT e.op, "
                                   "e.api, a.label FROM events e LEFT JOIN annotations a ON a.seq = e.seq ORDER BY e.seq)"),
                        "mark:before alloc:cudaMalloc mark:after");
    sqlite3_close(db);
    /* the gpuledger package: marks, steps, ranges (block, decorator,
     * re-entered, another thread, an exception), paused; allocation sizes
     * say where each was made (tests/progs/py_annotate.py) */
    char script[600], pypath[600];
    snprintf(script, sizeof script, "%s/tests/progs/py_annotate.py", getenv("GL_SOURCE_ROOT"));
    snprintf(pypath, sizeof pypath, "PYTHONPATH=%s/python", getenv("GL_SOURCE_ROOT"));
    /* through the builtins the library makes (annotate_py.c), then through ctypes */
    for (int via_ctypes = 0; via_ctypes <= 1; via_ctypes++) {
        char answers[300];
        snprintf(answers, sizeof answers,
                 "builtins: %s, recording: True\ndecorated: 1006 load a docstring\nsame object: True\n"
                 "paused: recording inside False, after True\na range keeps its label object: False\n",
                 via_ctypes ? "False" : "True");
        const char *db_name = via_ctypes ? "pa1.db" : "pa0.db";
        /* (CPython keeps -X options it does not know in sys._xoptions) */
        h_run(&r, NULL, ARGV(GL, "run", "-q", "-o", db_name, "python3", "-X", via_ctypes ? "gpuledger_ctypes" : "none",
                             script, h_build("tests/fakecuda/libcudart.so.13")));
        assert_int_equal(r.status, 0);
        assert_string_equal(r.out, answers);
        db = h_open(db_name);
        assert_string_equal(h_text(db, "SELECT group_concat(op || ':' || coalesce(label, '') || ':' || "
                                       "coalesce(parent_seq, 0), ' ') FROM (SELECT * FROM annotations ORDER BY seq)"),
                            "mark:before:0 mark:step 0:0 mark:step 1:0 mark:named step:0 mark:bytes:0 mark:7:0 "
                            "mark:bad ? utf-8:0 range_push:outer:0 range_push:inner:9 range_pop::11 "
                            "range_push:outer:9 range_pop::14 range_pop::9 range_push:decorated:0 range_pop::19 "
                            "range_push:['unhashable']:0 range_pop::22 range_push:main:0 range_push:thread:0 "
                            "range_pop::26 range_pop::25 range_push:raised:0 range_pop::31 mark:Phase.FWD:0 "
                            "range_push:Phase.FWD:0 range_pop::36 range_push:model:0 range_pop::39");
        /* 1010-1012 were made while paused */
        assert_string_equal(h_text(db, "SELECT group_concat(e.size || ':' || coalesce(a.label, '-'), ' ') FROM "
                                       "(SELECT * FROM events WHERE op = 'alloc' ORDER BY seq) e LEFT JOIN annotations "
                                       "a ON a.seq = e.range_seq"),
                            "1000:- 1001:outer 1002:inner 1003:outer 1004:outer 1005:decorated 1006:['unhashable'] "
                            "1007:thread 1008:main 1009:- 1013:- 1014:Phase.FWD 1015:model");
        sqlite3_close(db);
    }
    /* outside gpuledger every call is a no-op */
    h_run(&r, NULL, ARGV("/usr/bin/env", pypath, "python3", script, h_build("tests/fakecuda/libcudart.so.13")));
    assert_int_equal(r.status, 0);
    assert_string_equal(r.out, "builtins: False, recording: False\ndecorated: 1006 load a docstring\n"
                               "same object: True\npaused: recording inside False, after False\n"
                               "a range keeps its label object: False\n");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_alloc1000_exact, h_teardown),
        cmocka_unit_test_teardown(test_oom_recorded_with_size_and_stack, h_teardown),
        cmocka_unit_test_teardown(test_driver_entry_points_and_vmm, h_teardown),
        cmocka_unit_test_teardown(test_eight_threads_lose_nothing, h_teardown),
        cmocka_unit_test_teardown(test_hot_path_never_mallocs, h_teardown),
        cmocka_unit_test_teardown(test_exit_status_and_crash, h_teardown),
        cmocka_unit_test_teardown(test_fork_gives_child_its_own_db, h_teardown),
        cmocka_unit_test_teardown(test_reset_frees_everything, h_teardown),
        cmocka_unit_test_teardown(test_pools_managed_host_devices, h_teardown),
        cmocka_unit_test_teardown(test_hostile_output_paths, h_teardown),
        cmocka_unit_test_teardown(test_bad_env_and_disable, h_teardown),
        cmocka_unit_test_teardown(test_launcher_usage_and_summary, h_teardown),
        cmocka_unit_test_teardown(test_cupti_sees_what_no_wrapper_can, h_teardown),
        cmocka_unit_test_teardown(test_annotations, h_teardown),
        cmocka_unit_test_teardown(test_fast_unwind_matches_libunwind, h_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
