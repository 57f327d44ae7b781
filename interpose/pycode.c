/* pycode.c — the names of Python frames (see pyint.h, pyframes.h).
 *
 * Three tables, mapped once when CPython is found, never freed:
 *   code slots  code object address -> code id (lock-free lookup, checked
 *               against the code object's file/name/first line so that a
 *               reused address is never taken for the old code)
 *   code table  code id -> copies of co_filename and co_qualname (UTF-8),
 *               append-only: the writer reads it without a lock
 *   line cache  (code id, bytecode offset) -> line, one packed word a slot
 * New code objects are added under a spinlock that only producers take. */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>

#include "pyframes.h"
#include "pyint.h"
#include "threadmem.h"

const struct pyvt *gl_pyvt;
static int (*f_addr2line)(void *code, int addr);

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
            const unsigned char *d = (const unsigned char *)(o + (uintptr_t)(ascii ? gl_pyvt->u_ascii : gl_pyvt->u_compact));
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

static uint32_t code_id(uintptr_t code, uintptr_t file, uintptr_t name, int32_t first)
{
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
        return rd_i32(code + (uintptr_t)gl_pyvt->co_first);
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

/* ---- the per-thread memo ------------------------------------------------
 * A thread allocating in a loop names the same few (code, offset) pairs
 * again and again; the shared tables above are large (their slots are
 * rarely in the cache when the program's own work runs between events).
 * So each thread keeps its last 64 answers in a page of its own, checked
 * against the code object exactly as the shared table is (address, file,
 * name, first line): a hit costs one line that the thread touched last
 * time. */
#define MEMO_ENTS 64

struct memo_ent {
    uintptr_t code, file, name, frame;
    int64_t addr;
    int32_t first;
};

static __thread struct memo_ent *tls_memo __attribute__((tls_model("initial-exec")));
static __thread int tls_memo_state __attribute__((tls_model("initial-exec"))); /* 0 not yet, 1 mapped, -1 none */
static struct gl_threadmem memo_pool = GL_THREADMEM_INIT(MEMO_ENTS * sizeof(struct memo_ent));

static void memo_free(void *p)
{
    tls_memo = NULL;
    tls_memo_state = -1; /* a later destructor's event goes without */
    gl_threadmem_put(&memo_pool, p);
}

static struct memo_ent *memo(void)
{
    if (tls_memo_state == 0) {
        tls_memo_state = -1;
        tls_memo = gl_threadmem_get(&memo_pool, memo_free);
        if (tls_memo)
            tls_memo_state = 1;
    }
    return tls_memo;
}

uintptr_t gl_pycode_frame(uintptr_t code, int64_t addr)
{
    uintptr_t file = rd_ptr(code + (uintptr_t)gl_pyvt->co_file);
    uintptr_t name = rd_ptr(code + (uintptr_t)gl_pyvt->co_name);
    int32_t first = rd_i32(code + (uintptr_t)gl_pyvt->co_first);
    struct memo_ent *m = tls_memo ? tls_memo : memo();
    struct memo_ent *e = NULL;
    if (m) {
        e = &m[(unsigned)mix(code ^ ((uint64_t)addr << 40)) & (MEMO_ENTS - 1)];
        if (e->code == code && e->addr == addr && e->file == file && e->name == name && e->first == first)
            return e->frame;
    }
    uint32_t id = code_id(code, file, name, first);
    int line = line_of(id, code, addr);
    uintptr_t frame = (uintptr_t)(GL_PYFRAME_BIT | ((uint64_t)id << 32) | (uint32_t)line);
    if (e && id) {
        e->code = code;
        e->addr = addr;
        e->file = file;
        e->name = name;
        e->first = first;
        e->frame = frame;
    }
    return frame;
}

static void *map_zero(size_t bytes)
{
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

int gl_pycode_init(int (*addr2line)(void *code, int addr))
{
    f_addr2line = addr2line;
    slots = map_zero(CODE_SLOTS * sizeof *slots);
    ents = map_zero(CODE_MAX * sizeof *ents);
    lines = map_zero(LINE_SLOTS * sizeof *lines);
    arena = map_zero(ARENA_SIZE);
    if (!slots || !ents || !lines || !arena)
        return -1;
    arena[0] = '?';
    arena_used = 2;
    return 0;
}

int gl_pycode_names(uint32_t id, const char **file, const char **func)
{
    if (id >= CODE_MAX)
        return -1;
    const struct code_ent *e = &ents[id];
    *file = id ? arena + e->file_off : "?";
    *func = id ? arena + e->name_off : "?";
    return 0;
}

void gl_pycode_after_fork(void)
{
    atomic_flag_clear(&add_lock);
}
