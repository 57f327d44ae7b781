/* render_holes.c — the holes view (gl_holes: per pool, reserved range and
 * caching allocator, the worst moment, the end and a series) as text and
 * as JSON. */
#include <inttypes.h>
#include <string.h>

#include "escape.h"
#include "out.h"
#include "render.h"

void gl_render_holes_text(FILE *f, const struct gl_run *r, const struct gl_pool_holes *h, size_t nh, size_t nheaps,
                          int series)
{
    char b1[32], b2[32], b3[32], b4[32], t[32], name[96];
    fputs("== ", f);
    gl_text_str(f, r->path);
    fprintf(f, " (pid %" PRId64 ")\n", r->pid);
    struct gl_fold_gaps g;
    gl_run_fold_gaps(r, &g);
    if (g.steps) /* a bounded recording: what replaying its rows cannot see */
        fprintf(f,
                "not seen: step%s %s (%ld of %ld) aggregated by the budget (%" PRIu64 " alloc+free pair%s): pools,"
                " reserved ranges and heaps are seen at those steps' ends only; the caching allocator's samples"
                " are all there\n",
                gl_s((uint64_t)g.steps), g.ranges, g.steps, g.of, g.pairs, gl_s(g.pairs));
    if (!nh && !nheaps)
        fprintf(f, "no stream-ordered pools, reserved ranges or heaps in this run\n");
    for (size_t k = 0; k < nh; k++) {
        const struct gl_pool_holes *p = &h[k];
        fprintf(f, "%s on device %d (%" PRIu64 " %s%s", gl_pool_label(p, name, sizeof name), p->device,
                p->regions, strcmp(p->what, GL_HOLES_ALLOCATOR) ? "region" : "sample", gl_s(p->regions));
        if (p->sampled_reserved)
            fprintf(f, "; the pool itself reported up to %s reserved", gl_fmt_bytes(p->sampled_reserved, b1, sizeof b1));
        fprintf(f, ")\n");
        const struct gl_hole_stat *w[2] = {&p->worst, &p->end};
        const char *label[2] = {"worst", "end"};
        for (int q = 0; q < 2; q++) {
            fprintf(f,
                    "  %-5s %s: reserved %s, live %s, free %s in %" PRIu64 " hole%s, largest %s, external "
                    "fragmentation %.3f, largest_free_ratio %.3f",
                    label[q], gl_fmt_rel(r, w[q]->ts_ns, t, sizeof t),
                    gl_fmt_bytes(w[q]->reserved, b1, sizeof b1), gl_fmt_bytes(w[q]->live, b2, sizeof b2),
                    gl_fmt_bytes(w[q]->free, b3, sizeof b3), w[q]->holes, gl_s(w[q]->holes),
                    gl_fmt_bytes(w[q]->largest_free, b4, sizeof b4), w[q]->external_fragmentation,
                    w[q]->largest_free_ratio);
            if (w[q]->unused_bytes >= 0)
                fprintf(f, ", internal fragmentation %.3f (%s unused)", w[q]->internal_fragmentation,
                        gl_fmt_bytes((uint64_t)w[q]->unused_bytes, b1, sizeof b1));
            fputc('\n', f);
        }
        for (size_t s = 0; series && s < p->nseries; s++) {
            const struct gl_hole_stat *x = &p->series[s];
            fprintf(f, "    %s live %s free %s holes %" PRIu64 " largest %s frag %.3f",
                    gl_fmt_rel(r, x->ts_ns, t, sizeof t), gl_fmt_bytes(x->live, b1, sizeof b1),
                    gl_fmt_bytes(x->free, b2, sizeof b2), x->holes, gl_fmt_bytes(x->largest_free, b3, sizeof b3),
                    x->external_fragmentation);
            if (x->unused_bytes >= 0)
                fprintf(f, " internal %.3f", x->internal_fragmentation);
            fputc('\n', f);
        }
    }
}

void gl_jw_hole_figures(struct gl_json *j, const struct gl_hole_stat *h)
{
    gl_jw_u64(j, "reserved", h->reserved);
    gl_jw_u64(j, "live", h->live);
    gl_jw_u64(j, "free", h->free);
    gl_jw_u64(j, "largest_free", h->largest_free);
    gl_jw_num(j, "external_fragmentation", "%.6f", h->external_fragmentation);
    gl_jw_num(j, "largest_free_ratio", "%.6f", h->largest_free_ratio);
    gl_jw_u64(j, "holes", h->holes);
    if (h->unused_bytes >= 0) { /* the caching allocator's blocks, as for heaps */
        gl_jw_i64(j, "unused_bytes", h->unused_bytes);
        gl_jw_num(j, "internal_fragmentation", "%.6f", h->internal_fragmentation);
    }
}

void gl_render_holes_json(struct gl_json *j, const struct gl_run *r, const struct gl_pool_holes *h, size_t nh)
{
    gl_jw_obj(j, NULL);
    gl_jw_str(j, "path", r->path);
    gl_jw_i64(j, "pid", r->pid);
    struct gl_fold_gaps g;
    gl_run_fold_gaps(r, &g);
    if (g.steps) { /* a bounded recording's aggregated steps: seen at their ends only */
        gl_jw_obj(j, "aggregated");
        gl_jw_i64(j, "steps", g.steps);
        gl_jw_i64(j, "of", g.of);
        gl_jw_str(j, "ranges", g.ranges);
        gl_jw_u64(j, "pairs", g.pairs);
        gl_jw_end(j);
    }
    gl_jw_arr(j, "holes");
    for (size_t k = 0; k < nh; k++) {
        const struct gl_pool_holes *p = &h[k];
        gl_jw_obj(j, NULL);
        gl_jw_u64(j, "pool", p->pool);
        gl_jw_str(j, "kind", p->what);
        gl_jw_i64(j, "device", p->device);
        gl_jw_u64(j, "regions", p->regions);
        gl_jw_u64(j, "sampled_reserved", p->sampled_reserved);
        gl_jw_arr(j, "series");
        for (size_t s = 0; s < p->nseries; s++) {
            const struct gl_hole_stat *x = &p->series[s];
            gl_jw_obj(j, NULL);
            gl_jw_i64(j, "ts_ns", x->ts_ns);
            gl_jw_hole_figures(j, x);
            gl_jw_end(j);
        }
        gl_jw_end(j);
        gl_jw_u64(j, "worst_index", p->worst_index);
        gl_jw_end(j);
    }
    gl_jw_end(j); /* the process object stays open: the caller adds its heaps and closes it */
}
