/* test_bench.c — the two probes of what one page annotation costs
 * (issue 18: "<= 300 ns through NVTX from C, stack included; the Python
 * API's figure stated apart") measure what they say they measure. Each
 * prints recording off vs on inside one process; the difference is the
 * cost only if every annotation made while recording is on becomes exactly
 * one event with the caller's whole stack, and none made while it is off
 * does. Counted here exactly, with small rounds; the timings themselves
 * are taken on the H200 (scripts/gpu-kvcache.sh).
 *
 * bench_nvtxmem --ops 100 --rounds 1 --deep 0,3: per path (NVTX, then
 *   gpuledger_region_alloc/free) and depth, 2 warm-up + 1 measured rounds
 *   with recording on, each 100 alloc+free pairs: 2 x 2 x 3 x 100 = 1200
 *   regions and 1200 frees. A window of 64 live pages slides along the
 *   heap, so each recorded round starts by freeing 64 pages taken while
 *   recording was off (unmatched: 12 x 64 = 768) and ends with 64 taken
 *   that are freed while it is off (768 left live). The depth-3 half (600)
 *   has `deep` frames; every stack reaches main.
 * pool_cost.py --ops 100 --rounds 1 (host memory: 4096 pages of 64 B):
 *   64 pages taken first (recorded), then 3 rounds each off and on: 64 + 300
 *   regions, 300 frees, 3 x 64 unmatched, 64 x 4 left live; the Python
 *   line of each call is in its stack (64 from Window.__init__, 300 from
 *   Window.round_ns). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../integration/harness.h"

static struct run_result r;

/* Regions whose allocation stack has a frame whose symbol is LIKE pattern. */
static int64_t regions_through(sqlite3 *db, const char *pattern)
{
    char sql[512];
    snprintf(sql, sizeof sql,
             "SELECT count(*) FROM regions g WHERE EXISTS (SELECT 1 FROM stack_frames s WHERE s.stack_id = g.stack_id"
             " AND s.symbol LIKE '%s')",
             pattern);
    return h_int(db, sql);
}

static void test_bench_nvtxmem_counts(void **state)
{
    (void)state;
    const char *bench = h_build("bench/bench_nvtxmem");
    h_run(&r, NULL, ARGV(bench, "--ops", "100", "--rounds", "1"));
    assert_int_equal(r.status, 0);
    h_expect(r.out, "NVTX page annotation (no tool attached): ");
    assert_null(strstr(r.out, "| path |"));

    h_run(&r, NULL, ARGV(GL, "run", "-q", "-o", "b.db", bench, "--ops", "100", "--rounds", "1", "--deep", "0,3"));
    assert_int_equal(r.status, 0);
    h_expect(r.out, "| path | frames below the loop | off ns/op | on ns/op | added ns/op |\n");
    h_expect(r.out, "\n| NVTX (nvtxMemRegionsRegister/Unregister) | 0 | ");
    h_expect(r.out, "\n| NVTX (nvtxMemRegionsRegister/Unregister) | 3 | ");
    h_expect(r.out, "\n| gpuledger_region_alloc/free | 0 | ");
    h_expect(r.out, "\n| gpuledger_region_alloc/free | 3 | ");
    h_expect(r.out, "\nNVTX page annotation (recording off): ");
    sqlite3 *db = h_open("b.db");
    assert_string_equal(h_text(db, "SELECT name || ':' || size || ':' || coalesce(page_size, 0) FROM heaps"),
                        "bench pages:65536:0");
    assert_int_equal(h_int(db, "SELECT count(*) FROM events WHERE api = 'gpuledger_region_alloc'"), 1200);
    assert_int_equal(h_int(db, "SELECT count(*) FROM events WHERE api = 'gpuledger_region_free'"), 1200);
    assert_int_equal(h_int(db, "SELECT count(*) FROM regions"), 1200);
    assert_int_equal(h_int(db, "SELECT count(*) FROM regions WHERE free_seq IS NULL"), 768);
    assert_int_equal(h_int(db, "SELECT unmatched_frees FROM run"), 768);
    assert_int_equal(h_int(db, "SELECT dropped_events FROM run"), 0);
    assert_int_equal(h_int(db, "SELECT count(*) FROM regions WHERE size <> 64 OR stack_id IS NULL"), 0);
    assert_int_equal(regions_through(db, "main"), 1200);
    assert_int_equal(regions_through(db, "deep"), 600);
    sqlite3_close(db);
}

static void test_pool_cost_counts(void **state)
{
    (void)state;
    char script[1100];
    snprintf(script, sizeof script, "%s/scripts/gpu/pool_cost.py", getenv("GL_SOURCE_ROOT"));
    h_run(&r, NULL, ARGV("/usr/bin/env", "python3", script, "--ops", "100", "--rounds", "1"));
    assert_int_equal(r.status, 0);
    h_expect(r.out, "pool_cost: gpuledger not loaded: ");
    h_run(&r, NULL, ARGV(GL, "run", "-q", "-o", "p.db", "/usr/bin/env", "python3", script, "--ops", "100", "--rounds", "1"));
    assert_int_equal(r.status, 0);
    h_expect(r.out, "pool_cost: pool in host memory; ns per Pool.alloc/free call, median of 1 rounds of 100 pairs:\n"
                  "pool_cost: recording off ");
    sqlite3 *db = h_open("p.db");
    assert_string_equal(h_text(db, "SELECT name || ':' || size || ':' || page_size FROM heaps"), "pool_cost:262144:64");
    assert_int_equal(h_int(db, "SELECT count(*) FROM regions"), 364);
    assert_int_equal(h_int(db, "SELECT count(*) FROM events WHERE api = 'gpuledger_region_free'"), 300);
    assert_int_equal(h_int(db, "SELECT unmatched_frees FROM run"), 192);
    assert_int_equal(h_int(db, "SELECT count(*) FROM regions WHERE free_seq IS NULL"), 256);
    assert_int_equal(h_int(db, "SELECT count(*) FROM regions WHERE size <> 64 OR offset % 64 <> 0"), 0);
    /* used bytes as passed: i & 63 for the pair of index i (none for the first 64) */
    assert_int_equal(h_int(db, "SELECT count(*) FROM regions WHERE used IS NULL"), 64);
    assert_int_equal(h_int(db, "SELECT max(used) FROM regions"), 63);
    assert_int_equal(regions_through(db, "%__init__"), 64);
    assert_int_equal(regions_through(db, "%round_ns"), 300);
    sqlite3_close(db);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_bench_nvtxmem_counts, h_teardown),
        cmocka_unit_test_teardown(test_pool_cost_counts, h_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
