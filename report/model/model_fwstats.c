/* model_fwstats.c — see model_fwstats.h. */
#include "model_fwstats.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"

int gl_is_fw_stats_label(const char *label)
{
    return label && !strncmp(label, GL_FW_STATS_PREFIX, strlen(GL_FW_STATS_PREFIX));
}

/* "gpuledger.stats jax device=0 bytes_in_use=N ...": 0, or -1 when it is
 * not one (then ignored, as any other mark would be). */
static int parse(const char *label, struct gl_fw_sample *s)
{
    const char *p = label + strlen(GL_FW_STATS_PREFIX);
    int n = 0;
    if (sscanf(p, "%15s device=%d%n", s->framework, &s->device, &n) != 2 || s->device < 0 ||
        s->device >= GL_MAX_DEVICES)
        return -1;
    static const struct {
        const char *key;
        size_t at;
    } keys[] = {{"bytes_in_use", offsetof(struct gl_fw_sample, in_use)},
                {"peak_bytes_in_use", offsetof(struct gl_fw_sample, peak)},
                {"bytes_limit", offsetof(struct gl_fw_sample, limit)},
                {"largest_alloc_size", offsetof(struct gl_fw_sample, largest)},
                {"num_allocs", offsetof(struct gl_fw_sample, allocs)}};
    for (p += n; *p;) {
        while (*p == ' ')
            p++;
        const char *eq = strchr(p, '=');
        if (!eq)
            break;
        unsigned long long v = strtoull(eq + 1, NULL, 10);
        for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++)
            if ((size_t)(eq - p) == strlen(keys[k].key) && !strncmp(p, keys[k].key, (size_t)(eq - p)))
                *(uint64_t *)(void *)((char *)s + keys[k].at) = v;
        p = eq + strcspn(eq, " ");
    }
    return 0;
}

/* Drop the samples' marks from the marks that end steps. */
static void drop_marks(struct gl_run *r)
{
    size_t k = 0, j = 0;
    for (size_t i = 0; i < r->nmarks; i++) {
        while (j < r->nfw && r->fw[j].seq < r->marks[i])
            j++;
        if (!(j < r->nfw && r->fw[j].seq == r->marks[i]))
            r->marks[k++] = r->marks[i];
    }
    r->nmarks = k;
}

/* Is stack id made from the framework's code? */
static int from_framework(sqlite3_stmt *q, int64_t id)
{
    sqlite3_reset(q);
    sqlite3_bind_int64(q, 1, id);
    return sqlite3_step(q) == SQLITE_ROW;
}

static int flag_arenas(struct gl_run *r)
{
    int sampled[GL_MAX_DEVICES] = {0};
    for (size_t i = 0; i < r->nfw; i++)
        sampled[r->fw[i].device] = 1;
    sqlite3_stmt *q;
    if (sqlite3_prepare_v2(r->db,
                           "SELECT 1 FROM stack_frames WHERE stack_id = ? AND (module LIKE '%jax%' OR file LIKE "
                           "'%jax%' OR module LIKE '%xla%' OR file LIKE '%xla%') LIMIT 1",
                           -1, &q, NULL) != SQLITE_OK)
        return 0; /* no frames table: nothing to flag */
    for (size_t i = 0; i < r->nallocs; i++) {
        struct gl_alloc *a = &r->allocs[i];
        if (a->device < 0 || a->device >= GL_MAX_DEVICES || !sampled[a->device] ||
            !gl_kind_counts_on_device(a->kind) || a->kind == GL_KIND_BLOCK || a->kind == GL_KIND_STATIC || !a->stack_id)
            continue;
        if (from_framework(q, a->stack_id)) {
            a->flags |= GL_AF_ALLOCATOR;
            a->cat = GL_CAT_XLA_ARENA;
        }
    }
    sqlite3_finalize(q);
    return 0;
}

int gl_run_load_fw_stats(struct gl_run *r, char *err, size_t errsz)
{
    sqlite3_stmt *q;
    if (sqlite3_prepare_v2(r->db,
                           "SELECT seq, ts_ns, label FROM annotations WHERE op = 'mark' AND label GLOB "
                           "'" GL_FW_STATS_PREFIX "*' ORDER BY seq",
                           -1, &q, NULL) != SQLITE_OK)
        return 0; /* a database from before annotations */
    size_t cap = 0;
    int rc = 0;
    while (sqlite3_step(q) == SQLITE_ROW) {
        struct gl_fw_sample s = {.seq = sqlite3_column_int64(q, 0), .ts_ns = sqlite3_column_int64(q, 1)};
        const char *label = (const char *)sqlite3_column_text(q, 2);
        if (parse(label, &s))
            continue;
        if (r->nfw == cap) {
            size_t ncap = cap ? 2 * cap : 16;
            struct gl_fw_sample *nv = realloc(r->fw, ncap * sizeof *nv);
            if (!nv) {
                rc = -1;
                break;
            }
            r->fw = nv;
            cap = ncap;
        }
        r->fw[r->nfw++] = s;
    }
    sqlite3_finalize(q);
    if (rc) {
        snprintf(err, errsz, "%s: out of memory reading framework statistics", r->path);
        return -1;
    }
    if (!r->nfw)
        return 0;
    drop_marks(r);
    return flag_arenas(r);
}

int gl_fw_device(const struct gl_run *r, int device, struct gl_fw_device *out)
{
    memset(out, 0, sizeof *out);
    out->device = device;
    for (size_t i = 0; i < r->nfw; i++) {
        const struct gl_fw_sample *s = &r->fw[i];
        if (s->device != device)
            continue;
        out->framework = s->framework;
        out->n++;
        out->in_use_end = s->in_use;
        if (s->limit)
            out->limit = s->limit;
        if (s->peak > out->peak || !out->peak_seq) {
            out->peak = s->peak > out->peak ? s->peak : out->peak;
            out->peak_seq = s->seq;
        }
    }
    if (!out->n)
        return 0;
    for (size_t i = 0; i < r->nallocs; i++) {
        const struct gl_alloc *a = &r->allocs[i];
        if (a->device == device && a->cat == GL_CAT_XLA_ARENA && !a->free_seq) {
            out->arena += a->size;
            out->arena_allocs++;
        }
    }
    return 1;
}
