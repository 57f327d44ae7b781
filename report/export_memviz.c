/* export_memviz.c — `export --format memory_viz`: the run as the pickle that
 * PyTorch's memory snapshot is (what `torch.cuda.memory._snapshot()`
 * returns and pytorch.org/memory_viz and `python -m torch.cuda._memory_viz`
 * read), so a PyTorch user opens a gpuledger run in the viewer they know:
 *
 *   {"segments": [{device, address, total_size, allocated_size, active_size,
 *                  requested_size, stream, segment_type, segment_pool_id,
 *                  is_expandable, frames, blocks: [{address, size,
 *                  requested_size, state, frames}]}],      live at the end
 *    "device_traces": [[{action, addr, size, stream, frames, time_us}]],
 *    "allocator_settings": {}}
 *
 * Memory that counts toward a device is a *segment* (segment_alloc /
 * segment_free). Sub-allocations inside it (kinds of layer SUB, e.g.
 * PyTorch's blocks) are *blocks* (alloc, free_requested, free_completed);
 * memory with no sub-allocation inside is its own single block, so the
 * viewer's allocation timeline shows every allocation. OOMs are `oom`
 * entries. Frames: {filename, line, name}, innermost first: a Python frame's
 * file and line, a native frame's module and 0. VMM memory appears where it
 * is mapped (segment_map / segment_unmap, is_expandable, as PyTorch's
 * expandable segments), on the device of the handle (cuMemCreate). */
#include <stdlib.h>
#include <string.h>

#include "escape.h"
#include "frames.h"
#include "model_vmm.h"
#include "out.h"
#include "pickle.h"
#include "render.h"
#include "strmap.h"
#include "sweep.h"

struct mv {
    struct gl_pickle p;
    struct gl_run *r;
    struct gl_stacks stacks;
    struct gl_strmap frame_keys;
    uint32_t *frame_memo;      /* by frame key id, memo + 1 */
    struct gl_u64map stack_memo; /* stack_id -> frames list memo + 1 */
    uint8_t *hosts;            /* by allocation: device memory with blocks inside */
    struct gl_pk_seq list;     /* the trace list entries go into */
    struct gl_u64map map_dev;  /* VMM map seq -> device + 1 */
};

/* A VMM mapping: memory placed by address (its handle, counted on the
 * device, is not: handles are not addresses). */
static int is_mapping(const struct gl_alloc *a)
{
    return gl_op_space(a->op) == GL_SPACE_MAP;
}

/* A segment: device memory, or a mapping. */
static int is_segment(const struct gl_alloc *a)
{
    return (gl_kind_layer(a->kind) == GL_LAYER_DEVICE && gl_op_space(a->op) != GL_SPACE_PHYS) || is_mapping(a);
}

static int wanted(const struct gl_alloc *a)
{
    return is_segment(a) || gl_kind_layer(a->kind) == GL_LAYER_SUB;
}

static int dev_of(const struct mv *m, const struct gl_alloc *a)
{
    uint64_t d;
    if (is_mapping(a))
        return gl_u64map_get(&m->map_dev, (uint64_t)a->seq, &d) ? (int)d - 1 : -1;
    return a->device;
}

/* A frame's name without its file and line (they have fields of their own). */
static const char *plain_name(const struct gl_frame *fr, char *buf, size_t sz)
{
    if (fr->symbol)
        return fr->symbol;
    const char *mod = fr->module ? strrchr(fr->module, '/') : NULL;
    snprintf(buf, sz, "%s+0x%llx", mod ? mod + 1 : fr->module ? fr->module : "?", (unsigned long long)fr->offset);
    return buf;
}

static void frame(struct mv *m, const struct gl_frame *fr)
{
    char key[3200], name[1024];
    gl_frame_key(fr, key, sizeof key);
    int added;
    int64_t id = gl_strmap_id(&m->frame_keys, key, &added);
    if (id >= 0 && !added && m->frame_memo[id]) {
        gl_pk_get(&m->p, m->frame_memo[id] - 1);
        return;
    }
    struct gl_pk_seq d;
    gl_pk_dict_begin(&m->p, &d);
    gl_pk_next(&m->p, &d);
    gl_pk_key(&m->p, "filename");
    gl_pk_str(&m->p, fr->python || fr->file ? fr->file : fr->module ? fr->module : "??");
    gl_pk_next(&m->p, &d);
    gl_pk_key(&m->p, "line");
    gl_pk_int(&m->p, fr->line > 0 ? fr->line : 0);
    gl_pk_next(&m->p, &d);
    gl_pk_key(&m->p, "name");
    gl_pk_str(&m->p, plain_name(fr, name, sizeof name));
    gl_pk_seq_end(&m->p, &d);
    uint32_t memo = gl_pk_memoize(&m->p);
    if (id >= 0) {
        uint32_t *nf = realloc(m->frame_memo, m->frame_keys.cap * sizeof *nf);
        if (nf) {
            if (added)
                nf[id] = 0;
            m->frame_memo = nf;
            m->frame_memo[id] = memo + 1;
        }
    }
}

/* The frames list of a stack, written once, later by its memo number. */
static void frames(struct mv *m, int64_t stack_id)
{
    uint64_t memo;
    if (gl_u64map_get(&m->stack_memo, (uint64_t)stack_id, &memo)) {
        gl_pk_get(&m->p, (uint32_t)memo);
        return;
    }
    const struct gl_stack *st = gl_stack_get(&m->stacks, stack_id);
    struct gl_pk_seq l;
    gl_pk_list_begin(&m->p, &l);
    for (int i = 0; i < st->n; i++) {
        gl_pk_next(&m->p, &l);
        frame(m, &st->f[i]);
    }
    gl_pk_seq_end(&m->p, &l);
    gl_u64map_put(&m->stack_memo, (uint64_t)stack_id, gl_pk_memoize(&m->p));
}

/* One trace entry, the next item of m->list. */
static void entry(struct mv *m, const char *action, uint64_t addr, uint64_t size, uint64_t stream, int64_t stack_id,
                  int64_t ts)
{
    struct gl_pk_seq d;
    int oom = !strcmp(action, "oom");
    gl_pk_next(&m->p, &m->list);
    gl_pk_dict_begin(&m->p, &d);
    gl_pk_next(&m->p, &d);
    gl_pk_key(&m->p, "action");
    gl_pk_key(&m->p, action);
    gl_pk_next(&m->p, &d);
    gl_pk_key(&m->p, oom ? "device_free" : "addr");
    gl_pk_uint(&m->p, addr);
    gl_pk_next(&m->p, &d);
    gl_pk_key(&m->p, "size");
    gl_pk_uint(&m->p, size);
    gl_pk_next(&m->p, &d);
    gl_pk_key(&m->p, "stream");
    gl_pk_uint(&m->p, stream);
    gl_pk_next(&m->p, &d);
    gl_pk_key(&m->p, "frames");
    frames(m, stack_id);
    gl_pk_next(&m->p, &d);
    gl_pk_key(&m->p, "time_us");
    gl_pk_int(&m->p, (ts - m->r->first_ns) / 1000);
    gl_pk_seq_end(&m->p, &d);
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Which device allocations ever held a sub-allocation (a block). */
static int find_hosts(struct mv *m)
{
    struct gl_run *r = m->r;
    size_t nsub = 0;
    m->hosts = calloc(r->nallocs + 1, 1);
    uint64_t *sub = malloc((r->nallocs + 1) * sizeof *sub);
    if (!m->hosts || !sub) {
        free(sub);
        return -1;
    }
    for (size_t i = 0; i < r->nallocs; i++)
        if (gl_kind_layer(r->allocs[i].kind) == GL_LAYER_SUB)
            sub[nsub++] = r->allocs[i].addr;
    qsort(sub, nsub, sizeof *sub, cmp_u64);
    for (size_t i = 0; nsub && i < r->nallocs; i++) {
        const struct gl_alloc *a = &r->allocs[i];
        if (!is_segment(a))
            continue;
        size_t lo = 0, hi = nsub; /* first sub address >= a->addr */
        while (lo < hi) {
            size_t mid = (lo + hi) / 2;
            if (sub[mid] < a->addr)
                lo = mid + 1;
            else
                hi = mid;
        }
        m->hosts[i] = lo < nsub && sub[lo] < a->addr + a->size;
    }
    free(sub);
    return 0;
}

/* The trace entries of one allocation or free, in the order PyTorch's
 * allocator reports them. */
static void entries_of(struct mv *m, uint32_t ev)
{
    const struct gl_alloc *a = gl_sweep_alloc(m->r, ev);
    int seg = is_segment(a), block = !seg || !m->hosts[ev >> 1];
    int64_t ts = gl_sweep_ts(m->r, ev);
    if (!gl_sweep_is_free(ev)) {
        if (seg)
            entry(m, is_mapping(a) ? "segment_map" : "segment_alloc", a->addr, a->size, a->stream, a->stack_id, ts);
        if (block)
            entry(m, "alloc", a->addr, a->size, a->stream, a->stack_id, ts);
        return;
    }
    if (block) {
        entry(m, "free_requested", a->addr, a->size, a->stream, a->stack_id, ts);
        entry(m, "free_completed", a->addr, a->size, a->stream, a->stack_id, ts);
    }
    if (seg)
        entry(m, is_mapping(a) ? "segment_unmap" : "segment_free", a->addr, a->size, a->stream, a->stack_id, ts);
}

static int entries_count(const struct mv *m, uint32_t ev)
{
    const struct gl_alloc *a = gl_sweep_alloc(m->r, ev);
    int seg = is_segment(a), block = !seg || !m->hosts[ev >> 1];
    return seg + block * (gl_sweep_is_free(ev) ? 2 : 1);
}

static void trace(struct mv *m, const struct gl_sweep *sw, int device, size_t max_entries)
{
    struct gl_run *r = m->r;
    size_t total = 0, skip = 0, seen = 0, f = 0;
    for (size_t i = 0; i < sw->n; i++)
        if (dev_of(m, gl_sweep_alloc(r, sw->ev[i])) == device)
            total += (size_t)entries_count(m, sw->ev[i]);
    for (size_t i = 0; i < r->nfails; i++)
        total += r->fails[i].device == device && r->fails[i].op == GL_OP_OOM;
    if (max_entries && total > max_entries) /* keep the last ones, as PyTorch's ring does */
        skip = total - max_entries;
    gl_pk_list_begin(&m->p, &m->list);
    for (size_t i = 0; i <= sw->n; i++) {
        int64_t seq = i < sw->n ? gl_sweep_seq(r, sw->ev[i]) : INT64_MAX;
        for (; f < r->nfails && r->fails[f].seq < seq; f++) {
            const struct gl_fail *fl = &r->fails[f];
            if (fl->device != device || fl->op != GL_OP_OOM || seen++ < skip)
                continue;
            entry(m, "oom", 0, fl->size, 0, fl->stack_id, fl->ts_ns);
        }
        if (i == sw->n)
            break;
        if (dev_of(m, gl_sweep_alloc(r, sw->ev[i])) != device)
            continue;
        int n = entries_count(m, sw->ev[i]);
        if (seen + (size_t)n <= skip) {
            seen += (size_t)n;
            continue;
        }
        seen += (size_t)n; /* an allocation straddling the cut keeps all its entries */
        entries_of(m, sw->ev[i]);
    }
    gl_pk_seq_end(&m->p, &m->list);
}

static void block(struct mv *m, uint64_t addr, uint64_t size, uint64_t requested, int active, int64_t stack_id)
{
    struct gl_pk_seq d;
    gl_pk_dict_begin(&m->p, &d);
    gl_pk_next(&m->p, &d);
    gl_pk_key(&m->p, "address");
    gl_pk_uint(&m->p, addr);
    gl_pk_next(&m->p, &d);
    gl_pk_key(&m->p, "size");
    gl_pk_uint(&m->p, size);
    gl_pk_next(&m->p, &d);
    gl_pk_key(&m->p, "requested_size");
    gl_pk_uint(&m->p, requested);
    gl_pk_next(&m->p, &d);
    gl_pk_key(&m->p, "state");
    gl_pk_key(&m->p, active ? "active_allocated" : "inactive");
    gl_pk_next(&m->p, &d);
    gl_pk_key(&m->p, "frames");
    if (active)
        frames(m, stack_id);
    else
        frames(m, 0);
    gl_pk_seq_end(&m->p, &d);
}

/* live sub-allocations, sorted by address: (address, allocation index) */
struct sub_ref {
    uint64_t addr;
    size_t idx;
};

static int cmp_sub(const void *a, const void *b)
{
    const struct sub_ref *x = a, *y = b;
    return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* A segment live at the end, its blocks tiling it (gaps as inactive). */
static void segment(struct mv *m, const struct gl_alloc *s, const struct sub_ref *subs, size_t nsub, int hosts)
{
    int device = dev_of(m, s);
    const struct gl_alloc *all = m->r->allocs;
    uint64_t active = 0;
    size_t lo = 0;
    while (lo < nsub && subs[lo].addr < s->addr)
        lo++;
    size_t hi = lo;
    while (hi < nsub && subs[hi].addr < s->addr + s->size)
        hi++;
    for (size_t i = lo; i < hi; i++)
        active += all[subs[i].idx].size;
    if (!hosts)
        active = s->size;
    struct gl_pk_seq d, bl;
    gl_pk_dict_begin(&m->p, &d);
    static const char *const num_keys[] = {"address", "total_size", "allocated_size", "active_size",
                                           "requested_size", "stream"};
    uint64_t nums[] = {s->addr, s->size, active, active, active, s->stream};
    gl_pk_next(&m->p, &d);
    gl_pk_key(&m->p, "device");
    gl_pk_int(&m->p, device);
    for (size_t i = 0; i < sizeof nums / sizeof nums[0]; i++) {
        gl_pk_next(&m->p, &d);
        gl_pk_key(&m->p, num_keys[i]);
        gl_pk_uint(&m->p, nums[i]);
    }
    gl_pk_next(&m->p, &d);
    gl_pk_key(&m->p, "segment_type");
    gl_pk_key(&m->p, "large");
    gl_pk_next(&m->p, &d);
    gl_pk_key(&m->p, "segment_pool_id");
    gl_pk_int(&m->p, 0);
    gl_pk_int(&m->p, 0);
    gl_pk_tuple2(&m->p);
    gl_pk_next(&m->p, &d);
    gl_pk_key(&m->p, "is_expandable");
    gl_pk_bool(&m->p, is_mapping(s));
    gl_pk_next(&m->p, &d);
    gl_pk_key(&m->p, "frames");
    frames(m, s->stack_id);
    gl_pk_next(&m->p, &d);
    gl_pk_key(&m->p, "blocks");
    gl_pk_list_begin(&m->p, &bl);
    if (!hosts) {
        gl_pk_next(&m->p, &bl);
        block(m, s->addr, s->size, s->size, 1, s->stack_id);
    } else {
        uint64_t at = s->addr, end = s->addr + s->size;
        for (size_t i = lo; i <= hi; i++) {
            uint64_t next = i < hi ? subs[i].addr : end;
            if (next > at) {
                gl_pk_next(&m->p, &bl);
                block(m, at, next - at, 0, 0, 0);
            }
            if (i == hi)
                break;
            const struct gl_alloc *b = &all[subs[i].idx];
            gl_pk_next(&m->p, &bl);
            block(m, b->addr, b->size, b->size, 1, b->stack_id);
            at = b->addr + b->size > at ? b->addr + b->size : at;
        }
    }
    gl_pk_seq_end(&m->p, &bl);
    gl_pk_seq_end(&m->p, &d);
}

static int segments(struct mv *m)
{
    struct gl_run *r = m->r;
    struct sub_ref *sub = malloc((r->nallocs + 1) * sizeof *sub);
    if (!sub)
        return -1;
    size_t nsub = 0;
    for (size_t i = 0; i < r->nallocs; i++)
        if (gl_kind_layer(r->allocs[i].kind) == GL_LAYER_SUB && !r->allocs[i].free_seq)
            sub[nsub++] = (struct sub_ref){r->allocs[i].addr, i};
    qsort(sub, nsub, sizeof *sub, cmp_sub);
    struct gl_pk_seq l;
    gl_pk_list_begin(&m->p, &l);
    for (size_t i = 0; i < r->nallocs; i++) {
        const struct gl_alloc *a = &r->allocs[i];
        if (!is_segment(a) || a->free_seq || dev_of(m, a) < 0)
            continue;
        gl_pk_next(&m->p, &l);
        segment(m, a, sub, nsub, m->hosts[i]);
    }
    gl_pk_seq_end(&m->p, &l);
    free(sub);
    return 0;
}

int gl_export_memviz(FILE *f, struct gl_run *r, size_t max_entries)
{
    struct mv m;
    memset(&m, 0, sizeof m);
    m.r = r;
    gl_stacks_init(&m.stacks, r);
    gl_strmap_init(&m.frame_keys);
    gl_u64map_init(&m.stack_memo);
    gl_u64map_init(&m.map_dev);
    struct gl_sweep sw = {NULL, 0};
    int rc = gl_map_devices(r, &m.map_dev) || find_hosts(&m) || gl_sweep_build(r, &sw, wanted) ? -1 : 0;
    int maxdev = -1;
    size_t unknown = 0;
    for (size_t i = 0; !rc && i < r->nallocs; i++) {
        if (!wanted(&r->allocs[i]))
            continue;
        int d = dev_of(&m, &r->allocs[i]);
        if (d < 0)
            unknown++;
        else if (d > maxdev)
            maxdev = d;
    }
    for (size_t i = 0; i < r->nfails; i++)
        if (r->fails[i].op == GL_OP_OOM && r->fails[i].device > maxdev)
            maxdev = r->fails[i].device;
    if (!rc) {
        struct gl_pk_seq top, traces, none;
        gl_pk_begin(&m.p, f);
        gl_pk_dict_begin(&m.p, &top);
        gl_pk_next(&m.p, &top);
        gl_pk_key(&m.p, "segments");
        rc = segments(&m);
        gl_pk_next(&m.p, &top);
        gl_pk_key(&m.p, "device_traces");
        gl_pk_list_begin(&m.p, &traces);
        for (int d = 0; d <= maxdev; d++) {
            gl_pk_next(&m.p, &traces);
            trace(&m, &sw, d, max_entries);
        }
        gl_pk_seq_end(&m.p, &traces);
        gl_pk_next(&m.p, &top);
        gl_pk_key(&m.p, "allocator_settings");
        gl_pk_dict_begin(&m.p, &none);
        gl_pk_seq_end(&m.p, &none);
        gl_pk_seq_end(&m.p, &top);
        gl_pk_end(&m.p);
    }
    if (unknown)
        fprintf(stderr, "gpuledger export: %zu allocation%s on an unknown device %s not in the snapshot\n", unknown,
                gl_s(unknown), unknown == 1 ? "is" : "are");
    gl_sweep_free(&sw);
    free(m.hosts);
    free(m.frame_memo);
    gl_u64map_free(&m.stack_memo);
    gl_u64map_free(&m.map_dev);
    gl_strmap_free(&m.frame_keys);
    gl_stacks_free(&m.stacks);
    return rc;
}
