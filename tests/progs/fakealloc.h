/* fakealloc.h — a small stand-in for PyTorch's CUDA caching allocator, for
 * tests without torch or a GPU: segments from the (fake) CUDA runtime,
 * blocks carved with the real rounding and splitting rules, frees merged
 * with free neighbours, frees delayed by record_stream, expandable segments
 * (pages mapped with cuMemCreate/cuMemMap, unmapped by empty_cache), an OOM
 * after releasing the cache. It reports each step as PyTorch's allocator
 * does to its trace trackers: through gpuledger_torch_event, in the same
 * order, once attached (gpuledger_torch_register; the blocks that exist
 * then arrive as a snapshot first). One device, one lock. */
#ifndef FAKEALLOC_H
#define FAKEALLOC_H

#include <stdint.h>

struct fa_stats {
    uint64_t allocated, allocated_peak, requested, requested_peak, reserved, reserved_peak;
    uint64_t block_bytes_total; /* every allocation's block size, summed */
    uint64_t allocs;
    uint64_t oom_free; /* what cudaMemGetInfo said at the last OOM */
};

/* expandable: expandable segments; max_split: max_split_size (0: none) */
void fa_init(int expandable, uint64_t max_split);
/* Register the allocator's "shim" with gpuledger (if it is loaded): it
 * attaches at the next segment allocation, emitting a snapshot first. */
void fa_register(void);
/* The block for `size` bytes on `stream` (0: out of memory). *block_size
 * (if not NULL) receives the block's real size. */
uint64_t fa_malloc(uint64_t size, int stream, uint64_t *block_size);
void fa_free(uint64_t ptr);
/* The block was used on another stream: its free completes only after
 * fa_streams_done() and the next fa_malloc (as process_events does). */
void fa_record_stream(uint64_t ptr);
void fa_streams_done(void);
/* Give back every unused segment (unmap unused pages of expandable ones). */
void fa_empty_cache(void);
/* The stream a graph is captured on (a cudaStream_t): while it captures, a
 * new segment is allocated in relaxed capture mode, as PyTorch does. */
void fa_capture_stream(void *stream);
void fa_stats(struct fa_stats *out);

/* For a stand-in libc10_cuda (tests/torchstub): report every step to `fn`
 * (its trace trackers, through the C++ shim) instead of gpuledger directly,
 * whether or not anything is attached; walk the segments and their blocks
 * for its snapshot(); tell whether CUDA was used (initialized()). */
typedef void (*fa_tracker_fn)(int action, uint64_t addr, uint64_t size, int stream, uint64_t extra);
void fa_set_tracker(fa_tracker_fn fn);
typedef void (*fa_segment_fn)(void *ctx, uint64_t addr, int stream, int expandable);
typedef void (*fa_block_fn)(void *ctx, uint64_t size, uint64_t requested, int state);
void fa_walk(void *ctx, fa_segment_fn seg, fa_block_fn blk);
int fa_initialized(void);

#endif
