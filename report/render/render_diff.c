/* render_diff.c — the diff view as text: peak and never-freed totals, then
 * per stack the change at the peak and in what was never freed. */
#include <stdlib.h>

#include "escape.h"
#include "moment.h"
#include "out.h"
#include "render.h"

static void signed_bytes(int64_t v, char *buf, size_t sz)
{
    char b[32];
    snprintf(buf, sz, "%s%s", v < 0 ? "-" : "+", gl_fmt_bytes((uint64_t)(v < 0 ? -v : v), b, sizeof b));
}

/* One section: rows whose two values differ, at most top. */
static void section(FILE *f, struct gl_diff_view *v, int top, int leak)
{
    char x[32], y[32], d[40];
    fprintf(f, leak ? "\nnever freed, by stack (B - A):\n"
                    : v->at[0] ? "\nat those moments, by stack (B - A):\n"
                               : "\nat the peak, by stack (B - A):\n");
    /* the rows shown: those whose two values differ, at most top */
    size_t *row = calloc((size_t)top + 1, sizeof *row), shown = 0;
    const struct gl_stack **st = calloc((size_t)top + 1, sizeof(void *));
    int *at = calloc((size_t)top + 1, sizeof *at);
    for (size_t i = 0; row && st && at && i < v->n && shown < (size_t)top; i++) {
        const struct gl_diff_row *r = &v->rows[i];
        if ((leak ? r->la : r->a) == (leak ? r->lb : r->b))
            continue;
        int side = r->stack_b ? 1 : 0;
        st[shown] = gl_stack_get(&v->stacks[side], side ? r->stack_b : r->stack_a);
        row[shown++] = i;
    }
    if (at)
        gl_stacks_distinct(st, shown, at);
    for (size_t k = 0; k < shown; k++) {
        const struct gl_diff_row *r = &v->rows[row[k]];
        int64_t a = leak ? r->la : r->a, b = leak ? r->lb : r->b;
        signed_bytes(b - a, d, sizeof d);
        fprintf(f, "  %12s  ", d);
        if (!leak)
            fprintf(f, "%s -> %s  ", gl_fmt_bytes((uint64_t)a, x, sizeof x), gl_fmt_bytes((uint64_t)b, y, sizeof y));
        gl_print_chain(f, st[k], 4, at[k]);
        fputc('\n', f);
    }
    if (!shown)
        fprintf(f, "  no change\n");
    free(row);
    free(st);
    free(at);
}

/* "A: event #24 (+0.023s), mark 'step 3' in a.db" */
static void moment_line(FILE *f, const char *side, const struct gl_moment *m, const struct gl_run *r)
{
    char t[32];
    fprintf(f, "%s: event #%lld (%s)%s", side, (long long)m->seq, gl_fmt_rel(r, m->ts_ns, t, sizeof t),
            m->desc[0] ? ", " : "");
    gl_text_str(f, m->desc);
    fputs(" in ", f);
    gl_text_str(f, r->path);
    fputc('\n', f);
}

void gl_render_diff_text(FILE *f, struct gl_diff_view *v, int top)
{
    char x[32], y[32], d[40];
    signed_bytes((int64_t)v->peak[1] - (int64_t)v->peak[0], d, sizeof d);
    if (v->at[0]) {
        moment_line(f, "A", v->at[0], v->run[0]);
        moment_line(f, "B", v->at[1], v->run[1]);
        fprintf(f, "live:        %s -> %s (%s)\n", gl_fmt_bytes(v->peak[0], x, sizeof x),
                gl_fmt_bytes(v->peak[1], y, sizeof y), d);
        section(f, v, top, 0);
        if (v->run[0] == v->run[1])
            return; /* one run: what it never freed is the same on both sides */
    } else {
        fprintf(f, "peak:        %s -> %s (%s)\n", gl_fmt_bytes(v->peak[0], x, sizeof x),
                gl_fmt_bytes(v->peak[1], y, sizeof y), d);
    }
    signed_bytes(v->leak[1] - v->leak[0], d, sizeof d);
    fprintf(f, "never freed: %s -> %s (%s)\n", gl_fmt_bytes((uint64_t)v->leak[0], x, sizeof x),
            gl_fmt_bytes((uint64_t)v->leak[1], y, sizeof y), d);
    if (!v->at[0])
        section(f, v, top, 0);
    section(f, v, top, 1);
}
