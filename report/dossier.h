/* dossier.h — everything the report shows about one process, computed
 * once and then rendered as text or JSON (render_*.c). */
#ifndef GL_DOSSIER_H
#define GL_DOSSIER_H

#include <stdio.h>

#include "analysis.h"
#include "model_usage.h"
#include "moment.h"
#include "heaps.h"

#define GL_MAX_CATS 32

struct gl_oom_view {
    const struct gl_fail *fail;
    uint64_t live_bytes;
    struct gl_groups ledger;
};

struct gl_dev_view {
    struct gl_device *dev;
    struct gl_groups peak;      /* ledger at the peak */
    struct gl_cat_total cats[GL_MAX_CATS];
    size_t ncats;
    struct gl_groups at;        /* ledger at the --at moment (when given) */
    struct gl_cat_total at_cats[GL_MAX_CATS];
    size_t at_ncats;
    struct gl_groups leaks;     /* unfreed at exit, categorized */
    uint64_t leak_bytes, cached_bytes; /* real leaks / held by a caching allocator */
    struct gl_oom_view *ooms;
    size_t nooms;
    struct gl_usage usage;      /* the process's own figure: what is outside any allocation API */
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
};

struct gl_dossier_opts {
    int device;                 /* -2: all */
    const struct gl_rules *rules;
    const struct gl_moment *at; /* the ledger at this moment too, or NULL */
};

int gl_dossier_build(struct gl_dossier *d, struct gl_run *run, const struct gl_dossier_opts *o);
void gl_dossier_free(struct gl_dossier *d);

/* Renderers. `top` = ledger rows shown per device. (HTML: html_app.h.) */
void gl_render_text(FILE *f, struct gl_dossier *ds, size_t n, int top);
void gl_render_json(FILE *f, struct gl_dossier *ds, size_t n, int top);

#endif
