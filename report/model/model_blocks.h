/* model_blocks.h — what the database says about PyTorch's caching
 * allocator beyond its rows (schema 2; none in older databases): its holes
 * as sampled by the recorder (allocator_samples: at most every 20 ms per
 * device, and at every out-of-memory) and its settings. The rows
 * themselves are linked at load (model.h, gl_run_link_blocks). */
#ifndef GL_MODEL_BLOCKS_H
#define GL_MODEL_BLOCKS_H

#include <stddef.h>
#include <stdint.h>

#include "model.h"

struct gl_alloc_sample {
    int64_t seq, ts_ns;     /* as of this event */
    uint64_t reserved;      /* its segments' bytes */
    uint64_t allocated;     /* block bytes of live tensors */
    uint64_t active;        /* ... and of freed ones not yet reusable */
    uint64_t requested;     /* bytes those asked for */
    uint64_t cached_free;   /* bytes in free blocks */
    uint64_t holes;         /* free blocks */
    uint64_t largest_hole;
};

/* Every sample of `device`, in order (*out malloc'ed; none: NULL, 0).
 * 0, or -1 out of memory. */
int gl_run_allocator_samples(struct gl_run *r, int device, struct gl_alloc_sample **out, size_t *n);
/* The last sample of `device` at or before event seq: 1, or 0 when none. */
int gl_run_allocator_sample_at(struct gl_run *r, int device, int64_t seq, struct gl_alloc_sample *out);
/* The allocator used expandable segments (its settings' row). */
int gl_run_allocator_expandable(struct gl_run *r);

#endif
