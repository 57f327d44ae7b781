/* annotations.c — see annotations.h. */
#include "annotations.h"

#include <string.h>

int gl_annotations_open(struct gl_annotations *a, struct gl_wdb *w)
{
    memset(a, 0, sizeof *a);
    a->w = w;
    gl_u64map_init(&a->range_of_tid);
    gl_u64map_init(&a->range_parent);
    return gl_wdb_prepare(w, &a->ins,
                          "INSERT INTO annotations(seq, ts_ns, tid, op, label, parent_seq) VALUES(?,?,?,?,?,?)");
}

void gl_annotations_close(struct gl_annotations *a)
{
    sqlite3_stmt **const sts[] = {&a->ins};
    gl_wdb_finalize(sts, 1);
    gl_u64map_free(&a->range_of_tid);
    gl_u64map_free(&a->range_parent);
}

int gl_annotations_add(struct gl_annotations *a, struct gl_rows *rows, const struct gl_event *ev)
{
    uint64_t tid = (uint64_t)(uint32_t)ev->tid, cur = 0, parent = 0, seq;
    gl_u64map_get(&a->range_of_tid, tid, &cur);
    if (ev->op == GL_OP_RANGE_POP) {
        if (!cur)
            return 0; /* a pop without a push: nothing to close */
        gl_u64map_get(&a->range_parent, cur, &parent);
        gl_u64map_del(&a->range_parent, cur);
        gl_u64map_put(&a->range_of_tid, tid, parent);
        if (a->process_range == cur)
            a->process_range = parent;
    }
    if (gl_rows_add(rows, ev, ev->op, GL_KIND_NONE, 0, 0, 0, gl_annotations_range(a, ev->tid), &seq))
        return -1;
    const char *label = ev->op == GL_OP_RANGE_POP ? NULL : (const char *)ev->ips;
    sqlite3_stmt *st = a->ins;
    sqlite3_bind_int64(st, 1, (sqlite3_int64)seq);
    sqlite3_bind_int64(st, 2, (sqlite3_int64)ev->ts_ns);
    sqlite3_bind_int64(st, 3, ev->tid);
    sqlite3_bind_text(st, 4, gl_op_name(ev->op), -1, SQLITE_STATIC);
    if (label)
        sqlite3_bind_text(st, 5, label, (int)ev->aux, SQLITE_TRANSIENT);
    else
        sqlite3_bind_null(st, 5);
    /* push and mark: the range it is inside; pop: the range it closes */
    if (cur)
        sqlite3_bind_int64(st, 6, (sqlite3_int64)cur);
    else
        sqlite3_bind_null(st, 6);
    if (ev->op == GL_OP_RANGE_PUSH) {
        gl_u64map_put(&a->range_parent, seq, cur);
        gl_u64map_put(&a->range_of_tid, tid, seq);
        a->process_range = seq;
        a->any_range = 1;
    }
    return gl_wdb_step(a->w, st, "writing an annotation");
}
