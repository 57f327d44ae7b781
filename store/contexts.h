/* contexts.h — event_contexts rows: what an event's row shares with many
 * others (thread, API, stream, pool, result) is written once and named by
 * a small id, which is all an event_rows row holds of it (schema 4: a
 * row is 14-20 bytes smaller). Writer thread only. */
#ifndef GL_CONTEXTS_H
#define GL_CONTEXTS_H

#include <stdint.h>

#include "gl_event.h"
#include "u64map.h"
#include "wdb.h"

struct gl_context {
    int64_t tid, api, stream, pool, result;
};

struct gl_contexts {
    struct gl_wdb *w;
    sqlite3_stmt *ins;
    struct gl_u64map index; /* probe key -> id */
    struct gl_context *rows; /* rows[id - 1] */
    int64_t n, cap;
    int64_t last[2]; /* the ids found last (an alloc's and its free's) */
};

int gl_contexts_open(struct gl_contexts *c, struct gl_wdb *w);
void gl_contexts_close(struct gl_contexts *c);
/* The id of ev's context, its row written if new; 0 on a database error or
 * out of memory (the message in the wdb). */
int64_t gl_contexts_find(struct gl_contexts *c, const struct gl_event *ev);

static inline int gl_context_is(const struct gl_context *x, const struct gl_event *ev)
{
    return x->tid == ev->tid && x->api == ev->api && x->stream == (int64_t)ev->stream &&
           x->pool == (int64_t)ev->pool && x->result == ev->result;
}

/* Inline: once per event; nearly always one of the last two. */
static inline int64_t gl_contexts_id(struct gl_contexts *c, const struct gl_event *ev)
{
    for (int i = 0; i < 2; i++)
        if (c->last[i] && gl_context_is(&c->rows[c->last[i] - 1], ev))
            return c->last[i];
    return gl_contexts_find(c, ev);
}

#endif
