/* cli.c — see cli.h. */
#include "cli.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "escape.h"
#include "out.h"

/* Keys of the shared options: above any character a verb uses. */
enum { OPT_FORMAT = 1000, OPT_OUTPUT = 'o', OPT_DEVICE = 1001, OPT_TOP = 1002, OPT_RULES = 1003, OPT_HELP = 'h' };

#define MAX_OPTS 32

int gl_cli_fail(const struct gl_cli *cli, const char *fmt, ...)
{
    fprintf(stderr, "gpuledger %s: ", cli->cmd->name);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return 2;
}

int gl_cli_format(const struct gl_cli *cli, const char *word)
{
    return cli->format && !strcmp(cli->format, word);
}

/* "a|b|c" holds word? */
static int one_of(const char *words, const char *word)
{
    size_t n = strlen(word);
    for (const char *p = words; *p;) {
        const char *bar = strchr(p, '|');
        size_t len = bar ? (size_t)(bar - p) : strlen(p);
        if (len == n && !strncmp(p, word, n))
            return 1;
        p += len + (bar != NULL);
    }
    return 0;
}

/* "a|b|c" as "a, b or c". */
static void say_words(char *buf, size_t sz, const char *words)
{
    size_t k = 0, nbars = 0;
    for (const char *p = words; *p; p++)
        nbars += *p == '|';
    for (const char *p = words; *p && k + 5 < sz; p++) {
        if (*p != '|') {
            buf[k++] = *p;
            continue;
        }
        const char *sep = --nbars ? ", " : " or ";
        for (; *sep && k + 1 < sz; sep++)
            buf[k++] = *sep;
    }
    buf[k] = 0;
}

static int take_shared(struct gl_cli *cli, int key, const char *arg)
{
    char *end;
    long v;
    switch (key) {
    case OPT_FORMAT:
        cli->format = arg;
        return 0;
    case OPT_OUTPUT:
        cli->output = arg;
        return 0;
    case OPT_RULES:
        cli->rules_path = arg;
        return 0;
    case OPT_DEVICE:
        v = strtol(arg, &end, 10);
        if (*arg == 0 || *end || v < 0 || v >= GL_MAX_DEVICES)
            return gl_cli_fail(cli, "--device wants a device number (0, 1, ...), not '%s'", arg);
        cli->device = (int)v;
        return 0;
    case OPT_TOP:
        v = strtol(arg, &end, 10);
        if (*arg == 0 || *end || v < 1 || v > 1000000)
            return gl_cli_fail(cli, "--top wants a positive number");
        cli->top = (int)v;
        return 0;
    default:
        return cli->cmd->spec->opt ? cli->cmd->spec->opt(cli, key, arg) : 2;
    }
}

/* The shared options this verb takes, then its own. */
static void options(const struct gl_cmd *cmd, struct option *o, char *shortopts)
{
    int n = 0;
    strcpy(shortopts, "h");
    if (cmd->needs & GL_NEEDS_FORMAT)
        o[n++] = (struct option){"format", required_argument, NULL, OPT_FORMAT};
    if (cmd->needs & GL_NEEDS_OUTPUT) {
        o[n++] = (struct option){"output", required_argument, NULL, OPT_OUTPUT};
        strcat(shortopts, "o:");
    }
    if (cmd->needs & GL_NEEDS_DEVICE)
        o[n++] = (struct option){"device", required_argument, NULL, OPT_DEVICE};
    if (cmd->needs & GL_NEEDS_TOP)
        o[n++] = (struct option){"top", required_argument, NULL, OPT_TOP};
    if (cmd->needs & GL_NEEDS_RULES)
        o[n++] = (struct option){"rules", required_argument, NULL, OPT_RULES};
    for (const struct option *v = cmd->spec->opts; v && v->name && n < MAX_OPTS - 2; v++)
        o[n++] = *v;
    o[n++] = (struct option){"help", no_argument, NULL, OPT_HELP};
    o[n] = (struct option){NULL, 0, NULL, 0};
}

/* Options, formats, the verb's check, the databases' count: 0, 1 for
 * --help (done), or 2. */
static int parse(struct gl_cli *cli, int argc, char **argv)
{
    const struct gl_cmd *cmd = cli->cmd;
    const struct gl_cmd_spec *spec = cmd->spec;
    struct option opts[MAX_OPTS];
    char shortopts[8];
    options(cmd, opts, shortopts);
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, shortopts, opts, NULL)) != -1) {
        if (c == OPT_HELP) {
            fputs(spec->usage, stdout);
            return 1;
        }
        if (c == '?') {
            fputs(spec->usage, stderr);
            return 2;
        }
        if (take_shared(cli, c, optarg))
            return 2;
    }
    if (cmd->needs & GL_NEEDS_FORMAT) {
        char words[64];
        say_words(words, sizeof words, spec->formats);
        if (!cli->format && spec->format_required)
            return gl_cli_fail(cli, "--format wants %s", words);
        if (cli->format && !one_of(spec->formats, cli->format))
            return gl_cli_fail(cli, "--format wants %s, not '%s'", words, cli->format);
    }
    if (spec->check && spec->check(cli))
        return 2;
    cli->paths = argv + optind;
    cli->npaths = argc - optind;
    if ((cmd->needs & GL_NEEDS_ONE_DB) && cli->npaths != 1)
        return gl_cli_fail(cli, "want exactly one database");
    if ((cmd->needs & GL_NEEDS_TWO_DBS) && cli->npaths != 2)
        return gl_cli_fail(cli, "want exactly two databases, A (before) and B (after)");
    if ((cmd->needs & (GL_NEEDS_DBS | GL_NEEDS_PATHS)) && cli->npaths < 1) {
        gl_cli_fail(cli, "no database given");
        fputs(spec->usage, stderr);
        return 2;
    }
    return 0;
}

struct gl_run *gl_cli_load(const char *path)
{
    char err[1200];
    struct gl_run *r = gl_run_load(path, err, sizeof err);
    if (!r) {
        fputs("gpuledger: ", stderr);
        gl_text_str(stderr, err);
        fputc('\n', stderr);
        return NULL;
    }
    gl_print_skipped(stderr, r);
    return r;
}

/* --device N that none of the databases has: one line naming the devices
 * they have (1), rather than an answer about nothing; 0 when one has it. */
static int device_missing(const struct gl_cli *cli)
{
    int have[GL_MAX_DEVICES] = {0}, any = 0;
    for (int i = 0; i < cli->npaths; i++)
        for (int k = 0; k < cli->runs[i]->ndevs; k++) {
            int d = cli->runs[i]->devs[k].device;
            if (d == cli->device)
                return 0;
            if (d >= 0 && d < GL_MAX_DEVICES) {
                have[d] = 1;
                any = 1;
            }
        }
    fprintf(stderr, "gpuledger %s: ", cli->cmd->name);
    if (cli->npaths == 1) {
        gl_text_str(stderr, cli->paths[0]);
        fprintf(stderr, " has no device %d", cli->device);
    } else {
        fprintf(stderr, "none of the %d databases has device %d", cli->npaths, cli->device);
    }
    const char *sep = " (devices there: ";
    for (int d = 0; d < GL_MAX_DEVICES; d++)
        if (have[d]) {
            fprintf(stderr, "%s%d", sep, d);
            sep = ", ";
        }
    fputs(any ? ")\n" : " (no device memory recorded at all)\n", stderr);
    return 1;
}

/* Rules, databases, output: 0 or 2. */
static int load(struct gl_cli *cli)
{
    if (cli->cmd->needs & GL_NEEDS_RULES) {
        char err[512];
        if (cli->rules_path ? gl_rules_load(&cli->rules, cli->rules_path, err, sizeof err)
                            : gl_rules_default(&cli->rules)) {
            fputs("gpuledger: ", stderr);
            gl_text_str(stderr, cli->rules_path ? err : "out of memory");
            fputc('\n', stderr);
            return 2;
        }
        cli->have_rules = 1;
    }
    if (cli->cmd->needs & (GL_NEEDS_DBS | GL_NEEDS_ONE_DB | GL_NEEDS_TWO_DBS)) {
        cli->runs = calloc((size_t)cli->npaths + 1, sizeof(struct gl_run *));
        if (!cli->runs)
            return 2;
        for (int i = 0; i < cli->npaths; i++)
            if (!(cli->runs[i] = gl_cli_load(cli->paths[i])))
                return 2;
        if (cli->device != -2 && device_missing(cli))
            return 2;
    }
    cli->out = stdout;
    if ((cli->cmd->needs & GL_NEEDS_OUTPUT) && !(cli->out = gl_open_out(cli->output)))
        return 2;
    return 0;
}

static void done(struct gl_cli *cli)
{
    if (cli->out)
        gl_close_out(cli->out);
    for (int i = 0; cli->runs && i < cli->npaths; i++)
        gl_run_free(cli->runs[i]);
    free(cli->runs);
    if (cli->have_rules)
        gl_rules_free(&cli->rules);
}

int gl_cli_main(const struct gl_cmd *cmd, int argc, char **argv)
{
    struct gl_cli cli;
    memset(&cli, 0, sizeof cli);
    cli.cmd = cmd;
    cli.device = -2;
    cli.top = cmd->spec->top;
    if (cmd->needs & GL_NEEDS_FORMAT && !cmd->spec->format_required) {
        static char first[32];
        size_t n = strcspn(cmd->spec->formats, "|");
        snprintf(first, sizeof first, "%.*s", (int)n, cmd->spec->formats);
        cli.format = first;
    }
    if (cmd->spec->reset)
        cmd->spec->reset();
    int rc = parse(&cli, argc, argv);
    if (rc)
        return rc == 1 ? 0 : rc;
    rc = load(&cli);
    if (rc == 0)
        rc = cmd->run(&cli);
    done(&cli);
    return rc;
}
