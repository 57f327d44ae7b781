/* freemap.c — free space of an address range (see freemap.h): a segment
 * tree with cover counts over the elementary intervals between the cuts. */
#include "freemap.h"

#include <stdlib.h>
#include <string.h>

struct gl_freenode {
    uint64_t len;           /* bytes under the node */
    uint64_t free;          /* free bytes */
    uint64_t pre, suf;      /* free bytes of the run touching the left / right end */
    uint64_t best;          /* the largest free run inside */
    uint64_t runs;          /* maximal free runs inside */
    int64_t cover;          /* allocations covering the whole node (not pushed down) */
};

struct gl_freegap {
    uint64_t lo, hi;
};

void gl_free_ratios(struct gl_free_stats *s)
{
    if (!s->free) {
        s->external_fragmentation = 0.0;
        s->largest_free_ratio = 1.0;
        return;
    }
    s->largest_free_ratio = (double)s->largest_free / (double)s->free;
    s->external_fragmentation = 1.0 - s->largest_free_ratio;
}

int gl_free_worse(const struct gl_free_stats *a, const struct gl_free_stats *b)
{
    uint64_t sa = a->free - a->largest_free, sb = b->free - b->largest_free;
    if (sa != sb)
        return sa > sb;
    return a->holes > b->holes;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Recompute node i from its cover count and children. */
static void pull(struct gl_freemap *m, size_t i)
{
    struct gl_freenode *n = &m->node[i];
    if (n->cover > 0) {
        n->free = n->pre = n->suf = n->best = n->runs = 0;
        return;
    }
    if (i >= m->size) { /* a leaf */
        n->free = n->pre = n->suf = n->best = n->len;
        n->runs = n->len ? 1 : 0;
        return;
    }
    const struct gl_freenode *l = &m->node[2 * i], *r = &m->node[2 * i + 1];
    n->free = l->free + r->free;
    n->pre = l->pre == l->len ? l->len + r->pre : l->pre;
    n->suf = r->suf == r->len ? r->len + l->suf : r->suf;
    n->best = l->best > r->best ? l->best : r->best;
    if (l->suf + r->pre > n->best)
        n->best = l->suf + r->pre;
    n->runs = l->runs + r->runs - (l->suf && r->pre ? 1 : 0);
}

int gl_freemap_init(struct gl_freemap *m, uint64_t lo, uint64_t hi, const uint64_t *cuts, size_t ncuts)
{
    memset(m, 0, sizeof *m);
    m->lo = lo;
    m->hi = hi > lo ? hi : lo;
    m->cuts = malloc((ncuts + 2) * sizeof *m->cuts);
    if (!m->cuts)
        return -1;
    size_t n = 0;
    m->cuts[n++] = m->lo;
    for (size_t i = 0; i < ncuts; i++)
        if (cuts[i] > m->lo && cuts[i] < m->hi)
            m->cuts[n++] = cuts[i];
    qsort(m->cuts + 1, n - 1, sizeof *m->cuts, cmp_u64);
    size_t k = 1;
    for (size_t i = 1; i < n; i++)
        if (m->cuts[i] != m->cuts[k - 1])
            m->cuts[k++] = m->cuts[i];
    m->cuts[k] = m->hi;
    m->nleaves = m->hi > m->lo ? k : 0;
    m->size = 1;
    while (m->size < m->nleaves)
        m->size *= 2;
    m->node = calloc(2 * m->size, sizeof *m->node);
    if (!m->node) {
        gl_freemap_free(m);
        return -1;
    }
    for (size_t i = 0; i < m->size; i++)
        m->node[m->size + i].len = i < m->nleaves ? m->cuts[i + 1] - m->cuts[i] : 0;
    for (size_t i = m->size; i < 2 * m->size; i++)
        pull(m, i);
    for (size_t i = m->size - 1; i >= 1; i--) {
        m->node[i].len = m->node[2 * i].len + m->node[2 * i + 1].len;
        pull(m, i);
    }
    return 0;
}

void gl_freemap_free(struct gl_freemap *m)
{
    free(m->cuts);
    free(m->node);
    free(m->excl);
    memset(m, 0, sizeof *m);
}

/* Index of the elementary interval holding address a (lo <= a < hi). */
static size_t leaf_of(const struct gl_freemap *m, uint64_t a)
{
    size_t l = 0, r = m->nleaves; /* cuts[l] <= a < cuts[r] */
    while (r - l > 1) {
        size_t mid = l + (r - l) / 2;
        if (m->cuts[mid] <= a)
            l = mid;
        else
            r = mid;
    }
    return l;
}

/* Leaves [ql, qr) get delta; node i spans leaves [nl, nr). */
static void update(struct gl_freemap *m, size_t i, size_t nl, size_t nr, size_t ql, size_t qr, int delta)
{
    if (qr <= nl || nr <= ql)
        return;
    if (ql <= nl && nr <= qr) {
        m->node[i].cover += delta;
        pull(m, i);
        return;
    }
    size_t mid = nl + (nr - nl) / 2;
    update(m, 2 * i, nl, mid, ql, qr, delta);
    update(m, 2 * i + 1, mid, nr, ql, qr, delta);
    pull(m, i);
}

/* Clip [*lo, *hi) to the map's range: 0 when nothing of it is left. */
static int clip(const struct gl_freemap *m, uint64_t *lo, uint64_t *hi)
{
    if (*lo < m->lo)
        *lo = m->lo;
    if (*hi > m->hi)
        *hi = m->hi;
    return m->nleaves && *lo < *hi;
}

void gl_freemap_add(struct gl_freemap *m, uint64_t lo, uint64_t hi, int delta)
{
    if (!clip(m, &lo, &hi))
        return;
    size_t ql = leaf_of(m, lo), qr = leaf_of(m, hi - 1) + 1;
    update(m, 1, 0, m->size, ql, qr, delta);
}

void gl_freemap_exclude(struct gl_freemap *m, uint64_t lo, uint64_t hi)
{
    if (!clip(m, &lo, &hi))
        return;
    struct gl_freegap *g = realloc(m->excl, (m->nexcl + 1) * sizeof *g);
    if (!g)
        return;
    m->excl = g;
    /* the bytes actually covered: the elementary intervals around [lo, hi) */
    size_t ql = leaf_of(m, lo), qr = leaf_of(m, hi - 1) + 1;
    g[m->nexcl++] = (struct gl_freegap){m->cuts[ql], m->cuts[qr]};
    m->excluded += m->cuts[qr] - m->cuts[ql];
    update(m, 1, 0, m->size, ql, qr, +1);
}

void gl_freemap_stats(const struct gl_freemap *m, struct gl_free_stats *out)
{
    memset(out, 0, sizeof *out);
    if (m->nleaves) {
        const struct gl_freenode *root = &m->node[1];
        out->extent = root->len - m->excluded;
        out->free = root->free;
        out->used = out->extent - out->free;
        out->largest_free = root->best;
        out->holes = root->runs;
    }
    gl_free_ratios(out);
}

static uint64_t overlap(uint64_t a, uint64_t b, uint64_t c, uint64_t d)
{
    uint64_t lo = a > c ? a : c, hi = b < d ? b : d;
    return hi > lo ? hi - lo : 0;
}

/* Covered bytes of [lo, hi) under node i, which spans leaves [nl, nr). */
static uint64_t covered(const struct gl_freemap *m, size_t i, size_t nl, size_t nr, uint64_t lo, uint64_t hi)
{
    if (nl >= m->nleaves)
        return 0;
    size_t end = nr < m->nleaves ? nr : m->nleaves;
    uint64_t a = m->cuts[nl], b = m->cuts[end];
    if (b <= lo || hi <= a)
        return 0;
    const struct gl_freenode *n = &m->node[i];
    if (n->cover > 0)
        return overlap(a, b, lo, hi);
    if (n->free == n->len || i >= m->size)
        return 0;
    size_t mid = nl + (nr - nl) / 2;
    return covered(m, 2 * i, nl, mid, lo, hi) + covered(m, 2 * i + 1, mid, nr, lo, hi);
}

uint64_t gl_freemap_used_in(const struct gl_freemap *m, uint64_t lo, uint64_t hi)
{
    if (!m->nleaves || lo >= hi)
        return 0;
    uint64_t c = covered(m, 1, 0, m->size, lo, hi);
    for (size_t i = 0; i < m->nexcl; i++)
        c -= overlap(m->excl[i].lo, m->excl[i].hi, lo, hi);
    return c;
}
