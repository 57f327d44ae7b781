/* config.h — the GPULEDGER_* environment variables, read once at start-up
 * from one table (config.c: name, type, bounds, default, field, help; the
 * README's variable table is checked against it by tests/unit/test_config.c).
 * A bad value never stops the host job: it is reported on stderr (one line)
 * and the default is used. */
#ifndef GL_CONFIG_H
#define GL_CONFIG_H

#include <stddef.h>

#include "meta.h"

enum { GL_CUPTI_OFF = 0, GL_CUPTI_ON = 1, GL_CUPTI_AUTO = 2 };
enum { GL_PYTHON_OFF = 0, GL_PYTHON_ON = 1, GL_PYTHON_MIXED = 2, GL_PYTHON_ONLY = 3 };
enum { GL_UNWIND_LIBUNWIND = 0, GL_UNWIND_FAST = 1, GL_UNWIND_NOMEMO = 2 };
/* GPULEDGER_FREE_STACKS: which frees carry a stack (an allocation always has
 * one, and it is the one the report uses) */
enum { GL_FREE_STACKS_NONE = 0, GL_FREE_STACKS_ALL = 1, GL_FREE_STACKS_AUTO = 2 /* all but PyTorch blocks' */ };

struct gl_config {
    int disable;           /* GPULEDGER_DISABLE=1 turns everything off */
    const char *output;    /* GPULEDGER_OUTPUT pattern */
    unsigned stack_depth;  /* GPULEDGER_STACK_DEPTH: native frames per stack */
    unsigned queue_slots;  /* GPULEDGER_QUEUE_SLOTS: ring size */
    unsigned full_wait_ms; /* GPULEDGER_FULL_WAIT_MS: producer wait on a full ring */
    unsigned commit_ms;    /* GPULEDGER_COMMIT_MS: longest time between commits */
    unsigned mark_sample_ms; /* GPULEDGER_MARK_SAMPLE_MS: shortest time between a device's samples at marks */
    int symbolize;         /* GPULEDGER_SYMBOLIZE */
    int quiet;             /* GPULEDGER_QUIET: no informational lines */
    int cupti;             /* GPULEDGER_CUPTI: GL_CUPTI_* */
    int cupti_activity;    /* GPULEDGER_CUPTI_ACTIVITY: MEMORY2 records (module memory) */
    const char *cupti_lib; /* GPULEDGER_CUPTI_LIB: libcupti to load if none is loaded */
    int python;            /* GPULEDGER_PYTHON: GL_PYTHON_* */
    unsigned python_depth; /* GPULEDGER_PYTHON_DEPTH: Python frames per stack */
    unsigned torch_native_depth; /* GPULEDGER_TORCH_NATIVE_DEPTH: native frames above them in a block's stack */
    int free_stacks;       /* GPULEDGER_FREE_STACKS: GL_FREE_STACKS_* */
    int unwind;            /* GPULEDGER_UNWIND: GL_UNWIND_* */
    int clock_tsc;         /* GPULEDGER_CLOCK: 1 auto (the TSC where invariant), 0 monotonic */
    int nvml;              /* GPULEDGER_NVML: the process's own figure from NVML (usage.c) */
    const char *nvml_lib;  /* GPULEDGER_NVML_LIB: the libnvidia-ml to load */
    unsigned long long budget; /* GPULEDGER_BUDGET: the database's size limit in bytes (0: none; docs/bounded-recording.md) */
    int pack;              /* GPULEDGER_PACK: a packed recording (schema 6, store/pack.h) */
    const char *manifest;  /* GPULEDGER_MANIFEST: "@name", the launcher's socket (launcher_link.h) */
    int preloaded;         /* not a variable: loaded through LD_PRELOAD (our symbol hooks are live) */
};

/* GL_CFG_ELSEWHERE: a variable another part of gpuledger reads (the
 * launcher, the Python package), listed here so that the README's table,
 * the man page and this table are one list; the library ignores it. */
enum gl_config_type { GL_CFG_BOOL, GL_CFG_UINT, GL_CFG_ENUM, GL_CFG_STRING, GL_CFG_SIZE, GL_CFG_ELSEWHERE };

struct gl_config_word {
    const char *word; /* matched without regard to case */
    int value;
};

/* One variable. */
struct gl_config_var {
    const char *name;                   /* GPULEDGER_... */
    enum gl_config_type type;
    size_t offset;                      /* of its field in struct gl_config */
    unsigned long def, lo, hi;          /* BOOL, UINT, ENUM: default value; UINT: bounds */
    const char *shown;                  /* the default as the README shows it; STRING: the default */
    const struct gl_config_word *words; /* ENUM: the words it takes ({NULL} ends) */
    const char *expect;                 /* ENUM: the words as a bad value's warning lists them */
    const char *help;                   /* one line; NULL: internal (set by the launcher) */
    const char *reader;                 /* ELSEWHERE: what reads it ("gpuledger run") */
};

extern const struct gl_config_var gl_config_vars[];
extern const size_t gl_config_nvars;

/* Defaults, then every variable from getenv. warn(msg) is called once per
 * bad value. */
void gl_config_load(struct gl_config *c, void (*warn)(const char *msg));

/* meta full_wait_ms and commit_ms: the settings that shape what a run
 * loses or when it commits. */
void gl_config_meta(const struct gl_config *c, gl_meta_put put, void *ctx);

/* Parsing helpers, exposed for the unit tests. Return 0 on success. */
int gl_parse_uint(const char *s, unsigned long lo, unsigned long hi, unsigned long *out);
int gl_parse_bool(const char *s, int *out);
/* A size: digits, an optional fraction, an optional binary unit K, M, G, T
 * (powers of 1024; "KiB"/"KB"/"k" alike), e.g. 512M, 1G, 2GiB, 1.5G; 0 or
 * -1 for anything else or past 2^63. The one parser of sizes: the report's
 * options (report/render/out.h) and GPULEDGER_BUDGET. */
int gl_parse_size(const char *s, unsigned long long *out);
/* The smallest budget a recording takes (a smaller non-zero one is refused). */
#define GL_BUDGET_MIN (1ULL << 20)

#endif
