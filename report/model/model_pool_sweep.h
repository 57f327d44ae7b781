/* model_pool_sweep.h — one pool's replay for its hole density (holes.c):
 * its allocations and frees given in event order, the live address
 * ranges taken at GL_POOL_POINTS moments spaced evenly from its first
 * allocation to a given end, and the regions it ever handed out (their
 * distinct ranges, merged). The moments depend only on the first
 * allocation and the end, so the replay runs as the rows come: a full
 * load feeds it a pool's sweep (sweep.h), a GL_LOAD_HOLES load feeds every
 * stream-ordered pool during its scan (gl_pools_in) and keeps no record of
 * their allocations. Memory: the live ranges at each moment, merged, and
 * the pool's distinct ranges. */
#ifndef GL_MODEL_POOL_SWEEP_H
#define GL_MODEL_POOL_SWEEP_H

#include <stddef.h>
#include <stdint.h>

#include "u64map.h"

#define GL_HOLE_SAMPLES 64                   /* a series: this many intervals, measured at both ends */
#define GL_POOL_POINTS (GL_HOLE_SAMPLES + 1) /* the moments measured */

struct gl_ival {
    uint64_t lo, hi;
};

/* Sorts v[0..n) by lo and merges the ranges that overlap or touch, in
 * place; the count left. */
size_t gl_ivals_merge(struct gl_ival *v, size_t n);

/* The live ranges at one moment: after every event at or before seq; ts_ns
 * the time of the last of them. */
struct gl_pool_snap {
    int64_t seq, ts_ns;
    struct gl_ival *live; /* sorted, merged */
    size_t n;
};

struct gl_pool_sweep {
    uint64_t pool;
    int device;
    int derive_regions; /* regions from what it hands out (a pool), else given by the caller (a reservation) */
    int started;
    int64_t first, end, ts;
    size_t next;            /* the moment still to take: snap[0..next) are taken */
    struct gl_u64map set;   /* live: address -> end */
    struct gl_u64map uniq;  /* address -> highest end handed out there (folded into regions as it grows) */
    struct gl_ival *regions, *scratch;
    size_t nregions, scratch_cap;
    struct gl_pool_snap snap[GL_POOL_POINTS];
    int oom;
};

/* A replay up to end (the moments: first + (end - first) * k / GL_HOLE_SAMPLES). */
void gl_pool_sweep_init(struct gl_pool_sweep *p, uint64_t pool, int device, int64_t end, int derive_regions);
/* An allocation or a free of [addr, addr + size) at seq (rising), time ts.
 * 0, or -1 out of memory. */
int gl_pool_sweep_alloc(struct gl_pool_sweep *p, int64_t seq, int64_t ts, uint64_t addr, uint64_t size);
int gl_pool_sweep_free(struct gl_pool_sweep *p, int64_t seq, int64_t ts, uint64_t addr);
/* After the last event: the moments not taken yet, the regions merged.
 * 0, or -1 out of memory. */
int gl_pool_sweep_finish(struct gl_pool_sweep *p);
void gl_pool_sweep_free_all(struct gl_pool_sweep *p);

/* GL_LOAD_HOLES: a replay per stream-ordered pool and device, in the order
 * of their first allocations. */
struct gl_pools_in {
    struct gl_pool_sweep *v;
    size_t n, cap;
    struct gl_u64map first_of; /* pool handle -> index + 1 of its first replay (next_same: the others) */
    size_t *next_same, next_cap;
    int64_t end;
    size_t last; /* the replay used last (most rows are of one pool) */
    int inexact; /* the load saw what a full load replays otherwise (model.c): the load is a full one */
};

void gl_pools_in_init(struct gl_pools_in *g, int64_t end);
int gl_pools_in_alloc(struct gl_pools_in *g, uint64_t pool, int device, int64_t seq, int64_t ts, uint64_t addr,
                      uint64_t size);
int gl_pools_in_free(struct gl_pools_in *g, uint64_t pool, int device, int64_t seq, int64_t ts, uint64_t addr);
int gl_pools_in_finish(struct gl_pools_in *g);
void gl_pools_in_free_all(struct gl_pools_in *g);

#endif
