/* model_fwstats.h — what a framework's own allocator said of itself, for
 * allocators whose sub-allocations no API shows (JAX/XLA's BFC allocator
 * inside its arena): the samples the gpuledger package records as marks
 * "gpuledger.stats <framework> device=N key=value ..." at steps, marks and
 * exit (python/gpuledger/_jax.py); and the arena they describe. */
#ifndef GL_MODEL_FWSTATS_H
#define GL_MODEL_FWSTATS_H

#include <stddef.h>
#include <stdint.h>

/* The label prefix of such a mark: never a step. */
#define GL_FW_STATS_PREFIX "gpuledger.stats "

struct gl_fw_sample {
    int64_t seq, ts_ns;
    int32_t device;
    char framework[16];   /* "jax" */
    uint64_t in_use;      /* bytes_in_use */
    uint64_t peak;        /* peak_bytes_in_use (since the process began) */
    uint64_t limit;       /* bytes_limit: what the arena may hold */
    uint64_t largest;     /* largest_alloc_size */
    uint64_t allocs;      /* num_allocs */
};

struct gl_fw_device {     /* one device's samples, summed up */
    int32_t device;
    const char *framework;
    size_t n;             /* samples */
    uint64_t in_use_end;  /* at the last sample */
    uint64_t peak;        /* the highest peak_bytes_in_use */
    int64_t peak_seq;     /* the first sample that showed it */
    uint64_t limit;
    uint64_t arena;       /* bytes of its arena in the ledger (allocations flagged xla_arena), live at the end */
    size_t arena_allocs;
};

struct gl_run;
/* Read the samples into r->fw, drop their marks from r->marks, and flag
 * the arena: every CUDA allocation of a sampled device made from the
 * framework's code (a frame in a module or file named jax or xla) is an
 * allocator's reservation (GL_AF_ALLOCATOR, category xla_arena), not a
 * leak. 0, or -1 with "FILE: problem" in err. */
int gl_run_load_fw_stats(struct gl_run *r, char *err, size_t errsz);
/* Is label a framework-statistics mark? */
int gl_is_fw_stats_label(const char *label);
/* The summary of device's samples: 1 (filled), or 0 when it has none. */
int gl_fw_device(const struct gl_run *r, int device, struct gl_fw_device *out);

#endif
