/* reader.h — opening a gpuledger database for reading, with the checks
 * that turn a missing, truncated, foreign or too-new file into one clear
 * sentence instead of a crash. */
#ifndef GL_READER_H
#define GL_READER_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

/* Returns a read-only connection, or NULL with a message ("FILE: problem")
 * in err. */
sqlite3 *gl_db_open_read(const char *path, char *err, size_t errsz);

/* The "file:" URI gl_db_open_read opens path by (read-only; immutable
 * when no -wal or -journal is beside it), for an ATTACH on a connection
 * opened with SQLITE_OPEN_URI: 0, or -1 when it does not fit. */
#define GL_DB_URI_MAX (3 * 4096 + 32)
int gl_db_read_uri(const char *path, char *uri, size_t sz);

/* Run a query returning one integer; returns `dflt` when there is no row,
 * NULL, or an error. */
int64_t gl_db_int(sqlite3 *db, const char *sql, int64_t dflt);

#endif
