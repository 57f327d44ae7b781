/* cmd_holes.c — `gpuledger holes DB...`: hole density of stream-ordered
 * pools and reserved VA ranges (method in README, "Hole density"). */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "commands.h"
#include "out.h"
#include "reader.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: gpuledger holes [--pool P] [--series] [--format text|json] DB...\n"
               "\n"
               "For each stream-ordered pool and each reserved virtual range: reserved,\n"
               "live and free bytes, the largest free block, the number of holes and the\n"
               "external fragmentation ratio (largest free / total free: 1.0 = all free\n"
               "space in one block), at the worst moment (most free bytes) and at the end.\n"
               "  --pool P     only the pool (or reservation address) P (decimal or 0x...)\n"
               "  --series     also print the time series (64 samples)\n");
}

int cmd_holes(int argc, char **argv)
{
    static const struct option opts[] = {
        {"pool", required_argument, NULL, 'p'}, {"series", no_argument, NULL, 's'},
        {"format", required_argument, NULL, 'f'}, {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    uint64_t pool = 0;
    int series = 0, json = 0, c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 'p': {
            char *end;
            pool = strtoull(optarg, &end, 0);
            if (*end || !pool) {
                fprintf(stderr, "gpuledger holes: --pool wants a pool handle like 0x55d0c0a3e2a0\n");
                return 2;
            }
            break;
        }
        case 's':
            series = 1;
            break;
        case 'f':
            json = !strcmp(optarg, "json");
            if (!json && strcmp(optarg, "text")) {
                fprintf(stderr, "gpuledger holes: --format wants text or json\n");
                return 2;
            }
            break;
        case 'h':
            usage(stdout);
            return 0;
        default:
            usage(stderr);
            return 2;
        }
    }
    if (optind >= argc) {
        fprintf(stderr, "gpuledger holes: no database given\n");
        usage(stderr);
        return 2;
    }
    int n = argc - optind;
    struct gl_run **runs;
    if (gl_load_all(n, argv + optind, &runs))
        return 2;
    if (json)
        fputs("{\"processes\":[", stdout);
    for (int i = 0; i < n; i++) {
        struct gl_run *r = runs[i];
        struct gl_pool_holes *h;
        size_t nh;
        gl_holes(r, pool, &h, &nh);
        char b1[32], b2[32], b3[32], b4[32], t[32];
        if (json) {
            fprintf(stdout, "%s{\"path\":", i ? "," : "");
            gl_json_str(stdout, r->path);
            fprintf(stdout, ",\"pid\":%" PRId64 ",\"holes\":[", r->pid);
        } else {
            fputs("== ", stdout);
            gl_text_str(stdout, r->path);
            printf(" (pid %" PRId64 ")\n", r->pid);
            if (!nh)
                printf("no stream-ordered pools or reserved ranges in this run\n");
        }
        for (size_t k = 0; k < nh; k++) {
            const struct gl_pool_holes *p = &h[k];
            if (json) {
                fprintf(stdout,
                        "%s{\"pool\":%" PRIu64 ",\"kind\":\"%s\",\"device\":%d,\"regions\":%" PRIu64
                        ",\"sampled_reserved\":%" PRIu64 ",\"series\":[",
                        k ? "," : "", p->pool, p->what, p->device, p->regions, p->sampled_reserved);
                for (size_t s = 0; s < p->nseries; s++) {
                    const struct gl_hole_stat *x = &p->series[s];
                    fprintf(stdout,
                            "%s{\"ts_ns\":%" PRId64 ",\"reserved\":%" PRIu64 ",\"live\":%" PRIu64 ",\"free\":%" PRIu64
                            ",\"largest_free\":%" PRIu64 ",\"external_fragmentation\":%.6f,\"holes\":%" PRIu64 "}",
                            s ? "," : "", x->ts_ns, x->reserved, x->live, x->free, x->largest_free, x->ext_frag,
                            x->holes);
                }
                fprintf(stdout, "],\"worst_index\":%zu}", (size_t)0);
                continue;
            }
            char name[96];
            printf("%s on device %d (%" PRIu64 " region%s", gl_pool_label(p, name, sizeof name), p->device, p->regions,
                   p->regions == 1 ? "" : "s");
            if (p->sampled_reserved)
                printf("; the pool itself reported up to %s reserved", gl_fmt_bytes(p->sampled_reserved, b1, sizeof b1));
            printf(")\n");
            const struct gl_hole_stat *w[2] = {&p->worst, &p->end};
            const char *label[2] = {"worst", "end"};
            for (int q = 0; q < 2; q++)
                printf("  %-5s %s: reserved %s, live %s, free %s in %" PRIu64 " holes, largest %s, external "
                       "fragmentation %.3f\n",
                       label[q], gl_fmt_rel(w[q]->ts_ns, r->first_ns, t, sizeof t),
                       gl_fmt_bytes(w[q]->reserved, b1, sizeof b1), gl_fmt_bytes(w[q]->live, b2, sizeof b2),
                       gl_fmt_bytes(w[q]->free, b3, sizeof b3), w[q]->holes,
                       gl_fmt_bytes(w[q]->largest_free, b4, sizeof b4), w[q]->ext_frag);
            for (size_t s = 0; series && s < p->nseries; s++)
                printf("    %s live %s free %s holes %" PRIu64 " largest %s frag %.3f\n",
                       gl_fmt_rel(p->series[s].ts_ns, r->first_ns, t, sizeof t),
                       gl_fmt_bytes(p->series[s].live, b1, sizeof b1), gl_fmt_bytes(p->series[s].free, b2, sizeof b2),
                       p->series[s].holes, gl_fmt_bytes(p->series[s].largest_free, b3, sizeof b3),
                       p->series[s].ext_frag);
        }
        if (json)
            fputs("]}", stdout);
        gl_holes_free(h, nh);
        gl_run_free(r);
    }
    if (json)
        fputs("]}\n", stdout);
    free(runs);
    return 0;
}
