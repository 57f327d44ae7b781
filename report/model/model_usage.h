/* model_usage.h — what no allocation API shows, from a database's
 * usage_samples (schema 2; none in older databases): the process's own
 * device memory next to the ledger's live bytes at the same point, at the
 * device's peak and at the end. */
#ifndef GL_MODEL_USAGE_H
#define GL_MODEL_USAGE_H

#include <stdint.h>

#include "model.h"

struct gl_usage_point {
    int found;
    int64_t seq;
    uint64_t process, ledger; /* the process's figure; the ledger then */
};

struct gl_usage {
    char source[24];           /* nvml_process, nvml_device, cudaMemGetInfo; "" when never sampled */
    int unknown;               /* cudaMemGetInfo with one sample: its own baseline, nothing measured */
    struct gl_usage_point peak; /* the first sample at or after the peak (else the last before) */
    struct gl_usage_point end;  /* the last sample */
};

/* The usage figures of `device` (zeroed when the database has none). */
void gl_usage_load(struct gl_run *r, const struct gl_device *dev, struct gl_usage *u);
/* process - ledger, never below 0: memory outside any allocation API. */
static inline uint64_t gl_usage_outside(const struct gl_usage_point *p)
{
    return p->process > p->ledger ? p->process - p->ledger : 0;
}
/* How a source reads in a sentence. */
const char *gl_usage_source_text(const char *source);

#endif
