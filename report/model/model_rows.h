/* model_rows.h — the rows of event_log in seq order, for the load's one
 * scan. A schema 4 database whose event_log is the view its recorder made
 * is read from the two tables under it: event_rows in order, each row's
 * context (thread, API, stream, pool, result) looked up in event_contexts
 * loaded once into an array by id. Any other database (schemas 1 to 3, a
 * view someone changed, context ids too sparse for an array) is read
 * through event_log. Both give the same values column by column.
 *
 * A large scan is read ahead by a thread of its own (gl_rows_read_ahead):
 * SQLite's stepping and decoding, half a load's time, then runs beside the
 * model taking the rows in, a batch of rows at a time; the rows and their
 * order are the same. While it runs only that thread uses the connection. */
#ifndef GL_MODEL_ROWS_H
#define GL_MODEL_ROWS_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

/* event_log's columns, in its order */
enum {
    GL_COL_SEQ, GL_COL_TS, GL_COL_TID, GL_COL_OP, GL_COL_API, GL_COL_KIND, GL_COL_DEVICE, GL_COL_STREAM,
    GL_COL_POOL, GL_COL_ADDR, GL_COL_SIZE, GL_COL_RESULT, GL_COL_STACK, GL_COL_REF, GL_COL_AUX, GL_COL_RANGE,
    GL_COL_COUNT
};

struct gl_ctx_row;     /* model_rows.c */
struct gl_pack_rows;   /* model_rows.c */
struct gl_read_ahead;  /* model_rows.c */

struct gl_rows {
    sqlite3_stmt *st;
    sqlite3_stmt *packs;       /* schema 6 (direct): the packs, merged with st's rows by seq */
    struct gl_pack_rows *pk;   /* the pack being read (model_rows.c) */
    sqlite3_stmt *one;         /* a context the array lacks, by id */
    int direct;                /* reading event_rows and the contexts' array */
    struct gl_ctx_row *ctx;    /* by id (direct) */
    size_t nctx;
    int64_t v[GL_COL_COUNT];   /* the current row, each column as sqlite3_column_int64 reads it */
    int ref_null;              /* its ref_seq is NULL */
    struct gl_read_ahead *ahead; /* the thread reading ahead, or NULL */
};

/* Whether event_log is schema 4's view over event_rows and event_contexts:
 * 1, 2 where event_rows is schema 6's view of event_rows_table and the
 * packs (store/pack.h), else 0. */
int gl_rows_direct_ok(sqlite3 *db);
/* The largest seq (0: no row). */
int64_t gl_rows_max_seq(sqlite3 *db);
/* ts_ns of the first (desc: last) row by seq whose ts_ns is within
 * [lo, hi]; 0 when none is. */
int64_t gl_rows_first_time(sqlite3 *db, int desc, int64_t lo, int64_t hi);
/* Start the scan: SQLITE_OK, or an SQLite error code (sqlite3_errmsg says).
 * lean: stack_id and range_seq read as 0, never decoded (a load that
 * keeps no stacks: a fifth less of SQLite's time). */
int gl_model_rows_open(struct gl_rows *g, sqlite3 *db, int lean);
/* Read ahead in a thread when the scan is expected to hold at least
 * GL_ROWS_AHEAD_MIN rows (and SQLite is built for threads): 0, or -1 when
 * it reads in the caller's thread (no thread could be started). */
#define GL_ROWS_AHEAD_MIN 100000
int gl_rows_read_ahead(struct gl_rows *g, int64_t expected_rows);
/* The next row into g->v: SQLITE_ROW, SQLITE_DONE, or an error code. */
int gl_rows_next(struct gl_rows *g);
void gl_model_rows_close(struct gl_rows *g);

#endif
