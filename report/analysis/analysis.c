/* analysis.c — see analysis.h. Everything here is O(allocations) or
 * O(allocations log allocations) so that runs of millions of events stay
 * fast. */
#include "analysis.h"
#include "growth_streamed.h"
#include "model_growth.h"

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

