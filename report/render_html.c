/* render_html.c — the report as one self-contained HTML file: inline CSS,
 * an SVG timeline of live bytes per device with the peak marked, and
 * collapsible stacks. No scripts, no network. */
#include <inttypes.h>

#include "dossier.h"
#include "out.h"
#include "reader.h"

static const char *const css =
    "body{font:14px/1.45 system-ui,sans-serif;margin:24px auto;max-width:1200px;color:#222;padding:0 16px}"
    "h1{font-size:22px}h2{font-size:18px;margin-top:28px;border-bottom:1px solid #ddd}h3{font-size:15px}"
    "table{border-collapse:collapse;width:100%;margin:8px 0}td,th{padding:3px 8px;text-align:left;"
    "border-bottom:1px solid #eee;vertical-align:top}th{background:#f5f5f5}td.n{text-align:right;"
    "font-variant-numeric:tabular-nums;white-space:nowrap}details summary{cursor:pointer}"
    "ol.st{margin:4px 0;padding-left:22px;font:12px monospace}.warn{color:#b00;font-weight:bold}"
    ".cat{display:inline-block;padding:0 6px;border-radius:3px;background:#eef;font-size:12px}"
    ".muted{color:#777}svg{background:#fafafa;border:1px solid #ddd}";

static void frames(FILE *f, struct gl_dossier *ds, int64_t stack_id)
{
    const struct gl_stack *st = gl_stack_get(&ds->stacks, stack_id);
    char buf[1024];
    fputs("<details><summary>", f);
    int k = gl_first_interesting(st);
    if (k)
        fputs("<span class=muted>[allocator] ← </span>", f);
    gl_xml_str(f, st->n ? gl_frame_name(&st->f[k], buf, sizeof buf) : "(no stack)");
    int py = gl_first_python(st, k + 1);
    if (py > 0) {
        fputs(" ← … ← ", f);
        gl_xml_str(f, gl_frame_name(&st->f[py], buf, sizeof buf));
    }
    fputs("</summary><ol class=st start=0>", f);
    for (int i = 0; i < st->n; i++) {
        fputs("<li>", f);
        gl_xml_str(f, gl_frame_name(&st->f[i], buf, sizeof buf));
        if (st->f[i].module) {
            fputs(" <span class=muted>", f);
            gl_xml_str(f, st->f[i].module);
            fputs("</span>", f);
        }
        fputs("</li>", f);
    }
    fputs("</ol></details>", f);
}

static void group_table(FILE *f, struct gl_dossier *ds, const struct gl_groups *g, uint64_t total, int top)
{
    char b[32];
    fputs("<table><tr><th>bytes</th><th>share</th><th>count</th><th>category</th><th>allocated at</th></tr>", f);
    for (size_t i = 0; i < g->n && (int)i < top; i++) {
        const struct gl_group *gr = &g->v[i];
        fprintf(f, "<tr><td class=n>%s</td><td class=n>%.1f%%</td><td class=n>%" PRIu64 "</td><td><span class=cat>",
                gl_fmt_bytes(gr->bytes, b, sizeof b), total ? 100.0 * (double)gr->bytes / (double)total : 0.0,
                gr->count);
        gl_xml_str(f, gr->category ? gr->category : "");
        fputs("</span></td><td>", f);
        frames(f, ds, gr->stack_id);
        fputs("</td></tr>", f);
    }
    fputs("</table>", f);
    if (g->n > (size_t)top)
        fprintf(f, "<p class=muted>%zu more stacks not shown (--top)</p>", g->n - (size_t)top);
}

static void timeline(FILE *f, const struct gl_run *r, const struct gl_device *d)
{
    const int W = 1000, H = 200, L = 70, B = 24;
    char b[32];
    if (!d->ntimeline || !d->peak)
        return;
    int64_t span = r->last_ns - r->first_ns;
    if (span <= 0)
        span = 1;
    fprintf(f, "<svg viewBox='0 0 %d %d' width='100%%' role='img' aria-label='live bytes over time'>", W + L + 10,
            H + B + 10);
    for (int g = 0; g <= 4; g++) {
        int y = 5 + H - g * H / 4;
        fprintf(f, "<line x1=%d x2=%d y1=%d y2=%d stroke='#e4e4e4'/><text x=%d y=%d font-size=11 text-anchor=end>%s</text>",
                L, L + W, y, y, L - 4, y + 4, gl_fmt_bytes(d->peak * (uint64_t)g / 4, b, sizeof b));
    }
    fputs("<polyline fill='none' stroke='#2a6fdb' stroke-width='1.5' points='", f);
    for (size_t i = 0; i < d->ntimeline; i++) {
        double x = L + (double)(d->timeline[i].ts_ns - r->first_ns) / (double)span * W;
        double y = 5 + H - (double)d->timeline[i].live / (double)d->peak * H;
        fprintf(f, "%.1f,%.1f ", x, y);
    }
    double px = L + (double)(d->peak_ns - r->first_ns) / (double)span * W;
    fprintf(f, "'/><circle cx=%.1f cy=5 r=5 fill='#d33'/><text x=%.1f y=18 font-size=12 fill='#d33'>peak %s</text>",
            px, px + 8 > L + W - 120 ? px - 120 : px + 8, gl_fmt_bytes(d->peak, b, sizeof b));
    fprintf(f, "<text x=%d y=%d font-size=11>0 s</text><text x=%d y=%d font-size=11 text-anchor=end>%.3f s</text></svg>",
            L, H + B, L + W, H + B, (double)span / 1e9);
}

void gl_render_html(FILE *f, struct gl_dossier *ds, size_t n, int top)
{
    char b[32], t[32];
    fprintf(f, "<!doctype html><html lang=en><head><meta charset=utf-8><title>gpuledger report</title><style>%s</style>"
               "</head><body><h1>gpuledger report</h1>",
            css);
    for (size_t i = 0; i < n; i++) {
        struct gl_dossier *d = &ds[i];
        struct gl_run *r = d->run;
        fprintf(f, "<h2>process %" PRId64 " on ", r->pid);
        gl_xml_str(f, r->host);
        fprintf(f, " (rank ");
        gl_xml_str(f, r->rank);
        fputs(")</h2><p><code>", f);
        gl_xml_str(f, r->cmdline);
        fprintf(f, "</code><br>%" PRId64 " events over %.3f s — ", r->event_count,
                (double)(r->last_ns - r->first_ns) / 1e9);
        gl_xml_str(f, r->path);
        fputs("</p>", f);
        if (r->dropped)
            fprintf(f, "<p class=warn>%" PRId64 " events were dropped (queue full): figures are lower bounds.</p>",
                    r->dropped);
        for (int k = 0; k < d->ndevs; k++) {
            struct gl_dev_view *v = &d->devs[k];
            fprintf(f, "<h3>device %d — peak %s at %s</h3>", v->dev->device, gl_fmt_bytes(v->dev->peak, b, sizeof b),
                    gl_fmt_rel(v->dev->peak_ns, r->first_ns, t, sizeof t));
            timeline(f, r, v->dev);
            if (v->ncats) {
                fputs("<table><tr><th>category at the peak</th><th>bytes</th><th>share</th><th>allocations</th></tr>", f);
                for (size_t c = 0; c < v->ncats; c++) {
                    fputs("<tr><td><span class=cat>", f);
                    gl_xml_str(f, v->cats[c].category);
                    fprintf(f, "</span></td><td class=n>%s</td><td class=n>%.1f%%</td><td class=n>%" PRIu64 "</td></tr>",
                            gl_fmt_bytes(v->cats[c].bytes, b, sizeof b),
                            v->dev->peak ? 100.0 * (double)v->cats[c].bytes / (double)v->dev->peak : 0.0,
                            v->cats[c].count);
                }
                fputs("</table><h3>peak ledger</h3>", f);
                group_table(f, d, &v->peak, v->dev->peak, top);
            }
            if (v->leaks.n) {
                fprintf(f, "<h3>never freed: %s in leak chains", gl_fmt_bytes(v->leak_bytes, b, sizeof b));
                if (v->cached_bytes)
                    fprintf(f, ", %s held by a caching allocator", gl_fmt_bytes(v->cached_bytes, t, sizeof t));
                fputs("</h3>", f);
                group_table(f, d, &v->leaks, v->leak_bytes + v->cached_bytes, top);
            }
            for (size_t o = 0; o < v->nooms; o++) {
                const struct gl_oom_view *ov = &v->ooms[o];
                char lb[32];
                fprintf(f, "<h3 class=warn>out of memory at %s: %s of %s failed, %s live</h3>",
                        gl_fmt_rel(ov->fail->ts_ns, r->first_ns, t, sizeof t), gl_api_name(ov->fail->api),
                        gl_fmt_bytes(ov->fail->size, b, sizeof b), gl_fmt_bytes(ov->live_bytes, lb, sizeof lb));
                frames(f, d, ov->fail->stack_id);
                group_table(f, d, &ov->ledger, ov->live_bytes, top);
            }
        }
        if (d->nholes) {
            fputs("<h3>hole density</h3><table><tr><th>pool</th><th>device</th><th>reserved</th><th>live</th><th>free"
                  "</th><th>largest free</th><th>holes</th><th>external fragmentation</th><th>worst at</th></tr>",
                  f);
            for (size_t h = 0; h < d->nholes; h++) {
                const struct gl_pool_holes *p = &d->holes[h];
                char c1[32], c2[32], c3[32], c4[32], label[96];
                fprintf(f, "<tr><td>%s</td><td class=n>%d</td><td class=n>%s</td><td class=n>%s</td>"
                           "<td class=n>%s</td><td class=n>%s</td><td class=n>%" PRIu64 "</td><td class=n>%.2f</td>"
                           "<td class=n>%s</td></tr>",
                        gl_pool_label(p, label, sizeof label), p->device, gl_fmt_bytes(p->worst.reserved, c1, sizeof c1),
                        gl_fmt_bytes(p->worst.live, c2, sizeof c2), gl_fmt_bytes(p->worst.free, c3, sizeof c3),
                        gl_fmt_bytes(p->worst.largest_free, c4, sizeof c4), p->worst.holes, p->worst.ext_frag,
                        gl_fmt_rel(p->worst.ts_ns, r->first_ns, t, sizeof t));
            }
            fputs("</table>", f);
        }
    }
    fputs("<p class=muted>generated by gpuledger " GL_VERSION "</p></body></html>\n", f);
}
