/* model_tables.c — the tables beside event_log that the verbs read, loaded
 * with the events (model.h, gl_run_load_tables): every stack with its
 * frames (the frames table once, each stack's entries pointing into it),
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
#include "u64map.h"


static char *dup_col(sqlite3_stmt *st, int i)
{
    const unsigned char *t = sqlite3_column_text(st, i);
    return t ? strdup((const char *)t) : NULL;
}

/* The frames table in id order: r->frames, and id -> index in ids. */
static int load_frames(struct gl_run *r, struct gl_u64map *ids)
{
    sqlite3_stmt *q;
    size_t cap = 0;
    int rc = 0;
    if (sqlite3_prepare_v2(r->db,
                           "SELECT f.id, f.symbol, m.path, f.file, f.line, f.python, f.rel"
                           " FROM frames f LEFT JOIN modules m ON m.id = f.module_id ORDER BY f.id",
                           -1, &q, NULL) != SQLITE_OK) {
        sqlite3_finalize(q);
        return 0; /* no frames: no stacks */
    }
    while (!rc && sqlite3_step(q) == SQLITE_ROW) {
        if (gl_grow((void **)&r->frames, &cap, r->nframes, sizeof *r->frames, 64) ||
            gl_u64map_put(ids, (uint64_t)sqlite3_column_int64(q, 0), r->nframes)) {
            rc = -1;
            break;
        }
        struct gl_frame *f = &r->frames[r->nframes++];
        f->symbol = dup_col(q, 1);
        f->module = dup_col(q, 2);
        f->file = dup_col(q, 3);
        f->line = sqlite3_column_int(q, 4);
        f->python = sqlite3_column_int(q, 5);
        f->offset = (uint64_t)sqlite3_column_int64(q, 6);
    }
    sqlite3_finalize(q);
    return rc;
}

/* Every stack's entries in (stack, depth) order, each a copy of its frame
 * (the strings stay the frames table's); an entry naming no frame is left
 * out, as the stack_frames view leaves it out. */
static int load_stacks(struct gl_run *r)
{
    struct gl_u64map ids;
    gl_u64map_init(&ids);
    int rc = load_frames(r, &ids);
    sqlite3_stmt *q = NULL;
    if (!rc && r->nframes &&
        sqlite3_prepare_v2(r->db, "SELECT stack_id, frame_id FROM stack_entries ORDER BY stack_id, depth", -1, &q,
                           NULL) == SQLITE_OK) {
        size_t cap = 0, fcap = 0;
        struct gl_frame *all = NULL; /* every entry, the stacks' in turn */
        size_t nall = 0;
        while (!rc && sqlite3_step(q) == SQLITE_ROW) {
            int64_t id = sqlite3_column_int64(q, 0);
            uint64_t at;
            if (!gl_u64map_get(&ids, (uint64_t)sqlite3_column_int64(q, 1), &at))
                continue;
            if (gl_grow((void **)&all, &fcap, nall, sizeof *all, 64)) {
                rc = -1;
                break;
            }
            all[nall++] = r->frames[at];
            if (!r->nstacks || r->stacks[r->nstacks - 1].id != id) {
                if (gl_grow((void **)&r->stacks, &cap, r->nstacks, sizeof *r->stacks, 64)) {
                    rc = -1;
                    break;
                }
                struct gl_stack *st = &r->stacks[r->nstacks++];
                memset(st, 0, sizeof *st);
                st->id = id;
            }
            r->stacks[r->nstacks - 1].n++;
        }
        size_t at = 0; /* the entries are the stacks' in turn */
        for (size_t i = 0; i < r->nstacks; i++) {
            r->stacks[i].f = all + at;
            at += (size_t)r->stacks[i].n;
        }
        r->stack_frames = all;
    }
    sqlite3_finalize(q);
    gl_u64map_free(&ids);
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
    if (load_stacks(r) || load_meta(r) || load_pools(r) || load_samples(r) || load_free_samples(r)) {
        snprintf(err, errsz, "%s: out of memory while loading", r->path);
        return -1;
    }
    for (int i = 0; i < r->ndevs; i++)
        gl_usage_read(r, &r->devs[i]);
    return 0;
}

void gl_run_free_tables(struct gl_run *r)
{
    for (size_t i = 0; i < r->nframes; i++) {
        free(r->frames[i].symbol);
        free(r->frames[i].module);
        free(r->frames[i].file);
    }
    free(r->frames);
    free(r->free_samples);
    free(r->stack_frames);
    free(r->stacks);
    for (size_t i = 0; i < r->nmeta; i++) {
        free(r->meta[i].key);
        free(r->meta[i].value);
    }
    free(r->meta);
    free(r->pools);
    free(r->samples);
}
