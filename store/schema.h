/* schema.h — the versioned SQLite schema (the SQL contract in docs/schema.md). */
#ifndef GL_SCHEMA_H
#define GL_SCHEMA_H

#include <sqlite3.h>

/* Stored in PRAGMA user_version. Bump on any incompatible change. */
#define GL_SCHEMA_VERSION 5
/* Stored in PRAGMA application_id so foreign SQLite files are recognised:
 * the bytes "GPUL". */
#define GL_APPLICATION_ID 0x4750554c

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
