/* pack.h — event rows packed many to an SQLite row (schema 6, a packed
 * recording: GPULEDGER_PACK, docs/schema.md). A pack is the rows of up to
 * GL_PACK_ROWS consecutive events in seq order, each column written as the
 * change from the row before it (a bit says "the same", else a zigzag
 * varint of the difference; ref_seq as its distance back from seq), so
 * that a row of a training loop takes 10-16 bytes where a table row takes
 * 40-50, and SQLite does one row's work for a whole pack. The writer
 * (rows.c), the report's load (model_rows.c) and the SQL module that shows
 * packs as rows (packvtab.c) share this one codec. No SQLite here. */
#ifndef GL_PACK_H
#define GL_PACK_H

#include <stddef.h>
#include <stdint.h>

/* an event row's columns, in event_rows' order: 0 seq, 1 ts_ns, 2 context,
 * 3 op, 4 kind, 5 device, 6 addr, 7 size, 8 stack_id, 9 ref_seq, 10 aux,
 * 11 range_seq */
#define GL_ROW_COLS 12

/* One row: v[c] is column c; bit c of null says it is NULL (seq and ts_ns
 * never are). */
struct gl_row {
    int64_t v[GL_ROW_COLS];
    uint16_t null;
};

#define GL_PACK_ROWS 256
/* a pack is closed before its blob passes this (an SQLite row of a 4 KiB
 * page then stays on its page) */
#define GL_PACK_BYTES 3600
/* the most one row can take: a header, a gap, ts and 10 columns */
#define GL_PACK_ROW_MAX (3 + 10 + 10 + 10 * 10)

/* What a pack's row in event_packs says about it beside its blob. ops and
 * kinds: bit x for each op and kind x < 63 in it, bit 63 for any other
 * (a reader skips packs without what it looks for). */
struct gl_pack_info {
    int64_t seq_lo, seq_hi, ts_min, ts_max;
    uint64_t ops, kinds;
    int n;
};

struct gl_pack_enc {
    struct gl_pack_info info;
    size_t len;
    struct gl_row prev;
    uint8_t buf[GL_PACK_BYTES + GL_PACK_ROW_MAX];
};

void gl_pack_enc_reset(struct gl_pack_enc *e);
/* Add a row (seq above the last one's): 1 when the pack is now full (write
 * it, then reset), else 0. */
int gl_pack_enc_add(struct gl_pack_enc *e, const struct gl_row *row);

struct gl_pack_dec {
    const uint8_t *p, *end;
    int left;
    struct gl_row prev;
};

/* Read a pack of n rows whose blob is data[0 .. len). */
void gl_pack_dec_init(struct gl_pack_dec *d, const void *data, size_t len, int n);
/* The next row into *row: 1, 0 at the end, -1 when the blob is damaged
 * (shorter than its rows, or a value past 64 bits). */
int gl_pack_dec_next(struct gl_pack_dec *d, struct gl_row *row);

/* Every row of a pack of n rows into rows[GL_PACK_ROWS]: n, or -1 when n
 * is not a pack's count or the blob does not hold n rows. */
int gl_pack_decode(const void *data, size_t len, int n, struct gl_row *rows);

#endif
