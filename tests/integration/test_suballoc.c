/* test_suballoc.c — sub-allocations inside a program's own pools, with
 * exact figures worked out by hand:
 *
 * tests/progs/nvtx_mem.c (NVTX v3 memory API, header-only), heap
 * "kv_cache", 16 pages of 4096 B; a region's used bytes arrive in a
 * separate call after it is registered, so at its registration it counts
 * as fully used (no waste):
 *   after admit(0..11), free 1 3 5 7:  in use 0 2 4 6 8 9 10 11
 *   leak_pages(): 12 (used 4096), 14 (used 512)
 *     at 14's registration: in use 10 pages, free 1 3 5 7 13 15 = 6 pages in
 *     6 holes, largest 1 -> free outside the largest run 5 pages, the most
 *     of the run: the WORST moment. external fragmentation 1 - 1/6 =
 *     0.833333, largest_free_ratio 0.166667; waste: page 11 (4096 - 1024) =
 *     3072 of 40960 -> internal fragmentation 0.075.
 *   free 2; grow(): region at 1, resized to 3 pages (1 2 3); admit(5):
 *     at 5's registration: in use 0 1-3 4 5 6 8 9 10 11 12 14 = 13 pages in
 *     11 regions (the PEAK), free 7 13 15 = 3 holes of 1 page: external
 *     fragmentation 0.666667, largest_free_ratio 0.333333; waste 3072 (11)
 *     + 3584 (14) = 6656 of 53248 -> 0.125.
 *   5's used 2048 then 3072; every region freed but 12 and 14:
 *     END: in use 12 14, free [0-11] [13] [15] = 14 pages in 3 holes, largest
 *     12: external fragmentation 1 - 12/14 = 0.142857, largest_free_ratio
 *     0.857143; waste 3584 of 8192 -> 0.4375. Leaked: 2 regions, 8192 B, made
 *     by leak_pages().
 * Heap "arena" (no page size), 10000 B: regions [0,1000) [1000,3000)
 *   [3000,3500) [5000,9000); [1000,3000) freed -> WORST: free [1000,3000)
 *   [3500,5000) [9000,10000) = 4500 B in 3 holes, largest 2000: 0.555556 /
 *   0.444444; reset; one region over all of it (PEAK 10000 B); unregistered
 *   with it live: END is just before, and nothing leaks.
 *
 * tests/progs/py_pool.py through gpuledger.Pool in an embedded CPython:
 *   8 pages of 4096 B; pages 0..4 taken (used 4096 but page 4: 100): PEAK 5
 *   pages, waste 3996 of 20480 = 0.195117; pages 1 and 3 given back: WORST
 *   free 1 3 5 6 7 = 5 pages in 3 holes, largest 3 (0.4 / 0.6); page 4's
 *   used becomes 2000; cancel_path() takes page 5 with used 0: END 4 pages
 *   in use, free 1 3 6 7 in 3 holes, largest 2 (0.5 / 0.5), waste 2096 +
 *   4096 = 6192 of 16384 = 0.377930; four pages never given back, one of
 *   them from cancel_path (py_pool.py:17). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

static struct run_result r;

static void test_nvtx_heaps_recorded(void **state)
{
    (void)state;
    h_run(&r, NULL, ARGV(GL, "run", "-q", "-o", "m.db", PROG("nvtx_mem")));
    assert_int_equal(r.status, 0);
    h_expect(r.out, "nvtx_mem: heap is its base, handles ok");
    sqlite3 *db = h_open("m.db");
    /* the SQL contract: heaps and regions, named, with page size and used bytes */
    assert_string_equal(h_text(db, "SELECT group_concat(name || ':' || size || ':' || coalesce(page_size, 0) || ':' ||"
                                   " usage || ':' || (unregister_ns IS NOT NULL), ' ') FROM heaps"),
                        "kv_cache:65536:4096:1:0 arena:10000:0:1:1");
    assert_int_equal(h_int(db, "SELECT count(*) FROM regions"), 21);
    assert_int_equal(h_int(db, "SELECT count(*) FROM regions WHERE free_seq IS NULL"), 2);
    assert_string_equal(h_text(db, "SELECT group_concat(offset || ':' || size || ':' || used || ':' || coalesce(name, '-'),"
                                   " ' ') FROM regions WHERE free_seq IS NULL"),
                        "49152:4096:4096:- 57344:4096:512:req 42");
    /* the region at page 1 grew to three pages; page 5's used bytes were set twice */
    assert_string_equal(h_text(db, "SELECT initial_size || '->' || size FROM regions WHERE offset = 4096 AND"
                                   " initial_size <> size"),
                        "4096->12288");
    assert_int_equal(h_int(db, "SELECT used FROM regions WHERE heap_id = (SELECT id FROM heaps WHERE name = 'kv_cache')"
                               " AND offset = 20480 AND free_api = 'gpuledger_region_free' ORDER BY id DESC LIMIT 1"),
                     3072);
    /* heap reset and unregister end the arena's regions, each with its own row */
    assert_string_equal(h_text(db, "SELECT group_concat(free_api, ' ') FROM (SELECT free_api FROM regions WHERE heap_id ="
                                   " (SELECT id FROM heaps WHERE name = 'arena') ORDER BY id)"),
                        "gpuledger_heap_reset gpuledger_region_free gpuledger_heap_reset gpuledger_heap_reset"
                        " gpuledger_heap_unregister");
    /* sub-allocations are never counted as device memory: the peak is the two cudaMallocs */
    assert_int_equal(h_int(db, "SELECT peak_bytes FROM device_stats WHERE device = 0"), 65536 + 10000);
    assert_int_equal(h_int(db, "SELECT count(*) FROM allocations"), 2);
    assert_int_equal(h_int(db, "SELECT count(*) FROM device_stats WHERE device <> 0"), 0);
    assert_int_equal(h_int(db, "SELECT unmatched_frees FROM run"), 0);
    sqlite3_close(db);
}

static void test_nvtx_heap_figures(void **state)
{
    (void)state;
    h_run(&r, NULL, ARGV(GL, "run", "-q", "-o", "m.db", PROG("nvtx_mem")));
    assert_int_equal(r.status, 0);
    h_run(&r, NULL, ARGV(GL, "holes", "m.db"));
    assert_int_equal(r.status, 0);
    h_expect(r.out, "heap kv_cache at 0x");
    h_expect(r.out, ": 64.00 KiB, 16 pages of 4.00 KiB, inside cudaMalloc #");
    h_expect(r.out, "; 16 regions handed out\n");
    h_expect(r.out, ": 13 pages in use in 11 regions, 3 pages free in 3 holes, largest 1 page; external fragmentation"
                  " 0.667, largest_free_ratio 0.333; internal fragmentation 0.125\n");
    h_expect(r.out, ": 10 pages in use in 10 regions, 6 pages free in 6 holes, largest 1 page; external fragmentation"
                  " 0.833, largest_free_ratio 0.167; internal fragmentation 0.075\n");
    h_expect(r.out, ": 2 pages in use in 2 regions, 14 pages free in 3 holes, largest 12 pages; external fragmentation"
                  " 0.143, largest_free_ratio 0.857; internal fragmentation 0.438\n");
    h_expect(r.out, "  occupancy at the peak  |#######.#####.#.|\n  occupancy at the worst |#.#.#.#.#####.#.|\n");
    h_expect(r.out, "  never given back: 8.00 KiB in 2 regions\n");
    assert_int_equal(h_count_lines(r.out, "leak_pages"), 4); /* 2 stacks at the peak, 2 never given back */
    h_expect(r.out, "heap arena at 0x");
    h_expect(r.out, "; 5 regions handed out, unregistered\n");
    assert_int_equal(h_count_lines(r.out, "never given back"), 1);

    h_run(&r, NULL, ARGV(GL, "holes", "--format", "json", "m.db"));
    assert_int_equal(r.status, 0);
    h_expect(r.out, "\"name\":\"kv_cache\",\"base\":");
    h_expect(r.out, ",\"size\":65536,\"page_size\":4096,\"device\":0,");
    /* peak, worst, end */
    h_expect(r.out, "\"used\":53248,\"free\":12288,\"holes\":3,\"largest_free\":4096,\"external_fragmentation\":0.666667,"
                  "\"largest_free_ratio\":0.333333,\"regions\":11,\"region_bytes\":53248,\"unused_bytes\":6656,"
                  "\"internal_fragmentation\":0.125000,\"pages_in_use\":13,\"pages_free\":3,\"largest_free_pages\":1}");
    h_expect(r.out, "\"used\":40960,\"free\":24576,\"holes\":6,\"largest_free\":4096,\"external_fragmentation\":0.833333,"
                  "\"largest_free_ratio\":0.166667,\"regions\":10,\"region_bytes\":40960,\"unused_bytes\":3072,"
                  "\"internal_fragmentation\":0.075000,\"pages_in_use\":10,\"pages_free\":6,\"largest_free_pages\":1}");
    h_expect(r.out, "\"end\":{\"seq\":");
    h_expect(r.out, "\"used\":8192,\"free\":57344,\"holes\":3,\"largest_free\":49152,\"external_fragmentation\":0.142857,"
                  "\"largest_free_ratio\":0.857143,\"regions\":2,\"region_bytes\":8192,\"unused_bytes\":3584,"
                  "\"internal_fragmentation\":0.437500,\"pages_in_use\":2,\"pages_free\":14,\"largest_free_pages\":12}");
    h_expect(r.out, "\"cell_bytes\":4096,\"occupancy_peak\":[100,100,100,100,100,100,100,0,100,100,100,100,100,0,100,0],"
                  "\"occupancy_worst\":[100,0,100,0,100,0,100,0,100,100,100,100,100,0,100,0]");
    h_expect(r.out, "\"leaked_regions\":2,\"leaked_bytes\":8192,\"leaks\":[{\"stack_id\":");
    h_expect(r.out, "\"bytes\":4096,\"count\":1,\"frames\":[{\"symbol\":\"region\"");
    h_expect(r.out, "},{\"symbol\":\"leak_pages\"");
    /* the arena: bytes, no pages, no used figures */
    h_expect(r.out, "\"name\":\"arena\",\"base\":");
    h_expect(r.out, "\"used\":5500,\"free\":4500,\"holes\":3,\"largest_free\":2000,\"external_fragmentation\":0.555556,"
                  "\"largest_free_ratio\":0.444444,\"regions\":3,\"region_bytes\":5500,\"unused_bytes\":0,"
                  "\"internal_fragmentation\":null}");
    h_expect(r.out, "\"used\":10000,\"free\":0,\"holes\":0,\"largest_free\":0,\"external_fragmentation\":0.000000,"
                  "\"largest_free_ratio\":1.000000,\"regions\":1,");
    h_expect(r.out, "\"unregistered\":true,\"regions\":5,");
    h_expect(r.out, "\"leaked_regions\":0,\"leaked_bytes\":0,\"leaks\":[]}");

    /* leaks: the regions never given back, per heap, by stack */
    h_run(&r, NULL, ARGV(GL, "leaks", "m.db"));
    assert_int_equal(r.status, 0);
    h_expect(r.out, "\ninside the program's own pools, regions never given back:\nheap kv_cache: 8.00 KiB in 2 regions\n"
                  "      4.00 KiB in 1 region\n");
    assert_int_equal(h_count_lines(r.out, "leak_pages"), 2);
    assert_null(strstr(r.out, "heap arena"));
    h_run(&r, NULL, ARGV(GL, "leaks", "--format", "json", "m.db"));
    assert_int_equal(r.status, 0);
    h_expect(r.out, ",\"heap_leaks\":[{\"heap\":");
    h_expect(r.out, ",\"name\":\"kv_cache\",\"leaked_regions\":2,\"leaked_bytes\":8192,\"leaks\":[{");
    /* report: the same heaps in text, JSON and HTML (one square per page, twice) */
    h_run(&r, NULL, ARGV(GL, "report", "m.db"));
    assert_int_equal(r.status, 0);
    h_expect(r.out, "  occupancy at the peak  |#######.#####.#.|\n");
    h_run(&r, NULL, ARGV(GL, "report", "--format", "json", "m.db"));
    assert_int_equal(r.status, 0);
    h_expect(r.out, "],\"heaps\":[{\"id\":");
    h_expect(r.out, "\"pages_in_use\":13,\"pages_free\":3,\"largest_free_pages\":1}");
    h_run(&r, NULL, ARGV(GL, "report", "--format", "html", "-o", "m.html", "m.db"));
    assert_int_equal(r.status, 0);
    char path[1200];
    snprintf(path, sizeof path, "%s/m.html", h_dir());
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    static char html[1 << 20];
    size_t n = fread(html, 1, sizeof html - 1, f);
    html[n] = 0;
    fclose(f);
    /* the page's data: each heap's figures as [seq, t, used, free, holes, largest free, regions, region
     * bytes, unused bytes] and its occupancy cells */
    h_expect(html, ",\"heaps\":[{\"label\":\"kv_cache\",\"size\":65536,\"page_size\":4096,\"device\":0,"
                 "\"regions\":16,\"has_used\":1,\"unregistered\":0,\"cell_bytes\":4096,\"peak\":[");
    h_expect(html, ",53248,12288,3,4096,11,53248,6656],\"worst\":[");
    h_expect(html, ",40960,24576,6,4096,10,40960,3072],\"end\":[");
    h_expect(html, ",8192,57344,3,49152,2,8192,3584],\"series\":[");
    h_expect(html, "\"occ_peak\":[100,100,100,100,100,100,100,0,100,100,100,100,100,0,100,0],"
                 "\"occ_worst\":[100,0,100,0,100,0,100,0,100,100,100,100,100,0,100,0],\"peak_ledger\":[[");
    h_expect(html, "{\"label\":\"arena\",\"size\":10000,\"page_size\":0,");
}

static void test_nvtx_mem_without_gpuledger(void **state)
{
    (void)state;
    h_run(&r, NULL, ARGV(PROG("nvtx_mem")));
    assert_int_equal(r.status, 0);
    h_expect(r.out, "nvtx_mem: heap from no tool, handles ok");
}

static const char *source(const char *rel)
{
    static char buf[2][1024];
    static int k;
    k ^= 1;
    snprintf(buf[k], sizeof buf[k], "%s/%s", getenv("GL_SOURCE_ROOT"), rel);
    return buf[k];
}

static void test_python_pool(void **state)
{
    (void)state;
    if (strcmp(getenv("GL_HAVE_PYEMBED") ? getenv("GL_HAVE_PYEMBED") : "0", "1") != 0)
        fail_msg("pyembed was not built: install python3-dev (pkg-config python3-embed) and reconfigure");
    char pypath[1100];
    snprintf(pypath, sizeof pypath, "PYTHONPATH=%s", source("python"));
    const char *script = source("tests/progs/py_pool.py");
    /* without gpuledger: every call a no-op */
    h_run(&r, ENV(pypath), ARGV(PROG("pyembed"), script));
    assert_int_equal(r.status, 0);
    h_expect(r.out, "py_pool: gpuledger.Pool(0x");
    h_run(&r, ENV(pypath), ARGV(GL, "run", "-q", "-o", "p.db", PROG("pyembed"), script));
    assert_int_equal(r.status, 0);
    sqlite3 *db = h_open("p.db");
    assert_string_equal(h_text(db, "SELECT name || ':' || size || ':' || page_size FROM heaps"), "py pages:32768:4096");
    assert_string_equal(h_text(db, "SELECT group_concat((offset / 4096) || ':' || used, ' ') FROM (SELECT * FROM regions"
                                   " WHERE free_seq IS NULL ORDER BY offset)"),
                        "0:4096 2:4096 4:2000 5:0");
    sqlite3_close(db);
    h_run(&r, NULL, ARGV(GL, "holes", "p.db"));
    assert_int_equal(r.status, 0);
    h_expect(r.out, "heap py pages at 0x");
    h_expect(r.out, ": 5 pages in use in 5 regions, 3 pages free in 1 hole, largest 3 pages; external fragmentation 0.000,"
                  " largest_free_ratio 1.000; internal fragmentation 0.195\n");
    h_expect(r.out, ": 3 pages in use in 3 regions, 5 pages free in 3 holes, largest 3 pages; external fragmentation 0.400,"
                  " largest_free_ratio 0.600; internal fragmentation 0.325\n");
    h_expect(r.out, ": 4 pages in use in 4 regions, 4 pages free in 3 holes, largest 2 pages; external fragmentation 0.500,"
                  " largest_free_ratio 0.500; internal fragmentation 0.378\n");
    h_expect(r.out, "  occupancy at the peak  |#####...|\n  occupancy at the worst |#.#.#...|\n");
    h_expect(r.out, "  never given back: 16.00 KiB in 4 regions\n     12.00 KiB in 3 regions\n");
    /* the Python lines, the package's own frames folded away */
    h_expect(r.out, "      4.00 KiB in 1 region\n");
    h_expect(r.out, "  take (");
    h_expect(r.out, "py_pool.py:11)\n");
    h_expect(r.out, "  cancel_path (");
    h_expect(r.out, "py_pool.py:17)\n");
    assert_null(strstr(r.out, "gpuledger/pool.py"));
    assert_null(strstr(r.out, "ffi_call"));
}

/* tests/progs/py_pool2.py: the pool is a 16 KiB "tensor" without pages;
 * regions [0,1000) grown to 3000 and [4096,6144) (used 100, named "req 7")
 * end with the reset; [8192,8704) ends when the with-block closes the
 * pool; the call after close records nothing. */
static void test_python_pool_rest(void **state)
{
    (void)state;
    if (strcmp(getenv("GL_HAVE_PYEMBED") ? getenv("GL_HAVE_PYEMBED") : "0", "1") != 0)
        fail_msg("pyembed was not built: install python3-dev (pkg-config python3-embed) and reconfigure");
    char pypath[1100];
    snprintf(pypath, sizeof pypath, "PYTHONPATH=%s", source("python"));
    const char *script = source("tests/progs/py_pool2.py");
    const char *no_size = "py_pool2: TypeError: gpuledger.Pool(address, size): the size of a pool given by its"
                          " address is needed\n";
    h_run(&r, ENV(pypath), ARGV(PROG("pyembed"), script));
    assert_int_equal(r.status, 0);
    h_expect(r.out, ", 16384, name='arena', page_size=0)\n");
    h_expect(r.out, no_size);
    h_run(&r, ENV(pypath), ARGV(GL, "run", "-q", "-o", "p2.db", PROG("pyembed"), script));
    assert_int_equal(r.status, 0);
    h_expect(r.out, no_size);
    sqlite3 *db = h_open("p2.db");
    assert_string_equal(h_text(db, "SELECT name || ':' || size || ':' || coalesce(page_size, 0) || ':' ||"
                                   " (unregister_ns IS NOT NULL) FROM heaps"),
                        "arena:16384:0:1");
    assert_string_equal(h_text(db, "SELECT group_concat(offset || ':' || initial_size || '->' || size || ':' ||"
                                   " coalesce(used, '-') || ':' || coalesce(name, '-') || ':' || free_api, ' ')"
                                   " FROM (SELECT * FROM regions ORDER BY id)"),
                        "0:1000->3000:-:-:gpuledger_heap_reset 4096:2048->2048:100:req 7:gpuledger_heap_reset"
                        " 8192:512->512:-:-:gpuledger_heap_unregister");
    /* each call's own Python line */
    assert_int_equal(h_int(db, "SELECT count(DISTINCT f.line) FROM regions g JOIN stack_frames f ON f.stack_id ="
                               " g.stack_id WHERE f.file LIKE '%py_pool2.py'"),
                     3);
    sqlite3_close(db);
    /* the heap was closed: nothing of it leaks */
    h_run(&r, NULL, ARGV(GL, "leaks", "p2.db"));
    assert_int_equal(r.status, 0);
    assert_null(strstr(r.out, "never given back"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_nvtx_heaps_recorded, h_teardown),
        cmocka_unit_test_teardown(test_nvtx_heap_figures, h_teardown),
        cmocka_unit_test_teardown(test_nvtx_mem_without_gpuledger, h_teardown),
        cmocka_unit_test_teardown(test_python_pool, h_teardown),
        cmocka_unit_test_teardown(test_python_pool_rest, h_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
