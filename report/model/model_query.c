/* model_query.c — what the report asks of a run beyond its events,
 * answered from the tables the load read (model_tables.c): a stack's
 * frames, meta keys, the stacks holding Python frames, a pool's sampled
 * reservation, the allocation an event made. */
#include <stdio.h>
#include <string.h>

#include "frames.h"
#include "model.h"
#include "u64map.h"

const struct gl_stack *gl_run_stack(const struct gl_run *r, int64_t id)
{
    size_t lo = 0, hi = r->nstacks;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (r->stacks[mid].id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < r->nstacks && r->stacks[lo].id == id ? &r->stacks[lo] : NULL;
}

int gl_run_meta(struct gl_run *r, const char *key, char *buf, size_t sz)
{
    buf[0] = 0;
    for (size_t i = 0; i < r->nmeta; i++)
        if (r->meta[i].key && !strcmp(r->meta[i].key, key)) {
            if (r->meta[i].value)
                snprintf(buf, sz, "%s", r->meta[i].value);
            break; /* the key is the table's primary key */
        }
    return buf[0] ? 0 : -1;
}

void gl_run_python_stacks(struct gl_run *r, struct gl_u64map *out)
{
    for (size_t i = 0; i < r->nstacks; i++)
        for (int k = 0; k < r->stacks[i].n; k++)
            if (gl_stack_frame(&r->stacks[i], k)->python) {
                gl_u64map_put(out, (uint64_t)r->stacks[i].id, 1);
                break;
            }
}

uint64_t gl_run_pool_reserved(struct gl_run *r, uint64_t pool, int device)
{
    int64_t v = 0;
    int found = 0;
    for (size_t i = 0; i < r->npools; i++) {
        const struct gl_pool_reserved *p = &r->pools[i];
        if (p->device == device && (!pool || p->pool == (int64_t)pool) && (!found || p->reserved > v)) {
            v = p->reserved;
            found = 1;
        }
    }
    return (uint64_t)v;
}

int gl_run_device_sample(struct gl_run *r, int device, int64_t ts_ns, uint64_t *free_bytes, int64_t *at_ns)
{
    const struct gl_free_sample *best = NULL; /* the last of `device` at or before ts_ns */
    for (size_t i = 0; i < r->nfree_samples; i++) {
        const struct gl_free_sample *d = &r->free_samples[i];
        if (d->device == device && d->ts_ns <= ts_ns)
            best = d;
    }
    if (!best || !best->has_free)
        return 0; /* none, or the last row then had no free figure */
    *free_bytes = best->free_bytes;
    *at_ns = best->ts_ns;
    return 1;
}

const struct gl_alloc *gl_run_alloc_by_seq(const struct gl_run *r, int64_t seq)
{
    size_t lo = 0, hi = r->nallocs;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (r->allocs[mid].seq < seq)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < r->nallocs && r->allocs[lo].seq == seq ? &r->allocs[lo] : NULL;
}
