/* model_folded.h — a bounded recording as the report reads it (schema 5,
 * docs/bounded-recording.md): the budget's figures from meta (budget_*) and
 * the step aggregates (step_stacks) added to the run's counts, so that the
 * calls and events said are the program's, not the rows kept. The peak,
 * OOM, leak and step answers need nothing from here: what they read (the
 * windows, every allocation outliving its step, the marks) is in the rows. */
#ifndef GL_MODEL_FOLDED_H
#define GL_MODEL_FOLDED_H

#include <stddef.h>
#include <stdint.h>

struct gl_run;

struct gl_step_end {
    int64_t seq, ts_ns; /* the step's last event, the moment it ended */
};

struct gl_kept_step {
    int64_t step;
    char why[12]; /* peak, failure, first, growth, last, overflow */
};

struct gl_folded {
    int budgeted;                    /* the run was recorded with a budget */
    uint64_t budget, used;           /* bytes */
    uint64_t steps_full, steps_folded, pairs, windows_dropped, rows_dropped, aggregate_rows, width;
                                     /* steps_*: in the reader's numbering (folded: those with pairs
                                        aggregated, full: the rest) */
    int64_t folded_events;           /* rows not kept: 2 per pair folded */
    struct gl_kept_step *windows;    /* the steps kept in full (step_windows), in order */
    size_t nwindows;
    /* where each step ended (step i: ends[i]; the step after the last end
     * runs to the run's end): step_ends, or in a schema-5 file written
     * before it the reader's own steps (gl_run.steps) */
    struct gl_step_end *ends;
    size_t nends;
    int ends_recorded;               /* 1: from step_ends; 0: the reader's own steps */
    /* The writer ends a step at every mark; the reader's steps are the
     * optimizer's when it marked two or more (gl_run.steps): each writer
     * step's reader step (0-based, gl_step_at), or NULL where they are the
     * same. What the verbs say is in the reader's numbering. */
    long *reader_step;
    size_t nreader_step;
};

/* Fill r->folded (zeroed for a run recorded in full or an older schema).
 * 0, or -1 with "FILE: problem" in err. */
int gl_run_load_folded(struct gl_run *r, char *err, size_t errsz);
/* Was step `step` (0-based, step_windows' numbering) aggregated, not kept
 * in full? */
int gl_run_step_folded(const struct gl_run *r, long step);
/* The step (0-based, step_windows' numbering) event seq / moment ts_ns
 * falls in: the first whose end is at or after it (nends past the last). */
long gl_run_fold_step_of_seq(const struct gl_run *r, int64_t seq);
long gl_run_fold_step_of_ns(const struct gl_run *r, int64_t ts_ns);
/* When step `step` began and ended (*lo_ns: the end of the step before,
 * or the run's start; *hi_ns: its own end, or the run's end). */
/* The steps kept in full nearest to `step`: the index in folded.windows
 * of the last one before it (*before) and the first after it (*after),
 * -1 where there is none. */
void gl_run_fold_kept_around(const struct gl_run *r, long step, long *before, long *after);
/* How many steps the run has in step_windows' numbering, as its ends say
 * (step_ends has the last, partial one's end too; the reader's own steps
 * do not); a window past them is not counted. */
long gl_run_fold_nsteps(const struct gl_run *r);
/* The reader's step (gl_step_at's numbering, what the verbs say) that the
 * writer's step `step` lies in. */
long gl_run_fold_reader_step(const struct gl_run *r, long step);
void gl_run_fold_step_span(const struct gl_run *r, long step, int64_t *lo_ns, int64_t *hi_ns);
/* What a bounded recording aggregated, for the verbs to say: */
#define GL_BUDGET_MAX_RANGES 6 /* ranges of steps written out; the rest counted */
struct gl_fold_gaps {
    long steps, of;  /* the reader's steps with pairs aggregated, of all its steps (0: nothing aggregated) */
    uint64_t pairs;  /* alloc+free pairs they hold, not rows */
    char ranges[256]; /* "2-9, 11-24 and 26-39" (GL_BUDGET_MAX_RANGES, then "and N more ranges") */
};
void gl_run_fold_gaps(const struct gl_run *r, struct gl_fold_gaps *g);
void gl_run_free_folded(struct gl_run *r);

#endif
