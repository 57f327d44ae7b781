/* hostile_db.c — turns a recorded database into a hostile one, in place:
 *   hostile_db names DB    every text column the report reads (symbols,
 *                          Python files, module paths, host, rank, command
 *                          line, Python version) holds hostile bytes:
 *                          invalid UTF-8, terminal escapes, newlines, CSV
 *                          formulas, quotes, separators, bidi overrides
 * Prints what it did on stdout. */
#include <sqlite3.h>
#include <stdio.h>
#include <string.h>

/* Hostile names, cycled over the rows. */
static const char *const names[] = {
    "=HYPERLINK(\"http://x\";\"y\")",
    "+cmd|' /C calc'!A0",
    "-2+3",
    "@SUM(A1)",
    "\tstarts with a tab",
    "\rstarts with a CR",
    "red \x1b[31mESC[31m\x1b[0m and a title \x1b]0;owned\x07",
    "line one\nline two\r\n",
    "semi;colon and spaces; a;b",
    "quote \" backslash \\ apostrophe ' <tag> & &amp;",
    "bad utf-8 \xff\xfe \xc3\x28 \xed\xa0\x80 \xf4\x90\x80\x80 \xc0\xaf cut \xe2\x82",
    "C1 CSI \xc2\x9b" "31m and NEL \xc2\x85",
    "bidi \xe2\x80\xae" "gnp.exe\xe2\x80\xac and \xe2\x81\xa6isolate\xe2\x81\xa9, line sep \xe2\x80\xa8",
    "DEL \x7f BEL \x07 BS \x08 VT \x0b FF \x0c",
    "ok unicode: \xc3\xa9t\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x94\xa5",
};
#define NNAMES (sizeof names / sizeof names[0])

static int exec1(sqlite3 *db, const char *sql)
{
    char *err = NULL;
    if (sqlite3_exec(db, sql, NULL, NULL, &err) != SQLITE_OK) {
        fprintf(stderr, "hostile_db: %s: %s\n", sql, err ? err : "?");
        sqlite3_free(err);
        return -1;
    }
    return 0;
}

/* UPDATE table SET col = <hostile name k> WHERE key = id, for every row. */
static int rewrite(sqlite3 *db, const char *table, const char *col, const char *key, unsigned offset)
{
    char sql[256];
    sqlite3_stmt *ids, *up;
    snprintf(sql, sizeof sql, "SELECT %s FROM %s", key, table);
    if (sqlite3_prepare_v2(db, sql, -1, &ids, NULL) != SQLITE_OK)
        return -1;
    snprintf(sql, sizeof sql, "UPDATE %s SET %s = ? WHERE %s = ?", table, col, key);
    if (sqlite3_prepare_v2(db, sql, -1, &up, NULL) != SQLITE_OK) {
        sqlite3_finalize(ids);
        return -1;
    }
    unsigned k = offset, n = 0;
    while (sqlite3_step(ids) == SQLITE_ROW) {
        const char *s = names[k++ % NNAMES];
        sqlite3_bind_text(up, 1, s, -1, SQLITE_STATIC);
        sqlite3_bind_value(up, 2, sqlite3_column_value(ids, 0));
        if (sqlite3_step(up) != SQLITE_DONE)
            return -1;
        sqlite3_reset(up);
        n++;
    }
    sqlite3_finalize(ids);
    sqlite3_finalize(up);
    printf("%s.%s: %u rows\n", table, col, n);
    return 0;
}

static int hostile_names(sqlite3 *db)
{
    /* every other frame a Python frame, so both ways of naming a frame
     * ("symbol (file:line)" and "symbol") are exercised */
    if (exec1(db, "UPDATE frames SET python = id % 2, line = CASE WHEN id % 2 THEN 7 ELSE line END") ||
        rewrite(db, "frames", "symbol", "id", 0) || rewrite(db, "frames", "file", "id", 5) ||
        rewrite(db, "modules", "path", "id", 9) || rewrite(db, "run", "hostname", "rowid", 6) ||
        rewrite(db, "run", "rank", "rowid", 7) || rewrite(db, "run", "cmdline", "rowid", 10))
        return -1;
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, "INSERT OR REPLACE INTO meta(key, value) VALUES('python_version', ?)", -1, &st,
                           NULL) != SQLITE_OK)
        return -1;
    sqlite3_bind_text(st, 1, names[6], -1, SQLITE_STATIC);
    int rc = sqlite3_step(st) == SQLITE_DONE ? 0 : -1;
    sqlite3_finalize(st);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc != 3 || strcmp(argv[1], "names")) {
        fprintf(stderr, "usage: hostile_db names DB\n");
        return 2;
    }
    sqlite3 *db;
    if (sqlite3_open_v2(argv[2], &db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK) {
        fprintf(stderr, "hostile_db: cannot open %s\n", argv[2]);
        return 2;
    }
    int rc = exec1(db, "BEGIN") || hostile_names(db) || exec1(db, "COMMIT");
    if (sqlite3_close(db) != SQLITE_OK)
        rc = 1;
    return rc ? 1 : 0;
}
