/* trace_downsample.c — see trace_downsample.h. Each track holds the
 * candidates of its current bucket; when a point falls in a later bucket
 * they are kept (with their place in event order), and the kept points
 * are put back in event order at the end. */
#include "trace_downsample.h"

#include <stdlib.h>
#include <string.h>

#include "grow.h"

struct cand {
    struct gl_trace_point p;
    int64_t ord; /* its place among all points */
};

struct track {
    int64_t bucket;
    int have;
    struct cand lo, hi, last;
};

struct gl_trace_ds {
    size_t buckets;
    int64_t t0;
    double per_ns; /* buckets per ns */
    int64_t ord;
    struct track t[GL_MAX_DEVICES + 1][GL_TRACE_MAX_CATS + 1]; /* by device + 1, category + 1 */
    struct cand *kept;
    size_t nkept, cap;
};

struct gl_trace_ds *gl_trace_ds_new(size_t buckets, int64_t t0, int64_t t1)
{
    struct gl_trace_ds *d = calloc(1, sizeof *d);
    if (!d)
        return NULL;
    d->buckets = buckets ? buckets : 1;
    d->t0 = t0;
    double span = t1 > t0 ? (double)t1 - (double)t0 + 1.0 : 1.0;
    d->per_ns = (double)d->buckets / span;
    return d;
}

static int64_t bucket_of(const struct gl_trace_ds *d, int64_t ts)
{
    double b = ts > d->t0 ? ((double)ts - (double)d->t0) * d->per_ns : 0.0;
    return b < (double)d->buckets ? (int64_t)b : (int64_t)d->buckets - 1;
}

static int keep(struct gl_trace_ds *d, const struct cand *c)
{
    if (gl_grow((void **)&d->kept, &d->cap, d->nkept, sizeof *d->kept, 4096))
        return -1;
    d->kept[d->nkept++] = *c;
    return 0;
}

/* A track's bucket done: its lowest, highest and last points, each once. */
static int flush(struct gl_trace_ds *d, struct track *t)
{
    const struct cand *c[3] = {&t->lo, &t->hi, &t->last};
    int rc = 0;
    for (int i = 0; i < 3; i++) {
        int dup = 0;
        for (int k = 0; k < i; k++)
            dup |= c[k]->ord == c[i]->ord;
        if (!dup)
            rc |= keep(d, c[i]);
    }
    t->have = 0;
    return rc;
}

int gl_trace_ds_add(struct gl_trace_ds *d, const struct gl_trace_point *p)
{
    struct track *t = &d->t[p->dev + 1][p->cat + 1];
    struct cand c = {*p, d->ord++};
    int64_t b = bucket_of(d, p->ts_ns);
    if (t->have && b != t->bucket && flush(d, t))
        return -1;
    if (!t->have) {
        t->bucket = b;
        t->have = 1;
        t->lo = t->hi = c;
    } else if (p->bytes < t->lo.p.bytes) {
        t->lo = c;
    } else if (p->bytes > t->hi.p.bytes) { /* the first of equal highs: the peak's first moment */
        t->hi = c;
    }
    t->last = c;
    return 0;
}

static int cmp_ord(const void *a, const void *b)
{
    const struct cand *x = a, *y = b;
    return (x->ord > y->ord) - (x->ord < y->ord);
}

int gl_trace_ds_finish(struct gl_trace_ds *d, struct gl_perfetto_view *v)
{
    int rc = 0;
    for (int k = 0; k <= GL_MAX_DEVICES; k++)
        for (int c = 0; c <= GL_TRACE_MAX_CATS; c++)
            if (d->t[k][c].have)
                rc |= flush(d, &d->t[k][c]);
    if (d->nkept) /* qsort wants a non-null base even for zero elements */
        qsort(d->kept, d->nkept, sizeof *d->kept, cmp_ord);
    v->points_seen = (size_t)d->ord;
    for (size_t i = 0; !rc && i < d->nkept; i++) {
        if (gl_grow((void **)&v->points, &v->cap, v->npoints, sizeof *v->points, 4096))
            rc = -1;
        else
            v->points[v->npoints++] = d->kept[i].p;
    }
    free(d->kept);
    free(d);
    return rc ? -1 : 0;
}
