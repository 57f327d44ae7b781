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
 * then answer "which function holds the most" at the peak and at exit.
 * What it shows is computed before (view_speedscope.c); this file writes it. */
#include <inttypes.h>
#include <string.h>

#include "json.h"
#include "out.h"
#include "render.h"

static void write_frames(struct gl_json *j, const struct gl_speedscope_view *v)
{
    gl_jw_obj(j, "shared");
    gl_jw_arr(j, "frames");
    for (size_t i = 0; i < v->frame_ids.n; i++) {
        const struct gl_frame *fr = v->frames[i].f;
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

static void profile_name(const struct gl_run *r, const struct gl_speedscope_profile *p, char *name, size_t sz)
{
    char x[32];
    if (p->dev)
        snprintf(name, sz, "device %d: live at the peak (%s, event #%" PRId64 ")", p->dev->device,
                 gl_fmt_bytes(p->dev->peak, x, sizeof x), p->dev->peak_seq);
    else
        snprintf(name, sz, "%s (%s in %" PRIu64 " allocation%s)", gl_unfreed_words(r),
                 gl_fmt_bytes(p->g.total_bytes, x, sizeof x), p->g.total_count, gl_s(p->g.total_count));
}

static void write_profile(struct gl_json *j, const struct gl_speedscope_view *v, const struct gl_speedscope_profile *p)
{
    char name[256];
    profile_name(v->run, p, name, sizeof name);
    gl_jw_obj(j, NULL);
    gl_jw_str(j, "type", "sampled");
    gl_jw_str(j, "name", name);
    gl_jw_str(j, "unit", "bytes");
    gl_jw_i64(j, "startValue", 0);
    gl_jw_u64(j, "endValue", p->g.total_bytes);
    gl_jw_arr(j, "samples");
    for (size_t i = 0; i < p->g.n; i++) {
        gl_jw_arr(j, NULL);
        for (size_t k = p->sample_at[i]; k < p->sample_at[i + 1]; k++)
            gl_jw_i64(j, NULL, v->sample_frames.v[k]);
        gl_jw_end(j);
    }
    gl_jw_end(j);
    gl_jw_arr(j, "weights");
    for (size_t i = 0; i < p->g.n; i++)
        gl_jw_u64(j, NULL, p->g.v[i].bytes);
    gl_jw_end(j);
    gl_jw_end(j);
}

void gl_export_speedscope(FILE *f, const struct gl_speedscope_view *v)
{
    char name[256];
    struct gl_json j;
    gl_jw_init(&j, f);
    gl_jw_obj(&j, NULL);
    gl_jw_str(&j, "$schema", "https://www.speedscope.app/file-format-schema.json");
    write_frames(&j, v);
    gl_jw_arr(&j, "profiles");
    for (size_t k = 0; k < v->np; k++)
        write_profile(&j, v, &v->p[k]);
    gl_jw_end(&j);
    snprintf(name, sizeof name, "gpuledger: %.200s", v->run->cmdline);
    gl_jw_str(&j, "name", name);
    gl_jw_i64(&j, "activeProfileIndex", 0);
    gl_jw_str(&j, "exporter", "gpuledger " GL_VERSION);
    gl_jw_end(&j);
    fputc('\n', f);
}
