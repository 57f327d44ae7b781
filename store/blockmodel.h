/* blockmodel.h — PyTorch's CUDA caching allocator rebuilt from its trace.
 *
 * A trace entry gives a block's address and the bytes requested, not the
 * block's size. The allocator always carves a block from the start of a
 * free block, rounds the request (512 B, or its roundup_power2_divisions),
 * and splits the rest off when its rule says so (small pool or expandable
 * segments: a remainder of at least 512 B; large pool: a request below
 * max_split_size and a remainder over 1 MiB); a freed block merges with free
 * neighbours of its segment. Replaying those rules over the segments
 * (SEGMENT_ALLOC/FREE, and for expandable segments the mapped pages,
 * SEGMENT_MAP/UNMAP) gives every block's size, the holes between them, and
 * the figures torch.cuda.memory_stats() keeps: allocated (block bytes, from
 * ALLOC to FREE_REQUESTED), requested (from ALLOC to FREE_COMPLETED),
 * reserved, and their peaks.
 *
 * Used by the writer (each block event is stored with its block size and
 * the allocation it ends) and by the report (a replay gives the holes at any
 * moment). The same model serves any sub-allocator whose events fit it. */
#ifndef GL_BLOCKMODEL_H
#define GL_BLOCKMODEL_H

#include <stdint.h>

#include "gl_event.h"

enum gl_bm_state {
    GL_BM_FREE = 0,      /* a hole: reusable */
    GL_BM_ALLOCATED = 1, /* a live tensor's block */
    GL_BM_PENDING = 2,   /* freed, waiting for the streams it was used on (record_stream) */
};

struct gl_bm_block {
    uint64_t addr, size, requested;
    uint64_t seq;  /* the event that allocated it (0: none) */
    uint64_t segment; /* start of the segment (or mapped run) holding it; 0: unknown */
    int state;
};

struct gl_bm_stats {
    uint64_t allocated, allocated_peak; /* block bytes, ALLOC .. FREE_REQUESTED (memory_allocated) */
    uint64_t requested, requested_peak; /* requested bytes, ALLOC .. FREE_COMPLETED */
    uint64_t active;                    /* block bytes, ALLOC .. FREE_COMPLETED */
    uint64_t reserved, reserved_peak;   /* segments, mapped pages of expandable ones (memory_reserved) */
    uint64_t allocated_peak_seq;        /* the event that set allocated_peak */
    uint64_t allocs, frees, segments;
    uint64_t unknown; /* events that did not fit (attached late, or a rule the model lacks) */
};

struct gl_bm_holes {
    uint64_t free_bytes; /* cached but free: reserved - active */
    uint64_t count;      /* free blocks */
    uint64_t largest;    /* the largest free block */
};

struct gl_bm;

struct gl_bm *gl_bm_new(void);
void gl_bm_delete(struct gl_bm *m);
/* The allocator's settings (the shim's CONFIG entry): max_split_size,
 * expandable_segments, roundup_power2_divisions packed 4 bits per interval
 * (log2 + 1; 0 = none). Defaults: SIZE_MAX, 0, 0. */
void gl_bm_set_config(struct gl_bm *m, uint64_t max_split_size, int expandable, uint64_t divisions);
/* What the allocator rounds a request to (round_size). */
uint64_t gl_bm_round_size(const struct gl_bm *m, uint64_t requested);

/* Events, in the allocator's order. Each returns 0 when the event fits the
 * model, 1 when it does not (counted in stats.unknown; the model stays
 * usable and *out still holds its best answer), -1 when out of memory.
 * dev: 0 .. GL_MAX_DEVICES - 1 (others share one slot). seq: the
 * event's number, remembered as the block's. */
int gl_bm_segment_alloc(struct gl_bm *m, int dev, uint64_t addr, uint64_t size);
/* A segment of a pool that splits a free block for any remainder of at
 * least 512 bytes, whatever its size (CuPy's MemoryPool), as PyTorch does
 * in its small segments. */
int gl_bm_segment_alloc_splitting(struct gl_bm *m, int dev, uint64_t addr, uint64_t size);
int gl_bm_segment_free(struct gl_bm *m, int dev, uint64_t addr, uint64_t size);
int gl_bm_segment_map(struct gl_bm *m, int dev, uint64_t addr, uint64_t size);
int gl_bm_segment_unmap(struct gl_bm *m, int dev, uint64_t addr, uint64_t size);
/* At attach: a segment that already existed, then its blocks in address
 * order (state: enum gl_bm_state). */
int gl_bm_snapshot_segment(struct gl_bm *m, int dev, uint64_t addr, uint64_t size, int expandable);
int gl_bm_snapshot_block(struct gl_bm *m, int dev, uint64_t addr, uint64_t size, uint64_t requested, int state,
                         uint64_t seq);
int gl_bm_alloc(struct gl_bm *m, int dev, uint64_t addr, uint64_t requested, uint64_t seq, struct gl_bm_block *out);
int gl_bm_free_requested(struct gl_bm *m, int dev, uint64_t addr, struct gl_bm_block *out);
int gl_bm_free_completed(struct gl_bm *m, int dev, uint64_t addr, struct gl_bm_block *out);

/* The block holding addr, in any state: 1 found, 0 not. */
int gl_bm_find(const struct gl_bm *m, uint64_t addr, struct gl_bm_block *out);
const struct gl_bm_stats *gl_bm_stats(const struct gl_bm *m, int dev);
/* The holes of a device now (walks its free blocks). */
void gl_bm_holes(const struct gl_bm *m, int dev, struct gl_bm_holes *out);

#endif
