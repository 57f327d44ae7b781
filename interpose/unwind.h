/* unwind.h — the fast native stack walk used on the hot path (x86-64).
 *
 * Each frame's unwind rule is read once from the module's DWARF call-frame
 * information (.eh_frame_hdr / .eh_frame), reduced to the common forms
 *     CFA = rsp + k  or  rbp + k  (or, in a realigned frame, *(rbp + k)),
 *     return address at CFA - 8, rbp unchanged or saved at CFA + m,
 * and cached per return address in a lock-free table: a frame then costs a
 * table look-up and two loads; a walk that repeats one of the thread's
 * recent walks (same stack pointer, same words on the stack) is copied
 * from its memo after checking those words. Every load is checked against the calling
 * thread's stack bounds. Anything else (signal frames, code without unwind
 * information, other rules, an alternate signal stack) makes the walk give
 * up, and the caller uses libunwind instead. */
#ifndef GL_UNWIND_H
#define GL_UNWIND_H

#include <stdint.h>

#include "meta.h"

/* Return addresses of the calling thread, from gl_unwind_fast's caller
 * outwards, into ips[0 .. max). Returns how many, or -1 when the fast walk
 * cannot follow this stack (then nothing in ips is meaningful). */
int gl_unwind_fast(uintptr_t *ips, int max);
/* The same, stopping after the first return address whose call lies in
 * [stop_lo, stop_hi) (e.g. the interpreter's eval loop: a Python thread's
 * native frames that matter are above it), which is the last one stored. */
int gl_unwind_fast_to(uintptr_t *ips, int max, uintptr_t stop_lo, uintptr_t stop_hi);

/* fork: prepare takes the rule lock, so that no thread is reading rules
 * (inside dl_iterate_phdr, under the loader's lock) when the process
 * forks; parent releases it; the child (single-threaded) re-creates it. */
void gl_unwind_fork_prepare(void);
void gl_unwind_fork_parent(void);
void gl_unwind_after_fork(void);

/* A module was unloaded: forget every cached rule (they are re-read). */
void gl_unwind_invalidate(void);

/* Counters for tests and benchmarks: stacks this thread walked fast, and
 * stacks any thread gave up on. */
void gl_unwind_stats(uint64_t *fast, uint64_t *fallback);
/* Walks of this thread answered from its memo of recent walks. */
void gl_unwind_memo_stats(uint64_t *hits);

/* Process totals (walks and memo hits lag by up to 64 per thread), and
 * where the first walk that gave up stopped, for the run's diagnostics. */
enum { GL_GIVEUP_STACK = 1, GL_GIVEUP_RULE = 2, GL_GIVEUP_BOUNDS = 3 };
struct gl_unwind_totals {
    uint64_t walks, memo_hits, fallbacks;
    uintptr_t first_giveup_pc; /* 0: none */
    int first_giveup_reason;   /* GL_GIVEUP_* */
    uint64_t by_reason[4];     /* fallbacks per GL_GIVEUP_* */
};
void gl_unwind_totals(struct gl_unwind_totals *t);
/* The totals as meta keys (unwind_walks, unwind_memo_hits, unwind_libunwind,
 * and where stacks fell back to libunwind: unwind_libunwind_why,
 * unwind_first_giveup). */
void gl_unwind_meta(gl_meta_put put, void *ctx);

/* 0: no memo (GPULEDGER_UNWIND=nomemo, for measuring it). */
void gl_unwind_use_memo(int on);

#endif
