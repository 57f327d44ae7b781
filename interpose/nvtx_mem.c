/* nvtx_mem.c — the NVTX memory API (nvtx3/nvToolsExtMem.h) as heaps and
 * regions (suballoc.c). An NVTX v3 extension module is handed to the tool
 * that NVTX_INJECTION64_PATH names through InitializeInjectionNvtxExtension,
 * once per module per NVTX instance (each library that includes the
 * header-only NVTX has its own): we fill the memory module's function
 * slots (heap register / unregister / reset, regions register / resize /
 * unregister / name) and leave the permission calls to NVTX's no-ops.
 *
 * Only heaps and regions of process virtual memory
 * (NVTX_MEM_TYPE_VIRTUAL_ADDRESS, what compute-sanitizer understands too)
 * are recorded; as NVTX specifies for them, a heap's handle is its base
 * address and a region's handle its pointer. */
#define NVTX_NO_IMPL /* the types only: we are the tool */
#include <nvtx3/nvToolsExtMem.h>
#include <stdatomic.h>
#include <stdint.h>

#include "nvtx_label.h"
#include "recorder.h"
#include "state.h"
#include "suballoc.h"

/* Heaps of a memory type we do not read get a unique handle of their own
 * (top bit set: no user-space address looks like it) and are not recorded. */
static _Atomic uint64_t foreign_heaps;

static void warn_type_once(uint32_t type)
{
    static _Atomic int warned;
    if (!atomic_exchange(&warned, 1))
        gl_warn("NVTX memory type %u is not process virtual memory: its heaps and regions are not recorded", type);
}

static const char *message_label(uint32_t type, const nvtxMessageValue_t *m, char *buf)
{
    switch (type) {
    case NVTX_MESSAGE_TYPE_ASCII:
        return m->ascii ? m->ascii : "";
    case NVTX_MESSAGE_TYPE_UNICODE:
        return gl_nvtx_from_wide(m->unicode, buf);
    case NVTX_MESSAGE_TYPE_REGISTERED:
        return "(registered string)";
    default:
        return "";
    }
}

/* An element of a batch, or NULL when the batch does not hold it. */
static const void *element(const void *base, size_t elem_size, size_t want, size_t i)
{
    if (!base || elem_size < want)
        return NULL;
    return (const char *)base + i * elem_size;
}

static nvtxMemHeapHandle_t heap_register(nvtxDomainHandle_t domain, const nvtxMemHeapDesc_t *desc)
{
    (void)domain;
    if (!desc || desc->structSize < offsetof(nvtxMemHeapDesc_t, category))
        return NVTX_MEM_HEAP_HANDLE_NO_TOOL;
    const nvtxMemVirtualRangeDesc_t *range = desc->typeSpecificDesc;
    if (desc->type != NVTX_MEM_TYPE_VIRTUAL_ADDRESS || !range ||
        desc->typeSpecificDescSize < sizeof *range) {
        warn_type_once(desc->type);
        return (nvtxMemHeapHandle_t)(uintptr_t)((1ULL << 63) | atomic_fetch_add(&foreign_heaps, 1));
    }
    uint64_t base = (uint64_t)(uintptr_t)range->ptr;
    gl_sub_event(GL_API_gpuledger_heap_register, base, base, range->size, desc->usage, 0);
    if (desc->structSize >= sizeof *desc) {
        char buf[GL_NVTX_LABEL_MAX];
        const char *name = message_label(desc->messageType, &desc->message, buf);
        if (*name)
            gl_sub_name(GL_API_gpuledger_heap_name, base, base, name);
    }
    return (nvtxMemHeapHandle_t)(uintptr_t)base;
}

static int foreign(nvtxMemHeapHandle_t heap)
{
    return ((uint64_t)(uintptr_t)heap >> 63) != 0;
}

static void heap_unregister(nvtxDomainHandle_t domain, nvtxMemHeapHandle_t heap)
{
    (void)domain;
    if (heap && !foreign(heap))
        gl_sub_event(GL_API_gpuledger_heap_unregister, (uintptr_t)heap, (uintptr_t)heap, 0, 0, 0);
}

static void heap_reset(nvtxDomainHandle_t domain, nvtxMemHeapHandle_t heap)
{
    (void)domain;
    if (!foreign(heap)) /* the process-wide heap (0) may be reset too */
        gl_sub_event(GL_API_gpuledger_heap_reset, (uintptr_t)heap, (uintptr_t)heap, 0, 0, 0);
}

static void regions_register(nvtxDomainHandle_t domain, const nvtxMemRegionsRegisterBatch_t *b)
{
    (void)domain;
    if (!b || b->structSize < sizeof *b || foreign(b->heap))
        return;
    if (b->regionType != NVTX_MEM_TYPE_VIRTUAL_ADDRESS) {
        warn_type_once(b->regionType);
        return;
    }
    for (size_t i = 0; i < b->regionCount; i++) {
        const nvtxMemVirtualRangeDesc_t *r =
            element(b->regionDescElements, b->regionDescElementSize, sizeof *r, i);
        if (!r)
            return;
        gl_sub_event(GL_API_gpuledger_region_alloc, (uintptr_t)b->heap, (uintptr_t)r->ptr, r->size, 0, 0);
        if (b->regionHandleElementsOut)
            b->regionHandleElementsOut[i] = (nvtxMemRegionHandle_t)(uintptr_t)r->ptr;
    }
}

static void regions_resize(nvtxDomainHandle_t domain, const nvtxMemRegionsResizeBatch_t *b)
{
    (void)domain;
    if (!b || b->structSize < sizeof *b || b->regionType != NVTX_MEM_TYPE_VIRTUAL_ADDRESS)
        return;
    for (size_t i = 0; i < b->regionDescCount; i++) {
        const nvtxMemVirtualRangeDesc_t *r =
            element(b->regionDescElements, b->regionDescElementSize, sizeof *r, i);
        if (!r)
            return;
        gl_sub_event(GL_API_gpuledger_region_resize, 0, (uintptr_t)r->ptr, r->size, 0, 0);
    }
}

/* A region reference: its pointer, or its handle (which we made its pointer). */
static uint64_t region_addr(uint32_t ref_type, nvtxMemRegionRef_t ref)
{
    return ref_type == NVTX_MEM_REGION_REF_TYPE_HANDLE ? (uint64_t)(uintptr_t)ref.handle
                                                       : (uint64_t)(uintptr_t)ref.pointer;
}

static void regions_unregister(nvtxDomainHandle_t domain, const nvtxMemRegionsUnregisterBatch_t *b)
{
    (void)domain;
    if (!b || b->structSize < sizeof *b)
        return;
    for (size_t i = 0; i < b->refCount; i++) {
        const nvtxMemRegionRef_t *ref = element(b->refElements, b->refElementSize, sizeof *ref, i);
        if (!ref)
            return;
        gl_sub_event(GL_API_gpuledger_region_free, 0, region_addr(b->refType, *ref), 0, 0, 0);
    }
}

static void regions_name(nvtxDomainHandle_t domain, const nvtxMemRegionsNameBatch_t *b)
{
    (void)domain;
    if (!b || b->structSize < offsetof(nvtxMemRegionsNameBatch_t, reserved1))
        return;
    for (size_t i = 0; i < b->regionCount; i++) {
        const nvtxMemRegionNameDesc_t *d =
            element(b->regionElements, b->regionElementSize, offsetof(nvtxMemRegionNameDesc_t, category), i);
        if (!d)
            return;
        char buf[GL_NVTX_LABEL_MAX];
        gl_sub_name(GL_API_gpuledger_region_name, 0, region_addr(d->regionRefType, d->region),
                    message_label(d->nameType, &d->name, buf));
    }
}

/* The memory module's ABI: its id, and compatibility ids 0x0102 and later
 * revisions of the same major layout (function slots only ever appended). */
static int is_memory_module(const nvtxExtModuleInfo_t *info)
{
    return info && info->structSize >= sizeof *info && info->moduleId == NVTX_EXT_MODULEID_MEM &&
           info->compatId >= 0x0102 && info->compatId < 0x0200 && info->segmentsCount >= 1 && info->segments;
}

GL_EXPORT int InitializeInjectionNvtxExtension(nvtxExtModuleInfo_t *info)
{
    if (!is_memory_module(info))
        return 0; /* a module we do not implement: NVTX makes its calls no-ops */
    const struct {
        int id;
        intptr_t fn;
    } ours[] = {
        {NVTX3EXT_CBID_nvtxMemHeapRegister, (intptr_t)heap_register},
        {NVTX3EXT_CBID_nvtxMemHeapUnregister, (intptr_t)heap_unregister},
        {NVTX3EXT_CBID_nvtxMemHeapReset, (intptr_t)heap_reset},
        {NVTX3EXT_CBID_nvtxMemRegionsRegister, (intptr_t)regions_register},
        {NVTX3EXT_CBID_nvtxMemRegionsResize, (intptr_t)regions_resize},
        {NVTX3EXT_CBID_nvtxMemRegionsUnregister, (intptr_t)regions_unregister},
        {NVTX3EXT_CBID_nvtxMemRegionsName, (intptr_t)regions_name},
    };
    nvtxExtModuleSegment_t *seg = &info->segments[0];
    if (!seg->functionSlots)
        return 0;
    for (size_t i = 0; i < sizeof ours / sizeof ours[0]; i++)
        if ((size_t)ours[i].id < seg->slotCount)
            seg->functionSlots[ours[i].id] = ours[i].fn;
    return 1;
}
