/* model_rows.c — see model_rows.h. */
#include "model_rows.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pack.h"
#include "reader.h"
#include "schema.h"

/* schema 6: the pack being read, and where the table's rows stand */
struct gl_pack_rows {
    struct gl_row rows[GL_PACK_ROWS];
    int n, at;
    int plain_have, plain_done, packs_done;
    int lean;
};

struct gl_ctx_row {
    int64_t tid, api, stream, pool, result;
    int present; /* 1; 0: not read; -1: there is none */
};

/* an array of contexts by id: at most this many unused slots per context */
#define CTX_SPARSE 4
#define CTX_SLACK 1024

/* The text of a view as sqlite_master keeps it is text (schema.h). */
static int view_is(sqlite3 *db, const char *name, const char *text)
{
    sqlite3_stmt *st;
    int ok = 0;
    if (sqlite3_prepare_v2(db, "SELECT sql FROM sqlite_master WHERE type = 'view' AND name = ?", -1, &st, NULL) !=
        SQLITE_OK)
        return 0;
    sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
    if (sqlite3_step(st) == SQLITE_ROW) {
        const unsigned char *sql = sqlite3_column_text(st, 0);
        ok = sql && !strcmp((const char *)sql, text);
    }
    sqlite3_finalize(st);
    return ok;
}

static int64_t tables_named(sqlite3 *db, const char *names)
{
    char sql[256];
    snprintf(sql, sizeof sql, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN (%s)", names);
    return gl_db_int(db, sql, 0);
}

int gl_rows_direct_ok(sqlite3 *db)
{
    if (!view_is(db, "event_log", GL_EVENT_LOG_VIEW))
        return 0;
    if (tables_named(db, "'event_rows', 'event_contexts'") == 2)
        return 1;
    return view_is(db, "event_rows", GL_EVENT_ROWS_VIEW) &&
                   tables_named(db, "'event_rows_table', 'event_contexts', 'event_packs'") == 3
               ? 2
               : 0;
}

int64_t gl_rows_max_seq(sqlite3 *db)
{
    switch (gl_rows_direct_ok(db)) {
    case 1:
        return gl_db_int(db, "SELECT max(seq) FROM event_rows", 0);
    case 2:
        return gl_db_int(db,
                         "SELECT max(coalesce((SELECT max(seq) FROM event_rows_table), 0),"
                         " coalesce((SELECT seq_hi FROM event_packs ORDER BY seq_lo DESC LIMIT 1), 0))",
                         0);
    default:
        return gl_db_int(db, "SELECT max(seq) FROM event_log", 0);
    }
}

/* ts_ns of the first (last) row by seq within [lo, hi] in a statement's
 * rows (seq, ts_ns); *seq_out its seq. 0: found. */
static int first_in(sqlite3_stmt *st, int64_t lo, int64_t hi, int64_t *seq_out, int64_t *ts_out)
{
    sqlite3_bind_int64(st, 1, lo);
    sqlite3_bind_int64(st, 2, hi);
    int found = sqlite3_step(st) == SQLITE_ROW;
    if (found) {
        *seq_out = sqlite3_column_int64(st, 0);
        *ts_out = sqlite3_column_int64(st, 1);
    }
    sqlite3_finalize(st);
    return found ? 0 : -1;
}

/* The same in the packs, read from the first (desc: the last) on; pack
 * whose time range misses [lo, hi] skipped. */
static int first_in_packs(sqlite3 *db, int desc, int64_t lo, int64_t hi, int64_t *seq_out, int64_t *ts_out)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db,
                           desc ? "SELECT n, data FROM event_packs WHERE ts_max >= ?1 AND ts_min <= ?2"
                                  " ORDER BY seq_lo DESC"
                                : "SELECT n, data FROM event_packs WHERE ts_max >= ?1 AND ts_min <= ?2"
                                  " ORDER BY seq_lo",
                           -1, &st, NULL) != SQLITE_OK)
        return -1;
    sqlite3_bind_int64(st, 1, lo);
    sqlite3_bind_int64(st, 2, hi);
    int found = 0;
    while (!found && sqlite3_step(st) == SQLITE_ROW) {
        struct gl_pack_dec d;
        struct gl_row row;
        gl_pack_dec_init(&d, sqlite3_column_blob(st, 1), (size_t)sqlite3_column_bytes(st, 1),
                         sqlite3_column_int(st, 0));
        while (gl_pack_dec_next(&d, &row) == 1) {
            if (row.v[1] < lo || row.v[1] > hi)
                continue;
            if (!found || desc) {
                *seq_out = row.v[0];
                *ts_out = row.v[1];
            }
            found = 1;
            if (!desc)
                break;
        }
    }
    sqlite3_finalize(st);
    return found ? 0 : -1;
}

int64_t gl_rows_first_time(sqlite3 *db, int desc, int64_t lo, int64_t hi)
{
    int direct = gl_rows_direct_ok(db);
    char sql[160];
    snprintf(sql, sizeof sql, "SELECT seq, ts_ns FROM %s WHERE ts_ns BETWEEN ? AND ? ORDER BY seq %s LIMIT 1",
             direct == 1 ? "event_rows" : direct == 2 ? "event_rows_table" : "event_log", desc ? "DESC" : "ASC");
    sqlite3_stmt *st;
    int64_t seq = 0, ts = 0, pseq = 0, pts = 0;
    int have = sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK && !first_in(st, lo, hi, &seq, &ts);
    if (direct == 2 && !first_in_packs(db, desc, lo, hi, &pseq, &pts) &&
        (!have || (desc ? pseq > seq : pseq < seq))) {
        have = 1;
        ts = pts;
    }
    return have ? ts : 0;
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

int gl_model_rows_open(struct gl_rows *g, sqlite3 *db, int lean)
{
    memset(g, 0, sizeof *g);
    int direct = gl_rows_direct_ok(db);
    if (direct && !load_contexts(g, db)) {
        g->direct = 1;
        char sql[256];
        snprintf(sql, sizeof sql,
                 lean ? "SELECT seq, ts_ns, context, op, kind, device, addr, size, 0, ref_seq, aux, 0 FROM %s ORDER BY seq"
                      : "SELECT seq, ts_ns, context, op, kind, device, addr, size, stack_id, ref_seq, aux, range_seq"
                        " FROM %s ORDER BY seq",
                 direct == 2 ? "event_rows_table" : "event_rows");
        int rc = sqlite3_prepare_v2(db, sql, -1, &g->st, NULL);
        if (rc == SQLITE_OK && direct == 2) {
            rc = sqlite3_prepare_v2(db, "SELECT n, data FROM event_packs ORDER BY seq_lo", -1, &g->packs, NULL);
            if (rc == SQLITE_OK && !(g->pk = calloc(1, sizeof *g->pk)))
                rc = SQLITE_NOMEM;
            if (g->pk)
                g->pk->lean = lean;
        }
        if (rc != SQLITE_OK) { /* the caller closes nothing it could not open */
            sqlite3_finalize(g->st);
            sqlite3_finalize(g->packs);
            g->st = g->packs = NULL;
            free(g->pk);
            g->pk = NULL;
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
                              lean ? "SELECT seq, ts_ns, tid, op, api, kind, device, stream, pool, addr, size, result,"
                                     " 0, ref_seq, aux, 0 FROM event_log ORDER BY seq"
                                   : "SELECT seq, ts_ns, tid, op, api, kind, device, stream, pool, addr, size, result,"
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
static void context_of(struct gl_rows *g, int is_int, int64_t id, int64_t *v)
{
    static const struct gl_ctx_row none;
    struct gl_ctx_row spare;
    const struct gl_ctx_row *c = &none;
    if (is_int) {
        if (id >= 0 && (uint64_t)id < g->nctx && g->ctx[id].present)
            c = &g->ctx[id];
        else
            c = look_up(g, id, &spare);
        if (c->present < 0)
            c = &none;
    }
    v[GL_COL_TID] = c->tid;
    v[GL_COL_API] = c->api;
    v[GL_COL_STREAM] = c->stream;
    v[GL_COL_POOL] = c->pool;
    v[GL_COL_RESULT] = c->result;
}

static void read_context(struct gl_rows *g, int col, int64_t *v)
{
    context_of(g, sqlite3_column_type(g->st, col) == SQLITE_INTEGER, sqlite3_column_int64(g->st, col), v);
}

/* schema 6: the next row by seq of the table's and the packs' */
/* merge_next's answer that the row is the table's, in g->st (else an
 * SQLite code, the packs' row being decoded into v already) */
#define TABLE_ROW (-1)

/* Where column i of event_rows (pack.h's order) goes in v (-1: the
 * context, which context_of spreads into its columns) */
static const int row_col[GL_ROW_COLS] = {GL_COL_SEQ,  GL_COL_TS,   -1,         GL_COL_OP,
                                         GL_COL_KIND, GL_COL_DEVICE, GL_COL_ADDR, GL_COL_SIZE,
                                         GL_COL_STACK, GL_COL_REF, GL_COL_AUX, GL_COL_RANGE};

static int merge_next(struct gl_rows *g, int64_t *v, int *ref_null)
{
    struct gl_pack_rows *pk = g->pk;
    if (!pk->plain_have && !pk->plain_done) {
        int rc = sqlite3_step(g->st);
        if (rc == SQLITE_ROW)
            pk->plain_have = 1;
        else if (rc == SQLITE_DONE)
            pk->plain_done = 1;
        else
            return rc;
    }
    while (pk->at == pk->n && !pk->packs_done) { /* (a pack of no rows is passed) */
        int rc = sqlite3_step(g->packs);
        if (rc == SQLITE_DONE) {
            pk->packs_done = 1;
        } else if (rc != SQLITE_ROW) {
            return rc;
        } else {
            pk->at = 0;
            pk->n = gl_pack_decode(sqlite3_column_blob(g->packs, 1), (size_t)sqlite3_column_bytes(g->packs, 1),
                                   sqlite3_column_int(g->packs, 0), pk->rows);
            if (pk->n < 0) {
                pk->n = 0;
                return SQLITE_CORRUPT;
            }
        }
    }
    if (pk->at < pk->n && (!pk->plain_have || pk->rows[pk->at].v[0] < sqlite3_column_int64(g->st, 0))) {
        const struct gl_row *r = &pk->rows[pk->at++];
        for (int i = 0; i < GL_ROW_COLS; i++)
            if (row_col[i] >= 0)
                v[row_col[i]] = r->null & (1u << i) ? 0 : r->v[i];
        if (pk->lean)
            v[GL_COL_STACK] = v[GL_COL_RANGE] = 0;
        context_of(g, !(r->null & (1u << 2)), r->v[2], v);
        *ref_null = (r->null >> 9) & 1;
        return SQLITE_ROW;
    }
    if (!pk->plain_have)
        return SQLITE_DONE;
    pk->plain_have = 0;
    return TABLE_ROW;
}

/* Step the statement and decode its row into v: SQLITE_ROW, SQLITE_DONE,
 * or an error code. */
static int decode_next(struct gl_rows *g, int64_t *v, int *ref_null)
{
    int rc = g->pk ? merge_next(g, v, ref_null) : sqlite3_step(g->st);
    if (g->pk && rc != TABLE_ROW)
        return rc;
    if (rc != SQLITE_ROW && rc != TABLE_ROW)
        return rc;
    rc = SQLITE_ROW;
    sqlite3_stmt *st = g->st;
    if (!g->direct) {
        for (int i = 0; i < GL_COL_COUNT; i++)
            v[i] = sqlite3_column_int64(st, i);
        *ref_null = sqlite3_column_type(st, GL_COL_REF) == SQLITE_NULL;
        return rc;
    }
    for (int i = 0; i < GL_ROW_COLS; i++)
        if (row_col[i] >= 0)
            v[row_col[i]] = sqlite3_column_int64(st, i);
    read_context(g, 2, v);
    *ref_null = sqlite3_column_type(st, 9) == SQLITE_NULL;
    return rc;
}

/* Reading ahead: a ring of batches the thread fills (head) and the scan
 * empties (tail), counted up, taken modulo AHEAD_BATCHES. */
#define AHEAD_BATCH 1024
#define AHEAD_BATCHES 4

struct ahead_batch {
    int64_t v[AHEAD_BATCH][GL_COL_COUNT];
    unsigned char ref_null[AHEAD_BATCH];
    size_t n;
    int rc; /* SQLITE_ROW while rows follow; on the last batch, how the scan ended */
};

struct gl_read_ahead {
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t filled, emptied;
    size_t head, tail; /* under mu */
    int stop;          /* under mu: the scan is closed before its end */
    int holding;       /* the scan's: it is taking rows from b[tail] */
    size_t at;         /* the scan's: its next row there */
    struct ahead_batch b[AHEAD_BATCHES];
};

static void *read_ahead(void *arg)
{
    struct gl_rows *g = arg;
    struct gl_read_ahead *a = g->ahead;
    for (size_t head = 0;; head++) {
        pthread_mutex_lock(&a->mu);
        while (!a->stop && head - a->tail == AHEAD_BATCHES)
            pthread_cond_wait(&a->emptied, &a->mu);
        int stop = a->stop;
        pthread_mutex_unlock(&a->mu);
        if (stop)
            return NULL;
        struct ahead_batch *b = &a->b[head % AHEAD_BATCHES];
        b->n = 0;
        b->rc = SQLITE_ROW;
        while (b->n < AHEAD_BATCH && b->rc == SQLITE_ROW) {
            int ref_null = 0;
            b->rc = decode_next(g, b->v[b->n], &ref_null);
            if (b->rc == SQLITE_ROW)
                b->ref_null[b->n++] = (unsigned char)ref_null;
        }
        int last = b->rc != SQLITE_ROW;
        pthread_mutex_lock(&a->mu);
        a->head = head + 1;
        pthread_cond_signal(&a->filled);
        pthread_mutex_unlock(&a->mu);
        if (last)
            return NULL;
    }
}

int gl_rows_read_ahead(struct gl_rows *g, int64_t expected_rows)
{
    if (g->ahead || !g->st || expected_rows < GL_ROWS_AHEAD_MIN || !sqlite3_threadsafe())
        return g->ahead ? 0 : -1;
    struct gl_read_ahead *a = calloc(1, sizeof *a);
    if (!a)
        return -1;
    if (pthread_mutex_init(&a->mu, NULL)) {
        free(a);
        return -1;
    }
    if (pthread_cond_init(&a->filled, NULL) || pthread_cond_init(&a->emptied, NULL)) {
        pthread_mutex_destroy(&a->mu);
        free(a);
        return -1;
    }
    g->ahead = a;
    if (pthread_create(&a->thread, NULL, read_ahead, g)) {
        g->ahead = NULL;
        pthread_cond_destroy(&a->filled);
        pthread_cond_destroy(&a->emptied);
        pthread_mutex_destroy(&a->mu);
        free(a);
        return -1;
    }
    return 0;
}

/* The next row from the batches the thread filled. */
static int next_ahead(struct gl_rows *g, struct gl_read_ahead *a)
{
    for (;;) {
        if (a->holding) {
            const struct ahead_batch *b = &a->b[a->tail % AHEAD_BATCHES];
            if (a->at < b->n) {
                memcpy(g->v, b->v[a->at], sizeof g->v);
                g->ref_null = b->ref_null[a->at++];
                return SQLITE_ROW;
            }
            if (b->rc != SQLITE_ROW) /* the end, said again to each call after */
                return b->rc;
            pthread_mutex_lock(&a->mu);
            a->tail++;
            pthread_cond_signal(&a->emptied);
            pthread_mutex_unlock(&a->mu);
            a->holding = 0;
            a->at = 0;
        }
        pthread_mutex_lock(&a->mu);
        while (a->head == a->tail)
            pthread_cond_wait(&a->filled, &a->mu);
        pthread_mutex_unlock(&a->mu);
        a->holding = 1;
    }
}

int gl_rows_next(struct gl_rows *g)
{
    return g->ahead ? next_ahead(g, g->ahead) : decode_next(g, g->v, &g->ref_null);
}

/* The thread stopped (where it is) and joined. */
static void stop_ahead(struct gl_rows *g)
{
    struct gl_read_ahead *a = g->ahead;
    if (!a)
        return;
    pthread_mutex_lock(&a->mu);
    a->stop = 1;
    pthread_cond_signal(&a->emptied);
    pthread_mutex_unlock(&a->mu);
    pthread_join(a->thread, NULL);
    pthread_cond_destroy(&a->filled);
    pthread_cond_destroy(&a->emptied);
    pthread_mutex_destroy(&a->mu);
    free(a);
    g->ahead = NULL;
}

void gl_model_rows_close(struct gl_rows *g)
{
    stop_ahead(g);
    sqlite3_finalize(g->st);
    sqlite3_finalize(g->one);
    sqlite3_finalize(g->packs);
    g->st = g->one = g->packs = NULL;
    free(g->pk);
    g->pk = NULL;
    free(g->ctx);
    g->ctx = NULL;
}
