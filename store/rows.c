/* rows.c — see rows.h. */
#include "rows.h"

#include <stdlib.h>
#include <string.h>

/* seq is not given: SQLite numbers the rows, and they come in seq order
 * from 1 (checked after each write) */
#define COLUMNS "ts_ns, context, op, kind, device, addr, size, stack_id, ref_seq, aux, range_seq"
#define VALUES "(?,?,?,?,?,?,?,?,?,?,?)"
/* a bounded recording gives seq: folded rows leave gaps */
#define COLUMNS_SEQ "seq, " COLUMNS
#define VALUES_SEQ "(?,?,?,?,?,?,?,?,?,?,?,?)"

int gl_rows_open(struct gl_rows *r, struct gl_wdb *w)
{
    memset(r, 0, sizeof *r);
    r->w = w;
    r->next_seq = 1;
    if (gl_contexts_open(&r->contexts, w))
        return -1;
    char sql[64 + GL_ROW_BATCH * sizeof "," VALUES] = "INSERT INTO event_rows(" COLUMNS ") VALUES";
    for (int i = 0; i < GL_ROW_BATCH; i++)
        strcat(sql, i ? "," VALUES : VALUES);
    return gl_wdb_prepare(w, &r->ins_batch, sql) ||
           gl_wdb_prepare(w, &r->ins_one, "INSERT INTO event_rows(" COLUMNS ") VALUES" VALUES);
}

int gl_rows_explicit_seq(struct gl_rows *r)
{
    if (gl_rows_flush(r))
        return -1;
    sqlite3_stmt **const sts[] = {&r->ins_batch, &r->ins_one};
    gl_wdb_finalize(sts, 2);
    r->ins_batch = r->ins_one = NULL;
    memset(r->bound, 0, sizeof r->bound);
    r->explicit_seq = 1;
    char sql[64 + GL_ROW_BATCH * sizeof "," VALUES_SEQ] = "INSERT INTO event_rows(" COLUMNS_SEQ ") VALUES";
    for (int i = 0; i < GL_ROW_BATCH; i++)
        strcat(sql, i ? "," VALUES_SEQ : VALUES_SEQ);
    return gl_wdb_prepare(r->w, &r->ins_batch, sql) ||
           gl_wdb_prepare(r->w, &r->ins_one, "INSERT INTO event_rows(" COLUMNS_SEQ ") VALUES" VALUES_SEQ);
}

int gl_rows_hold(struct gl_rows *r)
{
    if (r->pack)
        return gl_wdb_fail(r->w, "a budget: the rows are packed already");
    if (gl_rows_explicit_seq(r))
        return -1;
    r->held_cap = 4096;
    r->held = malloc(r->held_cap * sizeof *r->held);
    if (!r->held)
        return gl_wdb_fail(r->w, "holding a step's rows: out of memory");
    return 0;
}

int gl_rows_pack(struct gl_rows *r)
{
    if (r->count || r->held)
        return gl_wdb_fail(r->w, "packing rows: rows were written already, or are held for a budget");
    r->pack = malloc(sizeof *r->pack);
    if (!r->pack)
        return gl_wdb_fail(r->w, "packing rows: out of memory");
    gl_pack_enc_reset(r->pack);
    return gl_wdb_prepare(r->w, &r->ins_pack,
                          "INSERT INTO event_packs(seq_lo, seq_hi, n, ts_min, ts_max, ops, kinds, data)"
                          " VALUES(?,?,?,?,?,?,?,?)");
}

void gl_rows_unpack(struct gl_rows *r)
{
    sqlite3_stmt **const sts[] = {&r->ins_pack};
    gl_wdb_finalize(sts, 1);
    free(r->pack);
    r->pack = NULL;
}

int gl_rows_pack_flush(struct gl_rows *r)
{
    struct gl_pack_enc *e = r->pack;
    if (!e || !e->info.n)
        return 0;
    sqlite3_stmt *st = r->ins_pack;
    const struct gl_pack_info *in = &e->info;
    sqlite3_bind_int64(st, 1, in->seq_lo);
    sqlite3_bind_int64(st, 2, in->seq_hi);
    sqlite3_bind_int(st, 3, in->n);
    sqlite3_bind_int64(st, 4, in->ts_min);
    sqlite3_bind_int64(st, 5, in->ts_max);
    sqlite3_bind_int64(st, 6, (int64_t)in->ops);
    sqlite3_bind_int64(st, 7, (int64_t)in->kinds);
    sqlite3_bind_blob(st, 8, e->buf, (int)e->len, SQLITE_STATIC);
    int rc = gl_wdb_step(r->w, st, "writing a pack of events");
    sqlite3_bind_null(st, 8);
    r->packs++;
    gl_pack_enc_reset(e);
    return rc;
}

int gl_rows_held_grow(struct gl_rows *r)
{
    size_t nc = r->held_cap * 2;
    struct gl_row *nh = realloc(r->held, nc * sizeof *nh);
    if (!nh)
        return gl_wdb_fail(r->w, "holding a step's rows: out of memory");
    r->held = nh;
    r->held_cap = nc;
    return 0;
}

int gl_rows_put(struct gl_rows *r, const struct gl_row *row)
{
    if (r->pack)
        return gl_pack_enc_add(r->pack, row) ? gl_rows_pack_flush(r) : 0;
    r->batch[r->n++] = *row;
    return r->n == GL_ROW_BATCH ? gl_rows_flush(r) : 0;
}

static void bind_row(sqlite3_stmt *st, int c0, const int64_t *v, uint16_t null)
{
    for (int c = c0; c < GL_ROW_COLS; c++) {
        if (null & (1u << c))
            sqlite3_bind_null(st, c - c0 + 1);
        else
            sqlite3_bind_int64(st, c - c0 + 1, v[c]);
    }
}

/* Bind row i of the batch statement, each parameter only if it changed. */
static void bind_batch_row(struct gl_rows *r, int i)
{
    const int64_t *v = r->batch[i].v;
    uint16_t null = r->batch[i].null;
    int c0 = r->explicit_seq ? 0 : 1;
    for (int c = c0; c < GL_ROW_COLS; c++) {
        int k = i * (GL_ROW_COLS - c0) + c - c0;
        if (null & (1u << c)) {
            if (r->bound[k] != 1) {
                sqlite3_bind_null(r->ins_batch, k + 1);
                r->bound[k] = 1;
            }
        } else if (r->bound[k] != 2 || r->bound_v[k] != v[c]) {
            sqlite3_bind_int64(r->ins_batch, k + 1, v[c]);
            r->bound[k] = 2;
            r->bound_v[k] = v[c];
        }
    }
}

int gl_rows_flush(struct gl_rows *r)
{
    int rc = 0;
    if (r->pack)
        return gl_rows_pack_flush(r);
    if (r->n == 0)
        return 0;
    int64_t last = r->batch[r->n - 1].v[0];
    if (r->n == GL_ROW_BATCH) {
        for (int i = 0; i < GL_ROW_BATCH; i++)
            bind_batch_row(r, i);
        rc = gl_wdb_step(r->w, r->ins_batch, "writing events");
    } else {
        for (int i = 0; i < r->n && !rc; i++) {
            bind_row(r->ins_one, r->explicit_seq ? 0 : 1, r->batch[i].v, r->batch[i].null);
            rc = gl_wdb_step(r->w, r->ins_one, "writing an event");
        }
    }
    r->n = 0;
    /* SQLite numbers the rows (the next rowid after the largest: cheaper
     * than a given seq, which it must look up first); they must be ours */
    if (!rc && sqlite3_last_insert_rowid(r->w->db) != last)
        rc = gl_wdb_fail(r->w, "writing events: the database numbered them differently");
    return rc;
}

void gl_rows_close(struct gl_rows *r)
{
    sqlite3_stmt **const sts[] = {&r->ins_batch, &r->ins_one, &r->ins_pack};
    gl_wdb_finalize(sts, 3);
    gl_contexts_close(&r->contexts);
    free(r->held);
    r->held = NULL;
    free(r->pack);
    r->pack = NULL;
}
