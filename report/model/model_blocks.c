/* model_blocks.c — the tensor ledger's links, made once at load (see
 * model.h, gl_run_link_blocks):
 *
 *  - steps: where they end — the marks the gpuledger package puts after
 *    each Optimizer.step() ("optimizer step N") when there are at least
 *    two, else the program's own marks;
 *  - which CUDA memory is PyTorch's caching allocator's: the cudaMalloc
 *    its segment row names (the row comes right after that call), or, for
 *    expandable segments, the cuMemCreate handles mapped in the range a
 *    segment row maps;
 *  - an untagged block in a private pool (a CUDA graph's, a
 *    torch.cuda.MemPool's): private_pool, named with its pool's id by
 *    gl_categorize (pool_id.h);
 *  - each other untagged block's category by lifetime: made inside
 *    Optimizer.step() (its range "optimizer.step"), outside the closure
 *    it calls ("optimizer.closure"): the optimizer's temporaries; made
 *    inside a forward (range "forward"): activations
 *    when it outlives that forward, temporaries when not; otherwise
 *    temporaries when made and freed within one step;
 *  - the ledger's rows (gl_is_item) and each device's tensor peak (and its
 *    reserved peak, from block_stats).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"
#include "model_annot.h"
#include "model_blocks.h"
#include "model_fwstats.h"
#include "model_seglink.h"
#include "reader.h"
#include "u64map.h"


static int is_step_mark(const char *label)
{
    return !gl_is_fw_stats_label(label);
}

static int is_optimizer_mark(const char *label)
{
    return !strncmp(label, GL_OPTIMIZER_STEP_MARK, strlen(GL_OPTIMIZER_STEP_MARK));
}

int gl_run_set_steps(struct gl_run *r, const struct gl_annots *an)
{
    free(r->steps);
    r->steps = NULL;
    r->nsteps = 0;
    r->steps_from = GL_STEPS_NONE;
    size_t own = 0, opt = 0, nmarks = 0;
    for (size_t i = 0; i < an->n; i++)
        if (an->v[i].op == GL_OP_MARK && is_step_mark(an->v[i].label)) {
            nmarks++;
            if (is_optimizer_mark(an->v[i].label))
                opt++;
            else
                own++;
        }
    if (!nmarks && r->nmarks >= 2) /* marks in event_log only: the program's */
        own = r->nmarks;
    /* the optimizer's marks first: the program's own (NVTX marks of its
     * libraries among them) may come at other moments than its steps */
    int from = opt >= 2 ? GL_STEPS_OPTIMIZER : own >= 2 ? GL_STEPS_MARKS : GL_STEPS_NONE;
    size_t n = from == GL_STEPS_MARKS ? own : from == GL_STEPS_OPTIMIZER ? opt : 0;
    if (!n)
        return 0;
    if (!(r->steps = malloc(n * sizeof *r->steps)))
        return -1;
    if (!nmarks) {
        memcpy(r->steps, r->marks, n * sizeof *r->steps);
    } else {
        for (size_t i = 0; i < an->n; i++)
            if (an->v[i].op == GL_OP_MARK && is_step_mark(an->v[i].label) &&
                is_optimizer_mark(an->v[i].label) == (from == GL_STEPS_OPTIMIZER))
                r->steps[r->nsteps++] = an->v[i].seq;
    }
    r->nsteps = n;
    r->steps_from = from;
    return 0;
}

size_t gl_seqs_before(const int64_t *seqs, size_t n, int64_t seq)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (seqs[mid] < seq)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The step an event falls in: how many step ends come before it. */
size_t gl_run_step_of(const struct gl_run *r, int64_t seq)
{
    return gl_seqs_before(r->steps, r->nsteps, seq);
}

/* The range pushed at seq, or NULL. */
static const struct gl_annot *range_at(const struct gl_annots *an, int64_t seq)
{
    size_t lo = 0, hi = an->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (an->v[mid].seq < seq)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < an->n && an->v[lo].seq == seq && an->v[lo].op == GL_OP_RANGE_PUSH ? &an->v[lo] : NULL;
}

/* An untagged block's category by what it lived through (0: none). Made
 * inside the closure an optimizer's step calls (range "optimizer.closure",
 * inside "optimizer.step"): as in an eager loop, and flagged GL_AF_CLOSURE
 * (the optimizer's frames above it say nothing of what it is for). */
static uint8_t lifetime(const struct gl_run *r, const struct gl_annots *an, struct gl_alloc *b)
{
    const struct gl_annot *fwd = NULL;
    int depth = 0;
    for (const struct gl_annot *x = range_at(an, b->range_seq); x && depth < 64; x = range_at(an, x->parent_seq)) {
        if (!strcmp(x->label, "optimizer.closure")) {
            b->flags |= GL_AF_CLOSURE;
            break;
        }
        if (!strcmp(x->label, "optimizer.step"))
            return GL_CAT_OPTIMIZER_TEMPORARIES;
        if (!fwd && !strcmp(x->label, "forward"))
            fwd = x;
        depth++;
    }
    if (fwd) /* freed before its forward ended: a temporary of the forward */
        return b->free_seq && fwd->end_seq && b->free_seq < fwd->end_seq ? GL_CAT_TEMPORARIES : GL_CAT_ACTIVATIONS;
    if (r->nsteps && b->free_seq && gl_run_step_of(r, b->seq) == gl_run_step_of(r, b->free_seq))
        return GL_CAT_TEMPORARIES;
    return 0;
}

void gl_block_finish(const struct gl_run *r, const struct gl_annots *an, struct gl_alloc *a, int blocks)
{
    if (a->kind == GL_KIND_BLOCK) {
        if (!a->cat && a->pool) /* a CUDA graph's or a torch.cuda.MemPool's private pool */
            a->cat = GL_CAT_PRIVATE_POOL;
        if (!a->cat)
            a->cat = lifetime(r, an, a);
        a->flags |= GL_AF_ITEM;
    } else if (gl_kind_counts_on_device(a->kind) && !(blocks && (a->flags & GL_AF_ALLOCATOR))) {
        a->flags |= GL_AF_ITEM;
    }
}

/* Mark the CUDA memory of the allocator's segments (GL_AF_ALLOCATOR). */
struct linker {
    struct gl_u64map device_at; /* address -> the latest cudaMalloc-like allocation there */
    struct gl_u64map handle_at; /* handle -> the latest cuMemCreate of it */
    size_t *maps;               /* mappings not yet claimed by a segment row */
    size_t nmaps;
};

static void claim_mappings(struct gl_run *r, struct linker *l, uint64_t lo, uint64_t hi)
{
    size_t k = 0;
    for (size_t i = 0; i < l->nmaps; i++) {
        const struct gl_alloc *m = &r->allocs[l->maps[i]];
        uint64_t pos;
        if (m->addr >= lo && m->addr < hi) {
            if (gl_u64map_get(&l->handle_at, m->aux, &pos))
                r->allocs[pos].flags |= GL_AF_ALLOCATOR;
        } else {
            l->maps[k++] = l->maps[i];
        }
    }
    l->nmaps = k;
}

static int link_segments(struct gl_run *r)
{
    struct linker l = {.maps = malloc(GL_PENDING_MAPS * sizeof(size_t))};
    gl_u64map_init(&l.device_at);
    gl_u64map_init(&l.handle_at);
    int rc = l.maps ? 0 : -1;
    for (size_t i = 0; !rc && i < r->nallocs; i++) {
        struct gl_alloc *a = &r->allocs[i];
        uint64_t pos;
        if (a->kind == GL_KIND_DEVICE)
            rc = gl_u64map_put(&l.device_at, a->addr, i);
        else if (a->kind == GL_KIND_PHYSICAL)
            rc = gl_u64map_put(&l.handle_at, a->addr, i);
        else if (a->kind == GL_KIND_MAPPING) {
            if (l.nmaps == GL_PENDING_MAPS) /* mappings no segment claimed (not the allocator's) */
                memmove(l.maps, l.maps + 1, --l.nmaps * sizeof *l.maps);
            l.maps[l.nmaps++] = i;
        } else if (a->kind == GL_KIND_SEGMENT) {
            const struct gl_alloc *c = NULL;
            if (a->op == GL_OP_ALLOC && gl_u64map_get(&l.device_at, a->addr, &pos))
                c = &r->allocs[pos];
            if (c && gl_live_at(c, a->seq))
                r->allocs[pos].flags |= GL_AF_ALLOCATOR;
            else /* expandable: pages mapped in its range */
                claim_mappings(r, &l, a->addr, a->addr + a->size);
        }
    }
    gl_u64map_free(&l.device_at);
    gl_u64map_free(&l.handle_at);
    free(l.maps);
    return rc;
}

static struct gl_device *find_device(struct gl_run *r, int device)
{
    for (int k = 0; k < r->ndevs; k++)
        if (r->devs[k].device == device)
            return &r->devs[k];
    return NULL;
}

struct delta {
    int64_t seq;
    int64_t block, requested; /* changes of block bytes and of requested bytes */
};

static int cmp_delta(const void *a, const void *b)
{
    const struct delta *x = a, *y = b;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Each device's reserved peak: the recorder's replay of the allocator
 * (block_stats). */
static void reserved_peaks(struct gl_run *r)
{
    for (int k = 0; k < r->ndevs; k++) {
        char sql[96];
        snprintf(sql, sizeof sql, "SELECT reserved_peak FROM block_stats WHERE device = %d", r->devs[k].device);
        int64_t v = r->devs[k].blocks ? gl_db_int(r->db, sql, 0) : 0;
        r->devs[k].reserved_peak = v > 0 ? (uint64_t)v : 0;
    }
}

/* Each device's tensor peak (block bytes of live tensors: ALLOC to
 * FREE_REQUESTED, the first time the highest) and requested peak (ALLOC to
 * FREE_COMPLETED), replayed from the block rows. */
static int tensor_peaks(struct gl_run *r)
{
    struct delta *d = malloc((3 * r->nallocs + 1) * sizeof *d);
    if (!d)
        return -1;
    for (int k = 0; k < r->ndevs; k++) {
        struct gl_device *dev = &r->devs[k];
        size_t n = 0;
        if (!dev->blocks)
            continue;
        for (size_t i = 0; i < r->nallocs; i++) {
            const struct gl_alloc *a = &r->allocs[i];
            if (a->kind != GL_KIND_BLOCK || a->device != dev->device)
                continue;
            /* sizes as read: a hostile file's may be any 64-bit value, so
             * the changes and their sums wrap (unsigned) rather than
             * overflow */
            d[n++] = (struct delta){a->seq, (int64_t)a->size, (int64_t)a->requested};
            if (a->free_seq)
                d[n++] = (struct delta){a->free_seq, (int64_t)(0 - (uint64_t)a->size), 0};
            int64_t done = a->done_seq ? a->done_seq : a->free_seq;
            if (done)
                d[n++] = (struct delta){done, 0, (int64_t)(0 - (uint64_t)a->requested)};
        }
        qsort(d, n, sizeof *d, cmp_delta);
        uint64_t blocks = 0, req = 0;
        for (size_t i = 0; i < n; i++) {
            blocks += (uint64_t)d[i].block;
            req += (uint64_t)d[i].requested;
            if ((int64_t)blocks > (int64_t)dev->tensor_peak) {
                dev->tensor_peak = blocks;
                dev->tensor_peak_seq = d[i].seq;
            }
            if ((int64_t)req > (int64_t)dev->requested_peak)
                dev->requested_peak = req;
        }
    }
    free(d);
    /* the time of each tensor peak */
    for (size_t i = 0; i < r->nallocs; i++) {
        const struct gl_alloc *a = &r->allocs[i];
        struct gl_device *dev = a->kind == GL_KIND_BLOCK ? find_device(r, a->device) : NULL;
        if (dev && dev->tensor_peak_seq == a->seq)
            dev->tensor_peak_ns = a->alloc_ns;
    }
    return 0;
}

int gl_run_read_annots(struct gl_run *r, char *err, size_t errsz)
{
    if (!(r->annots = calloc(1, sizeof *r->annots))) {
        snprintf(err, errsz, "%s: out of memory while loading", r->path);
        return -1;
    }
    return gl_annots_read(r, r->annots, err, errsz);
}

int gl_run_link_blocks(struct gl_run *r, char *err, size_t errsz)
{
    if (!r->annots && gl_run_read_annots(r, err, errsz)) /* (read before the scan for GL_LOAD_GROWTH) */
        return -1;
    const struct gl_annots an = *r->annots; /* kept in the run (model_annot.h) */
    int rc = gl_run_set_steps(r, &an);
    for (size_t i = 0; !rc && i < r->nallocs; i++) {
        const struct gl_alloc *a = &r->allocs[i];
        if (a->kind == GL_KIND_BLOCK || a->kind == GL_KIND_SEGMENT) {
            struct gl_device *dev = gl_run_device(r, a->device);
            if (dev)
                dev->blocks = r->has_blocks = 1;
        }
    }
    if (!rc && r->has_blocks)
        rc = link_segments(r);
    for (size_t i = 0; !rc && i < r->nallocs; i++) {
        struct gl_alloc *a = &r->allocs[i];
        const struct gl_device *dev = r->has_blocks ? find_device(r, a->device) : NULL;
        gl_block_finish(r, &an, a, dev && dev->blocks);
    }
    if (!rc && r->has_blocks && !r->live_only) /* a replay of every block's life */
        rc = tensor_peaks(r);
    if (!rc && r->has_blocks && (!r->live_only || r->moments)) /* (a live-only scan replayed them: model_moments.h) */
        reserved_peaks(r);
    if (rc)
        snprintf(err, errsz, "%s: out of memory while loading", r->path);
    return rc;
}

/* ---- the allocator's samples and settings (model_blocks.h) -------------- */

/* The samples of `device`: [*lo, *hi) of r->samples. */
static void device_samples(const struct gl_run *r, int device, size_t *lo, size_t *hi)
{
    size_t a = 0, b = r->nsamples;
    while (a < b) {
        size_t mid = a + (b - a) / 2;
        if (r->samples[mid].device < device)
            a = mid + 1;
        else
            b = mid;
    }
    *lo = a;
    for (b = a; b < r->nsamples && r->samples[b].device == device; b++)
        ;
    *hi = b;
}

int gl_run_allocator_samples(struct gl_run *r, int device, struct gl_alloc_sample **out, size_t *n)
{
    size_t lo, hi;
    device_samples(r, device, &lo, &hi);
    *out = NULL;
    *n = 0;
    if (lo == hi)
        return 0;
    if (!(*out = malloc((hi - lo) * sizeof **out)))
        return -1;
    for (size_t i = lo; i < hi; i++)
        (*out)[(*n)++] = r->samples[i].s;
    return 0;
}

int gl_run_allocator_sample_at(struct gl_run *r, int device, int64_t seq, struct gl_alloc_sample *out)
{
    size_t lo, hi;
    device_samples(r, device, &lo, &hi);
    size_t a = lo, b = hi; /* the first sample after seq */
    while (a < b) {
        size_t mid = a + (b - a) / 2;
        if (r->samples[mid].s.seq <= seq)
            a = mid + 1;
        else
            b = mid;
    }
    if (a == lo)
        return 0;
    *out = r->samples[a - 1].s;
    return 1;
}

int gl_run_allocator_expandable(struct gl_run *r)
{
    return r->allocator_expandable;
}
