/* view_export.c — the views of `export --format folded` and `csv`
 * (export_views.h): which groups and which allocations --what names. */
#include <stdlib.h>
#include <string.h>

#include "export_views.h"

int gl_folded_view(struct gl_folded_view *v, struct gl_run *r, const char *what)
{
    memset(v, 0, sizeof *v);
    gl_stacks_init(&v->stacks, r);
    v->sets = calloc((size_t)r->ndevs + 1, sizeof *v->sets);
    if (!v->sets)
        return -1;
    if (!strcmp(what, "leaks") || !strcmp(what, "allocs")) {
        struct gl_leak_opts lo = {0, 0, 0};
        if (!strcmp(what, "allocs"))
            lo = (struct gl_leak_opts){0, 1, 1}; /* lifetime >= 1 ns: everything */
        gl_leaks(r, -2, &lo, &v->sets[v->nsets++]);
        return 0;
    }
    for (int d = 0; d < r->ndevs; d++)
        gl_ledger_at(r, r->devs[d].device, r->devs[d].peak_seq, &v->sets[v->nsets++]);
    return 0;
}

void gl_folded_view_free(struct gl_folded_view *v)
{
    for (size_t i = 0; i < v->nsets; i++)
        gl_groups_free(&v->sets[i]);
    free(v->sets);
    gl_stacks_free(&v->stacks);
    memset(v, 0, sizeof *v);
}

/* Is allocation a one of `what`: everything, never freed, or live at its
 * device's peak (the sets folded export and report count)? */
static int csv_row_wanted(const struct gl_run *r, const struct gl_alloc *a, const char *what)
{
    if (!strcmp(what, "allocs"))
        return 1;
    if (!gl_kind_counts_on_device(a->kind))
        return 0;
    if (!strcmp(what, "leaks"))
        return a->free_seq == 0;
    for (int d = 0; d < r->ndevs; d++)
        if (r->devs[d].device == a->device)
            return gl_live_at(a, r->devs[d].peak_seq);
    return 0;
}

int gl_csv_view(struct gl_csv_view *v, struct gl_run *r, const char *what)
{
    memset(v, 0, sizeof *v);
    v->run = r;
    gl_stacks_init(&v->stacks, r);
    v->idx = malloc((r->nallocs + 1) * sizeof *v->idx);
    if (!v->idx)
        return -1;
    for (size_t i = 0; i < r->nallocs; i++) {
        const struct gl_alloc *a = &r->allocs[i];
        if (gl_kind_layer(a->kind) != GL_LAYER_ADDRESS && csv_row_wanted(r, a, what))
            v->idx[v->n++] = i;
    }
    return 0;
}

void gl_csv_view_free(struct gl_csv_view *v)
{
    free(v->idx);
    gl_stacks_free(&v->stacks);
    memset(v, 0, sizeof *v);
}
