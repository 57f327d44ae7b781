/* ledger.h — what is live, in memory on the writer thread: each begun
 * allocation, physical handle, reserved range and mapping by its space and
 * address (or handle), so that what ends it finds it (free <-> alloc
 * pairing), and per device the live and peak bytes of what counts as device
 * memory (gl_kind_counts_on_device), also for windows from checkpoints
 * on (windows.h); sub-allocations (layer SUB) are paired in spaces of their
 * own and left out of the per-device figures. No SQL. */
#ifndef GL_LEDGER_H
#define GL_LEDGER_H

#include <stddef.h>
#include <stdint.h>

#include "gl_event.h"
#include "u64map.h"
#include "windows.h"

struct gl_live {
    uint64_t seq, size; /* the row that began it, its bytes */
    uint64_t pool;      /* its pool (a region: its heap) */
    int32_t device;
    uint8_t kind;
};

struct gl_dev_stats {
    int dirty; /* changed since last reported */
    uint64_t live, peak, peak_ns, peak_seq, allocs, frees;
};

struct gl_ledger {
    struct gl_u64map index[GL_NPAIR_SPACES]; /* address/handle -> index in lives[], by gl_event_space */
    struct gl_live *lives;
    size_t nlives, lives_cap;
    uint64_t *spare; /* free slots of lives[] */
    size_t nspare, spare_cap;
    struct gl_dev_stats dev[GL_MAX_DEVICES + 1]; /* index device + 1 (-1 = unknown) */
    /* measurements from checkpoints on: the device layer is changed here,
     * the allocator-block layer by the store's part for PyTorch */
    struct gl_windows windows;
};

void gl_ledger_init(struct gl_ledger *l);
void gl_ledger_free(struct gl_ledger *l);
/* ev began something at key in space, as row seq. Something still live at
 * the same key (its end was never seen) is forgotten. */
void gl_ledger_add(struct gl_ledger *l, int space, uint64_t key, uint64_t seq, const struct gl_event *ev);
/* What is live at key, left live: 1 with it in *out, 0 if nothing is. */
int gl_ledger_peek(const struct gl_ledger *l, int space, uint64_t key, struct gl_live *out);
/* What is live at key, to read or change in place (e.g. a resized
 * region's size); NULL if nothing is. Valid until the next add or take. */
struct gl_live *gl_ledger_find(struct gl_ledger *l, int space, uint64_t key);
/* End what is live at key: 1 with it in *out, 0 if nothing was. */
int gl_ledger_take(struct gl_ledger *l, int space, uint64_t key, struct gl_live *out);
/* Walk what is live in space (safe while taking): from *pos = 0, 1 with the
 * next key and entry, 0 at the end. */
int gl_ledger_next(const struct gl_ledger *l, int space, size_t *pos, uint64_t *key, struct gl_live *out);
/* Devices whose figures changed since the last walk: from *pos = 0, 1 with
 * the next one (device -1: unknown), 0 at the end. */
int gl_ledger_next_dirty(struct gl_ledger *l, int *pos, int *device, struct gl_dev_stats *out);
/* Sum of the per-device peaks. */
uint64_t gl_ledger_peak_total(const struct gl_ledger *l);

#endif
