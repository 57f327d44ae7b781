/* test_torch_shim.c — python/gpuledger/torch_shim.cpp compiled against the
 * stand-in PyTorch header (tests/torchstub) and run against a stub
 * allocator: attach only once the allocator is initialised, refuse the
 * cudaMallocAsync backend, report a failing snapshot in one line, emit the
 * allocator's settings and the blocks that existed before attaching, then
 * forward every trace entry with the right action, device, stream and pool. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "gpuledger.h"

int gpuledger_torch_shim_attach(gpuledger_torch_event_fn emit, char *err, size_t errsz);
int gpuledger_torch_shim_abi(void);
void stub_install(const char *backend, int initialized, int throw_snapshot);
void stub_set_initialized(int initialized);
void stub_set_config(uint64_t max_split, int expandable, const uint64_t *divisions, int n);
void stub_add_segment(int device, uint64_t addr, uint64_t stream, int expandable, uint64_t pool_a, uint64_t pool_b);
void stub_add_block(uint64_t size, uint64_t requested, int allocated, int active);
int stub_trackers(void);
void stub_fire(int action, int device, uint64_t addr, uint64_t size, uint64_t stream, uint64_t pool_a,
               uint64_t pool_b);

struct call {
    int action, device;
    uint64_t addr, size, stream, pool_a, pool_b, extra;
};
static struct call calls[64];
static int ncalls;

static void record(int action, int device, uint64_t addr, uint64_t size, uint64_t stream, uint64_t pool_a,
                   uint64_t pool_b, uint64_t extra)
{
    if (ncalls < 64)
        calls[ncalls++] = (struct call){action, device, addr, size, stream, pool_a, pool_b, extra};
}

static void expect(int i, int action, int device, uint64_t addr, uint64_t size, uint64_t stream, uint64_t pool_a,
                   uint64_t pool_b, uint64_t extra)
{
    assert_true(i < ncalls);
    assert_int_equal(calls[i].action, action);
    assert_int_equal(calls[i].device, device);
    assert_int_equal(calls[i].addr, addr);
    assert_int_equal(calls[i].size, size);
    assert_int_equal(calls[i].stream, stream);
    assert_int_equal(calls[i].pool_a, pool_a);
    assert_int_equal(calls[i].pool_b, pool_b);
    assert_int_equal(calls[i].extra, extra);
}

static char err[256];

static void not_initialised_is_not_yet(void **state)
{
    (void)state;
    stub_install("native", 0, 0);
    ncalls = 0;
    assert_int_equal(gpuledger_torch_shim_attach(record, err, sizeof err), 0);
    assert_int_equal(ncalls, 0);
    assert_int_equal(stub_trackers(), 0);
    assert_int_equal(gpuledger_torch_shim_abi(), GPULEDGER_TORCH_ABI);
}

static void async_backend_refused(void **state)
{
    (void)state;
    stub_install("cudaMallocAsync", 1, 0);
    ncalls = 0;
    assert_int_equal(gpuledger_torch_shim_attach(record, err, sizeof err), -1);
    assert_non_null(strstr(err, "'cudaMallocAsync' CUDA allocator backend takes no trace tracker"));
    assert_int_equal(stub_trackers(), 0);
}

static void failing_snapshot_reported(void **state)
{
    (void)state;
    stub_install("native", 1, 1);
    ncalls = 0;
    assert_int_equal(gpuledger_torch_shim_attach(record, err, sizeof err), -1);
    assert_string_equal(err, "snapshot failed\nwith a second line");
    assert_int_equal(stub_trackers(), 0);
}

#define MiB (1024ULL * 1024)

static void snapshot_then_attach(void **state)
{
    (void)state;
    stub_install("native", 0, 0);
    uint64_t div[16] = {0};
    div[0] = 4;  /* log2 2 + 1 = 3 */
    div[3] = 1;  /* 1 */
    div[15] = 8; /* 4 */
    stub_set_config(200 * MiB, 1, div, 16);
    stub_add_segment(0, 0x7f0000000000ULL, 0, 0, 0, 0);
    stub_add_block(512, 100, 1, 1);     /* live */
    stub_add_block(1024, 1000, 0, 1);   /* freed, waiting for a stream */
    stub_add_block(2 * MiB - 1536, 0, 0, 0); /* free */
    stub_add_segment(1, 0x7f1000000000ULL, 0x55, 1, 3, 0);
    stub_add_block(20 * MiB, 20 * MiB - 7, 1, 1);
    ncalls = 0;
    assert_int_equal(gpuledger_torch_shim_attach(record, err, sizeof err), 0);
    stub_set_initialized(1);
    assert_int_equal(gpuledger_torch_shim_attach(record, err, sizeof err), 1);
    assert_int_equal(ncalls, 7);
    expect(0, GPULEDGER_TORCH_CONFIG, -1, 200 * MiB, 1, 0, 0, 0, 3ULL | 1ULL << 12 | 4ULL << 60);
    expect(1, GPULEDGER_TORCH_SNAPSHOT_SEGMENT, 0, 0x7f0000000000ULL, 2 * MiB, 0, 0, 0, 0);
    expect(2, GPULEDGER_TORCH_SNAPSHOT_BLOCK, 0, 0x7f0000000000ULL, 512, 0, 0, 0, 100 | 1ULL << 62);
    expect(3, GPULEDGER_TORCH_SNAPSHOT_BLOCK, 0, 0x7f0000000200ULL, 1024, 0, 0, 0, 1000 | 2ULL << 62);
    expect(4, GPULEDGER_TORCH_SNAPSHOT_BLOCK, 0, 0x7f0000000600ULL, 2 * MiB - 1536, 0, 0, 0, 0);
    expect(5, GPULEDGER_TORCH_SNAPSHOT_SEGMENT, 1, 0x7f1000000000ULL, 20 * MiB, 0x55, 3, 0, 1);
    expect(6, GPULEDGER_TORCH_SNAPSHOT_BLOCK, 1, 0x7f1000000000ULL, 20 * MiB, 0x55, 3, 0, (20 * MiB - 7) | 1ULL << 62);
    assert_int_equal(stub_trackers(), 1);
    /* attached once: a second call changes nothing */
    assert_int_equal(gpuledger_torch_shim_attach(record, err, sizeof err), 1);
    assert_int_equal(ncalls, 7);
    assert_int_equal(stub_trackers(), 1);
}

static void entries_forwarded(void **state)
{
    (void)state;
    ncalls = 0;
    /* TraceEntry::Action numbers: ALLOC 0 ... SNAPSHOT 7, OOM 8 */
    stub_fire(3, 0, 0x1000, 2 * MiB, 7, 0, 0);    /* SEGMENT_ALLOC */
    stub_fire(0, 0, 0x1000, 100, 7, 0, 0);        /* ALLOC */
    stub_fire(1, 0, 0x1000, 100, 7, 0, 0);        /* FREE_REQUESTED */
    stub_fire(2, 0, 0x1000, 100, 7, 0, 0);        /* FREE_COMPLETED */
    stub_fire(5, 2, 0x4000, 20 * MiB, 9, 5, 0);   /* SEGMENT_MAP, private pool */
    stub_fire(6, 2, 0x4000, 20 * MiB, 9, 0, 6);   /* SEGMENT_UNMAP */
    stub_fire(4, 0, 0x1000, 2 * MiB, 7, 0, 0);    /* SEGMENT_FREE */
    stub_fire(7, 0, 0, 0, 0, 0, 0);               /* SNAPSHOT: not ours */
    stub_fire(8, 1, 12345, 40 * MiB, 8, 0, 0);    /* OOM: addr_ is the free bytes */
    assert_int_equal(ncalls, 8);
    expect(0, GPULEDGER_TORCH_SEGMENT_ALLOC, 0, 0x1000, 2 * MiB, 7, 0, 0, 0);
    expect(1, GPULEDGER_TORCH_ALLOC, 0, 0x1000, 100, 7, 0, 0, 0);
    expect(2, GPULEDGER_TORCH_FREE_REQUESTED, 0, 0x1000, 100, 7, 0, 0, 0);
    expect(3, GPULEDGER_TORCH_FREE_COMPLETED, 0, 0x1000, 100, 7, 0, 0, 0);
    expect(4, GPULEDGER_TORCH_SEGMENT_MAP, 2, 0x4000, 20 * MiB, 9, 5, 0, 0);
    expect(5, GPULEDGER_TORCH_SEGMENT_UNMAP, 2, 0x4000, 20 * MiB, 9, 0, 6, 0);
    expect(6, GPULEDGER_TORCH_SEGMENT_FREE, 0, 0x1000, 2 * MiB, 7, 0, 0, 0);
    expect(7, GPULEDGER_TORCH_OOM, 1, 0, 40 * MiB, 8, 0, 0, 12345);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(not_initialised_is_not_yet), cmocka_unit_test(async_backend_refused),
        cmocka_unit_test(failing_snapshot_reported), cmocka_unit_test(snapshot_then_attach),
        cmocka_unit_test(entries_forwarded),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
