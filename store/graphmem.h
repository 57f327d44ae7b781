/* graphmem.h — CUDA-graph memory in the ledger (writer thread). The
 * recorder sends: graph allocation/free nodes as they are defined (op
 * graph_alloc / graph_free, with their stacks), what a launch of a graph
 * with memory nodes does outside the graph (alloc kind graph, free; api
 * cuGraphLaunch, no stack) followed by the launch itself (op graph_launch,
 * size = the device's graph-pool reservation after it), and trims (op trim,
 * kind graph, size = the reservation left). From these:
 *  - a launch's effects wait for its launch event and are then written
 *    after it, so that the pool row can shrink before the allocations it
 *    makes room for begin: the ledger never holds more than the device;
 *  - a graph allocation made live by a launch carries the stack of the node
 *    that defined it (ref_seq: the node's row), and is live until freed;
 *    an allocation still live at a relaunch (auto-free-on-launch) is freed
 *    first;
 *  - the graph pool's reservation not held by such allocations is one
 *    allocation row of its own (api graph_pool, kind graph, address 0),
 *    ended and begun again whenever that figure changes: at a launch, a
 *    trim, or a free of a graph allocation outside a launch. So the
 *    device's ledger holds the pool's bytes while the device does. */
#ifndef GL_GRAPHMEM_H
#define GL_GRAPHMEM_H

#include <stdint.h>

#include "annotations.h"
#include "gl_event.h"
#include "ledger.h"
#include "rows.h"
#include "u64map.h"

struct gl_graphmem {
    struct gl_u64map def_seq, def_sid; /* node address -> its definition's row and stack */
    uint64_t reserved[GL_MAX_DEVICES + 1]; /* the pool's reservation, last reported */
    uint64_t outlived[GL_MAX_DEVICES + 1]; /* bytes of graph allocations live now */
    uint64_t pool[GL_MAX_DEVICES + 1];     /* the pool row's bytes (0: none live) */
    struct gl_event *pending;              /* launch effects waiting for their launch (headers only) */
    size_t npending, pending_cap;
};

/* Where the rows go. */
struct gl_graph_out {
    struct gl_ledger *ledger;
    struct gl_rows *rows;
    struct gl_annotations *ann;
};

void gl_graphmem_init(struct gl_graphmem *g);
void gl_graphmem_free(struct gl_graphmem *g);
/* Is ev one of the graph events above (graphmem writes its rows)? */
int gl_graphmem_owns(const struct gl_event *ev);
int gl_graphmem_add(struct gl_graphmem *g, const struct gl_graph_out *o, const struct gl_event *ev, int64_t sid);
/* ev (a free, row already written) ended `freed`, a graph allocation. */
int gl_graphmem_freed(struct gl_graphmem *g, const struct gl_graph_out *o, const struct gl_event *ev, int64_t sid,
                      const struct gl_live *freed);
/* cudaDeviceReset of `device` (-1: all): the pool row ends, nothing is
 * reserved any more. */
int gl_graphmem_reset(struct gl_graphmem *g, const struct gl_graph_out *o, const struct gl_event *ev, int64_t sid);

#endif
