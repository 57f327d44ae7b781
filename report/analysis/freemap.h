/* freemap.h — the free space of an address range while sub-allocations come
 * and go: free bytes, holes (maximal runs of free bytes), the largest free
 * run, and the two fragmentation figures every gpuledger report uses:
 *
 *   external_fragmentation = 1 - largest_free / free   (0: all free space in
 *                            one run; near 1: scattered into small holes)
 *   largest_free_ratio     = largest_free / free       (= 1 - the above)
 *
 * With no free bytes, external_fragmentation is 0 and largest_free_ratio 1
 * (nothing is scattered). One definition for every kind of hole: NVTX heaps,
 * the caching allocator's segments, stream-ordered pools, VMM reservations.
 *
 * A gl_freemap is a segment tree over the elementary intervals between the
 * boundaries given at init (every address where a sub-allocation may start
 * or end). Each node keeps a cover count, so allocations may overlap (a
 * free missed by the recorder leaves a stale cover, never a negative one)
 * and each add/remove costs O(log n). */
#ifndef GL_FREEMAP_H
#define GL_FREEMAP_H

#include <stddef.h>
#include <stdint.h>

struct gl_free_stats {
    uint64_t extent;       /* bytes of the range (minus excluded gaps) */
    uint64_t used, free;   /* used + free = extent */
    uint64_t largest_free; /* the largest run of free bytes */
    uint64_t holes;        /* maximal runs of free bytes */
    double external_fragmentation;
    double largest_free_ratio;
};

/* Fill both ratios of s from s->free and s->largest_free. */
void gl_free_ratios(struct gl_free_stats *s);

/* Is a worse than b? Worse = more free bytes outside the largest run (free
 * space that, being scattered, cannot serve a large request); on a tie,
 * more holes. The "worst moment" of every hole report. */
int gl_free_worse(const struct gl_free_stats *a, const struct gl_free_stats *b);

struct gl_freenode;
struct gl_freegap;

struct gl_freemap {
    uint64_t lo, hi;
    uint64_t *cuts;            /* sorted, unique, cuts[0] = lo, cuts[nleaves] = hi */
    size_t nleaves, size;      /* size: leaves rounded up to a power of two */
    struct gl_freenode *node;  /* 2 * size nodes, 1-based */
    uint64_t excluded;         /* bytes taken out of the extent */
    struct gl_freegap *excl;   /* those gaps */
    size_t nexcl;
};

/* A map of [lo, hi), all free, with allocation boundaries at cuts (any
 * order, duplicates and values outside [lo, hi] ignored). Returns 0, or -1
 * on out of memory (the map is then empty and safe to free). */
int gl_freemap_init(struct gl_freemap *m, uint64_t lo, uint64_t hi, const uint64_t *cuts, size_t ncuts);
void gl_freemap_free(struct gl_freemap *m);

/* [lo, hi) gets one more (delta +1) or one less (delta -1) allocation over
 * it. Clipped to the map; lo and hi should be among the cuts (a bound
 * between two cuts is rounded outwards to the enclosing elementary
 * interval). */
void gl_freemap_add(struct gl_freemap *m, uint64_t lo, uint64_t hi, int delta);

/* [lo, hi) is not part of the space (e.g. between the regions of a pool):
 * neither used nor free, and it separates holes. Call once per gap. */
void gl_freemap_exclude(struct gl_freemap *m, uint64_t lo, uint64_t hi);

/* The current figures. */
void gl_freemap_stats(const struct gl_freemap *m, struct gl_free_stats *out);

/* Bytes allocated (covered, not excluded) inside [lo, hi): for occupancy
 * pictures, one query per column. */
uint64_t gl_freemap_used_in(const struct gl_freemap *m, uint64_t lo, uint64_t hi);

#endif
