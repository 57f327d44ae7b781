/* test_freemap.c — the shared free-space arithmetic (report/freemap.c):
 * hand-worked cases with exact figures, then random allocations and frees
 * (overlapping ones too) against a byte-by-byte reference. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "freemap.h"

#define PAGE 4096u

static void assert_stats(const struct gl_freemap *m, uint64_t used, uint64_t free_b, uint64_t largest,
                         uint64_t holes)
{
    struct gl_free_stats s;
    gl_freemap_stats(m, &s);
    assert_int_equal(s.used, used);
    assert_int_equal(s.free, free_b);
    assert_int_equal(s.extent, used + free_b);
    assert_int_equal(s.largest_free, largest);
    assert_int_equal(s.holes, holes);
}

/* A heap of 8 pages: pages 0..7 taken, then 1, 3, 4 and 6 given back. */
static void test_pages_by_hand(void **state)
{
    (void)state;
    uint64_t base = 0x7f0000000000ULL, cuts[9];
    for (int i = 0; i <= 8; i++)
        cuts[i] = base + (uint64_t)i * PAGE;
    struct gl_freemap m;
    assert_int_equal(gl_freemap_init(&m, base, base + 8 * PAGE, cuts, 9), 0);
    assert_stats(&m, 0, 8 * PAGE, 8 * PAGE, 1); /* all free: one hole */
    for (int i = 0; i < 8; i++)
        gl_freemap_add(&m, cuts[i], cuts[i + 1], +1);
    assert_stats(&m, 8 * PAGE, 0, 0, 0);
    struct gl_free_stats s;
    gl_freemap_stats(&m, &s);
    assert_true(s.external_fragmentation == 0.0);
    assert_true(s.largest_free_ratio == 1.0);
    const int back[] = {1, 3, 4, 6};
    for (int i = 0; i < 4; i++)
        gl_freemap_add(&m, cuts[back[i]], cuts[back[i] + 1], -1);
    /* free: [1] [3 4] [6] -> 3 holes, 4 pages free, largest 2 pages */
    assert_stats(&m, 4 * PAGE, 4 * PAGE, 2 * PAGE, 3);
    gl_freemap_stats(&m, &s);
    assert_true(s.external_fragmentation == 0.5);
    assert_true(s.largest_free_ratio == 0.5);
    /* occupancy of pages 2..5 (2 and 5 used): 2 pages */
    assert_int_equal(gl_freemap_used_in(&m, cuts[2], cuts[6]), 2 * PAGE);
    /* a column that cuts pages in half: half of page 0 and all of 1 */
    assert_int_equal(gl_freemap_used_in(&m, base + PAGE / 2, cuts[2]), PAGE / 2);
    /* page 7 freed: the run [6 7] touches the end */
    gl_freemap_add(&m, cuts[7], cuts[8], -1);
    assert_stats(&m, 3 * PAGE, 5 * PAGE, 2 * PAGE, 3);
    struct gl_free_stats a, b;
    gl_freemap_stats(&m, &a);
    /* 2 and 5 freed: [1..7] one run */
    gl_freemap_add(&m, cuts[2], cuts[3], -1);
    gl_freemap_add(&m, cuts[5], cuts[6], -1);
    assert_stats(&m, PAGE, 7 * PAGE, 7 * PAGE, 1);
    gl_freemap_stats(&m, &b);
    assert_true(gl_free_worse(&a, &b));
    assert_false(gl_free_worse(&b, &a));
    gl_freemap_free(&m);
}

/* Byte-granular allocations of uneven sizes, and an allocation given twice
 * (a free the recorder missed): the cover count keeps it used until both go. */
static void test_bytes_and_overlap(void **state)
{
    (void)state;
    const uint64_t cuts[] = {100, 130, 130, 500, 260, 1000, 999999};
    struct gl_freemap m;
    assert_int_equal(gl_freemap_init(&m, 100, 1000, cuts, sizeof cuts / sizeof cuts[0]), 0);
    assert_int_equal(m.nleaves, 4); /* [100,130) [130,260) [260,500) [500,1000) */
    gl_freemap_add(&m, 130, 260, +1);
    assert_stats(&m, 130, 770, 740, 2);
    gl_freemap_add(&m, 130, 260, +1);
    gl_freemap_add(&m, 130, 260, -1);
    assert_stats(&m, 130, 770, 740, 2);
    gl_freemap_add(&m, 130, 260, -1);
    assert_stats(&m, 0, 900, 900, 1);
    /* out of range and empty calls change nothing */
    gl_freemap_add(&m, 0, 50, +1);
    gl_freemap_add(&m, 500, 500, +1);
    assert_stats(&m, 0, 900, 900, 1);
    gl_freemap_free(&m);
}

/* Two regions of a pool with a gap between them: the gap is neither used
 * nor free and separates the holes. */
static void test_excluded_gap(void **state)
{
    (void)state;
    const uint64_t cuts[] = {0, 100, 200, 300, 400};
    struct gl_freemap m;
    assert_int_equal(gl_freemap_init(&m, 0, 400, cuts, 5), 0);
    gl_freemap_exclude(&m, 200, 300);
    assert_stats(&m, 0, 300, 200, 2);
    gl_freemap_add(&m, 0, 100, +1);
    assert_stats(&m, 100, 200, 100, 2);
    assert_int_equal(gl_freemap_used_in(&m, 0, 400), 100);
    assert_int_equal(gl_freemap_used_in(&m, 150, 400), 0);
    gl_freemap_free(&m);
}

static void test_empty(void **state)
{
    (void)state;
    struct gl_freemap m;
    assert_int_equal(gl_freemap_init(&m, 50, 50, NULL, 0), 0);
    assert_stats(&m, 0, 0, 0, 0);
    gl_freemap_add(&m, 50, 60, +1);
    assert_int_equal(gl_freemap_used_in(&m, 0, 100), 0);
    gl_freemap_free(&m);
}

/* Random operations on a 300-byte space against a byte array. */
static void test_against_reference(void **state)
{
    (void)state;
    enum { N = 300, OPS = 4000 };
    static int cover[N];
    static uint64_t lo_of[OPS], hi_of[OPS];
    uint64_t cuts[2 * OPS + 2];
    size_t ncuts = 0;
    uint64_t x = 0x2545F4914F6CDD1DULL;
    for (int i = 0; i < OPS; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        uint64_t lo = x % N, len = 1 + (x >> 20) % 40;
        lo_of[i] = lo;
        hi_of[i] = lo + len > N ? N : lo + len;
        cuts[ncuts++] = lo_of[i];
        cuts[ncuts++] = hi_of[i];
    }
    struct gl_freemap m;
    assert_int_equal(gl_freemap_init(&m, 0, N, cuts, ncuts), 0);
    memset(cover, 0, sizeof cover);
    int live[OPS], nlive = 0;
    for (int i = 0; i < OPS; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        if (nlive && x % 3 == 0) { /* free a random live one */
            int k = (int)((x >> 8) % (uint64_t)nlive), j = live[k];
            live[k] = live[--nlive];
            gl_freemap_add(&m, lo_of[j], hi_of[j], -1);
            for (uint64_t b = lo_of[j]; b < hi_of[j]; b++)
                cover[b]--;
        } else {
            live[nlive++] = i;
            gl_freemap_add(&m, lo_of[i], hi_of[i], +1);
            for (uint64_t b = lo_of[i]; b < hi_of[i]; b++)
                cover[b]++;
        }
        uint64_t used = 0, largest = 0, holes = 0, run = 0;
        for (int b = 0; b < N; b++) {
            if (cover[b]) {
                used++;
                run = 0;
            } else {
                if (!run)
                    holes++;
                if (++run > largest)
                    largest = run;
            }
        }
        assert_stats(&m, used, N - used, largest, holes);
        uint64_t a = (x >> 16) % N, b = a + (x >> 32) % (N - a + 1), want = 0;
        for (uint64_t k = a; k < b; k++)
            want += cover[k] ? 1 : 0;
        assert_int_equal(gl_freemap_used_in(&m, a, b), want);
    }
    gl_freemap_free(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pages_by_hand),     cmocka_unit_test(test_bytes_and_overlap),
        cmocka_unit_test(test_excluded_gap),      cmocka_unit_test(test_empty),
        cmocka_unit_test(test_against_reference),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
