/* stack_text.c — see stack_text.h. */
#include "stack_text.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct gl_fc_frame fc_frame(const struct gl_frame *f)
{
    return (struct gl_fc_frame){f->symbol, f->module, f->file, f->line, f->python, f->offset};
}

/* The stack's frames as frameclass.h takes them (malloc'ed; NULL: none or
 * out of memory). */
static struct gl_fc_frame *fc_frames(const struct gl_stack *st)
{
    if (!st || st->n <= 0)
        return NULL;
    struct gl_fc_frame *v = malloc((size_t)st->n * sizeof *v);
    for (int i = 0; v && i < st->n; i++)
        v[i] = fc_frame(gl_stack_frame(st, i));
    return v;
}

int gl_stack_frame_class(const struct gl_stack *st, int i)
{
    struct gl_fc_frame f = fc_frame(gl_stack_frame(st, i));
    return gl_fc_classify(&f);
}

char *gl_stack_frame_text(const struct gl_stack *st, int i, char *buf, size_t sz)
{
    struct gl_fc_frame f = fc_frame(gl_stack_frame(st, i));
    return gl_fc_frame_text(&f, buf, sz);
}

/* Index of the innermost user frame, else the op (is_user, where given:
 * which); -1 for an empty stack. */
static int place_index(const struct gl_stack *st, int *is_user)
{
    struct gl_fc_frame *v = fc_frames(st);
    if (!v)
        return -1;
    struct gl_fc_chain c;
    gl_fc_chain(v, st->n, &c);
    free(v);
    if (is_user)
        *is_user = c.user >= 0;
    return c.user >= 0 ? c.user : c.op >= 0 ? c.op : 0;
}

int gl_stack_user_index(const struct gl_stack *st)
{
    return place_index(st, NULL);
}

char *gl_stack_user_frame(const struct gl_stack *st, char *buf, size_t sz)
{
    int i = gl_stack_user_index(st);
    if (i < 0) {
        snprintf(buf, sz, "(no stack)");
        return buf;
    }
    return gl_stack_frame_text(st, i, buf, sz);
}

char *gl_stack_place(const struct gl_stack *st, char *buf, size_t sz)
{
    int user = 0, i = place_index(st, &user);
    if (i < 0) {
        snprintf(buf, sz, "with no stack recorded");
        return buf;
    }
    char text[1024];
    snprintf(buf, sz, "%s %s", user ? "at" : "in", gl_stack_frame_text(st, i, text, sizeof text));
    return buf;
}

char *gl_stack_chain(const struct gl_stack *st, int must, char *buf, size_t sz)
{
    struct gl_fc_frame *v = fc_frames(st);
    if (!v) {
        snprintf(buf, sz, "(no stack recorded)");
        return buf;
    }
    struct gl_fc_chain c;
    gl_fc_chain(v, st->n, &c);
    /* the op's caller too when the op is the user's own frame (a C
     * program's function says little without who called it) */
    int caller = c.op >= 0 && c.op == c.user && c.op + 1 < c.outer ? c.op + 1 : -1;
    int show[5] = {c.op >= 0 ? c.op : 0, c.user, caller, must < st->n ? must : -1, c.outer};
    /* in stack order (innermost first), each once */
    for (int a = 0; a < 5; a++)
        for (int b = a + 1; b < 5; b++)
            if (show[b] >= 0 && (show[a] < 0 || show[b] < show[a])) {
                int t = show[a];
                show[a] = show[b];
                show[b] = t;
            }
    size_t n = 0;
    buf[0] = 0;
    int last = -1;
    for (int k = 0; k < 5 && n < sz; k++) {
        int i = show[k];
        if (i < 0 || i <= last)
            continue;
        char text[1024];
        gl_fc_frame_text(&v[i], text, sizeof text);
        n += (size_t)snprintf(buf + n, sz - n, "%s%s", last < 0 ? "" : i > last + 1 ? " <- ... <- " : " <- ", text);
        last = i;
    }
    free(v);
    return buf;
}
