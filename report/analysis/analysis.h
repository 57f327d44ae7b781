/* analysis.h — the answers computed from a loaded run: the ledger of what
 * was live at an instant (peak, OOM), leak chains, per-step growth, and
 * hole density of pools and reserved ranges. */
#ifndef GL_ANALYSIS_H
#define GL_ANALYSIS_H

#include "frames.h"
#include "grow.h"
#include "model.h"
#include "model_pool_sweep.h"

/* A frame a view's table refers to (it lives in the run's frames). */
struct gl_frame_ref {
    const struct gl_frame *f;
};

/* A growable list of integers, as views keep ids and figures. */
struct gl_i64s {
    int64_t *v;
    size_t n, cap;
};
/* Append a; 0, or -1 out of memory. */
static inline int gl_i64s_push(struct gl_i64s *x, int64_t a)
{
    if (gl_grow((void **)&x->v, &x->cap, x->n, sizeof *x->v, 1024))
        return -1;
    x->v[x->n++] = a;
    return 0;
}

struct gl_group {
    int64_t stack_id;
    uint64_t bytes, count;
    int64_t first_ns, last_ns;
    const char *category;
    const struct gl_alloc *sample; /* one allocation of the group (NULL: a row of the allocator's cache) */
    uint64_t *steps;               /* growth analysis: live bytes per step */
    uint64_t requested;            /* bytes asked (tensors: less than their blocks' bytes) */
    const char *what;              /* a row that is no stack's: what it is (GL_ROW_*) */
};

/* Rows of a ledger that no stack made: the caching allocator's segments
 * beside its tensors. */
#define GL_ROW_CACHED "cached_free"  /* free blocks inside its segments */
#define GL_ROW_PENDING "pending"     /* freed tensors waiting for their streams (record_stream) */
/* What such a row is, in words: "[free blocks cached in ...]" */
const char *gl_row_text(const char *what);

struct gl_groups {
    struct gl_group *v;
    size_t n;
    uint64_t total_bytes, total_count;
    size_t nsteps;               /* growth analysis: entries of each group's steps[] */
    /* on a device with PyTorch's caching allocator (gl_device.blocks):
     * the ledger's total as its layers */
    int layered;
    int tensors_only;                                  /* gl_groups_keep_tensors: the rest left out */
    uint64_t tensors, tensors_requested, tensor_count; /* live tensors (block bytes) */
    uint64_t cached, pending, segments;                /* the rest of its segments; how many segments */
    uint64_t outside;                                  /* CUDA memory outside the allocator */
    uint64_t small_bytes, small_count;                 /* gl_leaks: what min_bytes left out */
};

void gl_groups_free(struct gl_groups *g);

/* Live allocations of `device` (-2: every device) right after event `seq`,
 * counted kinds only, grouped by stack, biggest first. */
int gl_ledger_at(struct gl_run *r, int device, int64_t seq, struct gl_groups *out);

/* Keep the tensors of a ledger (PyTorch blocks) and nothing else. */
void gl_groups_keep_tensors(struct gl_groups *g);

/* A failed CUDA allocation that PyTorch's caching allocator made for a
 * segment just before its own out-of-memory (fails[k]): reported with
 * that one. */
int gl_fail_absorbed(const struct gl_run *r, size_t k);

struct gl_leak_opts {
    uint64_t min_bytes;     /* chains smaller than this are left out */
    int64_t lifetime_ns;    /* > 0: also allocations alive at least this long */
    int include_host;       /* pinned host memory too */
};

/* Allocations never freed (or, with lifetime, long-lived), by stack. */
int gl_leaks(struct gl_run *r, int device, const struct gl_leak_opts *o, struct gl_groups *out);

/* Stacks whose live bytes grow from step to step. Steps end at the run's
 * step marks (gl_run.steps), else they are `nsteps` slices of the run
 * holding equal numbers of allocations. A stack (with s: a chain of frame
 * names, gl_groups_merge_chains) is reported when its live bytes at the
 * end of each step never go down and rise in at least half of the steps,
 * by at least min_bytes in total. */
int gl_growth(struct gl_run *r, int device, int nsteps, uint64_t min_bytes, struct gl_stacks *s,
              struct gl_groups *out);

/* Merge groups whose stacks have the same chain of frame names (one
 * leak chain for a loop the compiler unrolled, or a function called from
 * two lines of the same caller-less frame); re-sorts biggest first. */
void gl_groups_merge_chains(struct gl_groups *g, struct gl_stacks *s);

/* Categories: fill g->category for every group (identity and lifetime
 * first, then the rules; the allocator's rows keep theirs). */
void gl_groups_categorize(struct gl_groups *g, const struct gl_rules *rules, struct gl_stacks *s);

/* Held at exit by design, not a leak: a caching allocator's memory, module
 * globals, the graph pool (gl_is_cached_category), or a tensor tagged as a
 * parameter, gradient, optimizer state, KV cache or buffer. */
int gl_group_is_held(const struct gl_group *g);
/* ... by identity (the second kind). */
int gl_group_is_tagged(const struct gl_group *g);

/* Category totals of a set of groups, biggest first. */
struct gl_cat_total {
    const char *category;
    uint64_t bytes, count;
    uint64_t requested;
};
size_t gl_category_totals(const struct gl_groups *g, struct gl_cat_total *out, size_t max);

/* ---- holes ---- */

struct gl_hole_stat {
    int64_t seq, ts_ns;
    uint64_t reserved, live, free, largest_free;
    uint64_t holes;
    double external_fragmentation; /* 1 - largest_free / free (freemap.h: gl_free_ratios) */
    double largest_free_ratio;     /* largest_free / free */
    int64_t unused_bytes; /* bytes of live blocks beyond what they asked for (internal
                             fragmentation: unused / live); -1: not known */
    double internal_fragmentation; /* unused_bytes / live (0 when either is 0 or unknown) */
};

#define GL_HOLES_ALLOCATOR "caching allocator" /* gl_pool_holes.what of PyTorch's allocator */

struct gl_pool_holes {
    const char *what;  /* "async pool", "vmm reservation", GL_HOLES_ALLOCATOR */
    uint64_t pool;     /* pool handle, or reservation address */
    int device;
    uint64_t regions;  /* address regions the pool ever used (the allocator: its samples) */
    uint64_t sampled_reserved; /* the pool's own reserved figure, highest sample (0: none) */
    struct gl_hole_stat worst, end; /* worst: most free bytes outside the largest free block */
    struct gl_hole_stat *series;
    size_t nseries;
    size_t worst_index; /* worst is series[worst_index] */
};

/* Hole density of every stream-ordered pool (address-level: regions are
 * the merged extents of everything the pool ever handed out), every
 * reserved VA range (mapped vs unmapped) and PyTorch's caching allocator on
 * each device (its samples: holes_allocator.c); only the pool (or
 * reservation) *only when it is not NULL (0 is the device's default pool). */
int gl_holes(struct gl_run *r, const uint64_t *only, struct gl_pool_holes **out, size_t *n);
/* "async pool 0x55…", "default async pool", "vmm reservation 0x7f…",
 * "PyTorch's caching allocator" */
const char *gl_pool_label(const struct gl_pool_holes *p, char *buf, size_t sz);
void gl_holes_free(struct gl_pool_holes *h, size_t n);
/* PyTorch's caching allocator on `device` from its samples
 * (allocator_samples): the worst moment over all of them, the last, and a
 * series of at most 65 that holds both. 1: filled; 0: no samples; -1: out
 * of memory. */
int gl_holes_allocator(struct gl_run *r, int device, struct gl_pool_holes *ph);

#endif
