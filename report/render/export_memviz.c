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
 * segment_free). Sub-allocations inside it (kinds of layer SUB: PyTorch's
 * blocks, regions of a program's heaps; not the allocator's rows of its
 * segments nor a program's heaps, which are the CUDA memory already shown)
 * are *blocks*, as PyTorch records them: alloc
 * and free_requested when the tensor takes and lets go of it, free_completed
 * when it is reusable (later under record_stream), sizes the bytes asked for;
 * in the end state a block has its own bytes and what was asked, and a
 * block let go of but not yet reusable is active_pending_free. Memory with
 * no sub-allocation inside (and that no allocator claims as its segment) is
 * its own single block, so the viewer's allocation timeline shows every
 * allocation. OOMs are `oom` entries. Frames: {filename, line, name},
 * innermost first: a Python frame's file and line, a native frame's module
 * and 0. VMM memory appears where it is mapped (segment_map /
 * segment_unmap, is_expandable, as PyTorch's expandable segments; mapped
 * ranges that touch are one segment of the end state), on the device of
 * the handle (cuMemCreate). */
#include <stdlib.h>
#include <string.h>

#include "model_block_facts.h"
#include "escape.h"
#include "frames.h"
#include "model_vmm.h"
#include "out.h"
#include "pickle.h"
#include "render.h"
#include "strmap.h"

struct mv {
    struct gl_pickle p;
    struct gl_run *r;
    struct gl_stacks stacks;
    struct gl_strmap frame_keys;
    uint32_t *frame_memo;      /* by frame key id, memo + 1 */
    struct gl_u64map stack_memo; /* stack_id -> frames list memo + 1 */
    uint8_t *hosts;            /* by allocation: device memory with blocks inside */
    int8_t *sub_dev;           /* by allocation: a block's device from its segment, + 1 (0: its own) */
    struct gl_block_fact *facts; /* by allocation: a PyTorch block's bytes, when reusable */
    struct gl_pk_seq list;     /* the trace list entries go into */
    struct gl_u64map map_dev;  /* VMM map seq -> device + 1 */
};

/* A VMM mapping: memory placed by address (its handle, counted on the
 * device, is not: handles are not addresses). */
static int is_mapping(const struct gl_alloc *a)
{
    return gl_op_space(a->op) == GL_SPACE_MAP && gl_kind_layer(a->kind) != GL_LAYER_SUB;
}

/* A segment: device memory, or a mapping. */
static int is_segment(const struct gl_alloc *a)
{
    return (gl_kind_layer(a->kind) == GL_LAYER_DEVICE && gl_op_space(a->op) != GL_SPACE_PHYS) || is_mapping(a);
}

/* A sub-allocation shown as a block (a PyTorch block, a region of a
 * program's heap): of layer SUB, except the rows an allocator writes of its
 * own segments and a program of its heaps (the CUDA memory under them is
 * the segment). */
static int is_block(const struct gl_alloc *a)
{
    return gl_kind_layer(a->kind) == GL_LAYER_SUB && a->kind != GL_KIND_SEGMENT && a->kind != GL_KIND_HEAP;
}

/* A PyTorch block is reusable when its free_completed row says (it may
 * not be, at the end of the run); anything else when it is freed. */
static int reusable_at_free(const struct gl_alloc *a)
{
    return a->kind != GL_KIND_BLOCK;
}

static int wanted(const struct gl_alloc *a)
{
    return is_segment(a) || is_block(a);
}

/* The device of an allocation: a mapping's is its handle's; a block with
 * none of its own (a region of a program's heap) is on its segment's. */
static int dev_of(const struct mv *m, const struct gl_alloc *a)
{
    uint64_t d;
    if (is_mapping(a))
        return gl_u64map_get(&m->map_dev, (uint64_t)a->seq, &d) ? (int)d - 1 : -1;
    if (a->device < 0 && m->sub_dev && m->sub_dev[a - m->r->allocs])
        return m->sub_dev[a - m->r->allocs] - 1;
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
    gl_pk_int(&m->p, gl_ns_since(ts, m->r->first_ns) / 1000);
    gl_pk_seq_end(&m->p, &d);
}

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

/* Which segments ever held a sub-allocation (a block), or are an
 * allocator's segment (its own row at an address inside); and the device
 * of each block that names none, from its segment. */
static int find_hosts(struct mv *m)
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
        if (!is_segment(a))
            continue;
        size_t lo = 0, hi = nsub; /* first sub address >= a->addr */
        while (lo < hi) {
            size_t mid = (lo + hi) / 2;
            if (sub[mid].addr < a->addr)
                lo = mid + 1;
            else
                hi = mid;
        }
        m->hosts[i] = lo < nsub && sub[lo].addr < a->addr + a->size;
        int dev = dev_of(m, a);
        for (size_t k = lo; dev >= 0 && dev < 127 && k < nsub && sub[k].addr < a->addr + a->size; k++)
            if (r->allocs[sub[k].idx].device < 0 && !m->sub_dev[sub[k].idx] && inside(a, &r->allocs[sub[k].idx]))
                m->sub_dev[sub[k].idx] = (int8_t)(dev + 1);
    }
    free(sub);
    return 0;
}

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
static struct ev *events(const struct mv *m, size_t *n)
{
    const struct gl_run *r = m->r;
    size_t k = 0;
    struct ev *v = malloc((3 * r->nallocs + 1) * sizeof *v);
    if (!v)
        return NULL;
    for (size_t i = 0; i < r->nallocs; i++) {
        const struct gl_alloc *a = &r->allocs[i];
        if (!wanted(a))
            continue;
        v[k++] = (struct ev){a->seq, a->alloc_ns, (uint32_t)i, EV_ALLOC};
        if (a->free_seq)
            v[k++] = (struct ev){a->free_seq, a->free_ns, (uint32_t)i, EV_FREE};
        if (a->free_seq && m->facts[i].done_seq && !reusable_at_free(a))
            v[k++] = (struct ev){m->facts[i].done_seq, m->facts[i].done_ns, (uint32_t)i, EV_DONE};
    }
    qsort(v, k, sizeof *v, cmp_ev);
    *n = k;
    return v;
}

/* The bytes a block's trace entries carry: what was asked (PyTorch's
 * requested_size); an allocation's own size otherwise. */
static uint64_t asked(const struct mv *m, uint32_t i)
{
    return m->facts[i].requested ? m->facts[i].requested : m->r->allocs[i].size;
}

/* The trace entries of one step, in the order PyTorch's allocator reports
 * them, written (write 1) or only counted. */
struct emit {
    struct mv *m;
    const struct gl_alloc *a;
    int64_t ts;
    int write, n;
};

static void put(struct emit *e, const char *action, uint64_t size)
{
    e->n++;
    if (e->write)
        entry(e->m, action, e->a->addr, size, e->a->stream, e->a->stack_id, e->ts);
}

static int entries_of(struct mv *m, const struct ev *step, int write)
{
    const struct gl_alloc *a = &m->r->allocs[step->idx];
    int seg = is_segment(a), block = !seg || !m->hosts[step->idx];
    uint64_t size = asked(m, step->idx);
    struct emit e = {m, a, step->ts, write, 0};
    if (step->what == EV_ALLOC) {
        if (seg)
            put(&e, is_mapping(a) ? "segment_map" : "segment_alloc", a->size);
        if (block)
            put(&e, "alloc", size);
        return e.n;
    }
    if (block && step->what == EV_FREE)
        put(&e, "free_requested", size);
    if (block && (step->what == EV_DONE || reusable_at_free(a)))
        put(&e, "free_completed", size);
    if (seg && step->what == EV_FREE)
        put(&e, is_mapping(a) ? "segment_unmap" : "segment_free", a->size);
    return e.n;
}

static void trace(struct mv *m, const struct ev *ev, size_t nev, int device, size_t max_entries)
{
    struct gl_run *r = m->r;
    size_t total = 0, skip = 0, seen = 0, f = 0;
    for (size_t i = 0; i < nev; i++)
        if (dev_of(m, &r->allocs[ev[i].idx]) == device)
            total += (size_t)entries_of(m, &ev[i], 0);
    for (size_t i = 0; i < r->nfails; i++)
        total += r->fails[i].device == device && r->fails[i].op == GL_OP_OOM;
    if (max_entries && total > max_entries) /* keep the last ones, as PyTorch's ring does */
        skip = total - max_entries;
    gl_pk_list_begin(&m->p, &m->list);
    for (size_t i = 0; i <= nev; i++) {
        int64_t seq = i < nev ? ev[i].seq : INT64_MAX;
        for (; f < r->nfails && r->fails[f].seq < seq; f++) {
            const struct gl_fail *fl = &r->fails[f];
            if (fl->device != device || fl->op != GL_OP_OOM || seen++ < skip)
                continue;
            entry(m, "oom", 0, fl->size, 0, fl->stack_id, fl->ts_ns);
        }
        if (i == nev)
            break;
        if (dev_of(m, &r->allocs[ev[i].idx]) != device)
            continue;
        int n = entries_of(m, &ev[i], 0);
        if (seen + (size_t)n <= skip) {
            seen += (size_t)n;
            continue;
        }
        seen += (size_t)n; /* a step straddling the cut keeps all its entries */
        entries_of(m, &ev[i], 1);
    }
    gl_pk_seq_end(&m->p, &m->list);
}

static void block(struct mv *m, uint64_t addr, uint64_t size, uint64_t requested, const char *state, int64_t stack_id)
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
    gl_pk_key(&m->p, state);
    gl_pk_next(&m->p, &d);
    gl_pk_key(&m->p, "frames");
    frames(m, stack_id);
    gl_pk_seq_end(&m->p, &d);
}

/* A block at the end: its bytes, what was asked, whether the tensor still
 * holds it (else it waits to be reusable). */
static uint64_t block_bytes(const struct mv *m, size_t i)
{
    return m->facts[i].bytes ? m->facts[i].bytes : m->r->allocs[i].size;
}

/* A segment of the end state: live allocations seg[0..n) (one, or mapped
 * ranges that touch), its blocks tiling it (gaps as inactive). */
static void segment(struct mv *m, const size_t *seg, size_t n, const struct sub_ref *subs, size_t nsub)
{
    const struct gl_alloc *all = m->r->allocs, *s = &all[seg[0]];
    uint64_t base = s->addr, end = all[seg[n - 1]].addr + all[seg[n - 1]].size;
    int hosts = 0;
    for (size_t k = 0; k < n; k++)
        hosts |= m->hosts[seg[k]];
    uint64_t allocated = 0, active = 0, requested = 0;
    size_t lo = 0;
    while (lo < nsub && subs[lo].addr < base)
        lo++;
    size_t hi = lo;
    while (hi < nsub && subs[hi].addr < end)
        hi++;
    for (size_t i = lo; i < hi; i++) {
        const struct gl_alloc *b = &all[subs[i].idx];
        active += block_bytes(m, subs[i].idx);
        if (!b->free_seq) {
            allocated += block_bytes(m, subs[i].idx);
            requested += asked(m, (uint32_t)subs[i].idx);
        }
    }
    if (!hosts)
        allocated = active = requested = end - base;
    struct gl_pk_seq d, bl;
    gl_pk_dict_begin(&m->p, &d);
    static const char *const num_keys[] = {"address", "total_size", "allocated_size", "active_size",
                                           "requested_size", "stream"};
    uint64_t nums[] = {base, end - base, allocated, active, requested, s->stream};
    gl_pk_next(&m->p, &d);
    gl_pk_key(&m->p, "device");
    gl_pk_int(&m->p, dev_of(m, s));
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
        for (size_t k = 0; k < n; k++) {
            const struct gl_alloc *a = &all[seg[k]];
            gl_pk_next(&m->p, &bl);
            block(m, a->addr, a->size, a->size, "active_allocated", a->stack_id);
        }
    } else {
        uint64_t at = base;
        for (size_t i = lo; i <= hi; i++) {
            uint64_t next = i < hi ? subs[i].addr : end;
            if (next > at) {
                gl_pk_next(&m->p, &bl);
                block(m, at, next - at, 0, "inactive", 0);
            }
            if (i == hi)
                break;
            const struct gl_alloc *b = &all[subs[i].idx];
            uint64_t bytes = block_bytes(m, subs[i].idx);
            if (b->addr + bytes > end) /* a block past its segment's end (a damaged run): cut */
                bytes = end - b->addr;
            gl_pk_next(&m->p, &bl);
            block(m, b->addr, bytes, asked(m, (uint32_t)subs[i].idx),
                  b->free_seq ? "active_pending_free" : "active_allocated", b->stack_id);
            at = b->addr + bytes > at ? b->addr + bytes : at;
        }
    }
    gl_pk_seq_end(&m->p, &bl);
    gl_pk_seq_end(&m->p, &d);
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
static int live_block_at_end(const struct mv *m, size_t i)
{
    const struct gl_alloc *a = &m->r->allocs[i];
    return is_block(a) && (!a->free_seq || (!reusable_at_free(a) && !m->facts[i].done_seq));
}

static int segments(struct mv *m)
{
    struct gl_run *r = m->r;
    struct sub_ref *sub = malloc((r->nallocs + 1) * sizeof *sub);
    struct seg_ref *segs = malloc((r->nallocs + 1) * sizeof *segs);
    size_t *group = malloc((r->nallocs + 1) * sizeof *group);
    if (!sub || !segs || !group) {
        free(sub);
        free(segs);
        free(group);
        return -1;
    }
    size_t nsub = 0, nseg = 0;
    for (size_t i = 0; i < r->nallocs; i++) {
        const struct gl_alloc *a = &r->allocs[i];
        if (live_block_at_end(m, i))
            sub[nsub++] = (struct sub_ref){a->addr, i};
        else if (is_segment(a) && !a->free_seq && dev_of(m, a) >= 0)
            segs[nseg++] = (struct seg_ref){dev_of(m, a), a->addr, i};
    }
    qsort(sub, nsub, sizeof *sub, cmp_sub);
    qsort(segs, nseg, sizeof *segs, cmp_seg);
    struct gl_pk_seq l;
    gl_pk_list_begin(&m->p, &l);
    for (size_t i = 0; i < nseg;) {
        size_t n = 0;
        group[n++] = segs[i].idx;
        const struct gl_alloc *last = &r->allocs[segs[i].idx];
        /* mapped ranges that touch, on one device: one expandable segment */
        while (i + n < nseg && is_mapping(last) && segs[i + n].device == segs[i].device &&
               is_mapping(&r->allocs[segs[i + n].idx]) && segs[i + n].addr == last->addr + last->size) {
            last = &r->allocs[segs[i + n].idx];
            group[n] = segs[i + n].idx;
            n++;
        }
        gl_pk_next(&m->p, &l);
        segment(m, group, n, sub, nsub);
        i += n;
    }
    gl_pk_seq_end(&m->p, &l);
    free(sub);
    free(segs);
    free(group);
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
    size_t nev = 0;
    struct ev *ev = NULL;
    int rc = gl_map_devices(r, &m.map_dev) || find_hosts(&m) || !(m.facts = gl_block_facts_load(r)) ||
                     !(ev = events(&m, &nev))
                 ? -1
                 : 0;
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
            trace(&m, ev, nev, d, max_entries);
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
    free(ev);
    free(m.facts);
    free(m.hosts);
    free(m.sub_dev);
    free(m.frame_memo);
    gl_u64map_free(&m.stack_memo);
    gl_u64map_free(&m.map_dev);
    gl_strmap_free(&m.frame_keys);
    gl_stacks_free(&m.stacks);
    return rc;
}
