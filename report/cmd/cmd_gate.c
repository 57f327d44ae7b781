/* cmd_gate.c — `gpuledger gate`: the CI leak gate. Exit 0 within limits,
 * 1 when a limit is broken (the offending chains are printed), 2 on bad
 * input. Optional JUnit XML for CI systems. */
#include "cli.h"
#include "commands.h"
#include "escape.h"
#include "help.h"
#include "out.h"
#include "render.h"

#define MAX_IGNORE 32

static regex_t ignore[MAX_IGNORE];
static struct gl_gate_query q = {.ignore = ignore};
static int allow_unfinished;
static const char *junit;

static int opt(struct gl_cli *cli, int key, const char *arg)
{
    unsigned long long v = 0;
    switch (key) {
    case 'l':
    case 'p':
        if (gl_parse_size(arg, &v))
            return gl_cli_fail(cli, "%s wants a size like 0, 4096, 64K or 2G, not '%s'",
                               key == 'l' ? "--max-leak-bytes" : "--max-peak-bytes", arg);
        *(key == 'l' ? &q.max_leak : &q.max_peak) = v;
        *(key == 'l' ? &q.have_leak : &q.have_peak) = 1;
        return 0;
    case 'i':
        if (q.nignore == MAX_IGNORE || regcomp(&ignore[q.nignore], arg, REG_EXTENDED | REG_NOSUB))
            return gl_cli_fail(cli, "--ignore '%s' is not a valid extended regex (or too many)", arg);
        q.nignore++;
        return 0;
    case 'c':
        q.count_cached = 1;
        return 0;
    case 'u':
        allow_unfinished = 1;
        return 0;
    default: /* --junit */
        junit = arg;
        return 0;
    }
}

static int check(struct gl_cli *cli)
{
    if (q.have_leak || q.have_peak)
        return 0;
    gl_cli_fail(cli, "wants --max-leak-bytes N, --max-peak-bytes M, or both");
    fputs(cli->cmd->spec->usage, stderr);
    return 2;
}

static const struct option opts[] = {
    {"max-leak-bytes", required_argument, NULL, 'l'}, {"max-peak-bytes", required_argument, NULL, 'p'},
    {"ignore", required_argument, NULL, 'i'},         {"junit", required_argument, NULL, 'j'},
    {"count-cached", no_argument, NULL, 'c'},         {"allow-unfinished", no_argument, NULL, 'u'},
    {NULL, 0, NULL, 0}};

const struct gl_cmd_spec gl_gate_spec = {.usage = gl_usage_gate, .opts = opts, .opt = opt, .check = check};

/* An unfinished recording's live allocations are no leak verdict: exit 2
 * naming each such database, unless --allow-unfinished (0). */
static int refuse_unfinished(struct gl_cli *cli)
{
    char buf[2 * PATH_MAX];
    int rc = 0;
    for (int i = 0; !allow_unfinished && i < cli->npaths; i++)
        if (cli->runs[i]->unfinished)
            rc = gl_cli_fail(cli,
                             "%s: " GL_UNFINISHED_TEXT ": what was live when it stopped is no leak verdict "
                             "(--allow-unfinished to gate it anyway)",
                             gl_text_buf(cli->runs[i]->path, buf, sizeof buf));
    return rc;
}

int cmd_gate(struct gl_cli *cli)
{
    if (refuse_unfinished(cli))
        return 2;
    FILE *jf = junit ? gl_open_out(junit) : NULL;
    if (junit && !jf)
        return 2;
    struct gl_gate_view v;
    q.rules = &cli->rules;
    if (gl_gate_view(&v, cli->runs, cli->npaths, &q)) {
        gl_close_out(jf, 1);
        return 2;
    }
    if (jf)
        gl_render_gate_junit(jf, &v);
    int rc = jf && gl_close_out(jf, 0) ? 2 : 0;
    gl_render_gate_text(cli->out, &v);
    int fail = v.fail;
    gl_gate_view_free(&v);
    for (int i = 0; i < q.nignore; i++)
        regfree(&ignore[i]);
    return rc ? rc : fail ? 1 : 0;
}
