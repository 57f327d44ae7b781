/* render_text.c — the one-screen text report. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "dossier.h"
#include "model_fwstats.h"
#include "out.h"
#include "render.h"
#include "render_diagnosis.h"
#include "render_heaps.h"

static void sparkline(FILE *f, const struct gl_device *dev)
{
    static const char *const bars[] = {"▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"};
    if (!dev->ntimeline || !dev->peak)
        return;
    fputs("  timeline  ", f);
    const size_t width = 60;
    for (size_t c = 0; c < width; c++) {
        size_t lo = c * dev->ntimeline / width, hi = (c + 1) * dev->ntimeline / width;
        uint64_t m = 0;
        for (size_t b = lo; b < hi || b == lo; b++)
            if (b < dev->ntimeline && dev->timeline[b].live > m)
                m = dev->timeline[b].live;
        fputs(bars[(m * 7 + dev->peak / 2) / dev->peak], f);
    }
    fputs("  (live bytes over time)\n", f);
}

static void print_groups(FILE *f, struct gl_dossier *ds, const struct gl_groups *g, uint64_t total, int top,
                         const char *indent)
{
    char b[32], cat[256];
    size_t shown = g->n < (size_t)top ? g->n : (size_t)top;
    const struct gl_stack **st = calloc(shown + 1, sizeof(void *));
    int *at = calloc(shown + 1, sizeof *at);
    for (size_t i = 0; st && at && i < shown; i++)
        st[i] = gl_stack_get(&ds->stacks, g->v[i].stack_id);
    if (st && at)
        gl_stacks_distinct(st, shown, at);
    /* the columns as wide as their widest cell ("1023.50 MiB", 1000000x)
     * and the count two spaces from the share at least, so they stay apart
     * and aligned at any count; the category as wide as the widest
     * ("optimizer_temporaries", "private_pool (0, 1)"), 16 at least */
    int wb = 10, wc = 6, wk = 16;
    for (size_t i = 0; i < shown; i++) {
        int lb = (int)strlen(gl_fmt_bytes(g->v[i].bytes, b, sizeof b));
        int lc = snprintf(b, sizeof b, "%" PRIu64, g->v[i].count) + 1;
        int lk = (int)strlen(gl_text_buf(g->v[i].category ? g->v[i].category : "", cat, sizeof cat));
        wb = lb > wb ? lb : wb;
        wc = lc > wc ? lc : wc;
        wk = lk > wk ? lk : wk;
    }
    for (size_t i = 0; i < shown; i++) {
        const struct gl_group *gr = &g->v[i];
        fprintf(f, "%s%*s %5.1f%% %*" PRIu64 "x  %-*s ", indent, wb, gl_fmt_bytes(gr->bytes, b, sizeof b),
                total ? 100.0 * (double)gr->bytes / (double)total : 0.0, wc, gr->count, wk,
                gl_text_buf(gr->category ? gr->category : "", cat, sizeof cat));
        if (gr->what)
            fputs(gl_row_text(gr->what), f);
        else
            gl_print_chain(f, gl_stack_get(&ds->stacks, gr->stack_id), 4, st && at ? at[i] : -1);
        fputc('\n', f);
    }
    free(st);
    free(at);
    if (g->n > (size_t)top)
        fprintf(f, "%s%zu more stack%s (--top to see more)\n", indent, g->n - (size_t)top, gl_s(g->n - (size_t)top));
}

/* "X in N tensors + Y cached free in the caching allocator's S segments +
 * Z outside it = TOTAL" */
static void print_layers(FILE *f, const struct gl_groups *g)
{
    char a[32], b[32], c[32], d[32];
    fprintf(f, "%s in %" PRIu64 " tensor%s + %s cached in the caching allocator's %" PRIu64 " segment%s",
            gl_fmt_bytes(g->tensors, a, sizeof a), g->tensor_count, gl_s(g->tensor_count),
            gl_fmt_bytes(g->cached + g->pending, b, sizeof b), g->segments, gl_s(g->segments));
    fprintf(f, " + %s outside it = %s", gl_fmt_bytes(g->outside, c, sizeof c),
            gl_fmt_bytes(g->tensors + g->cached + g->pending + g->outside, d, sizeof d));
}

/* "<title> cat bytes (share), ..." then "<heading> (N stacks):" (with
 * PyTorch's caching allocator: "<heading>: its layers (N rows):") and the
 * rows */
static void ledger(FILE *f, struct gl_dossier *ds, const char *title, const struct gl_cat_total *cats, size_t ncats,
                   const char *heading, const struct gl_groups *g, int top)
{
    char b[32], cat[256];
    uint64_t total = g->total_bytes;
    fputs(title, f);
    for (size_t c = 0; c < ncats; c++)
        fprintf(f, "%s %s %s (%.0f%%)", c ? "," : "", gl_text_buf(cats[c].category, cat, sizeof cat),
                gl_fmt_bytes(cats[c].bytes, b, sizeof b), total ? 100.0 * (double)cats[c].bytes / (double)total : 0.0);
    fputc('\n', f);
    if (g->layered && !g->tensors_only) {
        fprintf(f, "%s: ", heading);
        print_layers(f, g);
        fprintf(f, " (%zu row%s):\n", g->n, gl_s(g->n));
    } else {
        fprintf(f, "%s (%zu stack%s):\n", heading, g->n, gl_s(g->n));
    }
    print_groups(f, ds, g, total, top, "    ");
}

/* The frees that failed (a pointer never allocated, one freed already):
 * nothing was freed, so they are not in the ledger; up to 5 shown. */
/* A bounded recording: the budget, its use, what was aggregated. */
static void budget_line(FILE *f, const struct gl_folded *b)
{
    if (!b->budgeted)
        return;
    char total[32], used[32];
    fprintf(f,
            "  budget %s: %s used; %" PRIu64 " step%s aggregated by stack (%" PRIu64 " alloc+free pair%s), %" PRIu64
            " step%s of full events",
            gl_fmt_bytes(b->budget, total, sizeof total), gl_fmt_bytes(b->used, used, sizeof used), b->steps_folded,
            gl_s(b->steps_folded), b->pairs, gl_s(b->pairs), b->steps_full, gl_s(b->steps_full));
    if (b->windows_dropped)
        fprintf(f, " (%" PRIu64 " older peak window%s folded since)", b->windows_dropped, gl_s(b->windows_dropped));
    fputc('\n', f);
    if (b->rows_dropped)
        fprintf(f,
                "  budget exhausted: %" PRIu64 " row%s outside the windows dropped; leaks and steps after that are "
                "not exact\n",
                b->rows_dropped, gl_s(b->rows_dropped));
}

static void failed_frees(FILE *f, struct gl_dossier *ds)
{
    const struct gl_run *r = ds->run;
    size_t n = 0, shown = 0;
    char t[32];
    for (size_t i = 0; i < r->nfails; i++)
        n += gl_op_is_free(r->fails[i].op);
    if (!n)
        return;
    fprintf(f, "  failed frees: %zu call%s returned an error (nothing freed, not in the ledger):\n", n, gl_s(n));
    for (size_t i = 0; i < r->nfails && shown < 5; i++) {
        const struct gl_fail *fl = &r->fails[i];
        if (!gl_op_is_free(fl->op))
            continue;
        fprintf(f, "    %s(0x%" PRIx64 ") at %s (event %" PRId64 ", error %d", gl_api_name(fl->api), fl->addr,
                gl_fmt_rel(r, fl->ts_ns, t, sizeof t), fl->seq, fl->result);
        if (fl->device >= 0)
            fprintf(f, ", device %d", fl->device);
        fputs("): ", f);
        gl_print_chain(f, gl_stack_get(&ds->stacks, fl->stack_id), 3, -1);
        fputc('\n', f);
        shown++;
    }
    if (n > shown)
        fprintf(f, "    %zu more\n", n - shown);
}

/* "outside any allocation API: ..." of a device: process = ledger + the
 * rest where the process's own figure is known (NVML) and not below the
 * ledger; without NVML, cudaMemGetInfo's estimate and no such sum. */
static void outside_api(FILE *f, const struct gl_usage *us)
{
    char b[32], t[32], u[32], w[32], x[32], near[64] = "";
    if (us->unknown) {
        fputs("  outside any allocation API: not measured (NVML not found: set GPULEDGER_NVML_LIB; one "
              "cudaMemGetInfo sample only)\n",
              f);
        return;
    }
    if (!us->source[0])
        return;
    if (us->peak.from_peak_ns) { /* the sample nearest the peak, not at it */
        char d[48];
        snprintf(near, sizeof near, " (%s)", gl_usage_from_peak_text(us->peak.from_peak_ns, "it", d, sizeof d));
    }
    fprintf(f, "  outside any allocation API: %s at the peak%s, %s at the end (",
            gl_fmt_bytes(gl_usage_outside(&us->peak), b, sizeof b), near,
            gl_fmt_bytes(gl_usage_outside(&us->end), t, sizeof t));
    if (!strcmp(us->source, "cudaMemGetInfo"))
        fputs("NVML was not available, so the process's own figure is not known; ", f);
    else if (us->end.process < us->end.ledger)
        fprintf(f, "process %s, below the ledger's %s at the end; ", gl_fmt_bytes(us->end.process, u, sizeof u),
                gl_fmt_bytes(us->end.ledger, w, sizeof w));
    else
        fprintf(f, "process %s = ledger %s + %s; ", gl_fmt_bytes(us->end.process, u, sizeof u),
                gl_fmt_bytes(us->end.ledger, w, sizeof w), gl_fmt_bytes(gl_usage_outside(&us->end), x, sizeof x));
    fprintf(f, "%s)\n", gl_usage_source_text(us->source));
}

/* ", step 14" for an event in a run with steps, else "" */
static const char *step_text(const struct gl_run *r, int64_t seq, char *buf, size_t sz)
{
    long s = gl_step_at(r, seq);
    buf[0] = 0;
    if (s >= 0)
        snprintf(buf, sz, ", step %ld", s);
    return buf;
}

/* A framework's own allocator statistics for this device (JAX/XLA), and
 * what they cannot show. */
static void fw_stats(FILE *f, const struct gl_run *r, int device)
{
    struct gl_fw_device fw;
    char b[32], t[32], u[32], w[32];
    if (!gl_fw_device(r, device, &fw))
        return;
    fputs("  ", f);
    gl_text_str(f, fw.framework);
    fprintf(f,
            "'s allocator, from its memory_stats() (%zu sample%s at marks, steps and exit): %s in use at the last, "
            "peak in use %s (peak_bytes_in_use), limit %s (bytes_limit)",
            fw.n, gl_s(fw.n), gl_fmt_bytes(fw.in_use_end, b, sizeof b), gl_fmt_bytes(fw.peak, t, sizeof t),
            gl_fmt_bytes(fw.limit, u, sizeof u));
    if (fw.arena_allocs)
        fprintf(f, "; its arena: %s in %zu allocation%s (xla_arena, the allocator's reservation, not a leak)",
                gl_fmt_bytes(fw.arena, w, sizeof w), fw.arena_allocs, gl_s(fw.arena_allocs));
    fputs("\n    not visible inside the arena: which arrays hold it, their stacks, the holes between them (XLA "
          "places its buffers with no CUDA call)\n", f);
}

static void one(FILE *f, struct gl_dossier *ds, int top)
{
    struct gl_run *r = ds->run;
    char b[32], t[32], u[32], w[32], x[32];
    fputs("== ", f);
    gl_text_str(f, r->path);
    fputc('\n', f);
    if (ds->diag.n) {
        gl_diagnosis_text(f, &ds->diag);
        fputc('\n', f);
    }
    fprintf(f, "process %" PRId64 " on ", r->pid);
    gl_text_str(f, r->host);
    fputs(" (rank ", f);
    gl_text_str(f, r->rank);
    fputs("): ", f);
    gl_text_str(f, r->cmdline);
    fputc('\n', f);
    fprintf(f, "  %" PRId64 " event%s over %s", r->event_count, gl_s((uint64_t)r->event_count),
            gl_fmt_span(r, t, sizeof t));
    if (r->has_exit_signal)
        fprintf(f, ", killed by signal %" PRId64, r->exit_signal);
    else if (r->has_exit_code)
        fprintf(f, ", exit code %" PRId64, r->exit_code);
    else if (r->unfinished)
        fputs(", " GL_UNFINISHED_TEXT, f);
    fputc('\n', f);
    if (r->dropped)
        fprintf(f, "  WARNING: %" PRId64 " event%s dropped (queue full): figures are lower bounds\n", r->dropped,
                r->dropped == 1 ? " was" : "s were");
    if (r->unmatched)
        fprintf(f, "  note: %" PRId64 " free%s of memory the recorder never saw allocated (not in the ledger)\n",
                r->unmatched, gl_s((uint64_t)r->unmatched));
    if (r->truncated)
        fprintf(f, "  note: %" PRId64 " %s deeper than the depth limit (cut at the bottom)\n",
                r->truncated, r->truncated == 1 ? "event had a stack" : "events had stacks");
    if (ds->python_version[0]) {
        fputs("  Python ", f);
        gl_text_str(f, ds->python_version);
        fprintf(f,
                ": %zu of %zu allocation%s carr%s Python frames (the others were made on threads not "
                "running Python, e.g. PyTorch's autograd engine)\n",
                ds->python_allocs, r->allocs_made, gl_s(r->allocs_made), ds->python_allocs == 1 ? "ies" : "y");
    }
    fputs("  calls:", f);
    for (int a = 1; a < GL_API_COUNT; a++)
        if (r->api_count[a])
            fprintf(f, " %s %" PRId64, gl_api_name(a), r->api_count[a]);
    fputc('\n', f);
    budget_line(f, &r->folded);
    failed_frees(f, ds);
    for (int i = 0; i < ds->ndevs; i++) {
        struct gl_dev_view *v = &ds->devs[i];
        if (!v->dev->peak_seq) /* only failed calls on it: no peak, no time of one */
            fprintf(f, "\ndevice %d: nothing allocated (peak 0 B), %s live at the end\n", v->dev->device,
                    gl_fmt_bytes(v->dev->live_end, u, sizeof u));
        else
            fprintf(f, "\ndevice %d: peak %s at %s (event %" PRId64 "%s), %s live at the end\n", v->dev->device,
                    gl_fmt_bytes(v->dev->peak, b, sizeof b), gl_fmt_rel(r, v->dev->peak_ns, t, sizeof t),
                    v->dev->peak_seq, step_text(r, v->dev->peak_seq, x, sizeof x), gl_fmt_bytes(v->dev->live_end, u, sizeof u));
        sparkline(f, v->dev);
        if (ds->at) {
            fprintf(f, "  at event #%" PRId64 " (%s)%s", ds->at->seq, gl_fmt_rel(r, ds->at->ts_ns, t, sizeof t),
                    ds->at->desc[0] ? ", " : "");
            gl_text_str(f, ds->at->desc);
            fprintf(f, ": %s live\n", gl_fmt_bytes(v->at.total_bytes, b, sizeof b));
            ledger(f, ds, "  by category:", v->at_cats, v->at_ncats, "  ledger", &v->at, top);
        } else if (v->ncats) {
            ledger(f, ds, "  at the peak, by category:", v->cats, v->ncats, "  peak ledger", &v->peak, top);
        }
        fw_stats(f, r, v->dev->device);
        if (v->dev->blocks && v->dev->tensor_peak_seq && !ds->at) {
            const struct gl_device *dv = v->dev;
            char st[32];
            fprintf(f, "  tensor peak %s at %s (event %" PRId64 "%s): torch.cuda.max_memory_allocated(); requested %s of it",
                    gl_fmt_bytes(dv->tensor_peak, b, sizeof b), gl_fmt_rel(r, dv->tensor_peak_ns, t, sizeof t),
                    dv->tensor_peak_seq, step_text(r, dv->tensor_peak_seq, st, sizeof st),
                    gl_fmt_bytes(v->tensor_peak.tensors_requested, u, sizeof u));
            fprintf(f, " (requested peak %s); its segments' peak %s: torch.cuda.max_memory_reserved()\n",
                    gl_fmt_bytes(dv->requested_peak, w, sizeof w), gl_fmt_bytes(dv->reserved_peak, x, sizeof x));
            ledger(f, ds, "    by category:", v->tensor_cats, v->ntensor_cats, "  tensor peak ledger", &v->tensor_peak,
                   top);
        }
        outside_api(f, &v->usage);
        if (v->leaks.n) {
            if (r->unfinished) /* not a leak verdict: the program may still have freed them */
                fprintf(f, "  live when the recording stopped (it did not finish: not known to be leaks): %s",
                        gl_fmt_bytes(v->leak_bytes, b, sizeof b));
            else
                fprintf(f, "  never freed: %s in leak chains", gl_fmt_bytes(v->leak_bytes, b, sizeof b));
            if (v->cached_bytes)
                fprintf(f, ", %s held by a caching allocator (not a leak)", gl_fmt_bytes(v->cached_bytes, t, sizeof t));
            if (v->held_bytes)
                fprintf(f, ", %s of tensors tagged as parameters, gradients, optimizer state, KV cache or buffers",
                        gl_fmt_bytes(v->held_bytes, u, sizeof u));
            fputs(" — see 'gpuledger leaks'\n", f);
        }
        for (size_t k = 0; k < v->nooms; k++) {
            const struct gl_oom_view *o = &v->ooms[k];
            char st[32];
            fprintf(f, "  OUT OF MEMORY at %s%s: %s %s failed (error %d) with %s live; ",
                    gl_fmt_rel(r, o->fail->ts_ns, t, sizeof t), step_text(r, o->fail->seq, st, sizeof st),
                    gl_api_name(o->fail->api),
                    gl_fmt_bytes(o->fail->size, b, sizeof b), o->fail->result,
                    gl_fmt_bytes(o->live_bytes, u, sizeof u));
            gl_print_chain(f, gl_stack_get(&ds->stacks, o->fail->stack_id), 3, -1);
            fputc('\n', f);
            if (o->absorbed)
                fprintf(f, "    (its cudaMalloc of a %s segment failed %d time%s first)\n",
                        gl_fmt_bytes(o->absorbed_size, b, sizeof b), o->absorbed, gl_s((uint64_t)o->absorbed));
            if (o->verdict.known) {
                char text[2048];
                gl_verdict_text(&o->verdict, &o->ledger, &ds->stacks, text, sizeof text);
                fputs("    verdict: ", f);
                gl_text_str(f, text);
                fputc('\n', f);
            }
            if (!o->ledger.n) {
                fputs("    live then (OOM ledger): nothing\n", f);
                continue;
            }
            if (o->ledger.layered) {
                fputs("    live then (OOM ledger): ", f);
                print_layers(f, &o->ledger);
                fputs(":\n", f);
            } else {
                fputs("    live then (OOM ledger):\n", f);
            }
            print_groups(f, ds, &o->ledger, o->live_bytes, top < 5 ? top : 5, "      ");
        }
    }
    for (size_t h = 0; h < ds->nholes; h++) {
        const struct gl_pool_holes *p = &ds->holes[h];
        char w[32], label[96];
        fprintf(f, "\n%s (device %d): worst at %s: %s free of %s in %" PRIu64
                   " hole%s, largest %s, external fragmentation %.2f\n",
                gl_pool_label(p, label, sizeof label), p->device, gl_fmt_rel(r, p->worst.ts_ns, t, sizeof t),
                gl_fmt_bytes(p->worst.free, b, sizeof b), gl_fmt_bytes(p->worst.reserved, u, sizeof u), p->worst.holes,
                gl_s(p->worst.holes), gl_fmt_bytes(p->worst.largest_free, w, sizeof w), p->worst.external_fragmentation);
    }
    if (ds->heaps.n) {
        fputc('\n', f);
        gl_heaps_text(f, &ds->heaps, top < 5 ? top : 5, 0, 1);
    }
}

void gl_render_text_process(FILE *f, struct gl_dossier *d, size_t i, int top)
{
    if (i)
        fputc('\n', f);
    one(f, d, top);
}

void gl_render_text_end(FILE *f, const struct gl_report_totals *t)
{
    if (t->processes > 1) {
        char b[32];
        fprintf(f, "\ntotal over %zu processes: sum of per-device peaks %s\n", t->processes,
                gl_fmt_bytes(t->peak_bytes, b, sizeof b));
    }
}
