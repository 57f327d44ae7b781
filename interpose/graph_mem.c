/* graph_mem.c — see graph_mem.h. The set of executable graphs is an
 * open-addressing table of fixed size: keys are never removed (an entry is
 * emptied by setting its value to NULL), so a lookup is a probe of plain
 * atomic loads. Entries are written at instantiation and read at launch;
 * CUDA forbids launching an executable graph while it is being destroyed,
 * so an entry is freed only when its executable graph is destroyed or
 * replaced. */
#include "graph_mem.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "capture_gate.h"
#include "clock.h"
#include "cuda_extra.h"
#include "gl_event.h"
#include "real.h"
#include "state.h"

/* ---- stream capture -------------------------------------------------------- */

typedef CUresult (*capture_info_v3_fn)(CUstream, CUstreamCaptureStatus *, cuuint64_t *, CUgraph *,
                                       const CUgraphNode **, const CUgraphEdgeData **, size_t *);
typedef CUresult (*capture_info_v2_fn)(CUstream, CUstreamCaptureStatus *, cuuint64_t *, CUgraph *,
                                       const CUgraphNode **, size_t *);

/* The capture status of a stream and the graph it captures into. */
static CUstreamCaptureStatus capture_info(uint64_t stream, int per_thread, uint64_t *graph)
{
    static void *v3, *v2;
    static int tried;
    if (!__atomic_load_n(&tried, __ATOMIC_ACQUIRE)) {
        __atomic_store_n(&v3, gl_driver_sym("cuStreamGetCaptureInfo_v3"), __ATOMIC_RELAXED);
        __atomic_store_n(&v2, gl_driver_sym("cuStreamGetCaptureInfo_v2"), __ATOMIC_RELAXED);
        __atomic_store_n(&tried, 1, __ATOMIC_RELEASE);
    }
    CUstream s = per_thread && stream == 0 ? CU_STREAM_PER_THREAD : (CUstream)(uintptr_t)stream;
    CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;
    CUgraph g = NULL;
    capture_info_v3_fn f3 = (capture_info_v3_fn)__atomic_load_n(&v3, __ATOMIC_RELAXED);
    capture_info_v2_fn f2 = (capture_info_v2_fn)__atomic_load_n(&v2, __ATOMIC_RELAXED);
    CUresult r = f3 ? f3(s, &st, NULL, &g, NULL, NULL, NULL) : f2 ? f2(s, &st, NULL, &g, NULL, NULL)
                                                                  : CUDA_ERROR_NOT_FOUND;
    if (r != CUDA_SUCCESS)
        return CU_STREAM_CAPTURE_STATUS_NONE;
    *graph = (uint64_t)(uintptr_t)g;
    return st;
}

int gl_stream_capturing(uint64_t stream, int per_thread)
{
    uint64_t g;
    return capture_info(stream, per_thread, &g) != CU_STREAM_CAPTURE_STATUS_NONE;
}

void gl_capture_mark_slow(struct gl_call *c, int per_thread, int op)
{
    uint64_t graph = 0;
    if (capture_info(c->stream, per_thread, &graph) != CU_STREAM_CAPTURE_STATUS_ACTIVE)
        return;
    c->op = op;
    c->kind = GL_KIND_GRAPH;
    c->aux = graph;
}

/* ---- executable graphs ------------------------------------------------------ */

#define EXEC_SLOTS 16384 /* distinct executable-graph addresses a run may hold memory nodes at */

static _Atomic uint64_t exec_keys[EXEC_SLOTS];
static struct gl_graph_exec *_Atomic exec_vals[EXEC_SLOTS];
static _Atomic int exec_live; /* entries with a value */

static size_t slot_of(uint64_t exec)
{
    uint64_t h = exec * 0x9e3779b97f4a7c15ULL;
    return (size_t)(h >> 40) & (EXEC_SLOTS - 1);
}

/* The slot holding `exec`, or claim an empty one (claim); -1 if none. */
static long find_slot(uint64_t exec, int claim)
{
    size_t i = slot_of(exec);
    for (size_t probes = 0; probes < EXEC_SLOTS; probes++, i = (i + 1) & (EXEC_SLOTS - 1)) {
        uint64_t k = atomic_load_explicit(&exec_keys[i], memory_order_acquire);
        if (k == exec)
            return (long)i;
        if (k == 0) {
            if (!claim)
                return -1;
            if (atomic_compare_exchange_strong(&exec_keys[i], &k, exec) || k == exec)
                return (long)i;
        }
    }
    return -1;
}

static void put(long slot, struct gl_graph_exec *e)
{
    struct gl_graph_exec *old = atomic_exchange(&exec_vals[slot], e);
    atomic_fetch_add(&exec_live, (e != NULL) - (old != NULL));
    free(old);
}

const struct gl_graph_exec *gl_graph_exec_find(uint64_t exec)
{
    if (!atomic_load_explicit(&exec_live, memory_order_relaxed) || !exec)
        return NULL;
    long slot = find_slot(exec, 0);
    return slot < 0 ? NULL : atomic_load_explicit(&exec_vals[slot], memory_order_acquire);
}

void gl_graph_exec_destroyed(uint64_t exec)
{
    if (!atomic_load_explicit(&exec_live, memory_order_relaxed) || !exec)
        return;
    long slot = find_slot(exec, 0);
    if (slot >= 0)
        put(slot, NULL);
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

typedef CUresult (*get_nodes_fn)(CUgraph, CUgraphNode *, size_t *);
typedef CUresult (*node_type_fn)(CUgraphNode, CUgraphNodeType *);
typedef CUresult (*alloc_params_fn)(CUgraphNode, CUDA_MEM_ALLOC_NODE_PARAMS *);
typedef CUresult (*free_params_fn)(CUgraphNode, CUdeviceptr *);

/* The memory nodes of a graph: allocations (address, size, device) and
 * freed addresses. Returns 0 and fills the caller's arrays (malloc'd). */
static int memory_nodes(CUgraph graph, struct gl_graph_node **allocs, int **devs, size_t *na, uint64_t **frees,
                        size_t *nf)
{
    get_nodes_fn get_nodes = (get_nodes_fn)gl_driver_sym("cuGraphGetNodes");
    node_type_fn node_type = (node_type_fn)gl_driver_sym("cuGraphNodeGetType");
    alloc_params_fn alloc_params = (alloc_params_fn)gl_driver_sym("cuGraphMemAllocNodeGetParams");
    free_params_fn free_params = (free_params_fn)gl_driver_sym("cuGraphMemFreeNodeGetParams");
    size_t n = 0;
    *na = *nf = 0;
    if (!get_nodes || !node_type || !alloc_params || !free_params || get_nodes(graph, NULL, &n) != CUDA_SUCCESS ||
        n == 0)
        return -1;
    CUgraphNode *nodes = malloc(n * sizeof(CUgraphNode)); /* handles: pointers */
    *allocs = malloc(n * sizeof **allocs);
    *devs = malloc(n * sizeof **devs);
    *frees = malloc(n * sizeof **frees);
    if (!nodes || !*allocs || !*devs || !*frees || get_nodes(graph, nodes, &n) != CUDA_SUCCESS) {
        free(nodes);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        CUgraphNodeType t;
        if (node_type(nodes[i], &t) != CUDA_SUCCESS)
            continue;
        if (t == CU_GRAPH_NODE_TYPE_MEM_ALLOC) {
            CUDA_MEM_ALLOC_NODE_PARAMS p;
            memset(&p, 0, sizeof p);
            if (alloc_params(nodes[i], &p) != CUDA_SUCCESS)
                continue;
            (*allocs)[*na] = (struct gl_graph_node){p.dptr, p.bytesize};
            (*devs)[(*na)++] = p.poolProps.location.type == CU_MEM_LOCATION_TYPE_DEVICE ? p.poolProps.location.id : -1;
        } else if (t == CU_GRAPH_NODE_TYPE_MEM_FREE) {
            CUdeviceptr d = 0;
            if (free_params(nodes[i], &d) == CUDA_SUCCESS)
                (*frees)[(*nf)++] = d;
        }
    }
    free(nodes);
    return 0;
}

void gl_graph_instantiated(uint64_t exec, uint64_t graph, int device)
{
    struct gl_graph_node *allocs = NULL;
    int *devs = NULL;
    uint64_t *frees = NULL;
    size_t na = 0, nf = 0;
    struct gl_graph_exec *e = NULL;
    if (memory_nodes((CUgraph)(uintptr_t)graph, &allocs, &devs, &na, &frees, &nf) == 0 && (na || nf)) {
        /* what the launch leaves live, and what it frees of others' */
        uint64_t *alloc_addrs = malloc((na ? na : 1) * sizeof *alloc_addrs);
        e = calloc(1, sizeof *e + na * sizeof *e->allocs + nf * sizeof *e->frees);
        if (alloc_addrs && e) {
            for (size_t i = 0; i < na; i++)
                alloc_addrs[i] = allocs[i].addr;
            qsort(alloc_addrs, na, sizeof *alloc_addrs, cmp_u64);
            qsort(frees, nf, sizeof *frees, cmp_u64);
            e->allocs = (struct gl_graph_node *)(e + 1);
            e->frees = (uint64_t *)(e->allocs + na);
            e->device = na && devs[0] >= 0 ? devs[0] : device;
            for (size_t i = 0; i < na; i++)
                if (!bsearch(&allocs[i].addr, frees, nf, sizeof *frees, cmp_u64))
                    e->allocs[e->nallocs++] = allocs[i];
            for (size_t i = 0; i < nf; i++)
                if (!bsearch(&frees[i], alloc_addrs, na, sizeof *alloc_addrs, cmp_u64))
                    e->frees[e->nfrees++] = frees[i];
        } else {
            free(e);
            e = NULL;
        }
        free(alloc_addrs);
    }
    free(allocs);
    free(devs);
    free(frees);
    long slot = find_slot(exec, e != NULL);
    if (slot >= 0) {
        put(slot, e); /* a graph without memory nodes empties a reused address's entry */
    } else if (e) {
        static _Atomic int warned;
        if (!atomic_exchange(&warned, 1))
            gl_warn("more than %d executable graphs with memory nodes; the graph memory of later ones is not "
                    "recorded",
                    EXEC_SLOTS);
        free(e);
    }
}

/* ---- the device's graph memory pool ------------------------------------------ */

typedef CUresult (*graph_attr_fn)(CUdevice, CUgraphMem_attribute, void *);

static _Atomic uint64_t last_reserved[GL_MAX_DEVICES], last_high[GL_MAX_DEVICES];

int gl_graph_pool_sample(int device, uint64_t *reserved)
{
    static void *fn;
    *reserved = 0;
    graph_attr_fn attr = (graph_attr_fn)__atomic_load_n(&fn, __ATOMIC_ACQUIRE);
    if (!attr) {
        attr = (graph_attr_fn)gl_driver_sym("cuDeviceGetGraphMemAttribute");
        if (!attr)
            return 0;
        __atomic_store_n(&fn, (void *)attr, __ATOMIC_RELEASE);
    }
    if (device < 0 || device >= GL_MAX_DEVICES)
        return 0;
    /* a stream capturing: the last reservation read stands (capture_gate.h) */
    *reserved = atomic_load(&last_reserved[device]);
    if (!gl_own_call_begin())
        return 0;
    cuuint64_t res = 0, high = 0, used = 0, used_high = 0;
    if (attr(device, CU_GRAPH_MEM_ATTR_RESERVED_MEM_CURRENT, &res) != CUDA_SUCCESS ||
        attr(device, CU_GRAPH_MEM_ATTR_RESERVED_MEM_HIGH, &high) != CUDA_SUCCESS) {
        gl_own_call_end();
        return 0;
    }
    *reserved = res;
    uint64_t old_res = atomic_exchange(&last_reserved[device], res);
    uint64_t old_high = atomic_exchange(&last_high[device], high);
    if (old_res == res && old_high == high) {
        gl_own_call_end();
        return 0;
    }
    attr(device, CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT, &used);
    attr(device, CU_GRAPH_MEM_ATTR_USED_MEM_HIGH, &used_high);
    gl_own_call_end();
    /* internal encoding, named by the store's graph_pool_samples columns */
    struct gl_call c = {.api = GL_API_graph_pool_sample, .device = device, .size = res, .aux = used,
                        .addr = high, .pool = used_high};
    gl_record_state(&c, gl_stamp());
    return 1;
}
