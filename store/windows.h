/* windows.h — measurements from a checkpoint on (gpuledger_checkpoint,
 * gpuledger_usage): per layer (device memory, allocator blocks) the live
 * bytes now, and for each open window what was live at its start, the
 * most live since, and what was allocated and freed since. Kept on the
 * writer thread as the ledger and the allocator model change; nothing is
 * done per event while no window is open but one addition. */
#ifndef GL_WINDOWS_H
#define GL_WINDOWS_H

#include <stdint.h>

enum { GL_WIN_DEVICE = 0, GL_WIN_BLOCKS = 1, GL_WIN_LAYERS = 2 };
#define GL_MAX_WINDOWS 16 /* open at once; opening one more closes the oldest */

struct gl_window {
    uint64_t id;  /* the checkpoint's number (0: slot unused) */
    uint64_t seq; /* the first event_log row after the checkpoint */
    uint64_t start[GL_WIN_LAYERS], peak[GL_WIN_LAYERS], allocated[GL_WIN_LAYERS], allocs[GL_WIN_LAYERS],
        frees[GL_WIN_LAYERS];
    uint64_t peak_seq[GL_WIN_LAYERS]; /* the row that reached the peak (0: it never rose) */
};

struct gl_windows {
    uint64_t live[GL_WIN_LAYERS];
    uint64_t seen[GL_WIN_LAYERS]; /* allocations ever seen in the layer */
    struct gl_window w[GL_MAX_WINDOWS];
    unsigned open, next; /* windows open; the slot the next one takes */
};

/* Open window id; its allocations are the rows from seq on. */
void gl_windows_open(struct gl_windows *ws, uint64_t id, uint64_t seq);
const struct gl_window *gl_windows_find(const struct gl_windows *ws, uint64_t id);
/* bytes became live in layer (alloc, as row seq) or stopped being live. */
static inline void gl_windows_change(struct gl_windows *ws, int layer, uint64_t bytes, int alloc, uint64_t seq)
{
    if (alloc) {
        ws->live[layer] += bytes;
        ws->seen[layer]++;
    } else {
        ws->live[layer] -= bytes < ws->live[layer] ? bytes : ws->live[layer];
    }
    if (!ws->open)
        return;
    for (unsigned i = 0; i < GL_MAX_WINDOWS; i++) {
        struct gl_window *w = &ws->w[i];
        if (!w->id)
            continue;
        if (alloc) {
            w->allocated[layer] += bytes;
            w->allocs[layer]++;
            if (ws->live[layer] > w->peak[layer]) {
                w->peak[layer] = ws->live[layer];
                w->peak_seq[layer] = seq;
            }
        } else {
            w->frees[layer]++;
        }
    }
}

#endif
