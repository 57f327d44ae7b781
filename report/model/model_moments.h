/* model_moments.h — what `report` reads from a live-only load (model.h,
 * GL_LOAD_MOMENTS), gathered as the rows come so that its memory is the
 * live set's and the stacks', not the allocations':
 *
 *  - which freed records to keep: those live, or freed but not yet
 *    reusable, at a moment a ledger of the report is taken — each device's
 *    peak and tensor peak (the highest so far while the scan runs, so a
 *    record kept for a peak that a higher one passes is given up later),
 *    every failed call, the last step's end;
 *  - each device's tensor peak and requested peak (model_blocks.c's
 *    replay of the block rows, in row order);
 *  - how many allocations each stack made (the report's Python share).
 *
 * A block freed by `free` is held until the next look at the records
 * held: a database from before `free` was one event with the block's
 * completion writes a completion after it, which a full load makes the
 * block's reuse. Where the scan cannot match a full load (repeated seqs;
 * such a completion of a record given up, or after another block of its
 * device; a block never reusable, freed before the requested peak) it
 * says so (inexact) and the load is a full one. */
#ifndef GL_MODEL_MOMENTS_H
#define GL_MODEL_MOMENTS_H

#include <stddef.h>
#include <stdint.h>

#include "model.h"
#include "u64map.h"

struct gl_moments_dev {
    uint64_t blocks, requested;       /* live block bytes; requested bytes, allocation to reuse */
    uint64_t tensor_peak, requested_peak;
    int64_t tensor_peak_seq, tensor_peak_ns;
    int64_t requested_rise_seq;       /* where the requested peak last rose */
    int64_t last_alloc_seq;           /* the last block made */
};

struct gl_moments {
    int64_t last_step_end;            /* 0: no steps */
    struct gl_moments_dev dev[GL_MAX_DEVICES + 1]; /* by device + 1 */
    /* records freed but kept for a moment, to be looked at again once
     * there are twice as many as the last look left */
    uint32_t *held;
    size_t nheld, heldcap, look_at;
    int count_stacks;                 /* the run has Python frames (meta python_version) */
    struct gl_u64map stack_allocs;    /* stack id -> allocations made with it */
    int inexact;
};

void gl_moments_init(struct gl_moments *m, int64_t last_step_end, int count_stacks);
void gl_moments_free(struct gl_moments *m);

/* The scan's hooks, in row order: an allocation kept (0, or -1 out of
 * memory), a free, a block's completion (its done_seq set; was_done: it
 * had one already, from its `free`). */
int gl_moments_alloc(struct gl_moments *m, const struct gl_alloc *a);
void gl_moments_free_row(struct gl_moments *m, const struct gl_alloc *a);
void gl_moments_done(struct gl_moments *m, const struct gl_alloc *a, int was_done);

/* Whether freed record a is live or waiting for reuse at a moment of the
 * report (its fails are r->fails, in seq order; its peaks r->devs' and m's
 * so far). */
int gl_moments_needed(const struct gl_moments *m, const struct gl_run *r, const struct gl_alloc *a);

/* After the scan, the records kept in r->allocs: the requested peak is
 * exact unless a block never reusable was freed before it rose last
 * (inexact set); each device with blocks gets its tensor and requested
 * peaks. */
void gl_moments_finish(struct gl_moments *m, struct gl_run *r);

#endif
