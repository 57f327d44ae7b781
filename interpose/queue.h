/* queue.h — bounded lock-free multi-producer / single-consumer queue of
 * fixed-size event slots.
 *
 * A producer claims a slot (a CAS on head), builds its event directly inside
 * it (no copy), then publishes it (the slot's sequence word). The consumer
 * (the writer thread) takes published slots in claim order and advances
 * tail. A slot is free when tail has passed it by a lap; each producer
 * thread keeps the last tail it read and reads the real one only when that
 * says the ring may be full, so in the steady state a producer touches no
 * cache line the consumer writes (the seq word of its own slot aside).
 * Nothing here allocates after gl_queue_init or takes a lock. */
#ifndef GL_QUEUE_H
#define GL_QUEUE_H

#include <stddef.h>
#include <stdint.h>
#include <stdatomic.h>

#include "gl_event.h"
#include "meta.h"

struct gl_queue {
    unsigned char *slots; /* capacity * slot_size bytes; NULL until gl_queue_map */
    _Atomic uintptr_t slots_mapped; /* the same, set once (gl_queue_map's race) */
    size_t slot_size;
    uint64_t mask;        /* capacity - 1 */
    uint32_t slot_words;  /* ips[] capacity of each slot, in words */
    _Atomic uint32_t gen; /* bumped by gl_queue_reset: producers' cached tails are void */
    _Alignas(64) _Atomic uint64_t head; /* next position to claim */
    _Alignas(64) _Atomic uint64_t tail; /* next position to consume (written by the consumer only) */
    _Alignas(64) _Atomic uint64_t dropped; /* events given up on a full queue */
};

/* capacity is rounded up to a power of two (at least 2). Maps nothing:
 * a process that records no event pays nothing for its ring. Returns 0. */
int gl_queue_init(struct gl_queue *q, size_t capacity, uint32_t slot_words);
/* The bytes one slot takes (the ring: capacity times that). */
size_t gl_queue_slot_bytes(uint32_t slot_words);
/* Map the ring (before the first claim; any thread, any number of times):
 * zero pages, touched only as slots are used. Returns 0 or -1 (errno). */
int gl_queue_map(struct gl_queue *q);
void gl_queue_destroy(struct gl_queue *q);
/* Forget everything in flight (used in a fork child, single-threaded):
 * the pages go back to zero, nothing is written. */
void gl_queue_reset(struct gl_queue *q);

/* Claim a slot. Returns the event to fill, or NULL when the queue is full.
 * *pos receives the claim position to pass to gl_queue_publish. */
struct gl_event *gl_queue_try_claim(struct gl_queue *q, uint64_t *pos);
void gl_queue_publish(struct gl_queue *q, uint64_t pos);
/* Ask for the first cache lines of the slot at pos for writing (the next
 * event's, called after a publish): a slot last touched a lap ago, by the
 * consumer, then is owned by the time it is written, and the next claim's
 * atomic does not wait for those writes. */
void gl_queue_prefetch(struct gl_queue *q, uint64_t pos);
/* 1 if more than three quarters of the ring is claimed and not consumed,
 * as seen from claim position pos (cheap: usually no shared read). */
int gl_queue_crowded(struct gl_queue *q, uint64_t pos);

/* A held slot: published, but its producer may still take it back to amend
 * it (e.g. a PyTorch block's free, to which the completion that usually
 * follows at once is added). The consumer does not take a held slot until
 * it is published again or the consumer steals it, so a held slot must be
 * settled soon: by its producer (gl_queue_reclaim, amend, gl_queue_publish;
 * or gl_queue_publish_held to leave it as it is) or by the consumer
 * (gl_queue_steal) after waiting a while for it. Whoever moves a held slot
 * first has it; the other side finds it gone. */
void gl_queue_hold(struct gl_queue *q, uint64_t pos);
/* Producer: 1 if the held slot at pos is yours again (amend it, then
 * gl_queue_publish), 0 if the consumer stole it already. */
int gl_queue_reclaim(struct gl_queue *q, uint64_t pos);
/* Producer: publish a held slot as it is (nothing if it was stolen). */
void gl_queue_publish_held(struct gl_queue *q, uint64_t pos);

/* Consumer side. Returns the next published event or NULL if the next slot is
 * empty, still being filled, or held. Call gl_queue_release when done with it. */
struct gl_event *gl_queue_peek(struct gl_queue *q);
/* The position of the next slot if it is held (its producer may still take
 * it back), else UINT64_MAX. */
uint64_t gl_queue_held_at(struct gl_queue *q);
/* Take the held next slot as it is: 1 if taken (gl_queue_peek returns it),
 * 0 if its producer took it back or published it first. */
int gl_queue_steal(struct gl_queue *q);
void gl_queue_release(struct gl_queue *q);
/* Slots consumed so far (the tail): grows while the consumer works. */
uint64_t gl_queue_consumed(const struct gl_queue *q);
/* Claimed-but-not-consumed slots (approximate, for stats). */
uint64_t gl_queue_backlog(struct gl_queue *q);
/* meta queue_slots: the ring's size. */
void gl_queue_meta(const struct gl_queue *q, gl_meta_put put, void *ctx);

#endif
