/* analysis.h — the answers computed from a loaded run: the ledger of what
 * was live at an instant (peak, OOM), leak chains, per-step growth, and
 * hole density of pools and reserved ranges. */
#ifndef GL_ANALYSIS_H
#define GL_ANALYSIS_H

#include "frames.h"
#include "model.h"

struct gl_group {
    int64_t stack_id;
    uint64_t bytes, count;
    int64_t first_ns, last_ns;
    const char *category;
    const struct gl_alloc *sample; /* one allocation of the group */
    uint64_t *steps;               /* growth analysis: live bytes per step */
};

struct gl_groups {
    struct gl_group *v;
    size_t n;
    uint64_t total_bytes, total_count;
};

void gl_groups_free(struct gl_groups *g);

/* Live allocations of `device` (-2: every device) right after event `seq`,
 * counted kinds only, grouped by stack, biggest first. */
int gl_ledger_at(struct gl_run *r, int device, int64_t seq, struct gl_groups *out);

struct gl_leak_opts {
    uint64_t min_bytes;     /* chains smaller than this are left out */
    int64_t lifetime_ns;    /* > 0: also allocations alive at least this long */
    int include_host;       /* pinned host memory too */
};

/* Allocations never freed (or, with lifetime, long-lived), by stack. */
int gl_leaks(struct gl_run *r, int device, const struct gl_leak_opts *o, struct gl_groups *out);

/* Stacks whose live bytes grow from step to step. Steps are `nsteps`
 * slices of the run holding equal numbers of allocations. A stack is
 * reported when its live bytes at the end of each step never go down and
 * rise in at least half of the steps, by at least min_bytes in total. */
int gl_growth(struct gl_run *r, int device, int nsteps, uint64_t min_bytes, struct gl_groups *out);

/* Merge groups whose stacks have the same chain of frame names (one
 * leak chain for a loop the compiler unrolled, or a function called from
 * two lines of the same caller-less frame); re-sorts biggest first. */
void gl_groups_merge_chains(struct gl_groups *g, struct gl_stacks *s);

/* Categories: fill g->category for every group. */
void gl_groups_categorize(struct gl_groups *g, const struct gl_rules *rules, struct gl_stacks *s);

/* Category totals of a set of groups, biggest first. */
struct gl_cat_total {
    const char *category;
    uint64_t bytes, count;
};
size_t gl_category_totals(const struct gl_groups *g, struct gl_cat_total *out, size_t max);

/* ---- holes ---- */

struct gl_hole_stat {
    int64_t seq, ts_ns;
    uint64_t reserved, live, free, largest_free;
    uint64_t holes;
    double external_fragmentation; /* 1 - largest_free / free (freemap.h: gl_free_ratios) */
    double largest_free_ratio;     /* largest_free / free */
};

struct gl_pool_holes {
    const char *what;  /* "async pool", "vmm reservation" */
    uint64_t pool;     /* pool handle, or reservation address */
    int device;
    uint64_t regions;  /* address regions the pool ever used */
    uint64_t sampled_reserved; /* the pool's own reserved figure, highest sample (0: none) */
    struct gl_hole_stat worst, end; /* worst: most free bytes outside the largest free block */
    struct gl_hole_stat *series;
    size_t nseries;
    size_t worst_index; /* worst is series[worst_index] */
};

/* Hole density of every stream-ordered pool (address-level: regions are
 * the merged extents of everything the pool ever handed out) and every
 * reserved VA range (mapped vs unmapped); only the pool (or reservation)
 * *only when it is not NULL (0 is the device's default pool). */
int gl_holes(struct gl_run *r, const uint64_t *only, struct gl_pool_holes **out, size_t *n);
/* "async pool 0x55…", "default async pool", "vmm reservation 0x7f…" */
const char *gl_pool_label(const struct gl_pool_holes *p, char *buf, size_t sz);
void gl_holes_free(struct gl_pool_holes *h, size_t n);

#endif
