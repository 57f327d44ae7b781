/* export.c — a run in the simplest formats other tools read: folded stacks
 * for flame-graph tools (bytes live at the peak, never freed, or ever
 * allocated) and the allocations as CSV. (Perfetto, memory_viz and
 * speedscope: export_*.c.) What they show is computed before
 * (view_export.c); this file writes it. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

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
        gl_folded_str(f, gl_frame_name(gl_stack_frame(st, i), buf, sizeof buf));
    }
    if (folded)
        fputs(first ? "[allocator]" : ";[allocator]", f);
    fprintf(f, " %" PRIu64 "\n", bytes);
}

void gl_export_folded(FILE *f, struct gl_folded_view *v, int fold)
{
    for (size_t k = 0; k < v->nsets; k++)
        for (size_t i = 0; i < v->sets[k].n; i++)
            folded_line(f, gl_stack_get(&v->stacks, v->sets[k].v[i].stack_id), v->sets[k].v[i].bytes, fold);
}

void gl_export_csv(FILE *f, struct gl_csv_view *v)
{
    fputs("id,device,api,kind,addr,size,alloc_ns,free_ns,stack_id,allocated_in\n", f);
    char buf[1024];
    for (size_t i = 0; i < v->n; i++) {
        const struct gl_alloc *a = &v->run->allocs[v->idx[i]];
        const struct gl_stack *st = gl_stack_get(&v->stacks, a->stack_id);
        fprintf(f, "%" PRId64 ",%d,%s,%s,0x%" PRIx64 ",%" PRIu64 ",%" PRId64 ",", a->seq, a->device, gl_api_name(a->api),
                gl_kind_name(a->kind), a->addr, a->size, a->alloc_ns);
        if (a->free_seq)
            fprintf(f, "%" PRId64, a->free_ns);
        fprintf(f, ",%" PRId64 ",", a->stack_id);
        gl_csv_str(f, st->n ? gl_frame_name(gl_stack_frame(st, 0), buf, sizeof buf) : "");
        fputc('\n', f);
    }
}
