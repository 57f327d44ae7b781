/* hostile_db.c — turns a recorded database into a hostile one, in place:
 *   hostile_db names DB    every text column the report reads (symbols,
 *                          Python files, module paths, host, rank, command
 *                          line, Python version) holds hostile bytes:
 *                          invalid UTF-8, terminal escapes, newlines, CSV
 *                          formulas, quotes, separators, bidi overrides
 *   hostile_db values DB   rows that break an invariant are appended, each
 *                          of them to be skipped (sizes -2^63, 2^63-1, 2^62,
 *                          a range past the end of the address space, frees
 *                          before their allocation, a free of no recorded
 *                          allocation, a second free, time going 2 s back
 *                          in a thread, a time 5 s before the run's start,
 *                          device 1000, seq 2^62), and the run's cached figures
 *                          (run.event_count, device_stats, start_ns) are made wrong:
 *                          every answer must equal the untouched database's
 *   hostile_db extremes DB two allocations of 3 x 2^60 bytes (the second
 *                          would take the live bytes past 2^62), a run
 *                          row that ends before it starts, an allocation
 *                          at time -2^63, a range and a mark at times
 *                          -2^63 and 2^63-1
 * Prints what it did on stdout. */
#include <sqlite3.h>
#include <stdint.h>
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

static int64_t one_int(sqlite3 *db, const char *sql)
{
    sqlite3_stmt *st;
    int64_t v = 0;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
        v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return v;
}

struct row {
    int64_t seq, ts, tid;
    int op, api, device;
    int64_t addr, size, ref; /* ref 0: NULL */
    const char *what;
};

static int append(sqlite3 *db, const struct row *rows, size_t n)
{
    sqlite3_stmt *st;
    /* kind 1 = device; ops 1 alloc / 2 free; apis 1 cudaMalloc / 2 cudaFree */
    if (sqlite3_prepare_v2(db,
                           "INSERT INTO event_log(seq, ts_ns, tid, op, api, kind, device, stream, pool, addr, size,"
                           " result, stack_id, ref_seq) VALUES(?,?,?,?,?,1,?,0,0,?,?,0,NULL,?)",
                           -1, &st, NULL) != SQLITE_OK)
        return -1;
    for (size_t i = 0; i < n; i++) {
        const struct row *w = &rows[i];
        int64_t v[] = {w->seq, w->ts, w->tid, w->op, w->api, w->device, w->addr, w->size};
        for (int k = 0; k < 8; k++)
            sqlite3_bind_int64(st, k + 1, v[k]);
        if (w->ref)
            sqlite3_bind_int64(st, 9, w->ref);
        else
            sqlite3_bind_null(st, 9);
        if (sqlite3_step(st) != SQLITE_DONE) {
            sqlite3_finalize(st);
            return -1;
        }
        sqlite3_reset(st);
        printf("seq %lld: %s\n", (long long)w->seq, w->what);
    }
    sqlite3_finalize(st);
    return 0;
}

static int hostile_values(sqlite3 *db)
{
    int64_t s = one_int(db, "SELECT max(seq) FROM event_log");
    int64_t t = one_int(db, "SELECT ts_ns FROM event_log ORDER BY seq DESC LIMIT 1");
    int64_t tid = one_int(db, "SELECT tid FROM event_log ORDER BY seq DESC LIMIT 1");
    int64_t start = one_int(db, "SELECT start_ns FROM run");
    /* the first allocation, freed by the program: freed again below */
    int64_t first = one_int(db, "SELECT a.seq FROM event_log a JOIN event_log f ON f.ref_seq = a.seq"
                                " WHERE a.op = 1 AND a.result = 0 ORDER BY a.seq LIMIT 1");
    /* at the time of the last row (no row may move the run's last time) */
    const struct row rows[] = {
        {s + 1, t, tid, 1, 1, 0, 0x7000000000, INT64_MIN, 0, "alloc, size -2^63"},
        {s + 2, t, tid, 1, 1, 0, 0x7100000000, INT64_MAX, 0, "alloc, size 2^63-1"},
        {s + 3, t, tid, 1, 1, 0, 0x7200000000, (int64_t)1 << 62, 0, "alloc, size 2^62"},
        {s + 4, t, tid, 1, 1, 0, -4096, 8192, 0, "alloc, 8 KiB at 2^64-4096"},
        {s + 5, t, tid, 2, 2, 0, 0x7300000000, 4096, s + 7, "free of a later row"},
        {s + 6, t, tid, 2, 2, 0, 0x7300000000, 4096, s + 6, "free of itself"},
        {s + 7, t, tid, 2, 2, 0, 0x7300000000, 4096, s + 5, "free of a row that is no allocation"},
        /* the run is made to start 10 s earlier than recorded (below): 2 s
         * back in its thread is within the run, 15 s before the recorded
         * start is outside */
        {s + 8, t - 2000000000LL, tid, 1, 1, 0, 0x7400000000, 4096, 0, "alloc 2 s before its thread's last row"},
        {s + 9, start - 15000000000LL, tid + 1, 1, 1, 0, 0x7500000000, 4096, 0, "alloc 5 s before the (moved) start"},
        {s + 10, t, tid, 1, 1, 1000, 0x7600000000, 4096, 0, "alloc on device 1000"},
        {s + 11, t, tid, 2, 2, 0, 0, 0, first, "second free of the first allocation"},
        {(int64_t)1 << 62, t, tid, 1, 1, 0, 0x7700000000, 4096, 0, "alloc numbered 2^62"},
    };
    return append(db, rows, sizeof rows / sizeof rows[0]) ||
           exec1(db, "UPDATE run SET event_count = 999999, start_ns = start_ns - 10000000000;"
                     " UPDATE device_stats SET peak_bytes = 9223372036854775807, live_bytes = -1");
}

static int hostile_extremes(sqlite3 *db)
{
    int64_t s = one_int(db, "SELECT max(seq) FROM event_log");
    int64_t t = one_int(db, "SELECT ts_ns FROM event_log ORDER BY seq DESC LIMIT 1");
    int64_t tid = one_int(db, "SELECT tid FROM event_log ORDER BY seq DESC LIMIT 1");
    const int64_t big = (int64_t)3 << 60;
    const struct row rows[] = {
        {s + 1, t, tid, 1, 1, 0, 0x100000000000, big, 0, "alloc, 3 x 2^60 bytes"},
        {s + 2, t, tid, 1, 1, 0, 0x200000000000, big, 0, "alloc, 3 x 2^60 bytes more"},
        {s + 5, INT64_MIN, tid, 1, 1, 0, 0x300000000000, 4096, 0, "alloc at time -2^63"},
    };
    /* ranges and marks at the ends of time (every verb's times are
     * differences from the run's start) */
    char sql[512];
    snprintf(sql, sizeof sql,
             "INSERT INTO annotations(seq, ts_ns, tid, op, label, parent_seq) VALUES"
             " (%lld, -9223372036854775807 - 1, %lld, 'range_push', 'from the start of time', NULL),"
             " (%lld, 9223372036854775807, %lld, 'mark', 'at the end of time', NULL)",
             (long long)(s + 3), (long long)tid, (long long)(s + 4), (long long)tid);
    return append(db, rows, 3) || exec1(db, "UPDATE run SET end_ns = start_ns - 1") || exec1(db, sql);
}


int main(int argc, char **argv)
{
    static const struct {
        const char *mode;
        int (*fn)(sqlite3 *);
    } modes[] = {{"names", hostile_names}, {"values", hostile_values}, {"extremes", hostile_extremes}};
    int m = -1;
    for (int i = 0; argc == 3 && i < 3; i++)
        if (!strcmp(argv[1], modes[i].mode))
            m = i;
    if (m < 0) {
        fprintf(stderr, "usage: hostile_db names|values|extremes DB\n");
        return 2;
    }
    sqlite3 *db;
    if (sqlite3_open_v2(argv[2], &db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK) {
        fprintf(stderr, "hostile_db: cannot open %s\n", argv[2]);
        return 2;
    }
    int rc = exec1(db, "BEGIN") || modes[m].fn(db) || exec1(db, "COMMIT");
    if (sqlite3_close(db) != SQLITE_OK)
        rc = 1;
    return rc ? 1 : 0;
}
