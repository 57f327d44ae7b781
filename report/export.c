/* export.c — a run in the formats other tools read: folded stacks for
 * flame-graph tools (bytes live at the peak, never freed, or ever
 * allocated), a Chrome/Perfetto trace (a live-bytes counter track per
 * device, failed allocations as instant events), the allocations as CSV. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "escape.h"
#include "json.h"
#include "out.h"
#include "render.h"

static void folded_line(FILE *f, const struct gl_stack *st, uint64_t bytes)
{
    char buf[1024];
    if (!st->n)
        fputs("(no stack)", f);
    for (int i = st->n - 1; i >= 0; i--) { /* root first */
        if (i != st->n - 1)
            fputc(';', f);
        gl_folded_str(f, gl_frame_name(&st->f[i], buf, sizeof buf));
    }
    fprintf(f, " %" PRIu64 "\n", bytes);
}

void gl_export_folded(FILE *f, struct gl_run *r, const char *what)
{
    struct gl_stacks s;
    gl_stacks_init(&s, r);
    struct gl_groups g = {0};
    if (!strcmp(what, "leaks")) {
        struct gl_leak_opts lo = {0, 0, 0};
        gl_leaks(r, -2, &lo, &g);
    } else if (!strcmp(what, "allocs")) {
        struct gl_leak_opts lo = {0, 1, 1}; /* lifetime >= 1 ns: everything */
        gl_leaks(r, -2, &lo, &g);
    } else {
        for (int d = 0; d < r->ndevs; d++) {
            struct gl_groups one;
            gl_ledger_at(r, r->devs[d].device, r->devs[d].peak_seq, &one);
            for (size_t i = 0; i < one.n; i++)
                folded_line(f, gl_stack_get(&s, one.v[i].stack_id), one.v[i].bytes);
            gl_groups_free(&one);
        }
    }
    for (size_t i = 0; i < g.n; i++)
        folded_line(f, gl_stack_get(&s, g.v[i].stack_id), g.v[i].bytes);
    gl_groups_free(&g);
    gl_stacks_free(&s);
}

struct step {
    int64_t seq, ts;
    int64_t delta;
    int device;
};

static int cmp_step(const void *a, const void *b)
{
    const struct step *x = a, *y = b;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

void gl_export_perfetto(FILE *f, struct gl_run *r)
{
    struct step *v = malloc((2 * r->nallocs + 1) * sizeof *v);
    size_t n = 0;
    for (size_t i = 0; v && i < r->nallocs; i++) {
        const struct gl_alloc *a = &r->allocs[i];
        if (!gl_kind_counts_on_device(a->kind))
            continue;
        v[n++] = (struct step){a->seq, a->alloc_ns, (int64_t)a->size, a->device};
        if (a->free_seq)
            v[n++] = (struct step){a->free_seq, a->free_ns, -(int64_t)a->size, a->device};
    }
    if (v)
        qsort(v, n, sizeof *v, cmp_step);
    int64_t live[GL_MAX_DEVICES + 1] = {0};
    char name[96];
    struct gl_json j;
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
    for (size_t i = 0; i < n; i++) {
        int k = v[i].device + 1; /* -1 (unknown) .. GL_MAX_DEVICES - 1: the model keeps no other */
        live[k] += v[i].delta;
        snprintf(name, sizeof name, "device %d live bytes", v[i].device);
        gl_jw_obj(&j, NULL);
        gl_jw_str(&j, "name", name);
        gl_jw_str(&j, "ph", "C");
        gl_jw_num(&j, "ts", "%.3f", (double)(v[i].ts - r->first_ns) / 1e3);
        gl_jw_i64(&j, "pid", r->pid);
        gl_jw_obj(&j, "args");
        gl_jw_i64(&j, "bytes", live[k]);
        gl_jw_end(&j);
        gl_jw_end(&j);
    }
    for (size_t i = 0; i < r->nfails; i++) {
        const struct gl_fail *fl = &r->fails[i];
        snprintf(name, sizeof name, "%s %s failed", fl->op == GL_OP_OOM ? "OOM:" : "error:", gl_api_name(fl->api));
        gl_jw_obj(&j, NULL);
        gl_jw_str(&j, "name", name);
        gl_jw_str(&j, "ph", "i");
        gl_jw_str(&j, "s", "p");
        gl_jw_num(&j, "ts", "%.3f", (double)(fl->ts_ns - r->first_ns) / 1e3);
        gl_jw_i64(&j, "pid", r->pid);
        gl_jw_obj(&j, "args");
        gl_jw_u64(&j, "size", fl->size);
        gl_jw_i64(&j, "error", fl->result);
        gl_jw_i64(&j, "device", fl->device);
        gl_jw_end(&j);
        gl_jw_end(&j);
    }
    gl_jw_end(&j);
    gl_jw_end(&j);
    fputc('\n', f);
    free(v);
}

void gl_export_csv(FILE *f, struct gl_run *r)
{
    struct gl_stacks s;
    gl_stacks_init(&s, r);
    fputs("id,device,api,kind,addr,size,alloc_ns,free_ns,stack_id,allocated_in\n", f);
    char buf[1024];
    for (size_t i = 0; i < r->nallocs; i++) {
        const struct gl_alloc *a = &r->allocs[i];
        if (gl_kind_layer(a->kind) == GL_LAYER_ADDRESS)
            continue;
        const struct gl_stack *st = gl_stack_get(&s, a->stack_id);
        fprintf(f, "%" PRId64 ",%d,%s,%s,0x%" PRIx64 ",%" PRIu64 ",%" PRId64 ",", a->seq, a->device, gl_api_name(a->api),
                gl_kind_name(a->kind), a->addr, a->size, a->alloc_ns);
        if (a->free_seq)
            fprintf(f, "%" PRId64, a->free_ns);
        fprintf(f, ",%" PRId64 ",", a->stack_id);
        gl_csv_str(f, st->n ? gl_frame_name(&st->f[0], buf, sizeof buf) : "");
        fputc('\n', f);
    }
    gl_stacks_free(&s);
}
