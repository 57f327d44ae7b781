/* usage.h — the process's own device-memory figure, what nvidia-smi shows
 * for it: the ledger plus "outside any allocation API" (context, module
 * images, local memory, library internals) must add up to it. Taken in an
 * application thread, so that it falls in the event order where it was
 * read: whenever the writer sees the device's ledger pass its high-water
 * mark by 2 MiB or more (at most every 10 ms per device), at a
 * gpuledger_mark (at most every 10 ms per device), and at exit. */
#ifndef GL_USAGE_H
#define GL_USAGE_H

#include <stdatomic.h>
#include <stdint.h>

/* Where the figure comes from (aux of a usage sample; the store names them). */
enum gl_usage_source {
    GL_USAGE_NVML_PROCESS = 1, /* NVML's per-process figure for this pid */
    GL_USAGE_NVML_DEVICE = 2,  /* NVML device used minus its value before the first CUDA call */
    GL_USAGE_MEMINFO = 3,      /* cuMemGetInfo device used (the writer subtracts its first value) */
};

/* Before the process's first CUDA call: load NVML (dlopen, never linked;
 * GPULEDGER_NVML=0 turns it off, GPULEDGER_NVML_LIB names the library) and
 * read each device's used memory. Idempotent. */
void gl_usage_start(void);
/* Writer: ask for a sample of `device` at the next recorded call on it. */
void gl_usage_request(int device);
/* After a recorded call on `device` (sampler.c): take the sample if asked.
 * Inline: one load and compare per call while nothing is asked. */
#define GL_USAGE_SEEN 1   /* a recorded call was made on the device */
#define GL_USAGE_WANTED 2 /* the writer asks for a sample */
extern _Atomic unsigned char gl_usage_state[64];
void gl_usage_after_call_slow(int device, uint64_t stamp);
static inline void gl_usage_after_call(int device, uint64_t stamp)
{
    if ((unsigned)device < 64 &&
        atomic_load_explicit(&gl_usage_state[device], memory_order_relaxed) != GL_USAGE_SEEN)
        gl_usage_after_call_slow(device, stamp);
}
/* At a gpuledger_mark (a step's end: what is outside the ledger, step by
 * step; at most every 10 ms per device) and at exit (before atexit handlers
 * tear CUDA down): a sample of every device a recorded call was made on. */
void gl_usage_at_mark(void);
/* GPULEDGER_MARK_SAMPLE_MS in stamp units (0: every mark samples): how
 * long after a device's sample at a mark the next mark may take another
 * (its figure here, its pools in sampler.c). */
uint64_t gl_mark_sample_span(void);
void gl_usage_at_exit(void);

#endif
