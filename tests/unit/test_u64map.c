/* test_u64map.c — the writer's hash map against a brute-force reference,
 * including the marker keys 0 and UINT64_MAX and heavy deletion. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdint.h>
#include <stdlib.h>

#include "u64map.h"

#define N 20000

static void test_against_reference(void **state)
{
    (void)state;
    struct gl_u64map m;
    gl_u64map_init(&m);
    static uint64_t keys[N], vals[N];
    static int present[N];
    uint64_t x = 88172645463325252ULL;
    for (int i = 0; i < N; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        keys[i] = i == 0 ? 0 : i == 1 ? UINT64_MAX : i == 2 ? 0x8000000000000001ULL + 2 : x;
        vals[i] = (uint64_t)i * 7;
        assert_int_equal(gl_u64map_put(&m, keys[i], vals[i]), 0);
        present[i] = 1;
    }
    assert_int_equal(m.count, N);
    for (int i = 0; i < N; i += 2) {
        assert_int_equal(gl_u64map_del(&m, keys[i]), 1);
        present[i] = 0;
    }
    assert_int_equal(gl_u64map_del(&m, keys[0]), 0);
    for (int i = 0; i < N; i += 4) { /* re-insert some over tombstones */
        assert_int_equal(gl_u64map_put(&m, keys[i], 1), 0);
        present[i] = 1;
        vals[i] = 1;
    }
    for (int i = 0; i < N; i++) {
        uint64_t v = 12345;
        int found = gl_u64map_get(&m, keys[i], &v);
        assert_int_equal(found, present[i]);
        if (found)
            assert_int_equal(v, vals[i]);
    }
    assert_int_equal(m.count, N / 2 + N / 4);
    gl_u64map_free(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_against_reference)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
