/* verdict.c — why PyTorch's caching allocator ran out of memory: the holes
 * it had then (the recorder samples them at every out-of-memory) against
 * what was asked. Fragmentation: enough cached free bytes, but no hole as
 * big as the request (expandable segments map pages where a request needs
 * them instead of carving fixed segments); demand: live tensors fill what
 * the allocator could get; growth, whichever of those the request met:
 * live tensors grow step over step (trend.h) so fast that the room left
 * holds only a few steps of it, whatever the allocator does. */
#include <stdio.h>
#include <string.h>

#include "dossier.h"
#include "model_blocks.h"
#include "units.h"
#include "stack_text.h"

void gl_oom_verdict(struct gl_run *r, const struct gl_fail *f, const struct gl_groups *ledger,
                    const struct gl_trend *trend, struct gl_verdict *v)
{
    struct gl_alloc_sample s;
    memset(v, 0, sizeof *v);
    if (f->api != GL_API_torch_allocator || !gl_run_allocator_sample_at(r, f->device, f->seq, &s))
        return;
    v->known = 1;
    v->asked = f->size;
    v->device_free = f->aux;
    v->cached_free = s.cached_free;
    v->holes = s.holes;
    v->largest_hole = s.largest_hole;
    v->reserved = s.reserved;
    v->tensors = ledger->layered ? ledger->tensors : s.allocated;
    v->fragmentation = s.cached_free >= f->size && s.largest_hole < f->size;
    v->expandable = gl_run_allocator_expandable(r);
    v->trend = trend;
    /* room for growth: the cached free bytes, and the device's free bytes
     * unless they were there and the allocator failed anyway (a limit such
     * as set_per_process_memory_fraction stood in the way: not room) */
    v->limited = v->device_free >= f->size;
    v->steps_left = gl_trend_steps_in(trend, v->cached_free + (v->limited ? 0 : v->device_free));
    v->growth = v->steps_left >= 0 && v->steps_left < GL_TREND_FEW_STEPS;
}

const char *gl_verdict_name(const struct gl_verdict *v)
{
    if (!v->known)
        return NULL;
    return v->growth ? "growth" : v->fragmentation ? "fragmentation" : "demand";
}

/* "; underlying: +3.00 MiB/step at f (a.py:3) since step 1 — ..." */
static size_t growth_text(const struct gl_verdict *v, char *buf, size_t sz)
{
    char a[32], b[32], c[32];
    const struct gl_trend *t = v->trend;
    size_t n = (size_t)snprintf(buf, sz, "; underlying: +%s/step at %s since step %ld — the %s cached free and %s%s hold "
                                "%.1f step%s of it",
                                gl_fmt_bytes(t->per_step, a, sizeof a), t->where, t->since_step,
                                gl_fmt_bytes(v->cached_free, b, sizeof b),
                                v->limited ? "nothing under the process's memory limit" : gl_fmt_bytes(v->device_free, c, sizeof c),
                                v->limited ? "" : " free on the device", v->steps_left, v->steps_left == 1.0 ? "" : "s");
    if (n < sz && v->cached_free < t->per_step)
        n += (size_t)snprintf(buf + n, sz - n, ": expandable segments would buy less than one step");
    else if (n < sz) {
        unsigned long long steps = v->cached_free / t->per_step; /* whole steps the cache holds */
        n += (size_t)snprintf(buf + n, sz - n, ": expandable segments would buy at most %llu step%s", steps,
                              steps == 1 ? "" : "s");
    }
    return n < sz ? n : sz;
}

void gl_verdict_text(const struct gl_verdict *v, const struct gl_groups *ledger, struct gl_stacks *s, char *buf,
                     size_t sz)
{
    char a[32], b[32], c[32], d[32];
    size_t n;
    buf[0] = 0;
    if (!v->known)
        return;
    if (v->growth) { /* this request's verdict, then the trend */
        struct gl_verdict req = *v;
        char inner[1600];
        req.growth = 0;
        gl_verdict_text(&req, ledger, s, inner, sizeof inner);
        n = (size_t)snprintf(buf, sz, "growth: this request: %s", inner);
        if (n < sz)
            growth_text(v, buf + n, sz - n);
        return;
    }
    if (v->fragmentation) {
        snprintf(buf, sz, "fragmentation: %s cached free in %llu hole%s, largest %s < the %s asked; %s",
                 gl_fmt_bytes(v->cached_free, a, sizeof a), (unsigned long long)v->holes, gl_s(v->holes),
                 gl_fmt_bytes(v->largest_hole, b, sizeof b), gl_fmt_bytes(v->asked, c, sizeof c),
                 v->expandable ? "expandable segments are on already: the holes lie between live tensors"
                               : "expandable segments would serve it (PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True)");
        return;
    }
    n = (size_t)snprintf(buf, sz, "demand: live tensors %s of the %s the allocator holds (%s cached free, %s asked)",
                         gl_fmt_bytes(v->tensors, a, sizeof a), gl_fmt_bytes(v->reserved, b, sizeof b),
                         gl_fmt_bytes(v->cached_free, c, sizeof c), gl_fmt_bytes(v->asked, d, sizeof d));
    /* the biggest tensors by where they were made */
    int shown = 0;
    for (size_t i = 0; i < ledger->n && shown < 3 && n < sz; i++) {
        const struct gl_group *g = &ledger->v[i];
        char where[600];
        if (!g->sample || g->sample->kind != GL_KIND_BLOCK)
            continue;
        gl_stack_user_frame(gl_stack_get(s, g->stack_id), where, sizeof where);
        n += (size_t)snprintf(buf + n, sz - n, "%s %s %s (%s)", shown ? "," : ": the biggest are",
                              gl_fmt_bytes(g->bytes, a, sizeof a), where, g->category ? g->category : "other");
        shown++;
    }
}
