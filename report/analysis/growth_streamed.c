/* growth_streamed.c — see growth_streamed.h. */
#include "growth_streamed.h"

#include <stdlib.h>
#include <string.h>

#include "model_growth.h"
#include "u64map.h"

/* nsteps slices holding equal numbers of the ledger's rows, as
 * analysis.c's step_bounds cuts them from every allocation: each bound
 * the event before the next slice's first row, the last the last row.
 * The rows' seqs are distinct (a scan of repeated seqs is inexact), so a
 * bitmap over seqs puts them in order. 0 (fewer rows than slices: *nb 0),
 * or -1 out of memory. */
static int slices(const struct gl_growth_in *g, int nsteps, int64_t **out, size_t *nb)
{
    size_t n = g->nrows;
    *nb = 0;
    if (n < (size_t)nsteps)
        return 0;
    int64_t max = 0;
    for (size_t i = 0; i < n; i++)
        max = g->seq[i] > max ? g->seq[i] : max;
    uint64_t *bits = calloc((size_t)max / 64 + 1, sizeof *bits);
    int64_t *b = calloc((size_t)nsteps, sizeof *b);
    if (!bits || !b) {
        free(bits);
        free(b);
        return -1;
    }
    for (size_t i = 0; i < n; i++)
        bits[g->seq[i] / 64] |= 1ULL << (g->seq[i] % 64);
    size_t k = 0, seen = 0;
    int64_t last = 0;
    for (size_t w = 0; w <= (size_t)max / 64; w++)
        for (uint64_t x = bits[w]; x; x &= x - 1) {
            int64_t seq = (int64_t)(w * 64 + (size_t)__builtin_ctzll(x));
            if (k + 1 < (size_t)nsteps && seen == (k + 1) * n / (size_t)nsteps)
                b[k++] = seq - 1;
            seen++;
            last = seq;
        }
    b[k++] = last;
    free(bits);
    *out = b;
    *nb = k;
    return 0;
}

struct first {
    int64_t seq; /* the group's first allocation */
    size_t group;
};

static int cmp_first(const void *a, const void *b)
{
    const struct first *x = a, *y = b;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Add n changes of from into *to (made at the first). 0, or -1. */
static int add_steps(uint64_t **to, const uint64_t *from, size_t n)
{
    if (!*to && !(*to = calloc(n, sizeof **to)))
        return -1;
    for (size_t s = 0; s < n; s++)
        (*to)[s] += from[s];
    return 0;
}

/* out->v[at[i]] for each model group i of the device asked (SIZE_MAX: not
 * asked), in the order of their first allocation. */
static int make_groups(const struct gl_growth_in *g, int device, size_t *at, struct gl_groups *out)
{
    struct first *order = malloc((g->n + 1) * sizeof *order);
    struct gl_u64map idx; /* key -> index in out */
    gl_u64map_init(&idx);
    out->v = calloc(g->n + 1, sizeof *out->v);
    int rc = order && out->v ? 0 : -1;
    for (size_t i = 0; !rc && i < g->n; i++)
        order[i] = (struct first){g->v[i].sample.seq, i};
    if (!rc && g->n)
        qsort(order, g->n, sizeof *order, cmp_first);
    for (size_t i = 0; !rc && i < g->n; i++) {
        size_t self = order[i].group;
        const struct gl_growth_group *m = &g->v[self];
        at[self] = SIZE_MAX;
        if (device != -2 && device != m->device)
            continue;
        uint64_t pos;
        if (!gl_u64map_get(&idx, m->key, &pos)) {
            pos = out->n++;
            rc = gl_u64map_put(&idx, m->key, pos);
            out->v[pos] = (struct gl_group){.stack_id = m->sample.stack_id, .sample = &m->sample,
                                            .first_ns = m->first_ns};
        }
        struct gl_group *o = &out->v[pos];
        o->bytes += m->bytes;
        o->requested += m->requested;
        o->count += m->count;
        o->first_ns = m->first_ns < o->first_ns ? m->first_ns : o->first_ns;
        o->last_ns = m->last_ns > o->last_ns ? m->last_ns : o->last_ns;
        out->total_bytes += m->bytes;
        out->total_count += m->count;
        at[self] = pos;
    }
    free(order);
    gl_u64map_free(&idx);
    return rc;
}

int gl_growth_groups_streamed(const struct gl_run *r, int device, int nsteps, int64_t **bounds, size_t *nb,
                              struct gl_groups *out)
{
    const struct gl_growth_in *g = r->growth;
    *bounds = NULL;
    *nb = 0;
    if (g->bounds) {
        if (!(*bounds = malloc(g->nb * sizeof **bounds)))
            return -1;
        memcpy(*bounds, g->bounds, g->nb * sizeof **bounds);
        *nb = g->nb;
    } else if (slices(g, nsteps, bounds, nb)) {
        return -1;
    }
    if (!*nb)
        return 0;
    size_t *at = malloc((g->n + 1) * sizeof *at);
    int rc = at ? make_groups(g, device, at, out) : -1;
    for (size_t i = 0; !rc && g->bounds && i < g->n; i++)
        if (at[i] != SIZE_MAX && g->v[i].steps)
            rc = add_steps(&out->v[at[i]].steps, g->v[i].steps, *nb);
    /* the rows kept for slices: each live at the step ends [lo, hi) */
    for (size_t i = 0; !rc && !g->bounds && i < g->nrows; i++) {
        size_t o = at[g->group[i]];
        if (o == SIZE_MAX)
            continue;
        rc = gl_steps_add_life(&out->v[o].steps, *bounds, *nb, g->seq[i], gl_growth_row_free(g, i), g->size[i]);
    }
    free(at);
    return rc;
}
