/* model_block_facts.c — see model_block_facts.h. Two reads of event_log: the block
 * rows' aux, and the free_completed rows, each placed on its allocation
 * (gl_run_alloc_by_seq). */
#include "model_block_facts.h"

#include <stdlib.h>

/* The index of the allocation made by event seq, or -1. */
static long alloc_index(const struct gl_run *r, int64_t seq)
{
    const struct gl_alloc *a = gl_run_alloc_by_seq(r, seq);
    return a ? (long)(a - r->allocs) : -1;
}

struct gl_block_fact *gl_block_facts_load(struct gl_run *r)
{
    struct gl_block_fact *f = calloc(r->nallocs + 1, sizeof *f);
    if (!f)
        return NULL;
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(r->db, "SELECT seq, size, aux FROM event_log WHERE kind = ?1 AND op = ?2", -1, &st, NULL) ==
        SQLITE_OK) {
        sqlite3_bind_int(st, 1, GL_KIND_BLOCK);
        sqlite3_bind_int(st, 2, GL_OP_ALLOC);
        while (sqlite3_step(st) == SQLITE_ROW) {
            long i = alloc_index(r, sqlite3_column_int64(st, 0));
            if (i < 0 || r->allocs[i].kind != GL_KIND_BLOCK)
                continue;
            int64_t asked = sqlite3_column_int64(st, 1), bytes = sqlite3_column_int64(st, 2);
            f[i].requested = asked > 0 ? (uint64_t)asked : 0;
            /* a block holds at least what was asked (a row without aux: as asked) */
            f[i].bytes = bytes > asked ? (uint64_t)bytes : f[i].requested;
        }
        sqlite3_finalize(st);
    }
    /* a block's `free` row is its completion too (reusable at once), unless
     * a free_completed row follows (databases written before the two were
     * one event): the free rows first, then the completions */
    if (sqlite3_prepare_v2(r->db,
                           "SELECT ref_seq, seq, ts_ns FROM event_log WHERE ((op = ?1 AND kind = ?2) OR op = ?3)"
                           " AND ref_seq IS NOT NULL ORDER BY op = ?3, seq",
                           -1, &st, NULL) == SQLITE_OK) {
        sqlite3_bind_int(st, 1, GL_OP_FREE);
        sqlite3_bind_int(st, 2, GL_KIND_BLOCK);
        sqlite3_bind_int(st, 3, GL_OP_FREE_COMPLETED);
        while (sqlite3_step(st) == SQLITE_ROW) {
            long i = alloc_index(r, sqlite3_column_int64(st, 0));
            int64_t seq = sqlite3_column_int64(st, 1);
            const struct gl_alloc *a = i >= 0 ? &r->allocs[i] : NULL;
            /* the first completion after the tensor's free; the rest cannot be */
            if (!a || a->kind != GL_KIND_BLOCK || !a->free_seq || seq < a->free_seq ||
                (f[i].done_seq && f[i].done_seq != a->free_seq))
                continue;
            f[i].done_seq = seq;
            f[i].done_ns = sqlite3_column_int64(st, 2);
        }
        sqlite3_finalize(st);
    }
    return f;
}
