/* ledger.c — see ledger.h. */
#include "ledger.h"

#include <stdlib.h>
#include <string.h>

void gl_ledger_init(struct gl_ledger *l)
{
    memset(l, 0, sizeof *l);
    for (int i = 0; i < GL_NPAIR_SPACES; i++)
        gl_u64map_init(&l->index[i]);
}

void gl_ledger_free(struct gl_ledger *l)
{
    for (int i = 0; i < GL_NPAIR_SPACES; i++)
        gl_u64map_free(&l->index[i]);
    free(l->lives);
    free(l->spare);
}

static struct gl_dev_stats *dev_of(struct gl_ledger *l, int device)
{
    if (device < -1 || device >= GL_MAX_DEVICES)
        device = -1;
    struct gl_dev_stats *d = &l->dev[device + 1];
    d->dirty = 1;
    return d;
}

/* Put a slot of lives[] on the spare list (if that list cannot grow, the
 * slot is simply not reused). */
static void recycle(struct gl_ledger *l, uint64_t idx)
{
    if (l->nspare == l->spare_cap) {
        size_t nc = l->spare_cap ? l->spare_cap * 2 : 256;
        uint64_t *ns = realloc(l->spare, nc * sizeof *ns);
        if (!ns)
            return;
        l->spare = ns;
        l->spare_cap = nc;
    }
    l->spare[l->nspare++] = idx;
}

void gl_ledger_add(struct gl_ledger *l, int space, uint64_t key, uint64_t seq, const struct gl_event *ev)
{
    uint64_t idx;
    if (l->nspare) {
        idx = l->spare[--l->nspare];
    } else {
        if (l->nlives == l->lives_cap) {
            size_t nc = l->lives_cap ? l->lives_cap * 2 : 1024;
            struct gl_live *nl = realloc(l->lives, nc * sizeof *nl);
            if (!nl)
                return;
            l->lives = nl;
            l->lives_cap = nc;
        }
        idx = l->nlives++;
    }
    uint64_t old;
    if (gl_u64map_get(&l->index[space], key, &old)) {
        /* Its end was never seen (dropped, or made before we started).
         * Forget the old one; it is no longer live. */
        const struct gl_live *o = &l->lives[old];
        if (gl_kind_counts_on_device(o->kind)) {
            dev_of(l, o->device)->live -= o->size;
            gl_windows_change(&l->windows, GL_WIN_DEVICE, o->size, 0, 0);
        }
        recycle(l, old);
    }
    struct gl_live *e = &l->lives[idx];
    e->seq = seq;
    e->size = ev->size;
    e->pool = ev->pool;
    e->device = ev->device;
    e->kind = ev->kind;
    gl_u64map_put(&l->index[space], key, idx);
    if (gl_kind_layer(ev->kind) == GL_LAYER_SUB)
        return; /* inside memory counted already: no device figure moves */
    struct gl_dev_stats *d = dev_of(l, ev->device);
    d->allocs++;
    if (gl_kind_counts_on_device(ev->kind)) {
        d->live += ev->size;
        gl_windows_change(&l->windows, GL_WIN_DEVICE, ev->size, 1, seq);
        if (d->live > d->peak) {
            d->peak = d->live;
            d->peak_ns = ev->ts_ns;
            d->peak_seq = seq;
        }
    }
}

int gl_ledger_peek(const struct gl_ledger *l, int space, uint64_t key, struct gl_live *out)
{
    uint64_t idx;
    if (!gl_u64map_get(&l->index[space], key, &idx))
        return 0;
    *out = l->lives[idx];
    return 1;
}

struct gl_live *gl_ledger_find(struct gl_ledger *l, int space, uint64_t key)
{
    uint64_t idx;
    return gl_u64map_get(&l->index[space], key, &idx) ? &l->lives[idx] : NULL;
}

int gl_ledger_take(struct gl_ledger *l, int space, uint64_t key, struct gl_live *out)
{
    uint64_t idx;
    if (!gl_u64map_get(&l->index[space], key, &idx))
        return 0;
    gl_u64map_del(&l->index[space], key);
    *out = l->lives[idx];
    recycle(l, idx);
    if (gl_kind_layer(out->kind) == GL_LAYER_SUB)
        return 1;
    struct gl_dev_stats *d = dev_of(l, out->device);
    d->frees++;
    if (gl_kind_counts_on_device(out->kind)) {
        d->live -= out->size;
        gl_windows_change(&l->windows, GL_WIN_DEVICE, out->size, 0, 0);
    }
    return 1;
}

int gl_ledger_next(const struct gl_ledger *l, int space, size_t *pos, uint64_t *key, struct gl_live *out)
{
    const struct gl_u64map *m = &l->index[space];
    /* deletion leaves a tombstone: walking keys[] stays valid while taking */
    for (; *pos < m->cap; (*pos)++) {
        uint64_t k = m->keys[*pos];
        if (k == 0 || k == UINT64_MAX)
            continue;
        *key = k;
        *out = l->lives[m->vals[*pos]];
        (*pos)++;
        return 1;
    }
    return 0;
}

int gl_ledger_next_dirty(struct gl_ledger *l, int *pos, int *device, struct gl_dev_stats *out)
{
    for (; *pos <= GL_MAX_DEVICES; (*pos)++) {
        struct gl_dev_stats *d = &l->dev[*pos];
        if (!d->dirty)
            continue;
        d->dirty = 0;
        *device = *pos - 1;
        *out = *d;
        (*pos)++;
        return 1;
    }
    return 0;
}

uint64_t gl_ledger_peak_total(const struct gl_ledger *l)
{
    uint64_t total = 0;
    for (int i = 0; i <= GL_MAX_DEVICES; i++)
        total += l->dev[i].peak;
    return total;
}
