/* view_gate.c — the gate's checks: the leak chains of each run that count
 * against --max-leak-bytes (not caching-allocator memory unless
 * --count-cached, not --ignore'd), their sum, and each run's peak against
 * --max-peak-bytes. */
#include <stdlib.h>

#include "dossier.h"
#include "views.h"

static void check_run(struct gl_gate_run *g, struct gl_run *r, const struct gl_gate_query *q)
{
    g->run = r;
    gl_stacks_init(&g->stacks, r);
    struct gl_leak_opts lo = {0, 0, 0};
    gl_leaks(r, -2, &lo, &g->chains);
    gl_groups_merge_chains(&g->chains, &g->stacks);
    gl_groups_categorize(&g->chains, q->rules, &g->stacks);
    g->counted = calloc(g->chains.n + 1, 1);
    for (size_t k = 0; g->counted && k < g->chains.n; k++) {
        const struct gl_stack *st = gl_stack_get(&g->stacks, g->chains.v[k].stack_id);
        int skip = !q->count_cached && gl_group_is_held(&g->chains.v[k]);
        for (int i = 0; i < q->nignore && !skip; i++)
            skip = gl_stack_matches(st, &q->ignore[i]);
        g->counted[k] = !skip;
    }
    g->peak = 0;
    g->device = -1;
    for (int d = 0; d < r->ndevs; d++)
        if (r->devs[d].peak > g->peak || g->device < 0) {
            g->peak = r->devs[d].peak;
            g->device = r->devs[d].device;
        }
    g->peak_fail = q->have_peak && g->peak > q->max_peak;
}

int gl_gate_view(struct gl_gate_view *v, struct gl_run **runs, int n, const struct gl_gate_query *q)
{
    v->q = q;
    v->n = n;
    v->leak = 0;
    v->peak_fail = 0;
    v->runs = calloc((size_t)n, sizeof *v->runs);
    if (!v->runs)
        return -1;
    for (int i = 0; i < n; i++) {
        struct gl_gate_run *g = &v->runs[i];
        check_run(g, runs[i], q);
        for (size_t k = 0; g->counted && k < g->chains.n; k++)
            v->leak += g->counted[k] ? g->chains.v[k].bytes : 0;
        v->peak_fail |= g->peak_fail;
    }
    v->fail = v->leak > q->max_leak || v->peak_fail;
    return 0;
}

void gl_gate_view_free(struct gl_gate_view *v)
{
    for (int i = 0; v->runs && i < v->n; i++) {
        gl_groups_free(&v->runs[i].chains);
        gl_stacks_free(&v->runs[i].stacks);
        free(v->runs[i].counted);
    }
    free(v->runs);
}
