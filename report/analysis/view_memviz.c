/* view_memviz.c — the view of `export --format memory_viz`
 * (export_views.h): which segments hold blocks, each block's device, the
 * end state's segments with their blocks tiling them (gaps as inactive),
 * each device's trace (memviz_trace.c). */
#include <stdlib.h>
#include <string.h>

#include "memviz_build.h"
#include "model_vmm.h"

/* sub-allocations, sorted by address: (address, allocation index) */
struct sub_ref {
    uint64_t addr;
    size_t idx;
};

static int cmp_sub(const void *a, const void *b)
{
    const struct sub_ref *x = a, *y = b;
    return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* Is sub-allocation b inside segment s while both live? */
static int inside(const struct gl_alloc *s, const struct gl_alloc *b)
{
    return b->addr >= s->addr && b->addr < s->addr + s->size && b->seq > s->seq &&
           (!s->free_seq || b->seq < s->free_seq);
}

/* The first of sub[0..n) at an address >= addr. */
static size_t first_at(const struct sub_ref *sub, size_t n, uint64_t addr)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (sub[mid].addr < addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Which segments ever held a sub-allocation (a block), or are an
 * allocator's segment (its own row at an address inside); and the device
 * of each block that names none, from its segment. */
static int find_hosts(struct gl_memviz_state *m)
{
    struct gl_run *r = m->r;
    size_t nsub = 0;
    m->hosts = calloc(r->nallocs + 1, 1);
    m->sub_dev = calloc(r->nallocs + 1, 1);
    struct sub_ref *sub = malloc((r->nallocs + 1) * sizeof *sub);
    if (!m->hosts || !m->sub_dev || !sub) {
        free(sub);
        return -1;
    }
    for (size_t i = 0; i < r->nallocs; i++)
        if (gl_kind_layer(r->allocs[i].kind) == GL_LAYER_SUB)
            sub[nsub++] = (struct sub_ref){r->allocs[i].addr, i};
    qsort(sub, nsub, sizeof *sub, cmp_sub);
    for (size_t i = 0; nsub && i < r->nallocs; i++) {
        const struct gl_alloc *a = &r->allocs[i];
        if (!gl_mv_is_segment(a))
            continue;
        size_t lo = first_at(sub, nsub, a->addr);
        m->hosts[i] = lo < nsub && sub[lo].addr < a->addr + a->size;
        int dev = gl_mv_dev_of(m, a);
        for (size_t k = lo; dev >= 0 && dev < 127 && k < nsub && sub[k].addr < a->addr + a->size; k++)
            if (r->allocs[sub[k].idx].device < 0 && !m->sub_dev[sub[k].idx] && inside(a, &r->allocs[sub[k].idx]))
                m->sub_dev[sub[k].idx] = (int8_t)(dev + 1);
    }
    free(sub);
    return 0;
}

/* A block at the end: its bytes (else the allocation's). */
static uint64_t block_bytes(const struct gl_memviz_state *m, size_t i)
{
    return m->facts[i].bytes ? m->facts[i].bytes : m->r->allocs[i].size;
}

static int add_block(struct gl_memviz_view *v, uint64_t addr, uint64_t size, uint64_t requested, const char *state,
                     int64_t stack_id)
{
    if (gl_grow((void **)&v->blocks, &v->blocks_cap, v->nblocks, sizeof *v->blocks, 256))
        return -1;
    v->blocks[v->nblocks++] = (struct gl_memviz_block){addr, size, requested, state, stack_id};
    return 0;
}

/* The blocks subs[lo..hi) tiling [base, end), gaps as inactive. */
static int tile(struct gl_memviz_state *m, const struct sub_ref *subs, size_t lo, size_t hi, uint64_t base,
                uint64_t end)
{
    const struct gl_alloc *all = m->r->allocs;
    uint64_t at = base;
    for (size_t i = lo; i <= hi; i++) {
        uint64_t next = i < hi ? subs[i].addr : end;
        if (next > at && add_block(m->v, at, next - at, 0, "inactive", 0))
            return -1;
        if (i == hi)
            break;
        const struct gl_alloc *b = &all[subs[i].idx];
        uint64_t bytes = block_bytes(m, subs[i].idx);
        if (b->addr + bytes > end) /* a block past its segment's end (a damaged run): cut */
            bytes = end - b->addr;
        if (add_block(m->v, b->addr, bytes, gl_mv_asked(m, subs[i].idx),
                      b->free_seq ? "active_pending_free" : "active_allocated", b->stack_id))
            return -1;
        at = b->addr + bytes > at ? b->addr + bytes : at;
    }
    return 0;
}

/* A segment of the end state: live allocations seg[0..n) (one, or mapped
 * ranges that touch), its blocks. */
static int segment(struct gl_memviz_state *m, const size_t *seg, size_t n, const struct sub_ref *subs, size_t nsub)
{
    struct gl_memviz_view *v = m->v;
    const struct gl_alloc *all = m->r->allocs, *s = &all[seg[0]];
    uint64_t base = s->addr, end = all[seg[n - 1]].addr + all[seg[n - 1]].size;
    int hosts = 0;
    for (size_t k = 0; k < n; k++)
        hosts |= m->hosts[seg[k]];
    size_t lo = 0;
    while (lo < nsub && subs[lo].addr < base)
        lo++;
    size_t hi = lo;
    while (hi < nsub && subs[hi].addr < end)
        hi++;
    struct gl_memviz_segment g = {.device = gl_mv_dev_of(m, s), .expandable = gl_mv_is_mapping(s), .addr = base,
                                  .total = end - base, .stream = s->stream, .stack_id = s->stack_id,
                                  .blocks_at = v->nblocks};
    for (size_t i = lo; i < hi; i++) {
        g.active += block_bytes(m, subs[i].idx);
        if (!all[subs[i].idx].free_seq) {
            g.allocated += block_bytes(m, subs[i].idx);
            g.requested += gl_mv_asked(m, subs[i].idx);
        }
    }
    if (!hosts) {
        g.allocated = g.active = g.requested = end - base;
        for (size_t k = 0; k < n; k++)
            if (add_block(v, all[seg[k]].addr, all[seg[k]].size, all[seg[k]].size, "active_allocated",
                          all[seg[k]].stack_id))
                return -1;
    } else if (tile(m, subs, lo, hi, base, end)) {
        return -1;
    }
    g.nblocks = v->nblocks - g.blocks_at;
    if (gl_grow((void **)&v->segs, &v->segs_cap, v->nsegs, sizeof *v->segs, 64))
        return -1;
    v->segs[v->nsegs++] = g;
    return 0;
}

/* live segments, sorted by device and address */
struct seg_ref {
    int device;
    uint64_t addr;
    size_t idx;
};

static int cmp_seg(const void *a, const void *b)
{
    const struct seg_ref *x = a, *y = b;
    if (x->device != y->device)
        return x->device < y->device ? -1 : 1;
    return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* Is allocation i a block still in its segment at the end: held by its
 * tensor, or let go of but not yet reusable? */
static int live_block_at_end(const struct gl_memviz_state *m, size_t i)
{
    const struct gl_alloc *a = &m->r->allocs[i];
    return gl_mv_is_block(a) && (!a->free_seq || (!gl_mv_reusable_at_free(a) && !m->facts[i].done_seq));
}

/* The segments live at the end; mapped ranges that touch, on one device,
 * are one expandable segment. */
static int group_segments(struct gl_memviz_state *m, const struct seg_ref *segs, size_t nseg, size_t *group,
                          const struct sub_ref *sub, size_t nsub)
{
    const struct gl_alloc *all = m->r->allocs;
    for (size_t i = 0; i < nseg;) {
        size_t n = 0;
        group[n++] = segs[i].idx;
        const struct gl_alloc *last = &all[segs[i].idx];
        while (i + n < nseg && gl_mv_is_mapping(last) && segs[i + n].device == segs[i].device &&
               gl_mv_is_mapping(&all[segs[i + n].idx]) && segs[i + n].addr == last->addr + last->size) {
            last = &all[segs[i + n].idx];
            group[n] = segs[i + n].idx;
            n++;
        }
        if (segment(m, group, n, sub, nsub))
            return -1;
        i += n;
    }
    return 0;
}

static int segments(struct gl_memviz_state *m)
{
    struct gl_run *r = m->r;
    struct sub_ref *sub = malloc((r->nallocs + 1) * sizeof *sub);
    struct seg_ref *segs = malloc((r->nallocs + 1) * sizeof *segs);
    size_t *group = malloc((r->nallocs + 1) * sizeof *group);
    int rc = -1;
    if (sub && segs && group) {
        size_t nsub = 0, nseg = 0;
        for (size_t i = 0; i < r->nallocs; i++) {
            const struct gl_alloc *a = &r->allocs[i];
            if (live_block_at_end(m, i))
                sub[nsub++] = (struct sub_ref){a->addr, i};
            else if (gl_mv_is_segment(a) && !a->free_seq && gl_mv_dev_of(m, a) >= 0)
                segs[nseg++] = (struct seg_ref){gl_mv_dev_of(m, a), a->addr, i};
        }
        qsort(sub, nsub, sizeof *sub, cmp_sub);
        qsort(segs, nseg, sizeof *segs, cmp_seg);
        rc = group_segments(m, segs, nseg, group, sub, nsub);
    }
    free(sub);
    free(segs);
    free(group);
    return rc;
}

/* The devices with a trace (0 .. the highest seen), and the allocations on
 * none known. */
static int devices(struct gl_memviz_state *m)
{
    struct gl_run *r = m->r;
    int maxdev = -1;
    for (size_t i = 0; i < r->nallocs; i++) {
        if (!gl_mv_wanted(&r->allocs[i]))
            continue;
        int d = gl_mv_dev_of(m, &r->allocs[i]);
        if (d < 0)
            m->v->unknown++;
        else if (d > maxdev)
            maxdev = d;
    }
    for (size_t i = 0; i < r->nfails; i++)
        if (r->fails[i].op == GL_OP_OOM && r->fails[i].device > maxdev)
            maxdev = r->fails[i].device;
    m->v->ntraces = maxdev + 1;
    m->v->traces = calloc((size_t)maxdev + 2, sizeof *m->v->traces);
    return m->v->traces ? 0 : -1;
}

int gl_memviz_view(struct gl_memviz_view *v, struct gl_run *r, size_t max_entries)
{
    struct gl_memviz_state m = {.v = v, .r = r};
    memset(v, 0, sizeof *v);
    v->run = r;
    v->max_entries = max_entries;
    gl_stacks_init(&v->stacks, r);
    gl_u64map_init(&m.map_dev);
    int rc = gl_map_devices(r, &m.map_dev) || find_hosts(&m) || !(m.facts = gl_block_facts_load(r)) ||
                     devices(&m) || segments(&m) || gl_mv_traces(&m)
                 ? -1
                 : 0;
    free(m.facts);
    free(m.hosts);
    free(m.sub_dev);
    gl_u64map_free(&m.map_dev);
    return rc;
}

void gl_memviz_view_free(struct gl_memviz_view *v)
{
    for (int d = 0; v->traces && d < v->ntraces; d++)
        free(v->traces[d].v);
    free(v->traces);
    free(v->segs);
    free(v->blocks);
    gl_stacks_free(&v->stacks);
    memset(v, 0, sizeof *v);
}
