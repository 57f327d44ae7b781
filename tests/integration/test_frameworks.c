/* test_frameworks.c — Python frameworks beyond PyTorch's eager loop, end
 * to end without a GPU: stand-ins of CuPy and JAX (tests/pystub/cupy,
 * tests/pystub/jax, on the fake CUDA of tests/fakecuda) imported by an
 * unmodified job under gpuledger run, the gpuledger package attaching to
 * them at their import:
 *  - CuPy: its pool's blocks and chunks through a cupy.cuda.MemoryHook,
 *    as a second layer like PyTorch's (block bytes, the pool's free chunks
 *    as allocator_cache, the holes inside its chunks, each block's line),
 *    so the leak gate passes a job that frees its arrays;
 *  - JAX: the allocator's own statistics (memory_stats) at marks, steps
 *    and exit, beside the arena it reserved. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "harness.h"

#define MiB (1024LL * 1024)

static const char *src(const char *rel)
{
    static char buf[4][1024];
    static int k;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%s/%s", getenv("GL_SOURCE_ROOT"), rel);
    return buf[k];
}

/* The line of a test program holding `marker`. */
static int line_of(const char *prog, const char *marker)
{
    FILE *f = fopen(src(prog), "r");
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
    fail_msg("no '%s' in %s", marker, prog);
    return 0;
}

/* A number the job printed after `key`. */
static long long printed(const char *out, const char *key)
{
    const char *p = strstr(out, key);
    if (!p)
        fail_msg("no '%s' in the job's output:\n%s", key, out);
    return atoll(p + strlen(key));
}

/* tests/progs/<prog> under gpuledger run into <db> (in the scratch
 * directory) with the stand-ins on PYTHONPATH and one more variable (NULL:
 * none). */
static sqlite3 *run_py(struct run_result *r, const char *prog, const char *db, const char *more)
{
    static char env[2][1200], path[600];
    snprintf(env[0], sizeof env[0], "PYTHONPATH=%s", src("tests/pystub"));
    snprintf(env[1], sizeof env[1], "LD_LIBRARY_PATH=%s", h_build("tests/fakecuda"));
    snprintf(path, sizeof path, "%s/%s", h_dir(), db);
    h_run(r, ENV(env[0], env[1], more), ARGV(GL, "run", "-q", "-o", path, "--", "/usr/bin/env", "python3", src(prog)));
    if (r->status != 0)
        fail_msg("%s: exit %d\n%s\n%s", prog, r->status, r->out, r->err);
    return h_open(path);
}

static void test_cupy_pool(void **state)
{
    (void)state;
    struct run_result r;
    sqlite3 *db = run_py(&r, "tests/progs/py_cupy.py", "cupy.db", NULL);
    /* the pool's figures, as CuPy counts them */
    assert_int_equal(printed(r.out, "peak used="), 3 * MiB + 1024);
    assert_int_equal(printed(r.out, "peak used=3146752 total="), 3 * MiB + 1024);
    assert_int_equal(printed(r.out, "later used="), MiB + 1024 + 512);
    assert_int_equal(printed(r.out, "end used="), 0);
    /* its 4 blocks, their bytes as asked and as rounded, all given back;
     * 2 chunks from the device, each the segment of a cudaMalloc */
    assert_string_equal(h_text(db, "SELECT group_concat(requested || ':' || size, ' ') FROM (SELECT * FROM "
                                   "tensor_blocks WHERE api = 'cupy.MemoryPool' AND free_ns IS NOT NULL ORDER BY id)"),
                        "3145728:3145728 1000:1024 1048576:1048576 100:512");
    assert_int_equal(h_int(db, "SELECT count(*) FROM tensor_blocks"), 4);
    assert_string_equal(h_text(db, "SELECT group_concat(size, ' ') FROM (SELECT size FROM events WHERE kind = "
                                   "'segment' AND op = 'alloc' ORDER BY seq)"),
                        "3145728 1024");
    assert_int_equal(h_int(db, "SELECT count(*) FROM events e JOIN events s ON s.addr = e.addr AND s.seq = e.seq + 1 "
                               "AND s.kind = 'segment' WHERE e.api = 'cudaMalloc'"),
                     2);
    /* the block model: peaks as the pool's, nothing it could not place;
     * at the end both chunks wholly free (2 holes, the largest 3 MiB) */
    assert_int_equal(h_int(db, "SELECT allocated_peak FROM block_stats WHERE device = 0"), 3 * MiB + 1024);
    assert_int_equal(h_int(db, "SELECT reserved_peak FROM block_stats WHERE device = 0"), 3 * MiB + 1024);
    assert_int_equal(h_int(db, "SELECT allocated FROM block_stats WHERE device = 0"), 0);
    assert_int_equal(h_int(db, "SELECT unknown FROM block_stats WHERE device = 0"), 0);
    assert_string_equal(h_text(db, "SELECT reserved || ' ' || allocated || ' ' || cached_free || ' ' || holes || ' ' "
                                   "|| largest_hole FROM allocator_samples ORDER BY seq DESC LIMIT 1"),
                        "3146752 0 3146752 2 3145728");
    /* each block has the job's line */
    char sql[512];
    snprintf(sql, sizeof sql,
             "SELECT count(*) FROM tensor_blocks b JOIN stack_frames f ON f.stack_id = b.stack_id AND f.python AND "
             "f.symbol = '<module>' AND f.line = %d WHERE b.requested = 3145728",
             line_of("tests/progs/py_cupy.py", ")  # A"));
    assert_int_equal(h_int(db, sql), 1);
    sqlite3_close(db);
    /* the leak gate: the pool's chunks are its cache, not leaks */
    char path[600];
    snprintf(path, sizeof path, "%s/cupy.db", h_dir());
    h_run(&r, NULL, ARGV(GL, "gate", "--max-leak-bytes", "0", path));
    assert_int_equal(r.status, 0);
    h_expect(r.out, "gpuledger gate: pass — 0 B never freed (limit 0 B) in 1 database");
    h_run(&r, NULL, ARGV(GL, "report", path));
    h_expect(r.out, "never freed: 0 B in leak chains, 3.00 MiB held by a caching allocator (not a leak)");

    /* GPULEDGER_CUPY_HOOK=0: the CUDA ledger alone, where the pool's
     * chunks look leaked */
    db = run_py(&r, "tests/progs/py_cupy.py", "nohook.db", "GPULEDGER_CUPY_HOOK=0");
    assert_int_equal(h_int(db, "SELECT count(*) FROM events WHERE kind IN ('block', 'segment')"), 0);
    sqlite3_close(db);
    snprintf(path, sizeof path, "%s/nohook.db", h_dir());
    h_run(&r, NULL, ARGV(GL, "gate", "--max-leak-bytes", "0", path));
    assert_int_equal(r.status, 1);
    h_expect(r.out, "gpuledger gate: FAIL — 3.00 MiB never freed (limit 0 B) in 1 database");
}

static void test_jax_stats(void **state)
{
    (void)state;
    struct run_result r;
    sqlite3 *db = run_py(&r, "tests/progs/py_jax.py", "jax.db", NULL);
    /* one sample at each of the 3 steps and one at exit */
    assert_int_equal(h_int(db, "SELECT count(*) FROM annotations WHERE label GLOB 'gpuledger.stats jax device=0 *'"),
                     4);
    assert_string_equal(h_text(db, "SELECT label FROM annotations WHERE label GLOB 'gpuledger.stats *' ORDER BY seq "
                                   "DESC LIMIT 1"),
                        "gpuledger.stats jax device=0 bytes_in_use=3146496 peak_bytes_in_use=8389376 "
                        "bytes_limit=67108864 bytes_reserved=0 largest_alloc_size=5242880 num_allocs=6");
    sqlite3_close(db);
    /* the job's own final figures are the report's */
    assert_int_equal(printed(r.out, "stats in_use="), 3146496);
    assert_int_equal(printed(r.out, " peak="), 8389376);
    assert_int_equal(printed(r.out, " limit="), 64 * MiB);
    char path[600];
    snprintf(path, sizeof path, "%s/jax.db", h_dir());
    h_run(&r, NULL, ARGV(GL, "report", path));
    assert_int_equal(r.status, 0);
    /* the arena: the allocator's reservation, its figures from memory_stats */
    h_expect(r.out, "  at the peak, by category: xla_arena 64.00 MiB (100%)\n");
    h_expect(r.out, "  jax's allocator, from its memory_stats() (4 samples at marks, steps and exit): 3.00 MiB in use "
                    "at the last, peak in use 8.00 MiB (peak_bytes_in_use), limit 64.00 MiB (bytes_limit); its arena: "
                    "64.00 MiB in 1 allocation (xla_arena, the allocator's reservation, not a leak)\n"
                    "    not visible inside the arena: which arrays hold it, their stacks, the holes between them");
    h_run(&r, NULL, ARGV(GL, "report", "--format", "json", path));
    h_expect(r.out, "\"framework_stats\":{\"framework\":\"jax\",\"samples\":4,\"bytes_in_use_last\":3146496,"
                    "\"peak_bytes_in_use\":8389376,\"peak_seq\":9,\"bytes_limit\":67108864,\"arena_bytes\":67108864,"
                    "\"arena_allocations\":1}");
    /* the samples are not steps (3, from gpuledger.step()), the arena no leak */
    h_run(&r, NULL, ARGV(GL, "leaks", "--steps", path));
    h_expect(r.out, "0 B never freed in 0 leak chains");
    h_expect(r.out, "growing step after step (3 steps ended by the program's marks): none");
    h_run(&r, NULL, ARGV(GL, "gate", "--max-leak-bytes", "0", path));
    assert_int_equal(r.status, 0);

    /* GPULEDGER_JAX_STATS=0: no samples, and the arena is a plain allocation */
    db = run_py(&r, "tests/progs/py_jax.py", "nostats.db", "GPULEDGER_JAX_STATS=0");
    assert_int_equal(h_int(db, "SELECT count(*) FROM annotations WHERE label GLOB 'gpuledger.stats *'"), 0);
    sqlite3_close(db);
    snprintf(path, sizeof path, "%s/nostats.db", h_dir());
    h_run(&r, NULL, ARGV(GL, "gate", "--max-leak-bytes", "0", path));
    assert_int_equal(r.status, 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_cupy_pool, h_teardown),
        cmocka_unit_test_teardown(test_jax_stats, h_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
