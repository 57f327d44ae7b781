/* wdb.h — the writer's SQLite connection as the store's parts share it:
 * prepare a persistent statement, run SQL, step a statement to its end,
 * and keep the last error as one line. */
#ifndef GL_WDB_H
#define GL_WDB_H

#include <sqlite3.h>

struct gl_wdb {
    sqlite3 *db;
    char err[512];
};

/* Each returns 0, or -1 with "what: sqlite's message" in w->err. */
int gl_wdb_prepare(struct gl_wdb *w, sqlite3_stmt **st, const char *sql);
int gl_wdb_exec(struct gl_wdb *w, const char *sql);
/* Step st to SQLITE_DONE and reset it. */
int gl_wdb_step(struct gl_wdb *w, sqlite3_stmt *st, const char *what);
int gl_wdb_fail(struct gl_wdb *w, const char *what);
/* sqlite3_finalize each of n statements (NULL ones are fine). */
void gl_wdb_finalize(sqlite3_stmt **const *sts, int n);

#endif
