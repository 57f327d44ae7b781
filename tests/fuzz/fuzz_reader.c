/* fuzz_reader.c — libFuzzer target for everything that reads a database:
 * each input is a database file, and the reading verbs of the gpuledger
 * command run on it (main.c is compiled in as gpuledger_main; a third of
 * them per input, chosen by a hash of it), under ASan + UBSan. A verb may refuse the file (exit 2) or answer; it must not
 * crash, leak, overflow, or leave a file next to the database.
 *
 * Most byte-level mutations only break SQLite's page structure, so half of
 * the mutations are made at the level of rows (LLVMFuzzerCustomMutator):
 * the image is loaded with sqlite3_deserialize, one value of one row of one
 * table is set to something hostile (NULL, 0, -1, INT64_MIN/MAX, 2^62,
 * another row's value, a text with invalid UTF-8 and escapes), a row is
 * deleted or a table dropped, and the image is written back.
 *
 * Built and run by scripts/fuzz-reader.sh (seeds: tests/golden/db). */
#include <dirent.h>
#include <fcntl.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int gpuledger_main(int argc, char **argv);
size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size);

static char dir[64], db[96];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    snprintf(dir, sizeof dir, "/tmp/gl-fuzz-XXXXXX");
    if (!mkdtemp(dir))
        abort();
    snprintf(db, sizeof db, "%s/f.db", dir);
    if (!freopen("/dev/null", "w", stdout))
        abort();
    return 0;
}

/* Every reading verb, as a user would type it. */
static const char *const verbs[][8] = {
    {"report", "--format", "json", NULL},
    {"report", NULL},
    {"report", "--format", "html", NULL},
    {"report", "--at", "#5", NULL}, /* a bounded recording's steps: a moment placed, maybe refused */
    {"report", "--at", "20us", NULL},
    {"leaks", "--steps", "--lifetime-ms", "1", NULL},
    {"leaks", "--steps=3", "--format", "json", NULL}, /* gathered during the scan (model_growth.h) */
    {"leaks", "--format", "json", NULL},
    {"holes", "--format", "json", "--series", NULL}, /* pools replayed during the scan (model_pool_sweep.h) */
    {"export", "--format", "perfetto", NULL},
    {"export", "--format", "csv", NULL},
    {"export", "--format", "folded", "--what", "allocs", NULL},
    {"summary", NULL},
    {"gate", "--max-leak-bytes", "0", "--max-peak-bytes", "1", "--junit", "/dev/null", NULL},
    {"diff", "@", NULL},
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int fd = open(db, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0 || (size && write(fd, data, size) != (ssize_t)size))
        abort();
    close(fd);
    /* a third of the verbs, chosen by the input (so a finding reproduces) */
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < size; i += 61)
        h = (h ^ data[i]) * 1099511628211ULL;
    for (size_t v = h % 3; v < sizeof verbs / sizeof verbs[0]; v += 3) {
        char *argv[12] = {"gpuledger"};
        int argc = 1;
        for (int k = 0; verbs[v][k]; k++)
            argv[argc++] = (char *)(strcmp(verbs[v][k], "@") ? verbs[v][k] : db);
        argv[argc++] = db;
        int rc = gpuledger_main(argc, argv);
        if (rc < 0 || rc > 2)
            abort();
        fflush(stdout);
    }
    /* reading must never create anything next to the database */
    DIR *d = opendir(dir);
    struct dirent *e;
    int others = 0;
    while (d && (e = readdir(d)) != NULL)
        others += e->d_name[0] != '.' && strcmp(e->d_name, "f.db") != 0;
    if (d)
        closedir(d);
    if (others) {
        fprintf(stderr, "fuzz_reader: a file appeared next to the database\n");
        abort();
    }
    return 0;
}

/* ---- row-level mutations ------------------------------------------------- */

static uint64_t next(uint64_t *s)
{
    *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
    return *s >> 17;
}

static const struct {
    const char *table, *key; /* key: what names one row */
    const char *cols[16];
} tables[] = {
    {"event_log", "rowid", {"seq", "ts_ns", "tid", "op", "api", "kind", "device", "stream", "pool", "addr", "size",
                            "result", "stack_id", "ref_seq", "aux", "range_seq"}},
    /* schema 4: event_log is a view of these two */
    {"event_rows", "rowid", {"seq", "ts_ns", "context", "op", "kind", "device", "addr", "size", "stack_id", "ref_seq",
                             "aux", "range_seq"}},
    {"event_contexts", "rowid", {"id", "tid", "api", "stream", "pool", "result"}},
    {"run", "rowid", {"pid", "hostname", "rank", "cmdline", "start_ns", "end_ns", "exit_code", "exit_signal",
                      "event_count", "dropped_events", "truncated_stacks", "stack_depth", "gpuledger_version"}},
    {"frames", "rowid", {"id", "module_id", "symbol", "file", "line", "python", "rel"}},
    {"modules", "rowid", {"id", "path"}},
    {"stack_entries", "(stack_id, depth)", {"stack_id", "depth", "frame_id"}},
    {"annotations", "rowid", {"seq", "ts_ns", "tid", "op", "label", "parent_seq"}},
    {"meta", "rowid", {"key", "value"}},
    {"pool_samples", "rowid", {"ts_ns", "device", "pool", "reserved", "used"}},
    {"device_samples", "rowid", {"ts_ns", "device", "free", "total"}},
    /* schema 5: a bounded recording's steps */
    {"step_windows", "rowid", {"step", "why"}},
    {"step_ends", "rowid", {"step", "seq", "ts_ns"}},
    {"step_stacks", "rowid", {"step_lo", "step_hi", "context", "free_context", "kind", "stack_id", "pairs", "bytes"}},
    /* schema 6: a packed recording's packs (data: a blob, see bind_hostile) and the table beside them */
    {"event_packs", "rowid", {"seq_lo", "seq_hi", "n", "ts_min", "ts_max", "ops", "kinds", "data"}},
    {"event_rows_table", "rowid", {"seq", "ts_ns", "context", "op", "kind", "device", "addr", "size", "stack_id",
                                   "ref_seq", "aux", "range_seq"}},
};

static const char *const texts[] = {
    "\xff\xfe\xc3(", "line\nbreak", "\x1b[2J\x1b]0;t\x07", "=cmd|'/C calc'!A0", ";; ;", "", "<a&\"'>",
    "\342\200\256bidi\342\200\254", "%s%n%x",
};

static void bind_hostile(sqlite3 *mem, sqlite3_stmt *st, const char *table, const char *col, uint64_t *s)
{
    static const int64_t ints[] = {0, -1, 1, 2, 7, 11, 63, 64, 1000, INT64_MIN, INT64_MAX, (int64_t)1 << 62,
                                   ((int64_t)1 << 62) - 1, (int64_t)1 << 31, -((int64_t)1 << 62)};
    if (!strcmp(col, "data") && next(s) % 2) { /* a pack's blob: a byte changed, or cut short */
        char sql[160];
        sqlite3_stmt *q;
        snprintf(sql, sizeof sql, "SELECT data FROM %s LIMIT 1 OFFSET %d", table, (int)(next(s) % 64));
        if (sqlite3_prepare_v2(mem, sql, -1, &q, NULL) == SQLITE_OK && sqlite3_step(q) == SQLITE_ROW &&
            sqlite3_column_bytes(q, 0) > 0) {
            int n = sqlite3_column_bytes(q, 0);
            uint8_t *b = malloc((size_t)n);
            if (b) {
                memcpy(b, sqlite3_column_blob(q, 0), (size_t)n);
                if (next(s) % 2)
                    b[next(s) % (uint64_t)n] ^= (uint8_t)(1u << (next(s) % 8));
                else
                    n = (int)(next(s) % (uint64_t)n);
                sqlite3_bind_blob(st, 1, b, n, SQLITE_TRANSIENT);
                free(b);
            }
        }
        sqlite3_finalize(q);
        return;
    }
    switch (next(s) % 5) {
    case 0:
        sqlite3_bind_null(st, 1);
        return;
    case 1:
        sqlite3_bind_int64(st, 1, ints[next(s) % (sizeof ints / sizeof ints[0])]);
        return;
    case 2:
        sqlite3_bind_int64(st, 1, (int64_t)(next(s) << 17 ^ next(s)));
        return;
    case 3:
        sqlite3_bind_text(st, 1, texts[next(s) % (sizeof texts / sizeof texts[0])], -1, SQLITE_TRANSIENT);
        return;
    default: { /* another row's value of the same column, shifted a little */
        char sql[160];
        sqlite3_stmt *q;
        snprintf(sql, sizeof sql, "SELECT %s FROM %s LIMIT 1 OFFSET %d", col, table, (int)(next(s) % 64));
        int64_t v = 0;
        if (sqlite3_prepare_v2(mem, sql, -1, &q, NULL) == SQLITE_OK && sqlite3_step(q) == SQLITE_ROW)
            v = sqlite3_column_int64(q, 0);
        sqlite3_finalize(q);
        sqlite3_bind_int64(st, 1, v + (int64_t)(next(s) % 3) - 1);
        return;
    }
    }
}

static size_t row_mutate(uint8_t *data, size_t size, size_t max_size, unsigned seed)
{
    if (size < 100 || memcmp(data, "SQLite format 3", 16) != 0)
        return 0;
    sqlite3 *mem;
    if (sqlite3_open(":memory:", &mem) != SQLITE_OK)
        return 0;
    unsigned char *img = sqlite3_malloc64(size);
    if (!img) {
        sqlite3_close(mem);
        return 0;
    }
    memcpy(img, data, size);
    img[18] = img[19] = 1; /* WAL mode cannot be deserialized: rollback mode */
    if (sqlite3_deserialize(mem, "main", img, (sqlite3_int64)size, (sqlite3_int64)size,
                            SQLITE_DESERIALIZE_FREEONCLOSE | SQLITE_DESERIALIZE_RESIZEABLE) != SQLITE_OK) {
        sqlite3_close(mem);
        return 0;
    }
    uint64_t s = seed * 2654435761u + 1;
    int nmut = 1 + (int)(next(&s) % 3);
    for (int m = 0; m < nmut; m++) {
        size_t t = next(&s) % (sizeof tables / sizeof tables[0]);
        int ncols = 0;
        while (ncols < 16 && tables[t].cols[ncols])
            ncols++;
        const char *col = tables[t].cols[next(&s) % (size_t)ncols];
        int off = (int)(next(&s) % 48), what = (int)(next(&s) % 16);
        char sql[256];
        if (what == 0)
            snprintf(sql, sizeof sql, "DELETE FROM %s WHERE %s IN (SELECT %s FROM %s LIMIT 1 OFFSET %d)",
                     tables[t].table, tables[t].key, tables[t].key, tables[t].table, off);
        else if (what == 1 && next(&s) % 8 == 0)
            snprintf(sql, sizeof sql, "DROP TABLE IF EXISTS %s", tables[t].table);
        else
            snprintf(sql, sizeof sql, "UPDATE OR IGNORE %s SET %s = ? WHERE %s IN (SELECT %s FROM %s LIMIT 1 OFFSET %d)",
                     tables[t].table, col, tables[t].key, tables[t].key, tables[t].table, off);
        sqlite3_stmt *st;
        if (sqlite3_prepare_v2(mem, sql, -1, &st, NULL) != SQLITE_OK)
            continue;
        if (sqlite3_bind_parameter_count(st))
            bind_hostile(mem, st, tables[t].table, col, &s);
        sqlite3_step(st);
        sqlite3_finalize(st);
    }
    sqlite3_int64 n = 0;
    unsigned char *out = sqlite3_serialize(mem, "main", &n, 0);
    size_t len = 0;
    if (out && n > 0 && (size_t)n <= max_size) {
        memcpy(data, out, (size_t)n);
        len = (size_t)n;
    }
    sqlite3_free(out);
    sqlite3_close(mem);
    return len;
}

size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed)
{
    size_t n = seed % 2 ? row_mutate(data, size, max_size, seed) : 0;
    return n ? n : LLVMFuzzerMutate(data, size, max_size);
}
