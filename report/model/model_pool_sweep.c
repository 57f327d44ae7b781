/* model_pool_sweep.c — see model_pool_sweep.h. */
#include "model_pool_sweep.h"

#include <stdlib.h>
#include <string.h>

#include "grow.h"

/* folded into the merged regions past this many distinct addresses */
#define UNIQ_FOLD (1u << 16)

static int cmp_ival(const void *a, const void *b)
{
    const struct gl_ival *x = a, *y = b;
    return x->lo < y->lo ? -1 : x->lo > y->lo;
}

size_t gl_ivals_merge(struct gl_ival *v, size_t n)
{
    if (n > 1)
        qsort(v, n, sizeof *v, cmp_ival);
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (k && v[i].lo <= v[k - 1].hi) {
            if (v[i].hi > v[k - 1].hi)
                v[k - 1].hi = v[i].hi;
        } else {
            v[k++] = v[i];
        }
    }
    return k;
}

void gl_pool_sweep_init(struct gl_pool_sweep *p, uint64_t pool, int device, int64_t end, int derive_regions)
{
    memset(p, 0, sizeof *p);
    p->pool = pool;
    p->device = device;
    p->end = end;
    p->derive_regions = derive_regions;
    gl_u64map_init(&p->set);
    gl_u64map_init(&p->uniq);
}

/* Room for n ranges in the scratch. */
static int scratch_room(struct gl_pool_sweep *p, size_t n)
{
    if (n <= p->scratch_cap)
        return 0;
    size_t nc = n * 2 > 64 ? n * 2 : 64;
    struct gl_ival *nv = realloc(p->scratch, nc * sizeof *nv);
    if (!nv)
        return -1;
    p->scratch = nv;
    p->scratch_cap = nc;
    return 0;
}

/* The map's entries as ranges (key, value) into the scratch after its
 * first `at`; the count. -1: out of memory. */
static long collect(struct gl_pool_sweep *p, const struct gl_u64map *m, size_t at)
{
    if (scratch_room(p, at + m->count + 1))
        return -1;
    size_t n = at;
    for (size_t k = 0; k < m->cap; k++)
        if (m->keys[k] != 0 && m->keys[k] != UINT64_MAX)
            p->scratch[n++] = (struct gl_ival){m->keys[k], m->vals[k]};
    if (m->has_zero)
        p->scratch[n++] = (struct gl_ival){0, m->zero_val};
    return (long)(n - at);
}

static int64_t point(const struct gl_pool_sweep *p, size_t k)
{
    int64_t span = p->end - p->first; /* < 2^62 (model.c): divide before multiplying */
    if (k == GL_HOLE_SAMPLES)
        return p->end;
    return p->first + span / GL_HOLE_SAMPLES * (int64_t)k + span % GL_HOLE_SAMPLES * (int64_t)k / GL_HOLE_SAMPLES;
}

/* The next moment: the live ranges now. */
static int take(struct gl_pool_sweep *p)
{
    struct gl_pool_snap *s = &p->snap[p->next];
    long n = collect(p, &p->set, 0);
    if (n < 0)
        return -1;
    size_t m = gl_ivals_merge(p->scratch, (size_t)n);
    s->seq = point(p, p->next);
    s->ts_ns = p->ts;
    s->live = malloc((m ? m : 1) * sizeof *s->live);
    if (!s->live)
        return -1;
    memcpy(s->live, p->scratch, m * sizeof *s->live);
    s->n = m;
    p->next++;
    return 0;
}

/* The regions so far and the distinct ranges since, merged into regions. */
static int fold(struct gl_pool_sweep *p)
{
    if (scratch_room(p, p->nregions + 1))
        return -1;
    if (p->nregions)
        memcpy(p->scratch, p->regions, p->nregions * sizeof *p->regions);
    long n = collect(p, &p->uniq, p->nregions);
    if (n < 0)
        return -1;
    size_t m = gl_ivals_merge(p->scratch, p->nregions + (size_t)n);
    struct gl_ival *nv = realloc(p->regions, (m ? m : 1) * sizeof *nv);
    if (!nv)
        return -1;
    memcpy(nv, p->scratch, m * sizeof *nv);
    p->regions = nv;
    p->nregions = m;
    gl_u64map_free(&p->uniq);
    gl_u64map_init(&p->uniq);
    return 0;
}

/* Before an event at seq: the moments before it taken. 1: every moment is
 * taken (the event is past the end). */
static int advance(struct gl_pool_sweep *p, int64_t seq)
{
    while (p->next < GL_POOL_POINTS && point(p, p->next) < seq)
        if (take(p))
            return -1;
    return p->next == GL_POOL_POINTS;
}

int gl_pool_sweep_alloc(struct gl_pool_sweep *p, int64_t seq, int64_t ts, uint64_t addr, uint64_t size)
{
    if (p->oom)
        return -1;
    if (!p->started) {
        p->started = 1;
        p->first = seq;
        p->ts = ts;
    }
    uint64_t end = addr + size, prev;
    if (p->derive_regions && (!gl_u64map_get(&p->uniq, addr, &prev) || end > prev) &&
        (gl_u64map_put(&p->uniq, addr, end) || (p->uniq.count > UNIQ_FOLD && fold(p))))
        return p->oom = -1;
    int rc = advance(p, seq);
    if (rc)
        return rc < 0 ? (p->oom = -1) : 0;
    if (end) { /* (an empty one at 0 ends one there) */
        if (gl_u64map_put(&p->set, addr, end))
            return p->oom = -1;
    } else {
        gl_u64map_del(&p->set, addr);
    }
    p->ts = ts;
    return 0;
}

int gl_pool_sweep_free(struct gl_pool_sweep *p, int64_t seq, int64_t ts, uint64_t addr)
{
    if (p->oom)
        return -1;
    int rc = advance(p, seq);
    if (rc)
        return rc < 0 ? (p->oom = -1) : 0;
    gl_u64map_del(&p->set, addr);
    p->ts = ts;
    return 0;
}

int gl_pool_sweep_finish(struct gl_pool_sweep *p)
{
    while (!p->oom && p->next < GL_POOL_POINTS)
        if (take(p))
            p->oom = -1;
    if (!p->oom && p->derive_regions && fold(p))
        p->oom = -1;
    gl_u64map_free(&p->set);
    gl_u64map_free(&p->uniq);
    gl_u64map_init(&p->set);
    gl_u64map_init(&p->uniq);
    free(p->scratch);
    p->scratch = NULL;
    p->scratch_cap = 0;
    return p->oom;
}

void gl_pool_sweep_free_all(struct gl_pool_sweep *p)
{
    gl_u64map_free(&p->set);
    gl_u64map_free(&p->uniq);
    free(p->scratch);
    free(p->regions);
    for (size_t k = 0; k < p->next; k++)
        free(p->snap[k].live);
    memset(p, 0, sizeof *p);
}

/* ---- every pool of a scan ------------------------------------------------ */

void gl_pools_in_init(struct gl_pools_in *g, int64_t end)
{
    memset(g, 0, sizeof *g);
    g->end = end;
    gl_u64map_init(&g->first_of);
}

/* The replay of (pool, device), made at its first allocation; NULL: out
 * of memory, or (make 0) none yet. */
static struct gl_pool_sweep *find(struct gl_pools_in *g, uint64_t pool, int device, int make)
{
    if (g->n && g->v[g->last].pool == pool && g->v[g->last].device == device)
        return &g->v[g->last];
    uint64_t at;
    size_t tail = SIZE_MAX;
    if (gl_u64map_get(&g->first_of, pool, &at))
        for (size_t i = (size_t)at - 1;; i = g->next_same[i] - 1) {
            if (g->v[i].device == device) {
                g->last = i;
                return &g->v[i];
            }
            tail = i;
            if (!g->next_same[i])
                break;
        }
    if (!make)
        return NULL;
    if (gl_grow((void **)&g->v, &g->cap, g->n, sizeof *g->v, 8) ||
        gl_grow((void **)&g->next_same, &g->next_cap, g->n, sizeof *g->next_same, 8))
        return NULL;
    size_t i = g->n;
    if (tail != SIZE_MAX)
        g->next_same[tail] = i + 1;
    else if (gl_u64map_put(&g->first_of, pool, i + 1))
        return NULL;
    g->next_same[i] = 0;
    gl_pool_sweep_init(&g->v[i], pool, device, g->end, 1);
    g->n++;
    g->last = i;
    return &g->v[i];
}

int gl_pools_in_alloc(struct gl_pools_in *g, uint64_t pool, int device, int64_t seq, int64_t ts, uint64_t addr,
                      uint64_t size)
{
    struct gl_pool_sweep *p = find(g, pool, device, 1);
    return p ? gl_pool_sweep_alloc(p, seq, ts, addr, size) : -1;
}

int gl_pools_in_free(struct gl_pools_in *g, uint64_t pool, int device, int64_t seq, int64_t ts, uint64_t addr)
{
    struct gl_pool_sweep *p = find(g, pool, device, 0);
    return p ? gl_pool_sweep_free(p, seq, ts, addr) : 0;
}

int gl_pools_in_finish(struct gl_pools_in *g)
{
    int rc = 0;
    for (size_t i = 0; i < g->n; i++)
        rc |= gl_pool_sweep_finish(&g->v[i]);
    gl_u64map_free(&g->first_of);
    gl_u64map_init(&g->first_of);
    return rc;
}

void gl_pools_in_free_all(struct gl_pools_in *g)
{
    for (size_t i = 0; i < g->n; i++)
        gl_pool_sweep_free_all(&g->v[i]);
    free(g->v);
    free(g->next_same);
    gl_u64map_free(&g->first_of);
    memset(g, 0, sizeof *g);
}
