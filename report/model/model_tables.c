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
#include "model_usage.h"
#include "grow.h"
#include "strmap.h"


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
    size_t n;
};

static int load_frames(struct gl_run *r, struct frame_table *t)
{
    sqlite3_stmt *q;
    size_t cap = 0, icap = 0;
    int rc = 0;
    if (sqlite3_prepare_v2(r->db,
                           "SELECT f.id, f.symbol, m.path, f.file, f.line, f.python, f.rel"
                           " FROM frames f LEFT JOIN modules m ON m.id = f.module_id ORDER BY f.id",
                           -1, &q, NULL) != SQLITE_OK) {
        sqlite3_finalize(q);
        return 0; /* no frames: no stacks */
    }
    while (!rc && sqlite3_step(q) == SQLITE_ROW) {
        if (gl_grow((void **)&t->frames, &cap, t->n, sizeof *t->frames, 64) ||
            gl_grow((void **)&t->ids, &icap, t->n, sizeof *t->ids, 64)) {
            rc = -1;
            break;
        }
        int oom = 0;
        t->ids[t->n] = sqlite3_column_int64(q, 0);
        struct gl_frame *f = &t->frames[t->n++];
        f->symbol = intern_col(r, q, 1, &oom);
        f->module = intern_col(r, q, 2, &oom);
        f->file = intern_col(r, q, 3, &oom);
        f->line = sqlite3_column_int(q, 4);
        f->python = sqlite3_column_int(q, 5);
        f->offset = (uint64_t)sqlite3_column_int64(q, 6);
        rc = oom ? -1 : 0;
    }
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

/* Every stack's entries in (stack, depth) order, each the index of its
 * frame in r->frames (4 bytes an entry, however long the strings); an
 * entry naming no frame is left out, as the stack_frames view leaves it
 * out. */
static int load_stacks(struct gl_run *r)
{
    struct frame_table t = {0};
    int rc = load_frames(r, &t);
    r->frames = t.frames;
    r->nframes = t.n;
    sqlite3_stmt *q = NULL;
    if (t.n > UINT32_MAX) /* entries are 32-bit indices: past them is past any memory */
        rc = -1;
    if (!rc && t.n &&
        sqlite3_prepare_v2(r->db, "SELECT stack_id, frame_id FROM stack_entries ORDER BY stack_id, depth", -1, &q,
                           NULL) == SQLITE_OK) {
        size_t cap = 0, fcap = 0;
        uint32_t *all = NULL; /* every entry, the stacks' in turn */
        size_t nall = 0;
        while (!rc && sqlite3_step(q) == SQLITE_ROW) {
            int64_t id = sqlite3_column_int64(q, 0);
            const struct gl_frame *f = frame_of(&t, sqlite3_column_int64(q, 1));
            if (!f)
                continue;
            if (gl_grow((void **)&all, &fcap, nall, sizeof *all, 256)) {
                rc = -1;
                break;
            }
            all[nall++] = (uint32_t)(f - t.frames);
            if (!r->nstacks || r->stacks[r->nstacks - 1].id != id) {
                if (gl_grow((void **)&r->stacks, &cap, r->nstacks, sizeof *r->stacks, 64)) {
                    rc = -1;
                    break;
                }
                struct gl_stack *st = &r->stacks[r->nstacks++];
                memset(st, 0, sizeof *st);
                st->id = id;
                st->frames = t.frames;
            }
            r->stacks[r->nstacks - 1].n++;
        }
        size_t at = 0; /* the entries are the stacks' in turn */
        for (size_t i = 0; i < r->nstacks; i++) {
            r->stacks[i].fi = all + at;
            at += (size_t)r->stacks[i].n;
        }
        r->stack_entries = all;
    }
    sqlite3_finalize(q);
    free(t.ids);
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
    if ((!r->no_stacks && load_stacks(r)) || load_meta(r) || load_pools(r) || load_samples(r) || load_free_samples(r)) {
        snprintf(err, errsz, "%s: out of memory while loading", r->path);
        return -1;
    }
    for (int i = 0; i < r->ndevs; i++)
        gl_usage_read(r, &r->devs[i]);
    return 0;
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
