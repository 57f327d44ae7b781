/* pool_id.h — a PyTorch private pool's id (MempoolId_t, a pair such as
 * (0, 1)) from the 64-bit `pool` the database stores for a block
 * (docs/schema.md, tensor_blocks.pool: the id's first half, or its second
 * with bit 63 set), and the category label of its blocks,
 * "private_pool (0, 1)": one label per pool, so two pools are two rows of
 * the category and ledger tables (pool_id.c). */
#ifndef GL_POOL_ID_H
#define GL_POOL_ID_H

#include <stddef.h>
#include <stdint.h>

#define GL_PRIVATE_POOL "private_pool" /* the category's name, before its id */

struct gl_pool_id {
    uint64_t first, second;
};

/* The pair a stored pool value stands for ((0, 0): the default pool). */
struct gl_pool_id gl_pool_id(uint64_t pool);
/* "(0, 1)", into buf. */
const char *gl_pool_id_text(uint64_t pool, char *buf, size_t sz);
/* "private_pool (0, 1)": the same string for every call with one pool (it
 * lives until gl_pool_labels_free); "private_pool" when out of memory. */
const char *gl_private_pool_label(uint64_t pool);
/* Whether a category is a private pool's ("private_pool" or a label of
 * gl_private_pool_label); *pool: its stored value where the label is one
 * of ours (else left as it is). */
int gl_is_private_pool(const char *category, uint64_t *pool);
/* The labels' index: a small number per pool (1, 2, ... in the order first
 * asked; 0 out of memory), for grouping keys. */
size_t gl_private_pool_index(uint64_t pool);
void gl_pool_labels_free(void);

#endif
