/* gl_event.h — the one vocabulary of gpuledger, and the one record that
 * travels from an application thread to the writer thread.
 *
 * The tables below (operations with their class, memory kinds with their
 * layer, APIs with their operation and kind) are the only place these facts
 * are written; the recorder, CUPTI, the store, the schema and the report
 * call the derived predicates. The numbers of GL_OP_*, GL_KIND_* and
 * GL_API_* are stored in databases and therefore part of the schema:
 * append, never renumber. */
#ifndef GL_EVENT_H
#define GL_EVENT_H

#include <stdint.h>

/* ---- the vocabulary ------------------------------------------------------
 * Three tables, one row per fact; everything else (enums, names, the
 * predicates below, the schema's name tables) is derived from them.
 *
 * Adding one: append a row with the next free number of your range (numbers
 * are stored in databases: never renumber, never reuse). A duplicate number
 * fails to compile (the predicates switch on it).
 *   op:   X(NAME, id, "text", CLASS, SPACE)
 *         CLASS: ALLOC (memory, a handle, a range or a mapping begins),
 *         FREE (what an ALLOC of the same SPACE began ends), CONTROL (changes
 *         pool or device state: trim, reset), FAILURE, ANNOTATION, SAMPLE.
 *         SPACE: where ALLOC and FREE pair by address/handle (MEM, PHYS, VA,
 *         MAP), NONE for the other classes.
 *   kind: X(NAME, id, "text", LAYER)
 *         LAYER: DEVICE (device memory, counted toward what CUDA holds), SUB
 *         (a sub-allocation inside another allocation, e.g. a PyTorch block
 *         or an NVTX region: never counted twice), HOST, ADDRESS (address
 *         space: reserved ranges, mappings), NONE.
 *   api:  X(name, id, "text", OP, KIND, ORDER)
 *         the operation and kind a call of it records; ORDER: STREAM for the
 *         stream-ordered (pool) calls, SYNC otherwise. */

/* Operations (column events.op). */
#define GL_OPS(X)                                                                                   \
    X(ALLOC, 1, "alloc", ALLOC, MEM)              /* memory handed out */                           \
    X(FREE, 2, "free", FREE, MEM)                 /* memory given back */                           \
    X(MAP, 3, "map", ALLOC, MAP)                  /* cuMemMap: physical handle mapped at a VA */    \
    X(UNMAP, 4, "unmap", FREE, MAP)                                                                 \
    X(RESERVE, 5, "reserve", ALLOC, VA)           /* cuMemAddressReserve */                         \
    X(UNRESERVE, 6, "unreserve", FREE, VA)                                                          \
    X(CREATE, 7, "create", ALLOC, PHYS)           /* cuMemCreate: physical allocation handle */     \
    X(RELEASE, 8, "release", FREE, PHYS)          /* cuMemRelease */                                \
    X(TRIM, 9, "trim", CONTROL, NONE)             /* cudaMemPoolTrimTo */                           \
    X(RESET, 10, "reset", CONTROL, NONE)          /* cudaDeviceReset */                             \
    X(OOM, 11, "oom", FAILURE, NONE)              /* an allocation that failed out-of-memory */     \
    X(ERROR, 12, "error", FAILURE, NONE)          /* any other failed call */                       \
    X(MARK, 13, "mark", ANNOTATION, NONE)         /* a point in time (e.g. a step) */               \
    X(SAMPLE, 14, "sample", SAMPLE, NONE)         /* pool / device state: stored in *_samples */    \
    X(RANGE_PUSH, 15, "range_push", ANNOTATION, NONE) /* annotation range opened */                 \
    X(RANGE_POP, 16, "range_pop", ANNOTATION, NONE)                                                 \
    X(GRAPH_ALLOC, 21, "graph_alloc", CONTROL, NONE)   /* a graph memory-allocation node defined */  \
    X(GRAPH_FREE, 22, "graph_free", CONTROL, NONE)     /* a graph memory-free node defined */        \
    X(GRAPH_LAUNCH, 23, "graph_launch", CONTROL, NONE) /* a launch of a graph with memory nodes */  \
    /* PyTorch's caching allocator: a block's op free is FREE_REQUESTED and FREE_COMPLETED at once; \
     * a block freed while other streams still use it (record_stream) is free_requested, then      \
     * free_completed when it becomes reusable */                                                   \
    X(FREE_COMPLETED, 17, "free_completed", CONTROL, NONE)                                          \
    X(FREE_REQUESTED, 20, "free_requested", FREE, MEM)                                              \
    X(CONFIG, 18, "config", CONTROL, NONE)        /* an allocator's settings (max_split_size ...) */  \
    X(TAG, 19, "tag", ANNOTATION, NONE)           /* identity: a category for the block at addr */  \
    X(HEAP_RESET, 24, "heap_reset", CONTROL, NONE) /* every region of a heap ends */                 \
    X(RESIZE, 25, "resize", CONTROL, NONE)        /* a live region's size changes */                \
    X(NAME, 26, "name", ANNOTATION, NONE)         /* a heap or region is named (table names) */     \
    X(SET, 27, "set", CONTROL, NONE)              /* a heap's page size, a region's used bytes */ \
    X(RETAIN, 28, "retain", ANNOTATION, NONE)     /* a retention path (table retention, never event_log) */

/* Memory kinds (column events.kind). */
#define GL_KINDS(X)                                                                   \
    X(NONE, 0, "none", NONE)                                                          \
    X(DEVICE, 1, "device", DEVICE)       /* cudaMalloc / cuMemAlloc / pitch */        \
    X(ASYNC, 2, "async", DEVICE)         /* stream-ordered pool allocation */         \
    X(MANAGED, 3, "managed", DEVICE)     /* unified memory */                         \
    X(HOST, 4, "host", HOST)             /* page-locked host memory */                \
    X(PHYSICAL, 5, "physical", DEVICE)   /* cuMemCreate handle (VMM) */               \
    X(VA, 6, "va", ADDRESS)              /* reserved virtual address range */         \
    X(MAPPING, 7, "mapping", ADDRESS)    /* a handle mapped into a VA range */        \
    X(STATIC, 8, "static", DEVICE)       /* module globals (from CUPTI) */            \
    X(ARRAY, 9, "array", DEVICE)         /* CUDA array / mipmapped array */           \
    X(GRAPH, 10, "graph", DEVICE)        /* CUDA-graph memory (allocations, pool) */                \
    X(BLOCK, 11, "block", SUB)           /* a PyTorch caching-allocator block (a tensor) */ \
    X(SEGMENT, 12, "segment", SUB)       /* that allocator's view of its segments */                \
    X(HEAP, 13, "heap", SUB)             /* a program's own pool (NVTX memory heap) */ \
    X(REGION, 14, "region", SUB)         /* a sub-allocation handed out in a heap */

/* Every API we wrap, with the operation and memory kind it records. */
#define GL_APIS(X)                                                                                  \
    X(cudaMalloc, 1, "cudaMalloc", ALLOC, DEVICE, SYNC)                                             \
    X(cudaFree, 2, "cudaFree", FREE, NONE, SYNC)                                                    \
    X(cudaMallocAsync, 3, "cudaMallocAsync", ALLOC, ASYNC, STREAM)                                  \
    X(cudaFreeAsync, 4, "cudaFreeAsync", FREE, NONE, STREAM)                                        \
    X(cudaMallocFromPoolAsync, 5, "cudaMallocFromPoolAsync", ALLOC, ASYNC, STREAM)                  \
    X(cudaMallocManaged, 6, "cudaMallocManaged", ALLOC, MANAGED, SYNC)                              \
    X(cudaMallocPitch, 7, "cudaMallocPitch", ALLOC, DEVICE, SYNC)                                   \
    X(cudaMallocHost, 8, "cudaMallocHost", ALLOC, HOST, SYNC)                                       \
    X(cudaHostAlloc, 9, "cudaHostAlloc", ALLOC, HOST, SYNC)                                         \
    X(cudaFreeHost, 10, "cudaFreeHost", FREE, NONE, SYNC)                                           \
    X(cudaMemPoolTrimTo, 11, "cudaMemPoolTrimTo", TRIM, NONE, SYNC)                                 \
    X(cudaDeviceReset, 12, "cudaDeviceReset", RESET, NONE, SYNC)                                    \
    X(cuMemAlloc_v2, 13, "cuMemAlloc_v2", ALLOC, DEVICE, SYNC)                                      \
    X(cuMemAllocPitch_v2, 14, "cuMemAllocPitch_v2", ALLOC, DEVICE, SYNC)                            \
    X(cuMemFree_v2, 15, "cuMemFree_v2", FREE, NONE, SYNC)                                           \
    X(cuMemAllocAsync, 16, "cuMemAllocAsync", ALLOC, ASYNC, STREAM)                                 \
    X(cuMemFreeAsync, 17, "cuMemFreeAsync", FREE, NONE, STREAM)                                     \
    X(cuMemAllocFromPoolAsync, 18, "cuMemAllocFromPoolAsync", ALLOC, ASYNC, STREAM)                 \
    X(cuMemAllocManaged, 19, "cuMemAllocManaged", ALLOC, MANAGED, SYNC)                             \
    X(cuMemCreate, 20, "cuMemCreate", CREATE, PHYSICAL, SYNC)                                       \
    X(cuMemRelease, 21, "cuMemRelease", RELEASE, PHYSICAL, SYNC)                                    \
    X(cuMemMap, 22, "cuMemMap", MAP, MAPPING, SYNC)                                                 \
    X(cuMemUnmap, 23, "cuMemUnmap", UNMAP, MAPPING, SYNC)                                           \
    X(cuMemAddressReserve, 24, "cuMemAddressReserve", RESERVE, VA, SYNC)                            \
    X(cuMemAddressFree, 25, "cuMemAddressFree", UNRESERVE, VA, SYNC)                                \
    X(cudaMallocAsync_ptsz, 26, "cudaMallocAsync_ptsz", ALLOC, ASYNC, STREAM)                       \
    X(cudaFreeAsync_ptsz, 27, "cudaFreeAsync_ptsz", FREE, NONE, STREAM)                             \
    X(cudaMallocFromPoolAsync_ptsz, 28, "cudaMallocFromPoolAsync_ptsz", ALLOC, ASYNC, STREAM)       \
    X(cuMemAllocAsync_ptsz, 29, "cuMemAllocAsync_ptsz", ALLOC, ASYNC, STREAM)                       \
    X(cuMemFreeAsync_ptsz, 30, "cuMemFreeAsync_ptsz", FREE, NONE, STREAM)                           \
    X(cuMemAllocFromPoolAsync_ptsz, 31, "cuMemAllocFromPoolAsync_ptsz", ALLOC, ASYNC, STREAM)       \
    X(cuMemAllocHost_v2, 32, "cuMemAllocHost_v2", ALLOC, HOST, SYNC)                                \
    X(cuMemHostAlloc, 33, "cuMemHostAlloc", ALLOC, HOST, SYNC)                                      \
    X(cuMemFreeHost, 34, "cuMemFreeHost", FREE, NONE, SYNC)                                         \
    X(gpuledger_mark, 35, "gpuledger_mark", MARK, NONE, SYNC)                                       \
    X(cupti_static, 36, "module_static", ALLOC, STATIC, SYNC)                                       \
    X(cupti_static_free, 37, "module_static_release", FREE, STATIC, SYNC)                           \
    X(pool_sample, 38, "cudaMemPoolGetAttribute", SAMPLE, NONE, SYNC)                               \
    X(device_sample, 39, "cudaMemGetInfo", SAMPLE, NONE, SYNC)                                      \
    X(gpuledger_range_push, 40, "gpuledger_range_push", RANGE_PUSH, NONE, SYNC)                     \
    X(gpuledger_range_pop, 41, "gpuledger_range_pop", RANGE_POP, NONE, SYNC)                       \
    X(cudaMallocArray, 42, "cudaMallocArray", ALLOC, ARRAY, SYNC)                                   \
    X(cudaMalloc3DArray, 43, "cudaMalloc3DArray", ALLOC, ARRAY, SYNC)                               \
    X(cudaMallocMipmappedArray, 44, "cudaMallocMipmappedArray", ALLOC, ARRAY, SYNC)                 \
    X(cudaFreeArray, 45, "cudaFreeArray", FREE, NONE, SYNC)                                         \
    X(cudaFreeMipmappedArray, 46, "cudaFreeMipmappedArray", FREE, NONE, SYNC)                       \
    X(cuArrayCreate_v2, 47, "cuArrayCreate_v2", ALLOC, ARRAY, SYNC)                                 \
    X(cuArray3DCreate_v2, 48, "cuArray3DCreate_v2", ALLOC, ARRAY, SYNC)                             \
    X(cuMipmappedArrayCreate, 49, "cuMipmappedArrayCreate", ALLOC, ARRAY, SYNC)                     \
    X(cuArrayDestroy, 50, "cuArrayDestroy", FREE, NONE, SYNC)                                       \
    X(cuMipmappedArrayDestroy, 51, "cuMipmappedArrayDestroy", FREE, NONE, SYNC)                     \
    X(cuGraphAddMemAllocNode, 52, "cuGraphAddMemAllocNode", GRAPH_ALLOC, GRAPH, SYNC)               \
    X(cuGraphAddMemFreeNode, 53, "cuGraphAddMemFreeNode", GRAPH_FREE, GRAPH, SYNC)                  \
    X(cuGraphLaunch, 54, "cuGraphLaunch", GRAPH_LAUNCH, GRAPH, SYNC)                                \
    X(cuDeviceGraphMemTrim, 55, "cuDeviceGraphMemTrim", TRIM, GRAPH, SYNC)                          \
    X(graph_pool, 56, "graph_pool", ALLOC, GRAPH, SYNC)                                             \
    X(graph_pool_sample, 57, "cuDeviceGetGraphMemAttribute", SAMPLE, GRAPH, SYNC)                   \
    X(usage_sample, 58, "process_used", SAMPLE, NONE, SYNC)                                         \
    /* PyTorch's CUDA caching allocator, through its trace tracker (torch_trace.c); the event's op  \
     * and kind come from the trace entry (alloc/free/free_completed/oom of a block; alloc, free,   \
     * map, unmap of a segment; config) */                                                          \
    X(torch_allocator, 60, "CUDACachingAllocator", ALLOC, BLOCK, SYNC)                              \
    X(torch_snapshot, 61, "CUDACachingAllocator.snapshot", ALLOC, BLOCK, SYNC) /* there at attach */ \
    X(gpuledger_tag, 62, "gpuledger_tag", TAG, NONE, SYNC)                                          \
    /* CuPy's MemoryPool, through the gpuledger package's cupy.cuda.MemoryHook (_cupy.py): blocks and  \
     * segments as PyTorch's (gpuledger_pool_event) */                                              \
    X(cupy_pool, 63, "cupy.MemoryPool", ALLOC, BLOCK, SYNC)                                         \
    X(gpuledger_heap_register, 70, "gpuledger_heap_register", ALLOC, HEAP, SYNC)                    \
    X(gpuledger_heap_unregister, 71, "gpuledger_heap_unregister", FREE, HEAP, SYNC)                 \
    X(gpuledger_heap_reset, 72, "gpuledger_heap_reset", HEAP_RESET, HEAP, SYNC)                     \
    X(gpuledger_heap_page_size, 73, "gpuledger_heap_page_size", SET, HEAP, SYNC)                    \
    X(gpuledger_heap_name, 74, "gpuledger_heap_name", NAME, HEAP, SYNC)                             \
    X(gpuledger_region_alloc, 75, "gpuledger_region_alloc", ALLOC, REGION, SYNC)                    \
    X(gpuledger_region_free, 76, "gpuledger_region_free", FREE, REGION, SYNC)                       \
    X(gpuledger_region_resize, 77, "gpuledger_region_resize", RESIZE, REGION, SYNC)                 \
    X(gpuledger_region_used, 78, "gpuledger_region_used", SET, REGION, SYNC)                        \
    X(gpuledger_region_name, 79, "gpuledger_region_name", NAME, REGION, SYNC)                       \
    X(gpuledger_retention, 80, "gpuledger_retention", RETAIN, NONE, SYNC)

/* Identity tags (gpuledger_tag; column aux of a tag row), the categories
 * they give. The numbers are gpuledger.h's GPULEDGER_TAG_*. */
#define GL_TAGS(X)                                                                                  \
    X(PARAMETERS, 1, "parameters")                                                                  \
    X(GRADIENTS, 2, "gradients")                                                                    \
    X(OPTIMIZER_STATE, 3, "optimizer_state")                                                        \
    X(KV_CACHE, 4, "kv_cache")                                                                      \
    X(BUFFERS, 5, "buffers")

/* ---- derived: enums ------------------------------------------------------ */

enum gl_op_class { GL_OPC_ALLOC, GL_OPC_FREE, GL_OPC_CONTROL, GL_OPC_FAILURE, GL_OPC_ANNOTATION, GL_OPC_SAMPLE };
/* Where alloc-like and free-like operations pair (by address or handle). */
enum gl_space { GL_SPACE_NONE = -1, GL_SPACE_MEM, GL_SPACE_PHYS, GL_SPACE_VA, GL_SPACE_MAP, GL_NSPACES };
enum gl_layer { GL_LAYER_NONE, GL_LAYER_DEVICE, GL_LAYER_SUB, GL_LAYER_HOST, GL_LAYER_ADDRESS };
enum gl_order { GL_ORDER_SYNC, GL_ORDER_STREAM };

enum gl_op {
#define GL_X(name, id, text, cls, space) GL_OP_##name = id,
    GL_OPS(GL_X)
#undef GL_X
};

enum gl_kind {
#define GL_X(name, id, text, layer) GL_KIND_##name = id,
    GL_KINDS(GL_X)
#undef GL_X
};

enum gl_api {
    GL_API_NONE = 0,
#define GL_X(name, id, text, op, kind, order) GL_API_##name = id,
    GL_APIS(GL_X)
#undef GL_X
};

/* Highest number + 1 of each table (rows need not be in order): the size of
 * a union with one member of id + 1 bytes per row. */
union gl_op_ids_ {
#define GL_X(name, id, text, cls, space) char name[id + 1];
    GL_OPS(GL_X)
#undef GL_X
};
union gl_kind_ids_ {
#define GL_X(name, id, text, layer) char name[id + 1];
    GL_KINDS(GL_X)
#undef GL_X
};
union gl_api_ids_ {
#define GL_X(name, id, text, op, kind, order) char name[id + 1];
    GL_APIS(GL_X)
#undef GL_X
};
enum gl_tag {
#define GL_X(name, id, text) GL_TAG_##name = id,
    GL_TAGS(GL_X)
#undef GL_X
};
union gl_tag_ids_ {
#define GL_X(name, id, text) char name[id + 1];
    GL_TAGS(GL_X)
#undef GL_X
};
#define GL_TAG_COUNT ((int)sizeof(union gl_tag_ids_))
#define GL_OP_COUNT ((int)sizeof(union gl_op_ids_))
#define GL_KIND_COUNT ((int)sizeof(union gl_kind_ids_))
#define GL_API_COUNT ((int)sizeof(union gl_api_ids_))

/* Devices a run may use (0 .. GL_MAX_DEVICES - 1); other numbers count as
 * "unknown device". */
#define GL_MAX_DEVICES 64

/* A stack entry with this bit set is a Python frame, not a return address
 * (interpose/pyframes.h makes them, the writer names them). */
#define GL_PYFRAME_BIT (1ULL << 63)

/* ---- derived: predicates ------------------------------------------------- */

static inline int gl_op_class(int op)
{
    switch (op) {
#define GL_X(name, id, text, cls, space)                                                            \
    case id:                                                                                        \
        return GL_OPC_##cls;
        GL_OPS(GL_X)
#undef GL_X
    }
    return -1;
}

/* The space an alloc- or free-like op pairs in, GL_SPACE_NONE for others. */
static inline int gl_op_space(int op)
{
    switch (op) {
#define GL_X(name, id, text, cls, space)                                                            \
    case id:                                                                                        \
        return GL_SPACE_##space;
        GL_OPS(GL_X)
#undef GL_X
    }
    return GL_SPACE_NONE;
}

/* Alloc-like: memory, a physical handle, a VA range or a mapping begins. */
static inline int gl_op_is_alloc(int op)
{
    return gl_op_class(op) == GL_OPC_ALLOC;
}

/* Free-like: ends what an alloc-like op of the same space began. */
static inline int gl_op_is_free(int op)
{
    return gl_op_class(op) == GL_OPC_FREE;
}

static inline int gl_op_is_failure(int op)
{
    return gl_op_class(op) == GL_OPC_FAILURE;
}

static inline int gl_op_is_annotation(int op)
{
    return gl_op_class(op) == GL_OPC_ANNOTATION;
}

/* Where an alloc- or free-like event of this op and kind pairs: the op's
 * space, except that a sub-allocation (layer SUB) pairs only with its own
 * kind: a region may begin at the address where its heap, and the heap's
 * CUDA allocation, begin. Those spaces are GL_NSPACES + kind. */
#define GL_NPAIR_SPACES (GL_NSPACES + GL_KIND_COUNT)

/* The free-like op that ends an alloc-like op of `space`. */
static inline int gl_space_free_op(int space)
{
#define GL_X(name, id, text, cls, sp)                                                               \
    if (GL_OPC_##cls == GL_OPC_FREE && GL_SPACE_##sp == space)                                      \
        return id;
    GL_OPS(GL_X)
#undef GL_X
    return 0;
}

static inline int gl_kind_layer(int kind)
{
    switch (kind) {
#define GL_X(name, id, text, layer)                                                                 \
    case id:                                                                                        \
        return GL_LAYER_##layer;
        GL_KINDS(GL_X)
#undef GL_X
    }
    return GL_LAYER_NONE;
}

/* Device memory that counts toward what CUDA holds (not pinned host, not
 * address space, not sub-allocations inside counted memory). */
static inline int gl_kind_counts_on_device(int kind)
{
    return gl_kind_layer(kind) == GL_LAYER_DEVICE;
}

static inline int gl_event_space(int op, int kind)
{
    int space = gl_op_space(op);
    return space != GL_SPACE_NONE && gl_kind_layer(kind) == GL_LAYER_SUB ? GL_NSPACES + kind : space;
}

/* The operation a call of api records (0 for an unknown api). */
static inline int gl_api_op(int api)
{
    switch (api) {
#define GL_X(name, id, text, op, kind, order)                                                       \
    case id:                                                                                        \
        return GL_OP_##op;
        GL_APIS(GL_X)
#undef GL_X
    }
    return 0;
}

/* The memory kind a call of api records. */
static inline int gl_api_kind(int api)
{
    switch (api) {
#define GL_X(name, id, text, op, kind, order)                                                       \
    case id:                                                                                        \
        return GL_KIND_##kind;
        GL_APIS(GL_X)
#undef GL_X
    }
    return GL_KIND_NONE;
}

/* A stream-ordered (memory pool) call, whatever stream it names. */
static inline int gl_api_is_stream_ordered(int api)
{
    switch (api) {
#define GL_X(name, id, text, op, kind, order)                                                       \
    case id:                                                                                        \
        return GL_ORDER_##order == GL_ORDER_STREAM;
        GL_APIS(GL_X)
#undef GL_X
    }
    return 0;
}

/* Event flags. */
#define GL_EVF_TRUNCATED 0x1u /* the stack hit the depth limit */
#define GL_EVF_LABEL 0x4u     /* ips[] holds a NUL-terminated label, not a stack */
#define GL_EVF_TS_NS 0x8u     /* ts_ns is set already: stamp is not to be converted */
#define GL_EVF_USED 0x10u     /* a region event whose aux holds the region's used bytes */
/* a PyTorch block's free (op free, kind block) whose FREE_COMPLETED followed
 * at once on the same thread (no record_stream): one event for both */
#define GL_EVF_COMPLETED 0x20u
/* a retention path (api gpuledger_retention, store/retention.h): a bound
 * cut the search; its text was cut to fit the slot */
#define GL_EVF_INCOMPLETE 0x40u
#define GL_EVF_CUT 0x80u

/* One event. Built in place inside a queue slot; ips[] follows the header
 * and holds `depth` return addresses, innermost first (our own frames are
 * already removed). */
struct gl_event {
    union {
        uint64_t stamp; /* as recorded: a clock.c stamp (TSC ticks or ns, see clock.h) */
        uint64_t ts_ns; /* from the writer on: CLOCK_MONOTONIC ns (it converts in place) */
    };
    uint64_t addr;   /* device pointer, VA, or handle (cuMemCreate) */
    uint64_t size;   /* requested / mapped bytes; 0 if the API has none */
    uint64_t stream; /* CUstream / cudaStream_t, 0 = legacy default */
    uint64_t pool;   /* memory pool handle, 0 = device default / none */
    uint64_t aux;    /* map: handle; trim: bytes to keep */
    int32_t tid;
    int32_t device;  /* -1 when unknown */
    int32_t result;  /* CUDA error code, 0 = success */
    uint16_t api;    /* enum gl_api */
    uint8_t op;      /* enum gl_op */
    uint8_t kind;    /* enum gl_kind */
    uint16_t depth;
    uint16_t flags;
    uint32_t reserved;
    uintptr_t ips[];
};

const char *gl_op_name(int op);
const char *gl_kind_name(int kind);
const char *gl_api_name(int api);
const char *gl_tag_name(int tag); /* NULL for an unknown number */

#endif
