/* pack.c — see pack.h. A row is written as
 *   varint  mask: bit 0 a gap in seq follows; bit c-1 column c (2..11)
 *           differs from the row before (its value, or NULL or not)
 *   [varint zigzag(seq - previous seq - 1)]      when bit 0
 *   varint  zigzag(ts_ns - previous ts_ns)
 *   varint  per column c in the mask: 0 for NULL, else 1 + zigzag(x) with
 *           x = value - the column's last value (ref_seq: seq - value);
 *           a 65-bit number (1 + zigzag of a 64-bit difference)
 * The row before the first is all zero and not NULL. */
#include "pack.h"

#include <string.h>

#define REF 9

static inline uint64_t zigzag(uint64_t d)
{
    return (d << 1) ^ (uint64_t)-(int64_t)(d >> 63);
}

static inline uint64_t unzigzag(uint64_t z)
{
    return (z >> 1) ^ (uint64_t)-(int64_t)(z & 1);
}

/* the 65-bit number hi * 2^64 + lo */
static inline uint8_t *put_varint(uint8_t *p, uint64_t lo, unsigned hi)
{
    while (lo >= 0x80 || hi) {
        *p++ = (uint8_t)(lo | 0x80);
        lo = (lo >> 7) | ((uint64_t)hi << 57);
        hi = 0;
    }
    *p++ = (uint8_t)lo;
    return p;
}

/* 0, or -1 when the varint runs past the end or past 65 bits */
static inline int get_varint(struct gl_pack_dec *d, uint64_t *lo, unsigned *hi)
{
    uint64_t v = 0;
    unsigned h = 0;
    for (int shift = 0; d->p < d->end; shift += 7) {
        uint8_t b = *d->p++;
        uint64_t bits = b & 0x7f;
        if (shift < 64) {
            v |= bits << shift;
            if (shift > 57)
                h = (unsigned)(bits >> (64 - shift));
        }
        if (!(b & 0x80)) {
            if (shift >= 63 && (h > 1 || shift > 63)) /* past 65 bits */
                return -1;
            *lo = v;
            *hi = h;
            return 0;
        }
        if (shift >= 63)
            return -1;
    }
    return -1;
}

void gl_pack_enc_reset(struct gl_pack_enc *e)
{
    memset(&e->info, 0, sizeof e->info);
    memset(&e->prev, 0, sizeof e->prev);
    e->len = 0;
}

static inline uint64_t mask_bit(int64_t x)
{
    return x >= 0 && x < 63 ? 1ull << x : 1ull << 63;
}

int gl_pack_enc_add(struct gl_pack_enc *e, const struct gl_row *row)
{
    const int64_t *v = row->v;
    struct gl_row *pv = &e->prev;
    unsigned mask = (uint64_t)v[0] != (uint64_t)pv->v[0] + 1;
    for (int c = 2; c < GL_ROW_COLS; c++) {
        unsigned n = (row->null >> c) & 1, pn = (pv->null >> c) & 1;
        if (n != pn || (!n && v[c] != pv->v[c]))
            mask |= 1u << (c - 1);
    }
    uint8_t *p = put_varint(e->buf + e->len, mask, 0);
    if (mask & 1)
        p = put_varint(p, zigzag((uint64_t)v[0] - (uint64_t)pv->v[0] - 1), 0);
    p = put_varint(p, zigzag((uint64_t)v[1] - (uint64_t)pv->v[1]), 0);
    for (int c = 2; c < GL_ROW_COLS; c++) {
        if (!(mask & (1u << (c - 1))))
            continue;
        if (row->null & (1u << c)) {
            *p++ = 0;
            continue;
        }
        uint64_t z = c == REF ? zigzag((uint64_t)v[0] - (uint64_t)v[c]) : zigzag((uint64_t)v[c] - (uint64_t)pv->v[c]);
        p = put_varint(p, z + 1, z == UINT64_MAX);
        pv->v[c] = v[c];
    }
    pv->v[0] = v[0];
    pv->v[1] = v[1];
    pv->null = row->null;
    e->len = (size_t)(p - e->buf);

    struct gl_pack_info *in = &e->info;
    if (!in->n) {
        in->seq_lo = v[0];
        in->ts_min = in->ts_max = v[1];
    }
    in->seq_hi = v[0];
    if (v[1] < in->ts_min)
        in->ts_min = v[1];
    if (v[1] > in->ts_max)
        in->ts_max = v[1];
    in->ops |= row->null & (1u << 3) ? 0 : mask_bit(v[3]);
    in->kinds |= row->null & (1u << 4) ? 0 : mask_bit(v[4]);
    in->n++;
    return in->n == GL_PACK_ROWS || e->len >= GL_PACK_BYTES;
}

void gl_pack_dec_init(struct gl_pack_dec *d, const void *data, size_t len, int n)
{
    d->p = data;
    d->end = data ? d->p + len : d->p; /* a NULL blob (an empty or hostile pack): nothing to read */
    d->left = n;
    memset(&d->prev, 0, sizeof d->prev);
}

int gl_pack_dec_next(struct gl_pack_dec *d, struct gl_row *row)
{
    if (d->left <= 0)
        return 0;
    struct gl_row *pv = &d->prev;
    uint64_t mask, x;
    unsigned hi;
    if (get_varint(d, &mask, &hi) || hi || mask >= 1u << (GL_ROW_COLS - 1))
        return -1;
    uint64_t gap = 0;
    if ((mask & 1) && (get_varint(d, &gap, &hi) || hi))
        return -1;
    pv->v[0] = (int64_t)((uint64_t)pv->v[0] + 1 + unzigzag(gap));
    if (get_varint(d, &x, &hi) || hi)
        return -1;
    pv->v[1] = (int64_t)((uint64_t)pv->v[1] + unzigzag(x));
    for (int c = 2; c < GL_ROW_COLS; c++) {
        if (!(mask & (1u << (c - 1))))
            continue;
        if (get_varint(d, &x, &hi))
            return -1;
        if (!x && !hi) {
            pv->null |= (uint16_t)(1u << c);
            continue;
        }
        pv->null &= (uint16_t)~(1u << c);
        uint64_t z = x - 1; /* hi: x was 2^64 + lo, so z = UINT64_MAX */
        if (hi)
            z = UINT64_MAX;
        pv->v[c] = c == REF ? (int64_t)((uint64_t)pv->v[0] - unzigzag(z))
                            : (int64_t)((uint64_t)pv->v[c] + unzigzag(z));
    }
    *row = *pv;
    d->left--;
    return 1;
}

int gl_pack_decode(const void *data, size_t len, int n, struct gl_row *rows)
{
    if (n < 0 || n > GL_PACK_ROWS)
        return -1;
    struct gl_pack_dec d;
    gl_pack_dec_init(&d, data, len, n);
    int got = 0, r;
    while ((r = gl_pack_dec_next(&d, &rows[got])) == 1)
        got++;
    return r < 0 || got != n ? -1 : n;
}
