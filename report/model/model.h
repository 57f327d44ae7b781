/* model.h — one database loaded for analysis: the run row, every
 * allocation-like operation with its end, OOMs, marks, API counts, and the
 * analyses built on them (peak per device, live set at an instant). The
 * report verbs only read this; the SQL stays in model.c and frames.c. */
#ifndef GL_MODEL_H
#define GL_MODEL_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

#include "gl_event.h"

struct gl_alloc {
    int64_t seq, free_seq;  /* free_seq 0: never ended */
    int64_t alloc_ns, free_ns;
    uint64_t addr, size, pool, stream;
    int64_t stack_id;
    int32_t device;
    uint8_t kind, op;
    uint16_t api;
    /* the tensor ledger (model_blocks.c): a PyTorch block's size is its
     * block bytes, requested what the tensor asked (= size for the rest) */
    uint64_t requested;
    uint64_t aux;           /* a mapping's handle */
    int64_t done_seq;       /* a block: reusable again (free_completed); 0: not */
    int64_t range_seq;      /* the annotation range it was made in (0: none) */
    uint8_t flags;          /* GL_AF_* */
    uint8_t cat;            /* category by identity or lifetime (categories.c, GL_CAT_*); 0: by the rules */
};

/* gl_alloc.flags */
#define GL_AF_ITEM 0x1u      /* a row of the ledger: listed by stack (gl_is_item) */
#define GL_AF_ALLOCATOR 0x2u /* CUDA memory of PyTorch's caching allocator (its segments) */
#define GL_AF_TAGGED 0x4u    /* cat comes from an identity tag */

/* gl_alloc.cat: an identity tag's category (GL_TAG_*, below 16), or one
 * decided by lifetime (a block untagged) */
enum {
    GL_CAT_ACTIVATIONS = 16,        /* made in a forward, outliving it (freed in backward) */
    GL_CAT_TEMPORARIES,             /* made and freed within one step (or one forward) */
    GL_CAT_OPTIMIZER_TEMPORARIES,   /* made inside Optimizer.step(), not its state */
};

struct gl_fail {            /* an OOM or other failed allocation */
    int64_t seq, ts_ns, stack_id;
    uint64_t size;
    uint64_t aux;           /* PyTorch's allocator: the device's free bytes then */
    int32_t device, result;
    uint8_t op;
    uint16_t api;
};

struct gl_point {
    int64_t seq, ts_ns;
    uint64_t live;
};

struct gl_device {
    int device;
    uint64_t peak, live_end;
    int64_t peak_seq, peak_ns;
    /* PyTorch's caching allocator on this device (model_blocks.c): its
     * blocks are the ledger's tensors, its segments' CUDA memory is those
     * tensors plus its cache */
    int blocks;
    uint64_t tensor_peak;           /* block bytes of live tensors (max_memory_allocated) */
    int64_t tensor_peak_seq, tensor_peak_ns;
    uint64_t requested_peak;        /* requested bytes, allocation to reuse (requested_bytes.all.peak) */
    uint64_t reserved_peak;         /* its segments' bytes (max_memory_reserved), as the recorder replayed it */
    struct gl_point *timeline; /* downsampled, each bucket's maximum */
    size_t ntimeline;
};

/* Rows of event_log that break an invariant no recorder writes: skipped
 * (they never reach the ledger), counted, and named by gl_print_skipped. */
#define GL_SKIPS(X)                                                                                 \
    X(SEQ, "seq outside 1..2^62")                                                                 \
    X(SIZE, "size < 0, >= 2^62 or past the end of the address space")                            \
    X(LIVE, "live device bytes would reach 2^62")                                                 \
    X(DEVICE, "device outside -1..63")                                                            \
    X(FREE_EARLY, "a free before its allocation")                                                 \
    X(FREE_NOTHING, "a free of no recorded allocation")                                           \
    X(FREE_TWICE, "a second free of one allocation")                                              \
    X(TIME_BACK, "time going backwards in its thread by over 1 s")                                            \
    X(TIME_OUT, "time outside the run")                                                           \
    X(RUN_END, "the run row ends before it starts (its end is ignored)")

enum gl_skip {
#define GL_X(name, text) GL_SKIP_##name,
    GL_SKIPS(GL_X)
#undef GL_X
    GL_SKIP_COUNT
};
const char *gl_skip_reason(enum gl_skip k);

struct gl_run {
    char path[1024];
    sqlite3 *db;
    int64_t pid, ppid, exit_code, exit_signal, start_ns, end_ns;
    int has_exit_code, has_exit_signal, has_end;
    int64_t event_count;     /* rows of event_log read and kept */
    int64_t last_seq;        /* the highest seq kept */
    int64_t dropped, truncated, unmatched;
    int64_t skipped[GL_SKIP_COUNT], skipped_first_seq[GL_SKIP_COUNT], nskipped;
    char host[256], rank[32], cmdline[1024], version[32];
    struct gl_alloc *allocs; /* in seq order */
    size_t nallocs;
    struct gl_fail *fails;
    size_t nfails;
    int64_t api_count[GL_API_COUNT];
    int64_t *marks;          /* seqs of the marks that end steps, in order: the optimizer's
                                ("optimizer step N", from the Python package's hook) when
                                there are two or more, else every gpuledger_mark */
    size_t nmarks;
    int optimizer_steps;     /* marks are the optimizer's */
    int64_t *steps;          /* where steps end (model_blocks.c: the optimizer's marks, else the program's) */
    size_t nsteps;
    int steps_from;          /* GL_STEPS_* */
    int has_blocks;          /* some device has PyTorch allocator blocks */
    struct gl_device devs[GL_MAX_DEVICES];
    int ndevs;
    int64_t first_ns, last_ns;
    struct gl_retention_path *retention; /* what keeps memory alive (model_retention.h) */
    size_t n_retention;
};

/* Where steps come from (gl_run.steps_from). */
enum { GL_STEPS_NONE, GL_STEPS_MARKS, GL_STEPS_OPTIMIZER };
/* The label of the mark the gpuledger package puts after each
 * Optimizer.step(), followed by its number. */
#define GL_OPTIMIZER_STEP_MARK "optimizer step "

/* Open and load. On error returns NULL with "FILE: problem" in err. */
struct gl_run *gl_run_load(const char *path, char *err, size_t errsz);
void gl_run_free(struct gl_run *r);

/* A row of the ledger: CUDA memory (gl_kind_counts_on_device), except, on
 * a device with PyTorch's caching allocator, its segments (their tensors
 * are the rows, and what they hold besides is its cache). */
/* t - t0 in ns, held at the int64 limits (a hostile or damaged database can
 * hold any time stamp; the difference must not overflow) */
static inline int64_t gl_ns_since(int64_t t, int64_t t0)
{
    int64_t d;
    if (__builtin_sub_overflow(t, t0, &d))
        return t < t0 ? INT64_MIN : INT64_MAX;
    return d;
}

static inline int gl_is_item(const struct gl_alloc *a)
{
    return (a->flags & GL_AF_ITEM) != 0;
}

/* The tensor ledger's links (model_blocks.c, at load): which CUDA memory
 * is the caching allocator's, each block's category by lifetime, the
 * steps, the tensor peak, gl_is_item. 0, or -1 with "FILE: problem". */
int gl_run_link_blocks(struct gl_run *r, char *err, size_t errsz);

/* Is allocation a live at sequence point seq (after event seq applied)? */
static inline int gl_live_at(const struct gl_alloc *a, int64_t seq)
{
    return a->seq <= seq && (a->free_seq == 0 || a->free_seq > seq);
}

/* Is block a freed at seq but not reusable yet: completed later, or never
 * within the recording (e.g. a record_stream's stream still busy at exit)? */
static inline int gl_pending_at(const struct gl_alloc *a, int64_t seq)
{
    return a->kind == GL_KIND_BLOCK && a->free_seq && a->free_seq <= seq && (!a->done_seq || a->done_seq > seq);
}
struct gl_device *gl_run_device(struct gl_run *r, int device);

/* Asked of the database on demand (model_query.c). */
struct gl_frame;
struct gl_u64map;
/* The frames of stack id, innermost first (malloc'ed, *n of them). */
int gl_run_stack_frames(struct gl_run *r, int64_t id, struct gl_frame **frames, int *n);
/* A meta value into buf: 0, or -1 when the key is absent. */
int gl_run_meta(struct gl_run *r, const char *key, char *buf, size_t sz);
/* Put the id of every stack holding a Python frame into out. */
void gl_run_python_stacks(struct gl_run *r, struct gl_u64map *out);
/* The highest reservation pool reported on device (pool_samples; pool 0:
 * any pool of the device), 0 if none. */
uint64_t gl_run_pool_reserved(struct gl_run *r, uint64_t pool, int device);
/* The allocation made by event seq (allocs are in seq order), or NULL. */
const struct gl_alloc *gl_run_alloc_by_seq(const struct gl_run *r, int64_t seq);

#endif
