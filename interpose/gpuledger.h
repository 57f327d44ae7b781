/* gpuledger.h — annotations a program can put into its gpuledger database
 * (public API; link nothing: the functions exist when libgpuledger.so is
 * preloaded). Look them up with dlsym(RTLD_DEFAULT, "gpuledger_mark") so the
 * program also runs without gpuledger, or from Python:
 *
 *     import ctypes
 *     gl = ctypes.CDLL(None)          # the process's global scope
 *     mark = getattr(gl, "gpuledger_mark", None)
 *     if mark: mark(b"step 17")
 *
 * Marks split the run into steps for `gpuledger leaks --steps`; ranges tag
 * every event made while they are open (annotations table, events.range_seq). */
#ifndef GPULEDGER_H
#define GPULEDGER_H

#ifdef __cplusplus
extern "C" {
#endif

/* A point in time, e.g. the end of a training step. */
void gpuledger_mark(const char *label);
/* Open / close a named range on the calling thread (they nest). */
void gpuledger_range_push(const char *label);
void gpuledger_range_pop(void);
/* Pause (0) or resume (1) recording for the whole process; returns the
 * previous state. While paused, CUDA calls pass straight through and are not
 * recorded — so a free of memory allocated while paused counts as unmatched,
 * and memory allocated while recording but freed while paused looks leaked.
 * Meant for skipping a warm-up, or timing with and without in one process. */
int gpuledger_set_recording(int on);

#ifdef __cplusplus
}
#endif

#endif
