/* wdb.c — see wdb.h. */
#include "wdb.h"

#include <stdio.h>

int gl_wdb_fail(struct gl_wdb *w, const char *what)
{
    snprintf(w->err, sizeof w->err, "%s: %s", what, w->db ? sqlite3_errmsg(w->db) : "no database");
    return -1;
}

int gl_wdb_prepare(struct gl_wdb *w, sqlite3_stmt **st, const char *sql)
{
    if (sqlite3_prepare_v3(w->db, sql, -1, SQLITE_PREPARE_PERSISTENT, st, NULL) != SQLITE_OK)
        return gl_wdb_fail(w, "preparing a statement");
    return 0;
}

int gl_wdb_exec(struct gl_wdb *w, const char *sql)
{
    if (sqlite3_exec(w->db, sql, NULL, NULL, NULL) != SQLITE_OK)
        return gl_wdb_fail(w, sql);
    return 0;
}

int gl_wdb_step(struct gl_wdb *w, sqlite3_stmt *st, const char *what)
{
    int rc = sqlite3_step(st);
    sqlite3_reset(st);
    if (rc != SQLITE_DONE)
        return gl_wdb_fail(w, what);
    return 0;
}

void gl_wdb_finalize(sqlite3_stmt **const *sts, int n)
{
    for (int i = 0; i < n; i++) {
        sqlite3_finalize(*sts[i]);
        *sts[i] = NULL;
    }
}
