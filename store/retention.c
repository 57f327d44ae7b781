/* retention.c — see retention.h. */
#include "retention.h"

#include <string.h>

const char *gl_retention_moment_name(int moment)
{
    switch (moment) {
#define GL_X(name, id, text)                                                                        \
    case id:                                                                                        \
        return text;
        GL_RETENTION_MOMENTS(GL_X)
#undef GL_X
    }
    return NULL;
}

void gl_retention_pack(struct gl_event *ev, const struct gl_retention_rec *r)
{
    ev->addr = r->ptr;
    ev->size = r->bytes;
    ev->stream = (uint64_t)r->step;
    ev->pool = r->elapsed_us;
    ev->device = r->moment;
    ev->result = r->root_line;
    ev->flags |= GL_EVF_LABEL | (r->complete ? 0 : GL_EVF_INCOMPLETE) | (r->cut ? GL_EVF_CUT : 0);
}

int gl_retention_unpack(const struct gl_event *ev, struct gl_retention_rec *r)
{
    const char *text = (const char *)ev->ips;
    size_t n = (size_t)ev->aux;
    /* two NUL-terminated strings in exactly aux bytes */
    const char *end1 = n ? memchr(text, 0, n) : NULL;
    if (!end1 || (size_t)(end1 - text) + 1 >= n || text[n - 1] != 0 || !gl_retention_moment_name(ev->device))
        return -1;
    r->path = text;
    r->root_file = end1 + 1;
    r->ptr = ev->addr;
    r->bytes = ev->size;
    r->step = (int64_t)ev->stream;
    r->elapsed_us = ev->pool;
    r->moment = ev->device;
    r->root_line = ev->result;
    r->complete = !(ev->flags & GL_EVF_INCOMPLETE);
    r->cut = (ev->flags & GL_EVF_CUT) != 0;
    return 0;
}

int gl_retention_open(struct gl_retention *t, struct gl_wdb *w, pid_t pid)
{
    memset(t, 0, sizeof *t);
    t->w = w;
    t->pid = pid;
    return gl_wdb_prepare(w, &t->ins,
                          "INSERT INTO retention(seq, ts_ns, pid, tid, moment, step, ptr, bytes, path, root_file,"
                          " root_line, elapsed_us, complete, cut) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
}

void gl_retention_close(struct gl_retention *t)
{
    sqlite3_stmt **const sts[] = {&t->ins};
    gl_wdb_finalize(sts, 1);
}

int gl_retention_add(struct gl_retention *t, const struct gl_event *ev, uint64_t last_seq)
{
    struct gl_retention_rec r;
    if (gl_retention_unpack(ev, &r)) {
        t->bad++;
        return 0;
    }
    sqlite3_stmt *st = t->ins;
    sqlite3_bind_int64(st, 1, (sqlite3_int64)last_seq);
    sqlite3_bind_int64(st, 2, (sqlite3_int64)ev->ts_ns);
    sqlite3_bind_int64(st, 3, t->pid);
    sqlite3_bind_int64(st, 4, ev->tid);
    sqlite3_bind_text(st, 5, gl_retention_moment_name(r.moment), -1, SQLITE_STATIC);
    if (r.step >= 0)
        sqlite3_bind_int64(st, 6, r.step);
    else
        sqlite3_bind_null(st, 6);
    sqlite3_bind_int64(st, 7, (sqlite3_int64)r.ptr);
    sqlite3_bind_int64(st, 8, (sqlite3_int64)r.bytes);
    sqlite3_bind_text(st, 9, r.path, -1, SQLITE_TRANSIENT);
    if (*r.root_file)
        sqlite3_bind_text(st, 10, r.root_file, -1, SQLITE_TRANSIENT);
    else
        sqlite3_bind_null(st, 10);
    if (r.root_line > 0)
        sqlite3_bind_int(st, 11, r.root_line);
    else
        sqlite3_bind_null(st, 11);
    sqlite3_bind_int64(st, 12, (sqlite3_int64)r.elapsed_us);
    sqlite3_bind_int(st, 13, r.complete);
    sqlite3_bind_int(st, 14, r.cut);
    return gl_wdb_step(t->w, st, "writing a retention path");
}
