/* render_json.c — the JSON report (the contract in docs/schema.md), through the
 * one emitter (json.h). */
#include "dossier.h"
#include "json.h"
#include "render_diagnosis.h"
#include "model_fwstats.h"
#include "render_heaps.h"
#include "render.h"
#include "retention.h"
#include "model_retention.h"

static void groups(struct gl_json *j, const char *key, struct gl_dossier *ds, const struct gl_groups *g, int top,
                   int times)
{
    gl_jw_arr(j, key);
    for (size_t i = 0; i < g->n && (int)i < top; i++) {
        const struct gl_group *gr = &g->v[i];
        gl_jw_obj(j, NULL);
        gl_jw_i64(j, "stack_id", gr->stack_id);
        gl_jw_category(j, gr->category);
        gl_jw_u64(j, "bytes", gr->bytes);
        gl_jw_u64(j, "count", gr->count);
        if (g->layered) { /* PyTorch's allocator: bytes asked; what a row no stack made is */
            gl_jw_u64(j, "requested", gr->requested);
            gl_jw_str(j, "row", gr->what ? gr->what : gr->sample && gr->sample->kind == GL_KIND_BLOCK ? "tensors" : "outside");
            gl_jw_bool(j, "tagged", gl_group_is_tagged(gr));
        }
        if (times) {
            gl_jw_i64(j, "first_ns", gr->first_ns);
            gl_jw_i64(j, "last_ns", gr->last_ns);
        }
        gl_jw_frames(j, "frames", gl_stack_get(&ds->stacks, gr->stack_id), 64);
        gl_jw_end(j);
    }
    gl_jw_end(j);
}

static void hole(struct gl_json *j, const char *key, const struct gl_hole_stat *h)
{
    gl_jw_obj(j, key);
    gl_jw_i64(j, "seq", h->seq);
    gl_jw_i64(j, "ts_ns", h->ts_ns);
    gl_jw_hole_figures(j, h);
    gl_jw_end(j);
}

static void holes(struct gl_json *j, struct gl_dossier *ds, int device)
{
    gl_jw_arr(j, "holes");
    for (size_t h = 0; h < ds->nholes; h++) {
        const struct gl_pool_holes *p = &ds->holes[h];
        if (p->device != device)
            continue;
        gl_jw_obj(j, NULL);
        gl_jw_u64(j, "pool", p->pool);
        gl_jw_str(j, "kind", p->what);
        gl_jw_hole_figures(j, &p->worst);
        hole(j, "worst", &p->worst);
        hole(j, "end", &p->end);
        gl_jw_end(j);
    }
    gl_jw_end(j);
}

/* {"tensors":..., "cached_free":..., ...}: a layered ledger's total */
static void layers(struct gl_json *j, const struct gl_groups *g)
{
    gl_jw_obj(j, "layers");
    gl_jw_u64(j, "tensors", g->tensors);
    gl_jw_u64(j, "tensors_requested", g->tensors_requested);
    gl_jw_u64(j, "tensor_count", g->tensor_count);
    gl_jw_u64(j, "cached_free", g->cached);
    gl_jw_u64(j, "pending", g->pending);
    gl_jw_u64(j, "segments", g->segments);
    gl_jw_u64(j, "outside_allocator", g->outside);
    gl_jw_u64(j, "total", g->tensors + g->cached + g->pending + g->outside);
    gl_jw_end(j);
}

static void categories(struct gl_json *j, const struct gl_cat_total *c, size_t n, int requested)
{
    gl_jw_arr(j, "categories");
    for (size_t k = 0; k < n; k++) {
        gl_jw_obj(j, NULL);
        gl_jw_category(j, c[k].category);
        gl_jw_u64(j, "bytes", c[k].bytes);
        gl_jw_u64(j, "count", c[k].count);
        if (requested)
            gl_jw_u64(j, "requested", c[k].requested);
        gl_jw_end(j);
    }
    gl_jw_end(j);
}

static void verdict(struct gl_json *j, struct gl_dossier *ds, const struct gl_oom_view *o)
{
    const struct gl_verdict *v = &o->verdict;
    char text[2048];
    if (o->absorbed) {
        gl_jw_i64(j, "segment_failures", o->absorbed);
        gl_jw_u64(j, "segment_failure_size", o->absorbed_size);
    }
    if (!v->known)
        return;
    gl_verdict_text(v, &o->ledger, &ds->stacks, text, sizeof text);
    gl_jw_obj(j, "verdict");
    gl_jw_str(j, "kind", gl_verdict_name(v));
    gl_jw_u64(j, "asked", v->asked);
    gl_jw_u64(j, "cached_free", v->cached_free);
    gl_jw_u64(j, "holes", v->holes);
    gl_jw_u64(j, "largest_hole", v->largest_hole);
    gl_jw_u64(j, "live_tensors", v->tensors);
    gl_jw_u64(j, "reserved", v->reserved);
    gl_jw_u64(j, "device_free", v->device_free);
    gl_jw_bool(j, "expandable_segments", v->expandable);
    gl_jw_str(j, "request", v->fragmentation ? "fragmentation" : "demand");
    if (v->trend && v->trend->known) {
        gl_jw_obj(j, "growth");
        gl_jw_u64(j, "per_step", v->trend->per_step);
        gl_jw_i64(j, "since_step", v->trend->since_step);
        gl_jw_str(j, "where", v->trend->where);
        gl_jw_num(j, "steps_left", "%.2f", v->steps_left);
        gl_jw_bool(j, "memory_limit", v->limited); /* the device's free bytes were no room */
        gl_jw_end(j);
    }
    gl_jw_str(j, "text", text);
    gl_jw_end(j);
}

static void ooms(struct gl_json *j, struct gl_dossier *ds, struct gl_dev_view *v, int top)
{
    gl_jw_arr(j, "oom");
    for (size_t k = 0; k < v->nooms; k++) {
        const struct gl_oom_view *o = &v->ooms[k];
        gl_jw_obj(j, NULL);
        gl_jw_i64(j, "seq", o->fail->seq);
        gl_jw_i64(j, "ts_ns", o->fail->ts_ns);
        if (ds->run->nsteps)
            gl_jw_i64(j, "step", gl_step_at(ds->run, o->fail->seq));
        gl_jw_u64(j, "size", o->fail->size);
        gl_jw_str(j, "api", gl_api_name(o->fail->api));
        gl_jw_i64(j, "result", o->fail->result);
        gl_jw_u64(j, "live_bytes", o->live_bytes);
        gl_jw_frames(j, "frames", gl_stack_get(&ds->stacks, o->fail->stack_id), 64);
        verdict(j, ds, o);
        if (o->ledger.layered)
            layers(j, &o->ledger);
        groups(j, "ledger", ds, &o->ledger, top, 0);
        gl_jw_end(j);
    }
    gl_jw_end(j);
}

static void device(struct gl_json *j, struct gl_dossier *ds, struct gl_dev_view *v, int top)
{
    gl_jw_obj(j, NULL);
    gl_jw_i64(j, "device", v->dev->device);
    gl_jw_obj(j, "peak");
    gl_jw_u64(j, "bytes", v->dev->peak);
    gl_jw_i64(j, "ts_ns", v->dev->peak_ns);
    gl_jw_i64(j, "seq", v->dev->peak_seq);
    if (ds->run->nsteps)
        gl_jw_i64(j, "step", gl_step_at(ds->run, v->dev->peak_seq));
    if (v->peak.layered)
        layers(j, &v->peak);
    groups(j, "ledger", ds, &v->peak, top, 0);
    categories(j, v->cats, v->ncats, v->peak.layered);
    gl_jw_end(j);
    if (ds->at) {
        gl_jw_obj(j, "at");
        gl_jw_str(j, "when", ds->at->when);
        gl_jw_str(j, "why", ds->at->desc);
        gl_jw_i64(j, "seq", ds->at->seq);
        gl_jw_i64(j, "ts_ns", ds->at->ts_ns);
        gl_jw_u64(j, "bytes", v->at.total_bytes);
        if (v->at.layered)
            layers(j, &v->at);
        groups(j, "ledger", ds, &v->at, top, 0);
        categories(j, v->at_cats, v->at_ncats, v->at.layered);
        gl_jw_end(j);
    }
    if (v->dev->blocks && v->dev->tensor_peak_seq) { /* PyTorch's tensors alone, at their peak */
        gl_jw_obj(j, "tensor_peak");
        gl_jw_u64(j, "bytes", v->dev->tensor_peak);
        gl_jw_u64(j, "requested", v->tensor_peak.tensors_requested);
        gl_jw_u64(j, "requested_peak", v->dev->requested_peak);
        gl_jw_u64(j, "reserved_peak", v->dev->reserved_peak);
        gl_jw_i64(j, "ts_ns", v->dev->tensor_peak_ns);
        gl_jw_i64(j, "seq", v->dev->tensor_peak_seq);
        if (ds->run->nsteps)
            gl_jw_i64(j, "step", gl_step_at(ds->run, v->dev->tensor_peak_seq));
        groups(j, "ledger", ds, &v->tensor_peak, top, 0);
        categories(j, v->tensor_cats, v->ntensor_cats, 1);
        gl_jw_end(j);
    }
    struct gl_fw_device fw;
    if (gl_fw_device(ds->run, v->dev->device, &fw)) { /* a framework's own allocator statistics (JAX/XLA) */
        gl_jw_obj(j, "framework_stats");
        gl_jw_str(j, "framework", fw.framework);
        gl_jw_u64(j, "samples", fw.n);
        gl_jw_u64(j, "bytes_in_use_last", fw.in_use_end);
        gl_jw_u64(j, "peak_bytes_in_use", fw.peak);
        gl_jw_i64(j, "peak_seq", fw.peak_seq);
        gl_jw_u64(j, "bytes_limit", fw.limit);
        gl_jw_u64(j, "arena_bytes", fw.arena);
        gl_jw_u64(j, "arena_allocations", fw.arena_allocs);
        gl_jw_end(j);
    }
    gl_jw_u64(j, "live_end_bytes", v->dev->live_end);
    gl_jw_u64(j, "leak_bytes", v->leak_bytes);
    gl_jw_u64(j, "cached_bytes", v->cached_bytes);
    if (v->dev->blocks)
        gl_jw_u64(j, "held_bytes", v->held_bytes);
    gl_jw_arr(j, "timeline");
    for (size_t t = 0; t < v->dev->ntimeline; t++) {
        gl_jw_arr(j, NULL);
        gl_jw_i64(j, NULL, v->dev->timeline[t].ts_ns);
        gl_jw_u64(j, NULL, v->dev->timeline[t].live);
        gl_jw_end(j);
    }
    gl_jw_end(j);
    groups(j, "leaks", ds, &v->leaks, 1 << 30, 1);
    if (v->usage.source[0] && !v->usage.unknown) { /* schema 2: what no allocation API shows */
        const struct gl_usage_point *pts[2] = {&v->usage.peak, &v->usage.end};
        gl_jw_obj(j, "outside_api");
        gl_jw_str(j, "source", v->usage.source);
        for (int k = 0; k < 2; k++) {
            gl_jw_obj(j, k ? "end" : "peak");
            gl_jw_i64(j, "seq", pts[k]->seq);
            gl_jw_i64(j, "ts_ns", pts[k]->ts_ns);
            if (!k) /* the sample nearest the peak: its distance (< 0: before it) */
                gl_jw_i64(j, "from_peak_ns", pts[k]->from_peak_ns);
            gl_jw_u64(j, "process_bytes", pts[k]->process);
            gl_jw_u64(j, "ledger_bytes", pts[k]->ledger);
            gl_jw_u64(j, "outside_bytes", gl_usage_outside(pts[k]));
            gl_jw_end(j);
        }
        gl_jw_end(j);
    }
    holes(j, ds, v->dev->device);
    ooms(j, ds, v, top);
    gl_jw_end(j);
}

/* One retention path: a row of the retention table and its block. */
void gl_retention_path_json(struct gl_json *j, const struct gl_retention_path *p)
{
    gl_jw_obj(j, NULL);
    gl_jw_str(j, "moment", gl_retention_moment_name(p->moment));
    if (p->step >= 0)
        gl_jw_i64(j, "step", p->step);
    else
        gl_jw_null(j, "step");
    gl_jw_i64(j, "seq", p->seq);
    gl_jw_u64(j, "ptr", p->ptr);
    gl_jw_u64(j, "bytes", p->bytes);
    gl_jw_str(j, "path", p->path);
    if (p->root_file[0])
        gl_jw_str(j, "root_file", p->root_file);
    else
        gl_jw_null(j, "root_file");
    gl_jw_i64(j, "root_line", p->root_line);
    gl_jw_bool(j, "complete", p->complete);
    gl_jw_bool(j, "cut", p->cut);
    gl_jw_i64(j, "elapsed_us", p->elapsed_us);
    gl_jw_i64(j, "block_seq", p->block ? p->block->seq : 0);
    gl_jw_end(j);
}

void gl_render_json_process(struct gl_json *j, struct gl_dossier *d, int top)
{
    struct gl_run *r = d->run;
    gl_jw_obj(j, NULL);
    gl_jw_str(j, "path", r->path);
    gl_jw_i64(j, "pid", r->pid);
    gl_jw_i64(j, "ppid", r->ppid);
    gl_jw_str(j, "host", r->host);
    gl_jw_str(j, "rank", r->rank);
    gl_jw_str(j, "cmdline", r->cmdline);
    gl_diagnosis_json(j, "diagnosis", &d->diag);
    if (r->has_exit_code)
        gl_jw_i64(j, "exit_code", r->exit_code);
    else
        gl_jw_null(j, "exit_code");
    if (r->has_exit_signal)
        gl_jw_i64(j, "exit_signal", r->exit_signal);
    gl_jw_bool(j, "finished", !r->unfinished); /* false: leak_bytes are what was live when it stopped */
    gl_jw_i64(j, "events", r->event_count);
    gl_jw_i64(j, "dropped_events", r->dropped);
    gl_jw_i64(j, "truncated_stacks", r->truncated);
    if (r->nskipped) { /* rows breaking an invariant (model.h, GL_SKIPS) */
        gl_jw_arr(j, "skipped_rows");
        for (int k = 0; k < GL_SKIP_COUNT; k++)
            if (r->skipped[k]) {
                gl_jw_obj(j, NULL);
                gl_jw_str(j, "reason", gl_skip_reason((enum gl_skip)k));
                gl_jw_i64(j, "rows", r->skipped[k]);
                gl_jw_i64(j, "first_seq", r->skipped_first_seq[k]);
                gl_jw_end(j);
            }
        gl_jw_end(j);
    }
    if (d->python_version[0]) {
        gl_jw_obj(j, "python");
        gl_jw_str(j, "version", d->python_version);
        gl_jw_u64(j, "allocations", r->allocs_made);
        gl_jw_u64(j, "allocations_with_python_frames", d->python_allocs);
        gl_jw_end(j);
    }
    gl_jw_obj(j, "api_counts");
    for (int a = 1; a < GL_API_COUNT; a++)
        if (r->api_count[a])
            gl_jw_i64(j, gl_api_name(a), r->api_count[a]);
    gl_jw_end(j);
    if (r->folded.budgeted) { /* a bounded recording (schema 5) */
        const struct gl_folded *b = &r->folded;
        gl_jw_obj(j, "budget");
        gl_jw_u64(j, "bytes", b->budget);
        gl_jw_u64(j, "used_bytes", b->used);
        gl_jw_u64(j, "steps_full", b->steps_full);
        gl_jw_u64(j, "steps_aggregated", b->steps_folded);
        gl_jw_u64(j, "pairs_aggregated", b->pairs);
        gl_jw_u64(j, "windows_dropped", b->windows_dropped);
        gl_jw_u64(j, "rows_dropped", b->rows_dropped);
        gl_jw_end(j);
    }
    if (r->n_retention) { /* what keeps memory alive (schema 3) */
        gl_jw_arr(j, "retention");
        for (size_t i = 0; i < r->n_retention; i++)
            gl_retention_path_json(j, &r->retention[i]);
        gl_jw_end(j);
    }
    gl_jw_arr(j, "devices");
    for (int k = 0; k < d->ndevs; k++)
        device(j, d, &d->devs[k], top);
    gl_jw_end(j);
    gl_heaps_json(j, "heaps", &d->heaps, top);
    gl_jw_end(j);
}

void gl_render_json_begin(struct gl_json *j, FILE *f)
{
    gl_jw_init(j, f);
    gl_jw_obj(j, NULL);
    gl_jw_str(j, "gpuledger_version", GL_VERSION);
    gl_jw_arr(j, "processes");
}

void gl_render_json_end(struct gl_json *j, const struct gl_report_totals *t)
{
    gl_jw_end(j);
    gl_jw_obj(j, "total");
    gl_jw_u64(j, "processes", t->processes);
    gl_jw_u64(j, "peak_bytes", t->peak_bytes);
    gl_jw_u64(j, "leak_bytes", t->leak_bytes);
    gl_jw_end(j);
    gl_jw_end(j);
    fputc('\n', j->f);
}
