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
           gl_wdb_prepare(w, &f->del_win, "DELETE FROM step_windows WHERE step = ?") ||
           gl_wdb_prepare(w, &f->ins_end, "INSERT OR REPLACE INTO step_ends(step, seq, ts_ns) VALUES(?, ?, ?)");
}

void gl_fold_close(struct gl_fold *f)
{
    sqlite3_stmt **const sts[] = {&f->ins, &f->del, &f->ins_win, &f->del_win, &f->ins_end};
    gl_wdb_finalize(sts, 5);
    for (size_t i = 0; i < f->nwins; i++)
        free(f->wins[i].pairs);
    free(f->wins);
    free(f->pend);
    f->wins = NULL;
    f->nwins = 0;
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

/* Does the set hold any peak? */
static int peakset_any(const struct gl_fold_peakset *p)
{
    for (int i = 0; i < GL_FOLD_PEAK_WORDS; i++)
        if (p->bit[i])
            return 1;
    return 0;
}

/* p without the peaks in q. */
static void peakset_remove(struct gl_fold_peakset *p, const struct gl_fold_peakset *q)
{
    for (int i = 0; i < GL_FOLD_PEAK_WORDS; i++)
        p->bit[i] &= ~q->bit[i];
}

/* Written window i holds no peak any more: its pairs' rows are deleted
 * and counted in the bucket in progress; the window leaves the list. */
static int drop_window(struct gl_fold *f, struct gl_rows *r, size_t i)
{
    struct gl_fold_window *w = &f->wins[i];
    int rc = gl_rows_flush(r); /* its last rows may still wait in the batch */
    for (size_t j = 0; j < w->npairs && !rc; j++)
        for (int k = 0; k < 2 && !rc; k++) {
            sqlite3_bind_int64(f->del, 1, k ? w->pairs[j].seq_free : w->pairs[j].seq_alloc);
            rc = gl_wdb_step(f->w, f->del, "dropping an old peak's window");
        }
    if (w->step < f->bucket_min)
        f->bucket_min = w->step;
    for (size_t j = 0; j < w->npairs && !rc; j++) {
        const struct gl_fold_agg *g = &w->pairs[j].agg;
        struct gl_row a = {{0}, 0}, fr = {{0}, 0};
        a.v[2] = g->ctx;
        a.v[4] = g->kind;
        a.v[7] = (int64_t)g->bytes;
        a.v[8] = g->stack_id;
        a.null = g->stack_id ? 0 : 1u << 8;
        fr.v[2] = g->free_ctx;
        rc = agg_add(f, &a, &fr);
    }
    if (!rc) {
        sqlite3_bind_int64(f->del_win, 1, (sqlite3_int64)w->step);
        rc = gl_wdb_step(f->w, f->del_win, "dropping an old peak's window");
    }
    f->pairs_folded += w->npairs;
    f->windows_dropped++;
    f->steps_full--;
    f->steps_folded++;
    free(w->pairs);
    f->wins[i] = f->wins[--f->nwins];
    return rc;
}

/* The peaks in `rose` rose again: each written window that held only
 * those is dropped. */
static int drop_windows(struct gl_fold *f, struct gl_rows *r, const struct gl_fold_peakset *rose)
{
    int rc = 0;
    for (size_t i = f->nwins; i-- > 0 && !rc;) {
        peakset_remove(&f->wins[i].held, rose);
        if (!peakset_any(&f->wins[i].held))
            rc = drop_window(f, r, i);
    }
    return rc;
}

/* A peak window written (step, holding the peaks `held`): remember its
 * pairs, to drop them once later steps raised all those peaks again. */
static void remember_window(struct gl_fold *f, struct rowset rs, uint64_t step, const struct gl_fold_peakset *held)
{
    if (!rs.n || find_pairs(f, rs))
        return; /* nothing to drop, or out of memory: the window stays for good */
    if (f->nwins == f->wins_cap) {
        size_t nc = f->wins_cap ? f->wins_cap * 2 : 8;
        struct gl_fold_window *nw = realloc(f->wins, nc * sizeof *nw);
        if (!nw)
            return;
        f->wins = nw;
        f->wins_cap = nc;
    }
    struct gl_fold_window w = {step, *held, NULL, 0, 0};
    const int64_t base = rs.h[0].v[0];
    for (size_t i = 0; i < rs.n; i++) {
        const struct gl_row *h = &rs.h[i];
        if (!(f->flags[i] & PAIRED) || !gl_op_is_free((int)h->v[3]))
            continue;
        if (w.npairs == w.cap) {
            size_t nc = w.cap ? w.cap * 2 : 256;
            struct gl_fold_win *np = realloc(w.pairs, nc * sizeof *np);
            if (!np) {
                free(w.pairs);
                return;
            }
            w.pairs = np;
            w.cap = nc;
        }
        const struct gl_row *a = &rs.h[h->v[9] - base];
        struct gl_fold_win *p = &w.pairs[w.npairs++];
        p->seq_alloc = a->v[0];
        p->seq_free = h->v[0];
        p->agg = (struct gl_fold_agg){a->v[2], h->v[2], a->v[4], a->null & (1u << 8) ? 0 : a->v[8], 1,
                                      (uint64_t)a->v[7]};
    }
    if (!w.npairs)
        return; /* no pairs: nothing would be dropped */
    f->wins[f->nwins++] = w;
}

int gl_fold_overflow(struct gl_fold *f, struct gl_rows *r)
{
    f->steps_overflowed++;
    f->keep = f->overflowed = 1; /* the step's rest with it: a step too big to hold is written whole */
    int rc = write_rows(f, r, (struct rowset){r->held, r->nheld}, 0);
    r->nheld = 0;
    return rc;
}

/* The pending step (kept only for raising peaks) is settled: folded if
 * the step after it raised every one of its peaks again (rose), else
 * written as a window of the peaks it still holds. */
static int settle_pending(struct gl_fold *f, struct gl_rows *r, const struct gl_fold_peakset *rose)
{
    if (!f->has_pending)
        return 0;
    struct rowset p = {f->pend, f->npend};
    peakset_remove(&f->pend_held, rose);
    int rc;
    if (!peakset_any(&f->pend_held)) {
        rc = fold_rows(f, r, p, f->pend_step);
        f->steps_folded++;
        f->windows_dropped++;
    } else {
        remember_window(f, p, f->pend_step, &f->pend_held);
        rc = write_rows(f, r, p, 0);
        if (!rc)
            rc = put_window(f, f->pend_step, "peak");
    }
    f->npend = 0;
    f->has_pending = 0;
    return rc;
}

/* Where the step in progress ends: step_ends(step, last seq, end_ns). */
static int put_end(struct gl_fold *f, const struct gl_rows *r, uint64_t end_ns)
{
    sqlite3_bind_int64(f->ins_end, 1, (sqlite3_int64)f->step);
    sqlite3_bind_int64(f->ins_end, 2, (sqlite3_int64)(r->next_seq - 1));
    sqlite3_bind_int64(f->ins_end, 3, (sqlite3_int64)end_ns);
    return gl_wdb_step(f->w, f->ins_end, "writing a step's end");
}

int gl_fold_step_end(struct gl_fold *f, struct gl_rows *r, const uint64_t *peaks, uint64_t live, uint64_t end_ns,
                     int final)
{
    int rose = live > f->prev_live;
    int growth_starts = f->step > 0 && rose && !f->prev_rose;
    struct gl_fold_peakset up = {{0}}; /* the peaks this step changed */
    for (int i = 0; i < GL_FOLD_PEAKS; i++)
        if (peaks[i] != f->peaks[i])
            up.bit[i / 64] |= 1ULL << (i % 64);
    int raised = peakset_any(&up);
    int full = gl_fold_full(f, raised, growth_starts, final);
    /* raised, and nothing else would keep it: held one step more, folded
     * if the next step raises the peak again (a leak raises it every step) */
    int only_peak = raised && !gl_fold_full(f, 0, growth_starts, final);
    int rc = put_end(f, r, end_ns);
    if (!rc)
        rc = settle_pending(f, r, &up);
    if (!rc && raised) /* a written window whose peaks all rose again holds none */
        rc = drop_windows(f, r, &up);
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
        f->pend_held = up;
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
    memcpy(f->peaks, peaks, sizeof f->peaks);
    f->keep = f->overflowed = 0;
    f->step++;
    if (!rc && final) {
        const struct gl_fold_peakset none = {{0}};
        rc = settle_pending(f, r, &none);
    }
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
