/* html_data.c — see html_data.h. Two passes over the run's memory events
 * (sweep.h): the first finds each time slice's lowest and highest point per
 * device, the second replays the run and, at each chosen moment, writes
 * which ledger rows changed since the moment before. */
#include "html_data.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "dossier.h"
#include "escape.h"
#include "heaps.h"
#include "json.h"
#include "render_diagnosis.h"
#include "stack_text.h"
#include "ledger_layers.h"
#include "strmap.h"
#include "sweep.h"
#include "u64map.h"

#define DEFAULT_BUCKETS 1000
#define DEFAULT_BUDGET 2000000
#define MAX_MARK_MOMENTS 5000 /* marks that are also moments */
#define MAX_ANNOTS 200000     /* marks and ranges sent to the page */

/* ---- growable int64 vector ----------------------------------------------- */

struct vec {
    int64_t *v;
    size_t n, cap;
};

static int vpush(struct vec *x, int64_t a)
{
    if (x->n == x->cap) {
        size_t nc = x->cap ? x->cap * 2 : 1024;
        int64_t *nv = realloc(x->v, nc * sizeof *nv);
        if (!nv)
            return -1;
        x->v = nv;
        x->cap = nc;
    }
    x->v[x->n++] = a;
    return 0;
}

/* ---- rows, frames, categories -------------------------------------------- */

struct row {
    int cat;
    int64_t stack_id;
    size_t frames_at, nframes; /* in ctx.row_frames */
    const char *what;          /* a row no stack made (GL_ROW_*), or NULL */
};

struct frame_ref {
    const struct gl_frame *f; /* lives in the stack cache until the end */
};

struct ctx {
    struct gl_run *r;
    const struct gl_html_opts *o;
    struct gl_stacks stacks;
    const char *cats[GL_MAX_CATS * 2];
    int ncats;
    struct gl_strmap frame_ids;
    struct frame_ref *frames; /* by frame id */
    struct gl_strmap row_ids;
    struct row *rows;
    size_t nrows, rows_cap;
    struct vec row_frames;
    struct gl_u64map by_site; /* stack_id, api, kind, category -> row */
    uint32_t *alloc_row;     /* by allocation index (the ledger's items, gl_is_item) */
    /* PyTorch's caching allocator: its segments beyond their tensors */
    int64_t cached_row, pending_row; /* -1: no device has blocks */
    struct gl_layers_done *done;     /* blocks reusable after their free, by when */
    size_t ndone;
};

static int cat_id(struct ctx *c, const char *name)
{
    for (int i = 0; i < c->ncats; i++)
        if (!strcmp(c->cats[i], name))
            return i;
    if (c->ncats == (int)(sizeof c->cats / sizeof c->cats[0]))
        return c->ncats - 1;
    c->cats[c->ncats] = name;
    return c->ncats++;
}

static int64_t frame_id(struct ctx *c, const struct gl_frame *fr)
{
    char key[3200];
    gl_frame_key(fr, key, sizeof key);
    int added;
    int64_t id = gl_strmap_id(&c->frame_ids, key, &added);
    if (id >= 0 && added) {
        struct frame_ref *nf = realloc(c->frames, c->frame_ids.cap * sizeof *nf);
        if (!nf)
            return -1;
        c->frames = nf;
        c->frames[id].f = fr;
    }
    return id;
}

/* The row of (stack's chain of names, category), or of what a row no stack
 * made is; -1 on out of memory. */
static int64_t row_for(struct ctx *c, int64_t stack_id, const char *category, const char *what)
{
    const struct gl_stack *st = gl_stack_get(&c->stacks, what ? 0 : stack_id);
    char chain[4096], sig[4200]; /* the chain as gl_groups_merge_chains sees it */
    int cat = cat_id(c, category ? category : "other");
    gl_stack_signature(st, chain, sizeof chain);
    snprintf(sig, sizeof sig, "%d\x1f%s\x1f%s", cat, what ? what : "", chain);
    int added;
    int64_t id = gl_strmap_id(&c->row_ids, sig, &added);
    if (id < 0 || !added)
        return id;
    if (c->nrows == c->rows_cap) {
        size_t nc = c->rows_cap ? c->rows_cap * 2 : 256;
        struct row *nr = realloc(c->rows, nc * sizeof *nr);
        if (!nr)
            return -1;
        c->rows = nr;
        c->rows_cap = nc;
    }
    struct row *rw = &c->rows[c->nrows++];
    rw->cat = cat;
    rw->stack_id = what ? 0 : stack_id;
    rw->what = what;
    rw->frames_at = c->row_frames.n;
    rw->nframes = (size_t)st->n;
    for (int i = 0; i < st->n; i++) {
        int64_t f = frame_id(c, &st->f[i]);
        if (f < 0 || vpush(&c->row_frames, f))
            return -1;
    }
    return id;
}

/* What the page replays: CUDA memory (the timeline) and the ledger's items
 * (PyTorch's blocks too). */
static int replayed(const struct gl_alloc *a)
{
    return gl_kind_counts_on_device(a->kind) || gl_is_item(a);
}

/* On a device with PyTorch's caching allocator the ledger has two rows no
 * stack made (analysis.c: layer_rows): its free blocks and the blocks
 * waiting for their streams; and the blocks' completions, in order. */
static int allocator_rows(struct ctx *c)
{
    struct gl_run *r = c->r;
    c->cached_row = c->pending_row = -1;
    if (!r->has_blocks)
        return 0;
    c->cached_row = row_for(c, 0, "allocator_cache", GL_ROW_CACHED);
    c->pending_row = row_for(c, 0, "allocator_cache", GL_ROW_PENDING);
    return c->cached_row < 0 || c->pending_row < 0 || gl_layers_done_list(r, &c->done, &c->ndone) ? -1 : 0;
}

/* Row of every item of the ledger, cached by call site (stack, api, kind,
 * and a category by identity or lifetime: what a category can depend on). */
static int rows_of_allocs(struct ctx *c)
{
    struct gl_run *r = c->r;
    c->alloc_row = calloc(r->nallocs + 1, sizeof *c->alloc_row);
    if (!c->alloc_row || allocator_rows(c))
        return -1;
    for (size_t i = 0; i < r->nallocs; i++) {
        const struct gl_alloc *a = &r->allocs[i];
        if (!gl_is_item(a))
            continue;
        uint64_t key = (uint64_t)a->stack_id << 32 | (uint64_t)a->api << 16 | (uint64_t)a->kind << 8 | a->cat, row;
        if (!gl_u64map_get(&c->by_site, key, &row)) {
            int64_t id = row_for(c, a->stack_id, gl_categorize(c->o->rules, &c->stacks, a), NULL);
            if (id < 0 || gl_u64map_put(&c->by_site, key, (uint64_t)id))
                return -1;
            row = (uint64_t)id;
        }
        c->alloc_row[i] = (uint32_t)row;
    }
    return 0;
}

/* ---- moments --------------------------------------------------------------- */

struct moment {
    int64_t seq, ts;
};

struct devtrack {
    int want;                 /* shown (--device) */
    struct moment *m;         /* chosen moments, in order */
    size_t nm, mcap;
    struct vec bytes;         /* live bytes at each moment */
    struct vec off;           /* delta entries before each moment (nm + 1) */
    struct vec delta;         /* row, dbytes, dcount triples */
    int64_t *cb, *cc, *sb, *sc; /* current and last-written bytes/count per row */
    uint32_t *dirty;
    uint8_t *is_dirty;        /* 1: in dirty[] */
    size_t ndirty;
    int64_t live;
};

static int add_moment(struct devtrack *d, int64_t seq, int64_t ts)
{
    if (seq <= 0)
        return 0;
    if (d->nm == d->mcap) {
        size_t nc = d->mcap ? d->mcap * 2 : 256;
        struct moment *nv = realloc(d->m, nc * sizeof *nv);
        if (!nv)
            return -1;
        d->m = nv;
        d->mcap = nc;
    }
    d->m[d->nm++] = (struct moment){seq, ts};
    return 0;
}

static int cmp_moment(const void *a, const void *b)
{
    const struct moment *x = a, *y = b;
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

/* Pass 1: the moments of each device. Each device's events are cut into
 * `nb` slices of equal numbers of events (busy stretches get more detail
 * than idle ones); a device with at most 2 * nb events keeps every one. */
static int choose_moments(struct ctx *c, const struct gl_sweep *sw, struct devtrack *dt, int nb,
                          const struct gl_annots *an)
{
    struct gl_run *r = c->r;
    struct bucket *bk = calloc((size_t)r->ndevs * (size_t)nb, sizeof *bk);
    int64_t live[GL_MAX_DEVICES] = {0};
    size_t count[GL_MAX_DEVICES] = {0}, seen[GL_MAX_DEVICES] = {0};
    if (!bk)
        return -1;
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
            if (add_moment(&dt[k], seq, ts)) {
                free(bk);
                return -1;
            }
            continue;
        }
        size_t b = seen[k]++ * (size_t)nb / count[k];
        struct bucket *x = &bk[(size_t)k * (size_t)nb + b];
        if (!x->maxseq) {
            *x = (struct bucket){live[k], live[k], seq, seq, ts, ts};
        } else if (live[k] > x->maxv) { /* the first of equal highs, as the peak */
            x->maxv = live[k];
            x->maxseq = seq;
            x->maxts = ts;
        } else if (live[k] < x->minv) {
            x->minv = live[k];
            x->minseq = seq;
            x->mints = ts;
        }
    }
    int64_t last = gl_event_max(r);
    for (int k = 0; k < r->ndevs; k++) {
        struct devtrack *d = &dt[k];
        const struct gl_device *dev = &r->devs[k];
        int rc = 0;
        for (int b = 0; b < nb; b++) {
            const struct bucket *x = &bk[(size_t)k * (size_t)nb + (size_t)b];
            if (x->maxseq)
                rc |= add_moment(d, x->minseq, x->mints) | add_moment(d, x->maxseq, x->maxts);
        }
        rc |= add_moment(d, dev->peak_seq, dev->peak_ns);
        for (size_t i = 0; i < r->nfails; i++)
            if (r->fails[i].device == dev->device && r->fails[i].op == GL_OP_OOM)
                rc |= add_moment(d, r->fails[i].seq, r->fails[i].ts_ns);
        size_t nmarks = 0;
        for (size_t i = 0; i < an->n; i++)
            nmarks += an->v[i].op == GL_OP_MARK;
        for (size_t i = 0; nmarks <= MAX_MARK_MOMENTS && i < an->n; i++)
            if (an->v[i].op == GL_OP_MARK)
                rc |= add_moment(d, an->v[i].seq, an->v[i].ts_ns);
        if (c->o->at)
            rc |= add_moment(d, c->o->at->seq, c->o->at->ts_ns);
        rc |= add_moment(d, last, r->last_ns);
        if (rc) {
            free(bk);
            return -1;
        }
        qsort(d->m, d->nm, sizeof *d->m, cmp_moment);
        size_t w = 0;
        for (size_t i = 0; i < d->nm; i++)
            if (!w || d->m[w - 1].seq != d->m[i].seq)
                d->m[w++] = d->m[i];
        d->nm = w;
    }
    free(bk);
    return 0;
}

static int emit_moment(struct devtrack *d)
{
    if (vpush(&d->bytes, d->live))
        return -1;
    for (size_t i = 0; i < d->ndirty; i++) {
        uint32_t row = d->dirty[i];
        int64_t db = d->cb[row] - d->sb[row], dc = d->cc[row] - d->sc[row];
        d->is_dirty[row] = 0;
        if (!db && !dc)
            continue;
        if (vpush(&d->delta, row) || vpush(&d->delta, db) || vpush(&d->delta, dc))
            return -1;
        d->sb[row] = d->cb[row];
        d->sc[row] = d->cc[row];
    }
    d->ndirty = 0;
    return vpush(&d->off, (int64_t)d->delta.n);
}

static int devtrack_alloc(struct devtrack *d, size_t nr)
{
    d->cb = calloc(nr, sizeof *d->cb);
    d->cc = calloc(nr, sizeof *d->cc);
    d->sb = calloc(nr, sizeof *d->sb);
    d->sc = calloc(nr, sizeof *d->sc);
    d->dirty = calloc(nr, sizeof *d->dirty);
    d->is_dirty = calloc(nr, sizeof *d->is_dirty);
    return !d->cb || !d->cc || !d->sb || !d->sc || !d->dirty || !d->is_dirty || vpush(&d->off, 0) ? -1 : 0;
}

static void touch(struct devtrack *d, uint32_t row)
{
    if (!d->is_dirty[row]) {
        d->is_dirty[row] = 1;
        d->dirty[d->ndirty++] = row;
    }
}

/* The caching allocator's segments beyond their tensors on one device, as
 * gl_ledger_at has them: its free blocks (one count per segment) and the
 * blocks waiting to be reusable. */
static void set_layer_rows(struct ctx *c, struct devtrack *d, const struct gl_layers *l)
{
    if (!l->on)
        return;
    uint32_t cr = (uint32_t)c->cached_row, pr = (uint32_t)c->pending_row;
    d->cb[cr] = gl_layers_cached(l);
    d->cc[cr] = l->segments;
    d->cb[pr] = l->pending;
    touch(d, cr);
    touch(d, pr);
}

/* One allocation or free on the device: its row (an item of the ledger),
 * the live bytes (CUDA memory), the allocator's layers. */
static void apply(struct ctx *c, struct devtrack *d, struct gl_layers *l, size_t ai, int is_free)
{
    const struct gl_alloc *a = &c->r->allocs[ai];
    int sign = is_free ? -1 : 1;
    if (gl_is_item(a)) {
        uint32_t row = c->alloc_row[ai];
        d->cb[row] += sign * (int64_t)a->size;
        d->cc[row] += sign;
        touch(d, row);
    }
    if (gl_kind_counts_on_device(a->kind))
        d->live += sign * (int64_t)a->size;
    gl_layers_apply(l, a, is_free);
    set_layer_rows(c, d, l);
}

/* Pass 2, one device at a time: replay and write the changes at each of
 * its moments. */
static int replay_device(struct ctx *c, const struct gl_sweep *sw, struct devtrack *d, const struct gl_device *dev)
{
    struct gl_run *r = c->r;
    if (devtrack_alloc(d, c->nrows + 1))
        return -1;
    struct gl_layers l = {dev->blocks && c->cached_row >= 0, 0, 0, 0, 0};
    size_t mi = 0, di = 0;
    for (size_t i = 0; i <= sw->n; i++) {
        int64_t seq = i < sw->n ? gl_sweep_seq(r, sw->ev[i]) : INT64_MAX;
        for (;;) { /* the moments and the blocks' completions before this event */
            int64_t mseq = mi < d->nm ? d->m[mi].seq : INT64_MAX;
            int64_t dseq = l.on && di < c->ndone ? c->done[di].seq : INT64_MAX;
            if (mseq >= seq && dseq >= seq)
                break;
            if (dseq <= mseq) { /* a completion at a moment counts in it */
                const struct gl_alloc *a = &r->allocs[c->done[di++].idx];
                if (a->device == dev->device) {
                    gl_layers_complete(&l, a);
                    set_layer_rows(c, d, &l);
                }
            } else if (emit_moment(d)) {
                return -1;
            } else {
                mi++;
            }
        }
        if (i == sw->n)
            break;
        size_t ai = sw->ev[i] >> 1;
        if (r->allocs[ai].device == dev->device)
            apply(c, d, &l, ai, gl_sweep_is_free(sw->ev[i]));
    }
    return 0;
}

static int replay(struct ctx *c, const struct gl_sweep *sw, struct devtrack *dt)
{
    for (int k = 0; k < c->r->ndevs; k++)
        if (replay_device(c, sw, &dt[k], &c->r->devs[k]))
            return -1;
    return 0;
}

static void devtrack_free(struct devtrack *d)
{
    free(d->m);
    free(d->bytes.v);
    free(d->off.v);
    free(d->delta.v);
    free(d->cb);
    free(d->cc);
    free(d->sb);
    free(d->sc);
    free(d->dirty);
    free(d->is_dirty);
    memset(d, 0, sizeof *d);
}

/* ---- writing --------------------------------------------------------------- */

static void write_ids(struct gl_json *j, const int64_t *v, size_t n)
{
    gl_jw_arr(j, NULL);
    for (size_t i = 0; i < n; i++)
        gl_jw_i64(j, NULL, v[i]);
    gl_jw_end(j);
}

/* The n ids of vec from `at`: an empty vec has no array (NULL + 0 is
 * undefined). */
static void write_ids_at(struct gl_json *j, const struct vec *vec, size_t at, size_t n)
{
    write_ids(j, n ? vec->v + at : NULL, n);
}

/* Frame ids of a stack (for stacks that are not rows: a failed call). */
static int write_stack_frames(struct gl_json *j, const char *key, struct ctx *c, int64_t stack_id)
{
    const struct gl_stack *st = gl_stack_get(&c->stacks, stack_id);
    gl_jw_arr(j, key);
    for (int i = 0; i < st->n; i++) {
        int64_t id = frame_id(c, &st->f[i]);
        if (id < 0)
            return -1;
        gl_jw_i64(j, NULL, id);
    }
    gl_jw_end(j);
    return 0;
}

/* Ledger groups (merged, categorized) as [[row, bytes, count], ...]. */
static int write_groups(struct gl_json *j, const char *key, struct ctx *c, const struct gl_groups *g, int times)
{
    gl_jw_arr(j, key);
    for (size_t i = 0; i < g->n; i++) {
        int64_t row = row_for(c, g->v[i].stack_id, g->v[i].category, g->v[i].what);
        if (row < 0)
            return -1;
        gl_jw_arr(j, NULL);
        gl_jw_i64(j, NULL, row);
        gl_jw_u64(j, NULL, g->v[i].bytes);
        gl_jw_u64(j, NULL, g->v[i].count);
        if (times && g->v[i].what) { /* a row no stack made has no times */
            gl_jw_null(j, NULL);
            gl_jw_null(j, NULL);
        } else if (times) {
            gl_jw_i64(j, NULL, gl_ns_since(g->v[i].first_ns, c->r->first_ns));
            gl_jw_i64(j, NULL, gl_ns_since(g->v[i].last_ns, c->r->first_ns));
        }
        if (times) /* never freed: held at exit by design, not a leak */
            gl_jw_bool(j, NULL, gl_group_is_held(&g->v[i]));
        gl_jw_end(j);
    }
    gl_jw_end(j);
    return 0;
}

/* The device's OOMs, each with the ledger live at that moment. */
static int write_ooms(struct gl_json *j, struct ctx *c, const struct gl_device *dev)
{
    struct gl_run *r = c->r;
    gl_jw_arr(j, "ooms");
    for (size_t i = 0; i < r->nfails; i++) {
        const struct gl_fail *fl = &r->fails[i];
        if (fl->device != dev->device || fl->op != GL_OP_OOM || gl_fail_absorbed(r, i))
            continue; /* one OOM is one failure: its segment retries are its detail */
        struct gl_groups g;
        gl_ledger_at(r, dev->device, fl->seq, &g);
        gl_groups_merge_chains(&g, &c->stacks);
        gl_groups_categorize(&g, c->o->rules, &c->stacks);
        gl_jw_obj(j, NULL);
        gl_jw_i64(j, "seq", fl->seq);
        gl_jw_i64(j, "t", gl_ns_since(fl->ts_ns, r->first_ns));
        if (r->nsteps)
            gl_jw_i64(j, "step", gl_step_at(r, fl->seq));
        else
            gl_jw_null(j, "step");
        gl_jw_str(j, "api", gl_api_name(fl->api));
        gl_jw_u64(j, "size", fl->size);
        gl_jw_i64(j, "result", fl->result);
        gl_jw_u64(j, "live", g.total_bytes);
        int rc = write_stack_frames(j, "frames", c, fl->stack_id);
        rc |= write_groups(j, "ledger", c, &g, 0);
        gl_jw_end(j);
        gl_groups_free(&g);
        if (rc)
            return -1;
    }
    gl_jw_end(j);
    return 0;
}

/* Leak chains and the stacks growing step after step. */
static int write_leaks_growth(struct gl_json *j, struct ctx *c, const struct gl_device *dev)
{
    struct gl_run *r = c->r;
    struct gl_groups g;
    struct gl_leak_opts lo = {0, 0, 0};
    gl_leaks(r, dev->device, &lo, &g);
    gl_groups_merge_chains(&g, &c->stacks);
    gl_groups_categorize(&g, c->o->rules, &c->stacks);
    uint64_t leak = 0, cached = 0;
    for (size_t i = 0; i < g.n; i++)
        *(gl_group_is_held(&g.v[i]) ? &cached : &leak) += g.v[i].bytes;
    int rc = write_groups(j, "leaks", c, &g, 1);
    gl_groups_free(&g);
    gl_jw_u64(j, "leak_bytes", leak);
    gl_jw_u64(j, "cached_bytes", cached);
    struct gl_usage us;
    gl_usage_load(r, dev, &us);
    if (us.source[0] && !us.unknown) { /* schema 2: what no allocation API shows, at the peak and at the end */
        gl_jw_obj(j, "outside_api");
        gl_jw_str(j, "source", gl_usage_source_text(us.source));
        gl_jw_u64(j, "peak", gl_usage_outside(&us.peak));
        gl_jw_u64(j, "end", gl_usage_outside(&us.end));
        gl_jw_u64(j, "end_process", us.end.process);
        gl_jw_end(j);
    }
    int nsteps = gl_growth(r, dev->device, 10, 0, &c->stacks, &g);
    gl_groups_categorize(&g, c->o->rules, &c->stacks);
    gl_jw_obj(j, "growth");
    gl_jw_i64(j, "steps", nsteps > 0 ? nsteps : 0);
    gl_jw_bool(j, "by_marks", r->nmarks >= 2);
    gl_jw_arr(j, "rows");
    for (size_t i = 0; i < g.n && nsteps > 0; i++) {
        int64_t row = row_for(c, g.v[i].stack_id, g.v[i].category, g.v[i].what);
        if (row < 0)
            rc = -1;
        gl_jw_arr(j, NULL);
        gl_jw_i64(j, NULL, row);
        gl_jw_u64(j, NULL, g.v[i].bytes);
        gl_jw_arr(j, NULL);
        for (int s = 0; s < nsteps && g.v[i].steps; s++)
            gl_jw_u64(j, NULL, g.v[i].steps[s]);
        gl_jw_end(j);
        gl_jw_end(j);
    }
    gl_jw_end(j);
    gl_jw_end(j);
    gl_groups_free(&g);
    return rc;
}

static int write_device(struct gl_json *j, struct ctx *c, int k, const struct devtrack *d, int nb)
{
    const struct gl_device *dev = &c->r->devs[k];
    int64_t t0 = c->r->first_ns;
    gl_jw_obj(j, NULL);
    gl_jw_i64(j, "device", dev->device);
    gl_jw_arr(j, "peak");
    gl_jw_i64(j, NULL, dev->peak_seq);
    gl_jw_i64(j, NULL, gl_ns_since(dev->peak_ns, t0));
    gl_jw_u64(j, NULL, dev->peak);
    gl_jw_end(j);
    if (c->r->nsteps)
        gl_jw_i64(j, "peak_step", gl_step_at(c->r, dev->peak_seq));
    else
        gl_jw_null(j, "peak_step");
    gl_jw_u64(j, "end_bytes", dev->live_end);
    gl_jw_i64(j, "buckets", nb);
    gl_jw_arr(j, "moments");
    for (size_t i = 0; i < d->nm; i++) {
        gl_jw_arr(j, NULL);
        gl_jw_i64(j, NULL, d->m[i].seq);
        gl_jw_i64(j, NULL, gl_ns_since(d->m[i].ts, t0));
        gl_jw_i64(j, NULL, d->bytes.v[i]);
        gl_jw_end(j);
    }
    gl_jw_end(j);
    gl_jw_arr(j, "deltas");
    for (size_t i = 0; i < d->nm; i++)
        write_ids_at(j, &d->delta, (size_t)d->off.v[i], (size_t)(d->off.v[i + 1] - d->off.v[i]));
    gl_jw_end(j);
    int rc = write_ooms(j, c, dev) || write_leaks_growth(j, c, dev) ? -1 : 0;
    gl_jw_end(j);
    return rc;
}

static void write_holes(struct gl_json *j, struct gl_run *r)
{
    struct gl_pool_holes *h;
    size_t n;
    gl_jw_arr(j, "holes");
    if (gl_holes(r, NULL, &h, &n)) {
        gl_jw_end(j);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        char label[96];
        gl_jw_obj(j, NULL);
        gl_jw_str(j, "label", gl_pool_label(&h[i], label, sizeof label));
        gl_jw_i64(j, "device", h[i].device);
        gl_jw_u64(j, "sampled_reserved", h[i].sampled_reserved);
        gl_jw_u64(j, "worst", h[i].worst_index);
        gl_jw_arr(j, "series");
        for (size_t s = 0; s < h[i].nseries; s++) {
            const struct gl_hole_stat *x = &h[i].series[s];
            const int64_t v[7] = {x->seq,
                                  gl_ns_since(x->ts_ns, r->first_ns),
                                  (int64_t)x->reserved,
                                  (int64_t)x->live,
                                  (int64_t)x->free,
                                  (int64_t)x->largest_free,
                                  (int64_t)x->holes};
            write_ids(j, v, 7);
        }
        gl_jw_end(j);
        gl_jw_end(j);
    }
    gl_jw_end(j);
    gl_holes_free(h, n);
}

/* A heap's moment as [seq, t, used, free, holes, largest free, regions,
 * region bytes, unused bytes of them]. */
static void write_heap_point(struct gl_json *j, const char *key, const struct gl_run *r, const struct gl_heap_point *p)
{
    const int64_t v[9] = {p->seq,
                          gl_ns_since(p->ts_ns, r->first_ns),
                          (int64_t)p->fs.used,
                          (int64_t)p->fs.free,
                          (int64_t)p->fs.holes,
                          (int64_t)p->fs.largest_free,
                          (int64_t)p->regions,
                          (int64_t)p->region_bytes,
                          (int64_t)p->waste};
    gl_jw_arr(j, key);
    for (int i = 0; i < 9; i++)
        gl_jw_i64(j, NULL, v[i]);
    gl_jw_end(j);
}

/* The heaps of the program's own pools (heaps.h). */
static int write_heaps(struct gl_json *j, struct ctx *c)
{
    struct gl_heaps_view hv;
    int rc = 0;
    gl_jw_arr(j, "heaps");
    if (gl_heaps_view(&hv, c->r)) { /* the rest of the page stands without them */
        gl_heaps_view_free(&hv);
        gl_jw_end(j);
        return 0;
    }
    for (size_t k = 0; k < hv.n && !rc; k++) {
        const struct gl_heap_view *v = &hv.v[k];
        const struct gl_heap *h = v->h;
        char label[160];
        gl_jw_obj(j, NULL);
        gl_jw_str(j, "label", gl_heap_label(h, label, sizeof label));
        gl_jw_u64(j, "size", h->size);
        gl_jw_u64(j, "page_size", h->page_size);
        gl_jw_i64(j, "device", h->device);
        gl_jw_u64(j, "regions", v->nregions);
        gl_jw_i64(j, "has_used", v->has_used);
        gl_jw_i64(j, "unregistered", h->end_seq != 0);
        gl_jw_u64(j, "cell_bytes", v->cell_bytes);
        write_heap_point(j, "peak", c->r, &v->peak);
        write_heap_point(j, "worst", c->r, &v->worst);
        write_heap_point(j, "end", c->r, &v->end);
        gl_jw_arr(j, "series");
        for (size_t i = 0; i < v->nseries; i++)
            write_heap_point(j, NULL, c->r, &v->series[i]);
        gl_jw_end(j);
        gl_jw_u8s(j, "occ_peak", v->occ_peak, v->ncells);
        gl_jw_u8s(j, "occ_worst", v->occ_worst, v->ncells);
        rc = write_groups(j, "peak_ledger", c, &v->peak_ledger, 0) || write_groups(j, "leaks", c, &v->leaks, 0);
        gl_jw_end(j);
    }
    gl_jw_end(j);
    gl_heaps_view_free(&hv);
    return rc;
}

static void write_annots(struct gl_json *j, struct gl_run *r, const struct gl_annots *an)
{
    size_t dropped = 0, sent = 0;
    gl_jw_arr(j, "marks");
    for (size_t i = 0; i < an->n; i++) {
        const struct gl_annot *x = &an->v[i];
        if (x->op != GL_OP_MARK)
            continue;
        if (sent++ >= MAX_ANNOTS) {
            dropped++;
            continue;
        }
        gl_jw_arr(j, NULL);
        gl_jw_i64(j, NULL, x->seq);
        gl_jw_i64(j, NULL, gl_ns_since(x->ts_ns, r->first_ns));
        gl_jw_str(j, NULL, x->label);
        gl_jw_end(j);
    }
    gl_jw_end(j);
    gl_jw_arr(j, "ranges");
    sent = 0;
    for (size_t i = 0; i < an->n; i++) {
        const struct gl_annot *x = &an->v[i];
        if (x->op != GL_OP_RANGE_PUSH)
            continue;
        if (sent++ >= MAX_ANNOTS) {
            dropped++;
            continue;
        }
        int64_t end_seq = x->end_seq ? x->end_seq : 0, end_ns = x->end_seq ? x->end_ns : r->last_ns;
        gl_jw_arr(j, NULL);
        gl_jw_i64(j, NULL, x->seq);
        gl_jw_i64(j, NULL, gl_ns_since(x->ts_ns, r->first_ns));
        gl_jw_i64(j, NULL, end_seq);
        gl_jw_i64(j, NULL, gl_ns_since(end_ns, r->first_ns));
        gl_jw_str(j, NULL, x->label);
        gl_jw_i64(j, NULL, x->depth);
        gl_jw_i64(j, NULL, x->tid);
        gl_jw_end(j);
    }
    gl_jw_end(j);
    gl_jw_u64(j, "annotations_left_out", dropped);
}

static void write_tables(struct gl_json *j, struct ctx *c)
{
    gl_jw_arr(j, "categories");
    for (int i = 0; i < c->ncats; i++)
        gl_jw_str(j, NULL, c->cats[i]);
    gl_jw_end(j);
    gl_jw_arr(j, "cached_categories");
    for (int i = 0; i < c->ncats; i++)
        if (gl_is_cached_category(c->cats[i]))
            gl_jw_i64(j, NULL, i);
    gl_jw_end(j);
    gl_jw_arr(j, "frames");
    for (size_t i = 0; i < c->frame_ids.n; i++) {
        const struct gl_frame *fr = c->frames[i].f;
        gl_jw_arr(j, NULL);
        gl_jw_str(j, NULL, fr->symbol);
        gl_jw_str(j, NULL, fr->module);
        gl_jw_str(j, NULL, fr->file);
        gl_jw_i64(j, NULL, fr->line > 0 ? fr->line : 0);
        gl_jw_i64(j, NULL, fr->python ? 1 : 0);
        gl_jw_u64(j, NULL, fr->offset);
        struct gl_fc_frame fc = {fr->symbol, fr->module, fr->file, fr->line, fr->python, fr->offset};
        char text[1024];
        gl_jw_i64(j, NULL, gl_fc_classify(&fc)); /* enum gl_fc_class: 0 user, 1 library, 2 allocator */
        gl_jw_str(j, NULL, gl_fc_frame_text(&fc, text, sizeof text)); /* C++ names shortened */
        gl_jw_end(j);
    }
    gl_jw_end(j);
    gl_jw_arr(j, "rows");
    for (size_t i = 0; i < c->nrows; i++) {
        gl_jw_arr(j, NULL);
        gl_jw_i64(j, NULL, c->rows[i].cat);
        gl_jw_i64(j, NULL, c->rows[i].stack_id);
        write_ids_at(j, &c->row_frames, c->rows[i].frames_at, c->rows[i].nframes);
        if (c->rows[i].what)
            gl_jw_str(j, NULL, gl_row_text(c->rows[i].what));
        gl_jw_end(j);
    }
    gl_jw_end(j);
}

/* The report's diagnosis (diagnosis.h), for the box at the top. */
static int write_diagnosis(struct gl_json *j, struct gl_run *r, const struct gl_html_opts *o)
{
    struct gl_dossier ds;
    struct gl_dossier_opts dopts = {o->device, o->rules, o->at};
    int rc = gl_dossier_build(&ds, r, &dopts);
    if (!rc)
        gl_diagnosis_json(j, "diagnosis", &ds.diag);
    gl_dossier_free(&ds);
    return rc;
}

static void ctx_free(struct ctx *c)
{
    gl_stacks_free(&c->stacks);
    gl_strmap_free(&c->frame_ids);
    gl_strmap_free(&c->row_ids);
    free(c->frames);
    free(c->rows);
    free(c->row_frames.v);
    gl_u64map_free(&c->by_site);
    free(c->alloc_row);
    free(c->done);
}

int gl_html_data_write(FILE *f, struct gl_run *r, const struct gl_html_opts *o)
{
    struct ctx c;
    memset(&c, 0, sizeof c);
    c.r = r;
    c.o = o;
    gl_stacks_init(&c.stacks, r);
    gl_strmap_init(&c.frame_ids);
    gl_strmap_init(&c.row_ids);
    gl_u64map_init(&c.by_site);
    for (size_t i = 0; o->rules && i < o->rules->n; i++) /* colours follow the rule order */
        cat_id(&c, o->rules->v[i].category);
    cat_id(&c, "other");
    struct gl_annots an;
    char err[256];
    if (gl_annots_load(r, &an, err, sizeof err))
        an = (struct gl_annots){NULL, 0};
    struct gl_sweep sw = {NULL, 0};
    struct devtrack dt[GL_MAX_DEVICES];
    memset(dt, 0, sizeof dt);
    int nb = o->buckets > 0 ? o->buckets : DEFAULT_BUCKETS;
    size_t budget = o->delta_budget ? o->delta_budget : DEFAULT_BUDGET;
    int rc = rows_of_allocs(&c) || gl_sweep_build(r, &sw, replayed) ? -1 : 0;
    /* fewer time slices until the changes fit the budget */
    for (; !rc;) {
        rc = choose_moments(&c, &sw, dt, nb, &an) || replay(&c, &sw, dt) ? -1 : 0;
        size_t total = 0;
        for (int k = 0; k < r->ndevs; k++)
            total += dt[k].delta.n / 3;
        if (rc || total <= budget || nb <= 50)
            break;
        for (int k = 0; k < r->ndevs; k++)
            devtrack_free(&dt[k]);
        nb /= 2;
    }
    if (!rc) {
        struct gl_json j;
        gl_jw_init_script(&j, f);
        gl_jw_obj(&j, NULL);
        gl_jw_str(&j, "path", r->path);
        gl_jw_i64(&j, "pid", r->pid);
        gl_jw_str(&j, "host", r->host);
        gl_jw_str(&j, "rank", r->rank);
        gl_jw_str(&j, "cmdline", r->cmdline);
        gl_jw_i64(&j, "events", r->event_count);
        gl_jw_bool(&j, "finished", !r->unfinished);
        gl_jw_i64(&j, "dropped", r->dropped);
        gl_jw_i64(&j, "truncated", r->truncated);
        gl_jw_i64(&j, "span_ns", gl_ns_since(r->last_ns, r->first_ns));
        if (o->at) {
            gl_jw_obj(&j, "selected");
            gl_jw_i64(&j, "seq", o->at->seq);
            gl_jw_i64(&j, "t", gl_ns_since(o->at->ts_ns, r->first_ns));
            gl_jw_str(&j, "when", o->at->when);
            gl_jw_str(&j, "desc", o->at->desc);
            gl_jw_end(&j);
        } else {
            gl_jw_null(&j, "selected");
        }
        rc = write_diagnosis(&j, r, o);
        write_annots(&j, r, &an);
        gl_jw_arr(&j, "devices");
        for (int k = 0; k < r->ndevs && !rc; k++)
            if (o->device == -2 || r->devs[k].device == o->device)
                rc = write_device(&j, &c, k, &dt[k], nb);
        gl_jw_end(&j);
        write_holes(&j, r);
        rc = rc || write_heaps(&j, &c);
        write_tables(&j, &c); /* last: the sections above add rows and frames */
        gl_jw_end(&j);
    }
    for (int k = 0; k < r->ndevs; k++)
        devtrack_free(&dt[k]);
    gl_sweep_free(&sw);
    gl_annots_free(&an);
    ctx_free(&c);
    return rc;
}
