/* cmd_diff.c — `gpuledger diff A.db B.db`: what grew between two runs.
 * Stacks are matched across databases by their frames' names (addresses
 * differ from run to run), and compared at each run's peak and at exit;
 * with --at, at two moments (of one run, or one in each). */
#include "cli.h"
#include "commands.h"
#include "help.h"
#include "moment.h"
#include "render.h"

static const char *at_when[2];
static int nat;

static int opt(struct gl_cli *cli, int key, const char *arg)
{
    (void)key;
    if (nat == 2)
        return gl_cli_fail(cli, "--at is given at most twice (moment A, then moment B)");
    at_when[nat++] = arg;
    (void)gl_moment_lookup(arg, &cli->load); /* at most two: never full */
    return 0;
}

static void reset(void)
{
    at_when[0] = at_when[1] = NULL;
    nat = 0;
}

static const struct option opts[] = {{"at", required_argument, NULL, 'a'}, {NULL, 0, NULL, 0}};

const struct gl_cmd_spec gl_diff_spec = {.usage = gl_usage_diff, .top = 15, .opts = opts, .opt = opt, .reset = reset};

int cmd_diff(struct gl_cli *cli)
{
    if (nat == 1 && cli->npaths == 1)
        return gl_cli_fail(cli, "one --at and one database: give --at twice (moment A, moment B) or two databases");
    if (nat == 2 && cli->npaths > 2)
        return gl_cli_fail(cli, "with --at A --at B, want one database or two");
    if (nat < 2 && cli->npaths != 2)
        return gl_cli_fail(cli, "want exactly two databases, A (before) and B (after)");
    struct gl_run *run[2] = {cli->runs[0], cli->runs[cli->npaths - 1]};
    struct gl_moment m[2];
    const struct gl_moment *at[2] = {&m[0], &m[1]};
    char err[GL_ERR_MAX];
    for (int k = 0; k < 2 && nat; k++)
        if (gl_moment_at(run[k], at_when[nat == 2 ? k : 0], &m[k], err, sizeof err))
            return gl_cli_fail(cli, "%s", err);
    struct gl_diff_view v;
    gl_diff_view(&v, run[0], run[1], nat ? at : NULL);
    gl_render_diff_text(cli->out, &v, cli->top);
    gl_diff_view_free(&v);
    return 0;
}
