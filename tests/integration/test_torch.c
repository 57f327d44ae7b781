/* test_torch.c — the tensor ledger end to end, without torch or a GPU:
 *  - tests/progs/torchalloc drives a stand-in of PyTorch's caching
 *    allocator (fakealloc.c) that reports to gpuledger_torch_event in the
 *    order the real one does: the rows, block sizes, pairings, tags,
 *    block_stats and allocator_samples are checked against what the
 *    allocator itself counted, for small and large pools, a free delayed
 *    by record_stream and completed on another thread, a snapshot at a late
 *    attach, expandable segments, and a fragmentation and a demand OOM;
 *  - an unmodified Python "training job" on the stand-in torch
 *    (tests/pystub) under gpuledger run: the gpuledger package found
 *    through the launcher's sitecustomize, the C++ shim built (once, then
 *    from the cache) against the stand-in header and attached at the first
 *    segment, and the identity tags, steps and ranges from the hooks. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "harness.h"

#define MiB (1024LL * 1024)

static long long stat_of(const char *out, const char *key)
{
    char k[64];
    snprintf(k, sizeof k, " %s=", key);
    const char *p = strstr(out, k);
    return p ? atoll(p + strlen(k)) : -1;
}

static sqlite3 *run_torchalloc(const char *what, const char *const *env, struct run_result *r)
{
    static char db[512], argv_db[520];
    snprintf(db, sizeof db, "%s/%s.db", h_dir(), what);
    snprintf(argv_db, sizeof argv_db, "%s", db);
    h_run(r, env, ARGV(GL, "run", "-q", "--torch", "blocks", "-o", argv_db, "--", PROG("torchalloc"), what));
    if (r->status != 0)
        fail_msg("torchalloc %s: exit %d\n%s\n%s", what, r->status, r->out, r->err);
    return h_open(db);
}

/* The allocator's own figures (its "stats" line) = block_stats. */
static void same_stats(sqlite3 *db, const char *out)
{
    assert_int_equal(h_int(db, "SELECT allocated_peak FROM block_stats WHERE device = 0"),
                     stat_of(out, "allocated_peak"));
    assert_int_equal(h_int(db, "SELECT requested_peak FROM block_stats WHERE device = 0"),
                     stat_of(out, "requested_peak"));
    assert_int_equal(h_int(db, "SELECT reserved_peak FROM block_stats WHERE device = 0"),
                     stat_of(out, "reserved_peak"));
    assert_int_equal(h_int(db, "SELECT count(*) FROM tensor_blocks WHERE api = 'CUDACachingAllocator'"),
                     stat_of(out, "allocs"));
    assert_int_equal(h_int(db, "SELECT sum(size) FROM tensor_blocks WHERE api = 'CUDACachingAllocator'"),
                     stat_of(out, "block_bytes"));
    assert_int_equal(h_int(db, "SELECT unknown FROM block_stats WHERE device = 0"), 0);
}

static void test_blocks_basic(void **state)
{
    (void)state;
    struct run_result r;
    sqlite3 *db = run_torchalloc("basic", NULL, &r);
    same_stats(db, r.out);
    /* block sizes: 512, 1024 (x3, one reused), 1573376 and the whole rest of
     * the 20 MiB segment, 30 MiB */
    assert_string_equal(h_text(db, "SELECT group_concat(requested || ':' || size, ' ') FROM (SELECT * FROM "
                                   "tensor_blocks ORDER BY id)"),
                        "100:512 1000:1024 513:1024 1572865:1573376 18874368:19398144 31457280:31457280 700:1024");
    /* every block in the segment that holds it */
    assert_int_equal(h_int(db, "SELECT count(*) FROM tensor_blocks b JOIN events s ON s.kind = 'segment' AND "
                               "s.op = 'alloc' AND s.addr = b.segment AND b.addr < s.addr + s.size"),
                     7);
    /* the free delayed by record_stream: requested on the main thread,
     * completed on the other one, just before that thread's own block */
    assert_int_equal(h_int(db, "SELECT count(*) FROM tensor_blocks WHERE requested = 1000 AND released_ns >= "
                               "free_ns"),
                     1);
    assert_int_equal(h_int(db, "SELECT count(DISTINCT e.tid) FROM events e JOIN tensor_blocks b ON e.ref_seq = b.id "
                               "WHERE b.requested = 1000"),
                     2);
    assert_int_equal(h_int(db, "SELECT count(*) FROM events c JOIN events a ON a.seq = c.seq + 1 WHERE c.op = "
                               "'free_completed' AND a.op = 'alloc' AND a.kind = 'block' AND a.size = 700 AND "
                               "c.tid = a.tid"),
                     1);
    /* frees pair with their blocks: the stack of the allocation; by default
     * none of the free (GPULEDGER_FREE_STACKS=auto: test_blocks_free_rows) */
    assert_int_equal(h_int(db, "SELECT count(*) FROM tensor_blocks WHERE free_ns IS NOT NULL AND stack_id IS NOT "
                               "NULL AND free_stack_id IS NULL"),
                     4);
    /* one row per free: free (reusable at once) or free_requested, whose
     * free_completed row follows; the record_stream one is always the
     * latter (completed on another thread), the others are free unless the
     * writer took the free before its completion came (a thread descheduled
     * in between): every freed block is released, each exactly once */
    assert_int_equal(h_int(db, "SELECT count(*) FROM events WHERE kind = 'block' AND op IN ('free', "
                               "'free_requested')"),
                     4);
    assert_int_equal(h_int(db, "SELECT count(*) FROM events WHERE kind = 'block' AND op = 'free_completed'"),
                     h_int(db, "SELECT count(*) FROM events WHERE kind = 'block' AND op = 'free_requested'"));
    assert_int_equal(h_int(db, "SELECT count(*) FROM events f JOIN tensor_blocks b ON f.ref_seq = b.id WHERE "
                               "b.requested = 1000 AND f.op = 'free_requested'"),
                     1);
    assert_int_equal(h_int(db, "SELECT count(*) FROM tensor_blocks WHERE free_ns IS NOT NULL AND released_ns >= "
                               "free_ns"),
                     4);
    /* the allocator's own frames (emit, as record_trace in PyTorch) on top */
    assert_int_equal(h_int(db, "SELECT count(*) FROM stack_frames f JOIN tensor_blocks b ON b.stack_id = "
                               "f.stack_id WHERE f.depth = 1 AND f.symbol = 'fa_malloc'"),
                     7);
    /* tags name the block at (or around) their address */
    assert_string_equal(h_text(db, "SELECT group_concat(requested || ':' || category, ' ') FROM (SELECT * FROM "
                                   "tensor_blocks WHERE category IS NOT NULL ORDER BY id)"),
                        "100:optimizer_state 513:gradients 31457280:parameters");
    /* sub-allocations stay out of the CUDA ledger */
    assert_int_equal(h_int(db, "SELECT count(*) FROM allocations"), 3);
    /* a CUDA free keeps its stack by default (the segment empty_cache gave back) */
    assert_int_equal(h_int(db, "SELECT count(*) FROM allocations WHERE free_ns IS NOT NULL AND free_stack_id IS NOT "
                               "NULL"),
                     1);
    assert_int_equal(h_int(db, "SELECT peak_bytes FROM device_stats WHERE device = 0"), 54525952);
    assert_int_equal(h_int(db, "SELECT count(*) FROM mappings"), 0);
    /* at the end: the 20 MiB segment given back by empty_cache; the 30 MiB
     * one full; the 2 MiB one holds 512 + 1024 B live and two holes */
    assert_string_equal(h_text(db, "SELECT reserved || ' ' || allocated || ' ' || cached_free || ' ' || holes || ' ' "
                                   "|| largest_hole FROM allocator_samples ORDER BY seq DESC, rowid DESC LIMIT 1"),
                        "33554432 31458816 2095616 2 2094592");
    assert_int_equal(h_int(db, "SELECT count(*) FROM events WHERE op = 'config' AND api = 'CUDACachingAllocator'"),
                     1);
    assert_int_equal(h_int(db, "SELECT unmatched_frees FROM run"), 0);
    sqlite3_close(db);
}

/* GPULEDGER_FREE_STACKS=1: the frees of blocks carry their stacks too;
 * =0: no free has one, not even a CUDA free */
static void test_blocks_free_stacks(void **state)
{
    (void)state;
    struct run_result r;
    sqlite3 *db = run_torchalloc("basic", ENV("GPULEDGER_FREE_STACKS=1"), &r);
    same_stats(db, r.out);
    assert_int_equal(h_int(db, "SELECT count(*) FROM tensor_blocks WHERE free_ns IS NOT NULL AND stack_id IS NOT "
                               "NULL AND free_stack_id IS NOT NULL"),
                     4);
    assert_int_equal(h_int(db, "SELECT count(*) FROM allocations WHERE free_ns IS NOT NULL AND free_stack_id IS NOT "
                               "NULL"),
                     1); /* the segment empty_cache gave back */
    sqlite3_close(db);
    char path[600];
    snprintf(path, sizeof path, "%s/basic.db", h_dir());
    unlink(path); /* the same name again */
    db = run_torchalloc("basic", ENV("GPULEDGER_FREE_STACKS=0"), &r);
    same_stats(db, r.out);
    assert_int_equal(h_int(db, "SELECT count(*) FROM tensor_blocks WHERE free_ns IS NOT NULL AND free_stack_id IS "
                               "NULL"),
                     4);
    assert_int_equal(h_int(db, "SELECT count(*) FROM allocations WHERE free_ns IS NOT NULL AND free_stack_id IS "
                               "NULL"),
                     1);
    sqlite3_close(db);
}

static void test_blocks_late_attach(void **state)
{
    (void)state;
    struct run_result r;
    sqlite3 *db = run_torchalloc("late", NULL, &r);
    /* the blocks there when gpuledger attached come from the snapshot
     * (the freed one as a hole: no row), the rest is traced */
    assert_string_equal(h_text(db, "SELECT group_concat(api || ':' || requested || ':' || size, ' ') FROM (SELECT * "
                                   "FROM tensor_blocks ORDER BY id)"),
                        "CUDACachingAllocator.snapshot:4096:4096 CUDACachingAllocator.snapshot:3145728:3145728 "
                        "CUDACachingAllocator:2000:2048 CUDACachingAllocator:5242880:5242880");
    /* a free of a block from the snapshot pairs with its row */
    assert_int_equal(h_int(db, "SELECT count(*) FROM tensor_blocks WHERE api = 'CUDACachingAllocator.snapshot' AND "
                               "requested = 4096 AND free_ns IS NOT NULL"),
                     1);
    /* 2000 B carved from the hole the snapshot showed: the model fits */
    assert_int_equal(h_int(db, "SELECT unknown FROM block_stats WHERE device = 0"), 0);
    assert_int_equal(h_int(db, "SELECT reserved_peak FROM block_stats WHERE device = 0"), stat_of(r.out,
                                                                                                  "reserved_peak"));
    sqlite3_close(db);
}

static void test_blocks_expandable(void **state)
{
    (void)state;
    struct run_result r;
    sqlite3 *db = run_torchalloc("expandable", NULL, &r);
    same_stats(db, r.out);
    assert_string_equal(h_text(db, "SELECT group_concat(op || ':' || size, ' ') FROM (SELECT * FROM events WHERE "
                                   "kind = 'segment' ORDER BY seq)"),
                        "map:2097152 map:41943040 map:20971520 unmap:20971520");
    assert_string_equal(h_text(db, "SELECT group_concat(requested || ':' || size, ' ') FROM (SELECT * FROM "
                                   "tensor_blocks ORDER BY id)"),
                        "100:512 31457280:31457280 5242880:5242880 8388608:8388608");
    /* the 8 MiB block: 5 MiB left in the mapped pages, one more 20 MiB page
     * mapped after it and merged, 8 MiB carved from their start */
    assert_int_equal(h_int(db, "SELECT addr - (SELECT addr FROM tensor_blocks WHERE requested = 31457280) FROM "
                               "tensor_blocks WHERE requested = 8388608"),
                     35 * MiB);
    /* CUDA sees the pages as physical handles: device memory, counted once */
    assert_int_equal(h_int(db, "SELECT peak_bytes FROM device_stats WHERE device = 0"), 65011712);
    sqlite3_close(db);
}

static void test_fragmentation_oom(void **state)
{
    (void)state;
    struct run_result r;
    sqlite3 *db = run_torchalloc("frag", ENV("FAKECUDA_MEM_BYTES=67108864"), &r);
    same_stats(db, r.out);
    /* the allocator's OOM: 8 MiB asked; its segment's cudaMalloc failed first */
    assert_int_equal(h_int(db, "SELECT size FROM events WHERE op = 'oom' AND kind = 'block'"), 8 * MiB);
    assert_int_equal(h_int(db, "SELECT coalesce(aux, 0) FROM events WHERE op = 'oom' AND kind = 'block'"),
                     stat_of(r.out, "oom_free")); /* the device's free bytes then */
    assert_int_equal(h_int(db, "SELECT count(*) FROM events WHERE op = 'oom' AND api = 'cudaMalloc' AND size = "
                               "20971520"),
                     2);
    /* the holes right then: 33 MiB free in 9, the largest 5 MiB < 8 MiB */
    assert_string_equal(h_text(db, "SELECT cached_free || ' ' || holes || ' ' || largest_hole FROM allocator_samples s "
                                   "JOIN events e ON e.seq = s.seq WHERE e.op = 'oom' AND e.kind = 'block'"),
                        "34603008 9 5242880");
    sqlite3_close(db);
}

static void test_demand_oom(void **state)
{
    (void)state;
    struct run_result r;
    sqlite3 *db = run_torchalloc("demand", ENV("FAKECUDA_MEM_BYTES=67108864"), &r);
    assert_int_equal(h_int(db, "SELECT size FROM events WHERE op = 'oom' AND kind = 'block'"), 100 * MiB);
    assert_string_equal(h_text(db, "SELECT allocated || ' ' || cached_free || ' ' || holes FROM allocator_samples s "
                                   "JOIN events e ON e.seq = s.seq WHERE e.op = 'oom' AND e.kind = 'block'"),
                        "33554432 0 0");
    sqlite3_close(db);
}

/* torch.cuda.graph's pattern (the fake driver enforces CUDA's capture
 * rules): blocks allocated during a global-mode capture, their segments
 * made in relaxed mode, gpuledger attaching at the first of them inside the
 * capture. The capture survives; the blocks are in the ledger as ever. */
static void test_blocks_during_capture(void **state)
{
    (void)state;
    struct run_result r;
    sqlite3 *db = run_torchalloc("graph", NULL, &r);
    assert_non_null(strstr(r.out, "capture ok\n"));
    same_stats(db, r.out);
    assert_string_equal(h_text(db, "SELECT group_concat(op || ':' || api || ':' || kind || ':' || size, ' ') FROM "
                                   "(SELECT * FROM events WHERE kind IN ('device', 'segment', 'block') ORDER BY seq)"),
                        "alloc:cudaMalloc:device:20971520 alloc:CUDACachingAllocator:segment:20971520 "
                        "alloc:CUDACachingAllocator:block:3145728 alloc:cudaMalloc:device:2097152 "
                        "alloc:CUDACachingAllocator:segment:2097152 alloc:CUDACachingAllocator:block:100 "
                        "alloc:CUDACachingAllocator:block:1000 free:CUDACachingAllocator:block:1000");
    sqlite3_close(db);
}

/* ---- the report over blocks ------------------------------------------------- */

/* `gpuledger ARGS... DB` must print every line of `want` (one per element). */
static void report_says(const char *db, const char *const *args, const char *const *want)
{
    const char *argv[16];
    int n = 0;
    argv[n++] = GL;
    for (int i = 0; args[i] && n < 14; i++)
        argv[n++] = args[i];
    argv[n++] = db;
    argv[n] = NULL;
    struct run_result *r = malloc(sizeof *r);
    assert_non_null(r);
    h_run(r, NULL, argv);
    assert_int_equal(r->status, 0);
    for (int i = 0; want[i]; i++)
        if (!strstr(r->out, want[i])) {
            fprintf(stderr, "%s", r->out); /* whole: fail_msg cuts long messages */
            fail_msg("%s %s: no line\n  %s\n(its output above)", args[0], db, want[i]);
        }
    free(r);
}

static void test_report_train(void **state)
{
    (void)state;
    struct run_result r;
    sqlite3 *db = run_torchalloc("train", NULL, &r);
    same_stats(db, r.out);
    sqlite3_close(db);
    char path[600], reserved[96];
    snprintf(path, sizeof path, "%s/train.db", h_dir());
    /* the reserved peak the report shows = the allocator's own */
    snprintf(reserved, sizeof reserved, "\"requested_peak\":24903680,\"reserved_peak\":%lld,",
             stat_of(r.out, "reserved_peak"));
    /* at the device peak (the 8 MiB outside the allocator at step 1): the
     * parameters and the state (5 + 5 MiB), 2 batches kept (512 KiB), the
     * rest of its three segments (20 + 2 + 2 MiB) cached, to the byte */
    report_says(path, ARGV("report"),
                ARGV("  at the peak, by category: allocator_cache 13.50 MiB (42%), other 8.50 MiB (27%), parameters 5.00 "
                     "MiB (16%), optimizer_state 5.00 MiB (16%)\n",
                     "  peak ledger: 10.50 MiB in 6 tensors + 13.50 MiB cached in the caching allocator's 3 segments + "
                     "8.00 MiB outside it = 32.00 MiB (5 rows):\n",
                     "     13.50 MiB  42.2%      3x  allocator_cache  [free blocks cached in the caching allocator's "
                     "segments]\n",
                     /* the tensor peak: the backward of step 3 (3 batches kept by then); categories by identity
                      * (tags) and by lifetime (the activation outlives its forward, the backward's temporary
                      * lives within the step) */
                     "  tensor peak 23.75 MiB at ",
                     "torch.cuda.max_memory_allocated(); requested 23.75 MiB of it (requested peak 23.75 MiB); its "
                     "segments' peak 24.00 MiB: torch.cuda.max_memory_reserved()\n",
                     "    by category: activations 6.00 MiB (25%), parameters 5.00 MiB (21%), gradients 5.00 MiB (21%), "
                     "optimizer_state 5.00 MiB (21%), temporaries 2.00 MiB (8%), other 768.00 KiB (3%)\n",
                     "  never freed: 9.00 MiB in leak chains, 13.00 MiB held by a caching allocator (not a leak), 10.00 "
                     "MiB of tensors tagged as parameters, gradients, optimizer state, KV cache or buffers"));
    /* the leak grows by one batch a step; the steps are the optimizer's */
    report_says(path, ARGV("leaks", "--steps"),
                ARGV("9.00 MiB never freed in 2 leak chains; 13.00 MiB held by a caching allocator at exit",
                     "\ngrowing step after step (4 steps ended by the optimizer's step()): 1 stack\n",
                     "+1  768.00 KiB in 4 allocations  [other]",
                     "           live per step: 0 B 256.00 KiB 512.00 KiB 768.00 KiB\n", "            2  keep_batch\n"));
    report_says(path, ARGV("report", "--format", "json"),
                ARGV("\"layers\":{\"tensors\":11010048,\"tensors_requested\":11010048,\"tensor_count\":6,"
                     "\"cached_free\":14155776,\"pending\":0,\"segments\":3,\"outside_allocator\":8388608,"
                     "\"total\":33554432}",
                     "{\"category\":\"optimizer_state\",\"bytes\":5242880,\"count\":2,\"requested\":5242880}",
                     reserved));
}

/* A free requested but never completed within the recording (its stream
 * still busy at exit): pending from its request to the end, not cached
 * free. */
static void test_pending_at_end(void **state)
{
    (void)state;
    struct run_result r;
    sqlite3 *db = run_torchalloc("pending", NULL, &r);
    same_stats(db, r.out);
    char at[32];
    snprintf(at, sizeof at, "#%lld", (long long)h_int(db, "SELECT max(seq) FROM events"));
    assert_int_equal(h_int(db, "SELECT count(*) FROM events WHERE op = 'free_requested'"), 1);
    assert_int_equal(h_int(db, "SELECT count(*) FROM events WHERE op = 'free_completed'"), 0);
    sqlite3_close(db);
    char path[600];
    snprintf(path, sizeof path, "%s/pending.db", h_dir());
    report_says(path, ARGV("report", "--at", at, "--format", "json"),
                ARGV("\"layers\":{\"tensors\":512,\"tensors_requested\":100,\"tensor_count\":1,"
                     "\"cached_free\":2095616,\"pending\":1024,\"segments\":1,\"outside_allocator\":0,"
                     "\"total\":2097152}"));
    /* what leaks reads (only what is live at the end, model.h): the block
     * freed but not completed is still pending, not the cache's free bytes */
    report_says(path, ARGV("leaks", "--format", "json"),
                ARGV("\"cached_bytes\":2096640,\"leaks\":[{\"bytes\":2095616,\"count\":1,\"cached\":true,\"tagged\":false,"
                     "\"row\":\"cached_free\"",
                     "{\"bytes\":1024,\"count\":0,\"cached\":true,\"tagged\":false,\"row\":\"pending\""));
}

static void test_report_verdicts(void **state)
{
    (void)state;
    struct run_result r;
    sqlite3_close(run_torchalloc("frag", ENV("FAKECUDA_MEM_BYTES=67108864"), &r));
    char path[600];
    snprintf(path, sizeof path, "%s/frag.db", h_dir());
    report_says(path, ARGV("report"),
                ARGV("    (its cudaMalloc of a 20.00 MiB segment failed 2 times first)\n",
                     "    verdict: fragmentation: 33.00 MiB cached free in 9 holes, largest 5.00 MiB < the 8.00 MiB "
                     "asked; expandable segments would serve it (PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True)\n",
                     "    live then (OOM ledger): 27.00 MiB in 9 tensors + 33.00 MiB cached in the caching allocator's 3 "
                     "segments + 0 B outside it = 60.00 MiB:\n"));
    report_says(path, ARGV("report", "--format", "json"),
                ARGV("\"verdict\":{\"kind\":\"fragmentation\",\"asked\":8388608,\"cached_free\":34603008,"
                     "\"holes\":9,\"largest_hole\":5242880,"));
    /* the allocator's holes over time: the worst moment is the OOM's (and
     * the end is the same), 1 - 5/33 of the free bytes scattered */
    report_says(path, ARGV("holes"),
                ARGV("PyTorch's caching allocator on device 0 (",
                     ": reserved 60.00 MiB, live 27.00 MiB, free 33.00 MiB in 9 holes, largest 5.00 MiB, external "
                     "fragmentation 0.848, largest_free_ratio 0.152, internal fragmentation 0.000 (0 B unused)\n"));
    report_says(path, ARGV("holes", "--format", "json"),
                ARGV("\"kind\":\"caching allocator\",\"device\":0,",
                     "\"reserved\":62914560,\"live\":28311552,\"free\":34603008,\"largest_free\":5242880,"
                     "\"external_fragmentation\":0.848485,\"largest_free_ratio\":0.151515,\"holes\":9,"
                     "\"unused_bytes\":0,\"internal_fragmentation\":0.000000}"));
    sqlite3_close(run_torchalloc("demand", ENV("FAKECUDA_MEM_BYTES=67108864"), &r));
    snprintf(path, sizeof path, "%s/demand.db", h_dir());
    report_says(path, ARGV("report"),
                ARGV("    verdict: demand: live tensors 32.00 MiB of the 32.00 MiB the allocator holds (0 B cached "
                     "free, 100.00 MiB asked): the biggest are 32.00 MiB ",
                     /* the diagnosis opens the report: one failure, its verdict */
                     "/demand.db\ndiagnosis:\n  1. Out of memory at +",
                     "s: demand: 100.00 MiB was asked at emit while live tensors held 32.00 MiB of the 32.00 MiB the "
                     "caching allocator had (0 B cached free).\n",
                     "     evidence: one failure: its cudaMalloc of a 100.00 MiB segment failed 2 times first\n"));
    report_says(path, ARGV("summary"), ARGV(", 1 out-of-memory failure\n"));
    snprintf(path, sizeof path, "%s/frag.db", h_dir());
    report_says(path, ARGV("report"),
                ARGV("/frag.db\ndiagnosis:\n  1. Out of memory at +",
                     "s: fragmentation: 8.00 MiB was asked at emit; the caching allocator held 33.00 MiB cached free, "
                     "but no hole of that size (the largest 5.00 MiB).\n"));
    report_says(path, ARGV("report", "--format", "json"),
                ARGV("\"diagnosis\":[{\"kind\":\"oom\",\"verdict\":\"fragmentation\",\"device\":0,"));
}

/* ---- the Python job on the stand-in torch ---------------------------------- */

static const char *src(const char *rel)
{
    static char buf[4][1024];
    static int k;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%s/%s", getenv("GL_SOURCE_ROOT"), rel);
    return buf[k];
}

/* The line of py_torch.py holding `marker`. */
static int py_line(const char *marker)
{
    FILE *f = fopen(src("tests/progs/py_torch.py"), "r");
    char line[512];
    int n = 0;
    assert_non_null(f);
    while (fgets(line, sizeof line, f)) {
        n++;
        if (strstr(line, marker)) {
            fclose(f);
            return n;
        }
    }
    fclose(f);
    fail_msg("no '%s' in py_torch.py", marker);
    return 0;
}

/* The stand-in torch in the scratch directory: its Python files, the
 * stand-in header as include/, the stand-in libc10_cuda.so as lib/; and a
 * sitecustomize of the user's own, which must still run. */
static void stand_in_torch(void)
{
    char cmd[4096];
    const char *d = h_dir();
    snprintf(cmd, sizeof cmd,
             "cp -r %s %s/torch && ln -s %s %s/torch/include && mkdir %s/torch/lib %s/user && "
             "ln -s %s %s/torch/lib/ && ln -s %s %s/torch/lib/ && "
             "echo 'import sys; sys.stderr.write(\"user sitecustomize ran\" + chr(10))' > %s/user/sitecustomize.py",
             src("tests/pystub/torch"), d, src("tests/torchstub/include"), d, d, d, h_build("tests/libc10_cuda.so"), d,
             h_build("tests/libc10.so"), d, d);
    struct run_result r;
    h_run(&r, NULL, ARGV("/bin/sh", "-c", cmd));
    if (r.status)
        fail_msg("setting up the stand-in torch: %s", r.err);
}

/* 1: the next run_job_env without -q */
static int job_loud;

/* The job under gpuledger run -q --torch MODE (NULL: no --torch, the
 * default; no -q when job_loud), with GPULEDGER_TORCH_HOOKS=hooks and one
 * more variable (NULL: none; it ends the environment list). */
static sqlite3 *run_job_env(struct run_result *r, const char *db, const char *mode, const char *hooks,
                            const char *more)
{
    static char env[4][1200];
    snprintf(env[0], sizeof env[0], "PYTHONPATH=%s:%s/user", h_dir(), h_dir());
    snprintf(env[1], sizeof env[1], "GPULEDGER_CACHE_DIR=%s/cache", h_dir());
    snprintf(env[2], sizeof env[2], "LD_LIBRARY_PATH=%s", h_build("tests/fakecuda"));
    snprintf(env[3], sizeof env[3], "GPULEDGER_TORCH_HOOKS=%s", hooks);
    static char path[600];
    snprintf(path, sizeof path, "%s/%s", h_dir(), db);
    const char *q = job_loud ? "--torch=blocks" : "-q"; /* blocks: what no --torch gives */
    if (mode)
        h_run(r, ENV(env[0], env[1], env[2], env[3], more),
              ARGV(GL, "run", q, "--torch", mode, "-o", path, "--", "/usr/bin/env", "python3",
                   src("tests/progs/py_torch.py")));
    else
        h_run(r, ENV(env[0], env[1], env[2], env[3], more),
              ARGV(GL, "run", q, "-o", path, "--", "/usr/bin/env", "python3", src("tests/progs/py_torch.py")));
    if (r->status != 0)
        fail_msg("py_torch.py: exit %d\n%s\n%s", r->status, r->out, r->err);
    return h_open(path);
}

static sqlite3 *run_job(struct run_result *r, const char *db, const char *mode, const char *hooks)
{
    return run_job_env(r, db, mode, hooks, NULL);
}

/* The most native frames in the stack of a block made from Python. */
#define MOST_NATIVE_FRAMES                                                                                           \
    "SELECT max(n) FROM (SELECT count(*) n FROM tensor_blocks b JOIN stack_frames f ON f.stack_id = b.stack_id AND " \
    "NOT f.python GROUP BY b.id)"

/* The line "category a:n b:n ..." the job printed = the tagged blocks of
 * that category (those live at the end, for the ones that come and go). */
static void same_tags(sqlite3 *db, const char *out, const char *category, int live_only)
{
    char want[4096] = "", sql[1024];
    const char *p = strstr(out, category);
    assert_non_null(p);
    size_t n = strcspn(p, "\n");
    snprintf(want, sizeof want, "%.*s", (int)n, p);
    snprintf(sql, sizeof sql,
             "SELECT '%s ' || group_concat(pair, ' ') FROM (SELECT DISTINCT t.addr || ':' || t.size AS pair, t.addr "
             "FROM events t JOIN tensor_blocks b ON b.id = t.ref_seq JOIN tag_names tn ON tn.id = t.aux WHERE t.op = "
             "'tag' AND tn.name = '%s' %s ORDER BY t.addr)",
             category, category, live_only ? "AND b.free_ns IS NULL" : "");
    assert_string_equal(h_text(db, sql), want);
}

/* stderr with the shim's cache key and its build time written KEY and N. */
static const char *shim_masked(const char *err)
{
    static char out[4096];
    size_t o = 0;
    for (const char *p = err; *p && o < sizeof out - 8;) {
        static const char *const marks[] = {"/torch-shim/", "built it in "};
        int hit = 0;
        for (int m = 0; m < 2 && !hit; m++) {
            size_t k = strlen(marks[m]);
            if (strncmp(p, marks[m], k))
                continue;
            o += (size_t)snprintf(out + o, sizeof out - o, "%s%s", marks[m], m ? "N" : "KEY");
            p += k;
            p += m ? strspn(p, "0123456789.") : strcspn(p, ")");
            hit = 1;
        }
        if (!hit)
            out[o++] = *p++;
    }
    out[o] = 0;
    return out;
}

static void test_python_job(void **state)
{
    (void)state;
    if (!strcmp(getenv("GL_HAVE_CXX") ? getenv("GL_HAVE_CXX") : "0", "0"))
        skip(); /* no C++ compiler: no stand-in libc10_cuda, no shim */
    stand_in_torch();
    struct run_result r;
    job_loud = 1;
    sqlite3 *db = run_job(&r, "job.db", NULL, "1");
    job_loud = 0;
    /* blocks by default: the launcher's sitecustomize ran, and the user's
     * after it; the shim was built once (said without -q) and attached at
     * the first segment */
    char want_err[2400];
    snprintf(want_err, sizeof want_err,
             "user sitecustomize ran\n"
             "gpuledger: building the PyTorch allocator shim for torch 2.11.0+stub (once; cached in "
             "%s/cache/torch-shim/KEY)\n"
             "gpuledger: built it in N s\n"
             "gpuledger: %s/job.db: 175 events, peak 2.00 MiB on device 0, 1 allocation (2.00 MiB) never freed\n",
             h_dir(), h_dir());
    assert_string_equal(shim_masked(r.err), want_err);
    if (strstr(r.err, "no tensor ledger"))
        fail_msg("the shim did not attach:\n%s", r.err);
    assert_int_equal(h_int(db, "SELECT count(*) FROM events WHERE kind = 'segment' AND op = 'alloc'"), 1);
    assert_int_equal(h_int(db, "SELECT count(*) FROM events WHERE kind = 'block' AND op = 'alloc' AND api = "
                               "'CUDACachingAllocator.snapshot'"),
                     0);
    /* every tensor is a block, with the Python line that made it */
    assert_true(h_int(db, "SELECT count(*) FROM tensor_blocks") > 40);
    assert_int_equal(h_int(db, "SELECT count(*) FROM tensor_blocks WHERE stack_id IS NULL"), 0);
    assert_int_equal(h_int(db, "SELECT count(*) FROM tensor_blocks b JOIN stack_frames f ON f.stack_id = b.stack_id "
                               "AND f.python AND f.symbol = 'AdamW._step' AND f.line IN (69, 70)"),
                     4 * 2);
    /* a block made from Python: its Python frames and the native frames
     * above them (7 here: ctypes' and the stand-in allocator's; at most
     * GPULEDGER_TORCH_NATIVE_DEPTH, 8) */
    assert_int_equal(h_int(db, MOST_NATIVE_FRAMES), 7);
    /* identity: the tagged blocks are exactly the job's tensors */
    same_tags(db, r.out, "parameters", 0);
    same_tags(db, r.out, "buffers", 0);
    same_tags(db, r.out, "optimizer_state", 0);
    same_tags(db, r.out, "gradients", 1);
    same_tags(db, r.out, "kv_cache", 1);
    /* steps from the optimizer, ranges from the hooks (the first call of a
     * root module is watched from inside it: no range of its own) */
    assert_string_equal(h_text(db, "SELECT group_concat(label, ',') FROM annotations WHERE op = 'mark'"),
                        "optimizer step 0,optimizer step 1,optimizer step 2");
    assert_int_equal(h_int(db, "SELECT count(*) FROM annotations WHERE op = 'range_push' AND label = 'forward'"), 4);
    assert_int_equal(h_int(db, "SELECT count(*) FROM annotations WHERE op = 'range_push' AND label = "
                               "'optimizer.step'"),
                     3);
    assert_int_equal(h_int(db, "SELECT count(*) FROM annotations WHERE op = 'range_pop'"), 7);
    /* the leak planted in the loop, by its line, over the optimizer's steps */
    char path[600], want[200];
    snprintf(path, sizeof path, "%s/job.db", h_dir());
    snprintf(want, sizeof want, "<module> (%s:%d)\n", src("tests/progs/py_torch.py"), py_line("# LEAK"));
    report_says(path, ARGV("leaks", "--steps"),
                ARGV("\ngrowing step after step (3 steps ended by the optimizer's step()): ",
                     "+1    1.00 KiB in 3 allocations  [other]", "           live per step: 0 B 512 B 1.00 KiB\n",
                     want));
    /* the optimizer's temporaries: made and freed inside its step */
    assert_int_equal(h_int(db, "SELECT count(*) FROM tensor_blocks b JOIN annotations a ON a.seq = b.range_seq WHERE "
                               "a.label = 'optimizer.step' AND b.category IS NULL AND b.released_ns IS NOT NULL"),
                     3 * 4);
    sqlite3_close(db);

    /* -q: the shim built again (a new cache) and the database's name
     * taken (job.db is there: job.1.db) are not said; the user's line is */
    char cache2[700];
    snprintf(cache2, sizeof cache2, "GPULEDGER_CACHE_DIR=%s/cache2", h_dir());
    sqlite3_close(run_job_env(&r, "job.db", NULL, "1", cache2));
    assert_string_equal(r.err, "user sitecustomize ran\n");
    char built[700];
    snprintf(built, sizeof built, "%s/job.1.db", h_dir());
    assert_int_equal(access(built, F_OK), 0);
    snprintf(built, sizeof built, "%s/cache2/torch-shim", h_dir());
    assert_int_equal(access(built, F_OK), 0);
    /* again: the shim comes from the cache */
    db = run_job(&r, "again.db", "blocks", "1");
    assert_null(strstr(r.err, "building the PyTorch allocator shim"));
    assert_true(h_int(db, "SELECT count(*) FROM tensor_blocks") > 40);
    sqlite3_close(db);

    /* GPULEDGER_TORCH_NATIVE_DEPTH: the innermost 3 native frames, then
     * none (the Python frames alone; every block still has its line) */
    db = run_job_env(&r, "native3.db", "blocks", "1", "GPULEDGER_TORCH_NATIVE_DEPTH=3");
    assert_int_equal(h_int(db, MOST_NATIVE_FRAMES), 3);
    assert_int_equal(h_int(db, "SELECT count(*) FROM tensor_blocks b JOIN stack_frames f ON f.stack_id = b.stack_id "
                               "AND f.python AND f.symbol = 'AdamW._step' AND f.line IN (69, 70)"),
                     4 * 2);
    sqlite3_close(db);
    db = run_job_env(&r, "native0.db", "blocks", "1", "GPULEDGER_TORCH_NATIVE_DEPTH=0");
    assert_string_equal(h_text(db, MOST_NATIVE_FRAMES), ""); /* no block has any */
    assert_int_equal(h_int(db, "SELECT count(*) FROM tensor_blocks WHERE stack_id IS NULL"), 0);
    assert_int_equal(h_int(db, "SELECT count(*) FROM tensor_blocks b JOIN stack_frames f ON f.stack_id = b.stack_id "
                               "AND f.python AND f.symbol = 'AdamW._step' AND f.line IN (69, 70)"),
                     4 * 2);
    sqlite3_close(db);

    /* GPULEDGER_TORCH_HOOKS=0: blocks, no tags, no steps */
    db = run_job(&r, "nohooks.db", "blocks", "0");
    assert_true(h_int(db, "SELECT count(*) FROM tensor_blocks") > 40);
    assert_int_equal(h_int(db, "SELECT count(*) FROM events WHERE op = 'tag'"), 0);
    assert_int_equal(h_int(db, "SELECT count(*) FROM annotations"), 0);
    sqlite3_close(db);

    /* --torch segments: no shim, no blocks; the hooks still mark the steps */
    db = run_job(&r, "segments.db", "segments", "1");
    assert_int_equal(h_int(db, "SELECT count(*) FROM events WHERE kind IN ('block', 'segment')"), 0);
    assert_string_equal(h_text(db, "SELECT group_concat(label, ',') FROM annotations WHERE op = 'mark'"),
                        "optimizer step 0,optimizer step 1,optimizer step 2");
    sqlite3_close(db);
}

/* The diagnosis of a training loop that keeps every step's logits in a
 * global list until the (fake) device's 64 MiB are full
 * (tests/progs/py_grow_oom.py on the stand-in torch): the first finding
 * is the OOM, in its step, with the growth per step, since which step
 * and the user's line; the request's own verdict (demand) is its
 * evidence; what keeps the logits alive (the retention finder's search at
 * the OOM) closes the first sentence; the run counts one failure. */
static void test_diagnosis_growth(void **state)
{
    (void)state;
    if (!strcmp(getenv("GL_HAVE_CXX") ? getenv("GL_HAVE_CXX") : "0", "0"))
        skip();
    stand_in_torch();
    /* installed as a library is, under site-packages/: its frames are a library's */
    static char env[4][1200], path[600], want[4][1600];
    struct run_result r;
    snprintf(path, sizeof path, "mkdir %s/site-packages && cp -a %s/torch %s/site-packages/", h_dir(), h_dir(), h_dir());
    h_run(&r, NULL, ARGV("/bin/sh", "-c", path));
    assert_int_equal(r.status, 0);
    snprintf(env[0], sizeof env[0], "PYTHONPATH=%s/site-packages", h_dir());
    snprintf(env[1], sizeof env[1], "GPULEDGER_CACHE_DIR=%s/cache", h_dir());
    snprintf(env[2], sizeof env[2], "LD_LIBRARY_PATH=%s", h_build("tests/fakecuda"));
    snprintf(env[3], sizeof env[3], "FAKECUDA_MEM_BYTES=67108864");
    snprintf(path, sizeof path, "%s/grow.db", h_dir());
    h_run(&r, ENV(env[0], env[1], env[2], env[3]),
          ARGV(GL, "run", "-q", "-o", path, "--", "/usr/bin/env", "python3", src("tests/progs/py_grow_oom.py")));
    assert_int_not_equal(r.status, 0); /* it dies of the OOM */
    if (!strstr(r.err, "OutOfMemoryError"))
        fail_msg("no OutOfMemoryError:\n%s", r.err);
    const char *py = src("tests/progs/py_grow_oom.py");
    snprintf(want[0], sizeof want[0],
             "diagnosis:\n  1. Out of memory in step 14: live tensors grow +3.00 MiB per step since step 1 at "
             "Net.forward (%s:20), so the device is full within 0.7 steps whatever the allocator does (the failing "
             "request: 2.00 MiB at train_step (%s:31)). Kept alive by: py_grow_oom.py: global logits_kept (list, 14 items) "
             "\xe2\x86\x92 [13] \xe2\x86\x92 Tensor 3 MiB.\n",
             py, py);
    snprintf(want[1], sizeof want[1],
             "     evidence: verdict: growth: this request: demand: live tensors 60.03 MiB of the 62.00 MiB the "
             "allocator holds (1.97 MiB cached free, 2.00 MiB asked)");
    snprintf(want[2], sizeof want[2],
             "; underlying: +3.00 MiB/step at Net.forward (%s:20) since step 1 — the 1.97 MiB cached free and 0 B "
             "free on the device hold 0.7 steps of it: expandable segments would buy less than one step\n",
             py);
    snprintf(want[3], sizeof want[3], "  OUT OF MEMORY at +");
    report_says(path, ARGV("report"), ARGV(want[0], want[1], want[2], want[3], ", step 14: CUDACachingAllocator 2.00 MiB failed"));
    /* what keeps it alive: the search at the OOM, grouped by root, the
     * global list first; the remedy names the global's line */
    report_says(path, ARGV("report"),
                ARGV("     evidence: kept alive (searched at the out-of-memory, after 14 optimizer steps, in ",
                     " ms): 7 paths to 21.00 MiB of these tensors\n     evidence: kept alive by: py_grow_oom.py: global "
                     "logits_kept (list, 14 items) \xe2\x86\x92 [13] \xe2\x86\x92 Tensor 3 MiB (6 paths recorded, 18.00 MiB)\n"
                     "     evidence: kept alive by: py_grow_oom.py:31 in train_step: local logits \xe2\x86\x92 Tensor 3 MiB "
                     "(1 path recorded, 3.00 MiB)\n",
                     "     remedy: drop or detach what ", "py_grow_oom.py:23 keeps (py_grow_oom.py: global logits_kept (list, "
                     "14 items)); free what keeps"));
    report_says(path, ARGV("report", "--format", "json"),
                ARGV("\"diagnosis\":[{\"kind\":\"oom\",\"verdict\":\"growth\",\"device\":0,",
                     "\"step\":14,\"bytes\":2097152,",
                     "\"request\":\"demand\",\"growth\":{\"per_step\":3145728,\"since_step\":1,"));
    report_says(path, ARGV("summary"), ARGV(", 1 out-of-memory failure\n"));
}

/* The line of `gpuledger report` starting with `prefix` (its first). */
static const char *report_line(const char *db, const char *prefix)
{
    static struct run_result r;
    static char line[1024];
    h_run(&r, NULL, ARGV(GL, "report", db));
    assert_int_equal(r.status, 0);
    const char *p = strstr(r.out, prefix);
    if (!p) {
        fail_msg("no '%s' in the report of %s:\n%s", prefix, db, r.out);
        return "";
    }
    snprintf(line, sizeof line, "%.*s", (int)strcspn(p, "\n"), p);
    return line;
}

/* step(closure), as LBFGS and Lightning call it: the closure's forward and
 * backward run inside the optimizer's step, and get the categories of the
 * same loop run eagerly (activations, temporaries, the cuBLAS workspace);
 * the optimizer's own temporaries stay its own. */
static void test_closure_loop(void **state)
{
    (void)state;
    if (!strcmp(getenv("GL_HAVE_CXX") ? getenv("GL_HAVE_CXX") : "0", "0"))
        skip();
    stand_in_torch();
    static const char *const want =
        "    by category: activations 1.00 MiB (63%), temporaries 512.00 KiB (32%), optimizer_state 50.00 KiB (3%), "
        "parameters 25.00 KiB (2%), workspace 8.00 KiB (0%), other 1.50 KiB (0%)";
    char path[2][600], line[1024];
    for (int i = 0; i < 2; i++) {
        const char *mode = i ? "closure" : "eager";
        struct run_result r;
        static char env[3][1200];
        snprintf(env[0], sizeof env[0], "PYTHONPATH=%s", h_dir());
        snprintf(env[1], sizeof env[1], "GPULEDGER_CACHE_DIR=%s/cache", h_dir());
        snprintf(env[2], sizeof env[2], "LD_LIBRARY_PATH=%s", h_build("tests/fakecuda"));
        snprintf(path[i], sizeof path[i], "%s/%s.db", h_dir(), mode);
        h_run(&r, ENV(env[0], env[1], env[2]),
              ARGV(GL, "run", "-q", "-o", path[i], "--", "/usr/bin/env", "python3", src("tests/progs/py_closure.py"),
                   mode));
        if (r.status != 0)
            fail_msg("py_closure.py %s: exit %d\n%s\n%s", mode, r.status, r.out, r.err);
        assert_non_null(strstr(r.out, "losses 3\n"));
        /* the tensor peak comes inside the third forward: by category */
        snprintf(line, sizeof line, "%s", report_line(path[i], "    by category: "));
        assert_string_equal(line, want);
    }
    /* the closure ran inside each step, in a range of its own */
    sqlite3 *db = h_open(path[1]);
    assert_int_equal(h_int(db, "SELECT count(*) FROM annotations c JOIN annotations s ON s.seq = c.parent_seq WHERE "
                               "c.label = 'optimizer.closure' AND s.label = 'optimizer.step'"),
                     3);
    /* the optimizer's temporaries: made and freed inside its step, outside the closure */
    assert_int_equal(h_int(db, "SELECT count(*) FROM tensor_blocks b JOIN annotations a ON a.seq = b.range_seq WHERE "
                               "a.label = 'optimizer.step' AND b.category IS NULL AND b.released_ns IS NOT NULL"),
                     3 * 4);
    sqlite3_close(db);
}

/* Two private pools' blocks (torch.cuda.MemPool's, as a CUDA graph's),
 * made by the same line: named private_pool with their pool's id, one
 * category and one ledger row per pool, held by design (not leaks). */
static void test_private_pool(void **state)
{
    (void)state;
    if (!strcmp(getenv("GL_HAVE_CXX") ? getenv("GL_HAVE_CXX") : "0", "0"))
        skip();
    stand_in_torch();
    struct run_result r;
    static char env[3][1200], path[600];
    snprintf(env[0], sizeof env[0], "PYTHONPATH=%s", h_dir());
    snprintf(env[1], sizeof env[1], "GPULEDGER_CACHE_DIR=%s/cache", h_dir());
    snprintf(env[2], sizeof env[2], "LD_LIBRARY_PATH=%s", h_build("tests/fakecuda"));
    snprintf(path, sizeof path, "%s/pool.db", h_dir());
    h_run(&r, ENV(env[0], env[1], env[2]),
          ARGV(GL, "run", "-q", "-o", path, "--", "/usr/bin/env", "python3", src("tests/progs/py_graph_pool.py")));
    if (r.status != 0)
        fail_msg("py_graph_pool.py: exit %d\n%s\n%s", r.status, r.out, r.err);
    assert_non_null(strstr(r.out, "pools 0 1 0 2\n"));
    /* pools (0, 1) and (0, 2): their second half with bit 63 set */
    sqlite3 *db = h_open(path);
    assert_string_equal(h_text(db, "SELECT group_concat(requested || ':' || printf('%x', pool), ' ') FROM (SELECT * "
                                   "FROM tensor_blocks ORDER BY id)"),
                        "4096:8000000000000001 1000:8000000000000001 2048:8000000000000002 8192:0");
    sqlite3_close(db);
    report_says(path, ARGV("report"),
                ARGV("    by category: other 8.00 KiB (53%), private_pool (0, 1) 5.00 KiB (33%), private_pool (0, 2) "
                     "2.00 KiB (13%)\n",
                     "held by a caching allocator (not a leak)"));
    report_says(path, ARGV("report", "--format", "json"),
                ARGV("{\"category\":\"private_pool (0, 1)\",\"pool_id\":[0,1],\"bytes\":5120,\"count\":2,",
                     "{\"category\":\"private_pool (0, 2)\",\"pool_id\":[0,2],\"bytes\":2048,\"count\":1,"));
    h_run(&r, NULL, ARGV(GL, "gate", "--max-leak-bytes", "0", path));
    assert_int_equal(r.status, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_blocks_basic, h_teardown),
        cmocka_unit_test_teardown(test_blocks_free_stacks, h_teardown),
        cmocka_unit_test_teardown(test_blocks_late_attach, h_teardown),
        cmocka_unit_test_teardown(test_blocks_expandable, h_teardown),
        cmocka_unit_test_teardown(test_fragmentation_oom, h_teardown),
        cmocka_unit_test_teardown(test_demand_oom, h_teardown),
        cmocka_unit_test_teardown(test_report_train, h_teardown),
        cmocka_unit_test_teardown(test_report_verdicts, h_teardown),
        cmocka_unit_test_teardown(test_pending_at_end, h_teardown),
        cmocka_unit_test_teardown(test_blocks_during_capture, h_teardown),
        cmocka_unit_test_teardown(test_python_job, h_teardown),
        cmocka_unit_test_teardown(test_diagnosis_growth, h_teardown),
        cmocka_unit_test_teardown(test_closure_loop, h_teardown),
        cmocka_unit_test_teardown(test_private_pool, h_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
