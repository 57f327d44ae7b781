/* cli.c — see cli.h. */
#include "cli.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "escape.h"
#include "out.h"
#include "render.h"

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

/* A database named twice (the same file, by any name: a link, ./x.db) is
 * taken once, its first name kept, with one note on stderr per repeat:
 * counting it twice would double every figure (a gate's total, "over 2
 * processes"). */
static void drop_repeats(struct gl_cli *cli)
{
    int n = 0;
    for (int i = 0; i < cli->npaths; i++) {
        struct stat a, b;
        int k = -1;
        if (stat(cli->paths[i], &a) == 0)
            for (int j = 0; j < n && k < 0; j++)
                if (stat(cli->paths[j], &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino)
                    k = j;
        if (k < 0) {
            cli->paths[n++] = cli->paths[i];
            continue;
        }
        fprintf(stderr, "gpuledger %s: note: ", cli->cmd->name);
        gl_text_str(stderr, cli->paths[i]);
        if (strcmp(cli->paths[i], cli->paths[k])) {
            fputs(" is ", stderr);
            gl_text_str(stderr, cli->paths[k]);
            fputs(" again", stderr);
        } else {
            fputs(" is named twice", stderr);
        }
        fputs(": counted once\n", stderr);
    }
    cli->npaths = n;
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
    cli->paths = argv + optind;
    cli->npaths = argc - optind;
    if (spec->check && spec->check(cli))
        return 2;
    if (cmd->needs & GL_NEEDS_DISTINCT)
        drop_repeats(cli);
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
    return gl_cli_load_with(path, NULL);
}

struct gl_run *gl_cli_load_with(const char *path, const struct gl_load *what)
{
    char err[GL_ERR_MAX];
    struct gl_run *r = gl_run_load_with(path, what, err, sizeof err);
    if (!r) {
        fputs("gpuledger: ", stderr);
        gl_text_str(stderr, err);
        fputc('\n', stderr);
        return NULL;
    }
    gl_print_skipped(stderr, r);
    return r;
}

int gl_print_db_summary(FILE *f, const char *path)
{
    /* the line reads the peaks, failures and what is live at the end: no
     * record of a freed allocation is kept (model.h) */
    const struct gl_load live = {.parts = GL_LOAD_LIVE_ONLY | GL_LOAD_NO_STACKS};
    struct gl_run *r = gl_cli_load_with(path, &live);
    if (!r)
        return 2;
    struct gl_summary_view v;
    gl_summary_view(&v, r);
    gl_render_summary(f, path, &v);
    gl_run_free(r);
    return 0;
}

/* Note the devices of a run just loaded, for --device (device_missing). */
static void note_devices(struct gl_cli *cli, const struct gl_run *r)
{
    for (int k = 0; k < r->ndevs; k++) {
        int d = r->devs[k].device;
        if (d == cli->device)
            cli->seen_device = 1;
        if (d >= 0 && d < GL_MAX_DEVICES) {
            cli->seen_dev[d] = 1;
            cli->seen_any = 1;
        }
    }
}

struct gl_run *gl_cli_run(struct gl_cli *cli, int i)
{
    if (!cli->runs[i] && (cli->runs[i] = gl_cli_load_with(cli->paths[i], &cli->load)))
        note_devices(cli, cli->runs[i]);
    return cli->runs[i];
}

void gl_cli_release(struct gl_cli *cli, int i)
{
    gl_run_free(cli->runs[i]);
    cli->runs[i] = NULL;
}

/* --device N that none of the databases has (from the devices noted as
 * each was loaded): one line naming the devices they have (1), rather than
 * an answer about nothing; 0 when one has it. */
static int device_missing(const struct gl_cli *cli)
{
    if (cli->device == -2 || cli->seen_device)
        return 0;
    fprintf(stderr, "gpuledger %s: ", cli->cmd->name);
    if (cli->npaths == 1) {
        gl_text_str(stderr, cli->paths[0]);
        fprintf(stderr, " has no device %d", cli->device);
    } else {
        fprintf(stderr, "none of the %d databases has device %d", cli->npaths, cli->device);
    }
    const char *sep = " (devices there: ";
    for (int d = 0; d < GL_MAX_DEVICES; d++)
        if (cli->seen_dev[d]) {
            fprintf(stderr, "%s%d", sep, d);
            sep = ", ";
        }
    fputs(cli->seen_any ? ")\n" : " (no device memory recorded at all)\n", stderr);
    return 1;
}

/* Rules, databases, output: 0 or 2. */
static int load(struct gl_cli *cli)
{
    if (cli->cmd->needs & GL_NEEDS_RULES) {
        char err[GL_ERR_MAX];
        if (cli->rules_path ? gl_rules_load(&cli->rules, cli->rules_path, err, sizeof err)
                            : gl_rules_default(&cli->rules)) {
            fputs("gpuledger: ", stderr);
            gl_text_str(stderr, cli->rules_path ? err : "out of memory");
            fputc('\n', stderr);
            return 2;
        }
        cli->have_rules = 1;
    }
    if (cli->cmd->spec->opens_itself && cli->cmd->spec->opens_itself(cli)) {
        cli->out = stdout;
        return 0;
    }
    int use_stdout = !(cli->cmd->needs & GL_NEEDS_OUTPUT) || !cli->output || !strcmp(cli->output, "-");
    if (cli->cmd->needs & (GL_NEEDS_DBS | GL_NEEDS_ONE_DB | GL_NEEDS_TWO_DBS)) {
        cli->runs = calloc((size_t)cli->npaths + 1, sizeof(struct gl_run *));
        if (!cli->runs)
            return 2;
        cli->load.parts |= cli->cmd->spec->loads;
        /* several databases one at a time: stdout held until every one
         * was read (without a temporary file: all loaded first, as for
         * any verb) */
        cli->lazy = cli->cmd->spec->one_at_a_time && cli->npaths > 1 &&
                    (!use_stdout || cli->cmd->spec->writes_at_end || (cli->held = tmpfile()));
        for (int i = 0; !cli->lazy && i < cli->npaths; i++)
            if (!gl_cli_run(cli, i))
                return 2;
        if (!cli->lazy && device_missing(cli))
            return 2;
    }
    cli->out = cli->held ? cli->held : stdout;
    if ((cli->cmd->needs & GL_NEEDS_OUTPUT) && !use_stdout && !(cli->out = gl_open_out(cli->output)))
        return 2;
    return 0;
}

/* What the temporary held for stdout, onto stdout: 0, or 2 after saying
 * why (a read of the temporary failed; a failed write to stdout is
 * gl_check_stdout's to say). */
static int release_stdout(struct gl_cli *cli)
{
    char buf[1 << 14];
    size_t n;
    errno = 0;
    int failed = fflush(cli->held) != 0 || ferror(cli->held) || fseek(cli->held, 0, SEEK_SET) != 0;
    while (!failed && (n = fread(buf, 1, sizeof buf, cli->held)) > 0)
        fwrite(buf, 1, n, stdout);
    if (failed || ferror(cli->held))
        return gl_cli_fail(cli, "the temporary file that held the output failed: %s", strerror(errno ? errno : EIO));
    return 0;
}

/* Close the output (dropped when the verb failed: no partial file) and
 * free the rest; the exit code, 2 when writing the output failed. A lazy
 * verb's --device is checked here, when every run was seen. */
static int done(struct gl_cli *cli, int rc)
{
    if (rc != 2 && cli->lazy && device_missing(cli))
        rc = 2;
    if (cli->held) {
        if (rc != 2 && release_stdout(cli))
            rc = 2;
        fclose(cli->held);
        cli->out = stdout;
    }
    if (cli->out && gl_close_out(cli->out, rc == 2))
        rc = 2;
    for (int i = 0; cli->runs && i < cli->npaths; i++)
        gl_run_free(cli->runs[i]);
    free(cli->runs);
    if (cli->have_rules)
        gl_rules_free(&cli->rules);
    return rc;
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
        return rc == 1 ? (gl_check_stdout() ? 2 : 0) : rc;
    rc = load(&cli);
    if (rc == 0)
        rc = cmd->run(&cli);
    return done(&cli, rc);
}
