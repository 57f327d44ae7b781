/* frameclass.h — frames as a person reads them. Each frame of a stack is
 * the user's code, a library's, or allocator internals (gl_fc_classify);
 * a C++ name is shortened to its qualified name, without template
 * arguments, parameter lists, return type or clone suffixes
 * (gl_fc_short_name); and a stack becomes one line naming the op (the
 * innermost frame that is not allocator internals), the innermost user
 * frame and the outermost frame, never eliding the user's
 * (gl_fc_chain_text). Pure functions over frames: no database, no report
 * model; the renderers and the diagnosis call them (the full names stay in
 * JSON, `leaks`' full listing and `--frames full`).
 *
 * The rules, in order (docs/report.md, "Frames"):
 *   Python frames: the gpuledger package's own files are allocator
 *   internals; files under site-packages/ or dist-packages/, the standard
 *   library (…/lib/pythonX.Y/…, <frozen …>) a library's; any other file the
 *   user's.
 *   Native frames: allocator internals by name (PyTorch's caching
 *   allocator and the tensor-allocation plumbing above it: c10::cuda::…,
 *   c10::StorageImpl, at::detail::empty_*, at::TensorIteratorBase::…,
 *   at::meta::…, structured kernels' set_output_*, create_out; the trace
 *   tracker's std::function calls; ffi_call) or by module (libgpuledger*,
 *   libc10_cuda.so: the caching allocator's own library,
 *   gpuledger_torch_shim.so, libcudart*, libcuda.so*, libffi, _ctypes);
 *   otherwise a frame of a shared object (".so" in its module's name), of
 *   the Python interpreter (a module named python*) or of no known module
 *   is a library's, and a frame of the program itself the user's. */
#ifndef GL_FRAMECLASS_H
#define GL_FRAMECLASS_H

#include <stddef.h>
#include <stdint.h>

enum gl_fc_class {
    GL_FC_USER = 0,      /* the user's code */
    GL_FC_LIBRARY = 1,   /* a library's: a framework, the standard library, libc */
    GL_FC_ALLOCATOR = 2, /* allocator internals: says nothing about who wanted the memory */
};

/* One frame, as the database's stack_frames has it (report/frames.h's
 * struct gl_frame holds the same fields). */
struct gl_fc_frame {
    const char *symbol; /* demangled C++ or C name; a Python frame's qualified name; NULL: unknown */
    const char *module; /* native: the executable or shared object's path; NULL: unknown */
    const char *file;   /* Python: the source file; native: where known */
    int line;           /* <= 0: unknown */
    int python;         /* 1: a Python frame */
    uint64_t offset;    /* native: the address relative to the module (for a frame without a symbol) */
};

/* enum gl_fc_class of one frame. */
int gl_fc_classify(const struct gl_fc_frame *f);
/* "user", "library", "allocator" ("?" for anything else). */
const char *gl_fc_class_name(int cls);

/* symbol with template arguments, parameter lists, a return type, ABI
 * tags and clone suffixes dropped, into out (sz bytes, NUL-terminated,
 * cut at sz - 1): "at::native::(anonymous namespace)::addmm_out_cuda_impl".
 * "(anonymous namespace)", operator names ("operator<<", "operator()",
 * "operator new", "operator bool") and lambdas ("{lambda#2}") are kept. A
 * name that is not C++ is copied as it is; NULL gives "". Returns out. */
char *gl_fc_short_name(const char *symbol, char *out, size_t sz);

/* A frame in a few words: "train_step (train.py:19)" (a library's Python
 * file from its package: "torch/nn/functional.py:3504"), a native frame's
 * short name, or "libfoo.so+0x1a2b" without a symbol. Returns out. */
char *gl_fc_frame_text(const struct gl_fc_frame *f, char *out, size_t sz);

/* The frames a one-line chain shows, as indices into the stack (innermost
 * first); -1 where there is none. */
struct gl_fc_chain {
    int op;        /* innermost frame that is not allocator internals, past a library's unnamed frames
                      followed by a named one of the same module (-1: every frame is allocator internals) */
    int user;      /* innermost user frame (at or after op) */
    int outer;     /* outermost frame, past the frames that start a process or a thread (_start,
                      __libc_start_main, start_thread, clone) and unnamed frames; -1: empty stack */
    int allocator; /* frames of allocator internals before op */
};
void gl_fc_chain(const struct gl_fc_frame *f, int n, struct gl_fc_chain *out);

/* The chain as one line, innermost first: "OP <- ... <- USER <- ... <-
 * OUTER", each frame as gl_fc_frame_text gives it, "..." where frames lie
 * between two shown ones, a frame shown once where two of them are the
 * same; a stack of allocator internals alone starts at its innermost
 * frame; "(no stack)" for none. Returns out. */
char *gl_fc_chain_text(const struct gl_fc_frame *f, int n, char *out, size_t sz);

#endif
