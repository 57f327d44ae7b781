/* reader.c — see reader.h. */
#include "reader.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "packvtab.h"
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

/* "file:" URI of a path: every byte outside [A-Za-z0-9/._~-] percent-
 * encoded (a '?' or '#' in a file name must not start the query). */
static int path_uri(const char *path, const char *query, char *buf, size_t sz)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t n = (size_t)snprintf(buf, sz, "%s", path[0] == '/' ? "file://" : "file:");
    for (const unsigned char *p = (const unsigned char *)path; *p; p++) {
        if (n + 4 >= sz)
            return -1;
        if ((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') ||
            strchr("/._~-", *p)) {
            buf[n++] = (char)*p;
        } else {
            buf[n++] = '%';
            buf[n++] = hex[*p >> 4];
            buf[n++] = hex[*p & 15];
        }
    }
    int w = snprintf(buf + n, sz - n, "?%s", query);
    return w < 0 || (size_t)w >= sz - n ? -1 : 0;
}

static int exists_with(const char *path, const char *suffix)
{
    char p[4200];
    struct stat sb;
    return snprintf(p, sizeof p, "%s%s", path, suffix) < (int)sizeof p && stat(p, &sb) == 0;
}

/* Never a write, never a new file next to the database. A finished
 * database (no -wal, no hot -journal) is opened immutable: SQLite then
 * takes no locks and creates no -wal/-shm, so a 0444 file in a read-only
 * directory reads too. One still being written (or left by a killed
 * process) has its -wal: it is opened read-only the ordinary way, which
 * reads the committed frames of the WAL (and, where the -shm cannot be
 * written, keeps the WAL index in memory). */
int gl_db_read_uri(const char *path, char *uri, size_t sz)
{
    int live = exists_with(path, "-wal") || exists_with(path, "-journal");
    return path_uri(path, live ? "mode=ro" : "immutable=1", uri, sz);
}

static int open_readonly(const char *path, sqlite3 **db)
{
    char uri[GL_DB_URI_MAX];
    if (gl_db_read_uri(path, uri, sizeof uri))
        return SQLITE_CANTOPEN;
    return sqlite3_open_v2(uri, db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX, NULL);
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
    /* SQLite takes a file shorter than a page for an empty database: say
     * what it is before SQLite can */
    if (sb.st_size < 100) {
        snprintf(err, errsz, "%s: not a SQLite database (%lld byte%s, shorter than SQLite's header)", path,
                 (long long)sb.st_size, sb.st_size == 1 ? "" : "s");
        return NULL;
    }
    sqlite3 *db = NULL;
    int rc = open_readonly(path, &db);
    if (rc != SQLITE_OK) {
        /* SQLite's unix VFS takes full paths of under 512 bytes (its MAX_PATHNAME) */
        char *full = realpath(path, NULL);
        size_t len = full ? strlen(full) : strlen(path);
        free(full);
        snprintf(err, errsz, "%s: cannot open: %s%s", path, db ? sqlite3_errmsg(db) : "out of memory",
                 db && len >= 512 ? " (SQLite opens files whose full path is under 512 bytes: move or link it to "
                                    "a shorter one)"
                                  : "");
        sqlite3_close(db);
        return NULL;
    }
    sqlite3_busy_timeout(db, 2000);
    gl_packvtab_register(db); /* the packs of schema 6 as rows */
    sqlite3_stmt *st = NULL;
    rc = sqlite3_prepare_v2(db, "PRAGMA application_id", -1, &st, NULL);
    if (rc != SQLITE_OK || sqlite3_step(st) != SQLITE_ROW) {
        if (sqlite3_errcode(db) == SQLITE_CANTOPEN && exists_with(path, "-wal") && !exists_with(path, "-shm"))
            snprintf(err, errsz,
                     "%s: has a -wal (its process did not finish) but no -shm, and neither can be created here: "
                     "copy it with its -wal into a directory you can write",
                     path);
        else
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
    int64_t runs = gl_db_int(db, "SELECT count(*) FROM run", -1);
    if (runs < 1) {
        if (runs == 0)
            snprintf(err, errsz, "%s: no run row: its process died before its first commit, or the file is damaged",
                     path);
        else
            snprintf(err, errsz, "%s: damaged: its run table cannot be read (%s)", path, sqlite3_errmsg(db));
        sqlite3_close(db);
        return NULL;
    }
    return db;
}
