/* runrows.c — see runrows.h. */
#include "runrows.h"

#include <string.h>

#include "schema.h"

int gl_runrows_open(struct gl_runrows *rr, struct gl_wdb *w, const struct gl_run_info *info)
{
    memset(rr, 0, sizeof *rr);
    rr->w = w;
    if (gl_wdb_prepare(w, &rr->ins_pool_sample,
                       "INSERT INTO pool_samples(ts_ns, device, pool, reserved, used) VALUES(?,?,?,?,?)") ||
        gl_wdb_prepare(w, &rr->ins_dev_sample, "INSERT INTO device_samples(ts_ns, device, free, total) VALUES(?,?,?,?)") ||
        gl_wdb_prepare(w, &rr->ins_graph_sample,
                       "INSERT INTO graph_pool_samples(ts_ns, device, reserved, used, reserved_high, used_high)"
                       " VALUES(?,?,?,?,?,?)") ||
        gl_wdb_prepare(w, &rr->ins_usage,
                       "INSERT INTO usage_samples(ts_ns, seq, device, used, ledger, source) VALUES(?,?,?,?,?,?)") ||
        gl_wdb_prepare(w, &rr->upd_run,
                       "UPDATE run SET event_count=?, dropped_events=?, truncated_stacks=?, unmatched_frees=?") ||
        gl_wdb_prepare(w, &rr->fin_run, "UPDATE run SET end_ns=?, exit_code=?, exit_signal=?") ||
        gl_wdb_prepare(w, &rr->put_dev,
                       "INSERT OR REPLACE INTO device_stats(device, peak_bytes, peak_ns, peak_seq, live_bytes,"
                       " alloc_count, free_count) VALUES(?,?,?,?,?,?,?)") ||
        gl_wdb_prepare(w, &rr->put_meta, "INSERT OR REPLACE INTO meta(key, value) VALUES(?,?)"))
        return -1;
    sqlite3_stmt *st = NULL;
    if (gl_wdb_prepare(w, &st,
                       "INSERT INTO run(pid, ppid, hostname, rank, cmdline, start_ns, start_unix_ns, stack_depth,"
                       " gpuledger_version, schema_version) VALUES(?,?,?,?,?,?,?,?,?,?)"))
        return -1;
    sqlite3_bind_int64(st, 1, info->pid);
    sqlite3_bind_int64(st, 2, info->ppid);
    sqlite3_bind_text(st, 3, info->hostname, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 4, info->rank, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 5, info->cmdline, -1, SQLITE_TRANSIENT);
    sqlite3_bind_int64(st, 6, (sqlite3_int64)info->start_ns);
    sqlite3_bind_int64(st, 7, (sqlite3_int64)info->start_unix_ns);
    sqlite3_bind_int64(st, 8, info->stack_depth);
    sqlite3_bind_text(st, 9, info->version, -1, SQLITE_TRANSIENT);
    sqlite3_bind_int(st, 10, GL_SCHEMA_VERSION_UNPACKED); /* gl_store_set_packed: 6 */
    int rc = gl_wdb_step(w, st, "writing the run row");
    sqlite3_finalize(st);
    return rc;
}

int gl_runrows_meta(struct gl_runrows *rr, const char *key, const char *value)
{
    sqlite3_bind_text(rr->put_meta, 1, key, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(rr->put_meta, 2, value, -1, SQLITE_TRANSIENT);
    return gl_wdb_step(rr->w, rr->put_meta, "writing meta");
}

int gl_runrows_counters(struct gl_runrows *rr, uint64_t events, uint64_t unmatched_frees,
                        const struct gl_run_counters *c, struct gl_ledger *l)
{
    sqlite3_bind_int64(rr->upd_run, 1, (sqlite3_int64)events);
    sqlite3_bind_int64(rr->upd_run, 2, (sqlite3_int64)c->dropped_events);
    sqlite3_bind_int64(rr->upd_run, 3, (sqlite3_int64)c->truncated_stacks);
    sqlite3_bind_int64(rr->upd_run, 4, (sqlite3_int64)unmatched_frees);
    int rc = gl_wdb_step(rr->w, rr->upd_run, "updating the run row");
    int pos = 0, device;
    struct gl_dev_stats d;
    while (gl_ledger_next_dirty(l, &pos, &device, &d)) {
        sqlite3_bind_int(rr->put_dev, 1, device);
        sqlite3_bind_int64(rr->put_dev, 2, (sqlite3_int64)d.peak);
        sqlite3_bind_int64(rr->put_dev, 3, (sqlite3_int64)d.peak_ns);
        sqlite3_bind_int64(rr->put_dev, 4, (sqlite3_int64)d.peak_seq);
        sqlite3_bind_int64(rr->put_dev, 5, (sqlite3_int64)d.live);
        sqlite3_bind_int64(rr->put_dev, 6, (sqlite3_int64)d.allocs);
        sqlite3_bind_int64(rr->put_dev, 7, (sqlite3_int64)d.frees);
        rc |= gl_wdb_step(rr->w, rr->put_dev, "updating device_stats");
    }
    return rc;
}

int gl_runrows_finish(struct gl_runrows *rr, uint64_t end_ns, int exit_code, int exit_signal)
{
    sqlite3_bind_int64(rr->fin_run, 1, (sqlite3_int64)end_ns);
    if (exit_code >= 0)
        sqlite3_bind_int(rr->fin_run, 2, exit_code);
    else
        sqlite3_bind_null(rr->fin_run, 2);
    if (exit_signal > 0)
        sqlite3_bind_int(rr->fin_run, 3, exit_signal);
    else
        sqlite3_bind_null(rr->fin_run, 3);
    return gl_wdb_step(rr->w, rr->fin_run, "finishing the run row");
}

/* The process's own figure (interpose/usage.h): NVML's (per process, or
 * the device's growth since the process began), or the device's used
 * memory less what it held beyond the ledger at the first sample. */
static int usage_sample(struct gl_runrows *rr, const struct gl_event *ev, uint64_t ledger, uint64_t seq)
{
    static const char *const sources[] = {"?", "nvml_process", "nvml_device", "cudaMemGetInfo"};
    uint64_t used = ev->size, src = ev->aux < 4 ? ev->aux : 0;
    if (src == 3 && ev->device >= 0 && ev->device < GL_MAX_DEVICES) {
        uint64_t *base = &rr->usage_base[ev->device];
        if (!*base)
            *base = (used > ledger ? used - ledger : 0) + 1;
        used = used > *base - 1 ? used - (*base - 1) : 0;
    }
    sqlite3_stmt *st = rr->ins_usage;
    sqlite3_bind_int64(st, 1, (sqlite3_int64)ev->ts_ns);
    sqlite3_bind_int64(st, 2, (sqlite3_int64)seq);
    sqlite3_bind_int(st, 3, ev->device);
    sqlite3_bind_int64(st, 4, (sqlite3_int64)used);
    sqlite3_bind_int64(st, 5, (sqlite3_int64)ledger);
    sqlite3_bind_text(st, 6, sources[src], -1, SQLITE_STATIC);
    return gl_wdb_step(rr->w, st, "writing a usage sample");
}

/* A sample is state, not an operation: it goes to its own table. */
int gl_runrows_sample(struct gl_runrows *rr, const struct gl_event *ev, uint64_t ledger, uint64_t seq)
{
    if (ev->api == GL_API_usage_sample)
        return usage_sample(rr, ev, ledger, seq);
    if (ev->api == GL_API_graph_pool_sample) { /* encoded by interpose/graph_mem.c */
        sqlite3_stmt *g = rr->ins_graph_sample;
        sqlite3_bind_int64(g, 1, (sqlite3_int64)ev->ts_ns);
        sqlite3_bind_int(g, 2, ev->device);
        sqlite3_bind_int64(g, 3, (sqlite3_int64)ev->size);
        sqlite3_bind_int64(g, 4, (sqlite3_int64)ev->aux);
        sqlite3_bind_int64(g, 5, (sqlite3_int64)ev->addr);
        sqlite3_bind_int64(g, 6, (sqlite3_int64)ev->pool);
        return gl_wdb_step(rr->w, g, "writing a graph pool sample");
    }
    int pool = ev->api == GL_API_pool_sample;
    sqlite3_stmt *st = pool ? rr->ins_pool_sample : rr->ins_dev_sample;
    int k = 1;
    sqlite3_bind_int64(st, k++, (sqlite3_int64)ev->ts_ns);
    sqlite3_bind_int(st, k++, ev->device);
    if (pool)
        sqlite3_bind_int64(st, k++, (sqlite3_int64)ev->pool);
    sqlite3_bind_int64(st, k++, (sqlite3_int64)ev->size);
    sqlite3_bind_int64(st, k, (sqlite3_int64)ev->aux);
    return gl_wdb_step(rr->w, st, "writing a sample");
}

void gl_runrows_close(struct gl_runrows *rr)
{
    sqlite3_stmt **const sts[] = {&rr->upd_run,         &rr->fin_run,  &rr->put_dev,          &rr->ins_pool_sample,
                                  &rr->ins_dev_sample, &rr->put_meta, &rr->ins_graph_sample, &rr->ins_usage};
    gl_wdb_finalize(sts, 8);
}
