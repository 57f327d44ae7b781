/* pool_id.c — see pool_id.h. The labels are kept in one table for the
 * whole process (a run has a handful of private pools; the report reads
 * its databases one thread at a time), looked up by a linear scan. */
#include "pool_id.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"

#define BIT63 (1ULL << 63)

struct label {
    uint64_t pool;
    char *text;
};

static struct {
    struct label *v;
    size_t n, cap;
} labels;

struct gl_pool_id gl_pool_id(uint64_t pool)
{
    if (pool & BIT63)
        return (struct gl_pool_id){0, pool & ~BIT63};
    return (struct gl_pool_id){pool, 0};
}

const char *gl_pool_id_text(uint64_t pool, char *buf, size_t sz)
{
    struct gl_pool_id id = gl_pool_id(pool);
    snprintf(buf, sz, "(%llu, %llu)", (unsigned long long)id.first, (unsigned long long)id.second);
    return buf;
}

/* Its entry, made on first sight: index + 1, or 0 out of memory. */
static size_t find(uint64_t pool)
{
    for (size_t i = 0; i < labels.n; i++)
        if (labels.v[i].pool == pool)
            return i + 1;
    char id[48], text[64];
    snprintf(text, sizeof text, GL_PRIVATE_POOL " %s", gl_pool_id_text(pool, id, sizeof id));
    char *copy = strdup(text);
    if (!copy || gl_grow((void **)&labels.v, &labels.cap, labels.n, sizeof *labels.v, 8)) {
        free(copy);
        return 0;
    }
    labels.v[labels.n++] = (struct label){pool, copy};
    return labels.n;
}

const char *gl_private_pool_label(uint64_t pool)
{
    size_t k = find(pool);
    return k ? labels.v[k - 1].text : GL_PRIVATE_POOL;
}

size_t gl_private_pool_index(uint64_t pool)
{
    return find(pool);
}

int gl_is_private_pool(const char *category, uint64_t *pool)
{
    size_t k = sizeof GL_PRIVATE_POOL - 1;
    if (!category || strncmp(category, GL_PRIVATE_POOL, k) || (category[k] && category[k] != ' '))
        return 0;
    for (size_t i = 0; pool && i < labels.n; i++)
        if (!strcmp(labels.v[i].text, category)) {
            *pool = labels.v[i].pool;
            break;
        }
    return 1;
}

void gl_pool_labels_free(void)
{
    for (size_t i = 0; i < labels.n; i++)
        free(labels.v[i].text);
    free(labels.v);
    memset(&labels, 0, sizeof labels);
}
