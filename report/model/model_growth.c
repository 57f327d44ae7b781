/* model_growth.c — see model_growth.h. */
#include "model_growth.h"

#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "pool_id.h"

uint64_t gl_alloc_group_key(const struct gl_alloc *a)
{
    return a->cat == GL_CAT_PRIVATE_POOL
               ? 1ULL << 63 | (uint64_t)a->stack_id << 20 | (gl_private_pool_index(a->pool) & 0xfffff)
               : (uint64_t)a->stack_id << 8 | a->cat;
}

int gl_growth_in_init(struct gl_growth_in *g, const int64_t *bounds, size_t nb)
{
    memset(g, 0, sizeof *g);
    gl_u64map_init(&g->idx);
    gl_u64map_init(&g->long_life);
    if (!bounds || nb < 2)
        return 0;
    if (!(g->bounds = malloc(nb * sizeof *g->bounds)))
        return -1;
    memcpy(g->bounds, bounds, nb * sizeof *g->bounds);
    g->nb = nb;
    return 0;
}

void gl_growth_in_free(struct gl_growth_in *g)
{
    for (size_t i = 0; i < g->n; i++)
        free(g->v[i].steps);
    free(g->v);
    free(g->bounds);
    free(g->seq);
    free(g->life);
    free(g->size);
    free(g->group);
    gl_u64map_free(&g->idx);
    gl_u64map_free(&g->long_life);
    memset(g, 0, sizeof *g);
}

/* The group of a's key on a's device, made at its first allocation. */
static struct gl_growth_group *group_of(struct gl_growth_in *g, const struct gl_alloc *a, size_t *at)
{
    uint64_t key = gl_alloc_group_key(a), pos;
    uint64_t h = gl_hash64(key ^ (uint64_t)(a->device + 2) * 0x9e3779b97f4a7c15ULL);
    while (gl_u64map_get(&g->idx, h, &pos)) {
        if (g->v[pos].key == key && g->v[pos].device == a->device) {
            *at = pos;
            return &g->v[pos];
        }
        h++;
    }
    if (g->n >= UINT32_MAX || gl_grow((void **)&g->v, &g->cap, g->n, sizeof *g->v, 64) ||
        gl_u64map_put(&g->idx, h, g->n))
        return NULL;
    struct gl_growth_group *grp = &g->v[g->n];
    memset(grp, 0, sizeof *grp);
    grp->key = key;
    grp->device = a->device;
    grp->sample = *a;
    grp->first_ns = a->alloc_ns; /* last_ns from 0, as gl_growth's groups */
    *at = g->n++;
    return grp;
}

/* Without bounds: the row, for them to be applied after the scan. */
static int keep_row(struct gl_growth_in *g, const struct gl_alloc *a, size_t group)
{
    size_t n = g->nrows, cap = g->rowcap;
    if (n == cap) {
        size_t nc = cap ? cap * 2 : 4096;
        int64_t *s = realloc(g->seq, nc * sizeof *s);
        if (s)
            g->seq = s;
        uint32_t *l = s ? realloc(g->life, nc * sizeof *l) : NULL;
        if (l)
            g->life = l;
        uint64_t *z = l ? realloc(g->size, nc * sizeof *z) : NULL;
        if (z)
            g->size = z;
        uint32_t *p = z ? realloc(g->group, nc * sizeof *p) : NULL;
        if (!p)
            return -1;
        g->group = p;
        g->rowcap = nc;
    }
    uint64_t life = a->free_seq ? (uint64_t)a->free_seq - (uint64_t)a->seq : 0;
    if (life >= UINT32_MAX) {
        if (gl_u64map_put(&g->long_life, n, (uint64_t)a->free_seq))
            return -1;
        life = UINT32_MAX;
    }
    g->seq[n] = a->seq;
    g->life[n] = (uint32_t)life;
    g->size[n] = a->size;
    g->group[n] = (uint32_t)group;
    g->nrows++;
    return 0;
}

int64_t gl_growth_row_free(const struct gl_growth_in *g, size_t i)
{
    uint64_t f;
    if (g->life[i] != UINT32_MAX)
        return g->life[i] ? g->seq[i] + (int64_t)g->life[i] : 0;
    return gl_u64map_get(&g->long_life, i, &f) ? (int64_t)f : 0;
}

int gl_growth_in_add(struct gl_growth_in *g, const struct gl_alloc *a)
{
    if (!gl_is_item(a))
        return 0;
    size_t at;
    struct gl_growth_group *grp = group_of(g, a, &at);
    if (!grp)
        return -1;
    if (a->seq < grp->sample.seq)
        grp->sample = *a;
    grp->bytes += a->size;
    grp->requested += a->requested;
    grp->count++;
    grp->first_ns = a->alloc_ns < grp->first_ns ? a->alloc_ns : grp->first_ns;
    grp->last_ns = a->alloc_ns > grp->last_ns ? a->alloc_ns : grp->last_ns;
    if (!g->bounds)
        return keep_row(g, a, at);
    return gl_steps_add_life(&grp->steps, g->bounds, g->nb, a->seq, a->free_seq, a->size);
}

int gl_steps_add_life(uint64_t **steps, const int64_t *bounds, size_t nb, int64_t seq, int64_t free_seq,
                      uint64_t size)
{
    size_t lo = gl_seqs_before(bounds, nb, seq);
    size_t hi = free_seq ? gl_seqs_before(bounds, nb, free_seq) : nb;
    if (lo >= hi) /* live at no step's end: no series (a stack of temporaries gets none) */
        return 0;
    if (!*steps && !(*steps = calloc(nb, sizeof **steps)))
        return -1;
    (*steps)[lo] += size;
    if (hi < nb)
        (*steps)[hi] -= size;
    return 0;
}
