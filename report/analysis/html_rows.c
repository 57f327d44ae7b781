/* html_rows.c — the HTML report's shared tables (html_view.h): categories,
 * frames and ledger rows, each given its id at its first use. A row is the
 * report's merge (gl_groups_merge_chains): one chain of frame names in one
 * category. */
#include <stdlib.h>
#include <string.h>

#include "html_build.h"
#include "ledger_layers.h"

int gl_html_category(struct gl_html_view *v, const char *name)
{
    struct gl_html_tables *t = &v->t;
    for (int i = 0; i < t->ncats; i++)
        if (!strcmp(t->cats[i], name))
            return i;
    if (t->ncats == (int)(sizeof t->cats / sizeof t->cats[0]))
        return t->ncats - 1;
    t->cats[t->ncats] = name;
    return t->ncats++;
}

int64_t gl_html_frame(struct gl_html_view *v, const struct gl_frame *fr)
{
    struct gl_html_tables *t = &v->t;
    char key[3200];
    gl_frame_key(fr, key, sizeof key);
    int added;
    int64_t id = gl_strmap_id(&t->frame_ids, key, &added);
    if (id >= 0 && added) {
        struct gl_frame_ref *nf = realloc(t->frames, t->frame_ids.cap * sizeof *nf);
        if (!nf)
            return -1;
        t->frames = nf;
        t->frames[id].f = fr;
    }
    return id;
}

static struct gl_html_row *new_row(struct gl_html_tables *t)
{
    if (gl_grow((void **)&t->rows, &t->rows_cap, t->nrows, sizeof *t->rows, 256))
        return NULL;
    return &t->rows[t->nrows++];
}

int64_t gl_html_row(struct gl_html_view *v, int64_t stack_id, const char *category, const char *what)
{
    struct gl_html_tables *t = &v->t;
    const struct gl_stack *st = gl_stack_get(&v->stacks, what ? 0 : stack_id);
    char chain[4096], sig[4200]; /* the chain as gl_groups_merge_chains sees it */
    int cat = gl_html_category(v, category ? category : "other");
    gl_stack_signature(st, chain, sizeof chain);
    snprintf(sig, sizeof sig, "%d\x1f%s\x1f%s", cat, what ? what : "", chain);
    int added;
    int64_t id = gl_strmap_id(&t->row_ids, sig, &added);
    if (id < 0 || !added)
        return id;
    struct gl_html_row *rw = new_row(t);
    if (!rw)
        return -1;
    *rw = (struct gl_html_row){cat, what ? 0 : stack_id, t->row_frames.n, (size_t)st->n, what};
    for (int i = 0; i < st->n; i++) {
        int64_t f = gl_html_frame(v, gl_stack_frame(st, i));
        if (f < 0 || gl_i64s_push(&t->row_frames, f))
            return -1;
    }
    return id;
}

/* On a device with PyTorch's caching allocator the ledger has two rows no
 * stack made (analysis.c: layer_rows): its free blocks and the blocks
 * waiting for their streams; and the blocks' completions, in order. */
static int allocator_rows(struct gl_html_view *v)
{
    struct gl_run *r = v->run;
    v->cached_row = v->pending_row = -1;
    if (!r->has_blocks)
        return 0;
    v->cached_row = gl_html_row(v, 0, "allocator_cache", GL_ROW_CACHED);
    v->pending_row = gl_html_row(v, 0, "allocator_cache", GL_ROW_PENDING);
    return v->cached_row < 0 || v->pending_row < 0 || gl_layers_done_list(r, &v->done, &v->ndone) ? -1 : 0;
}

/* Row of every item of the ledger, cached by call site (stack, api, kind,
 * and a category by identity or lifetime: what a category can depend on). */
int gl_html_rows_of_allocs(struct gl_html_view *v)
{
    struct gl_run *r = v->run;
    v->alloc_row = calloc(r->nallocs + 1, sizeof *v->alloc_row);
    if (!v->alloc_row || allocator_rows(v))
        return -1;
    for (size_t i = 0; i < r->nallocs; i++) {
        const struct gl_alloc *a = &r->allocs[i];
        if (!gl_is_item(a))
            continue;
        uint64_t key = (uint64_t)a->stack_id << 32 | (uint64_t)a->api << 16 | (uint64_t)a->kind << 8 | a->cat, row;
        if (!gl_u64map_get(&v->by_site, key, &row)) {
            int64_t id = gl_html_row(v, a->stack_id, gl_categorize(v->o->rules, &v->stacks, a), NULL);
            if (id < 0 || gl_u64map_put(&v->by_site, key, (uint64_t)id))
                return -1;
            row = (uint64_t)id;
        }
        v->alloc_row[i] = (uint32_t)row;
    }
    return 0;
}

void gl_html_tables_free(struct gl_html_tables *t)
{
    gl_strmap_free(&t->frame_ids);
    gl_strmap_free(&t->row_ids);
    free(t->frames);
    free(t->rows);
    free(t->row_frames.v);
}
