/* model_block_facts.h — what the database says of each PyTorch caching-allocator
 * block (kind block) beyond the loaded model: the bytes the tensor asked
 * for (the row's size), the block's own bytes (its aux: the allocator
 * rounds up and may keep a remainder with the block) and when the block
 * became reusable again (its free_completed row: later than the tensor's
 * free when record_stream was used). Read for the exports that show blocks
 * as PyTorch itself does (export_memviz.c). */
#ifndef GL_MODEL_BLOCK_FACTS_H
#define GL_MODEL_BLOCK_FACTS_H

#include <stdint.h>

#include "model.h"

struct gl_block_fact {
    uint64_t requested, bytes; /* bytes asked for; the block's bytes (>= requested) */
    int64_t done_seq, done_ns; /* free_completed; 0: not (yet) reusable */
};

/* By allocation index (r->allocs): zeroed for what is not a block. NULL on
 * out of memory. A version-1 database (no blocks) gives all zeros. */
struct gl_block_fact *gl_block_facts_load(struct gl_run *r);

#endif
