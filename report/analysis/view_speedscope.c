/* view_speedscope.c — the view of `export --format speedscope`
 * (export_views.h): the profiles (each device live at its peak, then what
 * was never freed), the shared frame table (one entry per function, ids
 * in the order the profiles first name them) and each sample's frame ids,
 * root first. */
#include <stdlib.h>
#include <string.h>

#include "export_views.h"
#include "stack_text.h"

/* The frame that stands for folded allocator internals. */
static const struct gl_frame allocator_frame = {"[allocator]", NULL, NULL, 0, 0, 0};

static int64_t frame_id(struct gl_speedscope_view *v, const struct gl_frame *fr)
{
    char key[3200];
    int added;
    int64_t id = gl_strmap_id(&v->frame_ids, gl_frame_key(fr, key, sizeof key), &added);
    if (id >= 0 && added) {
        if (gl_grow((void **)&v->frames, &v->cap, (size_t)id, sizeof *v->frames, 256))
            return -1;
        v->frames[id].f = fr;
    }
    return id;
}

/* The profiles: each device at its peak, then what was never freed. */
static int gather(struct gl_speedscope_view *v)
{
    struct gl_run *r = v->run;
    v->p = calloc((size_t)r->ndevs + 1, sizeof *v->p);
    if (!v->p)
        return -1;
    for (int d = 0; d < r->ndevs; d++) {
        struct gl_speedscope_profile *p = &v->p[v->np++];
        p->dev = &r->devs[d];
        gl_ledger_at(r, p->dev->device, p->dev->peak_seq, &p->g);
    }
    struct gl_leak_opts lo = {0, 0, 0};
    gl_leaks(r, -2, &lo, &v->p[v->np++].g);
    return 0;
}

/* Every frame gets its id before anything is written: the shared table
 * comes first in the file. */
static int frame_table(struct gl_speedscope_view *v, int fold)
{
    for (size_t k = 0; k < v->np; k++)
        for (size_t i = 0; i < v->p[k].g.n; i++) {
            const struct gl_stack *st = gl_stack_get(&v->stacks, v->p[k].g.v[i].stack_id);
            for (int f = 0; f < st->n; f++)
                if (frame_id(v, gl_stack_frame(st, f)) < 0)
                    return -1;
        }
    if (fold && frame_id(v, &allocator_frame) < 0) /* last: the ids of a run without folding stay */
        return -1;
    return 0;
}

/* The frame ids of one sample, root first. */
static int sample(struct gl_speedscope_view *v, const struct gl_stack *st, int fold)
{
    int folded = 0;
    for (int k = st->n - 1; k >= 0; k--) {
        if (fold && gl_stack_frame_class(st, k) == GL_FC_ALLOCATOR) {
            folded = 1;
            continue;
        }
        if (gl_i64s_push(&v->sample_frames, frame_id(v, gl_stack_frame(st, k))))
            return -1;
    }
    return folded ? gl_i64s_push(&v->sample_frames, frame_id(v, &allocator_frame)) : 0;
}

static int samples(struct gl_speedscope_view *v, int fold)
{
    for (size_t k = 0; k < v->np; k++) {
        struct gl_speedscope_profile *p = &v->p[k];
        p->sample_at = malloc((p->g.n + 1) * sizeof *p->sample_at);
        if (!p->sample_at)
            return -1;
        for (size_t i = 0; i < p->g.n; i++) {
            p->sample_at[i] = v->sample_frames.n;
            if (sample(v, gl_stack_get(&v->stacks, p->g.v[i].stack_id), fold))
                return -1;
        }
        p->sample_at[p->g.n] = v->sample_frames.n;
    }
    return 0;
}

int gl_speedscope_view(struct gl_speedscope_view *v, struct gl_run *r, int fold)
{
    memset(v, 0, sizeof *v);
    v->run = r;
    gl_stacks_init(&v->stacks, r);
    gl_strmap_init(&v->frame_ids);
    return gather(v) || frame_table(v, fold) || samples(v, fold) ? -1 : 0;
}

void gl_speedscope_view_free(struct gl_speedscope_view *v)
{
    for (size_t k = 0; k < v->np; k++) {
        gl_groups_free(&v->p[k].g);
        free(v->p[k].sample_at);
    }
    free(v->p);
    free(v->frames);
    free(v->sample_frames.v);
    gl_strmap_free(&v->frame_ids);
    gl_stacks_free(&v->stacks);
    memset(v, 0, sizeof *v);
}
