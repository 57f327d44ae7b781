/* model_tables.c — the tables beside event_log that the verbs read, loaded
 * with the events (model.h, gl_run_load_tables): every stack with its
 * frames (the frames table once, each stack's entries indices into it,
 * the strings kept once),
 * the meta keys, each pool's highest sampled reservation, the caching
 * allocator's samples, and each device's usage figures. A
 * table an older database lacks loads as empty. After this nothing reads
 * the database to render: model_query.c answers from these arrays. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frames.h"
#include "model.h"
#include "model_moments.h"
#include "model_growth.h"
#include "model_heaps.h"
#include "model_usage.h"
#include "grow.h"
#include "strmap.h"
#include "reader.h"
#include "u64map.h"


static char *dup_col(sqlite3_stmt *st, int i)
{
    const unsigned char *t = sqlite3_column_text(st, i);
    return t ? strdup((const char *)t) : NULL;
}

/* A frame's string, kept once however many frames name it (a module's
 * path is every one of its frames'); NULL stays NULL. */
static char *intern_col(struct gl_run *r, sqlite3_stmt *st, int i, int *oom)
{
    const unsigned char *t = sqlite3_column_text(st, i);
    if (!t)
        return NULL;
    int added;
    int64_t id = gl_strmap_id(&r->frame_strings, (const char *)t, &added);
    if (id < 0) {
        *oom = 1;
        return NULL;
    }
    return r->frame_strings.keys[id];
}

/* The frames table in id order (ids[k] the id of frames[k], ascending). */
struct frame_table {
    struct gl_frame *frames;
    int64_t *ids;
    size_t n, cap, icap;
};

#define FRAME_COLUMNS "SELECT f.id, f.symbol, m.path, f.file, f.line, f.python, f.rel" \
                      " FROM frames f LEFT JOIN modules m ON m.id = f.module_id"

/* The frame of q's row appended. 0, or -1 out of memory. */
static int add_frame(struct gl_run *r, struct frame_table *t, sqlite3_stmt *q)
{
    if (gl_grow((void **)&t->frames, &t->cap, t->n, sizeof *t->frames, 64) ||
        gl_grow((void **)&t->ids, &t->icap, t->n, sizeof *t->ids, 64))
        return -1;
    int oom = 0;
    t->ids[t->n] = sqlite3_column_int64(q, 0);
    struct gl_frame *f = &t->frames[t->n++];
    f->symbol = intern_col(r, q, 1, &oom);
    f->module = intern_col(r, q, 2, &oom);
    f->file = intern_col(r, q, 3, &oom);
    f->line = sqlite3_column_int(q, 4);
    f->python = sqlite3_column_int(q, 5);
    f->offset = (uint64_t)sqlite3_column_int64(q, 6);
    return oom ? -1 : 0;
}

/* Every frame, in id order. */
static int load_frames(struct gl_run *r, struct frame_table *t)
{
    sqlite3_stmt *q;
    int rc = 0;
    if (sqlite3_prepare_v2(r->db, FRAME_COLUMNS " ORDER BY f.id", -1, &q, NULL) != SQLITE_OK) {
        sqlite3_finalize(q);
        return 0; /* no frames: no stacks */
    }
    while (!rc && sqlite3_step(q) == SQLITE_ROW)
        rc = add_frame(r, t, q);
    sqlite3_finalize(q);
    return rc;
}

/* The frame of an id (NULL: none). Ids are the table's rowids, so nearly
 * always dense: ids[id - ids[0]] first, then a binary search. */
static const struct gl_frame *frame_of(const struct frame_table *t, int64_t id)
{
    if (!t->n || id < t->ids[0] || id > t->ids[t->n - 1])
        return NULL;
    uint64_t guess = (uint64_t)id - (uint64_t)t->ids[0];
    if (guess < t->n && t->ids[guess] == id)
        return &t->frames[guess];
    size_t lo = 0, hi = t->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (t->ids[mid] < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < t->n && t->ids[lo] == id ? &t->frames[lo] : NULL;
}

/* The stacks being built: every entry, the stacks' in turn. */
struct entries {
    uint32_t *all;
    size_t n, cap, scap;
};

/* Stack id's next entry, naming frame_id (left out when no frame has that
 * id, as the stack_frames view leaves it out; a stack with no entry left
 * is no stack). 0, or -1 out of memory. */
static int add_entry(struct gl_run *r, const struct frame_table *t, struct entries *e, int64_t id, int64_t frame_id)
{
    const struct gl_frame *f = frame_of(t, frame_id);
    if (!f)
        return 0;
    if (gl_grow((void **)&e->all, &e->cap, e->n, sizeof *e->all, 256))
        return -1;
    e->all[e->n++] = (uint32_t)(f - t->frames);
    if (!r->nstacks || r->stacks[r->nstacks - 1].id != id) {
        if (gl_grow((void **)&r->stacks, &e->scap, r->nstacks, sizeof *r->stacks, 64))
            return -1;
        struct gl_stack *st = &r->stacks[r->nstacks++];
        memset(st, 0, sizeof *st);
        st->id = id;
        st->frames = t->frames;
    }
    r->stacks[r->nstacks - 1].n++;
    return 0;
}

/* The stacks and frames into the run (their entries in turn). */
static void keep_stacks(struct gl_run *r, struct frame_table *t, struct entries *e)
{
    size_t at = 0;
    for (size_t i = 0; i < r->nstacks; i++) {
        r->stacks[i].fi = e->all + at;
        at += (size_t)r->stacks[i].n;
    }
    r->stack_entries = e->all;
    r->frames = t->frames;
    r->nframes = t->n;
    free(t->ids);
}

/* Every stack's entries in (stack, depth) order, each the index of its
 * frame in r->frames (4 bytes an entry, however long the strings). */
static int load_stacks(struct gl_run *r)
{
    struct frame_table t = {0};
    struct entries e = {0};
    int rc = load_frames(r, &t);
    sqlite3_stmt *q = NULL;
    if (t.n > UINT32_MAX) /* entries are 32-bit indices: past them is past any memory */
        rc = -1;
    if (!rc && t.n &&
        sqlite3_prepare_v2(r->db, "SELECT stack_id, frame_id FROM stack_entries ORDER BY stack_id, depth", -1, &q,
                           NULL) == SQLITE_OK)
        while (!rc && sqlite3_step(q) == SQLITE_ROW)
            rc = add_entry(r, &t, &e, sqlite3_column_int64(q, 0), sqlite3_column_int64(q, 1));
    sqlite3_finalize(q);
    keep_stacks(r, &t, &e);
    return rc;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* The keys of a set as int64_t, ascending (NULL: out of memory). */
static int64_t *sorted_keys(const struct gl_u64map *m, size_t *n)
{
    int64_t *v = malloc((m->count + 3) * sizeof *v);
    *n = 0;
    if (v && m->has_zero) /* the two marker keys, kept outside the table */
        v[(*n)++] = 0;
    if (v && m->has_max)
        v[(*n)++] = -1;
    for (size_t i = 0; v && i < m->cap; i++)
        if (m->keys[i] && m->keys[i] != UINT64_MAX)
            v[(*n)++] = (int64_t)m->keys[i];
    if (v && *n)
        qsort(v, *n, sizeof *v, cmp_i64);
    return v;
}

/* Only the stacks of `want` and their frames, each looked up by its key:
 * the few stacks a live-only load keeps out of however many the run
 * made. 0, or -1 out of memory. */
static int load_stacks_of(struct gl_run *r, const struct gl_u64map *want)
{
    struct frame_table t = {0};
    struct entries e = {0};
    struct gl_u64map frame_ids;
    gl_u64map_init(&frame_ids);
    size_t nst = 0, nraw = 0, rcap = 0, nfr = 0;
    int64_t *ids = sorted_keys(want, &nst), *fids = NULL;
    int64_t(*raw)[2] = NULL; /* (stack id, frame id) of each entry, in order */
    sqlite3_stmt *q = NULL, *fq = NULL;
    int rc = ids ? 0 : -1;
    if (!rc && sqlite3_prepare_v2(r->db, "SELECT frame_id FROM stack_entries WHERE stack_id = ? ORDER BY depth", -1,
                                  &q, NULL) == SQLITE_OK)
        for (size_t i = 0; !rc && i < nst; i++) {
            sqlite3_bind_int64(q, 1, ids[i]);
            while (!rc && sqlite3_step(q) == SQLITE_ROW) {
                int64_t fid = sqlite3_column_int64(q, 0);
                rc = gl_grow((void **)&raw, &rcap, nraw, sizeof *raw, 256) ||
                     gl_u64map_put(&frame_ids, (uint64_t)fid, 1);
                if (!rc) {
                    raw[nraw][0] = ids[i];
                    raw[nraw++][1] = fid;
                }
            }
            sqlite3_reset(q);
        }
    if (!rc && !(fids = sorted_keys(&frame_ids, &nfr)))
        rc = -1;
    if (!rc && nfr && sqlite3_prepare_v2(r->db, FRAME_COLUMNS " WHERE f.id = ?", -1, &fq, NULL) == SQLITE_OK)
        for (size_t i = 0; !rc && i < nfr; i++) { /* ascending: the table's order */
            sqlite3_bind_int64(fq, 1, fids[i]);
            if (sqlite3_step(fq) == SQLITE_ROW)
                rc = add_frame(r, &t, fq);
            sqlite3_reset(fq);
        }
    for (size_t i = 0; !rc && i < nraw; i++)
        rc = add_entry(r, &t, &e, raw[i][0], raw[i][1]);
    sqlite3_finalize(q);
    sqlite3_finalize(fq);
    keep_stacks(r, &t, &e);
    gl_u64map_free(&frame_ids);
    free(ids);
    free(fids);
    free(raw);
    return rc;
}

static int load_meta(struct gl_run *r)
{
    sqlite3_stmt *q;
    size_t cap = 0;
    int rc = 0;
    if (sqlite3_prepare_v2(r->db, "SELECT key, value FROM meta", -1, &q, NULL) == SQLITE_OK)
        while (!rc && sqlite3_step(q) == SQLITE_ROW) {
            if (gl_grow((void **)&r->meta, &cap, r->nmeta, sizeof *r->meta, 64)) {
                rc = -1;
                break;
            }
            struct gl_meta *m = &r->meta[r->nmeta++];
            m->key = dup_col(q, 0);
            m->value = dup_col(q, 1);
        }
    sqlite3_finalize(q);
    return rc;
}

static int load_pools(struct gl_run *r)
{
    sqlite3_stmt *q;
    size_t cap = 0;
    int rc = 0;
    if (sqlite3_prepare_v2(r->db, "SELECT device, pool, max(reserved) FROM pool_samples GROUP BY device, pool", -1,
                           &q, NULL) == SQLITE_OK) /* else an older file without the table */
        while (!rc && sqlite3_step(q) == SQLITE_ROW) {
            if (sqlite3_column_type(q, 2) == SQLITE_NULL)
                continue; /* no reservation sampled: max() of nothing */
            if (gl_grow((void **)&r->pools, &cap, r->npools, sizeof *r->pools, 64)) {
                rc = -1;
                break;
            }
            struct gl_pool_reserved *p = &r->pools[r->npools++];
            p->device = sqlite3_column_int64(q, 0);
            p->pool = sqlite3_column_int64(q, 1);
            p->reserved = sqlite3_column_int64(q, 2);
        }
    sqlite3_finalize(q);
    return rc;
}

static void read_sample(sqlite3_stmt *q, struct gl_alloc_sample *s)
{
    s->seq = sqlite3_column_int64(q, 1);
    s->ts_ns = sqlite3_column_int64(q, 2);
    uint64_t *v[] = {&s->reserved, &s->allocated, &s->active, &s->requested, &s->cached_free, &s->holes,
                     &s->largest_hole};
    for (int i = 0; i < 7; i++) { /* a damaged row reads as 0, never below */
        int64_t x = sqlite3_column_int64(q, i + 3);
        *v[i] = x > 0 ? (uint64_t)x : 0;
    }
}

static int load_samples(struct gl_run *r)
{
    sqlite3_stmt *q;
    size_t cap = 0;
    int rc = 0;
    if (sqlite3_prepare_v2(r->db,
                           "SELECT device, seq, ts_ns, reserved, allocated, active, requested, cached_free, holes,"
                           " largest_hole FROM allocator_samples ORDER BY device, seq, rowid",
                           -1, &q, NULL) == SQLITE_OK) /* else an older database */
        while (!rc && sqlite3_step(q) == SQLITE_ROW) {
            if (gl_grow((void **)&r->samples, &cap, r->nsamples, sizeof *r->samples, 64)) {
                rc = -1;
                break;
            }
            struct gl_device_sample *d = &r->samples[r->nsamples++];
            d->device = sqlite3_column_int64(q, 0);
            read_sample(q, &d->s);
        }
    sqlite3_finalize(q);
    return rc; /* allocator_expandable: model.c reads it in the event scan */
}

/* device_samples' free and total bytes (cudaMemGetInfo at each sample), for
 * gl_run_device_sample (the device's free memory at a failure) and
 * gl_run_device_total (how much room growth has). */
static int load_free_samples(struct gl_run *r)
{
    sqlite3_stmt *q;
    size_t cap = 0;
    int rc = 0;
    if (sqlite3_prepare_v2(r->db,
                           "SELECT device, ts_ns, free, total FROM device_samples"
                           " ORDER BY device, ts_ns, rowid",
                           -1, &q, NULL) == SQLITE_OK) /* else an older file without the table */
        while (!rc && sqlite3_step(q) == SQLITE_ROW) {
            if (gl_grow((void **)&r->free_samples, &cap, r->nfree_samples, sizeof *r->free_samples, 64)) {
                rc = -1;
                break;
            }
            struct gl_free_sample *d = &r->free_samples[r->nfree_samples++];
            d->device = sqlite3_column_int64(q, 0);
            d->ts_ns = sqlite3_column_int64(q, 1);
            int64_t x = sqlite3_column_int64(q, 2), t = sqlite3_column_int64(q, 3);
            d->has_free = sqlite3_column_type(q, 2) != SQLITE_NULL;
            d->free_bytes = x > 0 ? (uint64_t)x : 0;
            d->total_bytes = t > 0 ? (uint64_t)t : 0;
        }
    sqlite3_finalize(q);
    return rc;
}

int gl_run_load_tables(struct gl_run *r, char *err, size_t errsz)
{
    if ((!r->no_stacks && !r->live_only && load_stacks(r)) || load_meta(r) || load_pools(r) || load_samples(r) || load_free_samples(r)) {
        snprintf(err, errsz, "%s: out of memory while loading", r->path);
        return -1;
    }
    for (int i = 0; i < r->ndevs; i++)
        gl_usage_read(r, &r->devs[i]);
    return 0;
}

/* Put a stack id in the set (any id: a damaged file's stack 0 is read as
 * a full load reads it). */
static int want_stack(struct gl_u64map *m, int64_t id)
{
    return gl_u64map_put(m, (uint64_t)id, 1);
}

int gl_run_load_live_stacks(struct gl_run *r)
{
    struct gl_u64map want;
    gl_u64map_init(&want);
    int rc = 0;
    for (size_t i = 0; !rc && i < r->nallocs; i++)
        rc = want_stack(&want, r->allocs[i].stack_id);
    for (size_t i = 0; !rc && i < r->nfails; i++)
        rc = want_stack(&want, r->fails[i].stack_id);
    for (size_t i = 0; !rc && r->heaps && i < r->heaps->nheaps; i++)
        rc = want_stack(&want, r->heaps->heaps[i].stack_id);
    for (size_t i = 0; !rc && r->heaps && i < r->heaps->nregions; i++)
        rc = want_stack(&want, r->heaps->regions[i].stack_id);
    for (size_t i = 0; !rc && r->growth && i < r->growth->n; i++)
        rc = want_stack(&want, r->growth->v[i].sample.stack_id);
    const struct gl_u64map *made = r->moments ? &r->moments->stack_allocs : NULL; /* the Python share's */
    for (size_t i = 0; !rc && made && i < made->cap; i++)
        if (made->keys[i] && made->keys[i] != UINT64_MAX)
            rc = want_stack(&want, (int64_t)made->keys[i]);
    /* a look-up per stack and frame costs several rows of a scan: past a
     * quarter of the stacks, every stack is read */
    if (!rc)
        rc = (int64_t)want.count * 4 > gl_db_int(r->db, "SELECT count(*) FROM stacks", 0) ? load_stacks(r)
                                                                                          : load_stacks_of(r, &want);
    gl_u64map_free(&want);
    return rc;
}

void gl_run_free_tables(struct gl_run *r)
{
    gl_strmap_free(&r->frame_strings);
    free(r->frames);
    free(r->free_samples);
    free(r->stack_entries);
    free(r->stacks);
    for (size_t i = 0; i < r->nmeta; i++) {
        free(r->meta[i].key);
        free(r->meta[i].value);
    }
    free(r->meta);
    free(r->pools);
    free(r->samples);
}
