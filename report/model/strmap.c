/* strmap.c — see strmap.h. FNV-1a hashes into a u64map; a collision moves
 * on to the next hash value. */
#include "strmap.h"

#include <stdlib.h>
#include <string.h>

void gl_strmap_init(struct gl_strmap *m)
{
    memset(m, 0, sizeof *m);
    gl_u64map_init(&m->idx);
}

void gl_strmap_free(struct gl_strmap *m)
{
    for (size_t i = 0; i < m->n; i++)
        free(m->keys[i]);
    free(m->keys);
    gl_u64map_free(&m->idx);
    memset(m, 0, sizeof *m);
}

static uint64_t fnv(const char *s)
{
    uint64_t h = 1469598103934665603ULL;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return h;
}

int64_t gl_strmap_id(struct gl_strmap *m, const char *key, int *added)
{
    uint64_t h = fnv(key), id;
    *added = 0;
    while (gl_u64map_get(&m->idx, h, &id)) {
        if (!strcmp(m->keys[id], key))
            return (int64_t)id;
        h++;
    }
    if (m->n == m->cap) {
        size_t nc = m->cap ? m->cap * 2 : 256;
        char **nk = realloc(m->keys, nc * sizeof *nk);
        if (!nk)
            return -1;
        m->keys = nk;
        m->cap = nc;
    }
    if (!(m->keys[m->n] = strdup(key)) || gl_u64map_put(&m->idx, h, m->n)) {
        free(m->keys[m->n]);
        return -1;
    }
    *added = 1;
    return (int64_t)m->n++;
}
