/* graphmem.c — see graphmem.h. */
#include "graphmem.h"

#include <stdlib.h>
#include <string.h>

/* The pool row's key in the ledger's memory space: no device address is
 * this high (0 and UINT64_MAX are the map's own). */
#define POOL_KEY(slot) (UINT64_MAX - 1 - (uint64_t)(slot))

void gl_graphmem_init(struct gl_graphmem *g)
{
    memset(g, 0, sizeof *g);
    gl_u64map_init(&g->def_seq);
    gl_u64map_init(&g->def_sid);
}

void gl_graphmem_free(struct gl_graphmem *g)
{
    gl_u64map_free(&g->def_seq);
    gl_u64map_free(&g->def_sid);
    free(g->pending);
}

static int slot_of(int device)
{
    return device < -1 || device >= GL_MAX_DEVICES ? 0 : device + 1;
}

static int row(const struct gl_graph_out *o, const struct gl_event *ev, int op, int kind, uint64_t size, int64_t sid,
               uint64_t ref, uint64_t *seq)
{
    return gl_rows_add(o->rows, ev, op, kind, size, sid, ref, gl_annotations_range(o->ann, ev->tid), seq);
}

/* Make the pool row of device slot k hold what the reservation holds
 * beyond the live graph allocations and `coming` bytes about to begin
 * (never more than it holds now when shrink_only); ev/sid: what changed it. */
static int settle_to(struct gl_graphmem *g, const struct gl_graph_out *o, const struct gl_event *ev, int64_t sid,
                     int k, uint64_t coming, int shrink_only)
{
    uint64_t held = g->outlived[k] + coming;
    uint64_t want = g->reserved[k] > held ? g->reserved[k] - held : 0;
    if (want == g->pool[k] || (shrink_only && want > g->pool[k]))
        return 0;
    struct gl_event pe = *ev;
    pe.api = GL_API_graph_pool;
    pe.device = k - 1;
    pe.addr = pe.stream = pe.pool = pe.aux = 0;
    pe.result = 0;
    int rc = 0;
    struct gl_live l;
    if (g->pool[k] && gl_ledger_take(o->ledger, GL_SPACE_MEM, POOL_KEY(k), &l))
        rc |= row(o, &pe, GL_OP_FREE, GL_KIND_GRAPH, l.size, sid, l.seq, NULL);
    g->pool[k] = want;
    if (want) {
        uint64_t seq;
        pe.size = want;
        pe.kind = GL_KIND_GRAPH;
        rc |= row(o, &pe, GL_OP_ALLOC, GL_KIND_GRAPH, want, sid, 0, &seq);
        gl_ledger_add(o->ledger, GL_SPACE_MEM, POOL_KEY(k), seq, &pe);
    }
    return rc;
}

static int settle(struct gl_graphmem *g, const struct gl_graph_out *o, const struct gl_event *ev, int64_t sid, int k)
{
    return settle_to(g, o, ev, sid, k, 0, 0);
}

int gl_graphmem_owns(const struct gl_event *ev)
{
    if (ev->result != 0)
        return 0; /* a failed call is a row like any other */
    switch (ev->op) {
    case GL_OP_GRAPH_ALLOC:
    case GL_OP_GRAPH_FREE:
    case GL_OP_GRAPH_LAUNCH:
        return 1;
    case GL_OP_TRIM:
    case GL_OP_ALLOC:
        return ev->kind == GL_KIND_GRAPH;
    case GL_OP_FREE:
        return ev->api == GL_API_cuGraphLaunch; /* a launch's free of another's allocation */
    default:
        return 0;
    }
}

/* A launch's free of memory it did not allocate. */
static int launched_free(struct gl_graphmem *g, const struct gl_graph_out *o, const struct gl_event *ev)
{
    struct gl_live l;
    if (!gl_ledger_take(o->ledger, GL_SPACE_MEM, ev->addr, &l))
        return row(o, ev, GL_OP_FREE, GL_KIND_NONE, 0, 0, 0, NULL);
    struct gl_event fe = *ev;
    fe.device = l.device;
    if (l.kind == GL_KIND_GRAPH)
        g->outlived[slot_of(l.device)] -= l.size;
    return row(o, &fe, GL_OP_FREE, l.kind, l.size, 0, l.seq, NULL);
}

/* An allocation a launch left live: the stack and row of its node. */
static int launched_alloc(struct gl_graphmem *g, const struct gl_graph_out *o, const struct gl_event *ev)
{
    uint64_t def_seq = 0, def_sid = 0, seq;
    gl_u64map_get(&g->def_seq, ev->addr, &def_seq);
    gl_u64map_get(&g->def_sid, ev->addr, &def_sid);
    int rc = row(o, ev, GL_OP_ALLOC, GL_KIND_GRAPH, ev->size, (int64_t)def_sid, def_seq, &seq);
    gl_ledger_add(o->ledger, GL_SPACE_MEM, ev->addr, seq, ev);
    g->outlived[slot_of(ev->device)] += ev->size;
    return rc;
}

/* The launch event (its row written): its effects, in the order that keeps
 * the ledger within the device. The frees first (and the allocations a
 * relaunch ends: auto-free-on-launch), then the pool row shrinks to make
 * room, then the allocations begin, then the pool row grows if the
 * reservation did. */
static int launch(struct gl_graphmem *g, const struct gl_graph_out *o, const struct gl_event *ev, int64_t sid, int k)
{
    int rc = 0;
    uint64_t coming[GL_MAX_DEVICES + 1] = {0};
    unsigned char touched[GL_MAX_DEVICES + 1] = {0};
    touched[k] = 1;
    for (size_t i = 0; i < g->npending; i++) {
        const struct gl_event *e = &g->pending[i];
        struct gl_live l;
        int live = gl_ledger_peek(o->ledger, GL_SPACE_MEM, e->addr, &l);
        if (live)
            touched[slot_of(l.device)] = 1;
        if (e->op == GL_OP_FREE || live)
            rc |= launched_free(g, o, e); /* an allocation still live at a relaunch: auto-freed */
        if (e->op == GL_OP_ALLOC)
            coming[slot_of(e->device)] += e->size;
        touched[slot_of(e->device)] = 1;
    }
    g->reserved[k] = ev->size;
    for (int d = 0; d <= GL_MAX_DEVICES; d++)
        if (touched[d])
            rc |= settle_to(g, o, ev, sid, d, coming[d], 1);
    for (size_t i = 0; i < g->npending; i++)
        if (g->pending[i].op == GL_OP_ALLOC)
            rc |= launched_alloc(g, o, &g->pending[i]);
    g->npending = 0;
    for (int d = 0; d <= GL_MAX_DEVICES; d++)
        if (touched[d])
            rc |= settle(g, o, ev, sid, d);
    return rc;
}

/* A launch effect waits for its launch event (if it cannot wait, it is
 * written at once). */
static int defer(struct gl_graphmem *g, const struct gl_graph_out *o, const struct gl_event *ev)
{
    if (g->npending == g->pending_cap) {
        size_t nc = g->pending_cap ? g->pending_cap * 2 : 64;
        struct gl_event *np = realloc(g->pending, nc * sizeof *np);
        if (!np)
            return ev->op == GL_OP_FREE ? launched_free(g, o, ev) : launched_alloc(g, o, ev);
        g->pending = np;
        g->pending_cap = nc;
    }
    memcpy(&g->pending[g->npending++], ev, sizeof *ev); /* the header: effects carry no stack */
    return 0;
}

int gl_graphmem_add(struct gl_graphmem *g, const struct gl_graph_out *o, const struct gl_event *ev, int64_t sid)
{
    uint64_t seq;
    int rc, k = slot_of(ev->device);
    switch (ev->op) {
    case GL_OP_GRAPH_ALLOC:
        rc = row(o, ev, ev->op, GL_KIND_GRAPH, ev->size, sid, 0, &seq);
        if (ev->addr) {
            gl_u64map_put(&g->def_seq, ev->addr, seq);
            gl_u64map_put(&g->def_sid, ev->addr, (uint64_t)sid);
        }
        return rc;
    case GL_OP_ALLOC:
    case GL_OP_FREE:
        return defer(g, o, ev);
    case GL_OP_GRAPH_LAUNCH:
        rc = row(o, ev, ev->op, GL_KIND_GRAPH, ev->size, sid, 0, NULL);
        return rc | launch(g, o, ev, sid, k);
    case GL_OP_TRIM:
        rc = row(o, ev, ev->op, GL_KIND_GRAPH, ev->size, sid, 0, NULL);
        g->reserved[k] = ev->size;
        return rc | settle(g, o, ev, sid, k);
    default:
        return row(o, ev, ev->op, GL_KIND_GRAPH, ev->size, sid, 0, NULL);
    }
}

int gl_graphmem_freed(struct gl_graphmem *g, const struct gl_graph_out *o, const struct gl_event *ev, int64_t sid,
                      const struct gl_live *freed)
{
    int k = slot_of(freed->device);
    g->outlived[k] = g->outlived[k] > freed->size ? g->outlived[k] - freed->size : 0;
    return settle(g, o, ev, sid, k); /* back to the pool, which still holds it */
}

int gl_graphmem_reset(struct gl_graphmem *g, const struct gl_graph_out *o, const struct gl_event *ev, int64_t sid)
{
    int rc = 0;
    for (int k = 0; k <= GL_MAX_DEVICES; k++) {
        if (ev->device >= 0 && k != slot_of(ev->device))
            continue;
        g->reserved[k] = g->outlived[k] = 0;
        rc |= settle(g, o, ev, sid, k);
    }
    return rc;
}
