/* cmd_gate.c — `gpuledger gate`: the CI leak gate. Exit 0 within limits,
 * 1 when a limit is broken (the offending chains are printed), 2 on bad
 * input. Optional JUnit XML for CI systems. */
#include <errno.h>
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

struct peak_check {
    uint64_t peak; /* the highest of the process's devices */
    int device;    /* where (-1: no device memory) */
    int fail;
};

/* "  3.00 MiB in 1 allocation(s) [other] a.db: f <- g <- main" */
static void chain_line(FILE *f, const struct gl_group *g, const struct gl_stack *st, const char *path)
{
    char b[32];
    if (!f)
        return;
    fprintf(f, "  %s in %" PRIu64 " allocation(s) [", gl_fmt_bytes(g->bytes, b, sizeof b), g->count);
    gl_text_str(f, g->category);
    fputs("] ", f);
    gl_text_str(f, path);
    fputs(": ", f);
    gl_print_chain(f, st, 6);
    fputc('\n', f);
}

struct junit_in {
    struct gl_run **runs;
    const struct peak_check *peaks; /* one per run, or NULL (out of memory) */
    int n;
    uint64_t leak, max_leak;
    int have_peak;
    uint64_t max_peak;
    const char *chains; /* text of the chains counted, or NULL */
};

/* JUnit XML (valid against the Jenkins xUnit schema, tests/junit/): one
 * test case per check the gate made — the never-freed bytes summed over
 * the databases, and with --max-peak-bytes the peak of each — and a
 * <failure> in each that failed. Closes f; 0, or 2 after saying why. */
static int write_junit(FILE *f, const char *path, const struct junit_in *in)
{
    int tests = 1 + (in->have_peak ? in->n : 0), failures = in->leak > in->max_leak;
    for (int i = 0; in->have_peak && in->peaks && i < in->n; i++)
        failures += in->peaks[i].fail;
    const char *dbs = in->n == 1 ? "database" : "databases";
    fprintf(f,
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
            "<testsuites name=\"gpuledger gate\" tests=\"%d\" failures=\"%d\" errors=\"0\">\n"
            "  <testsuite name=\"gpuledger gate\" tests=\"%d\" failures=\"%d\" errors=\"0\" skipped=\"0\">\n"
            "    <testcase classname=\"gpuledger.leaks\" name=\"never freed over %d %s &lt;= %" PRIu64 " bytes\">",
            tests, failures, tests, failures, in->n, dbs, in->max_leak);
    if (in->leak > in->max_leak) {
        fprintf(f, "<failure type=\"leak\" message=\"%" PRIu64 " bytes never freed over %d %s (limit %" PRIu64 ")\">",
                in->leak, in->n, dbs, in->max_leak);
        gl_xml_str(f, in->chains); /* text-escaped already: now for XML */
        fputs("</failure>", f);
    }
    fputs("</testcase>\n", f);
    for (int i = 0; in->have_peak && i < in->n; i++) {
        const struct peak_check *p = in->peaks ? &in->peaks[i] : NULL;
        fputs("    <testcase classname=\"gpuledger.peak\" name=\"peak of ", f);
        gl_xml_str(f, in->runs[i]->path);
        fprintf(f, " &lt;= %" PRIu64 " bytes\">", in->max_peak);
        if (p && p->fail)
            fprintf(f, "<failure type=\"peak\" message=\"peak %" PRIu64 " bytes on device %d (limit %" PRIu64 ")\"/>",
                    p->peak, p->device, in->max_peak);
        fputs("</testcase>\n", f);
    }
    fputs("  </testsuite>\n</testsuites>\n", f);
    if (fclose(f) != 0) {
        fprintf(stderr, "gpuledger gate: cannot write ");
        gl_text_str(stderr, path);
        fprintf(stderr, ": %s\n", strerror(errno));
        return 2;
    }
    return 0;
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
        fprintf(stderr, "gpuledger gate: cannot write ");
        gl_text_str(stderr, junit);
        fprintf(stderr, ": %s\n", strerror(errno));
        for (int i = 0; i < n; i++)
            gl_run_free(runs[i]);
        free(runs);
        for (int q = 0; q < nign; q++)
            regfree(&ign[q]);
        gl_rules_free(&rules);
        return 2;
    }
    uint64_t total_leak = 0;
    int peak_fail = 0;
    char b[32], m[32];
    struct peak_check *pk = calloc((size_t)n, sizeof *pk);
    /* The offending chains, printed after the verdict and kept (without
     * the peak lines) for the JUnit failure. */
    char *chains_text = NULL;
    size_t chains_len = 0;
    FILE *detail = tmpfile(), *chains = open_memstream(&chains_text, &chains_len);
    for (int i = 0; i < n; i++) {
        struct gl_run *r = runs[i];
        struct gl_stacks s;
        gl_stacks_init(&s, r);
        struct gl_leak_opts lo = {0, 0, 0};
        struct gl_groups g;
        gl_leaks(r, -2, &lo, &g);
        gl_groups_merge_chains(&g, &s);
        gl_groups_categorize(&g, &rules, &s);
        for (size_t k = 0; k < g.n; k++) {
            const struct gl_stack *st = gl_stack_get(&s, g.v[k].stack_id);
            int skip = !count_cached && gl_is_cached_category(g.v[k].category);
            for (int q = 0; q < nign && !skip; q++)
                skip = gl_stack_matches(st, &ign[q]);
            if (skip)
                continue;
            total_leak += g.v[k].bytes;
            chain_line(detail, &g.v[k], st, r->path);
            chain_line(chains, &g.v[k], st, r->path);
        }
        struct peak_check p = {0, -1, 0};
        for (int d = 0; d < r->ndevs; d++)
            if (r->devs[d].peak > p.peak || p.device < 0) {
                p.peak = r->devs[d].peak;
                p.device = r->devs[d].device;
            }
        p.fail = have_peak && p.peak > max_peak;
        peak_fail |= p.fail;
        if (pk)
            pk[i] = p;
        if (p.fail && detail) {
            fprintf(detail, "  peak %s > %s in ", gl_fmt_bytes(p.peak, b, sizeof b),
                    gl_fmt_bytes(max_peak, m, sizeof m));
            gl_text_str(detail, r->path);
            fputc('\n', detail);
        }
        gl_groups_free(&g);
        gl_stacks_free(&s);
    }
    int rc = 0;
    if (jf) {
        if (chains)
            fflush(chains);
        struct junit_in in = {runs, pk, n, total_leak, max_leak, have_peak, max_peak, chains_text};
        rc = write_junit(jf, junit, &in);
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
    if (chains)
        fclose(chains);
    free(chains_text);
    free(pk);
    for (int i = 0; i < n; i++)
        gl_run_free(runs[i]);
    free(runs);
    for (int q = 0; q < nign; q++)
        regfree(&ign[q]);
    gl_rules_free(&rules);
    return rc ? rc : fail ? 1 : 0;
}
