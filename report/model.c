/* model.c — loading a database into a gl_run (see model.h): one ordered
 * scan of event_log, then per-device peaks and timelines. */
#include "model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reader.h"
#include "u64map.h"

#define TIMELINE_POINTS 600

struct gl_device *gl_run_device(struct gl_run *r, int device)
{
    for (int i = 0; i < r->ndevs; i++)
        if (r->devs[i].device == device)
            return &r->devs[i];
    if (r->ndevs == GL_MAX_DEVICES)
        return NULL;
    struct gl_device *d = &r->devs[r->ndevs++];
    memset(d, 0, sizeof *d);
    d->device = device;
    return d;
}

static void copy_text(char *dst, size_t sz, const unsigned char *src)
{
    snprintf(dst, sz, "%s", src ? (const char *)src : "");
}

static int load_run_row(struct gl_run *r, char *err, size_t errsz)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(r->db,
                           "SELECT pid, ppid, hostname, rank, cmdline, start_ns, end_ns, exit_code, exit_signal,"
                           " event_count, dropped_events, truncated_stacks, unmatched_frees, gpuledger_version"
                           " FROM run",
                           -1, &st, NULL) != SQLITE_OK ||
        sqlite3_step(st) != SQLITE_ROW) {
        snprintf(err, errsz, "%s: damaged run table: %s", r->path, sqlite3_errmsg(r->db));
        sqlite3_finalize(st);
        return -1;
    }
    r->pid = sqlite3_column_int64(st, 0);
    r->ppid = sqlite3_column_int64(st, 1);
    copy_text(r->host, sizeof r->host, sqlite3_column_text(st, 2));
    copy_text(r->rank, sizeof r->rank, sqlite3_column_text(st, 3));
    copy_text(r->cmdline, sizeof r->cmdline, sqlite3_column_text(st, 4));
    r->start_ns = sqlite3_column_int64(st, 5);
    r->has_end = sqlite3_column_type(st, 6) != SQLITE_NULL;
    r->end_ns = sqlite3_column_int64(st, 6);
    r->has_exit_code = sqlite3_column_type(st, 7) != SQLITE_NULL;
    r->exit_code = sqlite3_column_int64(st, 7);
    r->has_exit_signal = sqlite3_column_type(st, 8) != SQLITE_NULL;
    r->exit_signal = sqlite3_column_int64(st, 8);
    r->event_count = sqlite3_column_int64(st, 9);
    r->dropped = sqlite3_column_int64(st, 10);
    r->truncated = sqlite3_column_int64(st, 11);
    r->unmatched = sqlite3_column_int64(st, 12);
    copy_text(r->version, sizeof r->version, sqlite3_column_text(st, 13));
    sqlite3_finalize(st);
    return 0;
}

/* Per-device live bytes as the scan goes, with the peak and a downsampled
 * timeline (each bucket keeps its highest level). */
struct live_track {
    uint64_t live[GL_MAX_DEVICES];
};

static void track(struct gl_run *r, struct live_track *lt, int device, int64_t delta, int64_t seq, int64_t ts,
                  int64_t t0, int64_t span)
{
    struct gl_device *dev = gl_run_device(r, device);
    if (!dev)
        return;
    size_t k = (size_t)(dev - r->devs);
    lt->live[k] += (uint64_t)delta;
    uint64_t live = lt->live[k];
    if (live > dev->peak) {
        dev->peak = live;
        dev->peak_seq = seq;
        dev->peak_ns = ts;
    }
    if (!dev->timeline && !(dev->timeline = calloc(TIMELINE_POINTS, sizeof *dev->timeline)))
        return;
    size_t b = span > 0 ? (size_t)((double)(ts - t0) / (double)span * (TIMELINE_POINTS - 1)) : 0;
    if (b >= TIMELINE_POINTS)
        b = TIMELINE_POINTS - 1;
    struct gl_point *p = &dev->timeline[b];
    if (p->seq == 0 || live >= p->live)
        *p = (struct gl_point){seq, ts, live};
    if (b + 1 > dev->ntimeline)
        dev->ntimeline = b + 1;
}

static int load_events(struct gl_run *r, char *err, size_t errsz)
{
    /* time span first, for the timeline buckets */
    int64_t t0 = gl_db_int(r->db, "SELECT ts_ns FROM event_log ORDER BY seq LIMIT 1", 0);
    int64_t t1 = gl_db_int(r->db, "SELECT ts_ns FROM event_log ORDER BY seq DESC LIMIT 1", 0);
    int64_t maxseq = gl_db_int(r->db, "SELECT max(seq) FROM event_log", 0);
    int64_t span = t1 - t0 + 1;
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(r->db,
                           "SELECT seq, ts_ns, op, api, kind, device, pool, addr, size, result, stack_id, ref_seq"
                           " FROM event_log ORDER BY seq",
                           -1, &st, NULL) != SQLITE_OK) {
        snprintf(err, errsz, "%s: cannot read events: %s", r->path, sqlite3_errmsg(r->db));
        return -1;
    }
    /* seq -> position in allocs[]: seqs are dense, so a plain array; a hash
     * map only if the table looks odd (huge gaps) */
    uint32_t *by_seq = NULL;
    struct gl_u64map index;
    gl_u64map_init(&index);
    if (maxseq > 0 && maxseq < (1LL << 31))
        by_seq = calloc((size_t)maxseq + 1, sizeof *by_seq);
    struct live_track lt;
    memset(&lt, 0, sizeof lt);
    size_t cap = 0, fcap = 0;
    int rc;
    r->first_ns = t0;
    r->last_ns = t1;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        int64_t seq = sqlite3_column_int64(st, 0), ts = sqlite3_column_int64(st, 1);
        int op = sqlite3_column_int(st, 2), api = sqlite3_column_int(st, 3);
        int result = sqlite3_column_int(st, 9);
        if (api > 0 && api < GL_API_COUNT)
            r->api_count[api]++;
        if (op == GL_OP_MARK) {
            int64_t *nm = realloc(r->marks, (r->nmarks + 1) * sizeof *nm);
            if (!nm)
                goto oom;
            r->marks = nm;
            r->marks[r->nmarks++] = seq;
            continue;
        }
        if (result != 0 || gl_op_is_failure(op)) {
            if (r->nfails == fcap) {
                fcap = fcap ? fcap * 2 : 64;
                struct gl_fail *nf = realloc(r->fails, fcap * sizeof *nf);
                if (!nf)
                    goto oom;
                r->fails = nf;
            }
            struct gl_fail *f = &r->fails[r->nfails++];
            f->seq = seq;
            f->ts_ns = ts;
            f->op = (uint8_t)op;
            f->api = (uint16_t)api;
            f->device = sqlite3_column_int(st, 5);
            f->size = (uint64_t)sqlite3_column_int64(st, 8);
            f->result = result;
            f->stack_id = sqlite3_column_int64(st, 10);
            continue;
        }
        if (gl_op_is_alloc(op)) {
            if (r->nallocs == cap) {
                cap = cap ? cap * 2 : 4096;
                struct gl_alloc *na = realloc(r->allocs, cap * sizeof *na);
                if (!na)
                    goto oom;
                r->allocs = na;
            }
            struct gl_alloc *a = &r->allocs[r->nallocs];
            memset(a, 0, sizeof *a);
            a->seq = seq;
            a->alloc_ns = ts;
            a->op = (uint8_t)op;
            a->api = (uint16_t)api;
            a->kind = (uint8_t)sqlite3_column_int(st, 4);
            a->device = sqlite3_column_int(st, 5);
            a->pool = (uint64_t)sqlite3_column_int64(st, 6);
            a->addr = (uint64_t)sqlite3_column_int64(st, 7);
            a->size = (uint64_t)sqlite3_column_int64(st, 8);
            a->stack_id = sqlite3_column_int64(st, 10);
            if (by_seq && seq > 0 && seq <= maxseq)
                by_seq[seq] = (uint32_t)r->nallocs + 1;
            else if (gl_u64map_put(&index, (uint64_t)seq, r->nallocs))
                goto oom;
            r->nallocs++;
            if (gl_kind_counts_on_device(a->kind))
                track(r, &lt, a->device, (int64_t)a->size, seq, ts, t0, span);
        } else if (gl_op_is_free(op) && sqlite3_column_type(st, 11) != SQLITE_NULL) {
            int64_t ref = sqlite3_column_int64(st, 11);
            uint64_t pos = 0;
            int found = 0;
            if (by_seq && ref > 0 && ref <= maxseq && by_seq[ref]) {
                pos = by_seq[ref] - 1;
                found = 1;
            } else if (gl_u64map_get(&index, (uint64_t)ref, &pos)) {
                found = 1;
            }
            if (found && !r->allocs[pos].free_seq) {
                struct gl_alloc *a = &r->allocs[pos];
                a->free_seq = seq;
                a->free_ns = ts;
                if (gl_kind_counts_on_device(a->kind))
                    track(r, &lt, a->device, -(int64_t)a->size, seq, ts, t0, span);
            }
        }
    }
    sqlite3_finalize(st);
    free(by_seq);
    gl_u64map_free(&index);
    if (rc != SQLITE_DONE) {
        snprintf(err, errsz, "%s: damaged (reading events: %s)", r->path, sqlite3_errmsg(r->db));
        return -1;
    }
    for (int k = 0; k < r->ndevs; k++) {
        r->devs[k].live_end = lt.live[k];
        struct gl_point *t = r->devs[k].timeline; /* empty buckets carry the level forward */
        for (size_t b = 1; t && b < r->devs[k].ntimeline; b++)
            if (t[b].seq == 0)
                t[b] = (struct gl_point){t[b - 1].seq, t0 + (int64_t)b * span / TIMELINE_POINTS, t[b - 1].live};
    }
    return 0;
oom:
    sqlite3_finalize(st);
    free(by_seq);
    gl_u64map_free(&index);
    snprintf(err, errsz, "%s: out of memory while loading", r->path);
    return -1;
}

struct gl_run *gl_run_load(const char *path, char *err, size_t errsz)
{
    err[0] = 0;
    struct gl_run *r = calloc(1, sizeof *r);
    if (!r) {
        snprintf(err, errsz, "%s: out of memory", path);
        return NULL;
    }
    snprintf(r->path, sizeof r->path, "%s", path);
    r->db = gl_db_open_read(path, err, errsz);
    if (!r->db || load_run_row(r, err, errsz) || load_events(r, err, errsz)) {
        if (r->db && !err[0])
            snprintf(err, errsz, "%s: out of memory", path);
        gl_run_free(r);
        return NULL;
    }
    /* devices with events but no counted memory still get a row */
    for (size_t i = 0; i < r->nfails; i++)
        gl_run_device(r, r->fails[i].device);
    return r;
}

void gl_run_free(struct gl_run *r)
{
    if (!r)
        return;
    if (r->db)
        sqlite3_close(r->db);
    for (int i = 0; i < r->ndevs; i++)
        free(r->devs[i].timeline);
    free(r->allocs);
    free(r->fails);
    free(r->marks);
    free(r);
}
