/* model_moments.c — see model_moments.h. */
#include "model_moments.h"

#include <stdlib.h>
#include <string.h>

void gl_moments_init(struct gl_moments *m, int64_t last_step_end, int count_stacks)
{
    memset(m, 0, sizeof *m);
    m->last_step_end = last_step_end;
    m->count_stacks = count_stacks;
    m->look_at = 1024;
    gl_u64map_init(&m->stack_allocs);
}

void gl_moments_free(struct gl_moments *m)
{
    free(m->held);
    gl_u64map_free(&m->stack_allocs);
    memset(m, 0, sizeof *m);
}

/* As model_blocks.c's tensor_peaks: the sums wrap (unsigned), the peaks
 * compare signed, the first time the highest. */
int gl_moments_alloc(struct gl_moments *m, const struct gl_alloc *a)
{
    if (m->count_stacks && a->stack_id > 0) {
        uint64_t n = 0;
        (void)gl_u64map_get(&m->stack_allocs, (uint64_t)a->stack_id, &n);
        if (gl_u64map_put(&m->stack_allocs, (uint64_t)a->stack_id, n + 1))
            return -1;
    }
    if (a->kind != GL_KIND_BLOCK)
        return 0;
    struct gl_moments_dev *d = &m->dev[a->device + 1];
    d->blocks += a->size;
    d->requested += a->requested;
    d->last_alloc_seq = a->seq;
    if ((int64_t)d->blocks > (int64_t)d->tensor_peak) {
        d->tensor_peak = d->blocks;
        d->tensor_peak_seq = a->seq;
        d->tensor_peak_ns = a->alloc_ns;
    }
    if ((int64_t)d->requested > (int64_t)d->requested_peak) {
        d->requested_peak = d->requested;
        d->requested_rise_seq = a->seq;
    }
    return 0;
}

void gl_moments_free_row(struct gl_moments *m, const struct gl_alloc *a)
{
    if (a->kind != GL_KIND_BLOCK)
        return;
    struct gl_moments_dev *d = &m->dev[a->device + 1];
    d->blocks -= a->size;
    if (a->done_seq) /* free and completion in one */
        d->requested -= a->requested;
}

void gl_moments_done(struct gl_moments *m, const struct gl_alloc *a, int was_done)
{
    struct gl_moments_dev *d = &m->dev[a->device + 1];
    /* a completion after a block's `free`: a full load takes its requested
     * bytes off here, the scan took them at the free: the same peak when
     * no block of the device came in between */
    if (was_done) {
        if (d->last_alloc_seq > a->free_seq)
            m->inexact = 1;
        return;
    }
    d->requested -= a->requested;
}

/* Is there a failure at a seq in [lo, hi)? (r->fails rise.) */
static int fail_within(const struct gl_run *r, int64_t lo, int64_t hi)
{
    size_t a = 0, b = r->nfails;
    while (a < b) {
        size_t mid = a + (b - a) / 2;
        if (r->fails[mid].seq < lo)
            a = mid + 1;
        else
            b = mid;
    }
    return a < r->nfails && r->fails[a].seq < hi;
}

static int within(int64_t at, int64_t lo, int64_t hi)
{
    return at && lo <= at && at < hi;
}

int gl_moments_needed(const struct gl_moments *m, const struct gl_run *r, const struct gl_alloc *a)
{
    /* live from its seq to its free, then (a block) waiting to its reuse */
    int64_t end = a->kind == GL_KIND_BLOCK && a->done_seq ? a->done_seq : a->free_seq;
    if (!end || within(m->last_step_end, a->seq, end) || fail_within(r, a->seq, end) ||
        within(m->dev[a->device + 1].tensor_peak_seq, a->seq, end))
        return 1;
    for (int k = 0; k < r->ndevs; k++)
        if (r->devs[k].device == a->device)
            return within(r->devs[k].peak_seq, a->seq, end);
    return 0;
}

void gl_moments_finish(struct gl_moments *m, struct gl_run *r)
{
    for (size_t i = 0; i < r->nallocs; i++) {
        const struct gl_alloc *a = &r->allocs[i];
        /* never reusable: a full load takes its requested bytes off at its free */
        if (a->kind == GL_KIND_BLOCK && a->free_seq && !a->done_seq &&
            a->free_seq < m->dev[a->device + 1].requested_rise_seq)
            m->inexact = 1;
    }
    for (int k = 0; k < r->ndevs; k++) {
        struct gl_device *dev = &r->devs[k];
        const struct gl_moments_dev *d = &m->dev[dev->device + 1];
        if (!dev->blocks)
            continue;
        dev->tensor_peak = d->tensor_peak;
        dev->tensor_peak_seq = d->tensor_peak_seq;
        dev->tensor_peak_ns = d->tensor_peak_ns;
        dev->requested_peak = d->requested_peak;
    }
}
