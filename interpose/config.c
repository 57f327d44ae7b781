/* config.c — reading and validating GPULEDGER_* variables (see config.h). */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

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

static void load_uint(const char *name, unsigned long lo, unsigned long hi, unsigned long *val,
                      void (*warn)(const char *))
{
    const char *s = getenv(name);
    if (!s)
        return;
    if (gl_parse_uint(s, lo, hi, val) != 0) {
        char msg[256];
        snprintf(msg, sizeof msg, "%s='%s' is not a whole number in %lu..%lu; using %lu", name, s, lo, hi, *val);
        warn(msg);
    }
}

static void load_bool(const char *name, int *val, void (*warn)(const char *))
{
    const char *s = getenv(name);
    if (!s)
        return;
    if (gl_parse_bool(s, val) != 0) {
        char msg[256];
        snprintf(msg, sizeof msg, "%s='%s' is not 0/1/yes/no/true/false/on/off; using %d", name, s, *val);
        warn(msg);
    }
}

void gl_config_load(struct gl_config *c, void (*warn)(const char *msg))
{
    unsigned long depth = 48, pydepth = 64, slots = 16384, wait = 500, commit = 50;
    int disable = 0;
    memset(c, 0, sizeof(*c));
    c->symbolize = 1;
    c->cupti = GL_CUPTI_AUTO;
    c->python = 1;
    c->free_stacks = 1;
    c->clock_tsc = 1;
    load_bool("GPULEDGER_DISABLE", &disable, warn);
    c->enabled = !disable;
    c->output = getenv("GPULEDGER_OUTPUT");
    if (!c->output || !*c->output)
        c->output = "gpuledger-%p.db";
    load_uint("GPULEDGER_STACK_DEPTH", 0, 256, &depth, warn);
    load_uint("GPULEDGER_QUEUE_SLOTS", 64, 1UL << 24, &slots, warn);
    load_uint("GPULEDGER_FULL_WAIT_MS", 0, 60000, &wait, warn);
    load_uint("GPULEDGER_COMMIT_MS", 1, 100, &commit, warn);
    load_bool("GPULEDGER_SYMBOLIZE", &c->symbolize, warn);
    load_bool("GPULEDGER_QUIET", &c->quiet, warn);
    const char *cu = getenv("GPULEDGER_CUPTI");
    if (cu && strcasecmp(cu, "auto") && gl_parse_bool(cu, &c->cupti) != 0) {
        char msg[256];
        snprintf(msg, sizeof msg, "GPULEDGER_CUPTI='%s' is not auto/0/1/yes/no/on/off; using auto", cu);
        warn(msg);
        c->cupti = GL_CUPTI_AUTO;
    }
    const char *pre = getenv("LD_PRELOAD");
    c->preloaded = pre && strstr(pre, "libgpuledger") != NULL;
    load_bool("GPULEDGER_CUPTI_ACTIVITY", &c->cupti_activity, warn);
    c->cupti_lib = getenv("GPULEDGER_CUPTI_LIB");
    if (c->cupti_lib && !*c->cupti_lib)
        c->cupti_lib = NULL;
    const char *py = getenv("GPULEDGER_PYTHON");
    if (py && !strcasecmp(py, "mixed"))
        c->python = 2;
    else if (py && !strcasecmp(py, "only"))
        c->python = 3;
    else if (py && gl_parse_bool(py, &c->python) != 0) {
        char msg[256];
        snprintf(msg, sizeof msg, "GPULEDGER_PYTHON='%s' is not 0/1/mixed/only; using 1", py);
        warn(msg);
        c->python = 1;
    }
    load_bool("GPULEDGER_FREE_STACKS", &c->free_stacks, warn);
    c->fast_unwind = 1;
    const char *uw = getenv("GPULEDGER_UNWIND");
    if (uw && *uw && strcasecmp(uw, "fast")) {
        if (!strcasecmp(uw, "libunwind")) {
            c->fast_unwind = 0;
        } else if (!strcasecmp(uw, "nomemo")) {
            c->fast_unwind = 2;
        } else {
            char msg[256];
            snprintf(msg, sizeof msg, "GPULEDGER_UNWIND='%s' is not fast/nomemo/libunwind; using fast", uw);
            warn(msg);
        }
    }
    const char *ck = getenv("GPULEDGER_CLOCK");
    if (ck && *ck && strcasecmp(ck, "auto") && strcasecmp(ck, "tsc")) {
        if (!strcasecmp(ck, "monotonic")) {
            c->clock_tsc = 0;
        } else {
            char msg[256];
            snprintf(msg, sizeof msg, "GPULEDGER_CLOCK='%s' is not auto/tsc/monotonic; using auto", ck);
            warn(msg);
        }
    }
    load_uint("GPULEDGER_PYTHON_DEPTH", 1, 256, &pydepth, warn);
    c->python_depth = (unsigned)pydepth;
    c->stack_depth = (unsigned)depth;
    c->queue_slots = slots;
    c->full_wait_ms = (unsigned)wait;
    c->commit_ms = (unsigned)commit;
    c->manifest = getenv("GPULEDGER_MANIFEST");
    if (c->manifest && !*c->manifest)
        c->manifest = NULL;
}
