/* view_html.c — the HTML report's view of one process (html_view.h): the
 * diagnosis, the marks and ranges, each device's timeline, OOMs, leaks and
 * growth, the holes and the heaps; rows and frames get their ids in the
 * order the page's data names them (html_data.c writes it in that order). */
#include <stdlib.h>
#include <string.h>

#include "html_build.h"
#include "model_usage.h"

/* The row of each group (merged by chain, categorized). */
static int rows_of(struct gl_html_view *v, const struct gl_groups *g, int64_t **out)
{
    *out = calloc(g->n + 1, sizeof **out);
    if (!*out)
        return -1;
    for (size_t i = 0; i < g->n; i++)
        if (((*out)[i] = gl_html_row(v, g->v[i].stack_id, g->v[i].category, g->v[i].what)) < 0)
            return -1;
    return 0;
}

/* The ledger at one OOM, and the frames of its stack. */
static int oom(struct gl_html_view *v, const struct gl_device *dev, const struct gl_fail *fl, struct gl_html_oom *o)
{
    const struct gl_stack *st = gl_stack_get(&v->stacks, fl->stack_id);
    o->fail = fl;
    for (int i = 0; i < st->n; i++) {
        int64_t id = gl_html_frame(v, gl_stack_frame(st, i));
        if (id < 0 || gl_i64s_push(&o->frames, id))
            return -1;
    }
    gl_ledger_at(v->run, dev->device, fl->seq, &o->ledger.g);
    gl_groups_merge_chains(&o->ledger.g, &v->stacks);
    gl_groups_categorize(&o->ledger.g, v->o->rules, &v->stacks);
    return rows_of(v, &o->ledger.g, &o->ledger.row);
}

static int ooms(struct gl_html_view *v, struct gl_html_device *d)
{
    struct gl_run *r = v->run;
    d->ooms = calloc(r->nfails + 1, sizeof *d->ooms);
    if (!d->ooms)
        return -1;
    for (size_t i = 0; i < r->nfails; i++) {
        const struct gl_fail *fl = &r->fails[i];
        if (fl->device != d->dev->device || fl->op != GL_OP_OOM || gl_fail_absorbed(r, i))
            continue; /* one OOM is one failure: its segment retries are its detail */
        if (oom(v, d->dev, fl, &d->ooms[d->nooms++]))
            return -1;
    }
    return 0;
}

/* Leak chains, what no allocation API shows, the stacks growing step
 * after step. */
static int leaks_growth(struct gl_html_view *v, struct gl_html_device *d)
{
    struct gl_run *r = v->run;
    struct gl_leak_opts lo = {0, 0, 0};
    gl_leaks(r, d->dev->device, &lo, &d->leaks.g);
    gl_groups_merge_chains(&d->leaks.g, &v->stacks);
    gl_groups_categorize(&d->leaks.g, v->o->rules, &v->stacks);
    for (size_t i = 0; i < d->leaks.g.n; i++)
        *(gl_group_is_held(&d->leaks.g.v[i]) ? &d->cached_bytes : &d->leak_bytes) += d->leaks.g.v[i].bytes;
    if (rows_of(v, &d->leaks.g, &d->leaks.row))
        return -1;
    gl_usage_load(r, d->dev, &d->usage);
    d->outside_known = d->usage.source[0] && !d->usage.unknown; /* schema 2 */
    d->outside_peak = gl_usage_outside(&d->usage.peak);
    d->outside_end = gl_usage_outside(&d->usage.end);
    int nsteps = gl_growth(r, d->dev->device, 10, 0, &v->stacks, &d->growth.g);
    gl_groups_categorize(&d->growth.g, v->o->rules, &v->stacks);
    d->growth_steps = nsteps > 0 ? nsteps : 0;
    if (!d->growth_steps)
        return 0;
    return rows_of(v, &d->growth.g, &d->growth.row);
}

/* The heaps of the program's own pools (heaps.h), their ledgers' rows. */
static int heaps(struct gl_html_view *v)
{
    if (gl_heaps_view(&v->heaps, v->run)) /* the rest of the page stands without them */
        return 0;
    v->heaps_known = 1;
    v->heap_peak_rows = calloc(v->heaps.n + 1, sizeof *v->heap_peak_rows);
    v->heap_leak_rows = calloc(v->heaps.n + 1, sizeof *v->heap_leak_rows);
    if (!v->heap_peak_rows || !v->heap_leak_rows)
        return -1;
    for (size_t k = 0; k < v->heaps.n; k++)
        if (rows_of(v, &v->heaps.v[k].peak_ledger, &v->heap_peak_rows[k]) ||
            rows_of(v, &v->heaps.v[k].leaks, &v->heap_leak_rows[k]))
            return -1;
    return 0;
}

static size_t left_out(const struct gl_annots *an, int op)
{
    size_t n = 0;
    for (size_t i = 0; i < an->n; i++)
        n += an->v[i].op == op;
    return n > GL_HTML_MAX_ANNOTS ? n - GL_HTML_MAX_ANNOTS : 0;
}

static int init(struct gl_html_view *v, struct gl_run *r, const struct gl_html_opts *o)
{
    char err[256];
    memset(v, 0, sizeof *v);
    v->run = r;
    v->o = o;
    gl_stacks_init(&v->stacks, r);
    gl_strmap_init(&v->t.frame_ids);
    gl_strmap_init(&v->t.row_ids);
    gl_u64map_init(&v->by_site);
    for (size_t i = 0; o->rules && i < o->rules->n; i++) /* colours follow the rule order */
        gl_html_category(v, o->rules->v[i].category);
    gl_html_category(v, "other");
    if (gl_annots_load(r, &v->annots, err, sizeof err))
        v->annots = (struct gl_annots){NULL, 0};
    v->annots_left_out = left_out(&v->annots, GL_OP_MARK) + left_out(&v->annots, GL_OP_RANGE_PUSH);
    for (int k = 0; k < r->ndevs; k++) {
        v->devs[k].dev = &r->devs[k];
        v->devs[k].shown = o->device == -2 || r->devs[k].device == o->device;
    }
    return 0;
}

int gl_html_view(struct gl_html_view *v, struct gl_run *r, const struct gl_html_opts *o)
{
    struct gl_dossier_opts dopts = {o->device, o->rules, o->at};
    init(v, r, o);
    if (gl_html_rows_of_allocs(v) || gl_html_timelines(v) || gl_dossier_build(&v->ds, r, &dopts))
        return -1;
    for (int k = 0; k < r->ndevs; k++)
        if (v->devs[k].shown && (ooms(v, &v->devs[k]) || leaks_growth(v, &v->devs[k])))
            return -1;
    if (gl_holes(r, NULL, &v->holes, &v->nholes)) {
        v->holes = NULL;
        v->nholes = 0;
    }
    return heaps(v);
}

static void groups_free(struct gl_html_groups *g)
{
    gl_groups_free(&g->g);
    free(g->row);
}

static void device_free(struct gl_html_device *d)
{
    gl_html_timeline_free(&d->tl);
    for (size_t i = 0; i < d->nooms; i++) {
        free(d->ooms[i].frames.v);
        groups_free(&d->ooms[i].ledger);
    }
    free(d->ooms);
    groups_free(&d->leaks);
    groups_free(&d->growth);
}

void gl_html_view_free(struct gl_html_view *v)
{
    for (int k = 0; k < GL_MAX_DEVICES; k++)
        device_free(&v->devs[k]);
    gl_dossier_free(&v->ds);
    gl_annots_free(&v->annots);
    gl_holes_free(v->holes, v->nholes);
    for (size_t k = 0; v->heaps_known && k < v->heaps.n; k++) {
        free(v->heap_peak_rows ? v->heap_peak_rows[k] : NULL);
        free(v->heap_leak_rows ? v->heap_leak_rows[k] : NULL);
    }
    free(v->heap_peak_rows);
    free(v->heap_leak_rows);
    gl_heaps_view_free(&v->heaps);
    gl_html_tables_free(&v->t);
    gl_stacks_free(&v->stacks);
    gl_u64map_free(&v->by_site);
    free(v->alloc_row);
    free(v->done);
}
