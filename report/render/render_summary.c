/* render_summary.c — "gpuledger: DB: N events, peak ..." for one database
 * (views.h, gl_summary_view): `summary`'s answer and the closing line of
 * `gpuledger run`, from the same load of the rows as `report` (never the
 * recorder's cached figures; only what is live at the end kept: model.h,
 * GL_LOAD_LIVE_ONLY), so the two agree. */
#include <inttypes.h>

#include "escape.h"
#include "out.h"
#include "render.h"

void gl_render_summary(FILE *f, const char *path, const struct gl_summary_view *v)
{
    const struct gl_run *r = v->run;
    const struct gl_device *top = v->top;
    char pb[32], ub[32];
    fputs("gpuledger: ", f);
    gl_text_str(f, path);
    fprintf(f, ": %" PRId64 " event%s, peak %s", r->event_count, gl_s((uint64_t)r->event_count),
            gl_fmt_bytes(top ? top->peak : 0, pb, sizeof pb));
    if (top && v->ndev > 1)
        fprintf(f, " (device %d, %d devices)", top->device, v->ndev);
    else if (top && top->device >= 0)
        fprintf(f, " on device %d", top->device);
    fprintf(f, ", %" PRIu64 " allocation%s (%s) %s", v->unfreed, gl_s(v->unfreed),
            gl_fmt_bytes(v->unfreed_bytes, ub, sizeof ub), gl_unfreed_words(r));
    if (v->ooms)
        fprintf(f, ", %" PRIu64 " out-of-memory failure%s", v->ooms, gl_s(v->ooms));
    if (v->bad_frees)
        fprintf(f, ", %" PRIu64 " failed free%s", v->bad_frees, gl_s(v->bad_frees));
    if (r->dropped)
        fprintf(f, ", %" PRId64 " EVENTS DROPPED (queue full)", r->dropped);
    if (r->unfinished)
        fputs("; " GL_UNFINISHED_TEXT, f);
    fputc('\n', f);
}
