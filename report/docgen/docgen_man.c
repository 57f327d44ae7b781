/* docgen_man.c — the man page gpuledger(1): one page with every verb (its
 * --help text as the program prints it) and every GPULEDGER_* variable
 * (the table the library reads them with). */
#include <stdio.h>
#include <string.h>

#include "config.h"
#include "docgen.h"

/* Text for roff: no request at a line's start, backslashes and hyphens
 * printed as themselves. */
static void roff(FILE *f, const char *s, size_t n)
{
    int bol = 1;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (bol && (c == '.' || c == '\''))
            fputs("\\&", f);
        if (c == '\\')
            fputs("\\e", f);
        else if (c == '-')
            fputs("\\-", f);
        else
            fputc(c, f);
        bol = c == '\n';
    }
}

static void roffs(FILE *f, const char *s)
{
    roff(f, s, strlen(s));
}

/* The lines of the main help between its "usage:" line and "commands:"
 * (what gpuledger is), joined into one paragraph. */
static void description(FILE *f)
{
    const char *p = strchr(gl_usage_main, '\n');
    const char *end = strstr(gl_usage_main, "\ncommands:");
    while (p && p < end && *p == '\n')
        p++;
    if (!p || !end || p >= end)
        return;
    roff(f, p, (size_t)(end - p));
    fputc('\n', f);
}

/* "  run [-o PATTERN] [--] CMD [ARGS...]   profile a program" lines of
 * the main help: the synopsis of each verb. */
static void synopsis(FILE *f)
{
    const char *p = strstr(gl_usage_main, "\ncommands:\n");
    if (!p)
        return;
    p += strlen("\ncommands:\n");
    fputs(".nf\n", f);
    while (*p == ' ' && p[1] == ' ' && p[2] != ' ') {
        const char *eol = strchr(p, '\n');
        if (!eol)
            break;
        const char *gap = strstr(p + 2, "   ");
        size_t n = (size_t)((gap && gap < eol ? gap : eol) - (p + 2));
        fputs("gpuledger ", f);
        roff(f, p + 2, n);
        fputc('\n', f);
        p = eol + 1;
        while (!strncmp(p, "        ", 8)) /* a description's next line */
            p = strchr(p, '\n') ? strchr(p, '\n') + 1 : p + strlen(p);
    }
    fputs("gpuledger \\-\\-help | \\-\\-version\n.fi\n", f);
}

static void environment(FILE *f)
{
    for (size_t i = 0; i < gl_config_nvars; i++) {
        const struct gl_config_var *v = &gl_config_vars[i];
        if (!v->help)
            continue; /* set by the launcher for the library, not by users */
        fprintf(f, ".TP\n.B ");
        roffs(f, v->name);
        fputc('\n', f);
        roffs(f, v->help);
        if (v->reader) {
            fputs(" (read by ", f);
            roffs(f, v->reader);
            fputs(")", f);
        }
        fputs(" (default: ", f);
        roffs(f, v->shown ? v->shown : "none");
        fputs(")\n", f);
    }
}

int gl_docgen_man(FILE *f, const char *version, const char *libdir, const char *pydir)
{
    fputs(".\\\" gpuledger(1): generated at build time by report/docgen from the --help texts\n"
          ".\\\" (report/help.c) and the variables' table (interpose/config.c). Do not edit.\n",
          f);
    fprintf(f, ".TH GPULEDGER 1 \"\" \"gpuledger %s\" \"User Commands\"\n.SH NAME\ngpuledger \\- ", version);
    const char *p = strchr(gl_usage_main, '\n');
    const char *colon = p ? strchr(p, ':') : NULL;
    if (p && colon)
        roff(f, p + 2, (size_t)(colon - p - 2)); /* "GPU memory profiler" */
    fputs("\n.SH SYNOPSIS\n", f);
    synopsis(f);
    fputs(".SH DESCRIPTION\n", f);
    description(f);
    fputs(".PP\nUnder\n.BR \"gpuledger run\" ,\n"
          "each process of the command that makes a CUDA memory call writes its own database;\n"
          "the other commands read those databases. Every command takes\n.BR \\-\\-help ,\n"
          "which prints the text shown for it below.\n"
          ".SH COMMANDS\n",
          f);
    for (size_t i = 0; i < gl_help_npages; i++) {
        fprintf(f, ".SS %s\n.nf\n", gl_help_pages[i].verb);
        roffs(f, gl_help_pages[i].usage);
        fputs(".fi\n", f);
    }
    fputs(".SH OPTIONS\n.nf\n", f);
    const char *opts = strstr(gl_usage_main, "\noptions:\n"), *end = opts ? strstr(opts + 1, "\n\n") : NULL;
    if (opts && end)
        roff(f, opts + strlen("\noptions:\n"), (size_t)(end + 1 - opts - strlen("\noptions:\n")));
    fputs(".fi\n", f);
    fputs(".SH ENVIRONMENT\n"
          "Read by the library in the profiled process (set them before\n.BR \"gpuledger run\" ),\n"
          "unless another reader is named.\n"
          "A bad value is reported in one line on stderr and the default is used.\n",
          f);
    environment(f);
    fputs(".SH EXIT STATUS\n"
          ".B run\nexits with the command's status (128+N if it was killed by signal N, 127 if it could not be\n"
          "run).\n.B gate\nexits 1 when a limit is broken. Every command exits 2 on bad usage or bad input\n"
          "(one line on stderr naming the file and the problem), 0 otherwise.\n"
          ".SH FILES\n.TP\n",
          f);
    roffs(f, libdir);
    fputs("/libgpuledger.so\nThe library\n.B gpuledger run\nputs in front of the program (LD_PRELOAD).\n.TP\n", f);
    roffs(f, pydir);
    fputs("/gpuledger\nThe Python package: annotations (mark, range, step, paused, recording), the PyTorch\n"
          "integration and the pytest plugin;\n.B gpuledger run\nputs it on the job's PYTHONPATH.\n"
          ".TP\ngpuledger\\-PID.db\nOne SQLite database per process (the default\n.BR \\-o ).\n"
          ".SH SEE ALSO\n.BR nvidia\\-smi (1),\n.BR sqlite3 (1).\n"
          "README.md and docs/ (schema.md: the SQL and JSON contracts) in gpuledger's sources.\n",
          f);
    return ferror(f) ? -1 : 0;
}
