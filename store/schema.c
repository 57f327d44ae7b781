/* schema.c — DDL for a gpuledger database (schema 5). Integer codes are
 * stored in event_rows and event_contexts; the documented views (event_log,
 * events, allocations, mappings, heaps, regions, stack_frames) give them
 * names. */
#include "schema.h"

#include <stdio.h>

#include "gl_event.h"
#include "retention.h"

/* In the triggers that write through event_log: the context of the NEW
 * row, added if it is not there, and its id. */
#define SAME_CONTEXT_AS_NEW                                                                         \
    " WHERE tid IS NEW.tid AND api IS NEW.api AND stream IS NEW.stream AND pool IS NEW.pool"       \
    " AND result IS NEW.result"
#define NEW_CONTEXT                                                                                 \
    " INSERT INTO event_contexts(tid, api, stream, pool, result)"                                   \
    " SELECT NEW.tid, NEW.api, NEW.stream, NEW.pool, NEW.result"                                    \
    " WHERE NOT EXISTS (SELECT 1 FROM event_contexts" SAME_CONTEXT_AS_NEW ");"
#define CONTEXT_OF_NEW "(SELECT id FROM event_contexts" SAME_CONTEXT_AS_NEW " ORDER BY id LIMIT 1)"

static const char *const ddl =
    "CREATE TABLE run("
    " pid INTEGER, ppid INTEGER, hostname TEXT, rank TEXT, cmdline TEXT,"
    " start_ns INTEGER, start_unix_ns INTEGER, end_ns INTEGER,"
    " exit_code INTEGER, exit_signal INTEGER,"
    " event_count INTEGER DEFAULT 0, dropped_events INTEGER DEFAULT 0,"
    " truncated_stacks INTEGER DEFAULT 0, unmatched_frees INTEGER DEFAULT 0,"
    " stack_depth INTEGER, gpuledger_version TEXT, schema_version INTEGER);"
    "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT);"
    "CREATE TABLE op_names(id INTEGER PRIMARY KEY, name TEXT UNIQUE);"
    /* layer: device (counted in what CUDA holds), sub (inside another
     * allocation, never counted twice), host, address, none */
    "CREATE TABLE kind_names(id INTEGER PRIMARY KEY, name TEXT UNIQUE, layer TEXT);"
    "CREATE TABLE api_names(id INTEGER PRIMARY KEY, name TEXT UNIQUE);"
    /* ---- schema 4: an event is a row of event_rows; what many rows share
     * (thread, API, stream, pool, result) is one row of event_contexts.
     * event_log, the table of schemas 1 to 3, is their view. */
    "CREATE TABLE event_contexts(id INTEGER PRIMARY KEY, tid INTEGER, api INTEGER,"
    " stream INTEGER, pool INTEGER, result INTEGER);"
    "CREATE TABLE event_rows("
    " seq INTEGER PRIMARY KEY, ts_ns INTEGER NOT NULL, context INTEGER,"
    " op INTEGER NOT NULL, kind INTEGER, device INTEGER, addr INTEGER, size INTEGER,"
    " stack_id INTEGER, ref_seq INTEGER, aux INTEGER, range_seq INTEGER);"
    /* ---- schema 5: a bounded recording's aggregates (fold.h): pairs made
     * and freed inside steps step_lo .. step_hi that were not written as
     * rows, per stack, kind and the contexts of the allocation and free */
    "CREATE TABLE step_stacks(step_lo INTEGER NOT NULL, step_hi INTEGER NOT NULL, context INTEGER,"
    " free_context INTEGER, kind INTEGER, stack_id INTEGER, pairs INTEGER, bytes INTEGER);"
    "CREATE TABLE step_windows(step INTEGER PRIMARY KEY, why TEXT);"
    /* where each step of a bounded recording ended: its last event's seq
     * and the moment (the mark's time; the run's end for the last step) */
    "CREATE TABLE step_ends(step INTEGER PRIMARY KEY, seq INTEGER NOT NULL, ts_ns INTEGER NOT NULL);"
    "CREATE VIEW step_aggregates AS SELECT s.step_lo, s.step_hi, c.tid, a.name AS api, fa.name AS free_api,"
    " k.name AS kind, s.stack_id, s.pairs, s.bytes FROM step_stacks s"
    " LEFT JOIN event_contexts c ON c.id = s.context LEFT JOIN api_names a ON a.id = c.api"
    " LEFT JOIN event_contexts fc ON fc.id = s.free_context LEFT JOIN api_names fa ON fa.id = fc.api"
    " LEFT JOIN kind_names k ON k.id = s.kind;"
    GL_EVENT_LOG_VIEW ";"
    /* rows written through the view (other tools, tests) land in the tables */
    "CREATE TRIGGER event_log_insert INSTEAD OF INSERT ON event_log BEGIN"
    NEW_CONTEXT
    " INSERT INTO event_rows(seq, ts_ns, context, op, kind, device, addr, size, stack_id, ref_seq, aux, range_seq)"
    " VALUES(NEW.seq, NEW.ts_ns, " CONTEXT_OF_NEW ","
    " NEW.op, NEW.kind, NEW.device, NEW.addr, NEW.size, NEW.stack_id, NEW.ref_seq, NEW.aux, NEW.range_seq);"
    " END;"
    "CREATE TRIGGER event_log_update INSTEAD OF UPDATE ON event_log BEGIN"
    NEW_CONTEXT
    " UPDATE event_rows SET seq = NEW.seq, ts_ns = NEW.ts_ns, context = " CONTEXT_OF_NEW ", op = NEW.op,"
    " kind = NEW.kind, device = NEW.device, addr = NEW.addr, size = NEW.size, stack_id = NEW.stack_id,"
    " ref_seq = NEW.ref_seq, aux = NEW.aux, range_seq = NEW.range_seq WHERE seq = OLD.seq;"
    " END;"
    "CREATE TRIGGER event_log_delete INSTEAD OF DELETE ON event_log BEGIN"
    " DELETE FROM event_rows WHERE seq = OLD.seq;"
    " END;"
    /* marks and ranges (gpuledger_mark, gpuledger_range_push/pop) */
    "CREATE TABLE annotations(seq INTEGER PRIMARY KEY, ts_ns INTEGER, tid INTEGER,"
    " op TEXT, label TEXT, parent_seq INTEGER);"
    "CREATE TABLE modules(id INTEGER PRIMARY KEY, path TEXT, base INTEGER,"
    " size INTEGER, build_id TEXT);"
    "CREATE TABLE frames(id INTEGER PRIMARY KEY, ip INTEGER, module_id INTEGER,"
    " rel INTEGER, symbol TEXT, sym_offset INTEGER, file TEXT, line INTEGER,"
    " python INTEGER NOT NULL DEFAULT 0);"
    "CREATE TABLE stacks(id INTEGER PRIMARY KEY, hash INTEGER, depth INTEGER,"
    " truncated INTEGER);"
    "CREATE TABLE stack_entries(stack_id INTEGER, depth INTEGER, frame_id INTEGER,"
    " PRIMARY KEY(stack_id, depth)) WITHOUT ROWID;"
    /* pool state, sampled at a bounded rate after stream-ordered calls */
    "CREATE TABLE pool_samples(ts_ns INTEGER, device INTEGER, pool INTEGER,"
    " reserved INTEGER, used INTEGER);"
    /* device free/total memory (cudaMemGetInfo), sampled rarely */
    "CREATE TABLE device_samples(ts_ns INTEGER, device INTEGER, free INTEGER,"
    " total INTEGER);"
    /* the device's CUDA-graph memory pool (cuDeviceGetGraphMemAttribute),
     * when it moved at a graph launch or trim */
    "CREATE TABLE graph_pool_samples(ts_ns INTEGER, device INTEGER, reserved INTEGER,"
    " used INTEGER, reserved_high INTEGER, used_high INTEGER);"
    /* the process's own device memory (what nvidia-smi shows for it) and the
     * ledger's live bytes after event seq: used - ledger is what no
     * allocation API shows */
    "CREATE TABLE usage_samples(ts_ns INTEGER, seq INTEGER, device INTEGER, used INTEGER,"
    " ledger INTEGER, source TEXT);"
    "CREATE TABLE device_stats(device INTEGER PRIMARY KEY, peak_bytes INTEGER,"
    " peak_ns INTEGER, peak_seq INTEGER, live_bytes INTEGER,"
    " alloc_count INTEGER, free_count INTEGER);"
    "CREATE VIEW events AS SELECT e.seq, e.ts_ns, e.tid, o.name AS op,"
    " a.name AS api, k.name AS kind, e.device, e.stream, e.pool, e.addr,"
    " e.size, e.result, e.stack_id, e.ref_seq, e.aux, e.range_seq"
    " FROM event_log e LEFT JOIN op_names o ON o.id = e.op"
    " LEFT JOIN api_names a ON a.id = e.api LEFT JOIN kind_names k ON k.id = e.kind;"
    /* One row per successful allocation (op alloc or create); free_ns NULL
     * when it was never freed. */
    "CREATE VIEW allocations AS SELECT a.seq AS id, a.device, an.name AS api,"
    " kn.name AS kind, a.addr, a.size, a.ts_ns AS alloc_ns, f.ts_ns AS free_ns,"
    " ac.tid, a.stack_id, ac.stream, ac.pool, f.seq AS free_seq,"
    " f.stack_id AS free_stack_id, fn.name AS free_api"
    " FROM event_rows a JOIN event_contexts ac ON ac.id = a.context"
    " LEFT JOIN event_rows f ON f.ref_seq = a.seq AND f.op IN (2, 8)"
    " LEFT JOIN event_contexts fc ON fc.id = f.context"
    " LEFT JOIN api_names an ON an.id = ac.api"
    " LEFT JOIN api_names fn ON fn.id = fc.api"
    " LEFT JOIN kind_names kn ON kn.id = a.kind"
    " WHERE a.op IN (1, 7) AND ac.result = 0 AND coalesce(kn.layer, '') != 'sub';"
    /* Reserved VA ranges and mappings (cuMemAddressReserve, cuMemMap). */
    "CREATE VIEW mappings AS SELECT a.seq AS id, a.device, an.name AS api,"
    " kn.name AS kind, a.addr, a.size, a.aux AS handle, a.ts_ns AS start_ns,"
    " f.ts_ns AS end_ns, ac.tid, a.stack_id"
    " FROM event_rows a JOIN event_contexts ac ON ac.id = a.context"
    " LEFT JOIN event_rows f ON f.ref_seq = a.seq AND f.op IN (4, 6)"
    " LEFT JOIN api_names an ON an.id = ac.api"
    " LEFT JOIN kind_names kn ON kn.id = a.kind"
    " WHERE a.op IN (3, 5) AND ac.result = 0 AND coalesce(kn.layer, '') != 'sub';"
    /* Names given to heaps and regions (ref_seq: the row that began it). */
    "CREATE TABLE names(seq INTEGER PRIMARY KEY, ref_seq INTEGER, name TEXT);"
    /* Heaps of a program's own pools (nvtxMemHeapRegister,
     * gpuledger_heap_register): one row per registration. */
    "CREATE VIEW heaps AS SELECT h.seq AS id, h.addr AS base, h.size, h.aux AS usage,"
    " (SELECT p.aux FROM event_rows p WHERE p.ref_seq = h.seq AND p.op = 27 ORDER BY p.seq DESC LIMIT 1)"
    " AS page_size,"
    " (SELECT n.name FROM names n WHERE n.ref_seq = h.seq ORDER BY n.seq DESC LIMIT 1) AS name,"
    " h.ts_ns AS register_ns, u.ts_ns AS unregister_ns, hc.tid, h.stack_id, u.seq AS unregister_seq"
    " FROM event_rows h LEFT JOIN event_contexts hc ON hc.id = h.context"
    " LEFT JOIN event_rows u ON u.ref_seq = h.seq AND u.op = 2"
    " WHERE h.op = 1 AND h.kind = 13;"
    /* Regions handed out inside heaps (sub-allocations: never counted in
     * device totals): size and used bytes as they were last set. */
    "CREATE VIEW regions AS SELECT r.seq AS id, r.ref_seq AS heap_id, rc.pool AS heap_base, r.addr,"
    " r.addr - rc.pool AS offset,"
    " coalesce((SELECT z.size FROM event_rows z WHERE z.ref_seq = r.seq AND z.op = 25"
    " ORDER BY z.seq DESC LIMIT 1), r.size) AS size, r.size AS initial_size,"
    " coalesce((SELECT u.aux FROM event_rows u WHERE u.ref_seq = r.seq AND u.op = 27"
    " ORDER BY u.seq DESC LIMIT 1), r.aux) AS used,"
    " (SELECT n.name FROM names n WHERE n.ref_seq = r.seq ORDER BY n.seq DESC LIMIT 1) AS name,"
    " r.ts_ns AS alloc_ns, f.ts_ns AS free_ns, rc.tid, r.stack_id, f.seq AS free_seq,"
    " f.stack_id AS free_stack_id, fa.name AS free_api"
    " FROM event_rows r LEFT JOIN event_contexts rc ON rc.id = r.context"
    " LEFT JOIN event_rows f ON f.ref_seq = r.seq AND f.op = 2"
    " LEFT JOIN event_contexts fc ON fc.id = f.context"
    " LEFT JOIN api_names fa ON fa.id = fc.api"
    " WHERE r.op = 1 AND r.kind = 14;"
    "CREATE VIEW stack_frames AS SELECT se.stack_id, se.depth, m.path AS module,"
    " f.symbol, f.rel AS offset, f.sym_offset AS symbol_offset, f.file, f.line,"
    " f.ip, f.python"
    " FROM stack_entries se JOIN frames f ON f.id = se.frame_id"
    " LEFT JOIN modules m ON m.id = f.module_id;"
    /* ---- schema 2: PyTorch's caching allocator (the tensor ledger) ---- */
    "CREATE TABLE tag_names(id INTEGER PRIMARY KEY, name TEXT UNIQUE);"
    /* per device, the allocator's own figures as replayed: allocated (block
     * bytes of live tensors: memory_allocated), requested, reserved
     * (segments: memory_reserved), their peaks, and the events that did not
     * fit the replay (unknown) */
    "CREATE TABLE block_stats(device INTEGER PRIMARY KEY, allocated_peak INTEGER,"
    " allocated_peak_seq INTEGER, requested_peak INTEGER, reserved_peak INTEGER,"
    " allocated INTEGER, requested INTEGER, reserved INTEGER, allocs INTEGER, frees INTEGER,"
    " segments INTEGER, unknown INTEGER);"
    /* the allocator's holes over time (at most every 20 ms per device, and at
     * every out-of-memory), as of event seq */
    "CREATE TABLE allocator_samples(ts_ns INTEGER, seq INTEGER, device INTEGER, reserved INTEGER,"
    " allocated INTEGER, active INTEGER, requested INTEGER, cached_free INTEGER, holes INTEGER,"
    " largest_hole INTEGER);"
    "CREATE INDEX event_log_segments ON event_rows(device, addr) WHERE kind = 12;"
    /* the rows the views look up one by one (a block's tag, a region's
     * resizes, a heap's or region's last set, names): rare rows, indexed
     * while recording, so that the views stay fast without event_log_ref
     * (schema.h) in a run that ended without it */
    "CREATE INDEX event_log_tags ON event_rows(ref_seq) WHERE op = 19;"
    "CREATE INDEX event_log_resizes ON event_rows(ref_seq) WHERE op = 25;"
    "CREATE INDEX event_log_sets ON event_rows(ref_seq) WHERE op = 27;"
    "CREATE INDEX names_ref ON names(ref_seq);"
    /* One row per tensor block (PyTorch's caching allocator): requested and
     * block bytes, the segment (or mapped range) holding it, when the
     * tensor let go of it (free_ns) and when it was reusable (released_ns,
     * later when record_stream was used), its stacks and its identity tag. */
    "CREATE VIEW tensor_blocks AS SELECT a.seq AS id, a.device, a.addr, a.size AS requested,"
    " a.aux AS size, (SELECT s.addr FROM event_rows s WHERE s.kind = 12 AND s.op IN (1, 3)"
    " AND s.device = a.device AND s.addr <= a.addr AND s.seq < a.seq AND a.addr < s.addr + s.size"
    " ORDER BY s.seq DESC LIMIT 1) AS segment, ac.stream, ac.pool, an.name AS api,"
    " a.ts_ns AS alloc_ns, f.ts_ns AS free_ns,"
    " coalesce(c.ts_ns, CASE WHEN f.op = 2 THEN f.ts_ns END) AS released_ns, ac.tid, a.stack_id,"
    " f.stack_id AS free_stack_id, a.range_seq,"
    " (SELECT tn.name FROM event_rows t JOIN tag_names tn ON tn.id = t.aux WHERE t.op = 19"
    " AND t.ref_seq = a.seq ORDER BY t.seq LIMIT 1) AS category"
    " FROM event_rows a LEFT JOIN event_contexts ac ON ac.id = a.context"
    " LEFT JOIN event_rows f ON f.ref_seq = a.seq AND f.op IN (2, 20) AND f.kind = 11"
    " LEFT JOIN event_rows c ON c.ref_seq = a.seq AND c.op = 17"
    " LEFT JOIN api_names an ON an.id = ac.api"
    " WHERE a.kind = 11 AND a.op = 1;"
    /* ---- schema 3: what keeps memory alive ---- */
    GL_RETENTION_DDL;

static int fill_names(sqlite3 *db, const char *table, int id, const char *name)
{
    char sql[160];
    snprintf(sql, sizeof sql, "INSERT INTO %s(id, name) VALUES(%d, '%s');", table, id, name);
    return sqlite3_exec(db, sql, NULL, NULL, NULL);
}

static int set_layer(sqlite3 *db, int id, const char *layer)
{
    char sql[120];
    snprintf(sql, sizeof sql, "UPDATE kind_names SET layer = '%s' WHERE id = %d;", layer, id);
    return sqlite3_exec(db, sql, NULL, NULL, NULL);
}

int gl_schema_ref_index(sqlite3 *db)
{
    /* schema 6: the table under the view (its packs are indexed by
     * gl_packed_events when asked) */
    sqlite3_stmt *st;
    int packed = 0;
    if (sqlite3_prepare_v2(db, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'event_rows_table'", -1,
                           &st, NULL) == SQLITE_OK) {
        packed = sqlite3_step(st) == SQLITE_ROW;
        sqlite3_finalize(st);
    }
    char sql[128];
    snprintf(sql, sizeof sql, "CREATE INDEX IF NOT EXISTS event_log_ref ON %s(ref_seq) WHERE ref_seq IS NOT NULL",
             packed ? "event_rows_table" : "event_rows");
    return sqlite3_exec(db, sql, NULL, NULL, NULL);
}

int gl_schema_create(sqlite3 *db, char **err)
{
    int rc = sqlite3_exec(db, ddl, NULL, NULL, err);
    if (rc != SQLITE_OK)
        return rc;
    /* the name tables: every row of the vocabulary (gl_event.h) */
#define GL_X(name, id, text, ...)                                                                   \
    if ((rc = fill_names(db, "op_names", id, text)) != SQLITE_OK)                                   \
        return rc;
    GL_OPS(GL_X)
#undef GL_X
    static const char *const layers[] = {[GL_LAYER_NONE] = "none", [GL_LAYER_DEVICE] = "device",
                                         [GL_LAYER_SUB] = "sub", [GL_LAYER_HOST] = "host",
                                         [GL_LAYER_ADDRESS] = "address"};
#define GL_X(name, id, text, layer)                                                                 \
    if ((rc = fill_names(db, "kind_names", id, text)) != SQLITE_OK ||                               \
        (rc = set_layer(db, id, layers[GL_LAYER_##layer])) != SQLITE_OK)                            \
        return rc;
    GL_KINDS(GL_X)
#undef GL_X
#define GL_X(name, id, text)                                                                        \
    if ((rc = fill_names(db, "tag_names", id, text)) != SQLITE_OK)                                  \
        return rc;
    GL_TAGS(GL_X)
#undef GL_X
#define GL_X(name, id, text, ...)                                                                   \
    if ((rc = fill_names(db, "api_names", id, text)) != SQLITE_OK)                                  \
        return rc;
    GL_APIS(GL_X)
#undef GL_X
    char sql[96];
    snprintf(sql, sizeof sql, "PRAGMA application_id=%d; PRAGMA user_version=%d;", GL_APPLICATION_ID,
             GL_SCHEMA_VERSION_UNPACKED);
    return sqlite3_exec(db, sql, NULL, NULL, err);
}

int gl_schema_pack(sqlite3 *db, char **err)
{
    char sql[96];
    snprintf(sql, sizeof sql, "PRAGMA user_version=%d;", GL_SCHEMA_VERSION);
    /* legacy: the views keep naming event_rows, which becomes the view */
    int rc = sqlite3_exec(db,
                          "PRAGMA legacy_alter_table=ON;"
                          "ALTER TABLE event_rows RENAME TO event_rows_table;"
                          "PRAGMA legacy_alter_table=OFF;"
                          "CREATE TABLE event_packs(seq_lo INTEGER PRIMARY KEY, seq_hi INTEGER NOT NULL,"
                          " n INTEGER NOT NULL, ts_min INTEGER NOT NULL, ts_max INTEGER NOT NULL,"
                          " ops INTEGER NOT NULL, kinds INTEGER NOT NULL, data BLOB NOT NULL);" GL_EVENT_ROWS_VIEW ";"
                          "CREATE TRIGGER event_rows_insert INSTEAD OF INSERT ON event_rows BEGIN"
                          " INSERT INTO event_rows_table(seq, ts_ns, context, op, kind, device, addr, size, stack_id,"
                          " ref_seq, aux, range_seq) VALUES(NEW.seq, NEW.ts_ns, NEW.context, NEW.op, NEW.kind,"
                          " NEW.device, NEW.addr, NEW.size, NEW.stack_id, NEW.ref_seq, NEW.aux, NEW.range_seq);"
                          " END;"
                          "CREATE TRIGGER event_rows_update INSTEAD OF UPDATE ON event_rows BEGIN"
                          " SELECT RAISE(ABORT, 'the rows of a packed recording cannot be changed')"
                          " WHERE OLD.seq NOT IN (SELECT seq FROM event_rows_table);"
                          " UPDATE event_rows_table SET seq = NEW.seq, ts_ns = NEW.ts_ns, context = NEW.context,"
                          " op = NEW.op, kind = NEW.kind, device = NEW.device, addr = NEW.addr, size = NEW.size,"
                          " stack_id = NEW.stack_id, ref_seq = NEW.ref_seq, aux = NEW.aux, range_seq = NEW.range_seq"
                          " WHERE seq = OLD.seq;"
                          " END;"
                          "CREATE TRIGGER event_rows_delete INSTEAD OF DELETE ON event_rows BEGIN"
                          " SELECT RAISE(ABORT, 'the rows of a packed recording cannot be deleted')"
                          " WHERE OLD.seq NOT IN (SELECT seq FROM event_rows_table);"
                          " DELETE FROM event_rows_table WHERE seq = OLD.seq;"
                          " END;",
                          NULL, NULL, err);
    return rc != SQLITE_OK ? rc : sqlite3_exec(db, sql, NULL, NULL, err);
}
