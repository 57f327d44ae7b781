/* model_seglink.h — which CUDA memory is PyTorch's caching allocator's,
 * decided while a live-only load scans (model.h, GL_LOAD_GROWTH), as
 * model_blocks.c's link_segments decides it after a full load: a segment
 * row claims the cudaMalloc-like allocation live at its address, or the
 * cuMemCreate handles mapped in its range (the last 4096 mappings no
 * segment claimed yet). Records a live-only load gives up are gone by the
 * time a later row could name them, so a claim of one (a handle released
 * before a segment maps it) makes the scan inexact: the load is then done
 * again in full. */
#ifndef GL_MODEL_SEGLINK_H
#define GL_MODEL_SEGLINK_H

#include <stddef.h>
#include <stdint.h>

#include "model.h"
#include "u64map.h"

/* mappings waiting for a segment row to claim them (past that, the oldest
 * is no allocator's): here and in model_blocks.c's link_segments */
#define GL_PENDING_MAPS 4096

struct gl_seglink {
    struct gl_u64map device_at;  /* address -> record of the latest cudaMalloc-like allocation */
    struct gl_u64map handle_at;  /* handle -> record of the latest cuMemCreate of it */
    struct gl_u64map handle_seq; /* handle -> that cuMemCreate's seq */
    struct { uint64_t addr, handle; } *maps; /* mappings not yet claimed, oldest first */
    size_t nmaps;
    int inexact;
};

/* 0, or -1 out of memory. */
int gl_seglink_init(struct gl_seglink *l);
void gl_seglink_free(struct gl_seglink *l);
/* Record pos of r->allocs was just made: links it or by it (GL_AF_ALLOCATOR
 * on what a segment claims). 0, or -1 out of memory. */
int gl_seglink_alloc(struct gl_seglink *l, struct gl_run *r, size_t pos);

#endif
