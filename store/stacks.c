/* stacks.c — see stacks.h. */
#include "stacks.h"

#include <stdlib.h>
#include <string.h>

struct gl_stack_ent {
    uint64_t hash;
    int64_t id;
    size_t off; /* in ips[] */
    uint32_t depth;
};

int gl_stacks_open(struct gl_stacks *s, struct gl_wdb *w, int symbolize)
{
    memset(s, 0, sizeof *s);
    s->w = w;
    s->next_frame = s->next_stack = s->next_module = 1;
    gl_symbolizer_init(&s->sym, symbolize);
    gl_u64map_init(&s->frames);
    gl_u64map_init(&s->index);
    char many[64 + GL_STACK_ENTRY_BATCH * sizeof ",(?,?,?)"] = "INSERT INTO stack_entries(stack_id, depth, frame_id) VALUES";
    for (int i = 0; i < GL_STACK_ENTRY_BATCH; i++)
        strcat(many, i ? ",(?,?,?)" : "(?,?,?)");
    return gl_wdb_prepare(w, &s->ins_entries, many) || gl_wdb_prepare(w, &s->ins_stack, "INSERT INTO stacks(id, hash, depth, truncated) VALUES(?,?,?,?)") ||
           gl_wdb_prepare(w, &s->ins_entry, "INSERT INTO stack_entries(stack_id, depth, frame_id) VALUES(?,?,?)") ||
           gl_wdb_prepare(w, &s->ins_frame,
                          "INSERT INTO frames(id, ip, module_id, rel, symbol, sym_offset) VALUES(?,?,?,?,?,?)") ||
           gl_wdb_prepare(w, &s->ins_pyframe, "INSERT INTO frames(id, symbol, file, line, python) VALUES(?,?,?,?,1)") ||
           gl_wdb_prepare(w, &s->ins_module, "INSERT INTO modules(id, path, base, size, build_id) VALUES(?,?,?,?,?)");
}

void gl_stacks_close(struct gl_stacks *s)
{
    sqlite3_stmt **const sts[] = {&s->ins_stack,   &s->ins_entry,  &s->ins_frame,
                                  &s->ins_pyframe, &s->ins_module, &s->ins_entries};
    gl_wdb_finalize(sts, 6);
    gl_symbolizer_free(&s->sym);
    gl_u64map_free(&s->frames);
    gl_u64map_free(&s->index);
    free(s->ents);
    free(s->ips);
}

static int64_t module_id(struct gl_stacks *s, struct gl_module *m)
{
    if (!m)
        return 0;
    if (m->db_id)
        return m->db_id;
    if (!m->syms_tried) {
        m->syms_tried = 1;
        gl_elfsyms_load(&m->syms, m->path);
    }
    m->db_id = s->next_module++;
    sqlite3_bind_int64(s->ins_module, 1, m->db_id);
    sqlite3_bind_text(s->ins_module, 2, m->path, -1, SQLITE_STATIC);
    sqlite3_bind_int64(s->ins_module, 3, (sqlite3_int64)m->lo);
    sqlite3_bind_int64(s->ins_module, 4, (sqlite3_int64)(m->hi - m->lo));
    if (m->syms.build_id[0])
        sqlite3_bind_text(s->ins_module, 5, m->syms.build_id, -1, SQLITE_STATIC);
    else
        sqlite3_bind_null(s->ins_module, 5);
    gl_wdb_step(s->w, s->ins_module, "writing a module");
    return m->db_id;
}

/* Frames of the CUDA runtime above the program's own frame, when the
 * driver call is what we caught (CUDA-graph calls are recorded at the
 * driver's entry points, which the runtime calls): the dynamic runtime's
 * (any frame in libcudart.so*), and a runtime linked statically into the
 * program (nvcc's default), whose internals are named libcudart_static_<hash>
 * and its entry points cudaMalloc & co. They are cut off so that depth 0 is
 * the caller of the CUDA API. */
static int is_runtime_internal(const char *sym, const struct gl_module *m)
{
    const char *base = m && m->path ? strrchr(m->path, '/') : NULL;
    if (base && !strncmp(base + 1, "libcudart.so", 12))
        return 1;
    return sym && (!strncmp(sym, "libcudart_static_", 17) || !strncmp(sym, "cudaMalloc", 10) ||
                   !strncmp(sym, "cudaFree", 8) || !strncmp(sym, "cudaHostAlloc", 13) ||
                   !strncmp(sym, "cudaDeviceReset", 15) || !strncmp(sym, "cudaMemPool", 11) ||
                   !strncmp(sym, "cudaGraph", 9) || !strncmp(sym, "cudaStream", 10) ||
                   !strncmp(sym, "cudaDeviceGraphMemTrim", 22));
}

#define FRAME_INTERNAL (1ULL << 62)

/* Frame id of ip, with FRAME_INTERNAL set for static-runtime frames. */
static uint64_t frame_id(struct gl_stacks *s, uintptr_t ip)
{
    uint64_t id;
    if (gl_u64map_get(&s->frames, ip, &id))
        return id;
    const char *pyfile, *pyfunc;
    int pyline;
    if ((ip & GL_PYFRAME_BIT) && s->py_describe && s->py_describe(ip, &pyfile, &pyfunc, &pyline) == 0) {
        id = (uint64_t)s->next_frame++;
        sqlite3_bind_int64(s->ins_pyframe, 1, (sqlite3_int64)id);
        sqlite3_bind_text(s->ins_pyframe, 2, pyfunc, -1, SQLITE_TRANSIENT);
        sqlite3_bind_text(s->ins_pyframe, 3, pyfile, -1, SQLITE_TRANSIENT);
        sqlite3_bind_int(s->ins_pyframe, 4, pyline);
        gl_wdb_step(s->w, s->ins_pyframe, "writing a Python frame");
        gl_u64map_put(&s->frames, ip, id);
        return id;
    }
    struct gl_frame_info fi;
    gl_symbolize(&s->sym, ip, &fi);
    id = (uint64_t)s->next_frame++;
    int64_t mid = module_id(s, fi.module);
    sqlite3_bind_int64(s->ins_frame, 1, (sqlite3_int64)id);
    sqlite3_bind_int64(s->ins_frame, 2, (sqlite3_int64)ip);
    if (mid)
        sqlite3_bind_int64(s->ins_frame, 3, mid);
    else
        sqlite3_bind_null(s->ins_frame, 3);
    sqlite3_bind_int64(s->ins_frame, 4, (sqlite3_int64)fi.rel);
    if (fi.symbol) {
        sqlite3_bind_text(s->ins_frame, 5, fi.symbol, -1, SQLITE_TRANSIENT);
        sqlite3_bind_int64(s->ins_frame, 6, (sqlite3_int64)fi.sym_offset);
    } else {
        sqlite3_bind_null(s->ins_frame, 5);
        sqlite3_bind_null(s->ins_frame, 6);
    }
    gl_wdb_step(s->w, s->ins_frame, "writing a frame");
    if (is_runtime_internal(fi.symbol, fi.module))
        id |= FRAME_INTERNAL;
    free(fi.symbol);
    gl_u64map_put(&s->frames, ip, id);
    return id;
}

/* One multiply per frame (rustc's FxHash step) and a full mix at the end:
 * a 40-frame stack is hashed for every event, and a collision only costs a
 * compare (gl_stacks_id checks the frames). */
static uint64_t hash_ips(const uintptr_t *ips, unsigned n)
{
    uint64_t h = n;
    for (unsigned i = 0; i < n; i++)
        h = (((h << 5) | (h >> 59)) ^ ips[i]) * 0x517cc1b727220a95ULL;
    h = gl_hash64(h);
    return h ? h : 1;
}

/* The stack_entries rows of stack id: GL_STACK_ENTRY_BATCH to a statement,
 * the rest one by one. Every frame has its id already (gl_stacks_id). */
static int write_entries(struct gl_stacks *s, int64_t id, const uintptr_t *ips, unsigned n)
{
    unsigned i = 0;
    int rc = 0;
    for (; i + GL_STACK_ENTRY_BATCH <= n && !rc; i += GL_STACK_ENTRY_BATCH) {
        for (int k = 0; k < GL_STACK_ENTRY_BATCH; k++) {
            sqlite3_bind_int64(s->ins_entries, 3 * k + 1, id);
            sqlite3_bind_int(s->ins_entries, 3 * k + 2, (int)i + k);
            sqlite3_bind_int64(s->ins_entries, 3 * k + 3, (sqlite3_int64)(frame_id(s, ips[i + k]) & ~FRAME_INTERNAL));
        }
        rc = gl_wdb_step(s->w, s->ins_entries, "writing a stack's entries");
    }
    for (; i < n && !rc; i++) {
        sqlite3_bind_int64(s->ins_entry, 1, id);
        sqlite3_bind_int(s->ins_entry, 2, (int)i);
        sqlite3_bind_int64(s->ins_entry, 3, (sqlite3_int64)(frame_id(s, ips[i]) & ~FRAME_INTERNAL));
        rc = gl_wdb_step(s->w, s->ins_entry, "writing a stack entry");
    }
    return rc;
}

int64_t gl_stacks_id(struct gl_stacks *s, const struct gl_event *ev)
{
    unsigned n = ev->depth;
    if (n == 0)
        return 0;
    /* the stack of the event before, again (a loop's allocations) */
    if (s->last_id && s->ents[s->last].depth == n &&
        !memcmp(s->ips + s->ents[s->last].off, ev->ips, n * sizeof(uintptr_t)))
        return s->last_id;
    uint64_t h = hash_ips(ev->ips, n), key = h, idx;
    while (gl_u64map_get(&s->index, key, &idx)) {
        const struct gl_stack_ent *e = &s->ents[idx];
        if (e->depth == n && !memcmp(s->ips + e->off, ev->ips, n * sizeof(uintptr_t))) {
            s->last = idx;
            return s->last_id = e->id;
        }
        key++; /* 64-bit hash collision: probe the next key */
    }
    if (s->nents == s->ents_cap) {
        size_t nc = s->ents_cap ? s->ents_cap * 2 : 1024;
        struct gl_stack_ent *ne = realloc(s->ents, nc * sizeof *ne);
        if (!ne)
            return 0;
        s->ents = ne;
        s->ents_cap = nc;
    }
    if (s->nips + n > s->ips_cap) {
        size_t nc = s->ips_cap ? s->ips_cap * 2 : 16384;
        while (nc < s->nips + n)
            nc *= 2;
        uintptr_t *ni = realloc(s->ips, nc * sizeof *ni);
        if (!ni)
            return 0;
        s->ips = ni;
        s->ips_cap = nc;
    }
    struct gl_stack_ent *e = &s->ents[s->nents];
    e->hash = h;
    e->id = s->next_stack++;
    e->off = s->nips;
    e->depth = n;
    memcpy(s->ips + s->nips, ev->ips, n * sizeof(uintptr_t));
    s->nips += n;
    s->last = s->nents;
    s->last_id = e->id;
    gl_u64map_put(&s->index, key, s->nents++);

    unsigned skip = 0; /* leading static-runtime frames (kept if that is all) */
    while (skip + 1 < n && (frame_id(s, ev->ips[skip]) & FRAME_INTERNAL))
        skip++;
    sqlite3_bind_int64(s->ins_stack, 1, e->id);
    sqlite3_bind_int64(s->ins_stack, 2, (sqlite3_int64)h);
    sqlite3_bind_int(s->ins_stack, 3, (int)(n - skip));
    sqlite3_bind_int(s->ins_stack, 4, (ev->flags & GL_EVF_TRUNCATED) ? 1 : 0);
    gl_wdb_step(s->w, s->ins_stack, "writing a stack");
    write_entries(s, e->id, ev->ips + skip, n - skip); /* a failure shows at the next commit */
    return e->id;
}
