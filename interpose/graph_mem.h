/* graph_mem.h — what gpuledger knows about CUDA-graph memory on the
 * application's side: which streams are capturing (so that a stream-ordered
 * allocation captured into a graph is recorded as the graph allocation it
 * defines, not as memory in use), which executable graphs hold memory nodes
 * (a lock-free set, so that launching any other graph costs one atomic load),
 * and the device's graph memory pool (cuDeviceGetGraphMemAttribute). */
#ifndef GL_GRAPH_MEM_H
#define GL_GRAPH_MEM_H

#include <stdatomic.h>
#include <stdint.h>

#include "capture_gate.h"
#include "recorder.h"

/* ---- stream capture ---- */

/* Is `stream` capturing (also a capture already invalidated)? per_thread:
 * the call was a _ptsz one (stream 0 is then the thread's default stream). */
int gl_stream_capturing(uint64_t stream, int per_thread);
/* If c->stream is capturing, turn the call into the definition of a graph
 * memory node: op (GL_OP_GRAPH_ALLOC or _FREE), kind graph, aux the graph.
 * Costs one atomic load while no stream captures (gl_captures:
 * capture_gate.h). */
void gl_capture_mark_slow(struct gl_call *c, int per_thread, int op);
static inline void gl_capture_mark(struct gl_call *c, int per_thread, int op)
{
    if (__builtin_expect(atomic_load_explicit(&gl_captures, memory_order_relaxed) != 0, 0))
        gl_capture_mark_slow(c, per_thread, op);
}

/* ---- executable graphs with memory nodes ---- */

struct gl_graph_node {
    uint64_t addr, size;
};

/* What a launch of an executable graph does to memory outside the graph:
 * the allocations it leaves live (no free node in the same graph), and the
 * addresses it frees that it did not allocate. */
struct gl_graph_exec {
    int device;
    uint32_t nallocs, nfrees;
    struct gl_graph_node *allocs;
    uint64_t *frees;
};

/* After a successful instantiation: read the graph's memory nodes and, if
 * it has any, remember the executable graph (replacing whatever an earlier
 * executable at the same address left). device: the current device, for a
 * graph that only frees. */
void gl_graph_instantiated(uint64_t exec, uint64_t graph, int device);
void gl_graph_exec_destroyed(uint64_t exec);
/* NULL unless `exec` holds memory nodes; one relaxed load when none does. */
const struct gl_graph_exec *gl_graph_exec_find(uint64_t exec);

/* ---- the device's graph memory pool ---- */

/* Read the pool of `device`; record a graph-pool sample (reserved, used,
 * both high-water marks) if the reservation or its high-water mark moved
 * since the last one recorded. Returns 1 if it moved; *reserved: the pool's
 * reservation now (0 if it cannot be read), or while a stream captures
 * (no query then: capture_gate.h) the last one read. */
int gl_graph_pool_sample(int device, uint64_t *reserved);

#endif
