/* test_live_only.c — the live-only load (model.h, GL_LOAD_LIVE_ONLY: what
 * `summary`, `gate` and `leaks` read) against the full load, on every
 * database of tests/golden/db: the same allocations live at the end
 * (and blocks waiting for their completion), field for field; the same
 * devices, peaks and timelines, failures (and which OOMs are one request),
 * counts and skipped rows, the stacks of what was kept; freed allocations'
 * records given up. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "golden_dbs.h"
#include "frames.h"
#include "model.h"

static int kept_live(const struct gl_alloc *a)
{
    return !a->free_seq || (a->kind == GL_KIND_BLOCK && !a->done_seq);
}

static size_t full_records, live_records, pending_blocks, stacks_compared;

static int same_text(const char *a, const char *b)
{
    return a == b || (a && b && !strcmp(a, b));
}

/* The stack of id in both loads, frame for frame (the live-only load
 * reads only the stacks its records name). */
static void same_stack(const struct gl_run *f, const struct gl_run *l, int64_t id)
{
    const struct gl_stack *x = gl_run_stack(f, id), *y = gl_run_stack(l, id);
    assert_int_equal(x != NULL, y != NULL);
    if (!x)
        return;
    assert_int_equal(x->n, y->n);
    for (int i = 0; i < x->n; i++) {
        const struct gl_frame *a = gl_stack_frame(x, i), *b = gl_stack_frame(y, i);
        assert_true(same_text(a->symbol, b->symbol));
        assert_true(same_text(a->module, b->module));
        assert_true(same_text(a->file, b->file));
        assert_int_equal(a->line, b->line);
        assert_int_equal(a->python, b->python);
        assert_int_equal(a->offset, b->offset);
    }
    stacks_compared++;
}

static void compare(const char *path)
{
    char err[1024];
    const struct gl_load live = {.parts = GL_LOAD_LIVE_ONLY};
    struct gl_run *f = gl_run_load_with(path, NULL, err, sizeof err);
    if (!f)
        fail_msg("%s: %s", path, err);
    struct gl_run *l = gl_run_load_with(path, &live, err, sizeof err);
    if (!l)
        fail_msg("%s (live only): %s", path, err);
    assert_int_equal(l->live_only, 1);
    assert_int_equal(f->event_count, l->event_count);
    assert_int_equal(f->nskipped, l->nskipped);
    assert_memory_equal(f->skipped, l->skipped, sizeof f->skipped);
    assert_memory_equal(f->skipped_first_seq, l->skipped_first_seq, sizeof f->skipped_first_seq);
    assert_memory_equal(f->api_count, l->api_count, sizeof f->api_count);
    assert_int_equal(f->ndevs, l->ndevs);
    assert_int_equal(f->has_blocks, l->has_blocks);
    for (int d = 0; d < f->ndevs; d++) {
        const struct gl_device *x = &f->devs[d], *y = &l->devs[d];
        assert_int_equal(x->device, y->device);
        assert_int_equal(x->peak, y->peak);
        assert_int_equal(x->peak_seq, y->peak_seq);
        assert_int_equal(x->peak_ns, y->peak_ns);
        assert_int_equal(x->live_end, y->live_end);
        assert_int_equal(x->blocks, y->blocks);
        assert_int_equal(x->ntimeline, y->ntimeline);
        if (x->ntimeline)
            assert_memory_equal(x->timeline, y->timeline, x->ntimeline * sizeof *x->timeline);
    }
    assert_int_equal(f->nfails, l->nfails);
    for (size_t i = 0; i < f->nfails; i++) { /* field by field: a struct's padding is no value */
        const struct gl_fail *x = &f->fails[i], *y = &l->fails[i];
        assert_int_equal(x->seq, y->seq);
        assert_int_equal(x->ts_ns, y->ts_ns);
        assert_int_equal(x->stack_id, y->stack_id);
        assert_int_equal(x->size, y->size);
        assert_int_equal(x->addr, y->addr);
        assert_int_equal(x->aux, y->aux);
        assert_int_equal(x->device, y->device);
        assert_int_equal(x->result, y->result);
        assert_int_equal(x->op, y->op);
        assert_int_equal(x->api, y->api);
        assert_int_equal(x->blocks_before, y->blocks_before);
        same_stack(f, l, x->stack_id);
        assert_int_equal(gl_fail_absorbed(f, i), gl_fail_absorbed(l, i));
    }
    size_t k = 0;
    for (size_t i = 0; i < f->nallocs; i++) {
        if (!kept_live(&f->allocs[i]))
            continue;
        pending_blocks += f->allocs[i].free_seq != 0;
        if (k >= l->nallocs)
            fail_msg("%s: allocation #%lld missing from the live-only load", path, (long long)f->allocs[i].seq);
        assert_memory_equal(&f->allocs[i], &l->allocs[k], sizeof f->allocs[i]);
        same_stack(f, l, f->allocs[i].stack_id);
        k++;
    }
    assert_int_equal(k, l->nallocs);
    full_records += f->nallocs;
    live_records += l->nallocs;
    assert_true(l->nallocs <= f->nallocs);
    assert_true(l->nstacks <= f->nstacks);
    assert_null(l->free_order);
    gl_run_free(f);
    gl_run_free(l);
}

static void test_golden_databases_agree(void **state)
{
    (void)state;
    assert_non_null(getenv("GL_SOURCE_ROOT"));
    size_t n = gl_each_golden_db(compare);
    assert_true(n >= 20); /* the golden set, not an empty folder */
    printf("%zu databases: %zu records in full, %zu live-only (%zu blocks waiting for completion), %zu stacks "
           "compared\n",
           n, full_records, live_records, pending_blocks, stacks_compared);
    assert_true(stacks_compared > 100);
    assert_true(live_records * 2 < full_records); /* freed records were given up (a block freed but
                                                     never completed: test_torch's pending_at_end) */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_golden_databases_agree),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
