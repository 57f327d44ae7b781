/* render_json.c — the JSON report (the contract in README.md). */
#include <inttypes.h>

#include "dossier.h"
#include "out.h"

static void groups(FILE *f, struct gl_dossier *ds, const struct gl_groups *g, int top, int times)
{
    fputc('[', f);
    for (size_t i = 0; i < g->n && (int)i < top; i++) {
        const struct gl_group *gr = &g->v[i];
        fprintf(f, "%s{\"stack_id\":%" PRId64 ",\"category\":", i ? "," : "", gr->stack_id);
        gl_json_str(f, gr->category);
        fprintf(f, ",\"bytes\":%" PRIu64 ",\"count\":%" PRIu64, gr->bytes, gr->count);
        if (times)
            fprintf(f, ",\"first_ns\":%" PRId64 ",\"last_ns\":%" PRId64, gr->first_ns, gr->last_ns);
        fputs(",\"frames\":", f);
        gl_json_frames(f, gl_stack_get(&ds->stacks, gr->stack_id), 64);
        fputc('}', f);
    }
    fputc(']', f);
}

static void hole(FILE *f, const struct gl_hole_stat *h)
{
    fprintf(f,
            "{\"seq\":%" PRId64 ",\"ts_ns\":%" PRId64 ",\"reserved\":%" PRIu64 ",\"live\":%" PRIu64
            ",\"free\":%" PRIu64 ",\"largest_free\":%" PRIu64 ",\"external_fragmentation\":%.6f,\"holes\":%" PRIu64
            "}",
            h->seq, h->ts_ns, h->reserved, h->live, h->free, h->largest_free, h->ext_frag, h->holes);
}

static void device(FILE *f, struct gl_dossier *ds, struct gl_dev_view *v, int top)
{
    fprintf(f, "{\"device\":%d,\"peak\":{\"bytes\":%" PRIu64 ",\"ts_ns\":%" PRId64 ",\"seq\":%" PRId64 ",\"ledger\":",
            v->dev->device, v->dev->peak, v->dev->peak_ns, v->dev->peak_seq);
    groups(f, ds, &v->peak, top, 0);
    fputs(",\"categories\":[", f);
    for (size_t c = 0; c < v->ncats; c++) {
        fprintf(f, "%s{\"category\":", c ? "," : "");
        gl_json_str(f, v->cats[c].category);
        fprintf(f, ",\"bytes\":%" PRIu64 ",\"count\":%" PRIu64 "}", v->cats[c].bytes, v->cats[c].count);
    }
    fprintf(f, "]},\"live_end_bytes\":%" PRIu64 ",\"leak_bytes\":%" PRIu64 ",\"cached_bytes\":%" PRIu64 ",\"timeline\":[",
            v->dev->live_end, v->leak_bytes, v->cached_bytes);
    for (size_t t = 0; t < v->dev->ntimeline; t++)
        fprintf(f, "%s[%" PRId64 ",%" PRIu64 "]", t ? "," : "", v->dev->timeline[t].ts_ns, v->dev->timeline[t].live);
    fputs("],\"leaks\":", f);
    groups(f, ds, &v->leaks, 1 << 30, 1);
    fputs(",\"holes\":[", f);
    int first = 1;
    for (size_t h = 0; h < ds->nholes; h++) {
        const struct gl_pool_holes *p = &ds->holes[h];
        if (p->device != v->dev->device)
            continue;
        fprintf(f, "%s{\"pool\":%" PRIu64 ",\"kind\":", first ? "" : ",", p->pool);
        first = 0;
        gl_json_str(f, p->what);
        fprintf(f,
                ",\"reserved\":%" PRIu64 ",\"live\":%" PRIu64 ",\"free\":%" PRIu64 ",\"largest_free\":%" PRIu64
                ",\"external_fragmentation\":%.6f,\"holes\":%" PRIu64 ",\"worst\":",
                p->worst.reserved, p->worst.live, p->worst.free, p->worst.largest_free, p->worst.ext_frag,
                p->worst.holes);
        hole(f, &p->worst);
        fputs(",\"end\":", f);
        hole(f, &p->end);
        fputc('}', f);
    }
    fputs("],\"oom\":[", f);
    for (size_t k = 0; k < v->nooms; k++) {
        const struct gl_oom_view *o = &v->ooms[k];
        fprintf(f, "%s{\"seq\":%" PRId64 ",\"ts_ns\":%" PRId64 ",\"size\":%" PRIu64 ",\"api\":", k ? "," : "",
                o->fail->seq, o->fail->ts_ns, o->fail->size);
        gl_json_str(f, gl_api_name(o->fail->api));
        fprintf(f, ",\"result\":%d,\"live_bytes\":%" PRIu64 ",\"frames\":", o->fail->result, o->live_bytes);
        gl_json_frames(f, gl_stack_get(&ds->stacks, o->fail->stack_id), 64);
        fputs(",\"ledger\":", f);
        groups(f, ds, &o->ledger, top, 0);
        fputc('}', f);
    }
    fputs("]}", f);
}

void gl_render_json(FILE *f, struct gl_dossier *ds, size_t n, int top)
{
    uint64_t peak = 0, leak = 0;
    fputs("{\"gpuledger_version\":", f);
    gl_json_str(f, GL_VERSION);
    fputs(",\"processes\":[", f);
    for (size_t i = 0; i < n; i++) {
        struct gl_run *r = ds[i].run;
        fprintf(f, "%s{\"path\":", i ? "," : "");
        gl_json_str(f, r->path);
        fprintf(f, ",\"pid\":%" PRId64 ",\"ppid\":%" PRId64 ",\"host\":", r->pid, r->ppid);
        gl_json_str(f, r->host);
        fputs(",\"rank\":", f);
        gl_json_str(f, r->rank);
        fputs(",\"cmdline\":", f);
        gl_json_str(f, r->cmdline);
        if (r->has_exit_code)
            fprintf(f, ",\"exit_code\":%" PRId64, r->exit_code);
        else
            fputs(",\"exit_code\":null", f);
        if (r->has_exit_signal)
            fprintf(f, ",\"exit_signal\":%" PRId64, r->exit_signal);
        fprintf(f, ",\"events\":%" PRId64 ",\"dropped_events\":%" PRId64 ",\"truncated_stacks\":%" PRId64,
                r->event_count, r->dropped, r->truncated);
        if (r->nskipped) { /* rows breaking an invariant (model.h, GL_SKIPS) */
            fputs(",\"skipped_rows\":[", f);
            const char *sep = "";
            for (int k = 0; k < GL_SKIP_COUNT; k++)
                if (r->skipped[k]) {
                    fprintf(f, "%s{\"reason\":", sep);
                    gl_json_str(f, gl_skip_reason((enum gl_skip)k));
                    fprintf(f, ",\"rows\":%" PRId64 ",\"first_seq\":%" PRId64 "}", r->skipped[k],
                            r->skipped_first_seq[k]);
                    sep = ",";
                }
            fputc(']', f);
        }
        if (ds[i].python_version[0]) {
            fputs(",\"python\":{\"version\":", f);
            gl_json_str(f, ds[i].python_version);
            fprintf(f, ",\"allocations\":%zu,\"allocations_with_python_frames\":%zu}", r->nallocs,
                    ds[i].python_allocs);
        }
        fputs(",\"api_counts\":{", f);
        int first = 1;
        for (int a = 1; a < GL_API_COUNT; a++)
            if (r->api_count[a]) {
                fprintf(f, "%s\"%s\":%" PRId64, first ? "" : ",", gl_api_name(a), r->api_count[a]);
                first = 0;
            }
        fputs("},\"devices\":[", f);
        for (int k = 0; k < ds[i].ndevs; k++) {
            if (k)
                fputc(',', f);
            device(f, &ds[i], &ds[i].devs[k], top);
            peak += ds[i].devs[k].dev->peak;
            leak += ds[i].devs[k].leak_bytes;
        }
        fputs("]}", f);
    }
    fprintf(f, "],\"total\":{\"processes\":%zu,\"peak_bytes\":%" PRIu64 ",\"leak_bytes\":%" PRIu64 "}}\n", n, peak,
            leak);
}
