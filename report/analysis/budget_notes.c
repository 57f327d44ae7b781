/* budget_notes.c — see budget_notes.h. */
#include "budget_notes.h"

#include <stdio.h>
#include <string.h>

#include "units.h"

const char *gl_budget_note(const struct gl_run *r, char *buf, size_t sz)
{
    struct gl_fold_gaps g;
    gl_run_fold_gaps(r, &g);
    buf[0] = 0;
    if (g.steps > 0)
        snprintf(buf, sz,
                 "step%s %s (%ld of %ld) aggregated by the budget: %llu alloc+free pair%s not shown"
                 " (step_aggregates has them by step and stack)",
                 gl_s((uint64_t)g.steps), g.ranges, g.steps, g.of, (unsigned long long)g.pairs, gl_s(g.pairs));
    return buf;
}

/* "step K (why, +a to +b)" of kept step index i into buf; "none" for -1. */
static const char *kept_text(const struct gl_run *r, long i, char *buf, size_t sz)
{
    if (i < 0) {
        snprintf(buf, sz, "none");
        return buf;
    }
    const struct gl_kept_step *k = &r->folded.windows[i];
    int64_t lo, hi;
    char a[32], b[32];
    gl_run_fold_step_span(r, (long)k->step, &lo, &hi);
    snprintf(buf, sz, "step %ld (%s, %s to %s)", gl_run_fold_reader_step(r, (long)k->step), k->why,
             gl_fmt_rel(r, lo, a, sizeof a),
             gl_fmt_rel(r, hi, b, sizeof b));
    return buf;
}

int gl_budget_moment_check(const struct gl_run *r, const struct gl_moment *m, char *err, size_t errsz)
{
    const struct gl_folded *f = &r->folded;
    if (!f->budgeted || (!m->asked_ns && !m->seq))
        return 0;
    long step = m->asked_ns ? gl_run_fold_step_of_ns(r, m->asked_ns) : gl_run_fold_step_of_seq(r, m->seq);
    if ((size_t)step < f->nends &&
        (m->asked_ns ? f->ends[step].ts_ns == m->asked_ns : f->ends[step].seq == m->seq))
        return 0; /* a step's end: the live set there is the full recording's */
    if (!gl_run_step_folded(r, step))
        return 0;
    long before, after;
    gl_run_fold_kept_around(r, step, &before, &after);
    int64_t lo, hi;
    char a[32], b[32], kb[128], ka[128];
    gl_run_fold_step_span(r, step, &lo, &hi);
    int part = r->folded.reader_step != NULL; /* the program's marks cut the reader's steps in parts */
    snprintf(err, errsz,
             "%s: --at '%.100s' is inside step %ld (%s%s to %s%s), which the budget aggregated (its alloc+free pairs"
             " are counts by stack, not events); ask for a moment of a step kept in full instead: %s before it,"
             " %s after it",
             r->path, m->when, gl_run_fold_reader_step(r, step), part ? "its part from " : "",
             gl_fmt_rel(r, lo, a, sizeof a), gl_fmt_rel(r, hi, b, sizeof b), part ? ", between two marks" : "",
             kept_text(r, before, kb, sizeof kb), kept_text(r, after, ka, sizeof ka));
    return -1;
}
