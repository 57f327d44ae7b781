/* growth_streamed.h — the growth analysis's groups (analysis.c, gl_growth)
 * from what a live-only load gathered (model_growth.h) rather than from
 * every allocation: the same groups, in the same order, with the same
 * bytes at each step end, before gl_growth sums and judges them. */
#ifndef GL_GROWTH_STREAMED_H
#define GL_GROWTH_STREAMED_H

#include <stddef.h>
#include <stdint.h>

#include "analysis.h"

/* out: the groups of `device` (-2: all, merged per group over devices)
 * with each step end's changes; *bounds (malloc'ed) and *nb: the step
 * ends (r->steps, else `nsteps` slices of the ledger's rows; *nb 0 when
 * there are fewer rows than slices). 0, or -1 out of memory. */
int gl_growth_groups_streamed(const struct gl_run *r, int device, int nsteps, int64_t **bounds, size_t *nb,
                              struct gl_groups *out);

#endif
