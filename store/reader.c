/* reader.c — see reader.h. */
#include "reader.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "schema.h"

int64_t gl_db_int(sqlite3 *db, const char *sql, int64_t dflt)
{
    sqlite3_stmt *st = NULL;
    int64_t v = dflt;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW &&
        sqlite3_column_type(st, 0) != SQLITE_NULL)
        v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return v;
}

sqlite3 *gl_db_open_read(const char *path, char *err, size_t errsz)
{
    struct stat sb;
    if (stat(path, &sb) != 0) {
        snprintf(err, errsz, "%s: %s", path, strerror(errno));
        return NULL;
    }
    if (!S_ISREG(sb.st_mode)) {
        snprintf(err, errsz, "%s: not a regular file", path);
        return NULL;
    }
    if (sb.st_size == 0) {
        snprintf(err, errsz, "%s: empty file (the profiled process may have died before its first commit)",
                 path);
        return NULL;
    }
    sqlite3 *db = NULL;
    /* Read-write open (not _READONLY) so that a WAL left by a killed
     * process can be recovered; we never write. */
    int rc = sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL);
    if (rc != SQLITE_OK) {
        sqlite3_close(db);
        db = NULL;
        rc = sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, NULL);
    }
    if (rc != SQLITE_OK) {
        snprintf(err, errsz, "%s: cannot open: %s", path, db ? sqlite3_errmsg(db) : "out of memory");
        sqlite3_close(db);
        return NULL;
    }
    sqlite3_busy_timeout(db, 2000);
    sqlite3_stmt *st = NULL;
    rc = sqlite3_prepare_v2(db, "PRAGMA application_id", -1, &st, NULL);
    if (rc != SQLITE_OK || sqlite3_step(st) != SQLITE_ROW) {
        snprintf(err, errsz, "%s: not a SQLite database, or damaged (%s)", path, sqlite3_errmsg(db));
        sqlite3_finalize(st);
        sqlite3_close(db);
        return NULL;
    }
    int app = sqlite3_column_int(st, 0);
    sqlite3_finalize(st);
    if (app != GL_APPLICATION_ID) {
        snprintf(err, errsz, "%s: a SQLite database, but not one written by gpuledger", path);
        sqlite3_close(db);
        return NULL;
    }
    int64_t ver = gl_db_int(db, "PRAGMA user_version", -1);
    if (ver > GL_SCHEMA_VERSION) {
        snprintf(err, errsz, "%s: written by a newer gpuledger (schema %lld; this one reads up to %d): upgrade",
                 path, (long long)ver, GL_SCHEMA_VERSION);
        sqlite3_close(db);
        return NULL;
    }
    if (ver < 1) {
        snprintf(err, errsz, "%s: schema version %lld is not one gpuledger wrote", path, (long long)ver);
        sqlite3_close(db);
        return NULL;
    }
    if (gl_db_int(db, "SELECT count(*) FROM run", -1) < 1) {
        snprintf(err, errsz, "%s: damaged or truncated (no run row: %s)", path, sqlite3_errmsg(db));
        sqlite3_close(db);
        return NULL;
    }
    return db;
}

const char *gl_fmt_bytes(uint64_t bytes, char *buf, size_t sz)
{
    static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double v = (double)bytes;
    int u = 0;
    while (v >= 1024 && u < 4) {
        v /= 1024;
        u++;
    }
    if (u == 0)
        snprintf(buf, sz, "%llu B", (unsigned long long)bytes);
    else
        snprintf(buf, sz, "%.2f %s", v, unit[u]);
    return buf;
}
