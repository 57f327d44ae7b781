/* sweep.h — the run's memory events in order, for passes that replay it:
 * every allocation and every free of the kinds asked for (usually the
 * memory that counts toward a device, gl_kind_counts_on_device), as one
 * array sorted by event number. */
#ifndef GL_SWEEP_H
#define GL_SWEEP_H

#include <stddef.h>
#include <stdint.h>

#include "model.h"

struct gl_sweep {
    uint32_t *ev; /* (index into run->allocs) << 1 | 1 for its free */
    size_t n;
};

int gl_sweep_build(const struct gl_run *r, struct gl_sweep *s, int (*want)(const struct gl_alloc *a));
/* The same for the allocations m[0..nm) (pointers into r->allocs, in event
 * order) and those of their frees at or before end_seq. */
int gl_sweep_members(const struct gl_run *r, const struct gl_alloc *const *m, size_t nm, int64_t end_seq,
                     struct gl_sweep *s);

/* The usual choice: memory that counts toward a device. */
static inline int gl_sweep_counted(const struct gl_alloc *a)
{
    return gl_kind_counts_on_device(a->kind);
}
void gl_sweep_free(struct gl_sweep *s);

/* The allocation an entry is about, whether it is the free, its event
 * number and time, and its signed change of live bytes. */
static inline const struct gl_alloc *gl_sweep_alloc(const struct gl_run *r, uint32_t e)
{
    return &r->allocs[e >> 1];
}
static inline int gl_sweep_is_free(uint32_t e)
{
    return (int)(e & 1u);
}
static inline int64_t gl_sweep_seq(const struct gl_run *r, uint32_t e)
{
    const struct gl_alloc *a = gl_sweep_alloc(r, e);
    return gl_sweep_is_free(e) ? a->free_seq : a->seq;
}
static inline int64_t gl_sweep_ts(const struct gl_run *r, uint32_t e)
{
    const struct gl_alloc *a = gl_sweep_alloc(r, e);
    return gl_sweep_is_free(e) ? a->free_ns : a->alloc_ns;
}

#endif
