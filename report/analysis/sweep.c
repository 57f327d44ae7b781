/* sweep.c — see sweep.h. Allocations are already in event order; their
 * frees are sorted by event number and merged in. */
#include "sweep.h"

#include <stdlib.h>

struct fr {
    int64_t seq;
    uint32_t idx;
};

static int cmp_fr(const void *a, const void *b)
{
    const struct fr *x = a, *y = b;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

int gl_sweep_build(const struct gl_run *r, struct gl_sweep *s, int (*want)(const struct gl_alloc *a))
{
    s->ev = NULL;
    s->n = 0;
    if (r->nallocs >= (1u << 31))
        return -1;
    size_t na = 0, nf = 0;
    for (size_t i = 0; i < r->nallocs; i++)
        if (want(&r->allocs[i])) {
            na++;
            nf += r->allocs[i].free_seq != 0;
        }
    struct fr *frees = malloc((nf + 1) * sizeof *frees);
    s->ev = malloc((na + nf + 1) * sizeof *s->ev);
    if (!frees || !s->ev) {
        free(frees);
        free(s->ev);
        s->ev = NULL;
        return -1;
    }
    size_t k = 0;
    for (size_t i = 0; i < r->nallocs; i++)
        if (want(&r->allocs[i]) && r->allocs[i].free_seq)
            frees[k++] = (struct fr){r->allocs[i].free_seq, (uint32_t)i};
    qsort(frees, nf, sizeof *frees, cmp_fr);
    size_t f = 0;
    for (size_t i = 0; i < r->nallocs; i++) {
        if (!want(&r->allocs[i]))
            continue;
        for (; f < nf && frees[f].seq < r->allocs[i].seq; f++)
            s->ev[s->n++] = frees[f].idx << 1 | 1u;
        s->ev[s->n++] = (uint32_t)i << 1;
    }
    for (; f < nf; f++)
        s->ev[s->n++] = frees[f].idx << 1 | 1u;
    free(frees);
    return 0;
}

void gl_sweep_free(struct gl_sweep *s)
{
    free(s->ev);
    s->ev = NULL;
    s->n = 0;
}
