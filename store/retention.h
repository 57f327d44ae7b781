/* retention.h — what keeps GPU memory alive (schema 3): the paths the
 * Python package's retention finder found from the program's roots to the
 * tensors holding blocks, one row each in the retention table. They arrive
 * as events of api gpuledger_retention (interpose/retention.c packs them;
 * gl_retention_unpack reads them back), never in event_log. */
#ifndef GL_RETENTION_H
#define GL_RETENTION_H

#include <stdint.h>
#include <sys/types.h>

#include "gl_event.h"
#include "wdb.h"

/* The table (schema.c appends it to the schema). */
#define GL_RETENTION_DDL                                                                            \
    "CREATE TABLE retention(seq INTEGER, ts_ns INTEGER, pid INTEGER, tid INTEGER, moment TEXT,"      \
    " step INTEGER, ptr INTEGER, bytes INTEGER, path TEXT, root_file TEXT, root_line INTEGER,"        \
    " elapsed_us INTEGER, complete INTEGER, cut INTEGER);"

/* When a path was looked for (the event's device field). */
#define GL_RETENTION_MOMENTS(X)                                                                     \
    X(OOM, 0, "oom")   /* PyTorch's out-of-memory observer */                                      \
    X(STEP, 1, "step") /* an optimizer step that ended with more live tensor bytes */              \
    X(EXIT, 2, "exit") /* the end of the run (atexit) */

enum gl_retention_moment {
#define GL_X(name, id, text) GL_RETENTION_##name = id,
    GL_RETENTION_MOMENTS(GL_X)
#undef GL_X
};
/* "oom", "step", "exit"; NULL for another number. */
const char *gl_retention_moment_name(int moment);

/* One path as it travels in an event: ips[] holds "path\0root_file\0"
 * (aux bytes). */
struct gl_retention_rec {
    int moment, root_line, complete, cut;
    int64_t step;            /* -1: none */
    uint64_t ptr, bytes, elapsed_us;
    const char *path, *root_file;
};
/* Fill an event (its label bytes already in ips[], aux their length). */
void gl_retention_pack(struct gl_event *ev, const struct gl_retention_rec *r);
/* Read one back (pointers into ev). 0, or -1 when it is not well formed. */
int gl_retention_unpack(const struct gl_event *ev, struct gl_retention_rec *r);

struct gl_retention {
    struct gl_wdb *w;
    sqlite3_stmt *ins;
    pid_t pid;
    uint64_t bad;            /* events that were not well formed (counted in meta) */
};

int gl_retention_open(struct gl_retention *t, struct gl_wdb *w, pid_t pid);
/* ev: an event of api gpuledger_retention; last_seq: the last event_log row before it. */
int gl_retention_add(struct gl_retention *t, const struct gl_event *ev, uint64_t last_seq);
void gl_retention_close(struct gl_retention *t);

#endif
