/* store.c — writing events into SQLite (see store.h). */
#include "store.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schema.h"
#include "symbolize.h"
#include "u64map.h"

struct live {
    uint64_t seq, size;
    int32_t device;
    uint8_t kind;
};

struct stack_ent {
    uint64_t hash;
    int64_t id;
    size_t off;
    uint32_t depth;
};

struct dev_stats {
    int seen, dirty;
    uint64_t live, peak, peak_ns, peak_seq, allocs, frees;
};

#define ROW_COLS 16
#define BATCH_ROWS 32

/* An event_log row waiting in the batch: values, and which are NULL. */
struct row {
    int64_t v[ROW_COLS];
    uint16_t null;
};

struct gl_store {
    sqlite3 *db;
    sqlite3_stmt *ins_batch; /* BATCH_ROWS rows in one INSERT: far fewer VM steps per row */
    struct row batch[BATCH_ROWS];
    int nbatch;
    sqlite3_stmt *ins_pool_sample, *ins_dev_sample, *ins_annotation;
    struct gl_u64map range_of_tid;  /* tid -> seq of its innermost open range */
    struct gl_u64map range_parent;  /* open range seq -> the range it is inside (0: none) */
    uint64_t process_range;         /* latest open range of any thread */
    sqlite3_stmt *ins_event, *ins_stack, *ins_entry, *ins_frame, *ins_pyframe, *ins_module, *upd_run, *fin_run,
        *put_dev;
    gl_py_describe_fn py_describe;  /* Python pseudo-frames (bit 63) -> names */
    int in_txn;
    char err[512];
    uint64_t next_seq, events, unmatched_frees;

    struct gl_symbolizer sym;
    struct gl_u64map frames;        /* ip -> frame id */
    int64_t next_frame, next_stack, next_module;

    struct gl_u64map stack_index;   /* probe key -> index in stacks[] */
    struct stack_ent *stacks;
    size_t nstacks, stacks_cap;
    uintptr_t *ips;                 /* arena of every distinct stack's ips */
    size_t nips, ips_cap;

    struct gl_u64map live_index[GL_NSPACES]; /* addr/handle -> index in lives[] */
    struct live *lives;
    size_t nlives, lives_cap;
    uint64_t *free_lives;
    size_t nfree_lives, free_lives_cap;

    struct dev_stats dev[GL_MAX_DEVICES + 1]; /* index device + 1 (-1 = unknown) */
};

static int fail(struct gl_store *s, const char *what)
{
    snprintf(s->err, sizeof s->err, "%s: %s", what, s->db ? sqlite3_errmsg(s->db) : "no database");
    return -1;
}

const char *gl_store_error(struct gl_store *s)
{
    return s->err;
}

uint64_t gl_store_event_count(struct gl_store *s)
{
    return s->events;
}

uint64_t gl_store_peak_bytes(struct gl_store *s)
{
    uint64_t total = 0;
    for (int i = 0; i <= GL_MAX_DEVICES; i++)
        total += s->dev[i].peak;
    return total;
}

static int prepare(struct gl_store *s, sqlite3_stmt **st, const char *sql)
{
    if (sqlite3_prepare_v3(s->db, sql, -1, SQLITE_PREPARE_PERSISTENT, st, NULL) != SQLITE_OK)
        return fail(s, "preparing a statement");
    return 0;
}

static int exec(struct gl_store *s, const char *sql)
{
    if (sqlite3_exec(s->db, sql, NULL, NULL, NULL) != SQLITE_OK)
        return fail(s, sql);
    return 0;
}

static int step_done(struct gl_store *s, sqlite3_stmt *st, const char *what)
{
    int rc = sqlite3_step(st);
    sqlite3_reset(st);
    if (rc != SQLITE_DONE)
        return fail(s, what);
    return 0;
}

struct gl_store *gl_store_open(const char *path, const struct gl_run_info *info, int symbolize, char *err,
                               size_t errsz)
{
    struct gl_store *s = calloc(1, sizeof *s);
    if (!s) {
        snprintf(err, errsz, "out of memory");
        return NULL;
    }
    s->next_seq = s->next_frame = s->next_stack = s->next_module = 1;
    gl_symbolizer_init(&s->sym, symbolize);
    gl_u64map_init(&s->frames);
    gl_u64map_init(&s->stack_index);
    gl_u64map_init(&s->range_of_tid);
    gl_u64map_init(&s->range_parent);
    for (int i = 0; i < GL_NSPACES; i++)
        gl_u64map_init(&s->live_index[i]);
    int rc = sqlite3_open_v2(path, &s->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL);
    char *msg = NULL;
    if (rc != SQLITE_OK) {
        snprintf(err, errsz, "cannot open %s: %s", path, s->db ? sqlite3_errmsg(s->db) : "out of memory");
        gl_store_close(s);
        return NULL;
    }
    if (exec(s, "PRAGMA journal_mode=WAL; PRAGMA synchronous=OFF; PRAGMA temp_store=MEMORY;"
                "PRAGMA cache_size=-16000;") ||
        exec(s, "BEGIN") || gl_schema_create(s->db, &msg) != SQLITE_OK) {
        snprintf(err, errsz, "cannot create the schema in %s: %s", path, msg ? msg : s->err);
        sqlite3_free(msg);
        gl_store_close(s);
        return NULL;
    }
    char batch_sql[4096] = "INSERT INTO event_log(seq, ts_ns, tid, op, api, kind, device, stream, pool, addr,"
                           " size, result, stack_id, ref_seq, aux, range_seq) VALUES";
    for (int i = 0; i < BATCH_ROWS; i++)
        strcat(batch_sql, i ? ",(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)" : "(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
    if (prepare(s, &s->ins_batch, batch_sql) ||
        prepare(s, &s->ins_event,
                "INSERT INTO event_log(seq, ts_ns, tid, op, api, kind, device, stream, pool, addr, size,"
                " result, stack_id, ref_seq, aux, range_seq) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)") ||
        prepare(s, &s->ins_annotation,
                "INSERT INTO annotations(seq, ts_ns, tid, op, label, parent_seq) VALUES(?,?,?,?,?,?)") ||
        prepare(s, &s->ins_stack, "INSERT INTO stacks(id, hash, depth, truncated) VALUES(?,?,?,?)") ||
        prepare(s, &s->ins_pool_sample,
                "INSERT INTO pool_samples(ts_ns, device, pool, reserved, used) VALUES(?,?,?,?,?)") ||
        prepare(s, &s->ins_dev_sample, "INSERT INTO device_samples(ts_ns, device, free, total) VALUES(?,?,?,?)") ||
        prepare(s, &s->ins_entry, "INSERT INTO stack_entries(stack_id, depth, frame_id) VALUES(?,?,?)") ||
        prepare(s, &s->ins_frame,
                "INSERT INTO frames(id, ip, module_id, rel, symbol, sym_offset) VALUES(?,?,?,?,?,?)") ||
        prepare(s, &s->ins_pyframe,
                "INSERT INTO frames(id, symbol, file, line, python) VALUES(?,?,?,?,1)") ||
        prepare(s, &s->ins_module, "INSERT INTO modules(id, path, base, size, build_id) VALUES(?,?,?,?,?)") ||
        prepare(s, &s->upd_run,
                "UPDATE run SET event_count=?, dropped_events=?, truncated_stacks=?, unmatched_frees=?") ||
        prepare(s, &s->fin_run, "UPDATE run SET end_ns=?, exit_code=?, exit_signal=?") ||
        prepare(s, &s->put_dev,
                "INSERT OR REPLACE INTO device_stats(device, peak_bytes, peak_ns, peak_seq, live_bytes,"
                " alloc_count, free_count) VALUES(?,?,?,?,?,?,?)")) {
        snprintf(err, errsz, "%s", s->err);
        gl_store_close(s);
        return NULL;
    }
    sqlite3_stmt *st = NULL;
    if (prepare(s, &st,
                "INSERT INTO run(pid, ppid, hostname, rank, cmdline, start_ns, start_unix_ns, stack_depth,"
                " gpuledger_version, schema_version) VALUES(?,?,?,?,?,?,?,?,?,?)") == 0) {
        sqlite3_bind_int64(st, 1, info->pid);
        sqlite3_bind_int64(st, 2, info->ppid);
        sqlite3_bind_text(st, 3, info->hostname, -1, SQLITE_TRANSIENT);
        sqlite3_bind_text(st, 4, info->rank, -1, SQLITE_TRANSIENT);
        sqlite3_bind_text(st, 5, info->cmdline, -1, SQLITE_TRANSIENT);
        sqlite3_bind_int64(st, 6, (sqlite3_int64)info->start_ns);
        sqlite3_bind_int64(st, 7, (sqlite3_int64)info->start_unix_ns);
        sqlite3_bind_int64(st, 8, info->stack_depth);
        sqlite3_bind_text(st, 9, info->version, -1, SQLITE_TRANSIENT);
        sqlite3_bind_int(st, 10, GL_SCHEMA_VERSION);
        rc = step_done(s, st, "writing the run row");
        sqlite3_finalize(st);
    } else {
        rc = -1;
    }
    if (rc || exec(s, "COMMIT")) {
        snprintf(err, errsz, "cannot initialise %s: %s", path, s->err);
        gl_store_close(s);
        return NULL;
    }
    return s;
}

int gl_store_meta(struct gl_store *s, const char *key, const char *value)
{
    sqlite3_stmt *st = NULL;
    if (prepare(s, &st, "INSERT OR REPLACE INTO meta(key, value) VALUES(?,?)"))
        return -1;
    sqlite3_bind_text(st, 1, key, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 2, value, -1, SQLITE_TRANSIENT);
    int rc = step_done(s, st, "writing meta");
    sqlite3_finalize(st);
    return rc;
}

static int begin(struct gl_store *s)
{
    if (s->in_txn)
        return 0;
    if (exec(s, "BEGIN"))
        return -1;
    s->in_txn = 1;
    return 0;
}

/* ---- stacks and frames ------------------------------------------------ */

static int64_t module_id(struct gl_store *s, struct gl_module *m)
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
    step_done(s, s->ins_module, "writing a module");
    return m->db_id;
}

/* Frames of a CUDA runtime linked statically into the program (nvcc's
 * default): its internals are named libcudart_static_<hash>, its entry
 * points cudaMalloc & co. They sit above the program's own frame when the
 * driver call is what we caught, and are cut off so that depth 0 is the
 * caller of the CUDA API, as with the dynamic runtime. */
static int is_runtime_internal(const char *sym)
{
    return sym && (!strncmp(sym, "libcudart_static_", 17) || !strncmp(sym, "cudaMalloc", 10) ||
                   !strncmp(sym, "cudaFree", 8) || !strncmp(sym, "cudaHostAlloc", 13) ||
                   !strncmp(sym, "cudaDeviceReset", 15) || !strncmp(sym, "cudaMemPool", 11));
}

#define FRAME_INTERNAL (1ULL << 62)

/* Frame id of ip, with FRAME_INTERNAL set for static-runtime frames. */
static uint64_t frame_id(struct gl_store *s, uintptr_t ip)
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
        step_done(s, s->ins_pyframe, "writing a Python frame");
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
    step_done(s, s->ins_frame, "writing a frame");
    if (is_runtime_internal(fi.symbol))
        id |= FRAME_INTERNAL;
    free(fi.symbol);
    gl_u64map_put(&s->frames, ip, id);
    return id;
}

static uint64_t hash_ips(const uintptr_t *ips, unsigned n)
{
    uint64_t h = 0x9e3779b97f4a7c15ULL ^ n;
    for (unsigned i = 0; i < n; i++)
        h = gl_hash64(h ^ ips[i]) + i;
    return h ? h : 1;
}

static int64_t stack_id(struct gl_store *s, const struct gl_event *ev)
{
    unsigned n = ev->depth;
    if (n == 0)
        return 0;
    uint64_t h = hash_ips(ev->ips, n), key = h, idx;
    while (gl_u64map_get(&s->stack_index, key, &idx)) {
        const struct stack_ent *e = &s->stacks[idx];
        if (e->depth == n && !memcmp(s->ips + e->off, ev->ips, n * sizeof(uintptr_t)))
            return e->id;
        key++; /* 64-bit hash collision: probe the next key */
    }
    if (s->nstacks == s->stacks_cap) {
        size_t nc = s->stacks_cap ? s->stacks_cap * 2 : 1024;
        struct stack_ent *ns = realloc(s->stacks, nc * sizeof *ns);
        if (!ns)
            return 0;
        s->stacks = ns;
        s->stacks_cap = nc;
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
    struct stack_ent *e = &s->stacks[s->nstacks];
    e->hash = h;
    e->id = s->next_stack++;
    e->off = s->nips;
    e->depth = n;
    memcpy(s->ips + s->nips, ev->ips, n * sizeof(uintptr_t));
    s->nips += n;
    gl_u64map_put(&s->stack_index, key, s->nstacks++);

    unsigned skip = 0; /* leading static-runtime frames (kept if that is all) */
    while (skip + 1 < n && (frame_id(s, ev->ips[skip]) & FRAME_INTERNAL))
        skip++;
    sqlite3_bind_int64(s->ins_stack, 1, e->id);
    sqlite3_bind_int64(s->ins_stack, 2, (sqlite3_int64)h);
    sqlite3_bind_int(s->ins_stack, 3, (int)(n - skip));
    sqlite3_bind_int(s->ins_stack, 4, (ev->flags & GL_EVF_TRUNCATED) ? 1 : 0);
    step_done(s, s->ins_stack, "writing a stack");
    for (unsigned i = skip; i < n; i++) {
        uint64_t fid = frame_id(s, ev->ips[i]) & ~FRAME_INTERNAL;
        sqlite3_bind_int64(s->ins_entry, 1, e->id);
        sqlite3_bind_int(s->ins_entry, 2, (int)(i - skip));
        sqlite3_bind_int64(s->ins_entry, 3, (sqlite3_int64)fid);
        step_done(s, s->ins_entry, "writing a stack entry");
    }
    return e->id;
}

/* ---- live allocations ------------------------------------------------- */

static struct dev_stats *dev_of(struct gl_store *s, int device)
{
    if (device < -1 || device >= GL_MAX_DEVICES)
        device = -1;
    struct dev_stats *d = &s->dev[device + 1];
    d->seen = 1;
    d->dirty = 1;
    return d;
}

/* Put a slot of lives[] on the free list (if that list cannot grow, the
 * slot is simply not reused). */
static void recycle(struct gl_store *s, uint64_t idx)
{
    if (s->nfree_lives == s->free_lives_cap) {
        size_t nc = s->free_lives_cap ? s->free_lives_cap * 2 : 256;
        uint64_t *nf = realloc(s->free_lives, nc * sizeof *nf);
        if (!nf)
            return;
        s->free_lives = nf;
        s->free_lives_cap = nc;
    }
    s->free_lives[s->nfree_lives++] = idx;
}

static void live_add(struct gl_store *s, int space, uint64_t key, uint64_t seq, const struct gl_event *ev)
{
    uint64_t idx;
    if (s->nfree_lives) {
        idx = s->free_lives[--s->nfree_lives];
    } else {
        if (s->nlives == s->lives_cap) {
            size_t nc = s->lives_cap ? s->lives_cap * 2 : 1024;
            struct live *nl = realloc(s->lives, nc * sizeof *nl);
            if (!nl)
                return;
            s->lives = nl;
            s->lives_cap = nc;
        }
        idx = s->nlives++;
    }
    uint64_t old;
    if (gl_u64map_get(&s->live_index[space], key, &old)) {
        /* Its free was never seen (dropped, or made before we started).
         * Forget the old one; it is no longer live. */
        struct live *o = &s->lives[old];
        if (gl_kind_counts_on_device(o->kind))
            dev_of(s, o->device)->live -= o->size;
        recycle(s, old);
    }
    struct live *l = &s->lives[idx];
    l->seq = seq;
    l->size = ev->size;
    l->device = ev->device;
    l->kind = ev->kind;
    gl_u64map_put(&s->live_index[space], key, idx);
    struct dev_stats *d = dev_of(s, ev->device);
    d->allocs++;
    if (gl_kind_counts_on_device(ev->kind)) {
        d->live += ev->size;
        if (d->live > d->peak) {
            d->peak = d->live;
            d->peak_ns = ev->ts_ns;
            d->peak_seq = seq;
        }
    }
}

/* Remove a live entry; returns 1 and fills *out if it was live. */
static int live_take(struct gl_store *s, int space, uint64_t key, struct live *out)
{
    uint64_t idx;
    if (!gl_u64map_get(&s->live_index[space], key, &idx))
        return 0;
    gl_u64map_del(&s->live_index[space], key);
    *out = s->lives[idx];
    recycle(s, idx);
    struct dev_stats *d = dev_of(s, out->device);
    d->frees++;
    if (gl_kind_counts_on_device(out->kind))
        d->live -= out->size;
    return 1;
}

/* ---- rows --------------------------------------------------------------- */

static void bind_row(sqlite3_stmt *st, int first, const struct row *r)
{
    for (int c = 0; c < ROW_COLS; c++) {
        if (r->null & (1u << c))
            sqlite3_bind_null(st, first + c);
        else
            sqlite3_bind_int64(st, first + c, r->v[c]);
    }
}

/* Write the batched rows: one statement for a full batch, else row by row. */
static int flush_rows(struct gl_store *s)
{
    int rc = 0;
    if (s->nbatch == BATCH_ROWS) {
        for (int i = 0; i < BATCH_ROWS; i++)
            bind_row(s->ins_batch, 1 + i * ROW_COLS, &s->batch[i]);
        rc = step_done(s, s->ins_batch, "writing events");
    } else {
        for (int i = 0; i < s->nbatch && !rc; i++) {
            bind_row(s->ins_event, 1, &s->batch[i]);
            rc = step_done(s, s->ins_event, "writing an event");
        }
    }
    s->nbatch = 0;
    return rc;
}

static int insert_row(struct gl_store *s, const struct gl_event *ev, int op, int kind, uint64_t size,
                      int64_t sid, uint64_t ref, uint64_t *seq_out)
{
    uint64_t seq = s->next_seq++;
    struct row *r = &s->batch[s->nbatch++];
    r->v[0] = (int64_t)seq;
    r->v[1] = (int64_t)ev->ts_ns;
    r->v[2] = ev->tid;
    r->v[3] = op;
    r->v[4] = ev->api;
    r->v[5] = kind;
    r->v[6] = ev->device;
    r->v[7] = (int64_t)ev->stream;
    r->v[8] = (int64_t)ev->pool;
    r->v[9] = (int64_t)ev->addr;
    r->v[10] = (int64_t)size;
    r->v[11] = ev->result;
    r->v[12] = sid;
    r->v[13] = (int64_t)ref;
    r->v[14] = (int64_t)ev->aux;
    uint64_t range = 0;
    if (!gl_u64map_get(&s->range_of_tid, (uint64_t)(uint32_t)ev->tid, &range) || !range)
        range = s->process_range;
    r->v[15] = (int64_t)range;
    r->null = (uint16_t)((sid ? 0 : 1u << 12) | (ref ? 0 : 1u << 13) | (ev->aux ? 0 : 1u << 14) |
                         (range ? 0 : 1u << 15));
    s->events++;
    if (seq_out)
        *seq_out = seq;
    return s->nbatch == BATCH_ROWS ? flush_rows(s) : 0;
}

/* cuMemUnmap may cover several mappings: end every one inside the range. */
static int unmap_range(struct gl_store *s, const struct gl_event *ev, int64_t sid)
{
    int rc = 0, first = 1;
    struct live l;
    if (live_take(s, GL_SPACE_MAP, ev->addr, &l)) {
        rc |= insert_row(s, ev, GL_OP_UNMAP, GL_KIND_MAPPING, l.size, sid, l.seq, NULL);
        first = 0;
    }
    struct gl_u64map *m = &s->live_index[GL_SPACE_MAP];
    for (size_t i = 0; i < m->cap && ev->size; i++) {
        uint64_t k = m->keys[i];
        if (k == 0 || k == UINT64_MAX || k < ev->addr || k >= ev->addr + ev->size)
            continue;
        if (live_take(s, GL_SPACE_MAP, k, &l)) {
            struct gl_event e2 = *ev;
            e2.addr = k;
            rc |= insert_row(s, &e2, GL_OP_UNMAP, GL_KIND_MAPPING, l.size, sid, l.seq, NULL);
            first = 0; /* deletion leaves a tombstone: iteration stays valid */
        }
    }
    if (first) {
        s->unmatched_frees++;
        rc |= insert_row(s, ev, GL_OP_UNMAP, GL_KIND_MAPPING, ev->size, sid, 0, NULL);
    }
    return rc;
}

/* cudaDeviceReset frees everything the device still holds. */
static int reset_device(struct gl_store *s, const struct gl_event *ev, int64_t sid)
{
    int rc = 0;
    for (int space = 0; space < GL_NSPACES; space++) {
        struct gl_u64map *m = &s->live_index[space];
        for (size_t i = 0; i < m->cap; i++) {
            uint64_t k = m->keys[i];
            if (k == 0 || k == UINT64_MAX)
                continue;
            struct live l = s->lives[m->vals[i]];
            if (ev->device >= 0 && l.device != ev->device)
                continue;
            live_take(s, space, k, &l);
            struct gl_event e2 = *ev;
            e2.addr = k;
            rc |= insert_row(s, &e2, gl_space_free_op(space), l.kind, l.size, sid, l.seq, NULL);
        }
    }
    return rc | insert_row(s, ev, GL_OP_RESET, GL_KIND_NONE, 0, sid, 0, NULL);
}

/* A sample is state, not an operation: it goes to its own table. */
static int add_sample(struct gl_store *s, const struct gl_event *ev)
{
    sqlite3_stmt *st = ev->api == GL_API_pool_sample ? s->ins_pool_sample : s->ins_dev_sample;
    int k = 1;
    sqlite3_bind_int64(st, k++, (sqlite3_int64)ev->ts_ns);
    sqlite3_bind_int(st, k++, ev->device);
    if (ev->api == GL_API_pool_sample)
        sqlite3_bind_int64(st, k++, (sqlite3_int64)ev->pool);
    sqlite3_bind_int64(st, k++, (sqlite3_int64)ev->size);
    sqlite3_bind_int64(st, k, (sqlite3_int64)ev->aux);
    return step_done(s, st, "writing a sample");
}

/* A mark or a range push/pop: an event_log row for its place in the order,
 * an annotations row for its label, and the per-thread range state. */
static int add_annotation(struct gl_store *s, const struct gl_event *ev)
{
    uint64_t tid = (uint64_t)(uint32_t)ev->tid, cur = 0, parent = 0, seq;
    gl_u64map_get(&s->range_of_tid, tid, &cur);
    if (ev->op == GL_OP_RANGE_POP) {
        if (!cur)
            return 0; /* a pop without a push: nothing to close */
        gl_u64map_get(&s->range_parent, cur, &parent);
        gl_u64map_del(&s->range_parent, cur);
        gl_u64map_put(&s->range_of_tid, tid, parent);
        if (s->process_range == cur)
            s->process_range = parent;
    }
    if (insert_row(s, ev, ev->op, GL_KIND_NONE, 0, 0, 0, &seq))
        return -1;
    const char *label = ev->op == GL_OP_RANGE_POP ? NULL : (const char *)ev->ips;
    sqlite3_stmt *st = s->ins_annotation;
    sqlite3_bind_int64(st, 1, (sqlite3_int64)seq);
    sqlite3_bind_int64(st, 2, (sqlite3_int64)ev->ts_ns);
    sqlite3_bind_int64(st, 3, ev->tid);
    sqlite3_bind_text(st, 4, gl_op_name(ev->op), -1, SQLITE_STATIC);
    if (label)
        sqlite3_bind_text(st, 5, label, (int)ev->aux, SQLITE_TRANSIENT);
    else
        sqlite3_bind_null(st, 5);
    /* push and mark: the range it is inside; pop: the range it closes */
    if (cur)
        sqlite3_bind_int64(st, 6, (sqlite3_int64)cur);
    else
        sqlite3_bind_null(st, 6);
    if (ev->op == GL_OP_RANGE_PUSH) {
        gl_u64map_put(&s->range_parent, seq, cur);
        gl_u64map_put(&s->range_of_tid, tid, seq);
        s->process_range = seq;
    }
    return step_done(s, st, "writing an annotation");
}

int gl_store_add(struct gl_store *s, const struct gl_event *ev)
{
    if (begin(s))
        return -1;
    if (ev->op == GL_OP_SAMPLE)
        return add_sample(s, ev);
    if (ev->flags & GL_EVF_LABEL)
        return add_annotation(s, ev);
    int64_t sid = stack_id(s, ev);
    int op = ev->op;
    if (ev->result != 0)
        return insert_row(s, ev, op, ev->kind, ev->size, sid, 0, NULL);
    if (gl_op_is_alloc(op)) {
        uint64_t seq;
        int rc = insert_row(s, ev, op, ev->kind, ev->size, sid, 0, &seq);
        live_add(s, gl_op_space(op), ev->addr, seq, ev);
        return rc;
    }
    if (op == GL_OP_UNMAP)
        return unmap_range(s, ev, sid);
    if (op == GL_OP_RESET)
        return reset_device(s, ev, sid);
    if (gl_op_is_free(op)) {
        struct live l;
        if (live_take(s, gl_op_space(op), ev->addr, &l)) {
            struct gl_event e2 = *ev;
            e2.device = l.device; /* the device of what it frees */
            return insert_row(s, &e2, op, l.kind, l.size, sid, l.seq, NULL);
        }
        s->unmatched_frees++;
        return insert_row(s, ev, op, ev->kind, ev->size, sid, 0, NULL);
    }
    return insert_row(s, ev, op, ev->kind, ev->size, sid, 0, NULL);
}

static int write_counters(struct gl_store *s, const struct gl_run_counters *c)
{
    sqlite3_bind_int64(s->upd_run, 1, (sqlite3_int64)s->events);
    sqlite3_bind_int64(s->upd_run, 2, (sqlite3_int64)c->dropped_events);
    sqlite3_bind_int64(s->upd_run, 3, (sqlite3_int64)c->truncated_stacks);
    sqlite3_bind_int64(s->upd_run, 4, (sqlite3_int64)s->unmatched_frees);
    int rc = step_done(s, s->upd_run, "updating the run row");
    for (int i = 0; i <= GL_MAX_DEVICES; i++) {
        struct dev_stats *d = &s->dev[i];
        if (!d->dirty)
            continue;
        d->dirty = 0;
        sqlite3_bind_int(s->put_dev, 1, i - 1);
        sqlite3_bind_int64(s->put_dev, 2, (sqlite3_int64)d->peak);
        sqlite3_bind_int64(s->put_dev, 3, (sqlite3_int64)d->peak_ns);
        sqlite3_bind_int64(s->put_dev, 4, (sqlite3_int64)d->peak_seq);
        sqlite3_bind_int64(s->put_dev, 5, (sqlite3_int64)d->live);
        sqlite3_bind_int64(s->put_dev, 6, (sqlite3_int64)d->allocs);
        sqlite3_bind_int64(s->put_dev, 7, (sqlite3_int64)d->frees);
        rc |= step_done(s, s->put_dev, "updating device_stats");
    }
    return rc;
}

int gl_store_commit(struct gl_store *s, const struct gl_run_counters *c)
{
    if (begin(s) || flush_rows(s) || write_counters(s, c))
        return -1;
    s->in_txn = 0;
    return exec(s, "COMMIT");
}

int gl_store_finish(struct gl_store *s, const struct gl_run_counters *c, uint64_t end_ns, int exit_code,
                    int exit_signal)
{
    if (begin(s) || flush_rows(s) || write_counters(s, c))
        return -1;
    sqlite3_bind_int64(s->fin_run, 1, (sqlite3_int64)end_ns);
    if (exit_code >= 0)
        sqlite3_bind_int(s->fin_run, 2, exit_code);
    else
        sqlite3_bind_null(s->fin_run, 2);
    if (exit_signal > 0)
        sqlite3_bind_int(s->fin_run, 3, exit_signal);
    else
        sqlite3_bind_null(s->fin_run, 3);
    if (step_done(s, s->fin_run, "finishing the run row"))
        return -1;
    s->in_txn = 0;
    return exec(s, "COMMIT");
}

void gl_store_set_python(struct gl_store *s, gl_py_describe_fn describe)
{
    s->py_describe = describe;
}

void gl_store_close(struct gl_store *s)
{
    if (!s)
        return;
    sqlite3_stmt **sts[] = {&s->ins_annotation, &s->ins_pool_sample, &s->ins_dev_sample, &s->ins_batch, &s->ins_event, &s->ins_stack, &s->ins_entry, &s->ins_frame,
                            &s->ins_pyframe, &s->ins_module, &s->upd_run,   &s->fin_run,   &s->put_dev};
    for (size_t i = 0; i < sizeof sts / sizeof sts[0]; i++)
        sqlite3_finalize(*sts[i]);
    if (s->db) {
        if (s->in_txn && flush_rows(s) == 0)
            sqlite3_exec(s->db, "COMMIT", NULL, NULL, NULL);
        sqlite3_close(s->db);
    }
    gl_symbolizer_free(&s->sym);
    gl_u64map_free(&s->frames);
    gl_u64map_free(&s->stack_index);
    gl_u64map_free(&s->range_of_tid);
    gl_u64map_free(&s->range_parent);
    for (int i = 0; i < GL_NSPACES; i++)
        gl_u64map_free(&s->live_index[i]);
    free(s->stacks);
    free(s->ips);
    free(s->lives);
    free(s->free_lives);
    free(s);
}
