/* trace_downsample.h — a Perfetto counter track cut to what a screen
 * shows: the run's span in `buckets` equal time buckets, and of each
 * track's points in a bucket only its lowest, its highest and its last
 * (in their order). The highest point of every bucket is kept, so each
 * track's peak keeps its exact value and time; the last, so the level a
 * bucket leaves is the level the next one starts from. */
#ifndef GL_TRACE_DOWNSAMPLE_H
#define GL_TRACE_DOWNSAMPLE_H

#include <stddef.h>
#include <stdint.h>

#include "export_views.h"

#define GL_TRACE_DEFAULT_BUCKETS 2000

struct gl_trace_ds;

/* A downsampler over [t0, t1] (ns), or NULL out of memory. */
struct gl_trace_ds *gl_trace_ds_new(size_t buckets, int64_t t0, int64_t t1);
/* Point p, the next in event order: 0, or -1 out of memory. */
int gl_trace_ds_add(struct gl_trace_ds *d, const struct gl_trace_point *p);
/* The points kept, in event order, appended to v->points; the number seen
 * into v->points_seen. Frees d. 0, or -1 out of memory. */
int gl_trace_ds_finish(struct gl_trace_ds *d, struct gl_perfetto_view *v);

#endif
