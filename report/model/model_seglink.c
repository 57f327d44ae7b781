/* model_seglink.c — see model_seglink.h. */
#include "model_seglink.h"

#include <stdlib.h>
#include <string.h>

int gl_seglink_init(struct gl_seglink *l)
{
    memset(l, 0, sizeof *l);
    gl_u64map_init(&l->device_at);
    gl_u64map_init(&l->handle_at);
    gl_u64map_init(&l->handle_seq);
    l->maps = malloc(GL_PENDING_MAPS * sizeof *l->maps);
    return l->maps ? 0 : -1;
}

void gl_seglink_free(struct gl_seglink *l)
{
    gl_u64map_free(&l->device_at);
    gl_u64map_free(&l->handle_at);
    gl_u64map_free(&l->handle_seq);
    free(l->maps);
    l->maps = NULL;
}

/* The handles mapped in [lo, hi): their cuMemCreate is the allocator's. */
static void claim_mappings(struct gl_seglink *l, struct gl_run *r, uint64_t lo, uint64_t hi)
{
    size_t k = 0;
    for (size_t i = 0; i < l->nmaps; i++) {
        uint64_t pos, seq;
        if (l->maps[i].addr < lo || l->maps[i].addr >= hi) {
            l->maps[k++] = l->maps[i];
            continue;
        }
        if (!gl_u64map_get(&l->handle_at, l->maps[i].handle, &pos))
            continue;
        (void)gl_u64map_get(&l->handle_seq, l->maps[i].handle, &seq);
        struct gl_alloc *p = &r->allocs[pos];
        if (p->kind == GL_KIND_PHYSICAL && (uint64_t)p->seq == seq)
            p->flags |= GL_AF_ALLOCATOR;
        else /* released before the segment mapped it: its record is given up */
            l->inexact = 1;
    }
    l->nmaps = k;
}

int gl_seglink_alloc(struct gl_seglink *l, struct gl_run *r, size_t pos)
{
    const struct gl_alloc *a = &r->allocs[pos];
    uint64_t at;
    switch (a->kind) {
    case GL_KIND_DEVICE:
        return gl_u64map_put(&l->device_at, a->addr, pos);
    case GL_KIND_PHYSICAL:
        return gl_u64map_put(&l->handle_at, a->addr, pos) || gl_u64map_put(&l->handle_seq, a->addr, (uint64_t)a->seq);
    case GL_KIND_MAPPING:
        if (l->nmaps == GL_PENDING_MAPS) /* mappings no segment claimed (not the allocator's) */
            memmove(l->maps, l->maps + 1, --l->nmaps * sizeof *l->maps);
        l->maps[l->nmaps].addr = a->addr;
        l->maps[l->nmaps++].handle = a->aux;
        return 0;
    case GL_KIND_SEGMENT:
        /* the latest cudaMalloc there, live now (its record not given up
         * to a later allocation, not freed) */
        if (a->op == GL_OP_ALLOC && gl_u64map_get(&l->device_at, a->addr, &at)) {
            struct gl_alloc *c = &r->allocs[at];
            if (c->kind == GL_KIND_DEVICE && c->addr == a->addr && !c->free_seq && at != pos) {
                c->flags |= GL_AF_ALLOCATOR;
                return 0;
            }
        }
        claim_mappings(l, r, a->addr, a->addr + a->size); /* expandable: pages mapped in its range */
        return 0;
    default:
        return 0;
    }
}
