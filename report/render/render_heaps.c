/* render_heaps.c — heaps of a program's own pools (heaps.h) as text and
 * JSON, for `holes`, `report` and `leaks`. */
#include "render_heaps.h"

#include <inttypes.h>
#include <string.h>

#include "escape.h"
#include "out.h"

#define STRIP_WIDTH 64

/* "13 of 16 pages" / "53.25 KiB of 64.00 KiB" */
static const char *amount(const struct gl_heap *h, uint64_t bytes, char *buf, size_t sz)
{
    char b[32];
    if (h->page_size)
        snprintf(buf, sz, "%" PRIu64 " page%s", bytes / h->page_size, gl_s(bytes / h->page_size));
    else
        snprintf(buf, sz, "%s", gl_fmt_bytes(bytes, b, sizeof b));
    return buf;
}

static void text_point(FILE *f, const struct gl_heap_view *v, const char *label, const struct gl_heap_point *p,
                       const struct gl_run *r)
{
    const struct gl_heap *h = v->h;
    char a[48], b[48], c[48], t[32];
    fprintf(f, "  %-5s %s #%" PRId64 ": %s in use in %" PRIu64 " region%s, %s free in %" PRIu64 " hole%s, largest %s;"
               " external fragmentation %.3f, largest_free_ratio %.3f",
            label, gl_fmt_rel(r, p->ts_ns, t, sizeof t), p->seq, amount(h, p->fs.used, a, sizeof a), p->regions,
            gl_s(p->regions), amount(h, p->fs.free, b, sizeof b), p->fs.holes, gl_s(p->fs.holes),
            amount(h, p->fs.largest_free, c, sizeof c), p->fs.external_fragmentation, p->fs.largest_free_ratio);
    if (v->has_used)
        fprintf(f, "; internal fragmentation %.3f", p->internal_fragmentation);
    fputc('\n', f);
}

static void text_groups(FILE *f, struct gl_stacks *s, const struct gl_groups *g, int top, const char *what)
{
    char b[32];
    for (size_t i = 0; i < g->n && (int)i < top; i++) {
        const struct gl_group *gr = &g->v[i];
        fprintf(f, "    %10s in %" PRIu64 " %s%s\n", gl_fmt_bytes(gr->bytes, b, sizeof b), gr->count, what,
                gl_s(gr->count));
        gl_print_frame_list(f, gl_stack_get(s, gr->stack_id), "               ");
    }
    if (g->n > (size_t)top)
        fprintf(f, "    %zu more stacks (--top to see more)\n", g->n - (size_t)top);
}

void gl_heaps_text(FILE *f, struct gl_heaps_view *hv, int top, int series, int with_ledgers)
{
    char name[160], a[32], b[32], strip[STRIP_WIDTH + 1];
    const struct gl_heap_view *v = hv->v;
    const struct gl_run *r = hv->run;
    struct gl_stacks *s = &hv->stacks;
    for (size_t k = 0; k < hv->n; k++) {
        const struct gl_heap *h = v[k].h;
        fputs("heap ", f);
        gl_text_str(f, gl_heap_label(h, name, sizeof name));
        fprintf(f, " at 0x%" PRIx64 ": %s", h->base, gl_fmt_bytes(h->size, a, sizeof a));
        if (h->page_size)
            fprintf(f, ", %" PRIu64 " pages of %s", h->size / h->page_size, gl_fmt_bytes(h->page_size, b, sizeof b));
        if (h->in)
            fprintf(f, ", inside %s #%" PRId64 " on device %d", gl_api_name(h->in->api), h->in->seq, h->device);
        fprintf(f, "; %" PRIu64 " region%s handed out%s\n", v[k].nregions, gl_s(v[k].nregions),
                h->end_seq ? ", unregistered" : "");
        text_point(f, &v[k], "peak", &v[k].peak, r);
        text_point(f, &v[k], "worst", &v[k].worst, r);
        text_point(f, &v[k], "end", &v[k].end, r);
        if (v[k].occ_peak) {
            gl_occupancy_strip(v[k].occ_peak, v[k].ncells, STRIP_WIDTH, strip);
            fprintf(f, "  occupancy at the peak  |%s|\n", strip);
        }
        if (v[k].occ_worst) {
            gl_occupancy_strip(v[k].occ_worst, v[k].ncells, STRIP_WIDTH, strip);
            fprintf(f, "  occupancy at the worst |%s|\n", strip);
        }
        if (v[k].occ_peak) {
            size_t chars = v[k].ncells < STRIP_WIDTH ? v[k].ncells : STRIP_WIDTH;
            int one_page = h->page_size && chars == v[k].ncells && v[k].cell_bytes == h->page_size;
            fprintf(f, "  (a character is %s%s; '#' in use, '.' free, 1-9: tenths in use)\n",
                    one_page ? "a page" : chars ? gl_fmt_bytes(h->size / chars, a, sizeof a) : "0 B",
                    one_page || !chars || h->size % chars == 0 ? "" : " or so");
        }
        for (size_t i = 0; series && i < v[k].nseries; i++)
            text_point(f, &v[k], "  at", &v[k].series[i], r);
        if (with_ledgers && v[k].peak_ledger.n) {
            fprintf(f, "  live at the peak, by stack:\n");
            text_groups(f, s, &v[k].peak_ledger, top, "region");
        }
        if (v[k].leaks.n) {
            fprintf(f, "  never given back: %s in %" PRIu64 " region%s\n",
                    gl_fmt_bytes(v[k].leaks.total_bytes, a, sizeof a), v[k].leaks.total_count,
                    gl_s(v[k].leaks.total_count));
            text_groups(f, s, &v[k].leaks, top, "region");
        }
    }
}

static void json_point(struct gl_json *j, const char *key, const struct gl_heap_view *v,
                       const struct gl_heap_point *p)
{
    const struct gl_heap *h = v->h;
    gl_jw_obj(j, key);
    gl_jw_i64(j, "seq", p->seq);
    gl_jw_i64(j, "ts_ns", p->ts_ns);
    gl_jw_u64(j, "used", p->fs.used);
    gl_jw_u64(j, "free", p->fs.free);
    gl_jw_u64(j, "holes", p->fs.holes);
    gl_jw_u64(j, "largest_free", p->fs.largest_free);
    gl_jw_num(j, "external_fragmentation", "%.6f", p->fs.external_fragmentation);
    gl_jw_num(j, "largest_free_ratio", "%.6f", p->fs.largest_free_ratio);
    gl_jw_u64(j, "regions", p->regions);
    gl_jw_u64(j, "region_bytes", p->region_bytes);
    gl_jw_u64(j, "unused_bytes", p->waste);
    if (v->has_used)
        gl_jw_num(j, "internal_fragmentation", "%.6f", p->internal_fragmentation);
    else
        gl_jw_null(j, "internal_fragmentation");
    if (h->page_size) {
        gl_jw_u64(j, "pages_in_use", p->fs.used / h->page_size);
        gl_jw_u64(j, "pages_free", p->fs.free / h->page_size);
        gl_jw_u64(j, "largest_free_pages", p->fs.largest_free / h->page_size);
    }
    gl_jw_end(j);
}

static void json_groups(struct gl_json *j, const char *key, struct gl_stacks *s, const struct gl_groups *g, int top)
{
    gl_jw_arr(j, key);
    for (size_t i = 0; i < g->n && (int)i < top; i++) {
        gl_jw_obj(j, NULL);
        gl_jw_i64(j, "stack_id", g->v[i].stack_id);
        gl_jw_u64(j, "bytes", g->v[i].bytes);
        gl_jw_u64(j, "count", g->v[i].count);
        gl_jw_frames(j, "frames", gl_stack_get(s, g->v[i].stack_id), 64);
        gl_jw_end(j);
    }
    gl_jw_end(j);
}

void gl_heaps_json(struct gl_json *j, const char *key, struct gl_heaps_view *hv, int top)
{
    gl_jw_arr(j, key);
    for (size_t k = 0; k < hv->n; k++) {
        const struct gl_heap_view *v = &hv->v[k];
        const struct gl_heap *h = v->h;
        gl_jw_obj(j, NULL);
        gl_jw_i64(j, "id", h->seq);
        gl_jw_str(j, "name", h->name);
        gl_jw_u64(j, "base", h->base);
        gl_jw_u64(j, "size", h->size);
        gl_jw_u64(j, "page_size", h->page_size);
        gl_jw_i64(j, "device", h->device);
        gl_jw_i64(j, "allocation", h->in ? h->in->seq : 0);
        gl_jw_bool(j, "unregistered", h->end_seq != 0);
        gl_jw_u64(j, "regions", v->nregions);
        json_point(j, "peak", v, &v->peak);
        json_point(j, "worst", v, &v->worst);
        json_point(j, "end", v, &v->end);
        gl_jw_arr(j, "series");
        for (size_t i = 0; i < v->nseries; i++)
            json_point(j, NULL, v, &v->series[i]);
        gl_jw_end(j);
        gl_jw_u64(j, "cell_bytes", v->cell_bytes);
        gl_jw_u8s(j, "occupancy_peak", v->occ_peak, v->ncells);
        gl_jw_u8s(j, "occupancy_worst", v->occ_worst, v->ncells);
        json_groups(j, "peak_ledger", &hv->stacks, &v->peak_ledger, top);
        gl_jw_u64(j, "leaked_regions", v->leaks.total_count);
        gl_jw_u64(j, "leaked_bytes", v->leaks.total_bytes);
        json_groups(j, "leaks", &hv->stacks, &v->leaks, top);
        gl_jw_end(j);
    }
    gl_jw_end(j);
}

void gl_heap_leaks_text(FILE *f, struct gl_heaps_view *hv, int top)
{
    char name[160], a[32];
    int any = 0;
    for (size_t k = 0; k < hv->n; k++) {
        const struct gl_heap_view *v = &hv->v[k];
        if (!v->leaks.n)
            continue;
        if (!any++)
            fprintf(f, "\ninside the program's own pools, regions never given back:\n");
        fputs("heap ", f);
        gl_text_str(f, gl_heap_label(v->h, name, sizeof name));
        fprintf(f, ": %s in %" PRIu64 " region%s\n", gl_fmt_bytes(v->leaks.total_bytes, a, sizeof a),
                v->leaks.total_count, gl_s(v->leaks.total_count));
        text_groups(f, &hv->stacks, &v->leaks, top, "region");
    }
}

void gl_heap_leaks_json(struct gl_json *j, const char *key, struct gl_heaps_view *hv, int top)
{
    gl_jw_arr(j, key);
    for (size_t k = 0; k < hv->n; k++) {
        const struct gl_heap_view *v = &hv->v[k];
        if (!v->leaks.n)
            continue;
        gl_jw_obj(j, NULL);
        gl_jw_i64(j, "heap", v->h->seq);
        gl_jw_str(j, "name", v->h->name);
        gl_jw_u64(j, "leaked_regions", v->leaks.total_count);
        gl_jw_u64(j, "leaked_bytes", v->leaks.total_bytes);
        json_groups(j, "leaks", &hv->stacks, &v->leaks, top);
        gl_jw_end(j);
    }
    gl_jw_end(j);
}
