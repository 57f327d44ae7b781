/* suballoc.h — recording heaps and regions of a program's own pools
 * (suballoc.c), shared by the gpuledger.h functions and the NVTX memory
 * module (nvtx_mem.c). */
#ifndef GL_SUBALLOC_H
#define GL_SUBALLOC_H

#include <stdint.h>

/* NVTX's heap usage values, stored in a heap register event's aux. */
#define GL_HEAP_USAGE_SUB_ALLOCATOR 1u
#define GL_HEAP_USAGE_LAYOUT 2u

/* One event with the caller's stack: api (an API of kind heap or region),
 * heap handle (the heap's base; 0 = process-wide), address, size, aux
 * (used bytes, page size or heap usage) and extra event flags. */
void gl_sub_event(int api, uint64_t heap, uint64_t addr, uint64_t size, uint64_t aux, unsigned flags);
/* A name for a heap or a region (the label replaces the stack). */
void gl_sub_name(int api, uint64_t heap, uint64_t addr, const char *name);

#endif
