/* test_bytes.c — every byte the device holds, end to end against the fake
 * driver's fixed rules (tests/fakecuda/fake_array.c, fake_graph.c,
 * fake_nvml.c): CUDA arrays (sizes asked and reserved, the leaked one in
 * `leaks`), graph memory (capture, a graph launched three times, an
 * allocation freed after its launch, the graph pool over time, a leaked
 * graph allocation) and the remainder row ("outside any allocation API")
 * from each of its three sources, sampled as the ledger grows. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

#define MiB (1LL << 20)

static char nvml_env[700];

static int setup(void **state)
{
    (void)state;
    snprintf(nvml_env, sizeof nvml_env, "GPULEDGER_NVML_LIB=%s", h_build("tests/fakecuda/libnvidia-ml.so.1"));
    return 0;
}

/* Array rows: the sizes the driver reserves, asked of each array's
 * deferred-mapping twin (the fake driver answers cuArrayGetMemoryRequirements
 * for deferred-mapping arrays only, as CUDA documents: the twins are made
 * and destroyed at once, and take no memory), or of the array itself when
 * the driver answers for all; the requested sizes when it answers for none
 * (a driver before CUDA 11.6). aux: the requested bytes either way. */
static void test_arrays(void **state)
{
    (void)state;
    static struct run_result r;
    h_run(&r, ENV(nvml_env, "FAKECUDA_REPORT=1"), ARGV(GL, "run", "-q", "-o", "a.db", PROG("arrays")));
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.err, "fakecuda: 1 arrays live at exit")); /* the texture; no twin left */
    sqlite3 *db = h_open("a.db");
    assert_string_equal(h_text(db, "SELECT group_concat(api || ':' || size || ':' || aux, ' ') FROM (SELECT * FROM "
                                   "events WHERE kind = 'array' AND op = 'alloc' ORDER BY seq)"),
                        "cudaMallocArray:4194304:4000000 cudaMalloc3DArray:16777216:16777216 "
                        "cudaMallocMipmappedArray:6291456:5505024 cuArrayCreate_v2:6291456:6000000 "
                        "cuArray3DCreate_v2:0:1048576 cuMipmappedArrayCreate:10485760:10485760");
    /* each free names what it frees, and only the texture stays */
    assert_string_equal(h_text(db, "SELECT group_concat(free_api, ' ') FROM (SELECT free_api FROM allocations WHERE "
                                   "kind = 'array' ORDER BY id)"),
                        "cudaFreeArray cudaFreeMipmappedArray cuArrayDestroy cuArrayDestroy "
                        "cuMipmappedArrayDestroy");
    assert_string_equal(h_text(db, "SELECT f.symbol FROM allocations a JOIN stack_frames f ON f.stack_id = "
                                   "a.stack_id AND f.depth = 0 WHERE a.kind = 'array' AND a.free_ns IS NULL"),
                        "load_texture");
    /* 1 MiB cudaMalloc + the texture + the 16 MiB volume */
    assert_int_equal(h_int(db, "SELECT peak_bytes FROM device_stats WHERE device = 0"), MiB + 4 * MiB + 16 * MiB);
    assert_int_equal(h_int(db, "SELECT live_bytes FROM device_stats WHERE device = 0"), 4 * MiB);
    sqlite3_close(db);
    h_run(&r, NULL, ARGV(GL, "leaks", "a.db"));
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "4.00 MiB never freed in 1 leak chain"));
    assert_non_null(strstr(r.out, "[arrays]"));
    assert_non_null(strstr(r.out, "load_texture"));

    static const struct {
        const char *mode, *sizes;
    } modes[] = {
        {"FAKECUDA_ARRAY_REQS=all", "4194304 16777216 6291456 6291456 0 10485760"},
        {"FAKECUDA_ARRAY_REQS=none", "4000000 16777216 5505024 6000000 0 10485760"},
    };
    for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++) {
        h_run(&r, ENV(nvml_env, modes[i].mode), ARGV(GL, "run", "-q", "-o", i ? "none.db" : "all.db", PROG("arrays")));
        assert_int_equal(r.status, 0);
        db = h_open(i ? "none.db" : "all.db");
        assert_string_equal(h_text(db, "SELECT group_concat(size, ' ') FROM (SELECT size FROM events WHERE kind = "
                                       "'array' AND op = 'alloc' ORDER BY seq)"),
                            modes[i].sizes);
        sqlite3_close(db);
    }
}

/* A statically linked runtime's arrays, which only CUPTI sees. */
static void test_arrays_through_cupti(void **state)
{
    (void)state;
    static struct run_result r;
    char lib[700], inj[700], out[700];
    snprintf(lib, sizeof lib, "GPULEDGER_CUPTI_LIB=%s", h_build("tests/fakecupti/libcupti.so.13"));
    snprintf(inj, sizeof inj, "CUDA_INJECTION64_PATH=%s", h_build("interpose/libgpuledger.so"));
    snprintf(out, sizeof out, "GPULEDGER_OUTPUT=%s/inj.db", h_dir());
    h_run(&r, ENV(lib, inj, out, nvml_env, "GPULEDGER_QUIET=1"), ARGV(PROG("arrays"), "--private"));
    assert_int_equal(r.status, 0);
    sqlite3 *db = h_open("inj.db");
    assert_string_equal(h_text(db, "SELECT group_concat(op || ':' || api || ':' || kind || ':' || size, ' ') FROM "
                                   "(SELECT * FROM events ORDER BY seq)"),
                        "alloc:cuMemAlloc_v2:device:1048576 alloc:cuArray3DCreate_v2:array:2097152 "
                        "free:cuMemFree_v2:device:1048576");
    assert_string_equal(h_text(db, "SELECT f.symbol FROM allocations a JOIN stack_frames f ON f.stack_id = "
                                   "a.stack_id AND f.depth = 0 WHERE a.kind = 'array'"),
                        "private_array");
    sqlite3_close(db);
}

/* Graph memory (tests/progs/graphs.c): each allocation captured or added
 * into a graph is a definition (graph_alloc / graph_free, with its stack),
 * not memory in use; launches of graphs with memory nodes bring what they
 * leave live (with their node's stack) and the graph pool's reservation
 * (api graph_pool rows, the rest of the reservation); a graph without
 * memory nodes leaves no trace. */
static void test_graph_memory(void **state)
{
    (void)state;
    static struct run_result r;
    h_run(&r, ENV(nvml_env), ARGV(GL, "run", "-q", "-o", "g.db", PROG("graphs")));
    assert_int_equal(r.status, 0);
    sqlite3 *db = h_open("g.db");
    assert_string_equal(
        h_text(db, "SELECT group_concat(op || ':' || api || ':' || (size >> 20), ' ') FROM (SELECT * FROM events "
                   "ORDER BY seq)"),
        /* 1. captured 32 MiB scratch, launched 3 times: the pool reserves 32 MiB at the first launch only */
        "graph_alloc:cudaMallocAsync:32 graph_free:cudaFreeAsync:0 graph_launch:cuGraphLaunch:32 "
        "alloc:graph_pool:32 "
        /* 2. captured 8 MiB kept: its launch makes it live inside the pool (pool row 32 -> 24) */
        "graph_alloc:cudaMallocAsync:8 graph_launch:cuGraphLaunch:32 free:graph_pool:32 alloc:graph_pool:24 "
        "alloc:cuGraphLaunch:8 "
        /* ... freed after the launch with cudaFree: back to the pool (24 -> 32) */
        "free:cudaFree:8 free:graph_pool:24 alloc:graph_pool:32 "
        /* 3. a graph without memory nodes, launched twice: nothing; 4. the trim gives the pool back */
        "trim:cuDeviceGraphMemTrim:0 free:graph_pool:32 "
        /* 5. a 3 MiB allocation node (4 MiB of pool), auto-freed at its relaunch, live at the end */
        "graph_alloc:cuGraphAddMemAllocNode:3 graph_launch:cuGraphLaunch:4 alloc:cuGraphLaunch:3 "
        "alloc:graph_pool:1 graph_launch:cuGraphLaunch:4 free:cuGraphLaunch:3 alloc:cuGraphLaunch:3");
    /* each row's stack: the definitions', the launches', and a launched
     * allocation carries its node's (the runtime's own frames cut) */
    assert_string_equal(
        h_text(db, "SELECT group_concat(coalesce(f.symbol, '-'), ' ') FROM (SELECT * FROM events ORDER BY seq) e "
                   "LEFT JOIN stack_frames f ON f.stack_id = e.stack_id AND f.depth = 0"),
        "capture_scratch capture_scratch launch_three_times launch_three_times capture_kept main main main "
        "capture_kept free_after_launch free_after_launch free_after_launch main main add_node_by_hand main "
        "add_node_by_hand main main - add_node_by_hand");
    /* a launched allocation refers to its node's row */
    assert_int_equal(h_int(db, "SELECT count(*) FROM event_log a JOIN event_log d ON d.seq = a.ref_seq WHERE "
                               "a.op = 1 AND a.api = 54 AND d.op = 21 AND d.addr = a.addr"),
                     3);
    assert_int_equal(h_int(db, "SELECT count(*) FROM events WHERE op = 'graph_alloc' AND aux IS NOT NULL"), 3);
    /* the ledger never holds more than the device: 32 MiB */
    assert_int_equal(h_int(db, "SELECT peak_bytes FROM device_stats WHERE device = 0"), 32 * MiB);
    assert_int_equal(h_int(db, "SELECT live_bytes FROM device_stats WHERE device = 0"), 4 * MiB);
    assert_string_equal(h_text(db, "SELECT group_concat((reserved >> 20) || '/' || (used >> 20) || '/' || "
                                   "(reserved_high >> 20) || '/' || (used_high >> 20), ' ') FROM (SELECT * FROM "
                                   "graph_pool_samples ORDER BY ts_ns)"),
                        "32/0/32/32 0/0/32/32 4/4/32/32");
    sqlite3_close(db);
    /* the allocation left at the end is a leak with its node's stack; the
     * pool's 1 MiB the driver holds is not */
    h_run(&r, NULL, ARGV(GL, "leaks", "g.db"));
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "3.00 MiB never freed in 1 leak chain; 1.00 MiB held by a caching allocator"));
    assert_non_null(strstr(r.out, "0  add_node_by_hand"));
    h_run(&r, NULL, ARGV(GL, "summary", "g.db"));
    assert_non_null(strstr(r.out, "peak 32.00 MiB on device 0, 1 allocation (3.00 MiB) never freed"));
    h_run(&r, NULL, ARGV(GL, "report", "g.db"));
    assert_non_null(strstr(r.out, "at the peak, by category: graph_pool 32.00 MiB (100%)"));
    assert_non_null(strstr(r.out, "calls: cudaFree 1 cudaMallocAsync 2 cudaFreeAsync 1 cuGraphAddMemAllocNode 1 "
                                  "cuGraphLaunch 4 cuDeviceGraphMemTrim 1\n"));
}

/* Stream capture (tests/progs/capture.c, against the fake driver's rules on
 * potentially unsafe calls): every capture the program makes succeeds under
 * gpuledger exactly as bare — gpuledger takes no pool, device, graph-pool or
 * process-figure sample of its own while any stream captures (with NVML and
 * without, where the figure falls back to cuMemGetInfo), and takes the
 * samples again once none does; captured calls are graph definitions. */
static void test_capture(void **state)
{
    (void)state;
    static struct run_result bare, r;
    static const char expected[] = "global: ok\nother_thread: ok\nthread_local: ok\nrelaxed_malloc: ok\n"
                                   "unsafe_call: invalidated, as CUDA does\ncapture: ok\n";
    h_run(&bare, NULL, ARGV(PROG("capture")));
    assert_int_equal(bare.status, 0);
    assert_string_equal(bare.out, expected);
    static const struct {
        const char *env, *usage;
    } cases[] = {
        {nvml_env, "21:17:nvml_process 22:16:nvml_process"},
        {"GPULEDGER_NVML_LIB=/nonexistent/libnvidia-ml.so.1", "21:17:cudaMemGetInfo 22:16:cudaMemGetInfo"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char out[32];
        snprintf(out, sizeof out, "c%zu.db", i);
        h_run(&r, ENV(cases[i].env), ARGV(GL, "run", "-q", "-o", out, PROG("capture")));
        assert_int_equal(r.status, 0);
        assert_string_equal(r.out, expected);
        sqlite3 *db = h_open(out);
        assert_string_equal(
            h_text(db, "SELECT group_concat(op || ':' || api || ':' || (size >> 20) || ':' || result, ' ') FROM "
                       "(SELECT * FROM events ORDER BY seq)"),
            /* 1. global (a mark inside), launched: the graph pool's 16 MiB; the scratch graph */
            "graph_alloc:cudaMallocAsync:16:0 mark:gpuledger_mark:0:0 graph_free:cudaFreeAsync:0:0 "
            "graph_launch:cuGraphLaunch:16:0 alloc:graph_pool:16:0 graph_alloc:cudaMallocAsync:2:0 "
            "graph_free:cudaFreeAsync:0:0 "
            /* 2. beside another thread's global capture (the graph launched then leaves no row: no
             * memory outside it, and its pool not read) */
            "alloc:cudaMallocAsync:64:0 free:cudaFreeAsync:64:0 graph_alloc:cudaMallocAsync:4:0 "
            "graph_free:cudaFreeAsync:0:0 "
            /* 3. beside a thread-local capture; 4. relaxed cudaMalloc inside a global capture */
            "alloc:cudaMalloc:8:0 free:cudaFree:8:0 graph_alloc:cudaMallocAsync:4:0 graph_free:cudaFreeAsync:0:0 "
            "alloc:cudaMalloc:32:0 graph_alloc:cudaMallocAsync:2:0 graph_free:cudaFreeAsync:0:0 free:cudaFree:32:0 "
            /* 5. the program's own unsafe call invalidated its capture: the next call failed; 6. after */
            "error:cudaMallocAsync:1:901 alloc:cudaMallocAsync:1:0 free:cudaFreeAsync:1:0");
        /* every call before "after" was made while a stream captured: one
         * pool and one device sample, both at "after" */
        assert_int_equal(h_int(db, "SELECT count(*) FROM pool_samples"), 1);
        assert_int_equal(h_int(db, "SELECT count(*) FROM device_samples"), 1);
        assert_int_equal(h_int(db, "SELECT count(*) FROM pool_samples p JOIN events e ON e.seq = 21 AND "
                                   "e.api = 'cudaMallocAsync' AND p.ts_ns = e.ts_ns AND p.used = 1048576"),
                         1);
        assert_int_equal(h_int(db, "SELECT count(*) FROM device_samples d JOIN events e ON e.seq = 21 AND "
                                   "d.ts_ns = e.ts_ns"),
                         1);
        /* the process figure the writer asked for during the captures,
         * taken at the first call after them; none at the mark inside one */
        assert_string_equal(h_text(db, "SELECT group_concat(seq || ':' || (ledger >> 20) || ':' || source, ' ') "
                                       "FROM usage_samples"),
                            cases[i].usage);
        sqlite3_close(db);
    }
}

/* The text with " (sampled N µs after it)" after "at the peak" taken out:
 * whether a sample lands on the peak's event itself or a few µs after it
 * depends on the writer's timing (under the sanitizers, after); the rule
 * that picks it has its own test (test_usage, test_remainder_high_water). */
static const char *without_distance(char *text)
{
    const char *mark = "at the peak (sampled ";
    char *p = strstr(text, mark);
    if (p) {
        char *close = strstr(p, " it)");
        if (close)
            memmove(p + strlen("at the peak"), close + strlen(" it)"), strlen(close + strlen(" it)")) + 1);
    }
    return text;
}

/* "Outside any allocation API": the process's own figure less the ledger,
 * from each source, at marks and at exit (tests/progs/remainder.c: 300 MiB
 * context, then 64 MiB local memory at the first launch). */
static void test_remainder(void **state)
{
    (void)state;
    static struct run_result r;
    static const struct {
        const char *env, *source, *rows, *line;
    } cases[] = {
        {"FAKENVML_OTHER_BYTES=0", "nvml_process", "start:304:4 launched:368:4 end:376:12",
         "outside any allocation API: 364.00 MiB at the peak, 364.00 MiB at the end (process 376.00 MiB = "
         "ledger 12.00 MiB + 364.00 MiB; NVML's figure for this process, as nvidia-smi shows it)"},
        /* a container whose pids NVML does not see, another process on the device */
        {"FAKENVML_HIDE_PIDS=1", "nvml_device", "start:304:4 launched:368:4 end:376:12",
         "outside any allocation API: 364.00 MiB at the peak, 364.00 MiB at the end (process 376.00 MiB = "
         "ledger 12.00 MiB + 364.00 MiB; NVML: the device's used memory less what it held before the process "
         "began)"},
        /* no NVML: the context existed before the first sample and is not seen */
        {"GPULEDGER_NVML_LIB=/nonexistent/libnvidia-ml.so.1", "cudaMemGetInfo", "start:4:4 launched:68:4 end:76:12",
         "outside any allocation API: 64.00 MiB at the peak, 64.00 MiB at the end (NVML was not available, so the "
         "process's own figure is not known; cudaMemGetInfo: the device's used memory less what it held beyond the "
         "ledger at the first sample)"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char out[32];
        snprintf(out, sizeof out, "r%zu.db", i);
        h_run(&r, ENV(nvml_env, "FAKENVML_OTHER_BYTES=1073741824", cases[i].env),
              ARGV(GL, "run", "-q", "-o", out, PROG("remainder")));
        assert_int_equal(r.status, 0);
        sqlite3 *db = h_open(out);
        assert_string_equal(h_text(db, "SELECT group_concat(source) FROM (SELECT DISTINCT source FROM usage_samples)"),
                            cases[i].source);
        /* at each mark (11 ms apart: a mark samples a device at most every
         * 10 ms), and the last (at exit) */
        assert_string_equal(
            h_text(db, "SELECT group_concat(coalesce(substr(a.label, 1), 'end') || ':' || (u.used >> 20) || ':' || "
                       "(u.ledger >> 20), ' ') FROM usage_samples u LEFT JOIN annotations a ON a.seq = u.seq WHERE "
                       "a.seq IS NOT NULL OR u.rowid = (SELECT max(rowid) FROM usage_samples)"),
            cases[i].rows);
        sqlite3_close(db);
        h_run(&r, NULL, ARGV(GL, "report", out));
        assert_int_equal(r.status, 0);
        assert_non_null(strstr(without_distance(r.out), cases[i].line));
        h_run(&r, NULL, ARGV(GL, "report", "--format", "json", out));
        char json[200];
        snprintf(json, sizeof json, "\"outside_api\":{\"source\":\"%s\",\"peak\":", cases[i].source);
        assert_non_null(strstr(r.out, json));
    }
}

/* The samples the writer asks for as the ledger grows (tests/progs/remainder.c
 * highwater; every call followed by a checkpoint and 11 ms): one each time
 * the device's ledger passes its last sampled high-water mark by 2 MiB or
 * more, taken at the next allocation; none while the ledger moves under the
 * mark; one at exit. seq:used:ledger in KiB (the fake context's 300 MiB
 * outside the ledger). */
static void test_remainder_high_water(void **state)
{
    (void)state;
    static struct run_result r;
    h_run(&r, ENV(nvml_env), ARGV(GL, "run", "-q", "-o", "hw.db", PROG("remainder"), "highwater"));
    assert_int_equal(r.status, 0);
    assert_string_equal(r.out, "remainder highwater: ok\n");
    sqlite3 *db = h_open("hw.db");
    assert_string_equal(h_text(db, "SELECT group_concat(seq || ':' || (used >> 10) || ':' || (ledger >> 10), ' ') FROM "
                                   "(SELECT * FROM usage_samples ORDER BY ts_ns)"),
                        /* 1 MiB at a time: asked at 1, 3, 5, 7, 9 MiB, taken at the next allocation */
                        "2:309248:2048 4:311296:4096 6:313344:6144 8:315392:8192 10:317440:10240 "
                        /* 10.5 MiB: none; 12.5 MiB: asked, taken at the 256 KiB after a free; exit */
                        "24:319744:12544 25:317696:10496");
    assert_string_equal(h_text(db, "SELECT group_concat(DISTINCT source) FROM usage_samples"), "nvml_process");
    sqlite3_close(db);
    h_run(&r, NULL, ARGV(GL, "report", "hw.db"));
    assert_int_equal(r.status, 0);
    /* at the peak (event 22, the 2 MiB): the sample nearest its time, the
     * one at event 24 after two 11 ms pauses (the one before, at event 10,
     * is 12 pauses back), its distance said */
    const char *at = strstr(r.out, "outside any allocation API: 300.00 MiB at the peak (sampled ");
    assert_non_null(at);
    at += strlen("outside any allocation API: 300.00 MiB at the peak (sampled ");
    at += strspn(at, "0123456789.");
    const char *rest = " ms after it), 300.00 MiB at the end (process 310.25 MiB = ledger 10.25 MiB + 300.00 MiB; "
                       "NVML's figure for this process, as nvidia-smi shows it)\n";
    assert_int_equal(strncmp(at, rest, strlen(rest)), 0); /* right after the number */
    h_run(&r, NULL, ARGV(GL, "report", "--format", "json", "hw.db"));
    const char *peak = strstr(r.out, "\"outside_api\":{\"source\":\"nvml_process\",\"peak\":{\"seq\":24,\"ts_ns\":");
    assert_non_null(peak);
    const char *from = strstr(peak, "\"from_peak_ns\":");
    assert_non_null(from);
    long long ns = strtoll(from + strlen("\"from_peak_ns\":"), NULL, 10);
    assert_true(ns >= 22000000 && ns < 100000000);
}

/* A mark samples each device at most every 10 ms, its figure and its
 * pools (tests/progs/remainder.c marks: a cudaMallocAsync, marks m1 m2 m3,
 * 11 ms, m4): figures at m1, m4 and exit; pool samples after the
 * allocation, at m1 and at m4. */
/* The usage figures (and pool samples) at marks of `remainder marks MS`:
 * "label:KiB ..." in time order, then "count:pool KiB,...". */
static void marks_sampled(const char *period_ms, const char *pause_ms, const char *usage, const char *pools)
{
    static struct run_result r;
    static char var[64], db_name[64];
    snprintf(var, sizeof var, "GPULEDGER_MARK_SAMPLE_MS=%s", period_ms);
    snprintf(db_name, sizeof db_name, "mk-%s.db", period_ms);
    h_run(&r, ENV(nvml_env, var), ARGV(GL, "run", "-q", "-o", db_name, PROG("remainder"), "marks", pause_ms));
    assert_int_equal(r.status, 0);
    assert_string_equal(r.out, "remainder marks: ok\n");
    sqlite3 *db = h_open(db_name);
    assert_string_equal(h_text(db, "SELECT group_concat(coalesce(a.label, 'end') || ':' || (u.ledger >> 10), ' ') FROM "
                                   "(SELECT * FROM usage_samples ORDER BY ts_ns) u LEFT JOIN annotations a ON "
                                   "a.seq = u.seq"),
                        usage);
    assert_string_equal(h_text(db, "SELECT count(*) || ':' || group_concat(used >> 10) FROM pool_samples"), pools);
    sqlite3_close(db);
}

/* A mark samples a device at most every GPULEDGER_MARK_SAMPLE_MS (default
 * 10 ms): marks m1 m2 m3 back to back, m4 after a pause longer than the
 * period; the exit always samples. Periods far from the times involved,
 * so that a loaded machine cannot change the answer: 500 ms (m2 and m3 are
 * microseconds after m1; m4 600 ms after), and 0 (every mark). */
static void test_marks_sample_at_most_every_period(void **state)
{
    (void)state;
    /* pool samples: after the cudaMallocAsync, at m1 and at m4 */
    marks_sampled("500", "600", "m1:1024 m4:1024 end:0", "3:1024,1024,1024");
    marks_sampled("0", "1", "m1:1024 m2:1024 m3:1024 m4:1024 end:0", "5:1024,1024,1024,1024,1024");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_arrays, h_teardown),
        cmocka_unit_test_teardown(test_arrays_through_cupti, h_teardown),
        cmocka_unit_test_teardown(test_graph_memory, h_teardown),
        cmocka_unit_test_teardown(test_capture, h_teardown),
        cmocka_unit_test_teardown(test_remainder, h_teardown),
        cmocka_unit_test_teardown(test_remainder_high_water, h_teardown),
        cmocka_unit_test_teardown(test_marks_sample_at_most_every_period, h_teardown),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
