/* pyframes.c — Python frames in native stacks (see pyframes.h): finding
 * CPython and its layout, walking the calling thread's frame chain, and
 * merging it with the native frames. Naming the frames (the code-object
 * tables) is pycode.c's job. */
#include "pyframes.h"

#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "pyint.h"
#include "real.h"
#include "recorder.h"
#include "stack.h"
#include "state.h"

/* ---- per-version layout ------------------------------------------------
 * Offsets on 64-bit release builds, as printed by tests/pyoffsets.c from
 * each version's own headers (3.9.18, 3.10.13, 3.11.7, 3.12.1, 3.13.0). */
static const struct pyvt layouts[] = {
    {9, ST_FRAMEOBJ, 24, -1, 32, 24, 104, 1, -1, -1, 104, 112, 40, -1, 48, 72},
    {10, ST_FRAMEOBJ, 24, -1, 32, 24, 96, 2, -1, -1, 104, 112, 40, -1, 48, 72},
    {11, ST_311, 56, 8, 32, 48, 56, 0, 68, 69, 112, 128, 72, 184, 48, 72},
    {12, ST_312, 56, 0, 0, 8, 56, 0, -1, 70, 112, 128, 68, 192, 40, 56},
    {13, ST_313, 72, -1, 0, 8, 56, 0, -1, 70, 112, 128, 68, 200, 40, 56},
};
/* ---- what was found ----------------------------------------------------- */
static const struct pyvt *vt;
static _Atomic int ready;
static unsigned py_max;
static char version[16];
static int (*f_initialized)(void);
static int (*f_finalizing)(void);
static void *(*f_this_ts)(void);
static int (*f_addr2line)(void *code, int addr);
static uintptr_t code_type;
static uintptr_t eval_lo, eval_hi;     /* _PyEval_EvalFrameDefault */
static uintptr_t interp_lo, interp_hi; /* the module that holds it */

#define GROUP_END (1ULL << 62)

/* How many of the outermost Python frames are kept when a stack is deeper
 * than GPULEDGER_PYTHON_DEPTH (the rest of the room goes to the innermost):
 * the allocating line and the program's own entry point both survive. */
#define PY_TAIL 16

/* When only the innermost native frames are kept (a PyTorch block's), the
 * walk goes this many frames further: our own and the allocator shim's,
 * left out of the stack, are fewer. */
#define NATIVE_SLACK 12

struct tail {
    uintptr_t code[PY_TAIL];
    int64_t addr[PY_TAIL];
    uint8_t end[PY_TAIL];
    unsigned n; /* frames seen past the head, of which the last PY_TAIL are here */
};

/* The innermost frame of a thread state (0: it runs no Python now, as a
 * thread that once held the GIL, e.g. autograd's, between its calls). */
static uintptr_t first_frame(uintptr_t ts)
{
    if (vt->style == ST_FRAMEOBJ || vt->style == ST_313)
        return rd_ptr(ts + (uintptr_t)vt->ts_frame);
    uintptr_t cf = rd_ptr(ts + (uintptr_t)vt->ts_frame);
    return cf ? rd_ptr(cf + (uintptr_t)vt->cf_cur) : 0;
}

/* The calling thread's Python frames from its innermost frame f (its
 * thread state's first_frame), innermost first, into out[0..max). The last
 * frame run by one call of the eval loop carries GROUP_END. */
static unsigned walk(uintptr_t f, uintptr_t *out, unsigned max, int *truncated)
{
    unsigned m = 0, guard = 0;
    unsigned head_max = max > 2 * PY_TAIL ? max - PY_TAIL : max;
    struct tail t;
    t.n = 0;
    *truncated = 0;
    int frameobj = vt->style == ST_FRAMEOBJ;
    for (; f && guard < 4096; f = rd_ptr(f + (uintptr_t)vt->f_back), guard++) {
        int end = frameobj; /* 3.9/3.10: every frame is a call of the eval loop */
        if (!frameobj && vt->style != ST_311 &&
            *(const unsigned char *)(f + (uintptr_t)vt->owner) == OWNED_BY_CSTACK) {
            /* the shim frame a call of the eval loop starts with */
            if (t.n)
                t.end[(t.n - 1) % PY_TAIL] = 1;
            else if (m)
                out[m - 1] |= GROUP_END;
            continue;
        }
        uintptr_t code = rd_ptr(f + (uintptr_t)vt->f_code);
        if (!code || rd_ptr(code + OB_TYPE) != code_type) {
            if (vt->style == ST_313)
                continue; /* 3.13: f_executable may be None (shim) or another callable */
            break;        /* not the layout we expect: stop rather than guess */
        }
        int64_t addr;
        if (frameobj)
            addr = (int64_t)rd_i32(f + (uintptr_t)vt->f_instr) * vt->lasti_mult;
        else
            addr = (int64_t)(rd_ptr(f + (uintptr_t)vt->f_instr) - (code + (uintptr_t)vt->co_code));
        if (vt->style == ST_311 && *(const unsigned char *)(f + (uintptr_t)vt->is_entry))
            end = 1;
        if (m < head_max) {
            out[m++] = gl_pycode_frame(code, addr) | (end ? GROUP_END : 0);
        } else if (head_max == max) {
            *truncated = 1; /* no room kept for the outermost frames */
            break;
        } else {
            unsigned k = t.n++ % PY_TAIL;
            t.code[k] = code;
            t.addr[k] = addr;
            t.end[k] = (uint8_t)end;
        }
    }
    if (t.n) {
        unsigned keep = t.n < PY_TAIL ? t.n : PY_TAIL;
        if (t.n > PY_TAIL) {
            *truncated = 1; /* frames between head and tail left out */
            out[m - 1] |= GROUP_END;
        }
        for (unsigned i = t.n - keep; i < t.n; i++) {
            unsigned k = i % PY_TAIL;
            out[m++] = gl_pycode_frame(t.code[k], t.addr[k]) | (t.end[k] ? GROUP_END : 0);
        }
    }
    if (m)
        out[m - 1] |= GROUP_END;
    return m;
}

#define EVAL_MARK (1ULL << 62)

/* gl_py_merge for thread state ts (known to be there). */
static unsigned merge_ts(uintptr_t ts, uintptr_t *ips, unsigned n, unsigned cap, unsigned *py, int *py_truncated)
{
    *py = 0;
    *py_truncated = 0;
    uintptr_t buf[GL_PY_MAX_DEPTH];
    unsigned room = cap > n ? cap - n : 0, limit = py_max < room ? py_max : room;
    unsigned m = walk(first_frame(ts), buf, limit, py_truncated);
    if (!m)
        return n;
    unsigned groups = 0;
    for (unsigned j = 0; j < m; j++)
        groups += (buf[j] & GROUP_END) != 0;
    /* drop interpreter plumbing; keep (marked) one eval-loop frame per group */
    unsigned k = 0, evals = 0;
    for (unsigned i = 0; i < n; i++) {
        uintptr_t pc = ips[i] - 1;
        if (pc >= eval_lo && pc < eval_hi) {
            if (evals < groups) {
                ips[k++] = ips[i] | EVAL_MARK;
                evals++;
            }
            continue;
        }
        if (pc >= interp_lo && pc < interp_hi)
            continue;
        ips[k++] = ips[i];
    }
    /* group g replaces the g-th eval frame; the rest go to the outer end.
     * Written backwards: every kept native frame yields at least one output,
     * so no native frame is overwritten before it is read. */
    unsigned gstart[GL_PY_MAX_DEPTH + 1], g = 0;
    gstart[0] = 0;
    for (unsigned j = 0; j < m; j++)
        if (buf[j] & GROUP_END)
            gstart[++g] = j + 1;
    unsigned total = k - evals + m, o = total;
    for (unsigned j = m; j-- > gstart[evals];)
        ips[--o] = buf[j] & ~GROUP_END;
    unsigned e = evals;
    for (unsigned i = k; i-- > 0;) {
        if ((ips[i] & EVAL_MARK) && e > 0) {
            e--;
            for (unsigned j = gstart[e + 1]; j-- > gstart[e];)
                ips[--o] = buf[j] & ~GROUP_END;
        } else {
            ips[--o] = ips[i];
        }
    }
    *py = m;
    return total;
}

unsigned gl_py_merge(uintptr_t *ips, unsigned n, unsigned cap, unsigned *py, int *py_truncated)
{
    *py = 0;
    *py_truncated = 0;
    if (!atomic_load_explicit(&ready, memory_order_acquire))
        return n;
    if (!f_initialized() || f_finalizing())
        return n;
    uintptr_t ts = (uintptr_t)f_this_ts();
    if (!ts)
        return n;
    return merge_ts(ts, ips, n, cap, py, py_truncated);
}

unsigned gl_py_stack(uintptr_t *ips, unsigned depth, unsigned native, unsigned cap, int mode, int *truncated)
{
    uintptr_t ts = 0, f = 0;
    if (mode != GL_PY_MIXED && atomic_load_explicit(&ready, memory_order_acquire) && f_initialized() &&
        !f_finalizing())
        ts = (uintptr_t)f_this_ts();
    if (ts && !(f = first_frame(ts))) /* no Python running on this thread now */
        return gl_stack_capture(ips, depth, truncated);
    if (ts && (mode == GL_PY_ONLY || native == 0)) {
        /* the Python frames alone (what PyTorch's stacks="python" keeps):
         * no native unwinding at all. A thread with no Python frame on
         * its stack right now gets native frames below. */
        unsigned m = walk(f, ips, py_max < cap ? py_max : cap, truncated);
        if (m) {
            for (unsigned i = 0; i < m; i++)
                ips[i] &= ~GROUP_END;
            return m;
        }
    }
    if (!ts) {
        unsigned n = gl_stack_capture(ips, depth, truncated);
        unsigned py;
        int py_truncated;
        n = gl_py_merge(ips, n, cap, &py, &py_truncated);
        if (py) /* the outer end is the Python stack, complete unless cut */
            *truncated = py_truncated;
        return n;
    }
    /* A Python thread: the native frames that matter are those above the
     * first eval-loop frame (the Python frames stand for everything below).
     * Unwind to it and no further, leave out the interpreter's own frames
     * (calls of builtins, vectorcall plumbing), then the Python frames. */
    int stopped;
    const struct gl_stack_to to = {eval_lo, eval_hi, interp_lo, interp_hi};
    /* the innermost `native` frames only: a walk of about as many frames
     * (0 and no Python frame to show: all of them) */
    int prefix = native && native < depth;
    unsigned k = prefix ? gl_stack_capture_to(ips, native, NATIVE_SLACK, &to, &stopped, truncated)
                        : gl_stack_capture_to(ips, depth, GL_STACK_SLACK, &to, &stopped, truncated);
    unsigned room = cap > k ? cap - k : 0, limit = py_max < room ? py_max : room;
    int py_truncated;
    unsigned m = walk(f, ips + k, limit, &py_truncated);
    if (!m) /* no Python frame to put below the innermost native ones (rare): all of them */
        return prefix && !stopped ? gl_stack_capture(ips, depth, truncated) : k;
    for (unsigned i = k; i < k + m; i++)
        ips[i] &= ~GROUP_END;
    *truncated = py_truncated; /* the outer end is the Python stack, complete unless cut */
    return k + m;
}

/* ---- set-up ---------------------------------------------------------------- */

static pthread_mutex_t probe_lock = PTHREAD_MUTEX_INITIALIZER;

static void *sym(const char *name)
{
    return gl_real_dlsym ? gl_real_dlsym(RTLD_DEFAULT, name) : NULL;
}

static int find_minor(int *minor)
{
    const unsigned long *hex = sym("Py_Version"); /* 3.11+ */
    if (hex) {
        if ((*hex >> 24) != 3)
            return -1;
        *minor = (int)((*hex >> 16) & 0xFF);
        return 0;
    }
    const char *(*get)(void) = (const char *(*)(void))sym("Py_GetVersion");
    int major;
    if (!get || sscanf(get(), "%d.%d", &major, minor) != 2 || major != 3)
        return -1;
    return 0;
}

static int probe_locked(unsigned max_depth)
{
    static int reported;
    int minor;
    if (find_minor(&minor))
        return 0;
    const struct pyvt *l = NULL;
    for (size_t i = 0; i < sizeof layouts / sizeof layouts[0]; i++)
        if (layouts[i].minor == minor)
            l = &layouts[i];
    int freethreaded = sym("_Py_MergeZeroLocalRefcount") != NULL;
    f_initialized = (int (*)(void))sym("Py_IsInitialized");
    f_finalizing = (int (*)(void))sym(minor >= 13 ? "Py_IsFinalizing" : "_Py_IsFinalizing");
    f_this_ts = (void *(*)(void))sym("PyGILState_GetThisThreadState");
    f_addr2line = (int (*)(void *, int))sym("PyCode_Addr2Line");
    code_type = (uintptr_t)sym("PyCode_Type");
    void *eval = sym("_PyEval_EvalFrameDefault");
    if (!l || freethreaded || sizeof(void *) != 8) {
        if (!reported) {
            reported = 1;
            gl_warn("Python 3.%d%s found: its frames are not supported (3.9-3.13, GIL builds); stacks stay "
                    "native",
                    minor, freethreaded ? " (free-threaded)" : "");
        }
        return -1;
    }
    if (!f_initialized || !f_finalizing || !f_this_ts || !f_addr2line || !code_type || !eval) {
        if (!reported) {
            reported = 1;
            gl_warn("Python 3.%d found, but it does not export %s (a static interpreter linked without "
                    "--export-dynamic?); stacks stay native",
                    minor,
                    !eval ? "_PyEval_EvalFrameDefault"
                          : !f_this_ts ? "PyGILState_GetThisThreadState"
                                       : !f_addr2line ? "PyCode_Addr2Line" : "its C API symbols");
        }
        return -1;
    }
    Dl_info info;
    const ElfW(Sym) *es = NULL;
    if (!dladdr1(eval, &info, (void **)&es, RTLD_DL_SYMENT) || !es || !es->st_size ||
        gl_code_range_of(eval, &interp_lo, &interp_hi))
        return -1;
    eval_lo = (uintptr_t)eval;
    eval_hi = eval_lo + es->st_size;
    gl_pyvt = vt = l;
    if (gl_pycode_init(f_addr2line))
        return -1;
    py_max = max_depth > GL_PY_MAX_DEPTH ? GL_PY_MAX_DEPTH : max_depth;
    snprintf(version, sizeof version, "3.%d", minor);
    atomic_store_explicit(&ready, 1, memory_order_release);
    return 1;
}

int gl_py_probe(unsigned max_depth)
{
    static int failed;
    if (atomic_load_explicit(&ready, memory_order_acquire))
        return 1;
    if (failed || max_depth == 0)
        return 0;
    pthread_mutex_lock(&probe_lock);
    int r = atomic_load(&ready) ? 1 : probe_locked(max_depth);
    if (r < 0)
        failed = 1;
    pthread_mutex_unlock(&probe_lock);
    return r > 0;
}

int gl_py_ready(void)
{
    return atomic_load_explicit(&ready, memory_order_acquire);
}

int gl_py_describe(uint64_t ip, const char **file, const char **func, int *line)
{
    if (!(ip & GL_PYFRAME_BIT) || !gl_py_ready())
        return -1;
    if (gl_pycode_names((uint32_t)((ip >> 32) & 0x3FFFFFFF), file, func) != 0)
        return -1;
    *line = (int)(uint32_t)ip;
    return 0;
}

const char *gl_py_version(void)
{
    return gl_py_ready() ? version : NULL;
}

void gl_py_meta(gl_meta_put put, void *ctx)
{
    if (gl_py_ready())
        put(ctx, "python_version", version);
}

void gl_py_after_fork(void)
{
    gl_pycode_after_fork();
}
