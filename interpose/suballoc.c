/* suballoc.c — heaps and regions of a program's own pools (gpuledger.h):
 * one event each, with the caller's stack, on the same hot path as the CUDA
 * wrappers. nvtx_mem.c turns the NVTX memory API into the same calls.
 * Heaps are named by their base address; a region's heap goes in the
 * event's pool field, its used bytes (when known) in aux. */
#include "suballoc.h"

#include <stdint.h>
#include <string.h>

#include "gpuledger.h"
#include "recorder.h"

/* One event with a stack (register, free, resize, used, page size). */
void gl_sub_event(int api, uint64_t heap, uint64_t addr, uint64_t size, uint64_t aux, unsigned flags)
{
    if (gl_enter()) {
        struct gl_call c = {.api = api, .device = -1, .addr = addr, .size = size, .pool = heap, .aux = aux};
        struct gl_claim cl;
        gl_claim(&cl, &c);
        if (cl.ev)
            cl.ev->flags |= (uint16_t)flags;
        gl_publish(&cl, 0);
    }
    gl_leave();
}

/* A name for a heap or a region: the label travels instead of a stack. */
void gl_sub_name(int api, uint64_t heap, uint64_t addr, const char *name)
{
    if (gl_enter()) {
        struct gl_call c = {.api = api, .device = -1, .addr = addr, .pool = heap};
        struct gl_claim cl;
        gl_claim_label(&cl, &c, name ? name : "");
        gl_publish(&cl, 0);
    }
    gl_leave();
}

GL_EXPORT void gpuledger_heap_register(const void *base, size_t size, size_t page_size, const char *name)
{
    uint64_t b = (uint64_t)(uintptr_t)base;
    gl_sub_event(GL_API_gpuledger_heap_register, b, b, size, GL_HEAP_USAGE_SUB_ALLOCATOR, 0);
    if (page_size)
        gl_sub_event(GL_API_gpuledger_heap_page_size, b, b, 0, page_size, 0);
    if (name && *name)
        gl_sub_name(GL_API_gpuledger_heap_name, b, b, name);
}

GL_EXPORT void gpuledger_heap_unregister(const void *base)
{
    uint64_t b = (uint64_t)(uintptr_t)base;
    gl_sub_event(GL_API_gpuledger_heap_unregister, b, b, 0, 0, 0);
}

GL_EXPORT void gpuledger_heap_reset(const void *base)
{
    uint64_t b = (uint64_t)(uintptr_t)base;
    gl_sub_event(GL_API_gpuledger_heap_reset, b, b, 0, 0, 0);
}

GL_EXPORT void gpuledger_heap_page_size(const void *base, size_t page_size)
{
    uint64_t b = (uint64_t)(uintptr_t)base;
    gl_sub_event(GL_API_gpuledger_heap_page_size, b, b, 0, page_size, 0);
}

GL_EXPORT void gpuledger_region_alloc(const void *heap, const void *addr, size_t size, long long used)
{
    gl_sub_event(GL_API_gpuledger_region_alloc, (uint64_t)(uintptr_t)heap, (uint64_t)(uintptr_t)addr, size,
                 used >= 0 ? (uint64_t)used : 0, used >= 0 ? GL_EVF_USED : 0);
}

GL_EXPORT void gpuledger_region_free(const void *addr)
{
    gl_sub_event(GL_API_gpuledger_region_free, 0, (uint64_t)(uintptr_t)addr, 0, 0, 0);
}

GL_EXPORT void gpuledger_region_resize(const void *addr, size_t size)
{
    gl_sub_event(GL_API_gpuledger_region_resize, 0, (uint64_t)(uintptr_t)addr, size, 0, 0);
}

GL_EXPORT void gpuledger_region_used(const void *addr, size_t used)
{
    gl_sub_event(GL_API_gpuledger_region_used, 0, (uint64_t)(uintptr_t)addr, 0, used, GL_EVF_USED);
}

GL_EXPORT void gpuledger_region_name(const void *addr, const char *name)
{
    gl_sub_name(GL_API_gpuledger_region_name, 0, (uint64_t)(uintptr_t)addr, name);
}
