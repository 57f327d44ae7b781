/* model_retention.h — what keeps memory alive, as the job's retention
 * finder recorded it (the retention table, schema 3; none in older
 * databases): each path with the block it holds. */
#ifndef GL_MODEL_RETENTION_H
#define GL_MODEL_RETENTION_H

#include <stddef.h>
#include <stdint.h>

#include "model.h"

struct gl_retention_path {
    int64_t seq;                  /* the last event before the search */
    int64_t step;                 /* optimizer steps ended before it (-1: no optimizer) */
    uint64_t ptr, bytes;          /* the tensor storage's address (its block's) and bytes */
    int moment;                   /* GL_RETENTION_OOM, _STEP, _EXIT (store/retention.h) */
    char *path;                   /* "train.py: global kept (list, 18 items) → [17] → Tensor 1000 MiB" */
    char *root_file;              /* the root's file ("" unknown) */
    int root_line;                /* its global's or local's line (0: unknown) */
    int complete;                 /* 0: a bound cut the search */
    int cut;                      /* 1: the text was cut to fit */
    int64_t elapsed_us;           /* the search's time */
    const struct gl_alloc *block; /* the allocation live at ptr then (a block first; NULL: none) */
    struct gl_alloc held;         /* what block points at when the load gave that record up */
};

/* Load r->retention (r->n_retention rows, in the table's order) and link
 * each to its block. 0, or -1 with "FILE: problem" in err. */
int gl_retention_load(struct gl_run *r, char *err, size_t errsz);
void gl_retention_free(struct gl_run *r);
/* GL_LOAD_GROWTH, before the scan: the rows, each to be linked to its
 * block as the scan gives records up (gl_retention_offer, a copy kept)
 * and then by gl_retention_load to the records kept. 0, or -1 with err. */
int gl_retention_read_early(struct gl_run *r, char *err, size_t errsz);
/* Record a as the block of the paths it may be (the first made at their
 * address live then, a PyTorch block first). */
void gl_retention_offer(struct gl_run *r, const struct gl_alloc *a);
/* "at an out-of-memory", "at a step that grew", "at exit". */
const char *gl_retention_moment_text(int moment);

#endif
