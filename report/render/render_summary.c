/* render_summary.c — "gpuledger: DB: N events, peak ..." for one database:
 * `summary`'s answer and the closing line of `gpuledger run`, from the
 * same loaded model as `report` (never the recorder's cached figures), so
 * the two agree. */
#include <inttypes.h>

#include "cli.h"
#include "escape.h"
#include "out.h"
#include "render.h"

int gl_print_db_summary(FILE *f, const char *path)
{
    struct gl_run *r = gl_cli_load(path);
    if (!r)
        return 2;
    /* the figures `report` shows: the highest device peak, the device
     * memory still live at the end, failed allocations */
    const struct gl_device *top = NULL;
    int ndev = 0;
    for (int d = 0; d < r->ndevs; d++) {
        ndev += r->devs[d].peak > 0;
        if (!top || r->devs[d].peak > top->peak)
            top = &r->devs[d];
    }
    uint64_t unfreed = 0, unfreed_bytes = 0, ooms = 0;
    for (size_t i = 0; i < r->nallocs; i++)
        if (gl_kind_counts_on_device(r->allocs[i].kind) && !r->allocs[i].free_seq &&
            r->allocs[i].api != GL_API_graph_pool) { /* the graph pool's reservation is the driver's */
            unfreed++;
            unfreed_bytes += r->allocs[i].size;
        }
    for (size_t i = 0; i < r->nfails; i++) /* one OOM is one failure: its segment retries are its detail */
        ooms += r->fails[i].op == GL_OP_OOM && !gl_fail_absorbed(r, i);
    char pb[32], ub[32];
    fputs("gpuledger: ", f);
    gl_text_str(f, path);
    fprintf(f, ": %" PRId64 " event%s, peak %s", r->event_count, gl_s((uint64_t)r->event_count),
            gl_fmt_bytes(top ? top->peak : 0, pb, sizeof pb));
    if (ndev > 1)
        fprintf(f, " (device %d, %d devices)", top->device, ndev);
    else if (top && top->device >= 0)
        fprintf(f, " on device %d", top->device);
    fprintf(f, ", %" PRIu64 " allocation%s (%s) never freed", unfreed, gl_s(unfreed),
            gl_fmt_bytes(unfreed_bytes, ub, sizeof ub));
    if (ooms)
        fprintf(f, ", %" PRIu64 " out-of-memory failure%s", ooms, gl_s(ooms));
    if (r->dropped)
        fprintf(f, ", %" PRId64 " EVENTS DROPPED (queue full)", r->dropped);
    fputc('\n', f);
    gl_run_free(r);
    return 0;
}
