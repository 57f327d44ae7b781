/* stack.h — native call-stack capture on the application thread.
 * Only return addresses are taken here (unwind.c's cached DWARF rules, or
 * libunwind for the stacks that walk gives up on);
 * symbol names are resolved later in the writer thread. */
#ifndef GL_STACK_H
#define GL_STACK_H

#include <stdint.h>

/* Extra frames captured beyond the requested depth so that gpuledger's own
 * frames (and, for CUPTI callbacks, the driver's) can be cut off the top. */
#define GL_STACK_SLACK 24

/* GPULEDGER_UNWIND: 1 fast (default), 2 fast without its memo, 0 always
 * libunwind. Set before recording. */
void gl_stack_use_fast(int mode);

/* Find gpuledger's own code range. Call once before the first capture. */
void gl_stack_init(void);

/* Frames whose address lies in [lo, hi) are removed from the top of stacks
 * (used for libcupti/libcuda frames above a CUPTI callback). Up to 8 ranges. */
void gl_stack_add_skip_range(uintptr_t lo, uintptr_t hi);

/* Capture into ips[0 .. max_depth + GL_STACK_SLACK). Returns the number of
 * frames kept (<= max_depth), innermost first, our own frames removed;
 * *truncated is set when frames were cut at the bottom. */
unsigned gl_stack_capture(uintptr_t *ips, unsigned max_depth, int *truncated);
/* The same with fewer extra frames (at most GL_STACK_SLACK): for a first,
 * shallow attempt that is retried in full when it falls short. */
unsigned gl_stack_capture_slack(uintptr_t *ips, unsigned max_depth, unsigned slack, int *truncated);

/* The native frames above the first return address whose call lies in
 * [stop_lo, stop_hi) (a Python thread's eval loop), leaving out those whose
 * call lies in [drop_lo, drop_hi) (the rest of the interpreter): walks at
 * most max_depth + slack (at most GL_STACK_SLACK) frames to find the stop,
 * keeps at most max_depth (innermost first, our own frames removed, the
 * stop frame left out); *stopped says whether it was found. */
struct gl_stack_to {
    uintptr_t stop_lo, stop_hi, drop_lo, drop_hi;
};
unsigned gl_stack_capture_to(uintptr_t *ips, unsigned max_depth, unsigned slack, const struct gl_stack_to *to,
                             int *stopped, int *truncated);

/* The [lo, hi) range of the code segment that contains `addr` (via the loaded
 * program headers); returns 0 on success. */
int gl_code_range_of(const void *addr, uintptr_t *lo, uintptr_t *hi);

#endif
