/* u64map.h — open-addressing hash map from a non-zero 64-bit key to a 64-bit
 * value. Used by the writer for frame, stack and live-allocation lookups;
 * never on an application thread. */
#ifndef GL_U64MAP_H
#define GL_U64MAP_H

#include <stddef.h>
#include <stdint.h>

struct gl_u64map {
    uint64_t *keys; /* 0 = empty, UINT64_MAX = deleted */
    uint64_t *vals;
    size_t cap, count, used;
    int has_zero, has_max; /* the two marker keys live outside the table */
    uint64_t zero_val, max_val;
};

void gl_u64map_init(struct gl_u64map *m);
void gl_u64map_free(struct gl_u64map *m);
/* Returns 1 and sets *val if found. Any 64-bit key works. Iterating keys[]
 * directly skips the keys 0 and UINT64_MAX. */
int gl_u64map_get(const struct gl_u64map *m, uint64_t key, uint64_t *val);
/* Insert or overwrite. Returns 0, or -1 on out of memory. */
int gl_u64map_put(struct gl_u64map *m, uint64_t key, uint64_t val);
/* Returns 1 if it was there. */
int gl_u64map_del(struct gl_u64map *m, uint64_t key);
uint64_t gl_hash64(uint64_t x);

#endif
