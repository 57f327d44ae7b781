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

struct gl_folded {
    int budgeted;                    /* the run was recorded with a budget */
    uint64_t budget, used;           /* bytes */
    uint64_t steps_full, steps_folded, pairs, windows_dropped, rows_dropped, aggregate_rows, width;
    int64_t folded_events;           /* rows not kept: 2 per pair folded */
    int64_t *windows;                /* the steps kept in full (step_windows), in order */
    size_t nwindows;
    /* where each step ended (step i: ends[i]; the step after the last end
     * runs to the run's end): step_ends, or in a schema-5 file written
     * before it the reader's own steps (gl_run.steps) */
    struct gl_step_end *ends;
    size_t nends;
    int ends_recorded;               /* 1: from step_ends; 0: the reader's own steps */
};

/* Fill r->folded (zeroed for a run recorded in full or an older schema).
 * 0, or -1 with "FILE: problem" in err. */
int gl_run_load_folded(struct gl_run *r, char *err, size_t errsz);
/* Was step `step` (0-based, gl_step_at) aggregated, not kept in full? */
int gl_run_step_folded(const struct gl_run *r, long step);
/* The step (0-based, step_windows' numbering) event seq / moment ts_ns
 * falls in: the first whose end is at or after it (nends past the last). */
long gl_run_fold_step_of_seq(const struct gl_run *r, int64_t seq);
long gl_run_fold_step_of_ns(const struct gl_run *r, int64_t ts_ns);
/* When step `step` began and ended (*lo_ns: the end of the step before,
 * or the run's start; *hi_ns: its own end, or the run's end). */
void gl_run_fold_step_span(const struct gl_run *r, long step, int64_t *lo_ns, int64_t *hi_ns);
void gl_run_free_folded(struct gl_run *r);

#endif
