/* blocks.h — the store's part for PyTorch's caching allocator (events of
 * kinds block and segment, identity tags, the allocator's settings): each
 * becomes its event_log row with what the trace entry did not say, from
 * the replayed allocator (blockmodel.h) — a block's size (aux), the
 * allocation a free or a completed free ends (ref_seq), the block a tag
 * names (ref_seq) — plus per device block_stats (the allocator's own
 * figures: allocated, requested and reserved bytes and their peaks) and
 * allocator_samples (holes over time, and at every OOM). */
#ifndef GL_BLOCKS_H
#define GL_BLOCKS_H

#include <stdint.h>

#include "blockmodel.h"
#include "gl_event.h"
#include "ledger.h"
#include "rows.h"
#include "u64map.h"
#include "wdb.h"
#include "windows.h"

struct gl_blocks {
    struct gl_wdb *w;
    struct gl_bm *bm;
    struct gl_u64map segment_row; /* segment (or mapped range) address -> its row's seq */
    sqlite3_stmt *put_stats, *ins_sample;
    uint8_t dirty[GL_MAX_DEVICES + 1];           /* index device + 1 (0: others): block_stats changed */
    uint64_t last_sample_ns[GL_MAX_DEVICES + 1]; /* likewise */
    uint64_t unmatched;           /* frees of blocks never seen allocated */
    struct gl_windows *windows;   /* measurements from checkpoints on: the block layer */
};

int gl_blocks_open(struct gl_blocks *b, struct gl_wdb *w, struct gl_windows *windows);
/* Is ev one of ours (a block or segment event, a tag, a config)? */
static inline int gl_blocks_owns(const struct gl_event *ev)
{
    return ev->kind == GL_KIND_BLOCK || ev->kind == GL_KIND_SEGMENT || ev->op == GL_OP_TAG ||
           ev->op == GL_OP_CONFIG;
}
/* Write ev's row(s). range: the annotation range its thread is inside;
 * ledger: the CUDA-level allocations, where a tag that names no block
 * looks (a tensor of the cudaMallocAsync backend). */
int gl_blocks_add(struct gl_blocks *b, struct gl_rows *rows, const struct gl_ledger *ledger,
                  const struct gl_event *ev, int64_t sid, uint64_t range);
/* block_stats of the devices whose figures changed (at each commit). */
int gl_blocks_counters(struct gl_blocks *b);
/* A last holes sample of every device (at the finish). */
int gl_blocks_finish(struct gl_blocks *b, uint64_t ts_ns, uint64_t seq);
void gl_blocks_close(struct gl_blocks *b);

#endif
