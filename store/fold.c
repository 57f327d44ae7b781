/* fold.c — see fold.h. */
#include "fold.h"

#include <stdlib.h>
#include <string.h>

#include "gl_event.h"

int gl_fold_open(struct gl_fold *f, struct gl_wdb *w, unsigned long long budget)
{
    memset(f, 0, sizeof *f);
    f->w = w;
    f->budget = budget;
    f->width = 1;
    gl_u64map_init(&f->agg_idx);
    return gl_wdb_prepare(w, &f->ins,
                          "INSERT INTO step_stacks(step_lo, step_hi, context, free_context, kind, stack_id,"
                          " pairs, bytes) VALUES(?,?,?,?,?,?,?,?)") ||
           gl_wdb_prepare(w, &f->del, "DELETE FROM event_rows WHERE seq = ?") ||
           gl_wdb_prepare(w, &f->ins_win, "INSERT OR REPLACE INTO step_windows(step, why) VALUES(?, ?)") ||
           gl_wdb_prepare(w, &f->del_win, "DELETE FROM step_windows WHERE step = ?");
}

void gl_fold_close(struct gl_fold *f)
{
    sqlite3_stmt **const sts[] = {&f->ins, &f->del, &f->ins_win, &f->del_win};
    gl_wdb_finalize(sts, 4);
    free(f->win);
    free(f->pend);
    f->win = NULL;
    f->pend = NULL;
    gl_u64map_free(&f->agg_idx);
    free(f->aggs);
    free(f->flags);
    f->aggs = NULL;
    f->flags = NULL;
}

int gl_fold_full(const struct gl_fold *f, int peak_raised, int growth_starts, int final)
{
    if (f->keep || peak_raised)
        return 1; /* the answers themselves: always, whatever the budget */
    if (f->level > 0)
        return 0;
    return final || growth_starts || f->step < GL_FOLD_FIRST_STEPS;
}

/* Count one folded pair in the bucket in progress. */
static int agg_add(struct gl_fold *f, const struct gl_row *a, const struct gl_row *fr)
{
    struct gl_fold_agg k = {a->v[2], fr->v[2], a->v[4], a->null & (1u << 8) ? 0 : a->v[8], 0, 0};
    uint64_t h = gl_hash64((uint64_t)k.stack_id * 0x9e3779b97f4a7c15ULL ^ (uint64_t)k.ctx << 32 ^
                           (uint64_t)k.free_ctx << 8 ^ (uint64_t)k.kind),
             pos;
    while (gl_u64map_get(&f->agg_idx, h, &pos)) {
        struct gl_fold_agg *g = &f->aggs[pos];
        if (g->ctx == k.ctx && g->free_ctx == k.free_ctx && g->kind == k.kind && g->stack_id == k.stack_id) {
            g->pairs++;
            g->bytes += (uint64_t)a->v[7];
            return 0;
        }
        h++;
    }
    if (f->naggs == f->aggs_cap) {
        size_t nc = f->aggs_cap ? f->aggs_cap * 2 : 256;
        struct gl_fold_agg *na = realloc(f->aggs, nc * sizeof *na);
        if (!na)
            return gl_wdb_fail(f->w, "folding a step: out of memory");
        f->aggs = na;
        f->aggs_cap = nc;
    }
    k.pairs = 1;
    k.bytes = (uint64_t)a->v[7];
    f->aggs[f->naggs] = k;
    return gl_u64map_put(&f->agg_idx, h, f->naggs++) ? gl_wdb_fail(f->w, "folding a step: out of memory") : 0;
}

/* Write the bucket's aggregates (steps bucket_lo .. step_hi). */
static int agg_flush(struct gl_fold *f, uint64_t step_hi)
{
    int rc = 0;
    for (size_t i = 0; i < f->naggs && !rc; i++) {
        const struct gl_fold_agg *g = &f->aggs[i];
        sqlite3_stmt *st = f->ins;
        sqlite3_bind_int64(st, 1, (sqlite3_int64)(f->bucket_min < f->bucket_lo ? f->bucket_min : f->bucket_lo));
        sqlite3_bind_int64(st, 2, (sqlite3_int64)step_hi);
        sqlite3_bind_int64(st, 3, g->ctx);
        sqlite3_bind_int64(st, 4, g->free_ctx);
        sqlite3_bind_int64(st, 5, g->kind);
        if (g->stack_id)
            sqlite3_bind_int64(st, 6, g->stack_id);
        else
            sqlite3_bind_null(st, 6);
        sqlite3_bind_int64(st, 7, (sqlite3_int64)g->pairs);
        sqlite3_bind_int64(st, 8, (sqlite3_int64)g->bytes);
        rc = gl_wdb_step(f->w, st, "writing step aggregates");
        f->agg_rows++;
    }
    f->naggs = 0;
    gl_u64map_free(&f->agg_idx);
    gl_u64map_init(&f->agg_idx);
    return rc;
}

/* A set of rows: the held step's or the pending one's. */
struct rowset {
    struct gl_row *h;
    size_t n;
};

/* Write every row of rs (dropping: past the budget, only the annotations;
 * the rest counted). */
static int write_rows(struct gl_fold *f, struct gl_rows *r, struct rowset rs, int dropping)
{
    int rc = 0;
    for (size_t i = 0; i < rs.n && !rc; i++) {
        if (dropping && !gl_op_is_annotation((int)rs.h[i].v[3])) {
            f->rows_dropped++;
            continue;
        }
        rc = gl_rows_put(r, &rs.h[i]);
    }
    return rc;
}

enum { PINNED = 1, FOLDED = 2, PAIRED = 4 };

/* Mark the pairs among rs's rows: allocations made and freed among them
 * that no other row names (flags PAIRED, on both rows); the seqs of a set
 * are rs.h[0].seq .. + n - 1. 0, or -1 out of memory. */
static int find_pairs(struct gl_fold *f, struct rowset rs)
{
    size_t n = rs.n;
    if (n > f->flags_cap) {
        uint8_t *nf = realloc(f->flags, n);
        if (!nf)
            return -1;
        f->flags = nf;
        f->flags_cap = n;
    }
    memset(f->flags, 0, n);
    const int64_t base = rs.h[0].v[0];
    const struct gl_row *h = rs.h;
    for (size_t i = 0; i < n; i++) {
        if (h[i].null & (1u << 9))
            continue;
        int64_t j = h[i].v[9] - base;
        if (j < 0 || (size_t)j >= n)
            continue;
        if (!gl_op_is_free((int)h[i].v[3]) || !gl_op_is_alloc((int)h[j].v[3]) || (f->flags[j] & FOLDED))
            f->flags[j] |= PINNED; /* named by a tag, a completion, a second end: kept */
        else
            f->flags[j] |= FOLDED; /* for now: its end is held too */
    }
    for (size_t i = 0; i < n; i++) {
        if (h[i].null & (1u << 9) || !gl_op_is_free((int)h[i].v[3]))
            continue;
        int64_t j = h[i].v[9] - base;
        if (j < 0 || (size_t)j >= n || f->flags[j] != FOLDED || f->flags[i] & PINNED)
            continue;
        f->flags[i] = PAIRED;
        f->flags[j] = PAIRED;
    }
    return 0;
}

/* Fold rs (of step `step`): the pairs become aggregates; the rest is written. */
static int fold_rows(struct gl_fold *f, struct gl_rows *r, struct rowset rs, uint64_t step)
{
    if (!rs.n)
        return 0;
    if (find_pairs(f, rs))
        return write_rows(f, r, rs, 0);
    if (step < f->bucket_min)
        f->bucket_min = step;
    const int64_t base = rs.h[0].v[0];
    int rc = 0, dropping = f->level > 1;
    for (size_t i = 0; i < rs.n && !rc; i++) {
        const struct gl_row *h = &rs.h[i];
        if (f->flags[i] & PAIRED) {
            if (gl_op_is_free((int)h->v[3])) {
                rc = agg_add(f, &rs.h[h->v[9] - base], h);
                f->pairs_folded++;
            }
            continue;
        }
        if (dropping && !gl_op_is_annotation((int)h->v[3])) {
            f->rows_dropped++;
            continue;
        }
        rc = gl_rows_put(r, h);
    }
    return rc;
}

static int put_window(struct gl_fold *f, uint64_t step, const char *why)
{
    f->steps_full++;
    sqlite3_bind_int64(f->ins_win, 1, (sqlite3_int64)step);
    sqlite3_bind_text(f->ins_win, 2, why, -1, SQLITE_STATIC);
    return gl_wdb_step(f->w, f->ins_win, "writing a step's window");
}

/* The last written peak window is no longer the peak: its pairs' rows
 * are deleted and counted in the bucket in progress. */
static int drop_window(struct gl_fold *f, struct gl_rows *r)
{
    if (!f->nwin)
        return 0;
    int rc = gl_rows_flush(r); /* its last rows may still wait in the batch */
    for (size_t i = 0; i < f->nwin && !rc; i++)
        for (int k = 0; k < 2 && !rc; k++) {
            sqlite3_bind_int64(f->del, 1, k ? f->win[i].seq_free : f->win[i].seq_alloc);
            rc = gl_wdb_step(f->w, f->del, "dropping an old peak's window");
        }
    if (f->win_step < f->bucket_min)
        f->bucket_min = f->win_step;
    for (size_t i = 0; i < f->nwin && !rc; i++) {
        struct gl_row a = {{0}, 0}, fr = {{0}, 0};
        a.v[2] = f->win[i].agg.ctx;
        a.v[4] = f->win[i].agg.kind;
        a.v[7] = (int64_t)f->win[i].agg.bytes;
        a.v[8] = f->win[i].agg.stack_id;
        a.null = f->win[i].agg.stack_id ? 0 : 1u << 8;
        fr.v[2] = f->win[i].agg.free_ctx;
        rc = agg_add(f, &a, &fr);
    }
    if (!rc) {
        sqlite3_bind_int64(f->del_win, 1, (sqlite3_int64)f->win_step);
        rc = gl_wdb_step(f->w, f->del_win, "dropping an old peak's window");
    }
    f->pairs_folded += f->nwin;
    f->windows_dropped++;
    f->steps_full--;
    f->steps_folded++;
    f->nwin = 0;
    return rc;
}

/* A peak window written: remember its pairs, to drop them if a later step
 * raises the peak again. */
static void remember_window(struct gl_fold *f, struct rowset rs, uint64_t step)
{
    f->nwin = 0;
    f->win_step = step;
    if (!rs.n || find_pairs(f, rs))
        return; /* out of memory: the window stays for good */
    const int64_t base = rs.h[0].v[0];
    for (size_t i = 0; i < rs.n; i++) {
        const struct gl_row *h = &rs.h[i];
        if (!(f->flags[i] & PAIRED) || !gl_op_is_free((int)h->v[3]))
            continue;
        if (f->nwin == f->win_cap) {
            size_t nc = f->win_cap ? f->win_cap * 2 : 256;
            struct gl_fold_win *nw = realloc(f->win, nc * sizeof *nw);
            if (!nw) {
                f->nwin = 0;
                return;
            }
            f->win = nw;
            f->win_cap = nc;
        }
        const struct gl_row *a = &rs.h[h->v[9] - base];
        struct gl_fold_win *w = &f->win[f->nwin++];
        w->seq_alloc = a->v[0];
        w->seq_free = h->v[0];
        w->agg = (struct gl_fold_agg){a->v[2], h->v[2], a->v[4], a->null & (1u << 8) ? 0 : a->v[8], 1,
                                      (uint64_t)a->v[7]};
    }
}

int gl_fold_overflow(struct gl_fold *f, struct gl_rows *r)
{
    f->steps_overflowed++;
    f->keep = f->overflowed = 1; /* the step's rest with it: a step too big to hold is written whole */
    int rc = write_rows(f, r, (struct rowset){r->held, r->nheld}, 0);
    r->nheld = 0;
    return rc;
}

/* The pending step (kept only for raising the peak) is settled: folded if
 * the step after it raised the peak again, else written as the peak's
 * window. */
static int settle_pending(struct gl_fold *f, struct gl_rows *r, int superseded)
{
    if (!f->has_pending)
        return 0;
    struct rowset p = {f->pend, f->npend};
    int rc;
    if (superseded) {
        rc = fold_rows(f, r, p, f->pend_step);
        f->steps_folded++;
        f->windows_dropped++;
    } else {
        remember_window(f, p, f->pend_step);
        rc = write_rows(f, r, p, 0);
        if (!rc)
            rc = put_window(f, f->pend_step, "peak");
    }
    f->npend = 0;
    f->has_pending = 0;
    return rc;
}

int gl_fold_step_end(struct gl_fold *f, struct gl_rows *r, uint64_t peak_sig, uint64_t live, int final)
{
    int rose = live > f->prev_live;
    int growth_starts = f->step > 0 && rose && !f->prev_rose;
    int raised = peak_sig != f->peak_sig;
    int full = gl_fold_full(f, raised, growth_starts, final);
    /* raised, and nothing else would keep it: held one step more, folded
     * if the next step raises the peak again (a leak raises it every step) */
    int only_peak = raised && !gl_fold_full(f, 0, growth_starts, final);
    int rc = settle_pending(f, r, raised);
    if (!rc && raised) /* a written peak window is not the peak's any more */
        rc = drop_window(f, r);
    struct rowset h = {r->held, r->nheld};
    if (!rc && only_peak) {
        struct gl_row *t = f->pend; /* the held rows become the pending ones */
        size_t tc = f->pend_cap;
        f->pend = r->held;
        f->pend_cap = r->held_cap;
        f->npend = r->nheld;
        r->held = t;
        r->held_cap = tc;
        f->pend_step = f->step;
        f->has_pending = 1;
    } else if (!rc && full) {
        const char *why = f->overflowed ? "overflow" : f->keep ? "failure" : raised ? "peak" : final ? "last"
                          : growth_starts ? "growth" : "first";
        rc = write_rows(f, r, h, 0); /* kept for good: a failure's, a first, growth or last step */
        if (!rc)
            rc = put_window(f, f->step, why);
    } else if (!rc) {
        rc = fold_rows(f, r, h, f->step);
        f->steps_folded++;
    }
    r->nheld = 0;
    if (!r->held) { /* the first pending step: a buffer for the next step's rows */
        r->held_cap = 4096;
        r->held = malloc(r->held_cap * sizeof *r->held);
        if (!r->held)
            rc = gl_wdb_fail(f->w, "holding a step's rows: out of memory");
    }
    f->prev_rose = rose;
    f->prev_live = live;
    f->peak_sig = peak_sig;
    f->keep = f->overflowed = 0;
    f->step++;
    if (!rc && final)
        rc = settle_pending(f, r, 0);
    if (!rc && (final || f->step - f->bucket_lo >= f->width)) {
        rc = agg_flush(f, f->step - 1);
        f->bucket_lo = f->bucket_min = f->step;
        if (++f->buckets_at_width >= GL_FOLD_BUCKETS) {
            f->width *= 2;
            f->buckets_at_width = 0;
        }
    }
    return rc;
}

int gl_fold_measure(struct gl_fold *f)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(f->w->db, "SELECT page_count * page_size FROM pragma_page_count, pragma_page_size",
                           -1, &st, NULL) != SQLITE_OK)
        return gl_wdb_fail(f->w, "measuring the database");
    if (sqlite3_step(st) == SQLITE_ROW)
        f->used = (uint64_t)sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    int level = f->used >= f->budget ? 2 : f->used >= f->budget / 100 * GL_FOLD_TIGHT_PERCENT ? 1 : 0;
    if (level > f->level) { /* coarser aggregates from here */
        f->width *= 2;
        f->buckets_at_width = 0;
        f->level = level;
    }
    return 0;
}
