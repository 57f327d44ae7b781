/* cmd_export.c — `gpuledger export DB --format folded|perfetto|csv`: a run
 * in the formats flame-graph tools, Perfetto and spreadsheets read
 * (export.c). */
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "help.h"
#include "render.h"

static const char *what = "peak";

static int opt(struct gl_cli *cli, int key, const char *arg)
{
    (void)cli;
    (void)key;
    what = arg;
    return 0;
}

static int check(struct gl_cli *cli)
{
    if (strcmp(what, "peak") && strcmp(what, "leaks") && strcmp(what, "allocs"))
        return gl_cli_fail(cli, "--what wants peak, leaks or allocs");
    return 0;
}

static const struct option opts[] = {{"what", required_argument, NULL, 'w'}, {NULL, 0, NULL, 0}};

const struct gl_cmd_spec gl_export_spec = {
    .usage = gl_usage_export,
    .formats = "folded|perfetto|csv",
    .format_required = 1,
    .opts = opts,
    .opt = opt,
    .check = check,
};

int cmd_export(struct gl_cli *cli)
{
    if (gl_cli_format(cli, "folded"))
        gl_export_folded(cli->out, cli->runs[0], what);
    else if (gl_cli_format(cli, "perfetto"))
        gl_export_perfetto(cli->out, cli->runs[0]);
    else
        gl_export_csv(cli->out, cli->runs[0]);
    return 0;
}
