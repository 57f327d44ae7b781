/* export_views.h — what each `export` format shows, computed from the
 * model before anything is written (view_perfetto.c, view_export.c,
 * view_speedscope.c, view_memviz.c); render/export*.c only write them. */
#ifndef GL_EXPORT_VIEWS_H
#define GL_EXPORT_VIEWS_H

#include <stddef.h>
#include <stdint.h>

#include "analysis.h"
#include "model_annot.h"

/* ---- perfetto: counter tracks, slices of marks and ranges ---- */

#define GL_TRACE_MAX_CATS 64 /* more categories than a trace wants: the last takes the rest */

/* One point of a counter track: device `dev` (-1: unknown), category
 * `cat` (an index into cats; -1: the device's live bytes). */
struct gl_trace_point {
    int64_t ts_ns;
    int64_t bytes;
    int16_t dev, cat;
};

/* A range on the thread that opened it, or a mark as a slice on the marks
 * track (from the mark before, or the start, to it). */
struct gl_trace_slice {
    const struct gl_annot *a;
    int64_t start_ns, end_ns;
    int tid;            /* GL_TRACE_MARKS_TID for a mark */
    int first_on_track; /* the first slice of its track: name the track */
};
#define GL_TRACE_MARKS_TID 0 /* no thread of a process has tid 0: the marks track */

struct gl_perfetto_view {
    struct gl_run *run;
    struct gl_stacks stacks;
    const char *cats[GL_TRACE_MAX_CATS];
    int ncats;
    struct gl_trace_point *points; /* in the order they change */
    size_t npoints, cap;
    struct gl_annots annots;
    struct gl_trace_slice *slices;
    size_t nslices;
};

/* 0, or -1 out of memory (free it either way). */
int gl_perfetto_view(struct gl_perfetto_view *v, struct gl_run *r, const struct gl_rules *rules);
void gl_perfetto_view_free(struct gl_perfetto_view *v);

#endif
