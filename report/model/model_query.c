/* model_query.c — what the report asks of a database beyond the event scan
 * of model.c, on demand: a stack's frames, meta keys, the stacks holding
 * Python frames, a pool's sampled reservation. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frames.h"
#include "model.h"
#include "u64map.h"

static char *dup_col(sqlite3_stmt *st, int i)
{
    const unsigned char *t = sqlite3_column_text(st, i);
    return t ? strdup((const char *)t) : NULL;
}

int gl_run_stack_frames(struct gl_run *r, int64_t id, struct gl_frame **frames, int *n)
{
    sqlite3_stmt *q;
    *frames = NULL;
    *n = 0;
    if (sqlite3_prepare_v2(r->db,
                           "SELECT symbol, module, file, line, python, offset FROM stack_frames"
                           " WHERE stack_id = ? ORDER BY depth",
                           -1, &q, NULL) == SQLITE_OK) {
        sqlite3_bind_int64(q, 1, id);
        int cap = 0;
        while (sqlite3_step(q) == SQLITE_ROW) {
            if (*n == cap) {
                cap = cap ? cap * 2 : 16;
                struct gl_frame *nf = realloc(*frames, (size_t)cap * sizeof *nf);
                if (!nf)
                    break;
                *frames = nf;
            }
            struct gl_frame *f = &(*frames)[(*n)++];
            f->symbol = dup_col(q, 0);
            f->module = dup_col(q, 1);
            f->file = dup_col(q, 2);
            f->line = sqlite3_column_int(q, 3);
            f->python = sqlite3_column_int(q, 4);
            f->offset = (uint64_t)sqlite3_column_int64(q, 5);
        }
    }
    sqlite3_finalize(q);
    return 0;
}

int gl_run_meta(struct gl_run *r, const char *key, char *buf, size_t sz)
{
    sqlite3_stmt *q;
    buf[0] = 0;
    if (sqlite3_prepare_v2(r->db, "SELECT value FROM meta WHERE key = ?", -1, &q, NULL) != SQLITE_OK)
        return -1;
    sqlite3_bind_text(q, 1, key, -1, SQLITE_STATIC);
    if (sqlite3_step(q) == SQLITE_ROW && sqlite3_column_text(q, 0))
        snprintf(buf, sz, "%s", (const char *)sqlite3_column_text(q, 0));
    sqlite3_finalize(q);
    return buf[0] ? 0 : -1;
}

void gl_run_python_stacks(struct gl_run *r, struct gl_u64map *out)
{
    sqlite3_stmt *q;
    if (sqlite3_prepare_v2(r->db,
                           "SELECT DISTINCT se.stack_id FROM stack_entries se JOIN frames f ON f.id = se.frame_id"
                           " WHERE f.python",
                           -1, &q, NULL) != SQLITE_OK)
        return;
    while (sqlite3_step(q) == SQLITE_ROW)
        gl_u64map_put(out, (uint64_t)sqlite3_column_int64(q, 0), 1);
    sqlite3_finalize(q);
}

uint64_t gl_run_pool_reserved(struct gl_run *r, uint64_t pool, int device)
{
    sqlite3_stmt *st;
    uint64_t v = 0;
    if (sqlite3_prepare_v2(r->db,
                           "SELECT max(reserved) FROM pool_samples WHERE device = ?1 AND (?2 = 0 OR pool = ?2)", -1,
                           &st, NULL) != SQLITE_OK)
        return 0; /* an older file without the table */
    sqlite3_bind_int(st, 1, device);
    sqlite3_bind_int64(st, 2, (sqlite3_int64)pool);
    if (sqlite3_step(st) == SQLITE_ROW)
        v = (uint64_t)sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return v;
}

const struct gl_alloc *gl_run_alloc_by_seq(const struct gl_run *r, int64_t seq)
{
    size_t lo = 0, hi = r->nallocs;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (r->allocs[mid].seq < seq)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < r->nallocs && r->allocs[lo].seq == seq ? &r->allocs[lo] : NULL;
}
