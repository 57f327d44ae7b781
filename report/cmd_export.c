/* cmd_export.c — `gpuledger export DB --format folded|perfetto|csv`:
 * folded stacks for flame-graph tools (bytes live at the peak, never freed,
 * or ever allocated), a Chrome/Perfetto trace (a live-bytes counter track
 * per device, OOMs as instant events), or the allocations as CSV. */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "commands.h"
#include "out.h"
#include "reader.h"

static void folded_line(FILE *f, const struct gl_stack *st, uint64_t bytes)
{
    char buf[1024];
    if (!st->n)
        fputs("(no stack)", f);
    for (int i = st->n - 1; i >= 0; i--) { /* root first */
        if (i != st->n - 1)
            fputc(';', f);
        gl_folded_str(f, gl_frame_name(&st->f[i], buf, sizeof buf));
    }
    fprintf(f, " %" PRIu64 "\n", bytes);
}

static void folded(FILE *f, struct gl_run *r, const char *what)
{
    struct gl_stacks s;
    gl_stacks_init(&s, r);
    struct gl_groups g = {0};
    if (!strcmp(what, "leaks")) {
        struct gl_leak_opts lo = {0, 0, 0};
        gl_leaks(r, -2, &lo, &g);
    } else if (!strcmp(what, "allocs")) {
        struct gl_leak_opts lo = {0, 1, 1}; /* lifetime >= 1 ns: everything */
        gl_leaks(r, -2, &lo, &g);
    } else {
        for (int d = 0; d < r->ndevs; d++) {
            struct gl_groups one;
            gl_ledger_at(r, r->devs[d].device, r->devs[d].peak_seq, &one);
            for (size_t i = 0; i < one.n; i++)
                folded_line(f, gl_stack_get(&s, one.v[i].stack_id), one.v[i].bytes);
            gl_groups_free(&one);
        }
    }
    for (size_t i = 0; i < g.n; i++)
        folded_line(f, gl_stack_get(&s, g.v[i].stack_id), g.v[i].bytes);
    gl_groups_free(&g);
    gl_stacks_free(&s);
}

struct step {
    int64_t seq, ts;
    int64_t delta;
    int device;
};

static int cmp_step(const void *a, const void *b)
{
    const struct step *x = a, *y = b;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static void perfetto(FILE *f, struct gl_run *r)
{
    struct step *v = malloc((2 * r->nallocs + 1) * sizeof *v);
    size_t n = 0;
    for (size_t i = 0; v && i < r->nallocs; i++) {
        const struct gl_alloc *a = &r->allocs[i];
        if (!gl_kind_counts_on_device(a->kind))
            continue;
        v[n++] = (struct step){a->seq, a->alloc_ns, (int64_t)a->size, a->device};
        if (a->free_seq)
            v[n++] = (struct step){a->free_seq, a->free_ns, -(int64_t)a->size, a->device};
    }
    if (v)
        qsort(v, n, sizeof *v, cmp_step);
    int64_t live[GL_MAX_DEVICES + 1] = {0};
    fputs("{\"displayTimeUnit\":\"ms\",\"traceEvents\":[", f);
    fprintf(f, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%" PRId64 ",\"args\":{\"name\":", r->pid);
    gl_json_str(f, r->cmdline);
    fputs("}}", f);
    for (size_t i = 0; i < n; i++) {
        int k = v[i].device + 1; /* -1 (unknown) .. GL_MAX_DEVICES - 1: the model keeps no other */
        live[k] += v[i].delta;
        fprintf(f, ",\n{\"name\":\"device %d live bytes\",\"ph\":\"C\",\"ts\":%.3f,\"pid\":%" PRId64 ",\"args\":{\"bytes\":%" PRId64 "}}",
                v[i].device, (double)(v[i].ts - r->first_ns) / 1e3, r->pid, live[k]);
    }
    for (size_t i = 0; i < r->nfails; i++) {
        const struct gl_fail *fl = &r->fails[i];
        fprintf(f, ",\n{\"name\":\"%s %s failed\",\"ph\":\"i\",\"s\":\"p\",\"ts\":%.3f,\"pid\":%" PRId64
                   ",\"args\":{\"size\":%" PRIu64 ",\"error\":%d,\"device\":%d}}",
                fl->op == GL_OP_OOM ? "OOM:" : "error:", gl_api_name(fl->api), (double)(fl->ts_ns - r->first_ns) / 1e3,
                r->pid, fl->size, fl->result, fl->device);
    }
    fputs("]}\n", f);
    free(v);
}

static void csv(FILE *f, struct gl_run *r)
{
    struct gl_stacks s;
    gl_stacks_init(&s, r);
    fputs("id,device,api,kind,addr,size,alloc_ns,free_ns,stack_id,allocated_in\n", f);
    char buf[1024];
    for (size_t i = 0; i < r->nallocs; i++) {
        const struct gl_alloc *a = &r->allocs[i];
        if (gl_kind_layer(a->kind) == GL_LAYER_ADDRESS)
            continue;
        const struct gl_stack *st = gl_stack_get(&s, a->stack_id);
        fprintf(f, "%" PRId64 ",%d,%s,%s,0x%" PRIx64 ",%" PRIu64 ",%" PRId64 ",", a->seq, a->device, gl_api_name(a->api),
                gl_kind_name(a->kind), a->addr, a->size, a->alloc_ns);
        if (a->free_seq)
            fprintf(f, "%" PRId64, a->free_ns);
        fprintf(f, ",%" PRId64 ",", a->stack_id);
        gl_csv_str(f, st->n ? gl_frame_name(&st->f[0], buf, sizeof buf) : "");
        fputc('\n', f);
    }
    gl_stacks_free(&s);
}

int cmd_export(int argc, char **argv)
{
    static const struct option opts[] = {
        {"format", required_argument, NULL, 'f'}, {"what", required_argument, NULL, 'w'},
        {"output", required_argument, NULL, 'o'}, {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *format = NULL, *what = "peak", *outp = NULL;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
        switch (c) {
        case 'f':
            format = optarg;
            break;
        case 'w':
            what = optarg;
            break;
        case 'o':
            outp = optarg;
            break;
        case 'h':
            printf("usage: gpuledger export --format folded|perfetto|csv [--what peak|leaks|allocs] [-o FILE] DB\n"
                   "\n"
                   "  folded    one line per stack, root first, then bytes: for flamegraph.pl,\n"
                   "            speedscope, inferno. --what: live at the peak (default), never\n"
                   "            freed, or everything ever allocated\n"
                   "  perfetto  Chrome trace-event JSON: live bytes per device as a counter\n"
                   "            track, failed allocations as instant events (ui.perfetto.dev)\n"
                   "  csv       one row per allocation\n");
            return 0;
        default:
            return 2;
        }
    }
    if (!format || (strcmp(format, "folded") && strcmp(format, "perfetto") && strcmp(format, "csv"))) {
        fprintf(stderr, "gpuledger export: --format wants folded, perfetto or csv\n");
        return 2;
    }
    if (strcmp(what, "peak") && strcmp(what, "leaks") && strcmp(what, "allocs")) {
        fprintf(stderr, "gpuledger export: --what wants peak, leaks or allocs\n");
        return 2;
    }
    if (argc - optind != 1) {
        fprintf(stderr, "gpuledger export: want exactly one database\n");
        return 2;
    }
    struct gl_run **runs;
    if (gl_load_all(1, argv + optind, &runs))
        return 2;
    FILE *f = gl_open_out(outp);
    if (f) {
        if (!strcmp(format, "folded"))
            folded(f, runs[0], what);
        else if (!strcmp(format, "perfetto"))
            perfetto(f, runs[0]);
        else
            csv(f, runs[0]);
        gl_close_out(f);
    }
    gl_run_free(runs[0]);
    free(runs);
    return f ? 0 : 2;
}
