/* view_leaks.c — the leaks view of one run: leak chains (never freed,
 * merged by chain, categorized; caching-allocator memory apart), with
 * steps the stacks that grow step after step, and the regions of the
 * program's own pools never given back (heaps.h). */
#include "views.h"

#include <stdio.h>

#include "dossier.h"

void gl_leaks_view(struct gl_leaks_view *v, struct gl_run *r, const struct gl_leaks_query *q)
{
    v->run = r;
    v->q = q;
    gl_stacks_init(&v->stacks, r);
    struct gl_leak_opts lo = {q->min_bytes, (int64_t)(q->lifetime_ms * 1e6), 1};
    gl_leaks(r, q->device, &lo, &v->leaks);
    gl_groups_merge_chains(&v->leaks, &v->stacks);
    gl_groups_categorize(&v->leaks, q->rules, &v->stacks);
    v->growing = (struct gl_groups){0};
    v->nsteps = q->steps ? gl_growth(r, q->device, q->steps, q->min_bytes, &v->stacks, &v->growing) : 0;
    if (q->steps)
        gl_groups_categorize(&v->growing, q->rules, &v->stacks);
    if (gl_heaps_view(&v->heaps, r)) /* the chains above stand without them */
        fprintf(stderr, "gpuledger leaks: %s\n", v->heaps.err);
    v->leak_bytes = v->cached_bytes = v->held_bytes = 0;
    v->nleak = 0;
    for (size_t k = 0; k < v->leaks.n; k++) {
        if (gl_is_cached_category(v->leaks.v[k].category)) {
            v->cached_bytes += v->leaks.v[k].bytes;
        } else if (gl_group_is_tagged(&v->leaks.v[k])) {
            v->held_bytes += v->leaks.v[k].bytes;
        } else {
            v->leak_bytes += v->leaks.v[k].bytes;
            v->nleak++;
        }
    }
}

void gl_leaks_view_free(struct gl_leaks_view *v)
{
    gl_groups_free(&v->leaks);
    gl_groups_free(&v->growing);
    gl_heaps_view_free(&v->heaps);
    gl_stacks_free(&v->stacks);
}
