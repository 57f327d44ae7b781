/* view_perfetto.c — the Perfetto export's view (export_views.h): the run
 * replayed in event order (sweep.h) with PyTorch's allocator layers
 * (ledger_layers.h), each change of a device's live bytes and of a
 * category's bytes as a counter point (each track cut to a bounded number
 * of time buckets unless every point is asked for: trace_downsample.h);
 * the marks and ranges as slices. */
#include <stdlib.h>
#include <string.h>

#include "budget_notes.h"
#include "export_views.h"
#include "ledger_layers.h"
#include "model_block_facts.h"
#include "sweep.h"
#include "trace_downsample.h"
#include "u64map.h"

static int cat_index(struct gl_perfetto_view *v, const char *name)
{
    for (int i = 0; i < v->ncats; i++)
        if (!strcmp(v->cats[i], name))
            return i;
    if (v->ncats == GL_TRACE_MAX_CATS)
        return GL_TRACE_MAX_CATS - 1;
    v->cats[v->ncats] = name;
    return v->ncats++;
}

/* What the counters follow: CUDA memory and the ledger's items (PyTorch's
 * blocks too). */
static int replayed(const struct gl_alloc *a)
{
    return gl_kind_counts_on_device(a->kind) || gl_is_item(a);
}

/* The replay's state: by device + 1 (0 is "unknown"). */
struct replay {
    struct gl_perfetto_view *v;
    const struct gl_rules *rules;
    int64_t cat_live[GL_MAX_DEVICES + 1][GL_TRACE_MAX_CATS];
    struct gl_layers lay[GL_MAX_DEVICES + 1];
    int64_t live[GL_MAX_DEVICES + 1];
    int cache;            /* category index of allocator_cache, -1: no blocks */
    struct gl_u64map site; /* stack, api, kind, identity category -> category index + 1 */
    struct gl_trace_ds *ds; /* NULL: every point */
    int oom;
};

static void point(struct replay *x, int k, int64_t ts, int cat, int64_t bytes)
{
    struct gl_perfetto_view *v = x->v;
    struct gl_trace_point p = {ts, bytes, (int16_t)(k - 1), (int16_t)cat};
    if (x->ds) {
        x->oom |= gl_trace_ds_add(x->ds, &p) != 0;
        return;
    }
    if (gl_grow((void **)&v->points, &v->cap, v->npoints, sizeof *v->points, 4096)) {
        x->oom = 1;
        return;
    }
    v->points[v->npoints++] = p;
    v->points_seen++;
}

/* One change on device k at time ts: the total, the category ci of the
 * allocation (-1: none), the allocator's cache (with layers). */
static void changed(struct replay *x, int k, int64_t ts, int ci, int layers)
{
    point(x, k, ts, -1, x->live[k]);
    for (int pass = 0; pass < 2; pass++) {
        int c = pass ? (layers && x->lay[k].on && ci != x->cache ? x->cache : -1) : ci;
        if (c < 0)
            continue;
        int64_t bytes = x->cat_live[k][c];
        if (c == x->cache && x->lay[k].on)
            bytes += gl_layers_cached(&x->lay[k]) + x->lay[k].pending;
        point(x, k, ts, c, bytes);
    }
}

/* The category index of an item of the ledger, cached by call site. */
static int item_category(struct replay *x, const struct gl_alloc *a)
{
    uint64_t key = (uint64_t)a->stack_id << 32 | (uint64_t)a->api << 16 | (uint64_t)a->kind << 8 | a->cat, c;
    if (!gl_u64map_get(&x->site, key, &c)) {
        c = (uint64_t)cat_index(x->v, gl_categorize(x->rules, &x->v->stacks, a)) + 1;
        gl_u64map_put(&x->site, key, c);
    }
    return (int)c - 1;
}

/* One allocation or free of the sweep. */
static void apply(struct replay *x, const struct gl_alloc *a, int is_free, int64_t ts)
{
    if (a->device < -1 || a->device >= GL_MAX_DEVICES)
        return; /* -1 (unknown) .. GL_MAX_DEVICES - 1: the model keeps no other */
    int k = a->device + 1;
    int64_t delta = is_free ? -(int64_t)a->size : (int64_t)a->size;
    int ci = -1;
    if (gl_is_item(a)) {
        ci = item_category(x, a);
        x->cat_live[k][ci] += delta;
    }
    if (gl_kind_counts_on_device(a->kind))
        x->live[k] += delta;
    gl_layers_apply(&x->lay[k], a, is_free);
    changed(x, k, ts, ci, (a->flags & GL_AF_ALLOCATOR) || a->kind == GL_KIND_BLOCK);
}

/* A block reusable again: pending to cached. */
static void complete(struct replay *x, const struct gl_alloc *a, int64_t ts)
{
    if (a->device < -1 || a->device >= GL_MAX_DEVICES)
        return;
    gl_layers_complete(&x->lay[a->device + 1], a);
    changed(x, a->device + 1, ts, -1, 1);
}

static void replay_init(struct replay *x, struct gl_perfetto_view *v, const struct gl_rules *rules)
{
    struct gl_run *r = v->run;
    x->v = v;
    x->rules = rules;
    x->cache = -1;
    for (int k = 0; k < r->ndevs; k++)
        if (r->devs[k].blocks && r->devs[k].device >= -1 && r->devs[k].device < GL_MAX_DEVICES)
            x->lay[r->devs[k].device + 1].on = 1;
    if (r->has_blocks)
        x->cache = cat_index(v, "allocator_cache");
    gl_u64map_init(&x->site);
}

/* The counters: every allocation, free and block completion in order. */
static int counters(struct gl_perfetto_view *v, const struct gl_rules *rules)
{
    struct gl_run *r = v->run;
    struct gl_sweep sw = {NULL, 0};
    struct replay *x = calloc(1, sizeof *x);
    struct gl_layers_done *done = NULL;
    size_t ndone = 0;
    struct gl_block_fact *facts = r->has_blocks ? gl_block_facts_load(r) : NULL;
    int rc = !x || (r->has_blocks && !facts) || gl_sweep_build(r, &sw, replayed) ||
             gl_layers_done_list(r, &done, &ndone);
    if (!rc && v->buckets && !(x->ds = gl_trace_ds_new(v->buckets, r->first_ns, r->last_ns)))
        rc = 1;
    if (!rc) {
        replay_init(x, v, rules);
        size_t di = 0;
        for (size_t i = 0; i <= sw.n && !x->oom; i++) {
            int64_t seq = i < sw.n ? gl_sweep_seq(r, sw.ev[i]) : INT64_MAX;
            for (; di < ndone && done[di].seq < seq; di++) {
                const struct gl_alloc *a = &r->allocs[done[di].idx];
                complete(x, a, facts ? facts[done[di].idx].done_ns : a->free_ns);
            }
            if (i < sw.n)
                apply(x, gl_sweep_alloc(r, sw.ev[i]), gl_sweep_is_free(sw.ev[i]), gl_sweep_ts(r, sw.ev[i]));
        }
        if (x->ds && gl_trace_ds_finish(x->ds, v))
            x->oom = 1;
        x->ds = NULL;
        rc = x->oom;
        gl_u64map_free(&x->site);
    }
    free(x);
    free(done);
    free(facts);
    gl_sweep_free(&sw);
    return rc ? -1 : 0;
}

/* Each range on its thread; each mark from the mark before (or the start). */
static int slices(struct gl_perfetto_view *v)
{
    struct gl_run *r = v->run;
    char err[256];
    if (gl_annots_load(r, &v->annots, err, sizeof err)) {
        v->annots = (struct gl_annots){NULL, 0};
        return 0; /* the report said so already; the trace goes on without them */
    }
    v->slices = malloc((v->annots.n + 1) * sizeof *v->slices);
    if (!v->slices)
        return -1;
    struct gl_u64map named; /* tids given a name */
    gl_u64map_init(&named);
    int64_t prev = r->first_ns;
    for (size_t i = 0; i < v->annots.n; i++) {
        const struct gl_annot *a = &v->annots.v[i];
        int mark = a->op == GL_OP_MARK, tid = mark ? GL_TRACE_MARKS_TID : a->tid;
        uint64_t one;
        int first = !gl_u64map_get(&named, (uint64_t)(uint32_t)tid, &one);
        if (first)
            gl_u64map_put(&named, (uint64_t)(uint32_t)tid, 1);
        int64_t start = mark ? prev : a->ts_ns;
        int64_t end = mark ? a->ts_ns : a->end_seq ? a->end_ns : r->last_ns;
        v->slices[v->nslices++] = (struct gl_trace_slice){a, start, end, tid, first};
        if (mark)
            prev = a->ts_ns;
    }
    gl_u64map_free(&named);
    return 0;
}

int gl_perfetto_view(struct gl_perfetto_view *v, struct gl_run *r, const struct gl_rules *rules, size_t buckets)
{
    memset(v, 0, sizeof *v);
    v->run = r;
    v->buckets = buckets;
    gl_budget_note(r, v->budget_note, sizeof v->budget_note);
    gl_stacks_init(&v->stacks, r);
    return counters(v, rules) || slices(v) ? -1 : 0;
}

void gl_perfetto_view_free(struct gl_perfetto_view *v)
{
    free(v->points);
    free(v->slices);
    gl_annots_free(&v->annots);
    gl_stacks_free(&v->stacks);
    memset(v, 0, sizeof *v);
}
