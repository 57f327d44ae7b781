/* array_size.h — how many bytes a CUDA array takes: what the driver says it
 * reserves (cuArrayGetMemoryRequirements, for the array or its
 * deferred-mapping twin), else what the array's descriptor asks for. */
#ifndef GL_ARRAY_SIZE_H
#define GL_ARRAY_SIZE_H

#include <stdint.h>

#include "cuda_extra.h"

/* Bits one element takes, from a driver format and channel count (0:
 * unknown format). */
unsigned gl_array_format_bits(CUarray_format format, unsigned channels);
/* Bits one element takes, from a runtime channel description (0: unknown). */
unsigned gl_array_channel_bits(const struct cudaChannelFormatDesc *desc);

/* Bytes asked for: width x max(height,1) x max(depth,1) elements of `bits`
 * bits, summed over `levels` mipmap levels (each halves width, height and,
 * unless layered or a cubemap, depth). flags: CUDA_ARRAY3D_* (the runtime's
 * cudaArray* flags have the same values). */
uint64_t gl_array_requested(unsigned bits, uint64_t width, uint64_t height, uint64_t depth, unsigned flags,
                            unsigned levels);

/* An array made with deferred mapping or sparse takes no memory until it
 * is mapped (through cuMemMapArrayAsync, from memory cuMemCreate made). */
int gl_array_unbacked(unsigned flags);

/* The bytes the driver reserves for an array (mipmapped: 1, with `levels`
 * levels) on `device`, the current one: cuArrayGetMemoryRequirements, which
 * CUDA answers for deferred-mapping arrays only; for any other array, its
 * answer for a deferred-mapping twin (the array's own descriptor read back,
 * CUDA_ARRAY3D_DEFERRED_MAPPING added: no memory), made and destroyed at
 * once. 0 if neither answers, or while a stream captures (capture_gate.h). */
uint64_t gl_array_reserved(uint64_t handle, int mipmapped, int device, unsigned levels);

/* What an array event records: size = the reserved bytes where the driver
 * tells, else the requested ones (0 for an array without memory yet); aux =
 * the requested bytes. */
void gl_array_fill(uint64_t handle, int mipmapped, int device, uint64_t requested, unsigned flags, unsigned levels,
                   uint64_t *size, uint64_t *aux);

#endif
