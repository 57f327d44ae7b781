/* cmd_gate.c — `gpuledger gate`: the CI leak gate. Exit 0 within limits,
 * 1 when a limit is broken (the offending chains are printed), 2 on bad
 * input. Optional JUnit XML for CI systems. */
#include <getopt.h>
#include <inttypes.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "commands.h"
#include "dossier.h"
#include "out.h"
#include "reader.h"

#define MAX_IGNORE 32

static void usage(FILE *f)
{
    fprintf(f, "usage: gpuledger gate --max-leak-bytes N [options] DB...\n"
               "\n"
               "Fails (exit 1) when the device memory never freed, summed over the\n"
               "databases, exceeds N, or any process's peak exceeds --max-peak-bytes.\n"
               "Memory held by a caching allocator at exit (PyTorch segments) is not a\n"
               "leak unless --count-cached is given.\n"
               "\n"
               "options:\n"
               "  --max-leak-bytes N    allowed unfreed bytes (K/M/G suffixes), required\n"
               "  --max-peak-bytes M    allowed peak per process and device\n"
               "  --ignore REGEX        leave out chains with a frame (symbol, module or\n"
               "                        file) matching REGEX; repeatable\n"
               "  --count-cached        count caching-allocator segments as leaks\n"
               "  --junit FILE          write a JUnit XML report\n"
               "  --rules FILE          category rules\n"
               "exit status: 0 pass, 1 a limit is broken, 2 bad usage or bad input\n");
}

int cmd_gate(int argc, char **argv)
{
    static const struct option opts[] = {
        {"max-leak-bytes", required_argument, NULL, 'l'}, {"max-peak-bytes", required_argument, NULL, 'p'},
        {"ignore", required_argument, NULL, 'i'},         {"junit", required_argument, NULL, 'j'},
        {"count-cached", no_argument, NULL, 'c'},         {"rules", required_argument, NULL, 'r'},
        {"help", no_argument, NULL, 'h'},                 {NULL, 0, NULL, 0},
    };
    unsigned long long max_leak = 0, max_peak = 0;
    int have_leak = 0, have_peak = 0, count_cached = 0, nign = 0, c;
    const char *junit = NULL, *rules_path = NULL;
    regex_t ign[MAX_IGNORE];
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 'l':
        case 'p':
            if (gl_parse_size(optarg, c == 'l' ? &max_leak : &max_peak)) {
                fprintf(stderr, "gpuledger gate: %s wants a size like 0, 4096, 64K or 2G, not '%s'\n",
                        c == 'l' ? "--max-leak-bytes" : "--max-peak-bytes", optarg);
                return 2;
            }
            *(c == 'l' ? &have_leak : &have_peak) = 1;
            break;
        case 'i':
            if (nign == MAX_IGNORE || regcomp(&ign[nign], optarg, REG_EXTENDED | REG_NOSUB)) {
                fprintf(stderr, "gpuledger gate: --ignore '%s' is not a valid extended regex (or too many)\n", optarg);
                return 2;
            }
            nign++;
            break;
        case 'j':
            junit = optarg;
            break;
        case 'c':
            count_cached = 1;
            break;
        case 'r':
            rules_path = optarg;
            break;
        case 'h':
            usage(stdout);
            return 0;
        default:
            usage(stderr);
            return 2;
        }
    }
    if (!have_leak || optind >= argc) {
        fprintf(stderr, "gpuledger gate: %s\n", !have_leak ? "--max-leak-bytes is required" : "no database given");
        usage(stderr);
        return 2;
    }
    int n = argc - optind;
    struct gl_rules rules;
    struct gl_run **runs;
    if (gl_rules_from_opt(rules_path, &rules))
        return 2;
    if (gl_load_all(n, argv + optind, &runs)) {
        gl_rules_free(&rules);
        return 2;
    }
    FILE *jf = NULL;
    if (junit && !(jf = fopen(junit, "w"))) {
        fprintf(stderr, "gpuledger gate: cannot write %s\n", junit);
        return 2;
    }
    uint64_t total_leak = 0;
    int peak_fail = 0;
    char b[32], m[32];
    if (jf)
        fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"gpuledger\">\n", jf);
    /* Collect offending chains and print them after the verdict. */
    FILE *detail = tmpfile();
    for (int i = 0; i < n; i++) {
        struct gl_run *r = runs[i];
        struct gl_stacks s;
        gl_stacks_init(&s, r);
        struct gl_leak_opts lo = {0, 0, 0};
        struct gl_groups g;
        gl_leaks(r, -2, &lo, &g);
        gl_groups_merge_chains(&g, &s);
        gl_groups_categorize(&g, &rules, &s);
        uint64_t leak = 0;
        if (jf) {
            fprintf(jf, "<testsuite name=\"");
            gl_xml_str(jf, r->path);
            fprintf(jf, "\" tests=\"2\">\n");
        }
        for (size_t k = 0; k < g.n; k++) {
            const struct gl_stack *st = gl_stack_get(&s, g.v[k].stack_id);
            int skip = !count_cached && gl_is_cached_category(g.v[k].category);
            for (int q = 0; q < nign && !skip; q++)
                skip = gl_stack_matches(st, &ign[q]);
            if (skip)
                continue;
            leak += g.v[k].bytes;
            if (detail) {
                fprintf(detail, "  %s in %" PRIu64 " allocation(s) [", gl_fmt_bytes(g.v[k].bytes, b, sizeof b),
                        g.v[k].count);
                gl_text_str(detail, g.v[k].category);
                fputs("] ", detail);
                gl_text_str(detail, r->path);
                fputs(": ", detail);
                gl_print_chain(detail, st, 6);
                fputc('\n', detail);
            }
        }
        total_leak += leak;
        uint64_t peak = 0;
        for (int d = 0; d < r->ndevs; d++)
            if (r->devs[d].peak > peak)
                peak = r->devs[d].peak;
        int pfail = have_peak && peak > max_peak;
        peak_fail |= pfail;
        if (pfail && detail) {
            fprintf(detail, "  peak %s > %s in ", gl_fmt_bytes(peak, b, sizeof b), gl_fmt_bytes(max_peak, m, sizeof m));
            gl_text_str(detail, r->path);
            fputc('\n', detail);
        }
        if (jf) {
            fprintf(jf, "  <testcase classname=\"gpuledger.leaks\" name=\"leaked bytes <= %llu\">", max_leak);
            if (leak > max_leak)
                fprintf(jf, "<failure message=\"%" PRIu64 " bytes never freed\"/>", leak);
            fprintf(jf, "</testcase>\n  <testcase classname=\"gpuledger.peak\" name=\"peak\">");
            if (pfail)
                fprintf(jf, "<failure message=\"peak %" PRIu64 " bytes &gt; %llu\"/>", peak, max_peak);
            fprintf(jf, "</testcase>\n</testsuite>\n");
        }
        gl_groups_free(&g);
        gl_stacks_free(&s);
    }
    if (jf) {
        fputs("</testsuites>\n", jf);
        fclose(jf);
    }
    int fail = total_leak > max_leak || peak_fail;
    printf("gpuledger gate: %s — %s never freed (limit %s) in %d database%s%s\n", fail ? "FAIL" : "pass",
           gl_fmt_bytes(total_leak, b, sizeof b), gl_fmt_bytes(max_leak, m, sizeof m), n, n == 1 ? "" : "s",
           peak_fail ? "; peak limit broken" : "");
    if (fail && detail) {
        rewind(detail);
        int ch;
        while ((ch = fgetc(detail)) != EOF)
            putchar(ch);
    }
    if (detail)
        fclose(detail);
    for (int i = 0; i < n; i++)
        gl_run_free(runs[i]);
    free(runs);
    for (int q = 0; q < nign; q++)
        regfree(&ign[q]);
    gl_rules_free(&rules);
    return fail ? 1 : 0;
}
