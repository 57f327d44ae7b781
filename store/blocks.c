/* blocks.c — see blocks.h. */
#include "blocks.h"

#include <string.h>

#define SAMPLE_EVERY_NS 20000000ULL /* holes at most every 20 ms per device (and at each OOM) */

int gl_blocks_open(struct gl_blocks *b, struct gl_wdb *w, struct gl_windows *windows)
{
    memset(b, 0, sizeof *b);
    b->w = w;
    b->windows = windows;
    gl_u64map_init(&b->segment_row);
    if (!(b->bm = gl_bm_new()))
        return gl_wdb_fail(w, "the allocator model: out of memory");
    return gl_wdb_prepare(w, &b->put_stats,
                          "INSERT OR REPLACE INTO block_stats(device, allocated_peak, allocated_peak_seq,"
                          " requested_peak, reserved_peak, allocated, requested, reserved, allocs, frees,"
                          " segments, unknown) VALUES(?,?,?,?,?,?,?,?,?,?,?,?)") ||
           gl_wdb_prepare(w, &b->ins_sample,
                          "INSERT INTO allocator_samples(ts_ns, seq, device, reserved, allocated, active,"
                          " requested, cached_free, holes, largest_hole) VALUES(?,?,?,?,?,?,?,?,?,?)");
}

static int slot(int dev)
{
    return dev >= 0 && dev < GL_MAX_DEVICES ? dev + 1 : 0;
}

static int sample(struct gl_blocks *b, int dev, uint64_t ts, uint64_t seq)
{
    const struct gl_bm_stats *st = gl_bm_stats(b->bm, dev);
    struct gl_bm_holes h;
    gl_bm_holes(b->bm, dev, &h);
    sqlite3_stmt *q = b->ins_sample;
    int64_t v[] = {(int64_t)ts, (int64_t)seq, dev, (int64_t)st->reserved, (int64_t)st->allocated,
                   (int64_t)st->active, (int64_t)st->requested, (int64_t)h.free_bytes, (int64_t)h.count,
                   (int64_t)h.largest};
    for (int i = 0; i < (int)(sizeof v / sizeof v[0]); i++)
        sqlite3_bind_int64(q, i + 1, v[i]);
    b->last_sample_ns[slot(dev)] = ts;
    return gl_wdb_step(b->w, q, "writing an allocator sample");
}

static int maybe_sample(struct gl_blocks *b, int dev, uint64_t ts, uint64_t seq)
{
    uint64_t last = b->last_sample_ns[slot(dev)];
    return !last || ts - last >= SAMPLE_EVERY_NS ? sample(b, dev, ts, seq) : 0;
}

/* The block a tag names: one of the allocator's holding addr, else a CUDA
 * allocation starting there (a tensor of the cudaMallocAsync backend). */
static uint64_t tagged_seq(struct gl_blocks *b, const struct gl_ledger *ledger, uint64_t addr)
{
    struct gl_bm_block blk;
    if (gl_bm_find(b->bm, addr, &blk) && blk.state == GL_BM_ALLOCATED && blk.seq)
        return blk.seq;
    struct gl_live l;
    return gl_ledger_peek(ledger, GL_SPACE_MEM, addr, &l) ? l.seq : 0;
}

static int segment(struct gl_blocks *b, struct gl_rows *rows, const struct gl_event *ev, int64_t sid,
                   uint64_t range, uint64_t *seq)
{
    int op = ev->op, fits;
    uint64_t ref = 0;
    if (op == GL_OP_ALLOC) {
        fits = ev->api == GL_API_torch_snapshot
                   ? gl_bm_snapshot_segment(b->bm, ev->device, ev->addr, ev->size, (int)(ev->aux & 1))
               : ev->api == GL_API_cupy_pool ? gl_bm_segment_alloc_splitting(b->bm, ev->device, ev->addr, ev->size)
                                             : gl_bm_segment_alloc(b->bm, ev->device, ev->addr, ev->size);
    } else if (op == GL_OP_MAP) {
        fits = gl_bm_segment_map(b->bm, ev->device, ev->addr, ev->size);
    } else if (op == GL_OP_FREE || op == GL_OP_UNMAP) {
        if (gl_u64map_get(&b->segment_row, ev->addr, &ref))
            gl_u64map_del(&b->segment_row, ev->addr);
        fits = op == GL_OP_FREE ? gl_bm_segment_free(b->bm, ev->device, ev->addr, ev->size)
                                : gl_bm_segment_unmap(b->bm, ev->device, ev->addr, ev->size);
    } else {
        fits = 0;
    }
    if (fits < 0)
        return gl_wdb_fail(b->w, "the allocator model: out of memory");
    int rc = gl_rows_add(rows, ev, op, GL_KIND_SEGMENT, ev->size, sid, ref, range, seq);
    if (op == GL_OP_ALLOC || op == GL_OP_MAP)
        gl_u64map_put(&b->segment_row, ev->addr, *seq);
    return rc;
}

/* A row like ev's, with what the model knows: block bytes in aux, and the
 * allocation it ends. */
static int block_row(struct gl_rows *rows, const struct gl_event *ev, int op, const struct gl_bm_block *blk,
                     int64_t sid, uint64_t ref, uint64_t range, uint64_t *seq)
{
    struct gl_event e = *ev;
    e.aux = blk->size;
    return gl_rows_add(rows, &e, op, GL_KIND_BLOCK, ev->size, sid, ref, range, seq);
}

static int block(struct gl_blocks *b, struct gl_rows *rows, const struct gl_event *ev, int64_t sid, uint64_t range,
                 uint64_t *seq)
{
    struct gl_bm_block blk = {0};
    int fits, dev = ev->device;
    switch (ev->op) {
    case GL_OP_ALLOC: {
        /* the row's number is the block's: take it before the model does */
        uint64_t next = rows->next_seq;
        if (ev->api == GL_API_torch_snapshot) {
            int state = (int)(ev->aux >> 62);
            fits = gl_bm_snapshot_block(b->bm, dev, ev->addr, ev->size, ev->aux & ((1ULL << 62) - 1), state, next);
            blk.size = ev->size;
            struct gl_event e = *ev;
            e.aux = ev->size; /* block bytes, like every block row */
            e.size = ev->aux & ((1ULL << 62) - 1);
            if (fits < 0)
                return gl_wdb_fail(b->w, "the allocator model: out of memory");
            if (state == GL_BM_FREE) /* a hole: in the model, not a row */
                return 0;
            if (state == GL_BM_ALLOCATED)
                gl_windows_change(b->windows, GL_WIN_BLOCKS, ev->size, 1, next);
            return gl_rows_add(rows, &e, GL_OP_ALLOC, GL_KIND_BLOCK, e.size, sid, 0, range, seq);
        }
        fits = gl_bm_alloc(b->bm, dev, ev->addr, ev->size, next, &blk);
        if (fits < 0)
            return gl_wdb_fail(b->w, "the allocator model: out of memory");
        gl_windows_change(b->windows, GL_WIN_BLOCKS, blk.size, 1, next);
        return block_row(rows, ev, GL_OP_ALLOC, &blk, sid, 0, range, seq);
    }
    case GL_OP_FREE:
        /* one row: free when its FREE_COMPLETED came with it (reusable at
         * once), else free_requested (its free_completed row follows) */
        if (gl_bm_free_requested(b->bm, dev, ev->addr, &blk))
            b->unmatched++;
        else
            gl_windows_change(b->windows, GL_WIN_BLOCKS, blk.size, 0, 0);
        if (ev->flags & GL_EVF_COMPLETED) {
            struct gl_bm_block done;
            gl_bm_free_completed(b->bm, dev, ev->addr, &done);
            return block_row(rows, ev, GL_OP_FREE, &blk, sid, blk.seq, range, seq);
        }
        return block_row(rows, ev, GL_OP_FREE_REQUESTED, &blk, sid, blk.seq, range, seq);
    case GL_OP_FREE_COMPLETED:
        gl_bm_free_completed(b->bm, dev, ev->addr, &blk);
        return block_row(rows, ev, GL_OP_FREE_COMPLETED, &blk, sid, blk.seq, range, seq);
    case GL_OP_OOM: { /* the holes right then, for the verdict */
        int rc = gl_rows_add(rows, ev, GL_OP_OOM, GL_KIND_BLOCK, ev->size, sid, 0, range, seq);
        return rc | sample(b, dev, ev->ts_ns, *seq);
    }
    default:
        return gl_rows_add(rows, ev, ev->op, GL_KIND_BLOCK, ev->size, sid, 0, range, seq);
    }
}

int gl_blocks_add(struct gl_blocks *b, struct gl_rows *rows, const struct gl_ledger *ledger,
                  const struct gl_event *ev, int64_t sid, uint64_t range)
{
    uint64_t seq = 0;
    int rc;
    if (ev->op == GL_OP_TAG)
        return gl_rows_add(rows, ev, GL_OP_TAG, GL_KIND_NONE, ev->size, 0, tagged_seq(b, ledger, ev->addr), range,
                           NULL);
    if (ev->op == GL_OP_CONFIG) {
        gl_bm_set_config(b->bm, ev->addr, (int)ev->size, ev->aux);
        return gl_rows_add(rows, ev, GL_OP_CONFIG, GL_KIND_NONE, ev->size, 0, 0, range, NULL);
    }
    rc = ev->kind == GL_KIND_SEGMENT ? segment(b, rows, ev, sid, range, &seq) : block(b, rows, ev, sid, range, &seq);
    int dev = ev->device;
    b->dirty[slot(dev)] = 1;
    if (!rc && ev->op != GL_OP_OOM)
        rc = maybe_sample(b, dev, ev->ts_ns, seq);
    return rc;
}

int gl_blocks_counters(struct gl_blocks *b)
{
    int rc = 0;
    for (int i = 0; i <= GL_MAX_DEVICES; i++) {
        if (!b->dirty[i])
            continue;
        b->dirty[i] = 0;
        int dev = i - 1;
        const struct gl_bm_stats *st = gl_bm_stats(b->bm, dev);
        int64_t v[] = {dev,
                       (int64_t)st->allocated_peak,
                       (int64_t)st->allocated_peak_seq,
                       (int64_t)st->requested_peak,
                       (int64_t)st->reserved_peak,
                       (int64_t)st->allocated,
                       (int64_t)st->requested,
                       (int64_t)st->reserved,
                       (int64_t)st->allocs,
                       (int64_t)st->frees,
                       (int64_t)st->segments,
                       (int64_t)st->unknown};
        for (int i = 0; i < (int)(sizeof v / sizeof v[0]); i++)
            sqlite3_bind_int64(b->put_stats, i + 1, v[i]);
        rc |= gl_wdb_step(b->w, b->put_stats, "updating block_stats");
    }
    return rc;
}

int gl_blocks_finish(struct gl_blocks *b, uint64_t ts_ns, uint64_t seq)
{
    int rc = 0;
    for (int i = 0; i <= GL_MAX_DEVICES; i++)
        if (b->last_sample_ns[i])
            rc |= sample(b, i - 1, ts_ns, seq);
    return rc;
}

void gl_blocks_close(struct gl_blocks *b)
{
    sqlite3_stmt **sts[] = {&b->put_stats, &b->ins_sample};
    gl_wdb_finalize(sts, 2);
    gl_bm_delete(b->bm);
    b->bm = NULL;
    gl_u64map_free(&b->segment_row);
}
