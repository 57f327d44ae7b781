/* memviz_build.h — what the memory_viz view's two halves share
 * (view_memviz.c: the end state's segments; memviz_trace.c: each device's
 * trace): which allocations are segments and blocks, and on which device. */
#ifndef GL_MEMVIZ_BUILD_H
#define GL_MEMVIZ_BUILD_H

#include "export_views.h"
#include "model_block_facts.h"
#include "u64map.h"

struct gl_memviz_state {
    struct gl_memviz_view *v;
    struct gl_run *r;
    uint8_t *hosts;              /* by allocation: device memory with blocks inside */
    int8_t *sub_dev;             /* by allocation: a block's device from its segment, + 1 (0: its own) */
    struct gl_block_fact *facts; /* by allocation: a PyTorch block's bytes, when reusable */
    struct gl_u64map map_dev;    /* VMM map seq -> device + 1 */
};

/* A VMM mapping: memory placed by address (its handle, counted on the
 * device, is not: handles are not addresses). */
static inline int gl_mv_is_mapping(const struct gl_alloc *a)
{
    return gl_op_space(a->op) == GL_SPACE_MAP && gl_kind_layer(a->kind) != GL_LAYER_SUB;
}

/* A segment: device memory, or a mapping. */
static inline int gl_mv_is_segment(const struct gl_alloc *a)
{
    return (gl_kind_layer(a->kind) == GL_LAYER_DEVICE && gl_op_space(a->op) != GL_SPACE_PHYS) || gl_mv_is_mapping(a);
}

/* A sub-allocation shown as a block (a PyTorch block, a region of a
 * program's heap): of layer SUB, except the rows an allocator writes of its
 * own segments and a program of its heaps (the CUDA memory under them is
 * the segment). */
static inline int gl_mv_is_block(const struct gl_alloc *a)
{
    return gl_kind_layer(a->kind) == GL_LAYER_SUB && a->kind != GL_KIND_SEGMENT && a->kind != GL_KIND_HEAP;
}

/* A PyTorch block is reusable when its free_completed row says (it may
 * not be, at the end of the run); anything else when it is freed. */
static inline int gl_mv_reusable_at_free(const struct gl_alloc *a)
{
    return a->kind != GL_KIND_BLOCK;
}

static inline int gl_mv_wanted(const struct gl_alloc *a)
{
    return gl_mv_is_segment(a) || gl_mv_is_block(a);
}

/* The device of an allocation: a mapping's is its handle's; a block with
 * none of its own (a region of a program's heap) is on its segment's. */
static inline int gl_mv_dev_of(const struct gl_memviz_state *m, const struct gl_alloc *a)
{
    uint64_t d;
    if (gl_mv_is_mapping(a))
        return gl_u64map_get(&m->map_dev, (uint64_t)a->seq, &d) ? (int)d - 1 : -1;
    if (a->device < 0 && m->sub_dev && m->sub_dev[a - m->r->allocs])
        return m->sub_dev[a - m->r->allocs] - 1;
    return a->device;
}

/* The bytes a block's trace entries carry: what was asked (PyTorch's
 * requested_size); an allocation's own size otherwise. */
static inline uint64_t gl_mv_asked(const struct gl_memviz_state *m, size_t i)
{
    return m->facts[i].requested ? m->facts[i].requested : m->r->allocs[i].size;
}

/* Each device's trace (m->v->traces). 0, or -1 out of memory. */
int gl_mv_traces(struct gl_memviz_state *m);

#endif
