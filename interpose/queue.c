/* queue.c — the bounded lock-free MPSC ring described in queue.h. */
#include "queue.h"

#include <stdio.h>

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

struct slot_head {
    _Atomic uint64_t seq;
    uint64_t pad;
};

static struct slot_head *slot_at(struct gl_queue *q, uint64_t pos)
{
    return (struct slot_head *)(void *)(q->slots + (size_t)(pos & q->mask) * q->slot_size);
}

static struct gl_event *slot_event(struct slot_head *s)
{
    return (struct gl_event *)(void *)(s + 1);
}

/* A slot's seq word is stored less its index in the ring, so that the
 * zero pages of a fresh mapping read as "free at lap 0" (seq = index): the
 * ring needs no writing before its first event, and a fork child's wiped
 * copy is a reset ring. The HELD/BUSY bits sit above any position. */
static uint64_t seq_load(struct gl_queue *q, uint64_t pos, memory_order mo)
{
    return atomic_load_explicit(&slot_at(q, pos)->seq, mo) + (pos & q->mask);
}

static void seq_store(struct gl_queue *q, uint64_t pos, uint64_t v, memory_order mo)
{
    atomic_store_explicit(&slot_at(q, pos)->seq, v - (pos & q->mask), mo);
}

static int seq_cas(struct gl_queue *q, uint64_t pos, uint64_t expect, uint64_t v, memory_order ok)
{
    uint64_t e = expect - (pos & q->mask);
    return atomic_compare_exchange_strong_explicit(&slot_at(q, pos)->seq, &e, v - (pos & q->mask), ok,
                                                   memory_order_relaxed);
}

size_t gl_queue_slot_bytes(uint32_t slot_words)
{
    size_t sz = sizeof(struct slot_head) + sizeof(struct gl_event) + (size_t)slot_words * sizeof(uintptr_t);
    return (sz + 63) & ~(size_t)63;
}

int gl_queue_init(struct gl_queue *q, size_t capacity, uint32_t slot_words)
{
    size_t cap = 2;
    while (cap < capacity)
        cap <<= 1;
    memset(q, 0, sizeof(*q));
    q->slot_size = gl_queue_slot_bytes(slot_words);
    q->mask = cap - 1;
    q->slot_words = slot_words;
    gl_queue_reset(q);
    return 0;
}

int gl_queue_map(struct gl_queue *q)
{
    if (atomic_load_explicit(&q->slots_mapped, memory_order_acquire))
        return 0;
    /* mmap, not malloc: pages are touched only as the ring is used, and the
     * memory never comes from (or disturbs) the application's heap. Wiped
     * in a fork child: the child's ring is empty and costs the fork no
     * page-table copy. */
    size_t len = (q->mask + 1) * q->slot_size;
    void *mem = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (mem == MAP_FAILED)
        return -1;
#ifdef MADV_WIPEONFORK
    madvise(mem, len, MADV_WIPEONFORK);
#endif
    uintptr_t expect = 0;
    if (!atomic_compare_exchange_strong(&q->slots_mapped, &expect, (uintptr_t)mem)) {
        munmap(mem, len); /* another thread mapped it first */
        return 0;
    }
    q->slots = mem;
    return 0;
}

void gl_queue_destroy(struct gl_queue *q)
{
    if (q->slots)
        munmap(q->slots, (q->mask + 1) * q->slot_size);
    q->slots = NULL;
    atomic_store(&q->slots_mapped, 0);
}

void gl_queue_reset(struct gl_queue *q)
{
    /* zero pages are the empty ring (seq_load); after a fork that wiped
     * the ring there is nothing to drop */
    if (q->slots)
        madvise(q->slots, (q->mask + 1) * q->slot_size, MADV_DONTNEED);
    atomic_fetch_add_explicit(&q->gen, 1, memory_order_relaxed);
    atomic_store_explicit(&q->head, 0, memory_order_relaxed);
    atomic_store_explicit(&q->tail, 0, memory_order_relaxed);
    atomic_store_explicit(&q->dropped, 0, memory_order_release);
}

/* The last tail this thread read, for one queue in one generation: a lower
 * bound of the real tail (which only grows until a reset). */
static __thread struct {
    const struct gl_queue *q;
    uint32_t gen;
    uint64_t tail;
} seen __attribute__((tls_model("initial-exec")));

static uint64_t seen_tail(struct gl_queue *q)
{
    if (seen.q == q && seen.gen == atomic_load_explicit(&q->gen, memory_order_relaxed))
        return seen.tail;
    return UINT64_MAX; /* unknown: reads as "maybe full" */
}

static uint64_t read_tail(struct gl_queue *q)
{
    seen.gen = atomic_load_explicit(&q->gen, memory_order_relaxed);
    /* acquire: the consumer is done with every slot before tail */
    seen.tail = atomic_load_explicit(&q->tail, memory_order_acquire);
    seen.q = q;
    return seen.tail;
}

struct gl_event *gl_queue_try_claim(struct gl_queue *q, uint64_t *pos_out)
{
    const uint64_t cap = q->mask + 1;
    uint64_t tail = seen_tail(q);
    uint64_t pos = atomic_load_explicit(&q->head, memory_order_relaxed);
    for (;;) {
        if (tail == UINT64_MAX || pos - tail >= cap) {
            tail = read_tail(q);
            if ((int64_t)(pos - tail) < 0) { /* pos is older than the tail just read */
                pos = atomic_load_explicit(&q->head, memory_order_relaxed);
                continue;
            }
            if (pos - tail >= cap)
                return NULL; /* full: the consumer has not freed this slot yet */
        }
        if (atomic_compare_exchange_weak_explicit(&q->head, &pos, pos + 1, memory_order_relaxed,
                                                  memory_order_relaxed)) {
            *pos_out = pos;
            return slot_event(slot_at(q, pos));
        }
        /* pos now holds the current head: check it against tail again */
    }
}

int gl_queue_crowded(struct gl_queue *q, uint64_t pos)
{
    const uint64_t limit = q->mask - (q->mask >> 2);
    uint64_t tail = seen_tail(q);
    if (tail != UINT64_MAX && pos - tail <= limit)
        return 0;
    tail = read_tail(q);
    return (int64_t)(pos - tail) > (int64_t)limit;
}

void gl_queue_publish(struct gl_queue *q, uint64_t pos)
{
    seq_store(q, pos, pos + 1, memory_order_release);
}

/* A slot's seq word: pos (free to claim at that lap), pos + 1 (published),
 * (pos + 1) | HELD (published, its producer may take it back), (pos + 1) |
 * BUSY (taken back, being amended). Positions never reach bit 62. */
#define HELD (1ULL << 63)
#define BUSY (1ULL << 62)

void gl_queue_hold(struct gl_queue *q, uint64_t pos)
{
    seq_store(q, pos, (pos + 1) | HELD, memory_order_release);
}

int gl_queue_reclaim(struct gl_queue *q, uint64_t pos)
{
    return seq_cas(q, pos, (pos + 1) | HELD, (pos + 1) | BUSY, memory_order_acquire);
}

void gl_queue_publish_held(struct gl_queue *q, uint64_t pos)
{
    seq_cas(q, pos, (pos + 1) | HELD, pos + 1, memory_order_release);
}

uint64_t gl_queue_held_at(struct gl_queue *q)
{
    uint64_t tail = atomic_load_explicit(&q->tail, memory_order_relaxed);
    uint64_t seq = seq_load(q, tail, memory_order_relaxed);
    return seq == ((tail + 1) | HELD) ? tail : UINT64_MAX;
}

int gl_queue_steal(struct gl_queue *q)
{
    uint64_t tail = atomic_load_explicit(&q->tail, memory_order_relaxed);
    /* acquire: the producer's writes before it held the slot */
    return seq_cas(q, tail, (tail + 1) | HELD, tail + 1, memory_order_acquire);
}

void gl_queue_prefetch(struct gl_queue *q, uint64_t pos)
{
    const char *p = (const char *)slot_at(q, pos);
    size_t n = q->slot_size < 320 ? q->slot_size : 320;
    for (size_t off = 0; off < n; off += 64) /* prefetchw: a no-op where the CPU lacks it */
        __asm__ volatile("prefetchw %0" ::"m"(*(p + off)));
}

struct gl_event *gl_queue_peek(struct gl_queue *q)
{
    uint64_t tail = atomic_load_explicit(&q->tail, memory_order_relaxed);
    if (!q->slots || seq_load(q, tail, memory_order_acquire) != tail + 1)
        return NULL;
    return slot_event(slot_at(q, tail));
}

void gl_queue_release(struct gl_queue *q)
{
    uint64_t tail = atomic_load_explicit(&q->tail, memory_order_relaxed);
    /* release: our reads of the slot happen before a producer reuses it */
    atomic_store_explicit(&q->tail, tail + 1, memory_order_release);
}

uint64_t gl_queue_consumed(const struct gl_queue *q)
{
    return atomic_load_explicit(&q->tail, memory_order_relaxed);
}

uint64_t gl_queue_backlog(struct gl_queue *q)
{
    return atomic_load_explicit(&q->head, memory_order_relaxed) -
           atomic_load_explicit(&q->tail, memory_order_relaxed);
}

void gl_queue_meta(const struct gl_queue *q, gl_meta_put put, void *ctx)
{
    char num[32];
    snprintf(num, sizeof num, "%zu", (size_t)(q->mask + 1));
    put(ctx, "queue_slots", num);
}
