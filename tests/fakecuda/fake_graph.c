/* fake_graph.c — stream capture, CUDA graphs with memory nodes and the
 * device's graph memory pool in the fake driver, by fixed rules:
 *  - cuMemAllocAsync / cuMemAllocFromPoolAsync / cuMemFreeAsync on a stream
 *    that is capturing add a memory node to the capture's graph instead of
 *    running (an allocation node gets its address at once, fixed for the
 *    graph's life); cuGraphAddMemAllocNode / cuGraphAddMemFreeNode add them
 *    by hand;
 *  - each graph allocation takes its size rounded up to 2 MiB from the
 *    device's graph pool;
 *  - a launch walks the graph's nodes in the order they were added: the
 *    pool's use rises at each allocation and falls at each free (a free of
 *    an address the graph did not allocate ends that allocation: a graph
 *    allocation left by an earlier launch, or a stream-ordered pool one);
 *    the pool's reservation grows to the highest use seen (charged to the
 *    device at the launch, in whole 2 MiB units) and never shrinks by
 *    itself. Allocations the graph does not free stay live after the
 *    launch, until cuMemFree(Async) or a graph's free node ends them;
 *  - relaunching a graph whose last allocations are still live fails with
 *    CUDA_ERROR_INVALID_VALUE unless it was instantiated with
 *    CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH (then they are freed
 *    first);
 *  - cuDeviceGraphMemTrim releases the reservation down to the bytes in use;
 *  - the first launch on a device (a graph or a kernel) also reserves the
 *    device's local memory (fake_driver.c's fixed overhead);
 *  - stream capture follows CUDA's rules on potentially unsafe calls
 *    (cuda_runtime_api.h, cudaThreadExchangeStreamCaptureMode): each thread
 *    has a mode (global by default; cuThreadExchangeStreamCaptureMode swaps
 *    it); a thread in global mode is barred while it has a capture not
 *    begun in relaxed mode, or while another thread has one begun in global
 *    mode; in thread-local mode only by its own; in relaxed mode never. A
 *    barred call fails with CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED and
 *    invalidates the captures that barred it: their streams then refuse
 *    work (CUDA_ERROR_STREAM_CAPTURE_INVALIDATED), report status
 *    invalidated, and their cuStreamEndCapture returns that error and no
 *    graph. The fake's potentially unsafe calls (fake_capture_unsafe):
 *    the synchronous allocations and frees (cudaMalloc is CUDA's example:
 *    cuMemAlloc, cuMemAllocPitch, cuMemAllocManaged, cuMemAllocHost,
 *    cuMemHostAlloc, cuMemFree, cuMemFreeHost, the array creates and
 *    destroys), cuCtxSynchronize, a cuStreamSynchronize of a capturing
 *    stream, and the device-memory queries cuMemGetInfo,
 *    cuMemPoolGetAttribute and cuDeviceGetGraphMemAttribute (on the H200,
 *    a pool or device query made after a captured cudaMallocAsync
 *    invalidated the capture: the fake holds every such query to the rule).
 *    A capture cannot begin on the legacy stream, must end on its thread
 *    unless relaxed (CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD), and a capture
 *    query of the legacy stream while a stream captures answers
 *    CUDA_ERROR_STREAM_CAPTURE_IMPLICIT, leaving the capture alone.
 * Everything is reachable from globals until exit (nothing "leaks"). */
#include <cupti_callbacks.h>
#include <cupti_driver_cbid.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "fake_internal.h"

#define GRAPH_GRAN ((size_t)2 << 20)
#define MAX_CAPTURES 64

enum { NODE_EMPTY = CU_GRAPH_NODE_TYPE_EMPTY, NODE_ALLOC = CU_GRAPH_NODE_TYPE_MEM_ALLOC,
       NODE_FREE = CU_GRAPH_NODE_TYPE_MEM_FREE };

struct fnode {
    int type, dev;
    CUdeviceptr dptr;
    size_t request, bytes;
    int live;     /* an allocation left by a launch, not freed yet */
    int inflight; /* during a launch walk */
    int external; /* a free node that ended a stream-ordered pool allocation */
    struct fnode *next_all;
};

struct fgraph {
    struct fnode **nodes;
    size_t n, cap;
    struct fgraph *next_all;
};

struct fexec {
    struct fnode **nodes; /* a copy of the graph's node list */
    size_t n;
    int dev, destroyed;
    unsigned long long flags;
    struct fexec *next_all;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct fnode *all_nodes;
static struct fgraph *all_graphs;
static struct fexec *all_execs;
static struct {
    size_t reserved, used, reserved_high, used_high;
} gpool[FAKE_MAX_DEVICES];
static struct {
    CUstream stream;
    struct fgraph *graph;
    cuuint64_t id;
    CUstreamCaptureMode mode;
    pthread_t owner; /* the thread that began it */
    int invalid;     /* a barred call invalidated it */
} captures[MAX_CAPTURES];
static __thread CUstreamCaptureMode thread_mode; /* CU_STREAM_CAPTURE_MODE_GLOBAL (0) */
static cuuint64_t next_capture_id = 1;
static _Atomic int ncaptures; /* streams capturing: stream-ordered calls look no further while 0 */

/* like a well-behaved library: never hand a fork child a held lock (no
 * other lock is ever taken while this one is held) */
static void fork_prepare(void)
{
    pthread_mutex_lock(&lock);
}

static void fork_release(void)
{
    pthread_mutex_unlock(&lock);
}

__attribute__((constructor)) static void fork_handlers(void)
{
    pthread_atfork(fork_prepare, fork_release, fork_release);
}

static struct fgraph *new_graph(void)
{
    struct fgraph *g = calloc(1, sizeof *g);
    if (!g)
        abort();
    g->next_all = all_graphs;
    all_graphs = g;
    return g;
}

static struct fnode *add_node(struct fgraph *g, int type)
{
    struct fnode *n = calloc(1, sizeof *n);
    if (!n)
        abort();
    n->type = type;
    n->next_all = all_nodes;
    all_nodes = n;
    if (g->n == g->cap) {
        g->cap = g->cap ? g->cap * 2 : 16;
        g->nodes = realloc(g->nodes, g->cap * sizeof *g->nodes);
        if (!g->nodes)
            abort();
    }
    g->nodes[g->n++] = n;
    return n;
}

/* An allocation node: its address is reserved now, for the graph's life. */
static CUresult add_alloc(struct fgraph *g, size_t request, int dev, CUdeviceptr *out, struct fnode **node)
{
    if (!g || !request || !out || dev < 0 || dev >= fake_device_count())
        return CUDA_ERROR_INVALID_VALUE;
    size_t bytes = (request + GRAPH_GRAN - 1) / GRAPH_GRAN * GRAPH_GRAN;
    void *va = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (va == MAP_FAILED)
        return CUDA_ERROR_OUT_OF_MEMORY;
    struct fnode *n = add_node(g, NODE_ALLOC);
    n->dev = dev;
    n->request = request;
    n->bytes = bytes;
    n->dptr = (CUdeviceptr)(uintptr_t)va;
    *out = n->dptr;
    if (node)
        *node = n;
    return CUDA_SUCCESS;
}

/* The capture slot of stream s (-1: not capturing). */
static int capture_slot(CUstream s)
{
    for (int i = 0; i < MAX_CAPTURES; i++)
        if (captures[i].graph && captures[i].stream == s)
            return i;
    return -1;
}

static struct fgraph *capturing(CUstream s, cuuint64_t *id)
{
    int i = capture_slot(s);
    if (i < 0)
        return NULL;
    if (id)
        *id = captures[i].id;
    return captures[i].graph;
}

static int is_legacy(CUstream s)
{
    return s == NULL || s == CU_STREAM_LEGACY;
}

CUresult fake_capture_unsafe(const char *what)
{
    if (!atomic_load_explicit(&ncaptures, memory_order_relaxed) || thread_mode == CU_STREAM_CAPTURE_MODE_RELAXED)
        return CUDA_SUCCESS;
    int barred = 0;
    pthread_mutex_lock(&lock);
    for (int i = 0; i < MAX_CAPTURES; i++) {
        if (!captures[i].graph)
            continue;
        int mine = pthread_equal(captures[i].owner, pthread_self());
        if ((mine && captures[i].mode != CU_STREAM_CAPTURE_MODE_RELAXED) ||
            (!mine && thread_mode == CU_STREAM_CAPTURE_MODE_GLOBAL && captures[i].mode == CU_STREAM_CAPTURE_MODE_GLOBAL)) {
            captures[i].invalid = 1;
            barred = 1;
        }
    }
    pthread_mutex_unlock(&lock);
    if (barred && getenv("FAKECUDA_DEBUG"))
        fprintf(stderr, "fakecuda: %s during a stream capture: capture invalidated\n", what);
    return barred ? CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED : CUDA_SUCCESS;
}

CUresult cuThreadExchangeStreamCaptureMode(CUstreamCaptureMode *mode)
{
    if (!mode || (unsigned)*mode > CU_STREAM_CAPTURE_MODE_RELAXED)
        return CUDA_ERROR_INVALID_VALUE;
    CUstreamCaptureMode old = thread_mode;
    thread_mode = *mode;
    *mode = old;
    return CUDA_SUCCESS;
}

int fake_capture_stream(CUstream s, CUresult *r)
{
    if (!atomic_load_explicit(&ncaptures, memory_order_relaxed))
        return 0;
    pthread_mutex_lock(&lock);
    int i = capture_slot(s);
    if (i >= 0)
        *r = captures[i].invalid ? CUDA_ERROR_STREAM_CAPTURE_INVALIDATED : CUDA_SUCCESS;
    pthread_mutex_unlock(&lock);
    return i >= 0;
}

int fake_capture_sync(CUstream s, CUresult *r)
{
    if (!atomic_load_explicit(&ncaptures, memory_order_relaxed))
        return 0;
    pthread_mutex_lock(&lock);
    int i = capture_slot(s);
    if (i >= 0) {
        captures[i].invalid = 1; /* waiting for work that does not run */
        *r = CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    }
    pthread_mutex_unlock(&lock);
    return i >= 0;
}

int fake_capture_alloc(CUstream s, size_t size, CUdeviceptr *out, CUresult *r)
{
    if (!atomic_load_explicit(&ncaptures, memory_order_relaxed))
        return 0;
    pthread_mutex_lock(&lock);
    int i = capture_slot(s);
    if (i >= 0)
        *r = captures[i].invalid ? CUDA_ERROR_STREAM_CAPTURE_INVALIDATED
                                 : add_alloc(captures[i].graph, size, fake_current_device(), out, NULL);
    pthread_mutex_unlock(&lock);
    return i >= 0;
}

int fake_capture_free(CUstream s, CUdeviceptr ptr, CUresult *r)
{
    if (!atomic_load_explicit(&ncaptures, memory_order_relaxed))
        return 0;
    pthread_mutex_lock(&lock);
    int i = capture_slot(s);
    if (i >= 0 && captures[i].invalid) {
        *r = CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
    } else if (i >= 0) {
        struct fnode *n = add_node(captures[i].graph, NODE_FREE);
        n->dptr = ptr;
        *r = CUDA_SUCCESS;
    }
    pthread_mutex_unlock(&lock);
    return i >= 0;
}

static struct fnode *live_at(CUdeviceptr ptr)
{
    for (struct fnode *n = all_nodes; n; n = n->next_all)
        if (n->type == NODE_ALLOC && n->live && n->dptr == ptr)
            return n;
    return NULL;
}

int fake_graph_free(CUdeviceptr ptr)
{
    pthread_mutex_lock(&lock);
    struct fnode *n = live_at(ptr);
    if (n) {
        n->live = 0;
        gpool[n->dev].used -= n->bytes;
    }
    pthread_mutex_unlock(&lock);
    return n != NULL;
}

/* ---- capture -------------------------------------------------------------- */

static CUresult begin_capture(CUstream s, struct fgraph *into, CUstreamCaptureMode mode)
{
    if (is_legacy(s))
        return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    if ((unsigned)mode > CU_STREAM_CAPTURE_MODE_RELAXED)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = CUDA_ERROR_ILLEGAL_STATE;
    pthread_mutex_lock(&lock);
    if (!capturing(s, NULL))
        for (int i = 0; i < MAX_CAPTURES; i++)
            if (!captures[i].graph) {
                captures[i].stream = s;
                captures[i].graph = into ? into : new_graph();
                captures[i].id = next_capture_id++;
                captures[i].mode = mode;
                captures[i].owner = pthread_self();
                captures[i].invalid = 0;
                atomic_fetch_add(&ncaptures, 1);
                r = CUDA_SUCCESS;
                break;
            }
    pthread_mutex_unlock(&lock);
    return r;
}

CUresult cuStreamBeginCapture_v2(CUstream s, CUstreamCaptureMode mode)
{
    return begin_capture(s, NULL, mode);
}

CUresult cuStreamBeginCapture_v2_ptsz(CUstream s, CUstreamCaptureMode mode)
{
    return cuStreamBeginCapture_v2(s, mode);
}

CUresult cuStreamBeginCaptureToGraph(CUstream s, CUgraph g, const CUgraphNode *deps, const CUgraphEdgeData *data,
                                     size_t ndeps, CUstreamCaptureMode mode)
{
    (void)deps;
    (void)data;
    (void)ndeps;
    return g ? begin_capture(s, (struct fgraph *)g, mode) : CUDA_ERROR_INVALID_VALUE;
}

CUresult cuStreamBeginCaptureToGraph_ptsz(CUstream s, CUgraph g, const CUgraphNode *deps,
                                          const CUgraphEdgeData *data, size_t ndeps, CUstreamCaptureMode mode)
{
    return cuStreamBeginCaptureToGraph(s, g, deps, data, ndeps, mode);
}

CUresult cuStreamEndCapture(CUstream s, CUgraph *out)
{
    CUresult r = CUDA_ERROR_ILLEGAL_STATE;
    pthread_mutex_lock(&lock);
    int i = capture_slot(s);
    if (i >= 0 && captures[i].mode != CU_STREAM_CAPTURE_MODE_RELAXED &&
        !pthread_equal(captures[i].owner, pthread_self())) {
        r = CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD;
    } else if (i >= 0) {
        r = captures[i].invalid ? CUDA_ERROR_STREAM_CAPTURE_INVALIDATED : CUDA_SUCCESS;
        if (out)
            *out = r == CUDA_SUCCESS ? (CUgraph)captures[i].graph : NULL;
        captures[i].graph = NULL;
        atomic_fetch_sub(&ncaptures, 1);
    }
    pthread_mutex_unlock(&lock);
    return r;
}

CUresult cuStreamEndCapture_ptsz(CUstream s, CUgraph *out)
{
    return cuStreamEndCapture(s, out);
}

/* A stream's status; CUDA_ERROR_STREAM_CAPTURE_IMPLICIT for the legacy
 * stream while any stream captures. */
static CUresult status_of(CUstream s, CUstreamCaptureStatus *st, cuuint64_t *id, struct fgraph **graph)
{
    if (is_legacy(s) && atomic_load(&ncaptures))
        return CUDA_ERROR_STREAM_CAPTURE_IMPLICIT;
    pthread_mutex_lock(&lock);
    int i = capture_slot(s);
    *st = i < 0 ? CU_STREAM_CAPTURE_STATUS_NONE
                : captures[i].invalid ? CU_STREAM_CAPTURE_STATUS_INVALIDATED : CU_STREAM_CAPTURE_STATUS_ACTIVE;
    *id = i < 0 ? 0 : captures[i].id;
    *graph = i < 0 ? NULL : captures[i].graph;
    pthread_mutex_unlock(&lock);
    return CUDA_SUCCESS;
}

CUresult cuStreamIsCapturing(CUstream s, CUstreamCaptureStatus *st)
{
    cuuint64_t id;
    struct fgraph *g;
    return st ? status_of(s, st, &id, &g) : CUDA_ERROR_INVALID_VALUE;
}

CUresult cuStreamIsCapturing_ptsz(CUstream s, CUstreamCaptureStatus *st)
{
    return cuStreamIsCapturing(s, st);
}

CUresult cuStreamGetCaptureInfo_v3(CUstream s, CUstreamCaptureStatus *st, cuuint64_t *id, CUgraph *graph,
                                   const CUgraphNode **deps, const CUgraphEdgeData **edges, size_t *ndeps)
{
    if (!st)
        return CUDA_ERROR_INVALID_VALUE;
    cuuint64_t cid = 0;
    struct fgraph *g = NULL;
    CUresult r = status_of(s, st, &cid, &g);
    if (r != CUDA_SUCCESS)
        return r;
    if (id)
        *id = cid;
    if (graph)
        *graph = (CUgraph)g;
    if (deps)
        *deps = NULL;
    if (edges)
        *edges = NULL;
    if (ndeps)
        *ndeps = 0;
    return CUDA_SUCCESS;
}

CUresult cuStreamGetCaptureInfo_v3_ptsz(CUstream s, CUstreamCaptureStatus *st, cuuint64_t *id, CUgraph *graph,
                                        const CUgraphNode **deps, const CUgraphEdgeData **edges, size_t *ndeps)
{
    return cuStreamGetCaptureInfo_v3(s, st, id, graph, deps, edges, ndeps);
}

CUresult cuStreamGetCaptureInfo_v2(CUstream s, CUstreamCaptureStatus *st, cuuint64_t *id, CUgraph *graph,
                                   const CUgraphNode **deps, size_t *ndeps)
{
    return cuStreamGetCaptureInfo_v3(s, st, id, graph, deps, NULL, ndeps);
}

/* ---- graphs and nodes ----------------------------------------------------- */

CUresult cuGraphCreate(CUgraph *g, unsigned int flags)
{
    (void)flags;
    if (!g)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&lock);
    *g = (CUgraph)new_graph();
    pthread_mutex_unlock(&lock);
    return CUDA_SUCCESS;
}

CUresult cuGraphDestroy(CUgraph g)
{
    return g ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE; /* kept: nodes may still be live */
}

CUresult cuGraphAddEmptyNode(CUgraphNode *node, CUgraph g, const CUgraphNode *deps, size_t ndeps)
{
    (void)deps;
    (void)ndeps;
    if (!node || !g)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&lock);
    *node = (CUgraphNode)add_node((struct fgraph *)g, NODE_EMPTY);
    pthread_mutex_unlock(&lock);
    return CUDA_SUCCESS;
}

CUresult cuGraphAddMemAllocNode(CUgraphNode *node, CUgraph g, const CUgraphNode *deps, size_t ndeps,
                                CUDA_MEM_ALLOC_NODE_PARAMS *p)
{
    struct {
        CUgraphNode *node;
        CUgraph g;
        const CUgraphNode *deps;
        size_t ndeps;
        CUDA_MEM_ALLOC_NODE_PARAMS *p;
    } params = {node, g, deps, ndeps, p};
    CUresult r = CUDA_SUCCESS;
    FAKE_CUPTI_SITE(CUPTI_DRIVER_TRACE_CBID_cuGraphAddMemAllocNode, "cuGraphAddMemAllocNode", &params,
                    CUPTI_API_ENTER, &r);
    if (!node || !g || !p || p->poolProps.location.type != CU_MEM_LOCATION_TYPE_DEVICE) {
        r = CUDA_ERROR_INVALID_VALUE;
    } else {
        struct fnode *n = NULL;
        pthread_mutex_lock(&lock);
        r = add_alloc((struct fgraph *)g, p->bytesize, p->poolProps.location.id, &p->dptr, &n);
        pthread_mutex_unlock(&lock);
        if (r == CUDA_SUCCESS)
            *node = (CUgraphNode)n;
    }
    FAKE_CUPTI_SITE(CUPTI_DRIVER_TRACE_CBID_cuGraphAddMemAllocNode, "cuGraphAddMemAllocNode", &params,
                    CUPTI_API_EXIT, &r);
    return r;
}

CUresult cuGraphAddMemFreeNode(CUgraphNode *node, CUgraph g, const CUgraphNode *deps, size_t ndeps,
                               CUdeviceptr dptr)
{
    (void)deps;
    (void)ndeps;
    if (!node || !g || !dptr)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&lock);
    struct fnode *n = add_node((struct fgraph *)g, NODE_FREE);
    n->dptr = dptr;
    *node = (CUgraphNode)n;
    pthread_mutex_unlock(&lock);
    return CUDA_SUCCESS;
}

CUresult cuGraphGetNodes(CUgraph g, CUgraphNode *nodes, size_t *num)
{
    if (!g || !num)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&lock);
    struct fgraph *fg = (struct fgraph *)g;
    if (nodes) {
        size_t k = *num < fg->n ? *num : fg->n;
        memcpy(nodes, fg->nodes, k * sizeof *nodes);
        *num = k;
    } else {
        *num = fg->n;
    }
    pthread_mutex_unlock(&lock);
    return CUDA_SUCCESS;
}

CUresult cuGraphNodeGetType(CUgraphNode node, CUgraphNodeType *type)
{
    if (!node || !type)
        return CUDA_ERROR_INVALID_VALUE;
    *type = (CUgraphNodeType)((struct fnode *)node)->type;
    return CUDA_SUCCESS;
}

CUresult cuGraphMemAllocNodeGetParams(CUgraphNode node, CUDA_MEM_ALLOC_NODE_PARAMS *p)
{
    const struct fnode *n = (const struct fnode *)node;
    if (!n || !p || n->type != NODE_ALLOC)
        return CUDA_ERROR_INVALID_VALUE;
    memset(p, 0, sizeof *p);
    p->poolProps.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
    p->poolProps.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    p->poolProps.location.id = n->dev;
    p->bytesize = n->request;
    p->dptr = n->dptr;
    return CUDA_SUCCESS;
}

CUresult cuGraphMemFreeNodeGetParams(CUgraphNode node, CUdeviceptr *dptr)
{
    const struct fnode *n = (const struct fnode *)node;
    if (!n || !dptr || n->type != NODE_FREE)
        return CUDA_ERROR_INVALID_VALUE;
    *dptr = n->dptr;
    return CUDA_SUCCESS;
}

/* ---- instantiate and launch ----------------------------------------------- */

static CUresult instantiate(CUgraphExec *out, CUgraph g, unsigned long long flags)
{
    if (!out || !g)
        return CUDA_ERROR_INVALID_VALUE;
    struct fgraph *fg = (struct fgraph *)g;
    struct fexec *e = calloc(1, sizeof *e);
    if (!e)
        abort();
    pthread_mutex_lock(&lock);
    e->n = fg->n;
    e->nodes = malloc((fg->n ? fg->n : 1) * sizeof *e->nodes);
    if (!e->nodes)
        abort();
    memcpy(e->nodes, fg->nodes, fg->n * sizeof *e->nodes);
    e->flags = flags;
    e->dev = fake_current_device();
    for (size_t i = 0; i < e->n; i++)
        if (e->nodes[i]->type == NODE_ALLOC) {
            e->dev = e->nodes[i]->dev;
            break;
        }
    e->next_all = all_execs;
    all_execs = e;
    pthread_mutex_unlock(&lock);
    *out = (CUgraphExec)e;
    return CUDA_SUCCESS;
}

CUresult cuGraphInstantiateWithFlags(CUgraphExec *out, CUgraph g, unsigned long long flags)
{
    return instantiate(out, g, flags);
}

CUresult cuGraphInstantiateWithParams(CUgraphExec *out, CUgraph g, CUDA_GRAPH_INSTANTIATE_PARAMS *p)
{
    CUresult r = instantiate(out, g, p ? p->flags : 0);
    if (p)
        p->result_out = r == CUDA_SUCCESS ? CUDA_GRAPH_INSTANTIATE_SUCCESS : CUDA_GRAPH_INSTANTIATE_ERROR;
    return r;
}

CUresult cuGraphInstantiateWithParams_ptsz(CUgraphExec *out, CUgraph g, CUDA_GRAPH_INSTANTIATE_PARAMS *p)
{
    return cuGraphInstantiateWithParams(out, g, p);
}

CUresult cuGraphExecDestroy(CUgraphExec exec)
{
    struct fexec *e = (struct fexec *)exec;
    if (!e || e->destroyed)
        return CUDA_ERROR_INVALID_VALUE;
    e->destroyed = 1;
    return CUDA_SUCCESS;
}

static int in_exec(const struct fexec *e, const struct fnode *n)
{
    for (size_t i = 0; i < e->n; i++)
        if (e->nodes[i] == n)
            return 1;
    return 0;
}

static CUresult launch(struct fexec *e)
{
    pthread_mutex_lock(&lock);
    int dev = e->dev;
    for (size_t i = 0; i < e->n; i++) { /* what the last launch left */
        struct fnode *n = e->nodes[i];
        if (n->type != NODE_ALLOC || !n->live)
            continue;
        if (!(e->flags & CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH)) {
            pthread_mutex_unlock(&lock);
            return CUDA_ERROR_INVALID_VALUE;
        }
        n->live = 0;
        gpool[n->dev].used -= n->bytes;
    }
    size_t use = gpool[dev].used, peak = use;
    for (size_t i = 0; i < e->n; i++) {
        struct fnode *n = e->nodes[i];
        if (n->type == NODE_ALLOC) {
            n->inflight = 1;
            use += n->bytes;
            if (use > peak)
                peak = use;
        } else if (n->type == NODE_FREE) {
            struct fnode *target = NULL;
            for (size_t j = 0; j < e->n && !target; j++)
                if (e->nodes[j]->type == NODE_ALLOC && e->nodes[j]->inflight && e->nodes[j]->dptr == n->dptr)
                    target = e->nodes[j];
            if (target) {
                target->inflight = 0;
                use -= target->bytes;
            } else if ((target = live_at(n->dptr)) != NULL && !in_exec(e, target)) {
                target->live = 0;
                gpool[target->dev].used -= target->bytes;
                use -= target->bytes;
            } else {
                n->external = 1; /* a stream-ordered pool allocation: freed below */
            }
        }
    }
    if (peak > gpool[dev].reserved) {
        CUresult r = fake_charge(dev, peak - gpool[dev].reserved);
        if (r != CUDA_SUCCESS) {
            for (size_t i = 0; i < e->n; i++)
                e->nodes[i]->inflight = e->nodes[i]->external = 0;
            pthread_mutex_unlock(&lock);
            return r;
        }
        gpool[dev].reserved = peak;
        if (peak > gpool[dev].reserved_high)
            gpool[dev].reserved_high = peak;
    }
    for (size_t i = 0; i < e->n; i++)
        if (e->nodes[i]->inflight) {
            e->nodes[i]->inflight = 0;
            e->nodes[i]->live = 1;
        }
    gpool[dev].used = use;
    if (peak > gpool[dev].used_high)
        gpool[dev].used_high = peak;
    pthread_mutex_unlock(&lock);
    for (size_t i = 0; i < e->n; i++)
        if (e->nodes[i]->external) {
            e->nodes[i]->external = 0;
            fake_pool_free(e->nodes[i]->dptr);
        }
    fake_first_launch(dev);
    return CUDA_SUCCESS;
}

CUresult cuGraphLaunch(CUgraphExec exec, CUstream s)
{
    struct {
        CUgraphExec exec;
        CUstream s;
    } params = {exec, s};
    CUresult r = CUDA_SUCCESS;
    FAKE_CUPTI_SITE(CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch, "cuGraphLaunch", &params, CUPTI_API_ENTER, &r);
    struct fexec *e = (struct fexec *)exec;
    CUresult captured;
    if (fake_capture_stream(s, &captured) && captured != CUDA_SUCCESS)
        r = captured; /* the fake does not capture a graph launch into another graph */
    else
        r = !e || e->destroyed ? CUDA_ERROR_INVALID_VALUE : launch(e);
    FAKE_CUPTI_SITE(CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch, "cuGraphLaunch", &params, CUPTI_API_EXIT, &r);
    return r;
}

CUresult cuGraphLaunch_ptsz(CUgraphExec exec, CUstream s)
{
    return cuGraphLaunch(exec, s);
}

/* ---- the device's graph memory pool ---------------------------------------- */

CUresult cuDeviceGraphMemTrim(CUdevice dev)
{
    if (dev < 0 || dev >= fake_device_count())
        return CUDA_ERROR_INVALID_DEVICE;
    pthread_mutex_lock(&lock);
    fake_uncharge(dev, gpool[dev].reserved - gpool[dev].used);
    gpool[dev].reserved = gpool[dev].used;
    pthread_mutex_unlock(&lock);
    return CUDA_SUCCESS;
}

CUresult cuDeviceGetGraphMemAttribute(CUdevice dev, CUgraphMem_attribute attr, void *value)
{
    CUresult unsafe = fake_capture_unsafe("cuDeviceGetGraphMemAttribute");
    if (unsafe != CUDA_SUCCESS)
        return unsafe;
    if (dev < 0 || dev >= fake_device_count() || !value)
        return CUDA_ERROR_INVALID_VALUE;
    cuuint64_t v;
    pthread_mutex_lock(&lock);
    switch (attr) {
    case CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT:
        v = gpool[dev].used;
        break;
    case CU_GRAPH_MEM_ATTR_USED_MEM_HIGH:
        v = gpool[dev].used_high;
        break;
    case CU_GRAPH_MEM_ATTR_RESERVED_MEM_CURRENT:
        v = gpool[dev].reserved;
        break;
    case CU_GRAPH_MEM_ATTR_RESERVED_MEM_HIGH:
        v = gpool[dev].reserved_high;
        break;
    default:
        pthread_mutex_unlock(&lock);
        return CUDA_ERROR_INVALID_VALUE;
    }
    pthread_mutex_unlock(&lock);
    memcpy(value, &v, sizeof v);
    return CUDA_SUCCESS;
}

/* Only the high-water marks can be set, and only to 0 (= reset to current). */
CUresult cuDeviceSetGraphMemAttribute(CUdevice dev, CUgraphMem_attribute attr, void *value)
{
    cuuint64_t v;
    if (dev < 0 || dev >= fake_device_count() || !value)
        return CUDA_ERROR_INVALID_VALUE;
    memcpy(&v, value, sizeof v);
    if (v != 0)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&lock);
    if (attr == CU_GRAPH_MEM_ATTR_USED_MEM_HIGH)
        gpool[dev].used_high = gpool[dev].used;
    else if (attr == CU_GRAPH_MEM_ATTR_RESERVED_MEM_HIGH)
        gpool[dev].reserved_high = gpool[dev].reserved;
    pthread_mutex_unlock(&lock);
    return attr == CU_GRAPH_MEM_ATTR_USED_MEM_HIGH || attr == CU_GRAPH_MEM_ATTR_RESERVED_MEM_HIGH
               ? CUDA_SUCCESS
               : CUDA_ERROR_INVALID_VALUE;
}

/* A kernel launch: nothing runs; the first one reserves local memory. On a
 * capturing stream it is captured instead (nothing reserved). */
CUresult cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                        unsigned shmem, CUstream s, void **params, void **extra)
{
    (void)f, (void)gx, (void)gy, (void)gz, (void)bx, (void)by, (void)bz, (void)shmem, (void)params, (void)extra;
    CUresult r;
    if (fake_capture_stream(s, &r))
        return r;
    fake_first_launch(fake_current_device());
    return CUDA_SUCCESS;
}
