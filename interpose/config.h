/* config.h — the GPULEDGER_* environment variables, read once at start-up.
 * A bad value never stops the host job: it is reported on stderr (one line)
 * and the default is used. The table in README.md lists every variable. */
#ifndef GL_CONFIG_H
#define GL_CONFIG_H

#include <stddef.h>

enum { GL_CUPTI_OFF = 0, GL_CUPTI_ON = 1, GL_CUPTI_AUTO = 2 };

struct gl_config {
    int enabled;          /* GPULEDGER_DISABLE=1 turns everything off */
    const char *output;   /* GPULEDGER_OUTPUT pattern, default gpuledger-%p.db */
    unsigned stack_depth; /* GPULEDGER_STACK_DEPTH, 0..256, default 48 */
    size_t queue_slots;   /* GPULEDGER_QUEUE_SLOTS, default 16384 */
    unsigned full_wait_ms;/* GPULEDGER_FULL_WAIT_MS: producer wait on a full queue, default 500 */
    unsigned commit_ms;   /* GPULEDGER_COMMIT_MS, 1..100, default 50 */
    int symbolize;        /* GPULEDGER_SYMBOLIZE, default 1 */
    int quiet;            /* GPULEDGER_QUIET=1: no informational lines */
    int cupti;            /* GPULEDGER_CUPTI: GL_CUPTI_AUTO (default), _OFF, _ON */
    int preloaded;        /* loaded through LD_PRELOAD (our symbol hooks are live) */
    int cupti_activity;   /* GPULEDGER_CUPTI_ACTIVITY: MEMORY2 records (module memory), default 0 */
    const char *cupti_lib;/* GPULEDGER_CUPTI_LIB: libcupti to load if none is loaded */
    int python;           /* GPULEDGER_PYTHON: 0 off, 1 (default) Python frames, 2 "mixed", 3 "only" */
    int free_stacks;      /* GPULEDGER_FREE_STACKS, default 1: stacks on frees/unmaps too */
    unsigned python_depth;/* GPULEDGER_PYTHON_DEPTH, 1..256, default 64 */
    int fast_unwind;      /* GPULEDGER_UNWIND: fast (1, default: unwind.c), nomemo (2: without its memo), libunwind (0) */
    const char *manifest; /* GPULEDGER_MANIFEST: file the launcher reads back */
    int clock_tsc;        /* GPULEDGER_CLOCK: auto (1, default: the TSC where it is invariant), monotonic (0) */
};

/* Parse from getenv. warn(msg) is called once per bad value. */
void gl_config_load(struct gl_config *c, void (*warn)(const char *msg));

/* Parsing helpers, exposed for the unit tests. Return 0 on success. */
int gl_parse_uint(const char *s, unsigned long lo, unsigned long hi, unsigned long *out);
int gl_parse_bool(const char *s, int *out);

#endif
