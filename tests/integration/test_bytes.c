/* test_bytes.c — every byte the device holds, end to end against the fake
 * driver's fixed rules (tests/fakecuda/fake_array.c, fake_graph.c,
 * fake_nvml.c): CUDA arrays (sizes asked and reserved, the leaked one in
 * `leaks`), graph memory (capture, a graph launched three times, an
 * allocation freed after its launch, the graph pool over time, a leaked
 * graph allocation) and the remainder row ("outside any allocation API")
 * from each of its three sources. */
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

static int teardown(void **state)
{
    (void)state;
    h_cleanup();
    return 0;
}

/* Array rows: requested sizes (the fake driver answers
 * cuArrayGetMemoryRequirements for deferred-mapping arrays only, as CUDA
 * documents), or the driver's reserved sizes when it answers for all. */
static void test_arrays(void **state)
{
    (void)state;
    static struct run_result r;
    h_run(&r, ENV(nvml_env), ARGV(GL, "run", "-q", "-o", "a.db", PROG("arrays")));
    assert_int_equal(r.status, 0);
    sqlite3 *db = h_open("a.db");
    assert_string_equal(h_text(db, "SELECT group_concat(api || ':' || size || ':' || aux, ' ') FROM (SELECT * FROM "
                                   "events WHERE kind = 'array' AND op = 'alloc' ORDER BY seq)"),
                        "cudaMallocArray:4000000:4000000 cudaMalloc3DArray:16777216:16777216 "
                        "cudaMallocMipmappedArray:5505024:5505024 cuArrayCreate_v2:6000000:6000000 "
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
    assert_int_equal(h_int(db, "SELECT peak_bytes FROM device_stats WHERE device = 0"), MiB + 4000000 + 16 * MiB);
    assert_int_equal(h_int(db, "SELECT live_bytes FROM device_stats WHERE device = 0"), 4000000);
    sqlite3_close(db);
    h_run(&r, NULL, ARGV(GL, "leaks", "a.db"));
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "3.81 MiB never freed in 1 leak chain"));
    assert_non_null(strstr(r.out, "[arrays]"));
    assert_non_null(strstr(r.out, "load_texture"));

    h_run(&r, ENV(nvml_env, "FAKECUDA_ARRAY_REQS=all"), ARGV(GL, "run", "-q", "-o", "all.db", PROG("arrays")));
    assert_int_equal(r.status, 0);
    db = h_open("all.db");
    assert_string_equal(h_text(db, "SELECT group_concat(size, ' ') FROM (SELECT size FROM events WHERE kind = "
                                   "'array' AND op = 'alloc' ORDER BY seq)"),
                        "4194304 16777216 6291456 6291456 0 10485760");
    sqlite3_close(db);
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_arrays, teardown),
        cmocka_unit_test_teardown(test_arrays_through_cupti, teardown),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
