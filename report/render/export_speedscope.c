/* export_speedscope.c — `export --format speedscope`: speedscope's file
 * format (www.speedscope.app, or its offline copy), one file holding
 *
 *   one sampled profile per device: what was live at its peak, each stack a
 *   sample weighted by its bytes ("unit": "bytes");
 *   one sampled profile of what was never freed (every device).
 *
 * Stacks go root first, as the format wants; frames are shared (one per
 * function): {name, file, line}, a Python frame with its file and line, a
 * native one with its module. Speedscope's left-heavy and sandwich views
 * then answer "which function holds the most" at the peak and at exit. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "json.h"
#include "stack_text.h"
#include "out.h"
#include "render.h"
#include "strmap.h"

struct frame_ref {
    const struct gl_frame *f; /* lives in the stack cache until the end */
};

struct profile {
    char name[256];
    struct gl_groups g;
};

struct sp {
    struct gl_stacks stacks;
    struct gl_strmap frame_ids;
    struct frame_ref *frames; /* by id, for the shared table */
    size_t cap;
    struct profile *p;
    size_t np;
};

/* The frame that stands for folded allocator internals. */
static const struct gl_frame allocator_frame = {"[allocator]", NULL, NULL, 0, 0, 0};

static int64_t frame_id(struct sp *s, const struct gl_frame *fr)
{
    char key[3200];
    int added;
    int64_t id = gl_strmap_id(&s->frame_ids, gl_frame_key(fr, key, sizeof key), &added);
    if (id >= 0 && added) {
        if ((size_t)id >= s->cap) {
            size_t nc = s->cap ? s->cap * 2 : 256;
            struct frame_ref *nf = realloc(s->frames, nc * sizeof *nf);
            if (!nf)
                return -1;
            s->frames = nf;
            s->cap = nc;
        }
        s->frames[id].f = fr;
    }
    return id;
}

/* The profiles: each device at its peak, then what was never freed. */
static int gather(struct sp *s, struct gl_run *r, int fold)
{
    char x[32];
    s->p = calloc((size_t)r->ndevs + 1, sizeof *s->p);
    if (!s->p)
        return -1;
    for (int d = 0; d < r->ndevs; d++) {
        const struct gl_device *dev = &r->devs[d];
        struct profile *p = &s->p[s->np++];
        gl_ledger_at(r, dev->device, dev->peak_seq, &p->g);
        snprintf(p->name, sizeof p->name, "device %d: live at the peak (%s, event #%" PRId64 ")", dev->device,
                 gl_fmt_bytes(dev->peak, x, sizeof x), dev->peak_seq);
    }
    struct profile *p = &s->p[s->np++];
    struct gl_leak_opts lo = {0, 0, 0};
    gl_leaks(r, -2, &lo, &p->g);
    snprintf(p->name, sizeof p->name, "%s (%s in %" PRIu64 " allocation%s)", gl_unfreed_words(r),
             gl_fmt_bytes(p->g.total_bytes, x, sizeof x), p->g.total_count, gl_s(p->g.total_count));
    /* every frame gets its id before anything is written: the shared table
     * comes first in the file */
    for (size_t k = 0; k < s->np; k++)
        for (size_t i = 0; i < s->p[k].g.n; i++) {
            const struct gl_stack *st = gl_stack_get(&s->stacks, s->p[k].g.v[i].stack_id);
            for (int f = 0; f < st->n; f++)
                if (frame_id(s, &st->f[f]) < 0)
                    return -1;
        }
    if (fold && frame_id(s, &allocator_frame) < 0) /* last: the ids of a run without folding stay */
        return -1;
    return 0;
}

static void write_frames(struct gl_json *j, struct sp *s)
{
    gl_jw_obj(j, "shared");
    gl_jw_arr(j, "frames");
    for (size_t i = 0; i < s->frame_ids.n; i++) {
        const struct gl_frame *fr = s->frames[i].f;
        char name[1024];
        const char *mod = fr->module ? strrchr(fr->module, '/') : NULL;
        if (fr->symbol)
            snprintf(name, sizeof name, "%s", fr->symbol);
        else
            snprintf(name, sizeof name, "%s+0x%llx", mod ? mod + 1 : fr->module ? fr->module : "?",
                     (unsigned long long)fr->offset);
        gl_jw_obj(j, NULL);
        gl_jw_str(j, "name", name);
        if (fr->file || fr->module)
            gl_jw_str(j, "file", fr->file ? fr->file : fr->module);
        if (fr->line > 0)
            gl_jw_i64(j, "line", fr->line);
        gl_jw_end(j);
    }
    gl_jw_end(j);
    gl_jw_end(j);
}

static void write_profile(struct gl_json *j, struct sp *s, const struct profile *p, int fold)
{
    char key[3200];
    int added;
    gl_jw_obj(j, NULL);
    gl_jw_str(j, "type", "sampled");
    gl_jw_str(j, "name", p->name);
    gl_jw_str(j, "unit", "bytes");
    gl_jw_i64(j, "startValue", 0);
    gl_jw_u64(j, "endValue", p->g.total_bytes);
    gl_jw_arr(j, "samples");
    for (size_t i = 0; i < p->g.n; i++) {
        const struct gl_stack *st = gl_stack_get(&s->stacks, p->g.v[i].stack_id);
        gl_jw_arr(j, NULL);
        int folded = 0;
        for (int k = st->n - 1; k >= 0; k--) { /* root first */
            if (fold && gl_stack_frame_class(st, k) == GL_FC_ALLOCATOR) {
                folded = 1;
                continue;
            }
            gl_jw_i64(j, NULL, gl_strmap_id(&s->frame_ids, gl_frame_key(&st->f[k], key, sizeof key), &added));
        }
        if (folded)
            gl_jw_i64(j, NULL, gl_strmap_id(&s->frame_ids, gl_frame_key(&allocator_frame, key, sizeof key), &added));
        gl_jw_end(j);
    }
    gl_jw_end(j);
    gl_jw_arr(j, "weights");
    for (size_t i = 0; i < p->g.n; i++)
        gl_jw_u64(j, NULL, p->g.v[i].bytes);
    gl_jw_end(j);
    gl_jw_end(j);
}

int gl_export_speedscope(FILE *f, struct gl_run *r, int fold)
{
    struct sp s;
    memset(&s, 0, sizeof s);
    gl_stacks_init(&s.stacks, r);
    gl_strmap_init(&s.frame_ids);
    int rc = gather(&s, r, fold);
    if (!rc) {
        char name[256];
        struct gl_json j;
        gl_jw_init(&j, f);
        gl_jw_obj(&j, NULL);
        gl_jw_str(&j, "$schema", "https://www.speedscope.app/file-format-schema.json");
        write_frames(&j, &s);
        gl_jw_arr(&j, "profiles");
        for (size_t k = 0; k < s.np; k++)
            write_profile(&j, &s, &s.p[k], fold);
        gl_jw_end(&j);
        snprintf(name, sizeof name, "gpuledger: %.200s", r->cmdline);
        gl_jw_str(&j, "name", name);
        gl_jw_i64(&j, "activeProfileIndex", 0);
        gl_jw_str(&j, "exporter", "gpuledger " GL_VERSION);
        gl_jw_end(&j);
        fputc('\n', f);
    }
    for (size_t k = 0; k < s.np; k++)
        gl_groups_free(&s.p[k].g);
    free(s.p);
    free(s.frames);
    gl_strmap_free(&s.frame_ids);
    gl_stacks_free(&s.stacks);
    return rc;
}
