/* model_folded.c — see model_folded.h. */
#include "model_folded.h"

#include <stdio.h>
#include <stdlib.h>

#include "grow.h"
#include "model.h"

static uint64_t meta_u64(struct gl_run *r, const char *key)
{
    char buf[32];
    return gl_run_meta(r, key, buf, sizeof buf) ? 0 : strtoull(buf, NULL, 10);
}

static int has_table(sqlite3 *db, const char *name)
{
    sqlite3_stmt *q;
    int found = 0;
    if (sqlite3_prepare_v2(db, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", -1, &q, NULL) ==
        SQLITE_OK) {
        sqlite3_bind_text(q, 1, name, -1, SQLITE_STATIC);
        found = sqlite3_step(q) == SQLITE_ROW;
    }
    sqlite3_finalize(q);
    return found;
}

/* The folded pairs' calls: each pair one call of its allocation's API and
 * one of its free's. */
static int add_calls(struct gl_run *r, char *err, size_t errsz)
{
    sqlite3_stmt *q;
    if (sqlite3_prepare_v2(r->db,
                           "SELECT a.api, f.api, sum(s.pairs) FROM step_stacks s"
                           " LEFT JOIN event_contexts a ON a.id = s.context"
                           " LEFT JOIN event_contexts f ON f.id = s.free_context GROUP BY 1, 2",
                           -1, &q, NULL) != SQLITE_OK) {
        snprintf(err, errsz, "%s: reading step_stacks: %s", r->path, sqlite3_errmsg(r->db));
        return -1;
    }
    while (sqlite3_step(q) == SQLITE_ROW) {
        int64_t n = sqlite3_column_int64(q, 2);
        for (int c = 0; c < 2; c++) {
            int api = sqlite3_column_int(q, c);
            if (api > 0 && api < GL_API_COUNT)
                r->api_count[api] += n;
        }
        r->folded.folded_events += 2 * n;
    }
    sqlite3_finalize(q);
    r->event_count += r->folded.folded_events;
    return 0;
}

/* The steps kept in full (step_windows), in order. */
static int load_windows(struct gl_run *r)
{
    sqlite3_stmt *q;
    size_t cap = 0;
    if (sqlite3_prepare_v2(r->db, "SELECT step FROM step_windows ORDER BY step", -1, &q, NULL) != SQLITE_OK)
        return 0;
    int rc = 0;
    while (!rc && sqlite3_step(q) == SQLITE_ROW) {
        if (gl_grow((void **)&r->folded.windows, &cap, r->folded.nwindows, sizeof *r->folded.windows, 64))
            rc = -1;
        else
            r->folded.windows[r->folded.nwindows++] = sqlite3_column_int64(q, 0);
    }
    sqlite3_finalize(q);
    return rc;
}

int gl_run_load_folded(struct gl_run *r, char *err, size_t errsz)
{
    struct gl_folded *f = &r->folded;
    f->budget = meta_u64(r, "budget_bytes");
    if (!f->budget || !has_table(r->db, "step_stacks"))
        return 0;
    f->budgeted = 1;
    f->used = meta_u64(r, "budget_used_bytes");
    f->steps_full = meta_u64(r, "budget_steps_full");
    f->steps_folded = meta_u64(r, "budget_steps_folded");
    f->pairs = meta_u64(r, "budget_pairs_folded");
    f->windows_dropped = meta_u64(r, "budget_windows_dropped");
    f->rows_dropped = meta_u64(r, "budget_rows_dropped");
    f->aggregate_rows = meta_u64(r, "budget_aggregate_rows");
    f->width = meta_u64(r, "budget_aggregate_width");
    if (load_windows(r)) {
        snprintf(err, errsz, "%s: out of memory", r->path);
        return -1;
    }
    return add_calls(r, err, errsz);
}

int gl_run_step_folded(const struct gl_run *r, long step)
{
    const struct gl_folded *f = &r->folded;
    if (!f->budgeted || step < 0)
        return 0;
    size_t lo = 0, hi = f->nwindows;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (f->windows[mid] < (int64_t)step)
            lo = mid + 1;
        else
            hi = mid;
    }
    return !(lo < f->nwindows && f->windows[lo] == (int64_t)step);
}

void gl_run_free_folded(struct gl_run *r)
{
    free(r->folded.windows);
    r->folded.windows = NULL;
}
