/* dossier.c — see dossier.h. */
#include "dossier.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model_moments.h"
#include "u64map.h"

/* Which Python version the run saw, and how many allocations carry Python
 * frames (the others come from threads not running Python): counted here,
 * or by stack as a live-only load made them (model_moments.h). */
static void python_share(struct gl_dossier *d, struct gl_run *run)
{
    if (gl_run_meta(run, "python_version", d->python_version, sizeof d->python_version))
        return;
    struct gl_u64map with_py;
    gl_u64map_init(&with_py);
    gl_run_python_stacks(run, &with_py);
    uint64_t one;
    const struct gl_u64map *made = run->moments ? &run->moments->stack_allocs : NULL;
    for (size_t i = 0; made && i < made->cap; i++)
        if (made->keys[i] && made->keys[i] != UINT64_MAX && gl_u64map_get(&with_py, made->keys[i], &one))
            d->python_allocs += made->vals[i];
    for (size_t i = 0; !made && i < run->nallocs; i++)
        if (run->allocs[i].stack_id > 0 && gl_u64map_get(&with_py, (uint64_t)run->allocs[i].stack_id, &one))
            d->python_allocs++;
    gl_u64map_free(&with_py);
}

int gl_dossier_build(struct gl_dossier *d, struct gl_run *run, const struct gl_dossier_opts *o)
{
    memset(d, 0, sizeof *d);
    d->run = run;
    d->at = o->at;
    gl_stacks_init(&d->stacks, run);
    for (int i = 0; i < run->ndevs; i++) {
        struct gl_device *dev = &run->devs[i];
        if (o->device != -2 && dev->device != o->device)
            continue;
        struct gl_dev_view *v = &d->devs[d->ndevs++];
        v->dev = dev;
        gl_ledger_at(run, dev->device, dev->peak_seq, &v->peak);
        gl_groups_merge_chains(&v->peak, &d->stacks);
        gl_groups_categorize(&v->peak, o->rules, &d->stacks);
        v->ncats = gl_category_totals(&v->peak, v->cats, GL_MAX_CATS);
        if (dev->blocks && dev->tensor_peak_seq) { /* the tensors alone at their peak */
            gl_ledger_at(run, dev->device, dev->tensor_peak_seq, &v->tensor_peak);
            gl_groups_keep_tensors(&v->tensor_peak);
            gl_groups_merge_chains(&v->tensor_peak, &d->stacks);
            gl_groups_categorize(&v->tensor_peak, o->rules, &d->stacks);
            v->ntensor_cats = gl_category_totals(&v->tensor_peak, v->tensor_cats, GL_MAX_CATS);
        }
        gl_usage_load(run, dev, &v->usage);
        if (gl_trend_build(run, dev->device, &d->stacks, &v->trend))
            return -1;
        if (o->at) {
            gl_ledger_at(run, dev->device, o->at->seq, &v->at);
            gl_groups_merge_chains(&v->at, &d->stacks);
            gl_groups_categorize(&v->at, o->rules, &d->stacks);
            v->at_ncats = gl_category_totals(&v->at, v->at_cats, GL_MAX_CATS);
        }
        struct gl_leak_opts lo = {0, 0, 0};
        gl_leaks(run, dev->device, &lo, &v->leaks);
        gl_groups_merge_chains(&v->leaks, &d->stacks);
        gl_groups_categorize(&v->leaks, o->rules, &d->stacks);
        for (size_t k = 0; k < v->leaks.n; k++) {
            if (gl_is_cached_category(v->leaks.v[k].category))
                v->cached_bytes += v->leaks.v[k].bytes;
            else if (gl_group_is_tagged(&v->leaks.v[k]))
                v->held_bytes += v->leaks.v[k].bytes;
            else
                v->leak_bytes += v->leaks.v[k].bytes;
        }
        int absorbed = 0;
        uint64_t absorbed_size = 0;
        for (size_t k = 0; k < run->nfails; k++) {
            const struct gl_fail *fl = &run->fails[k];
            if (fl->device != dev->device || fl->op != GL_OP_OOM)
                continue;
            if (gl_fail_absorbed(run, k)) {
                absorbed++;
                absorbed_size = fl->size;
                continue;
            }
            struct gl_oom_view *nv = realloc(v->ooms, (v->nooms + 1) * sizeof *nv);
            if (!nv)
                break;
            v->ooms = nv;
            struct gl_oom_view *ov = &v->ooms[v->nooms++];
            memset(ov, 0, sizeof *ov);
            ov->fail = fl;
            ov->absorbed = absorbed;
            ov->absorbed_size = absorbed_size;
            absorbed = 0;
            gl_ledger_at(run, dev->device, fl->seq, &ov->ledger);
            gl_groups_merge_chains(&ov->ledger, &d->stacks);
            gl_groups_categorize(&ov->ledger, o->rules, &d->stacks);
            ov->live_bytes = ov->ledger.total_bytes;
            gl_oom_verdict(run, fl, &ov->ledger, &v->trend, &ov->verdict);
        }
    }
    gl_holes(run, NULL, &d->holes, &d->nholes);
    if (gl_heaps_view(&d->heaps, run))
        return -1; /* why: d->heaps.err */
    python_share(d, run);
    return gl_diagnose(&d->diag, d);
}

void gl_dossier_free(struct gl_dossier *d)
{
    for (int i = 0; i < d->ndevs; i++) {
        struct gl_dev_view *v = &d->devs[i];
        gl_groups_free(&v->peak);
        gl_groups_free(&v->at);
        gl_groups_free(&v->tensor_peak);
        gl_groups_free(&v->leaks);
        for (size_t k = 0; k < v->nooms; k++)
            gl_groups_free(&v->ooms[k].ledger);
        free(v->ooms);
    }
    gl_diagnosis_free(&d->diag);
    gl_holes_free(d->holes, d->nholes);
    gl_heaps_view_free(&d->heaps);
    gl_stacks_free(&d->stacks);
    memset(d, 0, sizeof *d);
}

void gl_report_totals_add(struct gl_report_totals *t, const struct gl_dossier *d)
{
    t->processes++;
    for (int k = 0; k < d->ndevs; k++) {
        t->peak_bytes += d->devs[k].dev->peak;
        t->leak_bytes += d->devs[k].leak_bytes;
    }
}
