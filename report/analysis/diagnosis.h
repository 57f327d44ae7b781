/* diagnosis.h — what `report` says first: the findings of one process in
 * order of importance, each one sentence, its evidence and its remedy
 * (docs/report.md, "Diagnosis"): the out-of-memory failures (the step,
 * what was asked, the verdict), live tensors growing step over step (the
 * rate, since which step, the user's line, the step at which the device
 * fills), what dominates the peak, leaks at exit, fragmentation of the
 * caching allocator, memory outside any allocation API. A pure function of
 * the dossier (the model and its views); render_diagnosis.c prints it. */
#ifndef GL_DIAGNOSIS_H
#define GL_DIAGNOSIS_H

#include <stddef.h>
#include <stdint.h>

#define GL_DIAG_EVIDENCE 6

struct gl_finding {
    const char *kind;         /* "oom", "growth", "peak", "leaks", "fragmentation", "outside" */
    const char *verdict;      /* oom: "growth", "fragmentation", "demand" (NULL: no verdict) */
    int device;
    int64_t seq;              /* the moment it is about (0: none) */
    long step;                /* the step that moment falls in (-1: the run has no steps) */
    uint64_t bytes;           /* oom: asked; growth: per step; peak: the peak; leaks: never freed;
                                 fragmentation: cached free; outside: outside any API */
    char sentence[1024];
    char evidence[GL_DIAG_EVIDENCE][1200];
    int nevidence;
    char remedy[600];
    /* growth, and an OOM whose verdict is growth: the addresses of the
     * growing chain's blocks live at seq (what a retention path names) */
    uint64_t *blocks;
    size_t nblocks;
};

struct gl_diagnosis {
    struct gl_finding *v;
    size_t n;
};

struct gl_dossier;
/* The findings of d (built after the rest of the dossier). 0, or -1 out
 * of memory. */
int gl_diagnose(struct gl_diagnosis *dg, struct gl_dossier *d);
void gl_diagnosis_free(struct gl_diagnosis *dg);

/* Add one evidence line to f (nothing once it has GL_DIAG_EVIDENCE). */
void gl_finding_evidence(struct gl_finding *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Add the evidence line "kept alive by: PATH" for each retention path the
 * run recorded for one of the finding's blocks (diagnosis_retention.c). */
void gl_finding_kept_alive(struct gl_dossier *d, struct gl_finding *f);

#endif
