/* blockmodel.c — the caching allocator's segments and blocks (see
 * blockmodel.h). Blocks live in one array (a free list recycles slots),
 * chained prev/next inside their segment as PyTorch chains them; hash maps
 * find a block by its start and by its end; each device keeps its segments
 * (for expandable segments: its runs of mapped pages) sorted by address, to
 * find the block holding an arbitrary address. */
#include "blockmodel.h"

#include <stdlib.h>
#include <string.h>

#include "u64map.h"

#define MIN_BLOCK 512ULL
#define SMALL_SIZE (1ULL << 20)   /* kSmallSize: the largest request of the small pool */
#define SMALL_BUFFER (2ULL << 20) /* kSmallBuffer: a small-pool segment */
#define NONE (-1)

enum seg_kind { SEG_SMALL, SEG_LARGE, SEG_EXPANDABLE, SEG_LOOSE /* a block of a segment never seen */ };

struct blk {
    uint64_t addr, size, requested, seq;
    int32_t prev, next; /* neighbours in the segment (NONE at its ends) */
    int16_t dev;
    uint8_t state, kind;
};

struct run {
    uint64_t start, end;
    int expandable; /* runs of mapped pages join when adjacent; segments never */
};

struct dev {
    struct gl_bm_stats st;
    struct run *runs; /* sorted by start, disjoint */
    size_t nruns, cap;
};

struct gl_bm {
    uint64_t max_split, divisions;
    int expandable;
    struct blk *b;
    size_t nb, cap;
    int32_t free_head; /* recycled slots, chained through .next */
    struct gl_u64map by_start, by_end;
    struct dev dev[GL_MAX_DEVICES + 1]; /* index dev + 1; 0: out of range */
    int32_t snap_tail;                      /* last block of the snapshot segment being filled */
    uint8_t snap_kind;
};

struct gl_bm *gl_bm_new(void)
{
    struct gl_bm *m = calloc(1, sizeof *m);
    if (!m)
        return NULL;
    m->max_split = UINT64_MAX;
    m->free_head = NONE;
    m->snap_tail = NONE;
    gl_u64map_init(&m->by_start);
    gl_u64map_init(&m->by_end);
    return m;
}

void gl_bm_delete(struct gl_bm *m)
{
    if (!m)
        return;
    for (int i = 0; i <= GL_MAX_DEVICES; i++)
        free(m->dev[i].runs);
    free(m->b);
    gl_u64map_free(&m->by_start);
    gl_u64map_free(&m->by_end);
    free(m);
}

void gl_bm_set_config(struct gl_bm *m, uint64_t max_split_size, int expandable, uint64_t divisions)
{
    m->max_split = max_split_size ? max_split_size : UINT64_MAX;
    m->expandable = expandable != 0;
    m->divisions = divisions;
}

static struct dev *dev_of(struct gl_bm *m, int dev)
{
    return &m->dev[dev >= 0 && dev < GL_MAX_DEVICES ? dev + 1 : 0];
}

static const struct dev *cdev_of(const struct gl_bm *m, int dev)
{
    return &m->dev[dev >= 0 && dev < GL_MAX_DEVICES ? dev + 1 : 0];
}

/* ---- sizes ---------------------------------------------------------------- */

static unsigned log2_floor(uint64_t x)
{
    return 63u - (unsigned)__builtin_clzll(x);
}

/* roundup_power2_divisions(size): intervals of powers of two from 1 MiB
 * (index 0, which also takes everything smaller) to 64 GiB (index 15). */
static uint64_t divisions_for(const struct gl_bm *m, uint64_t size)
{
    unsigned lg = log2_floor(size), idx = lg > 20 ? lg - 20 : 0;
    if (idx > 15)
        idx = 15;
    unsigned v = (unsigned)(m->divisions >> (4 * idx)) & 15u;
    return v ? 1ULL << (v - 1) : 0;
}

uint64_t gl_bm_round_size(const struct gl_bm *m, uint64_t size)
{
    if (size < MIN_BLOCK)
        return MIN_BLOCK;
    uint64_t div = divisions_for(m, size);
    if (div > 1 && size > MIN_BLOCK * div) { /* roundup_power2_next_division */
        if ((size & (size - 1)) == 0)
            return size;
        uint64_t floor2 = 1ULL << log2_floor(size), step = floor2 >> log2_floor(div);
        if (step == 0)
            return floor2 << 1;
        uint64_t down = size & ~(step - 1);
        return down == size ? size : down + step;
    }
    return (size + MIN_BLOCK - 1) & ~(MIN_BLOCK - 1);
}

static int should_split(const struct gl_bm *m, const struct blk *b, uint64_t size)
{
    uint64_t rest = b->size - size;
    if (b->kind == SEG_SMALL || b->kind == SEG_EXPANDABLE || m->expandable)
        return rest >= MIN_BLOCK;
    return size < m->max_split && rest > SMALL_SIZE;
}

/* ---- blocks ---------------------------------------------------------------- */

static int32_t blk_new(struct gl_bm *m)
{
    int32_t i;
    if (m->free_head != NONE) {
        i = m->free_head;
        m->free_head = m->b[i].next;
    } else {
        if (m->nb == m->cap) {
            size_t nc = m->cap ? m->cap * 2 : 1024;
            struct blk *nb = realloc(m->b, nc * sizeof *nb);
            if (!nb)
                return NONE;
            m->b = nb;
            m->cap = nc;
        }
        i = (int32_t)m->nb++;
    }
    memset(&m->b[i], 0, sizeof m->b[i]);
    m->b[i].prev = m->b[i].next = NONE;
    return i;
}

static int index_blk(struct gl_bm *m, int32_t i)
{
    struct blk *b = &m->b[i];
    if (gl_u64map_put(&m->by_start, b->addr, (uint64_t)i))
        return -1;
    if (b->kind != SEG_LOOSE && gl_u64map_put(&m->by_end, b->addr + b->size, (uint64_t)i))
        return -1;
    return 0;
}

static void unindex_blk(struct gl_bm *m, int32_t i)
{
    struct blk *b = &m->b[i];
    uint64_t v;
    if (gl_u64map_get(&m->by_start, b->addr, &v) && v == (uint64_t)i)
        gl_u64map_del(&m->by_start, b->addr);
    if (gl_u64map_get(&m->by_end, b->addr + b->size, &v) && v == (uint64_t)i)
        gl_u64map_del(&m->by_end, b->addr + b->size);
}

static void blk_drop(struct gl_bm *m, int32_t i)
{
    unindex_blk(m, i);
    struct blk *b = &m->b[i];
    if (b->prev != NONE)
        m->b[b->prev].next = b->next;
    if (b->next != NONE)
        m->b[b->next].prev = b->prev;
    b->next = m->free_head;
    b->prev = NONE;
    b->state = GL_BM_FREE;
    b->size = 0;
    m->free_head = i;
}

static int32_t blk_at(const struct gl_u64map *map, uint64_t key)
{
    uint64_t v;
    return gl_u64map_get(map, key, &v) ? (int32_t)v : NONE;
}

/* Free block i absorbs its free neighbour j (PyTorch's try_merge_blocks). */
static void absorb(struct gl_bm *m, int32_t i, int32_t j)
{
    if (j == NONE || m->b[j].state != GL_BM_FREE)
        return;
    struct blk *b = &m->b[i], *n = &m->b[j];
    unindex_blk(m, i);
    if (b->prev == j) {
        b->addr = n->addr;
        b->prev = n->prev;
        if (b->prev != NONE)
            m->b[b->prev].next = i;
    } else {
        b->next = n->next;
        if (b->next != NONE)
            m->b[b->next].prev = i;
    }
    b->size += n->size;
    n->prev = n->next = NONE;
    blk_drop(m, j);
    index_blk(m, i);
}

/* ---- runs: segments, and mapped runs of expandable segments --------------- */

static size_t run_find(const struct dev *d, uint64_t addr) /* first run with end > addr */
{
    size_t lo = 0, hi = d->nruns;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (d->runs[mid].end <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static int run_insert(struct dev *d, uint64_t start, uint64_t end, int expandable)
{
    if (d->nruns == d->cap) {
        size_t nc = d->cap ? d->cap * 2 : 16;
        struct run *nr = realloc(d->runs, nc * sizeof *nr);
        if (!nr)
            return -1;
        d->runs = nr;
        d->cap = nc;
    }
    size_t at = run_find(d, start);
    memmove(d->runs + at + 1, d->runs + at, (d->nruns - at) * sizeof *d->runs);
    d->runs[at] = (struct run){start, end, expandable};
    d->nruns++;
    return 0;
}

static void run_remove_at(struct dev *d, size_t at)
{
    memmove(d->runs + at, d->runs + at + 1, (d->nruns - at - 1) * sizeof *d->runs);
    d->nruns--;
}

/* Add mapped pages [start, end) to the runs, joining the mapped runs they
 * touch. */
static int run_add(struct dev *d, uint64_t start, uint64_t end)
{
    size_t at = run_find(d, start ? start - 1 : 0);
    if (at < d->nruns && d->runs[at].end == start && d->runs[at].expandable) {
        d->runs[at].end = end;
        if (at + 1 < d->nruns && d->runs[at + 1].start == end && d->runs[at + 1].expandable) {
            d->runs[at].end = d->runs[at + 1].end;
            run_remove_at(d, at + 1);
        }
        return 0;
    }
    if (at < d->nruns && d->runs[at].start == end && d->runs[at].expandable) {
        d->runs[at].start = start;
        return 0;
    }
    return run_insert(d, start, end, 1);
}

/* Take [start, end) out of the run holding it (it may split in two). */
static int run_cut(struct dev *d, uint64_t start, uint64_t end)
{
    size_t at = run_find(d, start);
    if (at == d->nruns || d->runs[at].start > start || d->runs[at].end < end)
        return 1;
    struct run r = d->runs[at];
    run_remove_at(d, at);
    int rc = 0;
    if (r.start < start)
        rc |= run_insert(d, r.start, start, r.expandable);
    if (end < r.end)
        rc |= run_insert(d, end, r.end, r.expandable);
    return rc;
}

static void fill(const struct gl_bm *m, int32_t i, struct gl_bm_block *out)
{
    const struct blk *b = &m->b[i];
    out->addr = b->addr;
    out->size = b->size;
    out->requested = b->requested;
    out->seq = b->seq;
    out->state = b->state;
    out->segment = 0;
    if (b->kind == SEG_LOOSE)
        return;
    const struct dev *d = cdev_of(m, b->dev);
    size_t lo = 0, hi = d->nruns; /* the run holding it */
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (d->runs[mid].end <= b->addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < d->nruns && d->runs[lo].start <= b->addr)
        out->segment = d->runs[lo].start;
}

static void peak(struct gl_bm_stats *st, uint64_t seq)
{
    if (st->allocated > st->allocated_peak) {
        st->allocated_peak = st->allocated;
        st->allocated_peak_seq = seq;
    }
    if (st->requested > st->requested_peak)
        st->requested_peak = st->requested;
    if (st->reserved > st->reserved_peak)
        st->reserved_peak = st->reserved;
}

/* ---- events ------------------------------------------------------------------ */

static int new_free_block(struct gl_bm *m, int dev, uint64_t addr, uint64_t size, int kind, int32_t *out)
{
    int32_t i = blk_new(m);
    if (i == NONE)
        return -1;
    struct blk *b = &m->b[i];
    b->addr = addr;
    b->size = size;
    b->dev = (int16_t)dev;
    b->kind = (uint8_t)kind;
    b->state = GL_BM_FREE;
    *out = i;
    return index_blk(m, i);
}

static int segment_alloc(struct gl_bm *m, int dev, uint64_t addr, uint64_t size, enum seg_kind kind)
{
    struct dev *d = dev_of(m, dev);
    int32_t i;
    if (new_free_block(m, dev, addr, size, kind, &i) ||
        run_insert(d, addr, addr + size, 0))
        return -1;
    d->st.reserved += size;
    d->st.segments++;
    peak(&d->st, 0);
    return 0;
}

int gl_bm_segment_alloc(struct gl_bm *m, int dev, uint64_t addr, uint64_t size)
{
    return segment_alloc(m, dev, addr, size, size == SMALL_BUFFER ? SEG_SMALL : SEG_LARGE);
}

int gl_bm_segment_alloc_splitting(struct gl_bm *m, int dev, uint64_t addr, uint64_t size)
{
    return segment_alloc(m, dev, addr, size, SEG_SMALL);
}

int gl_bm_segment_free(struct gl_bm *m, int dev, uint64_t addr, uint64_t size)
{
    struct dev *d = dev_of(m, dev);
    int32_t i = blk_at(&m->by_start, addr);
    int fits = i != NONE && m->b[i].state == GL_BM_FREE && m->b[i].size == size && m->b[i].prev == NONE &&
               m->b[i].next == NONE;
    /* what the segment still held in the model is dropped with it */
    for (int32_t j = i; j != NONE && m->b[j].addr < addr + size;) {
        int32_t next = m->b[j].next;
        blk_drop(m, j);
        j = next;
    }
    run_cut(d, addr, addr + size);
    d->st.reserved -= size <= d->st.reserved ? size : d->st.reserved;
    if (d->st.segments)
        d->st.segments--;
    if (!fits)
        d->st.unknown++;
    return !fits;
}

int gl_bm_segment_map(struct gl_bm *m, int dev, uint64_t addr, uint64_t size)
{
    struct dev *d = dev_of(m, dev);
    int32_t i;
    if (new_free_block(m, dev, addr, size, SEG_EXPANDABLE, &i) || run_add(d, addr, addr + size))
        return -1;
    /* link to the mapped pages it continues, then merge with free ones */
    int32_t p = blk_at(&m->by_end, addr), n = blk_at(&m->by_start, addr + size);
    if (p != NONE && p != i && m->b[p].kind == SEG_EXPANDABLE && m->b[p].dev == dev) {
        m->b[p].next = i;
        m->b[i].prev = p;
    }
    if (n != NONE && n != i && m->b[n].kind == SEG_EXPANDABLE && m->b[n].dev == dev) {
        m->b[n].prev = i;
        m->b[i].next = n;
    }
    absorb(m, i, m->b[i].prev);
    absorb(m, i, m->b[i].next);
    d->st.reserved += size;
    peak(&d->st, 0);
    return 0;
}

/* The free block that holds [addr, addr + size), or NONE. */
static int32_t holding(const struct gl_bm *m, int dev, uint64_t addr, uint64_t size)
{
    const struct dev *d = cdev_of(m, dev);
    size_t at = run_find(d, addr);
    if (at == d->nruns || d->runs[at].start > addr)
        return NONE;
    for (int32_t i = blk_at(&m->by_start, d->runs[at].start); i != NONE; i = m->b[i].next) {
        const struct blk *b = &m->b[i];
        if (b->addr + b->size > addr)
            return b->addr <= addr && addr + size <= b->addr + b->size ? i : NONE;
    }
    return NONE;
}

int gl_bm_segment_unmap(struct gl_bm *m, int dev, uint64_t addr, uint64_t size)
{
    struct dev *d = dev_of(m, dev);
    int32_t i = holding(m, dev, addr, size);
    d->st.reserved -= size <= d->st.reserved ? size : d->st.reserved;
    if (i == NONE || m->b[i].state != GL_BM_FREE) {
        d->st.unknown++;
        run_cut(d, addr, addr + size);
        return 1;
    }
    /* [before][unmapped][after]: the ends stay free blocks, unlinked from
     * the unmapped middle */
    struct blk b = m->b[i];
    if (addr + size < b.addr + b.size) {
        int32_t after;
        if (new_free_block(m, dev, addr + size, b.addr + b.size - (addr + size), SEG_EXPANDABLE, &after))
            return -1;
        m->b[after].next = b.next;
        if (b.next != NONE)
            m->b[b.next].prev = after;
    } else if (b.next != NONE) {
        m->b[b.next].prev = NONE;
    }
    if (b.addr < addr) {
        unindex_blk(m, i);
        m->b[i].size = addr - b.addr;
        m->b[i].next = NONE;
        if (index_blk(m, i))
            return -1;
    } else {
        if (b.prev != NONE)
            m->b[b.prev].next = NONE;
        m->b[i].prev = m->b[i].next = NONE;
        blk_drop(m, i);
    }
    if (run_cut(d, addr, addr + size)) {
        d->st.unknown++;
        return 1;
    }
    return 0;
}

int gl_bm_snapshot_segment(struct gl_bm *m, int dev, uint64_t addr, uint64_t size, int expandable)
{
    struct dev *d = dev_of(m, dev);
    if (expandable ? run_add(d, addr, addr + size) : run_insert(d, addr, addr + size, 0))
        return -1;
    d->st.reserved += size;
    d->st.segments++;
    peak(&d->st, 0);
    m->snap_tail = NONE;
    m->snap_kind = (uint8_t)(expandable ? SEG_EXPANDABLE : size == SMALL_BUFFER ? SEG_SMALL : SEG_LARGE);
    return 0;
}

static void sub(uint64_t *x, uint64_t v)
{
    *x = v <= *x ? *x - v : 0;
}

int gl_bm_snapshot_block(struct gl_bm *m, int dev, uint64_t addr, uint64_t size, uint64_t requested, int state,
                         uint64_t seq)
{
    struct dev *d = dev_of(m, dev);
    int32_t i;
    if (new_free_block(m, dev, addr, size, m->snap_kind, &i))
        return -1;
    struct blk *b = &m->b[i];
    b->state = (uint8_t)(state == GL_BM_ALLOCATED || state == GL_BM_PENDING ? state : GL_BM_FREE);
    if (b->state != GL_BM_FREE) {
        b->requested = requested;
        b->seq = seq;
        d->st.requested += requested;
        d->st.active += size;
        if (b->state == GL_BM_ALLOCATED)
            d->st.allocated += size;
        peak(&d->st, seq);
    }
    if (m->snap_tail != NONE && m->b[m->snap_tail].addr + m->b[m->snap_tail].size == addr) {
        m->b[m->snap_tail].next = i;
        b->prev = m->snap_tail;
    }
    m->snap_tail = i;
    return 0;
}

/* Block i's free, as the allocator's free_block: merged with free neighbours. */
static void complete(struct gl_bm *m, struct dev *d, int32_t i)
{
    struct blk *b = &m->b[i];
    if (b->state == GL_BM_ALLOCATED)
        sub(&d->st.allocated, b->size);
    sub(&d->st.requested, b->requested);
    sub(&d->st.active, b->size);
    b->state = GL_BM_FREE;
    b->requested = 0;
    b->seq = 0;
    if (b->kind == SEG_LOOSE) {
        blk_drop(m, i);
        return;
    }
    absorb(m, i, m->b[i].prev);
    absorb(m, i, m->b[i].next);
}

int gl_bm_alloc(struct gl_bm *m, int dev, uint64_t addr, uint64_t requested, uint64_t seq, struct gl_bm_block *out)
{
    struct dev *d = dev_of(m, dev);
    uint64_t size = gl_bm_round_size(m, requested);
    int32_t i = blk_at(&m->by_start, addr);
    int fits = 1;
    if (i != NONE && m->b[i].state != GL_BM_FREE) {
        complete(m, d, i); /* its free was lost (a dropped event): it is free now */
        fits = 0;
        i = blk_at(&m->by_start, addr);
    }
    if (i == NONE) {
        /* not at the start of a free block we know (attached late): a block
         * of its own, the rounded size */
        if ((i = blk_new(m)) == NONE)
            return -1;
        m->b[i].addr = addr;
        m->b[i].size = size;
        m->b[i].dev = (int16_t)dev;
        m->b[i].kind = SEG_LOOSE;
        if (index_blk(m, i))
            return -1;
        fits = 0;
    } else if (m->b[i].size < size) {
        fits = 0; /* pages the model missed: take what it has */
    } else if (should_split(m, &m->b[i], size)) {
        int32_t rest;
        struct blk b = m->b[i];
        unindex_blk(m, i);
        m->b[i].size = size;
        if (index_blk(m, i) || new_free_block(m, dev, addr + size, b.size - size, b.kind, &rest))
            return -1;
        m->b[rest].prev = i;
        m->b[rest].next = b.next;
        if (b.next != NONE)
            m->b[b.next].prev = rest;
        m->b[i].next = rest;
    }
    struct blk *b = &m->b[i];
    b->state = GL_BM_ALLOCATED;
    b->requested = requested;
    b->seq = seq;
    d->st.allocated += b->size;
    d->st.active += b->size;
    d->st.requested += requested;
    d->st.allocs++;
    peak(&d->st, seq);
    if (!fits)
        d->st.unknown++;
    fill(m, i, out);
    return !fits;
}

int gl_bm_free_requested(struct gl_bm *m, int dev, uint64_t addr, struct gl_bm_block *out)
{
    struct dev *d = dev_of(m, dev);
    int32_t i = blk_at(&m->by_start, addr);
    memset(out, 0, sizeof *out);
    if (i == NONE || m->b[i].state != GL_BM_ALLOCATED) {
        d->st.unknown++;
        return 1;
    }
    m->b[i].state = GL_BM_PENDING;
    sub(&d->st.allocated, m->b[i].size);
    d->st.frees++;
    fill(m, i, out);
    return 0;
}

int gl_bm_free_completed(struct gl_bm *m, int dev, uint64_t addr, struct gl_bm_block *out)
{
    struct dev *d = dev_of(m, dev);
    int32_t i = blk_at(&m->by_start, addr);
    memset(out, 0, sizeof *out);
    if (i == NONE || m->b[i].state == GL_BM_FREE) {
        d->st.unknown++;
        return 1;
    }
    int fits = m->b[i].state == GL_BM_PENDING;
    if (!fits)
        d->st.frees++; /* its FREE_REQUESTED was lost */
    fill(m, i, out);
    complete(m, d, i);
    if (!fits)
        d->st.unknown++;
    return !fits;
}

int gl_bm_find(const struct gl_bm *m, uint64_t addr, struct gl_bm_block *out)
{
    int32_t i = blk_at(&m->by_start, addr);
    if (i != NONE) {
        fill(m, i, out);
        return 1;
    }
    for (int k = 0; k <= GL_MAX_DEVICES; k++) {
        const struct dev *d = &m->dev[k];
        size_t at = run_find(d, addr);
        if (at == d->nruns || d->runs[at].start > addr)
            continue;
        for (i = blk_at(&m->by_start, d->runs[at].start); i != NONE; i = m->b[i].next)
            if (m->b[i].addr <= addr && addr < m->b[i].addr + m->b[i].size) {
                fill(m, i, out);
                return 1;
            }
    }
    return 0;
}

const struct gl_bm_stats *gl_bm_stats(const struct gl_bm *m, int dev)
{
    return &cdev_of(m, dev)->st;
}

void gl_bm_holes(const struct gl_bm *m, int dev, struct gl_bm_holes *out)
{
    memset(out, 0, sizeof *out);
    int want = dev >= 0 && dev < GL_MAX_DEVICES ? dev : -1;
    for (size_t i = 0; i < m->nb; i++) {
        const struct blk *b = &m->b[i];
        int bdev = b->dev >= 0 && b->dev < GL_MAX_DEVICES ? b->dev : -1;
        if (!b->size || b->state != GL_BM_FREE || b->kind == SEG_LOOSE || bdev != want)
            continue;
        out->free_bytes += b->size;
        out->count++;
        if (b->size > out->largest)
            out->largest = b->size;
    }
}
