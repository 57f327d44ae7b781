/* test_queue.c — the bounded MPSC queue: capacity, order, wrap-around, the
 * producers' cached tail (full, crowded, reset), held slots (amended by
 * their producer or stolen by the consumer), and multi-producer stress runs
 * that check nothing is lost or reordered per producer (run under TSan in
 * CI). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <pthread.h>
#include <stdint.h>

#include "queue.h"

static void test_capacity_and_order(void **state)
{
    (void)state;
    struct gl_queue q;
    assert_int_equal(gl_queue_init(&q, 5, 4), 0); /* rounds up to 8 */
    assert_int_equal(gl_queue_map(&q), 0);
    uint64_t pos[9];
    for (int i = 0; i < 8; i++) {
        struct gl_event *ev = gl_queue_try_claim(&q, &pos[i]);
        assert_non_null(ev);
        ev->addr = 100 + (uint64_t)i;
        ev->depth = 4;
        for (int k = 0; k < 4; k++)
            ev->ips[k] = (uintptr_t)(i * 10 + k);
    }
    assert_null(gl_queue_try_claim(&q, &pos[8])); /* full */
    /* Publish out of order: the consumer still sees claim order, and waits
     * for a slot that is claimed but not yet published. */
    gl_queue_publish(&q, pos[1]);
    assert_null(gl_queue_peek(&q));
    gl_queue_publish(&q, pos[0]);
    for (int i = 2; i < 8; i++)
        gl_queue_publish(&q, pos[i]);
    assert_int_equal(gl_queue_backlog(&q), 8);
    for (int i = 0; i < 8; i++) {
        struct gl_event *ev = gl_queue_peek(&q);
        assert_non_null(ev);
        assert_int_equal(ev->addr, 100 + (uint64_t)i);
        assert_int_equal(ev->ips[3], (uintptr_t)(i * 10 + 3));
        gl_queue_release(&q);
    }
    assert_null(gl_queue_peek(&q));
    assert_int_equal(gl_queue_backlog(&q), 0);
    gl_queue_destroy(&q);
}

static void test_wraparound(void **state)
{
    (void)state;
    struct gl_queue q;
    assert_int_equal(gl_queue_init(&q, 4, 0), 0);
    assert_int_equal(gl_queue_map(&q), 0);
    for (uint64_t i = 0; i < 10000; i++) {
        uint64_t pos;
        struct gl_event *ev = gl_queue_try_claim(&q, &pos);
        assert_non_null(ev);
        ev->size = i;
        gl_queue_publish(&q, pos);
        if (i % 3 == 2) { /* consume in bursts */
            for (int k = 0; k < 3; k++) {
                ev = gl_queue_peek(&q);
                assert_non_null(ev);
                assert_int_equal(ev->size, i - 2 + (uint64_t)k);
                gl_queue_release(&q);
            }
        }
    }
    gl_queue_destroy(&q);
}

#define PRODUCERS 4
#define PER_PRODUCER 50000

static struct gl_queue stress_q;

static void *producer(void *arg)
{
    uint64_t id = (uint64_t)(uintptr_t)arg;
    for (uint64_t i = 0; i < PER_PRODUCER; i++) {
        uint64_t pos;
        struct gl_event *ev;
        while ((ev = gl_queue_try_claim(&stress_q, &pos)) == NULL)
            sched_yield();
        ev->tid = (int32_t)id;
        ev->size = i;
        gl_queue_publish(&stress_q, pos);
    }
    return NULL;
}

static void test_multi_producer_stress(void **state)
{
    (void)state;
    assert_int_equal(gl_queue_init(&stress_q, 256, 8), 0);
    assert_int_equal(gl_queue_map(&stress_q), 0);
    pthread_t t[PRODUCERS];
    for (uintptr_t i = 0; i < PRODUCERS; i++)
        pthread_create(&t[i], NULL, producer, (void *)i);
    uint64_t next[PRODUCERS] = {0};
    uint64_t got = 0;
    while (got < (uint64_t)PRODUCERS * PER_PRODUCER) {
        struct gl_event *ev = gl_queue_peek(&stress_q);
        if (!ev) {
            sched_yield();
            continue;
        }
        assert_true(ev->tid >= 0 && ev->tid < PRODUCERS);
        assert_int_equal(ev->size, next[ev->tid]); /* per-producer FIFO, no loss */
        next[ev->tid]++;
        gl_queue_release(&stress_q);
        got++;
    }
    for (int i = 0; i < PRODUCERS; i++) {
        pthread_join(t[i], NULL);
        assert_int_equal(next[i], PER_PRODUCER);
    }
    assert_null(gl_queue_peek(&stress_q));
    gl_queue_destroy(&stress_q);
}

/* Full and crowded are decided from a tail the producer cached: after the
 * consumer catches up, the same thread sees the room again; after a reset
 * (fork child) the cache is void and the ring holds exactly its capacity. */
static void test_cached_tail_full_crowded_reset(void **state)
{
    (void)state;
    struct gl_queue q;
    assert_int_equal(gl_queue_init(&q, 8, 0), 0);
    assert_int_equal(gl_queue_map(&q), 0);
    uint64_t pos;
    for (int i = 0; i < 8; i++) {
        assert_non_null(gl_queue_try_claim(&q, &pos));
        gl_queue_publish(&q, pos);
        assert_int_equal(gl_queue_crowded(&q, pos), i == 7); /* claimed beyond position 6 of 8 */
    }
    assert_null(gl_queue_try_claim(&q, &pos));
    for (int i = 0; i < 5; i++) {
        assert_non_null(gl_queue_peek(&q));
        gl_queue_release(&q);
    }
    for (int i = 0; i < 5; i++) {
        assert_non_null(gl_queue_try_claim(&q, &pos));
        gl_queue_publish(&q, pos);
    }
    assert_int_equal(pos, 12);
    assert_null(gl_queue_try_claim(&q, &pos));
    gl_queue_reset(&q);
    for (int i = 0; i < 8; i++) {
        assert_non_null(gl_queue_try_claim(&q, &pos));
        assert_int_equal(pos, (uint64_t)i);
        gl_queue_publish(&q, pos);
    }
    assert_null(gl_queue_try_claim(&q, &pos));
    for (int i = 0; i < 8; i++) {
        assert_non_null(gl_queue_peek(&q));
        gl_queue_release(&q);
    }
    assert_null(gl_queue_peek(&q));
    gl_queue_destroy(&q);
}

/* A held slot: the consumer waits for it (later slots too), its producer
 * takes it back to amend it or lets it go as it is, or the consumer steals
 * it; whoever moves it first has it. */
static void test_held_slots(void **state)
{
    (void)state;
    struct gl_queue q;
    assert_int_equal(gl_queue_init(&q, 8, 0), 0);
    assert_int_equal(gl_queue_map(&q), 0);
    uint64_t a, b, c;
    struct gl_event *ea = gl_queue_try_claim(&q, &a);
    ea->size = 1;
    gl_queue_hold(&q, a);
    struct gl_event *eb = gl_queue_try_claim(&q, &b);
    eb->size = 2;
    gl_queue_publish(&q, b);
    assert_null(gl_queue_peek(&q)); /* held: not yet, and nothing after it */
    assert_int_equal(gl_queue_held_at(&q), a);
    assert_int_equal(gl_queue_reclaim(&q, a), 1); /* the producer amends it */
    assert_int_equal(gl_queue_held_at(&q), UINT64_MAX);
    assert_null(gl_queue_peek(&q));
    assert_int_equal(gl_queue_steal(&q), 0); /* being amended: not the consumer's */
    ea->flags = 7;
    gl_queue_publish(&q, a);
    struct gl_event *ev = gl_queue_peek(&q);
    assert_ptr_equal(ev, ea);
    assert_int_equal(ev->flags, 7);
    gl_queue_release(&q);
    assert_int_equal(gl_queue_peek(&q)->size, 2);
    gl_queue_release(&q);

    /* let go as it is */
    gl_queue_try_claim(&q, &c)->size = 3;
    gl_queue_hold(&q, c);
    gl_queue_publish_held(&q, c);
    assert_int_equal(gl_queue_peek(&q)->size, 3);
    assert_int_equal(gl_queue_reclaim(&q, c), 0); /* published: no longer the producer's */
    gl_queue_release(&q);

    /* stolen: the producer finds it gone, and letting it go does nothing */
    gl_queue_try_claim(&q, &c)->size = 4;
    gl_queue_hold(&q, c);
    assert_int_equal(gl_queue_steal(&q), 1);
    assert_int_equal(gl_queue_reclaim(&q, c), 0);
    gl_queue_publish_held(&q, c);
    assert_int_equal(gl_queue_peek(&q)->size, 4);
    gl_queue_release(&q);
    assert_null(gl_queue_peek(&q));
    assert_int_equal(gl_queue_steal(&q), 0); /* nothing held */
    assert_int_equal(gl_queue_backlog(&q), 0);
    gl_queue_destroy(&q);
}

/* Producers hold every other event and then amend it (a marker in flags,
 * then aux set to match) or let it go; the consumer steals held slots
 * whenever it finds one. Every event arrives once, in order, either as it
 * was or fully amended (TSan: no access to a slot by both sides). */
static void *holding_producer(void *arg)
{
    uint64_t id = (uint64_t)(uintptr_t)arg;
    for (uint64_t i = 0; i < PER_PRODUCER; i++) {
        uint64_t pos;
        struct gl_event *ev;
        while ((ev = gl_queue_try_claim(&stress_q, &pos)) == NULL)
            sched_yield();
        ev->tid = (int32_t)id;
        ev->size = i;
        ev->flags = 0;
        ev->aux = 0;
        if (i % 2) {
            gl_queue_publish(&stress_q, pos);
            continue;
        }
        gl_queue_hold(&stress_q, pos);
        if (i % 3 == 0) {
            gl_queue_publish_held(&stress_q, pos);
        } else if (gl_queue_reclaim(&stress_q, pos)) {
            ev->flags = 1;
            ev->aux = i + 1;
            gl_queue_publish(&stress_q, pos);
        }
    }
    return NULL;
}

static void test_held_slots_stress(void **state)
{
    (void)state;
    assert_int_equal(gl_queue_init(&stress_q, 64, 8), 0);
    assert_int_equal(gl_queue_map(&stress_q), 0);
    pthread_t t[PRODUCERS];
    for (uintptr_t i = 0; i < PRODUCERS; i++)
        pthread_create(&t[i], NULL, holding_producer, (void *)i);
    uint64_t next[PRODUCERS] = {0}, got = 0, amended = 0, stolen = 0;
    while (got < (uint64_t)PRODUCERS * PER_PRODUCER) {
        struct gl_event *ev = gl_queue_peek(&stress_q);
        if (!ev) {
            if (gl_queue_held_at(&stress_q) != UINT64_MAX && gl_queue_steal(&stress_q))
                stolen++;
            else
                sched_yield();
            continue;
        }
        assert_true(ev->tid >= 0 && ev->tid < PRODUCERS);
        assert_int_equal(ev->size, next[ev->tid]);
        assert_int_equal(ev->aux, ev->flags ? ev->size + 1 : 0); /* whole or untouched */
        amended += ev->flags;
        next[ev->tid]++;
        gl_queue_release(&stress_q);
        got++;
    }
    for (int i = 0; i < PRODUCERS; i++) {
        pthread_join(t[i], NULL);
        assert_int_equal(next[i], PER_PRODUCER);
    }
    assert_true(amended + stolen > 0);
    assert_null(gl_queue_peek(&stress_q));
    gl_queue_destroy(&stress_q);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_capacity_and_order),
        cmocka_unit_test(test_wraparound),
        cmocka_unit_test(test_multi_producer_stress),
        cmocka_unit_test(test_cached_tail_full_crowded_reset),
        cmocka_unit_test(test_held_slots),
        cmocka_unit_test(test_held_slots_stress),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
