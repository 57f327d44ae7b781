/* model_heaps.h — the heaps of a program's own pools and the regions handed
 * out in them (NVTX memory API, gpuledger_heap_* / gpuledger_region_*), as
 * loaded from a database: each heap with its extent, page size and name,
 * each region with its stack, and what happened to them in order. A
 * version-1 database, or a run without pools, loads as no heaps. */
#ifndef GL_MODEL_HEAPS_H
#define GL_MODEL_HEAPS_H

#include <stddef.h>
#include <stdint.h>

#include "model.h"

struct gl_heap {
    int64_t seq, end_seq;       /* its register row; its unregister row (0: never) */
    int64_t reg_ns, end_ns;
    uint64_t base, size, page_size, usage;
    int64_t stack_id;
    int device;                 /* of the CUDA allocation it lies in (-1: none found) */
    const struct gl_alloc *in;  /* that allocation */
    char name[128];
};

struct gl_region {
    int64_t seq, free_seq;      /* free_seq 0: still live at the end */
    uint64_t addr, size;        /* size as registered */
    int64_t used;               /* used bytes as registered, -1 unknown */
    int64_t stack_id;
    int64_t free_api;
    uint32_t heap;              /* index in heaps[]; UINT32_MAX: none (process-wide) */
    const struct gl_alloc *row; /* the run's row for it (groups point at it) */
    char name[64];
};

enum gl_heap_what { GL_HEV_ALLOC, GL_HEV_FREE, GL_HEV_RESIZE, GL_HEV_USED };

/* One change to a region, in seq order. */
struct gl_heap_ev {
    int64_t seq, ts_ns;
    uint32_t region;            /* index in regions[] */
    uint8_t what;               /* enum gl_heap_what */
    uint8_t by_heap_end;        /* a free made by the unregister of its heap */
    uint64_t value;             /* resize: new size; used: bytes */
};

struct gl_heaps {
    struct gl_heap *heaps;
    size_t nheaps;
    struct gl_region *regions;
    size_t nregions;
    struct gl_heap_ev *evs;
    size_t nevs;
    uint64_t outside;           /* regions in no registered heap */
};

/* Load the heaps of a loaded run (0, or -1 with "FILE: problem" in err). */
int gl_heaps_load(struct gl_run *r, struct gl_heaps *out, char *err, size_t errsz);
void gl_heaps_free(struct gl_heaps *h);

#endif
