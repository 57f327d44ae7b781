/* cmd_report.c — `gpuledger report DB...`: the one-screen summary (text),
 * or the full answer as JSON or a self-contained HTML page. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "dossier.h"
#include "html_app.h"
#include "out.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: gpuledger report [options] DB...\n"
               "\n"
               "For each process and device: the peak of live device memory and when it\n"
               "happened, what was live then (the peak ledger) by stack and by category,\n"
               "the timeline, calls per API, dropped events, out-of-memory failures with\n"
               "what was live at that instant, and pool hole density. Several databases\n"
               "(one per rank) give one section each and a total.\n"
               "\n"
               "options:\n"
               "  --format text|json|html   (default text). html: one self-contained page to\n"
               "                            explore in a browser (opens from disk, fetches\n"
               "                            nothing): the timeline by category, the ledger\n"
               "                            at any moment you click, a flame graph, leaks,\n"
               "                            growth per step, OOMs and pool holes\n"
               "  -o, --output FILE         write there instead of stdout\n"
               "  --device N                only device N\n"
               "  --top K                   ledger rows per device (default 10)\n"
               "  --rules FILE              category rules (default: built in; see README)\n"
               "  -h, --help\n");
}

int gl_load_all(int argc, char **argv, struct gl_run ***runs)
{
    *runs = calloc((size_t)argc + 1, sizeof(struct gl_run *));
    if (!*runs)
        return -1;
    for (int i = 0; i < argc; i++) {
        char err[1200];
        (*runs)[i] = gl_run_load(argv[i], err, sizeof err);
        if (!(*runs)[i]) {
            fputs("gpuledger: ", stderr);
            gl_text_str(stderr, err);
            fputc('\n', stderr);
            for (int k = 0; k < i; k++)
                gl_run_free((*runs)[k]);
            free(*runs);
            *runs = NULL;
            return -1;
        }
        gl_print_skipped(stderr, (*runs)[i]);
    }
    return 0;
}

int gl_rules_from_opt(const char *path, struct gl_rules *rules)
{
    char err[512];
    if (!path)
        return gl_rules_default(rules);
    if (gl_rules_load(rules, path, err, sizeof err)) {
        fputs("gpuledger: ", stderr);
        gl_text_str(stderr, err);
        fputc('\n', stderr);
        return -1;
    }
    return 0;
}

int cmd_report(int argc, char **argv)
{
    static const struct option opts[] = {
        {"format", required_argument, NULL, 'f'}, {"output", required_argument, NULL, 'o'},
        {"device", required_argument, NULL, 'd'}, {"top", required_argument, NULL, 't'},
        {"rules", required_argument, NULL, 'r'},  {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *format = "text", *outp = NULL, *rules_path = NULL;
    int device = -2, top = 10, c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
        switch (c) {
        case 'f':
            format = optarg;
            break;
        case 'o':
            outp = optarg;
            break;
        case 'd':
            device = atoi(optarg);
            break;
        case 't':
            top = atoi(optarg);
            if (top < 1) {
                fprintf(stderr, "gpuledger report: --top wants a positive number\n");
                return 2;
            }
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
    if (strcmp(format, "text") && strcmp(format, "json") && strcmp(format, "html")) {
        fprintf(stderr, "gpuledger report: --format wants text, json or html, not '%s'\n", format);
        return 2;
    }
    if (optind >= argc) {
        fprintf(stderr, "gpuledger report: no database given\n");
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
    struct gl_dossier *ds = calloc((size_t)n, sizeof *ds);
    struct gl_dossier_opts o = {device, &rules};
    for (int i = 0; ds && i < n; i++)
        gl_dossier_build(&ds[i], runs[i], &o);
    FILE *f = ds ? gl_open_out(outp) : NULL;
    int rc = f ? 0 : 2;
    if (f) {
        if (!strcmp(format, "json"))
            gl_render_json(f, ds, (size_t)n, top);
        else if (!strcmp(format, "html")) {
            struct gl_html_opts ho = {&rules, device, NULL, 0, 0};
            if (gl_render_html_app(f, runs, (size_t)n, NULL, &ho))
                rc = 2;
        }
        else
            gl_render_text(f, ds, (size_t)n, top);
        gl_close_out(f);
    }
    for (int i = 0; i < n; i++) {
        if (ds)
            gl_dossier_free(&ds[i]);
        gl_run_free(runs[i]);
    }
    free(ds);
    free(runs);
    gl_rules_free(&rules);
    return rc;
}
