/* budget_notes.h — what a bounded recording (docs/bounded-recording.md)
 * did not keep, said where a verb would otherwise show less than the
 * program did: a --at moment inside an aggregated step is refused (its
 * events are counts by stack, not rows), and the exports and holes say
 * which steps were aggregated and how many alloc+free pairs they do not
 * show. Text only; the callers print it. */
#ifndef GL_BUDGET_NOTES_H
#define GL_BUDGET_NOTES_H

#include <stddef.h>

#include "model.h"
#include "moment.h"

/* "steps 2-9, 11-24 and 26-39 (36 of 41) were aggregated by the budget:
 * 288 alloc+free pairs are not shown (step_aggregates has them by step and
 * stack)" into buf; "" when nothing was aggregated. */
const char *gl_budget_note(const struct gl_run *r, char *buf, size_t sz);

/* 0 when moment m is exact (not inside an aggregated step); else -1 with
 * "FILE: --at 'WHEN' is inside step N (+a to +b), …: ask for step K (why,
 * +c to +d) before it or step L after it" in err. */
int gl_budget_moment_check(const struct gl_run *r, const struct gl_moment *m, char *err, size_t errsz);

#endif
