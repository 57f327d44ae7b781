/* subs.c — see subs.h. */
#include "subs.h"

#include <string.h>

#define HEAPS (GL_NSPACES + GL_KIND_HEAP)
#define REGIONS (GL_NSPACES + GL_KIND_REGION)

int gl_subs_open(struct gl_subs *u, struct gl_wdb *w)
{
    memset(u, 0, sizeof *u);
    u->w = w;
    return gl_wdb_prepare(w, &u->ins_name, "INSERT INTO names(seq, ref_seq, name) VALUES(?,?,?)");
}

void gl_subs_close(struct gl_subs *u)
{
    sqlite3_stmt **const sts[] = {&u->ins_name};
    gl_wdb_finalize(sts, 1);
}

/* The seq of the live heap or region at key, 0 if none. */
static uint64_t live_seq(struct gl_ledger *l, int space, uint64_t key)
{
    const struct gl_live *e = gl_ledger_find(l, space, key);
    return e ? e->seq : 0;
}

/* End every region still live in heap `heap`: a free row each, made by ev. */
static int end_regions(struct gl_rows *rows, struct gl_ledger *l, const struct gl_event *ev, uint64_t heap,
                       int64_t sid, uint64_t range)
{
    int rc = 0;
    size_t pos = 0;
    uint64_t k;
    struct gl_live e;
    while (gl_ledger_next(l, REGIONS, &pos, &k, &e)) {
        if (e.pool != heap || !gl_ledger_take(l, REGIONS, k, &e))
            continue;
        struct gl_event e2 = *ev;
        e2.addr = k;
        e2.flags &= (uint16_t)~GL_EVF_USED;
        e2.aux = 0;
        rc |= gl_rows_add(rows, &e2, GL_OP_FREE, GL_KIND_REGION, e.size, sid, e.seq, range, NULL);
    }
    return rc;
}

static int add_name(struct gl_subs *u, struct gl_rows *rows, struct gl_ledger *l, const struct gl_event *ev,
                    uint64_t range)
{
    int space = ev->kind == GL_KIND_HEAP ? HEAPS : REGIONS;
    uint64_t ref = live_seq(l, space, ev->addr), seq;
    struct gl_event e2 = *ev;
    e2.aux = 0; /* the label's length */
    if (gl_rows_add(rows, &e2, GL_OP_NAME, ev->kind, 0, 0, ref, range, &seq))
        return -1;
    sqlite3_stmt *st = u->ins_name;
    sqlite3_bind_int64(st, 1, (sqlite3_int64)seq);
    if (ref)
        sqlite3_bind_int64(st, 2, (sqlite3_int64)ref);
    else
        sqlite3_bind_null(st, 2);
    sqlite3_bind_text(st, 3, (const char *)ev->ips, (int)ev->aux, SQLITE_TRANSIENT);
    return gl_wdb_step(u->w, st, "writing a name");
}

int gl_subs_add(struct gl_subs *u, struct gl_rows *rows, struct gl_ledger *l, const struct gl_event *ev,
                int64_t sid, uint64_t range, uint64_t *unmatched)
{
    if (ev->flags & GL_EVF_LABEL)
        return add_name(u, rows, l, ev, range);
    int heap = ev->kind == GL_KIND_HEAP, space = heap ? HEAPS : REGIONS;
    uint64_t seq;
    struct gl_live e;
    struct gl_live *found;
    struct gl_event e2 = *ev;
    switch (ev->op) {
    case GL_OP_ALLOC: {
        /* a region's row points at its heap's */
        uint64_t ref = heap ? 0 : live_seq(l, HEAPS, ev->pool);
        int rc = gl_rows_add(rows, ev, GL_OP_ALLOC, ev->kind, ev->size, sid, ref, range, &seq);
        gl_ledger_add(l, space, ev->addr, seq, ev);
        return rc;
    }
    case GL_OP_FREE: {
        int rc = heap ? end_regions(rows, l, ev, ev->addr, sid, range) : 0;
        if (!gl_ledger_take(l, space, ev->addr, &e)) {
            (*unmatched)++;
            return rc | gl_rows_add(rows, ev, GL_OP_FREE, ev->kind, ev->size, sid, 0, range, NULL);
        }
        e2.pool = e.pool; /* a region's free names its heap */
        return rc | gl_rows_add(rows, &e2, GL_OP_FREE, ev->kind, e.size, sid, e.seq, range, NULL);
    }
    case GL_OP_HEAP_RESET: {
        int rc = end_regions(rows, l, ev, ev->addr, sid, range);
        return rc | gl_rows_add(rows, ev, GL_OP_HEAP_RESET, GL_KIND_HEAP, 0, sid, live_seq(l, HEAPS, ev->addr),
                                range, NULL);
    }
    case GL_OP_RESIZE:
        /* aux: the size before */
        found = gl_ledger_find(l, space, ev->addr);
        if (found) {
            e2.aux = found->size;
            e2.pool = found->pool;
            found->size = ev->size;
        }
        return gl_rows_add(rows, &e2, GL_OP_RESIZE, ev->kind, ev->size, sid, found ? found->seq : 0, range, NULL);
    case GL_OP_SET:
        /* a heap's page size, a region's used bytes: aux */
        found = gl_ledger_find(l, space, ev->addr);
        if (found)
            e2.pool = found->pool;
        return gl_rows_add(rows, &e2, GL_OP_SET, ev->kind, 0, sid, found ? found->seq : 0, range, NULL);
    default:
        return gl_rows_add(rows, ev, ev->op, ev->kind, ev->size, sid, 0, range, NULL);
    }
}
