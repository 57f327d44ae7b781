/* heaps.c — see heaps.h. Per heap, one sweep over its regions' changes
 * with a free-space map (freemap.c), every figure checked at every change;
 * a second sweep stops at the peak and at the worst moment for their
 * occupancy maps and the peak's ledger. */
#include "heaps.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "u64map.h"

/* What a sweep knows about each region (indexed like hs->regions). */
struct reg_state {
    uint64_t size;
    int64_t used; /* -1 unknown */
    int live;
};

struct sweep {
    const struct gl_heaps *hs;
    const struct gl_heap *h;
    struct gl_freemap map;
    struct reg_state *st;
    uint64_t regions, region_bytes, waste;
};

static uint64_t waste_of(const struct reg_state *s)
{
    if (s->used < 0)
        return 0;
    return (uint64_t)s->used >= s->size ? 0 : s->size - (uint64_t)s->used;
}

static void region_on(struct sweep *w, uint32_t i, int on)
{
    const struct gl_region *g = &w->hs->regions[i];
    struct reg_state *s = &w->st[i];
    gl_freemap_add(&w->map, g->addr, g->addr + s->size, on ? +1 : -1);
    if (on) {
        w->regions++;
        w->region_bytes += s->size;
        w->waste += waste_of(s);
    } else {
        w->regions--;
        w->region_bytes -= s->size;
        w->waste -= waste_of(s);
    }
}

static void apply(struct sweep *w, const struct gl_heap_ev *e)
{
    const struct gl_region *g = &w->hs->regions[e->region];
    struct reg_state *s = &w->st[e->region];
    switch (e->what) {
    case GL_HEV_ALLOC:
        s->size = g->size;
        s->used = g->used;
        s->live = 1;
        region_on(w, e->region, 1);
        break;
    case GL_HEV_FREE:
        if (s->live)
            region_on(w, e->region, 0);
        s->live = 0;
        break;
    case GL_HEV_RESIZE:
        if (s->live)
            region_on(w, e->region, 0);
        s->size = e->value;
        if (s->live)
            region_on(w, e->region, 1);
        break;
    case GL_HEV_USED:
        if (s->live)
            w->waste -= waste_of(s);
        s->used = (int64_t)e->value;
        if (s->live)
            w->waste += waste_of(s);
        break;
    default:
        break;
    }
}

static void point(const struct sweep *w, int64_t seq, int64_t ts, struct gl_heap_point *p)
{
    p->seq = seq;
    p->ts_ns = ts;
    gl_freemap_stats(&w->map, &p->fs);
    p->regions = w->regions;
    p->region_bytes = w->region_bytes;
    p->waste = w->waste;
    p->internal_fragmentation = w->region_bytes ? (double)w->waste / (double)w->region_bytes : 0.0;
}

/* The map over the heap with every boundary its regions ever had. */
static int sweep_init(struct sweep *w, const struct gl_heaps *hs, size_t k, const size_t *ev, size_t nev)
{
    memset(w, 0, sizeof *w);
    w->hs = hs;
    w->h = &hs->heaps[k];
    uint64_t *cuts = malloc((2 * nev + 1) * sizeof *cuts);
    w->st = calloc(hs->nregions ? hs->nregions : 1, sizeof *w->st);
    if (!cuts || !w->st) {
        free(cuts);
        free(w->st);
        return -1;
    }
    size_t nc = 0;
    for (size_t j = 0; j < nev; j++) {
        const struct gl_heap_ev *e = &hs->evs[ev[j]];
        const struct gl_region *g = &hs->regions[e->region];
        if (e->what == GL_HEV_ALLOC) {
            cuts[nc++] = g->addr;
            cuts[nc++] = g->addr + g->size;
        } else if (e->what == GL_HEV_RESIZE) {
            cuts[nc++] = g->addr + e->value;
        }
    }
    int rc = gl_freemap_init(&w->map, w->h->base, w->h->base + w->h->size, cuts, nc);
    free(cuts);
    if (rc)
        free(w->st);
    return rc;
}

static void sweep_free(struct sweep *w)
{
    gl_freemap_free(&w->map);
    free(w->st);
}

static int occupancy(const struct sweep *w, const struct gl_heap_view *v, uint8_t **out)
{
    *out = malloc(v->ncells ? v->ncells : 1);
    if (!*out)
        return -1;
    for (size_t c = 0; c < v->ncells; c++) {
        uint64_t lo = w->h->base + c * v->cell_bytes, hi = lo + v->cell_bytes;
        if (hi > w->h->base + w->h->size)
            hi = w->h->base + w->h->size;
        uint64_t used = gl_freemap_used_in(&w->map, lo, hi), len = hi - lo;
        unsigned pct = len ? (unsigned)(used * 100 / len) : 0;
        if (used && !pct)
            pct = 1;
        (*out)[c] = (uint8_t)pct;
    }
    return 0;
}

/* Group the regions of heap k that are live in w by stack. */
static int group_live(const struct sweep *w, const struct gl_heaps *hs, size_t k, struct gl_groups *g)
{
    memset(g, 0, sizeof *g);
    struct gl_u64map at;
    gl_u64map_init(&at);
    size_t cap = 0;
    int rc = 0;
    for (size_t i = 0; i < hs->nregions && !rc; i++) {
        const struct gl_region *x = &hs->regions[i];
        if (x->heap != k || !w->st[i].live)
            continue;
        uint64_t pos;
        if (!gl_u64map_get(&at, (uint64_t)x->stack_id + 1, &pos)) {
            if (g->n == cap) {
                cap = cap ? cap * 2 : 16;
                struct gl_group *nv = realloc(g->v, cap * sizeof *nv);
                if (!nv) {
                    rc = -1;
                    break;
                }
                g->v = nv;
            }
            pos = g->n++;
            memset(&g->v[pos], 0, sizeof g->v[pos]);
            g->v[pos].stack_id = x->stack_id;
            g->v[pos].sample = x->row;
            g->v[pos].first_ns = x->row ? x->row->alloc_ns : 0;
            rc = gl_u64map_put(&at, (uint64_t)x->stack_id + 1, pos);
        }
        struct gl_group *e = &g->v[pos];
        e->bytes += w->st[i].size;
        e->count++;
        int64_t ts = x->row ? x->row->alloc_ns : 0;
        if (ts < e->first_ns)
            e->first_ns = ts;
        if (ts > e->last_ns)
            e->last_ns = ts;
        g->total_bytes += w->st[i].size;
        g->total_count++;
    }
    gl_u64map_free(&at);
    for (size_t i = 1; i < g->n; i++) /* biggest first; stable on ties (stack id order of first sight) */
        for (size_t j = i; j > 0 && g->v[j].bytes > g->v[j - 1].bytes; j--) {
            struct gl_group t = g->v[j];
            g->v[j] = g->v[j - 1];
            g->v[j - 1] = t;
        }
    return rc;
}

static int analyse(const struct gl_heaps *hs, size_t k, const size_t *ev, size_t nev,
                   struct gl_heap_view *v)
{
    const struct gl_heap *h = &hs->heaps[k];
    v->h = h;
    struct sweep w;
    if (sweep_init(&w, hs, k, ev, nev))
        return -1;
    if (h->page_size && h->size / h->page_size <= GL_HEAP_CELLS_MAX) {
        v->cell_bytes = h->page_size;
        v->ncells = (size_t)((h->size + h->page_size - 1) / h->page_size);
    } else {
        size_t want = h->size < 1024 ? (size_t)h->size : 1024;
        v->cell_bytes = want ? (h->size + want - 1) / want : 0;
        v->ncells = v->cell_bytes ? (size_t)((h->size + v->cell_bytes - 1) / v->cell_bytes) : 0;
    }
    v->series = malloc((GL_HEAP_SERIES + 1) * sizeof *v->series);
    if (!v->series) {
        sweep_free(&w);
        return -1;
    }
    struct gl_heap_point cur;
    point(&w, h->seq, h->reg_ns, &cur);
    v->peak = v->worst = v->end = cur;
    size_t last_bucket = (size_t)-1;
    for (size_t j = 0; j < nev; j++) {
        const struct gl_heap_ev *e = &hs->evs[ev[j]];
        if (e->by_heap_end)
            break; /* the unregister ends what is left */
        if (e->what == GL_HEV_ALLOC)
            v->nregions++;
        if (hs->regions[e->region].used >= 0 || e->what == GL_HEV_USED)
            v->has_used = 1;
        apply(&w, e);
        point(&w, e->seq, e->ts_ns, &cur);
        if (cur.fs.used > v->peak.fs.used)
            v->peak = cur;
        if (gl_free_worse(&cur.fs, &v->worst.fs))
            v->worst = cur;
        size_t bucket = j * GL_HEAP_SERIES / nev;
        if (bucket != last_bucket && v->nseries < GL_HEAP_SERIES)
            v->series[v->nseries++] = cur;
        else if (v->nseries)
            v->series[v->nseries - 1] = cur;
        last_bucket = bucket;
        v->end = cur;
    }
    int rc = group_live(&w, hs, k, &v->leaks);
    /* leaks: live at the end only while the heap was never unregistered */
    if (h->end_seq)
        gl_groups_free(&v->leaks);
    sweep_free(&w);
    /* second sweep: the peak's and the worst moment's map, the peak's ledger */
    if (rc || sweep_init(&w, hs, k, ev, nev))
        return -1;
    int got_peak = 0, got_worst = 0;
    for (size_t j = 0; j <= nev && !rc && !(got_peak && got_worst); j++) {
        int64_t seq = j ? hs->evs[ev[j - 1]].seq : h->seq;
        if (j)
            apply(&w, &hs->evs[ev[j - 1]]);
        if (!got_peak && seq == v->peak.seq) {
            got_peak = 1;
            rc |= occupancy(&w, v, &v->occ_peak) | group_live(&w, hs, k, &v->peak_ledger);
        }
        if (!got_worst && seq == v->worst.seq) {
            got_worst = 1;
            rc |= occupancy(&w, v, &v->occ_worst);
        }
    }
    sweep_free(&w);
    return rc;
}

int gl_heap_views(const struct gl_heaps *hs, struct gl_heap_view **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    if (!hs->nheaps)
        return 0;
    struct gl_heap_view *v = calloc(hs->nheaps, sizeof *v);
    size_t *ev = malloc((hs->nevs ? hs->nevs : 1) * sizeof *ev);
    if (!v || !ev) {
        free(v);
        free(ev);
        return -1;
    }
    int rc = 0;
    for (size_t k = 0; k < hs->nheaps && !rc; k++) {
        size_t nev = 0;
        for (size_t j = 0; j < hs->nevs; j++)
            if (hs->regions[hs->evs[j].region].heap == k)
                ev[nev++] = j;
        rc = analyse(hs, k, ev, nev, &v[k]);
    }
    free(ev);
    *out = v;
    *n = hs->nheaps;
    return rc;
}

void gl_heap_views_free(struct gl_heap_view *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(v[i].series);
        free(v[i].occ_peak);
        free(v[i].occ_worst);
        gl_groups_free(&v[i].peak_ledger);
        gl_groups_free(&v[i].leaks);
    }
    free(v);
}

const char *gl_heap_label(const struct gl_heap *h, char *buf, size_t sz)
{
    if (h->name[0])
        snprintf(buf, sz, "%s", h->name);
    else
        snprintf(buf, sz, "heap 0x%llx", (unsigned long long)h->base);
    return buf;
}

void gl_occupancy_strip(const uint8_t *cells, size_t ncells, size_t width, char *out)
{
    size_t w = ncells < width ? ncells : width;
    for (size_t c = 0; c < w; c++) {
        size_t lo = c * ncells / w, hi = (c + 1) * ncells / w;
        unsigned sum = 0;
        for (size_t i = lo; i < hi; i++)
            sum += cells[i];
        unsigned pct = hi > lo ? sum / (unsigned)(hi - lo) : 0;
        if (sum && !pct)
            pct = 1;
        out[c] = pct == 0 ? '.' : pct >= 100 ? '#' : (char)('0' + (pct / 10 ? pct / 10 : 1));
    }
    out[w] = 0;
}

int gl_heaps_view(struct gl_heaps_view *hv, struct gl_run *r)
{
    memset(hv, 0, sizeof *hv);
    hv->run = r;
    gl_stacks_init(&hv->stacks, r);
    if (gl_heaps_load(r, &hv->heaps, hv->err, sizeof hv->err))
        return -1;
    if (gl_heap_views(&hv->heaps, &hv->v, &hv->n)) {
        snprintf(hv->err, sizeof hv->err, "%s: out of memory while analysing heaps", r->path);
        return -1;
    }
    return 0;
}

void gl_heaps_view_free(struct gl_heaps_view *hv)
{
    gl_heap_views_free(hv->v, hv->n);
    gl_heaps_free(&hv->heaps);
    gl_stacks_free(&hv->stacks);
    memset(hv, 0, sizeof *hv);
}
