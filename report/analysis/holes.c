/* holes.c — hole density of stream-ordered pools and reserved VA ranges
 * (see analysis.h, gl_holes). Each pool or reservation is replayed in event
 * order (model_pool_sweep.h) and its live ranges measured against its
 * regions at GL_POOL_POINTS moments from its first allocation to the end of
 * the recording (a reservation: its release). A full load replays each
 * from its sweep (sweep.h); a GL_LOAD_HOLES load has replayed the pools
 * during its scan (gl_run.pool_replays) and kept the reservations' records. The
 * caching allocator's holes come from its samples (holes_allocator.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "freemap.h"
#include "model_pool_sweep.h"
#include "sweep.h"

/* Holes of `live` (sorted, merged) inside `regions` (sorted, merged). */
static void measure(const struct gl_ival *regions, size_t nr, const struct gl_ival *live, size_t nl,
                    struct gl_hole_stat *st)
{
    size_t j = 0;
    st->reserved = st->live = st->free = st->largest_free = st->holes = 0;
    for (size_t i = 0; i < nr; i++) {
        uint64_t cur = regions[i].lo;
        st->reserved += regions[i].hi - regions[i].lo;
        while (j < nl && live[j].hi <= regions[i].lo)
            j++;
        for (; j < nl && live[j].lo < regions[i].hi; j++) {
            uint64_t lo = live[j].lo < regions[i].lo ? regions[i].lo : live[j].lo;
            uint64_t hi = live[j].hi > regions[i].hi ? regions[i].hi : live[j].hi;
            if (lo > cur) {
                uint64_t gap = lo - cur;
                st->free += gap;
                st->holes++;
                if (gap > st->largest_free)
                    st->largest_free = gap;
            }
            st->live += hi - lo;
            if (hi > cur)
                cur = hi;
        }
        if (regions[i].hi > cur) {
            uint64_t gap = regions[i].hi - cur;
            st->free += gap;
            st->holes++;
            if (gap > st->largest_free)
                st->largest_free = gap;
        }
    }
    struct gl_free_stats fs = {.free = st->free, .largest_free = st->largest_free};
    gl_free_ratios(&fs);
    st->external_fragmentation = fs.external_fragmentation;
    st->largest_free_ratio = fs.largest_free_ratio;
    st->unused_bytes = -1; /* a pool hands out what is asked, as far as it says */
    st->internal_fragmentation = 0.0;
}

/* The series of a finished replay against regions; the worst moment is
 * the one with the most free bytes outside the largest free block: space
 * that is free but, being scattered, cannot serve a large request. */
static int series_of(const struct gl_pool_sweep *p, const struct gl_ival *regions, size_t nr,
                     struct gl_pool_holes *ph)
{
    ph->series = calloc(GL_POOL_POINTS, sizeof *ph->series);
    if (!ph->series || p->oom || p->next != GL_POOL_POINTS)
        return -1;
    for (size_t s = 0; s < p->next; s++) {
        struct gl_hole_stat st;
        measure(regions, nr, p->snap[s].live, p->snap[s].n, &st);
        st.seq = p->snap[s].seq;
        st.ts_ns = p->snap[s].ts_ns;
        ph->series[ph->nseries++] = st;
        struct gl_free_stats a = {.free = st.free, .largest_free = st.largest_free, .holes = st.holes};
        struct gl_free_stats b = {.free = ph->worst.free, .largest_free = ph->worst.largest_free,
                                  .holes = ph->worst.holes};
        if (ph->nseries == 1 || gl_free_worse(&a, &b)) {
            ph->worst = st;
            ph->worst_index = ph->nseries - 1;
        }
    }
    ph->end = ph->series[ph->nseries - 1];
    return 0;
}

/* One pool or reservation from the run's records: members m[0..nm) (in
 * seq order) replayed up to end_seq; regions derived (a pool: the merged
 * ranges it handed out) when given is NULL. */
static int replay_members(const struct gl_run *r, const struct gl_alloc **m, size_t nm, const struct gl_ival *given,
                          int64_t end_seq, struct gl_pool_holes *ph)
{
    struct gl_sweep sw;
    struct gl_pool_sweep p;
    if (gl_sweep_members(r, m, nm, end_seq, &sw))
        return -1;
    gl_pool_sweep_init(&p, m[0]->pool, m[0]->device, end_seq, !given);
    int rc = 0;
    for (size_t e = 0; e < sw.n && !rc; e++) {
        const struct gl_alloc *a = gl_sweep_alloc(r, sw.ev[e]);
        rc = gl_sweep_is_free(sw.ev[e]) ? gl_pool_sweep_free(&p, a->free_seq, a->free_ns, a->addr)
                                        : gl_pool_sweep_alloc(&p, a->seq, a->alloc_ns, a->addr, a->size);
    }
    gl_sweep_free(&sw);
    rc |= gl_pool_sweep_finish(&p);
    if (!rc && !given)
        ph->regions = p.nregions;
    if (!rc)
        rc = given ? series_of(&p, given, 1, ph) : series_of(&p, p.regions, p.nregions, ph);
    gl_pool_sweep_free_all(&p);
    return rc;
}

static int cmp_alloc_ptr_pool(const void *a, const void *b)
{
    const struct gl_alloc *x = *(const struct gl_alloc *const *)a, *y = *(const struct gl_alloc *const *)b;
    if (x->pool != y->pool)
        return x->pool < y->pool ? -1 : 1;
    if (x->device != y->device)
        return x->device - y->device;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* A new zeroed entry at the end of *out (grown as needed), or NULL. */
static struct gl_pool_holes *next_entry(struct gl_pool_holes **out, size_t *n, size_t *cap)
{
    if (*n == *cap) {
        size_t nc = *cap ? *cap * 2 : 8;
        struct gl_pool_holes *nv = realloc(*out, nc * sizeof *nv);
        if (!nv)
            return NULL;
        *out = nv;
        *cap = nc;
    }
    struct gl_pool_holes *ph = &(*out)[(*n)++];
    memset(ph, 0, sizeof *ph);
    return ph;
}

static void pool_entry(struct gl_run *r, struct gl_pool_holes *ph, uint64_t pool, int device)
{
    ph->what = "async pool";
    ph->pool = pool;
    ph->device = device;
    ph->sampled_reserved = gl_run_pool_reserved(r, pool, device);
}

/* Stream-ordered pools from the run's records, by (pool, device): in the
 * order of their first allocations, or sorted when there are more than 64. */
static void pools_from_records(struct gl_run *r, const uint64_t *only, const struct gl_alloc **m, int64_t end_seq,
                               struct gl_pool_holes **out, size_t *n, size_t *cap)
{
    /* group by (pool, device) keeping seq order: one pass per distinct key
     * (there are few), a sort only if there are many */
    size_t nm = 0;
    struct {
        uint64_t pool;
        int device;
    } keys[64];
    size_t nkeys = 0;
    int many = 0;
    for (size_t i = 0; i < r->nallocs && !many; i++) {
        const struct gl_alloc *a = &r->allocs[i];
        if (a->kind != GL_KIND_ASYNC || (only && a->pool != *only))
            continue;
        size_t k = 0;
        while (k < nkeys && !(keys[k].pool == a->pool && keys[k].device == a->device))
            k++;
        if (k == nkeys && nkeys == 64) {
            many = 1;
        } else if (k == nkeys) {
            keys[nkeys].pool = a->pool;
            keys[nkeys].device = a->device;
            nkeys++;
        }
    }
    if (!many) {
        for (size_t k = 0; k < nkeys; k++)
            for (size_t i = 0; i < r->nallocs; i++) {
                const struct gl_alloc *a = &r->allocs[i];
                if (a->kind == GL_KIND_ASYNC && a->pool == keys[k].pool && a->device == keys[k].device)
                    m[nm++] = a;
            }
    } else {
        for (size_t i = 0; i < r->nallocs; i++)
            if (r->allocs[i].kind == GL_KIND_ASYNC && (!only || r->allocs[i].pool == *only))
                m[nm++] = &r->allocs[i];
        qsort(m, nm, sizeof(const struct gl_alloc *), cmp_alloc_ptr_pool);
    }
    for (size_t i = 0; i < nm;) {
        size_t j = i;
        while (j < nm && m[j]->pool == m[i]->pool && m[j]->device == m[i]->device)
            j++;
        struct gl_pool_holes *ph = next_entry(out, n, cap);
        if (!ph)
            break;
        pool_entry(r, ph, m[i]->pool, m[i]->device);
        replay_members(r, m + i, j - i, NULL, end_seq, ph);
        i = j;
    }
}

static int cmp_sweep_ptr(const void *a, const void *b)
{
    const struct gl_pool_sweep *x = *(const struct gl_pool_sweep *const *)a;
    const struct gl_pool_sweep *y = *(const struct gl_pool_sweep *const *)b;
    if (x->pool != y->pool)
        return x->pool < y->pool ? -1 : 1;
    return x->device - y->device;
}

/* The same from the replays a GL_LOAD_HOLES scan made. */
static void pools_from_scan(struct gl_run *r, const uint64_t *only, struct gl_pool_holes **out, size_t *n,
                            size_t *cap)
{
    const struct gl_pools_in *g = r->pool_replays;
    const struct gl_pool_sweep **v = malloc((g->n + 1) * sizeof(const struct gl_pool_sweep *));
    size_t nv = 0;
    if (!v)
        return;
    for (size_t i = 0; i < g->n; i++)
        if (!only || g->v[i].pool == *only)
            v[nv++] = &g->v[i];
    if (nv > 64)
        qsort(v, nv, sizeof(const struct gl_pool_sweep *), cmp_sweep_ptr);
    for (size_t i = 0; i < nv; i++) {
        struct gl_pool_holes *ph = next_entry(out, n, cap);
        if (!ph)
            break;
        pool_entry(r, ph, v[i]->pool, v[i]->device);
        ph->regions = v[i]->nregions;
        series_of(v[i], v[i]->regions, v[i]->nregions, ph);
    }
    free(v);
}

int gl_holes(struct gl_run *r, const uint64_t *only, struct gl_pool_holes **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    size_t cap = 0;
    int64_t end_seq = r->last_seq; /* the recording's last event (model.h) */
    const struct gl_alloc **m = malloc((r->nallocs + 1) * sizeof(const struct gl_alloc *));
    if (!m)
        return -1;
    /* 1. stream-ordered pools, grouped by (pool, device) */
    if (r->pool_replays)
        pools_from_scan(r, only, out, n, &cap);
    else
        pools_from_records(r, only, m, end_seq, out, n, &cap);
    /* 2. reserved VA ranges: the mappings inside each reservation */
    for (size_t i = 0; i < r->nallocs; i++) {
        const struct gl_alloc *va = &r->allocs[i];
        if (va->kind != GL_KIND_VA || (only && va->addr != *only))
            continue;
        size_t nm = 0;
        for (size_t k = 0; k < r->nallocs; k++) {
            const struct gl_alloc *mp = &r->allocs[k];
            if (mp->kind == GL_KIND_MAPPING && mp->addr >= va->addr && mp->addr < va->addr + va->size)
                m[nm++] = mp;
        }
        if (!nm)
            continue;
        struct gl_ival region = {va->addr, va->addr + va->size};
        struct gl_pool_holes *ph = next_entry(out, n, &cap);
        if (!ph)
            break;
        ph->what = "vmm reservation";
        ph->pool = va->addr;
        ph->device = m[0]->device >= 0 ? m[0]->device : 0;
        ph->regions = 1;
        replay_members(r, m, nm, &region, va->free_seq ? va->free_seq - 1 : end_seq, ph);
    }
    free(m);
    /* 3. PyTorch's caching allocator, per device: its own samples */
    for (int k = 0; !only && k < r->ndevs; k++) {
        struct gl_pool_holes *ph = r->devs[k].blocks ? next_entry(out, n, &cap) : NULL;
        if (ph && gl_holes_allocator(r, r->devs[k].device, ph) != 1)
            (*n)--; /* no samples (or out of memory): no entry */
    }
    return 0;
}

const char *gl_pool_label(const struct gl_pool_holes *p, char *buf, size_t sz)
{
    if (!strcmp(p->what, GL_HOLES_ALLOCATOR))
        snprintf(buf, sz, "PyTorch's %s", p->what);
    else if (!p->pool)
        snprintf(buf, sz, "default %s", p->what); /* cudaMallocAsync without a pool argument */
    else
        snprintf(buf, sz, "%s 0x%llx", p->what, (unsigned long long)p->pool);
    return buf;
}

void gl_holes_free(struct gl_pool_holes *h, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(h[i].series);
    free(h);
}
