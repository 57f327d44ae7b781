/* ledger_layers.h — PyTorch's caching allocator replayed event by event as
 * gl_ledger_at sees it at one moment (analysis.c): on a device with blocks
 * its CUDA memory is its live tensors (the ledger's items), the blocks let
 * go of but not yet reusable (pending: record_stream) and its free blocks
 * (cached). For the passes that replay a run: the HTML page's rows and the
 * Perfetto export's counters. */
#ifndef GL_LEDGER_LAYERS_H
#define GL_LEDGER_LAYERS_H

#include <stddef.h>
#include <stdint.h>

#include "model.h"

struct gl_layers {
    int on;                   /* the device has blocks */
    int64_t allocator, segments, tensors, pending;
};

/* A block reusable later than its free: when (its free_completed). */
struct gl_layers_done {
    int64_t seq;
    uint32_t idx; /* into r->allocs */
};

/* The completions that come after their free, in event order (*out NULL
 * when none): 0, or -1 out of memory. */
int gl_layers_done_list(const struct gl_run *r, struct gl_layers_done **out, size_t *n);

/* An allocation or free on the layers' device; a block's completion. */
void gl_layers_apply(struct gl_layers *l, const struct gl_alloc *a, int is_free);
void gl_layers_complete(struct gl_layers *l, const struct gl_alloc *a);

/* The allocator's free blocks: its memory less the live tensors and the
 * pending blocks, never below 0 (gl_ledger_at's cached_free row). */
static inline int64_t gl_layers_cached(const struct gl_layers *l)
{
    int64_t c = l->allocator - l->tensors - l->pending;
    return c > 0 ? c : 0;
}

#endif
