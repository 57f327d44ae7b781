/* test_holes_streamed.c — `holes` from a live-only load that replays the
 * stream-ordered pools during its scan (model.h, GL_LOAD_HOLES;
 * model_pool_sweep.h) against a full load's replay of their records: on
 * every database of tests/golden/db the same pools, reservations and
 * caching-allocator entries with the same figures at every moment of
 * their series, and the same heaps (the allocation each lies in, each
 * region's record); a database whose last row the scan skips (the
 * replays end at the last row) loaded in full, with the same answer; and
 * a pool of more distinct addresses than its replay holds unmerged has
 * the regions of one merge over all of them. */
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

#include "analysis.h"
#include "golden_dbs.h"
#include "model.h"
#include "model_heaps.h"
#include "model_pool_sweep.h"
#include "u64map.h"

static const struct gl_load full_load = {.parts = GL_LOAD_HEAPS};
static const struct gl_load holes_load = {.parts = GL_LOAD_HEAPS | GL_LOAD_LIVE_ONLY | GL_LOAD_HOLES};
static size_t streamed, with_pools, compared_points, compared_heaps;

static void same_stat(const struct gl_hole_stat *a, const struct gl_hole_stat *b)
{
    assert_int_equal(a->seq, b->seq);
    assert_int_equal(a->ts_ns, b->ts_ns);
    assert_int_equal(a->reserved, b->reserved);
    assert_int_equal(a->live, b->live);
    assert_int_equal(a->free, b->free);
    assert_int_equal(a->largest_free, b->largest_free);
    assert_int_equal(a->holes, b->holes);
    assert_int_equal(a->unused_bytes, b->unused_bytes);
    assert_true(a->external_fragmentation == b->external_fragmentation);
    assert_true(a->internal_fragmentation == b->internal_fragmentation);
}

static void same_holes(struct gl_run *f, struct gl_run *l, const uint64_t *only)
{
    struct gl_pool_holes *x, *y;
    size_t nx, ny;
    assert_int_equal(gl_holes(f, only, &x, &nx), 0);
    assert_int_equal(gl_holes(l, only, &y, &ny), 0);
    assert_int_equal(nx, ny);
    for (size_t i = 0; i < nx; i++) {
        assert_string_equal(x[i].what, y[i].what);
        assert_int_equal(x[i].pool, y[i].pool);
        assert_int_equal(x[i].device, y[i].device);
        assert_int_equal(x[i].regions, y[i].regions);
        assert_int_equal(x[i].sampled_reserved, y[i].sampled_reserved);
        assert_int_equal(x[i].nseries, y[i].nseries);
        assert_int_equal(x[i].worst_index, y[i].worst_index);
        same_stat(&x[i].worst, &y[i].worst);
        same_stat(&x[i].end, &y[i].end);
        for (size_t s = 0; s < x[i].nseries; s++)
            same_stat(&x[i].series[s], &y[i].series[s]);
        compared_points += x[i].nseries;
        with_pools += !strcmp(x[i].what, "async pool");
    }
    gl_holes_free(x, nx);
    gl_holes_free(y, ny);
}

static void same_heaps(const struct gl_run *f, const struct gl_run *l)
{
    assert_int_equal(f->heaps != NULL, l->heaps != NULL);
    if (!f->heaps)
        return;
    const struct gl_heaps *a = f->heaps, *b = l->heaps;
    assert_int_equal(a->nheaps, b->nheaps);
    assert_int_equal(a->nregions, b->nregions);
    for (size_t i = 0; i < a->nheaps; i++) {
        assert_int_equal(a->heaps[i].in != NULL, b->heaps[i].in != NULL);
        if (a->heaps[i].in)
            assert_int_equal(a->heaps[i].in->seq, b->heaps[i].in->seq);
        assert_int_equal(a->heaps[i].device, b->heaps[i].device);
        compared_heaps++;
    }
    for (size_t i = 0; i < a->nregions; i++) {
        assert_int_equal(a->regions[i].row != NULL, b->regions[i].row != NULL);
        if (a->regions[i].row)
            assert_int_equal(a->regions[i].row->stack_id, b->regions[i].row->stack_id);
    }
}

/* The two loads of path agree; returns whether the pools were replayed
 * during the scan (else a full load). */
static int compare(const char *path)
{
    char err[1024];
    struct gl_run *f = gl_run_load_with(path, &full_load, err, sizeof err);
    if (!f)
        fail_msg("%s: %s", path, err);
    struct gl_run *l = gl_run_load_with(path, &holes_load, err, sizeof err);
    if (!l)
        fail_msg("%s (holes): %s", path, err);
    int replayed = l->pool_replays != NULL;
    assert_int_equal(l->live_only, replayed); /* replayed, or a full load */
    same_holes(f, l, NULL);
    uint64_t zero = 0;
    same_holes(f, l, &zero); /* --pool 0 */
    same_heaps(f, l);
    gl_run_free(f);
    gl_run_free(l);
    return replayed;
}

static void compare_golden(const char *path)
{
    streamed += (size_t)compare(path);
}

static void test_golden_databases_agree(void **state)
{
    (void)state;
    assert_non_null(getenv("GL_SOURCE_ROOT"));
    size_t n = gl_each_golden_db(compare_golden);
    printf("%zu databases, %zu replayed during the scan: %zu pool entries, %zu moments, %zu heaps compared\n", n,
           streamed, with_pools, compared_points, compared_heaps);
    assert_true(n >= 20);
    assert_int_equal(streamed, n); /* none of the golden set needs a full load */
    assert_true(with_pools >= 2);
    assert_true(compared_heaps >= 2);
}

/* A last row the load skips (a free of nothing): the replays' end, the
 * recording's last row, is not the last row kept: a full load instead. */
static void test_last_row_skipped_loads_in_full(void **state)
{
    (void)state;
    char path[4096];
    gl_golden_changed_copy("holes", "pool.db",
                           "INSERT INTO event_log(seq, ts_ns, tid, op, api, kind, device, size, addr, ref_seq)"
                           " SELECT max(seq) + 1, max(ts_ns), 1, 2, 4, 0, 0, 0, 16, max(seq) + 1000 FROM event_log",
                           path, sizeof path);
    assert_int_equal(compare(path), 0);
    unlink(path);
}

/* More distinct addresses than a replay keeps unmerged: its regions are
 * those of one merge over every range handed out, and the moment at its
 * end holds what is live. */
static void test_regions_fold_as_one_merge(void **state)
{
    (void)state;
    enum { N = 200000 };
    struct gl_ival *all = malloc(N * sizeof *all), first;
    assert_non_null(all);
    struct gl_pool_sweep p;
    struct gl_u64map set; /* what is live at the end, replayed apart */
    gl_u64map_init(&set);
    gl_pool_sweep_init(&p, 7, 0, 2 * N, 1);
    uint64_t x = 88172645463325252ull, want = 0, got = 0;
    for (int i = 0; i < N; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        uint64_t addr = ((x % (1u << 30)) & ~0xffull) + 0x100, size = ((x >> 40) % 64 + 1) << 8;
        all[i] = (struct gl_ival){addr, addr + size};
        assert_int_equal(gl_pool_sweep_alloc(&p, 2 * i + 1, i, addr, size), 0);
        assert_int_equal(gl_u64map_put(&set, addr, addr + size), 0);
        if (i % 2) { /* every other one freed at once */
            assert_int_equal(gl_pool_sweep_free(&p, 2 * i + 2, i, addr), 0);
            gl_u64map_del(&set, addr);
        }
    }
    first = all[0];
    assert_int_equal(gl_pool_sweep_finish(&p), 0);
    size_t n = gl_ivals_merge(all, N);
    assert_true(n > 1000 && n < N); /* some merged, many apart */
    assert_int_equal(p.nregions, n);
    assert_memory_equal(p.regions, all, n * sizeof *all);
    assert_int_equal(p.next, GL_POOL_POINTS);
    assert_int_equal(p.snap[GL_HOLE_SAMPLES].seq, 2 * N);
    assert_int_equal(p.snap[GL_HOLE_SAMPLES].ts_ns, N - 1);
    size_t nl = 0;
    for (size_t k = 0; k < set.cap; k++)
        if (set.keys[k] != 0 && set.keys[k] != UINT64_MAX)
            all[nl++] = (struct gl_ival){set.keys[k], set.vals[k]};
    nl = gl_ivals_merge(all, nl);
    for (size_t k = 0; k < nl; k++)
        want += all[k].hi - all[k].lo;
    for (size_t k = 0; k < p.snap[GL_HOLE_SAMPLES].n; k++)
        got += p.snap[GL_HOLE_SAMPLES].live[k].hi - p.snap[GL_HOLE_SAMPLES].live[k].lo;
    assert_int_equal(p.snap[GL_HOLE_SAMPLES].n, nl);
    assert_int_equal(got, want);
    /* the first moment is the first allocation's */
    assert_int_equal(p.snap[0].seq, 1);
    assert_int_equal(p.snap[0].n, 1);
    assert_int_equal(p.snap[0].live[0].lo, first.lo);
    assert_int_equal(p.snap[0].live[0].hi, first.hi);
    gl_u64map_free(&set);
    gl_pool_sweep_free_all(&p);
    free(all);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_golden_databases_agree),
        cmocka_unit_test(test_last_row_skipped_loads_in_full),
        cmocka_unit_test(test_regions_fold_as_one_merge),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
