/* views.h — what a verb computes from the loaded runs before anything is
 * printed: built by view_*.c, printed by render_*.c (render.h). */
#ifndef GL_VIEWS_H
#define GL_VIEWS_H

#include <regex.h>
#include <stdint.h>

#include "analysis.h"
#include "heaps.h"

/* ---- summary ---- */

struct gl_summary_view {
    const struct gl_run *run;
    const struct gl_device *top; /* the highest peak (NULL: no device) */
    int ndev;                    /* devices with a peak */
    uint64_t unfreed, unfreed_bytes; /* device memory never freed */
    uint64_t ooms;               /* out-of-memory failures */
    uint64_t bad_frees;          /* failed frees */
};

void gl_summary_view(struct gl_summary_view *v, const struct gl_run *r);

/* ---- leaks ---- */

struct gl_leaks_query {
    int device;                  /* -2: every device */
    uint64_t min_bytes;          /* smaller chains are left out */
    double lifetime_ms;          /* > 0: also allocations that lived this long */
    int steps;                   /* > 0: memory growing over this many steps */
    const struct gl_rules *rules;
};

/* What keeps a group's memory alive: the recorded retention paths
 * (model_retention.h) to its blocks (retention_match.c). */
struct gl_retention_path;
struct gl_kept {
    const struct gl_retention_path *paths[3]; /* to the newest blocks first */
    size_t n;                                  /* of them in paths[] */
    size_t total;                              /* paths of that moment holding the group's blocks (0: none) */
    int moment;                                /* the one shown: the out-of-memory, else exit, else steps */
};

struct gl_leaks_view {
    const struct gl_run *run;
    const struct gl_leaks_query *q;
    struct gl_stacks stacks;
    struct gl_groups leaks;      /* chains never freed, biggest first (cached ones included) */
    struct gl_groups growing;    /* stacks growing step after step */
    int nsteps;                  /* steps the growth analysis used */
    uint64_t leak_bytes, cached_bytes;
    uint64_t held_bytes;         /* tensors tagged by identity, live at the end: the program's, not leaks */
    size_t nleak;                /* chains that are leaks, not cache */
    struct gl_heaps_view heaps;  /* regions of the program's own pools never given back */
    struct gl_kept *kept_leaks;   /* what keeps each of leaks.v[] alive (NULL: out of memory) */
    struct gl_kept *kept_growing; /* and each of growing.v[] */
};

/* What keeps group g (one of v's leaks or growing) alive; NULL: nothing known. */
const struct gl_kept *gl_leaks_view_kept(const struct gl_leaks_view *v, const struct gl_group *g);

void gl_leaks_view(struct gl_leaks_view *v, struct gl_run *r, const struct gl_leaks_query *q);
void gl_leaks_view_free(struct gl_leaks_view *v);

/* ---- diff ---- */

/* One stack (matched across the two runs by its frames' names). */
struct gl_diff_row {
    char sig[1024];
    int64_t a, b;             /* bytes live at each run's peak */
    int64_t la, lb;           /* bytes never freed */
    int64_t stack_a, stack_b; /* the stack in each run (0: not there) */
};

struct gl_diff_view {
    struct gl_run *run[2];
    struct gl_stacks stacks[2];
    struct gl_diff_row *rows; /* biggest change at the peak first */
    size_t n, cap;
    uint64_t peak[2];         /* each run's highest device peak (at: live at the moment) */
    int64_t leak[2];          /* never freed */
    const struct gl_moment *at[2]; /* compare these moments (every device), not the peaks */
};

struct gl_moment;
/* at: NULL for the peaks, else the moment of each side (a and b may be
 * the same run). */
void gl_diff_view(struct gl_diff_view *v, struct gl_run *a, struct gl_run *b, const struct gl_moment *const *at);
void gl_diff_view_free(struct gl_diff_view *v);

/* ---- gate ---- */

struct gl_gate_query {
    uint64_t max_leak, max_peak;
    int have_leak;               /* --max-leak-bytes given (else only peaks are gated) */
    int have_peak;               /* --max-peak-bytes given */
    int count_cached;            /* caching-allocator segments count as leaks */
    const regex_t *ignore;       /* chains with a frame matching one are left out */
    int nignore;
    const struct gl_rules *rules;
};

/* One run's checks, made while the run is loaded (gl_gate_check); the
 * gate keeps only a gl_gate_result of them once the run is freed. */
struct gl_gate_check {
    struct gl_run *run;
    struct gl_stacks stacks;
    struct gl_groups chains;     /* leak chains, merged and categorized */
    char *counted;               /* counted[k]: chain k counts against the limit */
    uint64_t leak;               /* the counted chains' bytes */
    uint64_t peak;               /* the highest of the process's devices */
    int device;                  /* where (-1: no device memory) */
    int peak_fail;
};

/* What the gate keeps of one run: copies, nothing that points into it. */
struct gl_gate_result {
    char *path;                  /* the run's path */
    int unfinished;              /* the recording did not finish (gated all the same) */
    uint64_t peak;
    int device, peak_fail;       /* as in gl_gate_check */
    char *chains;                /* its counted chains as text lines (gl_render_gate_chains; "" when none),
                                    NULL without --max-leak-bytes */
};

/* The verdict over the runs checked so far, one at a time. */
struct gl_gate_view {
    const struct gl_gate_query *q;
    struct gl_gate_result *runs; /* room for the n the view was begun with */
    int n;                       /* results kept */
    uint64_t leak;               /* counted bytes over every run */
    int peak_fail, fail;
};

/* Run r's checks: 0, or -1 out of memory (free it either way). */
int gl_gate_check(struct gl_gate_check *g, struct gl_run *r, const struct gl_gate_query *q);
void gl_gate_check_free(struct gl_gate_check *g);
/* A view with room for n runs: 0, or -1 out of memory (free it either way). */
int gl_gate_view_begin(struct gl_gate_view *v, int n, const struct gl_gate_query *q);
/* Keep what the verdict needs of g, with chains (malloc'd or NULL; the view
 * owns it from now on), and update the verdict: 0, or -1 out of memory. */
int gl_gate_view_add(struct gl_gate_view *v, const struct gl_gate_check *g, char *chains);
void gl_gate_view_free(struct gl_gate_view *v);

#endif
