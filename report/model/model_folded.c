/* model_folded.c — see model_folded.h. */
#include "model_folded.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* The pairs of one aggregate row, and of one API's sum, at most (2^40, also
 * in add_calls' SQL: three years at 10 M pairs a second); larger is a damaged
 * row, not counted, and the run's totals saturate instead of wrapping. */
#define GL_FOLDED_PAIRS_MAX ((int64_t)1 << 40)
static int64_t sat_add(int64_t a, int64_t b)
{
    return a > INT64_MAX - b ? INT64_MAX : a + b; /* both >= 0 */
}

/* The folded pairs' calls: each pair one call of its allocation's API and
 * one of its free's. */
static int add_calls(struct gl_run *r, char *err, size_t errsz)
{
    sqlite3_stmt *q;
    if (sqlite3_prepare_v2(r->db,
                           "SELECT a.api, f.api, sum(CASE WHEN s.pairs BETWEEN 0 AND 1099511627776 THEN s.pairs END)"
                           " FROM step_stacks s"
                           " LEFT JOIN event_contexts a ON a.id = s.context"
                           " LEFT JOIN event_contexts f ON f.id = s.free_context GROUP BY 1, 2",
                           -1, &q, NULL) != SQLITE_OK) {
        snprintf(err, errsz, "%s: reading step_stacks: %s", r->path, sqlite3_errmsg(r->db));
        return -1;
    }
    int rc;
    while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
        int64_t n = sqlite3_column_int64(q, 2);
        if (n < 0 || n > GL_FOLDED_PAIRS_MAX)
            continue; /* no writer folds that many: a damaged row, counted nowhere */
        for (int c = 0; c < 2; c++) {
            int api = sqlite3_column_int(q, c);
            if (api > 0 && api < GL_API_COUNT)
                r->api_count[api] = sat_add(r->api_count[api], n);
        }
        r->folded.folded_events = sat_add(r->folded.folded_events, 2 * n);
    }
    if (rc != SQLITE_DONE) { /* e.g. a sum past 2^63: a damaged database */
        snprintf(err, errsz, "%s: reading step_stacks: %s", r->path, sqlite3_errmsg(r->db));
        sqlite3_finalize(q);
        return -1;
    }
    sqlite3_finalize(q);
    r->event_count = sat_add(r->event_count, r->folded.folded_events);
    return 0;
}

/* The steps kept in full (step_windows), in order. */
static int load_windows(struct gl_run *r)
{
    sqlite3_stmt *q;
    size_t cap = 0;
    if (sqlite3_prepare_v2(r->db, "SELECT step, why FROM step_windows ORDER BY step", -1, &q, NULL) != SQLITE_OK)
        return 0;
    int rc = 0;
    while (!rc && sqlite3_step(q) == SQLITE_ROW) {
        if (gl_grow((void **)&r->folded.windows, &cap, r->folded.nwindows, sizeof *r->folded.windows, 64)) {
            rc = -1;
        } else {
            struct gl_kept_step *k = &r->folded.windows[r->folded.nwindows++];
            const unsigned char *why = sqlite3_column_text(q, 1);
            k->step = sqlite3_column_int64(q, 0);
            snprintf(k->why, sizeof k->why, "%s", why ? (const char *)why : "?");
        }
    }
    sqlite3_finalize(q);
    return rc;
}

/* One step's end, appended. */
static int push_end(struct gl_folded *f, size_t *cap, int64_t seq, int64_t ts)
{
    if (gl_grow((void **)&f->ends, cap, f->nends, sizeof *f->ends, 256))
        return -1;
    f->ends[f->nends++] = (struct gl_step_end){seq, ts};
    return 0;
}

/* Where the steps ended: step_ends, else (a schema-5 file written before
 * it) the reader's own steps and their marks' times. */
static int load_ends(struct gl_run *r)
{
    struct gl_folded *f = &r->folded;
    sqlite3_stmt *q;
    size_t cap = 0;
    f->ends_recorded = has_table(r->db, "step_ends");
    const char *sql = f->ends_recorded ? "SELECT seq, ts_ns FROM step_ends ORDER BY step"
                                       : "SELECT ts_ns FROM event_log WHERE seq = ?";
    if (sqlite3_prepare_v2(r->db, sql, -1, &q, NULL) != SQLITE_OK)
        return 0;
    int rc = 0;
    if (f->ends_recorded) {
        while (!rc && sqlite3_step(q) == SQLITE_ROW)
            rc = push_end(f, &cap, sqlite3_column_int64(q, 0), sqlite3_column_int64(q, 1));
    } else {
        for (size_t i = 0; !rc && i < r->nsteps; i++) {
            sqlite3_bind_int64(q, 1, r->steps[i]);
            if (sqlite3_step(q) == SQLITE_ROW)
                rc = push_end(f, &cap, r->steps[i], sqlite3_column_int64(q, 0));
            sqlite3_reset(q);
        }
    }
    sqlite3_finalize(q);
    return rc;
}

/* Each writer step's reader step, kept only where the two numberings
 * differ (a program that marks more than the optimizer's steps). A run
 * without reader steps (no marks: the writer's pseudo-steps) or without
 * step_ends keeps the writer's numbering. */
static int map_reader_steps(struct gl_run *r)
{
    struct gl_folded *f = &r->folded;
    if (!f->ends_recorded || !r->nsteps || !f->nends)
        return 0;
    long *m = malloc(f->nends * sizeof *m);
    if (!m)
        return -1;
    int same = 1;
    for (size_t k = 0; k < f->nends; k++) {
        m[k] = (long)gl_run_step_of(r, f->ends[k].seq);
        same &= m[k] == (long)k;
    }
    if (same) {
        free(m);
        return 0;
    }
    f->reader_step = m;
    f->nreader_step = f->nends;
    return 0;
}

long gl_run_fold_reader_step(const struct gl_run *r, long step)
{
    const struct gl_folded *f = &r->folded;
    if (!f->reader_step || step < 0)
        return step;
    if ((size_t)step < f->nreader_step)
        return f->reader_step[step];
    return f->reader_step[f->nreader_step - 1] + 1; /* past the last end (step_ends has every step's) */
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
    if (load_windows(r) || load_ends(r) || map_reader_steps(r)) {
        snprintf(err, errsz, "%s: out of memory", r->path);
        return -1;
    }
    if (f->reader_step) { /* the writer counted its own steps: counted again in the reader's */
        struct gl_fold_gaps g;
        gl_run_fold_gaps(r, &g);
        f->steps_folded = (uint64_t)g.steps;
        f->steps_full = (uint64_t)(g.of - g.steps);
    }
    return add_calls(r, err, errsz);
}

/* Append text to buf at *w, never past sz. */
static void put(char *buf, size_t sz, size_t *w, const char *text)
{
    if (*w + 1 >= sz)
        return;
    int n = snprintf(buf + *w, sz - *w, "%s", text);
    if (n > 0)
        *w = *w + (size_t)n < sz ? *w + (size_t)n : sz - 1;
}

/* The first index of folded.windows at or after step. */
static size_t kept_from(const struct gl_folded *f, long step)
{
    size_t lo = 0, hi = f->nwindows;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (f->windows[mid].step < (int64_t)step)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

int gl_run_step_folded(const struct gl_run *r, long step)
{
    const struct gl_folded *f = &r->folded;
    if (!f->budgeted || step < 0)
        return 0;
    size_t lo = kept_from(f, step);
    return !(lo < f->nwindows && f->windows[lo].step == (int64_t)step);
}

void gl_run_fold_kept_around(const struct gl_run *r, long step, long *before, long *after)
{
    const struct gl_folded *f = &r->folded;
    size_t lo = kept_from(f, step);
    *before = lo > 0 ? (long)lo - 1 : -1;
    size_t hi = lo < f->nwindows && f->windows[lo].step == (int64_t)step ? lo + 1 : lo;
    *after = hi < f->nwindows ? (long)hi : -1;
}

long gl_run_fold_nsteps(const struct gl_run *r)
{
    const struct gl_folded *f = &r->folded;
    return (long)f->nends + !f->ends_recorded; /* step_ends has the last step's end too */
}

/* The first step whose end (its last event's seq, or with by_ns its
 * moment) is at or after x. */
static long first_end_at(const struct gl_folded *f, int64_t x, int by_ns)
{
    size_t lo = 0, hi = f->nends;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if ((by_ns ? f->ends[mid].ts_ns : f->ends[mid].seq) < x)
            lo = mid + 1;
        else
            hi = mid;
    }
    return (long)lo;
}

long gl_run_fold_step_of_seq(const struct gl_run *r, int64_t seq)
{
    return first_end_at(&r->folded, seq, 0);
}

long gl_run_fold_step_of_ns(const struct gl_run *r, int64_t ts_ns)
{
    return first_end_at(&r->folded, ts_ns, 1);
}

void gl_run_fold_step_span(const struct gl_run *r, long step, int64_t *lo_ns, int64_t *hi_ns)
{
    const struct gl_folded *f = &r->folded;
    size_t s = step < 0 ? 0 : (size_t)step;
    *lo_ns = s == 0 ? r->start_ns : s - 1 < f->nends ? f->ends[s - 1].ts_ns : r->end_ns;
    *hi_ns = s < f->nends ? f->ends[s].ts_ns : r->end_ns;
}

void gl_run_fold_gaps(const struct gl_run *r, struct gl_fold_gaps *g)
{
    long n = gl_run_fold_nsteps(r), count = 0, lo[GL_BUDGET_MAX_RANGES], hi[GL_BUDGET_MAX_RANGES];
    size_t ranges = 0, more = 0, w = 0, sz = sizeof g->ranges;
    char *buf = g->ranges;
    memset(g, 0, sizeof *g);
    if (!r->folded.budgeted)
        return;
    /* the reader's steps with an aggregated writer step (in order: the
     * writer's steps map onto the reader's as they go), in runs of
     * consecutive steps */
    long run_lo = -1, run_hi = -1;
    for (long s = 0; s <= n; s++) {
        long rs = s < n && gl_run_step_folded(r, s) ? gl_run_fold_reader_step(r, s) : -1;
        if (s < n && (rs < 0 || rs == run_hi))
            continue; /* kept, or another aggregated part of the same reader step */
        if (s < n && run_hi >= 0 && rs == run_hi + 1) {
            run_hi = rs, count++;
            continue;
        }
        if (run_hi >= 0) { /* the run ended: a gap, or the last step */
            if (ranges < GL_BUDGET_MAX_RANGES) {
                lo[ranges] = run_lo;
                hi[ranges++] = run_hi;
            } else {
                more++;
            }
        }
        if (s < n)
            run_lo = run_hi = rs, count++;
    }
    for (size_t i = 0; i < ranges; i++) {
        char one[64];
        if (lo[i] == hi[i])
            snprintf(one, sizeof one, "%ld", lo[i]);
        else
            snprintf(one, sizeof one, "%ld-%ld", lo[i], hi[i]);
        put(buf, sz, &w, i == 0 ? "" : i + 1 == ranges && !more ? " and " : ", ");
        put(buf, sz, &w, one);
    }
    if (more) {
        char tail[64];
        snprintf(tail, sizeof tail, " and %zu more range%s", more, more == 1 ? "" : "s");
        put(buf, sz, &w, tail);
    }
    g->steps = count;
    g->of = n > 0 ? gl_run_fold_reader_step(r, n - 1) + 1 : 0;
    g->pairs = r->folded.pairs;
}

void gl_run_free_folded(struct gl_run *r)
{
    free(r->folded.windows);
    free(r->folded.ends);
    free(r->folded.reader_step);
    r->folded.windows = NULL;
    r->folded.ends = NULL;
    r->folded.reader_step = NULL;
}
