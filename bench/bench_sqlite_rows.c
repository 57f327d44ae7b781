/* bench_sqlite_rows.c — the floor under the writer: what SQLite itself
 * costs per row on this machine, for a table of C integer columns written
 * the way the store writes event rows (WAL, synchronous off, B rows to a
 * multi-row INSERT, a commit every 16,384 rows), with nothing of
 * gpuledger's around it. Tells how many rows per event a target allows.
 *
 *   bench_sqlite_rows [--cols C] [--rows N] [--batch B] [--rounds R]
 *
 * Prints ns of CPU per row (thread CPU time) and bytes per row of the
 * closed file, per round and their medians. */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bench_stats.h"

static double cpu_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static int round_once(const char *path, int cols, long rows, int batch, double *ns, double *bytes)
{
    unlink(path);
    sqlite3 *db;
    if (sqlite3_open(path, &db) != SQLITE_OK)
        return -1;
    sqlite3_exec(db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=OFF; PRAGMA cache_size=-16000;", 0, 0, 0);
    char *sql = malloc(64 + (size_t)batch * (size_t)cols * 4 + 64 * (size_t)cols);
    strcpy(sql, "CREATE TABLE t(seq INTEGER PRIMARY KEY");
    for (int c = 1; c < cols; c++)
        sprintf(sql + strlen(sql), ", c%d INTEGER", c);
    strcat(sql, ")");
    sqlite3_exec(db, sql, 0, 0, 0);
    strcpy(sql, "INSERT INTO t VALUES");
    for (int b = 0; b < batch; b++) {
        strcat(sql, b ? ",(NULL" : "(NULL");
        for (int c = 1; c < cols; c++)
            strcat(sql, ",?");
        strcat(sql, ")");
    }
    sqlite3_stmt *st;
    int rc = sqlite3_prepare_v2(db, sql, -1, &st, 0);
    free(sql);
    if (rc != SQLITE_OK) {
        fprintf(stderr, "bench_sqlite_rows: %s\n", sqlite3_errmsg(db));
        return -1;
    }
    double t0 = cpu_ns();
    sqlite3_exec(db, "BEGIN", 0, 0, 0);
    long long ts = 400000000000000LL; /* a monotonic stamp of 8 bytes, as in event rows */
    long since = 0;
    for (long r = 0; r < rows; r += batch) {
        for (int b = 0; b < batch; b++)
            for (int c = 1; c < cols; c++) {
                long long v = c == 1   ? (ts += 700)
                              : c == 2 ? 0x7f0000000000LL + ((r + b) % 64) * 4096 /* an address */
                              : c == 3 ? 4000 + (r % 7) * 512                       /* a size */
                                       : (c * 7 + r + b) % 100;                     /* small codes */
                sqlite3_bind_int64(st, b * (cols - 1) + c, v);
            }
        sqlite3_step(st);
        sqlite3_reset(st);
        if ((since += batch) >= 16384) {
            sqlite3_exec(db, "COMMIT; BEGIN", 0, 0, 0);
            since = 0;
        }
    }
    sqlite3_exec(db, "COMMIT", 0, 0, 0);
    *ns = (cpu_ns() - t0) / (double)rows;
    sqlite3_finalize(st);
    sqlite3_close(db);
    struct stat sb;
    if (stat(path, &sb))
        return -1;
    *bytes = (double)sb.st_size / (double)rows;
    return 0;
}

int main(int argc, char **argv)
{
    int cols = 12, batch = 64, rounds = 5;
    long rows = 1000000;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--cols") && i + 1 < argc)
            cols = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--rows") && i + 1 < argc)
            rows = atol(argv[++i]);
        else if (!strcmp(argv[i], "--batch") && i + 1 < argc)
            batch = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
            rounds = atoi(argv[++i]);
        else {
            fprintf(stderr, "usage: %s [--cols C (2..32)] [--rows N] [--batch B (1..256)] [--rounds R (1..63)]\n",
                    argv[0]);
            return 2;
        }
    }
    if (cols < 2 || cols > 32 || batch < 1 || batch > 256 || rounds < 1 || rounds > 63 || rows < batch)
        return 2;
    char path[] = "/tmp/gl-bench-rows-XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0)
        return 1;
    close(fd);
    double ns[64], bytes[64];
    for (int r = 0; r < rounds; r++) {
        if (round_once(path, cols, rows, batch, &ns[r], &bytes[r]))
            return 1;
        printf("round %d: %.0f ns of CPU per row, %.1f bytes per row\n", r + 1, ns[r], bytes[r]);
    }
    double mns = bench_median(ns, rounds);
    printf("median: %.0f ns of CPU per row, %.1f bytes per row (%d integer columns, %d rows to an INSERT)\n", mns,
           bench_median(bytes, rounds), cols, batch);
    char side[64];
    unlink(path);
    snprintf(side, sizeof side, "%s-wal", path);
    unlink(side);
    snprintf(side, sizeof side, "%s-shm", path);
    unlink(side);
    return 0;
}
