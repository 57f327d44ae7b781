/* view_leaks.c — the leaks view of one run: leak chains (never freed,
 * merged by chain, categorized; caching-allocator memory apart), with
 * steps the stacks that grow step after step, and the regions of the
 * program's own pools never given back (heaps.h). */
#include "views.h"

#include <stdio.h>

#include <stdlib.h>

#include "dossier.h"
#include "retention_match.h"

static struct gl_kept *kept_of_groups(struct gl_leaks_view *v, const struct gl_groups *g);

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
    (void)gl_heaps_view(&v->heaps, r); /* the chains above stand without them (why: v->heaps.err) */
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
    v->kept_leaks = kept_of_groups(v, &v->leaks);
    v->kept_growing = kept_of_groups(v, &v->growing);
}

/* kept[i]: what keeps g->v[i] alive (NULL when out of memory: nothing said) */
static struct gl_kept *kept_of_groups(struct gl_leaks_view *v, const struct gl_groups *g)
{
    struct gl_kept *k = g->n ? calloc(g->n, sizeof *k) : NULL;
    for (size_t i = 0; k && i < g->n; i++)
        gl_kept_alive(v->run, &v->stacks, &g->v[i], &k[i]);
    return k;
}

const struct gl_kept *gl_leaks_view_kept(const struct gl_leaks_view *v, const struct gl_group *g)
{
    const struct gl_kept *k = NULL;
    if (v->kept_leaks && g >= v->leaks.v && g < v->leaks.v + v->leaks.n)
        k = &v->kept_leaks[g - v->leaks.v];
    else if (v->kept_growing && g >= v->growing.v && g < v->growing.v + v->growing.n)
        k = &v->kept_growing[g - v->growing.v];
    return k && k->total ? k : NULL;
}

void gl_leaks_view_free(struct gl_leaks_view *v)
{
    free(v->kept_leaks);
    free(v->kept_growing);
    gl_groups_free(&v->leaks);
    gl_groups_free(&v->growing);
    gl_heaps_view_free(&v->heaps);
    gl_stacks_free(&v->stacks);
}
