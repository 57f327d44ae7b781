/* schema.h — the versioned SQLite schema (the SQL contract in docs/schema.md). */
#ifndef GL_SCHEMA_H
#define GL_SCHEMA_H

#include <sqlite3.h>

/* Stored in PRAGMA user_version. Bump on any incompatible change. The
 * newest schema, the one a reader reads up to: 6, a packed recording
 * (gl_schema_pack); a recording without packs is schema 5's. */
#define GL_SCHEMA_VERSION 6
#define GL_SCHEMA_VERSION_UNPACKED 5
/* Stored in PRAGMA application_id so foreign SQLite files are recognised:
 * the bytes "GPUL". */
#define GL_APPLICATION_ID 0x4750554c

/* The view event_log of schema 4, as it is stored in sqlite_master: a
 * reader that finds exactly this text may read the two tables under it
 * (report/model/model_rows.c). */
#define GL_EVENT_LOG_VIEW                                                                           \
    "CREATE VIEW event_log AS SELECT e.seq, e.ts_ns, c.tid, e.op, c.api, e.kind, e.device,"        \
    " c.stream, c.pool, e.addr, e.size, c.result, e.stack_id, e.ref_seq, e.aux, e.range_seq"        \
    " FROM event_rows e LEFT JOIN event_contexts c ON c.id = e.context"

/* Schema 6, a packed recording: the rows of events are packs in
 * event_packs (pack.h), shown as rows by the SQL module gl_packed_events
 * (packvtab.h); event_rows is a view of them and of event_rows_table (the
 * rows others write through event_log), and every other view reads it as
 * before. The text of that view, as sqlite_master keeps it: */
#define GL_EVENT_ROWS_VIEW                                                                          \
    "CREATE VIEW event_rows AS SELECT seq, ts_ns, context, op, kind, device, addr, size, stack_id," \
    " ref_seq, aux, range_seq FROM event_rows_table UNION ALL SELECT seq, ts_ns, context, op, kind," \
    " device, addr, size, stack_id, ref_seq, aux, range_seq FROM gl_packed_events"
/* Make the schema just created (no rows yet) schema 6. SQLITE_OK or an
 * error code (message in *err, sqlite3_free it). */
int gl_schema_pack(sqlite3 *db, char **err);

/* Create every table, index and view, and fill the name tables.
 * Returns SQLITE_OK or an error code (message in *err, sqlite3_free it). */
int gl_schema_create(sqlite3 *db, char **err);

/* The index of event_log.ref_seq (the row a free, unmap or completion
 * ends), which the views' joins and the query API use. It is not kept up
 * while recording (kept row by row it costs the writer a sixth of its work
 * per tensor alloc+free): it is built in one pass when the run ends (a
 * sort: several times cheaper), or at the first query API question.
 * Returns SQLITE_OK or an error code. */
int gl_schema_ref_index(sqlite3 *db);

#endif
