/* schema.c — DDL for a gpuledger database. Integer codes are stored in
 * event_log; the documented views (events, allocations, mappings, heaps,
 * regions, stack_frames) give them names. */
#include "schema.h"

#include <stdio.h>

#include "gl_event.h"
#include "retention.h"

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
    "CREATE TABLE event_log("
    " seq INTEGER PRIMARY KEY, ts_ns INTEGER NOT NULL, tid INTEGER,"
    " op INTEGER NOT NULL, api INTEGER, kind INTEGER, device INTEGER,"
    " stream INTEGER, pool INTEGER, addr INTEGER, size INTEGER,"
    " result INTEGER, stack_id INTEGER, ref_seq INTEGER, aux INTEGER, range_seq INTEGER);"
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
    " a.tid, a.stack_id, a.stream, a.pool, f.seq AS free_seq,"
    " f.stack_id AS free_stack_id, fn.name AS free_api"
    " FROM event_log a"
    " LEFT JOIN event_log f ON f.ref_seq = a.seq AND f.op IN (2, 8)"
    " LEFT JOIN api_names an ON an.id = a.api"
    " LEFT JOIN api_names fn ON fn.id = f.api"
    " LEFT JOIN kind_names kn ON kn.id = a.kind"
    " WHERE a.op IN (1, 7) AND a.result = 0 AND coalesce(kn.layer, '') != 'sub';"
    /* Reserved VA ranges and mappings (cuMemAddressReserve, cuMemMap). */
    "CREATE VIEW mappings AS SELECT a.seq AS id, a.device, an.name AS api,"
    " kn.name AS kind, a.addr, a.size, a.aux AS handle, a.ts_ns AS start_ns,"
    " f.ts_ns AS end_ns, a.tid, a.stack_id"
    " FROM event_log a"
    " LEFT JOIN event_log f ON f.ref_seq = a.seq AND f.op IN (4, 6)"
    " LEFT JOIN api_names an ON an.id = a.api"
    " LEFT JOIN kind_names kn ON kn.id = a.kind"
    " WHERE a.op IN (3, 5) AND a.result = 0 AND coalesce(kn.layer, '') != 'sub';"
    /* Names given to heaps and regions (ref_seq: the row that began it). */
    "CREATE TABLE names(seq INTEGER PRIMARY KEY, ref_seq INTEGER, name TEXT);"
    /* Heaps of a program's own pools (nvtxMemHeapRegister,
     * gpuledger_heap_register): one row per registration. */
    "CREATE VIEW heaps AS SELECT h.seq AS id, h.addr AS base, h.size, h.aux AS usage,"
    " (SELECT p.aux FROM event_log p WHERE p.ref_seq = h.seq AND p.op = 27 ORDER BY p.seq DESC LIMIT 1)"
    " AS page_size,"
    " (SELECT n.name FROM names n WHERE n.ref_seq = h.seq ORDER BY n.seq DESC LIMIT 1) AS name,"
    " h.ts_ns AS register_ns, u.ts_ns AS unregister_ns, h.tid, h.stack_id, u.seq AS unregister_seq"
    " FROM event_log h LEFT JOIN event_log u ON u.ref_seq = h.seq AND u.op = 2"
    " WHERE h.op = 1 AND h.kind = 13;"
    /* Regions handed out inside heaps (sub-allocations: never counted in
     * device totals): size and used bytes as they were last set. */
    "CREATE VIEW regions AS SELECT r.seq AS id, r.ref_seq AS heap_id, r.pool AS heap_base, r.addr,"
    " r.addr - r.pool AS offset,"
    " coalesce((SELECT z.size FROM event_log z WHERE z.ref_seq = r.seq AND z.op = 25"
    " ORDER BY z.seq DESC LIMIT 1), r.size) AS size, r.size AS initial_size,"
    " coalesce((SELECT u.aux FROM event_log u WHERE u.ref_seq = r.seq AND u.op = 27"
    " ORDER BY u.seq DESC LIMIT 1), r.aux) AS used,"
    " (SELECT n.name FROM names n WHERE n.ref_seq = r.seq ORDER BY n.seq DESC LIMIT 1) AS name,"
    " r.ts_ns AS alloc_ns, f.ts_ns AS free_ns, r.tid, r.stack_id, f.seq AS free_seq,"
    " f.stack_id AS free_stack_id, fa.name AS free_api"
    " FROM event_log r LEFT JOIN event_log f ON f.ref_seq = r.seq AND f.op = 2"
    " LEFT JOIN api_names fa ON fa.id = f.api"
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
    "CREATE INDEX event_log_segments ON event_log(device, addr) WHERE kind = 12;"
    /* the rows the views look up one by one (a block's tag, a region's
     * resizes, a heap's or region's last set, names): rare rows, indexed
     * while recording, so that the views stay fast without event_log_ref
     * (schema.h) in a run that ended without it */
    "CREATE INDEX event_log_tags ON event_log(ref_seq) WHERE op = 19;"
    "CREATE INDEX event_log_resizes ON event_log(ref_seq) WHERE op = 25;"
    "CREATE INDEX event_log_sets ON event_log(ref_seq) WHERE op = 27;"
    "CREATE INDEX names_ref ON names(ref_seq);"
    /* One row per tensor block (PyTorch's caching allocator): requested and
     * block bytes, the segment (or mapped range) holding it, when the
     * tensor let go of it (free_ns) and when it was reusable (released_ns,
     * later when record_stream was used), its stacks and its identity tag. */
    "CREATE VIEW tensor_blocks AS SELECT a.seq AS id, a.device, a.addr, a.size AS requested,"
    " a.aux AS size, (SELECT s.addr FROM event_log s WHERE s.kind = 12 AND s.op IN (1, 3)"
    " AND s.device = a.device AND s.addr <= a.addr AND s.seq < a.seq AND a.addr < s.addr + s.size"
    " ORDER BY s.seq DESC LIMIT 1) AS segment, a.stream, a.pool, an.name AS api,"
    " a.ts_ns AS alloc_ns, f.ts_ns AS free_ns,"
    " coalesce(c.ts_ns, CASE WHEN f.op = 2 THEN f.ts_ns END) AS released_ns, a.tid, a.stack_id,"
    " f.stack_id AS free_stack_id, a.range_seq,"
    " (SELECT tn.name FROM event_log t JOIN tag_names tn ON tn.id = t.aux WHERE t.op = 19"
    " AND t.ref_seq = a.seq ORDER BY t.seq LIMIT 1) AS category"
    " FROM event_log a"
    " LEFT JOIN event_log f ON f.ref_seq = a.seq AND f.op IN (2, 20) AND f.kind = 11"
    " LEFT JOIN event_log c ON c.ref_seq = a.seq AND c.op = 17"
    " LEFT JOIN api_names an ON an.id = a.api"
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
    return sqlite3_exec(db, "CREATE INDEX IF NOT EXISTS event_log_ref ON event_log(ref_seq) WHERE ref_seq IS NOT NULL",
                        NULL, NULL, NULL);
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
             GL_SCHEMA_VERSION);
    return sqlite3_exec(db, sql, NULL, NULL, err);
}
