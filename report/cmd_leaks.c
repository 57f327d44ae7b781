/* cmd_leaks.c — `gpuledger leaks DB...`: leak chains. Allocations never
 * freed, grouped by the stack that made them, biggest first; memory still
 * held by a caching allocator at exit is listed apart. --lifetime-ms adds
 * long-lived allocations; --steps finds stacks whose live bytes grow step
 * after step. */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "commands.h"
#include "dossier.h"
#include "out.h"
#include "reader.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: gpuledger leaks [options] DB...\n"
               "\n"
               "options:\n"
               "  --min-bytes N       leave out chains smaller than N (K/M/G suffixes)\n"
               "  --lifetime-ms T     also allocations that lived at least T ms\n"
               "  --steps[=N]         memory that grows every step: stacks whose live bytes\n"
               "                      never fall and rise in most of N slices of the run\n"
               "                      with equal numbers of allocations (default 10)\n"
               "  --device N          only device N\n"
               "  --top K             chains shown (default 20)\n"
               "  --rules FILE        category rules\n"
               "  --format text|json  (default text)\n"
               "  -h, --help\n");
}

static void print_chain_block(FILE *f, struct gl_stacks *s, const struct gl_group *g, int64_t t0, int steps,
                              const uint64_t *step_bytes, int nsteps)
{
    char b[32], t1[32], t2[32];
    fprintf(f, "%10s in %" PRIu64 " allocation%s  [", gl_fmt_bytes(g->bytes, b, sizeof b), g->count,
            g->count == 1 ? "" : "s");
    gl_text_str(f, g->category);
    fprintf(f, "]  first %s, last %s\n", gl_fmt_rel(g->first_ns, t0, t1, sizeof t1),
            gl_fmt_rel(g->last_ns, t0, t2, sizeof t2));
    if (steps && step_bytes) {
        fputs("           live per step:", f);
        for (int k = 0; k < nsteps; k++)
            fprintf(f, " %s", gl_fmt_bytes(step_bytes[k], b, sizeof b));
        fputc('\n', f);
    }
    const struct gl_stack *st = gl_stack_get(s, g->stack_id);
    gl_print_frame_list(f, st, "           ");
}

int cmd_leaks(int argc, char **argv)
{
    static const struct option opts[] = {
        {"min-bytes", required_argument, NULL, 'm'}, {"lifetime-ms", required_argument, NULL, 'l'},
        {"steps", optional_argument, NULL, 's'},     {"device", required_argument, NULL, 'd'},
        {"top", required_argument, NULL, 't'},       {"rules", required_argument, NULL, 'r'},
        {"format", required_argument, NULL, 'f'},    {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    unsigned long long min_bytes = 0;
    double lifetime_ms = 0;
    int steps = 0, device = -2, top = 20, c;
    const char *rules_path = NULL, *format = "text";
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 'm':
            if (gl_parse_size(optarg, &min_bytes)) {
                fprintf(stderr, "gpuledger leaks: --min-bytes wants a size like 4096, 64K or 1.5G, not '%s'\n", optarg);
                return 2;
            }
            break;
        case 'l':
            lifetime_ms = atof(optarg);
            if (lifetime_ms <= 0) {
                fprintf(stderr, "gpuledger leaks: --lifetime-ms wants a positive number of milliseconds\n");
                return 2;
            }
            break;
        case 's':
            steps = optarg ? atoi(optarg) : 10;
            if (steps < 2) {
                fprintf(stderr, "gpuledger leaks: --steps wants at least 2 steps\n");
                return 2;
            }
            break;
        case 'd':
            device = atoi(optarg);
            break;
        case 't':
            top = atoi(optarg) > 0 ? atoi(optarg) : 20;
            break;
        case 'r':
            rules_path = optarg;
            break;
        case 'f':
            format = optarg;
            if (strcmp(format, "text") && strcmp(format, "json")) {
                fprintf(stderr, "gpuledger leaks: --format wants text or json\n");
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
        fprintf(stderr, "gpuledger leaks: no database given\n");
        usage(stderr);
        return 2;
    }
    int n = argc - optind, json = !strcmp(format, "json");
    struct gl_rules rules;
    struct gl_run **runs;
    if (gl_rules_from_opt(rules_path, &rules))
        return 2;
    if (gl_load_all(n, argv + optind, &runs)) {
        gl_rules_free(&rules);
        return 2;
    }
    if (json)
        fputs("{\"processes\":[", stdout);
    for (int i = 0; i < n; i++) {
        struct gl_run *r = runs[i];
        struct gl_stacks s;
        gl_stacks_init(&s, r);
        struct gl_leak_opts lo = {min_bytes, (int64_t)(lifetime_ms * 1e6), 1};
        struct gl_groups g;
        gl_leaks(r, device, &lo, &g);
        gl_groups_merge_chains(&g, &s);
        gl_groups_categorize(&g, &rules, &s);
        struct gl_groups grow = {0};
        int nb = steps ? gl_growth(r, device, steps, min_bytes, &grow) : 0;
        if (steps)
            gl_groups_categorize(&grow, &rules, &s);
        uint64_t leak = 0, cached = 0;
        size_t nleak = 0;
        for (size_t k = 0; k < g.n; k++) {
            if (gl_is_cached_category(g.v[k].category))
                cached += g.v[k].bytes;
            else {
                leak += g.v[k].bytes;
                nleak++;
            }
        }
        char b[32], t[32];
        if (json) {
            fprintf(stdout, "%s{\"path\":", i ? "," : "");
            gl_json_str(stdout, r->path);
            fprintf(stdout, ",\"pid\":%" PRId64 ",\"leak_bytes\":%" PRIu64 ",\"cached_bytes\":%" PRIu64 ",\"leaks\":[",
                    r->pid, leak, cached);
            for (size_t k = 0; k < g.n; k++) {
                fprintf(stdout, "%s{\"bytes\":%" PRIu64 ",\"count\":%" PRIu64 ",\"cached\":%s,\"category\":", k ? "," : "",
                        g.v[k].bytes, g.v[k].count, gl_is_cached_category(g.v[k].category) ? "true" : "false");
                gl_json_str(stdout, g.v[k].category);
                fprintf(stdout, ",\"first_ns\":%" PRId64 ",\"last_ns\":%" PRId64 ",\"frames\":", g.v[k].first_ns,
                        g.v[k].last_ns);
                gl_json_frames(stdout, gl_stack_get(&s, g.v[k].stack_id), 64);
                fputc('}', stdout);
            }
            fputs("],\"growing\":[", stdout);
            for (size_t k = 0; k < grow.n; k++) {
                fprintf(stdout, "%s{\"growth_bytes\":%" PRIu64 ",\"steps\":[", k ? "," : "", grow.v[k].bytes);
                for (int q = 0; q < nb; q++)
                    fprintf(stdout, "%s%" PRIu64, q ? "," : "", grow.v[k].steps[q]);
                fputs("],\"category\":", stdout);
                gl_json_str(stdout, grow.v[k].category);
                fputs(",\"frames\":", stdout);
                gl_json_frames(stdout, gl_stack_get(&s, grow.v[k].stack_id), 64);
                fputc('}', stdout);
            }
            fputs("]}", stdout);
        } else {
            fputs("== ", stdout);
            gl_text_str(stdout, r->path);
            printf(" (pid %" PRId64 ")\n", r->pid);
            if (r->dropped)
                printf("WARNING: %" PRId64 " events were dropped: a free may be missing, so some chains may be false\n",
                       r->dropped);
            printf("%s never freed in %zu leak chain%s", gl_fmt_bytes(leak, b, sizeof b), nleak, nleak == 1 ? "" : "s");
            if (cached)
                printf("; %s held by a caching allocator at exit (its segments, not a leak: see README)",
                       gl_fmt_bytes(cached, t, sizeof t));
            if (lo.lifetime_ns)
                printf("; including allocations that lived >= %.0f ms", lifetime_ms);
            printf("\n");
            int shown = 0;
            for (size_t k = 0; k < g.n && shown < top; k++) {
                if (gl_is_cached_category(g.v[k].category))
                    continue;
                printf("\n#%-3d", ++shown);
                print_chain_block(stdout, &s, &g.v[k], r->first_ns, 0, NULL, 0);
            }
            if (steps) {
                if (r->nmarks >= 2)
                    printf("\ngrowing step after step (%d steps ended by the program's marks):", nb);
                else
                    printf("\ngrowing step after step (%d slices of %zu allocations):", nb, r->nallocs / (size_t)nb);
                if (!grow.n)
                    printf(" none\n");
                else
                    printf(" %zu stack%s\n", grow.n, grow.n == 1 ? "" : "s");
                for (size_t k = 0; k < grow.n && (int)k < top; k++) {
                    printf("\n+%-3zu", k + 1);
                    print_chain_block(stdout, &s, &grow.v[k], r->first_ns, 1, grow.v[k].steps, nb);
                }
            }
        }
        gl_groups_free(&g);
        gl_groups_free(&grow);
        gl_stacks_free(&s);
        gl_run_free(r);
    }
    if (json)
        fputs("]}\n", stdout);
    free(runs);
    gl_rules_free(&rules);
    return 0;
}
