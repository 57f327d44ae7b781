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
        p->ts_ns = sqlite3_column_int64(q, 4);
    }
    sqlite3_finalize(q);
    return p->found;
}

void gl_usage_load(struct gl_run *r, const struct gl_device *dev, struct gl_usage *u)
{
    (void)r;
    *u = dev->usage;
}

void gl_usage_read(struct gl_run *r, struct gl_device *dev)
{
    struct gl_usage *u = &dev->usage;
    memset(u, 0, sizeof *u);
    if (!point(r->db,
               "SELECT seq, used, ledger, source, ts_ns FROM usage_samples WHERE device = ?1 AND ?2 = ?2"
               " ORDER BY seq DESC, ts_ns DESC LIMIT 1",
               dev->device, 0, &u->end, u->source, sizeof u->source))
        return;
    /* a cudaMemGetInfo figure is relative to the first sample: one sample
     * alone measures nothing */
    struct gl_usage_point n;
    if (!strcmp(u->source, "cudaMemGetInfo") &&
        point(r->db, "SELECT count(*), 0, 0, NULL, 0 FROM usage_samples WHERE device = ?1 AND ?2 = ?2", dev->device, 0,
              &n, NULL, 0) &&
        n.seq < 2)
        u->unknown = 1;
    /* at the peak: the sample nearest its time, before or after (the
     * writer takes it when asked: under load the first one after the peak
     * can come once the pool has grown again); a tie goes to the later */
    if (point(r->db,
              "SELECT seq, used, ledger, source, ts_ns FROM usage_samples WHERE device = ?1"
              " ORDER BY abs(ts_ns - ?2), ts_ns < ?2, seq LIMIT 1",
              dev->device, dev->peak_ns, &u->peak, NULL, 0))
        u->peak.from_peak_ns = u->peak.ts_ns - dev->peak_ns;
}

const char *gl_usage_from_peak_text(int64_t from_peak_ns, const char *peak, char *buf, size_t sz)
{
    if (!from_peak_ns) {
        snprintf(buf, sz, "sampled at %s", peak);
        return buf;
    }
    uint64_t d = from_peak_ns < 0 ? (uint64_t)0 - (uint64_t)from_peak_ns : (uint64_t)from_peak_ns;
    const char *side = from_peak_ns < 0 ? "before" : "after";
    if (d >= 100000000) /* 100 ms and more: whole ms */
        snprintf(buf, sz, "sampled %.0f ms %s %s", (double)d / 1e6, side, peak);
    else if (d >= 1000000)
        snprintf(buf, sz, "sampled %.1f ms %s %s", (double)d / 1e6, side, peak);
    else
        snprintf(buf, sz, "sampled %.0f \u00b5s %s %s", (double)d / 1e3, side, peak);
    return buf;
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
