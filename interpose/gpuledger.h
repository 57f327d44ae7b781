/* gpuledger.h — annotations a program can put into its gpuledger database
 * (public API; link nothing: the functions exist when libgpuledger.so is
 * preloaded). Look them up with dlsym(RTLD_DEFAULT, "gpuledger_mark") so the
 * program also runs without gpuledger, or from Python:
 *
 *     import ctypes
 *     gl = ctypes.CDLL(None)          # the process's global scope
 *     mark = getattr(gl, "gpuledger_mark", None)
 *     if mark: mark(b"step 17")
 *
 * Marks split the run into steps for `gpuledger leaks --steps`; ranges tag
 * every event made while they are open (annotations table, events.range_seq). */
#ifndef GPULEDGER_H
#define GPULEDGER_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A point in time, e.g. the end of a training step. The Python package
 * marks the end of every optimizer step ("optimizer step N"), so
 * `gpuledger leaks --steps` takes its steps from the optimizer. */
void gpuledger_mark(const char *label);
/* Open / close a named range on the calling thread (they nest). */
void gpuledger_range_push(const char *label);
void gpuledger_range_pop(void);
/* Pause (0) or resume (1) recording for the whole process; returns the
 * previous state. While paused, CUDA calls pass straight through and are not
 * recorded — so a free of memory allocated while paused counts as unmatched,
 * and memory allocated while recording but freed while paused looks leaked.
 * Meant for skipping a warm-up, or timing with and without in one process. */
int gpuledger_set_recording(int on);
/* 1 while the library records (loaded, started, not paused), else 0. */
int gpuledger_recording(void);

/* Identity tags: the n tensors at addrs (of sizes bytes) are of this
 * category. A tag names the allocation (PyTorch block, or CUDA allocation)
 * live at that address, for that allocation's whole life; the report takes
 * the category from it instead of guessing from frame names. */
enum gpuledger_tag {
    GPULEDGER_TAG_PARAMETERS = 1,
    GPULEDGER_TAG_GRADIENTS = 2,
    GPULEDGER_TAG_OPTIMIZER_STATE = 3,
    GPULEDGER_TAG_KV_CACHE = 4,
    GPULEDGER_TAG_BUFFERS = 5, /* a module's non-parameter state (running means, masks, tables) */
};
void gpuledger_tag(int category, const uint64_t *addrs, const uint64_t *sizes, size_t n);

/* ---- PyTorch's caching allocator -------------------------------------------
 * The Python package builds a small C++ shim against the job's own torch
 * (python/gpuledger/torch_shim.cpp) and registers it here; the library
 * attaches it to PyTorch's CUDA caching allocator as soon as the allocator is
 * initialised (it tries at each segment allocation until it works). The shim
 * turns every allocator trace entry into one gpuledger_torch_event call, on
 * the allocating thread, with the allocator's lock held. */
enum gpuledger_torch_action {
    GPULEDGER_TORCH_ALLOC = 1,            /* a block handed out: addr, size = bytes requested */
    GPULEDGER_TORCH_FREE_REQUESTED = 2,   /* the tensor let go of it (size: bytes requested) */
    GPULEDGER_TORCH_FREE_COMPLETED = 3,   /* the block is reusable (later when record_stream was used) */
    GPULEDGER_TORCH_SEGMENT_ALLOC = 4,    /* a segment cudaMalloc'ed: addr, size */
    GPULEDGER_TORCH_SEGMENT_FREE = 5,     /* a segment given back (empty_cache, retry after OOM) */
    GPULEDGER_TORCH_SEGMENT_MAP = 6,      /* expandable segments: pages mapped at addr */
    GPULEDGER_TORCH_SEGMENT_UNMAP = 7,    /* expandable segments: pages unmapped */
    GPULEDGER_TORCH_OOM = 8,              /* out of memory: size = bytes asked (rounded), extra = device free bytes */
    GPULEDGER_TORCH_SNAPSHOT_SEGMENT = 9, /* at attach, a segment that already existed; extra: 1 = expandable */
    GPULEDGER_TORCH_SNAPSHOT_BLOCK = 10,  /* at attach, the next block of that segment: size = block bytes,
                                             extra = requested bytes | state << 62 (0 free, 1 allocated,
                                             2 freed but waiting for a stream) */
    GPULEDGER_TORCH_CONFIG = 11,          /* addr = max_split_size, size = expandable segments (0/1),
                                             extra = roundup_power2_divisions, 4 bits each: log2 + 1, 0 = none */
};
/* pool_a, pool_b: the block's memory pool id (0, 0: the default pool; a CUDA
 * graph's or torch.cuda.MemPool's private pool otherwise). device -1: none. */
typedef void (*gpuledger_torch_event_fn)(int action, int device, uint64_t addr, uint64_t size, uint64_t stream,
                                         uint64_t pool_a, uint64_t pool_b, uint64_t extra);
void gpuledger_torch_event(int action, int device, uint64_t addr, uint64_t size, uint64_t stream, uint64_t pool_a,
                           uint64_t pool_b, uint64_t extra);
/* The shim's entry point: 1 attached, 0 not yet (CUDA not initialised), -1
 * never (err says why). */
typedef int (*gpuledger_torch_attach_fn)(gpuledger_torch_event_fn emit, char *err, size_t errsz);
/* The interface version the shim's gpuledger_torch_shim_abi() must return. */
#define GPULEDGER_TORCH_ABI 1
/* Register the shim: it is tried at once, then at each segment allocation
 * until it attaches. Returns 1 attached, 0 pending, -1 failed (a line on
 * stderr says why), -2 not recording. */
int gpuledger_torch_register(gpuledger_torch_attach_fn attach);

#ifdef __cplusplus
}
#endif

#endif
