/* bench_nvtxmem.c — what one page annotation costs the calling thread:
 * a KV-cache-like loop hands out and takes back one-page regions of a heap
 * through the NVTX memory API (header-only NVTX v3: nvtxMemRegionsRegister
 * then nvtxMemRegionsUnregister), and through gpuledger's own functions
 * (gpuledger_region_alloc / _free, what the Python API calls). Rounds
 * alternate recording off and on inside one process
 * (gpuledger_set_recording), so machine drift between processes does not
 * enter; the loop runs D frames down so that a stack of that depth is
 * really walked. No CUDA call: the heap is host memory (the annotations do
 * not look at it).
 *
 *   gpuledger run -q [-d N] -- bench_nvtxmem [--ops N] [--rounds R] [--deep D1,D2]
 *
 * Prints, per depth and per path, ns per annotation with recording off and
 * on and the difference (the cost of recording one, stack included).
 * Without gpuledger it prints what NVTX costs with no tool attached. */
#include <dlfcn.h>
#include <nvtx3/nvToolsExtMem.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_stats.h"

#define PAGE 64u
#define PAGES 1024u

static char heap_mem[PAGES * PAGE]; /* addresses only: 64 bytes stand for a page */
static nvtxMemHeapHandle_t heap;
static long ops = 20000;
static int rounds = 9;

static void (*set_recording)(int);
static void (*region_alloc)(const void *, const void *, size_t, long long);
static void (*region_free)(const void *);

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static void *page(unsigned i)
{
    return heap_mem + (size_t)(i % PAGES) * PAGE;
}

static void nvtx_page_alloc(void *p)
{
    nvtxMemVirtualRangeDesc_t r = {PAGE, p};
    nvtxMemRegionsRegisterBatch_t b = {NVTX_EXT_COMPATID_MEM, sizeof b, NVTX_MEM_TYPE_VIRTUAL_ADDRESS, heap, 1,
                                       sizeof r, &r, NULL};
    nvtxMemRegionsRegister(NULL, &b);
}

static void nvtx_page_free(void *p)
{
    nvtxMemRegionRef_t ref = {.pointer = p};
    nvtxMemRegionsUnregisterBatch_t b = {NVTX_EXT_COMPATID_MEM, sizeof b, NVTX_MEM_REGION_REF_TYPE_POINTER, 1,
                                         sizeof ref, &ref};
    nvtxMemRegionsUnregister(NULL, &b);
}

enum path { NVTX, GPULEDGER };

/* ns per annotation over `ops` alloc+free pairs, in bursts of 2,048 pairs
 * with a pause for the writer between them (what the calling thread pays,
 * not the writer's throughput). A window of 64 live pages slides along the
 * heap, as a KV cache's pages come and go. */
static double round_of(enum path how)
{
    const long burst = 2048;
    double dt = 0;
    unsigned next = 0;
    for (long done = 0; done < ops; done += burst) {
        long m = ops - done < burst ? ops - done : burst;
        struct timespec nap = {0, 5 * 1000 * 1000};
        nanosleep(&nap, NULL);
        double t0 = now_ns();
        for (long i = 0; i < m; i++, next++) {
            if (how == NVTX) {
                nvtx_page_alloc(page(next + 64));
                nvtx_page_free(page(next));
            } else {
                region_alloc(heap_mem, page(next + 64), PAGE, 100);
                region_free(page(next));
            }
        }
        dt += now_ns() - t0;
    }
    return dt / (double)(2 * ops);
}

static double res_off, res_on;

static void ab(enum path how)
{
    double off[64], on[64];
    for (int w = 0; w < 2; w++) {
        set_recording(0);
        round_of(how);
        set_recording(1);
        round_of(how);
    }
    for (int r = 0; r < rounds; r++) {
        set_recording(0);
        off[r] = round_of(how);
        set_recording(1);
        on[r] = round_of(how);
    }
    res_off = bench_median(off, rounds);
    res_on = bench_median(on, rounds);
}

__attribute__((noinline)) static void deep(int levels, enum path how)
{
    if (levels <= 0) {
        ab(how);
        return;
    }
    deep(levels - 1, how);
    __asm__ volatile("" ::: "memory"); /* a real frame per level */
}

int main(int argc, char **argv)
{
    int depths[8] = {0, 20}, nd = 2;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--ops") && i + 1 < argc)
            ops = atol(argv[++i]);
        else if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
            rounds = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--deep") && i + 1 < argc) {
            nd = bench_parse_depths(argv[++i], depths, 8);
        } else {
            fprintf(stderr, "usage: [gpuledger run -q [-d N] --] bench_nvtxmem [--ops N] [--rounds R (<=64)] "
                            "[--deep D1,D2,...]\n");
            return 2;
        }
    }
    if (ops < 1 || rounds < 1 || rounds > 64) {
        fprintf(stderr, "bench_nvtxmem: --ops must be >= 1 and --rounds 1..64\n");
        return 2;
    }
    nvtxMemVirtualRangeDesc_t range = {sizeof heap_mem, heap_mem};
    nvtxMemHeapDesc_t d = {0};
    d.extCompatID = NVTX_EXT_COMPATID_MEM;
    d.structSize = sizeof d;
    d.usage = NVTX_MEM_HEAP_USAGE_TYPE_SUB_ALLOCATOR;
    d.type = NVTX_MEM_TYPE_VIRTUAL_ADDRESS;
    d.typeSpecificDescSize = sizeof range;
    d.typeSpecificDesc = &range;
    d.messageType = NVTX_MESSAGE_TYPE_ASCII;
    d.message.ascii = "bench pages";
    heap = nvtxMemHeapRegister(NULL, &d);
    set_recording = (void (*)(int))(uintptr_t)dlsym(RTLD_DEFAULT, "gpuledger_set_recording");
    region_alloc = (void (*)(const void *, const void *, size_t, long long))(uintptr_t)dlsym(
        RTLD_DEFAULT, "gpuledger_region_alloc");
    region_free = (void (*)(const void *))(uintptr_t)dlsym(RTLD_DEFAULT, "gpuledger_region_free");
    if (set_recording && region_alloc && region_free) {
        printf("| path | frames below the loop | off ns/op | on ns/op | added ns/op |\n|---|---|---|---|---|\n");
        const char *name[2] = {"NVTX (nvtxMemRegionsRegister/Unregister)", "gpuledger_region_alloc/free"};
        for (int h = 0; h < 2; h++)
            for (int i = 0; i < nd; i++) {
                deep(depths[i], (enum path)h);
                printf("| %s | %d | %.0f | %.0f | %.0f |\n", name[h], depths[i], res_off, res_on, res_on - res_off);
                fflush(stdout);
            }
        set_recording(0);
    }
    double v[64];
    for (int r = 0; r < rounds; r++)
        v[r] = round_of(NVTX);
    printf("NVTX page annotation (%s): %.1f ns/op\n", set_recording ? "recording off" : "no tool attached",
           bench_median(v, rounds));
    nvtxMemHeapUnregister(NULL, heap);
    if (set_recording)
        set_recording(1);
    return 0;
}
