/* model_usage.c — see model_usage.h. */
#include "model_usage.h"

#include <stdio.h>
#include <string.h>

static int point(sqlite3 *db, const char *sql, int device, int64_t seq, struct gl_usage_point *p, char *source,
                 size_t srcsz)
{
    sqlite3_stmt *q;
    memset(p, 0, sizeof *p);
    if (sqlite3_prepare_v2(db, sql, -1, &q, NULL) != SQLITE_OK)
        return 0; /* no usage_samples table: an older database */
    sqlite3_bind_int(q, 1, device);
    sqlite3_bind_int64(q, 2, seq);
    if (sqlite3_step(q) == SQLITE_ROW) {
        p->found = 1;
        p->seq = sqlite3_column_int64(q, 0);
        p->process = (uint64_t)sqlite3_column_int64(q, 1);
        p->ledger = (uint64_t)sqlite3_column_int64(q, 2);
        if (source && sqlite3_column_text(q, 3))
            snprintf(source, srcsz, "%s", (const char *)sqlite3_column_text(q, 3));
    }
    sqlite3_finalize(q);
    return p->found;
}

void gl_usage_load(struct gl_run *r, const struct gl_device *dev, struct gl_usage *u)
{
    memset(u, 0, sizeof *u);
    if (!point(r->db,
               "SELECT seq, used, ledger, source FROM usage_samples WHERE device = ?1 AND ?2 = ?2"
               " ORDER BY seq DESC, ts_ns DESC LIMIT 1",
               dev->device, 0, &u->end, u->source, sizeof u->source))
        return;
    /* a cudaMemGetInfo figure is relative to the first sample: one sample
     * alone measures nothing */
    struct gl_usage_point n;
    if (!strcmp(u->source, "cudaMemGetInfo") &&
        point(r->db, "SELECT count(*), 0, 0, NULL FROM usage_samples WHERE device = ?1 AND ?2 = ?2", dev->device, 0,
              &n, NULL, 0) &&
        n.seq < 2)
        u->unknown = 1;
    if (!point(r->db,
               "SELECT seq, used, ledger, source FROM usage_samples WHERE device = ?1 AND seq >= ?2"
               " ORDER BY seq, ts_ns LIMIT 1",
               dev->device, dev->peak_seq, &u->peak, NULL, 0))
        point(r->db,
              "SELECT seq, used, ledger, source FROM usage_samples WHERE device = ?1 AND seq < ?2"
              " ORDER BY seq DESC, ts_ns DESC LIMIT 1",
              dev->device, dev->peak_seq, &u->peak, NULL, 0);
}

const char *gl_usage_source_text(const char *source)
{
    if (!strcmp(source, "nvml_process"))
        return "NVML's figure for this process, as nvidia-smi shows it";
    if (!strcmp(source, "nvml_device"))
        return "NVML: the device's used memory less what it held before the process began";
    if (!strcmp(source, "cudaMemGetInfo"))
        return "cudaMemGetInfo: the device's used memory less what it held beyond the ledger at the first sample";
    return source;
}
