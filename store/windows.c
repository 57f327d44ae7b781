/* windows.c — see windows.h. */
#include "windows.h"

#include <string.h>

void gl_windows_open(struct gl_windows *ws, uint64_t id, uint64_t seq)
{
    struct gl_window *w = &ws->w[ws->next];
    ws->next = (ws->next + 1) % GL_MAX_WINDOWS;
    if (!w->id)
        ws->open++;
    memset(w, 0, sizeof *w);
    w->id = id;
    w->seq = seq;
    for (int l = 0; l < GL_WIN_LAYERS; l++)
        w->start[l] = w->peak[l] = ws->live[l];
}

const struct gl_window *gl_windows_find(const struct gl_windows *ws, uint64_t id)
{
    for (unsigned i = 0; id && i < GL_MAX_WINDOWS; i++)
        if (ws->w[i].id == id)
            return &ws->w[i];
    return NULL;
}
