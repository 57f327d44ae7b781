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
#include "sweep.h"
#include "u64map.h"

#define DEFAULT_BUCKETS 1000
#define DEFAULT_BUDGET 2000000
#define MAX_MARK_MOMENTS 5000 /* marks that are also moments */
#define MAX_ANNOTS 200000     /* marks and ranges sent to the page */

/* ---- string-keyed ids ------------------------------------------------------ */

struct strmap {
    struct gl_u64map idx; /* hash (probed) -> id */
    char **keys;
    size_t n, cap;
};

static uint64_t fnv(const char *s)
{
    uint64_t h = 1469598103934665603ULL;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return h;
}

/* Id of key, adding it when new (*added = 1); -1 on out of memory. */
static int64_t strmap_id(struct strmap *m, const char *key, int *added)
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

static void strmap_free(struct strmap *m)
{
    for (size_t i = 0; i < m->n; i++)
        free(m->keys[i]);
    free(m->keys);
    gl_u64map_free(&m->idx);
}

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
    struct strmap frame_ids;
    struct frame_ref *frames; /* by frame id */
    struct strmap row_ids;
    struct row *rows;
    size_t nrows, rows_cap;
    struct vec row_frames;
    struct gl_u64map by_site; /* stack_id, api, kind -> row */
    uint32_t *alloc_row;     /* by allocation index (counted kinds) */
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
    snprintf(key, sizeof key, "%s\x1f%s\x1f%s\x1f%d\x1f%d\x1f%llx", fr->symbol ? fr->symbol : "",
             fr->module ? fr->module : "", fr->file ? fr->file : "", fr->line, fr->python,
             fr->symbol ? 0ULL : (unsigned long long)fr->offset);
    int added;
    int64_t id = strmap_id(&c->frame_ids, key, &added);
    if (id >= 0 && added) {
        struct frame_ref *nf = realloc(c->frames, c->frame_ids.cap * sizeof *nf);
        if (!nf)
            return -1;
        c->frames = nf;
        c->frames[id].f = fr;
    }
    return id;
}

/* The row of (stack's chain of names, category); -1 on out of memory. */
static int64_t row_for(struct ctx *c, int64_t stack_id, const char *category)
{
    const struct gl_stack *st = gl_stack_get(&c->stacks, stack_id);
    char chain[4096], sig[4200]; /* the chain as gl_groups_merge_chains sees it */
    int cat = cat_id(c, category ? category : "other");
    gl_stack_signature(st, chain, sizeof chain);
    snprintf(sig, sizeof sig, "%d\x1f%s", cat, chain);
    int added;
    int64_t id = strmap_id(&c->row_ids, sig, &added);
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
    rw->stack_id = stack_id;
    rw->frames_at = c->row_frames.n;
    rw->nframes = (size_t)st->n;
    for (int i = 0; i < st->n; i++) {
        int64_t f = frame_id(c, &st->f[i]);
        if (f < 0 || vpush(&c->row_frames, f))
            return -1;
    }
    return id;
}

/* Row of every counted allocation, cached by call site (stack, api, kind:
 * what a category can depend on). */
static int rows_of_allocs(struct ctx *c)
{
    struct gl_run *r = c->r;
    c->alloc_row = calloc(r->nallocs + 1, sizeof *c->alloc_row);
    if (!c->alloc_row)
        return -1;
    for (size_t i = 0; i < r->nallocs; i++) {
        const struct gl_alloc *a = &r->allocs[i];
        if (!gl_kind_counts_on_device(a->kind))
            continue;
        uint64_t key = (uint64_t)a->stack_id << 24 | (uint64_t)a->api << 8 | a->kind, row;
        if (!gl_u64map_get(&c->by_site, key, &row)) {
            int64_t id = row_for(c, a->stack_id, gl_categorize(c->o->rules, &c->stacks, a));
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

/* Pass 2, one device at a time: replay and write the changes at each of
 * its moments. */
static int replay_device(struct ctx *c, const struct gl_sweep *sw, struct devtrack *d, int device)
{
    struct gl_run *r = c->r;
    if (devtrack_alloc(d, c->nrows + 1))
        return -1;
    size_t mi = 0;
    for (size_t i = 0; i <= sw->n; i++) {
        int64_t seq = i < sw->n ? gl_sweep_seq(r, sw->ev[i]) : INT64_MAX;
        for (; mi < d->nm && d->m[mi].seq < seq; mi++)
            if (emit_moment(d))
                return -1;
        if (i == sw->n)
            break;
        size_t ai = sw->ev[i] >> 1;
        const struct gl_alloc *a = &r->allocs[ai];
        if (a->device != device)
            continue;
        uint32_t row = c->alloc_row[ai];
        int sign = gl_sweep_is_free(sw->ev[i]) ? -1 : 1;
        d->cb[row] += sign * (int64_t)a->size;
        d->cc[row] += sign;
        d->live += sign * (int64_t)a->size;
        if (!d->is_dirty[row]) {
            d->is_dirty[row] = 1;
            d->dirty[d->ndirty++] = row;
        }
    }
    return 0;
}

static int replay(struct ctx *c, const struct gl_sweep *sw, struct devtrack *dt)
{
    for (int k = 0; k < c->r->ndevs; k++)
        if (replay_device(c, sw, &dt[k], c->r->devs[k].device))
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

static void write_ids(FILE *f, const int64_t *v, size_t n)
{
    fputc('[', f);
    for (size_t i = 0; i < n; i++)
        fprintf(f, "%s%" PRId64, i ? "," : "", v[i]);
    fputc(']', f);
}

/* Frame ids of a stack (for stacks that are not rows: a failed call). */
static int write_stack_frames(FILE *f, struct ctx *c, int64_t stack_id)
{
    const struct gl_stack *st = gl_stack_get(&c->stacks, stack_id);
    fputc('[', f);
    for (int i = 0; i < st->n; i++) {
        int64_t id = frame_id(c, &st->f[i]);
        if (id < 0)
            return -1;
        fprintf(f, "%s%" PRId64, i ? "," : "", id);
    }
    fputc(']', f);
    return 0;
}

/* Ledger groups (merged, categorized) as [[row, bytes, count], ...]. */
static int write_groups(FILE *f, struct ctx *c, const struct gl_groups *g, int times)
{
    fputc('[', f);
    for (size_t i = 0; i < g->n; i++) {
        int64_t row = row_for(c, g->v[i].stack_id, g->v[i].category);
        if (row < 0)
            return -1;
        fprintf(f, "%s[%" PRId64 ",%" PRIu64 ",%" PRIu64, i ? "," : "", row, g->v[i].bytes, g->v[i].count);
        if (times)
            fprintf(f, ",%" PRId64 ",%" PRId64, g->v[i].first_ns - c->r->first_ns, g->v[i].last_ns - c->r->first_ns);
        fputc(']', f);
    }
    fputc(']', f);
    return 0;
}

static int write_device(FILE *f, struct ctx *c, int k, const struct devtrack *d, int nb)
{
    struct gl_run *r = c->r;
    const struct gl_device *dev = &r->devs[k];
    int64_t t0 = r->first_ns;
    fprintf(f, "{\"device\":%d,\"peak\":[%" PRId64 ",%" PRId64 ",%" PRIu64 "],\"end_bytes\":%" PRIu64
               ",\"buckets\":%d,\"moments\":[",
            dev->device, dev->peak_seq, dev->peak_ns - t0, dev->peak, dev->live_end, nb);
    for (size_t i = 0; i < d->nm; i++)
        fprintf(f, "%s[%" PRId64 ",%" PRId64 ",%" PRId64 "]", i ? "," : "", d->m[i].seq, d->m[i].ts - t0,
                d->bytes.v[i]);
    fputs("],\"deltas\":[", f);
    for (size_t i = 0; i < d->nm; i++) {
        fputs(i ? ",[" : "[", f);
        for (int64_t j = d->off.v[i]; j < d->off.v[i + 1]; j++)
            fprintf(f, "%s%" PRId64, j > d->off.v[i] ? "," : "", d->delta.v[j]);
        fputc(']', f);
    }
    fputs("],\"ooms\":[", f);
    int first = 1;
    for (size_t i = 0; i < r->nfails; i++) {
        const struct gl_fail *fl = &r->fails[i];
        if (fl->device != dev->device || fl->op != GL_OP_OOM)
            continue;
        struct gl_groups g;
        gl_ledger_at(r, dev->device, fl->seq, &g);
        gl_groups_merge_chains(&g, &c->stacks);
        gl_groups_categorize(&g, c->o->rules, &c->stacks);
        fprintf(f, "%s{\"seq\":%" PRId64 ",\"t\":%" PRId64 ",\"api\":", first ? "" : ",", fl->seq, fl->ts_ns - t0);
        first = 0;
        gl_json_script_str(f, gl_api_name(fl->api));
        fprintf(f, ",\"size\":%" PRIu64 ",\"result\":%d,\"live\":%" PRIu64 ",\"frames\":", fl->size, fl->result,
                g.total_bytes);
        int rc = write_stack_frames(f, c, fl->stack_id);
        fputs(",\"ledger\":", f);
        rc |= write_groups(f, c, &g, 0);
        fputc('}', f);
        gl_groups_free(&g);
        if (rc)
            return -1;
    }
    struct gl_groups g;
    struct gl_leak_opts lo = {0, 0, 0};
    gl_leaks(r, dev->device, &lo, &g);
    gl_groups_merge_chains(&g, &c->stacks);
    gl_groups_categorize(&g, c->o->rules, &c->stacks);
    uint64_t leak = 0, cached = 0;
    for (size_t i = 0; i < g.n; i++)
        *(gl_is_cached_category(g.v[i].category) ? &cached : &leak) += g.v[i].bytes;
    fputs("],\"leaks\":", f);
    int rc = write_groups(f, c, &g, 1);
    gl_groups_free(&g);
    fprintf(f, ",\"leak_bytes\":%" PRIu64 ",\"cached_bytes\":%" PRIu64, leak, cached);
    int nsteps = gl_growth(r, dev->device, 10, 0, &g);
    gl_groups_categorize(&g, c->o->rules, &c->stacks);
    fprintf(f, ",\"growth\":{\"steps\":%d,\"by_marks\":%s,\"rows\":[", nsteps > 0 ? nsteps : 0,
            r->nmarks >= 2 ? "true" : "false");
    for (size_t i = 0; i < g.n && nsteps > 0; i++) {
        int64_t row = row_for(c, g.v[i].stack_id, g.v[i].category);
        if (row < 0)
            rc = -1;
        fprintf(f, "%s[%" PRId64 ",%" PRIu64 ",[", i ? "," : "", row, g.v[i].bytes);
        for (int s = 0; s < nsteps && g.v[i].steps; s++)
            fprintf(f, "%s%" PRIu64, s ? "," : "", g.v[i].steps[s]);
        fputs("]]", f);
    }
    fputs("]}}", f);
    gl_groups_free(&g);
    return rc;
}

static void write_holes(FILE *f, struct gl_run *r)
{
    struct gl_pool_holes *h;
    size_t n;
    fputs(",\"holes\":[", f);
    if (gl_holes(r, 0, &h, &n)) {
        fputc(']', f);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        char label[96];
        fputs(i ? ",{\"label\":" : "{\"label\":", f);
        gl_json_script_str(f, gl_pool_label(&h[i], label, sizeof label));
        size_t worst = 0;
        for (size_t s = 0; s < h[i].nseries; s++)
            if (h[i].series[s].seq == h[i].worst.seq)
                worst = s;
        fprintf(f, ",\"device\":%d,\"sampled_reserved\":%" PRIu64 ",\"worst\":%zu,\"series\":[", h[i].device,
                h[i].sampled_reserved, worst);
        for (size_t s = 0; s < h[i].nseries; s++) {
            const struct gl_hole_stat *x = &h[i].series[s];
            fprintf(f, "%s[%" PRId64 ",%" PRId64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 "]",
                    s ? "," : "", x->seq, x->ts_ns - r->first_ns, x->reserved, x->live, x->free, x->largest_free,
                    x->holes);
        }
        fputs("]}", f);
    }
    fputc(']', f);
    gl_holes_free(h, n);
}

static void write_annots(FILE *f, struct gl_run *r, const struct gl_annots *an)
{
    size_t dropped = 0, sent = 0;
    fputs(",\"marks\":[", f);
    for (size_t i = 0; i < an->n; i++) {
        const struct gl_annot *x = &an->v[i];
        if (x->op != GL_OP_MARK)
            continue;
        if (sent++ >= MAX_ANNOTS) {
            dropped++;
            continue;
        }
        fprintf(f, "%s[%" PRId64 ",%" PRId64 ",", sent > 1 ? "," : "", x->seq, x->ts_ns - r->first_ns);
        gl_json_script_str(f, x->label);
        fputc(']', f);
    }
    fputs("],\"ranges\":[", f);
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
        fprintf(f, "%s[%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64 ",", sent > 1 ? "," : "", x->seq,
                x->ts_ns - r->first_ns, end_seq, end_ns - r->first_ns);
        gl_json_script_str(f, x->label);
        fprintf(f, ",%d,%d]", x->depth, x->tid);
    }
    fprintf(f, "],\"annotations_left_out\":%zu", dropped);
}

static void write_tables(FILE *f, struct ctx *c)
{
    fputs(",\"categories\":[", f);
    for (int i = 0; i < c->ncats; i++) {
        if (i)
            fputc(',', f);
        gl_json_script_str(f, c->cats[i]);
    }
    fputs("],\"cached_categories\":[", f);
    for (int i = 0, n = 0; i < c->ncats; i++)
        if (gl_is_cached_category(c->cats[i]))
            fprintf(f, "%s%d", n++ ? "," : "", i);
    fputs("],\"frames\":[", f);
    for (size_t i = 0; i < c->frame_ids.n; i++) {
        const struct gl_frame *fr = c->frames[i].f;
        fputs(i ? ",[" : "[", f);
        gl_json_script_str(f, fr->symbol);
        fputc(',', f);
        gl_json_script_str(f, fr->module);
        fputc(',', f);
        gl_json_script_str(f, fr->file);
        fprintf(f, ",%d,%d,%llu]", fr->line > 0 ? fr->line : 0, fr->python ? 1 : 0, (unsigned long long)fr->offset);
    }
    fputs("],\"rows\":[", f);
    for (size_t i = 0; i < c->nrows; i++) {
        fprintf(f, "%s[%d,%" PRId64 ",", i ? "," : "", c->rows[i].cat, c->rows[i].stack_id);
        write_ids(f, c->row_frames.v + c->rows[i].frames_at, c->rows[i].nframes);
        fputc(']', f);
    }
    fputc(']', f);
}

static void ctx_free(struct ctx *c)
{
    gl_stacks_free(&c->stacks);
    strmap_free(&c->frame_ids);
    strmap_free(&c->row_ids);
    free(c->frames);
    free(c->rows);
    free(c->row_frames.v);
    gl_u64map_free(&c->by_site);
    free(c->alloc_row);
}

int gl_html_data_write(FILE *f, struct gl_run *r, const struct gl_html_opts *o)
{
    struct ctx c;
    memset(&c, 0, sizeof c);
    c.r = r;
    c.o = o;
    gl_stacks_init(&c.stacks, r);
    gl_u64map_init(&c.frame_ids.idx);
    gl_u64map_init(&c.row_ids.idx);
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
    int rc = rows_of_allocs(&c) || gl_sweep_build(r, &sw) ? -1 : 0;
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
        fputs("{\"path\":", f);
        gl_json_script_str(f, r->path);
        fprintf(f, ",\"pid\":%" PRId64 ",\"host\":", r->pid);
        gl_json_script_str(f, r->host);
        fputs(",\"rank\":", f);
        gl_json_script_str(f, r->rank);
        fputs(",\"cmdline\":", f);
        gl_json_script_str(f, r->cmdline);
        fprintf(f, ",\"events\":%" PRId64 ",\"dropped\":%" PRId64 ",\"truncated\":%" PRId64 ",\"span_ns\":%" PRId64,
                r->event_count, r->dropped, r->truncated, r->last_ns - r->first_ns);
        if (o->at) {
            fprintf(f, ",\"selected\":{\"seq\":%" PRId64 ",\"t\":%" PRId64 ",\"desc\":", o->at->seq,
                    o->at->ts_ns - r->first_ns);
            gl_json_script_str(f, o->at->desc);
            fputc('}', f);
        } else {
            fputs(",\"selected\":null", f);
        }
        write_annots(f, r, &an);
        fputs(",\"devices\":[", f);
        int n = 0;
        for (int k = 0; k < r->ndevs && !rc; k++) {
            if (o->device != -2 && r->devs[k].device != o->device)
                continue;
            if (n++)
                fputc(',', f);
            rc = write_device(f, &c, k, &dt[k], nb);
        }
        fputc(']', f);
        write_holes(f, r);
        write_tables(f, &c); /* last: the sections above add rows and frames */
        fputs("}", f);
    }
    for (int k = 0; k < r->ndevs; k++)
        devtrack_free(&dt[k]);
    gl_sweep_free(&sw);
    gl_annots_free(&an);
    ctx_free(&c);
    return rc;
}
