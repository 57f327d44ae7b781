/* heaps.h — what the regions of a program's own pools did to each heap
 * over time: occupancy, holes (runs of free bytes, which are runs of free
 * pages when the regions are whole pages), the largest free run, external
 * fragmentation (1 - largest free / free) and largest_free_ratio
 * (freemap.h, the same arithmetic as every hole report), internal
 * fragmentation (bytes of live regions not used / bytes of live regions),
 * an occupancy map at the peak and at the worst moment, the live regions by
 * stack at the peak, and the regions never given back by stack. */
#ifndef GL_HEAPS_H
#define GL_HEAPS_H

#include "analysis.h"
#include "freemap.h"
#include "model_heaps.h"

#define GL_HEAP_SERIES 256     /* points of a heap's time series at most */
#define GL_HEAP_CELLS_MAX 4096 /* occupancy cells: one per page up to this */

struct gl_heap_point {
    int64_t seq, ts_ns;        /* after this row */
    struct gl_free_stats fs;   /* bytes */
    uint64_t regions;          /* live regions */
    uint64_t region_bytes;     /* their bytes */
    uint64_t waste;            /* their bytes not used (regions whose used bytes are known) */
    double internal_fragmentation; /* waste / region_bytes; 0 with no live region */
};

struct gl_heap_view {
    const struct gl_heap *h;
    uint64_t nregions;         /* regions ever handed out in it */
    int has_used;              /* some region said how much of it is used */
    struct gl_heap_point peak;  /* the most bytes in use (first time) */
    struct gl_heap_point worst; /* the most free bytes outside the largest free run (gl_free_worse) */
    struct gl_heap_point end;   /* at the end of the run, or just before the heap was unregistered */
    struct gl_heap_point *series;
    size_t nseries;
    size_t ncells;             /* occupancy map: percent of each cell in use */
    uint64_t cell_bytes;       /* a page, or the heap's size / ncells */
    uint8_t *occ_peak, *occ_worst;
    struct gl_groups peak_ledger; /* regions live at the peak by stack */
    struct gl_groups leaks;       /* regions never given back (heap never unregistered) by stack */
};

/* Everything the verbs show about a run's heaps: loaded, analysed, with
 * the stacks to print them. */
struct gl_heaps_view {
    const struct gl_run *run;
    struct gl_heaps heaps;
    struct gl_heap_view *v;
    size_t n;
    struct gl_stacks stacks;
    char err[1200];
};

/* 0, or -1 with "FILE: problem" in hv->err (free it all the same). */
int gl_heaps_view(struct gl_heaps_view *hv, struct gl_run *r);
void gl_heaps_view_free(struct gl_heaps_view *hv);

/* One view per heap of hs, in registration order. */
int gl_heap_views(const struct gl_heaps *hs, struct gl_heap_view **out, size_t *n);
void gl_heap_views_free(struct gl_heap_view *v, size_t n);

/* "kv_cache layer 0" or "heap 0x7f…" */
const char *gl_heap_label(const struct gl_heap *h, char *buf, size_t sz);
/* One character per cell of an occupancy map, at most `width` characters
 * (cells merged evenly): '.' free, '1'..'9' tenths in use, '#' full. */
void gl_occupancy_strip(const uint8_t *cells, size_t ncells, size_t width, char *out);

#endif
