/* answers.c — see answers.h. */
#include "answers.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gl_event.h"
#include "schema.h"

/* GL_ASK_LAYER_AUTO: PyTorch's blocks once any was seen, else the device. */
static int layer_of(const struct gl_answers *a, int layer)
{
    if (layer == GL_WIN_DEVICE || layer == GL_WIN_BLOCKS)
        return layer;
    return a->windows->seen[GL_WIN_BLOCKS] ? GL_WIN_BLOCKS : GL_WIN_DEVICE;
}

/* SQL of "what the layer had live at row ?2, allocated from row ?1 on":
 * bytes and count, in all or (grouped) by stack, biggest first. The
 * operations and kinds are the vocabulary's (gl_event.h). */
static int prepare_live(struct gl_answers *a, int layer, int grouped)
{
    char alloc_ops[128] = "", free_ops[128] = "", kinds[128] = "";
    for (int id = 1; id < 64; id++) {
        char num[8];
        snprintf(num, sizeof num, ",%d", id);
        if (gl_op_is_alloc(id))
            strcat(alloc_ops, num);
        if (gl_op_is_free(id))
            strcat(free_ops, num);
        if (gl_kind_counts_on_device(id))
            strcat(kinds, num);
    }
    /* the frees are found through event_log.ref_seq: index it now (from
     * here on it is kept up row by row) */
    if (gl_schema_ref_index(a->w->db) != SQLITE_OK)
        return gl_wdb_fail(a->w, "indexing event_log.ref_seq");
    char sql[1024];
    if (layer == GL_WIN_DEVICE)
        snprintf(sql, sizeof sql,
                 "SELECT %s sum(a.size), count(*) FROM event_log a WHERE a.seq >= ?1 AND a.seq <= ?2"
                 " AND a.result = 0 AND a.op IN (%s) AND a.kind IN (%s) AND NOT EXISTS (SELECT 1 FROM event_log f"
                 " WHERE f.ref_seq = a.seq AND f.seq <= ?2 AND f.op IN (%s)) %s",
                 grouped ? "a.stack_id," : "", alloc_ops + 1, kinds + 1, free_ops + 1,
                 grouped ? "GROUP BY a.stack_id ORDER BY 2 DESC, 1 LIMIT ?3" : "");
    else /* PyTorch's blocks: block bytes in aux, live from ALLOC to FREE (requested) */
        snprintf(sql, sizeof sql,
                 "SELECT %s sum(a.aux), count(*) FROM event_log a WHERE a.seq >= ?1 AND a.seq <= ?2"
                 " AND a.op = %d AND a.kind = %d AND NOT EXISTS (SELECT 1 FROM event_log f"
                 " WHERE f.ref_seq = a.seq AND f.seq <= ?2 AND f.op = %d AND f.kind = %d) %s",
                 grouped ? "a.stack_id," : "", GL_OP_ALLOC, GL_KIND_BLOCK, GL_OP_FREE, GL_KIND_BLOCK,
                 grouped ? "GROUP BY a.stack_id ORDER BY 2 DESC, 1 LIMIT ?3" : "");
    return gl_wdb_prepare(a->w, &a->live[layer][grouped], sql);
}

/* The statement for the layer, bound to rows from..at. */
static sqlite3_stmt *live_at(struct gl_answers *a, int layer, int grouped, uint64_t from, uint64_t at)
{
    if (!a->live[layer][grouped] && prepare_live(a, layer, grouped))
        return NULL;
    sqlite3_stmt *st = a->live[layer][grouped];
    sqlite3_bind_int64(st, 1, (int64_t)from);
    sqlite3_bind_int64(st, 2, (int64_t)at);
    return st;
}

static void usage(struct gl_answers *a, struct gl_question *q, const struct gl_window *w, uint64_t last)
{
    struct gl_usage *u = q->usage;
    int l = layer_of(a, q->layer);
    memset(u, 0, sizeof *u);
    u->layer = l;
    u->live = a->windows->live[l];
    u->start = w->start[l];
    u->peak = w->peak[l];
    u->allocated = w->allocated[l];
    u->allocs = w->allocs[l];
    u->frees = w->frees[l];
    sqlite3_stmt *st = live_at(a, l, 0, w->seq, last);
    if (!st)
        return;
    if (sqlite3_step(st) == SQLITE_ROW) {
        u->new_live = (uint64_t)sqlite3_column_int64(st, 0);
        u->new_count = (uint64_t)sqlite3_column_int64(st, 1);
        q->rc = 0;
    }
    sqlite3_reset(st);
}

static void stacks(struct gl_answers *a, struct gl_question *q, const struct gl_window *w, uint64_t last)
{
    int l = layer_of(a, q->layer);
    uint64_t at = q->when == GL_ASK_AT_PEAK ? w->peak_seq[l] : last;
    q->rc = 0;
    if (!at)
        return; /* it never rose above the start: nothing new was live at the peak */
    sqlite3_stmt *st = live_at(a, l, 1, w->seq, at);
    if (!st) {
        q->rc = -1;
        return;
    }
    sqlite3_bind_int(st, 3, q->max);
    while (q->rc < q->max && sqlite3_step(st) == SQLITE_ROW)
        q->stacks[q->rc++] = (struct gl_stack_bytes){.stack_id = (uint64_t)sqlite3_column_int64(st, 0),
                                                     .bytes = (uint64_t)sqlite3_column_int64(st, 1),
                                                     .count = (uint64_t)sqlite3_column_int64(st, 2)};
    sqlite3_reset(st);
}

static const char *base_name(const char *path)
{
    const char *s = path ? strrchr(path, '/') : NULL;
    return s ? s + 1 : path;
}

/* One frame as a line: "function (file:line)" for Python, "symbol
 * (module)" for native code. */
static int frame_line(sqlite3_stmt *st, char *out, size_t sz)
{
    const char *sym = (const char *)sqlite3_column_text(st, 0), *file = (const char *)sqlite3_column_text(st, 1);
    const char *module = base_name((const char *)sqlite3_column_text(st, 3));
    if (sqlite3_column_int(st, 5) && file)
        return snprintf(out, sz, "%s (%s:%d)\n", sym ? sym : "?", file, sqlite3_column_int(st, 2));
    if (sym)
        return snprintf(out, sz, "%s (%s)\n", sym, module ? module : "?");
    return snprintf(out, sz, "%s+0x%llx\n", module ? module : "?", (unsigned long long)sqlite3_column_int64(st, 4));
}

static void stack_text(struct gl_answers *a, struct gl_question *q)
{
    if (!a->frames && gl_wdb_prepare(a->w, &a->frames,
                                     "SELECT symbol, file, line, module, offset, python FROM stack_frames"
                                     " WHERE stack_id = ? ORDER BY depth"))
        return;
    sqlite3_stmt *st = a->frames;
    int python_only = 0;
    sqlite3_bind_int64(st, 1, (int64_t)q->stack_id);
    if (q->flags & GL_ASK_PYTHON_ONLY)
        while (!python_only && sqlite3_step(st) == SQLITE_ROW)
            python_only = sqlite3_column_int(st, 5);
    sqlite3_reset(st);
    size_t used = 0;
    q->text[0] = 0;
    while (sqlite3_step(st) == SQLITE_ROW) {
        if (python_only && !sqlite3_column_int(st, 5))
            continue;
        int n = frame_line(st, q->text + used, q->textsz - used);
        if (n < 0 || (size_t)n >= q->textsz - used) {
            q->text[used] = 0; /* no half line */
            break;
        }
        used += (size_t)n;
    }
    sqlite3_reset(st);
    q->rc = (int)used;
}

void gl_answers_answer(struct gl_answers *a, struct gl_question *q, uint64_t next_seq)
{
    q->rc = -1;
    if (q->what == GL_QUESTION_CHECKPOINT) {
        gl_windows_open(a->windows, q->checkpoint, next_seq);
        q->rc = 0;
        return;
    }
    if (q->what == GL_QUESTION_STACK_TEXT) {
        if (q->text && q->textsz)
            stack_text(a, q);
        return;
    }
    const struct gl_window *w = gl_windows_find(a->windows, q->checkpoint);
    if (!w)
        return;
    if (q->what == GL_QUESTION_USAGE && q->usage)
        usage(a, q, w, next_seq - 1);
    else if (q->what == GL_QUESTION_STACKS && q->stacks && q->max > 0)
        stacks(a, q, w, next_seq - 1);
}

void gl_answers_close(struct gl_answers *a)
{
    sqlite3_stmt **sts[] = {&a->live[0][0], &a->live[0][1], &a->live[1][0], &a->live[1][1], &a->frames};
    gl_wdb_finalize(sts, 5);
}
