/* hooks_graph.c — CUDA-graph memory, at the driver entry points (the
 * runtime's cudaStreamBeginCapture, cudaGraphInstantiate, cudaGraphLaunch…
 * reach them through cuGetProcAddress, dynamic or static cudart alike):
 *  - stream capture begin / end: how many streams capture (counted before
 *    the capture begins: capture_gate.h keeps gpuledger's own queries away
 *    from it), so that a captured cudaMallocAsync is recorded as a graph
 *    allocation node (op graph_alloc, with its stack and graph) and not as
 *    memory in use;
 *  - cuGraphAddMemAllocNode / cuGraphAddMemFreeNode: nodes added by hand;
 *  - instantiation: the graph's memory nodes are read once, and an
 *    executable graph that has any joins the set launches look up;
 *  - launch of such a graph: the allocations it leaves live (kind graph,
 *    no stack of their own: the writer gives them their node's) and the
 *    other allocations it frees, then an op graph_launch event with the
 *    launch's stack and the device's graph-pool reservation after it;
 *    launching any other graph costs one atomic load more than the launch;
 *  - cuDeviceGraphMemTrim: an op trim, kind graph event with the
 *    reservation left. */
#include <errno.h>

#include "capture_gate.h"
#include "clock.h"
#include "cuda_extra.h"
#include "graph_mem.h"
#include "usage.h"
#include "wrap.h"

#define DRV_FAIL CUDA_ERROR_NOT_INITIALIZED

/* ---- capture ------------------------------------------------------------------ */

#define BEGIN_CAPTURE(sym, CALL, PARAMS)                                                           \
    GL_EXPORT CUresult sym PARAMS                                                                  \
    {                                                                                              \
        GL_REAL(sym);                                                                              \
        if (!real)                                                                                 \
            return DRV_FAIL;                                                                       \
        gl_capture_opening(); /* before: no own query may overlap it */                           \
        CUresult r = CALL;                                                                         \
        if (r != CUDA_SUCCESS) {                                                                   \
            int saved = errno;                                                                     \
            gl_capture_closed();                                                                   \
            errno = saved;                                                                         \
        }                                                                                          \
        return r;                                                                                  \
    }
BEGIN_CAPTURE(cuStreamBeginCapture_v2, real(s, mode), (CUstream s, CUstreamCaptureMode mode))
BEGIN_CAPTURE(cuStreamBeginCapture_v2_ptsz, real(s, mode), (CUstream s, CUstreamCaptureMode mode))
BEGIN_CAPTURE(cuStreamBeginCaptureToGraph, real(s, g, deps, data, n, mode),
              (CUstream s, CUgraph g, const CUgraphNode *deps, const CUgraphEdgeData *data, size_t n,
               CUstreamCaptureMode mode))
BEGIN_CAPTURE(cuStreamBeginCaptureToGraph_ptsz, real(s, g, deps, data, n, mode),
              (CUstream s, CUgraph g, const CUgraphNode *deps, const CUgraphEdgeData *data, size_t n,
               CUstreamCaptureMode mode))

/* A capture ends (also one already invalidated) whatever the result. */
#define END_CAPTURE(sym, per_thread)                                                               \
    GL_EXPORT CUresult sym(CUstream s, CUgraph *g)                                                 \
    {                                                                                              \
        GL_REAL(sym);                                                                              \
        if (!real)                                                                                 \
            return DRV_FAIL;                                                                       \
        int saved = errno;                                                                         \
        int was = gl_stream_capturing(GL_PTR(s), per_thread);                                      \
        errno = saved;                                                                             \
        CUresult r = real(s, g);                                                                   \
        if (was)                                                                                   \
            gl_capture_closed();                                                                   \
        return r;                                                                                  \
    }
END_CAPTURE(cuStreamEndCapture, 0)
END_CAPTURE(cuStreamEndCapture_ptsz, 1)

/* ---- memory nodes added by hand ------------------------------------------------- */

GL_EXPORT CUresult cuGraphAddMemAllocNode(CUgraphNode *node, CUgraph g, const CUgraphNode *deps, size_t n,
                                          CUDA_MEM_ALLOC_NODE_PARAMS *p)
{
    GL_AFTER(cuGraphAddMemAllocNode, CUresult, DRV_FAIL,
             p && p->poolProps.location.type == CU_MEM_LOCATION_TYPE_DEVICE ? p->poolProps.location.id : -1,
             real(node, g, deps, n, p),
             (c.addr = r == CUDA_SUCCESS && p ? p->dptr : 0, c.size = p ? p->bytesize : 0, c.aux = GL_PTR(g)));
}

GL_EXPORT CUresult cuGraphAddMemFreeNode(CUgraphNode *node, CUgraph g, const CUgraphNode *deps, size_t n,
                                         CUdeviceptr dptr)
{
    GL_AFTER(cuGraphAddMemFreeNode, CUresult, DRV_FAIL, -1, real(node, g, deps, n, dptr),
             (c.addr = dptr, c.aux = GL_PTR(g)));
}

/* ---- instantiate and destroy ------------------------------------------------------ */

static void instantiated(CUresult r, CUgraphExec *exec, CUgraph g)
{
    if (r != CUDA_SUCCESS || !exec)
        return;
    int saved = errno;
    if (gl_enter()) /* gpuledger's own driver calls are not recorded */
        gl_graph_instantiated(GL_PTR(*exec), GL_PTR(g), gl_driver_device());
    gl_leave();
    errno = saved;
}

GL_EXPORT CUresult cuGraphInstantiateWithFlags(CUgraphExec *exec, CUgraph g, unsigned long long flags)
{
    GL_REAL(cuGraphInstantiateWithFlags);
    if (!real)
        return DRV_FAIL;
    CUresult r = real(exec, g, flags);
    instantiated(r, exec, g);
    return r;
}

#define INSTANTIATE_WITH_PARAMS(sym)                                                               \
    GL_EXPORT CUresult sym(CUgraphExec *exec, CUgraph g, CUDA_GRAPH_INSTANTIATE_PARAMS *p)         \
    {                                                                                              \
        GL_REAL(sym);                                                                              \
        if (!real)                                                                                 \
            return DRV_FAIL;                                                                       \
        CUresult r = real(exec, g, p);                                                             \
        instantiated(r, exec, g);                                                                  \
        return r;                                                                                  \
    }
INSTANTIATE_WITH_PARAMS(cuGraphInstantiateWithParams)
INSTANTIATE_WITH_PARAMS(cuGraphInstantiateWithParams_ptsz)

GL_EXPORT CUresult cuGraphExecDestroy(CUgraphExec exec)
{
    GL_REAL(cuGraphExecDestroy);
    if (!real)
        return DRV_FAIL;
    gl_graph_exec_destroyed(GL_PTR(exec));
    return real(exec);
}

/* ---- launch ---------------------------------------------------------------------- */

/* One effect of a launch on memory outside the graph: no stack of its own. */
static void effect(const struct gl_graph_exec *e, CUgraphExec exec, CUstream s, int op, uint64_t addr,
                   uint64_t size)
{
    struct gl_call c = {.api = GL_API_cuGraphLaunch, .device = e->device, .addr = addr, .size = size,
                        .stream = GL_PTR(s), .aux = GL_PTR(exec), .op = op, .kind = GL_KIND_GRAPH};
    struct gl_claim cl;
    gl_claim_nostack(&cl, &c);
    gl_publish(&cl, 0);
}

/* After a successful launch of a graph with memory nodes. The frees come
 * first (an allocation of the graph may reuse what it frees), then the
 * allocations, then the launch itself: the writer settles the graph pool
 * once, at the launch event. */
static void launched(const struct gl_graph_exec *e, CUgraphExec exec, CUstream s)
{
    for (uint32_t i = 0; i < e->nfrees; i++)
        effect(e, exec, s, GL_OP_FREE, e->frees[i], 0);
    for (uint32_t i = 0; i < e->nallocs; i++)
        effect(e, exec, s, GL_OP_ALLOC, e->allocs[i].addr, e->allocs[i].size);
    uint64_t reserved;
    int moved = gl_graph_pool_sample(e->device, &reserved);
    if (moved || e->nallocs || e->nfrees) {
        struct gl_call c = {.api = GL_API_cuGraphLaunch, .device = e->device, .addr = GL_PTR(exec),
                            .size = reserved, .stream = GL_PTR(s)};
        gl_record(&c);
    }
    gl_usage_after_call(e->device, gl_stamp());
}

#define LAUNCH(sym)                                                                                \
    GL_EXPORT CUresult sym(CUgraphExec exec, CUstream s)                                           \
    {                                                                                              \
        GL_REAL(sym);                                                                              \
        if (!real)                                                                                 \
            return DRV_FAIL;                                                                       \
        const struct gl_graph_exec *e = gl_graph_exec_find(GL_PTR(exec));                          \
        if (!e)                                                                                    \
            return real(exec, s); /* no memory nodes: nothing to record */                         \
        CUresult r;                                                                                \
        if (gl_enter()) {                                                                          \
            r = real(exec, s);                                                                     \
            int saved = errno;                                                                     \
            if (r == CUDA_SUCCESS)                                                                 \
                launched(e, exec, s);                                                              \
            errno = saved;                                                                         \
        } else {                                                                                   \
            r = real(exec, s);                                                                     \
        }                                                                                          \
        gl_leave();                                                                                \
        return r;                                                                                  \
    }
LAUNCH(cuGraphLaunch)
LAUNCH(cuGraphLaunch_ptsz)

/* ---- trim -------------------------------------------------------------------------- */

GL_EXPORT CUresult cuDeviceGraphMemTrim(CUdevice device)
{
    GL_REAL(cuDeviceGraphMemTrim);
    if (!real)
        return DRV_FAIL;
    CUresult r;
    if (gl_enter()) {
        r = real(device);
        int saved = errno;
        uint64_t reserved = 0;
        if (r == CUDA_SUCCESS)
            gl_graph_pool_sample(device, &reserved);
        struct gl_call c = {.api = GL_API_cuDeviceGraphMemTrim, .device = device, .size = reserved,
                            .result = (int)r};
        gl_record(&c);
        errno = saved;
    } else {
        r = real(device);
    }
    gl_leave();
    return r;
}
