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
 * the handle (cuMemCreate). What it shows is computed before (view_memviz.c,
 * memviz_trace.c); this file writes it as the pickle. */
#include <stdlib.h>
#include <string.h>

#include "frames.h"
#include "out.h"
#include "pickle.h"
#include "render.h"
#include "strmap.h"

struct mv {
    struct gl_pickle p;
    const struct gl_memviz_view *v;
    struct gl_stacks *stacks;
    struct gl_strmap frame_keys;
    uint32_t *frame_memo;        /* by frame key id, memo + 1 */
    struct gl_u64map stack_memo; /* stack_id -> frames list memo + 1 */
};

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
    const struct gl_stack *st = gl_stack_get(m->stacks, stack_id);
    struct gl_pk_seq l;
    gl_pk_list_begin(&m->p, &l);
    for (int i = 0; i < st->n; i++) {
        gl_pk_next(&m->p, &l);
        frame(m, gl_stack_frame(st, i));
    }
    gl_pk_seq_end(&m->p, &l);
    gl_u64map_put(&m->stack_memo, (uint64_t)stack_id, gl_pk_memoize(&m->p));
}

/* One trace entry, the next item of list. */
static void entry(struct mv *m, struct gl_pk_seq *list, const struct gl_memviz_entry *e)
{
    struct gl_pk_seq d;
    gl_pk_next(&m->p, list);
    gl_pk_dict_begin(&m->p, &d);
    gl_pk_next(&m->p, &d);
    gl_pk_key(&m->p, "action");
    gl_pk_key(&m->p, e->action);
    gl_pk_next(&m->p, &d);
    gl_pk_key(&m->p, !strcmp(e->action, "oom") ? "device_free" : "addr");
    gl_pk_uint(&m->p, e->addr);
    gl_pk_next(&m->p, &d);
    gl_pk_key(&m->p, "size");
    gl_pk_uint(&m->p, e->size);
    gl_pk_next(&m->p, &d);
    gl_pk_key(&m->p, "stream");
    gl_pk_uint(&m->p, e->stream);
    gl_pk_next(&m->p, &d);
    gl_pk_key(&m->p, "frames");
    frames(m, e->stack_id);
    gl_pk_next(&m->p, &d);
    gl_pk_key(&m->p, "time_us");
    gl_pk_int(&m->p, gl_ns_since(e->ts_ns, m->v->run->first_ns) / 1000);
    gl_pk_seq_end(&m->p, &d);
}

static void trace(struct mv *m, int device)
{
    const struct gl_memviz_trace *t = &m->v->traces[device];
    struct gl_pk_seq list;
    if (t->cut)
        fprintf(stderr, "gpuledger export: memory_viz: device %d: the last %zu of %zu trace entries kept "
                "(--max-entries %zu; --max-entries all keeps every one)\n", device, m->v->max_entries, t->total,
                m->v->max_entries);
    gl_pk_list_begin(&m->p, &list);
    for (size_t i = 0; i < t->n; i++)
        entry(m, &list, &t->v[i]);
    gl_pk_seq_end(&m->p, &list);
}

static void block(struct mv *m, const struct gl_memviz_block *b)
{
    struct gl_pk_seq d;
    gl_pk_dict_begin(&m->p, &d);
    gl_pk_next(&m->p, &d);
    gl_pk_key(&m->p, "address");
    gl_pk_uint(&m->p, b->addr);
    gl_pk_next(&m->p, &d);
    gl_pk_key(&m->p, "size");
    gl_pk_uint(&m->p, b->size);
    gl_pk_next(&m->p, &d);
    gl_pk_key(&m->p, "requested_size");
    gl_pk_uint(&m->p, b->requested);
    gl_pk_next(&m->p, &d);
    gl_pk_key(&m->p, "state");
    gl_pk_key(&m->p, b->state);
    gl_pk_next(&m->p, &d);
    gl_pk_key(&m->p, "frames");
    frames(m, b->stack_id);
    gl_pk_seq_end(&m->p, &d);
}

static void segment(struct mv *m, const struct gl_memviz_segment *s)
{
    struct gl_pk_seq d, bl;
    static const char *const num_keys[] = {"address", "total_size", "allocated_size", "active_size",
                                           "requested_size", "stream"};
    const uint64_t nums[] = {s->addr, s->total, s->allocated, s->active, s->requested, s->stream};
    gl_pk_dict_begin(&m->p, &d);
    gl_pk_next(&m->p, &d);
    gl_pk_key(&m->p, "device");
    gl_pk_int(&m->p, s->device);
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
    gl_pk_bool(&m->p, s->expandable);
    gl_pk_next(&m->p, &d);
    gl_pk_key(&m->p, "frames");
    frames(m, s->stack_id);
    gl_pk_next(&m->p, &d);
    gl_pk_key(&m->p, "blocks");
    gl_pk_list_begin(&m->p, &bl);
    for (size_t i = 0; i < s->nblocks; i++) {
        gl_pk_next(&m->p, &bl);
        block(m, &m->v->blocks[s->blocks_at + i]);
    }
    gl_pk_seq_end(&m->p, &bl);
    gl_pk_seq_end(&m->p, &d);
}

void gl_export_memviz(FILE *f, struct gl_memviz_view *v)
{
    struct mv m;
    struct gl_pk_seq top, segs, traces, none;
    memset(&m, 0, sizeof m);
    m.v = v;
    m.stacks = &v->stacks;
    gl_strmap_init(&m.frame_keys);
    gl_u64map_init(&m.stack_memo);
    gl_pk_begin(&m.p, f);
    gl_pk_dict_begin(&m.p, &top);
    gl_pk_next(&m.p, &top);
    gl_pk_key(&m.p, "segments");
    gl_pk_list_begin(&m.p, &segs);
    for (size_t i = 0; i < v->nsegs; i++) {
        gl_pk_next(&m.p, &segs);
        segment(&m, &v->segs[i]);
    }
    gl_pk_seq_end(&m.p, &segs);
    gl_pk_next(&m.p, &top);
    gl_pk_key(&m.p, "device_traces");
    gl_pk_list_begin(&m.p, &traces);
    for (int d = 0; d < v->ntraces; d++) {
        gl_pk_next(&m.p, &traces);
        trace(&m, d);
    }
    gl_pk_seq_end(&m.p, &traces);
    gl_pk_next(&m.p, &top);
    gl_pk_key(&m.p, "allocator_settings");
    gl_pk_dict_begin(&m.p, &none);
    gl_pk_seq_end(&m.p, &none);
    gl_pk_seq_end(&m.p, &top);
    gl_pk_end(&m.p);
    if (v->unknown)
        fprintf(stderr, "gpuledger export: %zu allocation%s on an unknown device %s not in the snapshot\n",
                v->unknown, gl_s(v->unknown), v->unknown == 1 ? "is" : "are");
    free(m.frame_memo);
    gl_u64map_free(&m.stack_memo);
    gl_strmap_free(&m.frame_keys);
}
