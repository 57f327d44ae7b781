/* store.c — writing events into SQLite (see store.h): the connection and
 * its transactions, and where each event goes. The parts, one job each:
 * rows.c (event_log rows, batched), stacks.c (stacks and frames, written
 * once), ledger.c (what is live: free <-> alloc pairing, per-device live
 * and peak), annotations.c (marks and ranges), runrows.c (run row, meta,
 * device_stats, samples), subs.c (heaps and regions of a program's pools),
 * fold.c (a bounded recording: a step's rows held, then written or folded). */
#include "store.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "annotations.h"
#include "answers.h"
#include "graphmem.h"
#include "blocks.h"
#include "fold.h"
#include "ledger.h"
#include "packvtab.h"
#include "retention.h"
#include "rows.h"
#include "runrows.h"
#include "schema.h"
#include "stacks.h"
#include "subs.h"
#include "wdb.h"

struct gl_store {
    struct gl_wdb w;
    int in_txn;
    unsigned index_budget_ms;
    uint64_t unmatched_frees;
    struct gl_rows rows;
    struct gl_runrows run;
    struct gl_stacks stacks;
    struct gl_ledger ledger;
    struct gl_annotations ann;
    struct gl_graphmem graph;
    struct gl_blocks blocks;
    struct gl_answers answers;
    struct gl_subs subs;
    struct gl_retention retention;
    uint64_t retention_bad_stored; /* retention.bad as last written to meta */
    int budgeted;                  /* gl_store_set_budget: fold is open */
    struct gl_fold fold;
};

const char *gl_store_error(struct gl_store *s)
{
    return s->w.err;
}

uint64_t gl_store_event_count(struct gl_store *s)
{
    return s->rows.count;
}

uint64_t gl_store_peak_bytes(struct gl_store *s)
{
    return gl_ledger_peak_total(&s->ledger);
}

uint64_t gl_store_device_peak(struct gl_store *s, int device)
{
    return device >= 0 && device < GL_MAX_DEVICES ? s->ledger.dev[device + 1].peak : 0;
}

struct gl_store *gl_store_open(const char *path, const struct gl_run_info *info, int symbolize, char *err,
                               size_t errsz)
{
    struct gl_store *s = calloc(1, sizeof *s);
    if (!s) {
        snprintf(err, errsz, "out of memory");
        return NULL;
    }
    s->index_budget_ms = GL_STORE_INDEX_BUDGET_MS;
    gl_ledger_init(&s->ledger);
    gl_graphmem_init(&s->graph);
    int rc = sqlite3_open_v2(path, &s->w.db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL);
    if (rc != SQLITE_OK) {
        snprintf(err, errsz, "cannot open %s: %s", path, s->w.db ? sqlite3_errmsg(s->w.db) : "out of memory");
        gl_store_close(s);
        return NULL;
    }
    char *msg = NULL;
    gl_packvtab_register(s->w.db); /* a packed recording's rows, for its own questions (answers.c) */
    /* a 2 MB page cache (SQLite's default): the writer appends, and each
     * page of cache is memory of the host job's, first touched (a page
     * fault) as the file grows; 16 MB cost a packed recording's first
     * 16 MB ~40 % more writer CPU for no gain later */
    if (gl_wdb_exec(&s->w, "PRAGMA journal_mode=WAL; PRAGMA synchronous=OFF; PRAGMA temp_store=MEMORY;"
                           "PRAGMA cache_size=-2000;") ||
        gl_wdb_exec(&s->w, "BEGIN") || gl_schema_create(s->w.db, &msg) != SQLITE_OK) {
        snprintf(err, errsz, "cannot create the schema in %s: %s", path, msg ? msg : s->w.err);
        sqlite3_free(msg);
        gl_store_close(s);
        return NULL;
    }
    if (gl_rows_open(&s->rows, &s->w) || gl_stacks_open(&s->stacks, &s->w, symbolize) ||
        gl_annotations_open(&s->ann, &s->w) || gl_blocks_open(&s->blocks, &s->w, &s->ledger.windows) ||
        gl_subs_open(&s->subs, &s->w) || gl_retention_open(&s->retention, &s->w, info->pid)) {
        snprintf(err, errsz, "%s", s->w.err);
        gl_store_close(s);
        return NULL;
    }
    if (gl_runrows_open(&s->run, &s->w, info) || gl_wdb_exec(&s->w, "COMMIT")) {
        snprintf(err, errsz, "cannot initialise %s: %s", path, s->w.err);
        gl_store_close(s);
        return NULL;
    }
    return s;
}

int gl_store_meta(struct gl_store *s, const char *key, const char *value)
{
    return gl_runrows_meta(&s->run, key, value);
}

void gl_store_set_python(struct gl_store *s, gl_py_describe_fn describe)
{
    s->stacks.py_describe = describe;
}

static int begin(struct gl_store *s)
{
    if (s->in_txn)
        return 0;
    if (gl_wdb_exec(&s->w, "BEGIN"))
        return -1;
    s->in_txn = 1;
    return 0;
}

/* A row for ev in the range its thread is inside. */
static int row(struct gl_store *s, const struct gl_event *ev, int op, int kind, uint64_t size, int64_t sid,
               uint64_t ref, uint64_t *seq_out)
{
    return gl_rows_add(&s->rows, ev, op, kind, size, sid, ref, gl_annotations_range(&s->ann, ev->tid), seq_out);
}

/* cuMemUnmap may cover several mappings: end every one inside the range. */
static int unmap_range(struct gl_store *s, const struct gl_event *ev, int64_t sid)
{
    int rc = 0, first = 1;
    struct gl_live l;
    if (gl_ledger_take(&s->ledger, GL_SPACE_MAP, ev->addr, &l)) {
        rc |= row(s, ev, GL_OP_UNMAP, GL_KIND_MAPPING, l.size, sid, l.seq, NULL);
        first = 0;
    }
    size_t pos = 0;
    uint64_t k;
    while (ev->size && gl_ledger_next(&s->ledger, GL_SPACE_MAP, &pos, &k, &l)) {
        if (k < ev->addr || k >= ev->addr + ev->size || !gl_ledger_take(&s->ledger, GL_SPACE_MAP, k, &l))
            continue;
        struct gl_event e2 = *ev;
        e2.addr = k;
        rc |= row(s, &e2, GL_OP_UNMAP, GL_KIND_MAPPING, l.size, sid, l.seq, NULL);
        first = 0;
    }
    if (first) {
        s->unmatched_frees++;
        rc |= row(s, ev, GL_OP_UNMAP, GL_KIND_MAPPING, ev->size, sid, 0, NULL);
    }
    return rc;
}

/* cudaDeviceReset frees everything the device still holds. */
static int reset_device(struct gl_store *s, const struct gl_event *ev, int64_t sid)
{
    struct gl_graph_out go = {&s->ledger, &s->rows, &s->ann};
    int rc = gl_graphmem_reset(&s->graph, &go, ev, sid);
    for (int space = 0; space < GL_NSPACES; space++) {
        size_t pos = 0;
        uint64_t k;
        struct gl_live l;
        while (gl_ledger_next(&s->ledger, space, &pos, &k, &l)) {
            if (ev->device >= 0 && l.device != ev->device)
                continue;
            gl_ledger_take(&s->ledger, space, k, &l);
            struct gl_event e2 = *ev;
            e2.addr = k;
            rc |= row(s, &e2, gl_space_free_op(space), l.kind, l.size, sid, l.seq, NULL);
        }
    }
    return rc | row(s, ev, GL_OP_RESET, GL_KIND_NONE, 0, sid, 0, NULL);
}

static int add_event(struct gl_store *s, const struct gl_event *ev)
{
    if (begin(s))
        return -1;
    if (ev->op == GL_OP_SAMPLE) {
        int dev = ev->device >= 0 && ev->device < GL_MAX_DEVICES ? ev->device + 1 : 0;
        return gl_runrows_sample(&s->run, ev, s->ledger.dev[dev].live, s->rows.next_seq - 1);
    }
    if (ev->api == GL_API_gpuledger_retention)
        return gl_retention_add(&s->retention, ev, s->rows.next_seq - 1);
    if (gl_subs_handles(ev))
        return gl_subs_add(&s->subs, &s->rows, &s->ledger, ev,
                           ev->flags & GL_EVF_LABEL ? 0 : gl_stacks_id(&s->stacks, ev),
                           gl_annotations_range(&s->ann, ev->tid), &s->unmatched_frees);
    if (ev->flags & GL_EVF_LABEL)
        return gl_annotations_add(&s->ann, &s->rows, ev);
    int64_t sid = gl_stacks_id(&s->stacks, ev);
    if (gl_blocks_owns(ev)) /* a sub-allocation: beside, never in, the CUDA ledger */
        return gl_blocks_add(&s->blocks, &s->rows, &s->ledger, ev, sid, gl_annotations_range(&s->ann, ev->tid));
    int op = ev->op;
    struct gl_graph_out go = {&s->ledger, &s->rows, &s->ann};
    if (gl_graphmem_owns(ev))
        return gl_graphmem_add(&s->graph, &go, ev, sid);
    if (ev->result != 0) {
        if (!gl_op_is_free(op))
            return row(s, ev, op, ev->kind, ev->size, sid, 0, NULL);
        /* a failed free ends nothing: counted as unmatched, on the device
         * of what it named if that is live (else the caller's) */
        struct gl_event e2 = *ev;
        struct gl_live l;
        if (gl_ledger_peek(&s->ledger, gl_event_space(op, ev->kind), ev->addr, &l))
            e2.device = l.device;
        s->unmatched_frees++;
        return row(s, &e2, op, ev->kind, ev->size, sid, 0, NULL);
    }
    if (gl_op_is_alloc(op)) {
        uint64_t seq;
        int rc = row(s, ev, op, ev->kind, ev->size, sid, 0, &seq);
        gl_ledger_add(&s->ledger, gl_event_space(op, ev->kind), ev->addr, seq, ev);
        return rc;
    }
    if (op == GL_OP_UNMAP)
        return unmap_range(s, ev, sid);
    if (op == GL_OP_RESET)
        return reset_device(s, ev, sid);
    if (gl_op_is_free(op)) {
        struct gl_live l;
        if (gl_ledger_take(&s->ledger, gl_event_space(op, ev->kind), ev->addr, &l)) {
            struct gl_event e2 = *ev;
            e2.device = l.device; /* the device of what it frees */
            int rc = row(s, &e2, op, l.kind, l.size, sid, l.seq, NULL);
            return l.kind == GL_KIND_GRAPH ? rc | gl_graphmem_freed(&s->graph, &go, ev, sid, &l) : rc;
        }
        s->unmatched_frees++;
    }
    return row(s, ev, op, ev->kind, ev->size, sid, 0, NULL);
}

int gl_store_set_budget(struct gl_store *s, unsigned long long bytes)
{
    if (!bytes || s->budgeted)
        return 0;
    char num[24];
    snprintf(num, sizeof num, "%llu", bytes);
    if (begin(s) || gl_fold_open(&s->fold, &s->w, bytes) || gl_rows_hold(&s->rows) ||
        gl_runrows_meta(&s->run, "budget_bytes", num))
        return -1;
    s->budgeted = 1;
    return 0;
}

int gl_store_set_packed(struct gl_store *s)
{
    if (s->budgeted)
        return gl_wdb_fail(&s->w, "packing rows: a budgeted recording is not packed");
    char *msg = NULL;
    /* all or nothing: a failure leaves the schema 5 it found, and the
     * recording goes on unpacked */
    if (begin(s) || gl_wdb_exec(&s->w, "SAVEPOINT pack"))
        return -1;
    char sql[64];
    snprintf(sql, sizeof sql, "UPDATE run SET schema_version = %d", GL_SCHEMA_VERSION);
    int rc = gl_schema_pack(s->w.db, &msg);
    if (rc != SQLITE_OK) {
        snprintf(s->w.err, sizeof s->w.err, "packing rows: %s", msg ? msg : "out of memory");
        sqlite3_free(msg);
    }
    if (rc != SQLITE_OK || gl_wdb_exec(&s->w, sql) || gl_rows_pack(&s->rows) ||
        gl_runrows_meta(&s->run, "packed", "1")) {
        gl_rows_unpack(&s->rows);
        sqlite3_exec(s->w.db, "ROLLBACK TO pack; RELEASE pack", NULL, NULL, NULL);
        return -1;
    }
    return gl_wdb_exec(&s->w, "RELEASE pack");
}

/* Every peak the store keeps, each on its own (fold.h's GL_FOLD_PEAKS),
 * into peaks; *live: the live bytes now. */
static void peaks_now(const struct gl_store *s, uint64_t *peaks, uint64_t *live)
{
    uint64_t l = s->ledger.windows.live[GL_WIN_BLOCKS];
    for (int d = 0; d <= GL_MAX_DEVICES; d++) {
        peaks[d] = s->ledger.dev[d].peak;
        l += s->ledger.dev[d].live;
    }
    for (int d = 0; d < GL_MAX_DEVICES; d++) {
        const struct gl_bm_stats *st = s->blocks.bm ? gl_bm_stats(s->blocks.bm, d) : NULL;
        uint64_t *p = &peaks[GL_MAX_DEVICES + 1 + 3 * d];
        p[0] = st ? st->allocated_peak : 0;
        p[1] = st ? st->requested_peak : 0;
        p[2] = st ? st->reserved_peak : 0;
    }
    *live = l;
}

static int end_step(struct gl_store *s, uint64_t end_ns, int final)
{
    uint64_t live, peaks[GL_FOLD_PEAKS];
    peaks_now(s, peaks, &live);
    return gl_fold_step_end(&s->fold, &s->rows, peaks, live, end_ns, final);
}

int gl_store_add(struct gl_store *s, const struct gl_event *ev)
{
    int rc = add_event(s, ev);
    if (!s->budgeted)
        return rc;
    if (ev->result != 0 || gl_op_is_failure(ev->op))
        gl_fold_keep(&s->fold);
    if (ev->op == GL_OP_MARK && (ev->flags & GL_EVF_LABEL)) {
        s->fold.marks++;
        rc |= end_step(s, ev->ts_ns, 0);
    } else if (!s->fold.marks && s->rows.nheld >= GL_FOLD_PSEUDO_STEP) {
        rc |= end_step(s, ev->ts_ns, 0); /* no marks (yet): a pseudo-step of so many rows */
    } else if (s->rows.nheld >= GL_FOLD_MAX_HELD) {
        rc |= gl_fold_overflow(&s->fold, &s->rows);
    }
    return rc;
}

/* A bounded recording's figures, in meta. */
static int budget_meta(struct gl_store *s)
{
    if (!s->budgeted)
        return 0;
    const struct gl_fold *f = &s->fold;
    if (gl_fold_measure(&s->fold))
        return -1;
    const struct {
        const char *key;
        uint64_t v;
    } kv[] = {{"budget_used_bytes", f->used},         {"budget_steps_full", f->steps_full},
              {"budget_steps_folded", f->steps_folded}, {"budget_steps_overflowed", f->steps_overflowed},
              {"budget_pairs_folded", f->pairs_folded}, {"budget_rows_dropped", f->rows_dropped},
              {"budget_aggregate_rows", f->agg_rows},   {"budget_aggregate_width", f->width},
              {"budget_windows_dropped", f->windows_dropped}, {"budget_level", (uint64_t)f->level}};
    for (size_t i = 0; i < sizeof kv / sizeof kv[0]; i++) {
        char num[24];
        snprintf(num, sizeof num, "%llu", (unsigned long long)kv[i].v);
        if (gl_runrows_meta(&s->run, kv[i].key, num))
            return -1;
    }
    return 0;
}

/* Retention events that were not well formed: counted in meta. */
static int retention_counter(struct gl_store *s)
{
    if (s->retention.bad == s->retention_bad_stored)
        return 0;
    char num[24];
    snprintf(num, sizeof num, "%llu", (unsigned long long)s->retention.bad);
    s->retention_bad_stored = s->retention.bad;
    return gl_runrows_meta(&s->run, "retention_malformed", num);
}

/* Write what is pending and the run's counters, inside the transaction. */
static int settle(struct gl_store *s, const struct gl_run_counters *c)
{
    return begin(s) || gl_rows_flush(&s->rows) || retention_counter(s) || budget_meta(s) ||
           gl_runrows_counters(&s->run, s->rows.count, s->unmatched_frees + s->blocks.unmatched, c, &s->ledger) ||
           gl_blocks_counters(&s->blocks);
}

int gl_store_commit(struct gl_store *s, const struct gl_run_counters *c)
{
    if (settle(s, c))
        return -1;
    s->in_txn = 0;
    return gl_wdb_exec(&s->w, "COMMIT");
}

static uint64_t mono_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000ULL + (uint64_t)t.tv_nsec;
}

/* SQLite's progress callback while the index is built: nonzero (abandon)
 * past the deadline. */
static int past_deadline(void *deadline)
{
    return mono_ns() > *(const uint64_t *)deadline;
}

void gl_store_set_index_budget(struct gl_store *s, unsigned ms)
{
    s->index_budget_ms = ms;
}

/* The ref_seq index in its own transaction, within its budget. */
static void build_ref_index(sqlite3 *db, unsigned budget_ms)
{
    if (sqlite3_exec(db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK)
        return;
    uint64_t deadline = mono_ns() + budget_ms * 1000000ULL;
    sqlite3_progress_handler(db, 10000, past_deadline, &deadline);
    int rc = gl_schema_ref_index(db);
    sqlite3_progress_handler(db, 0, NULL, NULL);
    sqlite3_exec(db, rc == SQLITE_OK ? "COMMIT" : "ROLLBACK", NULL, NULL, NULL);
}

int gl_store_finish(struct gl_store *s, const struct gl_run_counters *c, uint64_t end_ns, int exit_code,
                    int exit_signal)
{
    if ((s->budgeted && (begin(s) || end_step(s, end_ns, 1))) || settle(s, c) ||
        gl_blocks_finish(&s->blocks, end_ns, s->rows.next_seq - 1) ||
        gl_runrows_finish(&s->run, end_ns, exit_code, exit_signal))
        return -1;
    s->in_txn = 0;
    if (gl_wdb_exec(&s->w, "COMMIT"))
        return -1;
    /* The ref_seq index, once the run is safe: in its own transaction (if
     * the process ends meanwhile, the run is whole without it), not on the
     * way down from a fatal signal, and not for a run so long that its
     * sort would outlast the wait at exit (given up past its budget) (the views work without it:
     * SQLite then builds a temporary index for each query). */
    if (exit_signal <= 0 && s->rows.count <= GL_STORE_INDEX_MAX_ROWS)
        build_ref_index(s->w.db, s->index_budget_ms);
    return 0;
}

int gl_store_checkpoint(struct gl_store *s)
{
    if (s->in_txn)
        return -1;
    return sqlite3_wal_checkpoint_v2(s->w.db, NULL, SQLITE_CHECKPOINT_TRUNCATE, NULL, NULL) == SQLITE_OK ? 0 : -1;
}

void gl_store_answer(struct gl_store *s, struct gl_question *q)
{
    s->answers.w = &s->w;
    s->answers.windows = &s->ledger.windows;
    gl_answers_answer(&s->answers, q, s->rows.next_seq);
}

void gl_store_close(struct gl_store *s)
{
    if (!s)
        return;
    /* statements first: sqlite3_close refuses a connection that has some */
    gl_annotations_close(&s->ann);
    gl_retention_close(&s->retention);
    gl_answers_close(&s->answers);
    gl_subs_close(&s->subs);
    gl_runrows_close(&s->run);
    gl_blocks_close(&s->blocks);
    gl_stacks_close(&s->stacks);
    if (s->budgeted)
        gl_fold_close(&s->fold);
    if (s->w.db) {
        if (s->in_txn && gl_rows_flush(&s->rows) == 0)
            sqlite3_exec(s->w.db, "COMMIT", NULL, NULL, NULL);
        gl_rows_close(&s->rows);
        sqlite3_close(s->w.db);
    }
    gl_ledger_free(&s->ledger);
    gl_graphmem_free(&s->graph);
    free(s);
}
