/* config.c — the GPULEDGER_* variables as one table (see config.h), read
 * and validated by one loop. A row is one variable: adding one is a row
 * here, a field in struct gl_config and a row in the README's table. */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const struct gl_config_word cupti_words[] = {
    {"auto", GL_CUPTI_AUTO}, {"1", 1}, {"yes", 1},  {"true", 1},  {"on", 1},
    {"0", 0},                {"no", 0}, {"false", 0}, {"off", 0}, {NULL, 0}};
static const struct gl_config_word python_words[] = {
    {"mixed", GL_PYTHON_MIXED}, {"only", GL_PYTHON_ONLY}, {"1", 1},  {"yes", 1},  {"true", 1}, {"on", 1},
    {"0", 0},                   {"no", 0},                {"false", 0}, {"off", 0}, {NULL, 0}};
static const struct gl_config_word unwind_words[] = {
    {"", GL_UNWIND_FAST}, {"fast", GL_UNWIND_FAST}, {"nomemo", GL_UNWIND_NOMEMO}, {"libunwind", GL_UNWIND_LIBUNWIND},
    {NULL, 0}};
static const struct gl_config_word free_stacks_words[] = {
    {"auto", GL_FREE_STACKS_AUTO}, {"1", GL_FREE_STACKS_ALL},  {"yes", GL_FREE_STACKS_ALL}, {"true", GL_FREE_STACKS_ALL},
    {"on", GL_FREE_STACKS_ALL},    {"all", GL_FREE_STACKS_ALL}, {"0", GL_FREE_STACKS_NONE}, {"no", GL_FREE_STACKS_NONE},
    {"false", GL_FREE_STACKS_NONE}, {"off", GL_FREE_STACKS_NONE}, {NULL, 0}};
static const struct gl_config_word clock_words[] = {{"", 1}, {"auto", 1}, {"tsc", 1}, {"monotonic", 0}, {NULL, 0}};

#define F(field) offsetof(struct gl_config, field)
#define BOOL(name, field, def, help)                                                                              \
    {"GPULEDGER_" name, GL_CFG_BOOL, F(field), def, 0, 1, #def, NULL, NULL, help, NULL}
#define UINT(name, field, def, lo, hi, help)                                                                      \
    {"GPULEDGER_" name, GL_CFG_UINT, F(field), def, lo, hi, #def, NULL, NULL, help, NULL}
#define ENUM(name, field, def, shown, words, expect, help)                                                        \
    {"GPULEDGER_" name, GL_CFG_ENUM, F(field), def, 0, 0, shown, words, expect, help, NULL}
#define STRING(name, field, def, help)                                                                            \
    {"GPULEDGER_" name, GL_CFG_STRING, F(field), 0, 0, 0, def, NULL, NULL, help, NULL}
#define SIZE(name, field, help)                                                                                   \
    {"GPULEDGER_" name, GL_CFG_SIZE, F(field), 0, GL_BUDGET_MIN, 0, "0", NULL, NULL, help, NULL}
#define ELSEWHERE(name, shown, reader, help)                                                                      \
    {"GPULEDGER_" name, GL_CFG_ELSEWHERE, 0, 0, 0, 0, shown, NULL, NULL, help, reader}

const struct gl_config_var gl_config_vars[] = {
    STRING("OUTPUT", output, "gpuledger-%p.db", "output pattern: %p pid, %h host, %r rank"),
    UINT("STACK_DEPTH", stack_depth, 48, 0, 256, "native frames per stack"),
    UINT("QUEUE_SLOTS", queue_slots, 16384, 64, 1UL << 24, "events the ring holds"),
    UINT("FULL_WAIT_MS", full_wait_ms, 500, 0, 60000, "how long a thread waits for room in a full ring"),
    UINT("COMMIT_MS", commit_ms, 50, 1, 100, "the longest time between commits"),
    UINT("MARK_SAMPLE_MS", mark_sample_ms, 10, 0, 60000,
         "the shortest time between two samples of a device at marks (0: at every mark)"),
    BOOL("SYMBOLIZE", symbolize, 1, "0: addresses and modules only, no function names"),
    BOOL("DISABLE", disable, 0, "1: load but record nothing"),
    ENUM("CUPTI", cupti, GL_CUPTI_AUTO, "auto", cupti_words, "auto/0/1/yes/no/on/off",
         "CUPTI callbacks: auto, 1 always, 0 never"),
    BOOL("CUPTI_ACTIVITY", cupti_activity, 0, "1: CUPTI records of module (static) memory"),
    STRING("CUPTI_LIB", cupti_lib, NULL, "the libcupti to load when none is loaded"),
    ENUM("PYTHON", python, GL_PYTHON_ON, "1", python_words, "0/1/mixed/only",
         "Python frames: 1, mixed, only, 0"),
    UINT("PYTHON_DEPTH", python_depth, 64, 1, 256, "Python frames per stack"),
    UINT("TORCH_NATIVE_DEPTH", torch_native_depth, 8, 0, 256,
         "native frames above the Python ones in a PyTorch block's stack (0: Python frames alone)"),
    ENUM("FREE_STACKS", free_stacks, GL_FREE_STACKS_AUTO, "auto", free_stacks_words, "auto/0/1/all/yes/no/on/off",
         "stacks of frees: auto (not PyTorch blocks'), 1 all, 0 none"),
    ENUM("UNWIND", unwind, GL_UNWIND_FAST, "fast", unwind_words, "fast/nomemo/libunwind",
         "native stack walking: fast, nomemo, libunwind"),
    ENUM("CLOCK", clock_tsc, 1, "auto", clock_words, "auto/tsc/monotonic", "time stamps: auto (TSC), monotonic"),
    BOOL("NVML", nvml, 1, "0: never load NVML (the process's own figure from cuMemGetInfo)"),
    STRING("NVML_LIB", nvml_lib, "libnvidia-ml.so.1", "the NVML library to load"),
    BOOL("QUIET", quiet, 0,
         "1: no informational lines ('wrote DB', a database written under another name, the PyTorch shim's "
         "build); errors still print; gpuledger run -q sets it"),
    SIZE("BUDGET", budget,
         "keep the database under this size (e.g. 1G; 0: no limit): docs/bounded-recording.md"),
    BOOL("PACK", pack, 0,
         "1: pack the events' rows many to an SQLite row (schema 6: ~3x smaller, 3.5-4.6x less writer CPU; read with "
         "gpuledger, or SQL after .load libgpuledger_sql): docs/schema.md"),
    STRING("MANIFEST", manifest, NULL, NULL),
    ELSEWHERE("LIB", NULL, "gpuledger run", "path of libgpuledger.so if it is not where gpuledger was installed"),
    ELSEWHERE("TORCH", "blocks", "the Python package; gpuledger run --torch sets it",
              "PyTorch's allocator: blocks (the tensor ledger), segments or tensors"),
    ELSEWHERE("TORCH_HOOKS", "1", "the Python package",
              "0: no identity hooks (no tags, no steps from the optimizer)"),
    ELSEWHERE("RETENTION", "1", "the Python package",
              "0: no search for what keeps memory alive; OOM_MS,STEP_MS: its time bounds (1000,50)"),
    ELSEWHERE("TORCH_SHIM", NULL, "the Python package", "path of a shim built elsewhere, used as it is"),
    ELSEWHERE("CACHE_DIR", "${XDG_CACHE_HOME:-~/.cache}/gpuledger", "the Python package",
              "where the PyTorch shims are built and kept"),
    ELSEWHERE("PYTHONPATH", NULL, "gpuledger run", "the directory holding the gpuledger Python package"),
};
const size_t gl_config_nvars = sizeof gl_config_vars / sizeof gl_config_vars[0];

int gl_parse_uint(const char *s, unsigned long lo, unsigned long hi, unsigned long *out)
{
    if (!s || !*s)
        return -1;
    char *end = NULL;
    errno = 0;
    unsigned long v = strtoul(s, &end, 10);
    if (errno || *end || s[0] == '-' || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

int gl_parse_bool(const char *s, int *out)
{
    static const char *const yes[] = {"1", "yes", "true", "on"};
    static const char *const no[] = {"0", "no", "false", "off"};
    if (!s)
        return -1;
    for (size_t i = 0; i < 4; i++) {
        if (!strcasecmp(s, yes[i])) {
            *out = 1;
            return 0;
        }
        if (!strcasecmp(s, no[i])) {
            *out = 0;
            return 0;
        }
    }
    return -1;
}

int gl_parse_size(const char *s, unsigned long long *out)
{
    /* digits, an optional fraction, an optional binary unit (spaces
     * around it, as the pytest plugin takes "2 MiB"): no sign, exponent,
     * hex, nan or inf; below 2^63, taken exactly */
    const char *p = s;
    while (*p == ' ' || *p == '\t')
        p++;
    unsigned long long whole = 0;
    int digits = 0;
    for (; *p >= '0' && *p <= '9'; p++, digits++) {
        if (whole > (ULLONG_MAX - 9) / 10)
            return -1;
        whole = whole * 10 + (unsigned)(*p - '0');
    }
    double frac = 0, scale = 1;
    if (*p == '.')
        for (p++; *p >= '0' && *p <= '9'; p++, digits++)
            if (scale < 1e15) { /* further digits are below a byte */
                frac = frac * 10 + (*p - '0');
                scale *= 10;
            }
    if (!digits)
        return -1;
    while (*p == ' ' || *p == '\t')
        p++;
    static const char units[] = "KMGT";
    int c = *p & ~0x20; /* upper case */
    const char *u = c ? strchr(units, c) : NULL;
    int shift = u ? 10 * (int)(u - units + 1) : 0;
    if (u)
        p++;
    if (*p == 'i' || *p == 'B')
        p++;
    if (*p == 'B')
        p++;
    while (*p == ' ' || *p == '\t')
        p++;
    if (*p || whole >= (1ULL << 63) >> shift)
        return -1;
    unsigned long long v = (whole << shift) + (unsigned long long)(frac / scale * (double)(1ULL << shift) + 0.5);
    if (v >= 1ULL << 63)
        return -1;
    *out = v;
    return 0;
}

static int parse_word(const struct gl_config_word *w, const char *s, int *out)
{
    for (; w->word; w++)
        if (!strcasecmp(s, w->word)) {
            *out = w->value;
            return 0;
        }
    return -1;
}

/* Set v's field of c to value s (NULL: the default). 0, or -1 with the
 * default kept and the warning in msg. */
static int set(struct gl_config *c, const struct gl_config_var *v, const char *s, char *msg, size_t msgsz)
{
    char *field = (char *)c + v->offset;
    unsigned long u = v->def;
    int i = (int)v->def;
    switch (v->type) {
    case GL_CFG_ELSEWHERE:
        return 0;
    case GL_CFG_STRING:
        *(const char **)(void *)field = s && *s ? s : v->shown;
        return 0;
    case GL_CFG_UINT:
        *(unsigned *)(void *)field = (unsigned)v->def;
        if (s && gl_parse_uint(s, v->lo, v->hi, &u) != 0) {
            snprintf(msg, msgsz, "%s='%s' is not a whole number in %lu..%lu; using %lu", v->name, s, v->lo, v->hi,
                     v->def);
            return -1;
        }
        *(unsigned *)(void *)field = (unsigned)u;
        return 0;
    case GL_CFG_SIZE: {
        unsigned long long z = 0;
        *(unsigned long long *)(void *)field = 0;
        if (s && *s && (gl_parse_size(s, &z) != 0 || (z && z < v->lo))) {
            snprintf(msg, msgsz, "%s='%s' is not a size of at least 1M (e.g. 512M, 1G, 2GiB; 0: none); recording without a budget",
                     v->name, s);
            return -1;
        }
        *(unsigned long long *)(void *)field = z;
        return 0;
    }
    case GL_CFG_BOOL:
        *(int *)(void *)field = i;
        if (s && gl_parse_bool(s, &i) != 0) {
            snprintf(msg, msgsz, "%s='%s' is not 0/1/yes/no/true/false/on/off; using %lu", v->name, s, v->def);
            return -1;
        }
        *(int *)(void *)field = i;
        return 0;
    case GL_CFG_ENUM:
        *(int *)(void *)field = i;
        if (s && parse_word(v->words, s, &i) != 0) {
            snprintf(msg, msgsz, "%s='%s' is not %s; using %s", v->name, s, v->expect, v->shown);
            return -1;
        }
        *(int *)(void *)field = i;
        return 0;
    }
    return 0;
}

void gl_config_load(struct gl_config *c, void (*warn)(const char *msg))
{
    memset(c, 0, sizeof(*c));
    for (size_t k = 0; k < gl_config_nvars; k++) {
        char msg[512];
        if (set(c, &gl_config_vars[k], getenv(gl_config_vars[k].name), msg, sizeof msg) != 0)
            warn(msg);
    }
    const char *pre = getenv("LD_PRELOAD");
    c->preloaded = pre && strstr(pre, "libgpuledger") != NULL;
}

void gl_config_meta(const struct gl_config *c, gl_meta_put put, void *ctx)
{
    char num[32];
    snprintf(num, sizeof num, "%u", c->full_wait_ms);
    put(ctx, "full_wait_ms", num);
    snprintf(num, sizeof num, "%u", c->commit_ms);
    put(ctx, "commit_ms", num);
}
