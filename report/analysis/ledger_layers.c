/* ledger_layers.c — see ledger_layers.h. */
#include "ledger_layers.h"

#include <stdlib.h>

/* A block freed but reusable only later, or never within the recording
 * (gl_ledger_at's pending, from its free on). */
static int pending_after_free(const struct gl_alloc *a)
{
    return gl_pending_at(a, a->free_seq);
}

static int cmp_done(const void *a, const void *b)
{
    const struct gl_layers_done *x = a, *y = b;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

int gl_layers_done_list(const struct gl_run *r, struct gl_layers_done **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    if (!r->has_blocks)
        return 0;
    struct gl_layers_done *v = malloc((r->nallocs + 1) * sizeof *v);
    if (!v)
        return -1;
    size_t k = 0;
    for (size_t i = 0; i < r->nallocs; i++)
        if (pending_after_free(&r->allocs[i]) && r->allocs[i].done_seq) /* never: nothing to apply */
            v[k++] = (struct gl_layers_done){r->allocs[i].done_seq, (uint32_t)i};
    qsort(v, k, sizeof *v, cmp_done);
    *out = v;
    *n = k;
    return 0;
}

void gl_layers_apply(struct gl_layers *l, const struct gl_alloc *a, int is_free)
{
    int64_t sign = is_free ? -1 : 1;
    if (!l->on)
        return;
    if (a->flags & GL_AF_ALLOCATOR) {
        l->allocator += sign * (int64_t)a->size;
        l->segments += sign;
    } else if (a->kind == GL_KIND_BLOCK) {
        l->tensors += sign * (int64_t)a->size;
        if (is_free && pending_after_free(a))
            l->pending += (int64_t)a->size;
    }
}

void gl_layers_complete(struct gl_layers *l, const struct gl_alloc *a)
{
    if (l->on)
        l->pending -= (int64_t)a->size;
}
