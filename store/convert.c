/* convert.c — see convert.h. The copy is made on one connection to the
 * new file with the recording attached read-only (so every read is of one
 * snapshot): the current schema created, every other table's rows copied
 * by name, and the events read in seq order from the file's table and
 * packs and written by the writer's rows.c, packed or a row each. */
#include "convert.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pack.h"
#include "packvtab.h"
#include "reader.h"
#include "rows.h"
#include "schema.h"
#include "wdb.h"

#define ROW_COLUMNS "seq, ts_ns, context, op, kind, device, addr, size, stack_id, ref_seq, aux, range_seq"
/* how often progress is told (events) */
#define PROGRESS_EVERY 262144

/* The events of the recording in seq order: its table's rows merged with
 * its packs' (schema 6 has both; 5 only the table). */
struct event_source {
    sqlite3_stmt *table, *packs;
    int table_ready;         /* trow holds the table's next row */
    struct gl_row trow;
    struct gl_row prow[GL_PACK_ROWS];
    int np, ip;              /* rows of the pack decoded, the next one */
    int table_done, packs_done;
};

/* The message into err; the expression is -1. */
#define say(err, errsz, ...) (snprintf((err), (errsz), __VA_ARGS__), -1)

static void table_row(sqlite3_stmt *st, struct gl_row *row)
{
    row->null = 0;
    for (int c = 0; c < GL_ROW_COLS; c++) {
        if (sqlite3_column_type(st, c) == SQLITE_NULL) {
            row->null |= (uint16_t)(1u << c);
            row->v[c] = 0;
        } else {
            row->v[c] = sqlite3_column_int64(st, c);
        }
    }
}

/* Step the table: 0 (a row, or the end), -1 on an error. */
static int next_table(sqlite3 *db, struct event_source *s, char *err, size_t errsz)
{
    if (s->table_done || s->table_ready)
        return 0;
    int rc = sqlite3_step(s->table);
    if (rc == SQLITE_ROW) {
        table_row(s->table, &s->trow);
        s->table_ready = 1;
        return 0;
    }
    s->table_done = 1;
    return rc == SQLITE_DONE ? 0 : say(err, errsz, "reading the events: %s", sqlite3_errmsg(db));
}

/* The next pack decoded: 0 (a pack, or the end), -1 on an error. */
static int next_pack(sqlite3 *db, struct event_source *s, char *err, size_t errsz)
{
    if (s->packs_done || s->ip < s->np)
        return 0;
    s->ip = s->np = 0;
    int rc = sqlite3_step(s->packs);
    if (rc != SQLITE_ROW) {
        s->packs_done = 1;
        return rc == SQLITE_DONE ? 0 : say(err, errsz, "reading the packs: %s", sqlite3_errmsg(db));
    }
    int n = gl_pack_decode(sqlite3_column_blob(s->packs, 2), (size_t)sqlite3_column_bytes(s->packs, 2),
                           sqlite3_column_int(s->packs, 1), s->prow);
    if (n < 0 || (n && s->prow[0].v[0] != sqlite3_column_int64(s->packs, 0)))
        return say(err, errsz, "the pack of events from seq %lld is damaged",
                   (long long)sqlite3_column_int64(s->packs, 0));
    s->np = n;
    return 0;
}

/* The next event into *row: 1, 0 at the end, -1 on an error. */
static int next_event(sqlite3 *db, struct event_source *s, struct gl_row *row, char *err, size_t errsz)
{
    if (next_table(db, s, err, errsz) || (s->packs && next_pack(db, s, err, errsz)))
        return -1;
    int have_pack = s->ip < s->np;
    if (!s->table_ready && !have_pack)
        return 0;
    if (s->table_ready && have_pack && s->trow.v[0] == s->prow[s->ip].v[0])
        return say(err, errsz, "damaged: two events numbered alike in its table and its packs");
    if (s->table_ready && (!have_pack || s->trow.v[0] < s->prow[s->ip].v[0])) {
        *row = s->trow;
        s->table_ready = 0;
    } else {
        *row = s->prow[s->ip++];
    }
    return 1;
}

static int table_exists(sqlite3 *db, const char *schema, const char *name)
{
    char *sql = sqlite3_mprintf("SELECT 1 FROM \"%w\".sqlite_schema WHERE type = 'table' AND name = %Q", schema,
                                name);
    int found = sql && gl_db_int(db, sql, 0) == 1;
    sqlite3_free(sql);
    return found;
}

/* The columns of schema.name that main.name has too, quoted, comma
 * separated (sqlite3_free it; NULL: out of memory or none). */
static char *common_columns(sqlite3 *db, const char *name)
{
    sqlite3_stmt *st = NULL;
    char *cols = NULL;
    if (sqlite3_prepare_v2(db,
                           "SELECT s.name FROM pragma_table_info(?1, 'src') s"
                           " WHERE s.name IN (SELECT m.name FROM pragma_table_info(?1, 'main') m) ORDER BY s.cid",
                           -1, &st, NULL) != SQLITE_OK)
        return NULL;
    sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
    while (sqlite3_step(st) == SQLITE_ROW) {
        char *more = sqlite3_mprintf("%s%s\"%w\"", cols ? cols : "", cols ? ", " : "",
                                     (const char *)sqlite3_column_text(st, 0));
        sqlite3_free(cols);
        cols = more;
        if (!cols)
            break;
    }
    sqlite3_finalize(st);
    return cols;
}

/* Every table of the recording but its events into the copy, the rows of
 * each replacing those the new schema starts with: 0 or -1. */
static int copy_tables(struct gl_wdb *w, int64_t *ntables)
{
    sqlite3_stmt *st = NULL;
    if (gl_wdb_prepare(w, &st,
                       "SELECT name, sql FROM src.sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
                       " AND name NOT IN ('event_rows', 'event_rows_table', 'event_packs') ORDER BY name"))
        return -1;
    int rc = 0;
    while (!rc && sqlite3_step(st) == SQLITE_ROW) {
        const char *name = (const char *)sqlite3_column_text(st, 0);
        const char *create = (const char *)sqlite3_column_text(st, 1);
        if (!table_exists(w->db, "main", name) && create && gl_wdb_exec(w, create)) {
            rc = -1;
            break;
        }
        char *cols = common_columns(w->db, name);
        char *sql = cols ? sqlite3_mprintf("DELETE FROM main.\"%w\"; INSERT INTO main.\"%w\"(%s) SELECT %s FROM "
                                           "src.\"%w\"",
                                           name, name, cols, cols, name)
                         : NULL;
        rc = !sql ? gl_wdb_fail(w, "copying the tables: out of memory") : gl_wdb_exec(w, sql);
        sqlite3_free(sql);
        sqlite3_free(cols);
        (*ntables)++;
    }
    sqlite3_finalize(st);
    return rc;
}

/* The events in seq order into rows (packed or a row each): 0 or -1. */
static int copy_events(struct gl_wdb *w, struct gl_rows *rows, int from_packed, struct gl_convert_stats *stats,
                       void (*progress)(int64_t, int64_t, void *), void *arg, char *err, size_t errsz)
{
    struct event_source *s = calloc(1, sizeof *s);
    if (!s)
        return say(err, errsz, "copying the events: out of memory");
    int64_t total = 0;
    if (progress)
        total = gl_db_int(w->db,
                          from_packed ? "SELECT (SELECT count(*) FROM src.event_rows_table) +"
                                        " (SELECT coalesce(sum(n), 0) FROM src.event_packs)"
                                      : "SELECT count(*) FROM src.event_rows",
                          0);
    int rc = gl_wdb_prepare(w, &s->table,
                            from_packed ? "SELECT " ROW_COLUMNS " FROM src.event_rows_table ORDER BY seq"
                                        : "SELECT " ROW_COLUMNS " FROM src.event_rows ORDER BY seq");
    if (!rc && from_packed)
        rc = gl_wdb_prepare(w, &s->packs, "SELECT seq_lo, n, data FROM src.event_packs ORDER BY seq_lo");
    if (rc)
        snprintf(err, errsz, "%s", w->err);
    struct gl_row row;
    int got = 0;
    int64_t last = 0;
    while (!rc && (got = next_event(w->db, s, &row, err, errsz)) == 1) {
        if (row.v[0] <= last) {
            rc = say(err, errsz, "damaged: its events are not in seq order");
            break;
        }
        last = row.v[0];
        if (gl_rows_put(rows, &row)) {
            rc = -1;
            snprintf(err, errsz, "%s", w->err);
        }
        if (++stats->events % PROGRESS_EVERY == 0 && progress)
            progress(stats->events, total, arg);
    }
    if (!rc && got < 0)
        rc = -1;
    if (!rc && gl_rows_flush(rows)) {
        rc = -1;
        snprintf(err, errsz, "%s", w->err);
    }
    if (!rc && progress)
        progress(stats->events, total, arg);
    sqlite3_stmt **const sts[] = {&s->table, &s->packs};
    gl_wdb_finalize(sts, 2);
    free(s);
    return rc;
}

/* The copy into the open connection w (src attached): 0 or -1. */
static int fill(struct gl_wdb *w, int packed, int from_version, struct gl_convert_stats *stats,
                void (*progress)(int64_t, int64_t, void *), void *arg, char *err, size_t errsz)
{
    char *msg = NULL;
    /* main's alone: a pragma without its schema would try the recording's too */
    if (gl_wdb_exec(w, "PRAGMA main.journal_mode=OFF; PRAGMA main.synchronous=OFF; BEGIN")) {
        snprintf(err, errsz, "%s", w->err);
        return -1;
    }
    int rc = gl_schema_create(w->db, &msg);
    if (rc == SQLITE_OK && packed)
        rc = gl_schema_pack(w->db, &msg);
    if (rc != SQLITE_OK) {
        snprintf(err, errsz, "creating the schema: %s", msg ? msg : sqlite3_errstr(rc));
        sqlite3_free(msg);
        return -1;
    }
    struct gl_rows rows;
    if (copy_tables(w, &stats->tables) || gl_rows_open(&rows, w)) {
        snprintf(err, errsz, "%s", w->err);
        return -1;
    }
    rc = (packed ? gl_rows_pack(&rows) : gl_rows_explicit_seq(&rows)) ? -1 : 0;
    if (rc)
        snprintf(err, errsz, "%s", w->err);
    if (!rc)
        rc = copy_events(w, &rows, from_version == GL_SCHEMA_VERSION, stats, progress, arg, err, errsz);
    gl_rows_close(&rows);
    char sql[160]; /* the copy's layout said where its readers look */
    snprintf(sql, sizeof sql, "UPDATE main.run SET schema_version = %d; %s", stats->to_version,
             packed ? "INSERT OR REPLACE INTO main.meta(key, value) VALUES('packed', '1')"
                    : "DELETE FROM main.meta WHERE key = 'packed'");
    if (!rc && (gl_wdb_exec(w, sql) || gl_schema_ref_index(w->db) != SQLITE_OK || gl_wdb_exec(w, "COMMIT"))) {
        snprintf(err, errsz, "%s", *w->err ? w->err : sqlite3_errmsg(w->db));
        rc = -1;
    }
    return rc;
}

/* The copy being written, removed when an interrupt ends the process
 * (Ctrl-C, a kill): the signal's default then ends it as it would have. */
static char partial[4200];
static const int stop_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
#define NSTOP (sizeof stop_signals / sizeof stop_signals[0])

static void remove_partial(int sig)
{
    unlink(partial);
    signal(sig, SIG_DFL);
    raise(sig);
}

static void on_stop(struct sigaction *old, int install)
{
    for (size_t i = 0; i < NSTOP; i++) {
        if (install) {
            struct sigaction sa;
            memset(&sa, 0, sizeof sa);
            sa.sa_handler = remove_partial;
            sigemptyset(&sa.sa_mask);
            sigaction(stop_signals[i], &sa, &old[i]);
        } else {
            sigaction(stop_signals[i], &old[i], NULL);
        }
    }
}

static int64_t file_size(const char *path)
{
    struct stat sb;
    return stat(path, &sb) ? 0 : (int64_t)sb.st_size;
}

int gl_db_convert(const char *in, const char *out, int packed, struct gl_convert_stats *stats,
                  void (*progress)(int64_t, int64_t, void *), void *arg, char *err, size_t errsz)
{
    memset(stats, 0, sizeof *stats);
    struct stat sb;
    if (!stat(out, &sb))
        return say(err, errsz, "%s: exists: a database is never overwritten (remove it, or name another)", out);
    if (errno != ENOENT)
        return say(err, errsz, "%s: %s", out, strerror(errno));
    sqlite3 *rd = gl_db_open_read(in, err, errsz); /* the checks, with their messages */
    if (!rd)
        return -1;
    stats->from_version = (int)gl_db_int(rd, "PRAGMA user_version", 0);
    sqlite3_close(rd);
    if (stats->from_version < GL_SCHEMA_VERSION_UNPACKED)
        return say(err, errsz, "%s: schema %d: only recordings of schema 5 or 6 are copied (read this one as it is)",
                   in, stats->from_version);
    stats->to_version = packed ? GL_SCHEMA_VERSION : GL_SCHEMA_VERSION_UNPACKED;
    char uri[GL_DB_URI_MAX];
    if (snprintf(partial, sizeof partial, "%s.partial-%ld", out, (long)getpid()) >= (int)sizeof partial ||
        gl_db_read_uri(in, uri, sizeof uri))
        return say(err, errsz, "%s: the path is too long", in);
    struct sigaction old[NSTOP];
    on_stop(old, 1);
    struct gl_wdb w;
    memset(&w, 0, sizeof w);
    int rc = sqlite3_open_v2(partial, &w.db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_EXCLUSIVE |
                                             SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX,
                             NULL);
    if (rc != SQLITE_OK) {
        snprintf(err, errsz, "%s: cannot create it: %s", out, w.db ? sqlite3_errmsg(w.db) : "out of memory");
        sqlite3_close(w.db);
        unlink(partial);
        on_stop(old, 0);
        return -1;
    }
    sqlite3_busy_timeout(w.db, 2000);
    gl_packvtab_register(w.db); /* the packed schema's view and triggers name the module */
    sqlite3_stmt *att = NULL;
    rc = gl_wdb_prepare(&w, &att, "ATTACH ?1 AS src");
    if (!rc) {
        sqlite3_bind_text(att, 1, uri, -1, SQLITE_STATIC);
        rc = gl_wdb_step(&w, att, "attaching the recording");
        sqlite3_finalize(att);
    }
    if (rc)
        snprintf(err, errsz, "%s: %s", in, w.err);
    else if (fill(&w, packed, stats->from_version, stats, progress, arg, err, errsz)) {
        char why[1024];
        snprintf(why, sizeof why, "%s", err);
        snprintf(err, errsz, "%s: %s", in, why); /* which file the trouble is of: the recording's, or the copy's */
        rc = -1;
    }
    if (!rc && gl_wdb_exec(&w, "DETACH src")) {
        snprintf(err, errsz, "%s", w.err);
        rc = -1;
    }
    if (sqlite3_close(w.db) != SQLITE_OK && !rc) {
        snprintf(err, errsz, "%s: closing the copy failed", out);
        rc = -1;
    }
    /* link, not rename: a file made at out meanwhile is not replaced
     * (rename where the file system has no links) */
    if (!rc && link(partial, out) && (errno == EEXIST || (errno != EPERM && errno != ENOTSUP) || rename(partial, out))) {
        snprintf(err, errsz, "%s: %s", out, errno == EEXIST ? "made meanwhile by another process: left as it is"
                                                       : strerror(errno));
        rc = -1;
    }
    unlink(partial);
    on_stop(old, 0);
    if (!rc) {
        stats->in_bytes = file_size(in);
        stats->out_bytes = file_size(out);
    }
    return rc;
}
