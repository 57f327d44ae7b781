/* diagnosis_retention.c — what keeps a finding's memory alive, as
 * evidence: the one place where the diagnosis reads the retention paths
 * the gpuledger package records (model_retention.h: moment, step, the
 * block a tensor storage's data_ptr names, the path from a root). For a
 * finding with blocks (growth; an OOM whose verdict is growth), the paths
 * of one search are used: the search at the finding's own moment kind
 * first (an OOM's at the OOM; growth's at a step that grew, then at exit,
 * then at an OOM), the one nearest the finding's event among those. The
 * paths are grouped by their root (a global, a local, an attribute); the
 * sentence gains "Kept alive by: PATH." for the root holding the most of the
 * finding's bytes among all the roots (the path to its newest block), the
 * remedy names the root's line, and the evidence gives the search's moment,
 * step and cost, the three roots holding the most, and how many more roots
 * there were and their bytes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diagnosis.h"
#include "dossier.h"
#include "grow.h"
#include "model_retention.h"
#include "retention.h"
#include "u64map.h"
#include "units.h"

#define GL_KEPT_SHOWN 3 /* roots shown, the ones holding the most */

static int64_t dist(int64_t a, int64_t b) { return a > b ? a - b : b - a; }

/* Whether path p names one of the finding's blocks. */
static int names_block(const struct gl_retention_path *p, const struct gl_u64map *blocks)
{
    uint64_t one;
    return p->block && gl_u64map_get(blocks, p->block->addr, &one);
}

/* The seq of the search to use (0: none names one of the blocks), its
 * moment in *moment (an OOM's and the exit's searches can share a seq). */
static int64_t pick_search(const struct gl_run *r, const struct gl_finding *f, const struct gl_u64map *blocks,
                           int *moment)
{
    static const int oom_order[] = {GL_RETENTION_OOM, GL_RETENTION_STEP, GL_RETENTION_EXIT};
    static const int growth_order[] = {GL_RETENTION_STEP, GL_RETENTION_EXIT, GL_RETENTION_OOM};
    const int *order = !strcmp(f->kind, "oom") ? oom_order : growth_order;
    for (size_t o = 0; o < 3; o++) {
        int64_t best = 0;
        for (size_t i = 0; i < r->n_retention; i++) {
            const struct gl_retention_path *p = &r->retention[i];
            if (p->moment != order[o] || !names_block(p, blocks))
                continue;
            if (!best || dist(p->seq, f->seq) < dist(best, f->seq))
                best = p->seq;
        }
        if (best) {
            *moment = order[o];
            return best;
        }
    }
    return 0;
}

static void append(char *buf, size_t sz, const char *fmt, const char *s)
{
    size_t n = strlen(buf);
    if (n < sz)
        snprintf(buf + n, sz - n, fmt, s);
}

/* One root's share of the search: the paths that begin with the same
 * root ("train.py: global kept (list, 18 items)", the text before the
 * first " → "), their bytes, and the path to the newest block. */
struct root {
    const struct gl_retention_path *newest;
    size_t len, n;
    uint64_t bytes;
};

static size_t root_len(const char *path)
{
    const char *arrow = strstr(path, " \u2192 ");
    return arrow ? (size_t)(arrow - path) : strlen(path);
}

/* The roots found so far. */
struct roots {
    struct root *v;
    size_t n, cap;
};

/* Fold p into its root, a new one at the end if none has its text. 0, or
 * -1 out of memory. */
static int add_root(struct roots *rs, const struct gl_retention_path *p)
{
    size_t len = root_len(p->path);
    for (size_t i = 0; i < rs->n; i++) {
        struct root *t = &rs->v[i];
        if (t->len == len && !strncmp(t->newest->path, p->path, len)) {
            t->n++;
            t->bytes += p->bytes;
            if (p->block->seq > t->newest->block->seq)
                t->newest = p;
            return 0;
        }
    }
    if (gl_grow((void **)&rs->v, &rs->cap, rs->n, sizeof *rs->v, 8))
        return -1;
    rs->v[rs->n++] = (struct root){p, len, 1, p->bytes};
    return 0;
}

/* The roots holding the most first; among equals, the one met first (a
 * stable insertion sort: the roots of one search are few). */
static void sort_roots(struct roots *rs)
{
    for (size_t i = 1; i < rs->n; i++)
        for (size_t j = i; j > 0 && rs->v[j].bytes > rs->v[j - 1].bytes; j--) {
            struct root t = rs->v[j];
            rs->v[j] = rs->v[j - 1];
            rs->v[j - 1] = t;
        }
}

void gl_finding_kept_alive(struct gl_dossier *d, struct gl_finding *f)
{
    const struct gl_run *r = d->run;
    if (!r->n_retention || !f->nblocks)
        return;
    struct gl_u64map blocks; /* block address -> 1 */
    gl_u64map_init(&blocks);
    for (size_t i = 0; i < f->nblocks; i++)
        gl_u64map_put(&blocks, f->blocks[i], 1);
    int moment = 0;
    int64_t at = pick_search(r, f, &blocks, &moment);
    struct roots rs = {0};
    size_t npaths = 0;
    uint64_t held = 0;
    int oom = 0;
    const struct gl_retention_path *any = NULL;
    for (size_t i = 0; at && i < r->n_retention; i++) {
        const struct gl_retention_path *p = &r->retention[i];
        if (p->seq != at || p->moment != moment || !names_block(p, &blocks))
            continue;
        npaths++;
        held += p->bytes;
        any = p;
        if (add_root(&rs, p))
            oom = 1;
    }
    gl_u64map_free(&blocks);
    if (!npaths || !rs.n) {
        free(rs.v);
        return;
    }
    sort_roots(&rs);
    const struct root *roots = rs.v;
    size_t shown = rs.n < GL_KEPT_SHOWN ? rs.n : GL_KEPT_SHOWN;
    uint64_t more_bytes = 0;
    for (size_t i = shown; i < rs.n; i++)
        more_bytes += roots[i].bytes;
    const struct gl_retention_path *top = roots[0].newest;
    char b[32], mb[32], t[48], step[48] = "", more[96] = "";
    append(f->sentence, sizeof f->sentence, " Kept alive by: %s.", top->path);
    if (top->root_file && *top->root_file && top->root_line > 0) {
        char was[sizeof f->remedy];
        snprintf(was, sizeof was, "%s", f->remedy);
        int n = snprintf(f->remedy, sizeof f->remedy, "drop or detach what %s:%d keeps (%.*s); ", top->root_file,
                         top->root_line, (int)roots[0].len, top->path);
        if (n > 0 && (size_t)n < sizeof f->remedy)
            append(f->remedy, sizeof f->remedy, "%s", was);
    }
    if (any->step >= 0)
        snprintf(step, sizeof step, ", after %lld optimizer step%s", (long long)any->step,
                 gl_s((uint64_t)any->step));
    if (rs.n > shown)
        snprintf(more, sizeof more, "; %zu more root%s than shown, holding %s", rs.n - shown,
                 gl_s((uint64_t)(rs.n - shown)), gl_fmt_bytes(more_bytes, mb, sizeof mb));
    else if (oom)
        snprintf(more, sizeof more, "; some paths not grouped by root: out of memory");
    snprintf(t, sizeof t, "%.1f ms", (double)any->elapsed_us / 1000.0);
    gl_finding_evidence(f, "kept alive (searched %s%s, in %s%s): %zu path%s to %s of these tensors%s",
                        gl_retention_moment_text(any->moment), step, t, any->complete ? "" : ", cut by its bounds",
                        npaths, gl_s((uint64_t)npaths), gl_fmt_bytes(held, b, sizeof b), more);
    for (size_t i = 0; i < shown; i++)
        gl_finding_evidence(f, "kept alive by: %s (%zu path%s recorded, %s)", roots[i].newest->path, roots[i].n,
                            gl_s(roots[i].n), gl_fmt_bytes(roots[i].bytes, b, sizeof b));
    free(rs.v);
}
