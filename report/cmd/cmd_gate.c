/* cmd_gate.c — `gpuledger gate`: the CI leak gate. Exit 0 within limits,
 * 1 when a limit is broken (the offending chains are printed), 2 on bad
 * input. Optional JUnit XML for CI systems. */
#include <errno.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "escape.h"
#include "help.h"
#include "out.h"
#include "render.h"

#define MAX_IGNORE 32

static regex_t ignore[MAX_IGNORE];
static struct gl_gate_query q = {.ignore = ignore};
static int have_leak;
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
        *(key == 'l' ? &have_leak : &q.have_peak) = 1;
        return 0;
    case 'i':
        if (q.nignore == MAX_IGNORE || regcomp(&ignore[q.nignore], arg, REG_EXTENDED | REG_NOSUB))
            return gl_cli_fail(cli, "--ignore '%s' is not a valid extended regex (or too many)", arg);
        q.nignore++;
        return 0;
    case 'c':
        q.count_cached = 1;
        return 0;
    default: /* --junit */
        junit = arg;
        return 0;
    }
}

static int check(struct gl_cli *cli)
{
    if (have_leak)
        return 0;
    gl_cli_fail(cli, "--max-leak-bytes is required");
    fputs(cli->cmd->spec->usage, stderr);
    return 2;
}

static const struct option opts[] = {
    {"max-leak-bytes", required_argument, NULL, 'l'}, {"max-peak-bytes", required_argument, NULL, 'p'},
    {"ignore", required_argument, NULL, 'i'},         {"junit", required_argument, NULL, 'j'},
    {"count-cached", no_argument, NULL, 'c'},         {NULL, 0, NULL, 0}};

const struct gl_cmd_spec gl_gate_spec = {.usage = gl_usage_gate, .opts = opts, .opt = opt, .check = check};

int cmd_gate(struct gl_cli *cli)
{
    char buf[1024];
    FILE *jf = junit ? fopen(junit, "w") : NULL;
    if (junit && !jf)
        return gl_cli_fail(cli, "cannot write %s: %s", gl_text_buf(junit, buf, sizeof buf), strerror(errno));
    struct gl_gate_view v;
    q.rules = &cli->rules;
    if (gl_gate_view(&v, cli->runs, cli->npaths, &q))
        return 2;
    int rc = jf ? gl_render_gate_junit(jf, junit, &v) : 0;
    gl_render_gate_text(cli->out, &v);
    int fail = v.fail;
    gl_gate_view_free(&v);
    for (int i = 0; i < q.nignore; i++)
        regfree(&ignore[i]);
    return rc ? rc : fail ? 1 : 0;
}
