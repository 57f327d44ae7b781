/* export.c — a run in the simplest formats other tools read: folded stacks
 * for flame-graph tools (bytes live at the peak, never freed, or ever
 * allocated) and the allocations as CSV. (Perfetto, memory_viz and
 * speedscope: export_*.c.) */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "escape.h"
#include "out.h"
#include "render.h"
#include "stack_text.h"

/* fold: allocator internals (frameclass.h) left out, "[allocator]" in
 * their place at the top of the stack */
static void folded_line(FILE *f, const struct gl_stack *st, uint64_t bytes, int fold)
{
    char buf[1024];
    int folded = 0, first = 1;
    if (!st->n)
        fputs("(no stack)", f);
    for (int i = st->n - 1; i >= 0; i--) { /* root first */
        if (fold && gl_stack_frame_class(st, i) == GL_FC_ALLOCATOR) {
            folded = 1;
            continue;
        }
        if (!first)
            fputc(';', f);
        first = 0;
        gl_folded_str(f, gl_frame_name(&st->f[i], buf, sizeof buf));
    }
    if (folded)
        fputs(first ? "[allocator]" : ";[allocator]", f);
    fprintf(f, " %" PRIu64 "\n", bytes);
}

void gl_export_folded(FILE *f, struct gl_run *r, const char *what, int fold)
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
                folded_line(f, gl_stack_get(&s, one.v[i].stack_id), one.v[i].bytes, fold);
            gl_groups_free(&one);
        }
    }
    for (size_t i = 0; i < g.n; i++)
        folded_line(f, gl_stack_get(&s, g.v[i].stack_id), g.v[i].bytes, fold);
    gl_groups_free(&g);
    gl_stacks_free(&s);
}

/* Is allocation a one of `what`: everything, never freed, or live at its
 * device's peak (the sets folded export and report count)? */
static int csv_row_wanted(struct gl_run *r, const struct gl_alloc *a, const char *what)
{
    if (!strcmp(what, "allocs"))
        return 1;
    if (!gl_kind_counts_on_device(a->kind))
        return 0;
    if (!strcmp(what, "leaks"))
        return a->free_seq == 0;
    for (int d = 0; d < r->ndevs; d++)
        if (r->devs[d].device == a->device)
            return gl_live_at(a, r->devs[d].peak_seq);
    return 0;
}

void gl_export_csv(FILE *f, struct gl_run *r, const char *what)
{
    struct gl_stacks s;
    gl_stacks_init(&s, r);
    fputs("id,device,api,kind,addr,size,alloc_ns,free_ns,stack_id,allocated_in\n", f);
    char buf[1024];
    for (size_t i = 0; i < r->nallocs; i++) {
        const struct gl_alloc *a = &r->allocs[i];
        if (gl_kind_layer(a->kind) == GL_LAYER_ADDRESS || !csv_row_wanted(r, a, what))
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
