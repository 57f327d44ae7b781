/* cmd_summary.c — `gpuledger summary DB...`: the one line per database
 * that `gpuledger run` prints at the end, from the same loaded model as
 * `report` (never the recorder's cached figures), so the two agree. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "escape.h"
#include "model.h"
#include "out.h"

int gl_print_db_summary(FILE *f, const char *path)
{
    char err[1200];
    struct gl_run *r = gl_run_load(path, err, sizeof err);
    if (!r) {
        fputs("gpuledger: ", stderr);
        gl_text_str(stderr, err);
        fputc('\n', stderr);
        return 2;
    }
    gl_print_skipped(stderr, r);
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
        if (gl_kind_counts_on_device(r->allocs[i].kind) && !r->allocs[i].free_seq) {
            unfreed++;
            unfreed_bytes += r->allocs[i].size;
        }
    for (size_t i = 0; i < r->nfails; i++)
        ooms += r->fails[i].op == GL_OP_OOM;
    char pb[32], ub[32];
    fputs("gpuledger: ", f);
    gl_text_str(f, path);
    fprintf(f, ": %" PRId64 " events, peak %s", r->event_count, gl_fmt_bytes(top ? top->peak : 0, pb, sizeof pb));
    if (ndev > 1)
        fprintf(f, " (device %d, %d devices)", top->device, ndev);
    else if (top && top->device >= 0)
        fprintf(f, " on device %d", top->device);
    fprintf(f, ", %" PRIu64 " allocations (%s) never freed", unfreed, gl_fmt_bytes(unfreed_bytes, ub, sizeof ub));
    if (ooms)
        fprintf(f, ", %" PRIu64 " out-of-memory failures", ooms);
    if (r->dropped)
        fprintf(f, ", %" PRId64 " EVENTS DROPPED (queue full)", r->dropped);
    fputc('\n', f);
    gl_run_free(r);
    return 0;
}

int cmd_summary(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
        FILE *f = argc < 2 ? stderr : stdout;
        fprintf(f, "usage: gpuledger summary DB...\n\nOne line per database: events, peak device bytes,\n"
                   "allocations never freed, out-of-memory failures, dropped events.\n");
        return argc < 2 ? 2 : 0;
    }
    int rc = 0;
    for (int i = 1; i < argc; i++)
        if (gl_print_db_summary(stdout, argv[i]))
            rc = 2;
    return rc;
}
