/* test_pack.c — the pack codec (store/pack.h): random rows, NULLs, gaps in
 * seq, times going backwards and the extreme values (a difference of
 * INT64_MIN, the 65-bit case) come back exactly; a damaged blob is refused,
 * never read past its end. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdint.h>
#include <string.h>

#include "pack.h"

static uint64_t rng = 88172645463325252ULL;
static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static int64_t value(void)
{
    switch (next() % 6) {
    case 0:
        return INT64_MIN;
    case 1:
        return INT64_MAX;
    case 2:
        return 0;
    case 3:
        return (int64_t)(next() % 8);
    default:
        return (int64_t)next();
    }
}

static void roundtrip(struct gl_row *rows, int n)
{
    static struct gl_pack_enc e;
    gl_pack_enc_reset(&e);
    int full = 0, i;
    for (i = 0; i < n && !full; i++)
        full = gl_pack_enc_add(&e, &rows[i]);
    int written = i;
    assert_int_equal(e.info.n, written);
    assert_true(e.len <= sizeof e.buf);
    struct gl_pack_dec d;
    gl_pack_dec_init(&d, e.buf, e.len, written);
    struct gl_row got;
    for (i = 0; i < written; i++) {
        assert_int_equal(gl_pack_dec_next(&d, &got), 1);
        assert_int_equal(got.null, rows[i].null);
        for (int c = 0; c < GL_ROW_COLS; c++)
            if (!(got.null & (1u << c)))
                assert_true(got.v[c] == rows[i].v[c]);
    }
    assert_int_equal(gl_pack_dec_next(&d, &got), 0);
    assert_true(d.p == d.end);
    /* every shorter blob is refused before its last row */
    for (size_t cut = 0; cut < e.len; cut += 1 + e.len / 64) {
        gl_pack_dec_init(&d, e.buf, cut, written);
        int r = 1, k = 0;
        while ((r = gl_pack_dec_next(&d, &got)) == 1)
            k++;
        assert_int_equal(r, -1);
        assert_true(k < written);
    }
}

static void test_random_and_extreme_rows(void **state)
{
    (void)state;
    static struct gl_row rows[GL_PACK_ROWS];
    for (int round = 0; round < 300; round++) {
        int64_t seq = round == 0 ? INT64_MIN + 1 : (int64_t)(next() % 1000);
        for (int i = 0; i < GL_PACK_ROWS; i++) {
            struct gl_row *r = &rows[i];
            memset(r, 0, sizeof *r);
            seq += next() % 4 ? 1 : 1 + (int64_t)(next() % 100000);
            r->v[0] = seq;
            r->v[1] = value();
            for (int c = 2; c < GL_ROW_COLS; c++) {
                if (next() % 5 == 0)
                    r->null |= (uint16_t)(1u << c);
                else
                    r->v[c] = i && next() % 3 == 0 ? rows[i - 1].v[c] : value();
            }
        }
        roundtrip(rows, GL_PACK_ROWS);
    }
}

static void test_a_loop_packs_small(void **state)
{
    (void)state;
    static struct gl_row rows[GL_PACK_ROWS];
    for (int i = 0; i < GL_PACK_ROWS; i++) {
        struct gl_row *r = &rows[i];
        memset(r, 0, sizeof *r);
        r->v[0] = 1000 + i;
        r->v[1] = 400000000000000LL + 700 * i;
        r->v[2] = 1;
        r->v[3] = i % 2 ? 2 : 1;
        r->v[4] = 11;
        r->v[6] = 0x7f0000000000LL + (i / 2) * 4096;
        r->v[7] = 4096;
        r->v[8] = i % 2 ? 0 : 1 + i % 16;
        r->v[9] = i % 2 ? r->v[0] - 1 : 0;
        r->null = (uint16_t)((i % 2 ? 1u << 8 : 1u << 9) | 1u << 10 | 1u << 11);
    }
    static struct gl_pack_enc e;
    gl_pack_enc_reset(&e);
    for (int i = 0; i < GL_PACK_ROWS; i++)
        assert_int_equal(gl_pack_enc_add(&e, &rows[i]), i == GL_PACK_ROWS - 1);
    /* an alloc+free pair of a loop: at most 12 bytes a row (a table row: ~45) */
    assert_true(e.len <= 12 * GL_PACK_ROWS);
    assert_true(e.info.seq_lo == 1000 && e.info.seq_hi == 1000 + GL_PACK_ROWS - 1);
    assert_true(e.info.ops == ((1u << 1) | (1u << 2)) && e.info.kinds == 1u << 11);
    roundtrip(rows, GL_PACK_ROWS);
}

static void test_damaged_varints(void **state)
{
    (void)state;
    static const uint8_t too_long[] = {0, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01};
    static const uint8_t bad_mask[] = {0xff, 0x7f, 0};
    struct gl_pack_dec d;
    struct gl_row r;
    gl_pack_dec_init(&d, too_long, sizeof too_long, 1);
    assert_int_equal(gl_pack_dec_next(&d, &r), -1);
    gl_pack_dec_init(&d, bad_mask, sizeof bad_mask, 1);
    assert_int_equal(gl_pack_dec_next(&d, &r), -1);
    gl_pack_dec_init(&d, NULL, 0, 3);
    assert_int_equal(gl_pack_dec_next(&d, &r), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_and_extreme_rows),
        cmocka_unit_test(test_a_loop_packs_small),
        cmocka_unit_test(test_damaged_varints),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
