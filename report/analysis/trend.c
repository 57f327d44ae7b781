/* trend.c — see trend.h. */
#include "trend.h"

#include <stdlib.h>
#include <string.h>

#include "stack_text.h"

long gl_step_at(const struct gl_run *r, int64_t seq)
{
    return r->nsteps ? (long)gl_run_step_of(r, seq) : -1;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* A growing chain's typical rise per step: the median of its rises from
 * the first step it rose in on (steps it stayed flat count as 0); *since
 * = that first step. */
static uint64_t median_rise(const struct gl_group *g, size_t nb, long *since)
{
    size_t first = 0;
    for (size_t s = 1; s < nb && !first; s++)
        if (g->steps[s] > g->steps[s - 1])
            first = s;
    *since = (long)first;
    if (!first)
        return 0;
    size_t n = nb - first;
    uint64_t *d = malloc(n * sizeof *d);
    if (!d)
        return (g->steps[nb - 1] - g->steps[first - 1]) / n;
    for (size_t s = first; s < nb; s++)
        d[s - first] = g->steps[s] - g->steps[s - 1];
    qsort(d, n, sizeof *d, cmp_u64);
    uint64_t m = d[n / 2];
    free(d);
    return m;
}

int gl_trend_build(struct gl_run *r, int device, struct gl_stacks *s, struct gl_trend *t)
{
    memset(t, 0, sizeof *t);
    t->since_step = -1;
    if (r->nsteps < 2) /* growth needs the run's own steps, not slices */
        return 0;
    struct gl_groups g;
    if (gl_growth(r, device, 2, 0, s, &g) < 0) {
        gl_groups_free(&g);
        return 0;
    }
    t->nsteps = g.nsteps;
    for (size_t i = 0; i < g.n; i++) {
        long since;
        uint64_t rise = median_rise(&g.v[i], g.nsteps, &since);
        if (!rise)
            continue;
        t->known = 1;
        t->nchains++;
        t->per_step += rise;
        t->grown += g.v[i].bytes;
        if (t->since_step < 0 || since < t->since_step)
            t->since_step = since;
        if (rise > t->top_per_step) {
            t->top_per_step = rise;
            t->stack_id = g.v[i].stack_id;
        }
    }
    if (t->known)
        gl_stack_user_frame(gl_stack_get(s, t->stack_id), t->where, sizeof t->where);
    gl_groups_free(&g);
    return 0;
}

double gl_trend_steps_in(const struct gl_trend *t, uint64_t room)
{
    if (!t->known || !t->per_step)
        return -1;
    return (double)room / (double)t->per_step;
}
