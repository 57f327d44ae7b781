/* fold.h — a bounded recording (GPULEDGER_BUDGET, docs/bounded-recording.md):
 * the rows of the step in progress are held in memory (rows.h) and, when
 * the step ends (a mark), either written in full — the step raised a peak,
 * had an OOM or another failure, is one of the first steps, is where the
 * live bytes start to grow, or is the last — or folded: each allocation
 * made and freed inside the step (a pair no other row names) becomes a
 * count in step_stacks (per stack, kind and contexts of the allocation and
 * the free) and only the rest is written. A step kept only because it
 * raised the peak is held one step more and folded if the next step raises
 * the peaks it raised again (a leak raises it every step); once written, it
 * loses its pairs' rows (deleted, then aggregated) only when every peak it
 * holds (each device's, PyTorch's figures: GL_FOLD_PEAKS of them, each on
 * its own) has risen again in a later step. Aggregates of GL_FOLD_BUCKETS
 * buckets of `width` steps, then twice as wide; near the budget the windows
 * narrow to the peaks and failures, past it rows outside them are dropped
 * and counted. Every figure goes to meta (budget_*). Writer thread only. */
#ifndef GL_FOLD_H
#define GL_FOLD_H

#include <stdint.h>

#include "gl_event.h"
#include "rows.h"
#include "u64map.h"
#include "wdb.h"

#define GL_FOLD_FIRST_STEPS 2        /* steps always written in full at the start */
#define GL_FOLD_MAX_HELD 262144      /* rows held for one step (~27 MB); more: written in full */
#define GL_FOLD_PSEUDO_STEP 65536    /* rows of a step while the run has no marks */
#define GL_FOLD_BUCKETS 256          /* aggregate buckets of one width before it doubles */
#define GL_FOLD_TIGHT_PERCENT 80     /* from here only peaks and failures keep full events */
/* the peaks a step can raise: device memory per device (index device + 1,
 * 0 unknown), then per device PyTorch's allocated, requested and reserved */
#define GL_FOLD_PEAKS (GL_MAX_DEVICES + 1 + 3 * GL_MAX_DEVICES)
#define GL_FOLD_PEAK_WORDS ((GL_FOLD_PEAKS + 63) / 64)

/* a set of peaks (bit i: peak i) */
struct gl_fold_peakset {
    uint64_t bit[GL_FOLD_PEAK_WORDS];
};

struct gl_fold_agg {
    int64_t ctx, free_ctx, kind, stack_id;
    uint64_t pairs, bytes;
};

/* a pair of a peak's window: its rows, and what it adds up to */
struct gl_fold_win {
    int64_t seq_alloc, seq_free;
    struct gl_fold_agg agg;
};

/* a written window kept only for the peaks it holds (those it raised that
 * no later step raised again): its pairs, to drop when it holds none */
struct gl_fold_window {
    uint64_t step;
    struct gl_fold_peakset held;
    struct gl_fold_win *pairs;
    size_t npairs, cap;
};

struct gl_fold {
    struct gl_wdb *w;
    sqlite3_stmt *ins, *del, *ins_win, *del_win, *ins_end;
    unsigned long long budget; /* bytes; 0: no budget (nothing here is used) */
    uint64_t step;             /* steps ended so far (the step in progress, 0-based) */
    uint64_t marks;            /* marks seen (none: steps are GL_FOLD_PSEUDO_STEP rows) */
    uint64_t peaks[GL_FOLD_PEAKS]; /* every peak when the step began */
    uint64_t prev_live;        /* live bytes at the last step's end */
    int prev_rose, keep, overflowed, level; /* level: 0 under 80 %, 1 tight, 2 over the budget */
    struct gl_fold_agg *aggs;  /* the bucket in progress */
    size_t naggs, aggs_cap;
    struct gl_u64map agg_idx;
    uint64_t bucket_lo, bucket_min, width, buckets_at_width; /* bucket_min: an older step folded into it */
    struct gl_row *pend;       /* a step kept only for raising the peak, held one step more */
    size_t npend, pend_cap;
    uint64_t pend_step;
    struct gl_fold_peakset pend_held; /* the peaks the pending step raised */
    int has_pending;
    struct gl_fold_window *wins; /* written windows kept only for their peaks */
    size_t nwins, wins_cap;
    uint8_t *flags;
    size_t flags_cap;
    /* what was done, for meta */
    uint64_t used, steps_full, steps_folded, steps_overflowed, pairs_folded, rows_dropped, agg_rows,
        windows_dropped;
};

int gl_fold_open(struct gl_fold *f, struct gl_wdb *w, unsigned long long budget);
void gl_fold_close(struct gl_fold *f);
/* The step in progress had a failure (an OOM): written in full. */
static inline void gl_fold_keep(struct gl_fold *f)
{
    f->keep = 1;
}
/* The step in progress ends (its mark held last), or the run ends (final),
 * at end_ns (written to step_ends with the last seq numbered so far).
 * peaks: every peak the store tracks now (GL_FOLD_PEAKS, laid out as said
 * there); live: live bytes now. */
int gl_fold_step_end(struct gl_fold *f, struct gl_rows *r, const uint64_t *peaks, uint64_t live, uint64_t end_ns,
                     int final);
/* The held rows reached GL_FOLD_MAX_HELD: write them as they are. */
int gl_fold_overflow(struct gl_fold *f, struct gl_rows *r);
/* At a commit: the file's size against the budget; narrows the windows
 * near it. 0 or -1. */
int gl_fold_measure(struct gl_fold *f);
/* The decision for one step, exposed for the unit tests: 1 full, 0 fold. */
int gl_fold_full(const struct gl_fold *f, int peak_raised, int growth_starts, int final);

#endif
