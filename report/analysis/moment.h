/* moment.h — `--at WHEN`: a moment of a run named the way people think of
 * it, turned into an event number (the state right after that event):
 *
 *   #N            event N
 *   3.2s, 150ms, 20us, 500ns, +1.5s
 *                 the last event stamped at or before that long after the
 *                 run's first event
 *   oom, oom@N    just before the first (Nth) out-of-memory failure
 *   LABEL, LABEL@N
 *                 a mark with that label: the mark itself; a range
 *                 (gpuledger_range_push, NVTX): the highest point of live
 *                 device memory inside it. @N: its Nth occurrence.
 *   label:TEXT    TEXT as a label even if it reads like one of the above
 */
#ifndef GL_MOMENT_H
#define GL_MOMENT_H

#include <stddef.h>
#include <stdint.h>

#include "model.h"
#include "model_annot.h"

struct gl_moment {
    int64_t seq;    /* the state right after this event (0: before any) */
    int64_t ts_ns;  /* that event's time */
    int64_t asked_ns; /* a time asked for (3.2s): that moment; 0 otherwise */
    char when[128]; /* as the user wrote it */
    char desc[256]; /* why this event, for the reader ("mark 'step 3'"); "" for #N */
};

/* 0, or -1 with "FILE: problem" in err. */
int gl_moment_resolve(struct gl_run *r, const struct gl_annots *an, const char *when, struct gl_moment *m,
                      char *err, size_t errsz);

/* The same, loading the run's marks and ranges itself; a moment inside a
 * step a bounded recording aggregated is refused (budget_notes.h). */
int gl_moment_at(struct gl_run *r, const char *when, struct gl_moment *m, char *err, size_t errsz);

/* The event look-up WHEN needs, added to what (struct gl_load: the load
 * answers it; none for a label or an out-of-memory). 0, or -1 when what
 * holds GL_MAX_LOOKUPS already. */
int gl_moment_lookup(const char *when, struct gl_load *what);

/* Parse "3.2s" / "150ms" / "20us" / "500ns" (optional '+'): 0 and *ns. */
int gl_parse_duration(const char *s, int64_t *ns);

#endif
