/* gl_event.h — the one record that travels from an application thread to the
 * writer thread, and the fixed vocabularies (operations, memory kinds, API
 * names) that both sides and the SQL schema share.
 *
 * The numeric values of GL_OP_*, GL_KIND_* and GL_API_* are stored in the
 * database and therefore part of the schema: append, never renumber. */
#ifndef GL_EVENT_H
#define GL_EVENT_H

#include <stdint.h>

/* Operations (column events.op). */
#define GL_OPS(X)                                                             \
    X(ALLOC, 1, "alloc")       /* memory handed out */                        \
    X(FREE, 2, "free")         /* memory given back */                        \
    X(MAP, 3, "map")           /* cuMemMap: physical handle mapped at a VA */ \
    X(UNMAP, 4, "unmap")                                                      \
    X(RESERVE, 5, "reserve")   /* cuMemAddressReserve */                      \
    X(UNRESERVE, 6, "unreserve")                                              \
    X(CREATE, 7, "create")     /* cuMemCreate: physical allocation handle */  \
    X(RELEASE, 8, "release")   /* cuMemRelease */                             \
    X(TRIM, 9, "trim")         /* cudaMemPoolTrimTo */                        \
    X(RESET, 10, "reset")      /* cudaDeviceReset */                          \
    X(OOM, 11, "oom")          /* an allocation that failed out-of-memory */  \
    X(ERROR, 12, "error")      /* any other failed call */                    \
    X(MARK, 13, "mark")        /* annotation: a point in time (e.g. a step) */                \
    X(SAMPLE, 14, "sample")    /* pool / device state: stored in *_samples */ \
    X(RANGE_PUSH, 15, "range_push") /* annotation range opened */              \
    X(RANGE_POP, 16, "range_pop")

enum gl_op {
#define GL_X(name, val, text) GL_OP_##name = val,
    GL_OPS(GL_X)
#undef GL_X
};

/* Memory kinds (column events.kind). */
#define GL_KINDS(X)                                                          \
    X(NONE, 0, "none")                                                       \
    X(DEVICE, 1, "device")       /* cudaMalloc / cuMemAlloc / pitch */       \
    X(ASYNC, 2, "async")         /* stream-ordered pool sub-allocation */    \
    X(MANAGED, 3, "managed")     /* unified memory */                        \
    X(HOST, 4, "host")           /* page-locked host memory */               \
    X(PHYSICAL, 5, "physical")   /* cuMemCreate handle (VMM) */              \
    X(VA, 6, "va")               /* reserved virtual address range */        \
    X(MAPPING, 7, "mapping")     /* a handle mapped into a VA range */       \
    X(STATIC, 8, "static")       /* module globals (from CUPTI) */

enum gl_kind {
#define GL_X(name, val, text) GL_KIND_##name = val,
    GL_KINDS(GL_X)
#undef GL_X
};

/* Every API we wrap, with the operation and memory kind it produces.
 * X(enum name, id, text name, op, kind). */
#define GL_APIS(X)                                                                  \
    X(cudaMalloc, 1, "cudaMalloc", ALLOC, DEVICE)                                   \
    X(cudaFree, 2, "cudaFree", FREE, NONE)                                          \
    X(cudaMallocAsync, 3, "cudaMallocAsync", ALLOC, ASYNC)                          \
    X(cudaFreeAsync, 4, "cudaFreeAsync", FREE, NONE)                                \
    X(cudaMallocFromPoolAsync, 5, "cudaMallocFromPoolAsync", ALLOC, ASYNC)          \
    X(cudaMallocManaged, 6, "cudaMallocManaged", ALLOC, MANAGED)                    \
    X(cudaMallocPitch, 7, "cudaMallocPitch", ALLOC, DEVICE)                         \
    X(cudaMallocHost, 8, "cudaMallocHost", ALLOC, HOST)                             \
    X(cudaHostAlloc, 9, "cudaHostAlloc", ALLOC, HOST)                               \
    X(cudaFreeHost, 10, "cudaFreeHost", FREE, NONE)                                 \
    X(cudaMemPoolTrimTo, 11, "cudaMemPoolTrimTo", TRIM, NONE)                       \
    X(cudaDeviceReset, 12, "cudaDeviceReset", RESET, NONE)                          \
    X(cuMemAlloc_v2, 13, "cuMemAlloc_v2", ALLOC, DEVICE)                            \
    X(cuMemAllocPitch_v2, 14, "cuMemAllocPitch_v2", ALLOC, DEVICE)                  \
    X(cuMemFree_v2, 15, "cuMemFree_v2", FREE, NONE)                                 \
    X(cuMemAllocAsync, 16, "cuMemAllocAsync", ALLOC, ASYNC)                         \
    X(cuMemFreeAsync, 17, "cuMemFreeAsync", FREE, NONE)                             \
    X(cuMemAllocFromPoolAsync, 18, "cuMemAllocFromPoolAsync", ALLOC, ASYNC)         \
    X(cuMemAllocManaged, 19, "cuMemAllocManaged", ALLOC, MANAGED)                   \
    X(cuMemCreate, 20, "cuMemCreate", CREATE, PHYSICAL)                             \
    X(cuMemRelease, 21, "cuMemRelease", RELEASE, PHYSICAL)                          \
    X(cuMemMap, 22, "cuMemMap", MAP, MAPPING)                                       \
    X(cuMemUnmap, 23, "cuMemUnmap", UNMAP, MAPPING)                                 \
    X(cuMemAddressReserve, 24, "cuMemAddressReserve", RESERVE, VA)                  \
    X(cuMemAddressFree, 25, "cuMemAddressFree", UNRESERVE, VA)                      \
    X(cudaMallocAsync_ptsz, 26, "cudaMallocAsync_ptsz", ALLOC, ASYNC)               \
    X(cudaFreeAsync_ptsz, 27, "cudaFreeAsync_ptsz", FREE, NONE)                     \
    X(cudaMallocFromPoolAsync_ptsz, 28, "cudaMallocFromPoolAsync_ptsz", ALLOC, ASYNC) \
    X(cuMemAllocAsync_ptsz, 29, "cuMemAllocAsync_ptsz", ALLOC, ASYNC)               \
    X(cuMemFreeAsync_ptsz, 30, "cuMemFreeAsync_ptsz", FREE, NONE)                   \
    X(cuMemAllocFromPoolAsync_ptsz, 31, "cuMemAllocFromPoolAsync_ptsz", ALLOC, ASYNC) \
    X(cuMemAllocHost_v2, 32, "cuMemAllocHost_v2", ALLOC, HOST)                      \
    X(cuMemHostAlloc, 33, "cuMemHostAlloc", ALLOC, HOST)                            \
    X(cuMemFreeHost, 34, "cuMemFreeHost", FREE, NONE)                               \
    X(gpuledger_mark, 35, "gpuledger_mark", MARK, NONE)                             \
    X(cupti_static, 36, "module_static", ALLOC, STATIC)                            \
    X(cupti_static_free, 37, "module_static_release", FREE, STATIC)              \
    X(pool_sample, 38, "cudaMemPoolGetAttribute", SAMPLE, NONE)                   \
    X(device_sample, 39, "cudaMemGetInfo", SAMPLE, NONE)                          \
    X(gpuledger_range_push, 40, "gpuledger_range_push", RANGE_PUSH, NONE)         \
    X(gpuledger_range_pop, 41, "gpuledger_range_pop", RANGE_POP, NONE)

enum gl_api {
    GL_API_NONE = 0,
#define GL_X(name, id, text, op, kind) GL_API_##name = id,
    GL_APIS(GL_X)
#undef GL_X
    GL_API_COUNT
};

/* Event flags. */
#define GL_EVF_TRUNCATED 0x1u /* the stack hit the depth limit */
#define GL_EVF_NESTED 0x2u    /* seen under another wrapped call (not recorded) */
#define GL_EVF_LABEL 0x4u     /* ips[] holds a NUL-terminated label, not a stack */
#define GL_EVF_TS_NS 0x8u     /* ts_ns is nanoseconds already, not a clock.c stamp */

/* One event. Built in place inside a queue slot; ips[] follows the header
 * and holds `depth` return addresses, innermost first (our own frames are
 * already removed). */
struct gl_event {
    uint64_t ts_ns;  /* CLOCK_MONOTONIC */
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

#endif
