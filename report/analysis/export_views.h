/* export_views.h — what each `export` format shows, computed from the
 * model before anything is written (view_perfetto.c, view_export.c,
 * view_speedscope.c, view_memviz.c); render/export*.c only write them. */
#ifndef GL_EXPORT_VIEWS_H
#define GL_EXPORT_VIEWS_H

#include <stddef.h>
#include <stdint.h>

#include "analysis.h"
#include "model_annot.h"
#include "strmap.h"

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
    size_t buckets;                /* each track cut to this many time buckets (trace_downsample.h); 0: every point */
    size_t points_seen;            /* the points before the cut */
    struct gl_annots annots;
    struct gl_trace_slice *slices;
    size_t nslices;
    char budget_note[512];         /* a bounded recording's aggregated steps (budget_notes.h); "" if none */
};

/* Every counter point (buckets 0), or each track's lowest, highest and
 * last of each of `buckets` time buckets. 0, or -1 out of memory (free it
 * either way). */
int gl_perfetto_view(struct gl_perfetto_view *v, struct gl_run *r, const struct gl_rules *rules, size_t buckets);
void gl_perfetto_view_free(struct gl_perfetto_view *v);

/* ---- folded and csv: the allocations of --what ---- */

/* The groups of `what`: "peak" one set per device (live at its peak),
 * "leaks" never freed, "allocs" everything, one set each. */
struct gl_folded_view {
    struct gl_stacks stacks;
    struct gl_groups *sets;
    size_t nsets;
};
int gl_folded_view(struct gl_folded_view *v, struct gl_run *r, const char *what);
void gl_folded_view_free(struct gl_folded_view *v);

/* The allocations of `what` (as folded counts them), in event order: an
 * index into r->allocs each. */
struct gl_csv_view {
    struct gl_run *run;
    struct gl_stacks stacks;
    size_t *idx;
    size_t n;
};
int gl_csv_view(struct gl_csv_view *v, struct gl_run *r, const char *what);
void gl_csv_view_free(struct gl_csv_view *v);

/* ---- speedscope: one sampled profile per device at its peak, one of what
 * was never freed ---- */

struct gl_speedscope_profile {
    const struct gl_device *dev; /* NULL: never freed, every device */
    struct gl_groups g;          /* a sample a group, weighted by its bytes */
    size_t *sample_at;           /* by group (g.n + 1): its frame ids in sample_frames, root first */
};

struct gl_speedscope_view {
    struct gl_run *run;
    struct gl_stacks stacks;
    struct gl_strmap frame_ids;
    struct gl_frame_ref *frames; /* by frame id: the shared table */
    size_t cap;
    struct gl_speedscope_profile *p;
    size_t np;
    struct gl_i64s sample_frames;
};

/* fold: allocator internals as one "[allocator]" frame at the top. 0, or
 * -1 out of memory (free it either way). */
int gl_speedscope_view(struct gl_speedscope_view *v, struct gl_run *r, int fold);
void gl_speedscope_view_free(struct gl_speedscope_view *v);

/* ---- memory_viz: PyTorch's snapshot (render/export_memviz.c says what
 * each part is) ---- */

/* One trace entry: action as PyTorch names it; an "oom" carries the
 * device's free bytes in addr. */
struct gl_memviz_entry {
    const char *action;
    uint64_t addr, size, stream;
    int64_t stack_id, ts_ns;
};

/* A device's trace: the entries kept, of `total` (the last max_entries). */
struct gl_memviz_trace {
    struct gl_memviz_entry *v;
    size_t n, cap, total;
    int cut; /* fewer kept than there were */
};

/* A block of a segment at the end; state as PyTorch names it. */
struct gl_memviz_block {
    uint64_t addr, size, requested;
    const char *state;
    int64_t stack_id;
};

/* A segment of the end state: live memory (or mapped ranges that touch,
 * one expandable segment), its blocks tiling it. */
struct gl_memviz_segment {
    int device, expandable;
    uint64_t addr, total, allocated, active, requested, stream;
    int64_t stack_id;
    size_t blocks_at, nblocks; /* in blocks */
};

struct gl_memviz_view {
    struct gl_run *run;
    struct gl_stacks stacks;
    size_t max_entries;             /* 0: every entry */
    struct gl_memviz_segment *segs;
    size_t nsegs, segs_cap;
    struct gl_memviz_block *blocks;
    size_t nblocks, blocks_cap;
    struct gl_memviz_trace *traces; /* by device 0 .. ntraces - 1 */
    int ntraces;
    size_t unknown;                 /* allocations on an unknown device, not in the snapshot */
};

/* 0, or -1 out of memory (free it either way). */
int gl_memviz_view(struct gl_memviz_view *v, struct gl_run *r, size_t max_entries);
void gl_memviz_view_free(struct gl_memviz_view *v);

#endif
