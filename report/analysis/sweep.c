/* sweep.c — see sweep.h. Allocations are already in event order; their
 * frees come in event order from the load (gl_run.free_order), or, where
 * it has none, are sorted by event number; then they are merged in. */
#include "sweep.h"

#include <stdlib.h>
#include <string.h>

struct fr {
    int64_t seq;
    uint32_t idx;
};

static int cmp_fr(const void *a, const void *b)
{
    const struct fr *x = a, *y = b;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int cmp_fr_idx(const void *a, const void *b)
{
    const struct fr *x = a, *y = b;
    int c = cmp_fr(a, b);
    return c ? c : (x->idx > y->idx) - (x->idx < y->idx);
}

/* How a free and an allocation of one seq (only a database with repeated
 * seqs has them; the load then gives no free_order) are ordered: the
 * allocation first (TIE_ALLOC), or the free first when its allocation came
 * earlier (TIE_INDEX, a stable sort of each allocation followed by its
 * free). */
enum tie { TIE_ALLOC, TIE_INDEX };

/* The frees of the allocations marked in `in` (by index) with free_seq <=
 * end_seq, in event order: from the load's order, else sorted (ties, which
 * only a database with repeated seqs has, by index). NULL: out of memory. */
static struct fr *frees_in_order(const struct gl_run *r, const uint8_t *in, size_t nf, int64_t end_seq,
                                 enum tie tie)
{
    struct fr *frees = malloc((nf + 1) * sizeof *frees);
    size_t k = 0;
    if (!frees)
        return NULL;
    if (r->free_order) {
        for (size_t i = 0; i < r->nfree_order && k < nf; i++) {
            uint32_t x = r->free_order[i];
            if (in[x] && r->allocs[x].free_seq <= end_seq)
                frees[k++] = (struct fr){r->allocs[x].free_seq, x};
        }
        return frees;
    }
    for (size_t i = 0; i < r->nallocs; i++)
        if (in[i] && r->allocs[i].free_seq && r->allocs[i].free_seq <= end_seq)
            frees[k++] = (struct fr){r->allocs[i].free_seq, (uint32_t)i};
    qsort(frees, k, sizeof *frees, tie == TIE_ALLOC ? cmp_fr : cmp_fr_idx);
    return frees;
}

/* Allocation positions pos[0..na) (ascending: event order) and their frees
 * merged into s->ev. */
static int merge_in(const struct gl_run *r, const uint32_t *pos, size_t na, const uint8_t *in, size_t nf,
                    int64_t end_seq, enum tie tie, struct gl_sweep *s)
{
    struct fr *frees = frees_in_order(r, in, nf, end_seq, tie);
    s->ev = malloc((na + nf + 1) * sizeof *s->ev);
    if (!frees || !s->ev) {
        free(frees);
        free(s->ev);
        s->ev = NULL;
        return -1;
    }
    size_t f = 0;
    for (size_t i = 0; i < na; i++) {
        const struct gl_alloc *a = &r->allocs[pos[i]];
        for (; f < nf && (frees[f].seq < a->seq || (tie == TIE_INDEX && frees[f].seq == a->seq && frees[f].idx < pos[i])); f++)
            s->ev[s->n++] = frees[f].idx << 1 | 1u;
        s->ev[s->n++] = pos[i] << 1;
    }
    for (; f < nf; f++)
        s->ev[s->n++] = frees[f].idx << 1 | 1u;
    free(frees);
    return 0;
}

/* The sweep of the allocations at pos[0..na), frees up to end_seq. */
static int sweep_of(const struct gl_run *r, const uint32_t *pos, size_t na, int64_t end_seq, enum tie tie,
                    struct gl_sweep *s)
{
    uint8_t *in = calloc(r->nallocs + 1, 1);
    size_t nf = 0;
    if (!in)
        return -1;
    for (size_t i = 0; i < na; i++) {
        in[pos[i]] = 1;
        nf += r->allocs[pos[i]].free_seq && r->allocs[pos[i]].free_seq <= end_seq;
    }
    int rc = merge_in(r, pos, na, in, nf, end_seq, tie, s);
    free(in);
    return rc;
}

int gl_sweep_build(const struct gl_run *r, struct gl_sweep *s, int (*want)(const struct gl_alloc *a))
{
    s->ev = NULL;
    s->n = 0;
    if (r->nallocs >= (1u << 31))
        return -1;
    size_t na = 0;
    uint32_t *pos = malloc((r->nallocs + 1) * sizeof *pos);
    if (!pos)
        return -1;
    for (size_t i = 0; i < r->nallocs; i++)
        if (want(&r->allocs[i]))
            pos[na++] = (uint32_t)i;
    int rc = sweep_of(r, pos, na, INT64_MAX, TIE_ALLOC, s);
    free(pos);
    return rc;
}

int gl_sweep_members(const struct gl_run *r, const struct gl_alloc *const *m, size_t nm, int64_t end_seq,
                     struct gl_sweep *s)
{
    s->ev = NULL;
    s->n = 0;
    if (r->nallocs >= (1u << 31))
        return -1;
    uint32_t *pos = malloc((nm + 1) * sizeof *pos);
    if (!pos)
        return -1;
    for (size_t i = 0; i < nm; i++)
        pos[i] = (uint32_t)(m[i] - r->allocs);
    int rc = sweep_of(r, pos, nm, end_seq, TIE_INDEX, s);
    free(pos);
    return rc;
}

void gl_sweep_free(struct gl_sweep *s)
{
    free(s->ev);
    s->ev = NULL;
    s->n = 0;
}
