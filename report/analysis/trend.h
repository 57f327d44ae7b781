/* trend.h — where a device's live tensors are heading: the chains of
 * frames whose live bytes grow from step to step (the `leaks --steps`
 * rule, gl_growth, on the run's own steps: the optimizer's or the
 * program's marks), as a rate per step, since which step, the user's
 * line, and how many steps of that rate the device still has room for.
 * The OOM verdict (verdict.c) and the diagnosis (diagnosis.c) read it. */
#ifndef GL_TREND_H
#define GL_TREND_H

#include <stdint.h>

#include "analysis.h"

/* An OOM whose headroom (cached free + the device's free bytes) holds
 * fewer steps of growth than this is growth: the device is full within a
 * few steps whatever the allocator does. */
#define GL_TREND_FEW_STEPS 5

struct gl_trend {
    int known;              /* 1: live tensors grow step over step */
    size_t nsteps;          /* step ends the analysis used (the run's steps) */
    uint64_t per_step;      /* bytes per step: the growing chains' median rise per step, summed */
    uint64_t grown;         /* their rise from the first step end to the last */
    long since_step;        /* the first step in which they rose (0-based, as "optimizer step N") */
    int nchains;            /* growing chains */
    int64_t stack_id;       /* the one growing most */
    uint64_t top_per_step;  /* its rise per step */
    char where[300];        /* its user frame in a few words ("train_step (train.py:19)") */
};

/* The trend of `device` (known = 0 without two or more steps, or when
 * nothing grows). 0, or -1 out of memory. */
int gl_trend_build(struct gl_run *r, int device, struct gl_stacks *s, struct gl_trend *t);

/* The step an event falls in: how many step ends come before it (0-based,
 * like "optimizer step N"); -1 when the run has no steps. */
long gl_step_at(const struct gl_run *r, int64_t seq);

/* Steps of growth that `room` bytes hold (room / per_step), as a real
 * number; -1 when nothing grows. */
double gl_trend_steps_in(const struct gl_trend *t, uint64_t room);

#endif
