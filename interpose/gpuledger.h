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
/* For the gpuledger Python package: the calls above as CPython builtin
 * functions (mark, step, range_push, range_pop, set_recording, recording;
 * ~30 ns a call where ctypes takes 0.1-0.2 us): a PyMethodDef table, its
 * last entry's name NULL, for PyCFunction_NewEx. NULL if the process's
 * CPython functions are not found (the package then uses ctypes). */
const void *gpuledger_python_methods(void);

/* What keeps memory alive (the Python package's retention finder): the
 * tensor storage at ptr (bytes) is reached from the program's root by path
 * ("train.py: global kept (list, 18 items) → [17] → Tensor 1000 MiB",
 * UTF-8), whose global or local is at root_file:root_line (0: unknown).
 * moment: GPULEDGER_RETENTION_OOM, _STEP (a step that ended with growth)
 * or _EXIT; step: the optimizer step (-1: none); elapsed_us: the search's
 * time; complete: 0 when a bound (depth, objects, time) cut the search.
 * Returns 0, 1 when the text was cut to fit the ring's slot, -1 when
 * nothing was recorded. Stored in the retention table. */
enum gpuledger_retention_moment {
    GPULEDGER_RETENTION_OOM = 0,
    GPULEDGER_RETENTION_STEP = 1,
    GPULEDGER_RETENTION_EXIT = 2,
};
int gpuledger_retention(int moment, int64_t step, uint64_t ptr, uint64_t bytes, uint64_t elapsed_us, int complete,
                        const char *path, const char *root_file, int root_line);

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

/* Another allocator with the same two layers (blocks handed out of
 * segments it keeps): CuPy's MemoryPool, reported by the gpuledger Python
 * package's cupy.cuda.MemoryHook. action: GPULEDGER_TORCH_ALLOC ..
 * GPULEDGER_TORCH_SEGMENT_FREE, as gpuledger_torch_event's; block_bytes: an
 * ALLOC's rounded size (its block), else 0. The pool's free blocks are its
 * cache (allocator_cache), not leaks. */
enum gpuledger_allocator {
    GPULEDGER_ALLOCATOR_CUPY = 1,
};
void gpuledger_pool_event(int allocator, int action, int device, uint64_t addr, uint64_t size, uint64_t block_bytes);

/* ---- Questions about what this process has recorded ------------------------
 * For tests and checks (the Python package's pytest plugin and
 * gpuledger.measure are built on them). Each call waits until gpuledger's
 * writer thread has stored everything this process recorded before the call
 * (about a millisecond), and answers from that recorded state: not for a hot
 * path. Look them up with dlsym like the functions above.
 *
 *     uint64_t cp = gpuledger_checkpoint();
 *     run_one_test();
 *     struct gpuledger_usage u;
 *     if (cp && gpuledger_usage(cp, GPULEDGER_LAYER_AUTO, &u) == 0 && u.new_live_bytes > limit)
 *         ... what the test left allocated: gpuledger_live_stacks(cp, ..., GPULEDGER_NOW, ...)
 */
/* What the figures count. */
enum gpuledger_layer {
    GPULEDGER_LAYER_AUTO = 0,   /* blocks once PyTorch's caching allocator has been recorded, else device */
    GPULEDGER_LAYER_DEVICE = 1, /* CUDA allocations (what the device holds: cudaMalloc, pools, VMM, arrays,
                                   graph memory; under PyTorch its segments) */
    GPULEDGER_LAYER_BLOCKS = 2, /* PyTorch's caching-allocator blocks (tensors), in block bytes, from
                                   allocation to free (what torch.cuda.memory_allocated counts) */
};
/* A point to measure from: its number (> 0), or 0 when nothing is being
 * recorded. The last 16 stay usable. */
uint64_t gpuledger_checkpoint(void);
struct gpuledger_usage {
    uint64_t live_bytes;      /* live now */
    uint64_t start_bytes;     /* live at the checkpoint */
    uint64_t peak_bytes;      /* the most live at any moment since (>= start_bytes) */
    uint64_t new_live_bytes;  /* allocated since the checkpoint and still live */
    uint64_t new_live_count;  /* ... in so many allocations */
    uint64_t allocated_bytes; /* allocated since, in all */
    uint64_t allocations;     /* allocations since */
    uint64_t frees;           /* frees since */
    int layer;                /* what was counted: GPULEDGER_LAYER_DEVICE or _BLOCKS */
};
/* Usage since a checkpoint: 0, or -1 (an unknown or expired checkpoint, not
 * recording, or no answer within 10 s). */
int gpuledger_usage(uint64_t checkpoint, int layer, struct gpuledger_usage *out);
struct gpuledger_stack_bytes {
    uint64_t stack_id; /* for gpuledger_stack_text (the database's stacks.id) */
    uint64_t bytes;
    uint64_t count; /* allocations */
};
enum gpuledger_when {
    GPULEDGER_NOW = 0,     /* live now */
    GPULEDGER_AT_PEAK = 1, /* live at the peak since the checkpoint (usage's peak_bytes) */
};
/* The stacks that allocated, since the checkpoint, what is live `when`,
 * biggest first: up to max into out. Returns how many, or -1. */
int gpuledger_live_stacks(uint64_t checkpoint, int layer, int when, struct gpuledger_stack_bytes *out, int max);
/* Flags of gpuledger_stack_text: only the stack's Python frames (all of
 * them when it has none). */
#define GPULEDGER_FRAMES_PYTHON 1
/* A stack's frames, innermost first, one a line: "function (file:line)" for
 * Python code, "symbol (module)" for native code. Writes at most bufsz bytes
 * (whole lines, NUL-terminated); returns the length written, or -1. */
int gpuledger_stack_text(uint64_t stack_id, int flags, char *buf, size_t bufsz);

/* Sub-allocations inside a program's own pool (a KV cache handing out
 * pages, an arena): the same operations as the NVTX memory API
 * (nvtx3/nvToolsExtMem.h), which gpuledger also takes through
 * NVTX_INJECTION64_PATH, plus what NVTX cannot say: the page size of a heap
 * and the bytes of a region really used. A region is live inside its heap;
 * it never counts toward device totals (the heap's own CUDA allocation
 * does). Each call is one event with the caller's stack, ~100-300 ns.
 *
 * A heap is named by its base address (as NVTX's virtual-address heaps are);
 * page_size 0: no pages (holes are measured in bytes). */
void gpuledger_heap_register(const void *base, size_t size, size_t page_size, const char *name);
/* Ends the heap and every region still live in it. */
void gpuledger_heap_unregister(const void *base);
/* Ends every region live in the heap; the heap stays. */
void gpuledger_heap_reset(const void *base);
/* The page size of a heap registered through NVTX (nvtxMemHeapRegister). */
void gpuledger_heap_page_size(const void *base, size_t page_size);
/* A region [addr, addr + size) handed out inside heap `heap` (NULL: the
 * process-wide heap). used: bytes of it really in use (e.g. the tokens
 * written in a sequence's last page), -1 when not known. */
void gpuledger_region_alloc(const void *heap, const void *addr, size_t size, long long used);
void gpuledger_region_free(const void *addr);
void gpuledger_region_resize(const void *addr, size_t size);
/* The bytes of a live region really in use (internal fragmentation is the
 * rest of its bytes). */
void gpuledger_region_used(const void *addr, size_t used);
void gpuledger_region_name(const void *addr, const char *name);

#ifdef __cplusplus
}
#endif

#endif
