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

void gl_retention_free(struct gl_run *r)
{
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

/* Each path's block: the allocation at its address live after its seq,
 * a PyTorch block before the CUDA allocation starting at the same place. */
static int link_blocks(struct gl_run *r)
{
    if (!r->n_retention || !r->retention)
        return 0;
    struct gl_u64map first; /* ptr -> 1 + index of its first path */
    size_t *next = calloc(r->n_retention + 1, sizeof *next);
    if (!next)
        return -1;
    gl_u64map_init(&first);
    for (size_t k = r->n_retention; k-- > 0;) {
        uint64_t head = 0;
        gl_u64map_get(&first, r->retention[k].ptr, &head);
        next[k] = (size_t)head;
        if (gl_u64map_put(&first, r->retention[k].ptr, k + 1)) {
            gl_u64map_free(&first);
            free(next);
            return -1;
        }
    }
    for (size_t i = 0; i < r->nallocs; i++) {
        const struct gl_alloc *a = &r->allocs[i];
        uint64_t head;
        if (!gl_u64map_get(&first, a->addr, &head))
            continue;
        for (size_t k = (size_t)head; k && k <= r->n_retention; k = next[k - 1]) {
            struct gl_retention_path *p = &r->retention[k - 1];
            if (!gl_live_at(a, p->seq) || !gl_op_is_alloc(a->op))
                continue;
            if (!p->block || (p->block->kind != GL_KIND_BLOCK && a->kind == GL_KIND_BLOCK))
                p->block = a;
        }
    }
    gl_u64map_free(&first);
    free(next);
    return 0;
}

int gl_retention_load(struct gl_run *r, char *err, size_t errsz)
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
    if (link_blocks(r)) {
        gl_retention_free(r);
        snprintf(err, errsz, "%s: out of memory reading retention", r->path);
        return -1;
    }
    return 0;
oom:
    sqlite3_finalize(st);
    gl_retention_free(r);
    snprintf(err, errsz, "%s: out of memory reading retention", r->path);
    return -1;
}
