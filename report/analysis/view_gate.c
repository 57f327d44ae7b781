/* view_gate.c — the gate's checks, one run at a time: the leak chains of a
 * run that count against --max-leak-bytes (not caching-allocator memory
 * unless --count-cached, not --ignore'd) and its peak against
 * --max-peak-bytes (gl_gate_check, while the run is loaded); then what the
 * verdict needs of them, copied (gl_gate_view_add), and the sum over the
 * runs so far. */
#include <stdlib.h>
#include <string.h>

#include "dossier.h"
#include "views.h"

int gl_gate_check(struct gl_gate_check *g, struct gl_run *r, const struct gl_gate_query *q)
{
    g->run = r;
    gl_stacks_init(&g->stacks, r);
    struct gl_leak_opts lo = {0, 0, 0};
    gl_leaks(r, -2, &lo, &g->chains);
    gl_groups_merge_chains(&g->chains, &g->stacks);
    gl_groups_categorize(&g->chains, q->rules, &g->stacks);
    g->counted = calloc(g->chains.n + 1, 1);
    g->leak = 0;
    for (size_t k = 0; g->counted && k < g->chains.n; k++) {
        const struct gl_stack *st = gl_stack_get(&g->stacks, g->chains.v[k].stack_id);
        int skip = !q->count_cached && gl_group_is_held(&g->chains.v[k]);
        for (int i = 0; i < q->nignore && !skip; i++)
            skip = gl_stack_matches(st, &q->ignore[i]);
        g->counted[k] = !skip;
        g->leak += skip ? 0 : g->chains.v[k].bytes;
    }
    g->peak = 0;
    g->device = -1;
    for (int d = 0; d < r->ndevs; d++)
        if (r->devs[d].peak > g->peak || g->device < 0) {
            g->peak = r->devs[d].peak;
            g->device = r->devs[d].device;
        }
    g->peak_fail = q->have_peak && g->peak > q->max_peak;
    return g->counted ? 0 : -1;
}

void gl_gate_check_free(struct gl_gate_check *g)
{
    gl_groups_free(&g->chains);
    gl_stacks_free(&g->stacks);
    free(g->counted);
}

int gl_gate_view_begin(struct gl_gate_view *v, int n, const struct gl_gate_query *q)
{
    memset(v, 0, sizeof *v);
    v->q = q;
    v->runs = calloc((size_t)n + 1, sizeof *v->runs);
    return v->runs ? 0 : -1;
}

int gl_gate_view_add(struct gl_gate_view *v, const struct gl_gate_check *g, char *chains)
{
    struct gl_gate_result *res = &v->runs[v->n++];
    res->chains = chains;
    res->path = strdup(g->run->path);
    res->unfinished = g->run->unfinished;
    res->peak = g->peak;
    res->device = g->device;
    res->peak_fail = g->peak_fail;
    v->leak += g->leak;
    v->peak_fail |= g->peak_fail;
    v->fail = (v->q->have_leak && v->leak > v->q->max_leak) || v->peak_fail;
    return res->path ? 0 : -1;
}

void gl_gate_view_free(struct gl_gate_view *v)
{
    for (int i = 0; v->runs && i < v->n; i++) {
        free(v->runs[i].path);
        free(v->runs[i].chains);
    }
    free(v->runs);
}
