/* test_growth_streamed.c — the growth analysis (`leaks --steps`,
 * gl_growth) from what a live-only load gathers during its scan
 * (model.h, GL_LOAD_GROWTH; model_growth.h) against the same analysis
 * over a full load: on every database of tests/golden/db, for every
 * device and for slices and steps, the same groups in the same order with
 * the same bytes at every step end; and the databases whose records given
 * up a full load would still change (a tag after a free; marks in
 * event_log alone) loaded in full instead, with the same answer. */
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
#include "model_growth.h"
#include "model_retention.h"

static const struct gl_load growth_load = {.parts = GL_LOAD_LIVE_ONLY | GL_LOAD_GROWTH};
static size_t streamed, compared_groups, compared_steps, linked_paths;

static void same_growth(const char *path, struct gl_run *f, struct gl_run *l, int device, int nsteps)
{
    struct gl_stacks fs, ls;
    struct gl_groups x, y;
    gl_stacks_init(&fs, f);
    gl_stacks_init(&ls, l);
    int nx = gl_growth(f, device, nsteps, 0, &fs, &x);
    int ny = gl_growth(l, device, nsteps, 0, &ls, &y);
    if (nx != ny)
        fail_msg("%s device %d, %d slices: %d step ends in full, %d gathered", path, device, nsteps, nx, ny);
    assert_int_equal(x.n, y.n);
    assert_int_equal(x.nsteps, y.nsteps);
    assert_int_equal(x.total_bytes, y.total_bytes);
    assert_int_equal(x.total_count, y.total_count);
    for (size_t i = 0; i < x.n; i++) {
        const struct gl_group *a = &x.v[i], *b = &y.v[i];
        assert_int_equal(a->stack_id, b->stack_id);
        assert_int_equal(a->bytes, b->bytes);
        assert_int_equal(a->count, b->count);
        assert_int_equal(a->requested, b->requested);
        assert_int_equal(a->first_ns, b->first_ns);
        assert_int_equal(a->last_ns, b->last_ns);
        assert_int_equal(a->sample->seq, b->sample->seq);
        assert_int_equal(a->sample->cat, b->sample->cat);
        assert_int_equal(a->sample->flags, b->sample->flags);
        assert_int_equal(a->sample->kind, b->sample->kind);
        assert_int_equal(a->sample->pool, b->sample->pool);
        assert_memory_equal(a->steps, b->steps, x.nsteps * sizeof *a->steps);
        compared_groups++;
        compared_steps += x.nsteps;
    }
    gl_groups_free(&x);
    gl_groups_free(&y);
    gl_stacks_free(&fs);
    gl_stacks_free(&ls);
}

/* The two loads of path agree for every device and slicing; returns
 * whether the growth was gathered during the scan (else a full load). */
static int compare(const char *path)
{
    char err[1024];
    struct gl_run *f = gl_run_load_with(path, NULL, err, sizeof err);
    if (!f)
        fail_msg("%s: %s", path, err);
    struct gl_run *l = gl_run_load_with(path, &growth_load, err, sizeof err);
    if (!l)
        fail_msg("%s (growth): %s", path, err);
    int gathered = l->growth != NULL;
    assert_int_equal(l->live_only, gathered); /* gathered, or a full load */
    assert_int_equal(f->allocs_made, l->allocs_made);
    assert_int_equal(f->n_retention, l->n_retention); /* each path's block, given up or kept */
    for (size_t i = 0; i < f->n_retention; i++) {
        const struct gl_alloc *x = f->retention[i].block, *y = l->retention[i].block;
        assert_int_equal(x != NULL, y != NULL);
        if (x) {
            assert_int_equal(x->seq, y->seq);
            assert_int_equal(x->stack_id, y->stack_id);
            assert_int_equal(x->addr, y->addr);
            linked_paths++;
        }
    }
    for (int nsteps = 2; nsteps <= 10; nsteps += 4) {
        same_growth(path, f, l, -2, nsteps);
        for (int d = 0; d < f->ndevs; d++)
            same_growth(path, f, l, f->devs[d].device, nsteps);
    }
    gl_run_free(f);
    gl_run_free(l);
    return gathered;
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
    printf("%zu databases, %zu gathered during the scan: %zu groups, %zu step ends, %zu retention paths' blocks "
           "compared\n",
           n, streamed, compared_groups, compared_steps, linked_paths);
    assert_true(n >= 20);
    assert_int_equal(streamed, n); /* none of the golden set needs a full load */
    assert_true(compared_groups > 50);
}

/* A tag naming a block after its free changes that block's category in a
 * full load; the records given up cannot show it: a full load instead. */
static void test_tag_after_free_loads_in_full(void **state)
{
    (void)state;
    char path[4096];
    gl_golden_changed_copy("growth", "torch-train.db",
                           "INSERT INTO event_log(seq, ts_ns, tid, op, api, kind, device, size, ref_seq, aux)"
                           " SELECT (SELECT max(seq) FROM event_log) + 1, (SELECT max(ts_ns) FROM event_log), 1000, 19,"
                           " 62, 0, device, size, seq, 1 FROM event_log WHERE op = 1 AND kind = 11 AND seq IN"
                           " (SELECT ref_seq FROM event_log WHERE op = 2) ORDER BY seq LIMIT 1",
                           path, sizeof path);
    assert_int_equal(compare(path), 0);
    unlink(path);
}

/* Marks in event_log alone (a database from before annotations): the
 * steps are known only after the scan, so the lifetimes it judged
 * without them may be wrong: a full load instead. */
static void test_marks_without_annotations_load_in_full(void **state)
{
    (void)state;
    char path[4096];
    gl_golden_changed_copy("growth", "marks.db", "DELETE FROM annotations", path, sizeof path);
    assert_int_equal(compare(path), 0);
    unlink(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_golden_databases_agree),
        cmocka_unit_test(test_tag_after_free_loads_in_full),
        cmocka_unit_test(test_marks_without_annotations_load_in_full),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
