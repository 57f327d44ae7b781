/* pyframes.h — Python frames in native stacks, for a CPython 3.9–3.13
 * found in the process at run time (never linked).
 *
 * On the hot path the calling thread's own frame chain is read directly
 * from the interpreter's structures (per-version offsets, checked against
 * the real headers by tests/pyoffsets), without calling into Python and
 * without allocating: the thread need not hold the GIL (PyTorch releases it
 * around every op), because only the thread itself changes its own chain.
 * Each Python frame becomes a pseudo return address
 *     GL_PYFRAME_BIT | code_id << 32 | line
 * where code_id indexes an append-only table of (file, qualified name)
 * copied once per code object; the writer turns it back into names. */
#ifndef GL_PYFRAMES_H
#define GL_PYFRAMES_H

#include <stdint.h>

#include "gl_event.h" /* GL_PYFRAME_BIT */
#include "meta.h"

#define GL_PY_MAX_DEPTH 256

/* Look for a CPython in the process and set up (once found, returns 1
 * thereafter). max_depth: Python frames kept per stack. Not on the hot
 * path: called at start-up and by the writer until found. */
int gl_py_probe(unsigned max_depth);
/* 1 once a supported CPython was found. */
int gl_py_ready(void);
/* "3.12" etc. once found, or NULL. */
const char *gl_py_version(void);
/* meta python_version, once a CPython was found. */
void gl_py_meta(gl_meta_put put, void *ctx);

/* Merge the calling thread's Python frames into the native stack
 * ips[0 .. n) (innermost first, capacity cap): each native frame of the
 * eval loop is replaced by the Python frames it runs, other interpreter
 * frames are dropped, Python frames left over go to the outer end. Returns
 * the new depth; *py gets the number of Python frames merged and
 * *py_truncated whether Python frames were cut at the limit. */
unsigned gl_py_merge(uintptr_t *ips, unsigned n, unsigned cap, unsigned *py, int *py_truncated);

/* GPULEDGER_PYTHON modes (config.h's python field). */
enum { GL_PY_OFF = 0, GL_PY_ON = 1, GL_PY_MIXED = 2, GL_PY_ONLY = 3 };

/* The stack of the calling thread into ips (capacity cap): native frames
 * (at most depth) merged with its Python frames. GL_PY_ON: a thread
 * running Python gets the native frames above the first eval-loop frame
 * (at most `native` of them, the innermost: the walk stops there) and then
 * all its Python frames (unwinding stops there: cheaper); GL_PY_MIXED
 * unwinds the whole native stack and interleaves; GL_PY_ONLY keeps the
 * Python frames alone (no unwinding) where there are any, as GL_PY_ON does
 * with native 0. A thread without Python frames gets its native stack. */
unsigned gl_py_stack(uintptr_t *ips, unsigned depth, unsigned native, unsigned cap, int mode, int *truncated);

/* Writer side: file and qualified name of a pseudo address's code object,
 * and its line. Returns 0, or -1 if ip is not a valid Python frame. */
int gl_py_describe(uint64_t ip, const char **file, const char **func, int *line);

/* In a fork child: forget a lock another thread may have held. */
void gl_py_after_fork(void);

#endif
