/* nvtx_mem.c — a program's own pools described through the NVTX v3 memory
 * API (header-only), with gpuledger's extension for page size and used
 * bytes looked up at run time (the program runs the same without it).
 *
 * Heap "kv_cache": 16 pages of 4 KiB inside one cudaMalloc.
 *   1 admit()      pages 0..11, one region each, all 4096 bytes used but
 *                  page 11 (1024)
 *   2 finish()     frees pages 1 3 5 7
 *   3 leak_pages() pages 12 (4096 used) and 14 (512 used, named "req 42"),
 *                  never freed
 *   4 finish()     frees page 2; grow(): a region at page 1, resized to 3
 *                  pages (used not given); admit(): page 5 (2048 used),
 *                  then its used bytes become 3072
 *   5 finish()     frees every region but the leaked two
 * Heap "arena" (wide-string name, no page size): 10000 bytes inside another
 *   cudaMalloc; regions [0,1000) [1000,3000) [3000,3500) [5000,9000), then
 *   [1000,3000) freed, the heap reset, one region over all of it, and the
 *   heap unregistered with that region live.
 * The figures these give are worked out in tests/integration/test_suballoc.c. */
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <nvtx3/nvToolsExtMem.h>
#include <stdint.h>
#include <stdio.h>

#define PAGE 4096u

static void (*page_size_fn)(const void *, size_t);
static void (*used_fn)(const void *, size_t);
static nvtxMemHeapHandle_t kv;
static char *kv_base;

static void *page(int i)
{
    return kv_base + (size_t)i * PAGE;
}

static void set_used(const void *p, size_t used)
{
    if (used_fn)
        used_fn(p, used);
}

static void region(nvtxMemHeapHandle_t heap, void *p, size_t size, nvtxMemRegionHandle_t *out)
{
    nvtxMemVirtualRangeDesc_t r = {size, p};
    nvtxMemRegionsRegisterBatch_t b = {0};
    b.extCompatID = NVTX_EXT_COMPATID_MEM;
    b.structSize = sizeof b;
    b.regionType = NVTX_MEM_TYPE_VIRTUAL_ADDRESS;
    b.heap = heap;
    b.regionCount = 1;
    b.regionDescElementSize = sizeof r;
    b.regionDescElements = &r;
    b.regionHandleElementsOut = out;
    nvtxMemRegionsRegister(NULL, &b);
}

static void unregister(const void *p)
{
    nvtxMemRegionRef_t ref = {.pointer = p};
    nvtxMemRegionsUnregisterBatch_t b = {0};
    b.extCompatID = NVTX_EXT_COMPATID_MEM;
    b.structSize = sizeof b;
    b.refType = NVTX_MEM_REGION_REF_TYPE_POINTER;
    b.refCount = 1;
    b.refElementSize = sizeof ref;
    b.refElements = &ref;
    nvtxMemRegionsUnregister(NULL, &b);
}

static nvtxMemHeapHandle_t heap(void *base, size_t size, const char *ascii, const wchar_t *wide)
{
    nvtxMemVirtualRangeDesc_t range = {size, base};
    nvtxMemHeapDesc_t d = {0};
    d.extCompatID = NVTX_EXT_COMPATID_MEM;
    d.structSize = sizeof d;
    d.usage = NVTX_MEM_HEAP_USAGE_TYPE_SUB_ALLOCATOR;
    d.type = NVTX_MEM_TYPE_VIRTUAL_ADDRESS;
    d.typeSpecificDescSize = sizeof range;
    d.typeSpecificDesc = &range;
    if (ascii) {
        d.messageType = NVTX_MESSAGE_TYPE_ASCII;
        d.message.ascii = ascii;
    } else {
        d.messageType = NVTX_MESSAGE_TYPE_UNICODE;
        d.message.unicode = wide;
    }
    return nvtxMemHeapRegister(NULL, &d);
}

__attribute__((noinline)) static void admit(int first, int last, size_t used)
{
    for (int i = first; i <= last; i++) {
        region(kv, page(i), PAGE, NULL);
        set_used(page(i), i == 11 ? 1024 : used);
    }
}

__attribute__((noinline)) static void finish(int i)
{
    unregister(page(i));
}

__attribute__((noinline)) static int leak_pages(void)
{
    nvtxMemRegionHandle_t h12 = NULL, h14 = NULL;
    region(kv, page(12), PAGE, &h12);
    set_used(page(12), 4096);
    region(kv, page(14), PAGE, &h14);
    set_used(page(14), 512);
    nvtxMemRegionNameDesc_t n = {0};
    n.regionRefType = NVTX_MEM_REGION_REF_TYPE_HANDLE;
    n.nameType = NVTX_MESSAGE_TYPE_ASCII;
    n.region.handle = h14;
    n.name.ascii = "req 42";
    nvtxMemRegionsNameBatch_t b = {0};
    b.extCompatID = NVTX_EXT_COMPATID_MEM;
    b.structSize = sizeof b;
    b.regionCount = 1;
    b.regionElementSize = sizeof n;
    b.regionElements = &n;
    nvtxMemRegionsName(NULL, &b);
    /* with a tool, a region's handle is its pointer; without, NULL */
    int tool = kv != NVTX_MEM_HEAP_HANDLE_NO_TOOL && kv != NULL;
    return tool ? (h12 == (nvtxMemRegionHandle_t)page(12) && h14 == (nvtxMemRegionHandle_t)page(14)) : 1;
}

__attribute__((noinline)) static void grow(void)
{
    region(kv, page(1), PAGE, NULL);
    nvtxMemVirtualRangeDesc_t r = {3 * PAGE, page(1)};
    nvtxMemRegionsResizeBatch_t b = {0};
    b.extCompatID = NVTX_EXT_COMPATID_MEM;
    b.structSize = sizeof b;
    b.regionType = NVTX_MEM_TYPE_VIRTUAL_ADDRESS;
    b.regionDescCount = 1;
    b.regionDescElementSize = sizeof r;
    b.regionDescElements = &r;
    nvtxMemRegionsResize(NULL, &b);
}

static void arena(void)
{
    char *base = NULL;
    if (cudaMalloc((void **)&base, 10000) != cudaSuccess)
        return;
    nvtxMemHeapHandle_t a = heap(base, 10000, NULL, L"arena");
    region(a, base, 1000, NULL);
    region(a, base + 1000, 2000, NULL);
    region(a, base + 3000, 500, NULL);
    region(a, base + 5000, 4000, NULL);
    unregister(base + 1000);
    nvtxMemHeapReset(NULL, a);
    region(a, base, 10000, NULL);
    nvtxMemHeapUnregister(NULL, a);
    cudaFree(base);
}

int main(void)
{
    page_size_fn = (void (*)(const void *, size_t))(uintptr_t)dlsym(RTLD_DEFAULT, "gpuledger_heap_page_size");
    used_fn = (void (*)(const void *, size_t))(uintptr_t)dlsym(RTLD_DEFAULT, "gpuledger_region_used");
    if (cudaMalloc((void **)&kv_base, 16 * PAGE) != cudaSuccess)
        return 1;
    kv = heap(kv_base, 16 * PAGE, "kv_cache", NULL);
    if (page_size_fn)
        page_size_fn(kv_base, PAGE);
    admit(0, 11, PAGE);
    const int done[] = {1, 3, 5, 7};
    for (int i = 0; i < 4; i++)
        finish(done[i]);
    int handles_ok = leak_pages();
    finish(2);
    grow();
    admit(5, 5, 2048);
    set_used(page(5), 3072);
    const int rest[] = {0, 1, 4, 5, 6, 8, 9, 10, 11};
    for (int i = 0; i < 9; i++)
        finish(rest[i]);
    arena();
    printf("nvtx_mem: heap %s, handles %s\n", kv == (nvtxMemHeapHandle_t)kv_base ? "is its base" : "from no tool",
           handles_ok ? "ok" : "WRONG");
    return handles_ok ? 0 : 1;
}
