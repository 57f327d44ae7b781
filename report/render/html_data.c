/* html_data.c — see html_data.h. Writes the HTML report's view
 * (html_view.h: computed by view_html.c) as the page's JSON object. */
#include "html_data.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "escape.h"
#include "frameclass.h"
#include "json.h"
#include "render_diagnosis.h"

static void write_ids(struct gl_json *j, const int64_t *v, size_t n)
{
    gl_jw_arr(j, NULL);
    for (size_t i = 0; i < n; i++)
        gl_jw_i64(j, NULL, v[i]);
    gl_jw_end(j);
}

/* The n ids of vec from `at`: an empty vec has no array (NULL + 0 is
 * undefined). */
static void write_ids_at(struct gl_json *j, const struct gl_i64s *vec, size_t at, size_t n)
{
    write_ids(j, n ? vec->v + at : NULL, n);
}

/* Ledger groups as [[row, bytes, count], ...] (times: and first_t, last_t,
 * held). */
static void write_groups(struct gl_json *j, const char *key, const struct gl_html_view *v, const struct gl_groups *g,
                         const int64_t *row, int times)
{
    gl_jw_arr(j, key);
    for (size_t i = 0; i < g->n; i++) {
        gl_jw_arr(j, NULL);
        gl_jw_i64(j, NULL, row[i]);
        gl_jw_u64(j, NULL, g->v[i].bytes);
        gl_jw_u64(j, NULL, g->v[i].count);
        if (times && g->v[i].what) { /* a row no stack made has no times */
            gl_jw_null(j, NULL);
            gl_jw_null(j, NULL);
        } else if (times) {
            gl_jw_i64(j, NULL, gl_ns_since(g->v[i].first_ns, v->run->first_ns));
            gl_jw_i64(j, NULL, gl_ns_since(g->v[i].last_ns, v->run->first_ns));
        }
        if (times) /* never freed: held at exit by design, not a leak */
            gl_jw_bool(j, NULL, gl_group_is_held(&g->v[i]));
        gl_jw_end(j);
    }
    gl_jw_end(j);
}

/* The device's OOMs, each with the ledger live at that moment. */
static void write_ooms(struct gl_json *j, const struct gl_html_view *v, const struct gl_html_device *d)
{
    const struct gl_run *r = v->run;
    gl_jw_arr(j, "ooms");
    for (size_t i = 0; i < d->nooms; i++) {
        const struct gl_html_oom *o = &d->ooms[i];
        const struct gl_fail *fl = o->fail;
        gl_jw_obj(j, NULL);
        gl_jw_i64(j, "seq", fl->seq);
        gl_jw_i64(j, "t", gl_ns_since(fl->ts_ns, r->first_ns));
        if (r->nsteps)
            gl_jw_i64(j, "step", gl_step_at(r, fl->seq));
        else
            gl_jw_null(j, "step");
        gl_jw_str(j, "api", gl_api_name(fl->api));
        gl_jw_u64(j, "size", fl->size);
        gl_jw_i64(j, "result", fl->result);
        gl_jw_u64(j, "live", o->ledger.g.total_bytes);
        gl_jw_arr(j, "frames");
        for (size_t k = 0; k < o->frames.n; k++)
            gl_jw_i64(j, NULL, o->frames.v[k]);
        gl_jw_end(j);
        write_groups(j, "ledger", v, &o->ledger.g, o->ledger.row, 0);
        gl_jw_end(j);
    }
    gl_jw_end(j);
}

/* Leak chains, what no allocation API shows, and the stacks growing step
 * after step. */
static void write_leaks_growth(struct gl_json *j, const struct gl_html_view *v, const struct gl_html_device *d)
{
    const struct gl_groups *g = &d->growth.g;
    write_groups(j, "leaks", v, &d->leaks.g, d->leaks.row, 1);
    gl_jw_u64(j, "leak_bytes", d->leak_bytes);
    gl_jw_u64(j, "cached_bytes", d->cached_bytes);
    if (d->outside_known) { /* schema 2: at the peak and at the end */
        gl_jw_obj(j, "outside_api");
        gl_jw_str(j, "source", gl_usage_source_text(d->usage.source));
        gl_jw_u64(j, "peak", d->outside_peak);
        if (d->usage.peak.from_peak_ns) { /* the sample nearest the peak, not at it */
            char near[64];
            gl_jw_str(j, "peak_sampled", gl_usage_from_peak_text(d->usage.peak.from_peak_ns, "it", near, sizeof near));
        }
        gl_jw_u64(j, "end", d->outside_end);
        gl_jw_u64(j, "end_process", d->usage.end.process);
        gl_jw_end(j);
    }
    gl_jw_obj(j, "growth");
    gl_jw_i64(j, "steps", d->growth_steps);
    gl_jw_bool(j, "by_marks", v->run->nmarks >= 2);
    gl_jw_arr(j, "rows");
    for (size_t i = 0; i < g->n && d->growth_steps; i++) {
        gl_jw_arr(j, NULL);
        gl_jw_i64(j, NULL, d->growth.row[i]);
        gl_jw_u64(j, NULL, g->v[i].bytes);
        gl_jw_arr(j, NULL);
        for (int s = 0; s < d->growth_steps && g->v[i].steps; s++)
            gl_jw_u64(j, NULL, g->v[i].steps[s]);
        gl_jw_end(j);
        gl_jw_end(j);
    }
    gl_jw_end(j);
    gl_jw_end(j);
}

static void write_device(struct gl_json *j, const struct gl_html_view *v, const struct gl_html_device *d)
{
    const struct gl_device *dev = d->dev;
    const struct gl_html_timeline *tl = &d->tl;
    int64_t t0 = v->run->first_ns;
    gl_jw_obj(j, NULL);
    gl_jw_i64(j, "device", dev->device);
    gl_jw_arr(j, "peak");
    gl_jw_i64(j, NULL, dev->peak_seq);
    gl_jw_i64(j, NULL, gl_ns_since(dev->peak_ns, t0));
    gl_jw_u64(j, NULL, dev->peak);
    gl_jw_end(j);
    if (v->run->nsteps)
        gl_jw_i64(j, "peak_step", gl_step_at(v->run, dev->peak_seq));
    else
        gl_jw_null(j, "peak_step");
    gl_jw_u64(j, "end_bytes", dev->live_end);
    gl_jw_i64(j, "buckets", v->buckets);
    gl_jw_arr(j, "moments");
    for (size_t i = 0; i < tl->nm; i++) {
        gl_jw_arr(j, NULL);
        gl_jw_i64(j, NULL, tl->m[i].seq);
        gl_jw_i64(j, NULL, gl_ns_since(tl->m[i].ts, t0));
        gl_jw_i64(j, NULL, tl->bytes.v[i]);
        gl_jw_end(j);
    }
    gl_jw_end(j);
    gl_jw_arr(j, "deltas");
    for (size_t i = 0; i < tl->nm; i++)
        write_ids_at(j, &tl->delta, (size_t)tl->off.v[i], (size_t)(tl->off.v[i + 1] - tl->off.v[i]));
    gl_jw_end(j);
    write_ooms(j, v, d);
    write_leaks_growth(j, v, d);
    gl_jw_end(j);
}

static void write_holes(struct gl_json *j, const struct gl_html_view *v)
{
    const struct gl_pool_holes *h = v->holes;
    gl_jw_arr(j, "holes");
    for (size_t i = 0; i < v->nholes; i++) {
        char label[96];
        gl_jw_obj(j, NULL);
        gl_jw_str(j, "label", gl_pool_label(&h[i], label, sizeof label));
        gl_jw_i64(j, "device", h[i].device);
        gl_jw_u64(j, "sampled_reserved", h[i].sampled_reserved);
        gl_jw_u64(j, "worst", h[i].worst_index);
        gl_jw_arr(j, "series");
        for (size_t s = 0; s < h[i].nseries; s++) {
            const struct gl_hole_stat *x = &h[i].series[s];
            const int64_t row[7] = {x->seq,
                                    gl_ns_since(x->ts_ns, v->run->first_ns),
                                    (int64_t)x->reserved,
                                    (int64_t)x->live,
                                    (int64_t)x->free,
                                    (int64_t)x->largest_free,
                                    (int64_t)x->holes};
            write_ids(j, row, 7);
        }
        gl_jw_end(j);
        gl_jw_end(j);
    }
    gl_jw_end(j);
}

/* A heap's moment as [seq, t, used, free, holes, largest free, regions,
 * region bytes, unused bytes of them]. */
static void write_heap_point(struct gl_json *j, const char *key, const struct gl_run *r, const struct gl_heap_point *p)
{
    const int64_t v[9] = {p->seq,
                          gl_ns_since(p->ts_ns, r->first_ns),
                          (int64_t)p->fs.used,
                          (int64_t)p->fs.free,
                          (int64_t)p->fs.holes,
                          (int64_t)p->fs.largest_free,
                          (int64_t)p->regions,
                          (int64_t)p->region_bytes,
                          (int64_t)p->waste};
    gl_jw_arr(j, key);
    for (int i = 0; i < 9; i++)
        gl_jw_i64(j, NULL, v[i]);
    gl_jw_end(j);
}

/* The heaps of the program's own pools (heaps.h). */
static void write_heaps(struct gl_json *j, const struct gl_html_view *v)
{
    gl_jw_arr(j, "heaps");
    for (size_t k = 0; v->heaps_known && k < v->heaps.n; k++) {
        const struct gl_heap_view *hv = &v->heaps.v[k];
        const struct gl_heap *h = hv->h;
        char label[160];
        gl_jw_obj(j, NULL);
        gl_jw_str(j, "label", gl_heap_label(h, label, sizeof label));
        gl_jw_u64(j, "size", h->size);
        gl_jw_u64(j, "page_size", h->page_size);
        gl_jw_i64(j, "device", h->device);
        gl_jw_u64(j, "regions", hv->nregions);
        gl_jw_i64(j, "has_used", hv->has_used);
        gl_jw_i64(j, "unregistered", h->end_seq != 0);
        gl_jw_u64(j, "cell_bytes", hv->cell_bytes);
        write_heap_point(j, "peak", v->run, &hv->peak);
        write_heap_point(j, "worst", v->run, &hv->worst);
        write_heap_point(j, "end", v->run, &hv->end);
        gl_jw_arr(j, "series");
        for (size_t i = 0; i < hv->nseries; i++)
            write_heap_point(j, NULL, v->run, &hv->series[i]);
        gl_jw_end(j);
        gl_jw_u8s(j, "occ_peak", hv->occ_peak, hv->ncells);
        gl_jw_u8s(j, "occ_worst", hv->occ_worst, hv->ncells);
        write_groups(j, "peak_ledger", v, &hv->peak_ledger, v->heap_peak_rows[k], 0);
        write_groups(j, "leaks", v, &hv->leaks, v->heap_leak_rows[k], 0);
        gl_jw_end(j);
    }
    gl_jw_end(j);
}

static void write_marks(struct gl_json *j, const struct gl_html_view *v)
{
    const struct gl_annots *an = &v->annots;
    size_t sent = 0;
    gl_jw_arr(j, "marks");
    for (size_t i = 0; i < an->n; i++) {
        const struct gl_annot *x = &an->v[i];
        if (x->op != GL_OP_MARK || sent++ >= GL_HTML_MAX_ANNOTS)
            continue;
        gl_jw_arr(j, NULL);
        gl_jw_i64(j, NULL, x->seq);
        gl_jw_i64(j, NULL, gl_ns_since(x->ts_ns, v->run->first_ns));
        gl_jw_str(j, NULL, x->label);
        gl_jw_end(j);
    }
    gl_jw_end(j);
}

static void write_ranges(struct gl_json *j, const struct gl_html_view *v)
{
    const struct gl_run *r = v->run;
    const struct gl_annots *an = &v->annots;
    size_t sent = 0;
    gl_jw_arr(j, "ranges");
    for (size_t i = 0; i < an->n; i++) {
        const struct gl_annot *x = &an->v[i];
        if (x->op != GL_OP_RANGE_PUSH || sent++ >= GL_HTML_MAX_ANNOTS)
            continue;
        int64_t end_seq = x->end_seq ? x->end_seq : 0, end_ns = x->end_seq ? x->end_ns : r->last_ns;
        gl_jw_arr(j, NULL);
        gl_jw_i64(j, NULL, x->seq);
        gl_jw_i64(j, NULL, gl_ns_since(x->ts_ns, r->first_ns));
        gl_jw_i64(j, NULL, end_seq);
        gl_jw_i64(j, NULL, gl_ns_since(end_ns, r->first_ns));
        gl_jw_str(j, NULL, x->label);
        gl_jw_i64(j, NULL, x->depth);
        gl_jw_i64(j, NULL, x->tid);
        gl_jw_end(j);
    }
    gl_jw_end(j);
    gl_jw_u64(j, "annotations_left_out", v->annots_left_out);
}

static void write_frame(struct gl_json *j, const struct gl_frame *fr)
{
    struct gl_fc_frame fc = {fr->symbol, fr->module, fr->file, fr->line, fr->python, fr->offset};
    char text[1024];
    gl_jw_arr(j, NULL);
    gl_jw_str(j, NULL, fr->symbol);
    gl_jw_str(j, NULL, fr->module);
    gl_jw_str(j, NULL, fr->file);
    gl_jw_i64(j, NULL, fr->line > 0 ? fr->line : 0);
    gl_jw_i64(j, NULL, fr->python ? 1 : 0);
    gl_jw_u64(j, NULL, fr->offset);
    gl_jw_i64(j, NULL, gl_fc_classify(&fc)); /* enum gl_fc_class: 0 user, 1 library, 2 allocator */
    gl_jw_str(j, NULL, gl_fc_frame_text(&fc, text, sizeof text)); /* C++ names shortened */
    gl_jw_end(j);
}

static void write_tables(struct gl_json *j, const struct gl_html_tables *t)
{
    gl_jw_arr(j, "categories");
    for (int i = 0; i < t->ncats; i++)
        gl_jw_str(j, NULL, t->cats[i]);
    gl_jw_end(j);
    gl_jw_arr(j, "cached_categories");
    for (int i = 0; i < t->ncats; i++)
        if (gl_is_cached_category(t->cats[i]))
            gl_jw_i64(j, NULL, i);
    gl_jw_end(j);
    gl_jw_arr(j, "frames");
    for (size_t i = 0; i < t->frame_ids.n; i++)
        write_frame(j, t->frames[i].f);
    gl_jw_end(j);
    gl_jw_arr(j, "rows");
    for (size_t i = 0; i < t->nrows; i++) {
        gl_jw_arr(j, NULL);
        gl_jw_i64(j, NULL, t->rows[i].cat);
        gl_jw_i64(j, NULL, t->rows[i].stack_id);
        write_ids_at(j, &t->row_frames, t->rows[i].frames_at, t->rows[i].nframes);
        if (t->rows[i].what)
            gl_jw_str(j, NULL, gl_row_text(t->rows[i].what));
        gl_jw_end(j);
    }
    gl_jw_end(j);
}

/* The process: what it is, and the moment given with --at. */
static void write_process(struct gl_json *j, const struct gl_html_view *v)
{
    const struct gl_run *r = v->run;
    const struct gl_moment *at = v->o->at;
    gl_jw_str(j, "path", r->path);
    gl_jw_i64(j, "pid", r->pid);
    gl_jw_str(j, "host", r->host);
    gl_jw_str(j, "rank", r->rank);
    gl_jw_str(j, "cmdline", r->cmdline);
    gl_jw_i64(j, "events", r->event_count);
    gl_jw_bool(j, "finished", !r->unfinished);
    gl_jw_i64(j, "dropped", r->dropped);
    gl_jw_i64(j, "truncated", r->truncated);
    gl_jw_i64(j, "span_ns", gl_ns_since(r->last_ns, r->first_ns));
    if (!at) {
        gl_jw_null(j, "selected");
        return;
    }
    gl_jw_obj(j, "selected");
    gl_jw_i64(j, "seq", at->seq);
    gl_jw_i64(j, "t", gl_ns_since(at->ts_ns, r->first_ns));
    gl_jw_str(j, "when", at->when);
    gl_jw_str(j, "desc", at->desc);
    gl_jw_end(j);
}

void gl_html_data_write(FILE *f, const struct gl_html_view *v)
{
    struct gl_json j;
    gl_jw_init_script(&j, f);
    gl_jw_obj(&j, NULL);
    write_process(&j, v);
    gl_diagnosis_json(&j, "diagnosis", &v->ds.diag);
    write_marks(&j, v);
    write_ranges(&j, v);
    gl_jw_arr(&j, "devices");
    for (int k = 0; k < v->run->ndevs; k++)
        if (v->devs[k].shown)
            write_device(&j, v, &v->devs[k]);
    gl_jw_end(&j);
    write_holes(&j, v);
    write_heaps(&j, v);
    write_tables(&j, &v->t);
    gl_jw_end(&j);
}
