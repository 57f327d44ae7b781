/* contexts.c — see contexts.h. */
#include "contexts.h"

#include <stdlib.h>
#include <string.h>

int gl_contexts_open(struct gl_contexts *c, struct gl_wdb *w)
{
    memset(c, 0, sizeof *c);
    c->w = w;
    gl_u64map_init(&c->index);
    return gl_wdb_prepare(w, &c->ins,
                          "INSERT INTO event_contexts(id, tid, api, stream, pool, result) VALUES(?,?,?,?,?,?)");
}

void gl_contexts_close(struct gl_contexts *c)
{
    sqlite3_stmt **const sts[] = {&c->ins};
    gl_wdb_finalize(sts, 1);
    gl_u64map_free(&c->index);
    free(c->rows);
}

static uint64_t hash_context(const struct gl_event *ev)
{
    uint64_t h = gl_hash64((uint64_t)(uint32_t)ev->tid ^ ((uint64_t)ev->api << 32) ^ ((uint64_t)(uint32_t)ev->result << 48));
    h = gl_hash64(h ^ ev->stream);
    h = gl_hash64(h ^ ev->pool);
    return h;
}

static void remember(struct gl_contexts *c, int64_t id)
{
    if (c->last[0] != id) {
        c->last[1] = c->last[0];
        c->last[0] = id;
    }
}

int64_t gl_contexts_find(struct gl_contexts *c, const struct gl_event *ev)
{
    uint64_t key = hash_context(ev), id;
    while (gl_u64map_get(&c->index, key, &id)) {
        if (gl_context_is(&c->rows[id - 1], ev)) {
            remember(c, (int64_t)id);
            return (int64_t)id;
        }
        key++; /* a hash collision: probe the next key */
    }
    if (c->n == c->cap) {
        int64_t nc = c->cap ? c->cap * 2 : 64;
        struct gl_context *nr = realloc(c->rows, (size_t)nc * sizeof *nr);
        if (!nr) {
            gl_wdb_fail(c->w, "event contexts: out of memory");
            return 0;
        }
        c->rows = nr;
        c->cap = nc;
    }
    struct gl_context *x = &c->rows[c->n];
    *x = (struct gl_context){ev->tid, ev->api, (int64_t)ev->stream, (int64_t)ev->pool, ev->result};
    int64_t nid = c->n + 1;
    if (gl_u64map_put(&c->index, key, (uint64_t)nid)) {
        gl_wdb_fail(c->w, "event contexts: out of memory");
        return 0;
    }
    c->n++;
    const int64_t v[] = {nid, x->tid, x->api, x->stream, x->pool, x->result};
    for (int i = 0; i < 6; i++)
        sqlite3_bind_int64(c->ins, i + 1, v[i]);
    if (gl_wdb_step(c->w, c->ins, "writing an event context"))
        return 0;
    remember(c, nid);
    return nid;
}
