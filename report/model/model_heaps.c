/* model_heaps.c — loading heaps and regions (see model_heaps.h): one
 * ordered scan of the heap and region rows of event_log, then the names. */
#include "model_heaps.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "u64map.h"


/* The counted CUDA allocation live at seq that holds [base, base + size). */
static const struct gl_alloc *holder(const struct gl_run *r, uint64_t base, uint64_t size, int64_t seq)
{
    for (size_t i = 0; i < r->nallocs; i++) {
        const struct gl_alloc *a = &r->allocs[i];
        if (a->seq > seq)
            break;
        if (gl_kind_counts_on_device(a->kind) && gl_live_at(a, seq) && a->addr <= base &&
            base + size <= a->addr + a->size)
            return a;
    }
    return NULL;
}

static int add_ev(struct gl_heaps *h, size_t *cap, int64_t seq, int64_t ts, uint64_t region, int what,
                  uint64_t value, int by_heap_end)
{
    if (gl_grow((void **)&h->evs, cap, h->nevs, sizeof *h->evs, 256))
        return -1;
    h->evs[h->nevs++] = (struct gl_heap_ev){seq, ts, (uint32_t)region, (uint8_t)what, (uint8_t)by_heap_end, value};
    return 0;
}

static void load_names(struct gl_run *r, struct gl_heaps *h, struct gl_u64map *heap_of, struct gl_u64map *region_of)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(r->db, "SELECT ref_seq, name FROM names WHERE ref_seq IS NOT NULL ORDER BY seq", -1, &st,
                           NULL) != SQLITE_OK)
        return; /* a database without the table */
    while (sqlite3_step(st) == SQLITE_ROW) {
        uint64_t ref = (uint64_t)sqlite3_column_int64(st, 0), i;
        const char *name = (const char *)sqlite3_column_text(st, 1);
        if (gl_u64map_get(heap_of, ref, &i))
            snprintf(h->heaps[i].name, sizeof h->heaps[i].name, "%s", name ? name : "");
        else if (gl_u64map_get(region_of, ref, &i))
            snprintf(h->regions[i].name, sizeof h->regions[i].name, "%s", name ? name : "");
    }
    sqlite3_finalize(st);
}

int gl_heaps_read(struct gl_run *r, struct gl_heaps *h, char *err, size_t errsz)
{
    memset(h, 0, sizeof *h);
    if (!r->heap_rows) /* the load's scan saw no heap or region row: no second scan for none */
        return 0;
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(r->db,
                           "SELECT seq, ts_ns, op, kind, addr, size, aux, stack_id, ref_seq, api FROM event_log"
                           " WHERE kind IN (13, 14) AND result = 0 ORDER BY seq",
                           -1, &st, NULL) != SQLITE_OK) {
        snprintf(err, errsz, "%s: cannot read heaps: %s", r->path, sqlite3_errmsg(r->db));
        return -1;
    }
    struct gl_u64map heap_of, region_of; /* row seq -> index */
    gl_u64map_init(&heap_of);
    gl_u64map_init(&region_of);
    size_t hcap = 0, rcap = 0, ecap = 0;
    int rc = SQLITE_DONE, bad = 0;
    while (!bad && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        int64_t seq = sqlite3_column_int64(st, 0), ts = sqlite3_column_int64(st, 1);
        int op = sqlite3_column_int(st, 2), kind = sqlite3_column_int(st, 3);
        uint64_t addr = (uint64_t)sqlite3_column_int64(st, 4), size = (uint64_t)sqlite3_column_int64(st, 5);
        uint64_t aux = (uint64_t)sqlite3_column_int64(st, 6), ref = (uint64_t)sqlite3_column_int64(st, 8), i;
        int aux_null = sqlite3_column_type(st, 6) == SQLITE_NULL;
        int api = sqlite3_column_int(st, 9);
        if (kind == GL_KIND_HEAP) {
            if (op == GL_OP_ALLOC) {
                if (gl_grow((void **)&h->heaps, &hcap, h->nheaps, sizeof *h->heaps, 256)) {
                    bad = 1;
                    break;
                }
                struct gl_heap *x = &h->heaps[h->nheaps];
                memset(x, 0, sizeof *x);
                x->seq = seq;
                x->reg_ns = ts;
                x->base = addr;
                x->size = size;
                x->usage = aux;
                x->stack_id = sqlite3_column_int64(st, 7);
                x->in = holder(r, addr, size, seq);
                x->device = x->in ? x->in->device : -1;
                bad |= gl_u64map_put(&heap_of, (uint64_t)seq, h->nheaps);
                h->nheaps++;
            } else if (op == GL_OP_FREE && gl_u64map_get(&heap_of, ref, &i)) {
                h->heaps[i].end_seq = seq;
                h->heaps[i].end_ns = ts;
            } else if (op == GL_OP_SET && gl_u64map_get(&heap_of, ref, &i)) {
                h->heaps[i].page_size = aux;
            }
            continue;
        }
        /* a region */
        if (op == GL_OP_ALLOC) {
            if (gl_grow((void **)&h->regions, &rcap, h->nregions, sizeof *h->regions, 256)) {
                bad = 1;
                break;
            }
            struct gl_region *x = &h->regions[h->nregions];
            memset(x, 0, sizeof *x);
            x->seq = seq;
            x->addr = addr;
            x->size = size;
            x->used = aux_null ? -1 : (int64_t)aux;
            x->stack_id = sqlite3_column_int64(st, 7);
            x->heap = gl_u64map_get(&heap_of, ref, &i) ? (uint32_t)i : UINT32_MAX;
            x->row = gl_run_alloc_by_seq(r, seq);
            if (x->heap == UINT32_MAX)
                h->outside++;
            bad |= gl_u64map_put(&region_of, (uint64_t)seq, h->nregions);
            bad |= add_ev(h, &ecap, seq, ts, h->nregions, GL_HEV_ALLOC, size, 0);
            h->nregions++;
        } else if (gl_u64map_get(&region_of, ref, &i)) {
            if (op == GL_OP_FREE) {
                h->regions[i].free_seq = seq;
                h->regions[i].free_api = api;
                int by_end = api == GL_API_gpuledger_heap_unregister;
                bad |= add_ev(h, &ecap, seq, ts, i, GL_HEV_FREE, 0, by_end);
            } else if (op == GL_OP_RESIZE) {
                bad |= add_ev(h, &ecap, seq, ts, i, GL_HEV_RESIZE, size, 0);
            } else if (op == GL_OP_SET) {
                bad |= add_ev(h, &ecap, seq, ts, i, GL_HEV_USED, aux, 0);
            }
        }
    }
    sqlite3_finalize(st);
    if (!bad)
        load_names(r, h, &heap_of, &region_of);
    gl_u64map_free(&heap_of);
    gl_u64map_free(&region_of);
    if (bad) {
        snprintf(err, errsz, "%s: out of memory while loading heaps", r->path);
        gl_heaps_free(h);
        return -1;
    }
    if (rc != SQLITE_DONE) {
        snprintf(err, errsz, "%s: damaged (reading heaps: %s)", r->path, sqlite3_errmsg(r->db));
        gl_heaps_free(h);
        return -1;
    }
    return 0;
}

/* A copy of n elements of size sz (NULL for none). 0, or -1. */
static int copy(void **dst, const void *src, size_t n, size_t sz)
{
    *dst = NULL;
    if (!n)
        return 0;
    if (!(*dst = malloc(n * sz)))
        return -1;
    memcpy(*dst, src, n * sz);
    return 0;
}

int gl_heaps_load(struct gl_run *r, struct gl_heaps *h, char *err, size_t errsz)
{
    memset(h, 0, sizeof *h);
    if (!(r->loaded & GL_LOAD_HEAPS) || !r->heaps) {
        snprintf(err, errsz, "%s", r->heaps_err[0] ? r->heaps_err : "heaps were not loaded");
        return -1;
    }
    const struct gl_heaps *x = r->heaps;
    *h = *x;
    if (copy((void **)&h->heaps, x->heaps, x->nheaps, sizeof *x->heaps) ||
        copy((void **)&h->regions, x->regions, x->nregions, sizeof *x->regions) ||
        copy((void **)&h->evs, x->evs, x->nevs, sizeof *x->evs)) {
        gl_heaps_free(h);
        snprintf(err, errsz, "%s: out of memory while loading heaps", r->path);
        return -1;
    }
    return 0;
}

void gl_heaps_free(struct gl_heaps *h)
{
    free(h->heaps);
    free(h->regions);
    free(h->evs);
    memset(h, 0, sizeof *h);
}
