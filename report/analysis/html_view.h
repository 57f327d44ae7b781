/* html_view.h — what the interactive HTML report shows of one process
 * (render/html_data.h has the contract with the page's scripts), computed
 * before anything is written: the shared tables of categories, frames and
 * ledger rows (html_rows.c), each device's timeline of moments and the
 * changes of every row between them (html_timeline.c), and each device's
 * OOMs, leaks and growth, the holes, the heaps and the diagnosis
 * (view_html.c). Rows and frames get their ids in the order the page's
 * data names them. */
#ifndef GL_HTML_VIEW_H
#define GL_HTML_VIEW_H

#include <stddef.h>
#include <stdint.h>

#include "dossier.h"
#include "heaps.h"
#include "model_annot.h"
#include "moment.h"
#include "strmap.h"
#include "u64map.h"

struct gl_layers_done;

struct gl_html_opts {
    const struct gl_rules *rules;
    int device;                   /* -2: every device */
    const struct gl_moment *at;   /* --at, or NULL */
    int buckets;                  /* time slices of the timeline; 0: 1000 */
    size_t delta_budget;          /* most delta entries; 0: 2,000,000 */
};

#define GL_HTML_MAX_ANNOTS 200000 /* marks, and ranges, sent to the page */

/* A ledger row: the stacks with one chain of frame names, in one category
 * (or a row no stack made: what is GL_ROW_*). */
struct gl_html_row {
    int cat;
    int64_t stack_id;
    size_t frames_at, nframes; /* in row_frames */
    const char *what;
};

/* The page's shared tables; an id is an index. */
struct gl_html_tables {
    const char *cats[GL_MAX_CATS * 2];
    int ncats;
    struct gl_strmap frame_ids;
    struct gl_frame_ref *frames; /* by frame id */
    struct gl_strmap row_ids;
    struct gl_html_row *rows;
    size_t nrows, rows_cap;
    struct gl_i64s row_frames;
};

/* Groups of the ledger (merged by chain, categorized) with each one's row. */
struct gl_html_groups {
    struct gl_groups g;
    int64_t *row; /* by group */
};

struct gl_html_oom {
    const struct gl_fail *fail;
    struct gl_i64s frames;        /* frame ids of its stack */
    struct gl_html_groups ledger; /* live at that moment */
};

struct gl_html_moment {
    int64_t seq, ts;
};

/* A device's timeline: its moments, the live bytes at each, and how each
 * row changed since the moment before: delta[off[i] .. off[i + 1]) are
 * (row, dbytes, dcount) triples of moment i. */
struct gl_html_timeline {
    struct gl_html_moment *m;
    size_t nm, mcap;
    struct gl_i64s bytes, off, delta;
};

struct gl_html_device {
    const struct gl_device *dev;
    int shown;                    /* --device: the rest below is for shown devices */
    struct gl_html_timeline tl;
    struct gl_html_oom *ooms;     /* one per failure, its segment retries left out */
    size_t nooms;
    struct gl_html_groups leaks;
    uint64_t leak_bytes, cached_bytes;
    struct gl_usage usage;        /* what no allocation API shows */
    int outside_known;            /* usage has a source and is not unknown */
    uint64_t outside_peak, outside_end;
    int growth_steps;             /* 0: no growth analysis */
    struct gl_html_groups growth;
};

struct gl_html_view {
    struct gl_run *run;
    const struct gl_html_opts *o;
    struct gl_stacks stacks;
    struct gl_html_tables t;
    struct gl_dossier ds;         /* its diagnosis is the box at the top */
    struct gl_annots annots;
    size_t annots_left_out;       /* beyond GL_HTML_MAX_ANNOTS of a kind */
    int buckets;                  /* time slices the timelines were cut into */
    struct gl_html_device devs[GL_MAX_DEVICES]; /* by the run's device index */
    struct gl_pool_holes *holes;
    size_t nholes;
    struct gl_heaps_view heaps;
    int heaps_known;              /* 0: the page goes without heaps */
    int64_t **heap_peak_rows, **heap_leak_rows; /* by heap, by group */
    /* the replay's scratch (html_timeline.c) */
    uint32_t *alloc_row;          /* by allocation: the row of an item of the ledger */
    int64_t cached_row, pending_row; /* -1: no device has blocks */
    struct gl_u64map by_site;     /* stack_id, api, kind, category -> row */
    struct gl_layers_done *done;  /* blocks reusable after their free, by when */
    size_t ndone;
};

/* 0, or -1 out of memory (free it either way). */
int gl_html_view(struct gl_html_view *v, struct gl_run *r, const struct gl_html_opts *o);
void gl_html_view_free(struct gl_html_view *v);

#endif
