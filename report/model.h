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
    uint64_t addr, size, pool;
    int64_t stack_id;
    int32_t device;
    uint8_t kind, op;
    uint16_t api;
};

struct gl_fail {            /* an OOM or other failed allocation */
    int64_t seq, ts_ns, stack_id;
    uint64_t size;
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
    struct gl_point *timeline; /* downsampled, each bucket's maximum */
    size_t ntimeline;
};

struct gl_run {
    char path[1024];
    sqlite3 *db;
    int64_t pid, ppid, exit_code, exit_signal, start_ns, end_ns;
    int has_exit_code, has_exit_signal, has_end;
    int64_t event_count, dropped, truncated, unmatched;
    char host[256], rank[32], cmdline[1024], version[32];
    struct gl_alloc *allocs; /* in seq order */
    size_t nallocs;
    struct gl_fail *fails;
    size_t nfails;
    int64_t api_count[GL_API_COUNT];
    int64_t *marks;          /* seqs of gpuledger_mark events, in order */
    size_t nmarks;
    struct gl_device devs[GL_MAX_DEVICES];
    int ndevs;
    int64_t first_ns, last_ns;
};

/* Open and load. On error returns NULL with "FILE: problem" in err. */
struct gl_run *gl_run_load(const char *path, char *err, size_t errsz);
void gl_run_free(struct gl_run *r);

/* Is allocation a live at sequence point seq (after event seq applied)? */
static inline int gl_live_at(const struct gl_alloc *a, int64_t seq)
{
    return a->seq <= seq && (a->free_seq == 0 || a->free_seq > seq);
}
struct gl_device *gl_run_device(struct gl_run *r, int device);

#endif
