/* rows.h — event rows (event_rows, read through the event_log view):
 * numbered in order (seq), collected GL_ROW_BATCH at a time and written by
 * one multi-row INSERT (far fewer SQLite VM steps per row than an INSERT
 * each); a partial batch is written row by row when the store commits.
 * What a row shares with others (thread, API, stream, pool, result) is an
 * event_contexts id (contexts.h). */
#ifndef GL_ROWS_H
#define GL_ROWS_H

#include <stdint.h>

#include "contexts.h"
#include "gl_event.h"
#include "pack.h"
#include "wdb.h"

#define GL_ROW_BATCH 64

struct gl_rows {
    struct gl_wdb *w;
    struct gl_contexts contexts;
    sqlite3_stmt *ins_batch, *ins_one;
    struct gl_row batch[GL_ROW_BATCH];
    int n;
    uint64_t next_seq, count;
    /* a bounded recording (fold.h): rows are held here until their step
     * ends, then the fold writes (gl_rows_put) the ones it keeps, with
     * their own seq (the rows it folds leave gaps) */
    int explicit_seq;
    struct gl_row *held;
    size_t nheld, held_cap;
    /* what each parameter of ins_batch holds now (SQLite keeps bindings
     * across a reset): a batch binds only what changed, and in a loop most
     * columns (context, kind, device, size, stack ...)
     * repeat at the same place batch after batch */
    int64_t bound_v[GL_ROW_BATCH * GL_ROW_COLS];
    uint8_t bound[GL_ROW_BATCH * GL_ROW_COLS]; /* 0: unknown, 1: NULL, 2: bound_v */
    /* a packed recording (gl_rows_pack): rows go into packs, a pack is
     * one row of event_packs */
    struct gl_pack_enc *pack;
    sqlite3_stmt *ins_pack;
    uint64_t packs;
};

int gl_rows_open(struct gl_rows *r, struct gl_wdb *w);
/* From now on write each row's own seq (gl_rows_put: rows copied, or
 * folded ones leaving gaps). 0 or -1. */
int gl_rows_explicit_seq(struct gl_rows *r);
/* From now on hold rows for the fold and write seq explicitly. 0 or -1. */
int gl_rows_hold(struct gl_rows *r);
/* From now on write rows into packs (schema 6: gl_schema_pack made the
 * tables); before any row, never with gl_rows_hold. 0 or -1. */
int gl_rows_pack(struct gl_rows *r);
/* Back to a row per event (a gl_rows_pack that failed undone). */
void gl_rows_unpack(struct gl_rows *r);
/* Write the pack being filled (its rows so far). 0 or -1. */
int gl_rows_pack_flush(struct gl_rows *r);
/* Write one row (held, or as it comes); 0 or -1. */
int gl_rows_put(struct gl_rows *r, const struct gl_row *row);
/* Room for one more held row (-1: out of memory). */
int gl_rows_held_grow(struct gl_rows *r);
/* Write the rows collected so far. */
int gl_rows_flush(struct gl_rows *r);
void gl_rows_close(struct gl_rows *r);

/* One row for ev, as op/kind/size (a free carries what it frees), with its
 * stack id, the seq of the row it ends (ref) and the annotation range it is
 * inside (0: none for each); *seq_out (may be NULL) gets its seq. Inline:
 * once per event on the writer thread. */
static inline int gl_rows_add(struct gl_rows *r, const struct gl_event *ev, int op, int kind, uint64_t size,
                              int64_t sid, uint64_t ref, uint64_t range, uint64_t *seq_out)
{
    int64_t ctx = gl_contexts_id(&r->contexts, ev);
    if (!ctx) {
        if (seq_out)
            *seq_out = 0;
        return -1;
    }
    if (r->held && r->nheld == r->held_cap && gl_rows_held_grow(r)) {
        if (seq_out)
            *seq_out = 0;
        return -1;
    }
    uint64_t seq = r->next_seq++;
    struct gl_row *out = r->held ? &r->held[r->nheld] : &r->batch[r->pack ? 0 : r->n];
    int64_t *v = out->v;
    v[0] = (int64_t)seq;
    v[1] = (int64_t)ev->ts_ns;
    v[2] = ctx;
    v[3] = op;
    v[4] = kind;
    v[5] = ev->device;
    v[6] = (int64_t)ev->addr;
    v[7] = (int64_t)size;
    v[8] = sid;
    v[9] = (int64_t)ref;
    v[10] = (int64_t)ev->aux;
    v[11] = (int64_t)range;
    out->null = (uint16_t)((sid ? 0 : 1u << 8) | (ref ? 0 : 1u << 9) |
                           (ev->aux || (ev->flags & GL_EVF_USED) ? 0 : 1u << 10) | (range ? 0 : 1u << 11));
    r->count++;
    if (seq_out)
        *seq_out = seq;
    if (r->held) {
        r->nheld++;
        return 0;
    }
    if (r->pack)
        return gl_pack_enc_add(r->pack, out) ? gl_rows_pack_flush(r) : 0;
    r->n++;
    return r->n == GL_ROW_BATCH ? gl_rows_flush(r) : 0;
}

#endif
