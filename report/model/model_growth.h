/* model_growth.h — what the growth analysis (`leaks --steps`, analysis.h
 * gl_growth) reads, gathered while a live-only load scans (model.h,
 * GL_LOAD_GROWTH), so that its memory is the stacks', not the
 * allocations': each record the scan gives up, and each one kept to the
 * end, finished as a full load finishes it (model_blocks.c, gl_block_finish)
 * and counted in its group — per stack, category and private pool, as
 * gl_growth groups, and per device — with the bytes it holds at each step
 * end. When the step ends are not known while the scan runs (slices of a
 * run without steps), each ledger row's seq, life, bytes and group are
 * kept instead (24 bytes each) and the step ends applied after it. */
#ifndef GL_MODEL_GROWTH_H
#define GL_MODEL_GROWTH_H

#include <stddef.h>
#include <stdint.h>

#include "model.h"
#include "u64map.h"

struct gl_growth_group {
    uint64_t key;           /* gl_alloc_group_key */
    int device;
    struct gl_alloc sample; /* its allocation of the lowest seq */
    uint64_t bytes, requested, count;
    int64_t first_ns, last_ns;
    uint64_t *steps;        /* per step end, the changes (summed in order: live bytes); NULL: never live at one */
};

struct gl_growth_in {
    int64_t *bounds;        /* the step ends the scan applied (NULL: rows kept instead) */
    size_t nb;
    struct gl_growth_group *v;
    size_t n, cap;
    struct gl_u64map idx;   /* hash of key and device -> index in v */
    /* without bounds: each ledger row, in the order given up */
    int64_t *seq;
    uint32_t *life;         /* free_seq - seq; 0: never freed; UINT32_MAX: in long_life */
    uint64_t *size;
    uint32_t *group;
    size_t nrows, rowcap;
    struct gl_u64map long_life; /* row -> free_seq */
    int inexact;            /* what the scan gave up cannot be finished as a full load would */
};

/* The group of an allocation, in the growth analysis and the ledger's
 * (analysis.c): its stack and category by identity or lifetime; a private
 * pool's per pool (bit 63 apart from the others, the pool's index below
 * the stack's). */
uint64_t gl_alloc_group_key(const struct gl_alloc *a);

/* bounds: the step ends to apply during the scan (copied; NULL or nb < 2:
 * keep the rows). 0, or -1 out of memory. */
int gl_growth_in_init(struct gl_growth_in *g, const int64_t *bounds, size_t nb);
void gl_growth_in_free(struct gl_growth_in *g);
/* A finished record (gl_is_item: counted; the rest: nothing). 0, or -1 out
 * of memory. */
int gl_growth_in_add(struct gl_growth_in *g, const struct gl_alloc *a);
/* An allocation of `size` bytes live from seq to free_seq (0: never
 * freed) into *steps, the changes at nb rising step ends it is live at
 * (gl_live_at): +size at the first at or after seq, -size at the first at
 * or after free_seq (wrapping; summed in order the bytes come out exact).
 * *steps is made (nb zeroes) at the first change. 0, or -1 out of memory. */
int gl_steps_add_life(uint64_t **steps, const int64_t *bounds, size_t nb, int64_t seq, int64_t free_seq,
                      uint64_t size);
/* The free seq of row i (0: never freed). */
int64_t gl_growth_row_free(const struct gl_growth_in *g, size_t i);

#endif
