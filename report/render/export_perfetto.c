/* export_perfetto.c — `export --format perfetto`: the run as Chrome
 * trace-event JSON, which ui.perfetto.dev and chrome://tracing open:
 *
 *   counters  "device D live bytes" {bytes}: all memory counted on device D;
 *             "device D: CATEGORY" {bytes}: one counter track per category
 *             of the ledger's rows (the category of each allocation, by the
 *             same rules as the report; with PyTorch's blocks, the tensors'
 *             categories, and the caching allocator's free and pending
 *             blocks as allocator_cache, as the report's ledger has them),
 *             changed at every allocation, free and block completion; each
 *             track cut to --counter-buckets time buckets (default 2000),
 *             of each its lowest, highest and last point, so the peak is
 *             exact (all: every point)
 *   slices    each range (gpuledger_range_push/pop, NVTX) on the thread that
 *             opened it; each mark as a slice on the "marks" track from the
 *             mark before (or the start) to it, named by its label, so
 *             marks that end steps read as the steps
 *   instants  each failed allocation ("OOM: cudaMalloc failed"), with its
 *             size, error, device and the innermost frames of its stack
 *   otherData gpuledger_budget: a bounded recording's aggregated steps and
 *             the alloc+free pairs not shown (absent when none)
 *
 * Times are microseconds since the run's first event. The format's fields
 * used here are checked against tests/schemas/trace_event.schema.json.
 * What it shows is computed before (view_perfetto.c); this file writes it. */
#include <stdlib.h>
#include <string.h>

#include "export_views.h"
#include "json.h"
#include "render.h"

static double us(const struct gl_run *r, int64_t ts)
{
    return (double)gl_ns_since(ts, r->first_ns) / 1e3;
}

/* A counter track's name, made at its first point. */
struct track_names {
    char *name[GL_MAX_DEVICES + 1][GL_TRACE_MAX_CATS + 1]; /* by device + 1, category + 1 */
};

static const char *track_name(struct track_names *t, const struct gl_perfetto_view *v, int dev, int cat)
{
    char **slot = &t->name[dev + 1][cat + 1], name[128];
    if (!*slot) {
        if (cat < 0)
            snprintf(name, sizeof name, "device %d live bytes", dev);
        else
            snprintf(name, sizeof name, "device %d: %s", dev, v->cats[cat]);
        *slot = strdup(name);
    }
    return *slot ? *slot : "?";
}

static int counters(struct gl_json *j, const struct gl_perfetto_view *v)
{
    struct track_names *t = calloc(1, sizeof *t);
    if (!t)
        return -1;
    for (size_t i = 0; i < v->npoints; i++) {
        const struct gl_trace_point *p = &v->points[i];
        gl_jw_obj(j, NULL);
        gl_jw_str(j, "name", track_name(t, v, p->dev, p->cat));
        gl_jw_str(j, "ph", "C");
        gl_jw_num(j, "ts", "%.3f", us(v->run, p->ts_ns));
        gl_jw_i64(j, "pid", v->run->pid);
        gl_jw_obj(j, "args");
        gl_jw_i64(j, "bytes", p->bytes);
        gl_jw_end(j);
        gl_jw_end(j);
    }
    for (int d = 0; d <= GL_MAX_DEVICES; d++)
        for (int c = 0; c <= GL_TRACE_MAX_CATS; c++)
            free(t->name[d][c]);
    free(t);
    return 0;
}

static void thread_name(struct gl_json *j, const struct gl_run *r, int tid, const char *name)
{
    gl_jw_obj(j, NULL);
    gl_jw_str(j, "name", "thread_name");
    gl_jw_str(j, "ph", "M");
    gl_jw_i64(j, "pid", r->pid);
    gl_jw_i64(j, "tid", tid);
    gl_jw_obj(j, "args");
    gl_jw_str(j, "name", name);
    gl_jw_end(j);
    gl_jw_end(j);
}

static void slices(struct gl_json *j, const struct gl_perfetto_view *v)
{
    const struct gl_run *r = v->run;
    char name[64];
    for (size_t i = 0; i < v->nslices; i++) {
        const struct gl_trace_slice *x = &v->slices[i];
        int mark = x->a->op == GL_OP_MARK;
        if (x->first_on_track) {
            snprintf(name, sizeof name, "thread %d ranges", x->tid);
            thread_name(j, r, x->tid, mark ? "marks" : name);
        }
        gl_jw_obj(j, NULL);
        gl_jw_str(j, "name", x->a->label);
        gl_jw_str(j, "cat", mark ? "mark" : "range");
        gl_jw_str(j, "ph", "X");
        gl_jw_num(j, "ts", "%.3f", us(r, x->start_ns));
        gl_jw_num(j, "dur", "%.3f", (double)(x->end_ns - x->start_ns) / 1e3);
        gl_jw_i64(j, "pid", r->pid);
        gl_jw_i64(j, "tid", x->tid);
        gl_jw_obj(j, "args");
        gl_jw_i64(j, "seq", x->a->seq);
        gl_jw_end(j);
        gl_jw_end(j);
    }
}

static void instants(struct gl_json *j, const struct gl_run *r, struct gl_stacks *s)
{
    char name[96], buf[1024];
    for (size_t i = 0; i < r->nfails; i++) {
        const struct gl_fail *fl = &r->fails[i];
        snprintf(name, sizeof name, "%s %s failed", fl->op == GL_OP_OOM ? "OOM:" : "error:", gl_api_name(fl->api));
        gl_jw_obj(j, NULL);
        gl_jw_str(j, "name", name);
        gl_jw_str(j, "ph", "i");
        gl_jw_str(j, "s", "p");
        gl_jw_num(j, "ts", "%.3f", us(r, fl->ts_ns));
        gl_jw_i64(j, "pid", r->pid);
        gl_jw_obj(j, "args");
        gl_jw_u64(j, "size", fl->size);
        gl_jw_i64(j, "error", fl->result);
        gl_jw_i64(j, "device", fl->device);
        gl_jw_arr(j, "stack");
        const struct gl_stack *st = gl_stack_get(s, fl->stack_id);
        for (int k = 0; k < st->n && k < 8; k++)
            gl_jw_str(j, NULL, gl_frame_name(gl_stack_frame(st, k), buf, sizeof buf));
        gl_jw_end(j);
        gl_jw_end(j);
        gl_jw_end(j);
    }
}

int gl_export_perfetto(FILE *f, struct gl_perfetto_view *v)
{
    struct gl_json j;
    const struct gl_run *r = v->run;
    gl_jw_init(&j, f);
    gl_jw_obj(&j, NULL);
    gl_jw_str(&j, "displayTimeUnit", "ms");
    gl_jw_arr_lines(&j, "traceEvents");
    gl_jw_obj(&j, NULL);
    gl_jw_str(&j, "name", "process_name");
    gl_jw_str(&j, "ph", "M");
    gl_jw_i64(&j, "pid", r->pid);
    gl_jw_obj(&j, "args");
    gl_jw_str(&j, "name", r->cmdline);
    gl_jw_end(&j);
    gl_jw_end(&j);
    if (v->points_seen > v->npoints)
        fprintf(stderr, "gpuledger export: perfetto: %zu of %zu counter points kept, each track's lowest, highest"
                " and last in each of %zu time buckets, so every peak is exact (--counter-buckets all keeps every"
                " one)\n", v->npoints, v->points_seen, v->buckets);
    int rc = counters(&j, v);
    slices(&j, v);
    instants(&j, r, &v->stacks);
    gl_jw_end(&j);
    if (v->budget_note[0]) { /* what a bounded recording did not keep as events */
        gl_jw_obj(&j, "otherData");
        gl_jw_str(&j, "gpuledger_budget", v->budget_note);
        gl_jw_end(&j);
    }
    gl_jw_end(&j);
    fputc('\n', f);
    return rc;
}
