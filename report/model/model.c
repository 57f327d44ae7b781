/* model.c — loading a database into a gl_run (see model.h): one ordered
 * scan of event_log, then per-device peaks and timelines. A row that breaks
 * an invariant of what the recorder writes (GL_SKIPS) is skipped and
 * counted; everything kept is then bounded (seqs, sizes and live bytes
 * below 2^62, times within the run), so no analysis can overflow. */
#include "model.h"
#include "model_fwstats.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "model_annot.h"
#include "model_block_facts.h"
#include "model_growth.h"
#include "model_pool_sweep.h"
#include "model_heaps.h"
#include "model_moments.h"
#include "model_vmm.h"
#include "model_retention.h"
#include "model_rows.h"
#include "model_seglink.h"
#include "reader.h"
#include "u64map.h"

#define TIMELINE_POINTS 600
#define MAX_BYTES (1ULL << 62)
/* how far a time may stray outside [run.start_ns, run.end_ns], or back
 * within a thread: clocks are converted and offset to within microseconds
 * normally; this is generous */
#define TIME_SLACK_NS 1000000000LL

const char *gl_skip_reason(enum gl_skip k)
{
    static const char *const text[] = {
#define GL_X(name, t) t,
        GL_SKIPS(GL_X)
#undef GL_X
    };
    return k < GL_SKIP_COUNT ? text[k] : "?";
}

struct gl_device *gl_run_device(struct gl_run *r, int device)
{
    for (int i = 0; i < r->ndevs; i++)
        if (r->devs[i].device == device)
            return &r->devs[i];
    if (r->ndevs == GL_MAX_DEVICES)
        return NULL;
    struct gl_device *d = &r->devs[r->ndevs++];
    memset(d, 0, sizeof *d);
    d->device = device;
    return d;
}

static void copy_text(char *dst, size_t sz, const unsigned char *src)
{
    snprintf(dst, sz, "%s", src ? (const char *)src : "");
}

static int load_run_row(struct gl_run *r, char *err, size_t errsz)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(r->db,
                           "SELECT pid, ppid, hostname, rank, cmdline, start_ns, end_ns, exit_code, exit_signal,"
                           " 0, dropped_events, truncated_stacks, unmatched_frees, gpuledger_version"
                           " FROM run",
                           -1, &st, NULL) != SQLITE_OK ||
        sqlite3_step(st) != SQLITE_ROW) {
        snprintf(err, errsz, "%s: damaged run table: %s", r->path, sqlite3_errmsg(r->db));
        sqlite3_finalize(st);
        return -1;
    }
    r->pid = sqlite3_column_int64(st, 0);
    r->ppid = sqlite3_column_int64(st, 1);
    copy_text(r->host, sizeof r->host, sqlite3_column_text(st, 2));
    copy_text(r->rank, sizeof r->rank, sqlite3_column_text(st, 3));
    copy_text(r->cmdline, sizeof r->cmdline, sqlite3_column_text(st, 4));
    r->start_ns = sqlite3_column_int64(st, 5);
    r->has_end = sqlite3_column_type(st, 6) != SQLITE_NULL;
    r->unfinished = !r->has_end;
    r->end_ns = sqlite3_column_int64(st, 6);
    r->has_exit_code = sqlite3_column_type(st, 7) != SQLITE_NULL;
    r->exit_code = sqlite3_column_int64(st, 7);
    r->has_exit_signal = sqlite3_column_type(st, 8) != SQLITE_NULL;
    r->exit_signal = sqlite3_column_int64(st, 8);
    r->dropped = sqlite3_column_int64(st, 10);
    r->truncated = sqlite3_column_int64(st, 11);
    r->unmatched = sqlite3_column_int64(st, 12);
    copy_text(r->version, sizeof r->version, sqlite3_column_text(st, 13));
    sqlite3_finalize(st);
    if (r->has_end && r->end_ns < r->start_ns) {
        r->has_end = 0;
        r->skipped[GL_SKIP_RUN_END] = r->nskipped = 1;
    }
    return 0;
}

/* Per-device live bytes as the scan goes, with the peak and a downsampled
 * timeline (each bucket keeps its highest level). */
struct live_track {
    uint64_t live[GL_MAX_DEVICES];
};

static void track(struct gl_run *r, struct live_track *lt, int device, int64_t delta, int64_t seq, int64_t ts,
                  int64_t t0, int64_t span)
{
    struct gl_device *dev = gl_run_device(r, device);
    if (!dev)
        return;
    size_t k = (size_t)(dev - r->devs);
    lt->live[k] += (uint64_t)delta;
    uint64_t live = lt->live[k];
    if (live > dev->peak) {
        dev->peak = live;
        dev->peak_seq = seq;
        dev->peak_ns = ts;
    }
    if (!dev->timeline && !(dev->timeline = calloc(TIMELINE_POINTS, sizeof *dev->timeline)))
        return;
    double at = span > 0 && ts > t0 ? (double)(ts - t0) / (double)span * (TIMELINE_POINTS - 1) : 0;
    size_t b = at < TIMELINE_POINTS - 1 ? (size_t)at : TIMELINE_POINTS - 1;
    struct gl_point *p = &dev->timeline[b];
    if (p->seq == 0 || live >= p->live)
        *p = (struct gl_point){seq, ts, live};
    if (b + 1 > dev->ntimeline)
        dev->ntimeline = b + 1;
}

/* The times a row may have: within the run, with some slack; never more
 * than 2^62 ns after its start, so that any two kept times differ by less
 * than 2^63. Saturating, whatever the run row holds. */
static void time_bounds(const struct gl_run *r, int64_t *lo, int64_t *hi)
{
    *lo = r->start_ns >= INT64_MIN + TIME_SLACK_NS ? r->start_ns - TIME_SLACK_NS : INT64_MIN;
    int64_t far = r->start_ns <= INT64_MAX - (int64_t)MAX_BYTES ? r->start_ns + (int64_t)MAX_BYTES : INT64_MAX;
    int64_t end = r->has_end && r->end_ns <= INT64_MAX - TIME_SLACK_NS ? r->end_ns + TIME_SLACK_NS : INT64_MAX;
    *hi = r->has_end && end < far ? end : far;
}

/* Each thread's last kept time: the current thread's in hand (rows come in
 * runs of one thread), the others in a map. */
struct thread_times {
    struct gl_u64map map;
    uint64_t tid;
    int64_t ts;
    int have;
};

static int thread_time(const struct thread_times *t, uint64_t tid, int64_t *ts)
{
    uint64_t v;
    if (t->have && t->tid == tid) {
        *ts = t->ts;
        return 1;
    }
    if (!gl_u64map_get(&t->map, tid, &v))
        return 0;
    *ts = (int64_t)v;
    return 1;
}

static int set_thread_time(struct thread_times *t, uint64_t tid, int64_t ts)
{
    if (t->have && t->tid != tid && gl_u64map_put(&t->map, t->tid, (uint64_t)t->ts))
        return -1;
    t->tid = tid;
    t->ts = ts;
    t->have = 1;
    return 0;
}

static void skip(struct gl_run *r, enum gl_skip k, int64_t seq)
{
    if (!r->skipped[k]++)
        r->skipped_first_seq[k] = seq;
    r->nskipped++;
}

/* Where the allocation a free names sits in allocs[], or -1; -2 for one
 * freed already whose record a live-only load reused (so that a second free
 * is still counted as one). A full load: an array by seq when seqs are
 * small (4 bytes an event), else a hash map. A live-only load: the hash map
 * holds only what is live, and one bit per seq says "freed" (an eighth of
 * a byte an event). */
#define INDEX_FREED UINT32_MAX
#define FREED_BITS_MAX (1LL << 35) /* 4 GiB of bits: past it, freed seqs stay in the map */
struct seq_index {
    uint32_t *dense; /* seq -> position + 1 (INDEX_FREED: freed, reused), when seqs are small */
    uint64_t *freed; /* live-only: bit seq set once that allocation was freed */
    int64_t max;
    struct gl_u64map map;
};

static int freed_bit(const struct seq_index *x, int64_t seq)
{
    return (int)((x->freed[(uint64_t)seq >> 6] >> ((uint64_t)seq & 63)) & 1);
}

static int index_put(struct seq_index *x, int64_t seq, size_t pos)
{
    if (x->dense && seq > 0 && seq <= x->max) {
        x->dense[seq] = (uint32_t)pos + 1;
        return 0;
    }
    return gl_u64map_put(&x->map, (uint64_t)seq, pos);
}

static int64_t index_get(const struct seq_index *x, int64_t seq)
{
    uint64_t pos;
    if (x->dense && seq > 0 && seq <= x->max)
        return x->dense[seq] == INDEX_FREED ? -2 : x->dense[seq] ? (int64_t)x->dense[seq] - 1 : -1;
    if (!gl_u64map_get(&x->map, (uint64_t)seq, &pos))
        return x->freed && seq > 0 && seq <= x->max && freed_bit(x, seq) ? -2 : -1;
    return pos == UINT64_MAX ? -2 : (int64_t)pos;
}

/* A freed allocation whose record a live-only load reuses. */
static int index_forget(struct seq_index *x, int64_t seq)
{
    if (x->dense && seq > 0 && seq <= x->max) {
        x->dense[seq] = INDEX_FREED;
        return 0;
    }
    if (x->freed && seq > 0 && seq <= x->max) {
        x->freed[(uint64_t)seq >> 6] |= 1ULL << ((uint64_t)seq & 63);
        gl_u64map_del(&x->map, (uint64_t)seq);
        return 0;
    }
    return gl_u64map_put(&x->map, (uint64_t)seq, UINT64_MAX);
}

/* -1 (unknown) or an ordinal the recorder keeps (gl_event.h). */
static int device_ok(int device)
{
    return device >= -1 && device < GL_MAX_DEVICES;
}

/* An allocation's invariants: the reason to skip it, or GL_SKIP_COUNT. */
static enum gl_skip check_alloc(struct gl_run *r, int device, int64_t size, uint64_t addr, uint64_t *total_live,
                                int counts)
{
    if (!device_ok(device))
        return GL_SKIP_DEVICE;
    if (size < 0 || (uint64_t)size >= MAX_BYTES || addr > UINT64_MAX - (uint64_t)size)
        return GL_SKIP_SIZE;
    if (counts && *total_live + (uint64_t)size >= MAX_BYTES)
        return GL_SKIP_LIVE;
    /* last, as it makes the device's entry: the 65th distinct value of
     * -1..63 would find none left */
    if (counts && !gl_run_device(r, device))
        return GL_SKIP_DEVICE;
    return GL_SKIP_COUNT;
}

/* An identity tag (a tag row: its category and the tensor's bytes) on the
 * allocation it names: a PyTorch block; or a CUDA allocation that is that
 * tensor (the cudaMallocAsync backend's: the same bytes, not a segment of
 * many tensors). The first tag holds. */
static void tag(struct gl_alloc *a, int64_t category, int64_t bytes)
{
    if (a->cat || category <= 0 || category >= GL_TAG_COUNT || !gl_tag_name((int)category))
        return;
    if (a->kind != GL_KIND_BLOCK && (bytes < 0 || a->size < (uint64_t)bytes || a->size - (uint64_t)bytes >= 512))
        return;
    a->cat = (uint8_t)category;
    a->flags |= GL_AF_TAGGED;
}

/* The event scan's state: the times a row may have, the timeline's span,
 * where each allocation sits, each thread's last time, the live bytes. */
struct scan {
    struct gl_run *r;
    struct gl_rows g;   /* the rows in seq order */
    int64_t lo, hi;     /* time_bounds */
    int64_t t0, t1, span; /* the timeline's buckets span t0..t1 */
    struct seq_index index;
    struct thread_times last_ts; /* tid -> time of its last kept row */
    int64_t kmin, kmax; /* the kept rows' first and last time */
    struct live_track lt;
    uint64_t total_live, block_live;
    size_t cap, fcap, ocap;
    int64_t prev_seq;   /* the last row's seq: free_order holds while each is higher */
    /* PyTorch blocks kept so far, by device + 1 (gl_fail.blocks_before) */
    uint64_t blocks_kept[GL_MAX_DEVICES + 1];
    /* GL_LOAD_LIVE_ONLY: the records of freed allocations, to reuse; the
     * devices of blocks and segments in the order they first came (as
     * gl_run_link_blocks makes them) */
    int live_only;
    uint32_t *slots;
    size_t nslots, slotcap;
    int block_devs[GL_MAX_DEVICES + 1];
    int nblock_devs;
    uint8_t block_dev_seen[GL_MAX_DEVICES + 1];
    /* GL_LOAD_GROWTH: where the records given up go, and the links of
     * segments made as the rows come (model_seglink.h) */
    struct gl_growth_in *grow;
    struct gl_seglink link;
    /* GL_LOAD_HOLES: the pools' replays, and the records kept whole (by
     * kind, and the CUDA allocations heaps were registered in, by seq) */
    struct gl_pools_in *pools;
    struct gl_u64map pinned;
    /* GL_LOAD_MOMENTS: the records kept for the report's moments, its
     * peaks (model_moments.h) */
    struct gl_moments *moments;
};

/* The columns every row is checked by. */
struct row {
    int64_t seq, ts, size;
    int op, api, result, device;
    uint64_t tid;
    int own_time; /* stamped by the recorder (not a CUPTI record's own time) */
};

/* Bounds, the timeline's span, the statement, the index: 0, or -1 with err. */
static int scan_open(struct scan *s, struct gl_run *r, int live_only, char *err, size_t errsz)
{
    memset(s, 0, sizeof *s);
    s->r = r;
    s->live_only = r->live_only = live_only;
    time_bounds(r, &s->lo, &s->hi);
    /* the timeline's buckets span the first and the last time that can be
     * kept (in seq order; a time outside falls in the first or last) */
    s->t0 = gl_rows_first_time(r->db, 0, s->lo, s->hi);
    s->t1 = gl_rows_first_time(r->db, 1, s->lo, s->hi);
    if (s->t1 < s->t0)
        s->t1 = s->t0;
    s->span = s->t1 - s->t0 + 1;
    int64_t maxseq = gl_rows_max_seq(r->db);
    if (gl_model_rows_open(&s->g, r->db, r->no_stacks) != SQLITE_OK) {
        snprintf(err, errsz, "%s: cannot read events: %s", r->path, sqlite3_errmsg(r->db));
        return -1;
    }
    (void)gl_rows_read_ahead(&s->g, maxseq); /* or read here, as a small scan is */
    /* seq -> position in allocs[]: seqs are dense, so a plain array; a hash
     * map when they are not small */
    s->index.max = maxseq;
    gl_u64map_init(&s->index.map);
    if (live_only && maxseq > 0 && maxseq < FREED_BITS_MAX)
        s->index.freed = calloc((size_t)maxseq / 64 + 1, sizeof *s->index.freed);
    else if (maxseq > 0 && maxseq < (1LL << 26))
        s->index.dense = calloc((size_t)maxseq + 1, sizeof *s->index.dense);
    gl_u64map_init(&s->last_ts.map);
    s->kmin = INT64_MAX;
    s->kmax = INT64_MIN;
    s->prev_seq = INT64_MIN;
    if (!live_only) /* NULL: the sweeps sort */
        r->free_order = malloc(4096 * sizeof *r->free_order);
    s->grow = live_only ? r->growth : NULL;
    s->pools = live_only ? r->pool_replays : NULL;
    s->moments = live_only ? r->moments : NULL;
    if (s->pools)
        s->pools->end = maxseq; /* the last row: kept, as gl_run_load_with checks after the scan */
    gl_u64map_init(&s->pinned);
    if ((s->grow || s->moments) && gl_seglink_init(&s->link)) {
        snprintf(err, errsz, "%s: out of memory while loading", r->path);
        return -1;
    }
    s->ocap = r->free_order ? 4096 : 0;
    return 0;
}

static void scan_close(struct scan *s)
{
    gl_model_rows_close(&s->g);
    free(s->index.dense);
    free(s->index.freed);
    free(s->slots);
    if (s->grow)
        s->grow->inexact |= s->link.inexact;
    if (s->moments)
        s->moments->inexact |= s->link.inexact;
    if (s->grow || s->moments)
        gl_seglink_free(&s->link);
    gl_u64map_free(&s->index.map);
    gl_u64map_free(&s->last_ts.map);
}

static void row_read(const struct gl_rows *g, struct row *w)
{
    w->seq = g->v[GL_COL_SEQ];
    w->ts = g->v[GL_COL_TS];
    w->op = (int)g->v[GL_COL_OP];
    w->api = (int)g->v[GL_COL_API];
    w->result = (int)g->v[GL_COL_RESULT];
    w->device = (int)g->v[GL_COL_DEVICE];
    w->size = g->v[GL_COL_SIZE];
    w->tid = (uint64_t)g->v[GL_COL_TID];
    w->own_time = w->api != GL_API_cupti_static && w->api != GL_API_cupti_static_free;
}

/* Whether the row can be kept at all: its number and time. GL_SKIP_COUNT,
 * or why not. */
static enum gl_skip row_check(struct scan *s, const struct row *w)
{
    int64_t prev;
    /* the caching allocator's settings: its last row says (every row
     * counts, also one skipped below) */
    if (s->g.v[GL_COL_OP] == GL_OP_CONFIG && s->g.v[GL_COL_API] == GL_API_torch_allocator)
        s->r->allocator_expandable = w->size == 1;
    if (w->seq < 1 || (uint64_t)w->seq >= MAX_BYTES) /* the recorder counts from 1 */
        return GL_SKIP_SEQ;
    if (w->ts < s->lo || w->ts > s->hi)
        return GL_SKIP_TIME_OUT;
    /* a thread's rows are stamped in the order it claims them, but the
     * writer's TSC-to-ns mapping may step back a little when it is
     * re-anchored (microseconds seen under load; a step can be larger):
     * backwards by more than the slack is broken. CUPTI activity records
     * carry CUPTI's own earlier times. */
    if (w->own_time && thread_time(&s->last_ts, w->tid, &prev) && w->ts < prev &&
        (uint64_t)prev - (uint64_t)w->ts > TIME_SLACK_NS)
        return GL_SKIP_TIME_BACK;
    return GL_SKIP_COUNT;
}

static int load_mark(struct scan *s, const struct row *w)
{
    struct gl_run *r = s->r;
    int64_t *nm = realloc(r->marks, (r->nmarks + 1) * sizeof *nm);
    if (!nm)
        return -1;
    r->marks = nm;
    r->marks[r->nmarks++] = w->seq;
    return 0;
}

/* A failed call: 0 (*why set when skipped), or -1 out of memory. */
static int load_fail(struct scan *s, const struct row *w, enum gl_skip *why)
{
    struct gl_run *r = s->r;
    if (!device_ok(w->device)) {
        *why = GL_SKIP_DEVICE;
        return 0;
    }
    if (gl_grow((void **)&r->fails, &s->fcap, r->nfails, sizeof *r->fails, 64))
        return -1;
    r->fails[r->nfails++] = (struct gl_fail){
        .seq = w->seq,
        .ts_ns = w->ts,
        .op = (uint8_t)w->op,
        .api = (uint16_t)w->api,
        .device = w->device,
        .size = (uint64_t)w->size, /* a failed request may be any size */
        .addr = (uint64_t)s->g.v[GL_COL_ADDR],
        .result = w->result,
        .stack_id = s->g.v[GL_COL_STACK],
        .aux = (uint64_t)s->g.v[GL_COL_AUX],
        .blocks_before = s->blocks_kept[w->device + 1],
    };
    return 0;
}

/* The allocation the row makes (its invariants checked): appended, or in
 * a freed one's record (live-only); *pos is where. */
static struct gl_alloc *new_alloc(struct scan *s, const struct row *w, int kind, int64_t size, uint64_t addr,
                                  size_t *pos)
{
    struct gl_run *r = s->r;
    if (s->nslots) {
        *pos = s->slots[--s->nslots];
    } else {
        if (gl_grow((void **)&r->allocs, &s->cap, r->nallocs, sizeof *r->allocs, 4096))
            return NULL;
        *pos = r->nallocs++;
    }
    struct gl_alloc *a = &r->allocs[*pos];
    r->allocs_made++;
    memset(a, 0, sizeof *a);
    a->seq = w->seq;
    a->alloc_ns = w->ts;
    a->op = (uint8_t)w->op;
    a->api = (uint16_t)w->api;
    a->kind = (uint8_t)kind;
    a->device = (int16_t)w->device; /* checked: device_ok */
    a->pool = (uint64_t)s->g.v[GL_COL_POOL];
    a->addr = addr;
    a->size = (uint64_t)size;
    a->stack_id = s->g.v[GL_COL_STACK];
    a->stream = (uint64_t)s->g.v[GL_COL_STREAM];
    a->requested = (uint64_t)w->size;
    a->aux = (uint64_t)s->g.v[GL_COL_AUX];
    a->range_seq = s->g.v[GL_COL_RANGE];
    return a;
}

/* GL_LOAD_HOLES: records kept whole (the reserved ranges and heaps holes
 * reads from records, and the allocations heaps live in). */
static int kept_whole(const struct scan *s, const struct gl_alloc *a)
{
    uint64_t v;
    return a->kind == GL_KIND_VA || a->kind == GL_KIND_MAPPING || a->kind == GL_KIND_HEAP ||
           a->kind == GL_KIND_REGION || gl_u64map_get(&s->pinned, (uint64_t)a->seq, &v);
}

/* GL_LOAD_HOLES: a pool's allocation into its replay; a heap's register:
 * the CUDA allocation it lies in (the first one live now, as gl_heaps_read
 * looks it up after the load) kept whole. 0, or -1 out of memory. */
static int pools_alloc(struct scan *s, const struct gl_alloc *a)
{
    const struct gl_run *r = s->r;
    if (a->kind == GL_KIND_ASYNC)
        return gl_pools_in_alloc(s->pools, a->pool, a->device, a->seq, a->alloc_ns, a->addr, a->size);
    if (a->kind != GL_KIND_HEAP)
        return 0;
    const struct gl_alloc *in = NULL;
    for (size_t i = 0; i < r->nallocs; i++) {
        const struct gl_alloc *x = &r->allocs[i];
        if (gl_kind_counts_on_device(x->kind) && !x->free_seq && x->addr <= a->addr &&
            a->addr + a->size <= x->addr + x->size && (!in || x->seq < in->seq))
            in = x;
    }
    return in ? gl_u64map_put(&s->pinned, (uint64_t)in->seq, 1) : 0;
}

/* An allocation: 0 (*why set when skipped), or -1 out of memory. */
static int load_alloc(struct scan *s, const struct row *w, enum gl_skip *why)
{
    struct gl_run *r = s->r;
    int kind = (int)s->g.v[GL_COL_KIND];
    uint64_t addr = (uint64_t)s->g.v[GL_COL_ADDR];
    int64_t aux = s->g.v[GL_COL_AUX], size = w->size;
    if (kind == GL_KIND_BLOCK) /* a PyTorch block: its block bytes (aux) hold what was asked */
        size = aux > size ? aux : size;
    *why = check_alloc(r, w->device, size, addr, &s->total_live, gl_kind_counts_on_device(kind));
    if (*why == GL_SKIP_COUNT && kind == GL_KIND_BLOCK && s->block_live + (uint64_t)size >= MAX_BYTES)
        *why = GL_SKIP_LIVE;
    if (*why != GL_SKIP_COUNT)
        return 0;
    size_t pos;
    struct gl_alloc *a = new_alloc(s, w, kind, size, addr, &pos);
    if (!a || index_put(&s->index, w->seq, pos))
        return -1;
    if (kind == GL_KIND_BLOCK) {
        s->block_live += a->size;
        s->blocks_kept[a->device + 1]++;
    }
    if ((kind == GL_KIND_BLOCK || kind == GL_KIND_SEGMENT) && !s->block_dev_seen[a->device + 1]) {
        s->block_dev_seen[a->device + 1] = 1;
        s->block_devs[s->nblock_devs++] = a->device;
    }
    if ((s->grow || s->moments) && gl_seglink_alloc(&s->link, r, pos))
        return -1;
    if (s->moments && gl_moments_alloc(s->moments, a))
        return -1;
    if (s->pools && pools_alloc(s, a))
        return -1;
    if (gl_kind_counts_on_device(a->kind)) {
        s->total_live += a->size;
        track(r, &s->lt, a->device, (int64_t)a->size, w->seq, w->ts, s->t0, s->span);
    }
    return 0;
}

/* The allocation an earlier row made that this row refers to, or NULL
 * (*gone: one a live-only load freed and forgot). */
static struct gl_alloc *referred(struct scan *s, const struct row *w, int64_t *ref, int *gone)
{
    *ref = s->g.v[GL_COL_REF];
    int64_t pos = *ref < w->seq ? index_get(&s->index, *ref) : -1;
    *gone = pos == -2;
    return pos >= 0 ? &s->r->allocs[pos] : NULL;
}

/* GL_LOAD_GROWTH, GL_LOAD_MOMENTS: the record given up, finished as a
 * full load finishes it, offered to the retention paths and into the
 * growth analysis's groups. 0, or -1 out of memory. */
static int give_up(struct scan *s, size_t pos)
{
    struct gl_alloc a = s->r->allocs[pos];
    int blocks = s->block_dev_seen[a.device + 1];
    if ((a.flags & GL_AF_ALLOCATOR) && !blocks && s->grow)
        s->grow->inexact = 1; /* a segment of another device claimed it: whether this one's allocator's is open */
    gl_block_finish(s->r, s->r->annots, &a, blocks);
    gl_retention_offer(s->r, &a);
    return s->grow ? gl_growth_in_add(s->grow, &a) : 0;
}

/* Live-only: allocation pos's record given up, free for the next one. */
static int let_go(struct scan *s, size_t pos, int64_t seq)
{
    s->r->allocs[pos].flags &= (uint8_t)~GL_AF_HELD;
    if ((s->grow || s->moments) && give_up(s, pos))
        return -1;
    if (gl_grow((void **)&s->slots, &s->slotcap, s->nslots, sizeof *s->slots, 1024))
        return -1;
    s->slots[s->nslots++] = (uint32_t)pos;
    return index_forget(&s->index, seq);
}

/* GL_LOAD_MOMENTS: the records held for a moment looked at again, those
 * no longer live at one (a peak passed since) given up. 0, or -1 out of
 * memory. */
static int look_again(struct scan *s)
{
    struct gl_moments *m = s->moments;
    size_t k = 0;
    for (size_t i = 0; i < m->nheld; i++) {
        uint32_t pos = m->held[i];
        const struct gl_alloc *a = &s->r->allocs[pos];
        if (gl_moments_needed(m, s->r, a))
            m->held[k++] = pos;
        else if (let_go(s, pos, a->seq))
            return -1;
    }
    m->nheld = k;
    m->look_at = 2 * k > 1024 ? 2 * k : 1024;
    return 0;
}

/* GL_LOAD_MOMENTS: freed record pos kept for a moment. 0, or -1. */
static int hold(struct scan *s, size_t pos)
{
    struct gl_moments *m = s->moments;
    if (gl_grow((void **)&m->held, &m->heldcap, m->nheld, sizeof *m->held, 1024))
        return -1;
    m->held[m->nheld++] = (uint32_t)pos;
    s->r->allocs[pos].flags |= GL_AF_HELD;
    return m->nheld >= m->look_at ? look_again(s) : 0;
}

/* Live-only: allocation pos was freed (and, a block, is reusable): its
 * record kept (a pool's whole, a moment's) or given up. */
static int reuse_later(struct scan *s, size_t pos, int64_t seq)
{
    if (s->pools && kept_whole(s, &s->r->allocs[pos]))
        return 0;
    const struct gl_alloc *a = &s->r->allocs[pos];
    /* (a block freed by `free`: its completion may follow, model_moments.h) */
    if (s->moments && (gl_moments_needed(s->moments, s->r, a) || (a->kind == GL_KIND_BLOCK && a->done_seq == a->free_seq)))
        return hold(s, pos);
    return let_go(s, pos, seq);
}

/* No free_order: the sweeps sort the frees instead (model.h). */
static void drop_free_order(struct gl_run *r)
{
    free(r->free_order);
    r->free_order = NULL;
    r->nfree_order = 0;
}

/* Allocation pos was freed by the current row: into free_order (dropped
 * when memory runs out or the index does not fit the sweeps' 31 bits). */
static void free_in_order(struct scan *s, size_t pos)
{
    struct gl_run *r = s->r;
    if (pos >= UINT32_MAX / 2 ||
        gl_grow((void **)&r->free_order, &s->ocap, r->nfree_order, sizeof *r->free_order, 4096))
        drop_free_order(r);
    else
        r->free_order[r->nfree_order++] = (uint32_t)pos;
}

/* A free: GL_SKIP_COUNT or why it is skipped; -1 out of memory. */
static int load_free(struct scan *s, const struct row *w)
{
    int64_t ref;
    int gone;
    struct gl_alloc *a = referred(s, w, &ref, &gone);
    if (ref >= w->seq || (a && w->ts < a->alloc_ns))
        return GL_SKIP_FREE_EARLY;
    if (gone || (a && a->free_seq))
        return GL_SKIP_FREE_TWICE;
    if (!a)
        return GL_SKIP_FREE_NOTHING;
    a->free_seq = w->seq;
    a->free_ns = w->ts;
    if (s->pools && a->kind == GL_KIND_ASYNC &&
        gl_pools_in_free(s->pools, a->pool, a->device, w->seq, w->ts, a->addr))
        return -1;
    if (s->r->free_order)
        free_in_order(s, (size_t)(a - s->r->allocs));
    if (gl_kind_counts_on_device(a->kind)) {
        s->total_live -= a->size;
        track(s->r, &s->lt, a->device, -(int64_t)a->size, w->seq, w->ts, s->t0, s->span);
    }
    if (a->kind == GL_KIND_BLOCK) {
        s->block_live -= a->size;
        if (w->op == GL_OP_FREE) /* free and completion in one: reusable at once */
            a->done_seq = w->seq;
    }
    if (s->moments)
        gl_moments_free_row(s->moments, a);
    /* (a block freed but not yet reusable is held by the allocator until
     * its completion: kept till then) */
    if (s->live_only && (a->kind != GL_KIND_BLOCK || a->done_seq) && reuse_later(s, (size_t)(a - s->r->allocs), ref))
        return -1;
    return GL_SKIP_COUNT;
}

/* A block became reusable; a tag names the block (or CUDA allocation) it
 * refers to: what it is, for its whole life. 0, or -1 out of memory. */
static int load_completion_or_tag(struct scan *s, const struct row *w)
{
    int64_t ref;
    int gone;
    struct gl_alloc *a = referred(s, w, &ref, &gone);
    /* a tag of a record given up: a full load would change its category
     * (a completion changes only done_seq, which the growth analysis does
     * not read) */
    if (gone && s->grow && w->op == GL_OP_TAG)
        s->grow->inexact = 1;
    /* a completion of a record given up: a full load would make a block
     * freed by `free` wait for it (model_moments.h) */
    if (gone && s->moments && w->op == GL_OP_FREE_COMPLETED)
        s->moments->inexact = 1;
    /* (a free_completed after a block's `free`: a database written before
     * the two were one event) */
    if (a && w->op == GL_OP_FREE_COMPLETED && a->kind == GL_KIND_BLOCK && a->free_seq &&
        (!a->done_seq || a->done_seq == a->free_seq)) {
        int held = !a->done_seq; /* live-only: kept until now (load_free) */
        a->done_seq = w->seq;
        if (s->moments)
            gl_moments_done(s->moments, a, !held);
        if (s->live_only && held)
            return reuse_later(s, (size_t)(a - s->r->allocs), ref);
    } else if (a && w->op == GL_OP_TAG) {
        tag(a, s->g.v[GL_COL_AUX], w->size);
    }
    return 0;
}

/* What the row is, taken into the run: 0 (*why set when skipped), or -1
 * out of memory. */
static int load_row(struct scan *s, const struct row *w, enum gl_skip *why)
{
    int op = w->op, has_ref = !s->g.ref_null;
    *why = GL_SKIP_COUNT;
    if (op == GL_OP_MARK)
        return load_mark(s, w);
    if (w->result != 0 || gl_op_is_failure(op))
        return load_fail(s, w, why);
    if (gl_op_is_alloc(op))
        return load_alloc(s, w, why);
    if (gl_op_is_free(op) && has_ref) {
        int rc = load_free(s, w);
        if (rc < 0)
            return -1;
        *why = (enum gl_skip)rc;
    } else if ((op == GL_OP_FREE_COMPLETED || op == GL_OP_TAG) && has_ref)
        return load_completion_or_tag(s, w);
    return 0;
}

/* A kept row: the run's counts and times. 0, or -1 out of memory. */
static int count_row(struct scan *s, const struct row *w)
{
    struct gl_run *r = s->r;
    int64_t prev;
    r->event_count++;
    r->last_seq = w->seq;
    /* calls, not the rows a call leads to: the graph pool's rows and a
     * launch's effects on memory outside the graph */
    if (w->api > 0 && w->api < GL_API_COUNT && w->api != GL_API_graph_pool &&
        !(w->api == GL_API_cuGraphLaunch && w->op != GL_OP_GRAPH_LAUNCH))
        r->api_count[w->api]++;
    if (w->own_time && (!thread_time(&s->last_ts, w->tid, &prev) || w->ts > prev) &&
        set_thread_time(&s->last_ts, w->tid, w->ts))
        return -1;
    s->kmin = w->ts < s->kmin ? w->ts : s->kmin;
    s->kmax = w->ts > s->kmax ? w->ts : s->kmax;
    return 0;
}

/* After the scan: the run's first and last time (of the rows kept), each
 * device's live bytes at the end, its timeline's empty buckets filled. */
static void scan_finish(struct scan *s)
{
    struct gl_run *r = s->r;
    r->first_ns = s->kmin <= s->kmax ? s->kmin : s->t0;
    r->last_ns = s->kmin <= s->kmax ? s->kmax : s->t1;
    for (int k = 0; k < r->ndevs; k++) {
        r->devs[k].live_end = s->lt.live[k];
        struct gl_point *t = r->devs[k].timeline; /* empty buckets carry the level forward */
        for (size_t b = 1; t && b < r->devs[k].ntimeline; b++)
            if (t[b].seq == 0)
                t[b] = (struct gl_point){t[b - 1].seq,
                                         s->t0 + (int64_t)((double)s->span * (double)b / TIMELINE_POINTS),
                                         t[b - 1].live};
    }
}

static int cmp_alloc_seq(const void *a, const void *b)
{
    const struct gl_alloc *x = a, *y = b;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* After a live-only scan: the records still live (and blocks waiting for
 * their completion, and those held for a moment at the peaks found), in
 * seq order; the devices of blocks and segments made where
 * gl_run_link_blocks makes them, with its flags (a full load's order of
 * devices). */
static void live_only_finish(struct scan *s)
{
    struct gl_run *r = s->r;
    size_t k = 0;
    for (size_t i = 0; i < r->nallocs; i++) { /* what reuse_later did not give up */
        const struct gl_alloc *a = &r->allocs[i];
        if (!a->free_seq || (a->kind == GL_KIND_BLOCK && !a->done_seq) || (s->pools && kept_whole(s, a)) ||
            (a->flags & GL_AF_HELD)) {
            r->allocs[k] = *a;
            r->allocs[k++].flags &= (uint8_t)~GL_AF_HELD;
        }
    }
    r->nallocs = k;
    if (k)
        qsort(r->allocs, k, sizeof *r->allocs, cmp_alloc_seq);
    for (int i = 0; i < s->nblock_devs; i++) {
        struct gl_device *dev = gl_run_device(r, s->block_devs[i]);
        if (dev)
            dev->blocks = r->has_blocks = 1;
    }
}

/* One ordered scan of event_log into the run. */
static int load_events(struct gl_run *r, int live_only, char *err, size_t errsz)
{
    struct scan s;
    struct row w;
    int rc;
    if (scan_open(&s, r, live_only, err, errsz))
        return -1;
    while ((rc = gl_rows_next(&s.g)) == SQLITE_ROW) {
        enum gl_skip why;
        row_read(&s.g, &w);
        if (s.g.v[GL_COL_KIND] == GL_KIND_HEAP || s.g.v[GL_COL_KIND] == GL_KIND_REGION)
            r->heap_rows++; /* gl_heaps_read reads them */
        if (w.seq <= s.prev_seq && s.prev_seq != INT64_MIN) { /* repeated: frees are sorted instead */
            drop_free_order(r);
            if (s.grow) /* (the steps of a run without marks count allocations by seq) */
                s.grow->inexact = 1;
            if (s.pools) /* (a full load's sweeps order the frees of one seq) */
                s.pools->inexact = 1;
            if (s.moments)
                s.moments->inexact = 1;
        }
        s.prev_seq = w.seq;
        why = row_check(&s, &w);
        if (why == GL_SKIP_COUNT && load_row(&s, &w, &why))
            goto oom;
        if (why != GL_SKIP_COUNT)
            skip(r, why, w.seq);
        else if (count_row(&s, &w))
            goto oom;
    }
    /* the records held for a moment, against the peaks found */
    if (rc == SQLITE_DONE && s.moments && look_again(&s))
        goto oom;
    scan_close(&s);
    if (rc != SQLITE_DONE) {
        gl_u64map_free(&s.pinned);
        r->first_ns = s.kmin <= s.kmax ? s.kmin : s.t0;
        r->last_ns = s.kmin <= s.kmax ? s.kmax : s.t1;
        /* SQLite's own error, or the packs' decoder's (SQLite then has none) */
        snprintf(err, errsz, "%s: damaged (reading events: %s)", r->path,
                 sqlite3_errcode(r->db) != SQLITE_OK && sqlite3_errcode(r->db) != SQLITE_DONE &&
                         sqlite3_errcode(r->db) != SQLITE_ROW
                     ? sqlite3_errmsg(r->db)
                     : "a pack of event_packs cannot be decoded");
        return -1;
    }
    scan_finish(&s);
    /* devices with events but no counted memory still get a row (not -1:
     * a failed free a recorder could not place on a device) */
    for (size_t i = 0; i < r->nfails; i++)
        if (r->fails[i].device >= 0)
            gl_run_device(r, r->fails[i].device);
    if (live_only)
        live_only_finish(&s);
    gl_u64map_free(&s.pinned);
    return 0;
oom:
    scan_close(&s);
    gl_u64map_free(&s.pinned);
    snprintf(err, errsz, "%s: out of memory while loading", r->path);
    return -1;
}

/* When an optimizer ended steps ("optimizer step N" marks of the Python
 * package's step hook), its marks alone end steps: the program's own marks
 * (gpuledger.step(), NVTX marks of libraries) may come at other moments. */
static void optimizer_steps(struct gl_run *r)
{
    sqlite3_stmt *st;
    if (r->nmarks < 2 || sqlite3_prepare_v2(r->db,
                                            "SELECT seq FROM annotations WHERE op = 'mark' AND label GLOB "
                                            "'optimizer step [0-9]*' ORDER BY seq",
                                            -1, &st, NULL) != SQLITE_OK)
        return; /* a database from before annotations */
    int64_t *opt = malloc(r->nmarks * sizeof *opt);
    size_t n = 0, k = 0;
    while (opt && sqlite3_step(st) == SQLITE_ROW) {
        int64_t seq = sqlite3_column_int64(st, 0);
        while (k < r->nmarks && r->marks[k] < seq)
            k++;
        if (k < r->nmarks && r->marks[k] == seq) /* only marks kept as events */
            opt[n++] = r->marks[k++];
    }
    sqlite3_finalize(st);
    if (n >= 2) {
        free(r->marks);
        r->marks = opt;
        r->nmarks = n;
        r->optimizer_steps = 1;
    } else {
        free(opt);
    }
}

/* The parts only some verbs read, and the look-ups of their moments. */
static int load_asked(struct gl_run *r, const struct gl_load *what, char *err, size_t errsz)
{
    gl_lookups_read(r, what);
    unsigned parts = what ? what->parts : 0;
    if (parts & GL_LOAD_HEAPS) {
        r->heaps = calloc(1, sizeof *r->heaps);
        if (r->heaps && gl_heaps_read(r, r->heaps, r->heaps_err, sizeof r->heaps_err)) {
            free(r->heaps); /* the verbs that show heaps say why; the rest stands */
            r->heaps = NULL;
        }
    }
    if ((parts & GL_LOAD_BLOCK_FACTS) && !(r->block_facts = gl_block_facts_read(r)))
        goto oom;
    if ((parts & GL_LOAD_MAP_DEVICES) && gl_map_devices_read(r))
        goto oom;
    r->loaded = parts;
    return 0;
oom:
    snprintf(err, errsz, "%s: out of memory while loading", r->path);
    return -1;
}

/* GL_LOAD_GROWTH, GL_LOAD_MOMENTS, before the scan: the annotations and
 * the steps they end (the scan finishes each record it gives up with
 * them), the retention paths, and where the records go (the growth
 * analysis's groups: asked, or the report's trend, which reads them where
 * there are steps). 0; 1 when a full load is needed (a framework's
 * statistics, which flag records after the scan, model_fwstats.h; or the
 * annotations cannot be read, which the full load says in its own order);
 * -1 with err. */
static int growth_open(struct gl_run *r, int growth, int moments, char *err, size_t errsz)
{
    if (gl_run_read_annots(r, err, errsz) || gl_retention_read_early(r, err, errsz)) { /* said by the full load, in its order */
        err[0] = 0;
        return 1;
    }
    for (size_t i = 0; i < r->annots->n; i++)
        if (r->annots->v[i].op == GL_OP_MARK && gl_is_fw_stats_label(r->annots->v[i].label))
            return 1;
    if (gl_run_set_steps(r, r->annots))
        goto oom;
    if (moments) {
        if (!(r->moments = malloc(sizeof *r->moments)))
            goto oom;
        gl_moments_init(r->moments, r->nsteps ? r->steps[r->nsteps - 1] : 0,
                        gl_db_int(r->db, "SELECT count(*) FROM meta WHERE key = 'python_version'", 0) > 0);
        growth |= r->nsteps >= 2;
    }
    if (growth && (!(r->growth = calloc(1, sizeof *r->growth)) || gl_growth_in_init(r->growth, r->steps, r->nsteps)))
        goto oom;
    return 0;
oom:
    snprintf(err, errsz, "%s: out of memory while loading", r->path);
    return -1;
}

/* GL_LOAD_MOMENTS, after the scan and the links: each device's peaks of
 * blocks, and whether the load matched a full one (the steps it kept
 * records for are the run's; the growth the trend reads was gathered). */
static void moments_close(struct gl_run *r)
{
    struct gl_moments *m = r->moments;
    gl_moments_finish(m, r);
    if ((r->nsteps ? r->steps[r->nsteps - 1] : 0) != m->last_step_end || (r->nsteps >= 2 && !r->growth))
        m->inexact = 1;
}

/* After the scan and the links: the steps as the scan applied them (a
 * database whose marks are in event_log alone ends its steps only after
 * the scan: inexact), and the records kept to the end into the groups.
 * 0, or -1 with err. */
static int growth_close(struct gl_run *r, char *err, size_t errsz)
{
    struct gl_growth_in *g = r->growth;
    size_t nb = r->nsteps >= 2 ? r->nsteps : 0;
    if (g->nb != nb || (nb && memcmp(g->bounds, r->steps, nb * sizeof *r->steps)))
        g->inexact = 1;
    for (size_t i = 0; !g->inexact && i < r->nallocs; i++)
        if (gl_growth_in_add(g, &r->allocs[i])) {
            snprintf(err, errsz, "%s: out of memory while loading", r->path);
            return -1;
        }
    return 0;
}

/* r given up for a full load of its file (GL_LOAD_GROWTH or GL_LOAD_HOLES
 * could not be gathered in the memory of the live set). */
static struct gl_run *load_full_instead(struct gl_run *r, const struct gl_load *what, char *err, size_t errsz)
{
    char path[PATH_MAX];
    struct gl_load full = what ? *what : (struct gl_load){0};
    full.parts &= ~(unsigned)(GL_LOAD_LIVE_ONLY | GL_LOAD_GROWTH | GL_LOAD_HOLES | GL_LOAD_MOMENTS);
    snprintf(path, sizeof path, "%s", r->path);
    gl_run_free(r);
    return gl_run_load_with(path, &full, err, errsz);
}

struct gl_run *gl_run_load(const char *path, char *err, size_t errsz)
{
    return gl_run_load_with(path, NULL, err, errsz);
}

struct gl_run *gl_run_load_with(const char *path, const struct gl_load *what, char *err, size_t errsz)
{
    err[0] = 0;
    struct gl_run *r = calloc(1, sizeof *r);
    if (!r) {
        snprintf(err, errsz, "%s: out of memory", path);
        return NULL;
    }
    snprintf(r->path, sizeof r->path, "%s", path);
    int live_only = what && (what->parts & GL_LOAD_LIVE_ONLY);
    int growth = live_only && (what->parts & GL_LOAD_GROWTH);
    int holes = live_only && (what->parts & GL_LOAD_HOLES);
    int moments = live_only && (what->parts & GL_LOAD_MOMENTS);
    if (holes && !(r->pool_replays = calloc(1, sizeof *r->pool_replays))) {
        snprintf(err, errsz, "%s: out of memory", path);
        free(r);
        return NULL;
    }
    if (holes)
        gl_pools_in_init(r->pool_replays, 0);
    r->no_stacks = what && (what->parts & GL_LOAD_NO_STACKS);
    r->db = gl_db_open_read(path, err, errsz);
    int open_rc = !r->db || load_run_row(r, err, errsz) ? -1
                  : growth || moments                   ? growth_open(r, growth, moments, err, errsz)
                                                        : 0;
    if (open_rc > 0)
        return load_full_instead(r, what, err, errsz);
    if (open_rc < 0 || load_events(r, live_only, err, errsz)) {
        if (r->db && !err[0])
            snprintf(err, errsz, "%s: out of memory", path);
        gl_run_free(r);
        return NULL;
    }
    if (r->pool_replays) {
        if (gl_pools_in_finish(r->pool_replays)) {
            snprintf(err, errsz, "%s: out of memory while loading", r->path);
            gl_run_free(r);
            return NULL;
        }
        /* the replays end at the last row, which must be one kept */
        if (r->pool_replays->inexact || r->last_seq != r->pool_replays->end)
            return load_full_instead(r, what, err, errsz);
    }
    optimizer_steps(r);
    if (gl_run_load_fw_stats(r, err, errsz)) {
        gl_run_free(r);
        return NULL;
    }
    if (gl_run_link_blocks(r, err, errsz) || (r->growth && growth_close(r, err, errsz))) {
        gl_run_free(r);
        return NULL;
    }
    if (r->moments)
        moments_close(r);
    if ((r->growth && r->growth->inexact) || (r->moments && r->moments->inexact)) /* what was given up is needed */
        return load_full_instead(r, what, err, errsz);
    if (gl_run_load_tables(r, err, errsz) || gl_run_load_folded(r, err, errsz) || gl_retention_load(r, err, errsz) ||
        load_asked(r, what, err, errsz)) {
        gl_run_free(r);
        return NULL;
    }
    if (r->live_only && !r->no_stacks && gl_run_load_live_stacks(r)) {
        snprintf(err, errsz, "%s: out of memory while loading", r->path);
        gl_run_free(r);
        return NULL;
    }
    sqlite3_close(r->db); /* nothing after the load reads the database */
    r->db = NULL;
    return r;
}

void gl_run_free(struct gl_run *r)
{
    if (!r)
        return;
    if (r->db)
        sqlite3_close(r->db);
    for (int i = 0; i < r->ndevs; i++)
        free(r->devs[i].timeline);
    free(r->allocs);
    free(r->free_order);
    free(r->fails);
    free(r->marks);
    free(r->steps);
    gl_run_free_tables(r);
    if (r->annots) {
        gl_annots_free(r->annots);
        free(r->annots);
    }
    if (r->heaps) {
        gl_heaps_free(r->heaps);
        free(r->heaps);
    }
    free(r->block_facts);
    free(r->map_devs);
    free(r->fw);
    if (r->growth) {
        gl_growth_in_free(r->growth);
        free(r->growth);
    }
    if (r->pool_replays) {
        gl_pools_in_free_all(r->pool_replays);
        free(r->pool_replays);
    }
    if (r->moments) {
        gl_moments_free(r->moments);
        free(r->moments);
    }
    gl_retention_free(r);
    gl_run_free_folded(r);
    free(r);
}
