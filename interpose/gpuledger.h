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

#ifdef __cplusplus
}
#endif

#endif
