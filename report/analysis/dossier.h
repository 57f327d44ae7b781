/* dossier.h — everything the report shows about one process, computed
 * once and then rendered as text or JSON (render_*.c). */
#ifndef GL_DOSSIER_H
#define GL_DOSSIER_H

#include <stdio.h>

#include "analysis.h"
#include "diagnosis.h"
#include "model_usage.h"
#include "moment.h"
#include "heaps.h"
#include "trend.h"

#define GL_MAX_CATS 32

/* Why PyTorch's caching allocator ran out of memory (gl_oom_verdict). */
struct gl_verdict {
    int known;                  /* 0: not an allocator OOM, or no holes sampled then */
    int fragmentation;          /* this request: 1: enough cached free bytes, no hole big enough; 0: demand */
    int growth;                 /* underlying: live tensors grow so that the room left (cached free + the
                                   device's free bytes) holds fewer than GL_TREND_FEW_STEPS steps of it */
    double steps_left;          /* steps of growth that room holds (-1: nothing grows) */
    int limited;                /* the device had the bytes free, the allocator failed anyway: a limit
                                   (set_per_process_memory_fraction), so they are no room */
    const struct gl_trend *trend; /* the device's (never NULL when known) */
    int expandable;             /* the allocator already used expandable segments */
    uint64_t asked, cached_free, holes, largest_hole, device_free;
    uint64_t tensors, reserved; /* live tensors (block bytes), the allocator's segments */
};

struct gl_oom_view {
    const struct gl_fail *fail;
    uint64_t live_bytes;
    struct gl_groups ledger;
    struct gl_verdict verdict;
    int absorbed;               /* the allocator's failed cudaMalloc calls just before (gl_fail_absorbed) */
    uint64_t absorbed_size;     /* the last one's size */
};

struct gl_dev_view {
    struct gl_device *dev;
    struct gl_groups peak;      /* ledger at the peak */
    struct gl_cat_total cats[GL_MAX_CATS];
    size_t ncats;
    struct gl_groups at;        /* ledger at the --at moment (when given) */
    struct gl_cat_total at_cats[GL_MAX_CATS];
    size_t at_ncats;
    /* PyTorch's caching allocator (dev->blocks): the ledger at the tensor
     * peak, by stack and by category */
    struct gl_groups tensor_peak;
    struct gl_cat_total tensor_cats[GL_MAX_CATS];
    size_t ntensor_cats;
    struct gl_groups leaks;     /* unfreed at exit, categorized */
    uint64_t leak_bytes, cached_bytes; /* real leaks / held by a caching allocator */
    uint64_t held_bytes;        /* tensors held at exit by identity (parameters, optimizer state, ...) */
    struct gl_oom_view *ooms;
    size_t nooms;
    struct gl_usage usage;      /* the process's own figure: what is outside any allocation API */
    struct gl_trend trend;      /* live tensors step over step */
};

struct gl_dossier {
    struct gl_run *run;
    struct gl_stacks stacks;
    struct gl_dev_view devs[GL_MAX_DEVICES];
    int ndevs;
    struct gl_pool_holes *holes;
    size_t nholes;
    const struct gl_moment *at; /* --at, or NULL */
    struct gl_heaps_view heaps; /* the program's own pools (NVTX memory API, gpuledger.Pool) */
    char python_version[16];    /* "" when the run had no Python frames */
    size_t python_allocs;       /* allocations whose stack has Python frames */
    struct gl_diagnosis diag;   /* what the report says first (diagnosis.h) */
};

struct gl_dossier_opts {
    int device;                 /* -2: all */
    const struct gl_rules *rules;
    const struct gl_moment *at; /* the ledger at this moment too, or NULL */
};

/* 0, or -1 when the heaps could not be read (why: d->heaps.err; the rest
 * stands). */
int gl_dossier_build(struct gl_dossier *d, struct gl_run *run, const struct gl_dossier_opts *o);
void gl_dossier_free(struct gl_dossier *d);

/* The verdict at an out-of-memory of PyTorch's caching allocator (known
 * = 0 for any other failure), with the ledger live then (verdict.c). */
void gl_oom_verdict(struct gl_run *r, const struct gl_fail *f, const struct gl_groups *ledger,
                    const struct gl_trend *trend, struct gl_verdict *v);
/* It in one sentence ("fragmentation: ..." / "demand: ... the biggest are
 * ..." / "growth: this request: ...; underlying: ..."); "" when not known. */
void gl_verdict_text(const struct gl_verdict *v, const struct gl_groups *ledger, struct gl_stacks *s, char *buf,
                     size_t sz);

/* The verdict's name: "growth", "fragmentation", "demand" (NULL: not known). */
const char *gl_verdict_name(const struct gl_verdict *v);

/* The fleet's totals, summed one process at a time, so that a report over
 * many databases holds one dossier (and its run) at a time. */
struct gl_report_totals {
    size_t processes;
    uint64_t peak_bytes;        /* the sum of per-device peaks */
    uint64_t leak_bytes;        /* the sum of per-device leak chains' bytes */
};
/* Add d (before its run is freed). */
void gl_report_totals_add(struct gl_report_totals *t, const struct gl_dossier *d);

/* Renderers, a process at a time: begin (JSON), each process's dossier in
 * turn (i: its index), end with the totals. `top` = ledger rows shown per
 * device. (HTML: html_app.h.) */
struct gl_json;
void gl_render_text_process(FILE *f, struct gl_dossier *d, size_t i, int top);
void gl_render_text_end(FILE *f, const struct gl_report_totals *t);
void gl_render_json_begin(struct gl_json *j, FILE *f);
void gl_render_json_process(struct gl_json *j, struct gl_dossier *d, int top);
void gl_render_json_end(struct gl_json *j, const struct gl_report_totals *t);

#endif
