/* pyframes.c — Python frames in native stacks (see pyframes.h).
 *
 * Three tables, mapped once when CPython is found, never freed:
 *   code slots  code object address -> code id (lock-free lookup, checked
 *               against the code object's file/name/first line so that a
 *               reused address is never taken for the old code)
 *   code table  code id -> copies of co_filename and co_qualname (UTF-8),
 *               append-only: the writer reads it without a lock
 *   line cache  (code id, bytecode offset) -> line, one packed word a slot
 * New code objects are added under a spinlock that only producers take. */
#include "pyframes.h"

#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "real.h"
#include "recorder.h"
#include "stack.h"

/* ---- per-version layout ------------------------------------------------
 * Offsets on 64-bit release builds, as printed by tests/pyoffsets.c from
 * each version's own headers (3.9.18, 3.10.13, 3.11.7, 3.12.1, 3.13.0). */
enum py_style { ST_FRAMEOBJ, ST_311, ST_312, ST_313 };

struct pyvt {
    int minor, style;
    int ts_frame;  /* 3.9/3.10 tstate->frame, 3.11/3.12 tstate->cframe, 3.13 tstate->current_frame */
    int cf_cur;    /* 3.11/3.12 cframe->current_frame */
    int f_code;    /* f_code (frame object / interpreter frame), 3.13 f_executable */
    int f_back;    /* f_back / previous */
    int f_instr;   /* 3.9/3.10 f_lasti (int), else prev_instr / instr_ptr */
    int lasti_mult;/* bytes per f_lasti unit: 3.9 1, 3.10 2 */
    int is_entry;  /* 3.11 */
    int owner;     /* 3.11+ */
    int co_file, co_name, co_first, co_code;
    int u_ascii, u_compact; /* sizeof(PyASCIIObject), sizeof(PyCompactUnicodeObject) */
};

static const struct pyvt layouts[] = {
    {9, ST_FRAMEOBJ, 24, -1, 32, 24, 104, 1, -1, -1, 104, 112, 40, -1, 48, 72},
    {10, ST_FRAMEOBJ, 24, -1, 32, 24, 96, 2, -1, -1, 104, 112, 40, -1, 48, 72},
    {11, ST_311, 56, 8, 32, 48, 56, 0, 68, 69, 112, 128, 72, 184, 48, 72},
    {12, ST_312, 56, 0, 0, 8, 56, 0, -1, 70, 112, 128, 68, 192, 40, 56},
    {13, ST_313, 72, -1, 0, 8, 56, 0, -1, 70, 112, 128, 68, 200, 40, 56},
};
#define OWNED_BY_CSTACK 3
#define U_STATE 32
#define U_LENGTH 16
#define OB_TYPE 8

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

/* ---- tables ---------------------------------------------------------------- */
#define CODE_SLOTS (1u << 17)
#define CODE_MAX (1u << 18)
#define LINE_SLOTS (1u << 16)
#define ARENA_SIZE (32u << 20)
#define STR_MAX 1024

struct code_slot {
    _Atomic uintptr_t key; /* code object address */
    _Atomic uint32_t id;
};

struct code_ent {
    uintptr_t code, file_obj, name_obj;
    int32_t first;
    uint32_t file_off, name_off; /* into arena */
};

static struct code_slot *slots;
static struct code_ent *ents;
static _Atomic uint64_t *lines;
static char *arena;
static size_t arena_used;
static uint32_t nents = 1; /* id 0: unknown code */
static atomic_flag add_lock = ATOMIC_FLAG_INIT;

static inline uintptr_t rd_ptr(uintptr_t p)
{
    uintptr_t v;
    memcpy(&v, (const void *)p, sizeof v);
    return v;
}

static inline int32_t rd_i32(uintptr_t p)
{
    int32_t v;
    memcpy(&v, (const void *)p, sizeof v);
    return v;
}

static inline uint64_t mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    return x;
}

/* A str object's text as UTF-8 into dst (NUL-terminated); "?" if it is not
 * a compact (canonical) string. */
static size_t copy_str(uintptr_t o, char *dst, size_t cap)
{
    size_t w = 0;
    if (o) {
        uint32_t st = (uint32_t)rd_i32(o + U_STATE);
        if (st & 0x20) { /* compact */
            unsigned kind = (st >> 2) & 7;
            int ascii = (st >> 6) & 1;
            int64_t len = (int64_t)rd_ptr(o + U_LENGTH);
            const unsigned char *d = (const unsigned char *)(o + (uintptr_t)(ascii ? vt->u_ascii : vt->u_compact));
            for (int64_t i = 0; i < len && w + 5 < cap; i++) {
                uint32_t c;
                if (kind == 1)
                    c = d[i];
                else if (kind == 2) {
                    uint16_t c2;
                    memcpy(&c2, d + 2 * i, 2);
                    c = c2;
                } else {
                    memcpy(&c, d + 4 * i, 4);
                }
                if (c < 0x80)
                    dst[w++] = (char)c;
                else if (c < 0x800) {
                    dst[w++] = (char)(0xC0 | (c >> 6));
                    dst[w++] = (char)(0x80 | (c & 0x3F));
                } else if (c < 0x10000) {
                    dst[w++] = (char)(0xE0 | (c >> 12));
                    dst[w++] = (char)(0x80 | ((c >> 6) & 0x3F));
                    dst[w++] = (char)(0x80 | (c & 0x3F));
                } else {
                    dst[w++] = (char)(0xF0 | (c >> 18));
                    dst[w++] = (char)(0x80 | ((c >> 12) & 0x3F));
                    dst[w++] = (char)(0x80 | ((c >> 6) & 0x3F));
                    dst[w++] = (char)(0x80 | (c & 0x3F));
                }
            }
        }
    }
    if (!w && cap > 1)
        dst[w++] = '?';
    dst[w] = 0;
    return w;
}

static uint32_t arena_put(uintptr_t str_obj)
{
    if (arena_used + STR_MAX > ARENA_SIZE)
        return 0; /* offset 0 holds "?" */
    size_t n = copy_str(str_obj, arena + arena_used, STR_MAX);
    uint32_t off = (uint32_t)arena_used;
    arena_used += n + 1;
    return off;
}

static int ent_matches(const struct code_ent *e, uintptr_t code, uintptr_t file, uintptr_t name, int32_t first)
{
    return e->code == code && e->file_obj == file && e->name_obj == name && e->first == first;
}

static uint32_t code_id(uintptr_t code)
{
    uintptr_t file = rd_ptr(code + (uintptr_t)vt->co_file);
    uintptr_t name = rd_ptr(code + (uintptr_t)vt->co_name);
    int32_t first = rd_i32(code + (uintptr_t)vt->co_first);
    uint32_t home = (uint32_t)mix(code) & (CODE_SLOTS - 1), at = home;
    for (unsigned probe = 0; probe < 8; probe++) {
        struct code_slot *s = &slots[(home + probe) & (CODE_SLOTS - 1)];
        uintptr_t k = atomic_load_explicit(&s->key, memory_order_acquire);
        if (k == code) {
            uint32_t id = atomic_load_explicit(&s->id, memory_order_acquire);
            if (id < CODE_MAX && ent_matches(&ents[id], code, file, name, first))
                return id;
            at = (home + probe) & (CODE_SLOTS - 1); /* address reused: replace */
            break;
        }
        if (!k) {
            at = (home + probe) & (CODE_SLOTS - 1);
            break;
        }
    }
    /* first sight of this code object: copy its names once */
    while (atomic_flag_test_and_set_explicit(&add_lock, memory_order_acquire))
        sched_yield();
    uint32_t id = 0;
    if (nents < CODE_MAX) {
        id = nents++;
        struct code_ent *e = &ents[id];
        e->code = code;
        e->file_obj = file;
        e->name_obj = name;
        e->first = first;
        e->file_off = arena_put(file);
        e->name_off = arena_put(name);
        struct code_slot *s = &slots[at];
        atomic_store_explicit(&s->key, 0, memory_order_release);
        atomic_store_explicit(&s->id, id, memory_order_release);
        atomic_store_explicit(&s->key, code, memory_order_release);
    }
    atomic_flag_clear_explicit(&add_lock, memory_order_release);
    return id;
}

/* Line of the instruction at byte offset addr in code (id: its code id). */
static int line_of(uint32_t id, uintptr_t code, int64_t addr)
{
    if (addr < 0)
        return rd_i32(code + (uintptr_t)vt->co_first);
    uint64_t q = (uint64_t)addr >> 1;
    int cacheable = id && id < (1u << 24) && q < (1u << 20);
    uint64_t key = ((uint64_t)id << 20) | q;
    _Atomic uint64_t *slot = &lines[mix(key) & (LINE_SLOTS - 1)];
    if (cacheable) {
        uint64_t v = atomic_load_explicit(slot, memory_order_relaxed);
        if (v >> 20 == key)
            return (int)(v & 0xFFFFF);
    }
    int line = f_addr2line((void *)code, (int)addr);
    if (cacheable && line >= 0 && line < (1 << 20))
        atomic_store_explicit(slot, (key << 20) | (uint64_t)line, memory_order_relaxed);
    return line < 0 ? 0 : line;
}

#define GROUP_END (1ULL << 62)

static inline uintptr_t pseudo(uintptr_t code, int64_t addr)
{
    uint32_t id = code_id(code);
    int line = line_of(id, code, addr);
    return (uintptr_t)(GL_PYFRAME_BIT | ((uint64_t)id << 32) | (uint32_t)line);
}

/* The calling thread's Python frames, innermost first, into out[0..max).
 * The last frame run by one call of the eval loop carries GROUP_END. */
static unsigned walk(uintptr_t ts, uintptr_t *out, unsigned max, int *truncated)
{
    unsigned m = 0, guard = 0;
    uintptr_t f;
    *truncated = 0;
    if (vt->style == ST_FRAMEOBJ) {
        for (f = rd_ptr(ts + (uintptr_t)vt->ts_frame); f && guard < 4096; f = rd_ptr(f + (uintptr_t)vt->f_back), guard++) {
            if (m == max) {
                *truncated = 1;
                break;
            }
            uintptr_t code = rd_ptr(f + (uintptr_t)vt->f_code);
            if (!code || rd_ptr(code + OB_TYPE) != code_type)
                break; /* not the layout we expect: stop rather than guess */
            int64_t lasti = rd_i32(f + (uintptr_t)vt->f_instr);
            out[m++] = pseudo(code, lasti * vt->lasti_mult) | GROUP_END;
        }
        return m;
    }
    if (vt->style == ST_313)
        f = rd_ptr(ts + (uintptr_t)vt->ts_frame);
    else {
        uintptr_t cf = rd_ptr(ts + (uintptr_t)vt->ts_frame);
        f = cf ? rd_ptr(cf + (uintptr_t)vt->cf_cur) : 0;
    }
    for (; f && guard < 4096; f = rd_ptr(f + (uintptr_t)vt->f_back), guard++) {
        if (vt->style != ST_311 && *(const unsigned char *)(f + (uintptr_t)vt->owner) == OWNED_BY_CSTACK) {
            if (m)
                out[m - 1] |= GROUP_END; /* the shim frame a call of the eval loop starts with */
            continue;
        }
        uintptr_t code = rd_ptr(f + (uintptr_t)vt->f_code);
        if (!code || rd_ptr(code + OB_TYPE) != code_type) {
            if (vt->style == ST_313)
                continue; /* 3.13: f_executable may be None (shim) or another callable */
            break;        /* not the layout we expect: stop rather than guess */
        }
        if (m == max) {
            *truncated = 1;
            break;
        }
        uintptr_t instr = rd_ptr(f + (uintptr_t)vt->f_instr);
        int64_t addr = (int64_t)(instr - (code + (uintptr_t)vt->co_code));
        out[m++] = pseudo(code, addr);
        if (vt->style == ST_311 && *(const unsigned char *)(f + (uintptr_t)vt->is_entry))
            out[m - 1] |= GROUP_END;
    }
    if (m)
        out[m - 1] |= GROUP_END;
    return m;
}

#define EVAL_MARK (1ULL << 62)

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
    uintptr_t buf[GL_PY_MAX_DEPTH];
    unsigned room = cap > n ? cap - n : 0, limit = py_max < room ? py_max : room;
    unsigned m = walk(ts, buf, limit, py_truncated);
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

/* Index + 1 of the eval-loop frame in this thread's last Python stack (0:
 * none yet): how deep to unwind first next time. */
static __thread unsigned tls_eval_at __attribute__((tls_model("initial-exec")));

static int find_eval(const uintptr_t *ips, unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        if (ips[i] - 1 >= eval_lo && ips[i] - 1 < eval_hi)
            return (int)i;
    return -1;
}

unsigned gl_py_stack(uintptr_t *ips, unsigned depth, unsigned cap, int mixed, int *truncated)
{
    if (mixed || !atomic_load_explicit(&ready, memory_order_acquire) || !f_initialized() || f_finalizing() ||
        !f_this_ts()) {
        unsigned n = gl_stack_capture(ips, depth, truncated);
        unsigned py;
        int py_truncated;
        n = gl_py_merge(ips, n, cap, &py, &py_truncated);
        if (py) /* the outer end is the Python stack, complete unless cut */
            *truncated = py_truncated;
        return n;
    }
    /* A Python thread: the native frames that matter are those above the
     * first eval-loop frame (the Python frames stand for everything below),
     * so unwind only about as deep as that was last time. */
    unsigned hint = tls_eval_at ? tls_eval_at + 3 : 32; /* each frame walked costs ~15 ns */
    unsigned d = hint < depth ? hint : depth;
    /* our own frames above the caller are few here (a CUPTI callback has
     * many: its first attempt falls short and is retried in full) */
    unsigned n = gl_stack_capture_slack(ips, d, 8, truncated);
    int at = find_eval(ips, n);
    if (at < 0 && *truncated && d < depth) {
        n = gl_stack_capture(ips, depth, truncated);
        at = find_eval(ips, n);
    }
    if (at >= 0) {
        n = (unsigned)at + 1;
        tls_eval_at = (unsigned)at + 1 > tls_eval_at ? (unsigned)at + 1 : tls_eval_at - 1;
    }
    unsigned py;
    int py_truncated;
    n = gl_py_merge(ips, n, cap, &py, &py_truncated);
    if (py)
        *truncated = py_truncated;
    return n;
}

/* ---- set-up ---------------------------------------------------------------- */

static pthread_mutex_t probe_lock = PTHREAD_MUTEX_INITIALIZER;

static void *sym(const char *name)
{
    return gl_real_dlsym ? gl_real_dlsym(RTLD_DEFAULT, name) : NULL;
}

static void *map_zero(size_t bytes)
{
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    return p == MAP_FAILED ? NULL : p;
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
    slots = map_zero(CODE_SLOTS * sizeof *slots);
    ents = map_zero(CODE_MAX * sizeof *ents);
    lines = map_zero(LINE_SLOTS * sizeof *lines);
    arena = map_zero(ARENA_SIZE);
    if (!slots || !ents || !lines || !arena)
        return -1;
    arena[0] = '?';
    arena_used = 2;
    vt = l;
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

const char *gl_py_version(void)
{
    return gl_py_ready() ? version : NULL;
}

int gl_py_describe(uint64_t ip, const char **file, const char **func, int *line)
{
    if (!(ip & GL_PYFRAME_BIT) || !gl_py_ready())
        return -1;
    uint32_t id = (uint32_t)((ip >> 32) & 0x3FFFFFFF);
    if (id >= CODE_MAX)
        return -1;
    const struct code_ent *e = &ents[id];
    *file = id ? arena + e->file_off : "?";
    *func = id ? arena + e->name_off : "?";
    *line = (int)(uint32_t)ip;
    return 0;
}

void gl_py_after_fork(void)
{
    atomic_flag_clear(&add_lock);
}
