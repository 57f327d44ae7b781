/* render_leaks.c — the leaks view as text (chains, then the stacks growing
 * step after step) and as JSON. */
#include <inttypes.h>

#include "dossier.h"
#include "escape.h"
#include "out.h"
#include "render.h"
#include "render_heaps.h"
#include "model_retention.h"
#include "retention.h"

/* "kept alive by" lines: the recorded paths from the program's roots to
 * the chain's blocks (the retention finder in the job). */
static void kept_text(FILE *f, struct gl_leaks_view *v, const struct gl_group *g)
{
    const struct gl_kept *kp = gl_leaks_view_kept(v, g);
    if (!kp)
        return;
    const struct gl_kept k = *kp;
    fprintf(f, "           kept alive by (%s", gl_retention_moment_text(k.moment));
    if (k.paths[0]->step >= 0)
        fprintf(f, ", after %" PRId64 " optimizer step%s", k.paths[0]->step, gl_s((uint64_t)k.paths[0]->step));
    fprintf(f, "; %zu path%s%s):\n", k.total, gl_s(k.total), k.paths[0]->complete ? "" : ", search cut by its bounds");
    for (size_t i = 0; i < k.n; i++) {
        fputs("             ", f);
        gl_text_str(f, k.paths[i]->path);
        fputc('\n', f);
    }
    if (k.total > k.n)
        fprintf(f, "             and %zu more\n", k.total - k.n);
}

static void kept_json(struct gl_json *j, struct gl_leaks_view *v, const struct gl_group *g)
{
    const struct gl_kept *kp = gl_leaks_view_kept(v, g);
    if (!kp)
        return;
    const struct gl_kept k = *kp;
    gl_jw_obj(j, "kept_alive");
    gl_jw_str(j, "moment", gl_retention_moment_name(k.moment));
    gl_jw_u64(j, "total", k.total);
    gl_jw_arr(j, "paths");
    for (size_t i = 0; i < k.n; i++)
        gl_retention_path_json(j, k.paths[i]);
    gl_jw_end(j);
    gl_jw_end(j);
}

/* a growing chain's "live per step" line: every step up to STEPS_ALL,
 * past them the first and the last STEPS_SHOWN / 2 */
#define STEPS_ALL 24
#define STEPS_SHOWN 16

static void chain_block(FILE *f, struct gl_leaks_view *v, const struct gl_group *g, int nsteps)
{
    char b[32], t1[32], t2[32];
    fprintf(f, "%10s in %" PRIu64 " allocation%s  [", gl_fmt_bytes(g->bytes, b, sizeof b), g->count, gl_s(g->count));
    gl_text_str(f, g->category);
    fprintf(f, "]  first %s, last %s\n", gl_fmt_rel(v->run, g->first_ns, t1, sizeof t1),
            gl_fmt_rel(v->run, g->last_ns, t2, sizeof t2));
    if (nsteps && g->steps) {
        /* a line for a person (JSON has every step) */
        int cut = nsteps > STEPS_ALL;
        if (cut)
            fprintf(f, "           live per step (steps 1-%d and %d-%d of %d):", STEPS_SHOWN / 2,
                    nsteps - STEPS_SHOWN / 2 + 1, nsteps, nsteps);
        else
            fputs("           live per step:", f);
        for (int k = 0; k < nsteps; k++) {
            if (cut && k == STEPS_SHOWN / 2) {
                fputs(" ...", f);
                k = nsteps - STEPS_SHOWN / 2;
            }
            fprintf(f, " %s", gl_fmt_bytes(g->steps[k], b, sizeof b));
        }
        fputc('\n', f);
    }
    gl_print_frame_list(f, gl_stack_get(&v->stacks, g->stack_id), "           ");
    kept_text(f, v, g);
}

static void growing_text(FILE *f, struct gl_leaks_view *v, int top);

void gl_render_leaks_text(FILE *f, struct gl_leaks_view *v, int top)
{
    const struct gl_run *r = v->run;
    char b[32], t[32];
    fputs("== ", f);
    gl_text_str(f, r->path);
    fprintf(f, " (pid %" PRId64 ")\n", r->pid);
    if (r->dropped)
        fprintf(f, "WARNING: %" PRId64 " event%s dropped: a free may be missing, so some chains may be false\n",
                r->dropped, r->dropped == 1 ? " was" : "s were");
    if (r->unfinished)
        fputs("WARNING: " GL_UNFINISHED_TEXT ": these chains were live when it stopped, not known to be "
              "leaks\n",
              f);
    fprintf(f, "%s %s in %zu %s%s", gl_fmt_bytes(v->leak_bytes, b, sizeof b), gl_unfreed_words(r), v->nleak,
            r->unfinished ? "chain" : "leak chain", gl_s(v->nleak));
    if (v->cached_bytes)
        fprintf(f, "; %s held by a caching allocator at exit (its segments, not a leak: see README)",
                gl_fmt_bytes(v->cached_bytes, t, sizeof t));
    if (v->held_bytes)
        fprintf(f, "; %s of tensors tagged as parameters, gradients, optimizer state, KV cache or buffers (the "
                   "program's, not a leak)",
                gl_fmt_bytes(v->held_bytes, t, sizeof t));
    if ((int64_t)(v->q->lifetime_ms * 1e6))
        fprintf(f, "; including allocations that lived >= %.0f ms", v->q->lifetime_ms);
    if (v->leaks.small_count) {
        char m[32];
        fprintf(f, "; left out by --min-bytes %s: %s in %" PRIu64 " allocation%s",
                gl_fmt_bytes(v->q->min_bytes, m, sizeof m), gl_fmt_bytes(v->leaks.small_bytes, t, sizeof t),
                v->leaks.small_count, gl_s(v->leaks.small_count));
    }
    fprintf(f, "\n");
    int shown = 0;
    for (size_t k = 0; k < v->leaks.n && shown < top; k++) {
        if (gl_group_is_held(&v->leaks.v[k]))
            continue;
        fprintf(f, "\n#%-3d", ++shown);
        chain_block(f, v, &v->leaks.v[k], 0);
    }
    if (v->q->steps)
        growing_text(f, v, top);
    gl_heap_leaks_text(f, &v->heaps, top);
}

static void growing_text(FILE *f, struct gl_leaks_view *v, int top)
{
    const struct gl_run *r = v->run;
    if (v->nsteps < 1) { /* gl_growth: fewer allocations than slices */
        fprintf(f, "\ngrowing step after step: too few allocations to cut the run into %d slices\n", v->q->steps);
        return;
    }
    if (r->nsteps >= 2)
        fprintf(f, "\ngrowing step after step (%d steps ended by %s):", v->nsteps,
                r->steps_from == GL_STEPS_OPTIMIZER ? "the optimizer's step()" : "the program's marks");
    else
        fprintf(f, "\ngrowing step after step (%d slices of %zu allocation%s):", v->nsteps,
                r->allocs_made / (size_t)v->nsteps, gl_s(r->allocs_made / (size_t)v->nsteps));
    if (!v->growing.n)
        fprintf(f, " none\n");
    else
        fprintf(f, " %zu stack%s\n", v->growing.n, gl_s(v->growing.n));
    for (size_t k = 0; k < v->growing.n && (int)k < top; k++) {
        fprintf(f, "\n+%-3zu", k + 1);
        chain_block(f, v, &v->growing.v[k], v->nsteps);
    }
}

void gl_render_leaks_json(struct gl_json *j, struct gl_leaks_view *v)
{
    struct gl_stacks *s = &v->stacks;
    gl_jw_obj(j, NULL);
    gl_jw_str(j, "path", v->run->path);
    gl_jw_i64(j, "pid", v->run->pid);
    gl_jw_bool(j, "finished", !v->run->unfinished);
    gl_jw_u64(j, "leak_bytes", v->leak_bytes);
    gl_jw_u64(j, "cached_bytes", v->cached_bytes);
    gl_jw_arr(j, "leaks");
    for (size_t k = 0; k < v->leaks.n; k++) {
        const struct gl_group *g = &v->leaks.v[k];
        gl_jw_obj(j, NULL);
        gl_jw_u64(j, "bytes", g->bytes);
        gl_jw_u64(j, "count", g->count);
        gl_jw_bool(j, "cached", gl_is_cached_category(g->category));
        if (v->leaks.layered) { /* PyTorch's allocator: held by identity; a row of its cache */
            gl_jw_bool(j, "tagged", gl_group_is_tagged(g));
            gl_jw_str(j, "row", g->what);
        }
        gl_jw_category(j, g->category);
        gl_jw_i64(j, "first_ns", g->first_ns);
        gl_jw_i64(j, "last_ns", g->last_ns);
        gl_jw_frames(j, "frames", gl_stack_get(s, g->stack_id), 64);
        kept_json(j, v, g);
        gl_jw_end(j);
    }
    gl_jw_end(j);
    if (v->leaks.layered)
        gl_jw_u64(j, "held_bytes", v->held_bytes);
    if (v->q->steps) { /* what ended the steps: the optimizer, the program's marks, or slices */
        static const char *const from[] = {"slices", "marks", "optimizer"};
        gl_jw_str(j, "steps_from", from[v->run->steps_from]);
        gl_jw_i64(j, "steps", v->nsteps);
    }
    gl_jw_arr(j, "growing");
    for (size_t k = 0; k < v->growing.n; k++) {
        const struct gl_group *g = &v->growing.v[k];
        gl_jw_obj(j, NULL);
        gl_jw_u64(j, "growth_bytes", g->bytes);
        gl_jw_arr(j, "steps");
        for (int q = 0; q < v->nsteps; q++)
            gl_jw_u64(j, NULL, g->steps[q]);
        gl_jw_end(j);
        gl_jw_category(j, g->category);
        gl_jw_frames(j, "frames", gl_stack_get(s, g->stack_id), 64);
        kept_json(j, v, g);
        gl_jw_end(j);
    }
    gl_jw_end(j);
    gl_heap_leaks_json(j, "heap_leaks", &v->heaps, 1 << 30);
    gl_jw_end(j);
}
