/* analysis.c — see analysis.h. Everything here is O(allocations) or
 * O(allocations log allocations) so that runs of millions of events stay
 * fast. */
#include "analysis.h"
#include "growth_streamed.h"
#include "model_growth.h"

#include "freemap.h"
#include "sweep.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "u64map.h"

void gl_groups_free(struct gl_groups *g)
{
    for (size_t i = 0; i < g->n; i++)
        free(g->v[i].steps);
    free(g->v);
    memset(g, 0, sizeof *g);
}

static int cmp_group(const void *a, const void *b)
{
    const struct gl_group *x = a, *y = b;
    if (x->bytes != y->bytes)
        return x->bytes < y->bytes ? 1 : -1;
    return x->stack_id < y->stack_id ? -1 : x->stack_id > y->stack_id;
}

/* Group-building helper: add allocation a to its stack's group. */
struct grouper {
    struct gl_u64map idx;
    struct gl_groups *g;
    size_t cap;
};

static struct gl_group *group_add(struct grouper *gr, const struct gl_alloc *a)
{
    uint64_t pos;
    struct gl_groups *g = gr->g;
    uint64_t key = gl_alloc_group_key(a); /* per stack, category and private pool (model_growth.h) */
    if (!gl_u64map_get(&gr->idx, key, &pos)) {
        if (g->n == gr->cap) {
            gr->cap = gr->cap ? gr->cap * 2 : 64;
            struct gl_group *nv = realloc(g->v, gr->cap * sizeof *nv);
            if (!nv)
                return NULL;
            g->v = nv;
        }
        pos = g->n++;
        memset(&g->v[pos], 0, sizeof g->v[pos]);
        g->v[pos].stack_id = a->stack_id;
        g->v[pos].sample = a;
        g->v[pos].first_ns = a->alloc_ns;
        gl_u64map_put(&gr->idx, key, pos);
    }
    struct gl_group *grp = &g->v[pos];
    grp->bytes += a->size;
    grp->requested += a->requested;
    grp->count++;
    if (a->alloc_ns < grp->first_ns)
        grp->first_ns = a->alloc_ns;
    if (a->alloc_ns > grp->last_ns)
        grp->last_ns = a->alloc_ns;
    g->total_bytes += a->size;
    g->total_count++;
    return grp;
}

static void group_done(struct grouper *gr)
{
    gl_u64map_free(&gr->idx);
    if (gr->g->n)
        qsort(gr->g->v, gr->g->n, sizeof *gr->g->v, cmp_group);
}

static int dev_match(int want, int dev)
{
    return want == -2 || want == dev;
}

const char *gl_row_text(const char *what)
{
    if (what && !strcmp(what, GL_ROW_PENDING))
        return "[freed tensors waiting for their streams (record_stream)]";
    return "[free blocks cached in the caching allocator's segments]";
}

/* A row no stack made (the allocator's cache), if it holds anything. */
static void add_row(struct grouper *gr, const char *what, uint64_t bytes, uint64_t count)
{
    struct gl_groups *g = gr->g;
    if (!bytes)
        return;
    if (g->n == gr->cap) {
        gr->cap = gr->cap ? gr->cap * 2 : 64;
        struct gl_group *nv = realloc(g->v, gr->cap * sizeof *nv);
        if (!nv)
            return;
        g->v = nv;
    }
    struct gl_group *grp = &g->v[g->n++];
    memset(grp, 0, sizeof *grp);
    grp->bytes = grp->requested = bytes;
    grp->count = count;
    grp->category = "allocator_cache";
    grp->what = what;
    g->total_bytes += bytes;
    g->total_count += count;
}

/* Is a device of the selection one with PyTorch's caching allocator? */
static int any_blocks(const struct gl_run *r, int device)
{
    for (int k = 0; k < r->ndevs; k++)
        if (r->devs[k].blocks && dev_match(device, r->devs[k].device))
            return 1;
    return 0;
}

/* Counts what an allocation adds to a layered ledger (gl_groups.layered)
 * besides its group. */
static void layer_add(struct gl_groups *g, const struct gl_alloc *a)
{
    if (a->kind == GL_KIND_BLOCK) {
        g->tensors += a->size;
        g->tensors_requested += a->requested;
        g->tensor_count++;
    } else {
        g->outside += a->size;
    }
}

/* The allocator's segments beyond their tensors: freed tensors not yet
 * reusable, and free blocks (its cache), as rows. */
static void layer_rows(struct grouper *gr, uint64_t allocator)
{
    struct gl_groups *g = gr->g;
    g->layered = 1;
    g->cached = allocator > g->tensors + g->pending ? allocator - g->tensors - g->pending : 0;
    add_row(gr, GL_ROW_PENDING, g->pending, 0);
    add_row(gr, GL_ROW_CACHED, g->cached, g->segments);
}

/* A block freed (its tensor let go of it) but not yet reusable at seq. */
int gl_ledger_at(struct gl_run *r, int device, int64_t seq, struct gl_groups *out)
{
    memset(out, 0, sizeof *out);
    struct grouper gr = {.g = out};
    gl_u64map_init(&gr.idx);
    uint64_t allocator = 0;
    for (size_t i = 0; i < r->nallocs && r->allocs[i].seq <= seq; i++) {
        const struct gl_alloc *a = &r->allocs[i];
        if (!dev_match(device, a->device))
            continue;
        if (gl_is_item(a) && gl_live_at(a, seq)) {
            group_add(&gr, a);
            layer_add(out, a);
        } else if ((a->flags & GL_AF_ALLOCATOR) && gl_live_at(a, seq)) {
            allocator += a->size;
            out->segments++;
        } else if (gl_pending_at(a, seq)) {
            out->pending += a->size;
        }
    }
    if (any_blocks(r, device))
        layer_rows(&gr, allocator);
    group_done(&gr);
    return 0;
}

void gl_groups_keep_tensors(struct gl_groups *g)
{
    size_t k = 0;
    g->total_bytes = g->total_count = 0;
    g->tensors_only = 1;
    for (size_t i = 0; i < g->n; i++)
        if (g->v[i].sample && g->v[i].sample->kind == GL_KIND_BLOCK) {
            g->total_bytes += g->v[i].bytes;
            g->total_count += g->v[i].count;
            g->v[k++] = g->v[i];
        } else {
            free(g->v[i].steps);
        }
    g->n = k;
}

int gl_fail_absorbed(const struct gl_run *r, size_t k)
{
    const struct gl_fail *f = &r->fails[k];
    const struct gl_fail *next = NULL;
    if (f->api == GL_API_torch_allocator || !any_blocks(r, f->device))
        return 0;
    for (size_t i = k + 1; i < r->nfails && !next; i++)
        if (r->fails[i].device == f->device && r->fails[i].api == GL_API_torch_allocator)
            next = &r->fails[i];
    if (!next)
        return 0;
    /* no tensor handed out on the device in between: the same request */
    return next->blocks_before == f->blocks_before;
}

/* Leave out groups smaller than min. */
static void drop_small(struct gl_groups *g, uint64_t min)
{
    size_t k = 0;
    if (!min)
        return;
    for (size_t i = 0; i < g->n; i++)
        if (g->v[i].bytes >= min) {
            g->v[k++] = g->v[i];
        } else {
            g->small_bytes += g->v[i].bytes;
            g->small_count += g->v[i].count;
            free(g->v[i].steps);
        }
    g->n = k;
}

int gl_leaks(struct gl_run *r, int device, const struct gl_leak_opts *o, struct gl_groups *out)
{
    memset(out, 0, sizeof *out);
    struct grouper gr = {.g = out};
    gl_u64map_init(&gr.idx);
    int64_t end = r->has_end ? r->end_ns : r->last_ns;
    uint64_t allocator = 0;
    for (size_t i = 0; i < r->nallocs; i++) {
        const struct gl_alloc *a = &r->allocs[i];
        if (!dev_match(device, a->device))
            continue;
        if ((a->flags & GL_AF_ALLOCATOR) && !a->free_seq) { /* the allocator's memory at the end */
            allocator += a->size;
            out->segments++;
            continue;
        }
        if (gl_pending_at(a, INT64_MAX - 1)) {
            out->pending += a->size;
            continue;
        }
        if (!(gl_is_item(a) || (o->include_host && gl_kind_layer(a->kind) == GL_LAYER_HOST)))
            continue;
        int unfreed = a->free_seq == 0;
        int long_lived =
            o->lifetime_ns > 0 && gl_ns_since(a->free_seq ? a->free_ns : end, a->alloc_ns) >= o->lifetime_ns;
        if (unfreed || long_lived) {
            group_add(&gr, a);
            if (unfreed && gl_is_item(a))
                layer_add(out, a);
        }
    }
    if (any_blocks(r, device))
        layer_rows(&gr, allocator);
    group_done(&gr);
    drop_small(out, o->min_bytes);
    return 0;
}

/* Step boundaries (event seqs): where the run's steps end (gl_run.steps:
 * the optimizer's marks, else the program's); otherwise `nsteps` slices
 * holding equal numbers of allocations (a run's start-up, often long and
 * quiet, then does not eat the slices); each boundary is the event just
 * before the next slice's first allocation, so the frees of a slice belong
 * to it. */
static size_t step_bounds(struct gl_run *r, int nsteps, int64_t **out)
{
    if (r->nsteps >= 2) {
        int64_t *b = malloc(r->nsteps * sizeof *b);
        if (!b)
            return 0;
        memcpy(b, r->steps, r->nsteps * sizeof *b);
        *out = b;
        return r->nsteps;
    }
    size_t n = 0;
    for (size_t i = 0; i < r->nallocs; i++)
        n += gl_is_item(&r->allocs[i]);
    if (n < (size_t)nsteps)
        return 0;
    int64_t *b = calloc((size_t)nsteps, sizeof *b);
    if (!b)
        return 0;
    size_t k = 0, seen = 0;
    int64_t last = 0;
    for (size_t i = 0; i < r->nallocs; i++) {
        if (!gl_is_item(&r->allocs[i]))
            continue;
        if (k + 1 < (size_t)nsteps && seen == (k + 1) * n / (size_t)nsteps)
            b[k++] = r->allocs[i].seq - 1;
        seen++;
        last = r->allocs[i].seq;
    }
    /* the last slice ends at the last allocation: the frees of a process
     * tearing down (everything at once) are not a step */
    b[k++] = last;
    *out = b;
    return k;
}

static int judge_growth(struct gl_groups *out, size_t nb, int64_t *bounds, uint64_t min_bytes, struct gl_stacks *st);

int gl_growth(struct gl_run *r, int device, int nsteps, uint64_t min_bytes, struct gl_stacks *st,
              struct gl_groups *out)
{
    memset(out, 0, sizeof *out);
    if (nsteps < 2)
        nsteps = 2;
    int64_t *bounds = NULL;
    size_t nb;
    if (r->growth) { /* gathered by a live-only load (model_growth.h): the same groups */
        if (gl_growth_groups_streamed(r, device, nsteps, &bounds, &nb, out) || !nb) {
            gl_groups_free(out);
            free(bounds);
            return -1;
        }
        return judge_growth(out, nb, bounds, min_bytes, st);
    }
    if (!(nb = step_bounds(r, nsteps, &bounds)))
        return -1;
    struct grouper gr = {.g = out};
    gl_u64map_init(&gr.idx);
    /* The bounds (rising: marks in seq order, or slices) an allocation is
     * live at (gl_live_at) are the run of them from the first at or after
     * its seq to the last before its free: steps[] holds first each run's
     * change (+size where it starts, -size after it ends), summed once at
     * the end, so a run of thousands of steps costs two binary searches an
     * allocation, not a test per step. */
    /* group every allocation by stack; steps[] = live bytes at each bound */
    for (size_t i = 0; i < r->nallocs; i++) {
        const struct gl_alloc *a = &r->allocs[i];
        if (!gl_is_item(a) || !dev_match(device, a->device))
            continue;
        struct gl_group *g = group_add(&gr, a);
        if (g) /* (out of memory: the group goes on without this one's bytes) */
            (void)gl_steps_add_life(&g->steps, bounds, nb, a->seq, a->free_seq, a->size);
    }
    gl_u64map_free(&gr.idx);
    return judge_growth(out, nb, bounds, min_bytes, st);
}

/* The groups' changes at each step end summed into live bytes, merged by
 * chain, and kept where they grow (in bytes of growth, biggest first);
 * bounds freed. nb. */
static int judge_growth(struct gl_groups *out, size_t nb, int64_t *bounds, uint64_t min_bytes, struct gl_stacks *st)
{
    for (size_t i = 0; i < out->n; i++)
        for (size_t s = 1; out->v[i].steps && s < nb; s++)
            out->v[i].steps[s] += out->v[i].steps[s - 1];
    out->nsteps = nb;
    if (st) /* one chain made at one line, whatever its native frames */
        gl_groups_merge_chains(out, st);
    size_t k = 0;
    for (size_t i = 0; i < out->n; i++) {
        struct gl_group *g = &out->v[i];
        size_t rises = 0;
        int monotonic = g->steps != NULL;
        for (size_t s = 1; monotonic && s < nb; s++) {
            if (g->steps[s] < g->steps[s - 1])
                monotonic = 0;
            else if (g->steps[s] > g->steps[s - 1])
                rises++;
        }
        uint64_t growth = monotonic ? g->steps[nb - 1] - g->steps[0] : 0;
        if (monotonic && rises * 2 >= nb - 1 && growth > 0 && growth >= min_bytes) {
            g->bytes = growth; /* sort and report by growth */
            out->v[k++] = *g;
        } else {
            free(g->steps);
        }
    }
    out->n = k;
    if (out->n)
        qsort(out->v, out->n, sizeof *out->v, cmp_group);
    free(bounds);
    return (int)nb;
}

/* The text that merges a group with others: its chain of frames, or what
 * it is when no stack made it, or its category by identity or lifetime. */
static void chain_key(const struct gl_group *gi, struct gl_stacks *s, char *sig, size_t sz)
{
    size_t at = 0;
    if (gi->what) /* a row no stack made stays its own */
        at = (size_t)snprintf(sig, sz, "\x1f%s\x1f", gi->what);
    else if (gi->sample && gi->sample->cat) /* one chain per category by identity or lifetime (and pool) */
        at = (size_t)snprintf(sig, sz, "\x1f%d:%llx\x1f", gi->sample->cat,
                              gi->sample->cat == GL_CAT_PRIVATE_POOL ? (unsigned long long)gi->sample->pool : 0ULL);
    gl_stack_signature(gl_stack_get(s, gi->stack_id), sig + at, sz - at);
}

/* Groups whose chains read the same merged into the first. The keys are
 * not kept (on 384 k stacks they were 170 MB): the hash finds a candidate,
 * and the candidate's key is made again to compare. */
void gl_groups_merge_chains(struct gl_groups *g, struct gl_stacks *s)
{
    struct gl_u64map idx;
    gl_u64map_init(&idx);
    size_t k = 0;
    for (size_t i = 0; i < g->n; i++) {
        char sig[4096], other[4096];
        chain_key(&g->v[i], s, sig, sizeof sig);
        uint64_t h = 1469598103934665603ULL, pos;
        for (const char *p = sig; *p; p++)
            h = (h ^ (unsigned char)*p) * 1099511628211ULL;
        int same = 0;
        while (gl_u64map_get(&idx, h, &pos)) {
            chain_key(&g->v[pos], s, other, sizeof other);
            if ((same = !strcmp(other, sig)))
                break;
            h++;
        }
        if (same) {
            struct gl_group *t = &g->v[pos], *from = &g->v[i];
            t->bytes += from->bytes;
            t->requested += from->requested;
            t->count += from->count;
            t->first_ns = from->first_ns < t->first_ns ? from->first_ns : t->first_ns;
            t->last_ns = from->last_ns > t->last_ns ? from->last_ns : t->last_ns;
            if (!t->steps) { /* (the growth analysis gives a series only to what was live at a step's end) */
                t->steps = from->steps;
                from->steps = NULL;
            }
            for (size_t st = 0; t->steps && from->steps && st < g->nsteps; st++)
                t->steps[st] += from->steps[st];
            free(from->steps);
            continue;
        }
        g->v[k] = g->v[i];
        gl_u64map_put(&idx, h, k);
        k++;
    }
    g->n = k;
    gl_u64map_free(&idx);
    if (g->n)
        qsort(g->v, g->n, sizeof *g->v, cmp_group);
}

void gl_groups_categorize(struct gl_groups *g, const struct gl_rules *rules, struct gl_stacks *s)
{
    for (size_t i = 0; i < g->n; i++)
        if (g->v[i].sample)
            g->v[i].category = gl_categorize(rules, s, g->v[i].sample);
}

int gl_group_is_tagged(const struct gl_group *g)
{
    return g->sample && (g->sample->flags & GL_AF_TAGGED);
}

int gl_group_is_held(const struct gl_group *g)
{
    return gl_is_cached_category(g->category) || gl_group_is_tagged(g);
}

size_t gl_category_totals(const struct gl_groups *g, struct gl_cat_total *out, size_t max)
{
    size_t n = 0;
    for (size_t i = 0; i < g->n; i++) {
        const char *c = g->v[i].category ? g->v[i].category : "other";
        size_t k;
        for (k = 0; k < n; k++)
            if (!strcmp(out[k].category, c))
                break;
        if (k == n) {
            if (n == max)
                continue;
            out[n++] = (struct gl_cat_total){c, 0, 0, 0};
        }
        out[k].bytes += g->v[i].bytes;
        out[k].count += g->v[i].count;
        out[k].requested += g->v[i].requested;
    }
    for (size_t i = 1; i < n; i++) /* insertion sort, biggest first */
        for (size_t j = i; j > 0 && out[j].bytes > out[j - 1].bytes; j--) {
            struct gl_cat_total t = out[j];
            out[j] = out[j - 1];
            out[j - 1] = t;
        }
    return n;
}

/* ---- holes --------------------------------------------------------------- */

struct ival {
    uint64_t lo, hi;
};

static int cmp_ival(const void *a, const void *b)
{
    const struct ival *x = a, *y = b;
    return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* Merge sorted intervals in place; returns the new count. */
static size_t merge(struct ival *v, size_t n)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (k && v[i].lo <= v[k - 1].hi) {
            if (v[i].hi > v[k - 1].hi)
                v[k - 1].hi = v[i].hi;
        } else {
            v[k++] = v[i];
        }
    }
    return k;
}

/* Holes of `live` (sorted, merged) inside `regions` (sorted, merged). */
static void measure(const struct ival *regions, size_t nr, const struct ival *live, size_t nl,
                    struct gl_hole_stat *st)
{
    size_t j = 0;
    st->reserved = st->live = st->free = st->largest_free = st->holes = 0;
    for (size_t i = 0; i < nr; i++) {
        uint64_t cur = regions[i].lo;
        st->reserved += regions[i].hi - regions[i].lo;
        while (j < nl && live[j].hi <= regions[i].lo)
            j++;
        for (; j < nl && live[j].lo < regions[i].hi; j++) {
            uint64_t lo = live[j].lo < regions[i].lo ? regions[i].lo : live[j].lo;
            uint64_t hi = live[j].hi > regions[i].hi ? regions[i].hi : live[j].hi;
            if (lo > cur) {
                uint64_t gap = lo - cur;
                st->free += gap;
                st->holes++;
                if (gap > st->largest_free)
                    st->largest_free = gap;
            }
            st->live += hi - lo;
            if (hi > cur)
                cur = hi;
        }
        if (regions[i].hi > cur) {
            uint64_t gap = regions[i].hi - cur;
            st->free += gap;
            st->holes++;
            if (gap > st->largest_free)
                st->largest_free = gap;
        }
    }
    struct gl_free_stats fs = {.free = st->free, .largest_free = st->largest_free};
    gl_free_ratios(&fs);
    st->external_fragmentation = fs.external_fragmentation;
    st->largest_free_ratio = fs.largest_free_ratio;
    st->unused_bytes = -1; /* a pool hands out what is asked, as far as it says */
    st->internal_fragmentation = 0.0;
}

#define HOLE_SAMPLES GL_HOLE_SAMPLES

/* One pool (or one reservation): members are the allocations inside it
 * (in seq order); regions are given (VMM) or derived (pools). One sweep
 * over the members' allocations and frees, with the live set in a hash map
 * (address -> end), measured at HOLE_SAMPLES + 1 points. */
static int analyse_pool(const struct gl_run *r, const struct gl_alloc **m, size_t nm, struct ival *regions,
                        size_t nr, struct gl_pool_holes *ph, int64_t end_seq)
{
    struct gl_sweep sw;
    size_t live_cap = 64;
    struct ival *live = malloc(live_cap * sizeof *live);
    ph->series = calloc(HOLE_SAMPLES + 1, sizeof *ph->series);
    if (!live || !ph->series || gl_sweep_members(r, m, nm, end_seq, &sw)) {
        free(live);
        return -1;
    }
    struct gl_u64map set;
    gl_u64map_init(&set);
    int64_t first = m[0]->seq, ts = m[0]->alloc_ns;
    size_t e = 0;
    for (size_t s = 0; s <= HOLE_SAMPLES; s++) {
        int64_t span = end_seq - first; /* < 2^62 (model.c): divide before multiplying */
        int64_t seq = s == HOLE_SAMPLES ? end_seq
                                        : first + span / HOLE_SAMPLES * (int64_t)s +
                                              span % HOLE_SAMPLES * (int64_t)s / HOLE_SAMPLES;
        for (; e < sw.n && gl_sweep_seq(r, sw.ev[e]) <= seq; e++) {
            const struct gl_alloc *a = gl_sweep_alloc(r, sw.ev[e]);
            if (!gl_sweep_is_free(sw.ev[e]) && a->addr + a->size) /* (an empty one at 0 ends one there) */
                gl_u64map_put(&set, a->addr, a->addr + a->size);
            else
                gl_u64map_del(&set, a->addr);
            ts = gl_sweep_ts(r, sw.ev[e]);
        }
        if (set.count + 2 > live_cap) {
            size_t nc = (set.count + 2) * 2;
            struct ival *nl = realloc(live, nc * sizeof *live);
            if (!nl)
                break;
            live = nl;
            live_cap = nc;
        }
        size_t nl = 0;
        for (size_t k = 0; k < set.cap; k++)
            if (set.keys[k] != 0 && set.keys[k] != UINT64_MAX)
                live[nl++] = (struct ival){set.keys[k], set.vals[k]};
        if (set.has_zero)
            live[nl++] = (struct ival){0, set.zero_val};
        qsort(live, nl, sizeof *live, cmp_ival);
        nl = merge(live, nl);
        struct gl_hole_stat st;
        measure(regions, nr, live, nl, &st);
        st.seq = seq;
        st.ts_ns = ts;
        ph->series[ph->nseries++] = st;
        /* worst = most free bytes outside the largest free block: space that
         * is free but, being scattered, cannot serve a large request */
        struct gl_free_stats a = {.free = st.free, .largest_free = st.largest_free, .holes = st.holes};
        struct gl_free_stats b = {.free = ph->worst.free, .largest_free = ph->worst.largest_free,
                                  .holes = ph->worst.holes};
        if (ph->nseries == 1 || gl_free_worse(&a, &b)) {
            ph->worst = st;
            ph->worst_index = ph->nseries - 1;
        }
    }
    if (ph->nseries)
        ph->end = ph->series[ph->nseries - 1];
    gl_u64map_free(&set);
    gl_sweep_free(&sw);
    free(live);
    return ph->nseries == HOLE_SAMPLES + 1 ? 0 : -1;
}

static int cmp_alloc_ptr_pool(const void *a, const void *b)
{
    const struct gl_alloc *x = *(const struct gl_alloc *const *)a, *y = *(const struct gl_alloc *const *)b;
    if (x->pool != y->pool)
        return x->pool < y->pool ? -1 : 1;
    if (x->device != y->device)
        return x->device - y->device;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* A new zeroed entry at the end of *out (grown as needed), or NULL. */
static struct gl_pool_holes *next_entry(struct gl_pool_holes **out, size_t *n, size_t *cap)
{
    if (*n == *cap) {
        size_t nc = *cap ? *cap * 2 : 8;
        struct gl_pool_holes *nv = realloc(*out, nc * sizeof *nv);
        if (!nv)
            return NULL;
        *out = nv;
        *cap = nc;
    }
    struct gl_pool_holes *ph = &(*out)[(*n)++];
    memset(ph, 0, sizeof *ph);
    return ph;
}

int gl_holes(struct gl_run *r, const uint64_t *only, struct gl_pool_holes **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    size_t cap = 0;
    int64_t end_seq = 0;
    for (size_t i = 0; i < r->nallocs; i++) {
        if (r->allocs[i].seq > end_seq)
            end_seq = r->allocs[i].seq;
        if (r->allocs[i].free_seq > end_seq)
            end_seq = r->allocs[i].free_seq;
    }
    /* 1. stream-ordered pools, grouped by (pool, device) */
    const struct gl_alloc **m = malloc((r->nallocs + 1) * sizeof(const struct gl_alloc *));
    struct ival *reg = malloc((r->nallocs + 1) * sizeof *reg);
    if (!m || !reg) {
        free(m);
        free(reg);
        return -1;
    }
    /* group by (pool, device) keeping seq order: one pass per distinct key
     * (there are few), a sort only if there are many */
    size_t nm = 0;
    struct {
        uint64_t pool;
        int device;
    } keys[64];
    size_t nkeys = 0;
    int many = 0;
    for (size_t i = 0; i < r->nallocs && !many; i++) {
        const struct gl_alloc *a = &r->allocs[i];
        if (a->kind != GL_KIND_ASYNC || (only && a->pool != *only))
            continue;
        size_t k = 0;
        while (k < nkeys && !(keys[k].pool == a->pool && keys[k].device == a->device))
            k++;
        if (k == nkeys && nkeys == 64) {
            many = 1;
        } else if (k == nkeys) {
            keys[nkeys].pool = a->pool;
            keys[nkeys].device = a->device;
            nkeys++;
        }
    }
    if (!many) {
        for (size_t k = 0; k < nkeys; k++)
            for (size_t i = 0; i < r->nallocs; i++) {
                const struct gl_alloc *a = &r->allocs[i];
                if (a->kind == GL_KIND_ASYNC && a->pool == keys[k].pool && a->device == keys[k].device &&
                    (!only || a->pool == *only))
                    m[nm++] = a;
            }
    } else {
        for (size_t i = 0; i < r->nallocs; i++)
            if (r->allocs[i].kind == GL_KIND_ASYNC && (!only || r->allocs[i].pool == *only))
                m[nm++] = &r->allocs[i];
        qsort(m, nm, sizeof(const struct gl_alloc *), cmp_alloc_ptr_pool);
    }
    for (size_t i = 0; i < nm;) {
        size_t j = i;
        while (j < nm && m[j]->pool == m[i]->pool && m[j]->device == m[i]->device)
            j++;
        /* regions: the distinct intervals (pools reuse addresses a lot),
         * sorted and merged */
        struct gl_u64map uniq;
        gl_u64map_init(&uniq);
        for (size_t k = i; k < j; k++) {
            uint64_t end = m[k]->addr + m[k]->size, prev;
            if (!gl_u64map_get(&uniq, m[k]->addr, &prev) || end > prev)
                gl_u64map_put(&uniq, m[k]->addr, end);
        }
        size_t nr = 0;
        for (size_t k = 0; k < uniq.cap; k++)
            if (uniq.keys[k] != 0 && uniq.keys[k] != UINT64_MAX)
                reg[nr++] = (struct ival){uniq.keys[k], uniq.vals[k]};
        if (uniq.has_zero)
            reg[nr++] = (struct ival){0, uniq.zero_val};
        gl_u64map_free(&uniq);
        qsort(reg, nr, sizeof *reg, cmp_ival);
        nr = merge(reg, nr);
        struct gl_pool_holes *ph = next_entry(out, n, &cap);
        if (!ph)
            break;
        ph->what = "async pool";
        ph->pool = m[i]->pool;
        ph->device = m[i]->device;
        ph->regions = nr;
        ph->sampled_reserved = gl_run_pool_reserved(r, m[i]->pool, m[i]->device);
        analyse_pool(r, m + i, j - i, reg, nr, ph, end_seq);
        i = j;
    }
    /* 2. reserved VA ranges: the mappings inside each reservation */
    for (size_t i = 0; i < r->nallocs; i++) {
        const struct gl_alloc *va = &r->allocs[i];
        if (va->kind != GL_KIND_VA || (only && va->addr != *only))
            continue;
        nm = 0;
        for (size_t k = 0; k < r->nallocs; k++) {
            const struct gl_alloc *mp = &r->allocs[k];
            if (mp->kind == GL_KIND_MAPPING && mp->addr >= va->addr && mp->addr < va->addr + va->size)
                m[nm++] = mp;
        }
        if (!nm)
            continue;
        struct ival region = {va->addr, va->addr + va->size};
        struct gl_pool_holes *ph = next_entry(out, n, &cap);
        if (!ph)
            break;
        ph->what = "vmm reservation";
        ph->pool = va->addr;
        ph->device = m[0]->device >= 0 ? m[0]->device : 0;
        ph->regions = 1;
        analyse_pool(r, m, nm, &region, 1, ph, va->free_seq ? va->free_seq - 1 : end_seq);
    }
    free(m);
    free(reg);
    /* 3. PyTorch's caching allocator, per device: its own samples */
    for (int k = 0; !only && k < r->ndevs; k++) {
        struct gl_pool_holes *ph = r->devs[k].blocks ? next_entry(out, n, &cap) : NULL;
        if (ph && gl_holes_allocator(r, r->devs[k].device, ph) != 1)
            (*n)--; /* no samples (or out of memory): no entry */
    }
    return 0;
}

const char *gl_pool_label(const struct gl_pool_holes *p, char *buf, size_t sz)
{
    if (!strcmp(p->what, GL_HOLES_ALLOCATOR))
        snprintf(buf, sz, "PyTorch's %s", p->what);
    else if (!p->pool)
        snprintf(buf, sz, "default %s", p->what); /* cudaMallocAsync without a pool argument */
    else
        snprintf(buf, sz, "%s 0x%llx", p->what, (unsigned long long)p->pool);
    return buf;
}

void gl_holes_free(struct gl_pool_holes *h, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(h[i].series);
    free(h);
}
