/* u64map.c — see u64map.h. Linear probing, tombstones, grows at 70 % use. */
#include "u64map.h"

#include <stdlib.h>
#include <string.h>

#define EMPTY 0
#define TOMB UINT64_MAX

uint64_t gl_hash64(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    x ^= x >> 33;
    return x;
}

/* The marker keys 0 and UINT64_MAX are kept beside the table. */
static int is_marker(uint64_t k)
{
    return k == EMPTY || k == TOMB;
}

static int *marker_flag(struct gl_u64map *m, uint64_t k)
{
    return k == EMPTY ? &m->has_zero : &m->has_max;
}

static uint64_t *marker_val(struct gl_u64map *m, uint64_t k)
{
    return k == EMPTY ? &m->zero_val : &m->max_val;
}

void gl_u64map_init(struct gl_u64map *m)
{
    memset(m, 0, sizeof *m);
}

void gl_u64map_free(struct gl_u64map *m)
{
    free(m->keys);
    free(m->vals);
    gl_u64map_init(m);
}

static int grow(struct gl_u64map *m)
{
    size_t ncap = m->cap ? m->cap * 2 : 1024;
    if (m->count * 4 < m->cap) /* mostly tombstones: rehash at the same size */
        ncap = m->cap;
    uint64_t *nk = calloc(ncap, sizeof *nk), *nv = calloc(ncap, sizeof *nv);
    if (!nk || !nv) {
        free(nk);
        free(nv);
        return -1;
    }
    size_t live = 0;
    for (size_t i = 0; i < m->cap; i++) {
        uint64_t k = m->keys[i];
        if (k == EMPTY || k == TOMB)
            continue;
        live++;
        size_t j = gl_hash64(k) & (ncap - 1);
        while (nk[j] != EMPTY)
            j = (j + 1) & (ncap - 1);
        nk[j] = k;
        nv[j] = m->vals[i];
    }
    free(m->keys);
    free(m->vals);
    m->keys = nk;
    m->vals = nv;
    m->cap = ncap;
    m->used = live;
    return 0;
}

/* The slot of an ordinary (not marker) key: 1 with it in *slot, or 0. */
static inline int find(const struct gl_u64map *m, uint64_t key, size_t *slot)
{
    if (!m->cap)
        return 0;
    size_t j = gl_hash64(key) & (m->cap - 1);
    for (;;) {
        uint64_t k = m->keys[j];
        if (k == EMPTY)
            return 0;
        if (k == key) {
            *slot = j;
            return 1;
        }
        j = (j + 1) & (m->cap - 1);
    }
}

int gl_u64map_get(const struct gl_u64map *m, uint64_t key, uint64_t *val)
{
    if (is_marker(key)) {
        struct gl_u64map *mm = (struct gl_u64map *)m;
        if (*marker_flag(mm, key))
            *val = *marker_val(mm, key);
        return *marker_flag(mm, key);
    }
    size_t j;
    if (!find(m, key, &j))
        return 0;
    *val = m->vals[j];
    return 1;
}

int gl_u64map_put(struct gl_u64map *m, uint64_t key, uint64_t val)
{
    if (is_marker(key)) {
        m->count += !*marker_flag(m, key);
        *marker_flag(m, key) = 1;
        *marker_val(m, key) = val;
        return 0;
    }
    if ((m->used + 1) * 10 >= m->cap * 7 && grow(m) != 0)
        return -1;
    size_t j = gl_hash64(key) & (m->cap - 1), tomb = SIZE_MAX;
    for (;;) {
        uint64_t k = m->keys[j];
        if (k == key) {
            m->vals[j] = val;
            return 0;
        }
        if (k == TOMB && tomb == SIZE_MAX)
            tomb = j;
        if (k == EMPTY)
            break;
        j = (j + 1) & (m->cap - 1);
    }
    if (tomb != SIZE_MAX) {
        j = tomb;
    } else {
        m->used++;
    }
    m->keys[j] = key;
    m->vals[j] = val;
    m->count++;
    return 0;
}

int gl_u64map_del(struct gl_u64map *m, uint64_t key)
{
    if (is_marker(key)) {
        int was = *marker_flag(m, key);
        m->count -= (size_t)was;
        *marker_flag(m, key) = 0;
        return was;
    }
    size_t j;
    if (!find(m, key, &j))
        return 0;
    m->keys[j] = TOMB;
    m->count--;
    return 1;
}
