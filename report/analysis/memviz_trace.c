/* memviz_trace.c — each device's trace for the memory_viz view
 * (export_views.h): every step of the segments and blocks in event order,
 * as the entries PyTorch's allocator reports, and the OOMs; the last
 * max_entries of a device kept, as PyTorch's ring does. */
#include <stdlib.h>
#include <string.h>

#include "memviz_build.h"

/* One step of the trace: an allocation, its free, or (a block) when it
 * became reusable; in event order. */
enum { EV_ALLOC, EV_FREE, EV_DONE };
struct ev {
    int64_t seq, ts;
    uint32_t idx;
    uint8_t what;
};

static int cmp_ev(const void *a, const void *b)
{
    const struct ev *x = a, *y = b;
    if (x->seq != y->seq)
        return x->seq < y->seq ? -1 : 1;
    return x->what < y->what ? -1 : x->what > y->what;
}

/* Every step of the wanted allocations, sorted; NULL on out of memory. */
static struct ev *events(const struct gl_memviz_state *m, size_t *n)
{
    const struct gl_run *r = m->r;
    size_t k = 0;
    struct ev *v = malloc((3 * r->nallocs + 1) * sizeof *v);
    if (!v)
        return NULL;
    for (size_t i = 0; i < r->nallocs; i++) {
        const struct gl_alloc *a = &r->allocs[i];
        if (!gl_mv_wanted(a))
            continue;
        v[k++] = (struct ev){a->seq, a->alloc_ns, (uint32_t)i, EV_ALLOC};
        if (a->free_seq)
            v[k++] = (struct ev){a->free_seq, a->free_ns, (uint32_t)i, EV_FREE};
        if (a->free_seq && m->facts[i].done_seq && !gl_mv_reusable_at_free(a))
            v[k++] = (struct ev){m->facts[i].done_seq, m->facts[i].done_ns, (uint32_t)i, EV_DONE};
    }
    qsort(v, k, sizeof *v, cmp_ev);
    *n = k;
    return v;
}

/* The trace entries of one step, in the order PyTorch's allocator reports
 * them, kept in t (keep 1) or only counted. */
struct emit {
    struct gl_memviz_trace *t;
    const struct gl_alloc *a;
    int64_t ts;
    int keep, n, oom;
};

static void put(struct emit *e, const char *action, uint64_t size)
{
    e->n++;
    if (!e->keep)
        return;
    struct gl_memviz_trace *t = e->t;
    if (gl_grow((void **)&t->v, &t->cap, t->n, sizeof *t->v, 1024)) {
        e->oom = 1;
        return;
    }
    t->v[t->n++] = (struct gl_memviz_entry){action, e->a->addr, size, e->a->stream, e->a->stack_id, e->ts};
}

/* The entries of one step: how many (keep 0), or -1 out of memory. */
static int entries_of(struct gl_memviz_state *m, struct gl_memviz_trace *t, const struct ev *step, int keep)
{
    const struct gl_alloc *a = &m->r->allocs[step->idx];
    int seg = gl_mv_is_segment(a), block = !seg || !m->hosts[step->idx];
    uint64_t size = gl_mv_asked(m, step->idx);
    struct emit e = {t, a, step->ts, keep, 0, 0};
    if (step->what == EV_ALLOC) {
        if (seg)
            put(&e, gl_mv_is_mapping(a) ? "segment_map" : "segment_alloc", a->size);
        if (block)
            put(&e, "alloc", size);
        return e.oom ? -1 : e.n;
    }
    if (block && step->what == EV_FREE)
        put(&e, "free_requested", size);
    if (block && (step->what == EV_DONE || gl_mv_reusable_at_free(a)))
        put(&e, "free_completed", size);
    if (seg && step->what == EV_FREE)
        put(&e, gl_mv_is_mapping(a) ? "segment_unmap" : "segment_free", a->size);
    return e.oom ? -1 : e.n;
}

/* Device bytes of the ledger live on `device` at time ts. */
static uint64_t live_at(const struct gl_run *r, int device, int64_t ts)
{
    uint64_t live = 0;
    for (size_t i = 0; i < r->nallocs; i++) {
        const struct gl_alloc *a = &r->allocs[i];
        if (a->device == device && gl_kind_counts_on_device(a->kind) && a->alloc_ns <= ts &&
            (!a->free_seq || a->free_ns > ts))
            live += a->size;
    }
    return live;
}

/* An OOM's device_free, as PyTorch's entry has it: what PyTorch's allocator
 * said (the fail's aux), else the device's free bytes at the last
 * cudaMemGetInfo sample before it less what the ledger took since; 0 when
 * neither is known. */
static uint64_t device_free(struct gl_run *r, const struct gl_fail *fl)
{
    uint64_t free_then;
    int64_t at;
    if (fl->aux)
        return fl->aux;
    if (!gl_run_device_sample(r, fl->device, fl->ts_ns, &free_then, &at))
        return 0;
    uint64_t before = live_at(r, fl->device, at), now = live_at(r, fl->device, fl->ts_ns);
    if (now > before)
        return free_then > now - before ? free_then - (now - before) : 0;
    return free_then + (before - now);
}

/* How many entries the device's trace has, and how many to leave out
 * first. */
static size_t count_entries(struct gl_memviz_state *m, const struct ev *ev, size_t nev, int device)
{
    struct gl_run *r = m->r;
    size_t total = 0;
    for (size_t i = 0; i < nev; i++)
        if (gl_mv_dev_of(m, &r->allocs[ev[i].idx]) == device)
            total += (size_t)entries_of(m, NULL, &ev[i], 0);
    for (size_t i = 0; i < r->nfails; i++)
        total += r->fails[i].device == device && r->fails[i].op == GL_OP_OOM;
    return total;
}

static int oom_entry(struct gl_memviz_trace *t, struct gl_run *r, const struct gl_fail *fl)
{
    if (gl_grow((void **)&t->v, &t->cap, t->n, sizeof *t->v, 1024))
        return -1;
    t->v[t->n++] = (struct gl_memviz_entry){"oom", device_free(r, fl), fl->size, 0, fl->stack_id, fl->ts_ns};
    return 0;
}

static int trace(struct gl_memviz_state *m, const struct ev *ev, size_t nev, int device)
{
    struct gl_run *r = m->r;
    struct gl_memviz_trace *t = &m->v->traces[device];
    size_t max = m->v->max_entries, skip = 0, seen = 0, f = 0;
    t->total = count_entries(m, ev, nev, device);
    if (max && t->total > max) { /* keep the last ones, as PyTorch's ring does */
        skip = t->total - max;
        t->cut = 1;
    }
    for (size_t i = 0; i <= nev; i++) {
        int64_t seq = i < nev ? ev[i].seq : INT64_MAX;
        for (; f < r->nfails && r->fails[f].seq < seq; f++) {
            const struct gl_fail *fl = &r->fails[f];
            if (fl->device != device || fl->op != GL_OP_OOM || seen++ < skip)
                continue;
            if (oom_entry(t, r, fl))
                return -1;
        }
        if (i == nev)
            break;
        if (gl_mv_dev_of(m, &r->allocs[ev[i].idx]) != device)
            continue;
        int n = entries_of(m, t, &ev[i], 0);
        seen += (size_t)n; /* a step straddling the cut keeps all its entries */
        if (seen > skip && entries_of(m, t, &ev[i], 1) < 0)
            return -1;
    }
    return 0;
}

int gl_mv_traces(struct gl_memviz_state *m)
{
    size_t nev = 0;
    struct ev *ev = events(m, &nev);
    struct gl_memviz_view *v = m->v;
    int rc = ev ? 0 : -1;
    for (int d = 0; !rc && d < v->ntraces; d++)
        rc = trace(m, ev, nev, d);
    free(ev);
    return rc;
}
