/* model_usage.h — what no allocation API shows, from a database's
 * usage_samples (schema 2; none in older databases): the process's own
 * device memory next to the ledger's live bytes at the same point, at the
 * device's peak (the sample nearest its time) and at the end. */
#ifndef GL_MODEL_USAGE_H
#define GL_MODEL_USAGE_H

#include <stdint.h>

#include "model.h"

/* The usage figures of `device` (zeroed when the database has none), as
 * the load read them (dev->usage). */
void gl_usage_load(struct gl_run *r, const struct gl_device *dev, struct gl_usage *u);
/* Read them into dev->usage (at load: model_tables.c). */
void gl_usage_read(struct gl_run *r, struct gl_device *dev);
/* process - ledger, never below 0: memory outside any allocation API. */
static inline uint64_t gl_usage_outside(const struct gl_usage_point *p)
{
    return p->process > p->ledger ? p->process - p->ledger : 0;
}
/* "sampled 163 ms before the peak", "sampled 40 µs after the peak",
 * "sampled at the peak" (peak: "the peak", or "it" after a mention): the
 * peak sample's distance (gl_usage.peak), into buf. */
const char *gl_usage_from_peak_text(int64_t from_peak_ns, const char *peak, char *buf, size_t sz);
/* How a source reads in a sentence. */
const char *gl_usage_source_text(const char *source);

#endif
