/* fake_pool.c — a real sub-allocating memory pool behind the fake
 * stream-ordered API (cuMemAllocAsync & co): 2 MiB chunks from mmap,
 * first-fit inside them at 256-byte granularity, coalescing frees, a
 * release threshold applied at synchronisation, and TrimTo. Its layout is
 * deterministic so tests can plant fragmentation and predict the holes. */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "fake_internal.h"

#define CHUNK (2u << 20)
#define GRAN 256

struct block {
    size_t off, size;
    struct block *next;
};

struct chunk {
    char *base;
    size_t size, used;
    struct block *free; /* sorted by offset */
    struct chunk *next;
};

struct fpool {
    pthread_mutex_t lock;
    int dev;
    size_t reserved, used, reserved_high, used_high, threshold;
    struct chunk *chunks;
    struct fpool *next_all;
};

struct live {
    uintptr_t ptr;
    size_t size;
    struct fpool *pool;
    struct chunk *chunk;
    struct live *next;
};

#define NB 4096
static struct live *live_tab[NB];
static pthread_mutex_t live_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t pools_lock = PTHREAD_MUTEX_INITIALIZER;
static struct fpool *all_pools;
static struct fpool *default_pools[FAKE_MAX_DEVICES];
static struct fpool *current_pools[FAKE_MAX_DEVICES];

/* fork: like a well-behaved library, hold every lock across fork so that a
 * child never inherits one taken by another thread (order: pools_lock, each
 * pool's lock, live_lock — the order the code nests them in). */
static void fork_prepare(void)
{
    pthread_mutex_lock(&pools_lock);
    for (struct fpool *p = all_pools; p; p = p->next_all)
        pthread_mutex_lock(&p->lock);
    pthread_mutex_lock(&live_lock);
}

static void fork_release(void)
{
    pthread_mutex_unlock(&live_lock);
    for (struct fpool *p = all_pools; p; p = p->next_all)
        pthread_mutex_unlock(&p->lock);
    pthread_mutex_unlock(&pools_lock);
}

__attribute__((constructor)) static void fork_handlers(void)
{
    pthread_atfork(fork_prepare, fork_release, fork_release);
}

static struct fpool *new_pool(int dev)
{
    struct fpool *p = calloc(1, sizeof *p);
    if (!p)
        abort();
    pthread_mutex_init(&p->lock, NULL);
    p->dev = dev;
    pthread_mutex_lock(&pools_lock);
    p->next_all = all_pools;
    all_pools = p;
    pthread_mutex_unlock(&pools_lock);
    return p;
}

CUmemoryPool fake_default_pool(int dev)
{
    pthread_mutex_lock(&pools_lock);
    struct fpool *p = default_pools[dev];
    pthread_mutex_unlock(&pools_lock);
    if (!p) {
        p = new_pool(dev);
        pthread_mutex_lock(&pools_lock);
        if (default_pools[dev]) { /* lost a race: keep the first */
            pthread_mutex_unlock(&pools_lock);
            return (CUmemoryPool)default_pools[dev];
        }
        default_pools[dev] = p;
        pthread_mutex_unlock(&pools_lock);
    }
    return (CUmemoryPool)p;
}

static struct fpool *current_pool(int dev)
{
    pthread_mutex_lock(&pools_lock);
    struct fpool *p = current_pools[dev];
    pthread_mutex_unlock(&pools_lock);
    return p ? p : (struct fpool *)fake_default_pool(dev);
}

static int carve(struct chunk *c, size_t size, size_t *off)
{
    for (struct block **b = &c->free; *b; b = &(*b)->next) {
        if ((*b)->size < size)
            continue;
        *off = (*b)->off;
        (*b)->off += size;
        (*b)->size -= size;
        if ((*b)->size == 0) {
            struct block *dead = *b;
            *b = dead->next;
            free(dead);
        }
        c->used += size;
        return 1;
    }
    return 0;
}

static void give_back(struct chunk *c, size_t off, size_t size)
{
    struct block **b = &c->free;
    while (*b && (*b)->off < off)
        b = &(*b)->next;
    struct block *nb = malloc(sizeof *nb);
    if (!nb)
        abort();
    nb->off = off;
    nb->size = size;
    nb->next = *b;
    *b = nb;
    if (nb->next && nb->off + nb->size == nb->next->off) { /* merge right */
        struct block *r = nb->next;
        nb->size += r->size;
        nb->next = r->next;
        free(r);
    }
    for (struct block *p = c->free; p && p != nb; p = p->next) /* merge left */
        if (p->next == nb && p->off + p->size == nb->off) {
            p->size += nb->size;
            p->next = nb->next;
            free(nb);
            break;
        }
    c->used -= size;
}

static void live_put(struct live *l)
{
    pthread_mutex_lock(&live_lock);
    size_t h = (l->ptr >> 8) % NB;
    l->next = live_tab[h];
    live_tab[h] = l;
    pthread_mutex_unlock(&live_lock);
}

static struct live *live_take(uintptr_t ptr)
{
    pthread_mutex_lock(&live_lock);
    for (struct live **p = &live_tab[(ptr >> 8) % NB]; *p; p = &(*p)->next)
        if ((*p)->ptr == ptr) {
            struct live *l = *p;
            *p = l->next;
            pthread_mutex_unlock(&live_lock);
            return l;
        }
    pthread_mutex_unlock(&live_lock);
    return NULL;
}

CUresult fake_pool_alloc(CUmemoryPool hpool, size_t size, CUdeviceptr *out)
{
    struct fpool *p = (struct fpool *)hpool;
    if (!p || !out || size == 0)
        return CUDA_ERROR_INVALID_VALUE;
    size_t need = (size + GRAN - 1) & ~(size_t)(GRAN - 1);
    pthread_mutex_lock(&p->lock);
    struct chunk *c;
    size_t off = 0;
    for (c = p->chunks; c; c = c->next)
        if (carve(c, need, &off))
            break;
    if (!c) {
        size_t csize = (need + CHUNK - 1) / CHUNK * CHUNK;
        CUresult r = fake_charge(p->dev, csize);
        if (r != CUDA_SUCCESS) {
            pthread_mutex_unlock(&p->lock);
            return r;
        }
        void *mem = mmap(NULL, csize, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (mem == MAP_FAILED) {
            fake_uncharge(p->dev, csize);
            pthread_mutex_unlock(&p->lock);
            return CUDA_ERROR_OUT_OF_MEMORY;
        }
        c = calloc(1, sizeof *c);
        struct block *b = calloc(1, sizeof *b);
        if (!c || !b)
            abort();
        c->base = mem;
        c->size = csize;
        b->size = csize;
        c->free = b;
        /* Keep chunks in address order: first fit then prefers low addresses. */
        struct chunk **pp = &p->chunks;
        while (*pp && (*pp)->base < c->base)
            pp = &(*pp)->next;
        c->next = *pp;
        *pp = c;
        p->reserved += csize;
        if (p->reserved > p->reserved_high)
            p->reserved_high = p->reserved;
        carve(c, need, &off);
    }
    p->used += need;
    if (p->used > p->used_high)
        p->used_high = p->used;
    pthread_mutex_unlock(&p->lock);
    struct live *l = malloc(sizeof *l);
    if (!l)
        abort();
    l->ptr = (uintptr_t)(c->base + off);
    l->size = need;
    l->pool = p;
    l->chunk = c;
    live_put(l);
    *out = (CUdeviceptr)l->ptr;
    return CUDA_SUCCESS;
}

CUresult fake_pool_free(CUdeviceptr ptr)
{
    struct live *l = live_take((uintptr_t)ptr);
    if (!l)
        return CUDA_ERROR_INVALID_VALUE;
    struct fpool *p = l->pool;
    pthread_mutex_lock(&p->lock);
    give_back(l->chunk, (uintptr_t)ptr - (uintptr_t)l->chunk->base, l->size);
    p->used -= l->size;
    pthread_mutex_unlock(&p->lock);
    free(l);
    return CUDA_SUCCESS;
}

/* Release wholly free chunks while the pool holds more than `keep`. */
static void trim(struct fpool *p, size_t keep)
{
    for (struct chunk **pc = &p->chunks; *pc && p->reserved > keep;) {
        struct chunk *c = *pc;
        if (c->used) {
            pc = &c->next;
            continue;
        }
        *pc = c->next;
        munmap(c->base, c->size);
        fake_uncharge(p->dev, c->size);
        p->reserved -= c->size;
        while (c->free) {
            struct block *b = c->free;
            c->free = b->next;
            free(b);
        }
        free(c);
    }
}

CUresult fake_pool_sync_all(void)
{
    pthread_mutex_lock(&pools_lock);
    for (struct fpool *p = all_pools; p; p = p->next_all) {
        pthread_mutex_lock(&p->lock);
        trim(p, p->threshold);
        pthread_mutex_unlock(&p->lock);
    }
    pthread_mutex_unlock(&pools_lock);
    return CUDA_SUCCESS;
}

/* ---- the driver API ------------------------------------------------------ */

CUresult cuDeviceGetDefaultMemPool(CUmemoryPool *pool, CUdevice dev)
{
    if (!pool || dev < 0 || dev >= fake_device_count())
        return CUDA_ERROR_INVALID_VALUE;
    *pool = fake_default_pool(dev);
    return CUDA_SUCCESS;
}

CUresult cuDeviceGetMemPool(CUmemoryPool *pool, CUdevice dev)
{
    if (!pool || dev < 0 || dev >= fake_device_count())
        return CUDA_ERROR_INVALID_VALUE;
    *pool = (CUmemoryPool)current_pool(dev);
    return CUDA_SUCCESS;
}

CUresult cuDeviceSetMemPool(CUdevice dev, CUmemoryPool pool)
{
    if (dev < 0 || dev >= fake_device_count())
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&pools_lock);
    current_pools[dev] = (struct fpool *)pool;
    pthread_mutex_unlock(&pools_lock);
    return CUDA_SUCCESS;
}

CUresult cuMemPoolCreate(CUmemoryPool *pool, const CUmemPoolProps *props)
{
    if (!pool || !props)
        return CUDA_ERROR_INVALID_VALUE;
    *pool = (CUmemoryPool)new_pool(props->location.id);
    return CUDA_SUCCESS;
}

CUresult cuMemPoolDestroy(CUmemoryPool hpool)
{
    struct fpool *p = (struct fpool *)hpool;
    if (!p)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&p->lock);
    trim(p, 0);
    pthread_mutex_unlock(&p->lock);
    return CUDA_SUCCESS; /* the struct stays: handles may still be compared */
}

CUresult cuMemPoolTrimTo(CUmemoryPool hpool, size_t keep)
{
    struct fpool *p = (struct fpool *)hpool;
    if (!p)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&p->lock);
    trim(p, keep);
    pthread_mutex_unlock(&p->lock);
    return CUDA_SUCCESS;
}

CUresult cuMemPoolGetAttribute(CUmemoryPool hpool, CUmemPool_attribute attr, void *value)
{
    FAKE_UNSAFE("cuMemPoolGetAttribute");
    struct fpool *p = (struct fpool *)hpool;
    if (!p || !value)
        return CUDA_ERROR_INVALID_VALUE;
    cuuint64_t v;
    pthread_mutex_lock(&p->lock);
    switch (attr) {
    case CU_MEMPOOL_ATTR_RELEASE_THRESHOLD:
        v = p->threshold;
        break;
    case CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT:
        v = p->reserved;
        break;
    case CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH:
        v = p->reserved_high;
        break;
    case CU_MEMPOOL_ATTR_USED_MEM_CURRENT:
        v = p->used;
        break;
    case CU_MEMPOOL_ATTR_USED_MEM_HIGH:
        v = p->used_high;
        break;
    default:
        pthread_mutex_unlock(&p->lock);
        return CUDA_ERROR_INVALID_VALUE;
    }
    pthread_mutex_unlock(&p->lock);
    memcpy(value, &v, sizeof v);
    return CUDA_SUCCESS;
}

CUresult cuMemPoolSetAttribute(CUmemoryPool hpool, CUmemPool_attribute attr, void *value)
{
    struct fpool *p = (struct fpool *)hpool;
    if (!p || !value || attr != CU_MEMPOOL_ATTR_RELEASE_THRESHOLD)
        return CUDA_ERROR_INVALID_VALUE;
    memcpy(&p->threshold, value, sizeof(cuuint64_t));
    return CUDA_SUCCESS;
}

CUresult cuMemAllocFromPoolAsync(CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool, CUstream hStream)
{
    CUresult r;
    if (fake_capture_alloc(hStream, bytesize, dptr, &r))
        return r; /* captured: a graph allocation node */
    return fake_pool_alloc(pool, bytesize, dptr);
}

CUresult cuMemAllocAsync(CUdeviceptr *dptr, size_t bytesize, CUstream hStream)
{
    return cuMemAllocFromPoolAsync(dptr, bytesize, (CUmemoryPool)current_pool(fake_current_device()), hStream);
}

CUresult cuMemFreeAsync(CUdeviceptr dptr, CUstream hStream)
{
    CUresult captured;
    if (fake_capture_free(hStream, dptr, &captured))
        return captured; /* captured: a graph free node */
    CUresult r = fake_pool_free(dptr);
    if (r == CUDA_ERROR_INVALID_VALUE && fake_graph_free(dptr))
        r = CUDA_SUCCESS; /* a graph allocation: back to the graph pool */
    return r;
}

CUresult cuMemAllocAsync_ptsz(CUdeviceptr *dptr, size_t bytesize, CUstream hStream)
{
    return cuMemAllocAsync(dptr, bytesize, hStream);
}

CUresult cuMemFreeAsync_ptsz(CUdeviceptr dptr, CUstream hStream)
{
    return cuMemFreeAsync(dptr, hStream);
}

CUresult cuMemAllocFromPoolAsync_ptsz(CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool, CUstream hStream)
{
    return cuMemAllocFromPoolAsync(dptr, bytesize, pool, hStream);
}
