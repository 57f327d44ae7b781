/* view_summary.c — the figures of `summary`'s line (views.h): what
 * `report` shows, counted from the same load (of it only what is live at
 * the end: GL_LOAD_LIVE_ONLY), so the two agree. */
#include <string.h>

#include "views.h"

void gl_summary_view(struct gl_summary_view *v, const struct gl_run *r)
{
    memset(v, 0, sizeof *v);
    v->run = r;
    /* the highest device peak, the device memory still live at the end,
     * failed allocations */
    for (int d = 0; d < r->ndevs; d++) {
        v->ndev += r->devs[d].peak > 0;
        if (!v->top || r->devs[d].peak > v->top->peak)
            v->top = &r->devs[d];
    }
    for (size_t i = 0; i < r->nallocs; i++)
        if (gl_kind_counts_on_device(r->allocs[i].kind) && !r->allocs[i].free_seq &&
            r->allocs[i].api != GL_API_graph_pool) { /* the graph pool's reservation is the driver's */
            v->unfreed++;
            v->unfreed_bytes += r->allocs[i].size;
        }
    for (size_t i = 0; i < r->nfails; i++) {
        v->ooms += r->fails[i].op == GL_OP_OOM && !gl_fail_absorbed(r, i); /* one OOM is one failure: its segment retries are its detail */
        v->bad_frees += gl_op_is_free(r->fails[i].op);
    }
}
