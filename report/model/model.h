/* model.h — one database loaded for analysis: the run row, every
 * allocation-like operation with its end, OOMs, marks, API counts, the
 * analyses built on them (peak per device, live set at an instant), and
 * the tables beside event_log every verb reads, loaded at once with the
 * events (model_tables.c: every stack with its frames, the meta keys, the
 * pools' reservations, the caching allocator's samples and settings, each
 * device's usage figures). The report verbs only read this; the SQL stays
 * in model/. */
#ifndef GL_MODEL_H
#define GL_MODEL_H

#include <limits.h>
#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

#include "gl_event.h"
#include "model_folded.h"
#include "strmap.h"

/* Room for a one-line error: a path or two (PATH_MAX each) and the reason
 * after them, never cut before the reason. */
#define GL_ERR_MAX (2 * PATH_MAX + 1024)

struct gl_alloc {
    int64_t seq, free_seq;  /* free_seq 0: never ended */
    int64_t alloc_ns, free_ns;
    uint64_t addr, size, pool, stream;
    int64_t stack_id;
    /* the tensor ledger (model_blocks.c): a PyTorch block's size is its
     * block bytes, requested what the tensor asked (= size for the rest) */
    uint64_t requested;
    uint64_t aux;           /* a mapping's handle */
    int64_t done_seq;       /* a block: reusable again (free_completed); 0: not */
    int64_t range_seq;      /* the annotation range it was made in (0: none) */
    int16_t device;         /* -1..GL_MAX_DEVICES-1: the load keeps no other */
    uint8_t kind, op;
    uint16_t api;
    uint8_t flags;          /* GL_AF_* */
    uint8_t cat;            /* category by identity or lifetime (categories.c, GL_CAT_*); 0: by the rules */
};
/* one record per allocation kept: 112 bytes, the load's memory at scale */
_Static_assert(sizeof(struct gl_alloc) == 112, "struct gl_alloc grew");

/* gl_alloc.flags */
#define GL_AF_ITEM 0x1u      /* a row of the ledger: listed by stack (gl_is_item) */
#define GL_AF_ALLOCATOR 0x2u /* CUDA memory of PyTorch's caching allocator (its segments) */
#define GL_AF_TAGGED 0x4u    /* cat comes from an identity tag */
#define GL_AF_CLOSURE 0x8u   /* made inside the closure of an optimizer's step(closure) */
#define GL_AF_HELD 0x10u     /* the load's own, while it scans: a freed record kept for a moment (model_moments.h) */

/* gl_alloc.cat: an identity tag's category (GL_TAG_*, below 16), or one
 * decided by lifetime (a block untagged) */
enum {
    GL_CAT_ACTIVATIONS = 16,        /* made in a forward, outliving it (freed in backward) */
    GL_CAT_TEMPORARIES,             /* made and freed within one step (or one forward) */
    GL_CAT_OPTIMIZER_TEMPORARIES,   /* made inside Optimizer.step(), not its state */
    GL_CAT_XLA_ARENA,               /* JAX/XLA's allocator's reservation (model_fwstats.c) */
    GL_CAT_PRIVATE_POOL,            /* a block of a PyTorch private pool: a CUDA graph's (graph trees,
                                       torch.compile mode="reduce-overhead") or a MemPool's */
};

struct gl_fail {            /* an OOM, other failed allocation, or a failed free */
    int64_t seq, ts_ns, stack_id;
    uint64_t size;
    uint64_t addr;          /* what a failed free was given */
    uint64_t aux;           /* PyTorch's allocator: the device's free bytes then */
    int32_t device, result;
    uint8_t op;
    uint16_t api;
    uint64_t blocks_before; /* PyTorch blocks the load kept on its device before it (gl_fail_absorbed) */
};

struct gl_point {
    int64_t seq, ts_ns;
    uint64_t live;
};

/* The process's own device memory next to the ledger's live bytes at the
 * same point (usage_samples, schema 2; model_usage.h). */
struct gl_usage_point {
    int found;
    int64_t seq, ts_ns;
    uint64_t process, ledger; /* the process's figure; the ledger then */
    int64_t from_peak_ns;     /* peak: the sample's time less the peak's (< 0: before it) */
};

struct gl_usage {
    char source[24];           /* nvml_process, nvml_device, cudaMemGetInfo; "" when never sampled */
    int unknown;               /* cudaMemGetInfo with one sample: its own baseline, nothing measured */
    struct gl_usage_point peak; /* the sample nearest the peak's time, before or after (a tie: after) */
    struct gl_usage_point end;  /* the last sample */
};

/* PyTorch's caching allocator as the recorder sampled it (allocator_samples,
 * schema 2: at most every 20 ms per device, and at every out-of-memory). */
struct gl_alloc_sample {
    int64_t seq, ts_ns;     /* as of this event */
    uint64_t reserved;      /* its segments' bytes */
    uint64_t allocated;     /* block bytes of live tensors */
    uint64_t active;        /* ... and of freed ones not yet reusable */
    uint64_t requested;     /* bytes those asked for */
    uint64_t cached_free;   /* bytes in free blocks */
    uint64_t holes;         /* free blocks */
    uint64_t largest_hole;
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
    struct gl_usage usage;     /* what no allocation API shows (zeroed: never sampled) */
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

/* What a verb asks to be loaded beyond what every verb gets: the parts
 * only some verbs read, and the events a moment names (moment.h). */
enum {
    GL_LOAD_HEAPS = 1u << 0,       /* the program's own pools (model_heaps.h) */
    GL_LOAD_BLOCK_FACTS = 1u << 1, /* each PyTorch block's bytes and reuse (model_block_facts.h) */
    GL_LOAD_MAP_DEVICES = 1u << 2, /* the device of each VMM mapping (model_vmm.h) */
    /* of the allocations only those live at the end are kept (a freed
     * one's record is reused) and frees are not kept in order: memory
     * bounded by the live set, not the events. Peaks, timelines,
     * failures, counts, skips and the links of blocks and segments are a
     * full load's; tensor peaks (gl_device.tensor_peak...) are not made;
     * the stacks are those of what was kept (gl_run_load_live_stacks).
     * For `summary`, `gate` and `leaks` without --steps or --lifetime-ms. */
    GL_LOAD_LIVE_ONLY = 1u << 3,
    /* no frames or stacks, and no allocation's stack or range read (0):
     * `summary` */
    GL_LOAD_NO_STACKS = 1u << 4,
    /* with GL_LOAD_LIVE_ONLY: the growth analysis's groups and their
     * bytes at each step end, gathered during the scan from every record
     * it gives up (model_growth.h; gl_run.growth), and the stacks of those
     * groups. Where the records given up cannot be finished as a full
     * load finishes them, the load is a full one (growth NULL). For
     * `leaks --steps`. */
    GL_LOAD_GROWTH = 1u << 5,
    /* with GL_LOAD_LIVE_ONLY: each stream-ordered pool replayed during the
     * scan for its holes (model_pool_sweep.h; gl_run.pool_replays) instead of
     * keeping its allocations' records; the records of reserved ranges,
     * mappings, heaps and regions kept whole, and of the CUDA allocation
     * each heap was registered in. Where the scan cannot replay the pools
     * as a full load would (repeated seqs, rows past the last one kept),
     * the load is a full one (pool_replays NULL). For `holes`. */
    GL_LOAD_HOLES = 1u << 6,
    /* with GL_LOAD_LIVE_ONLY: also the records live (or freed but not yet
     * reusable) at each device's peak and tensor peak, at each failed
     * call and at the last step's end — the moments the report's ledgers
     * are taken at — and each device's tensor and requested peaks, the
     * allocations each stack made (model_moments.h; gl_run.moments); the
     * growth analysis's groups gathered as for GL_LOAD_GROWTH where the
     * run has steps (the report's trend). Where the scan cannot match a
     * full load, the load is a full one (moments NULL). For `report`. */
    GL_LOAD_MOMENTS = 1u << 7,
};
/* An event look-up: the time of event #arg (GL_LOOKUP_EVENT), or the last
 * event stamped at or before arg ns after the run's first event, and its
 * time (GL_LOOKUP_BEFORE). Every row of event_log counts, also one the
 * load skipped for breaking an invariant. */
enum gl_lookup_kind { GL_LOOKUP_EVENT, GL_LOOKUP_BEFORE };
struct gl_lookup {
    enum gl_lookup_kind kind;
    int64_t arg;
    int64_t at_ns;  /* BEFORE: first_ns + arg */
    int64_t seq;    /* the event (0: none) */
    int has_ts;     /* the event exists and ts_ns is its time */
    int64_t ts_ns;
};
#define GL_MAX_LOOKUPS 4
struct gl_load {
    unsigned parts; /* GL_LOAD_* */
    struct gl_lookup lookups[GL_MAX_LOOKUPS];
    size_t nlookups;
};

struct gl_run {
    char path[PATH_MAX];
    sqlite3 *db;
    int64_t pid, ppid, exit_code, exit_signal, start_ns, end_ns;
    int has_exit_code, has_exit_signal, has_end;
    int unfinished;          /* no end in the run row: the process was killed, its disk filled, or it still
                                runs; what is live at the end of the recording is not known to be never freed */
    int64_t event_count;     /* rows of event_log read and kept */
    int64_t last_seq;        /* the highest seq kept */
    int64_t dropped, truncated, unmatched;
    int64_t skipped[GL_SKIP_COUNT], skipped_first_seq[GL_SKIP_COUNT], nskipped;
    char host[256], rank[32], cmdline[1024], version[32];
    struct gl_alloc *allocs; /* in seq order */
    size_t nallocs;
    size_t allocs_made;      /* allocations the scan kept (a live-only load keeps the records of fewer) */
    uint32_t *free_order;    /* indices into allocs in the order of their frees (free_seq rising);
                                NULL where seqs repeat or an index would not fit */
    size_t nfree_order;
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
    struct gl_fw_sample *fw; /* a framework's own allocator statistics (model_fwstats.h), in seq order */
    size_t nfw;
    struct gl_device devs[GL_MAX_DEVICES];
    int ndevs;
    int64_t first_ns, last_ns;
    /* the tables beside event_log (model_tables.c) */
    struct gl_stack *stacks;   /* every stack with its frames, by id */
    size_t nstacks;
    struct gl_frame *frames;   /* the frames table, in id order (model_tables.c) */
    size_t nframes;
    struct gl_strmap frame_strings; /* the frames' strings, each once */
    uint32_t *stack_entries;   /* every stack's entries (indices into frames), the stacks' in turn */
    struct gl_meta *meta;
    size_t nmeta;
    struct gl_pool_reserved *pools; /* each pool's highest sampled reservation */
    size_t npools;
    struct gl_device_sample *samples; /* the caching allocator's, by device then seq */
    size_t nsamples;
    struct gl_free_sample *free_samples; /* device_samples' free bytes, by device then time */
    size_t nfree_samples;
    int allocator_expandable; /* it used expandable segments (its settings' row) */
    struct gl_annots *annots; /* marks and ranges (model_annot.h) */
    struct gl_folded folded;  /* a bounded recording's figures (model_folded.h) */
    struct gl_retention_path *retention; /* what keeps memory alive (model_retention.h) */
    size_t n_retention;
    struct gl_retention_links *retention_links; /* while the load links them (model_retention.c) */
    /* what the verb asked for beyond that (struct gl_load) */
    struct gl_lookup lookups[GL_MAX_LOOKUPS];
    size_t nlookups;
    unsigned loaded;          /* GL_LOAD_* parts read */
    int live_only;            /* GL_LOAD_LIVE_ONLY: allocs[] holds the allocations live at the end */
    int64_t heap_rows;        /* rows of kind heap or region the scan saw, skipped or not */
    int no_stacks;            /* GL_LOAD_NO_STACKS: stacks[] and frames[] empty */
    struct gl_heaps *heaps;   /* GL_LOAD_HEAPS (model_heaps.h) */
    char heaps_err[1200];     /* ... or why they could not be read */
    struct gl_block_fact *block_facts; /* GL_LOAD_BLOCK_FACTS, by allocation index */
    struct gl_map_dev *map_devs; /* GL_LOAD_MAP_DEVICES: each mapping's device + 1 */
    size_t nmap_devs;
    struct gl_growth_in *growth; /* GL_LOAD_GROWTH (model_growth.h), NULL in a full load */
    struct gl_pools_in *pool_replays; /* GL_LOAD_HOLES (model_pool_sweep.h), NULL in a full load */
    struct gl_moments *moments; /* GL_LOAD_MOMENTS (model_moments.h), NULL in a full load */
};

struct gl_meta {
    char *key, *value;
};

struct gl_pool_reserved {
    int64_t device, pool, reserved;
};

struct gl_free_sample {
    int64_t device, ts_ns;
    uint64_t free_bytes;  /* 0 and has_free 0: the row had none */
    uint64_t total_bytes; /* the device's size, as cudaMemGetInfo said it */
    int has_free;
};

struct gl_device_sample {
    int64_t device;
    struct gl_alloc_sample s;
};

struct gl_map_dev {
    uint64_t seq, dev;
};

/* Where steps come from (gl_run.steps_from). */
enum { GL_STEPS_NONE, GL_STEPS_MARKS, GL_STEPS_OPTIMIZER };
/* The label of the mark the gpuledger package puts after each
 * Optimizer.step(), followed by its number. */
#define GL_OPTIMIZER_STEP_MARK "optimizer step "

/* Open and load, the tables beside event_log too. On error returns NULL
 * with "FILE: problem" in err. */
struct gl_fw_sample;
struct gl_run *gl_run_load(const char *path, char *err, size_t errsz);
/* The same, and what `what` asks (NULL: nothing more). */
struct gl_run *gl_run_load_with(const char *path, const struct gl_load *what, char *err, size_t errsz);
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
/* The annotations into r->annots (model_annot.h). 0, or -1 with err. */
int gl_run_read_annots(struct gl_run *r, char *err, size_t errsz);
/* r->steps from the annotations, else the marks the scan kept (r->marks);
 * made again when called again. 0, or -1 out of memory. */
struct gl_annots;
int gl_run_set_steps(struct gl_run *r, const struct gl_annots *an);
/* A record's category by lifetime and whether it is a row of the ledger
 * (GL_AF_ITEM), as the load finishes every record; blocks: its device has
 * PyTorch's caching allocator. */
void gl_block_finish(const struct gl_run *r, const struct gl_annots *an, struct gl_alloc *a, int blocks);
/* The step event seq falls in (model_blocks.c): how many of r->steps
 * come before it (0 .. nsteps; a binary search). */
size_t gl_run_step_of(const struct gl_run *r, int64_t seq);
/* How many of n rising seqs come before seq: the index of the first at or
 * after it (n: none). */
size_t gl_seqs_before(const int64_t *seqs, size_t n, int64_t seq);
/* The tables beside event_log, each in one statement (model_tables.c), and
 * each device's usage figures. 0, or -1 with "FILE: problem" in err. */
int gl_run_load_tables(struct gl_run *r, char *err, size_t errsz);
/* A live-only load's stacks, read last: those its allocations, failures
 * and heaps name, with only their frames (model_tables.c). 0, or -1 out
 * of memory. */
int gl_run_load_live_stacks(struct gl_run *r);
void gl_run_free_tables(struct gl_run *r);

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

/* Answered from what the load read (model_query.c). */
struct gl_frame;
struct gl_stack;
struct gl_u64map;
struct gl_annots;
struct gl_heaps;
struct gl_block_fact;
/* Stack id with its frames, innermost first (NULL: no such stack). */
const struct gl_stack *gl_run_stack(const struct gl_run *r, int64_t id);
/* A meta value into buf: 0, or -1 when the key is absent. */
int gl_run_meta(struct gl_run *r, const char *key, char *buf, size_t sz);
/* Put the id of every stack holding a Python frame into out. */
void gl_run_python_stacks(struct gl_run *r, struct gl_u64map *out);
/* The highest reservation pool reported on device (pool_samples; pool 0:
 * any pool of the device), 0 if none. */
uint64_t gl_run_pool_reserved(struct gl_run *r, uint64_t pool, int device);
/* The last device_samples row of `device` at or before ts_ns (cudaMemGetInfo's
 * free bytes, and when): 1, or 0 when there is none (or no such table). */
int gl_run_device_sample(struct gl_run *r, int device, int64_t ts_ns, uint64_t *free_bytes, int64_t *at_ns);
/* The allocation made by event seq (allocs are in seq order), or NULL. */
const struct gl_alloc *gl_run_alloc_by_seq(const struct gl_run *r, int64_t seq);

#endif
