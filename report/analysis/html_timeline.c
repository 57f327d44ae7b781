/* html_timeline.c — each device's timeline for the HTML report
 * (html_view.h). Two passes over the run's memory events (sweep.h): the
 * first finds each time slice's lowest and highest point per device, the
 * second replays the run and, at each chosen moment, keeps which ledger
 * rows changed since the moment before. */
#include <stdlib.h>
#include <string.h>

#include "html_build.h"
#include "ledger_layers.h"
#include "sweep.h"

#define DEFAULT_BUCKETS 1000
#define DEFAULT_BUDGET 2000000
#define MAX_MARK_MOMENTS 5000 /* marks that are also moments */

static int add_moment(struct gl_html_timeline *d, int64_t seq, int64_t ts)
{
    if (seq <= 0)
        return 0;
    if (gl_grow((void **)&d->m, &d->mcap, d->nm, sizeof *d->m, 256))
        return -1;
    d->m[d->nm++] = (struct gl_html_moment){seq, ts};
    return 0;
}

static int cmp_moment(const void *a, const void *b)
{
    const struct gl_html_moment *x = a, *y = b;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

struct bucket {
    int64_t minv, maxv, minseq, maxseq, mints, maxts;
};

static int dev_index(const struct gl_run *r, int device)
{
    for (int k = 0; k < r->ndevs; k++)
        if (r->devs[k].device == device)
            return k;
    return -1;
}

/* Keep the lowest and the highest point of the bucket. */
static void bucket_add(struct bucket *x, int64_t live, int64_t seq, int64_t ts)
{
    if (!x->maxseq) {
        *x = (struct bucket){live, live, seq, seq, ts, ts};
    } else if (live > x->maxv) { /* the first of equal highs, as the peak */
        x->maxv = live;
        x->maxseq = seq;
        x->maxts = ts;
    } else if (live < x->minv) {
        x->minv = live;
        x->minseq = seq;
        x->mints = ts;
    }
}

/* Each device's events are cut into `nb` slices of equal numbers of events
 * (busy stretches get more detail than idle ones); a device with at most
 * 2 * nb events keeps every one as a moment. */
static int fill_buckets(struct gl_html_view *v, const struct gl_sweep *sw, struct bucket *bk, int nb)
{
    struct gl_run *r = v->run;
    int64_t live[GL_MAX_DEVICES] = {0};
    size_t count[GL_MAX_DEVICES] = {0}, seen[GL_MAX_DEVICES] = {0};
    for (size_t i = 0; i < sw->n; i++) {
        int k = dev_index(r, gl_sweep_alloc(r, sw->ev[i])->device);
        if (k >= 0)
            count[k]++;
    }
    for (size_t i = 0; i < sw->n; i++) {
        const struct gl_alloc *a = gl_sweep_alloc(r, sw->ev[i]);
        int k = dev_index(r, a->device);
        if (k < 0)
            continue;
        if (gl_kind_counts_on_device(a->kind))
            live[k] += gl_sweep_is_free(sw->ev[i]) ? -(int64_t)a->size : (int64_t)a->size;
        int64_t ts = gl_sweep_ts(r, sw->ev[i]), seq = gl_sweep_seq(r, sw->ev[i]);
        if (count[k] <= 2 * (size_t)nb) {
            seen[k]++;
            if (add_moment(&v->devs[k].tl, seq, ts))
                return -1;
            continue;
        }
        size_t b = seen[k]++ * (size_t)nb / count[k];
        bucket_add(&bk[(size_t)k * (size_t)nb + b], live[k], seq, ts);
    }
    return 0;
}

/* The device's moments besides its buckets' lows and highs: the peak, each
 * OOM, each mark (if not too many), the --at moment and the end. */
static int named_moments(struct gl_html_view *v, struct gl_html_timeline *d, const struct gl_device *dev)
{
    struct gl_run *r = v->run;
    const struct gl_annots *an = &v->annots;
    int rc = add_moment(d, dev->peak_seq, dev->peak_ns);
    for (size_t i = 0; i < r->nfails; i++)
        if (r->fails[i].device == dev->device && r->fails[i].op == GL_OP_OOM)
            rc |= add_moment(d, r->fails[i].seq, r->fails[i].ts_ns);
    size_t nmarks = 0;
    for (size_t i = 0; i < an->n; i++)
        nmarks += an->v[i].op == GL_OP_MARK;
    for (size_t i = 0; nmarks <= MAX_MARK_MOMENTS && i < an->n; i++)
        if (an->v[i].op == GL_OP_MARK)
            rc |= add_moment(d, an->v[i].seq, an->v[i].ts_ns);
    if (v->o->at)
        rc |= add_moment(d, v->o->at->seq, v->o->at->ts_ns);
    return rc | add_moment(d, gl_event_max(r), r->last_ns);
}

/* In event order, each once. */
static void sort_moments(struct gl_html_timeline *d)
{
    qsort(d->m, d->nm, sizeof *d->m, cmp_moment);
    size_t w = 0;
    for (size_t i = 0; i < d->nm; i++)
        if (!w || d->m[w - 1].seq != d->m[i].seq)
            d->m[w++] = d->m[i];
    d->nm = w;
}

/* Pass 1: the moments of each device. */
static int choose_moments(struct gl_html_view *v, const struct gl_sweep *sw, int nb)
{
    struct gl_run *r = v->run;
    struct bucket *bk = calloc((size_t)r->ndevs * (size_t)nb, sizeof *bk);
    if (!bk || fill_buckets(v, sw, bk, nb)) {
        free(bk);
        return -1;
    }
    int rc = 0;
    for (int k = 0; k < r->ndevs && !rc; k++) {
        struct gl_html_timeline *d = &v->devs[k].tl;
        for (int b = 0; b < nb; b++) {
            const struct bucket *x = &bk[(size_t)k * (size_t)nb + (size_t)b];
            if (x->maxseq)
                rc |= add_moment(d, x->minseq, x->mints) | add_moment(d, x->maxseq, x->maxts);
        }
        rc |= named_moments(v, d, &r->devs[k]);
        if (!rc)
            sort_moments(d);
    }
    free(bk);
    return rc ? -1 : 0;
}

/* Pass 2's state for one device: each row's current bytes and count, and
 * those of the moment last kept; the rows changed since. */
struct track {
    struct gl_html_timeline *tl;
    int64_t *cb, *cc, *sb, *sc;
    uint32_t *dirty;
    uint8_t *is_dirty; /* 1: in dirty[] */
    size_t ndirty;
    int64_t live;
};

static int track_alloc(struct track *d, size_t nr)
{
    d->cb = calloc(nr, sizeof *d->cb);
    d->cc = calloc(nr, sizeof *d->cc);
    d->sb = calloc(nr, sizeof *d->sb);
    d->sc = calloc(nr, sizeof *d->sc);
    d->dirty = calloc(nr, sizeof *d->dirty);
    d->is_dirty = calloc(nr, sizeof *d->is_dirty);
    return !d->cb || !d->cc || !d->sb || !d->sc || !d->dirty || !d->is_dirty || gl_i64s_push(&d->tl->off, 0) ? -1
                                                                                                              : 0;
}

static void track_free(struct track *d)
{
    free(d->cb);
    free(d->cc);
    free(d->sb);
    free(d->sc);
    free(d->dirty);
    free(d->is_dirty);
}

static void touch(struct track *d, uint32_t row)
{
    if (!d->is_dirty[row]) {
        d->is_dirty[row] = 1;
        d->dirty[d->ndirty++] = row;
    }
}

/* A moment: the live bytes, and each row that changed since the last. */
static int keep_moment(struct track *d)
{
    struct gl_html_timeline *tl = d->tl;
    if (gl_i64s_push(&tl->bytes, d->live))
        return -1;
    for (size_t i = 0; i < d->ndirty; i++) {
        uint32_t row = d->dirty[i];
        int64_t db = d->cb[row] - d->sb[row], dc = d->cc[row] - d->sc[row];
        d->is_dirty[row] = 0;
        if (!db && !dc)
            continue;
        if (gl_i64s_push(&tl->delta, row) || gl_i64s_push(&tl->delta, db) || gl_i64s_push(&tl->delta, dc))
            return -1;
        d->sb[row] = d->cb[row];
        d->sc[row] = d->cc[row];
    }
    d->ndirty = 0;
    return gl_i64s_push(&tl->off, (int64_t)tl->delta.n);
}

/* The caching allocator's segments beyond their tensors on one device, as
 * gl_ledger_at has them: its free blocks (one count per segment) and the
 * blocks waiting to be reusable. */
static void set_layer_rows(const struct gl_html_view *v, struct track *d, const struct gl_layers *l)
{
    if (!l->on)
        return;
    uint32_t cr = (uint32_t)v->cached_row, pr = (uint32_t)v->pending_row;
    d->cb[cr] = gl_layers_cached(l);
    d->cc[cr] = l->segments;
    d->cb[pr] = l->pending;
    touch(d, cr);
    touch(d, pr);
}

/* One allocation or free on the device: its row (an item of the ledger),
 * the live bytes (CUDA memory), the allocator's layers. */
static void apply(const struct gl_html_view *v, struct track *d, struct gl_layers *l, size_t ai, int is_free)
{
    const struct gl_alloc *a = &v->run->allocs[ai];
    int sign = is_free ? -1 : 1;
    if (gl_is_item(a)) {
        uint32_t row = v->alloc_row[ai];
        d->cb[row] += sign * (int64_t)a->size;
        d->cc[row] += sign;
        touch(d, row);
    }
    if (gl_kind_counts_on_device(a->kind))
        d->live += sign * (int64_t)a->size;
    gl_layers_apply(l, a, is_free);
    set_layer_rows(v, d, l);
}

/* The moments and the blocks' completions before event `seq`. */
static int catch_up(const struct gl_html_view *v, struct track *d, struct gl_layers *l, const struct gl_device *dev,
                    int64_t seq, size_t *mi, size_t *di)
{
    for (;;) {
        int64_t mseq = *mi < d->tl->nm ? d->tl->m[*mi].seq : INT64_MAX;
        int64_t dseq = l->on && *di < v->ndone ? v->done[*di].seq : INT64_MAX;
        if (mseq >= seq && dseq >= seq)
            return 0;
        if (dseq <= mseq) { /* a completion at a moment counts in it */
            const struct gl_alloc *a = &v->run->allocs[v->done[(*di)++].idx];
            if (a->device == dev->device) {
                gl_layers_complete(l, a);
                set_layer_rows(v, d, l);
            }
        } else if (keep_moment(d)) {
            return -1;
        } else {
            (*mi)++;
        }
    }
}

/* Pass 2, one device: replay and keep the changes at each of its moments. */
static int replay_device(struct gl_html_view *v, const struct gl_sweep *sw, int k)
{
    struct gl_run *r = v->run;
    const struct gl_device *dev = &r->devs[k];
    struct track d = {.tl = &v->devs[k].tl};
    struct gl_layers l = {dev->blocks && v->cached_row >= 0, 0, 0, 0, 0};
    size_t mi = 0, di = 0;
    int rc = track_alloc(&d, v->t.nrows + 1);
    for (size_t i = 0; i <= sw->n && !rc; i++) {
        rc = catch_up(v, &d, &l, dev, i < sw->n ? gl_sweep_seq(r, sw->ev[i]) : INT64_MAX, &mi, &di);
        size_t ai = i < sw->n ? sw->ev[i] >> 1 : 0;
        if (!rc && i < sw->n && r->allocs[ai].device == dev->device)
            apply(v, &d, &l, ai, gl_sweep_is_free(sw->ev[i]));
    }
    track_free(&d);
    return rc;
}

void gl_html_timeline_free(struct gl_html_timeline *tl)
{
    free(tl->m);
    free(tl->bytes.v);
    free(tl->off.v);
    free(tl->delta.v);
    memset(tl, 0, sizeof *tl);
}

/* What the page replays: CUDA memory (the timeline) and the ledger's items
 * (PyTorch's blocks too). */
static int replayed(const struct gl_alloc *a)
{
    return gl_kind_counts_on_device(a->kind) || gl_is_item(a);
}

int gl_html_timelines(struct gl_html_view *v)
{
    struct gl_run *r = v->run;
    struct gl_sweep sw = {NULL, 0};
    int nb = v->o->buckets > 0 ? v->o->buckets : DEFAULT_BUCKETS;
    size_t budget = v->o->delta_budget ? v->o->delta_budget : DEFAULT_BUDGET;
    int rc = gl_sweep_build(r, &sw, replayed);
    /* fewer time slices until the changes fit the budget */
    for (; !rc;) {
        rc = choose_moments(v, &sw, nb);
        for (int k = 0; k < r->ndevs && !rc; k++)
            rc = replay_device(v, &sw, k);
        size_t total = 0;
        for (int k = 0; k < r->ndevs; k++)
            total += v->devs[k].tl.delta.n / 3;
        if (rc || total <= budget || nb <= 50)
            break;
        for (int k = 0; k < r->ndevs; k++)
            gl_html_timeline_free(&v->devs[k].tl);
        nb /= 2;
    }
    v->buckets = nb;
    gl_sweep_free(&sw);
    return rc ? -1 : 0;
}
