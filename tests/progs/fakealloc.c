/* fakealloc.c — the stand-in caching allocator of fakealloc.h. Its rules
 * are PyTorch's (CUDACachingAllocator.cpp: round_size, get_pool,
 * get_allocation_size, get_free_block's best fit, should_split,
 * free_block's merging, release_cached_blocks before an OOM); its choices
 * are simpler where they do not change what the trace says (expandable
 * segments grow at their end, and empty_cache unmaps only their free end). */
#include "fakealloc.h"

#include <cuda.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpuledger.h"

#define MIN_BLOCK 512ULL
#define SMALL_SIZE (1ULL << 20)
#define SMALL_BUFFER (2ULL << 20)
#define LARGE_BUFFER (20ULL << 20)
#define MIN_LARGE_ALLOC (10ULL << 20)
#define ROUND_LARGE (2ULL << 20)
#define VA_SIZE (1ULL << 30)

enum { FREE, ALLOCATED, PENDING };

struct blk {
    uint64_t ptr, size, req;
    int state, uses, ready, stream, small, exp;
    struct blk *prev, *next;
};

struct eseg { /* an expandable segment: mapped pages [base, base + mapped) */
    uint64_t base, page, mapped;
    int small, stream;
    CUmemGenericAllocationHandle h[64];
};

static pthread_mutex_t lock;
static struct blk *blocks[65536];
static int nblocks;
static struct eseg esegs[8];
static int nesegs;
static int expandable, initialized, attached;
static uint64_t max_split = UINT64_MAX;
static struct fa_stats st;
static gpuledger_torch_event_fn emit_fn;
static fa_tracker_fn tracker;

typedef CUresult (*reserve_fn)(CUdeviceptr *, size_t, size_t, CUdeviceptr, unsigned long long);
typedef CUresult (*create_fn)(CUmemGenericAllocationHandle *, size_t, const CUmemAllocationProp *, unsigned long long);
typedef CUresult (*map_fn)(CUdeviceptr, size_t, size_t, CUmemGenericAllocationHandle, unsigned long long);
typedef CUresult (*access_fn)(CUdeviceptr, size_t, const CUmemAccessDesc *, size_t);
typedef CUresult (*unmap_fn)(CUdeviceptr, size_t);
typedef CUresult (*release_fn)(CUmemGenericAllocationHandle);
static reserve_fn vm_reserve;
static create_fn vm_create;
static map_fn vm_map;
static access_fn vm_access;
static unmap_fn vm_unmap;
static release_fn vm_release;

static void emit(int action, uint64_t addr, uint64_t size, int stream, uint64_t extra)
{
    if (tracker)
        tracker(action, addr, size, stream, extra);
    else if (attached && emit_fn)
        emit_fn(action, 0, addr, size, (uint64_t)stream, 0, 0, extra);
}

static void peak(void)
{
    if (st.allocated > st.allocated_peak)
        st.allocated_peak = st.allocated;
    if (st.requested > st.requested_peak)
        st.requested_peak = st.requested;
    if (st.reserved > st.reserved_peak)
        st.reserved_peak = st.reserved;
}

static struct blk *new_blk(uint64_t ptr, uint64_t size, int stream, int small, int exp)
{
    struct blk *b = calloc(1, sizeof *b);
    if (!b || nblocks == (int)(sizeof blocks / sizeof blocks[0]))
        abort();
    b->ptr = ptr;
    b->size = size;
    b->stream = stream;
    b->small = small;
    b->exp = exp;
    blocks[nblocks++] = b;
    return b;
}

static void drop_blk(struct blk *b)
{
    for (int i = 0; i < nblocks; i++)
        if (blocks[i] == b) {
            blocks[i] = blocks[--nblocks];
            break;
        }
    free(b);
}

static struct blk *find_ptr(uint64_t ptr)
{
    for (int i = 0; i < nblocks; i++)
        if (blocks[i]->ptr == ptr && blocks[i]->state != FREE)
            return blocks[i];
    return NULL;
}

/* ---- the "shim": what gpuledger attaches ------------------------------------ */

static void snapshot_chain(struct blk *head, int exp)
{
    uint64_t total = 0;
    for (struct blk *b = head; b; b = b->next)
        total += b->size;
    emit_fn(GPULEDGER_TORCH_SNAPSHOT_SEGMENT, 0, head->ptr, total, (uint64_t)head->stream, 0, 0, (uint64_t)exp);
    for (struct blk *b = head; b; b = b->next)
        emit_fn(GPULEDGER_TORCH_SNAPSHOT_BLOCK, 0, b->ptr, b->size, (uint64_t)b->stream, 0, 0,
                b->req | (uint64_t)b->state << 62);
}

static int attach(gpuledger_torch_event_fn fn, char *err, size_t errsz)
{
    (void)err;
    (void)errsz;
    pthread_mutex_lock(&lock);
    int rc = 0;
    if (initialized) { /* like the real one: nothing to attach to before CUDA is used */
        emit_fn = fn;
        fn(GPULEDGER_TORCH_CONFIG, -1, max_split, (uint64_t)expandable, 0, 0, 0, 0);
        for (int i = 0; i < nblocks; i++)
            if (!blocks[i]->prev)
                snapshot_chain(blocks[i], blocks[i]->exp);
        attached = 1;
        rc = 1;
    }
    pthread_mutex_unlock(&lock);
    return rc;
}

/* ---- sizes and rules (CUDACachingAllocator.cpp) ------------------------------ */

static uint64_t round_size(uint64_t s)
{
    return s < MIN_BLOCK ? MIN_BLOCK : (s + MIN_BLOCK - 1) & ~(MIN_BLOCK - 1);
}

static uint64_t allocation_size(uint64_t s)
{
    return s <= SMALL_SIZE ? SMALL_BUFFER : s < MIN_LARGE_ALLOC ? LARGE_BUFFER : (s + ROUND_LARGE - 1) & ~(ROUND_LARGE - 1);
}

static int should_split(const struct blk *b, uint64_t size)
{
    uint64_t rest = b->size - size;
    if (b->small || expandable)
        return rest >= MIN_BLOCK;
    return size < max_split && rest > SMALL_SIZE;
}

static struct blk *best_fit(uint64_t size, int stream, int small)
{
    struct blk *best = NULL;
    for (int i = 0; i < nblocks; i++) {
        struct blk *b = blocks[i];
        if (b->state != FREE || b->stream != stream || b->small != small || b->size < size)
            continue;
        if (size < max_split && b->size >= max_split)
            continue; /* no oversize block for a small request */
        if (size >= max_split && b->size >= size + LARGE_BUFFER)
            continue;
        if (!best || b->size < best->size || (b->size == best->size && b->ptr < best->ptr))
            best = b;
    }
    return best;
}

static void merge(struct blk *b, struct blk *n) /* b absorbs its free neighbour n */
{
    if (!n || n->state != FREE)
        return;
    if (b->prev == n) {
        b->ptr = n->ptr;
        b->prev = n->prev;
        if (b->prev)
            b->prev->next = b;
    } else {
        b->next = n->next;
        if (b->next)
            b->next->prev = b;
    }
    b->size += n->size;
    drop_blk(n);
}

static void free_block(struct blk *b)
{
    emit(GPULEDGER_TORCH_FREE_COMPLETED, b->ptr, b->req, b->stream, 0);
    st.requested -= b->req;
    b->state = FREE;
    b->req = 0;
    b->uses = b->ready = 0;
    merge(b, b->prev);
    merge(b, b->next);
}

static void process_events(void)
{
    for (int i = 0; i < nblocks; i++)
        if (blocks[i]->state == PENDING && blocks[i]->ready) {
            free_block(blocks[i]);
            i = -1; /* the array changed */
        }
}

/* ---- segments ------------------------------------------------------------------ */

static cudaStream_t capture_stream;

void fa_capture_stream(void *stream)
{
    capture_stream = (cudaStream_t)stream;
}

/* PyTorch's cudaMallocMaybeCapturing: while the stream captures, a new
 * segment's cudaMalloc is made in relaxed capture mode (a cudaMalloc is
 * otherwise illegal during a global-mode capture). */
static cudaError_t malloc_maybe_capturing(void **p, uint64_t size)
{
    enum cudaStreamCaptureStatus st = cudaStreamCaptureStatusNone;
    if (!capture_stream || cudaStreamIsCapturing(capture_stream, &st) != cudaSuccess ||
        st == cudaStreamCaptureStatusNone)
        return cudaMalloc(p, size);
    enum cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
    cudaThreadExchangeStreamCaptureMode(&mode);
    cudaError_t e = cudaMalloc(p, size);
    cudaThreadExchangeStreamCaptureMode(&mode);
    return e;
}

static struct blk *new_segment(uint64_t size, int stream, int small)
{
    void *p = NULL;
    if (malloc_maybe_capturing(&p, size) != cudaSuccess)
        return NULL;
    struct blk *b = new_blk((uint64_t)(uintptr_t)p, size, stream, small, 0);
    st.reserved += size;
    peak();
    emit(GPULEDGER_TORCH_SEGMENT_ALLOC, b->ptr, size, stream, 0);
    return b;
}

static void release_cached(void)
{
    for (int i = 0; i < nblocks; i++) {
        struct blk *b = blocks[i];
        if (b->state == FREE && !b->prev && !b->next && !b->exp) {
            emit(GPULEDGER_TORCH_SEGMENT_FREE, b->ptr, b->size, b->stream, 0);
            cudaFree((void *)(uintptr_t)b->ptr);
            st.reserved -= b->size;
            drop_blk(b);
            i = -1;
        }
    }
}

static int vm_init(void)
{
    if (vm_reserve)
        return 0;
#define ENTRY(name, var)                                                                                           \
    if (cudaGetDriverEntryPointByVersion(name, (void **)&var, 12000, cudaEnableDefault, NULL) != cudaSuccess)       \
        return -1;
    ENTRY("cuMemAddressReserve", vm_reserve);
    ENTRY("cuMemCreate", vm_create);
    ENTRY("cuMemMap", vm_map);
    ENTRY("cuMemSetAccess", vm_access);
    ENTRY("cuMemUnmap", vm_unmap);
    ENTRY("cuMemRelease", vm_release);
#undef ENTRY
    return 0;
}

/* Map pages at the end of the expandable segment of (stream, pool) so that
 * its free end (if any) plus them hold size; the new block merges with it. */
static struct blk *grow(uint64_t size, int stream, int small)
{
    struct eseg *e = NULL;
    for (int i = 0; i < nesegs; i++)
        if (esegs[i].stream == stream && esegs[i].small == small)
            e = &esegs[i];
    if (!e) {
        if (vm_init() || nesegs == 8)
            return NULL;
        e = &esegs[nesegs++];
        memset(e, 0, sizeof *e);
        e->page = small ? SMALL_BUFFER : LARGE_BUFFER;
        e->small = small;
        e->stream = stream;
        CUdeviceptr base;
        if (vm_reserve(&base, VA_SIZE, 0, 0, 0) != CUDA_SUCCESS)
            return NULL;
        e->base = base;
    }
    struct blk *tail = NULL;
    for (int i = 0; i < nblocks; i++)
        if (blocks[i]->exp && blocks[i]->ptr + blocks[i]->size == e->base + e->mapped && e->mapped)
            tail = blocks[i];
    uint64_t have = tail && tail->state == FREE ? tail->size : 0;
    uint64_t pages = (size - have + e->page - 1) / e->page, at = e->base + e->mapped;
    if (e->mapped / e->page + pages > 64)
        return NULL;
    CUmemAllocationProp prop = {0};
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = 0;
    CUmemAccessDesc acc = {{CU_MEM_LOCATION_TYPE_DEVICE, 0}, CU_MEM_ACCESS_FLAGS_PROT_READWRITE};
    for (uint64_t k = 0; k < pages; k++) {
        CUmemGenericAllocationHandle h;
        if (vm_create(&h, e->page, &prop, 0) != CUDA_SUCCESS) {
            for (uint64_t j = 0; j < k; j++) { /* give back what this attempt took */
                vm_unmap(at + j * e->page, e->page);
                vm_release(e->h[e->mapped / e->page + j]);
            }
            return NULL;
        }
        e->h[e->mapped / e->page + k] = h;
        vm_map(at + k * e->page, e->page, 0, h, 0);
    }
    vm_access(at, pages * e->page, &acc, 1);
    e->mapped += pages * e->page;
    st.reserved += pages * e->page;
    peak();
    struct blk *b = new_blk(at, pages * e->page, stream, small, 1);
    if (tail) {
        tail->next = b;
        b->prev = tail;
    }
    emit(GPULEDGER_TORCH_SEGMENT_MAP, at, pages * e->page, stream, 0);
    merge(b, b->prev);
    return b;
}

/* ---- the allocator -------------------------------------------------------------- */

void fa_init(int exp, uint64_t split)
{
    pthread_mutexattr_t a;
    pthread_mutexattr_init(&a);
    pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE);
    pthread_mutex_init(&lock, &a);
    expandable = exp;
    max_split = split ? split : UINT64_MAX;
}

void fa_register(void)
{
    int (*reg)(gpuledger_torch_attach_fn) = (int (*)(gpuledger_torch_attach_fn))dlsym(RTLD_DEFAULT,
                                                                                      "gpuledger_torch_register");
    if (reg)
        reg(attach);
}

uint64_t fa_malloc(uint64_t orig, int stream, uint64_t *block_size)
{
    pthread_mutex_lock(&lock);
    initialized = 1;
    process_events();
    uint64_t size = round_size(orig);
    int small = size <= SMALL_SIZE;
    struct blk *b = best_fit(size, stream, small);
    if (!b && expandable)
        b = grow(size, stream, small);
    if (!b && !expandable) {
        b = new_segment(allocation_size(size), stream, small);
        if (!b) {
            release_cached();
            b = new_segment(allocation_size(size), stream, small);
        }
    }
    if (!b) {
        size_t free_b = 0, total = 0;
        cudaMemGetInfo(&free_b, &total);
        st.oom_free = free_b;
        emit(GPULEDGER_TORCH_OOM, 0, size, stream, free_b);
        pthread_mutex_unlock(&lock);
        return 0;
    }
    if (should_split(b, size)) {
        struct blk *rest = new_blk(b->ptr + size, b->size - size, stream, small, b->exp);
        rest->prev = b;
        rest->next = b->next;
        if (b->next)
            b->next->prev = rest;
        b->next = rest;
        b->size = size;
    }
    b->state = ALLOCATED;
    b->req = orig;
    emit(GPULEDGER_TORCH_ALLOC, b->ptr, orig, stream, 0);
    st.allocated += b->size;
    st.requested += orig;
    st.block_bytes_total += b->size;
    st.allocs++;
    peak();
    if (block_size)
        *block_size = b->size;
    uint64_t p = b->ptr;
    pthread_mutex_unlock(&lock);
    return p;
}

void fa_record_stream(uint64_t ptr)
{
    pthread_mutex_lock(&lock);
    struct blk *b = find_ptr(ptr);
    if (b)
        b->uses = 1;
    pthread_mutex_unlock(&lock);
}

void fa_streams_done(void)
{
    pthread_mutex_lock(&lock);
    for (int i = 0; i < nblocks; i++)
        if (blocks[i]->state == PENDING)
            blocks[i]->ready = 1;
    pthread_mutex_unlock(&lock);
}

void fa_free(uint64_t ptr)
{
    pthread_mutex_lock(&lock);
    struct blk *b = find_ptr(ptr);
    if (b && b->state == ALLOCATED) {
        st.allocated -= b->size;
        emit(GPULEDGER_TORCH_FREE_REQUESTED, b->ptr, b->req, b->stream, 0);
        b->state = PENDING;
        if (!b->uses)
            free_block(b);
    }
    pthread_mutex_unlock(&lock);
}

void fa_empty_cache(void)
{
    pthread_mutex_lock(&lock);
    process_events();
    release_cached();
    for (int i = 0; i < nesegs; i++) { /* unmap the free pages at the end */
        struct eseg *e = &esegs[i];
        for (int k = 0; k < nblocks; k++) {
            struct blk *b = blocks[k];
            if (!b->exp || b->state != FREE || b->ptr + b->size != e->base + e->mapped)
                continue;
            uint64_t first = (b->ptr - e->base + e->page - 1) / e->page * e->page + e->base;
            if (first >= b->ptr + b->size)
                break;
            uint64_t n = b->ptr + b->size - first;
            for (uint64_t a = first; a < first + n; a += e->page) {
                vm_unmap(a, e->page);
                vm_release(e->h[(a - e->base) / e->page]);
            }
            e->mapped -= n;
            st.reserved -= n;
            if (first > b->ptr) { /* a free piece before the first whole page stays */
                b->size = first - b->ptr;
                b->next = NULL;
            } else {
                if (b->prev)
                    b->prev->next = NULL;
                drop_blk(b);
            }
            emit(GPULEDGER_TORCH_SEGMENT_UNMAP, first, n, e->stream, 0);
            break;
        }
    }
    pthread_mutex_unlock(&lock);
}

void fa_stats(struct fa_stats *out)
{
    pthread_mutex_lock(&lock);
    *out = st;
    pthread_mutex_unlock(&lock);
}

void fa_set_tracker(fa_tracker_fn fn)
{
    tracker = fn;
}

void fa_walk(void *ctx, fa_segment_fn seg, fa_block_fn blk)
{
    pthread_mutex_lock(&lock);
    for (int i = 0; i < nblocks; i++) {
        if (blocks[i]->prev)
            continue;
        seg(ctx, blocks[i]->ptr, blocks[i]->stream, blocks[i]->exp);
        for (struct blk *b = blocks[i]; b; b = b->next)
            blk(ctx, b->size, b->req, b->state);
    }
    pthread_mutex_unlock(&lock);
}

int fa_initialized(void)
{
    pthread_mutex_lock(&lock);
    int r = initialized;
    pthread_mutex_unlock(&lock);
    return r;
}
