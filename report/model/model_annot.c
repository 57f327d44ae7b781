/* model_annot.c — see model_annot.h. */
#include "model_annot.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reader.h"
#include "u64map.h"

void gl_annots_free(struct gl_annots *a)
{
    for (size_t i = 0; i < a->n; i++)
        free(a->v[i].label);
    free(a->v);
    a->v = NULL;
    a->n = 0;
}

/* A time no recording has (a damaged or hostile row) is held within 2^52 ns
 * (52 days) of the run's, so that every difference of times stays an int64;
 * a recorded one is left as it is. */
static int64_t sane_ns(const struct gl_run *r, int64_t ts)
{
    const int64_t margin = (int64_t)1 << 52;
    int64_t lo = r->first_ns > INT64_MIN + margin ? r->first_ns - margin : INT64_MIN;
    int64_t hi = r->last_ns < INT64_MAX - margin ? r->last_ns + margin : INT64_MAX;
    return ts < lo ? lo : ts > hi ? hi : ts;
}

int gl_annots_load(struct gl_run *r, struct gl_annots *a, char *err, size_t errsz)
{
    a->v = NULL;
    a->n = 0;
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(r->db, "SELECT seq, ts_ns, tid, op, label, parent_seq FROM annotations ORDER BY seq", -1,
                           &st, NULL) != SQLITE_OK)
        return 0; /* a database from before annotations */
    struct gl_u64map pos; /* push seq -> index */
    gl_u64map_init(&pos);
    size_t cap = 0;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *op = (const char *)sqlite3_column_text(st, 3);
        int64_t seq = sqlite3_column_int64(st, 0), ts = sane_ns(r, sqlite3_column_int64(st, 1));
        int64_t parent = sqlite3_column_int64(st, 5);
        uint64_t k;
        if (op && !strcmp(op, "range_pop")) {
            if (a->v && parent > 0 && gl_u64map_get(&pos, (uint64_t)parent, &k) && k < a->n) {
                a->v[k].end_seq = seq;
                a->v[k].end_ns = ts;
            }
            continue;
        }
        int is_mark = op && !strcmp(op, "mark");
        if (!is_mark && !(op && !strcmp(op, "range_push")))
            continue;
        if (a->n == cap) {
            cap = cap ? cap * 2 : 64;
            struct gl_annot *nv = realloc(a->v, cap * sizeof *nv);
            if (!nv)
                goto oom;
            a->v = nv;
        }
        struct gl_annot *x = &a->v[a->n];
        memset(x, 0, sizeof *x);
        const unsigned char *label = sqlite3_column_text(st, 4);
        x->label = strdup(label ? (const char *)label : "");
        if (!x->label)
            goto oom;
        x->seq = seq;
        x->ts_ns = ts;
        x->tid = sqlite3_column_int(st, 2);
        x->parent_seq = parent;
        x->op = (uint8_t)(is_mark ? GL_OP_MARK : GL_OP_RANGE_PUSH);
        if (parent > 0 && gl_u64map_get(&pos, (uint64_t)parent, &k) && k < a->n)
            x->depth = a->v[k].depth + 1;
        if (!is_mark && gl_u64map_put(&pos, (uint64_t)seq, a->n))
            goto oom;
        a->n++;
    }
    sqlite3_finalize(st);
    gl_u64map_free(&pos);
    if (rc != SQLITE_DONE) {
        snprintf(err, errsz, "%s: damaged (reading annotations: %s)", r->path, sqlite3_errmsg(r->db));
        gl_annots_free(a);
        return -1;
    }
    return 0;
oom:
    sqlite3_finalize(st);
    gl_u64map_free(&pos);
    gl_annots_free(a);
    snprintf(err, errsz, "%s: out of memory reading annotations", r->path);
    return -1;
}

int gl_event_ts(struct gl_run *r, int64_t seq, int64_t *ts)
{
    sqlite3_stmt *st;
    int found = 0;
    if (sqlite3_prepare_v2(r->db, "SELECT ts_ns FROM event_log WHERE seq = ?", -1, &st, NULL) != SQLITE_OK)
        return -1;
    sqlite3_bind_int64(st, 1, seq);
    if (sqlite3_step(st) == SQLITE_ROW) {
        *ts = sqlite3_column_int64(st, 0);
        found = 1;
    }
    sqlite3_finalize(st);
    return found ? 0 : -1;
}

int64_t gl_event_before(struct gl_run *r, int64_t ts)
{
    sqlite3_stmt *st;
    int64_t seq = 0;
    if (sqlite3_prepare_v2(r->db, "SELECT max(seq) FROM event_log WHERE ts_ns <= ?", -1, &st, NULL) != SQLITE_OK)
        return 0;
    sqlite3_bind_int64(st, 1, ts);
    if (sqlite3_step(st) == SQLITE_ROW)
        seq = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return seq;
}

int64_t gl_event_max(struct gl_run *r)
{
    return r->last_seq; /* of the rows kept (model.c) */
}
