/* model_retention.c — see model_retention.h. */
#include "model_retention.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "retention.h"
#include "u64map.h"

const char *gl_retention_moment_text(int moment)
{
    switch (moment) {
    case GL_RETENTION_OOM:
        return "at the out-of-memory";
    case GL_RETENTION_STEP:
        return "at a step that grew";
    case GL_RETENTION_EXIT:
        return "at exit";
    }
    return "at an unknown moment";
}

static int moment_of(const char *name)
{
    for (int m = 0; name && gl_retention_moment_name(m); m++)
        if (!strcmp(name, gl_retention_moment_name(m)))
            return m;
    return -1;
}

static void links_free(struct gl_run *r);

void gl_retention_free(struct gl_run *r)
{
    links_free(r);
    for (size_t i = 0; i < r->n_retention; i++) {
        free(r->retention[i].path);
        free(r->retention[i].root_file);
    }
    free(r->retention);
    r->retention = NULL;
    r->n_retention = 0;
}

static char *dup_text(sqlite3_stmt *st, int col)
{
    const unsigned char *t = sqlite3_column_text(st, col);
    return strdup(t ? (const char *)t : "");
}

/* Paths by address, for each allocation to find the paths it may be the
 * block of: ptr -> 1 + index of its first path, and each path's next. */
struct gl_retention_links {
    struct gl_u64map first;
    size_t *next;
    int copy; /* the blocks are copies (records a live-only load gives up) */
};

static void links_free(struct gl_run *r)
{
    if (!r->retention_links)
        return;
    gl_u64map_free(&r->retention_links->first);
    free(r->retention_links->next);
    free(r->retention_links);
    r->retention_links = NULL;
}

/* The paths by address, made once they are read. 0, or -1 with err (and
 * the paths given up). */
static int links_open(struct gl_run *r, int copy, char *err, size_t errsz)
{
    struct gl_retention_links *l = calloc(1, sizeof *l);
    int rc = l ? 0 : -1;
    if (l) {
        r->retention_links = l;
        l->copy = copy;
        gl_u64map_init(&l->first);
        rc = (l->next = calloc(r->n_retention + 1, sizeof *l->next)) ? 0 : -1;
    }
    for (size_t k = r->n_retention; !rc && k-- > 0;) {
        uint64_t head = 0;
        gl_u64map_get(&l->first, r->retention[k].ptr, &head);
        l->next[k] = (size_t)head;
        rc = gl_u64map_put(&l->first, r->retention[k].ptr, k + 1);
    }
    if (rc) {
        gl_retention_free(r); /* (the links too) */
        snprintf(err, errsz, "%s: out of memory reading retention", r->path);
    }
    return rc;
}

/* Each path's block: the allocation at its address live after its seq, a
 * PyTorch block before the CUDA allocation starting at the same place,
 * the first made of either (whatever order they are offered in). */
static int better_block(const struct gl_alloc *a, const struct gl_alloc *b)
{
    if ((a->kind == GL_KIND_BLOCK) != (b->kind == GL_KIND_BLOCK))
        return a->kind == GL_KIND_BLOCK;
    return a->seq < b->seq;
}

void gl_retention_offer(struct gl_run *r, const struct gl_alloc *a)
{
    const struct gl_retention_links *l = r->retention_links;
    uint64_t head;
    if (!l || !gl_u64map_get(&l->first, a->addr, &head))
        return;
    for (size_t k = (size_t)head; k && k <= r->n_retention; k = l->next[k - 1]) {
        struct gl_retention_path *p = &r->retention[k - 1];
        if (!gl_live_at(a, p->seq) || !gl_op_is_alloc(a->op) || (p->block && !better_block(a, p->block)))
            continue;
        if (l->copy) {
            p->held = *a;
            p->block = &p->held;
        } else {
            p->block = a;
        }
    }
}

/* The table's rows (no block linked yet). 0, or -1 with err. */
static int read_paths(struct gl_run *r, char *err, size_t errsz)
{
    r->retention = NULL;
    r->n_retention = 0;
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(r->db,
                           "SELECT seq, step, ptr, bytes, moment, path, root_file, root_line, complete, cut,"
                           " elapsed_us FROM retention ORDER BY rowid",
                           -1, &st, NULL) != SQLITE_OK)
        return 0; /* a database from before schema 3 */
    size_t cap = 0;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        int moment = moment_of((const char *)sqlite3_column_text(st, 4));
        if (moment < 0 || sqlite3_column_type(st, 5) != SQLITE_TEXT)
            continue; /* not a row the recorder writes */
        if (r->n_retention == cap) {
            cap = cap ? cap * 2 : 16;
            struct gl_retention_path *nv = realloc(r->retention, cap * sizeof *nv);
            if (!nv)
                goto oom;
            r->retention = nv;
        }
        struct gl_retention_path *p = &r->retention[r->n_retention];
        memset(p, 0, sizeof *p);
        p->path = dup_text(st, 5);
        p->root_file = dup_text(st, 6);
        r->n_retention++;
        if (!p->path || !p->root_file)
            goto oom;
        p->seq = sqlite3_column_int64(st, 0);
        p->step = sqlite3_column_type(st, 1) == SQLITE_NULL ? -1 : sqlite3_column_int64(st, 1);
        p->ptr = (uint64_t)sqlite3_column_int64(st, 2);
        p->bytes = (uint64_t)sqlite3_column_int64(st, 3);
        p->moment = moment;
        p->root_line = sqlite3_column_int(st, 7);
        p->complete = sqlite3_column_int(st, 8) != 0;
        p->cut = sqlite3_column_int(st, 9) != 0;
        p->elapsed_us = sqlite3_column_int64(st, 10);
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) {
        snprintf(err, errsz, "%s: damaged (reading retention: %s)", r->path, sqlite3_errmsg(r->db));
        gl_retention_free(r);
        return -1;
    }
    return 0;
oom:
    sqlite3_finalize(st);
    gl_retention_free(r);
    snprintf(err, errsz, "%s: out of memory reading retention", r->path);
    return -1;
}

int gl_retention_read_early(struct gl_run *r, char *err, size_t errsz)
{
    return read_paths(r, err, errsz) || links_open(r, 1, err, errsz) ? -1 : 0;
}

int gl_retention_load(struct gl_run *r, char *err, size_t errsz)
{
    /* read before the scan (gl_retention_read_early): the records it gave
     * up were offered, the records kept are offered now */
    if (!r->retention_links && (read_paths(r, err, errsz) || links_open(r, 0, err, errsz)))
        return -1;
    for (size_t i = 0; r->n_retention && i < r->nallocs; i++)
        gl_retention_offer(r, &r->allocs[i]);
    links_free(r);
    return 0;
}
