/* test_blockmodel.c — PyTorch's caching-allocator rules replayed by
 * store/blockmodel.c, with exact sizes: rounding (512 B, and
 * roundup_power2_divisions), splitting in the small pool, the large pool
 * (remainder over 1 MiB; max_split_size) and expandable segments, merging
 * of freed neighbours, a free delayed by record_stream, pages mapped and
 * unmapped, a snapshot taken at attach, events the model cannot place, and
 * the holes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "blockmodel.h"

#define KiB 1024ULL
#define MiB (1024ULL * 1024)
#define B0 0x7f0000000000ULL
#define L0 0x7f1000000000ULL
#define E0 0x7f2000000000ULL

static void holes(struct gl_bm *m, int dev, uint64_t bytes, uint64_t count, uint64_t largest)
{
    struct gl_bm_holes h;
    gl_bm_holes(m, dev, &h);
    assert_int_equal(h.free_bytes, bytes);
    assert_int_equal(h.count, count);
    assert_int_equal(h.largest, largest);
}

static uint64_t alloc(struct gl_bm *m, uint64_t addr, uint64_t req, uint64_t seq, int want_rc)
{
    struct gl_bm_block b;
    assert_int_equal(gl_bm_alloc(m, 0, addr, req, seq, &b), want_rc);
    assert_int_equal(b.addr, addr);
    assert_int_equal(b.requested, req);
    assert_int_equal(b.seq, seq);
    assert_int_equal(b.state, GL_BM_ALLOCATED);
    return b.size;
}

static void free_both(struct gl_bm *m, uint64_t addr, uint64_t want_size, uint64_t want_seq)
{
    struct gl_bm_block b;
    assert_int_equal(gl_bm_free_requested(m, 0, addr, &b), 0);
    assert_int_equal(b.size, want_size);
    assert_int_equal(b.seq, want_seq);
    assert_int_equal(b.state, GL_BM_PENDING);
    assert_int_equal(gl_bm_free_completed(m, 0, addr, &b), 0);
    assert_int_equal(b.size, want_size);
    assert_int_equal(b.seq, want_seq);
}

static void rounding(void **state)
{
    (void)state;
    struct gl_bm *m = gl_bm_new();
    assert_int_equal(gl_bm_round_size(m, 1), 512);
    assert_int_equal(gl_bm_round_size(m, 512), 512);
    assert_int_equal(gl_bm_round_size(m, 513), 1024);
    assert_int_equal(gl_bm_round_size(m, 1000000), 1000448);
    assert_int_equal(gl_bm_round_size(m, 4100), 4608);
    /* roundup_power2_divisions: 4 below 2 MiB (index 0, which takes every
     * smaller size too), 1 (= none) at [8, 16) MiB, 8 at 32 GiB and over */
    gl_bm_set_config(m, 0, 0, 3ULL | 1ULL << 12 | 4ULL << 60);
    assert_int_equal(gl_bm_round_size(m, 4100), 5120);               /* 4 KiB + a quarter */
    assert_int_equal(gl_bm_round_size(m, 2000), 2048);               /* not above 512 x 4: plain */
    assert_int_equal(gl_bm_round_size(m, 1572865), 1835008);         /* 1.5 MiB + 1 -> 1.75 MiB */
    assert_int_equal(gl_bm_round_size(m, 1ULL << 20), 1ULL << 20);   /* a power of two stays */
    assert_int_equal(gl_bm_round_size(m, 9 * MiB + 1), 9 * MiB + 512); /* divisions 1: plain */
    assert_int_equal(gl_bm_round_size(m, 33ULL << 30), 36ULL << 30);  /* 33 GiB, eighths of 32 GiB */
    gl_bm_delete(m);
}

static void small_pool(void **state)
{
    (void)state;
    struct gl_bm *m = gl_bm_new();
    assert_int_equal(gl_bm_segment_alloc(m, 0, B0, 2 * MiB), 0);
    assert_int_equal(alloc(m, B0, 100, 1, 0), 512);
    assert_int_equal(alloc(m, B0 + 512, 1000, 2, 0), 1024);
    assert_int_equal(alloc(m, B0 + 1536, 513, 3, 0), 1024);
    const struct gl_bm_stats *st = gl_bm_stats(m, 0);
    assert_int_equal(st->allocated, 2560);
    assert_int_equal(st->requested, 1613);
    assert_int_equal(st->reserved, 2 * MiB);
    holes(m, 0, 2 * MiB - 2560, 1, 2 * MiB - 2560);
    /* freed between two live blocks: a hole of its own */
    struct gl_bm_block b;
    assert_int_equal(gl_bm_free_requested(m, 0, B0 + 512, &b), 0);
    assert_int_equal(st->allocated, 1536);
    assert_int_equal(st->requested, 1613); /* requested bytes go at FREE_COMPLETED */
    assert_int_equal(gl_bm_free_completed(m, 0, B0 + 512, &b), 0);
    assert_int_equal(b.size, 1024);
    assert_int_equal(st->requested, 613);
    holes(m, 0, 2 * MiB - 1536, 2, 2 * MiB - 2560);
    /* 600 B rounds to 1024: the whole hole (nothing of 512 B would remain) */
    assert_int_equal(alloc(m, B0 + 512, 600, 4, 0), 1024);
    free_both(m, B0 + 512, 1024, 4);
    /* 512 B leaves 512 B: split */
    assert_int_equal(alloc(m, B0 + 512, 512, 5, 0), 512);
    holes(m, 0, 2 * MiB - 2048, 2, 2 * MiB - 2560);
    /* frees merge with free neighbours: back to one free segment */
    free_both(m, B0 + 512, 512, 5);
    free_both(m, B0, 512, 1);
    free_both(m, B0 + 1536, 1024, 3);
    holes(m, 0, 2 * MiB, 1, 2 * MiB);
    assert_int_equal(st->allocated_peak, 2560);
    assert_int_equal(st->requested_peak, 1613);
    assert_int_equal(st->allocated_peak_seq, 3);
    assert_int_equal(gl_bm_segment_free(m, 0, B0, 2 * MiB), 0);
    assert_int_equal(st->reserved, 0);
    assert_int_equal(st->reserved_peak, 2 * MiB);
    assert_int_equal(st->unknown, 0);
    holes(m, 0, 0, 0, 0);
    gl_bm_delete(m);
}

static void large_pool(void **state)
{
    (void)state;
    struct gl_bm *m = gl_bm_new();
    assert_int_equal(gl_bm_segment_alloc(m, 0, L0, 20 * MiB), 0);
    /* 1.5 MiB + 1: 1573376 B, over 1 MiB remains: split */
    assert_int_equal(alloc(m, L0, 1572865, 1, 0), 1573376);
    /* 18 MiB: 523776 B would remain, not over 1 MiB: the whole rest */
    assert_int_equal(alloc(m, L0 + 1573376, 18 * MiB, 2, 0), 20 * MiB - 1573376);
    holes(m, 0, 0, 0, 0);
    free_both(m, L0 + 1573376, 20 * MiB - 1573376, 2);
    free_both(m, L0, 1573376, 1);
    holes(m, 0, 20 * MiB, 1, 20 * MiB);
    /* max_split_size 4 MiB: a 5 MiB request does not split its block */
    gl_bm_set_config(m, 4 * MiB, 0, 0);
    assert_int_equal(alloc(m, L0, 5 * MiB, 3, 0), 20 * MiB);
    free_both(m, L0, 20 * MiB, 3);
    /* but a small one still does */
    assert_int_equal(alloc(m, L0, 3 * MiB, 4, 0), 3 * MiB);
    free_both(m, L0, 3 * MiB, 4);
    assert_int_equal(gl_bm_segment_free(m, 0, L0, 20 * MiB), 0);
    assert_int_equal(gl_bm_stats(m, 0)->unknown, 0);
    gl_bm_delete(m);
}

static void delayed_free(void **state)
{
    (void)state;
    struct gl_bm *m = gl_bm_new();
    gl_bm_segment_alloc(m, 0, B0, 2 * MiB);
    alloc(m, B0, 4096, 1, 0);
    alloc(m, B0 + 4096, 4096, 2, 0);
    struct gl_bm_block b;
    /* the first was used on another stream: requested now, completed later */
    assert_int_equal(gl_bm_free_requested(m, 0, B0, &b), 0);
    free_both(m, B0 + 4096, 4096, 2); /* cannot merge with the pending one */
    holes(m, 0, 2 * MiB - 4096, 1, 2 * MiB - 4096);
    const struct gl_bm_stats *st = gl_bm_stats(m, 0);
    assert_int_equal(st->allocated, 0);
    assert_int_equal(st->active, 4096);
    assert_int_equal(st->requested, 4096);
    assert_int_equal(gl_bm_free_completed(m, 0, B0, &b), 0);
    assert_int_equal(b.seq, 1);
    holes(m, 0, 2 * MiB, 1, 2 * MiB);
    assert_int_equal(st->active, 0);
    gl_bm_delete(m);
}

static void expandable(void **state)
{
    (void)state;
    struct gl_bm *m = gl_bm_new();
    gl_bm_set_config(m, 0, 1, 0);
    assert_int_equal(gl_bm_segment_map(m, 0, E0, 20 * MiB), 0);
    assert_int_equal(gl_bm_segment_map(m, 0, E0 + 20 * MiB, 20 * MiB), 0);
    holes(m, 0, 40 * MiB, 1, 40 * MiB);
    /* expandable segments split any remainder of 512 B or more */
    assert_int_equal(alloc(m, E0, 30 * MiB, 1, 0), 30 * MiB);
    struct gl_bm_block b;
    assert_int_equal(gl_bm_find(m, E0 + 35 * MiB, &b), 1);
    assert_int_equal(b.addr, E0 + 30 * MiB);
    assert_int_equal(b.size, 10 * MiB);
    assert_int_equal(b.state, GL_BM_FREE);
    assert_int_equal(b.segment, E0);
    /* more pages after a live block: a hole of their own, then merged */
    assert_int_equal(gl_bm_segment_map(m, 0, E0 + 40 * MiB, 20 * MiB), 0);
    holes(m, 0, 30 * MiB, 1, 30 * MiB);
    free_both(m, E0, 30 * MiB, 1);
    holes(m, 0, 60 * MiB, 1, 60 * MiB);
    /* a live block at the start, then pages unmapped in the middle */
    assert_int_equal(alloc(m, E0, 10 * MiB, 2, 0), 10 * MiB);
    assert_int_equal(gl_bm_segment_unmap(m, 0, E0 + 20 * MiB, 20 * MiB), 0);
    const struct gl_bm_stats *st = gl_bm_stats(m, 0);
    assert_int_equal(st->reserved, 40 * MiB);
    holes(m, 0, 30 * MiB, 2, 20 * MiB);
    assert_int_equal(gl_bm_find(m, E0 + 45 * MiB, &b), 1);
    assert_int_equal(b.addr, E0 + 40 * MiB);
    assert_int_equal(b.size, 20 * MiB);
    assert_int_equal(b.segment, E0 + 40 * MiB);
    assert_int_equal(gl_bm_find(m, E0 + 25 * MiB, &b), 0); /* unmapped */
    /* mapped again: the three free pieces are one block again */
    assert_int_equal(gl_bm_segment_map(m, 0, E0 + 20 * MiB, 20 * MiB), 0);
    holes(m, 0, 50 * MiB, 1, 50 * MiB);
    assert_int_equal(gl_bm_find(m, E0 + 25 * MiB, &b), 1);
    assert_int_equal(b.addr, E0 + 10 * MiB);
    assert_int_equal(b.segment, E0);
    free_both(m, E0, 10 * MiB, 2);
    /* empty_cache: everything unmapped */
    assert_int_equal(gl_bm_segment_unmap(m, 0, E0, 60 * MiB), 0);
    holes(m, 0, 0, 0, 0);
    assert_int_equal(st->reserved, 0);
    assert_int_equal(st->reserved_peak, 60 * MiB);
    assert_int_equal(st->unknown, 0);
    gl_bm_delete(m);
}

static void snapshot_at_attach(void **state)
{
    (void)state;
    struct gl_bm *m = gl_bm_new();
    assert_int_equal(gl_bm_snapshot_segment(m, 0, B0, 2 * MiB, 0), 0);
    assert_int_equal(gl_bm_snapshot_block(m, 0, B0, 512, 100, GL_BM_ALLOCATED, 7), 0);
    assert_int_equal(gl_bm_snapshot_block(m, 0, B0 + 512, 1024, 1000, GL_BM_PENDING, 8), 0);
    assert_int_equal(gl_bm_snapshot_block(m, 0, B0 + 1536, 2 * MiB - 1536, 0, GL_BM_FREE, 9), 0);
    const struct gl_bm_stats *st = gl_bm_stats(m, 0);
    assert_int_equal(st->allocated, 512);
    assert_int_equal(st->active, 1536);
    assert_int_equal(st->requested, 1100);
    assert_int_equal(st->reserved, 2 * MiB);
    struct gl_bm_block b;
    assert_int_equal(gl_bm_free_completed(m, 0, B0 + 512, &b), 0);
    assert_int_equal(b.seq, 8);
    holes(m, 0, 2 * MiB - 512, 1, 2 * MiB - 512);
    free_both(m, B0, 512, 7);
    holes(m, 0, 2 * MiB, 1, 2 * MiB);
    assert_int_equal(gl_bm_segment_free(m, 0, B0, 2 * MiB), 0);
    assert_int_equal(st->unknown, 0);
    gl_bm_delete(m);
}

static void what_does_not_fit(void **state)
{
    (void)state;
    struct gl_bm *m = gl_bm_new();
    /* a block of a segment never seen (attached late): its rounded size */
    assert_int_equal(alloc(m, B0 + 4096, 1000, 1, 1), 1024);
    free_both(m, B0 + 4096, 1024, 1);
    holes(m, 0, 0, 0, 0); /* not a hole we know */
    /* frees of unknown blocks */
    struct gl_bm_block b;
    assert_int_equal(gl_bm_free_requested(m, 0, L0, &b), 1);
    assert_int_equal(gl_bm_free_completed(m, 0, L0, &b), 1);
    /* a lost free: the next allocation at its address frees it first */
    gl_bm_segment_alloc(m, 0, B0, 2 * MiB);
    alloc(m, B0, 512, 2, 0);
    assert_int_equal(alloc(m, B0, 512, 3, 1), 512);
    /* devices are kept apart */
    gl_bm_segment_alloc(m, 3, L0, 20 * MiB);
    assert_int_equal(gl_bm_stats(m, 3)->reserved, 20 * MiB);
    assert_int_equal(gl_bm_stats(m, 0)->reserved, 2 * MiB);
    holes(m, 3, 20 * MiB, 1, 20 * MiB);
    assert_int_equal(gl_bm_stats(m, 0)->unknown, 4);
    gl_bm_delete(m);
}

static void many_blocks(void **state)
{
    (void)state;
    /* 4096 small blocks fill a segment; every other one freed; then all:
     * the model merges back to one free segment */
    struct gl_bm *m = gl_bm_new();
    gl_bm_segment_alloc(m, 0, B0, 2 * MiB);
    for (uint64_t i = 0; i < 4096; i++)
        assert_int_equal(alloc(m, B0 + i * 512, 1 + i % 512, i + 1, 0), 512);
    holes(m, 0, 0, 0, 0);
    for (uint64_t i = 0; i < 4096; i += 2)
        free_both(m, B0 + i * 512, 512, i + 1);
    holes(m, 0, 1 * MiB, 2048, 512);
    for (uint64_t i = 1; i < 4096; i += 2)
        free_both(m, B0 + i * 512, 512, i + 1);
    holes(m, 0, 2 * MiB, 1, 2 * MiB);
    assert_int_equal(gl_bm_stats(m, 0)->requested, 0);
    gl_bm_delete(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(rounding),         cmocka_unit_test(small_pool),          cmocka_unit_test(large_pool),
        cmocka_unit_test(delayed_free),     cmocka_unit_test(expandable),          cmocka_unit_test(snapshot_at_attach),
        cmocka_unit_test(what_does_not_fit), cmocka_unit_test(many_blocks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
