/* model_rows.c — see model_rows.h. */
#include "model_rows.h"

#include <stdlib.h>
#include <string.h>

#include "schema.h"

struct gl_ctx_row {
    int64_t tid, api, stream, pool, result;
    int present; /* 1; 0: not read; -1: there is none */
};

/* an array of contexts by id: at most this many unused slots per context */
#define CTX_SPARSE 4
#define CTX_SLACK 1024

int gl_rows_direct_ok(sqlite3 *db)
{
    sqlite3_stmt *st;
    int ok = 0;
    if (sqlite3_prepare_v2(db,
                           "SELECT (SELECT sql FROM sqlite_master WHERE type = 'view' AND name = 'event_log'),"
                           " (SELECT count(*) FROM sqlite_master WHERE type = 'table'"
                           " AND name IN ('event_rows', 'event_contexts'))",
                           -1, &st, NULL) != SQLITE_OK)
        return 0;
    if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_int(st, 1) == 2) {
        const unsigned char *sql = sqlite3_column_text(st, 0);
        ok = sql && !strcmp((const char *)sql, GL_EVENT_LOG_VIEW);
    }
    sqlite3_finalize(st);
    return ok;
}

const char *gl_rows_table(sqlite3 *db)
{
    return gl_rows_direct_ok(db) ? "event_rows" : "event_log";
}

/* Every context into an array by id: 0, or -1 when the ids do not suit an
 * array (negative, too sparse) or memory ran out: then the view is read. */
static int load_contexts(struct gl_rows *g, sqlite3 *db)
{
    sqlite3_stmt *st;
    int64_t lo = 0, hi = -1, n = 0;
    if (sqlite3_prepare_v2(db, "SELECT min(id), max(id), count(*) FROM event_contexts", -1, &st, NULL) != SQLITE_OK)
        return -1;
    if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL) {
        lo = sqlite3_column_int64(st, 0);
        hi = sqlite3_column_int64(st, 1);
        n = sqlite3_column_int64(st, 2);
    }
    sqlite3_finalize(st);
    if (lo < 0 || hi >= n * CTX_SPARSE + CTX_SLACK)
        return -1;
    g->nctx = (size_t)(hi + 1);
    g->ctx = calloc(g->nctx + 1, sizeof *g->ctx);
    if (!g->ctx || sqlite3_prepare_v2(db, "SELECT id, tid, api, stream, pool, result FROM event_contexts", -1, &st,
                                      NULL) != SQLITE_OK)
        return -1;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        int64_t id = sqlite3_column_int64(st, 0);
        if (id < 0 || (uint64_t)id >= g->nctx)
            continue; /* one added since: looked up when a row names it */
        g->ctx[id] = (struct gl_ctx_row){sqlite3_column_int64(st, 1), sqlite3_column_int64(st, 2),
                                         sqlite3_column_int64(st, 3), sqlite3_column_int64(st, 4),
                                         sqlite3_column_int64(st, 5), 1};
    }
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : -1;
}

int gl_model_rows_open(struct gl_rows *g, sqlite3 *db)
{
    memset(g, 0, sizeof *g);
    if (gl_rows_direct_ok(db) && !load_contexts(g, db)) {
        g->direct = 1;
        int rc = sqlite3_prepare_v2(db,
                                    "SELECT seq, ts_ns, context, op, kind, device, addr, size, stack_id, ref_seq, aux,"
                                    " range_seq FROM event_rows ORDER BY seq",
                                    -1, &g->st, NULL);
        if (rc != SQLITE_OK) { /* the caller closes nothing it could not open */
            free(g->ctx);
            g->ctx = NULL;
            g->nctx = 0;
        }
        return rc;
    }
    free(g->ctx);
    g->ctx = NULL;
    g->nctx = 0;
    return sqlite3_prepare_v2(db,
                              "SELECT seq, ts_ns, tid, op, api, kind, device, stream, pool, addr, size, result,"
                              " stack_id, ref_seq, aux, range_seq FROM event_log ORDER BY seq",
                              -1, &g->st, NULL);
}

/* A context the array lacks (one added after it was read, while the scan's
 * snapshot of the database is newer): looked up in that snapshot, kept in
 * the array when it fits there, absent remembered. */
static const struct gl_ctx_row *look_up(struct gl_rows *g, int64_t id, struct gl_ctx_row *spare)
{
    struct gl_ctx_row *c = (uint64_t)id < g->nctx ? &g->ctx[id] : spare;
    *c = (struct gl_ctx_row){0, 0, 0, 0, 0, -1};
    if (!g->one && sqlite3_prepare_v2(sqlite3_db_handle(g->st),
                                      "SELECT tid, api, stream, pool, result FROM event_contexts WHERE id = ?", -1,
                                      &g->one, NULL) != SQLITE_OK)
        return c;
    sqlite3_bind_int64(g->one, 1, id);
    if (sqlite3_step(g->one) == SQLITE_ROW)
        *c = (struct gl_ctx_row){sqlite3_column_int64(g->one, 0), sqlite3_column_int64(g->one, 1),
                                 sqlite3_column_int64(g->one, 2), sqlite3_column_int64(g->one, 3),
                                 sqlite3_column_int64(g->one, 4), 1};
    sqlite3_reset(g->one);
    return c;
}

/* The row's context: its columns, or zeros (NULL) where the row names
 * none that exists, as the view's LEFT JOIN gives. Only an integer id
 * matches one (a context of another type equals no id). */
static void read_context(struct gl_rows *g, int col)
{
    static const struct gl_ctx_row none;
    struct gl_ctx_row spare;
    const struct gl_ctx_row *c = &none;
    if (sqlite3_column_type(g->st, col) == SQLITE_INTEGER) {
        int64_t id = sqlite3_column_int64(g->st, col);
        if (id >= 0 && (uint64_t)id < g->nctx && g->ctx[id].present)
            c = &g->ctx[id];
        else
            c = look_up(g, id, &spare);
        if (c->present < 0)
            c = &none;
    }
    g->v[GL_COL_TID] = c->tid;
    g->v[GL_COL_API] = c->api;
    g->v[GL_COL_STREAM] = c->stream;
    g->v[GL_COL_POOL] = c->pool;
    g->v[GL_COL_RESULT] = c->result;
}

int gl_rows_next(struct gl_rows *g)
{
    int rc = sqlite3_step(g->st);
    if (rc != SQLITE_ROW)
        return rc;
    sqlite3_stmt *st = g->st;
    if (!g->direct) {
        for (int i = 0; i < GL_COL_COUNT; i++)
            g->v[i] = sqlite3_column_int64(st, i);
        g->ref_null = sqlite3_column_type(st, GL_COL_REF) == SQLITE_NULL;
        return rc;
    }
    static const int col[] = {GL_COL_SEQ, GL_COL_TS, -1, GL_COL_OP, GL_COL_KIND, GL_COL_DEVICE, GL_COL_ADDR,
                              GL_COL_SIZE, GL_COL_STACK, GL_COL_REF, GL_COL_AUX, GL_COL_RANGE};
    for (int i = 0; i < (int)(sizeof col / sizeof *col); i++)
        if (col[i] >= 0)
            g->v[col[i]] = sqlite3_column_int64(st, i);
    read_context(g, 2);
    g->ref_null = sqlite3_column_type(st, 9) == SQLITE_NULL;
    return rc;
}

void gl_model_rows_close(struct gl_rows *g)
{
    sqlite3_finalize(g->st);
    sqlite3_finalize(g->one);
    g->st = g->one = NULL;
    free(g->ctx);
    g->ctx = NULL;
}
