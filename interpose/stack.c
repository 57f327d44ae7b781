/* stack.c — native stack capture (see stack.h): unwind.c's fast walk,
 * libunwind where it gives up, and the cutting of our own frames. */
#define UNW_LOCAL_ONLY
#include "stack.h"
#include "symbolize.h"
#include "unwind.h"

#include <dlfcn.h>
#include <link.h>
#include <libunwind.h>
#include <stdatomic.h>

#define MAX_SKIP 8

static uintptr_t skip_lo[MAX_SKIP], skip_hi[MAX_SKIP];
static _Atomic int nskip;
static int use_fast = 1;

void gl_stack_use_fast(int mode)
{
    use_fast = mode != 0;
    gl_unwind_use_memo(mode != 2);
}

struct range_query {
    uintptr_t addr, lo, hi;
    int found;
};

static int find_range(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    struct range_query *q = data;
    uintptr_t lo, hi;
    if (!gl_phdr_extent(info, q->addr, &lo, &hi))
        return 0;
    q->lo = lo;
    q->hi = hi;
    q->found = 1;
    return 1;
}

int gl_code_range_of(const void *addr, uintptr_t *lo, uintptr_t *hi)
{
    struct range_query q = {(uintptr_t)addr, 0, 0, 0};
    dl_iterate_phdr(find_range, &q);
    if (!q.found)
        return -1;
    *lo = q.lo;
    *hi = q.hi;
    return 0;
}

void gl_stack_add_skip_range(uintptr_t lo, uintptr_t hi)
{
    int n = atomic_load(&nskip);
    for (int i = 0; i < n; i++)
        if (skip_lo[i] == lo && skip_hi[i] == hi)
            return;
    if (n >= MAX_SKIP)
        return;
    skip_lo[n] = lo;
    skip_hi[n] = hi;
    atomic_store(&nskip, n + 1);
}

void gl_stack_init(void)
{
    uintptr_t lo, hi;
    if (gl_code_range_of((const void *)(uintptr_t)&gl_stack_init, &lo, &hi) == 0)
        gl_stack_add_skip_range(lo, hi);
}

static int skipped(uintptr_t ip, int n)
{
    for (int i = 0; i < n; i++)
        if (ip >= skip_lo[i] && ip < skip_hi[i])
            return 1;
    return 0;
}

/* A wrapper's own frames above its caller are few (about 6): unwind with a
 * small slack first, each frame walked costing ~10 ns, and again with the
 * full slack only when our frames (or, under a CUPTI callback, the
 * driver's) ate into the requested depth. */
#define FIRST_SLACK 8

unsigned gl_stack_capture(uintptr_t *ips, unsigned max_depth, int *truncated)
{
    unsigned kept = gl_stack_capture_slack(ips, max_depth, FIRST_SLACK, truncated);
    if (*truncated && kept < max_depth)
        kept = gl_stack_capture_slack(ips, max_depth, GL_STACK_SLACK, truncated);
    return kept;
}

unsigned gl_stack_capture_slack(uintptr_t *ips, unsigned max_depth, unsigned slack, int *truncated)
{
    *truncated = 0;
    if (max_depth == 0)
        return 0;
    if (slack > GL_STACK_SLACK)
        slack = GL_STACK_SLACK;
    int cap = (int)(max_depth + slack);
    int n = use_fast ? gl_unwind_fast(ips, cap) : -1;
    if (n < 0) /* a stack the fast walk cannot follow (or GPULEDGER_UNWIND=libunwind) */
        n = unw_backtrace((void **)ips, cap);
    if (n <= 0)
        return 0;
    int ns = atomic_load_explicit(&nskip, memory_order_acquire);
    int k = 0;
    while (k < n && skipped(ips[k], ns))
        k++;
    /* Drop the leading skipped frames, and our own frames anywhere below
     * (e.g. the main() wrapper that learns the exit status). */
    unsigned kept = 0;
    for (int i = k; i < n; i++) {
        if (ns > 0 && ips[i] >= skip_lo[0] && ips[i] < skip_hi[0])
            continue;
        ips[kept++] = ips[i];
    }
    if (kept > max_depth) {
        kept = max_depth;
        *truncated = 1;
    } else if (n == cap) {
        *truncated = 1;
    }
    return kept;
}

unsigned gl_stack_capture_to(uintptr_t *ips, unsigned max_depth, unsigned slack, const struct gl_stack_to *to,
                             int *stopped, int *truncated)
{
    *truncated = 0;
    *stopped = 0;
    if (max_depth == 0)
        return 0;
    int cap = (int)(max_depth + (slack < GL_STACK_SLACK ? slack : GL_STACK_SLACK));
    int n = use_fast ? gl_unwind_fast_to(ips, cap, to->stop_lo, to->stop_hi) : -1;
    if (n < 0) { /* libunwind walks the whole depth: find the stop */
        n = unw_backtrace((void **)ips, cap);
        for (int i = 0; i < n; i++)
            if (ips[i] - 1 - to->stop_lo < to->stop_hi - to->stop_lo) {
                n = i + 1;
                break;
            }
    }
    if (n <= 0)
        return 0;
    if (ips[n - 1] - 1 - to->stop_lo < to->stop_hi - to->stop_lo) {
        *stopped = 1;
        n--; /* the stop frame is not kept */
    }
    int ns = atomic_load_explicit(&nskip, memory_order_acquire);
    int k = 0;
    while (k < n && skipped(ips[k], ns))
        k++;
    /* one pass: our own frames and the dropped range left out */
    uintptr_t own_lo = ns > 0 ? skip_lo[0] : 0, own_len = ns > 0 ? skip_hi[0] - skip_lo[0] : 0;
    uintptr_t drop_lo = to->drop_lo, drop_len = to->drop_hi - to->drop_lo;
    unsigned kept = 0;
    for (int i = k; i < n; i++) {
        uintptr_t ip = ips[i];
        if (ip - own_lo < own_len || ip - 1 - drop_lo < drop_len)
            continue;
        ips[kept++] = ip;
    }
    if (kept > max_depth) {
        kept = max_depth;
        *truncated = 1;
    } else if (!*stopped && n == cap) {
        *truncated = 1;
    }
    return kept;
}
