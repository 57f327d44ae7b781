/* cmd_summary.c — `gpuledger summary DB...`: the one line per database
 * that `gpuledger run` prints at the end. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "escape.h"
#include "out.h"
#include "reader.h"

int gl_print_db_summary(FILE *f, const char *path)
{
    char err[1024];
    sqlite3 *db = gl_db_open_read(path, err, sizeof err);
    if (!db) {
        fputs("gpuledger: ", stderr);
        gl_text_str(stderr, err);
        fputc('\n', stderr);
        return 2;
    }
    int64_t events = gl_db_int(db, "SELECT event_count FROM run", 0);
    int64_t dropped = gl_db_int(db, "SELECT dropped_events FROM run", 0);
    int64_t peak = gl_db_int(db, "SELECT max(peak_bytes) FROM device_stats", 0);
    int64_t peak_dev = gl_db_int(db, "SELECT device FROM device_stats ORDER BY peak_bytes DESC LIMIT 1", -1);
    int64_t ndev = gl_db_int(db, "SELECT count(*) FROM device_stats WHERE peak_bytes > 0", 0);
    int64_t unfreed = gl_db_int(db, "SELECT count(*) FROM allocations WHERE free_ns IS NULL", 0);
    int64_t unfreed_bytes = gl_db_int(db, "SELECT sum(size) FROM allocations WHERE free_ns IS NULL", 0);
    int64_t ooms = gl_db_int(db, "SELECT count(*) FROM event_log WHERE op = 11", 0);
    char pb[32], ub[32];
    fputs("gpuledger: ", f);
    gl_text_str(f, path);
    fprintf(f, ": %" PRId64 " events, peak %s", events, gl_fmt_bytes((uint64_t)peak, pb, sizeof pb));
    if (ndev > 1)
        fprintf(f, " (device %" PRId64 ", %" PRId64 " devices)", peak_dev, ndev);
    else if (peak_dev >= 0)
        fprintf(f, " on device %" PRId64, peak_dev);
    fprintf(f, ", %" PRId64 " allocations (%s) never freed", unfreed,
            gl_fmt_bytes((uint64_t)unfreed_bytes, ub, sizeof ub));
    if (ooms)
        fprintf(f, ", %" PRId64 " out-of-memory failures", ooms);
    if (dropped)
        fprintf(f, ", %" PRId64 " EVENTS DROPPED (queue full)", dropped);
    fprintf(f, "\n");
    sqlite3_close(db);
    return 0;
}

int cmd_summary(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
        FILE *f = argc < 2 ? stderr : stdout;
        fprintf(f, "usage: gpuledger summary DB...\n\nOne line per database: events, peak device bytes,\n"
                   "allocations never freed, out-of-memory failures, dropped events.\n");
        return argc < 2 ? 2 : 0;
    }
    int rc = 0;
    for (int i = 1; i < argc; i++)
        if (gl_print_db_summary(stdout, argv[i]))
            rc = 2;
    return rc;
}
